//! Strong bisimulation in O(m log n): Paige–Tarjan's algorithm with labels and the
//! "process the smaller half" rule on constellations (as in Fernandez's and Valmari's
//! formulations), on refinable partitions.
//!
//! Two partitions of the nodes are kept: the *blocks* (the answer being refined) and the
//! coarser *constellations* (unions of blocks). The invariant: every block is stable with
//! respect to every (label, constellation) pair — either all of its nodes have an `a`-edge
//! into constellation `S` or none has. Each node keeps, per (label, constellation) where it
//! has edges, a counter of those edges; every edge points to the counter of its source,
//! label and target constellation.
//!
//! A step takes a constellation `S` made of several blocks, moves its smaller block `B` out
//! into a constellation of its own, and restores the invariant for `(a, B)` and `(a, S \ B)`
//! by looking at the edges into `B` only: per label `a`, the sources of `a`-edges into `B`
//! are split from the rest of their blocks; among them, those whose counter for `(a, S)`
//! exceeds their number of `a`-edges into `B` (they also reach `S \ B`) are split from those
//! that reach `B` alone. A node is in the moved block at most log2 n times, so the edges
//! into moved blocks number O(m log n) in all. When every constellation is one block, the
//! blocks are stable with respect to each other: the coarsest strong bisimulation.
//!
//! The result, as a partition of the nodes, does not depend on the order of the steps; the
//! block ids do, but [`super::quotient`] renumbers blocks canonically.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::refinement::{pack, Graph, HashedKey, Partition};
use crate::threads::Threads;
use crate::ts::Label;

/// The blocks as a refinable partition ([`super::blocks::Blocks`]) with room to mark a prefix
/// of each block (Valmari–Lehtinen's refinable partition).
struct MarkedBlocks {
    parts: super::blocks::Blocks,
    block_of: Vec<u32>,
    /// Number of marked nodes of each block (the prefix `first..first + marked`).
    marked: Vec<u32>,
    /// Blocks with marked nodes.
    touched: Vec<u32>,
}

