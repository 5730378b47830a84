//! Derived facts of an [`Lts`], computed on first use and cached.
//!
//! The caches are `OnceLock` fields of the `Lts` (an `Lts` is immutable, so they never go
//! stale, and concurrent first uses compute a fact once). Each fact is computed by one pass:
//!
//! - tau-SCCs and divergence: an iterative Tarjan over the tau-edges (no recursion: millions of
//!   states), which also yields the SCCs in reverse topological order;
//! - stability (no outgoing tau) and enabled sets (sorted, deduplicated visible labels): one
//!   scan of the adjacency;
//! - reachability from the initial state: breadth-first search;
//! - determinism: one scan of the reachable states;
//! - the table of all tau-closures, built per tau-SCC in reverse topological order, only while
//!   it fits a memory budget (see [`Lts::tau_closures`]).
//!
//! Definitions used (as in the seeds, 004 §2.1):
//! - a state is *stable* iff it has no outgoing tau transition;
//! - a state is *divergent* iff an infinite tau path starts in it, i.e. it can reach by tau
//!   steps (zero or more) a tau-SCC with a cycle (two or more states, or a tau self-loop);
//! - a state is a *deadlock* iff it has no outgoing transition at all;
//! - the LTS is *deterministic* iff no state reachable from the initial state has an outgoing
//!   tau transition or two outgoing transitions with the same label and different targets.
//!   This is the structural definition (FDR's notion for an explicit LTS without taus); it
//!   implies determinism in the failures-divergences sense, while an LTS whose taus are all
//!   unobservable may be semantically deterministic and still count as not deterministic here.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::Serialize;

use super::Lts;
use crate::ts::{Label, TAU};

