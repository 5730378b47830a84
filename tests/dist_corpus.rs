//! Issue 15's first "must show", for `weft explore`: every example of `examples/` and every
//! corpus CSPm script (the ProB/FDR inputs of `cspmf_parser_inputs`, the `itdojp_cspx`
//! problems: the scripts `dist_check.rs` checks) explored by the distributed engine in 1
//! process of 2 workers, 2 processes of 1 worker and 3 processes of 2 workers gives the states, transitions, deadlocks, levels and shortest
//! deadlock trace (`--trace`) of one process. Each run keeps at most [`MAX_STATES`] states (a
//! limited run keeps the first states in canonical order, so a stopped run is compared too:
//! the scaling model's 6.6 million states stop there).
//!
//! `weft check` on the same scripts: `dist_check.rs` (every script with 2 processes,
//! `every_shareable_assertion_of_the_examples_and_the_corpus_is_shared`; 3 processes for the
//! scripts of its `CHECKED_SCRIPTS` and `FAILING_SCRIPTS`).

#[path = "common/dist.rs"]
mod dist;

use std::path::PathBuf;
use std::process::Command;

use dist::{root, weft_distributed_command, WEFT};
use serde_json::Value;

/// States a run keeps at most.
const MAX_STATES: &str = "20000";

/// The scripts explored: the examples and the corpus CSPm scripts.
fn scripts() -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "tests/corpus/csp/cspmf_parser_inputs"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "csp" || x == "fdr2") {
                scripts.push(path);
            }
        }
    }
    let problems = root().join("tests/corpus/csp/itdojp_cspx/problems");
    for entry in std::fs::read_dir(problems).unwrap() {
        let model = entry.unwrap().path().join("model.cspm");
        if model.exists() {
            scripts.push(model);
        }
    }
    scripts.sort();
    scripts
}

/// The scripts whose explored process (`SYSTEM`, else the last declared) has no canonical
/// encoding, so that a distributed run refuses it (exit 2, with the reason): a component of
/// more than 4096 states, or one that cannot be explored on its own, numbered as met. Their checks are shared where their
/// implementations have one (`dist_check.rs`).
const NOT_DISTRIBUTABLE: [&str; 4] = [
    "Andrew.csp",
    "ex.csp",
    "subtype_ex.csp",
    "subtype_nametype_ex.csp",
];

/// What a run must give alike in every layout.
fn figures(run: &Value) -> Vec<String> {
    [
        "states",
        "transitions",
        "deadlocks",
        "levels",
        "complete",
        "stopped",
        "deadlock_trace",
    ]
    .iter()
    .map(|f| format!("{f}: {}", run[f]))
    .collect()
}

#[test]
fn every_example_and_corpus_script_explores_alike_in_two_and_three_processes() {
    let (mut compared, mut with_deadlocks, mut stopped) = (0, 0, 0);
    let mut not_distributable: Vec<String> = Vec::new();
    for path in scripts() {
        let script = path.to_str().unwrap();
        let explore = |layout: &[&str]| {
            let out = Command::new(WEFT)
                .args(["explore", script, "--json", "--trace"])
                .args(["--max-states", MAX_STATES])
                .args(layout)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let value: Value = serde_json::from_str(text.trim())
                .unwrap_or_else(|e| panic!("{script}: not JSON ({e}): {text}"));
            (value, out.status.code().unwrap_or(-1))
        };
        let (single, code) = explore(&["--threads", "2"]);
        if single.get("error").is_some() {
            // A script with no process to explore, or whose process does not load alone.
            continue;
        }
        // The distributed engine in one process: a model without a canonical encoding is
        // refused (and only such a model).
        let (alone, alone_code) = explore(&["--workers", "2"]);
        if let Some(error) = alone.get("error") {
            let message = error.to_string();
            assert!(
                message.contains("cannot be explored by several processes"),
                "{script}: {message}"
            );
            not_distributable.push(script.to_string());
            continue;
        }
        assert_eq!(alone_code, code, "{script}: 1x2 exit code");
        assert_eq!(
            figures(&alone),
            figures(&single),
            "{script}: 1 process of 2"
        );
        for (processes, workers) in [(2, 1), (3, 2)] {
            let (run, run_code) = weft_distributed_command(
                "explore",
                &[script],
                processes,
                workers,
                &["--trace", "--max-states", MAX_STATES],
            );
            assert_eq!(run_code, code, "{script}: {processes}x{workers} exit code");
            assert_eq!(
                figures(&run),
                figures(&single),
                "{script}: {processes} processes of {workers} workers"
            );
            assert_eq!(run["processes"], processes, "{script}");
        }
        compared += 1;
        with_deadlocks += single["deadlock_trace"].is_array() as usize;
        stopped += (single["complete"] == false) as usize;
    }
    assert!(compared >= 40, "{compared} scripts compared");
    assert!(
        with_deadlocks >= 5,
        "{with_deadlocks} with a deadlock trace"
    );
    assert!(stopped >= 1, "the scaling model stops at the limit");
    let names: Vec<&str> = not_distributable
        .iter()
        .map(|p| p.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        names, NOT_DISTRIBUTABLE,
        "scripts whose explored process has no canonical encoding"
    );
}
