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

use super::shared_normal::SharedNormalForm;
use super::{CheckStats, Model, RefineError, SystemOptions};
#[cfg(not(loom))]
use crate::dist::pairs::{search_pairs, PairOptions};
use crate::explore::compact::{pair_key, CompactSet};
use crate::explore::{
    Engine, LevelWriter, Offer, ProvisionalId, RunOptions, StopReason, StopSignal, Visited,
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
        if self.set.insert(key) {
            Offer::New(ProvisionalId(u32::MAX))
        } else {
            Offer::Old(ProvisionalId(u32::MAX))
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
    // Nodes are counted by the caller.
    let mut stats = super::run_stats(&run, 0, engine);
    stats.pair_bytes = Some(pairs.bytes());
    Some(CompactSearch {
        stats,
        violated: run.witness.is_some(),
        stopped: run.stats.stopped,
    })
}

/// Nodes of a normal form built whole for a distributed check, at most.
const DISTRIBUTED_NODES: usize = 1 << 20;

/// Whether a check in `model` can be searched by the processes of a distributed run: the
/// model's nodes are the normal form's own (refusal testing and revivals make nodes of
/// admissible members as the search goes), and the normal form, built whole here in a fixed
/// order so that every process numbers its nodes alike, is small enough and its numbers fit
/// above `bits` bits of encoding. The same answer in every process.
pub(crate) fn distributable(model: Model, nf: &SharedNormalForm<'_>, bits: u32) -> bool {
    matches!(
        model,
        Model::Traces | Model::Failures | Model::FailuresDivergences
    ) && nf.complete(DISTRIBUTED_NODES)
        && pair_key(bits, (nf.num_sets().saturating_sub(1) as u32, 0)).is_some()
}

/// Searches `product` with the processes of the distributed run of `system_opts`
/// ([`crate::dist::pairs`]), if it has one (else `None`); for a refinement, the normal form
/// must have been completed ([`distributable`]). `fingerprint_kind` names the kind of search
/// (every process must be at the same one).
#[cfg(not(loom))]
pub(crate) fn search_distributed<D>(
    product: &D,
    fingerprint_kind: u8,
    spec_sets: u64,
    bits: u32,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<CompactSearch>, RefineError>
where
    D: crate::explore::Driven<State = (u32, u64)>,
{
    let Some(connect) = &system_opts.distributed else {
        return Ok(None);
    };
    let failed = |e: crate::dist::DistError| RefineError::Distributed(e.to_string());
    let connected = connect().map_err(failed)?;
    let workers = connected.workers();
    let pair_opts = PairOptions {
        max_pairs: opts.max_states,
        on_level: opts.on_level.clone(),
        // The search's kind and its specification's size (the initial pair and the
        // encoding's bits are added to it).
        fingerprint: spec_sets << 8 | fingerprint_kind as u64,
    };
    let searched = search_pairs(product, bits, connected, &pair_opts, stop).map_err(failed)?;
    let pairs = searched.pairs;
    Ok(Some(CompactSearch {
        stats: CheckStats {
            pairs_explored: pairs,
            pairs_discovered: pairs,
            max_working: searched.widest_level,
            antichain_hits: searched.transitions.saturating_sub(pairs.saturating_sub(1)),
            antichain_misses: pairs,
            max_antichain: pairs,
            transitions: searched.transitions,
            spec_sets,
            pair_bytes: Some(searched.bytes),
            seconds: 0.0,
            levels: searched.levels,
            threads: workers,
        },
        violated: searched.violated,
        stopped: searched.stopped,
    }))
}

/// Loom builds leave distribution out: there is never a distributed run.
#[cfg(loom)]
pub(crate) fn search_distributed<D>(
    _product: &D,
    _fingerprint_kind: u8,
    _spec_sets: u64,
    _bits: u32,
    _system_opts: &SystemOptions,
    _opts: &RunOptions,
    _stop: &StopSignal,
) -> Result<Option<CompactSearch>, RefineError> {
    Ok(None)
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
