//! Padded keys kept and sent trimmed.
//!
//! A system keyed by its structural encoding ([`super::StructuralPairKeys`],
//! `dist::keys::StructuralKeys`) pads each encoding with zeros to the width of the search's
//! keys, its length in the last word: Andrew.csp's encodings are about 16,000 words, its keys
//! 32,768. Kept and sent whole, every key cost its width (128 KB a pair there), and a search
//! of 206 pairs took about 200 MB per process. A distributed search of such keys keeps and
//! sends each one *trimmed* instead: the key without the run of zeros before its last word
//! (its words up to the last nonzero one before the last, then the last). The width and the
//! trimmed words give the key back, so nothing is lost; a key's trimmed form is as long as
//! its encoding, plus two words.
//!
//! [`KeyForm`] says which form a search's keys take where they are kept and sent: a
//! *record* is the key itself for whole keys, and the number of words of the trimmed key
//! followed by them for trimmed ones. [`TrimmedSet`] keeps trimmed keys, one after another,
//! with their starts.

use crossbeam::utils::CachePadded;
use parking_lot::Mutex;

/// How a search's keys are kept and sent: whole, or trimmed (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyForm {
    width: usize,
    trimmed: bool,
}

impl KeyForm {
    /// Keys of `width` words, kept and sent whole.
    pub fn whole(width: usize) -> KeyForm {
        KeyForm {
            width,
            trimmed: false,
        }
    }

    /// Keys of `width` words, kept and sent trimmed (keys padded with zeros before their
    /// last word).
    pub fn trimmed(width: usize) -> KeyForm {
        KeyForm {
            width,
            trimmed: width > 1,
        }
    }

    /// Words of a key.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether keys are kept and sent trimmed.
    pub fn is_trimmed(&self) -> bool {
        self.trimmed
    }

    /// Appends the record of `key` (of the form's width) to `out`.
    #[inline]
    pub fn push(&self, key: &[u32], out: &mut Vec<u32>) {
        debug_assert_eq!(key.len(), self.width);
        if !self.trimmed {
            out.extend_from_slice(key);
            return;
        }
        let (last, body) = key.split_last().expect("a key has a word");
        let kept = body.iter().rposition(|&w| w != 0).map_or(0, |p| p + 1);
        out.push(kept as u32 + 1);
        out.extend_from_slice(&body[..kept]);
        out.push(*last);
    }

    /// The records one after another in `words` (a whole number of records).
    pub fn records<'a>(&self, words: &'a [u32]) -> Records<'a> {
        Records { form: *self, words }
    }

    /// The key's words that a record holds: the whole key, or its trimmed words.
    #[inline]
    pub fn stored<'a>(&self, record: &'a [u32]) -> &'a [u32] {
        if self.trimmed {
            &record[1..]
        } else {
            record
        }
    }

    /// Whether the key of `record` is `key` (of the form's width).
    #[inline]
    pub fn matches(&self, record: &[u32], key: &[u32]) -> bool {
        let stored = self.stored(record);
        if !self.trimmed {
            return stored == key;
        }
        let (Some((last, body)), Some((key_last, key_body))) =
            (stored.split_last(), key.split_last())
        else {
            return false;
        };
        last == key_last
            && body.len() <= key_body.len()
            && key_body[..body.len()] == *body
            && key_body[body.len()..].iter().all(|&w| w == 0)
    }

    /// Writes the key of `record` into `key` (of the form's width).
    #[inline]
    pub fn expand(&self, record: &[u32], key: &mut [u32]) {
        untrim(self.stored(record), key, self.trimmed);
    }
}

/// Writes the key whose stored words are `stored` (trimmed or not) into `key`.
#[inline]
fn untrim(stored: &[u32], key: &mut [u32], trimmed: bool) {
    if !trimmed {
        key.copy_from_slice(stored);
        return;
    }
    let (last, body) = stored.split_last().expect("a trimmed key has a word");
    let width = key.len();
    key[..body.len()].copy_from_slice(body);
    key[body.len()..width - 1].fill(0);
    key[width - 1] = *last;
}

