//! The specification's normal form, built on the fly (subset construction).
//!
//! A normal-form state is a tau-closed set of specification states, stored once as a sorted
//! `u32` slice and named by a dense id ([`EMPTY_SET`] is the empty set, which the normal form
//! keeps as a state). Per set, computed once: whether a member diverges (at interning), its
//! successor set for each event (on first expansion) and its minimal acceptance sets (on the
//! first refusal test).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::properties::TICK;
use super::revivals::{stable_groups, StableGroup};
use crate::hash::hash_u32_slice;
use crate::lts::Lts;
use crate::ts::TAU;

/// The id of the empty set of specification states.
pub(crate) const EMPTY_SET: u32 = 0;

const NOT_COMPUTED: usize = usize::MAX;
const NO_SET: u32 = u32::MAX;
/// Subset tests of sets with at least this many members together go through the memo (in
/// debug builds nearly all, so that the small systems of the tests exercise it).
const SUBSET_MEMO_MIN_LEN: usize = if cfg!(debug_assertions) { 2 } else { 48 };
/// log2 of the memo's entries (few in debug builds, so that collisions are exercised too).
const SUBSET_MEMO_BITS: u32 = if cfg!(debug_assertions) { 4 } else { 16 };

/// Owners of memo entries: normal forms are numbered from 1, so the empty entries (owner 0)
/// match none.
static NEXT_MEMO_OWNER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Per thread, a direct-mapped cache of `(owner, a << 32 | b, a ⊆ b)` for long sets (the
    /// antichain compares the same pairs of sets over and over). Allocated on first use.
    static SUBSET_MEMO: RefCell<Vec<(u64, u64, bool)>> = const { RefCell::new(Vec::new()) };
}

/// Subset tests of one normal form's sets, remembered per thread for long sets.
pub(crate) struct SubsetMemo {
    /// Tells this normal form's entries in [`SUBSET_MEMO`] from another's.
    owner: u64,
}

impl SubsetMemo {
    /// A memo for a new normal form.
    pub(crate) fn new() -> Self {
        SubsetMemo {
            // Ordering: Relaxed; a unique number is all that is needed.
            owner: NEXT_MEMO_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether set `a` (members `ma`, sorted) is a subset of set `b` (members `mb`), for
    /// `a != b` whose quick rejects failed.
    #[inline]
    pub(crate) fn is_subset(&self, a: u32, b: u32, ma: &[u32], mb: &[u32]) -> bool {
        if ma.len() + mb.len() < SUBSET_MEMO_MIN_LEN {
            return sorted_subset(ma, mb);
        }
        let key = ((a as u64) << 32) | b as u64;
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SUBSET_MEMO_BITS)) as usize;
        let cached = SUBSET_MEMO.with(|memo| {
            memo.borrow()
                .get(slot)
                .filter(|e| e.0 == self.owner && e.1 == key)
                .map(|e| e.2)
        });
        if let Some(cached) = cached {
            debug_assert_eq!(cached, sorted_subset(ma, mb));
            return cached;
        }
        let result = sorted_subset(ma, mb);
        SUBSET_MEMO.with(|memo| {
            let mut memo = memo.borrow_mut();
            if memo.is_empty() {
                memo.resize(1 << SUBSET_MEMO_BITS, (0, 0, false));
            }
            memo[slot] = (self.owner, key, result);
        });
        result
    }
}

/// Puts into `moves` the visible moves `(event, target)` of `members` (by `event_of_label`),
/// sorted and without repeats: grouped by event.
pub(crate) fn visible_moves(
    spec: &Lts,
    event_of_label: &[u32],
    members: &[u32],
    moves: &mut Vec<(u32, u32)>,
) {
    moves.clear();
    for &s in members {
        let (labels, targets) = spec.outgoing(s);
        for (&l, &t) in labels.iter().zip(targets) {
            if l != TAU {
                moves.push((event_of_label[l as usize], t));
            }
        }
    }
    moves.sort_unstable();
    moves.dedup();
}

