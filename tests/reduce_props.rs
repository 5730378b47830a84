//! `weft::reduce` against an independent, obviously correct oracle on random LTSs.
//!
//! The oracle is the naive fixpoint of signature refinement on the LTS as it is (no tau-SCC
//! contraction, no ordering): repeat splitting every block by the set of `(label, block)` of
//! each state's transitions — for branching bisimulation, of the transitions from the states
//! reachable through inert taus (taus inside the block), excluding the inert ones, and for the
//! divergence-preserving variant with a mark when an inert tau cycle is reachable — until no
//! block splits. Traces are enumerated up to a bound, from the definition.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use weft::lts::Lts;
use weft::reduce::refinement::{partition_by, BranchingAlgorithm, Partition};
use weft::reduce::{compare, compare::disjoint_union, compare::Side, reduce, Equivalence};
use weft::refine::{check, CheckOptions, Model};
use weft::threads::Threads;

const TAU: u32 = 0;

/// A state's old block and signature.
type Keyed = (u32, BTreeSet<(u32, u32)>);

/// The naive oracle's partition (block ids per state) of `lts` modulo a bisimulation.
fn oracle_partition(lts: &Lts, equivalence: Equivalence) -> Vec<u32> {
    let n = lts.num_states() as usize;
    let branching = equivalence != Equivalence::Strong;
    let dp = equivalence == Equivalence::DivergencePreservingBranching;
    let mut block = vec![0u32; n];
    loop {
        let inert = |s: usize, t: usize, a: u32, block: &[u32]| {
            branching && a == TAU && block[s] == block[t]
        };
        let mut sigs: Vec<Keyed> = Vec::new();
        for s in 0..n {
            // States reachable from s by inert taus (s included).
            let mut reach = vec![s];
            let mut i = 0;
            while i < reach.len() {
                let u = reach[i];
                i += 1;
                for (a, t) in lts.successors(u as u32) {
                    if inert(u, t as usize, a, &block) && !reach.contains(&(t as usize)) {
                        reach.push(t as usize);
                    }
                }
            }
            let mut sig = BTreeSet::new();
            for &u in &reach {
                for (a, t) in lts.successors(u as u32) {
                    if !inert(u, t as usize, a, &block) {
                        sig.insert((a, block[t as usize]));
                    }
                }
            }
            if dp && reach.iter().any(|&u| on_inert_cycle(lts, u, &block)) {
                sig.insert((u32::MAX, 0));
            }
            sigs.push((block[s], sig));
        }
        let mut ids: BTreeMap<&Keyed, u32> = BTreeMap::new();
        let next: Vec<u32> = sigs
            .iter()
            .map(|k| {
                let fresh = ids.len() as u32;
                *ids.entry(k).or_insert(fresh)
            })
            .collect();
        let before = block.iter().collect::<BTreeSet<_>>().len();
        if ids.len() == before {
            return next;
        }
        block = next;
    }
}

/// Whether `u` lies on a cycle of taus inside its block.
fn on_inert_cycle(lts: &Lts, u: usize, block: &[u32]) -> bool {
    let mut seen = vec![false; lts.num_states() as usize];
    let mut stack: Vec<usize> = lts.tau_successors(u as u32).map(|t| t as usize).collect();
    while let Some(v) = stack.pop() {
        if block[v] != block[u] || seen[v] {
            continue;
        }
        if v == u {
            return true;
        }
        seen[v] = true;
        stack.extend(lts.tau_successors(v as u32).map(|t| t as usize));
    }
    false
}

