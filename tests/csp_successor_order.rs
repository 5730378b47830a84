//! `CspSystem::for_each_successor` emits a state's successors in an order that depends only on
//! the state's process: two systems of the same process whose states were numbered in
//! different orders (one explored at 1 thread, the other walked depth first in reverse and then
//! explored at 4 threads) give, state by state along a breadth-first walk that follows the
//! emitted order, the same sequence of (label, target process).

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft::csp::{load_script, load_str, CspState, CspSystem, Proc, Script};
use weft::explore::{explore, ExploreOptions};
use weft::ts::TransitionSystem;

/// States of each system walked in the comparison.
const WALK: usize = 1500;
/// States the explorer keeps (it stops at the end of the level that reaches it).
const EXPLORE: u64 = 20_000;
/// States the reverse depth-first walk numbers first.
const SCRAMBLE: usize = 3000;

/// One state of a walk: the state's process and its successors (label, target's process,
/// target's index in the walk).
type Step = (String, Vec<(String, String, usize)>);

/// A breadth-first walk of `sys` that follows the emitted order of successors, over the first
/// `limit` states.
fn canonical_walk(sys: &CspSystem, limit: usize) -> Vec<Step> {
    let mut index: HashMap<CspState, usize> = HashMap::new();
    let mut order = vec![sys.initial_state()];
    index.insert(sys.initial_state(), 0);
    let mut steps = Vec::new();
    let mut at = 0;
    while at < order.len() && at < limit {
        let s = order[at];
        let mut next = Vec::new();
        let mut emitted = Vec::new();
        sys.for_each_successor(&s, &mut |l, t| {
            let i = *index.entry(t).or_insert_with(|| {
                order.push(t);
                order.len() - 1
            });
            emitted.push((l, i));
            next.push((sys.label_name(l), sys.describe(t), i));
        });
        // Sorted by label, without duplicates.
        assert!(
            emitted.windows(2).all(|w| w[0].0 <= w[1].0 && w[0] != w[1]),
            "{}: {next:?}",
            sys.describe(s)
        );
        steps.push((sys.describe(s), next));
        at += 1;
    }
    steps
}

/// Visits up to `limit` states depth first, the last emitted successor first, so that the
/// system numbers its states (and leaves) in an order unlike a breadth-first one.
fn scramble(sys: &CspSystem, limit: usize) {
    let mut seen = HashSet::new();
    let mut stack = vec![sys.initial_state()];
    while let Some(s) = stack.pop() {
        if !seen.insert(s) || seen.len() > limit {
            continue;
        }
        let mut next = Vec::new();
        sys.for_each_successor(&s, &mut |_, t| next.push(t));
        stack.extend(next);
    }
}

/// Number of walked states with two successors of the same label (the cases where the order
/// among targets matters).
fn ties(steps: &[Step]) -> usize {
    steps
        .iter()
        .filter(|(_, next)| next.windows(2).any(|w| w[0].0 == w[1].0))
        .count()
}

/// Compares the walks of two independently built systems of `p`; returns the number of ties
/// met.
fn compare(load: &dyn Fn() -> Arc<Script>, pick: &dyn Fn(&Script) -> Proc, what: &str) -> usize {
    let script_a = load();
    let a = CspSystem::new(&script_a, &pick(&script_a)).expect("system a");
    let r = explore(
        &a,
        &ExploreOptions {
            threads: weft::threads::Threads::ONE,
            max_states: Some(EXPLORE),
            ..Default::default()
        },
    );
    assert!(r.stats.states > 0);
    let script_b = load();
    let b = CspSystem::new(&script_b, &pick(&script_b)).expect("system b");
    scramble(&b, SCRAMBLE);
    explore(
        &b,
        &ExploreOptions {
            threads: weft::threads::Threads::new(4).expect("4 threads"),
            max_states: Some(EXPLORE),
            ..Default::default()
        },
    );
    let (wa, wb) = (canonical_walk(&a, WALK), canonical_walk(&b, WALK));
    let errors = (a.take_error(), b.take_error());
    assert!(
        errors.0.is_none() && errors.1.is_none(),
        "{what}: {errors:?}"
    );
    assert_eq!(wa.len(), wb.len(), "{what}: walks of different lengths");
    for (i, (x, y)) in wa.iter().zip(&wb).enumerate() {
        assert_eq!(x, y, "{what}: state {i} of the walk");
    }
    ties(&wa)
}

fn compare_str(src: &str, name: &str) -> usize {
    let load = || Arc::new(load_str("t.csp", src, Path::new(".")).expect("script loads"));
    compare(
        &load,
        &|s| s.process(name, &[]).expect("process"),
        &format!("{name} of {src}"),
    )
}

