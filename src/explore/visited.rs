//! How the engine tells new states from known ones: the [`Visited`] policies (an exact
//! index of numbered states, a hash set of states), and a level's provisional ids
//! ([`LevelSlots`], [`LevelWriter`]) with the least key of the steps that found each
//! candidate (see "Canonical ids" in [`super::engine`]).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64 as StdAtomicU64, Ordering};

use crossbeam::utils::CachePadded;
use dashmap::DashMap;

use super::ids::ProvisionalId;
use super::index::Segmented;
use crate::sync::shim::{AtomicU32, AtomicU64};
use crate::threads::Threads;
use crate::ts::TransitionSystem;

/// What a [`Visited`] policy says of a state offered to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// New: this offer made it a candidate of the level, with this provisional id.
    New(ProvisionalId),
    /// Already a candidate of the level; whether this step's key was less than its least
    /// one so far (and replaced it).
    Current(ProvisionalId, bool),
    /// Known from an earlier level, with this provisional id.
    Old(ProvisionalId),
    /// Covered by a known state (an antichain's pruning): not kept.
    Covered,
    /// New, but the provisional ids are used up: not kept (the run stops at the level's end).
    Full,
}

/// How the engine tells new states from known ones.
pub trait Visited<S>: Sync {
    /// Offers `state`, found by the step with key `key`, to the level that `level` writes
    /// to. Called concurrently by the workers, each with its own writer.
    fn offer(&self, state: &S, key: u64, level: &mut LevelWriter<'_>) -> Offer;

    /// Told, between levels, the states a level kept (the initial state first).
    fn end_level(&self, _kept: &[S]) {}

    /// A hint that `state` is about to be offered: the policy may start loading what the
    /// offer will read (the successors of a state are hinted together before they are
    /// offered, so that their cache misses overlap).
    #[inline]
    fn prefetch(&self, _state: &S) {}
}

/// A worker's access to the candidates of a level: it takes provisional ids in blocks, so
/// that workers do not contend for one counter (and their candidates' keys lie apart).
pub struct LevelWriter<'a> {
    slots: &'a LevelSlots,
    next: u64,
    end: u64,
    /// Known states this worker removed (an antichain's supersets), for statistics.
    pub(super) removed: u64,
}

/// Provisional ids a worker takes at a time.
const PROVISIONAL_BLOCK: u64 = 64;

impl<'a> LevelWriter<'a> {
    /// A writer to the level of `slots`.
    pub fn new(slots: &'a LevelSlots) -> Self {
        LevelWriter {
            slots,
            next: 0,
            end: 0,
            removed: 0,
        }
    }

    /// Counts `n` known states removed (for the statistics of [`super::Run::max_held`]).
    #[inline]
    pub fn note_removed(&mut self, n: u64) {
        self.removed += n;
    }

    /// A new candidate found by the step `key`; `None` when provisional ids are used up.
    /// The caller publishes the id to other workers with release ordering (or a lock), so
    /// that they see its key before they lower it.
    #[inline]
    pub fn allocate(&mut self, key: u64) -> Option<ProvisionalId> {
        if self.next == self.end {
            // Ordering: Relaxed; blocks need only be disjoint.
            self.next = self
                .slots
                .next
                .fetch_add(PROVISIONAL_BLOCK, Ordering::Relaxed);
            self.end = self.next + PROVISIONAL_BLOCK;
        }
        let p = self.next;
        if p >= PROVISIONAL_LIMIT {
            return None;
        }
        self.next += 1;
        let Ok(group) = self.slots.keys.try_get_or_alloc(p - self.slots.base as u64) else {
            self.note_memory_failure();
            return None;
        };
        // Ordering: Relaxed; published by the caller (see above).
        group[0].store(key + 1, Ordering::Relaxed);
        Some(ProvisionalId(p as u32))
    }

    /// Records that a table of the level could not grow (an allocation failed: under an
    /// address-space bound, or past the machine's memory); the offer that met it returns
    /// [`Offer::Full`], and the run stops by the memory limit (not the state limit) at the
    /// level's end, with its statistics, instead of aborting.
    pub fn note_memory_failure(&self) {
        // Ordering: Relaxed; read after the level's join.
        self.slots.memory_failed.store(true, Ordering::Relaxed);
    }

    /// The level's slots.
    #[inline]
    pub fn slots(&self) -> &'a LevelSlots {
        self.slots
    }
}

