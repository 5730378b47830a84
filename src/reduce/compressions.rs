//! FDR's compression functions (`normal`, `sbisim`, `wbisim`, `dbisim`, `diamond`,
//! `explicate`, `tau_loop_factor`, `model_compress`, `chase`) as transformations of explicit
//! LTSs, and the semantic models each is valid in.
//!
//! Each compression maps an LTS to one with the same behaviour in the models it is valid for,
//! numbered breadth first from its initial state in the order of its input's transitions, so
//! that the same input gives the same output in every run.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet, VecDeque};

use super::Equivalence;
use crate::lts::Lts;
use crate::refine::normal::{NormalForm, EMPTY_SET};
use crate::refine::Model;
use crate::ts::{Label, TAU};

/// One of FDR's compression functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compression {
    /// `explicate(P)`: `P` tabulated as an explicit LTS; nothing merged.
    Explicate,
    /// `sbisim(P)`: the quotient by strong bisimulation.
    Sbisim,
    /// `wbisim(P)`: the quotient by a weak bisimulation that respects divergence (weft uses
    /// divergence-preserving branching bisimulation, which is finer: it merges no states FDR
    /// keeps apart and is valid in every model).
    Wbisim,
    /// `dbisim(P)`: the quotient by divergence-respecting weak bisimulation (as `wbisim`).
    Dbisim,
    /// `diamond(P)`: tau-elimination (weft: the divergence-preserving branching quotient,
    /// which removes every inert tau).
    Diamond,
    /// `normal(P)`: the normal form (the subset construction over tau-closures), with each
    /// node's minimal acceptances and divergence kept as stable states and tau loops.
    Normal,
    /// `model_compress(P)`: the best general-purpose compression (weft: as `wbisim`).
    ModelCompress,
    /// `tau_loop_factor(P)`: every strongly connected component of tau transitions made one
    /// state (with a tau loop, so that its divergence stays).
    TauLoopFactor,
    /// `chase(P)`: wherever `P` can perform a tau it is made to perform one (the first), so
    /// that its unstable states disappear. As in FDR this is sound only for processes whose
    /// taus are confluent: weft, like FDR, does not check that.
    Chase,
}

/// Names of the compressions in CSPm (`normalise` and `normalize` are FDR2's for `normal`;
/// FDR4's lazy variants `lazynorm` and `lazyenumerate` compute the same processes as `normal`
/// and `explicate`, which weft computes whole either way).
pub const NAMES: [(&str, Compression); 14] = [
    ("explicate", Compression::Explicate),
    ("sbisim", Compression::Sbisim),
    ("wbisim", Compression::Wbisim),
    ("dbisim", Compression::Dbisim),
    ("diamond", Compression::Diamond),
    ("normal", Compression::Normal),
    ("normalise", Compression::Normal),
    ("normalize", Compression::Normal),
    ("model_compress", Compression::ModelCompress),
    ("tau_loop_factor", Compression::TauLoopFactor),
    ("chase", Compression::Chase),
    ("chase_nocache", Compression::Chase),
    ("lazynorm", Compression::Normal),
    ("lazyenumerate", Compression::Explicate),
];

impl Compression {
    /// The compression called `name` in CSPm.
    pub fn from_name(name: &str) -> Option<Compression> {
        NAMES.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
    }

