//! Incremental partition refinement with the "process the smaller half" rule (Hopcroft;
//! Groote–Vaandrager-style splitting for the branching bisimulations).
//!
//! Each round recomputes the signatures of the *dirty* nodes only: the nodes with an edge
//! into a node whose block id changed in the last round, or whose own id changed, closed under
//! inert-tau predecessors (a branching signature includes those of its inert successors).
//! Every other member of a block still has the signature the block had when it was last split
//! (`block_signature`), so a block splits by grouping its dirty members alone. The largest
//! group keeps the block's id (the unchanged members counting as one group, together with the
//! dirty members whose signature did not change); every other group gets a fresh id. A node
//! thus changes id only when it lands in at most half of its former block — at most log2 n
//! times — and each change dirties its predecessors: the number of signature recomputations
//! is O(m log n) (each costs the node's out-degree, and for the branching bisimulations the
//! size of its inert successors' signatures). The blocks are a refinable partition (Valmari):
//! a contiguous range of one array per block, so moving a group out costs its size and a
//! round costs what its dirty nodes cost, never a scan of whole blocks.
//!
//! The first rounds are *full* rounds, as long as each moves at least one node in
//! [`FULL_ROUND_FRACTION`] to a new block: while most nodes are dirty anyway, recomputing every
//! signature and numbering the (block, signature) pairs through one hash table costs less than
//! tracking the dirty nodes and splitting block by block. A full round keeps the same rule:
//! each block's largest group keeps its id, so the incremental rounds that follow start from a
//! state they could have reached themselves.
//!
//! With several threads, the signatures of a round are computed in parallel (full rounds: level
//! by level, a node's level being one more than its inert successors'; incremental rounds: the
//! dirty nodes without a dirty inert successor, then the others in increasing order), and so
//! are the hashes of a full round's keys and the predecessor lists (while the full rounds
//! run); the grouping stays sequential in node order, so the partition and its block ids do not
//! depend on the number of threads.

use super::blocks::Blocks;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::refinement::{pack, HashedKey, Partition, DIVERGENCE};
use crate::threads::Threads;
use crate::ts::{Label, TAU};

/// Below this many dirty nodes a round computes its signatures on one thread.
const PARALLEL_THRESHOLD: usize = 2048;

/// The predecessors of each node (one entry per edge).
struct Predecessors {
    offsets: Vec<usize>,
    list: Vec<u32>,
}

impl Predecessors {
    /// The predecessors along every edge, or along the tau edges only.
    fn of(p: &Partition, only_tau: bool) -> Predecessors {
        let n = p.graph.num_nodes();
        let keep = |a: Label| !only_tau || a == TAU;
        let mut offsets = vec![0usize; n + 1];
        for x in 0..n as u32 {
            for (a, y) in p.graph.edges(x) {
                if keep(a) {
                    offsets[y as usize + 1] += 1;
                }
            }
        }
        for x in 0..n {
            offsets[x + 1] += offsets[x];
        }
        let mut fill = offsets.clone();
        let mut list = vec![0; offsets[n]];
        for x in 0..n as u32 {
            for (a, y) in p.graph.edges(x) {
                if keep(a) {
                    list[fill[y as usize]] = x;
                    fill[y as usize] += 1;
                }
            }
        }
        Predecessors { offsets, list }
    }

    fn get(&self, x: u32) -> &[u32] {
        &self.list[self.offsets[x as usize]..self.offsets[x as usize + 1]]
    }
}

/// Every node's current signature, in one arena: a recomputed signature overwrites the old
/// one when it fits in its place, else it is appended and the old one left as garbage,
/// collected (into a spare arena kept for the next collection) when it outweighs the live
/// signatures. One allocation for all nodes instead of one per node, and no fresh memory
/// once the arenas have grown.
struct Signatures {
    data: Vec<u64>,
    spare: Vec<u64>,
    /// Per node: where its signature starts in `data`, and its length.
    span: Vec<(usize, u32)>,
    /// Total length of the live signatures.
    live: usize,
}

