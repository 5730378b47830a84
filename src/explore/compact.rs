//! [`CompactSet`]: the visited states of an exploration that reports counts only, kept as their
//! canonical encodings ([`TransitionSystem::encoded_width`]) of at most two words, one `u64`
//! per slot of an open-addressing table: about 12 bytes per state, with no number, no parent
//! and no copy of the state anywhere else (LTSmin and SPIN keep a state in a few words the
//! same way).
//!
//! # Layout
//!
//! The table is split into [`SHARDS`] shards by the high bits of a key's hash; a shard grows
//! on its own (by half, when more than [`MAX_LOAD_PERCENT`]% full), so growing never needs a
//! second copy of the whole table, only of one shard: the peak memory stays near the
//! table's size. Within a shard, linear probing from a position chosen by the hash's low
//! bits (scaled to the shard's size, which need not be a power of two). A slot holds the key
//! itself; 0 marks an empty slot, so the key 0 (the initial state of every CSPm network) is
//! kept aside in a flag of the set.
//!
//! # Concurrency
//!
//! Inserting takes the shard's lock shared and claims an empty slot with a compare-and-swap,
//! so two workers inserting one key race along one probe sequence and exactly one of them
//! inserts it. Growing takes the shard's lock exclusively. Keys are plain values: nothing is
//! published through a slot but the key itself, so `Relaxed` orderings suffice for slots
//! (the lock orders the table's replacement).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crossbeam::utils::CachePadded;
use parking_lot::RwLock;

use super::engine::{Driven, Found, LevelWriter, Offer, Visited};
use super::ids::ProvisionalId;
use super::limits::{StopReason, StopSignal};
use super::zeroed::ZeroedWords;
use crate::ts::{Label, TransitionSystem};

/// Shards of a set (a power of two).
pub const SHARDS: usize = 1 << 10;
/// Slots of a new shard.
const INITIAL_SLOTS: usize = 64;
/// A shard grows when more than this percentage of its slots is used.
pub const MAX_LOAD_PERCENT: u64 = 78;
/// A shard whose growth failed (no memory) takes no key past this percentage of its slots
/// until it grows.
const FULL_PERCENT: u64 = 95;

struct Shard {
    slots: RwLock<ZeroedWords>,
    /// Keys held.
    len: AtomicU64,
    /// The address and the length of the table in `slots`, for [`CompactSet::prefetch`]
    /// without the lock (a hint only: read while the table is replaced, they may be those of
    /// different tables, and a prefetch of any address is harmless).
    hint: (AtomicUsize, AtomicUsize),
    /// Set while the last attempt to grow the table failed (no memory): only then do inserts
    /// check the [`FULL_PERCENT`] bound, which keeps the common path to one flag.
    stalled: AtomicBool,
}

impl Shard {
    /// Records the table in `slots` in `hint`.
    fn publish(&self, slots: &ZeroedWords) {
        // Ordering: Relaxed; a hint (see `hint`).
        self.hint
            .0
            .store(slots.as_ptr() as usize, Ordering::Relaxed);
        self.hint.1.store(slots.len(), Ordering::Relaxed);
    }
}

/// A concurrent set of `u64` keys. See the module documentation.
pub struct CompactSet {
    shards: Box<[CachePadded<Shard>]>,
    /// Whether the key 0 is in the set.
    zero: AtomicBool,
}

impl Default for CompactSet {
    fn default() -> Self {
        Self::new()
    }
}

/// A well-mixed hash of a key (the finaliser of MurmurHash3).
#[inline]
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The first slot of a key of hash `h` in a shard of `len` slots.
#[inline]
fn home(h: u64, len: usize) -> usize {
    (((h as u32) as u64 * len as u64) >> 32) as usize
}

impl CompactSet {
    /// An empty set.
    pub fn new() -> CompactSet {
        CompactSet {
            shards: (0..SHARDS)
                .map(|_| {
                    let shard = Shard {
                        slots: RwLock::new(ZeroedWords::new(INITIAL_SLOTS)),
                        len: AtomicU64::new(0),
                        hint: (AtomicUsize::new(0), AtomicUsize::new(0)),
                        stalled: AtomicBool::new(false),
                    };
                    shard.publish(&shard.slots.read());
                    CachePadded::new(shard)
                })
                .collect(),
            zero: AtomicBool::new(false),
        }
    }

