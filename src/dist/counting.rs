//! One worker's part of a distributed exploration that reports counts only (no deadlock trace,
//! no state ids asked for), for systems whose encodings take at most two words.
//!
//! As the threaded explorer's compact storage ([`crate::explore::compact`]) does, an owner keeps
//! the states it owns as their packed encodings in a [`CompactSet`] (about a dozen bytes a
//! state), with no ids, no parents and only the level being expanded. A level is two rounds:
//! expand and send each successor's encoding (nothing else) to its owner, which keeps the new
//! ones as its part of the next level; then an all-gather of the counts. The counts, levels and
//! deadlocks are those of the numbered run (they do not depend on ids).

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::rounds::Rounds;
use super::search::{
    all_gather, finished_stats, join, owner_of, report_level, split, stop_code, stop_reason,
};
use super::{DistExploration, DistOptions};
use crate::explore::compact::{pack, unpack, CompactSet};
use crate::explore::{ExploreStats, StopReason, StopSignal};
use crate::ts::TransitionSystem;

/// States expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;

/// Runs worker `worker.index()` of a count-only distributed exploration of `ts` (`width` of 1
/// or 2) to its end.
pub(super) fn run_worker<T: TransitionSystem>(
    worker: &mut Worker,
    ts: &T,
    width: usize,
    opts: &DistOptions,
    stop: &StopSignal,
) -> DistExploration {
    debug_assert!((1..=2).contains(&width));
    let start = Instant::now();
    let me = worker.index();
    let peers = worker.peers();
    let mut successors = Rounds::new(worker);
    let mut counts = Rounds::new(worker);
    let max_states = opts.max_states.unwrap_or(u64::MAX);

    let owned = CompactSet::new();
    let mut words = [0u32; 2];
    ts.encode_state(&ts.initial_state(), &mut words[..width]);
    // This worker's states of the level to expand, as packed encodings.
    let mut frontier: Vec<u64> = Vec::new();
    if owner_of(&words[..width], peers) == me {
        owned.insert(pack(&words[..width]));
        frontier.push(pack(&words[..width]));
    }
    let mut next: Vec<u64> = Vec::new();
    let receive = |batch: Vec<u32>, next: &mut Vec<u64>| {
        for record in batch.chunks_exact(width) {
            let key = pack(record);
            if owned.insert(key) {
                next.push(key);
            }
        }
    };

    let mut level_end = 1u64;
    let mut levels = 0u32;
    let mut transitions = 0u64;
    let mut all_transitions;
    let mut deadlocks = 0u64;
    let mut stopped = None;
    loop {
        levels += 1;
        // 1. Expand this worker's states of the level; send each successor to its owner.
        for (i, &key) in frontier.iter().enumerate() {
            if i % POLL_EVERY == POLL_EVERY - 1 {
                if stop.is_raised() {
                    break;
                }
                successors.poll(worker, |batch| receive(batch, &mut next));
            }
            let source = unpack(key);
            let mut k = 0u64;
            ts.for_each_encoded_successor(&source[..width], &mut |_label, target| {
                k += 1;
                successors.push(owner_of(target, peers), target);
            });
            transitions += k;
            deadlocks += u64::from(k == 0);
        }
        successors.finish_round(worker, |batch| receive(batch, &mut next));

        // 2. All-gather the number of new states each worker holds (and stops).
        let code = stop_code(stop.reason());
        let [t_lo, t_hi] = split(transitions);
        let [n_lo, n_hi] = split(next.len() as u64);
        let gathered = all_gather(
            &mut counts,
            worker,
            &[me as u32, n_lo, n_hi, code, t_lo, t_hi],
        );
        let new_states: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
        all_transitions = gathered.iter().map(|r| join(r[4], r[5])).sum();
        if let Some(code) = gathered.iter().map(|r| r[3]).find(|&c| c != 0) {
            stopped = stop_reason(code);
            break;
        }
        let room = max_states.saturating_sub(level_end);
        level_end += new_states.min(room);
        report_level(opts, me, levels, level_end, all_transitions, start);
        if new_states > room {
            stopped = Some(StopReason::StateLimit);
            break;
        }
        if new_states == 0 {
            break;
        }
        frontier = std::mem::take(&mut next);
    }

    let [d_lo, d_hi] = split(deadlocks);
    let [b_lo, b_hi] = split(owned.bytes());
    let gathered = all_gather(&mut counts, worker, &[me as u32, d_lo, d_hi, b_lo, b_hi]);
    let deadlocks: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let bytes: u64 = gathered.iter().map(|r| join(r[3], r[4])).sum();
    DistExploration {
        stats: ExploreStats {
            storage: Some("compact"),
            visited_bytes: Some(bytes),
            bytes_per_state: Some(bytes as f64 / level_end.max(1) as f64),
            ..finished_stats(
                level_end,
                all_transitions,
                deadlocks,
                levels,
                start,
                peers,
                stopped,
            )
        },
        first_deadlock: None,
        deadlock_trace: None,
        states: Vec::new(),
        processes: 1,
        workers: 1,
    }
}
