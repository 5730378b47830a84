//! Stabilising the blocks that lost inert edges, after a splitter has been processed.
//!
//! A block is marked unstable when some of its nodes lose an inert edge (a carve separated
//! them from an inert successor: they may have become bottom nodes, and they have new
//! non-inert edges). It is split by the signatures of its nodes (the pairs (label,
//! constellation) of the non-inert edges they reach by inert steps), and the parts that lose
//! inert edges in turn are marked again.
//!
//! Only the *affected region* is signed: the nodes of the block that reach, by inert steps, a
//! node that lost an inert edge since the block was last stable (the *changed* nodes). Every
//! other node of the block (an *unaffected* node) has the signature of any unaffected bottom
//! node, which is the set of pairs of that node's own edges, because:
//!
//! - at the end of the previous stabilisation every block was stable: all its nodes had the
//!   same signature, the pairs of each of its bottom nodes;
//! - an unaffected node's inert successors are unaffected, and none of them lost an inert
//!   edge, so the nodes it reaches by inert steps are the same as then, all in its block;
//! - the splits under the splitter's pairs `(a, B)` and `(a, C \ B)` (main split and
//!   co-split) kept, for the nodes whose inert paths are intact, "reaches `(a, B)`" and
//!   "reaches `(a, C \ B)`" the same on each side: both hold or fail for all of them, as
//!   they did for `(a, C)`.
//!
//! So the unaffected nodes form one group, kept in the block, and only the affected region
//! is signed, grouped and carved out: the cost of a stabilisation is that of its region (its
//! nodes, their edges and signatures), no longer that of the whole block. The blocks of the
//! initial partition (not known to be stable) are signed whole, once.
//!
//! Bound: a node is signed when it lies above (by inert steps) a node that has just lost an
//! inert edge, and each tau edge becomes non-inert once. Where the inert paths above the
//! places where blocks split are short (bounded inert depth, the common case: the corpus
//! systems), the cost over the run is O(m) per unit of depth times the signature length, on
//! top of the O(m log n) of the splits. A deep inert region above bottom nodes that split
//! again and again (a long tau chain whose bottom splits at every constellation step) is
//! signed at every step: that case is still quadratic, as it was before. The full
//! block–bunch-slice handling of new bottom states of Jansen, Groote, Keiren and Wijs
//! (TACAS 2020), which is O(m log n) there too, is not implemented.

use rustc_hash::FxHashMap;

use super::{Edges, State};
use crate::reduce::refinement::pack;
use crate::ts::TAU;

/// Buffers kept between the calls of [`stabilise`].
pub(super) struct StabiliseScratch {
    /// The nodes being signed, in increasing order (inert successors first).
    members: Vec<u32>,
    /// Per node: the range of its signature in `data` (valid for the block at hand).
    span: Vec<(u32, u32)>,
    data: Vec<u64>,
    buf: Vec<u64>,
    /// Per node: whether it is in the affected region being signed.
    in_region: Vec<bool>,
    /// The signature of the unaffected nodes of the block at hand.
    unaffected: Vec<u64>,
}

impl StabiliseScratch {
    /// Buffers for a graph of `n` nodes.
    pub(super) fn new(n: usize) -> StabiliseScratch {
        StabiliseScratch {
            members: Vec::new(),
            span: vec![(0, 0); n],
            data: Vec::new(),
            buf: Vec::new(),
            in_region: vec![false; n],
            unaffected: Vec::new(),
        }
    }
}

/// Stabilises every block marked unstable under every constellation (see the module
/// documentation); the parts that lose inert edges are marked again and stabilised in turn.
pub(super) fn stabilise(s: &mut State, edges: &Edges, scratch: &mut StabiliseScratch) {
    while let Some(r) = s.unstable.pop() {
        s.unstable_mark[r as usize] = false;
        let changed = std::mem::take(&mut s.changed[r as usize]);
        for &x in &changed {
            s.is_changed[x as usize] = false;
        }
        let whole = std::mem::replace(&mut s.whole[r as usize], false);
        if s.size(r) == 1 || (!whole && changed.is_empty()) {
            continue;
        }
        stabilise_block(s, edges, scratch, r, whole, &changed);
    }
}

