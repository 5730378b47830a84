//! The assertion checks other than refinement, on an explicit [`Lts`]: deadlock freedom,
//! divergence freedom, determinism and "has trace" (FDR's `:[deadlock free [F]]`,
//! `:[divergence free]`, `:[deterministic [FD]]`, `:[has trace]: <…>`).
//!
//! Every failed check comes with a shortest counterexample found by breadth-first search with
//! parent pointers: a trace of visible events (label names, taus left out), what goes wrong
//! at its end, and the LTS state where it shows. The search visits the transitions of a state
//! in the order of their label names (tau first), so among the shortest counterexamples it
//! reports the one whose labels come first in that order, whatever the numbering of states.
//!
//! Definitions (as FDR's, on the operational semantics; 004 §2.1 for stability and divergence):
//! - the *tick* label `✓` (see [`TICK`]) leads to the terminated state Ω, which has no
//!   transitions and is not a deadlock; without a tick label no state is exempt;
//! - **deadlock free [F]**: no reachable state without outgoing transitions, other than a
//!   target of a ✓ transition (such a state is stable and refuses every event); **[FD]**
//!   additionally divergence free (a divergence is then the counterexample, whichever of the
//!   two is met first);
//! - **divergence free**: no reachable divergent state (a state from which an infinite tau
//!   path starts); the counterexample stops at the first divergent state on the path, the
//!   visible trace after which the process can diverge;
//! - **deterministic [F]**: no trace `s` and event `a` such that `s^<a>` is a trace and
//!   `(s, {a})` is a stable failure, i.e. after `s` some stable state refuses `a` while some
//!   state (stable or not) reached by `s` can perform it; **[FD]** additionally no divergence.
//!   ✓ is a signal (Roscoe): a state that can terminate can also refuse every event but ✓,
//!   so `a -> STOP [] SKIP` is not deterministic (it is `a -> STOP [> SKIP`).
//!   Checked on the normal form (tau-closed sets of states reached by each trace), breadth
//!   first, so the trace is one of least length. ✓ counts as an event like any other;
//! - **has trace**: `<e1, …, en>` (visible events, matched by name; ✓ can only come last since
//!   Ω has no transitions) is a trace; in the failures-divergences model a trace that reaches
//!   a divergence also has every extension as a trace (divergence strictness).
//!
//! The traces model makes no sense for deadlock and determinism (refusals are not observable
//! in it); these checks treat [`Model::Traces`] as [`Model::Failures`]. The revivals and
//! refusal-testing models observe deadlock (a stable state accepting nothing) as the failures
//! model does; their divergence variants (`VD`, `RD`) add divergence as `FD` does.

use std::collections::HashMap;

use serde::Serialize;

use super::Model;
use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// The name of the tick (successful termination, `✓`) label in an LTS of a CSP process.
pub const TICK: &str = "✓";

/// The tick label of `lts`, found by its name [`TICK`], if the LTS has one.
pub fn tick_label(lts: &Lts) -> Option<Label> {
    lts.label_names()
        .iter()
        .position(|name| name == TICK)
        .map(|i| i as Label)
        .filter(|&l| l != TAU)
}

/// What goes wrong at the end of a counterexample's trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PropertyViolation {
    /// After the trace the process is in a state without transitions (not Ω): it refuses every
    /// event, ✓ included.
    Deadlock,
    /// After the trace the process can diverge (perform an infinite sequence of taus).
    Divergence,
    /// After the trace the process can perform `event`, and it can also refuse it: the
    /// counterexample's state is stable, does not offer `event`, and offers exactly
    /// `accepted`, or it can terminate and refuses `event` by terminating (`accepted` is then
    /// `✓` alone). `performer` is a state reached by the trace that can perform `event`.
    Nondeterminism {
        /// The event that can be both performed and refused after the trace.
        event: String,
        /// The events the refusing state accepts, sorted by name: a stable state's initials,
        /// or `✓` alone for a state that refuses by terminating.
        accepted: Vec<String>,
        /// A state reached by the trace (taus included) with a transition labelled `event`
        /// (not in the JSON output). In the check of an explicit LTS
        /// ([`deterministic`]), its number there; in the on-the-fly search
        /// ([`super::search_determinism`]), its position among the states that the trace
        /// reaches in the order that search lists them (the initial state's tau closure, then
        /// after each event the states its steps reach, in the system's order of successors,
        /// each with its tau closure): a canonical number, the same at every thread count,
        /// where a system's own state numbers may depend on timing.
        #[serde(skip)]
        performer: u32,
    },
    /// The trace is the longest prefix of the wanted trace that the process can perform;
    /// after it no reachable state can perform `event`, the wanted trace's next event.
    NotATrace {
        /// The wanted trace's next event, which the process cannot perform after the trace.
        event: String,
    },
}