    /// Inserts `key`; returns whether it was absent. A table that cannot grow aborts (as any
    /// allocation that fails); see [`CompactSet::try_insert`].
    #[inline]
    pub fn insert(&self, key: u64) -> bool {
        self.try_insert(key).unwrap_or_else(|bytes| {
            let layout = std::alloc::Layout::from_size_align(bytes as usize, 8)
                .unwrap_or(std::alloc::Layout::new::<u64>());
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// Inserts `key`; returns whether it was absent, or the size in bytes of the table that
    /// could not be allocated when the key's shard is full and cannot grow (the run is over
    /// its memory). A shard whose growth failed keeps filling up to [`FULL_PERCENT`]% and is
    /// grown again before it goes further, so that its probes always end.
    #[inline]
    pub fn try_insert(&self, key: u64) -> Result<bool, u64> {
        if key == 0 {
            // Ordering: Relaxed; only which caller flips it matters.
            return Ok(!self.zero.swap(true, Ordering::Relaxed));
        }
        let h = mix(key);
        let shard = &self.shards[(h >> (64 - SHARDS.trailing_zeros())) as usize];
        let (inserted, capacity) = loop {
            let slots = shard.slots.read();
            // Ordering: Relaxed for both; a flag set under the write lock, which this read
            // lock orders, and a count (the threads racing past the bound are few, and the
            // bound leaves a twentieth of the slots empty).
            if shard.stalled.load(Ordering::Relaxed)
                && shard.len.load(Ordering::Relaxed) * 100 >= slots.len() as u64 * FULL_PERCENT
            {
                drop(slots);
                grow(shard)?;
                continue;
            }
            break (probe(&slots, key, h), slots.len() as u64);
        };
        if inserted {
            // Ordering: Relaxed; a count, compared with the size again under the lock.
            let len = shard.len.fetch_add(1, Ordering::Relaxed) + 1;
            if len * 100 > capacity * MAX_LOAD_PERCENT {
                // A failure is met again, and reported, when the shard reaches FULL_PERCENT.
                let _ = grow(shard);
            }
        }
        Ok(inserted)
    }

    /// Starts loading the slot where a lookup of `key` begins (a hint). Takes no lock: the
    /// shard's table is found from its `hint`.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let h = mix(key);
        let shard = &self.shards[(h >> (64 - SHARDS.trailing_zeros())) as usize];
        // Ordering: Relaxed; a hint (see `Shard::hint`).
        let base = shard.hint.0.load(Ordering::Relaxed);
        let len = shard.hint.1.load(Ordering::Relaxed);
        super::index::prefetch_address(base.wrapping_add(home(h, len) * 8));
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: u64) -> bool {
        if key == 0 {
            // Ordering: Relaxed; read after the inserting threads joined.
            return self.zero.load(Ordering::Relaxed);
        }
        let h = mix(key);
        let shard = &self.shards[(h >> (64 - SHARDS.trailing_zeros())) as usize];
        let slots = shard.slots.read();
        let mut i = home(h, slots.len());
        loop {
            // Ordering: Relaxed; see the module documentation.
            match slots[i].load(Ordering::Relaxed) {
                0 => return false,
                k if k == key => return true,
                _ => i = if i + 1 == slots.len() { 0 } else { i + 1 },
            }
        }
    }

    /// Keys in the set.
    pub fn len(&self) -> u64 {
        // Ordering: Relaxed; counts read after the inserting threads joined.
        let held: u64 = self
            .shards
            .iter()
            .map(|s| s.len.load(Ordering::Relaxed))
            .sum();
        held + u64::from(self.zero.load(Ordering::Relaxed))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the set's tables take.
    pub fn bytes(&self) -> u64 {
        let slots: u64 = self
            .shards
            .iter()
            .map(|s| s.slots.read().len() as u64)
            .sum();
        slots * 8 + (SHARDS * std::mem::size_of::<CachePadded<Shard>>()) as u64
    }

    /// Calls `f` with every key, shard by shard (an order fixed by the keys alone).
    pub fn for_each(&self, f: &mut dyn FnMut(u64)) {
        // Ordering: Relaxed; read after the inserting threads joined.
        if self.zero.load(Ordering::Relaxed) {
            f(0);
        }
        for shard in self.shards.iter() {
            for slot in shard.slots.read().iter() {
                match slot.load(Ordering::Relaxed) {
                    0 => {}
                    k => f(k),
                }
            }
        }
    }
}

/// Finds `key` in `slots` or claims an empty slot for it; returns whether it claimed one.
#[inline]
fn probe(slots: &[AtomicU64], key: u64, h: u64) -> bool {
    let mut i = home(h, slots.len());
    loop {
        let slot = &slots[i];
        // Ordering: Relaxed; the key is the slot's whole content (module documentation).
        let mut held = slot.load(Ordering::Relaxed);
        if held == 0 {
            match slot.compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(actual) => held = actual,
            }
        }
        if held == key {
            return false;
        }
        i = if i + 1 == slots.len() { 0 } else { i + 1 };
    }
}

/// Replaces the table of `shard` by one half as large again, if it is still too full; the
/// size in bytes of the table that could not be allocated, if it could not (the old table
/// stays).
#[cold]
fn grow(shard: &Shard) -> Result<(), u64> {
    let mut slots = shard.slots.write();
    // Ordering: Relaxed; inserters into this shard are excluded by the lock.
    let len = shard.len.load(Ordering::Relaxed);
    if len * 100 <= slots.len() as u64 * MAX_LOAD_PERCENT {
        return Ok(()); // another thread grew it
    }
    let words = slots.len() + slots.len() / 2;
    let Some(bigger) = ZeroedWords::try_new(words) else {
        // Ordering: Relaxed; written under the write lock (see the field).
        shard.stalled.store(true, Ordering::Relaxed);
        return Err((words as u64).saturating_mul(8));
    };
    // Ordering: Relaxed; as above.
    shard.stalled.store(false, Ordering::Relaxed);
    for slot in slots.iter() {
        let key = slot.load(Ordering::Relaxed);
        if key != 0 {
            probe(&bigger, key, mix(key));
        }
    }
    shard.publish(&bigger);
    *slots = bigger;
    Ok(())
}

/// Packs an encoding of one or two words into a key.
#[inline]
pub fn pack(words: &[u32]) -> u64 {
    match words {
        [a] => *a as u64,
        [a, b] => *a as u64 | (*b as u64) << 32,
        _ => unreachable!("an encoding of one or two words"),
    }
}

/// The key of `pair` (a node above `bits` bits of packed encoding), or `None` when the node's
/// number does not fit.
#[inline]
pub fn pair_key(bits: u32, (node, state): (u32, u64)) -> Option<u64> {
    if bits >= 64 {
        return (node == 0).then_some(state);
    }
    let room = 64 - bits;
    (room >= 32 || (node as u64) < 1u64 << room).then(|| state | (node as u64) << bits)
}

/// A system searched on its own (an exploration, a property test) as a product with the
/// single node 0, so that the compact and distributed searches of products serve it too.
pub struct AlonePairs<'a, D>(pub &'a D);

impl<D: Driven> Driven for AlonePairs<'_, D> {
    type State = (u32, D::State);
    type Witness = D::Witness;

