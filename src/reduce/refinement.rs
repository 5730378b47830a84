//! Partition refinement by signatures (Blom–Orzan), for strong and (divergence-preserving)
//! branching bisimulation.
//!
//! The partitioned graph ([`Graph`]) is the LTS itself for strong bisimulation, and the LTS
//! with its tau-SCCs contracted for the branching ones (states on a common tau cycle are
//! branching bisimilar; contraction leaves the tau graph acyclic, and a contracted SCC that
//! contains a tau cycle is *divergent*).
//!
//! Each round computes every node's signature under the current partition `P` and splits
//! blocks by signature:
//!
//! - strong: `sig(x) = {(a, P(y)) | x -a-> y}`;
//! - branching: `sig(x) = {(a, P(y)) | x -a-> y, not (a = tau and P(y) = P(x))}` together
//!   with `sig(y)` for every inert step `x -tau-> y` (`P(y) = P(x)`), computed successors
//!   first (the contracted tau graph is acyclic; its SCC ids are in reverse topological
//!   order); divergence-preserving adds a divergence mark to the signature of divergent
//!   nodes (and so of every node with an inert path to one).
//!
//! The new block of `x` is determined by `(P(x), sig(x))`, so the partition only refines;
//! the rounds stop when no block splits. [`partition`] recomputes per round only the
//! signatures that can have changed and splits by the smaller-half rule (see
//! [`super::splitting`]); [`partition_with_history`] recomputes them all and keeps every
//! round's partition (for explanations; its cost per round is the whole graph).

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::Equivalence;
use crate::lts::Lts;
use crate::threads::Threads;
use crate::ts::{Label, TAU};

/// The divergence mark in a signature (no label has id `u32::MAX`).
pub(crate) const DIVERGENCE: u64 = u64::MAX;

/// A compact graph: node `x`'s edges are `labels[offsets[x]..offsets[x + 1]]` with the
/// matching `targets`, sorted by (label, target) and deduplicated.
#[derive(Clone, Debug)]
pub struct Graph {
    offsets: Vec<usize>,
    labels: Vec<Label>,
    targets: Vec<u32>,
}

impl Graph {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of edges.
    pub fn num_edges(&self) -> usize {
        self.labels.len()
    }

    /// The edges `(label, target)` of `node`.
    pub fn edges(&self, node: u32) -> impl Iterator<Item = (Label, u32)> + '_ {
        let (lo, hi) = (self.offsets[node as usize], self.offsets[node as usize + 1]);
        self.labels[lo..hi]
            .iter()
            .copied()
            .zip(self.targets[lo..hi].iter().copied())
    }

    /// The range of `node`'s edges in [`Graph::labels`] and [`Graph::targets`].
    pub fn range(&self, node: u32) -> (usize, usize) {
        (self.offsets[node as usize], self.offsets[node as usize + 1])
    }

    /// The label of every edge, each node's edges contiguous.
    pub fn labels(&self) -> &[Label] {
        &self.labels
    }

    /// The target of every edge, parallel to [`Graph::labels`].
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Builds a graph with `n` nodes from per-node edge lists produced by `edges_of`, with
    /// room for `edges` edges (at most, usually).
    fn build(
        n: usize,
        edges: usize,
        mut edges_of: impl FnMut(u32, &mut Vec<(Label, u32)>),
    ) -> Graph {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut labels = Vec::with_capacity(edges);
        let mut targets = Vec::with_capacity(edges);
        let mut buf = Vec::new();
        for x in 0..n as u32 {
            buf.clear();
            edges_of(x, &mut buf);
            buf.sort_unstable();
            buf.dedup();
            for &(a, y) in &buf {
                labels.push(a);
                targets.push(y);
            }
            offsets.push(labels.len());
        }
        Graph {
            offsets,
            labels,
            targets,
        }
    }
}

