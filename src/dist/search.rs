//! One worker's part of a distributed exploration (see the documentation of [`super`]).

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::rounds::Rounds;
use super::{DistError, DistExploration, DistOptions};
use crate::explore::index::{hash_key, IndexHandle, StateIndex};
use crate::explore::{CanonicalId, ExploreStats, LevelReport, StopReason, StopSignal};
use crate::ts::TransitionSystem;

/// The id of a state whose id is not known yet (a candidate of the level in progress).
pub(super) const UNNUMBERED: u32 = u32::MAX;
/// The parent key of the initial state.
pub(super) const NO_PARENT: u64 = u64::MAX;
/// States expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;
/// The stop code of a worker that failed.
pub(super) const FAILED: u32 = 255;

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

/// The key of the `k`-th step of the state with id `parent` (as in the threaded engine).
#[inline]
fn step_key(parent: u32, k: u32) -> u64 {
    ((parent as u64) << 32) | k as u64
}

/// A `u64` as two words, low first, and back.
pub(super) fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

pub(super) fn join(lo: u32, hi: u32) -> u64 {
    lo as u64 | ((hi as u64) << 32)
}

/// The states a worker owns: its visited set (numbers given by a [`StateIndex`]), and per
/// number the least key of the steps to the state and its id.
pub(super) struct Owned {
    pub(super) width: usize,
    pub(super) index: StateIndex,
    handle: IndexHandle,
    pub(super) parent_key: Vec<u64>,
    pub(super) id_of: Vec<u32>,
    /// `(id, number)` of every state numbered so far, by id (each level's ids follow the
    /// last level's): the index of the path walk ([`path_to`]), one lookup a step.
    by_id: Vec<(u32, u32)>,
    /// Numbers of the states first met in the level in progress.
    pub(super) candidates: Vec<u32>,
    keys: Vec<u32>,
    step_keys: Vec<u64>,
    found: Vec<(u32, bool)>,
}

impl Owned {
    pub(super) fn new(width: usize) -> Owned {
        let index = StateIndex::new(width);
        let handle = index.handle();
        Owned {
            width,
            index,
            handle,
            parent_key: Vec::new(),
            id_of: Vec::new(),
            by_id: Vec::new(),
            candidates: Vec::new(),
            keys: Vec::new(),
            step_keys: Vec::new(),
            found: Vec::new(),
        }
    }

    fn ensure(&mut self, number: u32) {
        let len = number as usize + 1;
        if self.id_of.len() < len {
            self.id_of.resize(len, UNNUMBERED);
            self.parent_key.resize(len, NO_PARENT);
        }
    }

    /// Offers a batch of steps `[parent id, step index, words...]` received from expanders:
    /// new states become candidates; a candidate keeps its least key.
    pub(super) fn offer_batch(&mut self, batch: &[u32]) -> Result<(), DistError> {
        let record = 2 + self.width;
        self.keys.clear();
        self.step_keys.clear();
        for r in batch.chunks_exact(record) {
            self.step_keys.push(step_key(r[0], r[1]));
            self.keys.extend_from_slice(&r[2..]);
        }
        self.found.clear();
        self.index
            .insert_many(&mut self.handle, &self.keys, &mut self.found)
            .map_err(|e| DistError::Worker(format!("the state index of a worker: {e}")))?;
        for i in 0..self.found.len() {
            let (n, new) = self.found[i];
            let key = self.step_keys[i];
            self.ensure(n);
            let at = n as usize;
            if new {
                self.parent_key[at] = key;
                self.candidates.push(n);
            } else if self.id_of[at] == UNNUMBERED && key < self.parent_key[at] {
                self.parent_key[at] = key;
            }
        }
        Ok(())
    }

    /// Sends each candidate's least key to the worker that ranks its parent's id (the ids of
    /// `level`, the level just expanded, split evenly among the workers), and returns what
    /// this worker is sent to rank: (least key, owner, number), sorted by key.
    pub(super) fn rank_candidates(
        &self,
        ranking: &mut Rounds,
        worker: &mut Worker,
        level: std::ops::Range<u64>,
    ) -> Vec<(u64, u32, u32)> {
        let me = worker.index() as u32;
        let peers = worker.peers() as u64;
        let span = level.end - level.start;
        for &n in &self.candidates {
            let key = self.parent_key[n as usize];
            let ranker = ((key >> 32) - level.start) * peers / span;
            let [lo, hi] = split(key);
            ranking.push(ranker as usize, &[lo, hi, me, n]);
        }
        let mut ranked = Vec::new();
        ranking.finish_round(worker, |batch| {
            ranked.extend(
                batch
                    .chunks_exact(4)
                    .map(|r| (join(r[0], r[1]), r[2], r[3])),
            );
        });
        ranked.sort_unstable_by_key(|r| r.0);
        ranked
    }