/// The records of a buffer ([`KeyForm::records`]).
pub struct Records<'a> {
    form: KeyForm,
    words: &'a [u32],
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u32];

    #[inline]
    fn next(&mut self) -> Option<&'a [u32]> {
        let len = if self.form.trimmed {
            1 + *self.words.first()? as usize
        } else {
            self.form.width
        };
        if self.words.len() < len || len == 0 {
            return None;
        }
        let (record, rest) = self.words.split_at(len);
        self.words = rest;
        Some(record)
    }
}

/// Shards of a [`TrimmedSet`] (a power of two).
const SHARDS: usize = 64;

/// Slots of a shard's table when it is first used (a power of two).
const FIRST_SLOTS: usize = 16;

/// A concurrent set of trimmed keys of one width: shards behind locks, chosen by the trimmed
/// words' hashes, each keeping its keys' words one after another with their starts, and an
/// open-addressing table of their positions. About the trimmed words, plus 12 bytes, a key.
pub struct TrimmedSet {
    width: usize,
    shards: Box<[CachePadded<Mutex<TrimmedShard>>]>,
}

#[derive(Default)]
struct TrimmedShard {
    words: Vec<u32>,
    /// Where each key's words start in `words` (the next key's start ends them).
    starts: Vec<u64>,
    /// Each a key's index plus one; 0 for a free slot.
    slots: Vec<u32>,
}

impl TrimmedShard {
    fn key(&self, i: usize) -> &[u32] {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.words.len(), |&e| e as usize);
        &self.words[start..end]
    }

    /// The slot of `stored` (hash `hash`): where it is, or the free slot where it goes.
    fn probe(&self, stored: &[u32], hash: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            match self.slots[at] {
                0 => return (at, false),
                k if self.key(k as usize - 1) == stored => return (at, true),
                _ => at = (at + 1) & mask,
            }
        }
    }

    fn insert(&mut self, stored: &[u32], hash: u64) -> bool {
        // At most seven eighths full.
        if (self.starts.len() + 1) * 8 > self.slots.len() * 7 {
            self.grow();
        }
        let (at, found) = self.probe(stored, hash);
        if found {
            return false;
        }
        if self.words.len() + stored.len() > self.words.capacity() {
            // Half again, rather than twice: the words are most of the shard's bytes.
            let more = (self.words.capacity() / 2).max(stored.len());
            self.words.reserve_exact(more);
        }
        self.starts.push(self.words.len() as u64);
        self.words.extend_from_slice(stored);
        // A shard holds fewer than 2^32 keys: the whole set's are counted in `u32`s.
        self.slots[at] = self.starts.len() as u32;
        true
    }

    /// Doubles the table and puts every key in its slot again.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let mut slots = vec![0u32; size];
        let mask = size - 1;
        for i in 0..self.starts.len() {
            let mut at = crate::hash::hash_words(self.key(i)) as usize & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = i as u32 + 1;
        }
        self.slots = slots;
    }
}

