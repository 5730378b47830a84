//! Products searched by the keys of their pairs: fixed-width vectors of `u32` words that
//! mean the same in every process, so that a search can keep, send and write them (the
//! distributed product search of `dist`, which `refine` reaches through its
//! `SharedPairSearch` trait; checkpoints of a distributed exploration).
//!
//! Two layouts of a pair `(normal-form node, implementation state)`:
//! - [`PackedKeys`]: the implementation's packed encoding ([`super::compact::Packed`], at most
//!   two words) with the node in the bits above it ([`pair_key`]): one `u64`, as two words;
//! - [`EncodedKeys`]: the node, then the implementation's canonical encoding
//!   ([`TransitionSystem::encode_state`]) of any width: `1 + width` words.
//!
//! [`KeySet`] keeps keys of either width: a [`CompactSet`] of `u64`s for keys of one or two
//! words, a [`WideSet`] for wider ones.
//!
//! A system with no fixed-width encoding is keyed by its structural one, padded to a width
//! the search chooses (module `structural`, [`StructuralPairKeys`]).
//!
//! The types of a distributed pair search's options and outcome live here too
//! ([`PairOptions`], [`PairSearch`]), below both `refine` (which asks for a search) and `dist`
//! (which makes it), so that neither imports the other.

#![forbid(unsafe_code)]

use crossbeam::utils::CachePadded;
use parking_lot::Mutex;

use super::compact::{pair_key, CompactSet};
use super::engine::Driven;
use super::{LevelObserver, StopReason};
use crate::ts::TransitionSystem;

mod structural;
mod trimmed;
pub use structural::{
    first_key_words, read_structural_key, wider_keys, write_structural_key, KeyFault, KeyTrouble,
    StructuralPairKeys, FIRST_KEY_WORDS, MOST_KEY_WORDS,
};
pub use trimmed::{KeyForm, Records, TrimmedSet};

/// A product whose pairs are searched as keys of [`KeyedProduct::key_width`] words.
pub trait KeyedProduct: Sync {
    /// Words of every key.
    fn key_width(&self) -> usize;

    /// Writes the initial pair's key into `key`.
    fn initial_key(&self, key: &mut [u32]);

    /// Calls `emit` with the key of each successor of the pair whose key is `key`, in the
    /// product's order; returns where a violation shows, if the pair, or a step out of it,
    /// is one.
    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt>;

    /// The node of the pair whose key is `key`. By default its first word: the node
    /// followed by the implementation state's words (as [`EncodedKeys`] and
    /// [`StructuralPairKeys`] key their pairs).
    fn node_of(&self, key: &[u32]) -> u32 {
        key[0]
    }

    /// Writes into `state` (of the key's width) the key of the pair with node 0 and `key`'s
    /// implementation state: what the pairs of one implementation state share. By default
    /// the key with its first word (the node, as in [`KeyedProduct::node_of`]) made 0.
    fn state_part(&self, key: &[u32], state: &mut [u32]) {
        state.copy_from_slice(key);
        state[0] = 0;
    }

    /// Whether the keys are padded with zeros before their last word (a structural
    /// encoding's: [`StructuralPairKeys`]), so that a search keeps and sends them trimmed
    /// ([`KeyForm::trimmed`]); by default not.
    fn padded_keys(&self) -> bool {
        false
    }

    /// Whether the search keeps an antichain of its pairs (see [`KeyedProduct::covers`]),
    /// rather than every pair (the default).
    fn has_antichain(&self) -> bool {
        false
    }

    /// With an antichain: whether a pair of node `a` covers one of node `b` with the same
    /// implementation state (the covered pair is then not kept). Pairs are exact by default:
    /// a pair covers only itself.
    fn covers(&self, a: u32, b: u32) -> bool {
        a == b
    }

    /// Numbers this process's expansions marked (for a check, the normal-form nodes whose
    /// successors its pairs asked for), read when the search ends: a distributed search
    /// returns the union of every process's ([`PairSearch::marks`]). None by default.
    fn marks(&self) -> Vec<u32> {
        Vec::new()
    }