/// A witness that a property does not hold: a trace of visible events and what goes wrong at
/// its end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyCounterexample {
    /// The visible events, in order (taus left out).
    pub trace: Vec<String>,
    /// The LTS state where the violation shows (the deadlocked, divergent or refusing state;
    /// for a missing trace, a state reached by the longest performable prefix).
    pub state: u32,
    /// Length of the path found to `state`, taus included. For determinism, whose search runs
    /// on the normal form, the number of visible events of the trace.
    pub steps: usize,
    /// What goes wrong at the end of the trace.
    #[serde(flatten)]
    pub violation: PropertyViolation,
}

/// A path that performs a wanted trace (the positive outcome of [`has_trace`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TracePath {
    /// The visible events performed: the whole wanted trace, or, when `diverges`, the prefix
    /// after which the process can diverge.
    pub trace: Vec<String>,
    /// The state reached by the path.
    pub state: u32,
    /// Length of the path, taus included.
    pub steps: usize,
    /// True when the trace is one only because a prefix of it reaches a divergence (in the
    /// failures-divergences model every extension of a divergent trace is a trace).
    pub diverges: bool,
}

/// The outcome of [`has_trace`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum HasTrace {
    /// The process has the trace; a shortest path performing it.
    Performs(TracePath),
    /// The process does not have the trace; the longest prefix it can perform and the event
    /// it cannot perform next.
    Cannot(PropertyCounterexample),
}

impl HasTrace {
    /// Whether the process has the trace.
    pub fn holds(&self) -> bool {
        matches!(self, HasTrace::Performs(_))
    }
}

/// `P :[deadlock free [F]]` (or `[FD]` with `model == FailuresDivergences`): `None` when it
/// holds, else a shortest counterexample (a deadlock, or in FD a divergence).
pub fn deadlock_free(
    lts: &Lts,
    model: Model,
    tick: Option<Label>,
) -> Option<PropertyCounterexample> {
    if lts.num_states() == 0 {
        return None;
    }
    let exempt = tick_targets(lts, tick);
    let fd = model.has_divergences();
    first_bad_state(lts, |s| {
        if fd && lts.is_divergent(s) {
            Some(PropertyViolation::Divergence)
        } else if lts.is_deadlock(s) && !exempt.as_ref().is_some_and(|e| e[s as usize]) {
            Some(PropertyViolation::Deadlock)
        } else {
            None
        }
    })
}

/// `P :[divergence free]`: `None` when no reachable state diverges, else a shortest path to
/// the first divergent state on it.
pub fn divergence_free(lts: &Lts) -> Option<PropertyCounterexample> {
    if lts.num_states() == 0 {
        return None;
    }
    first_bad_state(lts, |s| {
        lts.is_divergent(s).then_some(PropertyViolation::Divergence)
    })
}

