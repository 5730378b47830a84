//! The block–pair slices: for a block and a pair (label, constellation), the block's non-inert
//! edges with that pair (Jansen, Groote, Keiren and Wijs's "BLC sets"), kept as lists of edge
//! indices, so that a block can be split under one of its slices at the cost of the smaller
//! side (the side that has an edge in it is computed by walking the list, lazily).
//!
//! Kept only for the *tracked* blocks (those whose new bottom nodes were checked once, and
//! their parts of more than one node: a single node never splits), so that a refinement that
//! never makes new bottom nodes does not pay for it.
//! Every update costs O(1) expected per edge moved (a list position per edge, a pair
//! position per slice); a block's pairs are listed, so that the slices a block has can be
//! enumerated at the cost of their number.

use rustc_hash::FxHashMap;

/// The slices of the tracked blocks.
pub(super) struct Slices {
    /// The slice of each (block, pair) that has one.
    id: FxHashMap<(u32, u64), u32>,
    /// Per slice: its edges (indices into the edge array), and the index of its pair in its
    /// block's list of pairs.
    edges: Vec<Vec<u32>>,
    pair_at: Vec<u32>,
    /// Slice ids free for reuse (their lists empty).
    free: Vec<u32>,
    /// Per block: the pairs of its slices, in no particular order.
    block_pairs: Vec<Vec<u64>>,
    /// Per edge: its index in its slice's list (meaningful while it is in one).
    edge_at: Vec<u32>,
    /// Per block: whether its slices are kept.
    tracked: Vec<bool>,
}

impl Slices {
    /// No block tracked; `blocks` blocks, `num_edges` edges.
    pub(super) fn new(blocks: usize, num_edges: usize) -> Slices {
        Slices {
            id: FxHashMap::default(),
            edges: Vec::new(),
            pair_at: Vec::new(),
            free: Vec::new(),
            block_pairs: vec![Vec::new(); blocks],
            edge_at: vec![0; num_edges],
            tracked: vec![false; blocks],
        }
    }

    /// A new block, tracked when `tracked`.
    pub(super) fn push_block(&mut self, tracked: bool) {
        self.block_pairs.push(Vec::new());
        self.tracked.push(tracked);
    }

    /// Whether block `b`'s slices are kept.
    pub(super) fn tracked(&self, b: u32) -> bool {
        self.tracked[b as usize]
    }

    /// Marks block `b` (with no slice yet) as tracked.
    pub(super) fn set_tracked(&mut self, b: u32) {
        debug_assert!(self.block_pairs[b as usize].is_empty());
        self.tracked[b as usize] = true;
    }

    /// The pairs of block `b`'s slices.
    pub(super) fn pairs(&self, b: u32) -> &[u64] {
        &self.block_pairs[b as usize]
    }

    /// The number of block `b`'s slices.
    pub(super) fn num_pairs(&self, b: u32) -> usize {
        self.block_pairs[b as usize].len()
    }

    /// The edges of block `b` with `pair` (empty when it has none).
    pub(super) fn edges(&self, b: u32, pair: u64) -> &[u32] {
        match self.id.get(&(b, pair)) {
            Some(&id) => &self.edges[id as usize],
            None => &[],
        }
    }

    /// Whether block `b` has a non-inert edge with `pair`.
    pub(super) fn has(&self, b: u32, pair: u64) -> bool {
        self.id.contains_key(&(b, pair))
    }

    /// The slice of (b, pair), made (empty) if it has none.
    fn slice_or_new(&mut self, b: u32, pair: u64) -> u32 {
        let next = match self.free.last() {
            Some(&id) => id,
            None => self.edges.len() as u32,
        };
        let id = *self.id.entry((b, pair)).or_insert(next);
        if id == next {
            if self.free.pop().is_none() {
                self.edges.push(Vec::new());
                self.pair_at.push(0);
            }
            let pairs = &mut self.block_pairs[b as usize];
            self.pair_at[id as usize] = pairs.len() as u32;
            pairs.push(pair);
        }
        id
    }

