//! Branching bisimulation by splitting blocks under constellations, after Groote, Jansen,
//! Keiren and Wijs (ACM TOCL 2017; Jansen, Groote, Keiren, Wijs, TACAS 2020): the
//! Groote–Vaandrager refinement with Paige–Tarjan's "process the smaller half".
//!
//! The graph is the tau-SCC contraction (tau edges go to smaller nodes, the tau graph is
//! acyclic). Two partitions are kept: the *blocks* and the coarser *constellations* (each a
//! union of blocks). A tau edge inside a block is *inert*; a *bottom* node has no inert edge.
//! The invariant: every block `R` is stable under every pair `(a, C)` of a label and a
//! constellation: either no node of `R` has a non-inert `a`-edge into `C`, or every bottom
//! node of `R` has one. (A stable block's nodes can all reach, by inert steps, the same
//! pairs.) When every constellation is a single block, the blocks are the branching
//! bisimulation classes.
//!
//! Each step takes a nontrivial constellation `C`, moves out one of its blocks `B` with at most
//! half of its nodes into a constellation of its own, and restores the invariant for the
//! blocks with edges into `B`, label by label:
//!
//! - the *main split* of such a block `R` under `(a, B)`: the nodes that reach an `a`-edge into
//!   `B` by inert steps, and the others. Both sides are computed at once, a node at a time
//!   each (the first side from the nodes with a direct edge, backwards along inert edges; the
//!   second from the bottom nodes without one, a node joining when all its inert successors
//!   have), and the side that finishes first is moved out: the cost is that of the smaller
//!   side (the log n in O(m log n));
//! - the *co-split* of the side that reaches `(a, B)` under `(a, C \ B)`: its bottom nodes
//!   whose `a`-edges into `C` all go to `B` lack it, and with them the nodes all of whose
//!   inert successors lack it (and that lack a direct edge).
//!
//! A split makes the tau edges from one side to the other non-inert, so some nodes become
//! bottom nodes (each at most once) and some blocks get a new pair (tau, their own
//! constellation). Those blocks are restored node by node ([`new_bottoms`], after the
//! "stabilise new bottom states" step of Jansen, Groote, Keiren and Wijs, TACAS 2020): a
//! block that ever needs it keeps its *block–pair slices* ([`slices`]: the lists of its
//! non-inert edges with each pair, and the list of its pairs), so a new bottom node is
//! checked by its own out-edges alone, and a block splits under its new tau pair as under a
//! constellation. Where new bottom nodes lack pairs, the block splits under each slice one of
//! them lacks, at the cost of the smaller side ([`slice_split`]); whole-block signing (the
//! signatures of its nodes: the pairs they reach by inert steps) is left to the initial
//! partition.
//!
//! The worst case of the former whole-block signing, a long tau chain over bottom nodes that
//! split apart one constellation step at a time (`bottom_cascade_chained` in
//! `scripts/reduce-bench.sh`, tested in `tests/reduce_props.rs`), is linear.
//!
//! For divergence-preserving branching bisimulation a divergent node (a contracted tau cycle)
//! has an extra edge to itself with a label of its own, [`DIVERGENT_LABEL`], never inert.
//!
//! Everything runs on one thread in a fixed order (sorted lists, no iteration over hash
//! tables), so the partition is the same at every run; the quotient renumbers its blocks in
//! any case.

mod new_bottoms;
mod slice_split;
mod slices;

use super::blocks::Blocks;
use rustc_hash::FxHashMap;
use slices::Slices;

use super::refinement::{pack, Partition};
use crate::ts::{Label, TAU};

/// The label of a divergent node's extra edge to itself (no real label has this id).
const DIVERGENT_LABEL: Label = Label::MAX;

/// The graph with its divergence edges, forwards and backwards.
struct Edges {
    /// Node `x`'s out-edges are `out[out_first[x]..out_first[x + 1]]`, sorted by (label,
    /// target): tau first, the divergence edge last.
    out_first: Vec<usize>,
    out: Vec<(Label, u32)>,
    /// Node `y`'s in-edges `(label, source)`, sorted: tau first; and their indices into `out`.
    in_first: Vec<usize>,
    inn: Vec<(Label, u32)>,
    inn_edge: Vec<u32>,
}

