//! The walk of `chase` through networks (`chase_net.rs`) against its first version, kept here
//! as the oracle: a walk that fires every state as a term and follows the first tau of the
//! whole sorted list of its transitions. On Roscoe's chase network, a lazy intruder, chosen
//! corner cases and random networks, the two give the same states, in the same order, with
//! the same transitions.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::labels::TICK;
use super::semantics::Semantics;
use super::terms::{term, BuildPath, Encoding, Section};
use crate::csp::error::CspError;
use crate::csp::eval::{load_str, Script};
use crate::csp::value::Proc;
use crate::term::{global, TermId, TermRef};
use crate::ts::{Label, TAU};

/// The transitions of `chase(P)` (term `t`) as the first version computed them: the whole
/// transitions of every state of the walk, whose first tau is followed.
pub(super) fn fire_chase_by_terms<'s>(
    sem: &Semantics,
    sec: &'s Section<'_>,
    t: TermRef<'s>,
    depth: u32,
    out: &mut Vec<(Label, TermId)>,
) -> Result<(), CspError> {
    let mut passed: HashSet<TermId> = HashSet::new();
    let mut state = t.arg(0);
    let moves = loop {
        let moves = sem.transitions(sec, state, depth)?;
        let Some(&(_, next)) = moves.iter().find(|&&(l, _)| l == TAU) else {
            break moves;
        };
        passed.insert(state.id());
        if passed.contains(&next) {
            out.push((TAU, t.id()));
            return Ok(());
        }
        state = term(sec, next);
    };
    for &(l, next) in moves.iter() {
        if l == TICK {
            out.push((TICK, next));
        } else {
            out.push((l, sec.create(t.symbol(), &[term(sec, next)]).0.id()));
        }
    }
    Ok(())
}

/// The states of process `name` reached in breadth-first order (at most `limit` expanded),
/// as processes, with each expanded state's transitions (label, target's number); and the
/// number of terms whose transitions the semantics memoised. `by_terms` walks `chase` as
/// the first version did. An error is returned as its message.
type Explored = (Vec<Option<Proc>>, Vec<Vec<(Label, usize)>>, usize);

fn explore(
    script: &Arc<Script>,
    name: &str,
    by_terms: bool,
    limit: usize,
) -> Result<Explored, String> {
    let mut sem = Semantics::new(Encoding::new(script.clone()).map_err(|e| e.to_string())?);
    sem.chase_by_terms = by_terms;
    let tt = global().register_thread();
    let sec = tt.shared_section();
    let p = script.process(name, &[]).map_err(|e| e.to_string())?;
    let root = sem
        .enc
        .build(&sec, &p, &mut BuildPath::default())
        .map_err(|e| e.to_string())?;
    let mut number: HashMap<TermId, usize> = HashMap::from([(root.id(), 0)]);
    let mut states = vec![root.id()];
    let mut queue = VecDeque::from([root.id()]);
    let mut moves = Vec::new();
    while let Some(s) = queue.pop_front() {
        if moves.len() == limit {
            break;
        }
        let fired = sem
            .transitions(&sec, term(&sec, s), 0)
            .map_err(|e| e.to_string())?;
        let mut row = Vec::new();
        for &(l, next) in fired.iter() {
            let n = *number.entry(next).or_insert_with(|| {
                states.push(next);
                queue.push_back(next);
                states.len() - 1
            });
            row.push((l, n));
        }
        moves.push(row);
    }
    let procs = states
        .iter()
        .map(|&s| sem.enc.to_proc(term(&sec, s)))
        .collect();
    Ok((procs, moves, sem.memo_len()))
}

/// Explores `name` both ways and checks they agree; returns the numbers of memoised terms
/// (by networks, by terms).
fn agree(script: &Arc<Script>, name: &str, limit: usize) -> (usize, usize) {
    let new = explore(script, name, false, limit);
    let old = explore(script, name, true, limit);
    match (new, old) {
        (Ok((new_states, new_moves, new_memo)), Ok((old_states, old_moves, old_memo))) => {
            assert_eq!(
                new_moves, old_moves,
                "{name}: transitions differ; states {new_states:?} / {old_states:?}"
            );
            assert_eq!(new_states, old_states, "{name}: states differ");
            (new_memo, old_memo)
        }
        (Err(new), Err(old)) => {
            assert_eq!(new, old, "{name}: errors differ");
            (0, 0)
        }
        (new, old) => panic!(
            "{name}: one walk fails, the other not: {:?} / {:?}",
            new.err(),
            old.err()
        ),
    }
}

fn load(text: &str) -> Arc<Script> {
    Arc::new(load_str("chase.csp", text, Path::new(".")).unwrap())
}