impl MarkedBlocks {
    /// The blocks of `block_of` (ids `0..count`, each used), each block's nodes in increasing
    /// order.
    fn from_partition(block_of: Vec<u32>, count: u32) -> MarkedBlocks {
        MarkedBlocks {
            parts: super::blocks::Blocks::of(&block_of, count as usize),
            block_of,
            marked: vec![0; count as usize],
            touched: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.parts.first.len()
    }

    fn size(&self, b: u32) -> u32 {
        self.parts.size(b)
    }

    fn members(&self, b: u32) -> &[u32] {
        self.parts.members(b)
    }

    /// Marks node `x` (moves it into its block's marked prefix).
    #[inline]
    fn mark(&mut self, x: u32) {
        let b = self.block_of[x as usize] as usize;
        let at = self.parts.pos[x as usize];
        let boundary = self.parts.first[b] + self.marked[b];
        if at < boundary {
            return;
        }
        if self.marked[b] == 0 {
            self.touched.push(b as u32);
        }
        let other = self.parts.elems[boundary as usize];
        self.parts.elems.swap(at as usize, boundary as usize);
        self.parts.pos[other as usize] = at;
        self.parts.pos[x as usize] = boundary;
        self.marked[b] += 1;
    }

    /// Splits every touched block into its marked and unmarked nodes; the smaller part gets a
    /// fresh id. Calls `born(old, new)` for each split.
    fn split(&mut self, mut born: impl FnMut(u32, u32)) {
        while let Some(b) = self.touched.pop() {
            let bi = b as usize;
            let k = self.marked[bi];
            self.marked[bi] = 0;
            let size = self.parts.end[bi] - self.parts.first[bi];
            if k == size {
                continue;
            }
            let fresh = self.parts.first.len() as u32;
            let cut = self.parts.first[bi] + k;
            let (lo, hi) = if k <= size - k {
                let range = (self.parts.first[bi], cut);
                self.parts.first[bi] = cut;
                range
            } else {
                let range = (cut, self.parts.end[bi]);
                self.parts.end[bi] = cut;
                range
            };
            self.parts.first.push(lo);
            self.parts.end.push(hi);
            self.marked.push(0);
            for &x in &self.parts.elems[lo as usize..hi as usize] {
                self.block_of[x as usize] = fresh;
            }
            born(b, fresh);
        }
    }
}

/// The constellations: each a set of blocks, kept as a doubly linked list through the blocks
/// (no allocation per constellation).
struct Constellations {
    /// The constellation of each block.
    of_block: Vec<u32>,
    /// The neighbours of each block in its constellation's list (`NONE` at the ends).
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The first block and the number of blocks of each constellation.
    head: Vec<u32>,
    count: Vec<u32>,
    /// Constellations with at least two blocks (possibly listed twice; checked on use).
    compound: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Constellations {
    /// One constellation holding blocks `0..blocks`, with room for `room` blocks.
    fn new(blocks: u32, room: usize) -> Constellations {
        let room = room.max(blocks as usize);
        let mut cons = Constellations {
            of_block: Vec::with_capacity(room),
            next: Vec::with_capacity(room),
            prev: Vec::with_capacity(room),
            head: Vec::with_capacity(room),
            count: Vec::with_capacity(room),
            compound: Vec::new(),
        };
        cons.head.push(NONE);
        cons.count.push(0);
        cons.of_block.resize(blocks as usize, 0);
        cons.next.resize(blocks as usize, NONE);
        cons.prev.resize(blocks as usize, NONE);
        for b in (0..blocks).rev() {
            cons.link(0, b);
        }
        cons
    }

    /// Puts block `b` (already known to `of_block`) at the head of constellation `c`.
    fn link(&mut self, c: u32, b: u32) {
        let (ci, bi) = (c as usize, b as usize);
        self.of_block[bi] = c;
        self.prev[bi] = NONE;
        self.next[bi] = self.head[ci];
        if self.head[ci] != NONE {
            self.prev[self.head[ci] as usize] = b;
        }
        self.head[ci] = b;
        self.count[ci] += 1;
        if self.count[ci] == 2 {
            self.compound.push(c);
        }
    }

    /// A new block `b` (the next id) in the constellation of block `old`.
    fn add_block(&mut self, old: u32, b: u32) {
        debug_assert_eq!(b as usize, self.of_block.len());
        let c = self.of_block[old as usize];
        self.of_block.push(c);
        self.next.push(NONE);
        self.prev.push(NONE);
        self.link(c, b);
    }

    /// Moves block `b` out of its constellation into a new one; returns the new one's id.
    fn move_out(&mut self, b: u32) -> u32 {
        let bi = b as usize;
        let c = self.of_block[bi] as usize;
        let (p, n) = (self.prev[bi], self.next[bi]);
        if p == NONE {
            self.head[c] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.count[c] -= 1;
        let fresh = self.head.len() as u32;
        self.head.push(NONE);
        self.count.push(0);
        self.link(fresh, b);
        fresh
    }
}

/// The signatures of one round of a range of nodes: node `first + i`'s is
/// `data[start[i]..start[i + 1]]`, with the hash of its key in `hash[i]`.
#[derive(Default)]
struct SignatureChunk {
    first: usize,
    data: Vec<u64>,
    start: Vec<usize>,
    hash: Vec<u64>,
}

impl SignatureChunk {
    /// Computes the signatures of nodes `first..end` under `block`.
    fn compute(&mut self, p: &Partition, block: &[u32], first: usize, end: usize) {
        let (labels, targets) = (p.graph.labels(), p.graph.targets());
        self.first = first;
        self.data.clear();
        self.start.clear();
        self.hash.clear();
        self.start.push(0);
        for x in first as u32..end as u32 {
            let (lo, hi) = p.graph.range(x);
            let at = self.data.len();
            self.data.extend(
                labels[lo..hi]
                    .iter()
                    .zip(&targets[lo..hi])
                    .map(|(&a, &y)| pack(a, block[y as usize])),
            );
            let sig = &mut self.data[at..];
            // Edges come sorted by (label, target): often already sorted by (label, block).
            if sig.windows(2).any(|w| w[0] >= w[1]) {
                sig.sort_unstable();
                let mut kept = at;
                for i in at..self.data.len() {
                    if i == at || self.data[i] != self.data[kept - 1] {
                        self.data[kept] = self.data[i];
                        kept += 1;
                    }
                }
                self.data.truncate(kept);
            }
            self.start.push(self.data.len());
            let key = HashedKey::new(block[x as usize], &self.data[at..]);
            self.hash.push(key.hash());
        }
    }
}

/// One round of signature refinement: the new block of each node (ids in order of first
/// appearance) and the number of blocks. A node's signature is its block and the set of
/// (label, target block) of its edges. The signatures are computed in chunks of nodes, in
/// parallel on `pool`; the numbering is sequential, in node order.
fn signature_round(
    p: &Partition,
    block: &[u32],
    chunks: &mut Vec<SignatureChunk>,
    pool: Option<&rayon::ThreadPool>,
) -> (Vec<u32>, u32) {
    let n = p.graph.num_nodes();
    let pieces = match pool {
        Some(pool) if n >= 4096 => 4 * pool.current_num_threads(),
        _ => 1,
    };
    let size = n.div_ceil(pieces).max(1);
    chunks.resize_with(n.div_ceil(size), SignatureChunk::default);
    match pool {
        Some(pool) if chunks.len() > 1 => pool.install(|| {
            chunks
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, chunk)| chunk.compute(p, block, i * size, ((i + 1) * size).min(n)))
        }),
        _ => {
            for (i, chunk) in chunks.iter_mut().enumerate() {
                chunk.compute(p, block, i * size, ((i + 1) * size).min(n));
            }
        }
    }
    let mut ids: FxHashMap<HashedKey<'_>, u32> = FxHashMap::default();
    ids.reserve(n.min(1 << 16));
    let mut next = Vec::with_capacity(n);
    for chunk in chunks.iter() {
        for i in 0..chunk.start.len() - 1 {
            let key = HashedKey::with_hash(
                chunk.hash[i],
                block[chunk.first + i],
                &chunk.data[chunk.start[i]..chunk.start[i + 1]],
            );
            let fresh = ids.len() as u32;
            next.push(*ids.entry(key).or_insert(fresh));
        }
    }
    let count = ids.len() as u32;
    (next, count)
}

/// A signature round stops the signature phase when it multiplies the number of blocks by
/// less than this.
const SIGNATURE_GROWTH: f64 = 1.5;

/// Refines `p` (every node in block 0, strong bisimulation) to the coarsest strong
/// bisimulation: signature rounds while they multiply the number of blocks (each costs one
/// pass over the edges, and a few such rounds often finish the job), then the splitter steps
/// above from their partition. `p.rounds` counts the signature rounds and the splitters.
pub(crate) fn refine(p: Partition, threads: Threads) -> Partition {
    refine_with(p, threads, |rounds, growth| {
        rounds < 2 || growth >= SIGNATURE_GROWTH
    })
}

/// The signature rounds of [`refine_with`] from the partition with one block: the blocks,
/// their number, the number of rounds and whether the partition is already stable.
fn signature_phase(
    p: &Partition,
    pool: Option<&rayon::ThreadPool>,
    keep_signing: &(impl Fn(u32, f64) -> bool + Sync),
) -> (Vec<u32>, u32, u32, bool) {
    let n = p.graph.num_nodes();
    let mut block = vec![0u32; n];
    let mut count = 1u32;
    let mut chunks = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let (next, next_count) = signature_round(p, &block, &mut chunks, pool);
        let stable = next_count == count;
        let growth = f64::from(next_count) / f64::from(count);
        block = next;
        count = next_count;
        if stable || count as usize == n {
            return (block, count, rounds, true);
        }
        if !keep_signing(p.rounds + rounds, growth) {
            return (block, count, rounds, false);
        }
    }
}