impl Edges {
    fn of(p: &Partition) -> Edges {
        let n = p.graph.num_nodes();
        let mut out_first = Vec::with_capacity(n + 1);
        let mut out = Vec::with_capacity(p.graph.num_edges() + n);
        out_first.push(0);
        let mut in_count = vec![0usize; n + 1];
        for x in 0..n as u32 {
            for (a, y) in p.graph.edges(x) {
                out.push((a, y));
                in_count[y as usize + 1] += 1;
            }
            if p.divergent[x as usize] {
                out.push((DIVERGENT_LABEL, x));
                in_count[x as usize + 1] += 1;
            }
            out_first.push(out.len());
        }
        for y in 0..n {
            in_count[y + 1] += in_count[y];
        }
        let in_first = in_count;
        let mut fill = in_first.clone();
        let mut triples = vec![(0, 0, 0); out.len()];
        for x in 0..n as u32 {
            let first = out_first[x as usize];
            for (k, &(a, y)) in out[first..out_first[x as usize + 1]].iter().enumerate() {
                triples[fill[y as usize]] = (a, x, (first + k) as u32);
                fill[y as usize] += 1;
            }
        }
        for y in 0..n {
            triples[in_first[y]..in_first[y + 1]].sort_unstable();
        }
        let inn = triples.iter().map(|&(a, x, _)| (a, x)).collect();
        let inn_edge = triples.iter().map(|&(_, _, e)| e).collect();
        Edges {
            out_first,
            out,
            in_first,
            inn,
            inn_edge,
        }
    }

    fn out(&self, x: u32) -> &[(Label, u32)] {
        &self.out[self.out_first[x as usize]..self.out_first[x as usize + 1]]
    }

    fn inn(&self, y: u32) -> &[(Label, u32)] {
        &self.inn[self.in_first[y as usize]..self.in_first[y as usize + 1]]
    }

    /// The tau successors of `x`.
    fn tau_out(&self, x: u32) -> impl Iterator<Item = u32> + '_ {
        self.out(x)
            .iter()
            .take_while(|&&(a, _)| a == TAU)
            .map(|&(_, y)| y)
    }

    /// The source of edge `e` (an index into `out`), by binary search (for the rare splits
    /// under one slice: an array would cost 4 bytes per edge).
    fn source(&self, e: u32) -> u32 {
        (self.out_first.partition_point(|&first| first <= e as usize) - 1) as u32
    }

    /// The index into `out` of the edge `x -a-> y` at `out(x)[k]`.
    fn index(&self, x: u32, k: usize) -> u32 {
        (self.out_first[x as usize] + k) as u32
    }

    /// The in-edges of `y` with their indices into `out`: `(label, source, index)`.
    fn inn_indexed(&self, y: u32) -> impl Iterator<Item = (Label, u32, u32)> + '_ {
        let range = self.in_first[y as usize]..self.in_first[y as usize + 1];
        self.inn[range.clone()]
            .iter()
            .zip(&self.inn_edge[range])
            .map(|(&(a, x), &e)| (a, x, e))
    }

    /// The tau predecessors of `y`.
    fn tau_in(&self, y: u32) -> impl Iterator<Item = u32> + '_ {
        self.inn(y)
            .iter()
            .take_while(|&&(a, _)| a == TAU)
            .map(|&(_, x)| x)
    }
}

/// The blocks, the constellations and the bookkeeping of bottom nodes.
struct State {
    /// The blocks, each a contiguous range of nodes.
    parts: Blocks,
    /// The block of each node.
    block: Vec<u32>,
    /// Per node: its number of inert edges (tau edges inside its block).
    inert_out: Vec<u32>,
    /// Per block: its bottom nodes; per node: its index there.
    bottoms: Vec<Vec<u32>>,
    bottom_pos: Vec<u32>,
    /// Per block: its constellation, and its index in that constellation's list.
    constellation: Vec<u32>,
    constellation_pos: Vec<u32>,
    /// Per constellation: its blocks.
    constellation_blocks: Vec<Vec<u32>>,
    /// Constellations with more than one block (each once).
    nontrivial: Vec<u32>,
    /// Blocks to stabilise under every constellation by signing them whole (each once), and
    /// their flags.
    unstable: Vec<u32>,
    unstable_mark: Vec<bool>,
    /// Nodes that lost an inert edge since their block was last checked (with repeats): the
    /// new bottom nodes among them, and the sources of the new non-inert tau edges.
    pending: Vec<u32>,
    /// Per node: a bottom node not yet checked against its block's pairs.
    new_bottom: Vec<bool>,
    /// The block–pair slices of the tracked blocks (those checked once, and their parts).
    slices: Slices,
    /// Scratch for [`State::carve`] and [`State::track`]: (pair, edge) of the moved edges,
    /// and a run of edges.
    moved: Vec<(u64, u32)>,
    run: Vec<u32>,
}