/// `P :[deterministic [F]]` (or `[FD]`): `None` when the process is deterministic, else a
/// counterexample with a shortest trace: an event the process can both perform and refuse
/// after it, or (FD) a divergence.
pub fn deterministic(lts: &Lts, model: Model) -> Option<PropertyCounterexample> {
    let tick = tick_label(lts);
    // A state that can terminate can also refuse every other event (✓ is a signal).
    let terminates_or_more = |s: u32| {
        let enabled = lts.enabled(s);
        enabled.len() > 1 && tick.is_some_and(|t| enabled.contains(&t))
    };
    if lts.num_states() == 0
        || (lts.is_deterministic() && !(0..lts.num_states()).any(terminates_or_more))
    {
        // No reachable tau, no label with two targets and no choice with ✓: each trace
        // leads to one stable state, which offers all the trace's continuations; and nothing
        // diverges.
        return None;
    }
    let fd = model.has_divergences();
    let ranks = label_ranks(lts);
    let mut index: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    // For each normal-form node but the first: (parent node, visible label).
    let mut parents: Vec<(u32, Label)> = vec![(u32::MAX, TAU)];
    let initial = lts.tau_closure(lts.initial());
    index.insert(initial.clone(), 0);
    sets.push(initial);
    let mut initials: Vec<Label> = Vec::new();
    let mut successors: Vec<u32> = Vec::new();
    let mut moves: Vec<(u32, Label, u32)> = Vec::new();
    let mut node = 0usize;
    while node < sets.len() {
        let set = &sets[node];
        if fd {
            if let Some(&s) = set.iter().find(|&&s| lts.is_divergent(s)) {
                return Some(PropertyCounterexample {
                    trace: node_trace(lts, &parents, node as u32),
                    state: s,
                    steps: node_depth(&parents, node as u32),
                    violation: PropertyViolation::Divergence,
                });
            }
        }
        initials.clear();
        for &s in set {
            initials.extend_from_slice(lts.enabled(s));
        }
        initials.sort_unstable_by_key(|&l| ranks[l as usize]);
        initials.dedup();
        // The first event (by name) that a stable state of the set refuses, or that a state
        // that can terminate refuses (all but ✓).
        let mut refused: Option<(Label, u32)> = None;
        for &s in set {
            let offered = lts.enabled(s);
            let terminates = tick.is_some_and(|t| offered.binary_search(&t).is_ok());
            if !terminates && !lts.is_stable(s) {
                continue;
            }
            let refuses = |a: &&Label| {
                if terminates {
                    Some(**a) != tick
                } else {
                    offered.binary_search(a).is_err()
                }
            };
            if let Some(&a) = initials.iter().find(refuses) {
                if refused.is_none_or(|(b, _)| ranks[a as usize] < ranks[b as usize]) {
                    refused = Some((a, s));
                }
            }
        }
        if let Some((event, state)) = refused {
            let performer = set
                .iter()
                .copied()
                .find(|&s| lts.enabled(s).binary_search(&event).is_ok())
                .expect("an event of the initials is enabled in some state of the set");
            let mut accepted: Vec<Label> = lts.enabled(state).to_vec();
            if let Some(t) = tick.filter(|t| accepted.contains(t)) {
                // It refuses by terminating: what it accepts is ✓ alone.
                accepted = vec![t];
            }
            accepted.sort_unstable_by_key(|&l| ranks[l as usize]);
            return Some(PropertyCounterexample {
                trace: node_trace(lts, &parents, node as u32),
                state,
                steps: node_depth(&parents, node as u32),
                violation: PropertyViolation::Nondeterminism {
                    event: name(lts, event),
                    accepted: accepted.iter().map(|&l| name(lts, l)).collect(),
                    performer,
                },
            });
        }
        // Successor sets, one per event, in the order of event names.
        moves.clear();
        for &s in &sets[node] {
            moves.extend(
                lts.successors(s)
                    .filter(|&(l, _)| l != TAU)
                    .map(|(l, t)| (ranks[l as usize], l, t)),
            );
        }
        moves.sort_unstable();
        moves.dedup();
        for group in moves.chunk_by(|x, y| x.0 == y.0) {
            let event = group[0].1;
            successors.clear();
            successors.extend(group.iter().map(|&(_, _, t)| t));
            let next = lts.tau_closure_of_set(&successors);
            if !index.contains_key(&next) {
                index.insert(next.clone(), sets.len() as u32);
                sets.push(next);
                parents.push((node as u32, event));
            }
        }
        node += 1;
    }
    None
}

