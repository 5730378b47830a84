//! The systems of one run of assertions share their leaves (`SystemMaker`): a sequential
//! process met by several systems is explored on its own once, and nothing else changes:
//! - each distinct leaf of the run is explored once (`AssertionRun::leaf_explorations`);
//! - every assertion gets the result it gets in a run of its own (verdict, witness, states,
//!   transitions), at 1, 2 and 4 threads;
//! - the compressions a system applied are its own, not those of the run's other systems
//!   (a compression valid only in some models is refused in the others by the system that
//!   applies it, whether its leaf was explored for it or for an earlier system);
//! - a replicated choice over a large set fires in one go, and the same at every thread count.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft::csp::{load_script, load_str, CspSystem, Script};
use weft::explore::{explore, ExploreOptions};
use weft::threads::Threads;
use weft::verify::{AssertionResult, AssertionRun, Verdict, VerifyOptions};

fn case(name: &str) -> Arc<Script> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/should_pass")
        .join(name);
    Arc::new(load_script(&path).unwrap_or_else(|e| panic!("{e}")))
}

fn options(threads: usize) -> VerifyOptions {
    VerifyOptions {
        threads: Threads::new(threads).expect("a thread count"),
        ..VerifyOptions::default()
    }
}

/// What an assertion's result must not owe to the run it was checked in.
fn figures(r: &AssertionResult) -> String {
    format!(
        "{}: {:?} {:?} states {} transitions {}",
        r.text, r.verdict, r.witness, r.states, r.transitions
    )
}

/// Five systems over one network of five leaves, the specifications `SPEC` and `STOP`, and a
/// network with `STOP` as a sixth leaf: seven distinct leaves, each explored once (each
/// system exploring its own would explore 5 + 5 + 1 + 5 + 1 + 5 + 6 = 28).
#[test]
fn each_leaf_is_explored_once_in_a_run() {
    let script = case("leaves7_shared_network.csp");
    let mut run = AssertionRun::new(script, options(2));
    let results = run.run_all(|_| {});
    assert_eq!(results.len(), 6);
    assert_eq!(run.leaf_explorations(), 7);
}

/// Every assertion of the run as in a run of its own, where nothing is shared.
#[test]
fn shared_leaves_give_the_results_of_separate_runs() {
    for name in [
        "leaves7_shared_network.csp",
        "real_security_intruder.csp",
        "values_intruder_decrypt.csp",
        "real_functions_compressions.csp",
        "lead5_misc1.csp",
    ] {
        let script = case(name);
        let mut at_one_thread: Option<Vec<String>> = None;
        for threads in [1, 2, 4] {
            let together: Vec<String> = AssertionRun::new(script.clone(), options(threads))
                .run_all(|_| {})
                .iter()
                .map(figures)
                .collect();
            let alone: Vec<String> = script
                .assertions()
                .iter()
                .map(|a| figures(&AssertionRun::new(script.clone(), options(threads)).check(a)))
                .collect();
            assert_eq!(together, alone, "{name} at {threads} threads");
            match &at_one_thread {
                None => at_one_thread = Some(together),
                Some(one) => assert_eq!(&together, one, "{name} at {threads} threads"),
            }
        }
    }
}

/// `normal` is valid in the traces and failures models, not in the refusal-testing one. The
/// network `SYS` applies it, `PLAIN` has the same other leaf and no compression: in one run,
/// `PLAIN`'s refusal-testing check runs after `SYS` made the compression, and `SYS`'s after
/// its leaves were explored for an earlier assertion.
#[test]
fn a_system_applies_its_own_compressions_only() {
    let text = "channel a, b\n\
                P = a -> P |~| b -> P\n\
                Q = b -> Q\n\
                SYS = normal(P) ||| Q\n\
                PLAIN = P ||| Q\n\
                assert SYS :[deadlock free [F]]\n\
                assert PLAIN [R= PLAIN\n\
                assert SYS [R= SYS\n\
                assert Q [R= Q\n";
    let script = Arc::new(load_str("leaves.csp", text, Path::new(".")).expect("a script"));
    for threads in [1, 2] {
        let results = AssertionRun::new(script.clone(), options(threads)).run_all(|_| {});
        let verdicts: Vec<&str> = results.iter().map(|r| r.verdict.name()).collect();
        assert_eq!(
            verdicts,
            ["holds", "holds", "error", "holds"],
            "{results:?}"
        );
        let Verdict::Error(e) = &results[2].verdict else {
            unreachable!()
        };
        assert!(e.to_string().contains("`normal` is valid only"), "{e}");
    }
}

/// `[] i : {0..N-1} @ c.i -> STOP` as one process: its initial state fires N transitions at
/// once, the same at 1, 2 and 4 threads.
#[test]
fn a_replicated_choice_over_a_large_set_fires_in_one_go() {
    let text = "channel c : {0..99999}\n\
                P = [] i : {0..99999} @ c.i -> STOP\n";
    let script = Arc::new(load_str("choice.csp", text, Path::new(".")).expect("a script"));
    let process = script.process("P", &[]).expect("P");
    for threads in [1, 2, 4] {
        let system = CspSystem::new(&script, &process).expect("a system");
        let opts = ExploreOptions {
            threads: Threads::new(threads).expect("a thread count"),
            ..Default::default()
        };
        let explored = explore(&system, &opts);
        assert!(system.take_error().is_none());
        // The choice and STOP, which every branch leads to.
        assert_eq!(explored.stats.states, 2, "at {threads} threads");
        assert_eq!(explored.stats.transitions, 100_000, "at {threads} threads");
    }
}
