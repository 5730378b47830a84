//! A distributed product search: the pairs `(normal-form node, implementation state)` of a
//! refinement check spread over the workers of a cluster, each pair kept by one owner.
//!
//! As the compact product search of one process ([`crate::refine`]'s `compact` module) does, a
//! pair travels and is kept as one `u64`, the implementation's packed canonical encoding with
//! the node's number in the bits above it; an owner keeps its pairs in a [`CompactSet`], with
//! no ids, no parents and only the level being expanded. The node numbers must mean the same
//! in every process: the caller builds the specification's normal form whole, in a fixed
//! order, before the search. A level is two rounds, as in the count-only exploration: expand
//! and send each successor pair to its owner; then an all-gather of the counts and of whether
//! some worker met a violation. The search ends at the end of the first level with one
//! (nothing else: the counterexample is searched for by the caller), or when a level adds
//! nothing.

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::rounds::Rounds;
use super::search::{all_gather, join, owner_of, report_level, split, stop_code, stop_reason};
use super::{execute_scoped, Connected, DistError, DistOptions};
use crate::explore::compact::CompactSet;
pub use crate::explore::compact::{pair_key, AlonePairs};
use crate::explore::{Driven, LevelObserver, StopReason, StopSignal};

/// States expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;

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
}

/// Options of [`search_pairs`].
#[derive(Clone, Default)]
pub struct PairOptions {
    /// Keep at most this many pairs (the search then stops with [`StopReason::StateLimit`]).
    pub max_pairs: Option<u64>,
    /// Told after each level (in process 0).
    pub on_level: Option<LevelObserver>,
    /// What the caller knows of the search (for example the specification's number of
    /// nodes): with the initial pair and the encoding's bits, every process must give the
    /// same, or the search ends with an error before it starts. Processes whose runs went
    /// apart (one stopped by a limit where another was not) then never mix two searches.
    pub fingerprint: u64,
}

#[inline]
fn pair_of(bits: u32, key: u64) -> (u32, u64) {
    if bits >= 64 {
        return (0, key);
    }
    ((key >> bits) as u32, key & ((1u64 << bits) - 1))
}

/// Searches the product `product` (whose states are pairs of a node and a packed encoding of
/// `bits` bits, numbered alike in every process) with the workers of `connected`, every
/// process calling this with the same product and options. Every node number the product
/// emits must fit above the encoding ([`pair_key`]); the caller checks it before.
pub fn search_pairs<D>(
    product: &D,
    bits: u32,
    connected: Connected,
    opts: &PairOptions,
    stop: &StopSignal,
) -> Result<PairSearch, DistError>
where
    D: Driven<State = (u32, u64)>,
{
    let outcomes = execute_scoped(connected, |worker| {
        run_worker(worker, product, bits, opts, stop)
    })?;
    outcomes
        .into_iter()
        .next()
        .ok_or_else(|| DistError::Worker("no worker ran in this process".into()))?
}