/// `P :[has trace [M]]: <e1, …, en>`: whether the process can perform the visible events
/// `trace` (matched by label name) in order. In `FailuresDivergences`, reaching a divergent
/// state after a prefix of the trace also makes it a trace.
pub fn has_trace(lts: &Lts, trace: &[String], model: Model) -> HasTrace {
    let ids: HashMap<&str, Label> = lts
        .label_names()
        .iter()
        .enumerate()
        .skip(1)
        .map(|(l, name)| (name.as_str(), l as Label))
        .collect();
    let wanted: Vec<Option<Label>> = trace.iter().map(|e| ids.get(e.as_str()).copied()).collect();
    let n = wanted.len() as u32;
    let fd = model.has_divergences();
    if lts.num_states() == 0 {
        return HasTrace::Cannot(PropertyCounterexample {
            trace: Vec::new(),
            state: 0,
            steps: 0,
            violation: PropertyViolation::NotATrace {
                event: trace.first().cloned().unwrap_or_default(),
            },
        });
    }
    let ranks = label_ranks(lts);
    // Breadth-first over (state, number of events of the trace performed).
    let mut parents: HashMap<(u32, u32), ((u32, u32), Label)> = HashMap::new();
    let start = (lts.initial(), 0u32);
    // The first pair (in the search's order) with the most events of the trace performed.
    let mut deepest = start;
    let mut scratch: Vec<(u32, Label, u32)> = Vec::new();
    let found = canonical_bfs(
        start,
        &mut parents,
        |(s, pos), out| {
            sorted_successors(lts, &ranks, s, &mut scratch);
            for &(rank, l, t) in &scratch {
                if l == TAU {
                    out.push((rank, l, (t, pos)));
                } else if pos < n && Some(l) == wanted[pos as usize] {
                    out.push((rank, l, (t, pos + 1)));
                }
            }
        },
        |(s, pos)| {
            // Done: the whole trace, or (FD) a divergence after a prefix.
            (pos == n || (fd && lts.is_divergent(s))).then_some((0, ()))
        },
        |(s, pos)| {
            if pos > deepest.1 {
                deepest = (s, pos);
            }
        },
    );
    if let Some(((s, pos), labels, _)) = found {
        return HasTrace::Performs(TracePath {
            trace: visible_names(lts, &labels),
            state: s,
            steps: labels.len(),
            diverges: pos < n,
        });
    }
    let (s, pos) = deepest;
    let labels = path_to(&parents, deepest);
    HasTrace::Cannot(PropertyCounterexample {
        trace: visible_names(lts, &labels),
        state: s,
        steps: labels.len(),
        violation: PropertyViolation::NotATrace {
            event: trace[pos as usize].clone(),
        },
    })
}

/// Breadth-first search from the initial state for the first state `bad` reports on.
fn first_bad_state(
    lts: &Lts,
    bad: impl Fn(u32) -> Option<PropertyViolation>,
) -> Option<PropertyCounterexample> {
    let ranks = label_ranks(lts);
    let mut parents = StateParents(vec![(UNSEEN, TAU); lts.num_states() as usize]);
    let mut scratch: Vec<(u32, Label, u32)> = Vec::new();
    let found = canonical_bfs(
        lts.initial(),
        &mut parents,
        |s, out| {
            sorted_successors(lts, &ranks, s, &mut scratch);
            out.extend(scratch.iter().copied());
        },
        |s| bad(s).map(|v| (violation_priority(&v), v)),
        |_| {},
    );
    found.map(|(state, labels, (_, violation))| PropertyCounterexample {
        trace: visible_names(lts, &labels),
        state,
        steps: labels.len(),
        violation,
    })
}

/// Which violation is reported when two are found after one and the same path.
fn violation_priority(v: &PropertyViolation) -> u8 {
    match v {
        PropertyViolation::Divergence => 0,
        PropertyViolation::Deadlock => 1,
        PropertyViolation::Nondeterminism { .. } => 2,
        PropertyViolation::NotATrace { .. } => 3,
    }
}

const UNSEEN: u32 = u32::MAX;

