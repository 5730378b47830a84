//! The set of discovered product pairs `(spec set, impl state)`.
//!
//! In antichain mode it is an antichain under `(U, s) ≤ (V, t) ⇔ s = t ∧ U ⊆ V`, keyed by the
//! implementation state: each key holds the ⊆-minimal spec sets discovered with it. A pair is
//! covered when a held set is a subset of its set; inserting a pair removes the held supersets.
//! In exact mode (the classical algorithm) a pair is covered only by itself.

use std::collections::HashSet;

use super::normal::NormalForm;
use crate::hash::WordBuildHasher;

const NONE: u32 = u32::MAX;

/// Discovered pairs, as an antichain or as an exact visited set.
pub(crate) enum Discovered {
    Antichain(Antichain),
    Exact(HashSet<u64, WordBuildHasher>),
}

impl Discovered {
    /// An empty antichain over `num_impl_states` keys, or an empty exact set.
    pub(crate) fn new(exact: bool, num_impl_states: u32) -> Discovered {
        if exact {
            Discovered::Exact(HashSet::default())
        } else {
            Discovered::Antichain(Antichain::new(num_impl_states))
        }
    }

    /// If `(set, state)` is covered, returns false; otherwise inserts it and returns true.
    #[inline]
    pub(crate) fn insert_if_new(&mut self, nf: &NormalForm<'_>, set: u32, state: u32) -> bool {
        match self {
            Discovered::Antichain(a) => a.insert_if_new(nf, set, state),
            Discovered::Exact(visited) => visited.insert(((state as u64) << 32) | set as u64),
        }
    }

    /// The number of pairs held now.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Discovered::Antichain(a) => a.size,
            Discovered::Exact(visited) => visited.len() as u64,
        }
    }
}

/// An antichain of pairs keyed by implementation state. Most keys hold one set, kept inline
/// in `first`; a key with more holds the rest in an overflow list.
pub(crate) struct Antichain {
    first: Vec<u32>,
    overflow_of: Vec<u32>,
    overflow: Vec<Vec<u32>>,
    size: u64,
}

impl Antichain {
    fn new(num_impl_states: u32) -> Antichain {
        Antichain {
            first: vec![NONE; num_impl_states as usize],
            overflow_of: vec![NONE; num_impl_states as usize],
            overflow: Vec::new(),
            size: 0,
        }
    }

    #[inline]
    fn insert_if_new(&mut self, nf: &NormalForm<'_>, set: u32, state: u32) -> bool {
        let s = state as usize;
        let first = self.first[s];
        if first == NONE {
            self.first[s] = set;
            self.size += 1;
            return true;
        }
        if nf.is_subset(first, set) {
            return false;
        }
        let ov = self.overflow_of[s];
        if ov != NONE
            && self.overflow[ov as usize]
                .iter()
                .any(|&v| nf.is_subset(v, set))
        {
            return false;
        }
        // New: drop the held supersets of `set`, then add it.
        if ov != NONE {
            let list = &mut self.overflow[ov as usize];
            let before = list.len();
            list.retain(|&v| !nf.is_subset(set, v));
            self.size -= (before - list.len()) as u64;
        }
        if nf.is_subset(set, first) {
            self.size -= 1;
            self.first[s] = set;
        } else {
            let ov = if ov == NONE {
                let id = self.overflow.len() as u32;
                self.overflow.push(Vec::new());
                self.overflow_of[s] = id;
                id
            } else {
                ov
            };
            self.overflow[ov as usize].push(set);
        }
        self.size += 1;
        true
    }
}
