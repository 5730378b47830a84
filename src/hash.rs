//! A small, fast, non-cryptographic hasher for integer keys and addresses (state ids, term
//! addresses: not attacker-controlled strings), shared by the explorer's state index and the
//! refinement checker. Imports nothing of weft.

use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Multiply-rotate hashing of machine words (the scheme of rustc's `FxHasher`).
#[derive(Default, Clone, Copy)]
pub(crate) struct WordHasher {
    hash: u64,
}

impl WordHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // Final avalanche so that the low bits (used by open addressing) depend on all input.
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

/// `BuildHasher` for [`WordHasher`].
pub(crate) type WordBuildHasher = BuildHasherDefault<WordHasher>;

/// Hashes a slice of `u32` (a sorted set of state ids).
#[inline]
pub(crate) fn hash_u32_slice(items: &[u32]) -> u64 {
    let mut h = WordHasher::default();
    h.add(items.len() as u64);
    for &x in items {
        h.add(x as u64);
    }
    h.finish()
}