/// The parent pointers of a breadth-first search: for each node reached but the start, the
/// node it was reached from and the label.
trait Parents<N> {
    /// Records `node`'s parent unless `node` was reached before; true if it is new.
    fn insert(&mut self, node: N, parent: N, label: Label) -> bool;
    /// `node`'s parent, `None` for the start node.
    fn parent(&self, node: N) -> Option<(N, Label)>;
}

/// Parent pointers of LTS states, one entry per state (`UNSEEN` when not reached; the start
/// state is its own parent).
struct StateParents(Vec<(u32, Label)>);

impl Parents<u32> for StateParents {
    fn insert(&mut self, node: u32, parent: u32, label: Label) -> bool {
        let entry = &mut self.0[node as usize];
        if entry.0 != UNSEEN {
            return false;
        }
        *entry = (parent, label);
        true
    }

    fn parent(&self, node: u32) -> Option<(u32, Label)> {
        let entry = self.0[node as usize];
        (entry.0 != node).then_some(entry)
    }
}

impl<N: Copy + Eq + std::hash::Hash> Parents<N> for HashMap<N, (N, Label)> {
    fn insert(&mut self, node: N, parent: N, label: Label) -> bool {
        match self.entry(node) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((parent, label));
                true
            }
        }
    }

    fn parent(&self, node: N) -> Option<(N, Label)> {
        self.get(&node).copied().filter(|&(p, _)| p != node)
    }
}

/// Level-by-level breadth-first search from `start` for a node that `bad` reports on
/// (`(priority, what)`), visiting paths in the order of their label sequences (by rank).
///
/// Each level is kept as groups of nodes whose least paths (label sequences, taus included)
/// are equal, in increasing order of those paths; the first group with a bad node gives the
/// answer (its bad node of least priority, then first found), so the path reported is the
/// least among the shortest, and does not depend on how nodes are numbered. `successors`
/// pushes `(rank, label, node)`; `visit` sees every node reached but the start, in the
/// search's order. Returns the node, its path's labels, and what `bad` said.
fn canonical_bfs<N: Copy + Eq, V>(
    start: N,
    parents: &mut impl Parents<N>,
    mut successors: impl FnMut(N, &mut Vec<(u32, Label, N)>),
    mut bad: impl FnMut(N) -> Option<(u8, V)>,
    mut visit: impl FnMut(N),
) -> Option<(N, Vec<Label>, (u8, V))> {
    parents.insert(start, start, TAU);
    // (group, node), groups increasing.
    let mut level: Vec<(u32, N)> = vec![(0, start)];
    let mut candidates: Vec<(u32, u32, Label, N, N)> = Vec::new();
    let mut out: Vec<(u32, Label, N)> = Vec::new();
    while !level.is_empty() {
        let mut i = 0;
        while i < level.len() {
            let group = level[i].0;
            let mut best: Option<(N, (u8, V))> = None;
            while i < level.len() && level[i].0 == group {
                let node = level[i].1;
                if let Some(found) = bad(node) {
                    if best.as_ref().is_none_or(|(_, b)| found.0 < b.0) {
                        best = Some((node, found));
                    }
                }
                i += 1;
            }
            if let Some((node, found)) = best {
                return Some((node, path_to(parents, node), found));
            }
        }
        candidates.clear();
        for &(group, node) in &level {
            out.clear();
            successors(node, &mut out);
            candidates.extend(out.iter().map(|&(rank, l, t)| (group, rank, l, node, t)));
        }
        // Stable: within one (group, rank) the order of discovery is kept.
        candidates.sort_by_key(|&(group, rank, ..)| (group, rank));
        let mut next: Vec<(u32, N)> = Vec::new();
        let mut key: Option<(u32, u32)> = None;
        let mut group = 0u32;
        for &(g, rank, label, from, to) in &candidates {
            if parents.insert(to, from, label) {
                if key != Some((g, rank)) {
                    if key.is_some() {
                        group += 1;
                    }
                    key = Some((g, rank));
                }
                next.push((group, to));
            }
        }
        for &(_, node) in &next {
            visit(node);
        }
        level = next;
    }
    None
}

