//! The crate's one hashing scheme: `rustc-hash`'s `FxHasher` (multiply-add over machine
//! words; byte strings through its own wide multiply-mix), for integer keys, addresses and
//! small vectors of them (state ids, term addresses, label bytes: never attacker-chosen).
//! Imports nothing of weft.
//!
//! Two ways out, by how the hash is used:
//! - [`WordBuildHasher`]: the plain crate hasher, for `HashMap`, `HashSet` and `DashMap`.
//!   hashbrown takes the bucket from the low bits and a tag from the top 7; `FxHasher`'s
//!   final rotation brings the well-mixed high half of its last product to the low bits, which
//!   is what it was made for.
//! - [`hash_words`] (the explorer's state index) and [`hash_u32_slice`] (open-addressed sets
//!   of state ids), which add an avalanche finaliser: see [`avalanche`] for why.

#![forbid(unsafe_code)]

use std::hash::Hasher;

use rustc_hash::{FxBuildHasher, FxHasher};

/// `BuildHasher` for maps and sets keyed by integers, addresses or small vectors of them.
pub(crate) type WordBuildHasher = FxBuildHasher;

/// A hasher of integers and byte strings: `FxHasher`, for callers outside this module that
/// feed words one by one (the term table).
pub(crate) type WordHasher = FxHasher;

/// A finaliser after `FxHasher` (the first half of MurmurHash3's `fmix64`): folds the high half
/// into the low one and multiplies, so that the high 32 bits depend on every input bit.
///
/// `FxHasher` ends with `(h + w) * K` rotated left by 26, so the output's high 32 bits are bits
/// 6..37 of that product, which depend only on the low 38 bits of `h + w`: the high 26 bits of
/// the last word written never reach them. The state index takes both its first slot and its
/// 32-bit tag from those high bits, so states differing only in the high bits of their last
/// pair of `u32`s (leaf numbers of 64 and more) would share a slot and a tag. One multiply per
/// state removes that (see the test `last_word_reaches_the_high_half`).
#[inline]
pub(crate) fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// Hashes a fixed-width state (a vector of `u32` words) with every bit mixed: `FxHasher` over
/// its length and its words taken in pairs, then [`avalanche`].
#[inline]
pub(crate) fn hash_words(key: &[u32]) -> u64 {
    let mut h = FxHasher::default();
    h.write_usize(key.len());
    let mut pairs = key.chunks_exact(2);
    for pair in &mut pairs {
        h.write_u64(u64::from(pair[0]) | u64::from(pair[1]) << 32);
    }
    if let [last] = pairs.remainder() {
        h.write_u32(*last);
    }
    avalanche(h.finish())
}

/// Hashes a slice of `u32` (a sorted set of state ids), for open addressing on the low bits
/// and for sharding: the same as [`hash_words`].
#[inline]
pub(crate) fn hash_u32_slice(items: &[u32]) -> u64 {
    hash_words(items)
}

/// The hash of a value under [`WordBuildHasher`].
#[cfg(test)]
fn hash_one<T: std::hash::Hash>(value: T) -> u64 {
    use std::hash::BuildHasher;
    WordBuildHasher::default().hash_one(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Keys that differ only in the high bits of their last word: their 32-bit tags (the
    /// state index's slot and filter) must differ. Without [`avalanche`] they all coincide.
    #[test]
    fn last_word_reaches_the_high_half() {
        let keys: Vec<[u32; 2]> = (0..1024u32).map(|i| [7, i << 20]).collect();
        let tags: HashSet<u64> = keys.iter().map(|k| hash_words(k) >> 32).collect();
        assert_eq!(tags.len(), keys.len());
        let raw: HashSet<u64> = keys
            .iter()
            .map(|k| {
                let mut h = FxHasher::default();
                h.write_usize(2);
                h.write_u64(u64::from(k[0]) | u64::from(k[1]) << 32);
                h.finish() >> 32
            })
            .collect();
        assert!(
            raw.len() < keys.len() / 8,
            "the plain hasher's weakness is gone: {}",
            raw.len()
        );
    }

    /// Small sets of small ids (the normal form's closures) spread over the low bits.
    #[test]
    fn low_bits_spread() {
        let mask = (1u64 << 12) - 1;
        let mut sets = Vec::new();
        for a in 0..64u32 {
            for b in a + 1..a + 65 {
                sets.push(vec![a, b]);
            }
        }
        let buckets: HashSet<u64> = sets.iter().map(|s| hash_u32_slice(s) & mask).collect();
        // 4,096 sets into 4,096 buckets: a uniform hash fills about 1 - 1/e of them.
        assert!(buckets.len() > 2_400, "only {} buckets used", buckets.len());
    }

    /// The map hasher sends aligned addresses to distinct low bits and distinct top-7 tags.
    #[test]
    fn addresses_spread_in_maps() {
        let mask = (1u64 << 10) - 1;
        let low: HashSet<u64> = (0..1024usize)
            .map(|i| hash_one(0x7f00_0000 + 64 * i) & mask)
            .collect();
        let top: HashSet<u64> = (0..1024usize)
            .map(|i| hash_one(0x7f00_0000 + 64 * i) >> 57)
            .collect();
        assert!(low.len() > 600, "only {} low-bit buckets", low.len());
        assert_eq!(top.len(), 128);
    }
}