    /// Its CSPm name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|&&(_, c)| c == self)
            .map(|&(n, _)| n)
            .unwrap_or("explicate")
    }

    /// Whether the compression preserves the semantics of `model`. The normal form keeps
    /// minimal acceptances only: enough for traces, stable failures and failures-divergences,
    /// not for the revivals and refusal-testing models, which observe what a stable state
    /// refuses before an event it then performs.
    pub fn valid_in(self, model: Model) -> bool {
        match self {
            Compression::Normal => !model.observes_revivals() && !model.observes_refusal_traces(),
            _ => true,
        }
    }

    /// The models the compression is valid in, by letters, for messages.
    pub fn valid_models(self) -> String {
        Model::ALL
            .iter()
            .filter(|&&m| self.valid_in(m))
            .map(|m| m.letters())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The compression of `lts`. Labels keep their numbers; the label named ✓ is termination
    /// (a state that can perform it is not stable).
    pub fn apply(self, lts: &Lts) -> Lts {
        match self {
            Compression::Explicate => reachable(lts),
            Compression::TauLoopFactor => tau_loop_factor(lts),
            Compression::Normal => normal(lts),
            Compression::Chase => chase(lts),
            Compression::Sbisim => reachable(&super::reduce(lts, Equivalence::Strong).quotient),
            Compression::Wbisim
            | Compression::Dbisim
            | Compression::Diamond
            | Compression::ModelCompress => {
                reachable(&super::reduce(lts, Equivalence::DivergencePreservingBranching).quotient)
            }
        }
    }
}

/// Builds an LTS from transitions over states numbered from `initial`'s side: the states
/// reachable from `initial`, renumbered breadth first in the order of `transitions` (grouped
/// by source), without repeated transitions.
fn renumbered(
    initial: u32,
    num_states: usize,
    names: &[String],
    transitions: &[(u32, Label, u32)],
) -> Lts {
    let mut out_of: Vec<Vec<(Label, u32)>> = vec![Vec::new(); num_states];
    for &(s, l, t) in transitions {
        out_of[s as usize].push((l, t));
    }
    let mut number: Vec<u32> = vec![u32::MAX; num_states];
    let mut order: Vec<u32> = vec![initial];
    number[initial as usize] = 0;
    let mut queue: VecDeque<u32> = VecDeque::from([initial]);
    while let Some(s) = queue.pop_front() {
        for &(_, t) in &out_of[s as usize] {
            if number[t as usize] == u32::MAX {
                number[t as usize] = order.len() as u32;
                order.push(t);
                queue.push_back(t);
            }
        }
    }
    let mut triples: Vec<(u32, Label, u32)> = Vec::new();
    for &s in &order {
        let start = triples.len();
        for &(l, t) in &out_of[s as usize] {
            triples.push((number[s as usize], l, number[t as usize]));
        }
        // Sorted by (label, target) within a state, repeats removed.
        triples[start..].sort_unstable_by_key(|&(_, l, t)| (l, t));
        let mut kept = start;
        for i in start..triples.len() {
            if i == start || triples[i] != triples[kept - 1] {
                triples[kept] = triples[i];
                kept += 1;
            }
        }
        triples.truncate(kept);
    }
    Lts::from_transitions(0, order.len() as u32, names.to_vec(), &triples)
}

/// The reachable part of `lts`, renumbered.
fn reachable(lts: &Lts) -> Lts {
    let transitions: Vec<(u32, Label, u32)> = lts.transitions().collect();
    renumbered(
        lts.initial(),
        lts.num_states() as usize,
        lts.label_names(),
        &transitions,
    )
}

/// Each tau-SCC made one state; a component with a tau cycle keeps a tau loop.
fn tau_loop_factor(lts: &Lts) -> Lts {
    let n = lts.num_states() as usize;
    let scc: Vec<u32> = (0..n as u32).map(|s| lts.tau_scc(s)).collect();
    let blocks = scc.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut transitions = Vec::new();
    let mut cyclic = vec![false; blocks];
    for (s, l, t) in lts.transitions() {
        let (b, c) = (scc[s as usize], scc[t as usize]);
        if l == TAU && b == c {
            cyclic[b as usize] = true;
        } else {
            transitions.push((b, l, c));
        }
    }
    for (b, &looped) in cyclic.iter().enumerate() {
        if looped {
            transitions.push((b as u32, TAU, b as u32));
        }
    }
    transitions.sort_by_key(|&(b, _, _)| b);
    renumbered(
        scc[lts.initial() as usize],
        blocks,
        lts.label_names(),
        &transitions,
    )
}

