//! `CspSystem::describe_components`: a state shown per component of its parallel composition,
//! as FDR's debugger shows it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use weft::csp::{load_str, ComponentState, CspState, CspSystem, Script};
use weft::ts::TransitionSystem;

const SCRIPT: &str = "channel a, b, c, d\n\
    P = a -> b -> P\n\
    Q = a -> c -> Q\n\
    R = d -> R\n\
    SYSTEM = (P [| {a} |] Q) ||| R\n\
    HIDDEN = (P [| {a} |] Q) \\ {b}\n\
    DONE = (a -> SKIP) ||| (b -> SKIP)\n\
    SEQ = a -> b -> SEQ\n";

fn script() -> Arc<Script> {
    Arc::new(load_str("t.csp", SCRIPT, Path::new(".")).unwrap())
}

fn system(name: &str) -> CspSystem {
    let script = script();
    CspSystem::new(&script, &script.process(name, &[]).unwrap()).unwrap()
}

/// The state reached from the initial one by the events named in `trace` (the first
/// transition with each label).
fn after(sys: &CspSystem, trace: &[&str]) -> CspState {
    let mut s = sys.initial_state();
    for &event in trace {
        let mut next = None;
        sys.for_each_successor(&s, &mut |l, t| {
            if next.is_none() && sys.label_name(l) == event {
                next = Some(t);
            }
        });
        s = next.unwrap_or_else(|| panic!("no {event} after {trace:?}"));
    }
    s
}

fn entries(components: &[ComponentState]) -> Vec<(String, String)> {
    components
        .iter()
        .map(|c| (c.position(), c.process.clone()))
        .collect()
}

#[test]
fn network_state_shows_one_entry_per_component() {
    let sys = system("SYSTEM");
    let initial = sys.describe_components(sys.initial_state());
    assert_eq!(
        entries(&initial),
        [
            ("[0].[0]".to_string(), "P".to_string()),
            ("[0].[1]".to_string(), "Q".to_string()),
            ("[1]".to_string(), "R".to_string()),
        ]
    );
    assert_eq!(initial[0].path, [0, 0]);
    assert_eq!(initial[2].to_string(), "[1] R");
    // After a (synchronised), P and Q have moved, R has not.
    let s = after(&sys, &["a"]);
    let pair = |p: &str, q: &str| (p.to_string(), q.to_string());
    assert_eq!(
        entries(&sys.describe_components(s)),
        [
            pair("[0].[0]", "b -> P"),
            pair("[0].[1]", "c -> Q"),
            pair("[1]", "R")
        ]
    );
    // After b, P is itself again (shown by name); d moved R back to R.
    let s = after(&sys, &["a", "b", "d"]);
    assert_eq!(
        entries(&sys.describe_components(s)),
        [
            pair("[0].[0]", "P"),
            pair("[0].[1]", "c -> Q"),
            pair("[1]", "R")
        ]
    );
}

#[test]
fn hiding_counts_as_one_step_of_the_path() {
    let sys = system("HIDDEN");
    let shown = entries(&sys.describe_components(sys.initial_state()));
    assert_eq!(
        shown,
        [
            ("[0].[0]".to_string(), "P".to_string()),
            ("[0].[1]".to_string(), "Q".to_string()),
        ]
    );
}

#[test]
fn terminated_and_sequential_states_show_as_describe_does() {
    let sys = system("DONE");
    // Each operand's ✓ is a tau of the interleaving (distributed termination), then the
    // whole terminates.
    let omega = after(&sys, &["a", "b", "tau", "tau", "✓"]);
    let shown = sys.describe_components(omega);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].process, sys.describe(omega));
    assert_eq!(shown[0].process, "Ω");
    assert!(shown[0].path.is_empty());
    // Before ✓ both components are SKIP.
    let both = sys.describe_components(after(&sys, &["a", "b"]));
    assert_eq!(
        entries(&both),
        [
            ("[0]".to_string(), "SKIP".to_string()),
            ("[1]".to_string(), "SKIP".to_string()),
        ]
    );
    let one_done = sys.describe_components(after(&sys, &["a", "b", "tau"]));
    assert_eq!(
        entries(&one_done),
        [
            ("[0]".to_string(), "Ω".to_string()),
            ("[1]".to_string(), "SKIP".to_string()),
        ]
    );
    // A process that is no network: one entry, its description.
    let sys = system("SEQ");
    let mut seen: HashMap<CspState, ()> = HashMap::new();
    for s in [sys.initial_state(), after(&sys, &["a"])] {
        seen.insert(s, ());
        let shown = sys.describe_components(s);
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].process, sys.describe(s));
        assert_eq!(shown[0].to_string(), sys.describe(s));
        assert!(shown[0].path.is_empty());
    }
    assert_eq!(seen.len(), 2);
}

#[test]
fn components_show_their_names_with_arguments() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scaling_philosophers.csp");
    let script = Arc::new(weft::csp::load_script(&path).unwrap());
    let sys = CspSystem::new(&script, &script.process("SYSTEM", &[]).unwrap()).unwrap();
    let shown = entries(&sys.describe_components(sys.initial_state()));
    let expected: Vec<(String, String)> = (0..8)
        .map(|i| (format!("[0].[{i}]"), format!("PHIL({i})")))
        .chain((0..8).map(|f| (format!("[1].[{f}]"), format!("FORK({f})"))))
        .collect();
    assert_eq!(shown, expected);
    // Philosopher 2 thinks: only its component changes, to the rest of its cycle.
    let s = after(&sys, &["thinks.2"]);
    let shown = entries(&sys.describe_components(s));
    for (i, (at, process)) in shown.iter().enumerate() {
        assert_eq!(at, &expected[i].0);
        if i == 2 {
            assert!(process.starts_with("sits.i ->"), "{process}");
            assert!(process.ends_with("with i=2"), "{process}");
        } else {
            assert_eq!(process, &expected[i].1);
        }
    }
}