/// The labels of the path the parent pointers give from the start to `node`.
fn path_to<N: Copy>(parents: &impl Parents<N>, node: N) -> Vec<Label> {
    let mut labels = Vec::new();
    let mut at = node;
    while let Some((from, label)) = parents.parent(at) {
        labels.push(label);
        at = from;
    }
    labels.reverse();
    labels
}

/// The outgoing transitions of `s` as `(rank, label, target)`, ordered by label name (tau
/// first), then target.
fn sorted_successors(lts: &Lts, ranks: &[u32], s: u32, out: &mut Vec<(u32, Label, u32)>) {
    out.clear();
    out.extend(lts.successors(s).map(|(l, t)| (ranks[l as usize], l, t)));
    if out.len() > 1 {
        out.sort_unstable();
    }
}

/// The position of each label in the order of label names, tau first.
fn label_ranks(lts: &Lts) -> Vec<u32> {
    let names = lts.label_names();
    let mut order: Vec<u32> = (1..names.len() as u32).collect();
    order.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]).then(a.cmp(&b)));
    let mut ranks = vec![0u32; names.len()];
    for (rank, &l) in order.iter().enumerate() {
        ranks[l as usize] = rank as u32 + 1;
    }
    ranks
}

/// For each state, whether it is the target of a transition labelled `tick`.
fn tick_targets(lts: &Lts, tick: Option<Label>) -> Option<Vec<bool>> {
    let tick = tick?;
    let mut targets = vec![false; lts.num_states() as usize];
    for (_, l, t) in lts.transitions() {
        if l == tick {
            targets[t as usize] = true;
        }
    }
    Some(targets)
}

fn name(lts: &Lts, label: Label) -> String {
    lts.label_names()[label as usize].clone()
}

fn visible_names(lts: &Lts, labels: &[Label]) -> Vec<String> {
    labels
        .iter()
        .filter(|&&l| l != TAU)
        .map(|&l| name(lts, l))
        .collect()
}

fn node_trace(lts: &Lts, parents: &[(u32, Label)], node: u32) -> Vec<String> {
    let mut labels = Vec::new();
    let mut at = node;
    while at != 0 {
        let (from, label) = parents[at as usize];
        labels.push(label);
        at = from;
    }
    labels.reverse();
    visible_names(lts, &labels)
}

