//! Splitting a block whose new bottom nodes lack some of its pairs, slice by slice, each
//! split at the cost of its smaller side (the "stabilise new bottom states" phase of Jansen,
//! Groote, Keiren and Wijs, TACAS 2020).
//!
//! Block `r` is stable again when each of its bottom nodes has an edge with each of its pairs
//! (label, constellation). Its checked bottom nodes have all of them (the caller made sure);
//! some of its *new* bottom nodes do not. The round:
//!
//! - lists the new bottom nodes with their pairs (the cost of their own out-edges, once), and
//!   counts, per pair, how many of them have it; a pair of `r` that fewer have than there are
//!   new bottom nodes is a *candidate* (the pairs are enumerated at the cost of their number:
//!   a pair some new bottom node has is paid by its edge, one none has by the split it
//!   causes);
//! - splits a *piece* (`r`, or a part split off it in this round) under a candidate `(a, C)`:
//!   the nodes that reach an edge of the piece's slice by inert steps (from the slice's edge
//!   list, walked lazily), against those that cannot (from the listed bottom nodes that lack
//!   the pair, a node joining when all its inert successors have and it has no such edge
//!   itself), each side a node at a time, the side that finishes first moved out: the cost
//!   is that of the smaller side. A candidate whose slice has left the piece, or that all
//!   the piece's listed nodes have, is dropped at O(1);
//! - keeps the counts exact when a part is moved out (its listed nodes' pairs move with it),
//!   and gives the part its own candidates (enumerated from its slices: no more than its
//!   edges); the part that stays keeps the rest of its list;
//! - lists the nodes that become bottom in a piece during the round too (so that the side
//!   that cannot reach a pair starts from *every* bottom node that lacks it: the side moved
//!   out is exactly a side of the split, never a part of one), leaving them unchecked.
//!
//! After the round each piece is stable under every pair that `r` had, except a tau pair into
//! `r`'s own constellation that `r` did not have (its checked bottom nodes may lack it: the
//! caller's next check of the pieces splits under it). The nodes checked here are marked so;
//! the nodes that became bottom during the round, and the new non-inert tau edges, are in
//! `State::pending` for the next check.

use rustc_hash::FxHashMap;

use super::new_bottoms::pairs_of;
use super::{Edges, Scratch, State, LACKS, REACHES};
use crate::reduce::refinement::pack;
use crate::ts::{Label, TAU};

/// A block split in the round: its listed bottom nodes and the pairs to split it under.
#[derive(Default)]
struct Piece {
    nodes: Vec<u32>,
    candidates: Vec<u64>,
}

/// Per (block, pair): how many of the block's listed nodes have the pair, and those nodes
/// (with stale entries for nodes moved out since: the list is read once per block and pair).
#[derive(Default)]
struct Havers {
    count: u32,
    nodes: Vec<u32>,
}

/// Buffers and per-node flags kept between rounds.
pub(super) struct SliceSplitScratch {
    /// Per node: listed in its piece's list, and its index there.
    listed: Vec<bool>,
    list_pos: Vec<u32>,
    /// Per node: a new bottom node checked by this round.
    original: Vec<bool>,
    /// Per node: has an edge with the pair at hand.
    has_pair: Vec<bool>,
    pieces: FxHashMap<u32, Piece>,
    havers: FxHashMap<(u32, u64), Havers>,
    work: Vec<u32>,
    pairs: Vec<u64>,
    marked: Vec<u32>,
}

impl SliceSplitScratch {
    /// Buffers for a graph of `n` nodes.
    pub(super) fn new(n: usize) -> SliceSplitScratch {
        SliceSplitScratch {
            listed: vec![false; n],
            list_pos: vec![0; n],
            original: vec![false; n],
            has_pair: vec![false; n],
            pieces: FxHashMap::default(),
            havers: FxHashMap::default(),
            work: Vec::new(),
            pairs: Vec::new(),
            marked: Vec::new(),
        }
    }