/// A stable partition of an LTS's states modulo a bisimulation.
#[derive(Clone, Debug)]
pub struct Partition {
    /// The graph that was partitioned.
    pub graph: Graph,
    /// The node of each covered state of the LTS (the state itself for strong bisimulation,
    /// its tau-SCC for the branching ones); states beyond have no entry (they have no
    /// transitions and are unreachable).
    pub node_of_state: Vec<u32>,
    /// The block of each node.
    pub block: Vec<u32>,
    /// Number of blocks.
    pub num_blocks: u32,
    /// Divergent nodes (divergence-preserving branching only; else all false).
    pub divergent: Vec<bool>,
    /// Whether taus inside a block are inert (the branching bisimulations).
    pub branching: bool,
    /// Number of rounds (including the last, which split nothing).
    pub rounds: u32,
    /// With [`partition_with_history`]: the partition before each round (`history[0]` puts
    /// every node in block 0; `history[k]` is the partition after `k` rounds).
    pub history: Vec<Vec<u32>>,
    /// Below this many edges of `graph` the refinement runs on one thread, however many it is
    /// given ([`MIN_PARALLEL_EDGES`] unless set by [`partition_by_from`]).
    pub min_parallel_edges: usize,
}

impl Partition {
    /// The block of LTS state `state` (`None` beyond the covered states).
    pub fn block_of_state(&self, state: u32) -> Option<u32> {
        self.node_of_state
            .get(state as usize)
            .map(|&x| self.block[x as usize])
    }

    /// Whether `a`-edge `x -a-> y` is inert under `partition` (a tau inside a block of a
    /// branching bisimulation).
    pub fn is_inert(&self, partition: &[u32], x: u32, a: Label, y: u32) -> bool {
        self.branching && a == TAU && partition[x as usize] == partition[y as usize]
    }
}

/// A block and a signature, with their hash computed beforehand (so that many keys can be
/// hashed in parallel before a sequential pass numbers them).
#[derive(Clone, Copy)]
pub(crate) struct HashedKey<'a> {
    hash: u64,
    block: u32,
    signature: &'a [u64],
}

impl<'a> HashedKey<'a> {
    /// The key of `signature` in `block`.
    pub(crate) fn new(block: u32, signature: &'a [u64]) -> HashedKey<'a> {
        let mut h = rustc_hash::FxHasher::default();
        block.hash(&mut h);
        signature.hash(&mut h);
        HashedKey {
            hash: h.finish(),
            block,
            signature,
        }
    }
}

impl<'a> HashedKey<'a> {
    /// The key of `signature` in `block` whose hash [`HashedKey::hash`] gave earlier.
    pub(crate) fn with_hash(hash: u64, block: u32, signature: &'a [u64]) -> HashedKey<'a> {
        HashedKey {
            hash,
            block,
            signature,
        }
    }

    /// The hash of the key.
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }
}

impl Hash for HashedKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for HashedKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        // Signatures are short: an inline loop beats a call to `memcmp`.
        self.hash == other.hash
            && self.block == other.block
            && self.signature.len() == other.signature.len()
            && self
                .signature
                .iter()
                .zip(other.signature)
                .all(|(x, y)| x == y)
    }
}

impl Eq for HashedKey<'_> {}

/// Packs a signature element.
pub(crate) fn pack(label: Label, block: u32) -> u64 {
    (u64::from(label) << 32) | u64::from(block)
}

/// The partition of `lts` modulo the bisimulation `equivalence` (strong, branching or
/// divergence-preserving branching; a trace equivalence is treated as strong).
pub fn partition(lts: &Lts, equivalence: Equivalence) -> Partition {
    partition_on(lts, equivalence, Threads::ONE)
}

/// As [`partition`], computing each round's signatures on `threads` workers (the same
/// partition, block ids included, at every thread count).
pub fn partition_on(lts: &Lts, equivalence: Equivalence, threads: Threads) -> Partition {
    partition_by(lts, equivalence, threads, BranchingAlgorithm::Auto)
}

/// The algorithms that compute the branching bisimulations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchingAlgorithm {
    /// The default (see [`partition_by`]).
    Auto,
    /// Signature refinement, full then incremental rounds, signatures in parallel
    /// (`splitting`).
    Signatures,
    /// Splitting under constellations with the smaller-half rule, after Groote, Jansen,
    /// Keiren and Wijs, on one thread (`branching_gjkw`).
    Constellations,
    /// Signature refinement for at most this many incremental rounds, then splitting under
    /// constellations from the partition reached.
    SignaturesThenConstellations(u32),
}

/// Below this many edges a partition refinement runs on one thread whatever the number of
/// threads asked for. Measured on two cores with `weft reduce` on the corpus's largest
/// systems (1394-fin 341k transitions, treiberStack_impl 565k, dining_10 986k; strong and
/// branching): the parallel rounds took 5-40% more CPU time and 6-29 MB more memory than one
/// thread, and the whole command was no faster (slower on 1394-fin and treiberStack_impl).
pub const MIN_PARALLEL_EDGES: usize = 1 << 20;