/// Whether specification state `s` can perform ✓. Such a state is not stable (✓ is a
/// signal): it can refuse every event but ✓ by terminating, and shows no acceptance of its own.
pub(crate) fn can_terminate(spec: &Lts, s: u32) -> bool {
    let names = spec.label_names();
    spec.enabled(s).iter().any(|&l| names[l as usize] == TICK)
}

/// The minimal acceptance sets of a set of specification states: the ⊆-minimal sets of
/// visible events (by `event_of_label`) enabled in its stable members (neither tau nor ✓),
/// each sorted.
pub(crate) fn minimal_acceptances(
    spec: &Lts,
    event_of_label: &[u32],
    members: &[u32],
) -> Vec<Vec<u32>> {
    let mut candidates: Vec<Vec<u32>> = Vec::new();
    for &s in members {
        if !spec.is_stable(s) || can_terminate(spec, s) {
            continue;
        }
        let mut enabled: Vec<u32> = spec
            .enabled(s)
            .iter()
            .map(|&l| event_of_label[l as usize])
            .collect();
        enabled.sort_unstable();
        enabled.dedup();
        candidates.push(enabled);
    }
    candidates.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    candidates.dedup();
    let mut minimal: Vec<Vec<u32>> = Vec::new();
    for c in candidates {
        if !minimal.iter().any(|m| sorted_subset(m, &c)) {
            minimal.push(c);
        }
    }
    minimal
}

/// The specification's normal form: interned state sets and their derived data.
pub(crate) struct NormalForm<'a> {
    spec: &'a Lts,
    /// Event id of each specification label (index 0, tau, maps to [`TAU`]).
    event_of_label: Vec<u32>,
    /// Members of set `i`: `members[starts[i]..starts[i + 1]]`, sorted.
    starts: Vec<usize>,
    members: Vec<u32>,
    hashes: Vec<u64>,
    /// Per set, the bits `1 << (s % 64)` of its members `s`: `a ⊆ b` implies
    /// `sig(a) ⊆ sig(b)`.
    signatures: Vec<u64>,
    /// Subset tests of long sets, remembered.
    memo: SubsetMemo,
    /// Open-addressing table of set ids plus one (0 marks a free slot).
    table: Vec<u32>,
    divergent: Vec<bool>,
    /// Successors of set `i`: `succ[succ_at[i]..succ_at[i] + succ_len[i]]`, sorted by event.
    succ_at: Vec<usize>,
    succ_len: Vec<u32>,
    succ: Vec<(u32, u32)>,
    /// Minimal acceptances of set `i`: `acc_bounds[acc_at[i]..acc_at[i] + acc_len[i]]`, each
    /// a range of `acc_events` (sorted event ids).
    acc_at: Vec<usize>,
    acc_len: Vec<u32>,
    acc_bounds: Vec<(usize, usize)>,
    acc_events: Vec<u32>,
    /// Per specification state, the id of its closure's set once interned (else `NO_SET`).
    state_closure_set: Vec<u32>,
    // Scratch space, reused.
    stamp: Vec<u32>,
    epoch: u32,
    stack: Vec<u32>,
    closure: Vec<u32>,
    moves: Vec<(u32, u32)>,
}

