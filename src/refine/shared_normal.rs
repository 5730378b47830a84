//! The specification's normal form shared by the workers of a parallel check, built on demand.
//!
//! As in [`super::normal`], a normal-form node is a tau-closed set of specification states
//! (the empty set is node [`EMPTY_SET`]). Nodes are made only as the product reaches them: the
//! full subset construction can be exponentially larger than the part a check visits. Each
//! node's data is written once and then only read: its members, divergence and signature when
//! it is interned; its successors per event and its minimal acceptances the first time a worker
//! asks (`OnceLock`: a second worker asking meanwhile waits for the first). New nodes are
//! interned under one lock, taken only while a node's successors are computed.
//!
//! Node ids depend on the order in which workers reach nodes; nothing else does. The checks
//! use nodes only through their contents (members, inclusion, successors, acceptances), so
//! verdicts, counts and counterexamples do not depend on the thread count.

use std::collections::HashMap;
use std::sync::OnceLock;

use crossbeam::utils::CachePadded;
use parking_lot::Mutex;

use super::normal::{minimal_acceptances, sorted_subset, visible_moves, SubsetMemo, EMPTY_SET};
use super::revivals::{admissible_members, stable_groups, StableGroup};
use crate::explore::index::Segmented;
use crate::hash::{hash_u32_slice, WordBuildHasher};
use crate::lts::Lts;
use crate::sync::shim::AtomicU32 as ShimAtomicU32;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Node ids by members (one shard of the index).
type NodeIndex = HashMap<Box<[u32]>, u32, WordBuildHasher>;

/// Shards of the index of nodes.
const INDEX_SHARDS: usize = 64;

/// Nodes in the first chunk of the node table; chunk `c` holds `FIRST_CHUNK << c`.
const FIRST_CHUNK: usize = 1024;
/// Chunks of the node table (enough for every `u32` id).
const CHUNKS: usize = 23;

/// One normal-form node.
struct Node {
    /// Members, sorted.
    members: Box<[u32]>,
    /// Bits `1 << (s % 64)` of the members `s`: `a ⊆ b` implies `sig(a) ⊆ sig(b)`.
    signature: u64,
    divergent: bool,
    /// The successors, computed on first use.
    successors: OnceLock<Successors>,
    /// The minimal acceptance sets (each sorted).
    acceptances: OnceLock<Box<[Box<[u32]>]>>,
    /// The stable members grouped by acceptance (revivals and refusal testing).
    stable: OnceLock<Box<[StableGroup]>>,
}

/// A node's successors: `(event, node)` sorted by event, and, when the node has a successor
/// for at least a quarter of all events, the same as a table indexed by event (a lookup per
/// implementation transition instead of a binary search; memory at most four entries' worth
/// per successor).
struct Successors {
    list: Box<[(u32, u32)]>,
    by_event: Option<Box<[u32]>>,
}

/// The normal form of a specification LTS, shared by workers.
pub(crate) struct SharedNormalForm<'a> {
    spec: &'a Lts,
    /// Event of each specification label (label 0, tau, is event [`TAU`]).
    event_of_label: Vec<u32>,
    /// One more than the largest event.
    num_events: usize,
    chunks: [OnceLock<Box<[OnceLock<Node>]>>; CHUNKS],
    /// Node ids by members, in shards chosen by the members' hash (hashed before the lock is
    /// taken), so that workers interning different nodes rarely wait for each other. Each
    /// shard has its own cache line: a lock taken by one worker does not evict its neighbours
    /// from another's cache.
    index: Box<[CachePadded<Mutex<NodeIndex>>]>,
    /// The number of nodes made, on its own cache line: its increments would otherwise evict
    /// the fields every lookup reads (the node table's chunks) from the other workers' caches.
    made: CachePadded<AtomicU32>,
    /// Per specification state, one more than the node of its tau-closure, once made (most
    /// successor nodes are the closure of a single state).
    /// Allocated as states are met: a specification may declare many more states than it
    /// reaches.
    closure_node: Segmented<ShimAtomicU32>,
    /// Set when `closure_node` could not grow (see [`SharedNormalForm::short_of_memory`]).
    short_of_memory: AtomicBool,
    memo: SubsetMemo,
    initial: u32,
    /// Once [`SharedNormalForm::record_asked`] is called (a normal form made whole for a
    /// distributed check): a bit per node, set when a search asks for a successor of the node
    /// ([`SharedNormalForm::successor`]): the nodes whose successors a search built on demand
    /// would have made.
    asked: OnceLock<Box<[AtomicU64]>>,
}