/// The tables of the splitter phase, which depend on the graph alone.
struct SplitterTables {
    /// The edges into each node `y`: `in_edges[in_first[y]..in_first[y + 1]]`, as
    /// (label, source, edge) sorted by label and source.
    in_first: Vec<u32>,
    in_edges: Vec<(Label, u32, u32)>,
    /// One counter per (node, label) to start with (the constellation of all nodes), holding
    /// the number of the node's edges with the label; `edge_counter` gives each edge's.
    counter: Vec<u32>,
    edge_counter: Vec<u32>,
}

impl SplitterTables {
    fn of(graph: &Graph) -> SplitterTables {
        let n = graph.num_nodes();
        let m = graph.num_edges();
        let labels = graph.labels();
        let mut in_first = vec![0u32; n + 1];
        for &y in graph.targets() {
            in_first[y as usize + 1] += 1;
        }
        for x in 0..n {
            in_first[x + 1] += in_first[x];
        }
        let mut in_edges: Vec<(Label, u32, u32)> = vec![(0, 0, 0); m];
        {
            // Filling in order of source makes each node's list sorted by source; a stable
            // sort by label per node then gives (label, source) order.
            let mut fill = in_first.clone();
            for x in 0..n as u32 {
                let (lo, hi) = graph.range(x);
                for (i, (&a, &y)) in labels[lo..hi]
                    .iter()
                    .zip(&graph.targets()[lo..hi])
                    .enumerate()
                {
                    in_edges[fill[y as usize] as usize] = (a, x, (lo + i) as u32);
                    fill[y as usize] += 1;
                }
            }
            for y in 0..n {
                let list = &mut in_edges[in_first[y] as usize..in_first[y + 1] as usize];
                if list.windows(2).any(|w| w[0].0 > w[1].0) {
                    list.sort_by_key(|&(a, _, _)| a);
                }
            }
        }
        // The edges of a node are sorted by label.
        let mut counter: Vec<u32> = Vec::with_capacity(m);
        let mut edge_counter = vec![0u32; m];
        for x in 0..n as u32 {
            let (lo, hi) = graph.range(x);
            let mut at = lo;
            while at < hi {
                let mut upto = at + 1;
                while upto < hi && labels[upto] == labels[at] {
                    upto += 1;
                }
                edge_counter[at..upto].fill(counter.len() as u32);
                counter.push((upto - at) as u32);
                at = upto;
            }
        }
        SplitterTables {
            in_first,
            in_edges,
            counter,
            edge_counter,
        }
    }
}

