//! Restoring the invariant after splits, node by node: the *new bottom* nodes (nodes whose
//! last inert edge a split made non-inert) and the new non-inert tau edges, after the
//! "stabilise new bottom states" step of Jansen, Groote, Keiren and Wijs (TACAS 2020, §4).
//!
//! A block is stable when every bottom node has a non-inert edge for every pair (label,
//! constellation) that some node of the block has one for: then every bottom node has the
//! block's whole set of pairs. A bottom node's pairs are among its block's, so it has them
//! all exactly when it has as many as the block: the block's number of pairs, kept by the
//! block–pair slices (`Slices::num_pairs`; a block's slices are listed the first time it
//! is checked, then kept up to date through its splits and the constellations'). So
//! a block is stable again when
//!
//! - each new bottom node has as many pairs as the block (checked by its out-edges, once per
//!   check of the node), and
//! - the bottom nodes checked before (one of them stands for all: they had the same pairs)
//!   have them too: where they do not, the missing pair is the block's new (tau, own
//!   constellation) pair (a split cuts the tau edges between its two sides, which stay in
//!   one constellation), and the block splits under it: the nodes that reach such an edge by
//!   inert steps against the others, each side a node at a time, the side that finishes first
//!   moved out (as the main split does, at the cost of the smaller side); the parts are
//!   checked again.
//!
//! A block whose new bottom nodes lack pairs splits under each slice one of them lacks, at
//! the cost of the smaller side ([`super::slice_split`]). Blocks are taken in increasing
//! order, nodes in increasing order, so the partition depends on nothing but the input.

use super::slice_split::split_under_slices;
use super::{sign_unstable, split_by_direct, Edges, Scratch, StabiliseScratch, State};
use crate::reduce::refinement::pack;
use crate::ts::TAU;

/// Restores the invariant for every block marked unstable and every block with nodes in
/// `s.pending`, repeatedly until no split leaves anything to check.
pub(super) fn stabilise(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    st: &mut StabiliseScratch,
) {
    loop {
        sign_unstable(s, edges, st);
        if s.pending.is_empty() {
            break;
        }
        let mut pending = std::mem::take(&mut s.pending);
        let mut by_block = std::mem::take(&mut st.by_block);
        by_block.clear();
        by_block.extend(pending.iter().map(|&x| (s.block[x as usize], x)));
        pending.clear();
        s.pending = pending;
        by_block.sort_unstable();
        by_block.dedup();
        let mut g = 0;
        while g < by_block.len() {
            let r = by_block[g].0;
            let mut h = g;
            while h < by_block.len() && by_block[h].0 == r {
                h += 1;
            }
            check_block(s, edges, scratch, st, r, &by_block[g..h]);
            g = h;
        }
        st.by_block = by_block;
    }
}

/// The pairs (label, constellation) of `x`'s non-inert edges, sorted, into `out`.
pub(super) fn pairs_of(s: &State, edges: &Edges, x: u32, out: &mut Vec<u64>) {
    out.clear();
    let bx = s.block[x as usize];
    for &(a, y) in edges.out(x) {
        let by = s.block[y as usize];
        if !(a == TAU && by == bx) {
            out.push(pack(a, s.constellation[by as usize]));
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// Checks block `r`, whose nodes `group` (pairs (r, node)) lost inert edges: splits it under
/// its new tau pair where the bottom nodes checked before lack it (the parts are checked
/// again), checks its new bottom nodes against the block's number of pairs, and splits it
/// under the slices they lack where one lacks a pair.
fn check_block(
    s: &mut State,
    edges: &Edges,
    scratch: &mut Scratch,
    st: &mut StabiliseScratch,
    r: u32,
    group: &[(u32, u32)],
) {
    if s.size(r) == 1 {
        for &(_, x) in group {
            s.new_bottom[x as usize] = false;
        }
        return;
    }
    if !s.slices.tracked(r) {
        s.track(edges, r);
    }
    let pairs = s.slices.num_pairs(r);
    // Every unchecked bottom node of `r` is in `group`, so this costs at most its length.
    let reference = s.bottoms[r as usize]
        .iter()
        .copied()
        .find(|&x| !s.new_bottom[x as usize]);
    if let Some(reference) = reference {
        pairs_of(s, edges, reference, &mut st.reference);
        if st.reference.len() != pairs {
            // The checked bottom nodes lack a pair: the new tau pair of the block.
            let c = s.constellation[r as usize];
            st.direct.clear();
            if st.reference.binary_search(&pack(TAU, c)).is_err() {
                st.direct.extend(
                    group
                        .iter()
                        .map(|&(_, x)| x)
                        .filter(|&x| s.has_edge(edges, x, TAU, c)),
                );
            }
            if st.direct.is_empty() {
                s.mark_unstable(r);
            } else {
                split_by_direct(s, edges, scratch, r, &st.direct);
                s.pending.extend(group.iter().map(|&(_, x)| x));
            }
            return;
        }
    }
    let mut new_bottoms = std::mem::take(&mut st.direct);
    new_bottoms.clear();
    new_bottoms.extend(
        group
            .iter()
            .map(|&(_, x)| x)
            .filter(|&x| s.new_bottom[x as usize]),
    );
    let lacking = new_bottoms.iter().any(|&x| {
        pairs_of(s, edges, x, &mut st.pairs);
        st.pairs.len() != pairs
    });
    if lacking {
        split_under_slices(s, edges, scratch, &mut st.slice_split, r, &new_bottoms);
    } else {
        for &x in &new_bottoms {
            s.new_bottom[x as usize] = false;
        }
    }
    st.direct = new_bottoms;
}
