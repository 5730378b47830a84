//! Checkpoints of `weft explore` (`--checkpoint DIR`, `--resume DIR`): a run stopped at a
//! level boundary (by `--max-depth`) or killed outright, then resumed, ends with the counts of
//! a run never interrupted, whatever the thread counts of the two parts; a checkpoint of
//! another model, a damaged one, or one asked of a model without a compact encoding is
//! refused with a message and exit code 2.

mod common;

use std::path::{Path, PathBuf};

use common::weft;

fn counts(json: &str) -> (u64, u64, u64, u64, bool) {
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("one JSON object");
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {json}"));
    (
        n("states"),
        n("transitions"),
        n("deadlocks"),
        n("levels"),
        v["complete"].as_bool().expect("complete"),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-ckp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn model(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn resuming_at_every_depth_gives_the_uninterrupted_counts() {
    let mut cut_models = 0;
    for path in [
        "examples/dining_philosophers.csp",
        "examples/alternating_bit.csp",
        "examples/busy_forbidden.csp",
        "examples/bounded_buffer.csp",
        "tests/corpus/aut/generated/linearizability/treiberStack_spec.aut",
    ] {
        let m = model(path);
        let (code, full, err) = weft(&["explore", &m, "--json", "--threads", "1"]);
        assert_eq!(code, 0, "{path}: {err}");
        let full = counts(&full);
        if full.3 < 3 {
            continue; // too few levels to cut
        }
        cut_models += 1;
        let dir = scratch("depth");
        let d = dir.to_string_lossy().into_owned();
        for depth in [1, full.3 / 2, full.3 - 1] {
            for (first, second) in [("1", "2"), ("2", "1")] {
                let depth = depth.to_string();
                let (code, cut, err) = weft(&[
                    "explore",
                    &m,
                    "--json",
                    "--threads",
                    first,
                    "--max-depth",
                    &depth,
                    "--checkpoint",
                    &d,
                    "--checkpoint-interval",
                    "0",
                ]);
                assert_eq!(code, 2, "{path}: a depth limit is no complete run: {err}");
                assert!(err.contains("depth limit"), "{err}");
                assert!(!counts(&cut).4);
                let (code, resumed, err) =
                    weft(&["explore", &m, "--json", "--threads", second, "--resume", &d]);
                assert_eq!(code, 0, "{path} resumed after {depth} levels: {err}");
                assert_eq!(
                    counts(&resumed),
                    full,
                    "{path} resumed after {depth} levels"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(cut_models >= 3, "only {cut_models} models cut");
}

#[test]
fn a_killed_run_resumes_from_its_last_checkpoint() {
    let m = model("tests/corpus/aut/generated/linearizability/treiberStack_impl.aut.gz");
    let (code, full, err) = weft(&["explore", &m, "--json"]);
    assert_eq!(code, 0, "{err}");
    let dir = scratch("kill");
    let d = dir.to_string_lossy().into_owned();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args([
            "explore",
            &m,
            "--json",
            "--checkpoint",
            &d,
            "--checkpoint-interval",
            "0",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    let file = dir.join("weft.checkpoint");
    let started = std::time::Instant::now();
    while !file.exists() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(file.exists(), "no checkpoint written");
    let (code, resumed, err) = weft(&["explore", &m, "--json", "--resume", &d]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counts(&resumed), counts(&full));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_checkpoints_are_refused() {
    let a = model("examples/dining_philosophers.csp");
    let b = model("examples/bounded_buffer.csp");
    let dir = scratch("wrong");
    let d = dir.to_string_lossy().into_owned();
    let (code, _, err) = weft(&[
        "explore",
        &a,
        "--max-depth",
        "3",
        "--checkpoint",
        &d,
        "--checkpoint-interval",
        "0",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = weft(&["explore", &b, "--resume", &d]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("another model"), "{err}");
    // A damaged file.
    let file = dir.join("weft.checkpoint");
    let mut bytes = std::fs::read(&file).expect("the checkpoint");
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    std::fs::write(&file, &bytes).expect("writes");
    let (code, _, err) = weft(&["explore", &a, "--resume", &d]);
    assert_eq!(code, 2);
    assert!(err.contains("damaged"), "{err}");
    // No checkpoint there at all.
    let (code, _, err) = weft(&["explore", &a, "--resume", "/nonexistent/weft"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/weft"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