/// With [`BranchingAlgorithm::Auto`], the number of incremental signature rounds after which
/// the constellation algorithm takes over.
pub const AUTO_INCREMENTAL_ROUNDS: u32 = 64;

/// As [`partition_on`], computing the branching bisimulations with `algorithm` (strong
/// bisimulation ignores it). Every algorithm gives the same partition (the block ids may
/// differ).
pub fn partition_by(
    lts: &Lts,
    equivalence: Equivalence,
    threads: Threads,
    algorithm: BranchingAlgorithm,
) -> Partition {
    partition_by_from(lts, equivalence, threads, algorithm, MIN_PARALLEL_EDGES)
}

/// As [`partition_by`], refining on `threads` workers from `min_parallel_edges` edges on
/// instead of [`MIN_PARALLEL_EDGES`] (tests pass 0 to run the parallel rounds on small
/// inputs). The partition is the same whatever the threshold.
pub fn partition_by_from(
    lts: &Lts,
    equivalence: Equivalence,
    threads: Threads,
    algorithm: BranchingAlgorithm,
    min_parallel_edges: usize,
) -> Partition {
    let mut p = prepare(lts, equivalence);
    p.min_parallel_edges = min_parallel_edges;
    match (p.branching, algorithm) {
        (false, _) => super::strong::refine(p, threads),
        (true, BranchingAlgorithm::Signatures) => super::splitting::refine(p, threads),
        (true, BranchingAlgorithm::Auto) => {
            partition_by_signatures_then_constellations(p, threads, AUTO_INCREMENTAL_ROUNDS)
        }
        (true, BranchingAlgorithm::SignaturesThenConstellations(rounds)) => {
            partition_by_signatures_then_constellations(p, threads, rounds)
        }
        (true, BranchingAlgorithm::Constellations) => super::branching_gjkw::refine(p),
    }
}

/// Signature refinement for at most `rounds` incremental rounds, then (if not stable yet)
/// splitting under constellations.
fn partition_by_signatures_then_constellations(
    p: Partition,
    threads: Threads,
    rounds: u32,
) -> Partition {
    match super::splitting::refine_for(p, threads, Some(rounds)) {
        (p, true) => p,
        (p, false) => super::branching_gjkw::refine(p),
    }
}

/// As [`partition`], keeping the partition of every round in [`Partition::history`].
pub fn partition_with_history(lts: &Lts, equivalence: Equivalence) -> Partition {
    refine(prepare(lts, equivalence), true)
}

/// The graph to partition: the LTS, or its tau-SCC contraction.
pub(crate) fn prepare(lts: &Lts, equivalence: Equivalence) -> Partition {
    // Covered states: those with transitions, targets and the initial state.
    let n = lts.covered() as usize;
    let branching = matches!(
        equivalence,
        Equivalence::Branching | Equivalence::DivergencePreservingBranching
    );
    if !branching {
        let graph = Graph::build(n, lts.num_transitions() as usize, |x, buf| {
            buf.extend(lts.successors(x))
        });
        return Partition {
            graph,
            node_of_state: (0..n as u32).collect(),
            block: vec![0; n],
            num_blocks: 1,
            divergent: vec![false; n],
            branching: false,
            rounds: 0,
            history: Vec::new(),
            min_parallel_edges: MIN_PARALLEL_EDGES,
        };
    }
    let preserve_divergence = equivalence == Equivalence::DivergencePreservingBranching;
    let node_of_state: Vec<u32> = (0..n as u32).map(|s| lts.tau_scc(s)).collect();
    let nodes = node_of_state
        .iter()
        .map(|&x| x as usize + 1)
        .max()
        .unwrap_or(0);
    // The states of each node, by counting sort (a node's states in increasing order).
    let mut first = vec![0u32; nodes + 1];
    for &x in &node_of_state {
        first[x as usize + 1] += 1;
    }
    for x in 0..nodes {
        first[x + 1] += first[x];
    }
    let mut fill = first.clone();
    let mut members = vec![0u32; n];
    for (s, &x) in node_of_state.iter().enumerate() {
        members[fill[x as usize] as usize] = s as u32;
        fill[x as usize] += 1;
    }
    drop(fill);
    let mut divergent = vec![false; nodes];
    let graph = Graph::build(nodes, lts.num_transitions() as usize, |x, buf| {
        let (lo, hi) = (first[x as usize] as usize, first[x as usize + 1] as usize);
        for &s in &members[lo..hi] {
            for (a, t) in lts.successors(s) {
                let y = node_of_state[t as usize];
                if a == TAU && y == x {
                    divergent[x as usize] = preserve_divergence;
                } else {
                    buf.push((a, y));
                }
            }
        }
    });
    Partition {
        graph,
        node_of_state,
        block: vec![0; nodes],
        num_blocks: u32::from(nodes > 0),
        divergent,
        branching: true,
        rounds: 0,
        history: Vec::new(),
        min_parallel_edges: MIN_PARALLEL_EDGES,
    }
}