/// The traces of `lts` up to length `depth` (label names; taus left out when `weak`).
fn traces(lts: &Lts, weak: bool, depth: usize) -> BTreeSet<Vec<String>> {
    let closure = |set: BTreeSet<u32>| -> BTreeSet<u32> {
        let mut out = set.clone();
        let mut stack: Vec<u32> = set.into_iter().collect();
        while let Some(s) = stack.pop() {
            for t in lts.tau_successors(s) {
                if weak && out.insert(t) {
                    stack.push(t);
                }
            }
        }
        out
    };
    let mut all = BTreeSet::new();
    let mut frontier = vec![(
        Vec::<String>::new(),
        closure(BTreeSet::from([lts.initial()])),
    )];
    for _ in 0..=depth {
        let mut next = Vec::new();
        for (trace, set) in frontier {
            let mut by_label: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
            for &s in &set {
                for (a, t) in lts.successors(s) {
                    if !(weak && a == TAU) {
                        by_label.entry(a).or_default().insert(t);
                    }
                }
            }
            if trace.len() < depth {
                for (a, targets) in by_label {
                    let mut longer = trace.clone();
                    longer.push(lts.label_names()[a as usize].clone());
                    next.push((longer, closure(targets)));
                }
            }
            all.insert(trace);
        }
        frontier = next;
    }
    all
}

fn names(k: usize) -> Vec<String> {
    std::iter::once("tau".to_string())
        .chain((1..k).map(|i| format!("{}", (b'a' + i as u8 - 1) as char)))
        .collect()
}

fn lts_strategy() -> impl Strategy<Value = Lts> {
    (1u32..7, 2usize..4).prop_flat_map(|(n, k)| {
        let transition = (0..n, 0..k as u32, 0..n);
        (
            Just(n),
            Just(k),
            prop::collection::vec(transition, 0..(3 * n as usize + 2)),
        )
            .prop_map(|(n, k, ts)| Lts::from_transitions(0, n, names(k), &ts))
    })
}

/// Random LTSs with many taus: tau chains down the state numbers (inert or not, as the
/// visible labels decide), random taus (some up, making tau cycles: divergences), self-loops.
fn tau_heavy_strategy() -> impl Strategy<Value = Lts> {
    (2u32..16, 2usize..5).prop_flat_map(|(n, k)| {
        let label = prop_oneof![3 => Just(TAU), 2 => 1..k as u32];
        let transition = (0..n, label, 0..n);
        let chain = prop::collection::vec(any::<bool>(), n as usize);
        (
            Just(n),
            Just(k),
            chain,
            prop::collection::vec(transition, 0..(3 * n as usize)),
        )
            .prop_map(|(n, k, chain, mut ts)| {
                for (s, &link) in chain.iter().enumerate().skip(1) {
                    if link {
                        ts.push((s as u32, TAU, s as u32 - 1));
                    }
                }
                Lts::from_transitions(0, n, names(k), &ts)
            })
    })
}

/// Random LTSs shaped to make many new bottom states: visible chains at the bottom (states
/// `0..k`, `i -a-> i - 1`, plus random visible edges among them: they split apart one
/// constellation step at a time) under tau chains and tau trees (states `k..n`, each with one
/// to three taus down to lower states, and a few visible edges): each split at the bottom
/// cuts inert taus above it, so blocks get new bottom states again and again.
fn new_bottom_strategy() -> impl Strategy<Value = Lts> {
    (2u32..10, 2u32..16, 2usize..4).prop_flat_map(|(k, t, labels)| {
        let n = k + t;
        let bottom_edge = (0..k, 1..labels as u32, 0..k);
        let taus = prop::collection::vec(prop::collection::vec(0u32..1000, 1..4), t as usize);
        let visible = prop::collection::vec((k..n, 1..labels as u32, 0..n), 0..3);
        (
            Just(k),
            Just(n),
            Just(labels),
            prop::collection::vec(bottom_edge, 0..(2 * k as usize)),
            taus,
            visible,
        )
            .prop_map(|(k, n, labels, mut ts, taus, visible)| {
                for i in 1..k {
                    ts.push((i, 1, i - 1));
                }
                for (j, targets) in taus.iter().enumerate() {
                    let s = k + j as u32;
                    for &r in targets {
                        ts.push((s, TAU, r % s));
                    }
                }
                ts.extend(visible);
                Lts::from_transitions(n - 1, n, names(labels), &ts)
            })
    })
}

