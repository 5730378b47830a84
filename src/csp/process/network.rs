//! Networks: the static operators (`[|A|]`, `[A||B]`, `|||`, `\`, `[[R]]`, `[a <-> b]`) over
//! sequential leaves, and their firing rules as combinations of the leaves' transitions.
//!
//! As FDR does, the semantics computes each leaf's transitions once (memoised by term) and, per
//! state of the network, combines them: a [`NetNode`] tree holds the operators with their sets
//! and relations precompiled to label tables, and [`combine`] turns the leaves' moves into the
//! network's moves, each a label and the leaves it changes. ✓ synchronises: a network
//! terminates (one ✓, to Ω) only when every leaf can.

#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::term::TermRef;
use crate::ts::{Label, TAU};

use super::labels::{Alphabets, LabelSet, LinkMap, RenameMap, TICK};
use super::terms::{int_arg, Encoding, Op, STACK_RED_ZONE, STACK_SEGMENT};
use crate::csp::error::{CspError, ErrorKind};
use crate::csp::value::{EventRelation, EventSet, Proc, ProcNode};

/// A node of a network. Operator nodes hold their intern-table entries (the CSPm value, for
/// printing, and its label table).
#[derive(Debug)]
pub(crate) enum NetNode {
    /// Leaf number `i` of the network's state.
    Leaf(u32),
    /// Generalised parallel; `|||` has no sync set.
    Parallel {
        sync: Option<Arc<(EventSet, LabelSet)>>,
        children: Vec<NetNode>,
        /// Children 1.. (those that join a sync move started by child 0).
        rest: Box<[u32]>,
    },
    AlphaParallel {
        alphabets: Arc<(Vec<EventSet>, Alphabets)>,
        children: Vec<NetNode>,
    },
    Hide {
        set: Arc<(EventSet, LabelSet)>,
        child: Box<NetNode>,
    },
    Rename {
        map: Arc<(EventRelation, RenameMap)>,
        child: Box<NetNode>,
    },
    Link {
        map: Arc<(EventRelation, LinkMap)>,
        left: Box<NetNode>,
        right: Box<NetNode>,
    },
}

/// The most components (leaves) a network may have: far more than any network whose states
/// can be explored, few enough that counting them stays instant.
pub(crate) const MAX_LEAVES: u64 = 1 << 20;

/// The error of a network of more than [`MAX_LEAVES`] components.
pub(crate) fn too_many_leaves() -> CspError {
    CspError::unpositioned(
        ErrorKind::Limit,
        format!(
            "the process is a parallel composition of more than {MAX_LEAVES} components (a \
             network that doubles with a parameter?): too large to explore"
        ),
    )
}

/// The number of leaves [`NetNode::compile`] makes of `t` (with depth `u32::MAX`), counted
/// over the shared term graph, so a network doubling at each of `n` levels is counted in `n`
/// steps; at most `MAX_LEAVES + 1`.
pub(crate) fn count_leaves(t: TermRef<'_>) -> u64 {
    fn count(
        t: TermRef<'_>,
        memo: &mut std::collections::HashMap<crate::term::TermId, u64>,
    ) -> u64 {
        let op = Op::of(t);
        let hides_leaf = op == Op::Hide && !Op::of(t.arg(0)).is_static();
        if !op.is_static() || hides_leaf {
            return 1;
        }
        if let Some(&n) = memo.get(&t.id()) {
            return n;
        }
        let children: Vec<usize> = match op {
            Op::Interleave => (0..t.args().len()).collect(),
            Op::Parallel | Op::AlphaParallel => (1..t.args().len()).collect(),
            Op::Hide | Op::Rename => vec![0],
            Op::Link => vec![0, 2],
            _ => Vec::new(),
        };
        let n = children.into_iter().fold(0u64, |sum, i| {
            stacker::maybe_grow(64 << 10, 4 << 20, || count(t.arg(i), memo))
                .saturating_add(sum)
                .min(MAX_LEAVES + 1)
        });
        memo.insert(t.id(), n);
        n
    }
    count(t, &mut std::collections::HashMap::new())
}

