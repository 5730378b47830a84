//! Refinement checks whose product is kept compactly (`VerifyOptions::compact`, the default:
//! exact pairs packed into one word each, no parents; a failing check searched again indexed)
//! against the indexed search alone, on every bundled example and data-driven case:
//! - the same verdict and the same counterexample (`Debug` of the witness, which holds the
//!   trace, the violation and the implementation's state per component);
//! - the same result at 1, 2 and 4 threads (pairs, transitions, levels, witness);
//! - a check that holds in compact storage says how many bytes its pairs took, and a check
//!   whose normal-form nodes do not fit beside a wide encoding in one word keeps its pairs
//!   wide (the node, then the encoding), with the right verdict and the exact pairs (case
//!   `compact_wide_encoding.csp`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft::csp::load_script;
use weft::threads::Threads;
use weft::verify::{AssertionResult, AssertionRun, VerifyOptions};

fn scripts() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "tests/cases/should_pass"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("a directory") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|x| x == "csp") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn run(path: &Path, compact: bool, threads: usize) -> Vec<AssertionResult> {
    let script = Arc::new(load_script(path).unwrap_or_else(|e| panic!("{e}")));
    let opts = VerifyOptions {
        threads: Threads::new(threads).expect("a thread count"),
        // The 6.6M-state scaling model stops here, alike in both storages.
        max_states: Some(300_000),
        compact,
        ..VerifyOptions::default()
    };
    AssertionRun::new(script, opts).run_all(|_| {})
}

/// What must not depend on the storage: the verdict and the witness.
fn verdicts(results: &[AssertionResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| format!("{}: {:?} {:?}", r.text, r.verdict, r.witness))
        .collect()
}

/// What must not depend on the thread count either.
fn figures(results: &[AssertionResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            format!(
                "{}: {:?} {:?} pairs {} transitions {} levels {} compact {}",
                r.text,
                r.verdict,
                r.witness,
                r.states,
                r.transitions,
                r.levels,
                r.visited_bytes.is_some()
            )
        })
        .collect()
}

#[test]
fn compact_and_indexed_products_agree_at_every_thread_count() {
    let mut compact_holds = 0;
    for path in scripts() {
        let indexed = run(&path, false, 2);
        assert!(indexed.iter().all(|r| r.visited_bytes.is_none()));
        let compact = run(&path, true, 2);
        assert_eq!(
            verdicts(&compact),
            verdicts(&indexed),
            "{}: compact and indexed storage",
            path.display()
        );
        for threads in [1, 4] {
            assert_eq!(
                figures(&run(&path, true, threads)),
                figures(&compact),
                "{}: {threads} threads against 2",
                path.display()
            );
        }
        compact_holds += compact
            .iter()
            .filter(|r| r.visited_bytes.is_some_and(|b| b > 0))
            .count();
    }
    assert!(
        compact_holds >= 10,
        "only {compact_holds} checks were kept compactly"
    );
}

#[test]
fn nodes_that_do_not_fit_beside_a_wide_encoding_keep_their_pairs_wide() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/should_pass/compact_wide_encoding.csp");
    let results = run(&path, true, 2);
    let by_text = |text: &str| {
        results
            .iter()
            .find(|r| r.text == text)
            .unwrap_or_else(|| panic!("no assertion {text}"))
    };
    // Sixteen normal-form nodes, room for four: pairs kept wide, and right. The product
    // pairs each of the 16 nodes with one of SYSTEM's two states (tick, then tock, in step
    // with S's own), 16 pairs and 16 steps.
    let wide = by_text("S(0) [F= SYSTEM");
    assert_eq!(wide.verdict.name(), "holds");
    assert!(wide.visited_bytes.is_some());
    assert_eq!((wide.states, wide.transitions), (16, 16));
    // One node: compact.
    let narrow = by_text("RUNT [T= SYSTEM");
    assert_eq!(narrow.verdict.name(), "holds");
    assert!(narrow.visited_bytes.is_some());
}
