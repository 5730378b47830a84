//! Issue 15's first "must show", for `weft explore`: every example of `examples/` and every
//! corpus CSPm script (the ProB/FDR inputs of `cspmf_parser_inputs`, the `itdojp_cspx`
//! problems: the scripts `dist_check.rs` checks) explored by the distributed engine in 1
//! process of 2 workers, 2 processes of 1 worker and 3 processes of 2 workers gives the states, transitions, deadlocks, levels and shortest
//! deadlock trace (`--trace`) of one process. Each run keeps at most [`MAX_STATES`] states (a
//! limited run keeps the first states in canonical order, so a stopped run is compared too:
//! the scaling model's 6.6 million states stop there).
//!
//! The scripts with a component numbered as met (`STRUCTURAL`) are compared too: their
//! states travel keyed by their structural encoding.
//!
//! `weft check` on the same scripts: `dist_check.rs` (every script with 2 processes,
//! `every_shareable_assertion_of_the_examples_and_the_corpus_is_shared`; 3 processes for the
//! scripts of its `CHECKED_SCRIPTS` and `FAILING_SCRIPTS`).

#[path = "common/dist.rs"]
mod dist;

use std::path::PathBuf;

use dist::{figures, root, weft_distributed_command, weft_single};

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

/// The scripts whose explored process (`SYSTEM`, else the last declared) has a component
/// numbered as met (of more than 4096 states, or that cannot be explored on its own), so that
/// it has no canonical encoding of a fixed width: a distributed run keys their states by
/// their structural encoding (`dist_structural.rs`), and is compared like the others.
const STRUCTURAL: [&str; 4] = [
    "/Andrew.csp",
    "/ex.csp",
    "/subtype_ex.csp",
    "/subtype_nametype_ex.csp",
];

#[test]
fn every_example_and_corpus_script_explores_alike_in_two_and_three_processes() {
    let (mut compared, mut with_deadlocks, mut stopped) = (0, 0, 0);
    let mut structural = 0;
    for path in scripts() {
        let script = path.to_str().unwrap();
        let explore = |layout: &[&str]| {
            let args = [script, "--trace", "--max-states", MAX_STATES];
            weft_single("explore", &[&args[..], layout].concat())
        };
        let (single, code) = explore(&["--threads", "2"]);
        if single.get("error").is_some() {
            // A script with no process to explore, or whose process does not load alone.
            continue;
        }
        // The distributed engine in one process: every model is distributed (one with a
        // component numbered as met keyed by its structural encoding).
        let (alone, alone_code) = explore(&["--workers", "2"]);
        assert!(alone.get("error").is_none(), "{script}: {alone}");
        structural += STRUCTURAL.iter().any(|s| script.ends_with(s)) as usize;
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
    assert_eq!(
        structural,
        STRUCTURAL.len(),
        "scripts keyed structurally compared"
    );
}