    /// What the product's keys met that stops the search at the end of the level (keys of a
    /// structural encoding too narrow: [`StructuralPairKeys`]); none by default.
    fn trouble(&self) -> Option<&KeyTrouble> {
        None
    }
}

/// Why a search shared by the processes of a distributed run gave no result.
#[derive(Debug, thiserror::Error)]
pub enum SharedSearchError {
    /// A pair's key needed more words than the product's keys hold ([`KeyFault::TooNarrow`]):
    /// every process learns it at the same level, and makes the search again with wider keys.
    #[error("a pair needs wider keys than the search's")]
    KeysTooNarrow,
    /// Any other failure (a lost process, processes at different searches), as a message.
    #[error("{0}")]
    Failed(String),
}

/// Where a violation found by expanding a pair shows (as [`super::engine::Found`] says).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FoundAt {
    /// At the pair itself.
    Pair,
    /// At a step out of the pair (one step deeper): after every violation at a pair of the
    /// same level, as the engine orders them.
    Step,
}

impl<W> From<&super::engine::Found<W>> for FoundAt {
    fn from(found: &super::engine::Found<W>) -> FoundAt {
        match found {
            super::engine::Found::AtState(_) => FoundAt::Pair,
            super::engine::Found::AtStep(_) => FoundAt::Step,
        }
    }
}

/// A `u64` as two words, low first.
#[inline]
pub fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// Two words, low first, as a `u64`.
#[inline]
pub fn join(lo: u32, hi: u32) -> u64 {
    lo as u64 | ((hi as u64) << 32)
}

/// The pair of a key made by [`pair_key`] over `bits` bits of encoding.
#[inline]
pub fn pair_of(bits: u32, key: u64) -> (u32, u64) {
    if bits >= 64 {
        return (0, key);
    }
    ((key >> bits) as u32, key & ((1u64 << bits) - 1))
}

/// A product over a packed implementation of `bits` bits, its pairs keyed as one `u64` (two
/// words) each. Every node the product reaches must fit above the encoding ([`pair_key`]):
/// the caller checks it (for the largest node) before searching.
pub struct PackedKeys<'a, D> {
    /// The product.
    pub product: &'a D,
    /// Bits of the implementation's encoding.
    pub bits: u32,
}

impl<D: Driven<State = (u32, u64)>> PackedKeys<'_, D> {
    #[inline]
    fn key(&self, pair: (u32, u64)) -> [u32; 2] {
        split(pair_key(self.bits, pair).expect("nodes fit above the encoding (checked before)"))
    }
}

impl<D: Driven<State = (u32, u64)>> KeyedProduct for PackedKeys<'_, D> {
    fn key_width(&self) -> usize {
        2
    }

    fn initial_key(&self, key: &mut [u32]) {
        key.copy_from_slice(&self.key(self.product.initial_state()));
    }

    #[inline]
    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt> {
        let pair = pair_of(self.bits, join(key[0], key[1]));
        self.product
            .expand(&pair, &mut |_label, target| emit(&self.key(target)))
            .as_ref()
            .map(FoundAt::from)
    }

    fn node_of(&self, key: &[u32]) -> u32 {
        pair_of(self.bits, join(key[0], key[1])).0
    }

    fn state_part(&self, key: &[u32], state: &mut [u32]) {
        let (_, implementation) = pair_of(self.bits, join(key[0], key[1]));
        state.copy_from_slice(&self.key((0, implementation)));
    }
}

/// A product over an implementation `ts` with a canonical encoding of any width, its pairs
/// keyed as the node followed by the implementation state's encoding. A key is decoded
/// ([`TransitionSystem::decode_state`]) to be expanded.
pub struct EncodedKeys<'a, D, T> {
    /// The product.
    pub product: &'a D,
    /// Its implementation.
    pub ts: &'a T,
    /// Words of the implementation's encoding.
    pub width: usize,
}