impl<'a> NormalForm<'a> {
    /// The normal form of `spec`, whose label `l` is event `event_of_label[l]`.
    pub(crate) fn new(spec: &'a Lts, event_of_label: Vec<u32>) -> NormalForm<'a> {
        let mut nf = NormalForm {
            spec,
            event_of_label,
            starts: vec![0],
            members: Vec::new(),
            hashes: Vec::new(),
            signatures: Vec::new(),
            memo: SubsetMemo::new(),
            table: vec![0; 1024],
            divergent: Vec::new(),
            succ_at: Vec::new(),
            succ_len: Vec::new(),
            succ: Vec::new(),
            acc_at: Vec::new(),
            acc_len: Vec::new(),
            acc_bounds: Vec::new(),
            acc_events: Vec::new(),
            // States at or above `covered` have no transitions and are never reached.
            stamp: vec![0; spec.covered() as usize],
            state_closure_set: vec![NO_SET; spec.covered() as usize],
            epoch: 0,
            stack: Vec::new(),
            closure: Vec::new(),
            moves: Vec::new(),
        };
        let empty = nf.intern_closure();
        debug_assert_eq!(empty, EMPTY_SET);
        nf
    }

    /// The initial normal-form state: the tau-closure of the specification's initial state.
    pub(crate) fn initial_set(&mut self) -> u32 {
        let init = self.spec.initial();
        self.close_into_scratch(std::iter::once(init));
        self.intern_closure()
    }

    /// Number of sets interned so far.
    pub(crate) fn num_sets(&self) -> usize {
        self.hashes.len()
    }

    /// The members of `set`, sorted.
    #[inline]
    pub(crate) fn members(&self, set: u32) -> &[u32] {
        &self.members[self.starts[set as usize]..self.starts[set as usize + 1]]
    }

    /// The number of members of `set`.
    #[inline]
    pub(crate) fn len(&self, set: u32) -> usize {
        self.starts[set as usize + 1] - self.starts[set as usize]
    }

    /// `[[set]]` diverges: some member starts an infinite tau path.
    #[inline]
    pub(crate) fn is_divergent(&self, set: u32) -> bool {
        self.divergent[set as usize]
    }

    /// Whether `a ⊆ b` as sets of specification states.
    #[inline]
    pub(crate) fn is_subset(&self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        // Quick rejects: a larger set, or a member whose signature bit `b` lacks.
        let (sa, sb) = (self.signatures[a as usize], self.signatures[b as usize]);
        let (la, lb) = (self.len(a), self.len(b));
        if sa & !sb != 0 || la > lb {
            return false;
        }
        self.memo.is_subset(a, b, self.members(a), self.members(b))
    }

    /// Computes the successors of `set` for every event, if not done yet.
    pub(crate) fn ensure_successors(&mut self, set: u32) {
        if self.succ_at[set as usize] != NOT_COMPUTED {
            return;
        }
        let mut moves = std::mem::take(&mut self.moves);
        let (lo, hi) = (self.starts[set as usize], self.starts[set as usize + 1]);
        visible_moves(
            self.spec,
            &self.event_of_label,
            &self.members[lo..hi],
            &mut moves,
        );
        let at = self.succ.len();
        for group in moves.chunk_by(|a, b| a.0 == b.0) {
            let target = if let [(_, t)] = group {
                self.closure_set_of_state(*t)
            } else {
                self.close_into_scratch(group.iter().map(|&(_, t)| t));
                self.intern_closure()
            };
            self.succ.push((group[0].0, target));
        }
        self.succ_at[set as usize] = at;
        self.succ_len[set as usize] = (self.succ.len() - at) as u32;
        self.moves = moves;
    }

    /// The id of the set `closure({state})`, interned on first use.
    fn closure_set_of_state(&mut self, state: u32) -> u32 {
        let cached = self.state_closure_set[state as usize];
        if cached != NO_SET {
            return cached;
        }
        self.close_into_scratch(std::iter::once(state));
        let id = self.intern_closure();
        self.state_closure_set[state as usize] = id;
        id
    }

    /// The successors of `set` as `(event, set)` pairs sorted by event.
    /// [`NormalForm::ensure_successors`] must have been called for `set`.
    #[inline]
    pub(crate) fn successors(&self, set: u32) -> &[(u32, u32)] {
        let at = self.succ_at[set as usize];
        debug_assert_ne!(at, NOT_COMPUTED);
        &self.succ[at..at + self.succ_len[set as usize] as usize]
    }

    /// The successor of `set` by visible `event` ([`EMPTY_SET`] if no member can do it).
    /// [`NormalForm::ensure_successors`] must have been called for `set`.
    #[inline]
    pub(crate) fn successor(&self, set: u32, event: u32) -> u32 {
        let at = self.succ_at[set as usize];
        debug_assert_ne!(at, NOT_COMPUTED);
        let list = &self.succ[at..at + self.succ_len[set as usize] as usize];
        match list.binary_search_by_key(&event, |&(e, _)| e) {
            Ok(i) => list[i].1,
            Err(_) => EMPTY_SET,
        }
    }

    /// Computes the minimal acceptance sets of `set`, if not done yet: the sets of visible
    /// events enabled in its stable members, keeping only the ⊆-minimal ones.
    pub(crate) fn ensure_acceptances(&mut self, set: u32) {
        if self.acc_at[set as usize] != NOT_COMPUTED {
            return;
        }
        let minimal = minimal_acceptances(self.spec, &self.event_of_label, self.members(set));
        self.acc_at[set as usize] = self.acc_bounds.len();
        self.acc_len[set as usize] = minimal.len() as u32;
        for m in minimal {
            let lo = self.acc_events.len();
            self.acc_events.extend_from_slice(&m);
            self.acc_bounds.push((lo, self.acc_events.len()));
        }
    }

    /// The minimal acceptance sets of `set` (each sorted).
    /// [`NormalForm::ensure_acceptances`] must have been called for `set`.
    pub(crate) fn acceptances(&self, set: u32) -> impl Iterator<Item = &[u32]> + '_ {
        let at = self.acc_at[set as usize];
        debug_assert_ne!(at, NOT_COMPUTED);
        self.acc_bounds[at..at + self.acc_len[set as usize] as usize]
            .iter()
            .map(|&(lo, hi)| &self.acc_events[lo..hi])
    }

