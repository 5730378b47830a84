//! The quotient of an LTS by a stable partition.

use super::refinement::Partition;
use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// The quotient of `lts` by `partition`: one state per block, numbered in breadth-first order
/// from the initial state's block (successors in (label, block) order; blocks unreachable
/// from it come last, as mCRL2 keeps them too);
/// transitions between blocks deduplicated; inert taus (inside a block, branching) left out;
/// a tau self-loop on every divergent block. Also returns the quotient state of each covered
/// state of `lts`.
pub fn quotient(lts: &Lts, partition: &Partition) -> (Lts, Vec<u32>) {
    let nodes = partition.graph.num_nodes();
    if nodes == 0 {
        return (lts.clone(), Vec::new());
    }
    let blocks = partition.num_blocks as usize;
    // Blocks renumbered in the order of their smallest node, so that the quotient depends on
    // the partition alone, not on the ids the refinement gave its blocks.
    let mut canonical = vec![u32::MAX; blocks];
    let mut next = 0u32;
    let block: Vec<u32> = partition
        .block
        .iter()
        .map(|&b| {
            if canonical[b as usize] == u32::MAX {
                canonical[b as usize] = next;
                next += 1;
            }
            canonical[b as usize]
        })
        .collect();
    let block = &block;
    // Edges of the quotient, grouped by source block (counting sort), each block's sorted by
    // (label, target block) and deduplicated.
    let edge_of = |x: u32, a: Label, y: u32| {
        (!partition.is_inert(block, x, a, y)).then(|| (a, block[y as usize]))
    };
    let mut first = vec![0usize; blocks + 1];
    for x in 0..nodes as u32 {
        let bx = block[x as usize] as usize;
        first[bx + 1] += partition
            .graph
            .edges(x)
            .filter(|&(a, y)| edge_of(x, a, y).is_some())
            .count()
            + usize::from(partition.divergent[x as usize]);
    }
    for b in 0..blocks {
        first[b + 1] += first[b];
    }
    let mut fill = first.clone();
    let mut edges: Vec<(Label, u32)> = vec![(0, 0); first[blocks]];
    for x in 0..nodes as u32 {
        let bx = block[x as usize];
        let at = &mut fill[bx as usize];
        for (a, y) in partition.graph.edges(x) {
            if let Some(edge) = edge_of(x, a, y) {
                edges[*at] = edge;
                *at += 1;
            }
        }
        if partition.divergent[x as usize] {
            edges[*at] = (TAU, bx);
            *at += 1;
        }
    }
    drop(fill);
    // Sort and deduplicate each block's edges, compacting them to the front.
    let mut kept = 0;
    for b in 0..blocks {
        let (lo, hi) = (first[b], first[b + 1]);
        first[b] = kept;
        let group = &mut edges[lo..hi];
        group.sort_unstable();
        let mut last: Option<(Label, u32)> = None;
        for i in lo..hi {
            let edge = edges[i];
            if last != Some(edge) {
                edges[kept] = edge;
                kept += 1;
                last = Some(edge);
            }
        }
    }
    first[blocks] = kept;
    edges.truncate(kept);
    // Breadth-first numbering from the initial block, then from each block not numbered
    // yet (unreachable ones, kept as mCRL2 keeps them), in block order.
    let initial_block = block[partition.node_of_state[lts.initial() as usize] as usize];
    let mut number = vec![u32::MAX; blocks];
    let mut order: Vec<u32> = Vec::with_capacity(blocks);
    let mut at = 0;
    for root in std::iter::once(initial_block).chain(0..blocks as u32) {
        if number[root as usize] != u32::MAX {
            continue;
        }
        number[root as usize] = order.len() as u32;
        order.push(root);
        while at < order.len() {
            let b = order[at] as usize;
            at += 1;
            for &(_, c) in &edges[first[b]..first[b + 1]] {
                if number[c as usize] == u32::MAX {
                    number[c as usize] = order.len() as u32;
                    order.push(c);
                }
            }
        }
    }
    let mut transitions = Vec::with_capacity(edges.len());
    for &b in &order {
        for &(a, c) in &edges[first[b as usize]..first[b as usize + 1]] {
            transitions.push((number[b as usize], a, number[c as usize]));
        }
    }
    let quotient = Lts::from_transitions(
        0,
        order.len() as u32,
        lts.label_names().to_vec(),
        &transitions,
    );
    let state_map = partition
        .node_of_state
        .iter()
        .map(|&x| number[block[x as usize] as usize])
        .collect();
    (quotient, state_map)
}