impl Signatures {
    fn new(nodes: usize, room: usize) -> Signatures {
        Signatures {
            data: Vec::with_capacity(room),
            spare: Vec::new(),
            span: vec![(0, 0); nodes],
            live: 0,
        }
    }

    fn of(&self, x: u32) -> &[u64] {
        let (start, len) = self.span[x as usize];
        &self.data[start..start + len as usize]
    }

    /// Replaces the signature of `x` by `new`.
    fn set(&mut self, x: u32, new: &[u64]) {
        let (start, old) = self.span[x as usize];
        let old = old as usize;
        self.live = self.live - old + new.len();
        if new.len() <= old {
            self.data[start..start + new.len()].copy_from_slice(new);
            self.span[x as usize] = (start, new.len() as u32);
        } else {
            self.span[x as usize] = (self.data.len(), new.len() as u32);
            self.data.extend_from_slice(new);
        }
    }

    /// Drops the garbage if it outweighs the live signatures.
    fn collect(&mut self) {
        if self.data.len() <= 2 * self.live + 4096 {
            return;
        }
        let mut data = std::mem::take(&mut self.spare);
        data.clear();
        data.reserve(2 * self.live);
        for span in self.span.iter_mut() {
            let (start, len) = *span;
            *span = (data.len(), len);
            data.extend_from_slice(&self.data[start..start + len as usize]);
        }
        self.spare = std::mem::replace(&mut self.data, data);
    }
}

/// The signature of node `x` under `block`, into `buf` (sorted, deduplicated); inert
/// successors' signatures are read from `sig`.
fn signature_of(p: &Partition, block: &[u32], sig: &Signatures, x: u32, buf: &mut Vec<u64>) {
    buf.clear();
    for (a, y) in p.graph.edges(x) {
        if p.is_inert(block, x, a, y) {
            buf.extend_from_slice(sig.of(y));
        } else {
            buf.push(pack(a, block[y as usize]));
        }
    }
    if p.divergent[x as usize] {
        buf.push(DIVERGENCE);
    }
    buf.sort_unstable();
    buf.dedup();
}

/// Recomputes the signatures of `dirty` (sorted) into `sig`, on `threads` workers.
/// Computes the signatures of `nodes` (none reading another's) in parallel chunks of `chunk`
/// nodes, each chunk's into one arena of its own (no allocation per node), then stores them.
fn signatures_in_parallel(
    p: &Partition,
    block: &[u32],
    sig: &mut Signatures,
    nodes: &[u32],
    chunk: usize,
) {
    let computed: Vec<(Vec<u64>, Vec<u32>)> = {
        let sig: &Signatures = sig;
        nodes
            .par_chunks(chunk)
            .map(|xs| {
                let mut buf = Vec::new();
                let mut data = Vec::with_capacity(4 * xs.len());
                let mut lens = Vec::with_capacity(xs.len());
                for &x in xs {
                    signature_of(p, block, sig, x, &mut buf);
                    data.extend_from_slice(&buf);
                    lens.push(buf.len() as u32);
                }
                (data, lens)
            })
            .collect()
    };
    for (xs, (data, lens)) in nodes.chunks(chunk).zip(computed) {
        let mut at = 0;
        for (&x, &len) in xs.iter().zip(&lens) {
            sig.set(x, &data[at..at + len as usize]);
            at += len as usize;
        }
    }
}

fn recompute(
    p: &Partition,
    sig: &mut Signatures,
    dirty: &[u32],
    dirty_mark: &[bool],
    threads: Threads,
    buf: &mut Vec<u64>,
) {
    let block = &p.block;
    if threads.get() == 1 || dirty.len() < PARALLEL_THRESHOLD {
        for &x in dirty {
            signature_of(p, block, sig, x, buf);
            sig.set(x, buf);
        }
        return;
    }
    // Nodes whose signature reads a dirty inert successor's wait for the parallel part.
    let waits = |x: u32| {
        p.branching
            && p.graph
                .edges(x)
                .any(|(a, y)| dirty_mark[y as usize] && p.is_inert(&p.block, x, a, y))
    };
    let (later, now): (Vec<u32>, Vec<u32>) = dirty.iter().partition(|&&x| waits(x));
    // Each chunk's signatures into one arena of its own (no allocation per node).
    let chunk = (now.len() / (4 * threads.get())).max(256);
    signatures_in_parallel(p, block, sig, &now, chunk);
    for &x in &later {
        signature_of(p, block, sig, x, buf);
        sig.set(x, buf);
    }
}

