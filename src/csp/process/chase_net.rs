//! The walk of a `chase` through a network, held as the network's leaves.
//!
//! A state of a hidden network (`(P1 [|A|] ... [|A|] Pn) \ H`) is a term of its static
//! operators over its leaves. The walk of `chase` (see `chase.rs`) follows its first tau
//! again and again; firing such a state as a term ([`Semantics::transitions`]) builds, sorts
//! and keeps every successor (sixteen-leaf terms, dozens per state) only for the first tau to
//! be followed. Here the state is compiled once into a [`NetNode`] tree and then held as its
//! vector of leaves: a step combines the leaves' transitions (each leaf's are memoised, as
//! always) into the network's moves, picks the first tau among them without building any
//! target, and changes the leaves it moves. No term is built for the states passed; the state
//! the walk stops at is built once, with its moves.
//!
//! The tau chosen is the one the whole successor list would put first: that list is sorted by
//! label, then by the canonical order of target terms ([`Encoding::cmp_terms`]), and the
//! targets of the network's taus are terms of the same operators over different leaves, which
//! that order compares argument by argument, left to right, so leaf by leaf in the order of
//! [`NetNode::compile`]. This holds while every leaf a tau moves to stays a leaf of the same
//! network (not a static operator, which would make the network grow or be merged into its
//! parent) and no leaf of a parallel terminates (distributed termination turns a leaf's ✓ into
//! a tau and changes the shape of the state). Where either fails, [`NetWalk::step`] says
//! [`NetStep::Unsure`] and the walk fires that state as a term, as it always did.

#![forbid(unsafe_code)]

use std::cmp::Ordering;

use crate::csp::error::CspError;
use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::labels::TICK;
use super::network::{combine, LeafMoves, NetNode, Scratch};
use super::semantics::{is_terminated, process_positions, sort_moves, Moves, Semantics};
use super::terms::{int_arg, term, Op, Section};

/// The most nested static operators a network of a walk is compiled through; deeper ones are
/// leaves (whose moves are static terms, so such a network's walk goes on term by term).
pub(super) const NET_DEPTH: u32 = 64;

/// What [`NetNode::compile`] made of a leaf, for the rules of the walk.
#[derive(Clone, Copy)]
struct LeafPlace {
    /// Static operators above the leaf (its nesting below the state, for
    /// [`Semantics::transitions`]'s depth).
    nodes_above: u32,
    /// An operand of a parallel (perhaps under hidings and renamings): its ✓ and its Ω take
    /// part in distributed termination.
    under_parallel: bool,
    /// Directly under a hiding, which merges a hiding put in its place.
    under_hiding: bool,
}

/// The outcome of one step of a [`NetWalk`].
pub(super) enum NetStep {
    /// The walk followed the first tau; the leaves are those of its target.
    Tau,
    /// The state has no tau: the walk ends here.
    Stable,
    /// The leaves cannot tell the first tau (see the module's documentation): the state must
    /// be fired as a term.
    Unsure,
}

/// A walk's state as the leaves of a network compiled from the term it started at.
pub(super) struct NetWalk<'s> {
    /// The term the network was compiled from: its operators and their set arguments, and the
    /// subterms of the parts no step has changed.
    root: TermRef<'s>,
    net: NetNode,
    places: Vec<LeafPlace>,
    /// The leaves of `root`.
    start: Vec<TermRef<'s>>,
    /// The leaves of the current state.
    leaves: Vec<TermRef<'s>>,
    /// The transitions of each current leaf.
    leaf_moves: Vec<Moves>,
    flat: LeafMoves<TermId>,
    scratch: Scratch<TermId>,
    /// The updates of the tau chosen so far in a step, by leaf.
    best: Vec<(u32, TermId)>,
    /// The updates of the move being compared with it, by leaf.
    candidate: Vec<(u32, TermId)>,
}