impl State {
    fn size(&self, b: u32) -> u32 {
        self.parts.size(b)
    }

    fn members(&self, b: u32) -> &[u32] {
        self.parts.members(b)
    }

    fn mark_unstable(&mut self, b: u32) {
        if !self.unstable_mark[b as usize] {
            self.unstable_mark[b as usize] = true;
            self.unstable.push(b);
        }
    }

    fn add_bottom(&mut self, x: u32) {
        let b = self.block[x as usize] as usize;
        self.bottom_pos[x as usize] = self.bottoms[b].len() as u32;
        self.bottoms[b].push(x);
    }

    fn remove_bottom(&mut self, x: u32, b: u32) {
        let list = &mut self.bottoms[b as usize];
        let at = self.bottom_pos[x as usize] as usize;
        list.swap_remove(at);
        if let Some(&moved) = list.get(at) {
            self.bottom_pos[moved as usize] = at as u32;
        }
    }

    /// Lists the slices of block `b` (not tracked yet) and tracks it from now on.
    fn track(&mut self, edges: &Edges, b: u32) {
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        for &x in self.parts.members(b) {
            for (k, &(a, y)) in edges.out(x).iter().enumerate() {
                if let Some(pair) = self.non_inert_pair(x, a, y) {
                    moved.push((pair, edges.index(x, k)));
                }
            }
        }
        moved.sort_unstable();
        self.slices.set_tracked(b);
        self.slices.insert_runs(b, &moved, &mut self.run);
        self.moved = moved;
    }

    /// The pair of edge `x -a-> y` when it is non-inert.
    fn non_inert_pair(&self, x: u32, a: Label, y: u32) -> Option<u64> {
        let by = self.block[y as usize];
        (!(a == TAU && by == self.block[x as usize]))
            .then(|| pack(a, self.constellation[by as usize]))
    }

    /// Whether `x` has a non-inert `a`-edge into constellation `c`.
    fn has_edge(&self, edges: &Edges, x: u32, a: Label, c: u32) -> bool {
        let bx = self.block[x as usize];
        let out = edges.out(x);
        let from = out.partition_point(|&(l, _)| l < a);
        out[from..]
            .iter()
            .take_while(|&&(l, _)| l == a)
            .any(|&(_, y)| {
                let by = self.block[y as usize];
                self.constellation[by as usize] == c && !(a == TAU && by == bx)
            })
    }