/// A round recomputes every signature (a *full* round, see [`full_round`]) after a round
/// that moved at least one node in this many to a new block: the next round's dirty nodes
/// would then be most of the graph anyway, and a full round costs less per node.
const FULL_ROUND_FRACTION: usize = 8;

/// Refines `p` (every node in block 0) until stable, on `threads` workers (see the module
/// documentation). Block ids depend only on `p`, not on `threads`.
pub(crate) fn refine(p: Partition, threads: Threads) -> Partition {
    refine_for(p, threads, None).0
}

/// As [`refine`], but with `incremental_rounds`, stops after that many incremental rounds if
/// the partition is not stable yet: returns it (coarser than the stable one, each block a
/// union of its blocks) and whether it is stable.
pub(crate) fn refine_for(
    mut p: Partition,
    threads: Threads,
    incremental_rounds: Option<u32>,
) -> (Partition, bool) {
    let n = p.graph.num_nodes();
    if n == 0 {
        p.num_blocks = 0;
        return (p, true);
    }
    let pool = (threads.get() > 1 && p.graph.num_edges() >= p.min_parallel_edges)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads.get())
                .build()
                .ok()
        })
        .flatten();
    // The predecessor lists are only needed once the rounds become incremental: built on
    // another worker meanwhile.
    let (preds, tau_preds, mut state) = match &pool {
        Some(pool) => {
            let ((preds, tau_preds), state) = pool.install(|| {
                let p = &p;
                rayon::join(
                    || {
                        (
                            Predecessors::of(p, false),
                            p.branching.then(|| Predecessors::of(p, true)),
                        )
                    },
                    || full_rounds(p, Some(pool)),
                )
            });
            (preds, tau_preds, state)
        }
        None => {
            let state = full_rounds(&p, None);
            (
                Predecessors::of(&p, false),
                p.branching.then(|| Predecessors::of(&p, true)),
                state,
            )
        }
    };
    let FullState {
        ref mut blocks,
        ref mut block_signature,
        ref mut sig,
        ref mut changed,
        ..
    } = state;
    p.block = std::mem::take(&mut state.block);
    p.rounds += state.rounds;
    let mut dirty_mark = vec![false; n];
    let mut dirty: Vec<u32> = Vec::new();
    let mut buf: Vec<u64> = Vec::new();
    let mut by_block: Vec<(u32, u32)> = Vec::new();
    let mut members: Vec<u32> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    let mut incremental = 0u32;
    loop {
        if incremental_rounds.is_some_and(|limit| incremental >= limit) && !changed.is_empty() {
            p.num_blocks = blocks.first.len() as u32;
            return (p, false);
        }
        incremental += 1;
        // This round: the changed nodes and their predecessors, closed under inert-tau
        // predecessors.
        for &x in changed.iter() {
            stack.push(x);
            stack.extend(
                preds
                    .get(x)
                    .iter()
                    .copied()
                    .filter(|&q| !dirty_mark[q as usize]),
            );
        }
        while let Some(x) = stack.pop() {
            if dirty_mark[x as usize] {
                continue;
            }
            dirty_mark[x as usize] = true;
            dirty.push(x);
            if let Some(tau_preds) = &tau_preds {
                let bx = p.block[x as usize];
                for &q in tau_preds.get(x) {
                    if !dirty_mark[q as usize] && p.block[q as usize] == bx {
                        stack.push(q);
                    }
                }
            }
        }
        if dirty.is_empty() {
            break;
        }
        p.rounds += 1;
        dirty.sort_unstable();
        sig.collect();
        match pool.as_ref().filter(|_| dirty.len() >= PARALLEL_THRESHOLD) {
            Some(pool) => {
                pool.install(|| recompute(&p, sig, &dirty, &dirty_mark, threads, &mut buf))
            }
            None => recompute(&p, sig, &dirty, &dirty_mark, Threads::ONE, &mut buf),
        }
        // Split the blocks that have dirty members, each by its dirty members' signatures.
        by_block.clear();
        by_block.extend(dirty.iter().map(|&x| (p.block[x as usize], x)));
        by_block.sort_unstable();
        changed.clear();
        let mut at = 0;
        while at < by_block.len() {
            let b = by_block[at].0;
            let mut upto = at;
            while upto < by_block.len() && by_block[upto].0 == b {
                upto += 1;
            }
            members.clear();
            members.extend(by_block[at..upto].iter().map(|&(_, x)| x));
            at = upto;
            split_block(
                &mut p,
                blocks,
                block_signature,
                sig,
                &dirty_mark,
                b,
                &members,
                changed,
            );
        }
        for &x in &dirty {
            dirty_mark[x as usize] = false;
        }
        dirty.clear();
    }
    p.num_blocks = blocks.first.len() as u32;
    (p, true)
}