impl<'a, D, T> EncodedKeys<'a, D, T>
where
    T: TransitionSystem,
    D: Driven<State = (u32, T::State)>,
{
    /// `product` over `ts`, if `ts` has a canonical encoding.
    pub fn new(product: &'a D, ts: &'a T) -> Option<Self> {
        let width = ts.encoded_width().ok()?;
        Some(EncodedKeys { product, ts, width })
    }

    /// Writes the key of `pair` into `key` (of [`KeyedProduct::key_width`] words).
    #[inline]
    pub fn write_key(&self, (node, state): &(u32, T::State), key: &mut [u32]) {
        key[0] = *node;
        self.ts.encode_state(state, &mut key[1..]);
    }
}

impl<D, T> KeyedProduct for EncodedKeys<'_, D, T>
where
    T: TransitionSystem,
    D: Driven<State = (u32, T::State)>,
{
    fn key_width(&self) -> usize {
        1 + self.width
    }

    fn initial_key(&self, key: &mut [u32]) {
        self.write_key(&self.product.initial_state(), key);
    }

    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt> {
        // A key this process did not make from this model (another model's message) decodes
        // to nothing; the searches' fingerprints keep such processes apart before they start.
        let state = self.ts.decode_state(&key[1..])?;
        let mut buffer = vec![0u32; key.len()];
        self.product
            .expand(&(key[0], state), &mut |_label, target| {
                self.write_key(&target, &mut buffer);
                emit(&buffer);
            })
            .as_ref()
            .map(FoundAt::from)
    }
}

/// Shards of a [`WideSet`] (a power of two).
const WIDE_SHARDS: usize = 256;

/// Slots of a shard's table when it is first used (a power of two).
const FIRST_SLOTS: usize = 64;

/// One shard of a [`WideSet`]: its keys one after another in one vector (no allocation and no
/// pointer per key), and an open-addressing table (linear probing) of their positions, each
/// plus one (0: a free slot). About `4 * width + 6` bytes a key, where a table of boxed keys
/// took about 60 for keys of five words.
#[derive(Default)]
struct WideShard {
    keys: Vec<u32>,
    slots: Vec<u32>,
    len: usize,
}