/// The processes `path`'s assertions name (`SYSTEM` where it has none); each is compared.
fn compare_file(path: &Path) -> (usize, usize) {
    let load = || Arc::new(load_script(path).unwrap_or_else(|e| panic!("{path:?}: {e:?}")));
    let script = load();
    let count: usize = script
        .assertions()
        .iter()
        .filter_map(|a| a.check.as_ref().ok())
        .map(|c| c.processes().len())
        .sum();
    if count == 0 {
        let what = format!("{}: SYSTEM", path.display());
        let ties = compare(&load, &|s| s.process("SYSTEM", &[]).expect(&what), &what);
        return (1, ties);
    }
    let nth = |s: &Script, n: usize| -> Option<Proc> {
        s.assertions()
            .iter()
            .filter_map(|a| a.check.as_ref().ok())
            .flat_map(|c| c.processes().into_iter().cloned())
            .nth(n)
    };
    let mut ties = 0;
    for n in 0..count {
        let what = format!("{}: process {n} of the assertions", path.display());
        ties += compare(&load, &|s| nth(s, n).expect("same assertions"), &what);
    }
    (count, ties)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn examples_emit_successors_in_canonical_order() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csp"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "examples not found");
    let (mut processes, mut ties) = (0, 0);
    for f in &files {
        let (p, t) = compare_file(f);
        processes += p;
        ties += t;
    }
    assert!(processes >= files.len());
    assert!(
        ties > 0,
        "no state of the examples has two successors of one label"
    );
}

#[test]
fn corpus_scripts_emit_successors_in_canonical_order() {
    let corpus = common::corpus_dir().join("csp");
    let mut files: Vec<PathBuf> = [
        "abp.csp",
        "bankv1.csp",
        "buses.csp",
        "crossing.csp",
        "mbuff.csp",
        "peterson.csp",
        "SimpleInterruptTimeout.csp",
    ]
    .iter()
    .map(|f| corpus.join("cspmf_parser_inputs").join(f))
    .collect();
    for p in [
        "P121_tau_loop_by_hiding",
        "P131_nondet_internal_choice",
        "P132_nondet_same_initial_event",
        "P901_dining_philosophers_small",
        "P905_abp_medium",
    ] {
        files.push(
            corpus
                .join("itdojp_cspx/problems")
                .join(p)
                .join("model.cspm"),
        );
    }
    files.push(root().join("tests/csp/dining.csp"));
    let (mut processes, mut ties) = (0, 0);
    for f in &files {
        let (p, t) = compare_file(f);
        processes += p;
        ties += t;
    }
    assert!(processes >= files.len());
    assert!(
        ties > 0,
        "no state of the corpus scripts has two successors of one label"
    );
}

const EVENTS: &str = "channel a, b, c, d\nchannel up, down\nchannel x : {0..3}\n";

#[test]
fn internal_choice_and_hiding_emit_canonically() {
    // A single term (no static operator on top), internal choice between same-event prefixes.
    let t = compare_str(
        &format!(
            "{EVENTS}P = (a -> b -> P) |~| (a -> c -> P) |~| (a -> P) |~| x?i -> (b -> P |~| c -> P)"
        ),
        "P",
    );
    assert!(t > 0);
    // Hiding: many taus from one state, to targets that differ only in which component moved.
    let t = compare_str(
        &format!(
            "{EVENTS}C(i) = x.i -> up -> C(i)\n\
             SYS = (||| i : {{0..3}} @ C(i)) \\ {{| x |}}"
        ),
        "SYS",
    );
    assert!(t > 0);
    // ✓ among taus and events of a network, with duplicates (both leaves alike).
    let t = compare_str(
        &format!(
            "{EVENTS}L = SKIP [] a -> SKIP [] c -> SKIP [] (b -> SKIP |~| d -> SKIP)\n\
             SYS = (L ||| L) \\ {{a, c}}"
        ),
        "SYS",
    );
    assert!(t > 0);
    // Static operators under a prefix: a term state whose successors are networks as terms.
    let t = compare_str(
        &format!(
            "{EVENTS}Q = a -> (((((b -> SKIP) ||| (b -> c -> SKIP)) [| {{c}} |] \
                 (c -> SKIP |~| d -> SKIP)) \\ {{b}}) ; Q)"
        ),
        "Q",
    );
    assert!(t > 0);
}

#[test]
fn lazy_positions_emit_canonically() {
    // CNT has more states than are explored when the system is made: numbered as met. Its
    // internal choices give ties between lazy leaves.
    let t = compare_str(
        &format!(
            "{EVENTS}CNT(n) = if n >= 6000 then STOP else \
                 (up -> CNT(n + 1) |~| up -> CNT(n + 2)) [] down -> CNT(n + 3)\n\
             W = a -> W |~| b -> W\n\
             SYS = (CNT(0) [| {{up}} |] (up -> up -> SYS2)) ||| W\n\
             SYS2 = CNT(100) ||| W"
        ),
        "SYS",
    );
    assert!(t > 0);
    let t = compare_str(
        &format!(
            "{EVENTS}CNT(n) = if n >= 6000 then STOP else up -> CNT(n + 1) [] up -> CNT(n + 5)\n\
             SYS = (CNT(0) ||| CNT(3)) \\ {{up}}"
        ),
        "SYS",
    );
    assert!(t > 0);
}

#[test]
fn term_states_emit_canonically() {
    // A single term: the targets of the internal choices are first met from R1 and R2 in a
    // breadth-first walk, from the choices themselves in a reverse depth-first one, so the
    // two systems number them in different orders.
    let t = compare_str(
        &format!(
            "{EVENTS}Q1 = up -> STOP\nQ2 = down -> STOP\nQ3 = a -> STOP\nQ4 = b -> STOP\n\
             R1 = c -> Q2 [] d -> Q3\nR2 = c -> Q1 [] d -> Q4\n\
             X = a -> R1 [] b -> R2 [] x.0 -> (Q1 |~| Q2) [] x.1 -> (Q3 |~| Q4)"
        ),
        "X",
    );
    assert!(t > 0);
}