    /// Lists bottom node `x` in the piece of block `b`, counting its pairs.
    fn list(&mut self, s: &State, edges: &Edges, x: u32, b: u32) {
        let nodes = &mut self.pieces.entry(b).or_default().nodes;
        self.listed[x as usize] = true;
        self.list_pos[x as usize] = nodes.len() as u32;
        nodes.push(x);
        pairs_of(s, edges, x, &mut self.pairs);
        for &pair in &self.pairs {
            let havers = self.havers.entry((b, pair)).or_default();
            havers.count += 1;
            havers.nodes.push(x);
        }
    }

    /// Moves listed node `x` from the piece of block `from` to that of block `to`.
    fn relist(&mut self, s: &State, edges: &Edges, x: u32, from: u32, to: u32) {
        let nodes = &mut self.pieces.get_mut(&from).expect("a piece").nodes;
        let at = self.list_pos[x as usize] as usize;
        nodes.swap_remove(at);
        if let Some(&moved) = nodes.get(at) {
            self.list_pos[moved as usize] = at as u32;
        }
        pairs_of(s, edges, x, &mut self.pairs);
        for &pair in &self.pairs {
            if let Some(havers) = self.havers.get_mut(&(from, pair)) {
                havers.count -= 1;
            }
        }
        self.list(s, edges, x, to);
    }

    /// Gives the piece of block `b` its candidates: the pairs of `b` (but `excluded`) that
    /// fewer of its listed nodes have than it lists; queues it where it has some.
    fn find_candidates(&mut self, s: &State, b: u32, excluded: Option<u64>) {
        let Some(piece) = self.pieces.get_mut(&b) else {
            return;
        };
        let listed = piece.nodes.len() as u32;
        piece.candidates.clear();
        for &pair in s.slices.pairs(b) {
            let count = self.havers.get(&(b, pair)).map_or(0, |h| h.count);
            if count < listed && Some(pair) != excluded {
                piece.candidates.push(pair);
            }
        }
        // Taken from the back: the first pair first.
        piece.candidates.reverse();
        if !piece.candidates.is_empty() {
            self.work.push(b);
        }
    }
}

/// Splits block `r` under its pairs until each of its pairs is had by every bottom node of
/// each part (see the module's documentation). `new_bottoms` are `r`'s unchecked bottom
/// nodes, in increasing order; its other bottom nodes have all its pairs.
pub(super) fn split_under_slices(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    w: &mut SliceSplitScratch,
    r: u32,
    new_bottoms: &[u32],
) {
    debug_assert!(w.pieces.is_empty() && w.havers.is_empty() && w.work.is_empty());
    // A tau pair into `r`'s own constellation that `r` does not have yet may appear in the
    // round (from the tau edges cut by a split); the checked bottom nodes may lack it.
    let tau_c = pack(TAU, s.constellation[r as usize]);
    let excluded = (!s.slices.has(r, tau_c)).then_some(tau_c);
    for &x in new_bottoms {
        w.original[x as usize] = true;
        w.list(s, edges, x, r);
    }
    w.find_candidates(s, r, excluded);
    while let Some(p) = w.work.pop() {
        loop {
            let piece = w.pieces.get_mut(&p).expect("a piece");
            let Some(pair) = piece.candidates.pop() else {
                break;
            };
            let listed = piece.nodes.len() as u32;
            let havers = w.havers.get_mut(&(p, pair));
            let count = havers.as_ref().map_or(0, |h| h.count);
            if count >= listed || !s.slices.has(p, pair) {
                continue;
            }
            if let Some(havers) = havers {
                for &x in &havers.nodes {
                    if s.block[x as usize] == p {
                        w.has_pair[x as usize] = true;
                        w.marked.push(x);
                    }
                }
                // Read once: the piece is stable under the pair after this split.
                havers.nodes = Vec::new();
            }
            let reach_done = race(s, edges, scratch, w, p, pair);
            for &x in &w.marked {
                w.has_pair[x as usize] = false;
            }
            w.marked.clear();
            let group = if reach_done {
                std::mem::take(&mut scratch.reach)
            } else {
                std::mem::take(&mut scratch.lack)
            };
            let before = s.pending.len();
            let fresh = s.carve(edges, p, &group);
            for &x in &group {
                if w.listed[x as usize] {
                    w.relist(s, edges, x, p, fresh);
                }
            }
            if reach_done {
                scratch.reach = group;
            } else {
                scratch.lack = group;
            }
            // The nodes made bottom by the split (in `p` or `fresh`), listed but unchecked.
            for at in before..s.pending.len() {
                let x = s.pending[at];
                if s.inert_out[x as usize] == 0 && !w.listed[x as usize] {
                    let b = s.block[x as usize];
                    w.list(s, edges, x, b);
                }
            }
            w.find_candidates(s, fresh, excluded);
        }
    }
    for (_, piece) in w.pieces.drain() {
        for x in piece.nodes {
            w.listed[x as usize] = false;
            if w.original[x as usize] {
                w.original[x as usize] = false;
                s.new_bottom[x as usize] = false;
            }
        }
    }
    w.havers.clear();
}