impl WideShard {
    /// The slot of `key` (hash `hash`): where it is, or the free slot where it goes.
    #[inline]
    fn probe(&self, key: &[u32], hash: u64) -> (usize, bool) {
        let width = key.len();
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            match self.slots[at] {
                0 => return (at, false),
                k => {
                    let start = (k as usize - 1) * width;
                    if &self.keys[start..start + width] == key {
                        return (at, true);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    fn contains(&self, key: &[u32], hash: u64) -> bool {
        !self.slots.is_empty() && self.probe(key, hash).1
    }

    fn insert(&mut self, key: &[u32], hash: u64) -> bool {
        // At most seven eighths full.
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.grow(key.len());
        }
        let (at, found) = self.probe(key, hash);
        if found {
            return false;
        }
        if self.keys.len() + key.len() > self.keys.capacity() {
            // Half again, rather than twice: the keys are most of the shard's bytes.
            let more = (self.keys.capacity() / 2).max(key.len() * FIRST_SLOTS);
            self.keys.reserve_exact(more);
        }
        self.keys.extend_from_slice(key);
        self.len += 1;
        // A shard holds fewer than 2^32 keys: the whole set's ids are `u32`s.
        self.slots[at] = self.len as u32;
        true
    }

    /// Doubles the table and puts every key in its slot again.
    fn grow(&mut self, width: usize) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        self.slots = vec![0; size];
        let mask = size - 1;
        for (i, key) in self.keys.chunks_exact(width).enumerate() {
            let mut at = crate::hash::hash_words(key) as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = i as u32 + 1;
        }
    }
}

/// A concurrent set of keys of a fixed width of more than two words: shards behind locks,
/// chosen by the keys' hashes, each keeping its keys in one vector with a table of their
/// positions ([`WideShard`]).
pub struct WideSet {
    width: usize,
    shards: Box<[CachePadded<Mutex<WideShard>>]>,
}

impl WideSet {
    /// An empty set of keys of `width` words.
    pub fn new(width: usize) -> WideSet {
        WideSet {
            width,
            shards: (0..WIDE_SHARDS)
                .map(|_| CachePadded::new(Mutex::new(WideShard::default())))
                .collect(),
        }
    }

    /// The key's hash and its shard (chosen by the hash's top bits; the table's slots by its
    /// low bits).
    #[inline]
    fn shard(&self, key: &[u32]) -> (u64, &Mutex<WideShard>) {
        let h = crate::hash::hash_words(key);
        (
            h,
            &self.shards[(h >> (64 - WIDE_SHARDS.trailing_zeros())) as usize],
        )
    }

    /// Inserts `key` (of the set's width); returns whether it was absent.
    pub fn insert(&self, key: &[u32]) -> bool {
        debug_assert_eq!(key.len(), self.width);
        let (hash, shard) = self.shard(key);
        shard.lock().insert(key, hash)
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: &[u32]) -> bool {
        let (hash, shard) = self.shard(key);
        shard.lock().contains(key, hash)
    }

    /// Keys in the set.
    pub fn len(&self) -> u64 {
        self.shards.iter().map(|s| s.lock().len as u64).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the set's vectors take: each shard's keys (as allocated) and table.
    pub fn bytes(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock();
                (s.keys.capacity() * 4 + s.slots.len() * 4) as u64
            })
            .sum()
    }

    /// Calls `f` with every key.
    pub fn for_each(&self, f: &mut dyn FnMut(&[u32])) {
        for shard in self.shards.iter() {
            let shard = shard.lock();
            for key in shard.keys.chunks_exact(self.width) {
                f(key);
            }
        }
    }
}

/// A concurrent set of keys of a fixed width: packed into `u64`s for one or two words, in a
/// [`WideSet`] for more, or trimmed in a [`TrimmedSet`] (keys padded with zeros before their
/// last word: [`KeyForm::trimmed`]).
pub enum KeySet {
    /// Keys of one or two words.
    Narrow(CompactSet),
    /// Keys of more words.
    Wide(WideSet),
    /// Keys padded with zeros, kept trimmed.
    Trimmed(TrimmedSet),
}

impl KeySet {
    /// An empty set of keys of `width` words.
    pub fn new(width: usize) -> KeySet {
        if width <= 2 {
            KeySet::Narrow(CompactSet::new())
        } else {
            KeySet::Wide(WideSet::new(width))
        }
    }

    /// An empty set of keys of the form `form` (trimmed ones in a [`TrimmedSet`]).
    pub fn of_form(form: KeyForm) -> KeySet {
        if form.is_trimmed() {
            KeySet::Trimmed(TrimmedSet::new(form.width()))
        } else {
            KeySet::new(form.width())
        }
    }

    /// Inserts `key`; returns whether it was absent.
    #[inline]
    pub fn insert(&self, key: &[u32]) -> bool {
        match self {
            KeySet::Narrow(set) => set.insert(narrow(key)),
            KeySet::Wide(set) => set.insert(key),
            KeySet::Trimmed(set) => set.insert(key),
        }
    }

    /// Inserts the key of `record`, of the form `form` (the set's: [`KeySet::of_form`]);
    /// returns whether it was absent.
    #[inline]
    pub fn insert_record(&self, form: &KeyForm, record: &[u32]) -> bool {
        match self {
            KeySet::Trimmed(set) => set.insert_stored(form.stored(record)),
            _ => self.insert(record),
        }
    }

    /// Starts loading the slot where a lookup of `key` begins (a hint; keys of more than two
    /// words are not prefetched).
    #[inline]
    pub fn prefetch(&self, key: &[u32]) {
        if let KeySet::Narrow(set) = self {
            set.prefetch(narrow(key));
        }
    }

