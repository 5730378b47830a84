//! Equivalence checking of two LTSs, with a distinguishing trace when they differ.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::refinement::{element_label, explained_signature, partition_with_history};
use super::{determinise::determinise, Equivalence};
use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// Which of the two compared systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The first system.
    First,
    /// The second system.
    Second,
}

impl Side {
    /// The other system.
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }
}

/// Why two systems are not equivalent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The labels performed by both systems before they part (taus included for strong
    /// bisimulation and trace equivalence, left out for the weak equivalences).
    pub trace: Vec<String>,
    /// The system that can do `event` after `trace`.
    pub side: Side,
    /// The event that `side` can do after `trace` and the other system cannot (for the
    /// bisimulations: not from the state it reached, after inert taus for the branching
    /// ones); `None` when `side` diverges there and the other cannot.
    pub event: Option<String>,
}

/// The result of [`compare`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Whether the two systems are equivalent.
    pub equivalent: bool,
    /// When not: a distinguishing trace.
    pub difference: Option<Difference>,
}

/// The disjoint union of `first` and `second` (labels merged by name; tau is tau): states of
/// `first` keep their numbers, those of `second` are shifted by `first.num_states()`.
pub fn disjoint_union(first: &Lts, second: &Lts) -> Lts {
    let mut names: Vec<String> = first.label_names().to_vec();
    let mut index: FxHashMap<String, Label> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i as Label))
        .collect();
    let remap: Vec<Label> = second
        .label_names()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i == TAU as usize {
                return TAU;
            }
            *index.entry(n.clone()).or_insert_with(|| {
                names.push(n.clone());
                (names.len() - 1) as Label
            })
        })
        .collect();
    let shift = first.num_states();
    let mut transitions: Vec<(u32, Label, u32)> = first.transitions().collect();
    transitions.extend(
        second
            .transitions()
            .map(|(s, a, t)| (s + shift, remap[a as usize], t + shift)),
    );
    Lts::from_transitions(
        first.initial(),
        shift + second.num_states(),
        names,
        &transitions,
    )
}

/// Are `first` and `second` equivalent modulo `equivalence`? When not, the result explains
/// why: for the trace equivalences, a shortest trace of one that the other lacks; for the
/// bisimulations, a trace after which one system can do an event that the other, in the
/// state it reached by the same trace, cannot (inert taus aside for the branching ones).
pub fn compare(first: &Lts, second: &Lts, equivalence: Equivalence) -> Comparison {
    let union = disjoint_union(first, second);
    let a = first.initial();
    let b = first.num_states() + second.initial();
    let difference = if equivalence.is_bisimulation() {
        bisimulation_difference(&union, a, b, equivalence)
    } else {
        trace_difference(first, second, equivalence == Equivalence::WeakTrace)
    };
    Comparison {
        equivalent: difference.is_none(),
        difference,
    }
}

/// A pair of states of the two subset constructions.
type Pair = (u32, u32);

