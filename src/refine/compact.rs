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
//!
//! Where the nodes do not fit beside the encoding, or the encoding takes more than two words,
//! a pair is kept as the node followed by the encoding ([`EncodedPairs`], in a [`WideSet`]).
//! An implementation with no fixed-width encoding is searched indexed: kept whole per pair,
//! its structural encodings can take kilobytes each (a distributed run pads them into keys).
//!
//! A distributed run shares the search among its processes through [`SharedPairSearch`],
//! which `dist` implements and the CLI hands in ([`SystemOptions::distributed`]): the pairs
//! travel as keys ([`crate::explore::keyed`]), of one `u64` or of the node and a wider
//! encoding (or a structural one, padded: module `shared`), so `refine` knows nothing of
//! processes. A check that fails there is searched
//! again by the processes, numbering the pairs as the engine does (an antichain kept by the
//! owner of each implementation state, [`Antichained`]), and the path to the least violation
//! they rebuild is replayed here ([`search_product_witness_shared`], [`replay_witness`]).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use super::product::{Product, SpecEvents};
use super::shared_normal::SharedNormalForm;
use super::{CheckStats, Model};
use crate::explore::compact::{pair_key, CompactSet, Packed};
use crate::explore::keyed::WideSet;
use crate::explore::{
    Driven, Engine, LevelWriter, Offer, ProvisionalId, RunOptions, StopReason, StopSignal, Visited,
};
use crate::ts::TransitionSystem;

mod shared;
pub use shared::SharedPairSearch;
pub(crate) use shared::{
    distributable, replay_path, replay_witness, search_product_shared,
    search_product_witness_shared, search_shared, search_witness_shared, SharedWitness,
    WitnessSearch,
};

/// The visited pairs of a compact product search: exact pairs packed into one `u64` each.
pub(crate) struct PackedPairs {
    set: CompactSet,
    /// Bits of the implementation's encoding; the node goes above them.
    shift: u32,
    /// Set when a node's number does not fit above the encoding (the search then stops as if
    /// full, and the check is run indexed).
    overflow: AtomicBool,
    /// Raised with [`StopReason::MemoryLimit`] when the set's table cannot grow (a stop with
    /// statistics, never an abort).
    stop: Option<StopSignal>,
}

impl PackedPairs {
    pub(crate) fn new(bits: u32) -> Self {
        PackedPairs {
            set: CompactSet::new(),
            shift: bits,
            overflow: AtomicBool::new(false),
            stop: None,
        }
    }

