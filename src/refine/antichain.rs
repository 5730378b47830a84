//! The set of discovered product pairs `(spec set, impl state)`.
//!
//! In antichain mode it is an antichain under `(U, s) ≤ (V, t) ⇔ s = t ∧ U ⊆ V`, keyed by the
//! implementation state: each key holds the ⊆-minimal spec sets discovered with it. A pair is
//! covered when a held set is a subset of its set; inserting a pair removes the held supersets.
//! In exact mode (the classical algorithm) a pair is covered only by itself.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use crossbeam::utils::CachePadded;
use parking_lot::Mutex;

use super::normal::{NormalForm, EMPTY_SET};
use super::shared_normal::SharedNormalForm;
use crate::explore::index::Segmented;
use crate::explore::{LevelSlots, LevelWriter, Offer, ProvisionalId, Visited};
use crate::hash::WordBuildHasher;
use crate::sync::shim::AtomicU64;
use crate::ts::{StateNumber, TransitionSystem};

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

/// The antichain of a parallel search, keyed by implementation state number: the
/// [`Visited`] policy of the product of a normal form and an implementation.
///
/// Per implementation state, the first held set is packed with its provisional id into one
/// atomic word (`set << 32 | id`; 0 is vacant, the empty set never enters), read without a
/// lock; further sets live in a striped map under the stripe's lock, which is also taken for
/// every change of the key's entries. A lock-free reader that finds the first entry covering
/// the pair (a subset of its set) prunes it: entries are only ever replaced by subsets, so
/// coverage once seen stays true. When a level ends the held pairs are exactly the minimal
/// ones among all pairs discovered so far, whatever the order in which workers found them;
/// a pair found twice in one level keeps its least key (see [`LevelSlots`]).
pub(crate) struct ConcurrentAntichain<'a, I: TransitionSystem> {
    nf: &'a SharedNormalForm<'a>,
    imp: &'a I,
    first: Segmented<AtomicU64>,
    /// Stripes of overflow entries, each on its own cache line (neighbouring states take
    /// neighbouring stripes, and are often offered by different workers at once).
    more: Box<[CachePadded<Mutex<Overflow>>]>,
}

/// The entries beyond the first of the keys of one stripe.
type Overflow = HashMap<StateNumber, Vec<u64>, WordBuildHasher>;

/// Stripes of the antichain's locks.
const STRIPES: usize = 1024;

/// An entry: a normal-form set and the provisional id of its pair, in one word.
#[inline]
fn pack(set: u32, prov: ProvisionalId) -> u64 {
    ((set as u64) << 32) | prov.0 as u64
}

#[inline]
fn unpack(entry: u64) -> (u32, ProvisionalId) {
    ((entry >> 32) as u32, ProvisionalId(entry as u32))
}

impl<'a, I: TransitionSystem> ConcurrentAntichain<'a, I> {
    /// An empty antichain over the states of `imp` (which must number its states).
    pub(crate) fn new(nf: &'a SharedNormalForm<'a>, imp: &'a I) -> Self {
        ConcurrentAntichain {
            nf,
            imp,
            first: Segmented::new(1),
            more: (0..STRIPES)
                .map(|_| CachePadded::new(Mutex::new(HashMap::default())))
                .collect(),
        }
    }

    /// What the entry `(u, p)` says of the pair with set `set`: covered, a candidate of the
    /// level (its key lowered), or nothing.
    #[inline]
    fn covers(&self, entry: u64, set: u32, key: u64, slots: &LevelSlots) -> Option<Offer> {
        let (u, p) = unpack(entry);
        if u == set {
            Some(if slots.is_current(p) {
                Offer::Current(p, slots.lower(p, key))
            } else {
                Offer::Covered
            })
        } else if self.nf.is_subset(u, set) {
            Some(Offer::Covered)
        } else {
            None
        }
    }
}

impl<I: TransitionSystem> Visited<(u32, I::State)> for ConcurrentAntichain<'_, I> {
    fn offer(&self, pair: &(u32, I::State), key: u64, level: &mut LevelWriter<'_>) -> Offer {
        let (set, ref state) = *pair;
        debug_assert_ne!(set, EMPTY_SET);
        let slots = level.slots();
        let number = self
            .imp
            .state_number(state)
            .expect("an implementation that numbers its states");
        // A table that cannot grow stops the run by the memory limit (see
        // `LevelWriter::note_memory_failure`), never by an abort.
        let Ok(group) = self.first.try_get_or_alloc(number.index()) else {
            level.note_memory_failure();
            return Offer::Full;
        };
        let cell = &group[0];
        // Ordering: Acquire; pairs with the Release compare-and-swaps below (the entry's
        // candidate key was stored before it).
        let mut entry = cell.load(Ordering::Acquire);
        let mut prov = None;
        if entry == 0 {
            // A state met for the first time has no other entries (the first entry is only
            // vacant when the key holds none): claim it without the lock.
            let Some(p) = level.allocate(key) else {
                return Offer::Full;
            };
            // Ordering: Release on success publishes the candidate's key; Acquire on
            // failure sees the winner's entry.
            match cell.compare_exchange(0, pack(set, p), Ordering::Release, Ordering::Acquire) {
                Ok(_) => return Offer::New(p),
                Err(winner) => {
                    entry = winner;
                    prov = Some(p);
                }
            }
        }
        if entry != 0 {
            if let Some(offer) = self.covers(entry, set, key, slots) {
                if let Some(p) = prov {
                    slots.remove(p);
                }
                return offer;
            }
        }
        let mut more = self.more[number.index() as usize % STRIPES].lock();
        loop {
            // Ordering: Acquire, as above. Under the lock only a first claim (from 0) can
            // change the cell meanwhile; the compare-and-swap below then fails and the entries
            // are looked at again.
            let entry = cell.load(Ordering::Acquire);
            let list = more.get(&number).map(Vec::as_slice).unwrap_or(&[]);
            let covered = (entry != 0)
                .then(|| self.covers(entry, set, key, slots))
                .flatten()
                .or_else(|| list.iter().find_map(|&e| self.covers(e, set, key, slots)));
            if let Some(offer) = covered {
                if let Some(p) = prov {
                    slots.remove(p);
                }
                return offer;
            }
            let p = match prov {
                Some(p) => p,
                None => match level.allocate(key) {
                    Some(p) => {
                        prov = Some(p);
                        p
                    }
                    None => return Offer::Full,
                },
            };
            // The held supersets of `set` go (a candidate of this level among them is
            // removed); the new entry takes the first place if that is free.
            let superset = |e: u64| self.nf.is_subset(set, unpack(e).0);
            let first_goes = entry != 0 && superset(entry);
            let mut kept: Vec<u64> = list.iter().copied().filter(|&e| !superset(e)).collect();
            let gone: Vec<u64> = list
                .iter()
                .copied()
                .filter(|&e| superset(e))
                .chain(first_goes.then_some(entry))
                .collect();
            let fresh = pack(set, p);
            let first = if entry == 0 || first_goes {
                fresh
            } else {
                kept.push(fresh);
                entry
            };
            // Ordering: Release on success publishes the candidate's key to the lock-free
            // readers; Relaxed on failure, which is retried.
            if cell
                .compare_exchange(entry, first, Ordering::Release, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            for &e in &gone {
                let (_, q) = unpack(e);
                if slots.is_current(q) {
                    slots.remove(q);
                }
            }
            level.note_removed(gone.len() as u64);
            if kept.is_empty() {
                more.remove(&number);
            } else {
                more.insert(number, kept);
            }
            return Offer::New(p);
        }
    }
}