/// The normal form of `lts` as an LTS. A node whose minimal acceptances are `A1, ..., Ak`
/// can perform each of its events (to the node after it) and has a tau to one stable state
/// per `Ai`, which performs exactly the events of `Ai`; a node with a single acceptance
/// equal to all it can do is itself that stable state. A divergent node has a tau loop. So
/// the result has the node's traces, the refusals of its stable members and its divergence.
fn normal(lts: &Lts) -> Lts {
    let event_of_label: Vec<u32> = (0..lts.label_names().len() as u32).collect();
    let mut nf = NormalForm::new(lts, event_of_label);
    let initial = nf.initial_set();
    let mut state_of: HashMap<u32, u32> = HashMap::from([(initial, 0)]);
    let mut sets: Vec<u32> = vec![initial];
    let mut queue: VecDeque<u32> = VecDeque::from([initial]);
    // Transitions from the node states; stable acceptance states are numbered after them.
    let mut node_moves: Vec<Vec<(Label, u32)>> = Vec::new();
    let mut acceptance_moves: Vec<Vec<(Label, u32)>> = Vec::new();
    let mut acceptance_of: Vec<Vec<usize>> = Vec::new();
    while let Some(set) = queue.pop_front() {
        nf.ensure_successors(set);
        nf.ensure_acceptances(set);
        let mut moves: Vec<(Label, u32)> = Vec::new();
        let successors: Vec<(u32, u32)> = nf.successors(set).to_vec();
        let mut target = |next: u32, sets: &mut Vec<u32>, queue: &mut VecDeque<u32>| {
            *state_of.entry(next).or_insert_with(|| {
                sets.push(next);
                queue.push_back(next);
                sets.len() as u32 - 1
            })
        };
        for &(event, next) in &successors {
            if next != EMPTY_SET {
                moves.push((event, target(next, &mut sets, &mut queue)));
            }
        }
        let acceptances: Vec<Vec<u32>> = nf.acceptances(set).map(<[u32]>::to_vec).collect();
        let divergent = nf.is_divergent(set);
        let initials: Vec<u32> = moves.iter().map(|&(e, _)| e).collect();
        let mut stable_of_node: Vec<usize> = Vec::new();
        let stable_itself = !divergent && acceptances.len() == 1 && acceptances[0] == initials;
        if !stable_itself {
            for acceptance in &acceptances {
                let accepted: Vec<(Label, u32)> = moves
                    .iter()
                    .filter(|(e, _)| acceptance.binary_search(e).is_ok())
                    .copied()
                    .collect();
                stable_of_node.push(acceptance_moves.len());
                acceptance_moves.push(accepted);
            }
        }
        if divergent {
            moves.push((TAU, u32::MAX));
        }
        node_moves.push(moves);
        acceptance_of.push(stable_of_node);
    }
    let nodes = node_moves.len() as u32;
    let mut transitions: Vec<(u32, Label, u32)> = Vec::new();
    for (node, moves) in node_moves.iter().enumerate() {
        let node = node as u32;
        for &(l, t) in moves {
            transitions.push((node, l, if t == u32::MAX { node } else { t }));
        }
        for &a in &acceptance_of[node as usize] {
            transitions.push((node, TAU, nodes + a as u32));
        }
    }
    for (a, moves) in acceptance_moves.iter().enumerate() {
        for &(l, t) in moves {
            transitions.push((nodes + a as u32, l, t));
        }
    }
    transitions.sort_by_key(|&(s, _, _)| s);
    let total = nodes as usize + acceptance_moves.len();
    renumbered(0, total, lts.label_names(), &transitions)
}