fn locate(id: u32) -> (usize, usize) {
    let q = id as usize / FIRST_CHUNK + 1;
    let chunk = (usize::BITS - 1 - q.leading_zeros()) as usize;
    (chunk, id as usize - FIRST_CHUNK * ((1 << chunk) - 1))
}

impl<'a> SharedNormalForm<'a> {
    /// The normal form of `spec`, whose label `l` is event `event_of_label[l]`, with its empty
    /// node and its initial node (the tau-closure of the initial state).
    pub(crate) fn new(spec: &'a Lts, event_of_label: Vec<u32>) -> Self {
        let mut nf = SharedNormalForm {
            spec,
            num_events: event_of_label.iter().max().map_or(1, |&e| e as usize + 1),
            event_of_label,
            chunks: std::array::from_fn(|_| OnceLock::new()),
            index: (0..INDEX_SHARDS)
                .map(|_| CachePadded::new(Mutex::new(HashMap::default())))
                .collect(),
            made: CachePadded::new(AtomicU32::new(0)),
            closure_node: Segmented::new(1),
            short_of_memory: AtomicBool::new(false),
            memo: SubsetMemo::new(),
            initial: EMPTY_SET,
            asked: OnceLock::new(),
        };
        let empty = nf.intern(Vec::new(), false);
        debug_assert_eq!(empty, EMPTY_SET);
        let (members, divergent) = nf.closure(std::iter::once(spec.initial()));
        nf.initial = nf.intern(members, divergent);
        nf
    }

    /// The initial node.
    pub(crate) fn initial_set(&self) -> u32 {
        self.initial
    }

    /// Makes every node reachable from the initial one, breadth first and each node's
    /// successors in event order, on this thread: node numbers then depend on the
    /// specification only, the same in every process of a distributed check (which sends
    /// pairs between processes by node number). Returns false, with the nodes made so far,
    /// when the normal form has more than `limit` nodes.
    pub(crate) fn complete(&self, limit: usize) -> bool {
        let mut next = 0u32;
        while (next as usize) < self.num_sets() {
            if self.num_sets() > limit {
                return false;
            }
            self.successors_of(next);
            next += 1;
        }
        self.num_sets() <= limit
    }

    /// From now on, remembers the nodes whose successors a search asks for (of the nodes made
    /// so far: call it once the normal form is whole, [`SharedNormalForm::complete`]).
    pub(crate) fn record_asked(&self) {
        let words = self.num_sets().div_ceil(64);
        let _ = self
            .asked
            .set((0..words).map(|_| AtomicU64::new(0)).collect());
    }