/// The candidates of one level: provisional ids from `base` on, each with the least key that
/// found it (stored plus one; 0 marks a candidate removed by an antichain, or an id of a
/// worker's block left unused).
pub struct LevelSlots {
    base: u32,
    /// The next provisional id (wider than `u32` so that running out is seen, not wrapped), on
    /// its own cache line: a worker taking a block does not evict `keys`, which every offer
    /// reads, from the others' caches.
    next: CachePadded<StdAtomicU64>,
    keys: Segmented<AtomicU64>,
    /// Whether an offer met an allocation that failed (see
    /// [`LevelWriter::note_memory_failure`]).
    memory_failed: AtomicBool,
}

/// Provisional ids stop below this (`u32::MAX` is reserved).
const PROVISIONAL_LIMIT: u64 = u32::MAX as u64 - 1;

impl LevelSlots {
    /// Slots of a level whose first provisional id is `base`.
    pub fn new(base: u32) -> LevelSlots {
        LevelSlots {
            base,
            next: CachePadded::new(StdAtomicU64::new(base as u64)),
            keys: Segmented::new(1),
            memory_failed: AtomicBool::new(false),
        }
    }

    /// Whether an offer of the level met an allocation that failed: the level's
    /// [`Offer::Full`] is then the memory limit's, not the state limit's.
    pub fn memory_failed(&self) -> bool {
        // Ordering: Relaxed; read after the level's join.
        self.memory_failed.load(Ordering::Relaxed)
    }

    /// Whether `prov` is a candidate of this level (else of an earlier one).
    #[inline]
    pub fn is_current(&self, prov: ProvisionalId) -> bool {
        prov.0 >= self.base
    }

    /// The slot of candidate `prov` of this level.
    #[inline]
    fn slot(&self, prov: ProvisionalId) -> &AtomicU64 {
        &self.keys.get((prov.0 - self.base) as u64)[0]
    }

    /// Lowers the key of candidate `prov` of this level to `key` if that is less; returns
    /// whether it did.
    #[inline]
    pub fn lower(&self, prov: ProvisionalId, key: u64) -> bool {
        let cell = self.slot(prov);
        // Ordering: Relaxed; a read-modify-write sees the latest value, and the keys are read
        // only after the level's join.
        let held = cell.load(Ordering::Relaxed);
        held > key + 1 && cell.fetch_min(key + 1, Ordering::Relaxed) > key + 1
    }

    /// Removes candidate `prov` of this level (an antichain found a smaller one).
    #[inline]
    pub fn remove(&self, prov: ProvisionalId) {
        let cell = self.slot(prov);
        // Ordering: Relaxed; 0 is below every key, so no later lowering undoes it.
        cell.store(0, Ordering::Relaxed);
    }

    /// The least key of candidate `prov`, or `None` if it was removed (read when the level's
    /// workers have ended).
    pub fn least_key(&self, prov: ProvisionalId) -> Option<u64> {
        // Ordering: Relaxed; read after the level's join.
        let k = self.slot(prov).load(Ordering::Relaxed);
        k.checked_sub(1)
    }

    /// Makes these the slots of the level whose first provisional id is `base`: the keys of
    /// the ids used so far are cleared (a level reuses its predecessor's memory instead of
    /// asking the system for fresh pages at every level).
    pub(super) fn reset(&mut self, base: u32) {
        let used = self.end() as u64 - self.base as u64;
        for i in 0..used {
            // Ordering: Relaxed; no worker runs between levels (`&mut self`).
            self.keys.get_or_alloc(i)[0].store(0, Ordering::Relaxed);
        }
        self.base = base;
        self.next = CachePadded::new(StdAtomicU64::new(base as u64));
    }

    /// The first provisional id of the next level.
    pub(super) fn end(&self) -> u32 {
        // Ordering: Relaxed; read after the level's join.
        self.next.load(Ordering::Relaxed).min(PROVISIONAL_LIMIT) as u32
    }
}

/// An exact index for a system that numbers its states ([`TransitionSystem::state_number`]):
/// the provisional id of each number (plus one; 0: not met).
pub struct NumberedVisited<'a, T: TransitionSystem> {
    ts: &'a T,
    prov_of: Segmented<AtomicU32>,
}