/// A shortest trace one system has and the other lacks, by a breadth-first walk over pairs
/// of states of the two subset constructions.
fn trace_difference(first: &Lts, second: &Lts, weak: bool) -> Option<Difference> {
    let d1 = determinise(first, weak);
    let d2 = determinise(second, weak);
    let mut parent: FxHashMap<Pair, Option<(Pair, String)>> = FxHashMap::default();
    parent.insert((0, 0), None);
    let mut queue = VecDeque::from([(0u32, 0u32)]);
    while let Some((p, q)) = queue.pop_front() {
        let mut left: Vec<(&str, u32)> = d1
            .successors(p)
            .map(|(l, t)| (d1.label_names()[l as usize].as_str(), t))
            .collect();
        let mut right: Vec<(&str, u32)> = d2
            .successors(q)
            .map(|(l, t)| (d2.label_names()[l as usize].as_str(), t))
            .collect();
        left.sort_unstable();
        right.sort_unstable();
        let missing = |from: &[(&str, u32)], to: &[(&str, u32)]| {
            from.iter()
                .find(|(n, _)| to.binary_search_by(|(m, _)| m.cmp(n)).is_err())
                .map(|(n, _)| n.to_string())
        };
        let found = match (missing(&left, &right), missing(&right, &left)) {
            (Some(e), _) => Some((Side::First, e)),
            (None, Some(e)) => Some((Side::Second, e)),
            (None, None) => None,
        };
        if let Some((side, event)) = found {
            let mut trace = Vec::new();
            let mut at = (p, q);
            while let Some(Some((before, label))) = parent.get(&at) {
                trace.push(label.clone());
                at = *before;
            }
            trace.reverse();
            return Some(Difference {
                trace,
                side,
                event: Some(event),
            });
        }
        for &(name, t) in &left {
            let u = right[right.binary_search_by(|(m, _)| m.cmp(&name)).ok()?].1;
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry((t, u)) {
                e.insert(Some(((p, q), name.to_string())));
                queue.push_back((t, u));
            }
        }
    }
    None
}

/// For non-bisimilar states `a` and `b` of `union`: follow the partition history down. At a
/// pair of nodes split in round `k`, an element of one's round-`k - 1` signature is missing
/// from the other's; the first side does its step, the other (if it can do that label at all
/// after inert taus) an arbitrary step with the same label, which lands in a different
/// round-`k - 1` class: the round strictly decreases, so the walk ends where one side can do
/// an event (or diverge) and the other cannot.
fn bisimulation_difference(
    union: &Lts,
    a: u32,
    b: u32,
    equivalence: Equivalence,
) -> Option<Difference> {
    let p = partition_with_history(union, equivalence);
    let node = |s: u32| p.node_of_state[s as usize];
    let (mut x, mut y) = (node(a), node(b));
    if p.block[x as usize] == p.block[y as usize] {
        return None;
    }
    let names = union.label_names();
    let mut trace: Vec<String> = Vec::new();
    // `x` is the first system's node on the walk, `y` the second's.
    loop {
        let k = split_round(&p, x, y);
        let before = &p.history[k - 1];
        let sx = explained_signature(&p, before, x);
        let sy = explained_signature(&p, before, y);
        let lacks = |from: &[(u64, Option<(Label, u32)>)], to: &[(u64, Option<(Label, u32)>)]| {
            from.iter()
                .find(|(e, _)| to.binary_search_by_key(e, |(f, _)| *f).is_err())
                .copied()
        };
        let (side, edge, other) = match (lacks(&sx, &sy), lacks(&sy, &sx)) {
            (Some((_, edge)), _) => (Side::First, edge, &sy),
            (None, Some((_, edge))) => (Side::Second, edge, &sx),
            (None, None) => unreachable!("nodes split in a round have different signatures"),
        };
        let Some((label, target)) = edge else {
            // `side` diverges (inside its class); the other cannot.
            return Some(Difference {
                trace,
                side,
                event: None,
            });
        };
        // The other side's (non-inert) steps with the same label, after inert taus.
        let matched = other
            .iter()
            .find(|(e, _)| element_label(*e) == Some(label))
            .and_then(|(_, edge)| edge.map(|(_, t)| t));
        let Some(matched) = matched else {
            return Some(Difference {
                trace,
                side,
                event: Some(names[label as usize].clone()),
            });
        };
        if !p.branching || label != TAU {
            trace.push(names[label as usize].clone());
        }
        (x, y) = match side {
            Side::First => (target, matched),
            Side::Second => (matched, target),
        };
    }
}

/// The first round after which nodes `x` and `y` are in different blocks.
fn split_round(p: &super::refinement::Partition, x: u32, y: u32) -> usize {
    (1..p.history.len())
        .find(|&k| p.history[k][x as usize] != p.history[k][y as usize])
        .unwrap_or(p.history.len().max(1))
}