    /// Drops the slice `id` of (b, pair), now empty (its list's memory freed: a slice that
    /// was large once would keep it otherwise).
    fn drop_slice(&mut self, b: u32, pair: u64, id: u32) {
        debug_assert!(self.edges[id as usize].is_empty());
        self.edges[id as usize] = Vec::new();
        self.id.remove(&(b, pair));
        let pairs = &mut self.block_pairs[b as usize];
        let at = self.pair_at[id as usize] as usize;
        pairs.swap_remove(at);
        if let Some(&moved) = pairs.get(at) {
            let moved_id = self.id[&(b, moved)];
            self.pair_at[moved_id as usize] = at as u32;
        }
        self.free.push(id);
    }

    /// Adds the edges `es` (non-inert, from block `b`, with `pair`, in no slice).
    pub(super) fn insert(&mut self, b: u32, pair: u64, es: &[u32]) {
        if es.is_empty() {
            return;
        }
        let id = self.slice_or_new(b, pair) as usize;
        for &e in es {
            self.edge_at[e as usize] = self.edges[id].len() as u32;
            self.edges[id].push(e);
        }
    }

    /// Removes the edges `es` (in the slice of (b, pair)).
    pub(super) fn remove(&mut self, b: u32, pair: u64, es: &[u32]) {
        if es.is_empty() {
            return;
        }
        let id = *self.id.get(&(b, pair)).expect("a sliced non-inert edge");
        let list = &mut self.edges[id as usize];
        for &e in es {
            let at = self.edge_at[e as usize] as usize;
            debug_assert_eq!(list[at], e);
            list.swap_remove(at);
            if let Some(&moved) = list.get(at) {
                self.edge_at[moved as usize] = at as u32;
            }
        }
        if list.is_empty() {
            self.drop_slice(b, pair, id);
        }
    }

    /// Moves the edges `es` from the slice of (from, from_pair) to that of (to, to_pair).
    pub(super) fn relocate(
        &mut self,
        from: u32,
        from_pair: u64,
        to: u32,
        to_pair: u64,
        es: &[u32],
    ) {
        self.remove(from, from_pair, es);
        self.insert(to, to_pair, es);
    }

    /// Stops keeping block `b`'s slices (it has one node left).
    pub(super) fn untrack(&mut self, b: u32) {
        for pair in std::mem::take(&mut self.block_pairs[b as usize]) {
            let id = self.id.remove(&(b, pair)).expect("a slice of the block");
            self.edges[id as usize] = Vec::new();
            self.free.push(id);
        }
        self.tracked[b as usize] = false;
    }

    /// Removes the edges of `runs` (pairs (pair, edge), sorted) from block `b`'s slices.
    pub(super) fn remove_runs(&mut self, b: u32, runs: &[(u64, u32)], scratch: &mut Vec<u32>) {
        for_each_run(runs, scratch, |pair, es| self.remove(b, pair, es));
    }

    /// Adds the edges of `runs` (pairs (pair, edge), sorted) to block `b`'s slices, one
    /// look-up per distinct pair.
    pub(super) fn insert_runs(&mut self, b: u32, runs: &[(u64, u32)], scratch: &mut Vec<u32>) {
        for_each_run(runs, scratch, |pair, es| self.insert(b, pair, es));
    }

    /// Moves the edges of `runs` (pairs (pair, edge), sorted) from block `from`'s slices to
    /// block `to`'s, one look-up per distinct pair and block.
    pub(super) fn relocate_runs(
        &mut self,
        from: u32,
        to: u32,
        runs: &[(u64, u32)],
        scratch: &mut Vec<u32>,
    ) {
        for_each_run(runs, scratch, |pair, es| {
            self.relocate(from, pair, to, pair, es)
        });
    }
}

/// Calls `f(pair, edges)` for each run of one pair in `runs` (sorted by pair).
fn for_each_run(runs: &[(u64, u32)], scratch: &mut Vec<u32>, mut f: impl FnMut(u64, &[u32])) {
    let mut at = 0;
    while at < runs.len() {
        let pair = runs[at].0;
        scratch.clear();
        while at < runs.len() && runs[at].0 == pair {
            scratch.push(runs[at].1);
            at += 1;
        }
        f(pair, scratch);
    }
}