    fn initial_state(&self) -> (u32, D::State) {
        (0, self.0.initial_state())
    }

    #[inline]
    fn expand(
        &self,
        (_, state): &(u32, D::State),
        emit: &mut dyn FnMut(Label, (u32, D::State)),
    ) -> Option<Found<D::Witness>> {
        self.0
            .expand(state, &mut |label, target| emit(label, (0, target)))
    }
}

/// The two words of `key` (the second is 0 for an encoding of one word).
#[inline]
pub fn unpack(key: u64) -> [u32; 2] {
    [key as u32, (key >> 32) as u32]
}

/// The visited policy of an exploration that keeps no ids and no parents: a state is new or
/// old, nothing else. Only for runs with [`super::engine::RunOptions::frontier_only`].
/// Candidates of a level are not told apart from older states (no least step is kept), so
/// the counts of a level do not depend on which worker found a state first.
pub struct CompactVisited {
    set: CompactSet,
    /// Raised with [`StopReason::MemoryLimit`] when the set cannot grow (a stop with
    /// statistics, never an abort); `None`: such a failure aborts.
    stop: Option<StopSignal>,
}

impl CompactVisited {
    /// An empty policy.
    pub fn new() -> CompactVisited {
        CompactVisited {
            set: CompactSet::new(),
            stop: None,
        }
    }

    /// An empty policy that stops the search on `stop` when its set cannot grow.
    pub fn stopping(stop: &StopSignal) -> CompactVisited {
        CompactVisited {
            stop: Some(stop.clone()),
            ..CompactVisited::new()
        }
    }

    /// The set of visited keys.
    pub fn set(&self) -> &CompactSet {
        &self.set
    }
}

impl Default for CompactVisited {
    fn default() -> Self {
        Self::new()
    }
}