/// A fixed-size set of `u32` indices.
#[derive(Clone, Debug)]
pub(crate) struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    pub(crate) fn new(len: usize) -> Bitset {
        Bitset {
            words: vec![0; len.div_ceil(64)],
        }
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub(crate) fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// The caches of derived facts; part of every [`Lts`].
#[derive(Clone, Default)]
pub(crate) struct FactsCache {
    tau: OnceLock<TauFacts>,
    unstable: OnceLock<Bitset>,
    enabled: OnceLock<EnabledSets>,
    reachable: OnceLock<Bitset>,
    deterministic: OnceLock<bool>,
    closures: OnceLock<Option<TauClosures>>,
}

/// Tau-SCCs and divergence of the covered states.
#[derive(Clone)]
struct TauFacts {
    /// The tau-SCC of each covered state; SCCs are numbered in the order Tarjan completes
    /// them, so every tau-edge leads to an SCC with a number no larger than its source's.
    scc: Vec<u32>,
    num_sccs: u32,
    divergent: Bitset,
}

/// Sorted, deduplicated visible labels per covered state, in compressed form.
#[derive(Clone)]
struct EnabledSets {
    offsets: Vec<u64>,
    labels: Vec<Label>,
}

/// The tau-closures of all states, stored once per tau-SCC (states of one SCC share it).
#[derive(Clone, Debug)]
pub struct TauClosures {
    scc: Vec<u32>,
    offsets: Vec<u64>,
    members: Vec<u32>,
}

impl TauClosures {
    /// The tau-closure of `state`: every state reachable by zero or more tau steps, sorted.
    /// Panics if `state` is out of range.
    pub fn get(&self, state: u32) -> &[u32] {
        let c = self.scc[state as usize] as usize;
        &self.members[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }

    /// Total number of stored entries (a measure of the table's memory, 4 bytes each).
    pub fn stored_entries(&self) -> u64 {
        self.members.len() as u64
    }
}

/// Summary figures of an LTS, as `weft info` prints them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LtsSummary {
    /// The initial state (its number in the input file).
    pub initial: u32,
    /// Number of states (as declared).
    pub states: u32,
    /// States reachable from the initial state.
    pub reachable_states: u32,
    /// Number of transitions.
    pub transitions: u64,
    /// Number of distinct visible labels occurring in transitions.
    pub visible_labels: u32,
    /// Whether some transition is labelled tau.
    pub tau_occurs: bool,
    /// Number of tau transitions.
    pub tau_transitions: u64,
    /// States without outgoing transitions.
    pub deadlock_states: u64,
    /// Deadlock states reachable from the initial state.
    pub reachable_deadlock_states: u64,
    /// States from which an infinite tau path starts.
    pub divergent_states: u64,
    /// Divergent states reachable from the initial state.
    pub reachable_divergent_states: u64,
    /// Number of tau-SCCs containing a cycle (a divergence's loop).
    pub tau_cycles: u64,
    /// Whether the LTS is deterministic (see the module documentation for the definition).
    pub deterministic: bool,
}

impl Lts {
    fn tau_facts(&self) -> &TauFacts {
        self.facts.tau.get_or_init(|| compute_tau_facts(self))
    }

    /// Whether `state` is stable: it has no outgoing tau transition.
    pub fn is_stable(&self, state: u32) -> bool {
        assert!(state < self.num_states, "state {state} out of range");
        if state >= self.covered() {
            return true;
        }
        let unstable = self.facts.unstable.get_or_init(|| {
            let mut set = Bitset::new(self.covered() as usize);
            for s in 0..self.covered() {
                if self.outgoing(s).0.contains(&TAU) {
                    set.set(s as usize);
                }
            }
            set
        });
        !unstable.get(state as usize)
    }

    /// Whether `state` is divergent: an infinite path of tau transitions starts in it.
    pub fn is_divergent(&self, state: u32) -> bool {
        assert!(state < self.num_states, "state {state} out of range");
        state < self.covered() && self.tau_facts().divergent.get(state as usize)
    }

    /// Whether `state` is a deadlock: it has no outgoing transition at all.
    pub fn is_deadlock(&self, state: u32) -> bool {
        self.out_degree(state) == 0
    }

    /// The tau-SCC id of `state`. Ids are dense; a tau transition from `s` to `t` implies
    /// `tau_scc(t) <= tau_scc(s)` (ids follow a reverse topological order), with equality iff
    /// `s` and `t` lie on a common tau cycle (or `s == t`).
    pub fn tau_scc(&self, state: u32) -> u32 {
        assert!(state < self.num_states, "state {state} out of range");
        let facts = self.tau_facts();
        if state < self.covered() {
            facts.scc[state as usize]
        } else {
            facts.num_sccs + (state - self.covered())
        }
    }

    /// Number of tau-SCCs (every state is in exactly one).
    pub fn num_tau_sccs(&self) -> u32 {
        self.tau_facts().num_sccs + (self.num_states - self.covered())
    }

    /// The sorted, deduplicated visible labels of the transitions leaving `state`.
    pub fn enabled(&self, state: u32) -> &[Label] {
        assert!(state < self.num_states, "state {state} out of range");
        if state >= self.covered() {
            return &[];
        }
        let sets = self
            .facts
            .enabled
            .get_or_init(|| compute_enabled_sets(self));
        let s = state as usize;
        &sets.labels[sets.offsets[s] as usize..sets.offsets[s + 1] as usize]
    }

    /// Whether `state` is reachable from the initial state.
    pub fn is_reachable(&self, state: u32) -> bool {
        assert!(state < self.num_states, "state {state} out of range");
        if state >= self.covered() {
            return state == self.initial;
        }
        self.reachable_set().get(state as usize)
    }

    /// Number of states reachable from the initial state (the initial state included).
    pub fn num_reachable(&self) -> u32 {
        if self.num_states == 0 {
            return 0;
        }
        self.reachable_set().count_ones() as u32
    }

    fn reachable_set(&self) -> &Bitset {
        self.facts.reachable.get_or_init(|| compute_reachable(self))
    }

    /// Whether the LTS is deterministic: no reachable state has a tau transition or two
    /// transitions with one label and different targets (see the module documentation).
    pub fn is_deterministic(&self) -> bool {
        *self.facts.deterministic.get_or_init(|| {
            let reachable = self.reachable_set();
            let mut scratch: Vec<(Label, u32)> = Vec::new();
            (0..self.covered()).all(|s| {
                !reachable.get(s as usize) || state_is_deterministic(self, s, &mut scratch)
            })
        })
    }

    /// Number of transitions labelled tau.
    pub fn num_tau_transitions(&self) -> u64 {
        self.labels.iter().filter(|&&l| l == TAU).count() as u64
    }

    /// The tau-closure of `state`: every state reachable by zero or more tau steps, sorted.
    ///
    /// Uses the cached table of [`Lts::tau_closures`] when it fits its budget, else a fresh
    /// depth-first search.
    pub fn tau_closure(&self, state: u32) -> Vec<u32> {
        assert!(state < self.num_states, "state {state} out of range");
        if let Some(table) = self.tau_closures() {
            return table.get(state).to_vec();
        }
        self.tau_closure_of_set(&[state])
    }

    /// The union of the tau-closures of `states`, sorted and deduplicated.
    pub fn tau_closure_of_set(&self, states: &[u32]) -> Vec<u32> {
        if let Some(table) = self.tau_closures() {
            let mut out: Vec<u32> = Vec::new();
            for &s in states {
                out.extend_from_slice(table.get(s));
            }
            out.sort_unstable();
            out.dedup();
            return out;
        }
        let mut seen: HashSet<u32> = HashSet::with_capacity(states.len() * 2);
        let mut stack: Vec<u32> = Vec::new();
        for &s in states {
            assert!(s < self.num_states, "state {s} out of range");
            if seen.insert(s) {
                stack.push(s);
            }
        }
        while let Some(s) = stack.pop() {
            for t in self.tau_successors(s) {
                if seen.insert(t) {
                    stack.push(t);
                }
            }
        }
        let mut out: Vec<u32> = seen.into_iter().collect();
        out.sort_unstable();
        out
    }

    /// The table of all tau-closures, computed once, or `None` if it would exceed its
    /// memory budget of `2 * (states + transitions) + 2^20` entries (long tau chains make the
    /// closures quadratic in size) or if some states have no adjacency entry (a header
    /// declaring far more states than the transitions use).
    pub fn tau_closures(&self) -> Option<&TauClosures> {
        self.facts
            .closures
            .get_or_init(|| {
                if self.covered() != self.num_states {
                    return None;
                }
                let budget = 2 * (u64::from(self.num_states) + self.num_transitions()) + (1 << 20);
                compute_tau_closures(self, self.tau_facts(), budget)
            })
            .as_ref()
    }

    /// The summary figures `weft info` prints.
    pub fn summary(&self) -> LtsSummary {
        let mut visible = Bitset::new(self.label_names.len());
        let mut tau_transitions = 0u64;
        for &l in &self.labels {
            if l == TAU {
                tau_transitions += 1;
            } else {
                visible.set(l as usize);
            }
        }
        let mut deadlock_states = u64::from(self.num_states - self.covered());
        let mut reachable_deadlock_states = 0u64;
        let mut divergent_states = 0u64;
        let mut reachable_divergent_states = 0u64;
        for s in 0..self.covered() {
            let reachable = self.is_reachable(s);
            if self.is_deadlock(s) {
                deadlock_states += 1;
                reachable_deadlock_states += u64::from(reachable);
            }
            if self.is_divergent(s) {
                divergent_states += 1;
                reachable_divergent_states += u64::from(reachable);
            }
        }
        if self.initial >= self.covered() && self.num_states > 0 {
            reachable_deadlock_states += 1;
        }
        LtsSummary {
            initial: self.state_number(self.initial),
            states: self.num_states,
            reachable_states: self.num_reachable(),
            transitions: self.num_transitions(),
            visible_labels: visible.count_ones() as u32,
            tau_occurs: tau_transitions > 0,
            tau_transitions,
            deadlock_states,
            reachable_deadlock_states,
            divergent_states,
            reachable_divergent_states,
            tau_cycles: count_tau_cycles(self),
            deterministic: self.is_deterministic(),
        }
    }
}

/// Whether `state` has no tau transition and no two transitions with one label and different
/// targets.
fn state_is_deterministic(lts: &Lts, state: u32, scratch: &mut Vec<(Label, u32)>) -> bool {
    let (labels, targets) = lts.outgoing(state);
    if labels.contains(&TAU) {
        return false;
    }
    if labels.len() <= 8 {
        for i in 0..labels.len() {
            for j in i + 1..labels.len() {
                if labels[i] == labels[j] && targets[i] != targets[j] {
                    return false;
                }
            }
        }
        return true;
    }
    scratch.clear();
    scratch.extend(labels.iter().copied().zip(targets.iter().copied()));
    scratch.sort_unstable();
    scratch.dedup();
    scratch.windows(2).all(|w| w[0].0 != w[1].0)
}

/// Number of tau-SCCs that contain a cycle (two or more states, or a tau self-loop).
fn count_tau_cycles(lts: &Lts) -> u64 {
    let facts = lts.tau_facts();
    let mut size = vec![0u32; facts.num_sccs as usize];
    let mut cyclic = Bitset::new(facts.num_sccs as usize);
    for s in 0..lts.covered() {
        let c = facts.scc[s as usize] as usize;
        size[c] += 1;
        if lts.tau_successors(s).any(|t| t == s) {
            cyclic.set(c);
        }
    }
    for (c, &n) in size.iter().enumerate() {
        if n > 1 {
            cyclic.set(c);
        }
    }
    cyclic.count_ones()
}

const UNVISITED: u32 = u32::MAX;

/// Iterative Tarjan over the tau-edges of the covered states; divergence is decided per SCC
/// when it completes (its tau-successor SCCs have completed before it).
fn compute_tau_facts(lts: &Lts) -> TauFacts {
    let n = lts.covered() as usize;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut scc = vec![UNVISITED; n];
    let mut divergent = Bitset::new(n);
    let mut stack: Vec<u32> = Vec::new();
    // Call stack of the depth-first search: (state, position of its next edge to examine).
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    let mut num_sccs = 0u32;

    for root in 0..n as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        calls.push((root, lts.offsets[root as usize] as usize));

        while let Some(&(v, mut pos)) = calls.last() {
            let end = lts.offsets[v as usize + 1] as usize;
            let mut child = None;
            while pos < end {
                let at = pos;
                pos += 1;
                if lts.labels[at] != TAU {
                    continue;
                }
                let w = lts.targets[at];
                if index[w as usize] == UNVISITED {
                    child = Some(w);
                    break;
                } else if scc[w as usize] == UNVISITED {
                    // w is on the Tarjan stack.
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            }
            if let Some(w) = child {
                if let Some(top) = calls.last_mut() {
                    top.1 = pos;
                }
                index[w as usize] = next_index;
                low[w as usize] = next_index;
                next_index += 1;
                stack.push(w);
                calls.push((w, lts.offsets[w as usize] as usize));
                continue;
            }
            calls.pop();
            if low[v as usize] == index[v as usize] {
                let c = num_sccs;
                num_sccs += 1;
                let first = stack
                    .iter()
                    .rposition(|&x| x == v)
                    .expect("Tarjan root is on the stack");
                for &x in &stack[first..] {
                    scc[x as usize] = c;
                }
                // A nontrivial SCC is divergent regardless of its successors.
                let mut is_divergent = stack.len() - first > 1;
                if !is_divergent {
                    is_divergent = stack[first..].iter().any(|&x| {
                        lts.tau_successors(x).any(|t| {
                            // A tau edge inside the SCC (a self-loop here) or into a
                            // divergent SCC completed earlier.
                            scc[t as usize] == c || divergent.get(t as usize)
                        })
                    });
                }
                if is_divergent {
                    for &x in &stack[first..] {
                        divergent.set(x as usize);
                    }
                }
                stack.truncate(first);
            }
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
        }
    }
    TauFacts {
        scc,
        num_sccs,
        divergent,
    }
}

fn compute_enabled_sets(lts: &Lts) -> EnabledSets {
    let n = lts.covered() as usize;
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut labels: Vec<Label> = Vec::new();
    for s in 0..n as u32 {
        let start = labels.len();
        labels.extend(lts.outgoing(s).0.iter().copied().filter(|&l| l != TAU));
        let fresh = &mut labels[start..];
        if fresh.len() > 1 {
            fresh.sort_unstable();
            let mut kept = 1;
            for i in 1..fresh.len() {
                if fresh[i] != fresh[kept - 1] {
                    fresh[kept] = fresh[i];
                    kept += 1;
                }
            }
            labels.truncate(start + kept);
        }
        offsets.push(labels.len() as u64);
    }
    labels.shrink_to_fit();
    EnabledSets { offsets, labels }
}

fn compute_reachable(lts: &Lts) -> Bitset {
    let n = lts.covered() as usize;
    let mut seen = Bitset::new(n);
    if n == 0 {
        return seen;
    }
    let mut queue: Vec<u32> = vec![lts.initial];
    seen.set(lts.initial as usize);
    let mut head = 0;
    while head < queue.len() {
        let s = queue[head];
        head += 1;
        for &t in lts.outgoing(s).1 {
            if !seen.get(t as usize) {
                seen.set(t as usize);
                queue.push(t);
            }
        }
    }
    seen
}

/// Builds the closure of each SCC from its members and its tau-successor SCCs' closures
/// (complete before it, by Tarjan's order); gives up once more than `budget` entries.
fn compute_tau_closures(lts: &Lts, facts: &TauFacts, budget: u64) -> Option<TauClosures> {
    let n = lts.covered() as usize;
    let num_sccs = facts.num_sccs as usize;
    // Members of each SCC, grouped (counting sort by SCC id).
    let mut member_offsets = vec![0usize; num_sccs + 1];
    for &c in &facts.scc {
        member_offsets[c as usize + 1] += 1;
    }
    for c in 0..num_sccs {
        member_offsets[c + 1] += member_offsets[c];
    }
    let mut fill = member_offsets.clone();
    let mut by_scc = vec![0u32; n];
    for (s, &c) in facts.scc.iter().enumerate() {
        by_scc[fill[c as usize]] = s as u32;
        fill[c as usize] += 1;
    }
    drop(fill);

    let mut offsets: Vec<u64> = Vec::with_capacity(num_sccs + 1);
    offsets.push(0);
    let mut members: Vec<u32> = Vec::with_capacity(n);
    // mark[s] == c + 1 iff s is already in the closure being built for SCC c.
    let mut mark = vec![0u32; n];
    let mut buffer: Vec<u32> = Vec::new();
    for c in 0..num_sccs {
        buffer.clear();
        let stamp = c as u32 + 1;
        let scc_members = &by_scc[member_offsets[c]..member_offsets[c + 1]];
        for &s in scc_members {
            mark[s as usize] = stamp;
            buffer.push(s);
        }
        for &s in scc_members {
            for t in lts.tau_successors(s) {
                let d = facts.scc[t as usize] as usize;
                if d == c || mark[t as usize] == stamp {
                    continue;
                }
                let closure = &members[offsets[d] as usize..offsets[d + 1] as usize];
                for &u in closure {
                    if mark[u as usize] != stamp {
                        mark[u as usize] = stamp;
                        buffer.push(u);
                    }
                }
            }
        }
        buffer.sort_unstable();
        if members.len() as u64 + buffer.len() as u64 > budget {
            return None;
        }
        members.extend_from_slice(&buffer);
        offsets.push(members.len() as u64);
    }
    members.shrink_to_fit();
    Some(TauClosures {
        scc: facts.scc.clone(),
        offsets,
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        std::iter::once("tau".to_string())
            .chain((1..n).map(|i| format!("a{i}")))
            .collect()
    }

    #[test]
    fn divergence_through_tau_cycles_and_self_loops() {
        // 0 -tau-> 1 -tau-> 2 -tau-> 1 (cycle), 3 -tau-> 3 (self-loop), 4 -a-> 4, 5 -tau-> 4
        let lts = Lts::from_transitions(
            0,
            6,
            names(2),
            &[
                (0, 0, 1),
                (1, 0, 2),
                (2, 0, 1),
                (3, 0, 3),
                (4, 1, 4),
                (5, 0, 4),
            ],
        );
        let div: Vec<bool> = (0..6).map(|s| lts.is_divergent(s)).collect();
        assert_eq!(div, vec![true, true, true, true, false, false]);
        assert_eq!(lts.tau_scc(1), lts.tau_scc(2));
        assert!(lts.tau_scc(1) < lts.tau_scc(0));
        assert_eq!(lts.tau_closure(0), vec![0, 1, 2]);
        assert_eq!(lts.tau_closure(5), vec![4, 5]);
        assert_eq!(lts.tau_closure_of_set(&[3, 5]), vec![3, 4, 5]);
        assert!(!lts.is_stable(0) && lts.is_stable(4));
        assert_eq!(lts.enabled(4), &[1]);
        assert_eq!(lts.enabled(0), &[] as &[Label]);
        assert!(!lts.is_deterministic());
        let summary = lts.summary();
        assert_eq!(summary.tau_cycles, 2);
        assert_eq!(summary.divergent_states, 4);
        assert_eq!(summary.reachable_divergent_states, 3);
        assert_eq!(summary.reachable_states, 3);
        assert_eq!(summary.deadlock_states, 0);
    }

    #[test]
    fn determinism_ignores_duplicates_and_unreachable_states() {
        let det = Lts::from_transitions(
            0,
            3,
            names(3),
            &[(0, 1, 1), (0, 1, 1), (0, 2, 2), (2, 1, 1), (2, 1, 2)],
        );
        assert!(!det.is_deterministic());
        let det = Lts::from_transitions(
            0,
            3,
            names(3),
            &[
                (0, 1, 1),
                (0, 1, 1),
                (0, 2, 1),
                (2, 1, 1),
                (2, 1, 2),
                (2, 0, 0),
            ],
        );
        assert!(det.is_deterministic());
        assert_eq!(det.summary().deadlock_states, 1);
        assert_eq!(det.summary().reachable_deadlock_states, 1);
    }

    #[test]
    fn closure_budget_falls_back_to_search() {
        // A tau chain of n states has closures of total size n(n+1)/2, above the budget.
        let n = 3000u32;
        let chain: Vec<(u32, Label, u32)> = (0..n - 1).map(|s| (s, TAU, s + 1)).collect();
        let lts = Lts::from_transitions(0, n, names(1), &chain);
        assert!(lts.tau_closures().is_none());
        assert_eq!(lts.tau_closure(n - 3), vec![n - 3, n - 2, n - 1]);
        let short = Lts::from_transitions(0, 3, names(1), &chain[..2]);
        assert_eq!(short.tau_closures().map(|t| t.get(0).len()), Some(3));
    }
}