impl NetNode {
    /// The network of term `t`: static operators become nodes (down to depth `depth`, all of
    /// them for `u32::MAX`) and every other subterm a leaf, appended to `leaves`.
    pub(crate) fn compile<'s>(
        enc: &Encoding,
        t: TermRef<'s>,
        depth: u32,
        leaves: &mut Vec<TermRef<'s>>,
    ) -> NetNode {
        let op = Op::of(t);
        // A hiding of a leaf is a leaf: the leaf may become a hiding itself, and nested
        // hidings merge (`Encoding::hide`), which only the leaf's own rules do.
        let hides_leaf = op == Op::Hide && !Op::of(t.arg(0)).is_static();
        if depth == 0 || !op.is_static() || (hides_leaf && depth != 1) {
            leaves.push(t);
            return NetNode::Leaf(leaves.len() as u32 - 1);
        }
        let sub = |leaves: &mut Vec<TermRef<'s>>, i: usize| {
            Box::new(NetNode::compile(enc, t.arg(i), depth - 1, leaves))
        };
        let many = |leaves: &mut Vec<TermRef<'s>>, from: usize| -> Vec<NetNode> {
            t.args()
                .skip(from)
                .map(|a| NetNode::compile(enc, a, depth - 1, leaves))
                .collect()
        };
        let parallel = |sync, children: Vec<NetNode>| NetNode::Parallel {
            sync,
            rest: (1..children.len() as u32).collect(),
            children,
        };
        match op {
            Op::Interleave => parallel(None, many(leaves, 0)),
            Op::Parallel => parallel(Some(enc.sets.get(int_arg(t, 0))), many(leaves, 1)),
            Op::AlphaParallel => NetNode::AlphaParallel {
                alphabets: enc.alphabets.get(int_arg(t, 0)),
                children: many(leaves, 1),
            },
            Op::Hide => NetNode::Hide {
                set: enc.sets.get(int_arg(t, 1)),
                child: sub(leaves, 0),
            },
            Op::Rename => NetNode::Rename {
                map: enc.renamings.get(int_arg(t, 1)),
                child: sub(leaves, 0),
            },
            Op::Link => {
                let left = sub(leaves, 0);
                NetNode::Link {
                    map: enc.links.get(int_arg(t, 1)),
                    left,
                    right: sub(leaves, 2),
                }
            }
            _ => unreachable!("not a static operator"),
        }
    }

    /// Per leaf, by leaf number: whether it is an operand (perhaps under hidings and
    /// renamings) of a parallel operator (`[|A|]`, `|||`, `[A||B]`, `[a <-> b]`). Such a leaf
    /// terminates by itself ([`distributed_termination`]).
    pub(crate) fn leaves_under_parallel(&self) -> Vec<bool> {
        fn walk(node: &NetNode, under: bool, out: &mut Vec<(u32, bool)>) {
            match node {
                NetNode::Leaf(i) => out.push((*i, under)),
                NetNode::Parallel { children, .. } | NetNode::AlphaParallel { children, .. } => {
                    children.iter().for_each(|c| walk(c, true, out))
                }
                NetNode::Hide { child, .. } | NetNode::Rename { child, .. } => {
                    walk(child, under, out)
                }
                NetNode::Link { left, right, .. } => {
                    walk(left, true, out);
                    walk(right, true, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, false, &mut out);
        out.sort_unstable_by_key(|&(i, _)| i);
        out.into_iter().map(|(_, under)| under).collect()
    }

    /// The total length of the paths of [`NetNode::leaf_paths`], without building them (a
    /// chain of operators `n` deep has paths of `n²/2` words in all).
    pub(crate) fn leaf_path_words(&self) -> u64 {
        let mut total = 0u64;
        let mut pending: Vec<(&NetNode, u64)> = vec![(self, 0)];
        while let Some((node, depth)) = pending.pop() {
            match node {
                NetNode::Leaf(_) => total = total.saturating_add(depth),
                NetNode::Parallel { children, .. } | NetNode::AlphaParallel { children, .. } => {
                    pending.extend(children.iter().map(|c| (c, depth + 1)));
                }
                NetNode::Hide { child, .. } | NetNode::Rename { child, .. } => {
                    pending.push((child, depth + 1));
                }
                NetNode::Link { left, right, .. } => {
                    pending.push((left, depth + 1));
                    pending.push((right, depth + 1));
                }
            }
        }
        total
    }

    /// The path of each leaf, by leaf number: the operand taken at each operator from the top
    /// (the processes of a parallel from 0, set arguments not counted; 0 under a hiding or
    /// renaming; 0 and 1 for a link's sides).
    pub(crate) fn leaf_paths(&self) -> Vec<Vec<u32>> {
        fn walk(node: &NetNode, path: &mut Vec<u32>, out: &mut Vec<(u32, Vec<u32>)>) {
            let mut down = |i: u32, child: &NetNode, out: &mut Vec<(u32, Vec<u32>)>| {
                path.push(i);
                walk(child, path, out);
                path.pop();
            };
            match node {
                NetNode::Leaf(i) => out.push((*i, path.clone())),
                NetNode::Parallel { children, .. } | NetNode::AlphaParallel { children, .. } => {
                    for (i, c) in children.iter().enumerate() {
                        down(i as u32, c, out);
                    }
                }
                NetNode::Hide { child, .. } | NetNode::Rename { child, .. } => down(0, child, out),
                NetNode::Link { left, right, .. } => {
                    down(0, left, out);
                    down(1, right, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.sort_unstable_by_key(|(i, _)| *i);
        out.into_iter().map(|(_, path)| path).collect()
    }

    /// The process of this network with leaf `i` standing for `leaves[i]`.
    pub(crate) fn to_proc(&self, leaves: &[Proc]) -> Proc {
        // A network nested thousands of operators deep recurses as deep: on a stack grown as
        // needed.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.to_proc_here(leaves))
    }

    /// [`NetNode::to_proc`] on the current stack.
    fn to_proc_here(&self, leaves: &[Proc]) -> Proc {
        let node = match self {
            NetNode::Leaf(i) => return leaves[*i as usize].clone(),
            NetNode::Parallel {
                sync: None,
                children,
                ..
            } => ProcNode::Interleave(children.iter().map(|c| c.to_proc(leaves)).collect()),
            NetNode::Parallel {
                sync: Some(set),
                children,
                ..
            } => ProcNode::Parallel(
                set.0.clone(),
                children.iter().map(|c| c.to_proc(leaves)).collect(),
            ),
            NetNode::AlphaParallel {
                alphabets,
                children,
            } => ProcNode::AlphaParallel(
                alphabets
                    .0
                    .iter()
                    .cloned()
                    .zip(children.iter().map(|c| c.to_proc(leaves)))
                    .collect(),
            ),
            NetNode::Hide { set, child } => ProcNode::Hide(child.to_proc(leaves), set.0.clone()),
            NetNode::Rename { map, child } => {
                ProcNode::Rename(child.to_proc(leaves), map.0.clone())
            }
            NetNode::Link { map, left, right } => {
                ProcNode::Link(left.to_proc(leaves), map.0.clone(), right.to_proc(leaves))
            }
        };
        Proc::new(node)
    }
}

/// A move of a (sub)network: its label and the leaves it changes, `updates[start..start+len]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Move {
    pub(crate) label: Label,
    pub(crate) start: u32,
    pub(crate) len: u32,
}

/// The transitions of the leaves of one state: leaf `i`'s are `flat[spans[i].0..][..spans[i].1]`.
/// A target `X` is a leaf term or a leaf's number.
pub(crate) struct LeafMoves<X> {
    pub(crate) flat: Vec<(Label, X)>,
    pub(crate) spans: Vec<(u32, u32)>,
}

impl<X> Default for LeafMoves<X> {
    fn default() -> Self {
        LeafMoves {
            flat: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl<X> LeafMoves<X> {
    #[inline]
    fn of(&self, leaf: u32) -> &[(Label, X)] {
        let (start, len) = self.spans[leaf as usize];
        &self.flat[start as usize..(start + len) as usize]
    }
}

/// Reusable buffers of [`combine`].
pub(crate) struct Scratch<X> {
    /// The moves; after [`combine`], those of the network.
    pub(crate) moves: Vec<Move>,
    /// (leaf, new leaf) pairs the moves point into.
    pub(crate) updates: Vec<(u32, X)>,
    /// Boundaries of the children's moves, a stack.
    bounds: Vec<u32>,
    /// The moves chosen by the sync enumeration, one per joining child.
    cursors: Vec<u32>,
    /// Where the sync enumeration stands in each joining child's candidates.
    positions: Vec<u32>,
    /// Each joining child's candidates for the label being synchronised.
    candidates: Vec<Candidates>,
    /// The node being combined: its children's moves with many moves, as (label, move)
    /// pairs sorted per child ([`index_children`]).
    index: Vec<(Label, u32)>,
    /// Per child of the node being combined: its part of `index`, `None` when it has few
    /// moves (they are scanned).
    index_of: Vec<Option<(u32, u32)>>,
}

/// A joining child's candidate moves for one label: positions `lo..hi` of its sorted index
/// (each one a move with the label), or of `moves` (to scan for the label).
#[derive(Clone, Copy)]
struct Candidates {
    lo: u32,
    hi: u32,
    indexed: bool,
}

/// A child with at least this many moves in a state is indexed by label before its
/// synchronisations are enumerated (a binary search instead of a scan per synchronised move;
/// a sudoku square offers 180 moves, each joined by 20 neighbours).
const INDEXED_MOVES: u32 = 12;

impl<X> Default for Scratch<X> {
    fn default() -> Self {
        Scratch {
            moves: Vec::new(),
            updates: Vec::new(),
            bounds: Vec::new(),
            cursors: Vec::new(),
            positions: Vec::new(),
            candidates: Vec::new(),
            index: Vec::new(),
            index_of: Vec::new(),
        }
    }
}

impl<X> Scratch<X> {
    pub(crate) fn clear(&mut self) {
        self.moves.clear();
        self.updates.clear();
        self.bounds.clear();
    }
}

#[inline]
fn is_synchronised(sync: &Option<Arc<(EventSet, LabelSet)>>, l: Label) -> bool {
    l == TICK || (l != TAU && sync.as_ref().is_some_and(|s| s.1.contains(l)))
}

/// The moves of an operand of a parallel operator under distributed termination, as FDR's
/// operational semantics has it: an operand's ✓ is a tau of the parallel, to the operand's
/// Ω, and an operand at Ω offers ✓ (to itself), so that the ✓ every operand must offer
/// together — the parallel's termination — happens once all have terminated. An operand that
/// is itself a parallel counts as terminated as soon as all its own operands have (FDR's rules
/// take one more tau, from there to Ω: the behaviour is the same in every model, the state
/// count one less per such step). A terminated operand keeps its moves other than ✓: Ω has
/// none, and the terminated operand of a parallel of a timed section (`tΩ`) agrees to `tock`
/// (`csp::process::timed`). `moves` are the operand's own (labels in canonical order);
/// `terminated` says whether it has terminated. The result keeps the canonical order: labels
/// are ordered by `cmp`, and moves of one label keep their relative order.
pub(crate) fn distributed_termination<T: Copy>(
    moves: &[(Label, T)],
    terminated: Option<T>,
    cmp: impl Fn(Label, Label) -> std::cmp::Ordering,
) -> Vec<(Label, T)> {
    let mut out: Vec<(Label, T)> = match terminated {
        Some(omega) => std::iter::once((TICK, omega))
            .chain(moves.iter().copied().filter(|&(l, _)| l != TICK))
            .collect(),
        None => moves
            .iter()
            .map(|&(l, t)| (if l == TICK { TAU } else { l }, t))
            .collect(),
    };
    out.sort_by(|a, b| cmp(a.0, b.0));
    out
}

/// Appends to `s.moves` the moves of `node` given its leaves' transitions.
pub(crate) fn combine<X: Copy>(node: &NetNode, leaves: &LeafMoves<X>, s: &mut Scratch<X>) {
    match node {
        NetNode::Leaf(i) => {
            for &(label, target) in leaves.of(*i) {
                let start = s.updates.len() as u32;
                s.updates.push((*i, target));
                s.moves.push(Move {
                    label,
                    start,
                    len: 1,
                });
            }
        }
        NetNode::Hide { set, child, .. } => {
            let from = s.moves.len();
            combine(child, leaves, s);
            for m in &mut s.moves[from..] {
                if m.label != TICK && set.1.contains(m.label) {
                    m.label = TAU;
                }
            }
        }
        NetNode::Rename { map, child, .. } => {
            let from = s.moves.len();
            combine(child, leaves, s);
            let to = s.moves.len();
            for i in from..to {
                let m = s.moves[i];
                for &image in map.1.images(m.label).iter() {
                    s.moves.push(Move { label: image, ..m });
                }
            }
            s.moves.drain(from..to);
        }
        NetNode::Parallel {
            sync,
            children,
            rest,
        } => {
            let (from, bs) = children_moves(children.iter(), leaves, s);
            let to = s.moves.len();
            index_children(s, bs, if sync.is_some() { children.len() } else { 0 });
            for c in 0..children.len() {
                for i in s.bounds[bs + c]..s.bounds[bs + c + 1] {
                    let m = s.moves[i as usize];
                    if !is_synchronised(sync, m.label) {
                        s.moves.push(m);
                    }
                }
            }
            for i in s.bounds[bs]..s.bounds[bs + 1] {
                let m = s.moves[i as usize];
                if is_synchronised(sync, m.label) {
                    sync_moves(s, m.label, m.label, m, bs, rest);
                }
            }
            s.moves.drain(from..to);
            s.bounds.truncate(bs);
        }
        NetNode::AlphaParallel {
            alphabets,
            children,
        } => {
            let alphabets = &alphabets.1;
            let (from, bs) = children_moves(children.iter(), leaves, s);
            let to = s.moves.len();
            index_children(s, bs, children.len());
            for c in 0..children.len() {
                for i in s.bounds[bs + c]..s.bounds[bs + c + 1] {
                    let m = s.moves[i as usize];
                    match m.label {
                        TAU => s.moves.push(m),
                        TICK => {
                            if c == 0 {
                                sync_moves(s, TICK, TICK, m, bs, &alphabets.everyone[1..]);
                            }
                        }
                        l => {
                            if !alphabets.sets[c].contains(l) {
                                continue;
                            }
                            let who = alphabets.participants(l);
                            if who[0] as usize == c {
                                sync_moves(s, l, l, m, bs, &who[1..]);
                            }
                        }
                    }
                }
            }
            s.moves.drain(from..to);
            s.bounds.truncate(bs);
        }
        NetNode::Link { map, left, right } => {
            let map = &map.1;
            let (from, bs) = children_moves([&**left, &**right].into_iter(), leaves, s);
            let to = s.moves.len();
            index_children(s, bs, 0);
            for i in s.bounds[bs]..s.bounds[bs + 1] {
                let m = s.moves[i as usize];
                match m.label {
                    TAU => s.moves.push(m),
                    TICK => sync_moves(s, TICK, TICK, m, bs, &[1]),
                    l if map.left.contains(l) => {
                        for &r in map.partners(l).iter() {
                            sync_moves(s, r, TAU, m, bs, &[1]);
                        }
                    }
                    _ => s.moves.push(m),
                }
            }
            for i in s.bounds[bs + 1]..s.bounds[bs + 2] {
                let m = s.moves[i as usize];
                if m.label != TICK && (m.label == TAU || !map.right.contains(m.label)) {
                    s.moves.push(m);
                }
            }
            s.moves.drain(from..to);
            s.bounds.truncate(bs);
        }
    }
}

/// Combines the children in order; returns where their moves start and where their
/// boundaries start in `s.bounds` (child `c`'s moves are `bounds[bs + c]..bounds[bs + c + 1]`).
fn children_moves<'n, X: Copy>(
    children: impl Iterator<Item = &'n NetNode>,
    leaves: &LeafMoves<X>,
    s: &mut Scratch<X>,
) -> (usize, usize) {
    let from = s.moves.len();
    let bs = s.bounds.len();
    s.bounds.push(from as u32);
    for child in children {
        combine(child, leaves, s);
        let end = s.moves.len() as u32;
        s.bounds.push(end);
    }
    // `combine` of a child truncates `bounds` back to where it found it, so the boundaries
    // pushed here stay in place.
    (from, bs)
}

/// Indexes by label the moves of children 1 to `n - 1` of the node whose boundaries start
/// at `bs` (those with at least [`INDEXED_MOVES`] moves; `n` = 0 clears the index), for
/// [`sync_moves`] of that node. Child 0 is never indexed: a synchronised move is driven by
/// its first participant, so [`sync_moves`] never looks child 0's moves up. The index of a
/// node is built after its children are combined and used before any other node is, so one
/// buffer serves every node.
fn index_children<X>(s: &mut Scratch<X>, bs: usize, n: usize) {
    s.index.clear();
    s.index_of.clear();
    for c in 0..n {
        let (lo, hi) = (s.bounds[bs + c], s.bounds[bs + c + 1]);
        if c == 0 || hi - lo < INDEXED_MOVES {
            s.index_of.push(None);
            continue;
        }
        let start = s.index.len();
        for i in lo..hi {
            s.index.push((s.moves[i as usize].label, i));
        }
        // (label, move) pairs are distinct: moves of one label stay in their order. A leaf's
        // moves usually come sorted by label already: checking costs less than sorting.
        if !s.index[start..].is_sorted() {
            s.index[start..].sort_unstable();
        }
        s.index_of.push(Some((start as u32, s.index.len() as u32)));
    }
}

/// Appends a move labelled `out` for every way of choosing, for each child in `others`, one of
/// its moves labelled `wanted`, together with `first`. The choices are enumerated in the
/// order of the children's moves (an indexed child's moves of one label keep their order),
/// so the result is the same with or without the index.
fn sync_moves<X: Copy>(
    s: &mut Scratch<X>,
    wanted: Label,
    out: Label,
    first: Move,
    bs: usize,
    others: &[u32],
) {
    let k = others.len();
    if k == 0 {
        let none = s.cursors.len();
        push_combined(s, out, first, none);
        return;
    }
    if s.index.is_empty() {
        // No child of this node has many moves: scanning them costs less than the set-up.
        sync_moves_scanned(s, wanted, out, first, bs, others);
        return;
    }
    // Each joining child's candidates; an indexed child without the label ends it at once.
    let cb = s.candidates.len();
    for &c in others {
        let c = c as usize;
        let candidates = match s.index_of.get(c) {
            Some(&Some((start, end))) => {
                let slice = &s.index[start as usize..end as usize];
                let at = slice.partition_point(|e| e.0 < wanted);
                // Usually one move of the label, or none: count them rather than search again.
                let n = slice[at..].iter().take_while(|e| e.0 == wanted).count();
                if n == 0 {
                    s.candidates.truncate(cb);
                    return;
                }
                let (lo, hi) = (start + at as u32, start + (at + n) as u32);
                Candidates {
                    lo,
                    hi,
                    indexed: true,
                }
            }
            _ => Candidates {
                lo: s.bounds[bs + c],
                hi: s.bounds[bs + c + 1],
                indexed: false,
            },
        };
        s.candidates.push(candidates);
    }
    let base = s.cursors.len();
    s.cursors.resize(base + k, 0);
    let pb = s.positions.len();
    s.positions.resize(pb + k, 0);
    let mut j = 0;
    s.positions[pb] = s.candidates[cb].lo;
    loop {
        let span = s.candidates[cb + j];
        let mut p = s.positions[pb + j];
        if !span.indexed {
            while p < span.hi && s.moves[p as usize].label != wanted {
                p += 1;
            }
        }
        if p < span.hi {
            s.positions[pb + j] = p;
            s.cursors[base + j] = if span.indexed {
                s.index[p as usize].1
            } else {
                p
            };
            if j + 1 == k {
                push_combined(s, out, first, base);
                s.positions[pb + j] = p + 1;
            } else {
                j += 1;
                s.positions[pb + j] = s.candidates[cb + j].lo;
            }
        } else if j == 0 {
            break;
        } else {
            j -= 1;
            s.positions[pb + j] += 1;
        }
    }
    s.cursors.truncate(base);
    s.positions.truncate(pb);
    s.candidates.truncate(cb);
}

/// [`sync_moves`] where no child is indexed: each joining child's moves are scanned for the
/// label, choices enumerated in the order of the children's moves.
fn sync_moves_scanned<X: Copy>(
    s: &mut Scratch<X>,
    wanted: Label,
    out: Label,
    first: Move,
    bs: usize,
    others: &[u32],
) {
    let range = |s: &Scratch<X>, j: usize| {
        let c = others[j] as usize;
        (s.bounds[bs + c], s.bounds[bs + c + 1])
    };
    let k = others.len();
    let base = s.cursors.len();
    s.cursors.resize(base + k, 0);
    let mut j = 0;
    s.cursors[base] = range(s, 0).0;
    loop {
        let (_, end) = range(s, j);
        let mut c = s.cursors[base + j];
        while c < end && s.moves[c as usize].label != wanted {
            c += 1;
        }
        if c < end {
            s.cursors[base + j] = c;
            if j + 1 == k {
                push_combined(s, out, first, base);
                s.cursors[base + j] = c + 1;
            } else {
                j += 1;
                s.cursors[base + j] = range(s, j).0;
            }
        } else if j == 0 {
            break;
        } else {
            j -= 1;
            s.cursors[base + j] += 1;
        }
    }
    s.cursors.truncate(base);
}

/// Pushes the move `out` made of `first` and the moves at `s.cursors[base..]`.
fn push_combined<X: Copy>(s: &mut Scratch<X>, out: Label, first: Move, base: usize) {
    if base == s.cursors.len() {
        // `first` alone: its updates serve as they are (updates are never removed before
        // `Scratch::clear`).
        let len = if out == TICK { 0 } else { first.len };
        s.moves.push(Move {
            label: out,
            start: first.start,
            len,
        });
        return;
    }
    if out == TICK {
        let start = s.updates.len() as u32;
        s.moves.push(Move {
            label: out,
            start,
            len: 0,
        });
        return;
    }
    // Parts whose updates lie end to end, in order, are already the combined move's updates:
    // a chain of parallels nested 10,000 deep, each joining its left operand's joined move
    // with its right operand's, would otherwise copy the updates of every level below at
    // every level (quadratic: 10^8 copies, a gigabyte, for one state's moves).
    let mut span: Option<(u32, u32)> = None;
    let mut adjacent = true;
    let parts =
        std::iter::once(first).chain(s.cursors[base..].iter().map(|&c| s.moves[c as usize]));
    for m in parts.filter(|m| m.len > 0) {
        match span {
            None => span = Some((m.start, m.start + m.len)),
            Some((start, end)) if m.start == end => span = Some((start, end + m.len)),
            Some(_) => {
                adjacent = false;
                break;
            }
        }
    }
    if adjacent {
        let here = s.updates.len() as u32;
        let (start, end) = span.unwrap_or((here, here));
        s.moves.push(Move {
            label: out,
            start,
            len: end - start,
        });
        return;
    }
    let start = s.updates.len() as u32;
    {
        let push_updates = |s: &mut Scratch<X>, m: Move| {
            for u in m.start..m.start + m.len {
                let upd = s.updates[u as usize];
                s.updates.push(upd);
            }
        };
        push_updates(s, first);
        for i in base..s.cursors.len() {
            let m = s.moves[s.cursors[i] as usize];
            push_updates(s, m);
        }
    }
    let len = s.updates.len() as u32 - start;
    s.moves.push(Move {
        label: out,
        start,
        len,
    });
}