    /// Moves `group` (distinct members of block `r`, not all of them) into a new block in
    /// `r`'s constellation; the tau edges between the group and the rest become non-inert,
    /// and the blocks that get new non-inert edges are marked unstable. Returns the new block.
    fn carve(&mut self, edges: &Edges, r: u32, group: &[u32]) -> u32 {
        debug_assert!(!group.is_empty() && (group.len() as u32) < self.size(r));
        let fresh = self.parts.first.len() as u32;
        let tracked = self.slices.tracked(r);
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        if tracked {
            for &x in group {
                for (k, &(a, y)) in edges.out(x).iter().enumerate() {
                    if let Some(pair) = self.non_inert_pair(x, a, y) {
                        moved.push((pair, edges.index(x, k)));
                    }
                }
            }
        }
        moved.sort_unstable();
        self.parts.carve(r, group, fresh);
        // A block of one node never splits: its slices are not kept.
        let fresh_tracked = tracked && group.len() > 1;
        self.slices.push_block(fresh_tracked);
        self.bottoms.push(Vec::new());
        self.unstable_mark.push(false);
        let c = self.constellation[r as usize];
        self.constellation.push(c);
        self.constellation_pos
            .push(self.constellation_blocks[c as usize].len() as u32);
        self.constellation_blocks[c as usize].push(fresh);
        if self.constellation_blocks[c as usize].len() == 2 {
            self.nontrivial.push(c);
        }
        if self.unstable_mark[r as usize] {
            self.mark_unstable(fresh);
        }
        for &x in group {
            if self.inert_out[x as usize] == 0 {
                self.remove_bottom(x, r);
            }
            self.block[x as usize] = fresh;
            if self.inert_out[x as usize] == 0 {
                self.add_bottom(x);
            }
        }
        if fresh_tracked {
            self.slices.relocate_runs(r, fresh, &moved, &mut self.run);
        } else if tracked {
            self.slices.remove_runs(r, &moved, &mut self.run);
        }
        // The tau edges between the group and the rest of `r`, now non-inert: from the group
        // (into `moved`) and into it (into `run`).
        moved.clear();
        self.run.clear();
        for &x in group {
            for (k, &(a, y)) in edges.out(x).iter().enumerate() {
                if a != TAU {
                    break;
                }
                if self.block[y as usize] == r {
                    self.lose_inert_edge(x);
                    moved.push((0, edges.index(x, k)));
                }
            }
            for (a, w, e) in edges.inn_indexed(x) {
                if a != TAU {
                    break;
                }
                if self.block[w as usize] == r {
                    self.lose_inert_edge(w);
                    self.run.push(e);
                }
            }
        }
        if tracked {
            let tau_c = pack(TAU, c);
            let in_cut = std::mem::take(&mut self.run);
            self.slices.insert(r, tau_c, &in_cut);
            self.run = in_cut;
            self.run.clear();
            self.run.extend(moved.iter().map(|&(_, e)| e));
            let out_cut = std::mem::take(&mut self.run);
            if fresh_tracked {
                self.slices.insert(fresh, tau_c, &out_cut);
            }
            self.run = out_cut;
            if self.size(r) == 1 {
                self.slices.untrack(r);
            }
        }
        self.moved = moved;
        fresh
    }

    /// One of `x`'s inert edges has become non-inert.
    fn lose_inert_edge(&mut self, x: u32) {
        self.inert_out[x as usize] -= 1;
        if self.inert_out[x as usize] == 0 {
            self.add_bottom(x);
            self.new_bottom[x as usize] = true;
        }
        self.pending.push(x);
    }
}

/// Per-node scratch flags and counters, reset after each use.
struct Scratch {
    direct: Vec<bool>,
    /// Membership of the side being computed: 1 = reaches, 2 = does not.
    side: Vec<u8>,
    /// Inert successors not yet known to be on the "does not reach" side.
    left: Vec<u32>,
    left_set: Vec<bool>,
    touched: Vec<u32>,
    /// The lists of the sides being computed (kept for their capacity).
    reach: Vec<u32>,
    lack: Vec<u32>,
}

const REACHES: u8 = 1;
const LACKS: u8 = 2;