/// What the full rounds leave for the incremental ones.
struct FullState {
    blocks: Blocks,
    /// The signature of each block's members.
    block_signature: Vec<Vec<u64>>,
    /// Every node's signature, under the partition before the last full round.
    sig: Signatures,
    /// The nodes the last full round moved to another block.
    changed: Vec<u32>,
    /// The block of each node.
    block: Vec<u32>,
    /// Number of full rounds.
    rounds: u32,
}

/// Full rounds from the partition with every node in block 0, while they move many nodes
/// (at least one in [`FULL_ROUND_FRACTION`]); at least one.
fn full_rounds(p: &Partition, pool: Option<&rayon::ThreadPool>) -> FullState {
    let n = p.graph.num_nodes();
    let mut block = vec![0u32; n];
    let mut rounds = 0;
    let mut block_signature: Vec<Vec<u64>> = vec![Vec::new()];
    // Branching signatures hold their inert successors'; room that is never used costs no memory.
    let mut sig = Signatures::new(n, 4 * (p.graph.num_edges() + n));
    let mut changed: Vec<u32> = Vec::new();
    let mut scratch = FullScratch::default();
    loop {
        rounds += 1;
        full_round(
            p,
            &mut block,
            &mut sig,
            &mut block_signature,
            &mut changed,
            pool,
            &mut scratch,
        );
        if changed.len() * FULL_ROUND_FRACTION < n {
            break;
        }
    }
    // The blocks as ranges of one array (each block's nodes in increasing order).
    let blocks = Blocks::of(&block, block_signature.len());
    FullState {
        blocks,
        block_signature,
        sig,
        changed,
        block,
        rounds,
    }
}

/// Buffers reused by the full rounds.
#[derive(Default)]
struct FullScratch {
    level: Vec<u32>,
    by_level: Vec<u32>,
    level_first: Vec<usize>,
    buf: Vec<u64>,
    hashes: Vec<u64>,
    group_of: Vec<u32>,
}