/// Splits block `r` by the signatures of its nodes: of all of them when `whole`, else of the
/// nodes that reach a node of `changed` by inert steps, the others keeping the block.
fn stabilise_block(
    s: &mut State,
    edges: &Edges,
    scratch: &mut StabiliseScratch,
    r: u32,
    whole: bool,
    changed: &[u32],
) {
    let StabiliseScratch {
        members,
        span,
        data,
        buf,
        in_region,
        unaffected,
    } = scratch;
    members.clear();
    unaffected.clear();
    let mut whole = whole;
    if !whole {
        // The affected region: backwards along inert edges from the changed nodes.
        for &x in changed {
            if !in_region[x as usize] {
                in_region[x as usize] = true;
                members.push(x);
            }
        }
        let mut at = 0;
        while at < members.len() {
            let y = members[at];
            at += 1;
            for w in edges.tau_in(y) {
                if s.block[w as usize] == r && !in_region[w as usize] {
                    in_region[w as usize] = true;
                    members.push(w);
                }
            }
        }
        if members.len() < s.size(r) as usize {
            // Unaffected nodes reach unaffected bottom nodes; their signature is the pairs of
            // any of those.
            let unaffected_bottom = s.bottoms[r as usize]
                .iter()
                .copied()
                .find(|&o| !in_region[o as usize]);
            match unaffected_bottom {
                Some(o) => {
                    unaffected.extend(
                        edges
                            .out(o)
                            .iter()
                            .map(|&(a, y)| pack(a, s.constellation[s.block[y as usize] as usize])),
                    );
                    unaffected.sort_unstable();
                    unaffected.dedup();
                }
                None => whole = true,
            }
        } else {
            whole = true;
        }
        if whole {
            for &x in members.iter() {
                in_region[x as usize] = false;
            }
            members.clear();
        }
    }
    if whole {
        members.extend_from_slice(s.members(r));
    }
    // Tau edges go to smaller nodes: inert successors first.
    members.sort_unstable();
    let members = &*members;
    data.clear();
    for &x in members {
        buf.clear();
        for &(a, y) in edges.out(x) {
            let by = s.block[y as usize];
            if a == TAU && by == r {
                if whole || in_region[y as usize] {
                    let (lo, hi) = span[y as usize];
                    buf.extend_from_slice(&data[lo as usize..hi as usize]);
                } else {
                    buf.extend_from_slice(unaffected);
                }
            } else {
                buf.push(pack(a, s.constellation[by as usize]));
            }
        }
        buf.sort_unstable();
        buf.dedup();
        span[x as usize] = (data.len() as u32, (data.len() + buf.len()) as u32);
        data.extend_from_slice(buf);
    }
    if !whole {
        for &x in members {
            in_region[x as usize] = false;
        }
    }
    // Group 0 is the unaffected nodes' (its members stay in the block unlisted).
    let mut index: FxHashMap<&[u64], usize> = FxHashMap::default();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    if !whole {
        index.insert(&unaffected[..], 0);
        groups.push(Vec::new());
    }
    for &x in members {
        let (lo, hi) = span[x as usize];
        let next = groups.len();
        let g = *index.entry(&data[lo as usize..hi as usize]).or_insert(next);
        if g == next {
            groups.push(Vec::new());
        }
        groups[g].push(x);
    }
    drop(index);
    if groups.len() == 1 {
        return;
    }
    // The unaffected group keeps the block (the cost stays that of the region); when the
    // whole block was signed, the largest group does.
    let keeper = if whole {
        let mut keeper = 0;
        for (g, group) in groups.iter().enumerate() {
            if group.len() > groups[keeper].len() {
                keeper = g;
            }
        }
        keeper
    } else {
        0
    };
    for (g, group) in groups.iter().enumerate() {
        if g != keeper && !group.is_empty() {
            s.carve(edges, r, group);
        }
    }
}