    /// Keys in the set.
    pub fn len(&self) -> u64 {
        match self {
            KeySet::Narrow(set) => set.len(),
            KeySet::Wide(set) => set.len(),
            KeySet::Trimmed(set) => set.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the set takes.
    pub fn bytes(&self) -> u64 {
        match self {
            KeySet::Narrow(set) => set.bytes(),
            KeySet::Wide(set) => set.bytes(),
            KeySet::Trimmed(set) => set.bytes(),
        }
    }

    /// Calls `f` with every key (of `width` words, the set's), whole.
    pub fn for_each(&self, width: usize, f: &mut dyn FnMut(&[u32])) {
        match self {
            KeySet::Narrow(set) => set.for_each(&mut |k| f(&split(k)[..width])),
            KeySet::Wide(set) => set.for_each(f),
            KeySet::Trimmed(set) => set.for_each(f),
        }
    }
}

/// A key of one or two words as a `u64`.
#[inline]
fn narrow(key: &[u32]) -> u64 {
    match key {
        [a] => *a as u64,
        [a, b] => join(*a, *b),
        _ => unreachable!("a narrow key has one or two words"),
    }
}

/// What a distributed product search found (the same in every process).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairSearch {
    /// Pairs kept (the initial pair included).
    pub pairs: u64,
    /// Steps out of the expanded pairs.
    pub transitions: u64,
    /// Levels expanded.
    pub levels: u32,
    /// The most pairs of one level.
    pub widest_level: u64,
    /// Whether some pair of the last level expanded, or a step out of it, is a violation.
    pub violated: bool,
    /// Pairs expanded that had no successor and no violation (deadlocks, when the product is
    /// a system on its own).
    pub dead_ends: u64,
    /// Why the search stopped early, if it did (no verdict then).
    pub stopped: Option<StopReason>,
    /// Bytes the owners' sets of pairs take, all processes together.
    pub bytes: u64,
    /// Workers of all processes together.
    pub workers: usize,
    /// With [`PairOptions::witness_path`], the most pairs the owners kept at the end of a
    /// level (fewer than [`PairSearch::pairs`] where an antichain dropped covered ones).
    pub most_held: u64,
    /// With [`PairOptions::witness_path`], the least violation of the last level expanded
    /// and the least path to it, if the search found one.
    pub witness: Option<PairWitness>,
    /// With [`PairOptions::deepest_path`], where the search ended without a violation: the
    /// least path to the pair of the greatest node, the least id among those.
    pub deepest: Option<PairPath>,
    /// The union of every process's [`KeyedProduct::marks`] at the search's end, in order.
    pub marks: Vec<u32>,
}

/// The least path to a pair of a search that numbered its pairs canonically, rebuilt from
/// the owners' parent records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairPath {
    /// The pair's canonical id.
    pub id: u32,
    /// The keys of the pairs of the path, from the initial pair to this one.
    pub keys: Vec<Vec<u32>>,
    /// Per step of the path: its index among the steps out of its source, in the product's
    /// order (one fewer than the keys).
    pub steps: Vec<u32>,
}

/// The least violation of a search that numbered its pairs canonically (as the engine
/// numbers them: in the order of the least step to each), and the least path to it, rebuilt
/// from the owners' parent records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairWitness {
    /// The canonical id of the pair where it shows (for a step, the step's source).
    pub id: u32,
    /// Where it shows.
    pub at: FoundAt,
    /// The keys of the pairs of the path, from the initial pair to the witness's.
    pub keys: Vec<Vec<u32>>,
    /// Per step of the path: its index among the steps out of its source, in the product's
    /// order (one fewer than the keys).
    pub steps: Vec<u32>,
}