/// The signature of every node under `block`, as one arena: node `x`'s is
/// `data[start[x]..start[x + 1]]`, sorted and deduplicated.
struct Signatures {
    start: Vec<usize>,
    data: Vec<u64>,
}

impl Signatures {
    fn of(&self, x: usize) -> &[u64] {
        &self.data[self.start[x]..self.start[x + 1]]
    }
}

/// Computes all signatures under `block` (nodes in increasing order: for the branching
/// graphs, a tau edge goes to a smaller node, so inert successors come first).
fn signatures(p: &Partition, block: &[u32]) -> Signatures {
    let n = p.graph.num_nodes();
    let mut start = Vec::with_capacity(n + 1);
    let mut data: Vec<u64> = Vec::with_capacity(p.graph.labels.len());
    let mut buf: Vec<u64> = Vec::new();
    start.push(0);
    for x in 0..n {
        buf.clear();
        for (a, y) in p.graph.edges(x as u32) {
            if p.is_inert(block, x as u32, a, y) {
                let (lo, hi) = (start[y as usize], start[y as usize + 1]);
                buf.extend_from_slice(&data[lo..hi]);
            } else {
                buf.push(pack(a, block[y as usize]));
            }
        }
        if p.divergent[x] {
            buf.push(DIVERGENCE);
        }
        buf.sort_unstable();
        buf.dedup();
        data.extend_from_slice(&buf);
        start.push(data.len());
    }
    Signatures { start, data }
}

/// Refines `p` until stable.
fn refine(mut p: Partition, keep_history: bool) -> Partition {
    let n = p.graph.num_nodes();
    loop {
        if keep_history {
            p.history.push(p.block.clone());
        }
        p.rounds += 1;
        let sigs = signatures(&p, &p.block);
        let mut ids: FxHashMap<(u32, &[u64]), u32> = FxHashMap::default();
        let mut next = vec![0u32; n];
        for (x, slot) in next.iter_mut().enumerate() {
            let key = (p.block[x], sigs.of(x));
            let fresh = ids.len() as u32;
            *slot = *ids.entry(key).or_insert(fresh);
        }
        let count = ids.len() as u32;
        drop(ids);
        let stable = count == p.num_blocks;
        p.block = next;
        p.num_blocks = count;
        if stable {
            return p;
        }
    }
}

/// The signature of one node under `partition`, computed directly (for explanations):
/// each element with an edge that gives it (the edge after the node's inert route to it;
/// `None` for the divergence mark), sorted by element.
pub(crate) fn explained_signature(
    p: &Partition,
    partition: &[u32],
    node: u32,
) -> Vec<(u64, Option<(Label, u32)>)> {
    let mut out: FxHashMap<u64, Option<(Label, u32)>> = FxHashMap::default();
    let mut seen = vec![node];
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        if p.divergent[x as usize] {
            out.entry(DIVERGENCE).or_insert(None);
        }
        for (a, y) in p.graph.edges(x) {
            if p.is_inert(partition, x, a, y) {
                if !seen.contains(&y) {
                    seen.push(y);
                    stack.push(y);
                }
            } else {
                out.entry(pack(a, partition[y as usize]))
                    .or_insert(Some((a, y)));
            }
        }
    }
    let mut out: Vec<_> = out.into_iter().collect();
    out.sort_unstable_by_key(|(e, _)| *e);
    out
}

/// The label of a signature element (`None` for the divergence mark).
pub(crate) fn element_label(element: u64) -> Option<Label> {
    (element != DIVERGENCE).then_some((element >> 32) as Label)
}