/// Each state with a tau replaced by where following its first tau leads (until a state
/// without one; a tau cycle followed this way becomes a state with a tau loop).
fn chase(lts: &Lts) -> Lts {
    let n = lts.num_states() as usize;
    const UNKNOWN: u32 = u32::MAX;
    const DIVERGES: u32 = u32::MAX - 1;
    let mut chased: Vec<u32> = vec![UNKNOWN; n];
    let first_tau = |s: u32| lts.successors(s).find(|&(l, _)| l == TAU).map(|(_, t)| t);
    for start in 0..n as u32 {
        if chased[start as usize] != UNKNOWN {
            continue;
        }
        let mut path: Vec<u32> = Vec::new();
        let mut on_path: HashSet<u32> = HashSet::new();
        let mut s = start;
        let end = loop {
            if chased[s as usize] != UNKNOWN {
                break chased[s as usize];
            }
            match first_tau(s) {
                None => break s,
                Some(t) => {
                    if !on_path.insert(s) {
                        break DIVERGES;
                    }
                    path.push(s);
                    s = t;
                }
            }
        };
        for p in path {
            chased[p as usize] = end;
        }
        if chased[start as usize] == UNKNOWN {
            chased[start as usize] = end;
        }
    }
    // The divergent state, if needed, is state `n`.
    let map = |s: u32| {
        if chased[s as usize] == DIVERGES {
            n as u32
        } else {
            chased[s as usize]
        }
    };
    let mut transitions: Vec<(u32, Label, u32)> = Vec::new();
    for s in 0..n as u32 {
        if chased[s as usize] != s {
            continue;
        }
        for (l, t) in lts.successors(s) {
            transitions.push((s, l, map(t)));
        }
    }
    transitions.push((n as u32, TAU, n as u32));
    renumbered(map(lts.initial()), n + 1, lts.label_names(), &transitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["tau", "✓", "a", "b"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn moves(lts: &Lts) -> Vec<(u32, Label, u32)> {
        lts.transitions().collect()
    }

    #[test]
    fn tau_loop_factor_keeps_divergence_and_merges_cycles() {
        // 0 -tau-> 1 -tau-> 0, 1 -a-> 2, 2 -tau-> 2
        let lts =
            Lts::from_transitions(0, 3, names(), &[(0, 0, 1), (1, 0, 0), (1, 2, 2), (2, 0, 2)]);
        let out = tau_loop_factor(&lts);
        assert_eq!(out.num_states(), 2);
        assert_eq!(moves(&out), vec![(0, TAU, 0), (0, 2, 1), (1, TAU, 1)]);
    }

    #[test]
    fn normal_form_of_an_internal_choice_has_two_stable_states() {
        // a -> STOP |~| b -> STOP: 0 -tau-> 1, 0 -tau-> 2, 1 -a-> 3, 2 -b-> 3
        let lts =
            Lts::from_transitions(0, 4, names(), &[(0, 0, 1), (0, 0, 2), (1, 2, 3), (2, 3, 3)]);
        let out = normal(&lts);
        // The node {0,1,2} does a and b to the node {3}, and taus to {a} and {b}.
        assert_eq!(out.num_states(), 4);
        let m = moves(&out);
        assert!(m.contains(&(0, 2, 1)) && m.contains(&(0, 3, 1)), "{m:?}");
        assert_eq!(m.iter().filter(|&&(s, l, _)| s == 0 && l == TAU).count(), 2);
        // a deterministic process is its own normal form
        let det = Lts::from_transitions(0, 2, names(), &[(0, 2, 1), (1, 3, 0)]);
        assert_eq!(moves(&normal(&det)), vec![(0, 2, 1), (1, 3, 0)]);
    }

    #[test]
    fn chase_follows_the_first_tau() {
        // 0 -tau-> 1, 0 -tau-> 2, 1 -a-> 0, 2 -b-> 2
        let lts =
            Lts::from_transitions(0, 3, names(), &[(0, 0, 1), (0, 0, 2), (1, 2, 0), (2, 3, 2)]);
        let out = chase(&lts);
        assert_eq!(moves(&out), vec![(0, 2, 0)]);
        // a tau cycle becomes a divergence
        let div = Lts::from_transitions(0, 2, names(), &[(0, 0, 1), (1, 0, 0)]);
        assert_eq!(moves(&chase(&div)), vec![(0, TAU, 0)]);
    }
}
