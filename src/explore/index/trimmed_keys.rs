//! The keys of a [`super::StateIndex`] of very wide states, kept trimmed.
//!
//! A distributed run keys a system with no fixed-width encoding by its structural encoding
//! padded with zeros to a width that only grows (`dist::keys`): Andrew.csp's encodings are
//! about 19,000 words, its keys 32,768. Kept whole in the index's arena, each key took its
//! width, and a block of numbers allocated (zeroed) room for the whole block's keys: 16 MB for
//! 61 states there. Keys of [`TRIMMED_FROM`] words or more are kept trimmed instead
//! ([`KeyForm::trimmed`]: without the zeros before their last word), one after another in
//! one vector behind a lock, with where each number's key starts.
//!
//! The lock orders a key's writing before its reading, as the arena's publication did: a key
//! is written (under the lock) before the slot that publishes its number is claimed, and
//! read (under the lock) after the slot is loaded.

use parking_lot::Mutex;

use crate::explore::keyed::KeyForm;

/// Words from which a state index keeps its keys trimmed: only padded keys are this wide (a
/// fixed-width encoding of 1,024 words is a network of about a thousand components).
pub(crate) const TRIMMED_FROM: usize = 1024;

/// No key written for a number (yet).
const UNWRITTEN: u64 = u64::MAX;

/// Trimmed keys by number (see the module documentation).
pub(crate) struct TrimmedKeys {
    form: KeyForm,
    arena: Mutex<Arena>,
}

#[derive(Default)]
struct Arena {
    /// Records of trimmed keys ([`KeyForm::push`]), one after another.
    words: Vec<u32>,
    /// Where the record of each number's key starts in `words`, by number.
    starts: Vec<u64>,
}

impl Arena {
    fn record(&self, number: u32) -> &[u32] {
        let start = self
            .starts
            .get(number as usize)
            .copied()
            .filter(|&s| s != UNWRITTEN)
            .expect("a key written for the number") as usize;
        let len = 1 + self.words[start] as usize;
        &self.words[start..start + len]
    }
}

impl TrimmedKeys {
    /// No keys yet, of `width` words.
    pub(crate) fn new(width: usize) -> TrimmedKeys {
        TrimmedKeys {
            form: KeyForm::trimmed(width),
            arena: Mutex::new(Arena::default()),
        }
    }

    /// Keeps `key` as the key of `number` (a number may be written again, before it is
    /// published, when another thread published the key it was written for first: the
    /// words of the first writing are then left unused).
    pub(crate) fn write(&self, number: u64, key: &[u32]) {
        let mut arena = self.arena.lock();
        let at = number as usize;
        if arena.starts.len() <= at {
            arena.starts.resize(at + 1, UNWRITTEN);
        }
        let start = arena.words.len();
        if start + key.len() + 1 > arena.words.capacity() {
            // Half again (at least a key's room): the words are most of the index's bytes.
            let more = (arena.words.capacity() / 2).max(key.len() + 1);
            arena.words.reserve_exact(more);
        }
        self.form.push(key, &mut arena.words);
        arena.starts[at] = start as u64;
    }

    /// Copies the key of `number` (written before) into `out`.
    pub(crate) fn read(&self, number: u32, out: &mut [u32]) {
        let arena = self.arena.lock();
        self.form.expand(arena.record(number), out);
    }

    /// Whether the key of `number` (written before) is `key`.
    pub(crate) fn equals(&self, number: u32, key: &[u32]) -> bool {
        let arena = self.arena.lock();
        self.form.matches(arena.record(number), key)
    }

    /// Bytes the keys take (as allocated).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        let arena = self.arena.lock();
        (arena.words.capacity() * 4 + arena.starts.capacity() * 8) as u64
    }
}