    /// Whether some stable member of `set` accepts only events in `enabled` (sorted), i.e.
    /// whether the specification can refuse everything an implementation state with these
    /// enabled events refuses. False when `set` has no stable member.
    pub(crate) fn can_refuse_all_but(&mut self, set: u32, enabled: &[u32]) -> bool {
        self.ensure_acceptances(set);
        self.acceptances(set).any(|a| sorted_subset(a, enabled))
    }

    /// The stable members of `set` grouped by acceptance (revivals and refusal testing).
    pub(crate) fn stable_groups(&self, set: u32) -> Vec<StableGroup> {
        stable_groups(self.spec, &self.event_of_label, self.members(set))
    }

    /// Whether a member of `set` can perform ✓.
    pub(crate) fn can_terminate(&self, set: u32) -> bool {
        self.members(set)
            .iter()
            .any(|&s| can_terminate(self.spec, s))
    }

    /// The id of the tau-closure of `states`, interned if new.
    pub(crate) fn intern_states(&mut self, states: &[u32]) -> u32 {
        self.close_into_scratch(states.iter().copied());
        self.intern_closure()
    }

    /// Puts the sorted tau-closure of `seeds` into `self.closure`: the union of the seeds'
    /// closures from the specification's table of tau-closures, or a search over its tau
    /// edges when the table is over its memory budget.
    fn close_into_scratch(&mut self, seeds: impl Iterator<Item = u32>) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|x| *x = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.closure.clear();
        if let Some(table) = self.spec.tau_closures() {
            for s in seeds {
                if self.stamp[s as usize] == epoch {
                    continue;
                }
                for &t in table.get(s) {
                    if self.stamp[t as usize] != epoch {
                        self.stamp[t as usize] = epoch;
                        self.closure.push(t);
                    }
                }
            }
        } else {
            self.stack.clear();
            for s in seeds {
                if self.stamp[s as usize] != epoch {
                    self.stamp[s as usize] = epoch;
                    self.closure.push(s);
                    self.stack.push(s);
                }
            }
            while let Some(s) = self.stack.pop() {
                for t in self.spec.tau_successors(s) {
                    if self.stamp[t as usize] != epoch {
                        self.stamp[t as usize] = epoch;
                        self.closure.push(t);
                        self.stack.push(t);
                    }
                }
            }
        }
        self.closure.sort_unstable();
    }

    /// Interns the set in `self.closure` and returns its id.
    fn intern_closure(&mut self) -> u32 {
        let hash = hash_u32_slice(&self.closure);
        let mask = self.table.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let entry = self.table[slot];
            if entry == 0 {
                break;
            }
            let id = entry - 1;
            if self.hashes[id as usize] == hash && same_elements(self.members(id), &self.closure) {
                return id;
            }
            slot = (slot + 1) & mask;
        }
        let id = self.hashes.len() as u32;
        self.table[slot] = id + 1;
        self.members.extend_from_slice(&self.closure);
        self.starts.push(self.members.len());
        self.hashes.push(hash);
        self.signatures.push(
            self.closure
                .iter()
                .fold(0u64, |sig, &s| sig | 1 << (s % 64)),
        );
        let spec = self.spec;
        self.divergent
            .push(self.closure.iter().any(|&s| spec.is_divergent(s)));
        self.succ_at.push(NOT_COMPUTED);
        self.succ_len.push(0);
        self.acc_at.push(NOT_COMPUTED);
        self.acc_len.push(0);
        if self.hashes.len() * 2 > self.table.len() {
            self.grow_table();
        }
        id
    }

    fn grow_table(&mut self) {
        let size = self.table.len() * 2;
        let mask = size - 1;
        let mut table = vec![0u32; size];
        for (id, &hash) in self.hashes.iter().enumerate() {
            let mut slot = hash as usize & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = id as u32 + 1;
        }
        self.table = table;
    }
}