/// Refines `p` (the tau-SCC contraction) to the branching bisimulation classes
/// (divergence-preserving where `p.divergent` marks nodes), from the partition `p.block`
/// (`p.num_blocks` blocks, each a union of classes: every node in block 0 at the start, or
/// what some rounds of signature refinement left).
pub(crate) fn refine(mut p: Partition) -> Partition {
    let n = p.graph.num_nodes();
    if n == 0 {
        return p;
    }
    let edges = Edges::of(&p);
    let block = std::mem::take(&mut p.block);
    let count = p.num_blocks as usize;
    let inert_out: Vec<u32> = (0..n as u32)
        .map(|x| {
            edges
                .tau_out(x)
                .filter(|&y| block[y as usize] == block[x as usize])
                .count() as u32
        })
        .collect();
    // Each block's nodes in increasing order, and its bottom nodes.
    let parts = Blocks::of(&block, count);
    let mut bottoms: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut bottom_pos = vec![0u32; n];
    for (x, &b) in block.iter().enumerate() {
        if inert_out[x] == 0 {
            bottom_pos[x] = bottoms[b as usize].len() as u32;
            bottoms[b as usize].push(x as u32);
        }
    }
    let mut s = State {
        parts,
        block,
        bottoms,
        bottom_pos,
        inert_out,
        constellation: vec![0; count],
        constellation_pos: (0..count as u32).collect(),
        constellation_blocks: vec![(0..count as u32).collect()],
        nontrivial: if count > 1 { vec![0] } else { Vec::new() },
        unstable: Vec::new(),
        unstable_mark: vec![false; count],
        pending: Vec::new(),
        new_bottom: vec![false; n],
        slices: Slices::new(count, edges.out.len()),
        moved: Vec::new(),
        run: Vec::new(),
    };
    for b in (0..count as u32).rev() {
        s.mark_unstable(b);
    }
    let mut scratch = Scratch {
        direct: vec![false; n],
        side: vec![0; n],
        left: vec![0; n],
        left_set: vec![false; n],
        touched: Vec::new(),
        reach: Vec::new(),
        lack: Vec::new(),
    };
    let mut rounds = 1;
    let mut stabilise_scratch = StabiliseScratch {
        members: Vec::new(),
        span: vec![(0, 0); n],
        data: Vec::new(),
        buf: Vec::new(),
        by_block: Vec::new(),
        reference: Vec::new(),
        pairs: Vec::new(),
        direct: Vec::new(),
        slice_split: slice_split::SliceSplitScratch::new(n),
    };
    new_bottoms::stabilise(&mut s, &edges, &mut scratch, &mut stabilise_scratch);
    let mut incoming: Vec<(Label, u32)> = Vec::new();
    let mut sources: Vec<(u32, Label, u32)> = Vec::new();
    let mut group: Vec<(u32, u32)> = Vec::new();
    let mut direct: Vec<u32> = Vec::new();
    while let Some(&c) = s.nontrivial.last() {
        rounds += 1;
        // The splitter: the smaller of the constellation's first two blocks (at most half).
        let blocks = &s.constellation_blocks[c as usize];
        let (b0, b1) = (blocks[0], blocks[1]);
        let splitter = if s.size(b1) < s.size(b0) { b1 } else { b0 };
        let at = s.constellation_pos[splitter as usize] as usize;
        let blocks = &mut s.constellation_blocks[c as usize];
        blocks.swap_remove(at);
        if let Some(&moved) = blocks.get(at) {
            s.constellation_pos[moved as usize] = at as u32;
        }
        if blocks.len() == 1 {
            s.nontrivial.pop();
        }
        let own = s.constellation_blocks.len() as u32;
        s.constellation_blocks.push(vec![splitter]);
        s.constellation[splitter as usize] = own;
        s.constellation_pos[splitter as usize] = 0;
        // The non-inert edges into the splitter, by label then source; those from tracked
        // blocks (by block, label, edge) move from the old constellation's slices to the new.
        incoming.clear();
        sources.clear();
        for &y in s.members(splitter) {
            for (a, x, e) in edges.inn_indexed(y) {
                let bx = s.block[x as usize];
                if !(a == TAU && bx == splitter) {
                    incoming.push((a, x));
                    if s.slices.tracked(bx) {
                        sources.push((bx, a, e));
                    }
                }
            }
        }
        sources.sort_unstable();
        let mut at = 0;
        while at < sources.len() {
            let (b, a, _) = sources[at];
            s.run.clear();
            while at < sources.len() && (sources[at].0, sources[at].1) == (b, a) {
                s.run.push(sources[at].2);
                at += 1;
            }
            let run = std::mem::take(&mut s.run);
            s.slices.relocate(b, pack(a, c), b, pack(a, own), &run);
            s.run = run;
        }
        incoming.sort_unstable();
        incoming.dedup();
        let mut at = 0;
        while at < incoming.len() {
            let a = incoming[at].0;
            let mut upto = at;
            while upto < incoming.len() && incoming[upto].0 == a {
                upto += 1;
            }
            // The sources, by their current block.
            group.clear();
            group.extend(
                incoming[at..upto]
                    .iter()
                    .map(|&(_, x)| (s.block[x as usize], x)),
            );
            at = upto;
            group.sort_unstable();
            let mut g = 0;
            while g < group.len() {
                let r = group[g].0;
                let mut h = g;
                while h < group.len() && group[h].0 == r {
                    h += 1;
                }
                direct.clear();
                direct.extend(group[g..h].iter().map(|&(_, x)| x));
                g = h;
                split_under(&mut s, &edges, &mut scratch, r, &direct, a, c);
            }
        }
        new_bottoms::stabilise(&mut s, &edges, &mut scratch, &mut stabilise_scratch);
    }
    p.num_blocks = s.parts.first.len() as u32;
    p.block = s.block;
    p.rounds += rounds;
    p
}