    /// The nodes whose successors a search asked for since [`SharedNormalForm::record_asked`],
    /// in order.
    pub(crate) fn asked(&self) -> Vec<u32> {
        let Some(asked) = self.asked.get() else {
            return Vec::new();
        };
        let mut nodes = Vec::new();
        for (i, word) in asked.iter().enumerate() {
            // Ordering: Relaxed; read after the search's workers are done.
            let mut bits = word.load(Ordering::Relaxed);
            while bits != 0 {
                nodes.push(i as u32 * 64 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        nodes
    }

    /// The number of nodes that a normal form built on demand makes when a search asks for
    /// the successors of `asked` (and of no other node): the empty and the initial node, and
    /// the successors of those asked. What one process's check reports as its normal form's
    /// size, where a distributed check built the normal form whole.
    pub(crate) fn made_on_demand(&self, asked: &[u32]) -> u64 {
        let mut made: std::collections::HashSet<u32, WordBuildHasher> =
            [EMPTY_SET, self.initial].into_iter().collect();
        for &set in asked {
            made.extend(self.successors_of(set).list.iter().map(|&(_, node)| node));
        }
        made.len() as u64
    }

    /// The number of nodes made so far.
    pub(crate) fn num_sets(&self) -> usize {
        // Ordering: Relaxed; a count read when the workers are done.
        self.made.load(Ordering::Relaxed) as usize
    }

    #[inline]
    fn node(&self, id: u32) -> &Node {
        let (chunk, offset) = locate(id);
        self.chunks[chunk]
            .get()
            .and_then(|c| c[offset].get())
            .expect("a node id is published after its node")
    }

    /// The members of `set`, sorted.
    pub(crate) fn members(&self, set: u32) -> &[u32] {
        &self.node(set).members
    }

    /// Whether some member of `set` can perform infinitely many taus.
    #[inline]
    pub(crate) fn is_divergent(&self, set: u32) -> bool {
        self.node(set).divergent
    }

    /// Whether `a ⊆ b` as sets of specification states.
    #[inline]
    pub(crate) fn is_subset(&self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        let (na, nb) = (self.node(a), self.node(b));
        if na.signature & !nb.signature != 0 || na.members.len() > nb.members.len() {
            return false;
        }
        self.memo.is_subset(a, b, &na.members, &nb.members)
    }

    /// The successors of `set`, computed on first use.
    #[inline]
    fn successors_of(&self, set: u32) -> &Successors {
        self.node(set)
            .successors
            .get_or_init(|| self.compute_successors(set))
    }

    /// The successor of `set` by visible `event` ([`EMPTY_SET`] if no member can do it).
    #[inline]
    pub(crate) fn successor(&self, set: u32, event: u32) -> u32 {
        if let Some(asked) = self.asked.get() {
            let (word, bit) = (&asked[set as usize / 64], 1u64 << (set % 64));
            // Ordering: Relaxed, both; a mark read when the search's workers are done (a
            // bit once set stays set; the load only spares the write when it is).
            if word.load(Ordering::Relaxed) & bit == 0 {
                word.fetch_or(bit, Ordering::Relaxed);
            }
        }
        let successors = self.successors_of(set);
        if let Some(table) = &successors.by_event {
            return table.get(event as usize).copied().unwrap_or(EMPTY_SET);
        }
        let list = &successors.list;
        match list.binary_search_by_key(&event, |&(e, _)| e) {
            Ok(i) => list[i].1,
            Err(_) => EMPTY_SET,
        }
    }

    /// The minimal acceptance sets of `set`: the ⊆-minimal sets of visible events enabled in
    /// its stable members (none when no member is stable).
    pub(crate) fn acceptances(&self, set: u32) -> &[Box<[u32]>] {
        self.node(set).acceptances.get_or_init(|| {
            minimal_acceptances(self.spec, &self.event_of_label, self.members(set))
                .into_iter()
                .map(Vec::into_boxed_slice)
                .collect()
        })
    }

    /// Whether some stable member of `set` accepts only events in `enabled` (sorted): whether
    /// the specification can refuse everything a state with these enabled events refuses.
    #[inline]
    pub(crate) fn can_refuse_all_but(&self, set: u32, enabled: &[u32]) -> bool {
        self.acceptances(set)
            .iter()
            .any(|a| sorted_subset(a, enabled))
    }

    /// The stable members of `set` grouped by acceptance, computed on first use.
    pub(crate) fn stable_groups(&self, set: u32) -> &[StableGroup] {
        self.node(set).stable.get_or_init(|| {
            stable_groups(self.spec, &self.event_of_label, self.members(set)).into()
        })
    }

    /// The node of the members of `set` that a stable implementation state with acceptance
    /// `enabled` (sorted) leaves from in refusal testing: the stable members that accept only
    /// events of `enabled` ([`EMPTY_SET`] when there are none). Stable states have no taus, so
    /// the set is tau-closed.
    pub(crate) fn admissible_node(&self, set: u32, enabled: &[u32]) -> u32 {
        let members = admissible_members(self.stable_groups(set), enabled);
        if members.len() == self.members(set).len() {
            set
        } else {
            // Stable members have no tau: the set is tau-closed and cannot diverge.
            self.intern(members, false)
        }
    }

    fn compute_successors(&self, set: u32) -> Successors {
        let mut moves: Vec<(u32, u32)> = Vec::new();
        visible_moves(
            self.spec,
            &self.event_of_label,
            self.members(set),
            &mut moves,
        );
        let mut out = Vec::new();
        for group in moves.chunk_by(|a, b| a.0 == b.0) {
            let next = if let [(_, t)] = group {
                self.closure_node_of(*t)
            } else {
                let (members, divergent) = self.closure(group.iter().map(|&(_, t)| t));
                self.intern(members, divergent)
            };
            out.push((group[0].0, next));
        }
        let by_event = (out.len() >= 8 && out.len() * 4 >= self.num_events).then(|| {
            let mut table = vec![EMPTY_SET; self.num_events];
            for &(event, next) in &out {
                table[event as usize] = next;
            }
            table.into()
        });
        Successors {
            list: out.into(),
            by_event,
        }
    }

    /// Whether a table of this normal form could not grow (an allocation that failed under
    /// an address-space bound, or one larger than the memory left): the searches over it
    /// stop by the memory limit, with their statistics, never with an abort (the normal form
    /// itself stays right: it is made without the table).
    pub(crate) fn short_of_memory(&self) -> bool {
        // Ordering: Relaxed; a flag that publishes nothing (the search that reads it stops).
        self.short_of_memory.load(Ordering::Relaxed)
    }

    #[cold]
    pub(super) fn note_memory_failure(&self) {
        // Ordering: Relaxed; see `short_of_memory`.
        self.short_of_memory.store(true, Ordering::Relaxed);
    }

    /// The node of the tau-closure of specification state `state`.
    fn closure_node_of(&self, state: u32) -> u32 {
        let Ok(group) = self.closure_node.try_get_or_alloc(state as u64) else {
            // The table cannot grow: the run is over its memory (see
            // [`SharedNormalForm::short_of_memory`]). The node, interned by its members, is
            // the same without the table.
            self.note_memory_failure();
            let (members, divergent) = self.closure(std::iter::once(state));
            return self.intern(members, divergent);
        };
        let cell = &group[0];
        // Ordering: Relaxed, both; the node id is published with the node (by its slot), and
        // whoever stores it stores the same id.
        match cell.load(Ordering::Relaxed) {
            0 => {
                let (members, divergent) = self.closure(std::iter::once(state));
                let node = self.intern(members, divergent);
                cell.store(node + 1, Ordering::Relaxed);
                node
            }
            known => known - 1,
        }
    }

    /// The sorted tau-closure of `seeds`, and whether it holds a tau cycle (a divergence).
    ///
    /// Computed by the worker that needs it, from the specification's tau transitions alone:
    /// no pass over the whole specification runs before the search, so the normalisation is
    /// as parallel as the search that drives it. A depth-first search with three colours
    /// finds the cycles: a tau step back to a state still on the search's stack closes one.
    /// The closure is tau-closed, so it holds a cycle iff one of its members diverges.
    fn closure(&self, seeds: impl Iterator<Item = u32>) -> (Vec<u32>, bool) {
        const ON_STACK: bool = false;
        const DONE: bool = true;
        let mut colour: HashMap<u32, bool, WordBuildHasher> = HashMap::default();
        let mut out: Vec<u32> = Vec::new();
        let mut divergent = false;
        // (state, its tau successors not yet followed)
        let mut stack: Vec<(u32, Vec<u32>)> = Vec::new();
        for seed in seeds {
            if colour.contains_key(&seed) {
                continue;
            }
            colour.insert(seed, ON_STACK);
            out.push(seed);
            stack.push((seed, self.spec.tau_successors(seed).collect()));
            while let Some((state, pending)) = stack.last_mut() {
                match pending.pop() {
                    Some(t) => match colour.get(&t) {
                        None => {
                            colour.insert(t, ON_STACK);
                            out.push(t);
                            let next = self.spec.tau_successors(t).collect();
                            stack.push((t, next));
                        }
                        Some(&ON_STACK) => divergent = true,
                        Some(&DONE) => {}
                    },
                    None => {
                        colour.insert(*state, DONE);
                        stack.pop();
                    }
                }
            }
        }
        out.sort_unstable();
        (out, divergent)
    }

    /// The id of the node with these (sorted, tau-closed) members, made if new; `divergent`
    /// says whether one of them diverges.
    fn intern(&self, members: Vec<u32>, divergent: bool) -> u32 {
        let shard = hash_u32_slice(&members) as usize % INDEX_SHARDS;
        let mut index = self.index[shard].lock();
        if let Some(&id) = index.get(members.as_slice()) {
            return id;
        }
        // Ordering: Relaxed; ids need only be unique (the node is published by its slot).
        let id = self.made.fetch_add(1, Ordering::Relaxed);
        assert!(id < u32::MAX, "fewer than 2^32 normal-form nodes");
        let (chunk, offset) = locate(id);
        let slots = self.chunks[chunk]
            .get_or_init(|| (0..FIRST_CHUNK << chunk).map(|_| OnceLock::new()).collect());
        let members: Box<[u32]> = members.into();
        let node = Node {
            signature: members.iter().fold(0u64, |sig, &s| sig | 1 << (s % 64)),
            divergent,
            members: members.clone(),
            successors: OnceLock::new(),
            acceptances: OnceLock::new(),
            stable: OnceLock::new(),
        };
        if slots[offset].set(node).is_err() {
            unreachable!("a node id is given once");
        }
        index.insert(members, id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_made_on_demand_and_shared() {
        // 0 -a-> 1, 1 -tau-> 2, 0 -b-> 2, 2 -a-> 2
        let names = vec!["tau".into(), "a".into(), "b".into()];
        let spec =
            Lts::from_transitions(0, 3, names, &[(0, 1, 1), (1, 0, 2), (0, 2, 2), (2, 1, 2)]);
        let nf = SharedNormalForm::new(&spec, vec![0, 1, 2]);
        let init = nf.initial_set();
        assert_eq!(nf.members(init), &[0]);
        assert_eq!(nf.num_sets(), 2);
        let after_a = nf.successor(init, 1);
        assert_eq!(nf.members(after_a), &[1, 2]);
        let after_b = nf.successor(init, 2);
        assert_eq!(nf.members(after_b), &[2]);
        assert_eq!(nf.successor(init, 7), EMPTY_SET);
        assert!(nf.is_subset(after_b, after_a));
        assert!(!nf.is_subset(after_a, after_b));
        assert_eq!(nf.successor(after_a, 1), after_b);
        let acc: Vec<Vec<u32>> = nf.acceptances(after_a).iter().map(|a| a.to_vec()).collect();
        assert_eq!(acc, vec![vec![1]]);
        assert!(nf.can_refuse_all_but(after_a, &[1, 2]));
        assert!(!nf.can_refuse_all_but(after_a, &[2]));
        assert_eq!(nf.num_sets(), 4);
        // Many chunks' worth of ids land where `locate` says.
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(1023), (0, 1023));
        assert_eq!(locate(1024), (1, 0));
        assert_eq!(locate(3071), (1, 2047));
        assert_eq!(locate(3072), (2, 0));
    }

    #[test]
    fn a_closure_table_that_cannot_grow_is_a_memory_failure_not_an_abort() {
        // 0 -a-> 1, 1 -tau-> 2, 0 -b-> 2, 2 -a-> 2
        let names = vec!["tau".into(), "a".into(), "b".into()];
        let spec =
            Lts::from_transitions(0, 3, names, &[(0, 1, 1), (1, 0, 2), (0, 2, 2), (2, 1, 2)]);
        let mut nf = SharedNormalForm::new(&spec, vec![0, 1, 2]);
        // Groups of 2^50 words: the first segment is 2^64 bytes, more than any address space.
        nf.closure_node = Segmented::new(1 << 50);
        assert!(!nf.short_of_memory());
        let init = nf.initial_set();
        // `b` leads to the closure of the single state 2: made without the table, the same.
        let after_b = nf.successor(init, 2);
        assert!(nf.short_of_memory());
        assert_eq!(nf.members(after_b), &[2]);
        assert_eq!(nf.successor(after_b, 1), after_b);
        assert_eq!(nf.members(nf.successor(init, 1)), &[1, 2]);
    }

    #[test]
    fn closures_find_tau_cycles_and_only_them() {
        // 0 -tau-> 1, 0 -tau-> 2, 1 -tau-> 3, 2 -tau-> 3 (a diamond, no cycle);
        // 0 -a-> 4, 4 -tau-> 5, 5 -tau-> 4 (a cycle); 0 -b-> 6, 6 -tau-> 6 (a self-loop).
        let names = vec!["tau".into(), "a".into(), "b".into()];
        let spec = Lts::from_transitions(
            0,
            7,
            names,
            &[
                (0, 0, 1),
                (0, 0, 2),
                (1, 0, 3),
                (2, 0, 3),
                (0, 1, 4),
                (4, 0, 5),
                (5, 0, 4),
                (0, 2, 6),
                (6, 0, 6),
            ],
        );
        let nf = SharedNormalForm::new(&spec, vec![0, 1, 2]);
        let init = nf.initial_set();
        assert_eq!(nf.members(init), &[0, 1, 2, 3]);
        assert!(!nf.is_divergent(init));
        let after_a = nf.successor(init, 1);
        assert_eq!(nf.members(after_a), &[4, 5]);
        assert!(nf.is_divergent(after_a));
        let after_b = nf.successor(init, 2);
        assert_eq!(nf.members(after_b), &[6]);
        assert!(nf.is_divergent(after_b));
        for set in [init, after_a, after_b] {
            let by_states = nf.members(set).iter().any(|&s| spec.is_divergent(s));
            assert_eq!(nf.is_divergent(set), by_states);
        }
    }

    #[test]
    fn a_node_with_many_successors_answers_from_its_table() {
        // State 0 does events 1..=10 (event e to state e); state 5 does event 3 back to 0.
        let names: Vec<String> = std::iter::once("tau".to_string())
            .chain((1..=10).map(|e| format!("e{e}")))
            .collect();
        let mut transitions: Vec<(u32, u32, u32)> = (1..=10).map(|e| (0, e, e)).collect();
        transitions.push((5, 3, 0));
        let spec = Lts::from_transitions(0, 11, names, &transitions);
        let nf = SharedNormalForm::new(&spec, (0..=10).collect());
        let init = nf.initial_set();
        assert!(nf.successors_of(init).by_event.is_some());
        for e in 1..=10 {
            assert_eq!(nf.members(nf.successor(init, e)), &[e]);
        }
        assert_eq!(nf.successor(init, 11), EMPTY_SET);
        let five = nf.successor(init, 5);
        assert!(nf.successors_of(five).by_event.is_none());
        assert_eq!(nf.successor(five, 3), init);
        assert_eq!(nf.successor(five, 4), EMPTY_SET);
    }
}