/// Splits piece `p` under `pair`: computes, a node at a time each, the nodes that reach an
/// edge of `p`'s slice of `pair` by inert steps (into `scratch.reach`) and those that cannot
/// (from the listed nodes not marked in `w.has_pair`, into `scratch.lack`), until one side is
/// complete. Returns whether the side that reaches was complete first.
fn race(
    s: &State,
    edges: &Edges,
    scratch: &mut Scratch,
    w: &SliceSplitScratch,
    p: u32,
    pair: u64,
) -> bool {
    let label = (pair >> 32) as Label;
    let constellation = pair as u32;
    let slice = s.slices.edges(p, pair);
    let seeds = &w.pieces[&p].nodes;
    let mut reach = std::mem::take(&mut scratch.reach);
    let mut lack = std::mem::take(&mut scratch.lack);
    reach.clear();
    lack.clear();
    let (mut reach_at, mut slice_at, mut lack_at, mut seed_at) = (0, 0, 0, 0);
    let reach_done = loop {
        // A step of the side that reaches: a node's inert predecessors, or the next source.
        if reach_at < reach.len() {
            let x = reach[reach_at];
            reach_at += 1;
            for v in edges.tau_in(x) {
                if s.block[v as usize] == p && scratch.side[v as usize] == 0 {
                    scratch.side[v as usize] = REACHES;
                    reach.push(v);
                }
            }
        } else if slice_at < slice.len() {
            let x = edges.source(slice[slice_at]);
            slice_at += 1;
            if scratch.side[x as usize] == 0 {
                scratch.side[x as usize] = REACHES;
                reach.push(x);
            }
        } else {
            break true;
        }
        // A step of the side that cannot: a node's inert predecessors, or the next seed.
        if lack_at < lack.len() {
            let z = lack[lack_at];
            lack_at += 1;
            for v in edges.tau_in(z) {
                if s.block[v as usize] != p || scratch.side[v as usize] != 0 {
                    continue;
                }
                if !scratch.left_set[v as usize] {
                    scratch.left_set[v as usize] = true;
                    scratch.left[v as usize] = s.inert_out[v as usize];
                    scratch.touched.push(v);
                }
                scratch.left[v as usize] -= 1;
                if scratch.left[v as usize] == 0 && !s.has_edge(edges, v, label, constellation) {
                    scratch.side[v as usize] = LACKS;
                    lack.push(v);
                }
            }
        } else {
            while seed_at < seeds.len() && w.has_pair[seeds[seed_at] as usize] {
                seed_at += 1;
            }
            if seed_at == seeds.len() {
                break false;
            }
            let z = seeds[seed_at];
            seed_at += 1;
            debug_assert_eq!(scratch.side[z as usize], 0);
            scratch.side[z as usize] = LACKS;
            lack.push(z);
        }
    };
    for &x in reach.iter().chain(&lack) {
        scratch.side[x as usize] = 0;
    }
    for &v in &scratch.touched {
        scratch.left_set[v as usize] = false;
    }
    scratch.touched.clear();
    scratch.reach = reach;
    scratch.lack = lack;
    reach_done
}
