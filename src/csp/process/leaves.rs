//! The sequential processes of a network's positions: explored on their own when the system
//! is made ([`LeafLts`], numbered canonically) or numbered as met ([`LeafTable`]).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::{Mutex, RwLock};

use crate::csp::error::CspError;
use crate::hash::WordBuildHasher;
use crate::term::TermId;
use crate::ts::Label;

use super::semantics::Semantics;
use super::terms::{term, Section};

/// The leaves of one position of a network.
pub(super) enum Position {
    Explicit(Arc<LeafLts>),
    Lazy(LeafTable),
}

impl Position {
    pub(super) fn term(&self, n: u32) -> TermId {
        match self {
            Position::Explicit(lts) => lts.terms[n as usize],
            Position::Lazy(table) => table.term(n),
        }
    }

    pub(super) fn moves(
        &self,
        sem: &Semantics,
        sec: &Section<'_>,
        n: u32,
    ) -> Result<Arc<[(Label, u32)]>, CspError> {
        match self {
            Position::Explicit(lts) => Ok(lts.moves[n as usize].clone()),
            Position::Lazy(table) => table.moves(sem, sec, n),
        }
    }

    pub(super) fn for_each_term(&self, visit: &mut dyn FnMut(TermId)) {
        match self {
            Position::Explicit(lts) => lts.terms.iter().for_each(|&t| visit(t)),
            Position::Lazy(table) => table.leaves.read().iter().for_each(|l| visit(l.term)),
        }
    }
}

/// A sequential process explored on its own: its reachable terms, numbered breadth first, and
/// their transitions.
pub(super) struct LeafLts {
    pub(super) terms: Vec<TermId>,
    pub(super) moves: Vec<Arc<[(Label, u32)]>>,
}

/// Why a position's process was not explored on its own.
pub(super) enum NotExplored {
    /// It has more states than the bound, or failed to evaluate somewhere (the failure
    /// is met again, and reported, when the system runs).
    Lazy,
    /// It meets compression `k`, not made yet: made outside the section, then explored again.
    Pending(u32),
}

impl LeafLts {
    /// Explores `start`, up to `limit` states.
    pub(super) fn explore(
        sem: &Semantics,
        sec: &Section<'_>,
        start: TermId,
        limit: usize,
    ) -> Result<LeafLts, NotExplored> {
        let mut numbers: HashMap<TermId, u32, WordBuildHasher> = HashMap::default();
        numbers.insert(start, 0);
        let mut lts = LeafLts {
            terms: vec![start],
            moves: Vec::new(),
        };
        while lts.moves.len() < lts.terms.len() {
            let t = lts.terms[lts.moves.len()];
            let fired =
                sem.transitions(sec, term(sec, t), 0).map_err(
                    |_| match super::compress::pending() {
                        Some(k) => NotExplored::Pending(k),
                        None => NotExplored::Lazy,
                    },
                )?;
            let mut moves = Vec::with_capacity(fired.len());
            for &(label, target) in fired.iter() {
                let next = *numbers.entry(target).or_insert_with(|| {
                    lts.terms.push(target);
                    lts.terms.len() as u32 - 1
                });
                moves.push((label, next));
            }
            if lts.terms.len() > limit {
                return Err(NotExplored::Lazy);
            }
            lts.moves.push(moves.into());
        }
        Ok(lts)
    }
}

/// One sequential process met by the system, and its transitions once computed.
pub(super) struct Leaf {
    pub(super) term: TermId,
    moves: Option<Arc<[(Label, u32)]>>,
}

/// The sequential processes of a system, numbered densely in the order they are met.
#[derive(Default)]
pub(super) struct LeafTable {
    numbers: DashMap<TermId, u32, WordBuildHasher>,
    /// By number; written only under the write lock, which also makes numbering unique.
    pub(super) leaves: RwLock<Vec<Leaf>>,
    /// The compressions applied in firing its leaves (sorted).
    pub(super) compressions: Mutex<Vec<u32>>,
}

impl LeafTable {
    /// The number of `t`, given on first call.
    pub(super) fn number(&self, t: TermId) -> u32 {
        if let Some(n) = self.numbers.get(&t) {
            return *n;
        }
        let mut leaves = self.leaves.write();
        if let Some(n) = self.numbers.get(&t) {
            return *n;
        }
        let n = leaves.len() as u32;
        leaves.push(Leaf {
            term: t,
            moves: None,
        });
        self.numbers.insert(t, n);
        n
    }

    /// A table of the leaves of `lts` (explored whole), with its numbers and transitions:
    /// every state reachable from its first is numbered, canonically.
    pub(super) fn explored(lts: &LeafLts) -> LeafTable {
        let table = LeafTable::default();
        {
            let mut leaves = table.leaves.write();
            for (n, (&term, moves)) in lts.terms.iter().zip(&lts.moves).enumerate() {
                table.numbers.insert(term, n as u32);
                leaves.push(Leaf {
                    term,
                    moves: Some(moves.clone()),
                });
            }
        }
        table
    }

    pub(super) fn term(&self, n: u32) -> TermId {
        self.leaves.read()[n as usize].term
    }

    /// The transitions of leaf `n` if computed already.
    pub(super) fn known_moves(&self, n: u32) -> Option<Arc<[(Label, u32)]>> {
        self.leaves.read().get(n as usize)?.moves.clone()
    }

    /// The transitions of leaf `n`, computed on first call (inside a shared section).
    pub(super) fn moves(
        &self,
        sem: &Semantics,
        sec: &Section<'_>,
        n: u32,
    ) -> Result<Arc<[(Label, u32)]>, CspError> {
        let t = {
            let leaves = self.leaves.read();
            let leaf = &leaves[n as usize];
            if let Some(moves) = &leaf.moves {
                return Ok(moves.clone());
            }
            leaf.term
        };
        let (fired, ks) = sem.recording(|| sem.transitions(sec, term(sec, t), 0));
        if !ks.is_empty() {
            super::shared_leaves::merge_compressions(&mut self.compressions.lock(), &ks);
        }
        let fired = fired?;
        let moves: Arc<[(Label, u32)]> = fired
            .iter()
            .map(|&(label, target)| (label, self.number(target)))
            .collect();
        let mut leaves = self.leaves.write();
        Ok(leaves[n as usize].moves.get_or_insert(moves).clone())
    }
}
