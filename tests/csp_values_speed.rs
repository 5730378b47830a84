//! Set-valued process parameters (issue 13): the shortcuts that make them fast (sets carrying
//! their hash, the memo of function results, the merge of `union`, a prefix body evaluated
//! once per value of the inputs it uses) give the same values and state spaces as before.
//! Timing-insensitive: each test checks results, counted by hand.

use std::path::Path;
use std::sync::Arc;

use weft::csp::{load_str, CspSystem, Script, Value};
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

/// The value of each named boolean of `script`, shown.
fn shown(script: &Script, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            let v = script.value(n).unwrap_or_else(|e| panic!("{n}: {e}"));
            script.show(&v)
        })
        .collect()
}

#[test]
fn recursion_over_a_long_sequence_takes_its_tails_in_constant_time() {
    // Each function walks a sequence of 20,000 integers one element at a time: by the
    // pattern `<x>^xs`, by `tail`, and by the pattern `xs^<x>`. Copying the rest at each step
    // (as before) made each quadratic: about 2 * 10^8 values copied and, the evaluation
    // frames holding every suffix at once, gigabytes of memory. Sums: 20000 * 20001 / 2.
    // A generous bound on the time (they take well under a second now).
    let s = load(
        "sumr(<>) = 0\nsumr(<x>^xs) = x + sumr(xs)\n\
         sumt(s) = if null(s) then 0 else head(s) + sumt(tail(s))\n\
         lastr(<>) = 0\nlastr(xs^<x>) = x + lastr(xs)\n\
         N = 20000\nA = sumr(<1..N>)\nB = sumt(<1..N>)\nC = lastr(<1..N>)\n\
         D = tail(tail(<1..N>)) == <3..N>\nE = <1..N> < tail(<0..N>)\n",
    );
    // 20,000 nested calls: on a thread with a large stack, as the command line evaluates
    const STACK: usize = 1 << 30;
    let start = std::time::Instant::now();
    let values = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            weft::csp::set_thread_stack_budget(STACK - (16 << 20));
            shown(&s, &["A", "B", "C", "D", "E"])
        })
        .expect("a thread")
        .join()
        .expect("no panic");
    assert_eq!(
        values,
        ["200010000", "200010000", "200010000", "true", "false"]
    );
    let took = start.elapsed();
    assert!(took.as_secs() < 20, "took {took:?}");
}

#[test]
fn slices_of_sequences_are_the_same_values_as_fresh_ones() {
    // Tails and patterns give ranges of a shared buffer; as values they are the sequences
    // of their elements: equal to, ordered and hashed (set members, memo keys) like fresh
    // ones: the four sequences of A are all <2, 3>; the prefix order `<=` on sequences.
    let s = load(
        "f(<x>^xs) = xs\ng(xs^<x>) = xs\n\
         A = card({tail(<1,2,3>), <2,3>, f(<0,2,3>), g(<2,3,4>)})\n\
         B = {f(<1,2>), g(<5,2>)} == {<2>, <5>}\n\
         C = f(<1,2,3>) <= <2,3,4>\nD = g(<1,2,3>) < <1,2>\n\
         E = seq({<1,2>, tail(<0,1,1>), f(<0,1>)})\nF = concat(<f(<1,2>), g(<3,4>)>)\n",
    );
    assert_eq!(
        shown(&s, &["A", "B", "C", "D", "E", "F"]),
        [
            "1",
            "true",
            "true",
            "false",
            "<<1>, <1, 1>, <1, 2>>",
            "<2, 3>"
        ]
    );
}

#[test]
fn lazy_lists_give_their_elements_in_order() {
    // <x | x <- <0..>, x % 2 == 1> is the odd numbers 1, 3, 5, ...; take(s, n) its first n.
    // A filter `100 < x` on `<0..>` starts at 101; the `<x>^xs` pattern and `^` on the left
    // of a lazy list; a lazy list drawing from a lazy list (the odd multiples of 3, times 2).
    let s = load(
        "odds = <x | x <- <0..>, x % 2 == 1>\n\
         take(_, 0) = <>\ntake(<x>^xs, n) = <x>^take(xs, n - 1)\n\
         A = take(odds, 4)\nB = head(tail(tail(odds)))\n\
         C = head(<x | x <- <0..>, 100 < x>)\nD = take(<7, 8>^odds, 3)\n\
         E = take(<2 * y | y <- odds, y % 3 == 0>, 3)\nF = null(odds)\n\
         G = take(<(x, y) | x <- <1..>, y <- <x, -x>>, 3)\nH = elem(3, <1..>)\n",
    );
    assert_eq!(
        shown(&s, &["A", "B", "C", "D", "E", "F", "G", "H"]),
        [
            "<1, 3, 5, 7>",
            "5",
            "101",
            "<7, 8, 1>",
            "<6, 18, 30>",
            "false",
            "<(1, 1), (1, -1), (2, 2)>",
            "true"
        ]
    );
    // what needs all of a lazy list is refused, with a message
    let s = load("odds = <x | x <- <0..>, x % 2 == 1>\nA = #odds\nB = set(odds)\n");
    for name in ["A", "B"] {
        let e = s.value(name).expect_err("an infinite sequence");
        assert!(e.to_string().contains("infinite sequence"), "{name}: {e}");
    }
}

#[test]
fn every_use_of_events_is_one_shared_set() {
    // `Events` of 11,000 events: a process term holding it (RUN(Events), met once per event
    // of `c?x -> RUN(Events)`) compared its copies element by element, which made exploring
    // quadratic in the alphabet. Each use now gives the same set.
    let s = load(
        "channel c : {0..10999}\nA = Events\nB = Events\n\
         P = c?x -> RUN(Events)\nQ = RUN(Events)\n",
    );
    let (Value::Set(a), Value::Set(b)) = (s.value("A").unwrap(), s.value("B").unwrap()) else {
        panic!("Events is a finite set");
    };
    assert_eq!(a.len(), 11000);
    assert!(Arc::ptr_eq(a.items(), b.items()));
    // P: its first state, then RUN(Events), with 11,000 moves from each
    assert_eq!(counts(&s, "P"), (2, 22000, 0));
    assert_eq!(counts(&s, "Q"), (1, 11000, 0));
}