impl<'a, T: TransitionSystem> NumberedVisited<'a, T> {
    /// An empty index of `ts`'s states.
    pub fn new(ts: &'a T) -> Self {
        NumberedVisited {
            ts,
            prov_of: Segmented::new(1),
        }
    }
}

impl<T: TransitionSystem> Visited<T::State> for NumberedVisited<'_, T> {
    #[inline]
    fn offer(&self, state: &T::State, key: u64, level: &mut LevelWriter<'_>) -> Offer {
        let slots = level.slots();
        let number = self.ts.state_number(state).expect("a numbered system");
        let Ok(group) = self.prov_of.try_get_or_alloc(number.index()) else {
            level.note_memory_failure();
            return Offer::Full;
        };
        let cell = &group[0];
        // Ordering: Acquire; pairs with the Release below, so that the candidate's key is
        // seen before it is lowered.
        let mut held = cell.load(Ordering::Acquire);
        if held == 0 {
            let Some(p) = level.allocate(key) else {
                return Offer::Full;
            };
            // Ordering: AcqRel on success publishes the key stored by `allocate`; Acquire on
            // failure sees the winner's.
            match cell.compare_exchange(0, p.0 + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Offer::New(p),
                Err(winner) => {
                    slots.remove(p);
                    held = winner;
                }
            }
        }
        known(ProvisionalId(held - 1), key, slots)
    }
}

/// The offer of a state known by provisional id `prov`.
#[inline]
fn known(prov: ProvisionalId, key: u64, slots: &LevelSlots) -> Offer {
    if slots.is_current(prov) {
        Offer::Current(prov, slots.lower(prov, key))
    } else {
        Offer::Old(prov)
    }
}

/// An exact index for any system: a concurrent map from states to provisional ids.
pub struct HashedVisited<S: std::hash::Hash + Eq> {
    index: DashMap<S, ProvisionalId, crate::hash::WordBuildHasher>,
}

impl<S: std::hash::Hash + Eq + Clone> HashedVisited<S> {
    /// An empty index for `threads` workers.
    pub fn new(threads: Threads) -> Self {
        // Many more shards than threads: two workers then rarely want the same shard's lock.
        let shards = (threads.get() * 256).next_power_of_two();
        HashedVisited {
            index: DashMap::with_hasher_and_shard_amount(Default::default(), shards),
        }
    }
}

impl<S: std::hash::Hash + Eq + Clone + Send + Sync> Visited<S> for HashedVisited<S> {
    #[inline]
    fn offer(&self, state: &S, key: u64, level: &mut LevelWriter<'_>) -> Offer {
        let slots = level.slots();
        if let Some(p) = self.index.get(state) {
            return known(*p, key, slots);
        }
        match self.index.entry(state.clone()) {
            dashmap::mapref::entry::Entry::Occupied(e) => known(*e.get(), key, slots),
            // The shard's lock publishes the key stored by `allocate`.
            dashmap::mapref::entry::Entry::Vacant(v) => match level.allocate(key) {
                Some(p) => {
                    v.insert(p);
                    Offer::New(p)
                }
                None => Offer::Full,
            },
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_slot_table_that_cannot_grow_is_a_memory_failure_not_an_abort() {
        // Groups of 2^50 words: the first segment is 2^64 bytes, more than any address space.
        let failing = LevelSlots {
            keys: Segmented::new(1 << 50),
            ..LevelSlots::new(0)
        };
        assert_eq!(LevelWriter::new(&failing).allocate(7), None);
        assert!(failing.memory_failed());
        // The same offer with a table that can grow takes an id, and nothing failed.
        let growing = LevelSlots::new(0);
        let p = LevelWriter::new(&growing).allocate(7).expect("an id");
        assert_eq!(growing.least_key(p), Some(7));
        assert!(!growing.memory_failed());
    }

    #[test]
    fn a_numbered_index_that_cannot_grow_offers_full_and_notes_the_failure() {
        use crate::lts::Lts;
        let lts = Lts::from_transitions(0, 2, vec!["tau".into(), "a".into()], &[(0, 1, 1)]);
        let visited = NumberedVisited {
            ts: &lts,
            prov_of: Segmented::new(1 << 50),
        };
        let slots = LevelSlots::new(0);
        let mut writer = LevelWriter::new(&slots);
        let offer = visited.offer(&0, 0, &mut writer);
        assert_eq!(offer, Offer::Full);
        assert!(slots.memory_failed());
    }
}