/// One full round: every node's signature under `block`, then every block split by its
/// members' signatures: the largest group keeps the block's id (the one with the smallest
/// node among equals), the others get fresh ids in order of their smallest nodes. Pushes the
/// nodes that got a new id onto `changed` (cleared first), in increasing order.
fn full_round(
    p: &Partition,
    block: &mut [u32],
    sig: &mut Signatures,
    block_signature: &mut Vec<Vec<u64>>,
    changed: &mut Vec<u32>,
    pool: Option<&rayon::ThreadPool>,
    scratch: &mut FullScratch,
) {
    let n = p.graph.num_nodes();
    sig.collect();
    match pool.filter(|_| n >= PARALLEL_THRESHOLD) {
        Some(pool) => pool.install(|| all_signatures_by_level(p, block, sig, scratch)),
        None => {
            for x in 0..n as u32 {
                signature_of(p, block, sig, x, &mut scratch.buf);
                sig.set(x, &scratch.buf);
            }
        }
    }
    // The keys' hashes, in parallel.
    let hashes = &mut scratch.hashes;
    hashes.clear();
    hashes.resize(n, 0);
    let hash_of = |x: usize| HashedKey::new(block[x], sig.of(x as u32)).hash();
    match pool.filter(|_| n >= PARALLEL_THRESHOLD) {
        Some(pool) => pool.install(|| {
            hashes
                .par_chunks_mut(4096)
                .enumerate()
                .for_each(|(i, chunk)| {
                    for (j, h) in chunk.iter_mut().enumerate() {
                        *h = hash_of(i * 4096 + j);
                    }
                })
        }),
        None => {
            for (x, h) in hashes.iter_mut().enumerate() {
                *h = hash_of(x);
            }
        }
    }
    // Groups of (block, signature) in order of first appearance; the largest group of each
    // block keeps the block's id (the first among equals), so that a node changes id only
    // when it lands in at most half of its block.
    let group_of = &mut scratch.group_of;
    group_of.clear();
    let mut groups: Vec<(u32, u32, u32)> = Vec::new(); // (block, size, a member)
    {
        let mut ids: FxHashMap<HashedKey<'_>, u32> = FxHashMap::default();
        ids.reserve(block_signature.len().max(1024));
        for x in 0..n {
            let b = block[x];
            let key = HashedKey::with_hash(hashes[x], b, sig.of(x as u32));
            let g = *ids.entry(key).or_insert_with(|| {
                groups.push((b, 0, x as u32));
                (groups.len() - 1) as u32
            });
            groups[g as usize].1 += 1;
            group_of.push(g);
        }
    }
    let old_count = block_signature.len();
    let mut keeper = vec![u32::MAX; old_count];
    for (g, &(b, size, _)) in groups.iter().enumerate() {
        let k = &mut keeper[b as usize];
        if *k == u32::MAX || size > groups[*k as usize].1 {
            *k = g as u32;
        }
    }
    let id_of_group: Vec<u32> = groups
        .iter()
        .enumerate()
        .map(|(g, &(b, _, member))| {
            let signature = sig.of(member).to_vec();
            if keeper[b as usize] == g as u32 {
                block_signature[b as usize] = signature;
                b
            } else {
                block_signature.push(signature);
                (block_signature.len() - 1) as u32
            }
        })
        .collect();
    changed.clear();
    for (x, &g) in group_of.iter().enumerate() {
        let id = id_of_group[g as usize];
        if id != block[x] {
            block[x] = id;
            changed.push(x as u32);
        }
    }
}

/// Every node's signature under `block`, in parallel: a node waits for its inert successors,
/// so the nodes go in levels (level 0: no inert successor; level k + 1: inert successors of
/// level k at most), each level's nodes computed in parallel.
fn all_signatures_by_level(
    p: &Partition,
    block: &[u32],
    sig: &mut Signatures,
    scratch: &mut FullScratch,
) {
    let n = p.graph.num_nodes();
    let FullScratch {
        level,
        by_level,
        level_first,
        buf,
        ..
    } = scratch;
    level.clear();
    level.resize(n, 0);
    let mut levels = 1usize;
    if p.branching {
        // Tau edges go to smaller nodes: inert successors come first.
        for x in 0..n as u32 {
            let mut l = 0u32;
            for (a, y) in p.graph.edges(x) {
                if a != TAU {
                    // Edges are sorted by label: tau (0) first.
                    break;
                }
                if block[y as usize] == block[x as usize] {
                    l = l.max(level[y as usize] + 1);
                }
            }
            level[x as usize] = l;
            levels = levels.max(l as usize + 1);
        }
    }
    level_first.clear();
    level_first.resize(levels + 1, 0);
    for &l in level.iter() {
        level_first[l as usize + 1] += 1;
    }
    for l in 0..levels {
        level_first[l + 1] += level_first[l];
    }
    by_level.clear();
    by_level.resize(n, 0);
    {
        let mut fill = level_first.clone();
        for (x, &l) in level.iter().enumerate() {
            by_level[fill[l as usize]] = x as u32;
            fill[l as usize] += 1;
        }
    }
    let workers = rayon::current_num_threads();
    for l in 0..levels {
        let nodes = &by_level[level_first[l]..level_first[l + 1]];
        if nodes.len() < PARALLEL_THRESHOLD {
            for &x in nodes {
                signature_of(p, block, sig, x, buf);
                sig.set(x, buf);
            }
            continue;
        }
        let chunk = nodes.len().div_ceil(4 * workers).max(256);
        signatures_in_parallel(p, block, sig, nodes, chunk);
    }
}

