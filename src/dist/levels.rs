//! The level loop of the numbered distributed searches: the exploration that numbers its
//! states (module `search`) and the product search that rebuilds the path to its least
//! violation (module `witnessed`) run the same levels, and differ only in what a step records
//! and when a search ends; a [`LevelSearch`] says those, [`LevelDriver::run`] runs the rest.
//!
//! A level (see the documentation of [`super`]): each owner expands its states of the level, by
//! id, and sends every successor, with the key of the step that found it (parent id, index of
//! the step), to the successor's owner, which keeps the new ones with their least keys
//! ([`Owned`]); the new states' keys go to the workers that rank their parents' ranges of ids;
//! an all-gather tells each ranker where its ids start (with the words the search adds: its
//! violations, what it keeps), and the ids go back to the owners.

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::rounds::Rounds;
use super::search::{
    all_gather, join, level_code, level_error, report_level, run_code, split, stop_reason, FAILED,
    NO_PARENT, TOO_NARROW, UNNUMBERED,
};
use super::{DistError, DistOptions};
use crate::explore::index::{IndexHandle, StateIndex};
use crate::explore::{StopReason, StopSignal};

/// States expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;

/// The words of the level's all-gather that the driver reads: the sender, its ranked states,
/// its stop code and its steps (two words); a search's own words follow them.
pub(super) const DRIVER_WORDS: usize = 5;

/// What a numbered distributed search does at each state and at each level's end; the rest of
/// the level is [`LevelDriver::run`]'s. Every worker's search adds as many words to each
/// level's all-gather.
pub(super) trait LevelSearch {
    /// The worker (among `peers`) that owns the state or pair with key `key`.
    fn owner(&mut self, key: &[u32], peers: usize) -> usize;

    /// Expands the state with id `id` and key `key`: calls `send(k, owner, target)` for each
    /// step `k` whose target is to be offered to its owner (every step, by index, or none:
    /// a search that stopped sending), and returns the number of steps.
    fn expand<S: FnMut(u32, usize, &[u32])>(&mut self, id: u32, key: &[u32], send: S) -> u32;

    /// Every step of the level has been offered: the new states are `owned.candidates`
    /// (a search may drop some).
    fn offered(&mut self, _owned: &mut Owned) {}

    /// Appends this worker's words to the level's all-gather (`ranked`: the new states this
    /// worker ranks).
    fn gather_words(&self, _ranked: usize, _words: &mut Vec<u32>) {}

    /// Reads the level's all-gather (each worker's words, by worker; the search's own from
    /// [`DRIVER_WORDS`] on), when no worker stopped or failed: `true` ends the search at this
    /// level, before its new states are numbered.
    fn gathered(&mut self, _gathered: &[Vec<u32>]) -> bool {
        false
    }

    /// What stops this worker's search at the level's end, met while expanding (keys too
    /// narrow, a state that does not encode), if anything.
    fn trouble(&self) -> Option<DistError> {
        None
    }
}

/// How the level loop ended, the same in every worker.
pub(super) struct Levels {
    /// Levels expanded (the last one included).
    pub(super) levels: u32,
    /// States numbered (every id is below).
    pub(super) numbered: u64,
    /// Steps of every worker, counted to the last level expanded.
    pub(super) transitions: u64,
    /// The most states a level numbered (the initial state's level counts 1).
    pub(super) widest: u64,
    /// Why the search stopped before its end, if it did.
    pub(super) stopped: Option<StopReason>,
}

/// One worker's part of a numbered distributed search: its owned states and its channels
/// (`counts` and `paths` are free for the search's own rounds after [`LevelDriver::run`]).
pub(super) struct LevelDriver {
    pub(super) owned: Owned,
    successors: Rounds,
    ranking: Rounds,
    pub(super) counts: Rounds,
    ids: Rounds,
    pub(super) paths: Rounds,
}

impl LevelDriver {
    /// A worker's driver of states (or pairs) keyed by `width` words, its channels made in
    /// the same order in every worker.
    pub(super) fn new(worker: &mut Worker, width: usize) -> LevelDriver {
        LevelDriver {
            owned: Owned::new(width),
            successors: Rounds::new(worker),
            ranking: Rounds::new(worker),
            counts: Rounds::new(worker),
            ids: Rounds::new(worker),
            paths: Rounds::new(worker),
        }
    }

