//! One worker's part of a distributed exploration (see the documentation of [`super`]).

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::keys::KeyTrouble;
use super::levels::{LevelDriver, LevelSearch, Owned};
use super::rounds::Rounds;
use super::{DistError, DistExploration, DistOptions};
use crate::explore::index::hash_key;
use crate::explore::{CanonicalId, ExploreStats, LevelReport, StopReason, StopSignal};
use crate::ts::TransitionSystem;

/// The id of a state whose id is not known yet (a candidate of the level in progress).
pub(super) const UNNUMBERED: u32 = u32::MAX;
/// The parent key of the initial state.
pub(super) const NO_PARENT: u64 = u64::MAX;
/// The stop code of a worker that failed.
pub(super) const FAILED: u32 = 255;
/// The stop code of a worker whose keys turned out too narrow ([`DistError::KeyTooNarrow`]).
pub(super) const TOO_NARROW: u32 = 254;

/// A worker's stop code at a level's end: [`FAILED`] for a failure; else the stop signal's
/// reason (a limit or an interrupt ends the run, wider keys or not); else [`TOO_NARROW`] for
/// keys too narrow; else 0.
pub(super) fn level_code(failure: Option<&DistError>, stop: &StopSignal) -> u32 {
    match failure {
        Some(DistError::KeyTooNarrow) | None => match stop_code(stop.reason()) {
            0 if failure.is_some() => TOO_NARROW,
            code => code,
        },
        Some(_) => FAILED,
    }
}

/// The code of a level for every worker, from each worker's ([`level_code`]): a failure
/// first, then a stop (the first worker's), then keys too narrow; `None` if all went on.
pub(super) fn run_code(codes: impl Iterator<Item = u32>) -> Option<u32> {
    codes.filter(|&c| c != 0).min_by_key(|&c| match c {
        FAILED => 0,
        TOO_NARROW => 2,
        _ => 1,
    })
}

/// The error every worker returns for a level whose code is [`FAILED`] or [`TOO_NARROW`]:
/// keys too narrow, or this worker's failure (not that of keys too narrow: some other
/// worker's failure ends the run), or another's.
pub(super) fn level_error(code: u32, failure: Option<DistError>) -> DistError {
    match failure {
        _ if code == TOO_NARROW => DistError::KeyTooNarrow,
        Some(e) if !matches!(e, DistError::KeyTooNarrow) => e,
        _ => DistError::Worker("a worker of another process failed".into()),
    }
}

/// The worker that owns the state encoded as `words`, among `peers`: the same in every
/// process (the hash depends on the words only).
#[inline]
pub(super) fn owner_of(words: &[u32], peers: usize) -> usize {
    // The low half of the hash (the state index takes its slots from the high half).
    let h = hash_key(words) as u32 as u64;
    ((h * peers as u64) >> 32) as usize
}

/// A stop reason as it travels between workers.
pub(super) fn stop_code(reason: Option<StopReason>) -> u32 {
    match reason {
        None => 0,
        Some(StopReason::StateLimit) => 1,
        Some(StopReason::MemoryLimit) => 2,
        Some(StopReason::TimeLimit) => 3,
        Some(StopReason::Interrupted) => 4,
        Some(StopReason::DepthLimit) => 5,
    }
}

pub(super) fn stop_reason(code: u32) -> Option<StopReason> {
    match code {
        1 => Some(StopReason::StateLimit),
        2 => Some(StopReason::MemoryLimit),
        3 => Some(StopReason::TimeLimit),
        4 => Some(StopReason::Interrupted),
        5 => Some(StopReason::DepthLimit),
        _ => None,
    }
}

/// A `u64` as two words, low first, and back.
pub(super) fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

pub(super) fn join(lo: u32, hi: u32) -> u64 {
    lo as u64 | ((hi as u64) << 32)
}

/// Sends `words` (beginning with this worker's index) to every worker and collects what each
/// sent, by sender.
pub(super) fn all_gather(
    channel: &mut Rounds,
    worker: &mut Worker,
    words: &[u32],
) -> Vec<Vec<u32>> {
    let mut by_sender = vec![Vec::new(); worker.peers()];
    channel.push_to_all(words);
    channel.finish_round(worker, |batch| {
        for record in batch.chunks_exact(words.len()) {
            by_sender[record[0] as usize] = record.to_vec();
        }
    });
    by_sender
}