/// The main split of block `r` under the `a`-edges into the new constellation (its nodes
/// `direct` have one), then the co-split of the side that reaches them under the `a`-edges
/// into the rest `c` of the old constellation.
#[allow(clippy::too_many_arguments)]
fn split_under(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    r: u32,
    direct: &[u32],
    a: Label,
    c: u32,
) {
    let reaching_block = split_by_direct(s, edges, scratch, r, direct);
    // The co-split: bottom nodes with a direct edge but none into `c` lack it.
    let mut lacks = std::mem::take(&mut scratch.lack);
    lacks.clear();
    for &x in direct {
        if s.inert_out[x as usize] == 0
            && s.block[x as usize] == reaching_block
            && !s.has_edge(edges, x, a, c)
        {
            scratch.side[x as usize] = LACKS;
            lacks.push(x);
        }
    }
    if lacks.is_empty() {
        scratch.lack = lacks;
        return;
    }
    let mut i = 0;
    while i < lacks.len() {
        let z = lacks[i];
        i += 1;
        for w in edges.tau_in(z) {
            if s.block[w as usize] != reaching_block || scratch.side[w as usize] != 0 {
                continue;
            }
            if !scratch.left_set[w as usize] {
                scratch.left_set[w as usize] = true;
                scratch.left[w as usize] = s.inert_out[w as usize];
                scratch.touched.push(w);
            }
            scratch.left[w as usize] -= 1;
            if scratch.left[w as usize] == 0 && !s.has_edge(edges, w, a, c) {
                scratch.side[w as usize] = LACKS;
                lacks.push(w);
            }
        }
    }
    for &x in &lacks {
        scratch.side[x as usize] = 0;
    }
    for &w in &scratch.touched {
        scratch.left_set[w as usize] = false;
    }
    scratch.touched.clear();
    if lacks.len() < s.size(reaching_block) as usize {
        s.carve(edges, reaching_block, &lacks);
    }
    scratch.lack = lacks;
}

/// Splits block `r` into the nodes that reach a node of `direct` (distinct members of `r`)
/// by inert steps and the others (see [`main_split`]); no split when every bottom node is in
/// `direct`. Returns the block of the side that reaches `direct`.
fn split_by_direct(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    r: u32,
    direct: &[u32],
) -> u32 {
    // The bottom nodes with a direct edge go to the front of the block's bottom list.
    let mut direct_bottoms = 0usize;
    for &x in direct {
        scratch.direct[x as usize] = true;
        if s.inert_out[x as usize] == 0 {
            let list = &mut s.bottoms[r as usize];
            let at = s.bottom_pos[x as usize] as usize;
            let other = list[direct_bottoms];
            list.swap(at, direct_bottoms);
            s.bottom_pos[other as usize] = at as u32;
            s.bottom_pos[x as usize] = direct_bottoms as u32;
            direct_bottoms += 1;
        }
    }
    let reaching_block = if direct_bottoms == s.bottoms[r as usize].len() {
        r
    } else {
        main_split(s, edges, scratch, r, direct, direct_bottoms)
    };
    for &x in direct {
        scratch.direct[x as usize] = false;
    }
    reaching_block
}