/// Options of a distributed product search.
#[derive(Clone, Default)]
pub struct PairOptions {
    /// Keep at most this many pairs (the search then stops with [`StopReason::StateLimit`]).
    pub max_pairs: Option<u64>,
    /// Told after each level (in process 0).
    pub on_level: Option<LevelObserver>,
    /// What the caller knows of the search (for example the specification's number of
    /// nodes and the encoding's bits): with the initial key and the keys' width, every
    /// process must give the same, or the search ends with an error before it starts.
    /// Processes whose runs went apart (one stopped by a limit where another was not) then
    /// never mix two searches.
    pub fingerprint: u64,
    /// Number the pairs canonically, keep each one's least step, and rebuild the path to the
    /// least violation of the first level that has one ([`PairSearch::witness`]): a search
    /// for a counterexample, which keeps more per pair than one that decides only.
    pub witness_path: bool,
    /// With [`PairOptions::witness_path`]: where the search ends without a violation, also
    /// rebuild the path to the pair of the greatest node, the least id among those
    /// ([`PairSearch::deepest`]; a search for a trace, whose nodes count the events done).
    pub deepest_path: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Many keys (every shard's table grows several times), from two threads: the set agrees
    /// with a `HashSet`, and keeps a key of five words in at most 40 bytes (its 20, the room
    /// kept for more, the table).
    #[test]
    fn a_wide_set_agrees_with_a_hash_set_across_growths_in_few_bytes() {
        let width = 5;
        let set = WideSet::new(width);
        let key = |i: u32| -> Vec<u32> {
            (0..width as u32)
                .map(|w| i.wrapping_mul(2_654_435_761) ^ w)
                .collect()
        };
        let n = 150_000u32;
        let inserted: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2u32)
                .map(|t| {
                    let set = &set;
                    // Each thread inserts every key, in its own order (7 and 11 are prime to
                    // n), so exactly n of the 2n insertions find a key new.
                    let step = [7, 11][t as usize];
                    scope.spawn(move || {
                        (0..n)
                            .filter(|i| set.insert(&key((i * step + t) % n)))
                            .count()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(inserted, n as usize);
        assert_eq!(set.len(), n as u64);
        let oracle: HashSet<Vec<u32>> = (0..n).map(key).collect();
        assert!((0..n).all(|i| set.contains(&key(i))));
        assert!((n..n + 1000).all(|i| set.contains(&key(i)) == oracle.contains(&key(i))));
        let mut all = HashSet::new();
        set.for_each(&mut |k| assert!(all.insert(k.to_vec())));
        assert_eq!(all, oracle);
        let per_key = set.bytes() as f64 / n as f64;
        assert!(per_key <= 40.0, "{per_key} bytes a key of {width} words");
    }

    #[test]
    fn keys_and_pairs_round_trip() {
        for bits in [1, 20, 33, 40, 63] {
            for pair in [(0u32, 0u64), (1, 1), (3, (1u64 << bits) - 1)] {
                if let Some(key) = pair_key(bits, pair) {
                    assert_eq!(pair_of(bits, key), pair, "bits {bits}");
                }
            }
        }
        assert_eq!(pair_key(64, (0, u64::MAX)), Some(u64::MAX));
        assert_eq!(pair_of(64, u64::MAX), (0, u64::MAX));
        assert_eq!(pair_key(64, (1, 0)), None);
        assert_eq!(pair_key(40, (1 << 24, 0)), None);
    }

    #[test]
    fn key_sets_of_every_width_agree_with_a_hash_set() {
        for width in [1, 2, 3, 5] {
            let set = KeySet::new(width);
            let mut oracle = HashSet::new();
            for i in 0..3000u32 {
                let key: Vec<u32> = (0..width as u32).map(|w| (i * 7 + w) % 1013).collect();
                assert_eq!(
                    set.insert(&key),
                    oracle.insert(key.clone()),
                    "width {width}"
                );
            }
            assert_eq!(set.len(), oracle.len() as u64);
            let mut all = Vec::new();
            set.for_each(width, &mut |k| all.push(k.to_vec()));
            assert_eq!(all.len(), oracle.len());
            assert!(all.iter().all(|k| oracle.contains(k)));
            assert!(set.bytes() > 0);
        }
    }
}