impl Visited<u64> for CompactVisited {
    #[inline]
    fn prefetch(&self, state: &u64) {
        self.set.prefetch(*state);
    }

    #[inline]
    fn offer(&self, state: &u64, _key: u64, _level: &mut LevelWriter<'_>) -> Offer {
        // No provisional ids: a frontier-only run keeps no ids (see the type's documentation).
        match &self.stop {
            None => match self.set.insert(*state) {
                true => Offer::New(ProvisionalId(u32::MAX)),
                false => Offer::Old(ProvisionalId(u32::MAX)),
            },
            Some(stop) => match self.set.try_insert(*state) {
                Ok(true) => Offer::New(ProvisionalId(u32::MAX)),
                Ok(false) => Offer::Old(ProvisionalId(u32::MAX)),
                Err(_) => {
                    // Raised before the engine's own reason for `Full` (the state limit),
                    // so it is the one reported.
                    stop.stop(StopReason::MemoryLimit);
                    Offer::Full
                }
            },
        }
    }
}

/// A system whose states are its canonical encodings packed into a `u64` (one or two words):
/// an engine that stores these keys makes the system keep no state of its own (a CSPm network
/// computes successors on encodings, [`TransitionSystem::for_each_encoded_successor`]).
pub struct Packed<'a, T> {
    ts: &'a T,
    width: usize,
    /// Every key is below `2^bits`.
    bits: u32,
}

impl<'a, T: TransitionSystem> Packed<'a, T> {
    /// `ts` with packed encodings as states, if they take at most two words.
    pub fn new(ts: &'a T) -> Option<Packed<'a, T>> {
        let width = ts.encoded_width().ok().filter(|w| (1..=2).contains(w))?;
        let bits = ts.encoded_bits().ok()?.min(64);
        Some(Packed { ts, width, bits })
    }

    /// Words of the system's encoding.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Every key is below `2^bits()`.
    pub fn bits(&self) -> u32 {
        self.bits
    }
}

impl<T: TransitionSystem> TransitionSystem for Packed<'_, T> {
    type State = u64;

    fn initial_state(&self) -> u64 {
        let mut words = [0u32; 2];
        self.ts
            .encode_state(&self.ts.initial_state(), &mut words[..self.width]);
        pack(&words[..self.width])
    }

    #[inline]
    fn for_each_successor(&self, state: &u64, emit: &mut dyn FnMut(Label, u64)) {
        let words = unpack(*state);
        self.ts
            .for_each_encoded_successor(&words[..self.width], &mut |label, target| {
                emit(label, pack(target))
            });
    }

    fn label_name(&self, label: Label) -> String {
        self.ts.label_name(label)
    }

    fn state_key(&self, state: &u64) -> Option<u64> {
        Some(*state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    proptest! {
        /// The set agrees with a `HashSet` on every insertion and lookup, across growths.
        #[test]
        fn agrees_with_a_hash_set(keys in proptest::collection::vec(0u64..5000, 0..4000)) {
            let set = CompactSet::new();
            let mut oracle = HashSet::new();
            for &k in &keys {
                let k = k.wrapping_mul(0x9E37_79B9) & ((1 << 63) - 1);
                prop_assert_eq!(set.insert(k), oracle.insert(k));
            }
            prop_assert_eq!(set.len(), oracle.len() as u64);
            for k in 0..5000u64 {
                let k = k.wrapping_mul(0x9E37_79B9) & ((1 << 63) - 1);
                prop_assert_eq!(set.contains(k), oracle.contains(&k));
            }
            let mut all = Vec::new();
            set.for_each(&mut |k| all.push(k));
            all.sort_unstable();
            let mut expected: Vec<u64> = oracle.into_iter().collect();
            expected.sort_unstable();
            prop_assert_eq!(all, expected);
        }
    }

    /// Two threads inserting overlapping ranges: every key inserted exactly once.
    #[test]
    fn concurrent_insertions_insert_each_key_once() {
        let set = CompactSet::new();
        let n = 200_000u64;
        let inserted: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let set = &set;
                    s.spawn(move || (0..n).filter(|k| set.insert((k * 7 + t) % n)).count() as u64)
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("joins"))
                .collect()
        });
        assert_eq!(inserted.iter().sum::<u64>(), n);
        assert_eq!(set.len(), n);
        assert!((0..n).all(|k| set.contains(k)));
        let per_state = set.bytes() as f64 / n as f64;
        assert!(per_state < 20.0, "{per_state} bytes per key");
    }
}