/// New bottom states that each lack a different label (branch10's `lacking` shape of
/// `scripts/reduce-diff.py`): bottom states `b_0..b_k` (`b_i -a-> b_{i-1}`, separated one
/// constellation step at a time) and gadgets `x -tau-> y`, where `y` has every label `1..labels`
/// and `x` all but one (into random `b`s), both an `h` edge; some `x`s tau-chained. When a
/// `y` leaves its block, its `x` is a new bottom state lacking a label the block has: the
/// block splits under each slice its new bottom states lack.
fn lacking_strategy() -> impl Strategy<Value = Lts> {
    (2u32..8, 1u32..8, 3usize..6).prop_flat_map(|(k, g, labels)| {
        let gadget = (
            1..labels as u32,
            prop::collection::vec(0..k, labels),
            prop::collection::vec(0..k, labels),
            any::<bool>(),
        );
        (
            Just(k),
            Just(labels),
            prop::collection::vec(gadget, g as usize),
        )
            .prop_map(|(k, labels, gadgets)| {
                let mut ts = Vec::new();
                for i in 1..k {
                    ts.push((i, 1, i - 1));
                }
                let h = labels as u32;
                for (j, (miss, x_targets, y_targets, chained)) in gadgets.iter().enumerate() {
                    let (x, y) = (k + 2 * j as u32, k + 2 * j as u32 + 1);
                    ts.push((x, TAU, y));
                    for label in 1..labels as u32 {
                        if label != *miss {
                            ts.push((x, label, x_targets[label as usize]));
                        }
                        ts.push((y, label, y_targets[label as usize]));
                    }
                    ts.push((x, h, x_targets[0]));
                    ts.push((y, h, y_targets[0]));
                    if *chained && j > 0 {
                        ts.push((x, TAU, x - 2));
                    }
                }
                let n = k + 2 * gadgets.len() as u32;
                Lts::from_transitions(n - 1, n, names(labels + 1), &ts)
            })
    })
}

/// The cascade of new bottom states made big: bottom states `b_0..=b_k` (`b_i -a-> b_{i-1}`,
/// states `0..=k`) and above them `t_1..=t_k` (states `k + i`), `t_i -tau-> b_i` and
/// `t_i -tau-> b_{i-1}`; with `chained`, also `t_i -tau-> t_{i-1}` (a tau chain over the
/// bottom). Its classes, by hand: the `b_i` differ (their `a`-chains have different lengths);
/// `t_i` is none of them (a `b_j` matching `t_i -tau-> b_i` and `t_i -tau-> b_{i-1}` would be
/// bisimilar to both), and `t_i`, `t_j` differ (`t_i` reaches `b_i` by taus, `t_j` with
/// `j < i` does not): 2k + 1 classes.
fn bottom_cascade(k: u32, chained: bool) -> Lts {
    let mut ts = Vec::new();
    for i in 1..=k {
        ts.push((i, 1, i - 1));
        ts.push((k + i, TAU, i));
        ts.push((k + i, TAU, i - 1));
        if chained && i > 1 {
            ts.push((k + i, TAU, k + i - 1));
        }
    }
    Lts::from_transitions(2 * k, 2 * k + 1, names(2), &ts)
}

#[test]
fn bottom_cascades_give_the_classes_worked_out_by_hand_with_every_algorithm() {
    for chained in [false, true] {
        for k in [1, 2, 5, 40, 300] {
            let lts = bottom_cascade(k, chained);
            for eq in [
                Equivalence::Branching,
                Equivalence::DivergencePreservingBranching,
            ] {
                for algorithm in [
                    BranchingAlgorithm::Auto,
                    BranchingAlgorithm::Signatures,
                    BranchingAlgorithm::Constellations,
                    BranchingAlgorithm::SignaturesThenConstellations(1),
                ] {
                    let p = partition_by(&lts, eq, Threads::ONE, algorithm);
                    assert_eq!(
                        p.num_blocks,
                        2 * k + 1,
                        "k {k} chained {chained} {eq} {algorithm:?}"
                    );
                }
                if k <= 5 {
                    let oracle = oracle_partition(&lts, eq);
                    let fast = reduce(&lts, eq);
                    assert!(
                        same_partition(&fast.state_map, &oracle),
                        "k {k} chained {chained} {eq}"
                    );
                }
            }
        }
    }
}