/// Sends `mine` to every worker and returns the union of what all sent, in order (every
/// worker takes part, with any number of words).
pub(super) fn union_gather(channel: &mut Rounds, worker: &mut Worker, mine: &[u32]) -> Vec<u32> {
    let mut union = Vec::new();
    if !mine.is_empty() {
        channel.push_to_all(mine);
    }
    channel.finish_round(worker, |batch| union.extend_from_slice(&batch));
    union.sort_unstable();
    union.dedup();
    union
}

/// The exploration's part of a level ([`LevelSearch`]): every step is sent; a state with no
/// steps is a deadlock.
struct Exploration<'a, T> {
    ts: &'a T,
    /// The workers of the run.
    peers: usize,
    /// Deadlocks this worker expanded.
    deadlocks: u64,
    /// The least id among them ([`UNNUMBERED`] for none).
    least_deadlock: u32,
    /// What the keys of a system keyed by its structural encoding met.
    trouble: Option<&'a KeyTrouble>,
}

impl<T: TransitionSystem> LevelSearch for Exploration<'_, T> {
    fn owner(&mut self, key: &[u32], peers: usize) -> usize {
        owner_of(key, peers)
    }

    #[inline]
    fn expand<S: FnMut(u32, usize, &[u32])>(&mut self, id: u32, key: &[u32], mut send: S) -> u32 {
        // Successors computed on encodings: the system keeps no state of its own.
        let mut k = 0u32;
        self.ts
            .for_each_encoded_successor(key, &mut |_label, target| {
                send(k, owner_of(target, self.peers), target);
                k += 1;
            });
        if k == 0 {
            self.deadlocks += 1;
            self.least_deadlock = self.least_deadlock.min(id);
        }
        k
    }

    fn trouble(&self) -> Option<DistError> {
        self.trouble?.error()
    }
}

/// Runs worker `worker.index()` of a distributed exploration of `ts` to its end (`trouble`:
/// what the keys of a system keyed by its structural encoding meet).
pub(super) fn run_worker<T: TransitionSystem>(
    worker: &mut Worker,
    ts: &T,
    width: usize,
    opts: &DistOptions,
    stop: &StopSignal,
    trouble: Option<&KeyTrouble>,
) -> Result<DistExploration, DistError> {
    let start = Instant::now();
    let me = worker.index();
    let peers = worker.peers();
    let mut driver = LevelDriver::new(worker, width);
    let max_states = opts.max_states.unwrap_or(u64::MAX);
    let mut words = vec![0u32; width];
    ts.encode_state(&ts.initial_state(), &mut words);
    let mut exploration = Exploration {
        ts,
        peers,
        deadlocks: 0,
        least_deadlock: UNNUMBERED,
        trouble,
    };
    let levels = driver.run(worker, &mut exploration, &words, max_states, opts, stop)?;

    // The deadlocks of all workers.
    let [d_lo, d_hi] = split(exploration.deadlocks);
    let gathered = all_gather(
        &mut driver.counts,
        worker,
        &[me as u32, d_lo, d_hi, exploration.least_deadlock],
    );
    let deadlocks: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let first_deadlock = gathered
        .iter()
        .map(|r| r[3])
        .min()
        .filter(|&d| d != UNNUMBERED);

    let owned = &driver.owned;
    let deadlock_trace = match first_deadlock {
        Some(d) if opts.deadlock_trace => Some(trace_to(ts, worker, &mut driver.paths, owned, d)?),
        _ => None,
    };
    let mut states = Vec::new();
    if opts.keep_states {
        for (n, &id) in owned.id_of.iter().enumerate() {
            if id != UNNUMBERED {
                owned.index.read_key(n as u32, &mut words);
                states.push((CanonicalId(id), words.clone()));
            }
        }
    }
    Ok(DistExploration {
        stats: finished_stats(
            levels.numbered,
            levels.transitions,
            deadlocks,
            levels.levels,
            start,
            peers,
            levels.stopped,
        ),
        first_deadlock: first_deadlock.map(CanonicalId),
        deadlock_trace,
        states,
        processes: 1,
        workers: 1,
        key_words: None,
        key_restarts: 0,
    })
}