/// Roscoe's chase network (a grid of nodes passing a token, all inner channels hidden).
fn roscoe(n: usize) -> String {
    format!(
        "N = {n}\n\
         channel h : {{0..N-1}}.{{0..N}}\n\
         channel v : {{0..N}}.{{0..N-1}}\n\
         Node(i,j) = h.i.j -> v.i.j -> h.i.j+1 -> v.i+1.j -> Node(i,j)\n\
         Alpha(i,j) = {{h.i.j, v.i.j, h.i.j+1, v.i+1.j}}\n\
         Internal = {{h.i.j, v.j.i | i <- {{0..N-1}}, j <- {{1..N-1}}}}\n\
         Network = (|| i : {{0..N-1}}, j : {{0..N-1}} @ [Alpha(i,j)] Node(i,j))\n\
         CNet = chase(Network \\ Internal)\n"
    )
}

/// On Roscoe's network, the walk by networks keeps only the stable states' terms: the
/// semantics memoises far fewer terms than the walk by terms, for the same state space.
#[test]
fn roscoe_network_same_space_fewer_terms() {
    for n in [2, 3] {
        let script = load(&roscoe(n));
        let (new_memo, old_memo) = agree(&script, "CNet", 100_000);
        assert!(
            new_memo * 2 < old_memo,
            "N = {n}: {new_memo} terms memoised by networks, {old_memo} by terms"
        );
    }
}

/// Chosen cases: a lazy intruder; tau cycles inside a network and through a state it cannot
/// tell (a leaf that terminates, a leaf that becomes a parallel); hidings and renamings
/// nested in a network and merging with a leaf's own hiding; links; a chase inside a chase
/// and inside a network; networks deeper than a walk compiles.
#[test]
fn chosen_cases_agree() {
    let mut text = String::from(
        "channel a, b, c, e\nchannel d : {0..2}\nchannel learn, say : {0..6}\n\
         channel infer : {(k, {k-1, k-2}) | k <- {2..6}}\n",
    );
    let cases: &[(&str, &str)] = &[
        (
            "Intruder",
            "Ign(f) = learn.f -> Kn(f) [] ([] (g, X) : {(g, X) | (g, X) <- {(k, {k-1, k-2}) | k <- {2..6}}, g == f} @ infer.(g, X) -> Kn(f))\n\
             Kn(f) = say.f -> Kn(f) [] learn.f -> Kn(f) [] ([] (g, X) : {(g, X) | (g, X) <- {(k, {k-1, k-2}) | k <- {2..6}}, member(f, X)} @ infer.(g, X) -> Kn(f))\n\
             AlphaF(f) = union({learn.f, say.f}, {infer.(g, X) | (g, X) <- {(k, {k-1, k-2}) | k <- {2..6}}, g == f or member(f, X)})\n\
             Intruder = chase((|| f : {0..6} @ [AlphaF(f)] Ign(f)) \\ {| infer |})",
        ),
        ("Cycle", "Cy = a -> b -> Cy\nCycle = chase((Cy ||| (c -> STOP)) \\ {a, b})"),
        (
            "TwoCycles",
            "Cy2 = a -> Cy2 [] b -> STOP\nTwoCycles = chase((Cy2 [| {b} |] (b -> c -> Cy2)) \\ {a})",
        ),
        (
            "Ticks",
            "Ticks = chase(((a -> SKIP) ||| (b -> SKIP) ||| (c -> e -> SKIP)) \\ {a, b}) ; c -> STOP",
        ),
        (
            "TickCycle",
            "TC = a -> (SKIP ||| (b -> SKIP)) ; TC\nTickCycle = chase((TC [| {c} |] (c -> STOP)) \\ {a, b})",
        ),
        (
            "Grows",
            "G = a -> ((b -> STOP) ||| (c -> G))\nGrows = chase((G ||| (e -> STOP)) \\ {a, b})",
        ),
        (
            "HideMerge",
            "HM = a -> (HM \\ {b}) [] b -> c -> STOP\nHideMerge = chase(((HM \\ {c}) ||| (a -> e -> STOP)) \\ {a})",
        ),
        (
            "Nested",
            "Nested = chase(((((a -> b -> STOP) [| {b} |] (b -> c -> STOP)) \\ {b}) [[c <- e, c <- a]] ||| (d?x -> a -> STOP)) \\ {a, d.1})",
        ),
        (
            "Linked",
            "L1 = a -> b -> L1\nL2 = c -> e -> L2\nLinked = chase((L1 [b <-> c] L2) \\ {a})",
        ),
        (
            "Inner",
            "Inner = chase((chase((a -> b -> STOP) \\ {a}) ||| (c -> a -> STOP)) \\ {b}) [| {c} |] (c -> STOP)",
        ),
        (
            "InNetwork",
            "InNetwork = (chase((a -> b -> STOP) \\ {a}) [| {b} |] (b -> c -> STOP)) \\ {c}",
        ),
        (
            "Choices",
            "Choices = chase(((a -> STOP [] b -> c -> STOP) |~| (d!1 -> STOP) [| {b} |] (b -> STOP [> a -> STOP)) \\ {b, d.1})",
        ),
        (
            "Deep",
            "Chain(0) = a -> b -> c -> STOP\nChain(n) = (a -> STOP) ||| Chain(n-1)\nDeep = chase(Chain(70) \\ {a})",
        ),
        (
            "Found",
            "F0 = (a -> (STOP [] SKIP)) |~| ((b -> (a -> F1)) |~| (c -> (d.0 -> F1)))\n\
             F1 = a -> (d.1 -> (b -> F0))\n\
             Found = chase((chase(((F0) \\ {d.0, b}) ||| (chase(F0)))) \\ {c, b})",
        ),
        ("Plain", "Plain = chase(a -> (b -> STOP [> c -> STOP))"),
        ("Div", "Div = chase(DIV ||| (a -> STOP))"),
    ];
    for (_, definitions) in cases {
        text.push_str(definitions);
        text.push('\n');
    }
    let script = load(&text);
    for (name, _) in cases {
        agree(&script, name, 2_000);
    }
}