/// Runs worker `worker.index()` of the search of [`search_pairs`] to its end.
pub(super) fn run_worker<D>(
    worker: &mut Worker,
    product: &D,
    bits: u32,
    opts: &PairOptions,
    stop: &StopSignal,
) -> Result<PairSearch, DistError>
where
    D: Driven<State = (u32, u64)>,
{
    let start = Instant::now();
    let me = worker.index();
    let peers = worker.peers();
    let mut successors = Rounds::new(worker);
    let mut counts = Rounds::new(worker);
    let max_pairs = opts.max_pairs.unwrap_or(u64::MAX);
    let report = DistOptions {
        on_level: opts.on_level.clone(),
        ..DistOptions::default()
    };
    let key_of =
        |pair: (u32, u64)| pair_key(bits, pair).expect("nodes fit (checked by the caller)");

    let owned = CompactSet::new();
    let initial = key_of(product.initial_state());
    // 0. Every process must be making the same search.
    let [o_lo, o_hi] = split(opts.fingerprint);
    let [i_lo, i_hi] = split(initial);
    let fingerprint = crate::hash::hash_words(&[o_lo, o_hi, i_lo, i_hi, bits]);
    let [f_lo, f_hi] = split(fingerprint);
    let gathered = all_gather(&mut counts, worker, &[me as u32, f_lo, f_hi]);
    if gathered.iter().any(|r| join(r[1], r[2]) != fingerprint) {
        return Err(DistError::Worker(
            "the processes of the run are not at the same search (their runs went apart: \
             a limit or an error in one process and not in another, or different scripts or \
             options)"
                .into(),
        ));
    }
    let mut frontier: Vec<u64> = Vec::new();
    if owner_of(&split(initial), peers) == me {
        owned.insert(initial);
        frontier.push(initial);
    }
    let mut next: Vec<u64> = Vec::new();
    let receive = |batch: Vec<u32>, next: &mut Vec<u64>| {
        for record in batch.chunks_exact(2) {
            let key = join(record[0], record[1]);
            if owned.insert(key) {
                next.push(key);
            }
        }
    };

    let mut level_end = 1u64;
    let mut widest = 1u64;
    let mut levels = 0u32;
    let mut transitions = 0u64;
    let mut all_transitions;
    let mut violated = false;
    let mut dead_ends = 0u64;
    let mut stopped = None;
    loop {
        levels += 1;
        // 1. Expand this worker's pairs of the level; send each successor to its owner. Once
        // a violation is found, the level's other pairs are still expanded (their steps are
        // counted, as the threaded search counts them) but their successors are not sent.
        for (i, &key) in frontier.iter().enumerate() {
            if i % POLL_EVERY == POLL_EVERY - 1 {
                if stop.is_raised() {
                    break;
                }
                successors.poll(worker, |batch| receive(batch, &mut next));
            }
            let mut steps = 0u64;
            let found = product.expand(&pair_of(bits, key), &mut |_label, target| {
                steps += 1;
                if !violated {
                    let target = split(key_of(target));
                    successors.push(owner_of(&target, peers), &target);
                }
            });
            transitions += steps;
            dead_ends += u64::from(steps == 0 && found.is_none());
            violated |= found.is_some();
        }
        successors.finish_round(worker, |batch| receive(batch, &mut next));

        // 2. All-gather the number of new pairs each worker holds, its steps, its stop and
        // whether it met a violation.
        let code = stop_code(stop.reason());
        let [t_lo, t_hi] = split(transitions);
        let [n_lo, n_hi] = split(next.len() as u64);
        let gathered = all_gather(
            &mut counts,
            worker,
            &[me as u32, n_lo, n_hi, code, t_lo, t_hi, violated as u32],
        );
        let new_pairs: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
        all_transitions = gathered.iter().map(|r| join(r[4], r[5])).sum();
        if let Some(code) = gathered.iter().map(|r| r[3]).find(|&c| c != 0) {
            stopped = stop_reason(code);
            break;
        }
        if gathered.iter().any(|r| r[6] != 0) {
            violated = true;
            break;
        }
        let room = max_pairs.saturating_sub(level_end);
        level_end += new_pairs.min(room);
        widest = widest.max(new_pairs);
        report_level(&report, me, levels, level_end, all_transitions, start);
        if new_pairs > room {
            stopped = Some(StopReason::StateLimit);
            break;
        }
        if new_pairs == 0 {
            break;
        }
        frontier = std::mem::take(&mut next);
    }

    let [b_lo, b_hi] = split(owned.bytes());
    let [d_lo, d_hi] = split(dead_ends);
    let gathered = all_gather(&mut counts, worker, &[me as u32, b_lo, b_hi, d_lo, d_hi]);
    let bytes: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let dead_ends: u64 = gathered.iter().map(|r| join(r[3], r[4])).sum();
    Ok(PairSearch {
        pairs: level_end,
        transitions: all_transitions,
        levels,
        widest_level: widest,
        violated,
        dead_ends,
        stopped,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