    /// Gives the owned states of `level` (`(id, number)`, by id; ids above every id given
    /// before) their ids.
    pub(super) fn number_level(&mut self, level: &[(u32, u32)]) {
        debug_assert!(level.windows(2).all(|w| w[0].0 < w[1].0));
        debug_assert!(level
            .first()
            .zip(self.by_id.last())
            .is_none_or(|(first, last)| first.0 > last.0));
        for &(id, n) in level {
            self.id_of[n as usize] = id;
        }
        self.by_id.extend_from_slice(level);
    }

    /// `(id, number)` of every owned state numbered so far, by id.
    pub(super) fn numbered(&self) -> &[(u32, u32)] {
        &self.by_id
    }

    /// The number of the owned state with id `id`, if this worker owns it (a binary search
    /// of the ids given so far).
    pub(super) fn number_of_id(&self, id: u32) -> Option<u32> {
        self.by_id
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|at| self.by_id[at].1)
    }
}

/// What a worker tells every other at the end of a level's expansion.
struct Gathered {
    new_states: Vec<u64>,
    stop: Option<u32>,
    transitions: u64,
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

/// Runs worker `worker.index()` of a distributed exploration of `ts` to its end.
pub(super) fn run_worker<T: TransitionSystem>(
    worker: &mut Worker,
    ts: &T,
    width: usize,
    opts: &DistOptions,
    stop: &StopSignal,
) -> Result<DistExploration, DistError> {
    let start = Instant::now();
    let me = worker.index();
    let peers = worker.peers();
    let mut successors = Rounds::new(worker);
    let mut ranking = Rounds::new(worker);
    let mut counts = Rounds::new(worker);
    let mut ids = Rounds::new(worker);
    let mut paths = Rounds::new(worker);
    let max_states = opts.max_states.unwrap_or(u64::MAX).min(u32::MAX as u64 - 1);

    let mut owned = Owned::new(width);
    let mut words = vec![0u32; width];
    ts.encode_state(&ts.initial_state(), &mut words);
    // This worker's states of the level to expand: (id, number), by id.
    let mut frontier: Vec<(u32, u32)> = Vec::new();
    if owner_of(&words, peers) == me {
        owned.offer_batch(
            &[u32::MAX, u32::MAX]
                .iter()
                .chain(&words)
                .copied()
                .collect::<Vec<_>>(),
        )?;
        let n = owned.candidates.pop().expect("the initial state is new");
        owned.number_level(&[(0, n)]);
        frontier.push((0, n));
    }

    let mut failure: Option<DistError> = None;
    let mut level_start = 0u64;
    let mut level_end = 1u64;
    let mut levels = 0u32;
    let mut transitions = 0u64;
    let mut all_transitions = 0u64;
    let mut deadlocks = 0u64;
    let mut least_deadlock = UNNUMBERED;
    let mut stopped = None;
    let mut record = vec![0u32; 2 + width];
    while level_start < level_end {
        levels += 1;
        // 1. Expand this worker's states of the level; send each step to its target's owner.
        for (i, &(id, n)) in frontier.iter().enumerate() {
            if i % POLL_EVERY == POLL_EVERY - 1 {
                if stop.is_raised() || failure.is_some() {
                    break;
                }
                successors.poll(worker, |batch| {
                    if let Err(e) = owned.offer_batch(&batch) {
                        failure.get_or_insert(e);
                    }
                });
            }
            owned.index.read_key(n, &mut words);
            // Successors computed on encodings: the system keeps no state of its own.
            let mut k = 0u32;
            ts.for_each_encoded_successor(&words, &mut |_label, target| {
                record[0] = id;
                record[1] = k;
                k += 1;
                record[2..].copy_from_slice(target);
                successors.push(owner_of(&record[2..], peers), &record);
            });
            transitions += k as u64;
            if k == 0 {
                deadlocks += 1;
                least_deadlock = least_deadlock.min(id);
            }
        }
        successors.finish_round(worker, |batch| {
            if let Err(e) = owned.offer_batch(&batch) {
                failure.get_or_insert(e);
            }
        });

        // 2. Send each new state's least key to the worker ranking its parent's range of ids.
        let ranked = owned.rank_candidates(&mut ranking, worker, level_start..level_end);

        // 3. All-gather the number of new states each ranker holds (and stops, failures).
        let code = if failure.is_some() {
            FAILED
        } else {
            stop_code(stop.reason())
        };
        let [t_lo, t_hi] = split(transitions);
        let gathered = all_gather(
            &mut counts,
            worker,
            &[me as u32, ranked.len() as u32, code, t_lo, t_hi],
        );
        let level = Gathered {
            new_states: gathered.iter().map(|r| r[1] as u64).collect(),
            stop: gathered.iter().map(|r| r[2]).find(|&c| c != 0),
            transitions: gathered.iter().map(|r| join(r[3], r[4])).sum(),
        };
        all_transitions = level.transitions;
        if let Some(code) = level.stop {
            if code == FAILED {
                return Err(failure.unwrap_or_else(|| {
                    DistError::Worker("a worker of another process failed".into())
                }));
            }
            stopped = stop_reason(code);
            break;
        }

        // 4. Rank: ids in key order across the rankers; send each id to the state's owner.
        let offset = level_end + level.new_states[..me].iter().sum::<u64>();
        let total: u64 = level.new_states.iter().sum();
        let room = max_states.saturating_sub(level_end);
        for (i, &(_, owner, n)) in ranked.iter().enumerate() {
            let id = offset + i as u64;
            if id >= level_end + room {
                break;
            }
            ids.push(owner as usize, &[n, id as u32]);
        }
        let mut next: Vec<(u32, u32)> = Vec::new();
        ids.finish_round(worker, |batch| {
            next.extend(batch.chunks_exact(2).map(|r| (r[1], r[0])));
        });
        next.sort_unstable();
        owned.number_level(&next);
        frontier = next;
        owned.candidates.clear();
        level_start = level_end;
        level_end += total.min(room);
        report_level(opts, me, levels, level_end, all_transitions, start);
        if total > room {
            stopped = Some(StopReason::StateLimit);
            break;
        }
    }

    // The deadlocks of all workers.
    let [d_lo, d_hi] = split(deadlocks);
    let gathered = all_gather(
        &mut counts,
        worker,
        &[me as u32, d_lo, d_hi, least_deadlock],
    );
    let deadlocks: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let first_deadlock = gathered
        .iter()
        .map(|r| r[3])
        .min()
        .filter(|&d| d != UNNUMBERED);

    let deadlock_trace = match first_deadlock {
        Some(d) if opts.deadlock_trace => Some(trace_to(ts, worker, &mut paths, &owned, d)?),
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
            level_end,
            all_transitions,
            deadlocks,
            levels,
            start,
            peers,
            stopped,
        ),
        first_deadlock: first_deadlock.map(CanonicalId),
        deadlock_trace,
        states,
        processes: 1,
        workers: 1,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids given level by level are found again by the path walk's lookup, and only the
    /// owned ones.
    #[test]
    fn owned_states_are_found_by_id() {
        let mut owned = Owned::new(1);
        // Five states met from parent 0, steps 0..5, with words 10..15.
        let batch: Vec<u32> = (0..5u32).flat_map(|k| [0, k, 10 + k]).collect();
        owned.offer_batch(&batch).unwrap();
        let numbers = owned.candidates.clone();
        assert_eq!(numbers.len(), 5);
        owned.number_level(&[(0, numbers[0])]);
        // Ids 3, 7 and 9 for three of them (another worker owns the ids between).
        let mut level = vec![(9, numbers[1]), (3, numbers[2]), (7, numbers[3])];
        level.sort_unstable();
        owned.number_level(&level);
        for (id, n) in [
            (0, numbers[0]),
            (9, numbers[1]),
            (3, numbers[2]),
            (7, numbers[3]),
        ] {
            assert_eq!(owned.number_of_id(id), Some(n), "id {id}");
            assert_eq!(owned.id_of[n as usize], id);
        }
        for id in [1, 2, 4, 8, 10, u32::MAX - 1] {
            assert_eq!(owned.number_of_id(id), None, "id {id}");
        }
    }
}
