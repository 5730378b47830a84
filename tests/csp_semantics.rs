//! The operational semantics of CSPm processes (`CspSystem`): hand-written cases per operator.

use std::sync::Arc;

use weft::csp::{load_script, load_str, CspSystem};
use weft::explore::{explore, ExploreOptions};

fn explore_script(script: &Arc<weft::csp::Script>, name: &str, threads: usize) -> (u64, u64, u64) {
    let p = script.process(name, &[]).unwrap();
    let sys = CspSystem::new(script, &p).unwrap();
    let opts = ExploreOptions {
        threads,
        ..Default::default()
    };
    let r = explore(&sys, &opts);
    assert!(sys.take_error().is_none());
    (r.stats.states, r.stats.transitions, r.stats.deadlocks)
}

fn counts(src: &str, name: &str) -> (u64, u64) {
    let script = Arc::new(load_str("t.csp", src, std::path::Path::new(".")).unwrap());
    let (s, t, _) = explore_script(&script, name, 2);
    (s, t)
}

#[test]
fn dining_philosophers_five() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/csp/dining.csp");
    let script = Arc::new(load_script(&path).unwrap());
    for threads in [1, 2, 4] {
        assert_eq!(explore_script(&script, "SYSTEM", threads), (7774, 34240, 1));
    }
}

#[test]
fn small_processes() {
    let ab = "channel a, b\n";
    assert_eq!(
        counts(&format!("{ab}P = (a -> STOP) |~| (a -> b -> STOP)"), "P"),
        (5, 5)
    );
    assert_eq!(
        counts(&format!("{ab}P = (a -> SKIP) ||| (b -> SKIP)"), "P"),
        (5, 5)
    );
    assert_eq!(
        counts(&format!("{ab}P = (a -> SKIP) ; (b -> SKIP)"), "P"),
        (5, 4)
    );
    assert_eq!(
        counts(&format!("{ab}P = (a -> P) [> (b -> STOP)"), "P"),
        (3, 3)
    );
}
