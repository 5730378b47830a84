//! Set-valued process parameters (issue 13): the shortcuts that make them fast (sets carrying
//! their hash, the memo of function results, the merge of `union`, a prefix body evaluated
//! once per value of the inputs it uses) give the same values and state spaces as before.
//! Timing-insensitive: each test checks results, counted by hand.

use std::path::Path;
use std::sync::Arc;

use weft::csp::{load_str, CspSystem, Script};
use weft::explore::{explore, ExploreOptions};

fn load(text: &str) -> Arc<Script> {
    Arc::new(load_str("t.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}")))
}

/// States, transitions and deadlocks of process `name`, the same at 1 and 2 threads.
fn counts(script: &Arc<Script>, name: &str) -> (u64, u64, u64) {
    let p = script
        .process(name, &[])
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut seen = Vec::new();
    for threads in [1, 2] {
        let sys = CspSystem::new(script, &p).unwrap_or_else(|e| panic!("{e}"));
        let opts = ExploreOptions {
            threads: weft::threads::Threads::new(threads).expect("a thread count"),
            ..Default::default()
        };
        let r = explore(&sys, &opts);
        assert!(sys.take_error().is_none());
        seen.push((r.stats.states, r.stats.transitions, r.stats.deadlocks));
    }
    assert_eq!(seen[0], seen[1], "thread counts disagree");
    seen[0]
}

#[test]
fn unions_of_finite_sets() {
    let s = load(
        "A = union({3, 1}, {2, 4, 1})\nB = union({1, 2}, {2})\nC = union({}, {1})\n\
         D = union({2}, {1, 3})\nE = union({1, 2}, {1, 2})\nF = union({{1}}, {{1}, {}})\n\
         G = union({1, 2}, {0}) == {0, 1, 2}\nH = member(union({1}, {2}), {{1, 2}})\n",
    );
    for (name, shown) in [
        ("A", "{1, 2, 3, 4}"),
        ("B", "{1, 2}"),
        ("C", "{1}"),
        ("D", "{1, 2, 3}"),
        ("E", "{1, 2}"),
        ("F", "{{}, {1}}"),
        ("G", "true"),
        ("H", "true"),
    ] {
        let v = s.value(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.show(&v), shown, "{name}");
    }
}

#[test]
fn function_results_are_the_same_when_met_again() {
    // `f` is called with the same sets again (its results come from the memo).
    let s = load(
        "f(S) = union(S, {x + 1 | x <- S, x < 3})\n\
         A = f(f({0}))\nB = f(f({0}))\nC = A == B and A == {0, 1, 2}\n",
    );
    assert_eq!(s.show(&s.value("A").unwrap()), "{0, 1, 2}");
    assert_eq!(s.show(&s.value("C").unwrap()), "true");
}

#[test]
fn a_body_is_the_same_for_inputs_it_does_not_use() {
    // A state is a term: a call unfolds to its prefix closed over the variables it uses.
    // P(n) ignores its second input: c.x.y leads to P((n + x) % 3); 3 states, 9 moves each.
    // Q(x) ignores its first input: Q((x + z) % 3), 3 states.
    // R's input n shadows its parameter, which the body then never sees: R(k) is one
    // closure with nothing captured, 1 state, 9 moves to itself.
    // S: the input n shadows the parameter and the body d.n -> S(n) uses it, not m: the
    // first state, then d.x -> S(x) for each x (3 more), 9 + 3 moves.
    let s = load(
        "channel c : {0..2}.{0..2}\nchannel d : {0..2}\n\
         P(n) = c?x?y -> P((n + x) % 3)\nQ(x) = c?y?z -> Q((x + z) % 3)\n\
         R(n) = c?n?m -> R(n)\nS(n) = c?n?m -> d.n -> S(n)\n\
         P0 = P(0)\nQ0 = Q(0)\nR0 = R(0)\nS0 = S(0)\n",
    );
    assert_eq!(counts(&s, "P0"), (3, 27, 0));
    assert_eq!(counts(&s, "Q0"), (3, 27, 0));
    assert_eq!(counts(&s, "R0"), (1, 9, 0));
    assert_eq!(counts(&s, "S0"), (4, 12, 0));
}

#[test]
fn intruder_leaf_has_every_closed_knowledge_set() {
    // tests/cases/should_pass/values_intruder_decrypt.csp: the knowledge sets closed under
    // decryption, 16^3 + 3*12^3 + 3*10^3 + 9^3 = 13009 states; from each, 15 facts heard,
    // each known fact said and each known nonce leaked; never a deadlock.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/should_pass/values_intruder_decrypt.csp");
    let text = std::fs::read_to_string(path).expect("the intruder case");
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("assert"))
        .map(|l| format!("{l}\n"))
        .collect();
    let s = load(&format!("{text}\nI0 = INTRUDER({{}})\n"));
    let (states, transitions, deadlocks) = counts(&s, "I0");
    assert_eq!((states, deadlocks), (13009, 0));
    assert!(transitions >= 15 * 13009);
}
