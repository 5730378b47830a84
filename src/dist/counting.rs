//! One worker's part of a distributed exploration that reports counts only (no deadlock trace,
//! no state ids asked for), for systems whose encodings take at most two words (and for any
//! width when the run writes or resumes checkpoints: the states then travel and are kept as
//! their encodings' words, or as their structural keys, module [`super::keys`]).
//!
//! The system, its states packed into one `u64` each ([`Packed`]), is searched as a product
//! with a single node ([`AlonePairs`]) by the workers of the distributed product search
//! ([`super::pairs`]): an owner keeps the states it owns in a compact set (about a dozen bytes
//! a state), with no ids, no parents and only the level being expanded; a level is two rounds.
//! The counts, levels and deadlocks are those of the numbered run (they do not depend on ids).

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::pairs::{AlonePairs, PairOptions};
use super::search::finished_stats;
use super::{DistExploration, DistOptions};
use crate::explore::compact::Packed;
use crate::explore::keyed::{EncodedKeys, PackedKeys};
use crate::explore::{ExploreStats, Plain, StopSignal};
use crate::ts::TransitionSystem;

/// Runs worker `worker.index()` of a count-only distributed exploration of `ts` (encodings of
/// one or two words) to its end; from `resumed`, a checkpoint's part the workers agreed on,
/// if given (else from the one of `opts`' checkpoint folder that they agree on, if resuming).
pub(super) fn run_worker<T: TransitionSystem>(
    worker: &mut Worker,
    ts: &T,
    opts: &DistOptions,
    stop: &StopSignal,
    trouble: Option<&super::keys::KeyTrouble>,
    resumed: Option<super::checkpoint::Part>,
) -> Result<DistExploration, super::DistError> {
    let start = Instant::now();
    let peers = worker.peers();
    let pair_opts = PairOptions {
        max_pairs: opts.max_states,
        on_level: opts.on_level.clone(),
        fingerprint: 0,
        witness_path: false,
        deepest_path: false,
    };
    let persist = opts.persist.as_ref();
    let searched = match Packed::new(ts) {
        Some(packed) => super::pairs::run_worker(
            worker,
            &PackedKeys {
                product: &AlonePairs(&Plain(&packed)),
                bits: packed.bits(),
            },
            &pair_opts,
            persist,
            resumed,
            stop,
            trouble,
        )?,
        None => {
            let plain = AlonePairs(&Plain(ts));
            let keys = EncodedKeys::new(&plain, ts).ok_or_else(|| {
                super::DistError::Worker("the system has no canonical encoding".into())
            })?;
            super::pairs::run_worker(worker, &keys, &pair_opts, persist, resumed, stop, trouble)?
        }
    };
    let bytes = searched.bytes;
    Ok(DistExploration {
        stats: ExploreStats {
            storage: Some("compact"),
            visited_bytes: Some(bytes),
            bytes_per_state: Some(bytes as f64 / searched.pairs.max(1) as f64),
            ..finished_stats(
                searched.pairs,
                searched.transitions,
                searched.dead_ends,
                searched.levels,
                start,
                peers,
                searched.stopped,
            )
        },
        first_deadlock: None,
        deadlock_trace: None,
        states: Vec::new(),
        processes: 1,
        workers: 1,
        key_words: None,
        key_restarts: 0,
    })
}
