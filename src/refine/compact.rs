//! The product search of a check kept in compact storage: each pair `(normal-form node,
//! implementation state)` is one `u64`, the implementation's canonical encoding
//! ([`crate::ts::TransitionSystem::encoded_bits`]) with the node's number in the bits above
//! it, held in the explorer's [`CompactSet`] (the implementation is driven as a
//! [`crate::explore::compact::Packed`] system); no ids, no parents, only the level being
//! expanded ([`RunOptions::frontier_only`]). A check that holds then costs about what a count-only
//! exploration of the implementation costs (a dozen bytes per pair), where the indexed search
//! keeps a number, a parent and an antichain entry per pair.
//!
//! The pairs are exact (no antichain: a pair is covered only by itself), so the search visits
//! the reachable product, which is the same at every thread count. Its first failing level is
//! the indexed search's too (a pair pruned by the antichain has a subset pair at the same or
//! an earlier level, from which every violation is at most as far), so a failing check is
//! rerun indexed, stopping at that level, for the canonical shortest counterexample.
//!
//! Divergences are found as in the indexed search, remembered by encoding
//! ([`crate::ts::TransitionSystem::state_key`]).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use crate::explore::compact::CompactSet;
use crate::explore::{
    Engine, LevelWriter, Offer, ProvisionalId, Run, RunOptions, StopSignal, Visited,
};

/// The visited pairs of a compact product search: exact pairs packed into one `u64` each.
pub(crate) struct PackedPairs {
    set: CompactSet,
    /// Bits of the implementation's encoding; the node goes above them.
    shift: u32,
    /// Set when a node's number does not fit above the encoding (the search then stops as if
    /// full, and the check is run indexed).
    overflow: AtomicBool,
}

impl PackedPairs {
    pub(crate) fn new(bits: u32) -> Self {
        PackedPairs {
            set: CompactSet::new(),
            shift: bits,
            overflow: AtomicBool::new(false),
        }
    }

    /// Whether a node's number did not fit.
    pub(crate) fn overflowed(&self) -> bool {
        // Ordering: Relaxed; read after the search's workers joined.
        self.overflow.load(Ordering::Relaxed)
    }

    /// Bytes the set's tables take.
    pub(crate) fn bytes(&self) -> u64 {
        self.set.bytes()
    }

    #[inline]
    fn key(&self, &(node, state): &(u32, u64)) -> Option<u64> {
        if self.shift >= 64 {
            return (node == 0).then_some(state);
        }
        let room = 64 - self.shift;
        (room >= 32 || (node as u64) < 1u64 << room).then(|| state | (node as u64) << self.shift)
    }
}

impl Visited<(u32, u64)> for PackedPairs {
    #[inline]
    fn prefetch(&self, pair: &(u32, u64)) {
        if let Some(key) = self.key(pair) {
            self.set.prefetch(key);
        }
    }

    #[inline]
    fn offer(&self, pair: &(u32, u64), _key: u64, _level: &mut LevelWriter<'_>) -> Offer {
        let Some(key) = self.key(pair) else {
            // Ordering: Relaxed; read after the workers joined.
            self.overflow.store(true, Ordering::Relaxed);
            return Offer::Full;
        };
        // No provisional ids: a frontier-only run keeps none.
        if self.set.insert(key) {
            Offer::New(ProvisionalId(u32::MAX))
        } else {
            Offer::Old(ProvisionalId(u32::MAX))
        }
    }
}

/// A frontier-only run of a product over packed encodings.
pub(crate) type PairRun<W> = Run<(u32, u64), W>;

/// Runs `product` (over a [`crate::explore::compact::Packed`] implementation of `bits` bits) frontier-only with packed exact
/// pairs; returns the run (its witness, if any, has no usable id) and the bytes of the visited
/// set, or `None` when a node's number did not fit beside the encodings (nothing decided).
pub(crate) fn search<D>(
    engine: &Engine,
    product: &D,
    bits: u32,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<(PairRun<D::Witness>, u64)>
where
    D: crate::explore::Driven<State = (u32, u64)>,
{
    let pairs = PackedPairs::new(bits);
    let opts = RunOptions {
        record_transitions: false,
        frontier_only: true,
        ..opts.clone()
    };
    let run = engine.run(product, &pairs, &opts, stop);
    if pairs.overflowed() {
        return None;
    }
    Some((run, pairs.bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_go_above_the_encoding_or_not_at_all() {
        let pairs = PackedPairs::new(40);
        assert_eq!(pairs.key(&(3, 5)), Some(3 << 40 | 5));
        assert_eq!(
            pairs.key(&((1 << 24) - 1, 1)),
            Some(((1 << 24) - 1) << 40 | 1)
        );
        assert_eq!(pairs.key(&(1 << 24, 1)), None);
        let full = PackedPairs::new(64);
        assert_eq!(full.key(&(0, u64::MAX)), Some(u64::MAX));
        assert_eq!(full.key(&(1, 0)), None);
        let narrow = PackedPairs::new(20);
        assert_eq!(
            narrow.key(&(u32::MAX, 1)),
            Some((u32::MAX as u64) << 20 | 1)
        );
    }
}