/// Tells the level observer of `opts` that a level ended (on the first worker only).
pub(super) fn report_level(
    opts: &DistOptions,
    me: usize,
    level: u32,
    states: u64,
    transitions: u64,
    start: Instant,
) {
    if me == 0 {
        if let Some(report) = &opts.on_level {
            report(&LevelReport {
                level,
                states,
                transitions,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
    }
}

/// The statistics of a run that ended (`peers`: the workers of all processes).
pub(super) fn finished_stats(
    states: u64,
    transitions: u64,
    deadlocks: u64,
    levels: u32,
    start: Instant,
    peers: usize,
    stopped: Option<StopReason>,
) -> ExploreStats {
    let seconds = start.elapsed().as_secs_f64();
    ExploreStats {
        states,
        transitions,
        deadlocks,
        levels,
        seconds,
        states_per_second: states as f64 / seconds.max(1e-9),
        threads: peers,
        complete: stopped.is_none(),
        stopped,
        ..Default::default()
    }
}

/// The least path to the state with id `target`, from the initial state: each state's words
/// and the index of the step from its parent to it (the initial state's is meaningless). Its
/// owner's parent record names the parent and the step; the parent's owner names its own,
/// and so on back to the initial state (one round per step, every worker taking part).
pub(super) fn path_to(
    worker: &mut Worker,
    paths: &mut Rounds,
    owned: &Owned,
    target: u32,
) -> Result<Vec<(Vec<u32>, u32)>, DistError> {
    let width = owned.width;
    // From the target back: (the state's words, the index of the step from its parent).
    let mut path: Vec<(Vec<u32>, u32)> = Vec::new();
    let mut at = target;
    let mut words = vec![0u32; width];
    loop {
        if let Some(n) = owned.number_of_id(at) {
            owned.index.read_key(n, &mut words);
            let mut record = words.clone();
            record.extend(split(owned.parent_key[n as usize]));
            paths.push_to_all(&record);
        }
        let mut received: Option<Vec<u32>> = None;
        paths.finish_round(worker, |batch| received = Some(batch));
        let record = received
            .filter(|r| r.len() == width + 2)
            .ok_or_else(|| DistError::Worker(format!("no worker owns the state with id {at}")))?;
        let key = join(record[width], record[width + 1]);
        path.push((record[..width].to_vec(), key as u32));
        if key == NO_PARENT {
            break;
        }
        at = (key >> 32) as u32;
    }
    path.reverse();
    Ok(path)
}

/// The label names of the least path to the state with id `target` ([`path_to`]), each step
/// relabelled by re-expanding its source.
fn trace_to<T: TransitionSystem>(
    ts: &T,
    worker: &mut Worker,
    paths: &mut Rounds,
    owned: &Owned,
    target: u32,
) -> Result<Vec<String>, DistError> {
    let width = owned.width;
    let path = path_to(worker, paths, owned, target)?;
    let mut labels = Vec::with_capacity(path.len().saturating_sub(1));
    let mut target_words = vec![0u32; width];
    for step in path.windows(2) {
        let (from, _) = &step[0];
        let (to, k) = &step[1];
        let state = ts.decode_state(from).ok_or_else(|| {
            DistError::Worker("a state of the deadlock trace did not decode".into())
        })?;
        let mut i = 0u32;
        let mut label = None;
        ts.for_each_successor(&state, &mut |l, target| {
            if i == *k {
                ts.encode_state(&target, &mut target_words);
                if target_words == *to {
                    label = Some(l);
                }
            }
            i += 1;
        });
        let label = label.ok_or_else(|| {
            DistError::Worker("a step of the deadlock trace is not a step of the model".into())
        })?;
        labels.push(ts.label_name(label));
    }
    Ok(labels)
}