fn node_depth(parents: &[(u32, Label)], node: u32) -> usize {
    let mut depth = 0;
    let mut at = node;
    while at != 0 {
        at = parents[at as usize].0;
        depth += 1;
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An LTS from `(source, label name, target)`; `tau` is the internal action.
    fn lts(num_states: u32, transitions: &[(u32, &str, u32)]) -> Lts {
        let mut names = vec!["tau".to_string()];
        let triples: Vec<(u32, Label, u32)> = transitions
            .iter()
            .map(|&(s, l, t)| {
                let id = names.iter().position(|n| n == l).unwrap_or_else(|| {
                    names.push(l.to_string());
                    names.len() - 1
                });
                (s, id as Label, t)
            })
            .collect();
        Lts::from_transitions(0, num_states, names, &triples)
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn deadlock_after_one_event_but_not_after_tick() {
        // 0 -a-> 1 (stuck); 0 -b-> 2 -✓-> 3 (Ω)
        let l = lts(4, &[(0, "a", 1), (0, "b", 2), (2, TICK, 3)]);
        let cex = deadlock_free(&l, Model::Failures, tick_label(&l)).expect("deadlocks");
        assert_eq!(cex.trace, strings(&["a"]));
        assert_eq!((cex.state, cex.steps), (1, 1));
        assert_eq!(cex.violation, PropertyViolation::Deadlock);
        // Without the stuck branch only Ω has no transitions: deadlock free.
        let l = lts(4, &[(0, "b", 2), (2, TICK, 3)]);
        assert_eq!(deadlock_free(&l, Model::Failures, tick_label(&l)), None);
        // Ω counts as a deadlock when no tick label is given.
        assert!(deadlock_free(&l, Model::Failures, None).is_some());
    }

    #[test]
    fn divergence_is_no_deadlock_in_f_but_fails_fd() {
        // 0 -b-> 1 -tau-> 1
        let l = lts(2, &[(0, "b", 1), (1, "tau", 1)]);
        assert_eq!(deadlock_free(&l, Model::Failures, None), None);
        let cex = deadlock_free(&l, Model::FailuresDivergences, None).expect("diverges");
        assert_eq!(cex.violation, PropertyViolation::Divergence);
        assert_eq!(cex.trace, strings(&["b"]));
        let cex = divergence_free(&l).expect("diverges");
        assert_eq!((cex.trace, cex.state), (strings(&["b"]), 1));
    }

    #[test]
    fn shortest_counterexample_in_name_order() {
        // Two deadlocks at depth 1 (after z and after a) and one at depth 2.
        let l = lts(5, &[(0, "z", 1), (0, "m", 2), (2, "a", 3), (0, "a", 4)]);
        let cex = deadlock_free(&l, Model::Failures, None).expect("deadlocks");
        assert_eq!(cex.trace, strings(&["a"]));
        assert_eq!(cex.state, 4);
    }

    #[test]
    fn internal_choice_between_prefixes_is_nondeterministic() {
        // (a -> STOP) |~| (a -> b -> STOP)
        let l = lts(
            5,
            &[
                (0, "tau", 1),
                (0, "tau", 2),
                (1, "a", 3),
                (2, "a", 4),
                (4, "b", 3),
            ],
        );
        let cex = deterministic(&l, Model::FailuresDivergences).expect("nondeterministic");
        assert_eq!(cex.trace, strings(&["a"]));
        assert_eq!(cex.state, 3);
        assert_eq!(
            cex.violation,
            PropertyViolation::Nondeterminism {
                event: "b".into(),
                accepted: vec![],
                performer: 4
            }
        );
        // a -> STOP [] a -> STOP after a tau is deterministic: both branches agree.
        let l = lts(4, &[(0, "tau", 1), (1, "a", 2), (1, "a", 3)]);
        assert_eq!(deterministic(&l, Model::FailuresDivergences), None);
    }

    #[test]
    fn divergence_makes_nondeterminism_only_in_fd() {
        // 0 -a-> 0, 0 -tau-> 1 -tau-> 0 (divergent, but every stable state offers a).
        let l = lts(2, &[(0, "a", 0), (0, "tau", 1), (1, "tau", 0)]);
        assert_eq!(deterministic(&l, Model::Failures), None);
        let cex = deterministic(&l, Model::FailuresDivergences).expect("diverges");
        assert_eq!(cex.violation, PropertyViolation::Divergence);
        assert!(cex.trace.is_empty());
    }

    #[test]
    fn has_trace_with_taus_and_divergence() {
        // 0 -tau-> 1 -a-> 2 -b-> 3; 0 -c-> 4 -tau-> 4
        let l = lts(
            5,
            &[
                (0, "tau", 1),
                (1, "a", 2),
                (2, "b", 3),
                (0, "c", 4),
                (4, "tau", 4),
            ],
        );
        match has_trace(&l, &strings(&["a", "b"]), Model::Traces) {
            HasTrace::Performs(p) => {
                assert_eq!((p.state, p.steps, p.diverges), (3, 3, false));
                assert_eq!(p.trace, strings(&["a", "b"]));
            }
            other => panic!("{other:?}"),
        }
        match has_trace(&l, &strings(&["a", "c"]), Model::Traces) {
            HasTrace::Cannot(c) => {
                assert_eq!(c.trace, strings(&["a"]));
                assert_eq!(
                    c.violation,
                    PropertyViolation::NotATrace { event: "c".into() }
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(!has_trace(&l, &strings(&["c", "a"]), Model::Failures).holds());
        match has_trace(&l, &strings(&["c", "a"]), Model::FailuresDivergences) {
            HasTrace::Performs(p) => assert!(p.diverges && p.trace == strings(&["c"])),
            other => panic!("{other:?}"),
        }
        assert!(has_trace(&l, &[], Model::Traces).holds());
        assert!(!has_trace(&l, &strings(&["unknown"]), Model::Traces).holds());
    }
}