impl<'s> NetWalk<'s> {
    /// The walk from `t`, if `t` is a network of static operators over leaves (`depth` is the
    /// depth at which the walk fires its states, as [`Semantics::transitions`] takes it).
    pub(super) fn new(
        sem: &Semantics,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        depth: u32,
    ) -> Result<Option<NetWalk<'s>>, CspError> {
        if !Op::of(t).is_static() {
            return Ok(None);
        }
        let mut leaves = Vec::new();
        let net = NetNode::compile(&sem.enc, t, NET_DEPTH, &mut leaves);
        if matches!(net, NetNode::Leaf(_)) {
            // A hiding of a leaf: the leaf's own rules merge nested hidings.
            return Ok(None);
        }
        let mut places = vec![
            LeafPlace {
                nodes_above: 0,
                under_parallel: false,
                under_hiding: false,
            };
            leaves.len()
        ];
        place_leaves(&net, 0, false, false, &mut places);
        let mut leaf_moves = Vec::with_capacity(leaves.len());
        for (leaf, place) in leaves.iter().zip(&places) {
            leaf_moves.push(sem.transitions(sec, *leaf, depth + place.nodes_above)?);
        }
        Ok(Some(NetWalk {
            root: t,
            net,
            places,
            start: leaves.clone(),
            leaves,
            leaf_moves,
            flat: LeafMoves::default(),
            scratch: Scratch::default(),
            best: Vec::new(),
            candidate: Vec::new(),
        }))
    }

    /// The current leaves, by leaf number: with the network, they name the state.
    pub(super) fn key(&self) -> Box<[TermId]> {
        self.leaves.iter().map(|l| l.id()).collect()
    }

    /// Follows the first tau of the current state, if the leaves can tell it.
    pub(super) fn step(
        &mut self,
        sem: &Semantics,
        sec: &'s Section<'_>,
        depth: u32,
    ) -> Result<NetStep, CspError> {
        if !self.combine() {
            return Ok(NetStep::Unsure);
        }
        self.best.clear();
        let mut found = false;
        for i in 0..self.scratch.moves.len() {
            let m = self.scratch.moves[i];
            if m.label != TAU {
                continue;
            }
            self.candidate.clear();
            self.candidate.extend_from_slice(
                &self.scratch.updates[m.start as usize..(m.start + m.len) as usize],
            );
            by_leaf(&mut self.candidate);
            for &(leaf, next) in &self.candidate {
                let place = self.places[leaf as usize];
                if !stays_a_leaf(term(sec, next), place.under_hiding) {
                    return Ok(NetStep::Unsure);
                }
            }
            if !found || self.cmp_candidate(sem, sec) == Ordering::Less {
                std::mem::swap(&mut self.best, &mut self.candidate);
                found = true;
            }
        }
        if !found {
            return Ok(NetStep::Stable);
        }
        for k in 0..self.best.len() {
            let (leaf, next) = self.best[k];
            let place = self.places[leaf as usize];
            let next = term(sec, next);
            self.leaves[leaf as usize] = next;
            self.leaf_moves[leaf as usize] =
                sem.transitions(sec, next, depth + place.nodes_above)?;
        }
        Ok(NetStep::Tau)
    }

    /// The term of the current state.
    pub(super) fn state(
        &self,
        sem: &Semantics,
        sec: &'s Section<'_>,
    ) -> Result<TermRef<'s>, CspError> {
        Ok(self
            .rebuild(sem, sec, self.root, &self.net, &self.leaves)?
            .unwrap_or(self.root))
    }

    /// The transitions of the current state after a [`NetStep::Stable`] step (from the same
    /// combination of the leaves' moves), as [`Semantics::transitions`] gives them: targets
    /// built as the firing rules of the static operators build them, in canonical order.
    pub(super) fn stable_moves(
        &self,
        sem: &Semantics,
        sec: &'s Section<'_>,
    ) -> Result<Vec<(Label, TermId)>, CspError> {
        let mut out = Vec::with_capacity(self.scratch.moves.len());
        let mut leaves = self.leaves.clone();
        for m in &self.scratch.moves {
            if m.label == TICK {
                out.push((TICK, sem.enc.omega(sec).id()));
                continue;
            }
            let updates = &self.scratch.updates[m.start as usize..(m.start + m.len) as usize];
            for &(leaf, next) in updates {
                leaves[leaf as usize] = term(sec, next);
            }
            let next = self.rebuild(sem, sec, self.root, &self.net, &leaves)?;
            out.push((m.label, next.unwrap_or(self.root).id()));
            for &(leaf, _) in updates {
                leaves[leaf as usize] = self.leaves[leaf as usize];
            }
        }
        sort_moves(&sem.enc, sec, &mut out);
        Ok(out)
    }

    /// Combines the current leaves' moves into the network's moves (in `self.scratch`); false
    /// when a leaf of a parallel has terminated or can terminate (distributed termination).
    fn combine(&mut self) -> bool {
        self.flat.flat.clear();
        self.flat.spans.clear();
        for (i, moves) in self.leaf_moves.iter().enumerate() {
            if self.places[i].under_parallel
                && (is_terminated(self.leaves[i]) || moves.iter().any(|&(l, _)| l == TICK))
            {
                return false;
            }
            // (Without ✓ and Ω, distributed termination leaves a leaf's moves as they are.)
            self.flat
                .spans
                .push((self.flat.flat.len() as u32, moves.len() as u32));
            self.flat.flat.extend_from_slice(moves);
        }
        self.scratch.clear();
        combine(&self.net, &self.flat, &mut self.scratch);
        true
    }

    /// The canonical order of the target of `self.candidate` against that of `self.best`: leaf
    /// by leaf, at the first leaf where they differ.
    fn cmp_candidate(&self, sem: &Semantics, sec: &'s Section<'_>) -> Ordering {
        let at = |updates: &[(u32, TermId)], k: usize, leaf: u32| -> TermId {
            match updates.get(k) {
                Some(&(l, next)) if l == leaf => next,
                _ => self.leaves[leaf as usize].id(),
            }
        };
        let (a, b) = (&self.candidate, &self.best);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let leaf = match (a.get(i), b.get(j)) {
                (Some(&(x, _)), Some(&(y, _))) => x.min(y),
                (Some(&(x, _)), None) => x,
                (None, Some(&(y, _))) => y,
                (None, None) => unreachable!("the loop's condition"),
            };
            let (x, y) = (at(a, i, leaf), at(b, j, leaf));
            if x != y {
                return sem.enc.cmp_terms(term(sec, x), term(sec, y));
            }
            if a.get(i).is_some_and(|u| u.0 == leaf) {
                i += 1;
            }
            if b.get(j).is_some_and(|u| u.0 == leaf) {
                j += 1;
            }
        }
        Ordering::Equal
    }

    /// The term of `node` (a part of `t`'s network) with the leaves `leaves`, built as the
    /// firing rules of the static operators build their targets (`Semantics::fire_static`):
    /// `None` when no leaf of the part has changed (the part is `t` itself).
    fn rebuild(
        &self,
        sem: &Semantics,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        node: &NetNode,
        leaves: &[TermRef<'s>],
    ) -> Result<Option<TermRef<'s>>, CspError> {
        let children: Vec<&NetNode> = match node {
            NetNode::Leaf(i) => {
                let i = *i as usize;
                return Ok((leaves[i].id() != self.start[i].id()).then_some(leaves[i]));
            }
            NetNode::Parallel { children, .. } | NetNode::AlphaParallel { children, .. } => {
                children.iter().collect()
            }
            NetNode::Hide { child, .. } | NetNode::Rename { child, .. } => vec![&**child],
            NetNode::Link { left, right, .. } => vec![&**left, &**right],
        };
        let op = Op::of(t);
        let mut args: Option<Vec<TermRef<'s>>> = None;
        for (child, position) in children.into_iter().zip(process_positions(op, t.arity())) {
            if let Some(next) = self.rebuild(sem, sec, t.arg(position), child, leaves)? {
                args.get_or_insert_with(|| t.args().collect())[position] = next;
            }
        }
        let Some(args) = args else {
            return Ok(None);
        };
        Ok(Some(match op {
            Op::Hide => sem.enc.hide(sec, args[0], int_arg(t, 1))?,
            Op::Rename => sem.enc.rename(sec, args[0], int_arg(t, 1))?,
            _ => sec.create(t.symbol(), &args).0,
        }))
    }
}