impl TrimmedSet {
    /// An empty set of trimmed keys of `width` words.
    pub fn new(width: usize) -> TrimmedSet {
        TrimmedSet {
            width,
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(TrimmedShard::default())))
                .collect(),
        }
    }

    /// Inserts the key whose trimmed words are `stored` ([`KeyForm::stored`]); returns
    /// whether it was absent.
    pub fn insert_stored(&self, stored: &[u32]) -> bool {
        let hash = crate::hash::hash_words(stored);
        let shard = &self.shards[(hash >> (64 - SHARDS.trailing_zeros())) as usize];
        shard.lock().insert(stored, hash)
    }

    /// Inserts `key` (of the set's width); returns whether it was absent.
    pub fn insert(&self, key: &[u32]) -> bool {
        let mut record = Vec::new();
        KeyForm::trimmed(self.width).push(key, &mut record);
        self.insert_stored(&record[1..])
    }

    /// Keys in the set.
    pub fn len(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.lock().starts.len() as u64)
            .sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the set's vectors take (as allocated).
    pub fn bytes(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock();
                (s.words.capacity() * 4 + s.starts.capacity() * 8 + s.slots.len() * 4) as u64
            })
            .sum()
    }

    /// Calls `f` with every key, whole.
    pub fn for_each(&self, f: &mut dyn FnMut(&[u32])) {
        let mut key = vec![0u32; self.width];
        for shard in self.shards.iter() {
            let shard = shard.lock();
            for i in 0..shard.starts.len() {
                untrim(shard.key(i), &mut key, true);
                f(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Structural keys of `width` words: an encoding of `len` words (zeros among them), zeros,
    /// and the length in the last word.
    fn padded(width: usize, len: usize, seed: u32) -> Vec<u32> {
        let mut key = vec![0u32; width];
        for (i, w) in key[..len].iter_mut().enumerate() {
            *w = (seed.wrapping_mul(31).wrapping_add(i as u32 * 7)) % 5;
        }
        key[width - 1] = len as u32;
        key
    }

    /// Records read back as the keys pushed, whole or trimmed; trimmed records of padded keys
    /// take their encoding's words, plus two, not the width.
    #[test]
    fn records_read_back_as_their_keys() {
        let width = 1000;
        let keys: Vec<Vec<u32>> = (0..50u32)
            .map(|i| padded(width, (i as usize * 13) % (width - 1), i))
            .chain([vec![0; width], vec![7; width]])
            .collect();
        for form in [KeyForm::whole(width), KeyForm::trimmed(width)] {
            let mut words = Vec::new();
            for key in &keys {
                form.push(key, &mut words);
            }
            let mut key = vec![9u32; width];
            let mut n = 0;
            for (record, expected) in form.records(&words).zip(&keys) {
                form.expand(record, &mut key);
                assert_eq!(&key, expected, "{form:?}");
                assert!(form.matches(record, expected), "{form:?}");
                let mut other = expected.clone();
                other[width / 2] ^= 1;
                assert!(!form.matches(record, &other), "{form:?}");
                other[width / 2] ^= 1;
                other[width - 1] ^= 1;
                assert!(!form.matches(record, &other), "{form:?}");
                n += 1;
            }
            assert_eq!(n, keys.len());
            if form.is_trimmed() {
                let encodings: usize = (0..50).map(|i| (i * 13) % (width - 1)).sum();
                assert!(words.len() <= encodings + 2 * 50 + 2 + width + 1);
            } else {
                assert_eq!(words.len(), keys.len() * width);
            }
        }
    }

    /// A set of trimmed keys agrees with a hash set of whole keys, gives back every key
    /// whole, and takes about the trimmed words a key: a regression to padded storage (4
    /// bytes a word of the width) fails the bound.
    #[test]
    fn a_trimmed_set_agrees_with_a_hash_set_and_takes_the_trimmed_words() {
        let width = 32_768;
        let set = TrimmedSet::new(width);
        let form = KeyForm::trimmed(width);
        let mut oracle = HashSet::new();
        let mut record = Vec::new();
        for i in 0..1200u32 {
            let j = i % 600;
            let key = padded(width, 100 + (j as usize % 40), j % 300);
            record.clear();
            form.push(&key, &mut record);
            let inserted = if i % 2 == 0 {
                set.insert_stored(form.stored(&record))
            } else {
                set.insert(&key)
            };
            assert_eq!(inserted, oracle.insert(key));
        }
        assert_eq!(set.len(), oracle.len() as u64);
        let mut all = HashSet::new();
        set.for_each(&mut |k| {
            all.insert(k.to_vec());
        });
        assert_eq!(all, oracle);
        let per_key = set.bytes() / set.len();
        assert!(
            per_key < 4 * 200,
            "{per_key} bytes a key of about 140 words"
        );
    }
}