    /// The same, stopping the search on `stop` when the set cannot grow.
    pub(crate) fn stopping(bits: u32, stop: &StopSignal) -> Self {
        PackedPairs {
            stop: Some(stop.clone()),
            ..PackedPairs::new(bits)
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
    fn key(&self, &pair: &(u32, u64)) -> Option<u64> {
        pair_key(self.shift, pair)
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
        match self.set.try_insert(key) {
            Ok(true) => Offer::New(ProvisionalId(u32::MAX)),
            Ok(false) => Offer::Old(ProvisionalId(u32::MAX)),
            Err(bytes) => match &self.stop {
                Some(stop) => {
                    // The memory limit is the first reason raised: the engine's own for
                    // `Full` (the state limit) comes after it and is ignored.
                    stop.stop(StopReason::MemoryLimit);
                    Offer::Full
                }
                None => {
                    let layout = std::alloc::Layout::from_size_align(bytes as usize, 8)
                        .unwrap_or(std::alloc::Layout::new::<u64>());
                    std::alloc::handle_alloc_error(layout)
                }
            },
        }
    }
}

/// What a compact product search (in this process or distributed) decided.
pub(crate) struct CompactSearch {
    /// The figures of the search (time not filled in); `pair_bytes` the visited set's.
    pub(crate) stats: CheckStats,
    /// Whether the last level expanded has a violation (its counterexample is then searched
    /// for by the indexed search).
    pub(crate) violated: bool,
    /// Why the search stopped early, if it did.
    pub(crate) stopped: Option<StopReason>,
    /// A search shared by the processes of a distributed run: the union of the processes'
    /// marks ([`KeyedProduct::marks`]; for a check, the normal-form nodes asked for).
    pub(crate) marks: Vec<u32>,
}

/// Runs `product` (over a [`crate::explore::compact::Packed`] implementation of `bits` bits)
/// frontier-only with packed exact pairs, or `None` when a node's number did not fit beside
/// the encodings (nothing decided).
pub(crate) fn search<D>(
    engine: &Engine,
    product: &D,
    bits: u32,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch>
where
    D: crate::explore::Driven<State = (u32, u64)>,
{
    let pairs = PackedPairs::stopping(bits, stop);
    let opts = RunOptions {
        record_transitions: false,
        frontier_only: true,
        ..opts.clone()
    };
    let run = engine.run(product, &pairs, &opts, stop);
    if pairs.overflowed() {
        return None;
    }
    // Nodes are counted by the caller.
    let mut stats = super::run_stats(&run, 0, engine);
    stats.pair_bytes = Some(pairs.bytes());
    Some(CompactSearch {
        stats,
        violated: run.witness.is_some(),
        stopped: run.stats.stopped,
        marks: Vec::new(),
    })
}

/// Searches the product of `nf` and `imp` compactly in this process: pairs of one `u64`
/// where the implementation's packed encoding leaves room for the nodes, else (a wider
/// encoding, or a node that did not fit) the node and the encoding of any width; `None`
/// when `imp` has no canonical encoding.
pub(crate) fn search_in_process<I: TransitionSystem>(
    engine: &Engine,
    nf: &SharedNormalForm<'_>,
    events: &SpecEvents,
    imp: &I,
    model: Model,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch> {
    if let Some(packed) = Packed::new(imp) {
        let product = Product::new(nf, events, &packed, model, stop).limited_to(opts.max_states);
        if let Some(searched) = search(engine, &product, packed.bits(), opts, stop) {
            return Some(searched);
        }
        // A node did not fit beside the encodings (the search stopped as if full): the
        // pairs are kept wide.
        stop.withdraw(StopReason::StateLimit);
    }
    let product = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
    // An implementation without a fixed-width encoding is searched indexed (state numbers
    // and an antichain): its structural encodings, kept whole per pair, can take kilobytes
    // each (Andrew.csp: 16,000 words), where a distributed run has no other choice.
    search_encoded(engine, &product, imp, opts, stop)
}

/// The visited pairs of a compact product search over an implementation whose encoding, or
/// whose encoding with the node beside it, is wider than a `u64`: exact pairs kept as the
/// node followed by the encoding ([`EncodedKeys`]'s keys) in a [`WideSet`].
pub(crate) struct EncodedPairs<'a, T> {
    ts: &'a T,
    set: WideSet,
    width: usize,
}

/// Words of a key kept on the stack (wider keys take a vector).
const STACK_KEY_WORDS: usize = 16;

impl<'a, T: TransitionSystem> EncodedPairs<'a, T> {
    /// An empty set of the pairs of `ts`, if it has a canonical encoding.
    pub(crate) fn new(ts: &'a T) -> Option<Self> {
        let width = ts.encoded_width().ok()? + 1;
        Some(EncodedPairs {
            ts,
            set: WideSet::new(width),
            width,
        })
    }
}

impl<T: TransitionSystem> Visited<(u32, T::State)> for EncodedPairs<'_, T> {
    fn offer(
        &self,
        (node, state): &(u32, T::State),
        _key: u64,
        _level: &mut LevelWriter<'_>,
    ) -> Offer {
        let mut on_stack = [0u32; STACK_KEY_WORDS];
        let mut on_heap = Vec::new();
        let key: &mut [u32] = if self.width <= STACK_KEY_WORDS {
            &mut on_stack[..self.width]
        } else {
            on_heap.resize(self.width, 0);
            &mut on_heap
        };
        key[0] = *node;
        self.ts.encode_state(state, &mut key[1..]);
        // No provisional ids: a frontier-only run keeps none.
        if self.set.insert(key) {
            Offer::New(ProvisionalId(u32::MAX))
        } else {
            Offer::Old(ProvisionalId(u32::MAX))
        }
    }
}

/// Runs `product` (over `imp`, which has a canonical encoding) frontier-only with exact
/// pairs kept by their encodings ([`EncodedPairs`]), or `None` when `imp` has no encoding.
pub(crate) fn search_encoded<I, D>(
    engine: &Engine,
    product: &D,
    imp: &I,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch>
where
    I: TransitionSystem,
    D: Driven<State = (u32, I::State)>,
{
    let pairs = EncodedPairs::new(imp)?;
    let opts = RunOptions {
        record_transitions: false,
        frontier_only: true,
        ..opts.clone()
    };
    let run = engine.run(product, &pairs, &opts, stop);
    let mut stats = super::run_stats(&run, 0, engine);
    stats.pair_bytes = Some(pairs.set.bytes());
    Some(CompactSearch {
        stats,
        violated: run.witness.is_some(),
        stopped: run.stats.stopped,
        marks: Vec::new(),
    })
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