/// Splits block `b` by the signatures of its dirty members `dirty` (in increasing order);
/// pushes the nodes that got a new id onto `changed`.
#[allow(clippy::too_many_arguments)]
fn split_block(
    p: &mut Partition,
    blocks: &mut Blocks,
    block_signature: &mut Vec<Vec<u64>>,
    sig: &Signatures,
    dirty_mark: &[bool],
    b: u32,
    dirty: &[u32],
    changed: &mut Vec<u32>,
) {
    let unchanged = blocks.size(b) as usize - dirty.len();
    // Groups of dirty members by signature, in order of first appearance; the group with
    // the block's signature joins the unchanged members (the "stay" group).
    let mut index: FxHashMap<&[u64], usize> = FxHashMap::default();
    let mut groups: Vec<(&[u64], Vec<u32>)> = Vec::new();
    let stay_key: Option<&[u64]> = (unchanged > 0).then(|| block_signature[b as usize].as_slice());
    let mut stay_dirty = 0usize;
    for &x in dirty {
        let key = sig.of(x);
        if Some(key) == stay_key {
            stay_dirty += 1;
            continue;
        }
        let next = groups.len();
        let g = *index.entry(key).or_insert(next);
        if g == next {
            groups.push((key, Vec::new()));
        }
        groups[g].1.push(x);
    }
    let stay_size = if unchanged > 0 {
        unchanged + stay_dirty
    } else {
        0
    };
    let parts = groups.len() + usize::from(stay_size > 0);
    if parts <= 1 {
        if let Some((key, _)) = groups.first() {
            block_signature[b as usize] = key.to_vec();
        }
        return;
    }
    // The keeper: the largest group, the stay group first among equals.
    let mut keeper: Option<usize> = None; // None: the stay group
    let mut best = stay_size;
    for (g, (_, members)) in groups.iter().enumerate() {
        if members.len() > best {
            best = members.len();
            keeper = Some(g);
        }
    }
    if let Some(k) = keeper {
        if stay_size > 0 {
            // The stay group moves out: the members not in a dirty group.
            let moving: Vec<u32> = blocks
                .members(b)
                .iter()
                .copied()
                .filter(|&x| !dirty_mark[x as usize] || Some(sig.of(x)) == stay_key)
                .collect();
            let fresh = blocks.first.len() as u32;
            blocks.carve(b, &moving, fresh);
            block_signature.push(block_signature[b as usize].clone());
            for &x in &moving {
                p.block[x as usize] = fresh;
            }
            changed.extend_from_slice(&moving);
        }
        block_signature[b as usize] = groups[k].0.to_vec();
    }
    for (g, (key, members)) in groups.iter().enumerate() {
        if Some(g) == keeper {
            continue;
        }
        let fresh = blocks.first.len() as u32;
        blocks.carve(b, members, fresh);
        block_signature.push(key.to_vec());
        for &x in members {
            p.block[x as usize] = fresh;
        }
        changed.extend_from_slice(members);
    }
}