/// Splits block `r` into the nodes that reach a node of `direct` by inert steps and the
/// others (the bottom nodes `bottoms[r][direct_bottoms..]` among them), computing both sides
/// a node at a time and moving out the one that finishes first. Returns the block of the
/// side that reaches `direct`.
fn main_split(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    r: u32,
    direct: &[u32],
    direct_bottoms: usize,
) -> u32 {
    let mut reach = std::mem::take(&mut scratch.reach);
    let mut lack = std::mem::take(&mut scratch.lack);
    reach.clear();
    lack.clear();
    for &x in direct {
        if scratch.side[x as usize] == 0 {
            scratch.side[x as usize] = REACHES;
            reach.push(x);
        }
    }
    let mut reach_at = 0usize;
    let mut lack_at = 0usize;
    let mut seed_at = direct_bottoms;
    let seeds = s.bottoms[r as usize].len();
    let reach_done = loop {
        // A step of the side that reaches.
        if reach_at == reach.len() {
            break true;
        }
        let x = reach[reach_at];
        reach_at += 1;
        for w in edges.tau_in(x) {
            if s.block[w as usize] == r && scratch.side[w as usize] == 0 {
                scratch.side[w as usize] = REACHES;
                reach.push(w);
            }
        }
        // A step of the side that does not.
        if lack_at == lack.len() {
            if seed_at == seeds {
                break false;
            }
            let z = s.bottoms[r as usize][seed_at];
            seed_at += 1;
            lack.push(z);
        }
        let z = lack[lack_at];
        lack_at += 1;
        for w in edges.tau_in(z) {
            if s.block[w as usize] != r || scratch.direct[w as usize] {
                continue;
            }
            if !scratch.left_set[w as usize] {
                scratch.left_set[w as usize] = true;
                scratch.left[w as usize] = s.inert_out[w as usize];
                scratch.touched.push(w);
            }
            scratch.left[w as usize] -= 1;
            if scratch.left[w as usize] == 0 {
                lack.push(w);
            }
        }
    };
    for &x in &reach {
        scratch.side[x as usize] = 0;
    }
    for &w in &scratch.touched {
        scratch.left_set[w as usize] = false;
    }
    scratch.touched.clear();
    let reaching_block = if reach_done {
        s.carve(edges, r, &reach)
    } else {
        s.carve(edges, r, &lack);
        r
    };
    scratch.reach = reach;
    scratch.lack = lack;
    reaching_block
}

/// Buffers kept between the calls of [`stabilise`].
struct StabiliseScratch {
    members: Vec<u32>,
    /// Per node: the range of its signature in `data` (valid for the block at hand).
    span: Vec<(u32, u32)>,
    data: Vec<u64>,
    buf: Vec<u64>,
    /// For the checks of new bottom nodes: the pending nodes by block, the pairs of a
    /// checked bottom node and of the node at hand, and the nodes to split under.
    by_block: Vec<(u32, u32)>,
    reference: Vec<u64>,
    pairs: Vec<u64>,
    direct: Vec<u32>,
    /// For the splits of a block under the slices its new bottom nodes lack.
    slice_split: slice_split::SliceSplitScratch,
}

/// Stabilises every block marked unstable under every constellation: splits it by its
/// nodes' signatures (the pairs (label, constellation) of the non-inert edges they reach by
/// inert steps), the largest group keeping the block. The block's bottom nodes are checked
/// by that; the edges that the carving makes non-inert are left in `pending`.
fn sign_unstable(s: &mut State, edges: &Edges, scratch: &mut StabiliseScratch) {
    let StabiliseScratch {
        members,
        span,
        data,
        buf,
        ..
    } = scratch;
    while let Some(r) = s.unstable.pop() {
        s.unstable_mark[r as usize] = false;
        for &x in &s.bottoms[r as usize] {
            s.new_bottom[x as usize] = false;
        }
        if s.size(r) == 1 {
            continue;
        }
        members.clear();
        members.extend_from_slice(s.members(r));
        // Tau edges go to smaller nodes: inert successors first.
        members.sort_unstable();
        let members = &*members;
        data.clear();
        for &x in members {
            buf.clear();
            for &(a, y) in edges.out(x) {
                let by = s.block[y as usize];
                if a == TAU && by == r {
                    let (lo, hi) = span[y as usize];
                    let (lo, hi) = (lo as usize, hi as usize);
                    buf.extend_from_slice(&data[lo..hi]);
                } else {
                    buf.push(pack(a, s.constellation[by as usize]));
                }
            }
            buf.sort_unstable();
            buf.dedup();
            span[x as usize] = (data.len() as u32, (data.len() + buf.len()) as u32);
            data.extend_from_slice(buf);
        }
        let mut index: FxHashMap<&[u64], usize> = FxHashMap::default();
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for &x in members {
            let (lo, hi) = span[x as usize];
            let next = groups.len();
            let g = *index.entry(&data[lo as usize..hi as usize]).or_insert(next);
            if g == next {
                groups.push(Vec::new());
            }
            groups[g].push(x);
        }
        if groups.len() == 1 {
            continue;
        }
        let mut keeper = 0;
        for (g, group) in groups.iter().enumerate() {
            if group.len() > groups[keeper].len() {
                keeper = g;
            }
        }
        drop(index);
        for (g, group) in groups.iter().enumerate() {
            if g != keeper {
                s.carve(edges, r, group);
            }
        }
    }
}