/// Slice equality without a `memcmp` call for the usual short sets.
#[inline]
fn same_elements(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Whether sorted slice `a` is a subset of sorted slice `b`.
#[inline]
pub(crate) fn sorted_subset(a: &[u32], b: &[u32]) -> bool {
    if a.len() > b.len() {
        return false;
    }
    let mut j = 0;
    for &x in a {
        // Skip smaller elements of b; fail if x is missing.
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j == b.len() || b[j] != x {
            return false;
        }
        j += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_of_sorted_slices() {
        assert!(sorted_subset(&[], &[]));
        assert!(sorted_subset(&[], &[1]));
        assert!(sorted_subset(&[1, 3], &[0, 1, 2, 3]));
        assert!(!sorted_subset(&[1, 4], &[0, 1, 2, 3]));
        assert!(!sorted_subset(&[1], &[]));
        assert!(!sorted_subset(&[0, 1, 2], &[0, 2]));
    }

    #[test]
    fn interns_tau_closed_sets_once() {
        // 0 -a-> 1, 1 -tau-> 2, 0 -b-> 2, 2 -a-> 2
        let names = vec!["tau".into(), "a".into(), "b".into()];
        let spec =
            Lts::from_transitions(0, 3, names, &[(0, 1, 1), (1, 0, 2), (0, 2, 2), (2, 1, 2)]);
        let mut nf = NormalForm::new(&spec, vec![0, 1, 2]);
        let init = nf.initial_set();
        assert_eq!(nf.members(init), &[0]);
        nf.ensure_successors(init);
        let after_a = nf.successor(init, 1);
        assert_eq!(nf.members(after_a), &[1, 2]);
        let after_b = nf.successor(init, 2);
        assert_eq!(nf.members(after_b), &[2]);
        assert_eq!(nf.successor(init, 7), EMPTY_SET);
        assert!(nf.is_subset(after_b, after_a));
        assert!(!nf.is_subset(after_a, after_b));
        nf.ensure_successors(after_a);
        assert_eq!(nf.successor(after_a, 1), after_b);
        nf.ensure_acceptances(after_a);
        let acc: Vec<Vec<u32>> = nf.acceptances(after_a).map(|a| a.to_vec()).collect();
        assert_eq!(acc, vec![vec![1]]);
        assert!(nf.can_refuse_all_but(after_a, &[1, 2]));
        assert!(!nf.can_refuse_all_but(after_a, &[2]));
        assert_eq!(nf.num_sets(), 4);
    }
}