/// As [`refine`], with signature rounds while `keep_signing(rounds so far, growth of the
/// last round)` (at least one: it makes the blocks stable with respect to (a, all nodes)).
fn refine_with(
    mut p: Partition,
    threads: Threads,
    keep_signing: impl Fn(u32, f64) -> bool + Sync,
) -> Partition {
    let n = p.graph.num_nodes();
    if n == 0 {
        p.num_blocks = 0;
        return p;
    }
    let pool = (threads.get() > 1 && n >= 4096 && p.graph.num_edges() >= p.min_parallel_edges)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads.get())
                .build()
                .ok()
        })
        .flatten();
    // The splitter phase's tables depend on the graph alone: with a second worker they are
    // built while the signature rounds run (and dropped if those finish the job).
    let (signed, tables) = match &pool {
        Some(pool) => {
            let q = &p;
            let (tables, signed) = pool.install(|| {
                rayon::join(
                    || SplitterTables::of(&q.graph),
                    || signature_phase(q, Some(pool), &keep_signing),
                )
            });
            (signed, Some(tables))
        }
        None => (signature_phase(&p, None, &keep_signing), None),
    };
    let (block, count, rounds, finished) = signed;
    p.rounds += rounds;
    if finished {
        p.num_blocks = count;
        p.block = block;
        return p;
    }
    let SplitterTables {
        in_first,
        in_edges,
        mut counter,
        mut edge_counter,
    } = tables.unwrap_or_else(|| SplitterTables::of(&p.graph));

    // The signature rounds left every block stable with respect to (a, all nodes).
    let mut blocks = MarkedBlocks::from_partition(block, count);
    let mut cons = Constellations::new(count, n.min(1 << 20));
    // (label, source, edge) of the edges into the block being moved out.
    let mut gathered: Vec<(Label, u32, u32)> = Vec::new();
    // Sources (with an edge into the moved block) that also reach the rest of the old
    // constellation.
    let mut both: Vec<u32> = Vec::new();
    while let Some(s) = cons.compound.pop() {
        if cons.count[s as usize] < 2 {
            continue;
        }
        let b0 = cons.head[s as usize];
        let b1 = cons.next[b0 as usize];
        let moved = if blocks.size(b1) < blocks.size(b0) {
            b1
        } else {
            b0
        };
        cons.move_out(moved);
        if cons.count[s as usize] >= 2 {
            cons.compound.push(s);
        }
        p.rounds += 1;

        let into =
            |y: u32| &in_edges[in_first[y as usize] as usize..in_first[y as usize + 1] as usize];
        let incoming: &[(Label, u32, u32)] = match blocks.members(moved) {
            &[y] => into(y),
            members => {
                gathered.clear();
                for &y in members {
                    gathered.extend_from_slice(into(y));
                }
                gathered.sort_unstable();
                &gathered
            }
        };
        for group in incoming.chunk_by(|u, v| u.0 == v.0) {
            // Counters: the edges of each source into the moved block get their own.
            both.clear();
            for run in group.chunk_by(|u, v| u.1 == v.1) {
                let x = run[0].1;
                let old = edge_counter[run[0].2 as usize] as usize;
                // When all of them go into the moved block, the counter stays theirs; so
                // there are never more counters than edges.
                if counter[old] > run.len() as u32 {
                    let fresh = counter.len() as u32;
                    counter.push(run.len() as u32);
                    counter[old] -= run.len() as u32;
                    for &(_, _, e) in run {
                        edge_counter[e as usize] = fresh;
                    }
                    both.push(x);
                }
                blocks.mark(x);
            }
            // Split off the sources with an edge into the moved block, then those of them
            // that also reach the rest of the old constellation.
            blocks.split(|old, fresh| cons.add_block(old, fresh));
            if !both.is_empty() {
                for &x in &both {
                    blocks.mark(x);
                }
                blocks.split(|old, fresh| cons.add_block(old, fresh));
            }
        }
    }
    p.num_blocks = blocks.len() as u32;
    p.block = blocks.block_of;
    p
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::refine_with;
    use crate::lts::Lts;
    use crate::reduce::refinement::{partition_with_history, prepare};
    use crate::reduce::Equivalence;
    use crate::threads::Threads;

    /// Whether two block assignments are the same partition.
    fn same_partition(a: &[u32], b: &[u32]) -> bool {
        let mut pairs: Vec<(u32, u32)> = a.iter().copied().zip(b.iter().copied()).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let distinct = |mut v: Vec<u32>| {
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        a.len() == b.len()
            && pairs.len() == distinct(a.to_vec())
            && pairs.len() == distinct(b.to_vec())
    }

    fn lts_strategy() -> impl Strategy<Value = Lts> {
        (1u32..40, 2usize..4).prop_flat_map(|(n, k)| {
            let transition = (0..n, 0..k as u32, 0..n);
            prop::collection::vec(transition, 0..(3 * n as usize + 2)).prop_map(move |ts| {
                let names = (0..k).map(|i| format!("l{i}")).collect();
                Lts::from_transitions(0, n, names, &ts)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The splitter phase alone (after the one signature round it needs) and the
        /// signature phase alone give the partition of the full signature fixpoint.
        #[test]
        fn both_phases_match_signature_refinement(lts in lts_strategy()) {
            let expected = partition_with_history(&lts, Equivalence::Strong).block;
            let splitters = refine_with(prepare(&lts, Equivalence::Strong), Threads::ONE, |_, _| false);
            prop_assert!(same_partition(&splitters.block, &expected));
            let signatures = refine_with(prepare(&lts, Equivalence::Strong), Threads::ONE, |_, _| true);
            prop_assert!(same_partition(&signatures.block, &expected));
            prop_assert_eq!(splitters.num_blocks, signatures.num_blocks);
        }
    }
}