    /// Runs the levels of `search` from the state keyed `initial` (id 0), numbering at most
    /// `max` states, until a level adds nothing, `search` ends it, a limit or `stop` stops it
    /// (every worker at the same level), or a worker fails (an error).
    pub(super) fn run<L: LevelSearch>(
        &mut self,
        worker: &mut Worker,
        search: &mut L,
        initial: &[u32],
        max: u64,
        report: &DistOptions,
        stop: &StopSignal,
    ) -> Result<Levels, DistError> {
        let start = Instant::now();
        let me = worker.index();
        let peers = worker.peers();
        let max = max.min(u32::MAX as u64 - 1);
        let width = self.owned.width;
        let LevelDriver {
            owned,
            successors,
            ranking,
            counts,
            ids,
            ..
        } = self;
        // This worker's states of the level to expand: (id, number), by id.
        let mut frontier: Vec<(u32, u32)> = Vec::new();
        if search.owner(initial, peers) == me {
            let record: Vec<u32> = [u32::MAX, u32::MAX]
                .iter()
                .chain(initial)
                .copied()
                .collect();
            owned.offer_batch(&record)?;
            search.offered(owned);
            let n = owned.candidates.pop().expect("the initial state is new");
            owned.number_level(&[(0, n)]);
            frontier.push((0, n));
        }

        let mut failure: Option<DistError> = None;
        let mut level_start = 0u64;
        let mut level_end = 1u64;
        let mut widest = 1u64;
        let mut levels = 0u32;
        let mut transitions = 0u64;
        let mut all_transitions = 0u64;
        let mut stopped = None;
        let mut key = vec![0u32; width];
        let mut record = vec![0u32; 2 + width];
        let mut words = Vec::with_capacity(DRIVER_WORDS + 8);
        while level_start < level_end {
            levels += 1;
            // 1. Expand this worker's states of the level; send each step to its target's
            // owner.
            for (i, &(id, n)) in frontier.iter().enumerate() {
                if i % POLL_EVERY == POLL_EVERY - 1 {
                    if failure.is_none() {
                        failure = search.trouble();
                    }
                    if stop.is_raised() || failure.is_some() {
                        break;
                    }
                    successors.poll(worker, |batch| {
                        if let Err(e) = owned.offer_batch(&batch) {
                            overrule(&mut failure, e);
                        }
                    });
                }
                owned.index.read_key(n, &mut key);
                let k = search.expand(id, &key, |k, owner, target| {
                    record[0] = id;
                    record[1] = k;
                    record[2..].copy_from_slice(target);
                    successors.push(owner, &record);
                });
                transitions += k as u64;
            }
            successors.finish_round(worker, |batch| {
                if let Err(e) = owned.offer_batch(&batch) {
                    overrule(&mut failure, e);
                }
            });
            search.offered(owned);

            // 2. Send each new state's least key to the worker ranking its parent's range of
            // ids.
            let ranked = owned.rank_candidates(ranking, worker, level_start..level_end);

            // 3. All-gather the number of new states each ranker holds, stops and failures,
            // steps, and the search's own words.
            if failure.is_none() {
                failure = search.trouble();
            }
            let code = level_code(failure.as_ref(), stop);
            let [t_lo, t_hi] = split(transitions);
            words.clear();
            words.extend_from_slice(&[me as u32, ranked.len() as u32, code, t_lo, t_hi]);
            search.gather_words(ranked.len(), &mut words);
            let gathered = all_gather(counts, worker, &words);
            all_transitions = gathered.iter().map(|r| join(r[3], r[4])).sum();
            if let Some(code) = run_code(gathered.iter().map(|r| r[2])) {
                if code == FAILED || code == TOO_NARROW {
                    return Err(level_error(code, failure));
                }
                stopped = stop_reason(code);
                break;
            }
            if search.gathered(&gathered) {
                break;
            }

            // 4. Rank: ids in key order across the rankers; send each id to the state's owner.
            let offset = level_end + gathered[..me].iter().map(|r| r[1] as u64).sum::<u64>();
            let total: u64 = gathered.iter().map(|r| r[1] as u64).sum();
            let room = max.saturating_sub(level_end);
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
            widest = widest.max(total.min(room));
            report_level(report, me, levels, level_end, all_transitions, start);
            if total > room {
                stopped = Some(StopReason::StateLimit);
                break;
            }
        }
        debug_assert!(owned
            .id_of
            .iter()
            .all(|&id| id == UNNUMBERED || (id as u64) < level_end));
        Ok(Levels {
            levels,
            numbered: level_end,
            transitions: all_transitions,
            widest,
            stopped,
        })
    }
}

/// Keeps `e` as the worker's failure, unless it has one already: a failure overrules keys too
/// narrow (which would only start the search again).
fn overrule(failure: &mut Option<DistError>, e: DistError) {
    if failure
        .as_ref()
        .is_none_or(|f| matches!(f, DistError::KeyTooNarrow))
    {
        *failure = Some(e);
    }
}

/// The key of the `k`-th step of the state with id `parent` (as in the threaded engine).
#[inline]
fn step_key(parent: u32, k: u32) -> u64 {
    ((parent as u64) << 32) | k as u64
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