/// The block of every state under `partition` (states it does not cover: blocks of their
/// own).
fn blocks_of_states(lts: &Lts, partition: &Partition) -> Vec<u32> {
    (0..lts.num_states())
        .map(|s| {
            partition
                .block_of_state(s)
                .unwrap_or(partition.num_blocks + s)
        })
        .collect()
}

/// Whether two partitions are the same equivalence.
fn same_partition(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len()
        && (0..a.len()).all(|i| (0..a.len()).all(|j| (a[i] == a[j]) == (b[i] == b[j])))
}

const BISIMULATIONS: [Equivalence; 3] = [
    Equivalence::Strong,
    Equivalence::Branching,
    Equivalence::DivergencePreservingBranching,
];

/// The refinement models `equivalence` preserves (both ways).
fn preserved_models(equivalence: Equivalence) -> &'static [Model] {
    match equivalence {
        Equivalence::Strong | Equivalence::DivergencePreservingBranching => {
            &[Model::Traces, Model::Failures, Model::FailuresDivergences]
        }
        Equivalence::Branching | Equivalence::WeakTrace | Equivalence::Trace => &[Model::Traces],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn partitions_match_the_oracle(lts in lts_strategy()) {
        for eq in BISIMULATIONS {
            let fast = reduce(&lts, eq);
            let oracle = oracle_partition(&lts, eq);
            prop_assert!(same_partition(&fast.state_map, &oracle), "{eq}: {:?} vs oracle {:?}", fast.state_map, oracle);
            let blocks = oracle.iter().collect::<BTreeSet<_>>().len() as u32;
            prop_assert_eq!(fast.quotient.num_states(), blocks);
        }
    }

    /// The constellation algorithm (Groote–Jansen–Keiren–Wijs) gives the signature
    /// algorithm's partition and the naive fixpoint's, on small random LTSs and on tau-heavy
    /// ones (tau chains, inert taus, tau cycles).
    #[test]
    fn constellation_partitions_match_signatures_and_the_oracle(
        lts in prop_oneof![lts_strategy(), tau_heavy_strategy(), new_bottom_strategy()]
    ) {
        for eq in [Equivalence::Branching, Equivalence::DivergencePreservingBranching] {
            let by_constellations = partition_by(&lts, eq, Threads::ONE, BranchingAlgorithm::Constellations);
            let by_signatures = partition_by(&lts, eq, Threads::ONE, BranchingAlgorithm::Signatures);
            let new = blocks_of_states(&lts, &by_constellations);
            let old = blocks_of_states(&lts, &by_signatures);
            let oracle = oracle_partition(&lts, eq);
            prop_assert!(same_partition(&new, &oracle), "{eq}: {:?} vs oracle {:?}", new, oracle);
            prop_assert!(same_partition(&new, &old), "{eq}: {:?} vs signatures {:?}", new, old);
            prop_assert_eq!(by_constellations.num_blocks, by_signatures.num_blocks);
            // Handed over after some signature rounds.
            for rounds in 0..3 {
                let algorithm = BranchingAlgorithm::SignaturesThenConstellations(rounds);
                let both = partition_by(&lts, eq, Threads::ONE, algorithm);
                let both = blocks_of_states(&lts, &both);
                prop_assert!(same_partition(&both, &oracle), "{eq} after {rounds} rounds: {:?} vs oracle {:?}", both, oracle);
            }
        }
    }

    /// Many new bottom states (see [`new_bottom_strategy`], [`lacking_strategy`]): every
    /// algorithm gives the naive fixpoint's partition.
    #[test]
    fn new_bottom_state_cascades_match_the_oracle(
        lts in prop_oneof![new_bottom_strategy(), lacking_strategy()]
    ) {
        for eq in [Equivalence::Branching, Equivalence::DivergencePreservingBranching] {
            let oracle = oracle_partition(&lts, eq);
            for algorithm in [
                BranchingAlgorithm::Auto,
                BranchingAlgorithm::Constellations,
                BranchingAlgorithm::SignaturesThenConstellations(0),
                BranchingAlgorithm::SignaturesThenConstellations(1),
            ] {
                let p = partition_by(&lts, eq, Threads::ONE, algorithm);
                let blocks = blocks_of_states(&lts, &p);
                prop_assert!(same_partition(&blocks, &oracle), "{eq} {algorithm:?}: {:?} vs oracle {:?}", blocks, oracle);
            }
        }
    }

    #[test]
    fn trace_quotients_are_minimal_and_keep_the_traces(lts in lts_strategy()) {
        for (eq, weak) in [(Equivalence::Trace, false), (Equivalence::WeakTrace, true)] {
            let q = reduce(&lts, eq).quotient;
            prop_assert_eq!(traces(&q, weak, 5), traces(&lts, weak, 5), "{}", eq);
            let deterministic = (0..q.num_states()).all(|s| {
                let labels: Vec<u32> = q.successors(s).map(|(a, _)| a).collect();
                labels.iter().collect::<BTreeSet<_>>().len() == labels.len()
            });
            prop_assert!(deterministic, "{} quotient not deterministic", eq);
            prop_assert!(q.transitions().all(|(_, a, _)| !weak || a != TAU));
            // Minimal: no two states of the deterministic quotient are bisimilar.
            let blocks = oracle_partition(&q, Equivalence::Strong);
            prop_assert_eq!(blocks.iter().collect::<BTreeSet<_>>().len() as u32, q.num_states());
        }
    }

    #[test]
    fn quotients_are_equivalent_to_the_original(lts in lts_strategy()) {
        for eq in Equivalence::ALL {
            let q = reduce(&lts, eq).quotient;
            prop_assert!(compare(&lts, &q, eq).equivalent, "{eq}");
            for &model in preserved_models(eq) {
                let opts = CheckOptions { model, ..CheckOptions::default() };
                prop_assert!(check(&lts, &q, &opts).unwrap().holds(), "{eq} {model:?}: original [= quotient");
                prop_assert!(check(&q, &lts, &opts).unwrap().holds(), "{eq} {model:?}: quotient [= original");
            }
        }
    }

    #[test]
    fn compare_agrees_with_the_oracle(a in lts_strategy(), b in lts_strategy()) {
        let union = disjoint_union(&a, &b);
        let (ia, ib) = (a.initial() as usize, (a.num_states() + b.initial()) as usize);
        for eq in BISIMULATIONS {
            let oracle = oracle_partition(&union, eq);
            let result = compare(&a, &b, eq);
            prop_assert_eq!(result.equivalent, oracle[ia] == oracle[ib], "{}", eq);
        }
        for (eq, weak) in [(Equivalence::Trace, false), (Equivalence::WeakTrace, true)] {
            let (ta, tb) = (traces(&a, weak, 6), traces(&b, weak, 6));
            let result = compare(&a, &b, eq);
            // Random systems of at most 6 states differ within 6 steps if at all... the
            // bound only matters for equivalent verdicts, checked up to it.
            if result.equivalent {
                prop_assert_eq!(&ta, &tb, "{}", eq);
            } else {
                let d = result.difference.unwrap();
                let mut longer = d.trace.clone();
                longer.push(d.event.clone().unwrap());
                let (has, lacks) = match d.side { Side::First => (&a, &b), Side::Second => (&b, &a) };
                let depth = longer.len();
                prop_assert!(traces(has, weak, depth).contains(&longer), "{eq}: {longer:?}");
                prop_assert!(!traces(lacks, weak, depth).contains(&longer), "{eq}: {longer:?}");
                prop_assert!(traces(lacks, weak, depth).contains(&d.trace), "{eq}: {:?}", d.trace);
            }
        }
    }
}