/// Whether `next`, put at a leaf's place (directly under a hiding if `under_hiding`), is a
/// leaf of the same network: not a static operator, except a hiding of a leaf (itself a leaf,
/// see [`NetNode::compile`]) where no hiding above merges with it.
fn stays_a_leaf(next: TermRef<'_>, under_hiding: bool) -> bool {
    let op = Op::of(next);
    !op.is_static() || (op == Op::Hide && !under_hiding && !Op::of(next.arg(0)).is_static())
}

/// Sorts a move's updates by leaf; a leaf updated twice keeps its last update, as building the
/// target in order would.
fn by_leaf(updates: &mut Vec<(u32, TermId)>) {
    updates.reverse();
    updates.sort_by_key(|u| u.0);
    updates.dedup_by_key(|u| u.0);
}

/// Fills `places` for the leaves of `node`, which lies below `nodes_above` static operators.
fn place_leaves(
    node: &NetNode,
    nodes_above: u32,
    under_parallel: bool,
    under_hiding: bool,
    places: &mut [LeafPlace],
) {
    let below = nodes_above + 1;
    match node {
        NetNode::Leaf(i) => {
            places[*i as usize] = LeafPlace {
                nodes_above,
                under_parallel,
                under_hiding,
            }
        }
        NetNode::Parallel { children, .. } | NetNode::AlphaParallel { children, .. } => {
            for c in children {
                place_leaves(c, below, true, false, places);
            }
        }
        NetNode::Hide { child, .. } => place_leaves(child, below, under_parallel, true, places),
        NetNode::Rename { child, .. } => place_leaves(child, below, under_parallel, false, places),
        NetNode::Link { left, right, .. } => {
            place_leaves(left, below, true, false, places);
            place_leaves(right, below, true, false, places);
        }
    }
}
