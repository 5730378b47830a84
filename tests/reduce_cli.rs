//! `weft reduce` and `weft compare` from the command line: exit codes, `--json`, errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("weft runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reduce_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `a.(b + a)`-ish pair: A = a.b.0 + a.0, B = a.b.0. Same traces, not bisimilar: after `a`,
/// B can always perform `b`; A, in the state it reaches by its second `a`, cannot.
fn pair() -> (PathBuf, PathBuf) {
    let a = scratch(
        "a.aut",
        "des (0,3,4)\n(0,\"a\",1)\n(0,\"a\",2)\n(1,\"b\",3)\n",
    );
    let b = scratch("b.aut", "des (0,2,3)\n(0,\"a\",1)\n(1,\"b\",2)\n");
    (a, b)
}

#[test]
fn reduce_reports_sizes_and_writes_the_quotient() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/aut/mcrl2_reductions/ltsconvert_test__Test3.aut");
    let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reduce_cli_test3.aut");
    let out = weft(&[
        "reduce",
        input.to_str().unwrap(),
        "--equivalence",
        "divergence-preserving-branching",
        "-o",
        output.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = json(&out);
    assert_eq!(report["states_before"], 2);
    assert_eq!(report["states_after"], 1);
    // The a-loop and the tau self-loop that marks divergence.
    assert_eq!(report["transitions_after"], 2);
    let written = std::fs::read_to_string(&output).unwrap();
    assert!(written.starts_with("des (0,2,1)"), "{written}");
    let text = weft(&[
        "reduce",
        input.to_str().unwrap(),
        "--equivalence",
        "branching",
    ]);
    assert_eq!(text.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("modulo branching: 1 states, 1 transitions"),
        "{stdout}"
    );
}

#[test]
fn compare_exit_codes_and_distinguishing_trace() {
    let (a, b) = pair();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let same = weft(&["compare", a, b, "--equivalence", "trace"]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let differ = weft(&["compare", a, b, "--equivalence", "strong", "--json"]);
    assert_eq!(differ.status.code(), Some(1), "{differ:?}");
    let result = json(&differ);
    assert_eq!(result["equivalent"], false);
    assert_eq!(result["difference"]["trace"], serde_json::json!(["a"]));
    assert_eq!(result["difference"]["side"], "second");
    assert_eq!(result["difference"]["event"], "b");
    let text = weft(&["compare", a, b, "--equivalence", "branching"]);
    assert_eq!(text.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("not equivalent") && stdout.contains("trace: <a>"),
        "{stdout}"
    );
}

#[test]
fn a_system_is_equivalent_to_its_quotient() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/aut/mcrl2_reductions/lts_test__reduce_abp.aut");
    for eq in [
        "strong",
        "branching",
        "divergence-preserving-branching",
        "trace",
        "weak-trace",
    ] {
        let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("abp_{eq}.aut"));
        let out = weft(&[
            "reduce",
            input.to_str().unwrap(),
            "--equivalence",
            eq,
            "-o",
            output.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let cmp = weft(&[
            "compare",
            input.to_str().unwrap(),
            output.to_str().unwrap(),
            "--equivalence",
            eq,
        ]);
        assert_eq!(cmp.status.code(), Some(0), "{eq}: {cmp:?}");
    }
}

#[test]
fn a_bad_file_is_a_positioned_error() {
    let bad = scratch("bad.aut", "des (0,1,2)\n(0,\"a\" 1)\n");
    for args in [
        vec!["reduce", bad.to_str().unwrap(), "--json"],
        vec![
            "compare",
            bad.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--json",
        ],
    ] {
        let out = weft(&args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let error = json(&out);
        assert_eq!(error["error"]["line"], 2, "{error}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("bad.aut:2:"), "{stderr}");
    }
    let missing = weft(&["reduce", "no/such/file.aut"]);
    assert_eq!(missing.status.code(), Some(2));
    let unknown = weft(&["reduce", bad.to_str().unwrap(), "--equivalence", "weak"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn refines_with_reduction_gives_the_same_verdicts() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/aut/generated/linearizability");
    for (spec, imp) in [
        ("fineGrainedSet_spec.aut", "fineGrainedSet_impl.aut"),
        ("pracNonBlock_spec.aut", "pracNonBlock_impl.aut"),
        ("pracNonBlock_impl.aut", "pracNonBlock_spec.aut"),
    ] {
        let (spec, imp) = (dir.join(spec), dir.join(imp));
        for model in ["T", "F", "FD"] {
            let run = |flag: &str| {
                let out = weft(&[
                    "refines",
                    spec.to_str().unwrap(),
                    imp.to_str().unwrap(),
                    "--model",
                    model,
                    flag,
                    "--json",
                ]);
                (out.status.code(), json(&out))
            };
            let (plain_code, plain) = run("--no-reduce");
            let (reduced_code, reduced) = run("--reduce");
            assert_eq!(plain_code, reduced_code, "{model}: {plain} vs {reduced}");
            assert_eq!(plain["holds"], reduced["holds"]);
            if plain["holds"] == false {
                assert_eq!(
                    plain["counterexample"]["trace"].as_array().unwrap().len(),
                    reduced["counterexample"]["trace"].as_array().unwrap().len(),
                    "breadth-first: equally short"
                );
            }
        }
    }
}

/// `weft reduce -o` writes byte-identical files on 1, 2 and 4 threads (parallel reading,
/// signature rounds and full rounds never change the quotient or its numbering), for every
/// bisimulation, on corpus systems large enough to reach the parallel code.
#[test]
fn reduce_output_is_byte_identical_at_every_thread_count() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/aut/generated");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reduce_cli_threads");
    std::fs::create_dir_all(&dir).unwrap();
    for system in [
        "mcrl2_examples/1394-fin.aut.gz",
        "linearizability/treiberStack_impl.aut.gz",
    ] {
        let input = gen.join(system);
        for eq in ["strong", "branching", "divergence-preserving-branching"] {
            let written: Vec<Vec<u8>> = ["1", "2", "4"]
                .iter()
                .map(|threads| {
                    let output = dir.join(format!("out_{threads}.aut"));
                    let out = weft(&[
                        "reduce",
                        input.to_str().unwrap(),
                        "--equivalence",
                        eq,
                        "--threads",
                        threads,
                        "-o",
                        output.to_str().unwrap(),
                    ]);
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "{system} {eq} {threads}: {out:?}"
                    );
                    std::fs::read(&output).unwrap()
                })
                .collect();
            assert!(!written[0].is_empty(), "{system} {eq}");
            assert!(
                written[0] == written[1],
                "{system} {eq}: 1 and 2 threads differ"
            );
            assert!(
                written[0] == written[2],
                "{system} {eq}: 1 and 4 threads differ"
            );
        }
    }
}
