//! `weft refines`: exit codes, the human verdict and the JSON object.

mod common;

use common::weft;

use std::path::PathBuf;

fn compare(name: &str) -> String {
    common::corpus_dir()
        .join("aut/mcrl2_compare")
        .join(name)
        .display()
        .to_string()
}

fn scratch(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("refine_cli");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

#[test]
fn verdicts_and_exit_codes() {
    // mc110: lts1 refines abc_div in FD (the default model); mc111: not the other way.
    let (code, out, _) = weft(&["refines", &compare("abc_div.aut"), &compare("lts1.aut")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("holds:"), "{out}");
    let (code, out, _) = weft(&["refines", &compare("lts1.aut"), &compare("abc_div.aut")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("does not hold:"), "{out}");
    assert!(out.contains("trace: <"), "{out}");
}

#[test]
fn json_object() {
    let spec = scratch("spec.aut", "des (0, 2, 2)\n(0, \"a\", 1)\n(1, \"b\", 0)\n");
    let imp = scratch(
        "impl.aut",
        "des (0, 3, 3)\n(0, \"a\", 1)\n(1, \"tau\", 2)\n(1, \"b\", 0)\n",
    );
    for search in ["bfs", "dfs"] {
        let (code, out, _) = weft(&[
            "refines", "--json", "--model", "failures", "--search", search, &spec, &imp,
        ]);
        assert_eq!(code, 1, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
        assert_eq!(v["holds"], false);
        assert_eq!(v["model"], "failures");
        let cex = &v["counterexample"];
        assert_eq!(cex["kind"], "refusal");
        assert_eq!(cex["trace"], serde_json::json!(["a"]));
        assert_eq!(cex["refused"], serde_json::json!(["b"]));
        assert_eq!(cex["spec_acceptances"], serde_json::json!([["b"]]));
        assert_eq!(cex["impl_state"], 2);
        assert!(v["stats"]["pairs_explored"].as_u64().is_some());
        assert!(v["stats"]["antichain_hits"].as_u64().is_some());
    }
    let (code, out, _) = weft(&["refines", "--json", "--model", "traces", &spec, &imp]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["holds"], true);
    assert!(v["counterexample"].is_null());
    // --tau names the internal action instead of tau/i: with `b` internal, the label `tau`
    // is an ordinary event that the impl performs after a and the spec never does.
    let (code, out, _) = weft(&[
        "refines",
        "--json",
        "--no-antichain",
        "--tau",
        "b",
        &spec,
        &imp,
    ]);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["counterexample"]["kind"], "trace");
    assert_eq!(v["counterexample"]["event"], "tau");
}

#[test]
fn errors_exit_2_without_panicking() {
    let bad = scratch("bad.aut", "des (0, 1, 1)\n(0, \"a\"\n");
    let (code, _, err) = weft(&["refines", &bad, &bad]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{bad}:2:")), "{err}");
    let (code, _, err) = weft(&["refines", "/nonexistent.aut", &bad]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent.aut"), "{err}");
    assert!(err.starts_with("weft: error: cannot read"), "{err}");
    assert!(!err.contains("error: error"), "{err}");
    let (code, _, _) = weft(&["refines", "--model", "nonsense", &bad, &bad]);
    assert_eq!(code, 2);
}
