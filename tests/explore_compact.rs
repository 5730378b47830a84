//! `explore::count_states` (compact storage of canonical encodings, no ids, no parents)
//! against `explore::try_explore` (the indexed explorer): the same states, transitions,
//! deadlocks and levels, at 1, 2 and 4 threads, on the bundled examples, the data-driven CSPm
//! cases and corpus LTSs; with a state limit too. And the compact storage is what is used
//! wherever the system has a short encoding.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use weft::csp::{load_script, CspSystem};
use weft::explore::{count_states, try_explore, ExploreOptions, ExploreStats, StopSignal};
use weft::threads::Threads;
use weft::ts::TransitionSystem;

fn opts(threads: usize, max_states: Option<u64>) -> ExploreOptions {
    ExploreOptions {
        threads: Threads::new(threads).expect("a thread count"),
        max_states,
        ..Default::default()
    }
}

fn counts(s: &ExploreStats) -> (u64, u64, u64, u32, bool) {
    (s.states, s.transitions, s.deadlocks, s.levels, s.complete)
}

/// Compares the two explorers on `ts`; returns whether the compact storage was used.
fn compare<T: TransitionSystem>(ts: &T, what: &str) -> bool {
    let indexed = try_explore(ts, &opts(1, Some(300_000)), &StopSignal::new()).expect("runs");
    if !indexed.stats.complete {
        return false; // too large for this test (the scaling model and its copies)
    }
    let mut compact_used = false;
    for threads in [1, 2, 4] {
        let counted = count_states(ts, &opts(threads, None), &StopSignal::new()).expect("runs");
        assert_eq!(
            counts(&counted),
            counts(&indexed.stats),
            "{what}, {threads} threads"
        );
        compact_used = counted.storage == Some("compact");
        assert_eq!(compact_used, counted.bytes_per_state.is_some(), "{what}");
        // A limit that cuts the run short: the same counts as the indexed explorer's.
        if indexed.stats.states > 4 {
            let limit = Some(indexed.stats.states / 2);
            let a = try_explore(ts, &opts(threads, limit), &StopSignal::new()).expect("runs");
            let b = count_states(ts, &opts(threads, limit), &StopSignal::new()).expect("runs");
            assert_eq!(
                counts(&b),
                counts(&a.stats),
                "{what}, limit, {threads} threads"
            );
            assert!(!b.complete);
        }
    }
    compact_used
}

#[test]
fn csp_scripts_count_alike() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut compact = 0;
    for dir in ["examples", "tests/cases/should_pass"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("a directory")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "csp"))
            .filter(|p| !p.ends_with("scaling_philosophers.csp"))
            .collect();
        files.sort();
        for path in files {
            let Ok(script) = load_script(&path) else {
                continue;
            };
            let script = Arc::new(script);
            for a in script.assertions() {
                let Ok(check) = &a.check else { continue };
                for p in check.processes() {
                    let Ok(system) = CspSystem::new(&script, p) else {
                        continue;
                    };
                    let what = format!("{}: {}", path.display(), a.text);
                    let used = compare(&system, &what);
                    if !system.failed() && used {
                        compact += 1;
                    }
                }
            }
        }
    }
    assert!(
        compact >= 20,
        "the compact storage was used for {compact} processes only"
    );
}

#[test]
fn corpus_ltss_count_alike() {
    for path in [
        "aut/generated/linearizability/treiberStack_impl.aut.gz",
        "aut/generated/mcrl2_examples/1394-fin.aut.gz",
    ] {
        let full = common::corpus_dir().join(path);
        if !full.exists() {
            panic!("missing corpus file {}", full.display());
        }
        let lts = weft::lts::aut::read_aut_file(&full, &Default::default()).expect("reads");
        assert!(
            compare(&lts, path),
            "{path}: an LTS has a one-word encoding"
        );
    }
}

/// Only the first component's field keeps room for the value that marks Ω: a component of
/// 2^k states takes k bits elsewhere, so a board of 40 two-state holes (peg solitaire's
/// holes) packs into 41 bits, two words, and is stored compactly.
#[test]
fn components_of_two_to_the_k_states_take_k_bits() {
    let text = "channel flip : {0..39}\n\
                HOLE(i) = flip.i -> HOLE'(i)\n\
                HOLE'(i) = flip.i -> HOLE(i)\n\
                BOARD = ||| i : {0..39} @ HOLE(i)\n";
    let script =
        Arc::new(weft::csp::load_str("board.csp", text, std::path::Path::new(".")).expect("loads"));
    let p = script.process("BOARD", &[]).expect("a process");
    let system = CspSystem::new(&script, &p).expect("a system");
    assert_eq!(system.encoded_bits().expect("an encoding"), 41);
    assert_eq!(system.encoded_width().expect("an encoding"), 2);
}

/// Components of four states each, the last one after ✓: in every position but the first
/// the all-ones value 3 is a state of the component, and the network's Ω is still told
/// apart (the counts match the indexed explorer's, and compact storage is used).
#[test]
fn a_full_field_is_a_state_outside_the_first_position() {
    let text = "channel flip : {0..5}\n\
                A(i) = flip.i -> B(i)\n\
                B(i) = flip.i -> SKIP\n\
                BOARD = ||| i : {0..5} @ A(i)\n";
    let script =
        Arc::new(weft::csp::load_str("board.csp", text, std::path::Path::new(".")).expect("loads"));
    let p = script.process("BOARD", &[]).expect("a process");
    let system = CspSystem::new(&script, &p).expect("a system");
    // 3 bits for position 0 (four states and the value that marks Ω), 2 for each other.
    assert_eq!(system.encoded_bits().expect("an encoding"), 3 + 5 * 2);
    assert!(compare(&system, "BOARD"), "stored compactly");
    let counted = count_states(&system, &opts(1, None), &StopSignal::new()).expect("runs");
    // Each component at A, B, SKIP or its Ω (4^6 states), and the network's Ω after its ✓.
    assert_eq!(counted.states, 4096 + 1);
    // Ω, after the ✓, has no successors: the one state the explorer counts as a deadlock.
    assert_eq!(counted.deadlocks, 1);
}