fn event() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("a"), Just("b"), Just("c"), Just("d.0"), Just("d.1")]
}

/// Processes without recursion (they may end, and may become networks).
fn finite() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("STOP".to_string()),
        Just("SKIP".to_string()),
        event().prop_map(|e| format!("{e} -> SKIP")),
        Just("d?x -> c -> SKIP".to_string()),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let two = || (inner.clone(), inner.clone());
        prop_oneof![
            (event(), inner.clone()).prop_map(|(e, p)| format!("{e} -> ({p})")),
            two().prop_map(|(p, q)| format!("({p}) [] ({q})")),
            two().prop_map(|(p, q)| format!("({p}) |~| ({q})")),
            two().prop_map(|(p, q)| format!("({p}) ; ({q})")),
            two().prop_map(|(p, q)| format!("({p}) ||| ({q})")),
            (inner.clone(), event()).prop_map(|(p, e)| format!("({p}) \\ {{{e}}}")),
            two().prop_map(|(p, q)| format!("({p}) /\\ ({q})")),
            two().prop_map(|(p, q)| format!("({p}) [> ({q})")),
        ]
    })
}

/// Sequential processes that may call `P0` and `P1` after an event (finitely many states).
fn sequential() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        finite(),
        (event(), 0..2usize).prop_map(|(e, n)| format!("{e} -> P{n}")),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let two = || (inner.clone(), inner.clone());
        prop_oneof![
            (event(), inner.clone()).prop_map(|(e, p)| format!("{e} -> ({p})")),
            two().prop_map(|(p, q)| format!("({p}) [] ({q})")),
            two().prop_map(|(p, q)| format!("({p}) |~| ({q})")),
        ]
    })
}

/// Networks over `P0`, `P1` and finite processes, with chases inside.
fn network() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![Just("P0".to_string()), Just("P1".to_string()), finite()];
    leaf.prop_recursive(4, 16, 2, |inner| {
        let two = || (inner.clone(), inner.clone());
        prop_oneof![
            two().prop_map(|(p, q)| format!("({p}) ||| ({q})")),
            (two(), event()).prop_map(|((p, q), e)| format!("({p}) [| {{{e}}} |] ({q})")),
            (two(), event(), event(), event()).prop_map(|((p, q), e, f, g)| format!(
                "({p}) [{{{e}, {f}}} || {{{f}, {g}}}] ({q})"
            )),
            (inner.clone(), event(), event())
                .prop_map(|(p, e, f)| format!("({p}) \\ {{{e}, {f}}}")),
            (inner.clone(), event(), event())
                .prop_map(|(p, e, f)| format!("({p}) [[{e} <- {f}, {e} <- c]]")),
            (two(), event(), event())
                .prop_map(|((p, q), e, f)| format!("({p}) [{e} <-> {f}] ({q})")),
            inner.clone().prop_map(|p| format!("chase({p})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random hidden networks: the walk by networks and the walk by terms agree.
    #[test]
    fn random_networks_agree(
        p0 in sequential(),
        p1 in sequential(),
        net in network(),
        e in event(),
        f in event(),
    ) {
        let text = format!(
            "channel a, b, c\nchannel d : {{0..1}}\nP0 = {p0}\nP1 = {p1}\n\
             C = chase(({net}) \\ {{{e}, {f}}})\n"
        );
        // Scripts the front end rejects are not this test's concern.
        if let Ok(script) = load_str("random.csp", &text, Path::new(".")) {
            agree(&Arc::new(script), "C", 300);
        }
    }
}
