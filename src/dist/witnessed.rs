//! A distributed product search that numbers its pairs canonically and rebuilds the path to
//! its least violation across processes ([`super::pairs::PairOptions::witness_path`]): what a
//! check whose compact search met a violation runs next, for its counterexample.
//!
//! A level runs as in the numbered exploration (module `search`): each owner expands its
//! pairs of the level, by id, and sends every successor, with the key of the step that found
//! it (parent id, index of the step), to the successor's owner, which keeps the new ones with
//! their least keys; the new pairs' keys go to the workers that rank their parents' ranges of
//! ids; an all-gather tells each ranker where its ids start, and whether some worker met a
//! violation (and the least one it met: where it shows, and the pair's id); the ids go back
//! to the owners. The ids are the engine's ([`crate::explore::engine`]): new pairs are
//! numbered in the order of their least keys, whatever the processes and workers.
//!
//! The search ends at the end of the first level with a violation, before that level's new
//! pairs are numbered (as the engine ends), picking the least by (where it shows, id). Its
//! path is then rebuilt from the owners' parent records, one round a step
//! ([`super::search::path_to`]): the keys of its pairs and the index of each step, which the
//! caller replays on its systems.

#![forbid(unsafe_code)]

use timely::worker::Worker;

use super::rounds::Rounds;
use super::search::{
    all_gather, join, owner_of, path_to, report_level, split, stop_code, stop_reason, union_gather,
    Owned, FAILED, UNNUMBERED,
};
use super::{DistError, DistOptions};
use crate::explore::keyed::{
    FoundAt, KeyedProduct, PairOptions, PairPath, PairSearch, PairWitness,
};
use crate::explore::{StopReason, StopSignal};

/// Pairs expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;

/// The least violation a worker met in a level, as it travels: where it shows (0 at a pair,
/// 1 at a step; [`NONE_FOUND`] for none), and the pair's id.
const NONE_FOUND: u32 = u32::MAX;

fn found_code(at: FoundAt) -> u32 {
    match at {
        FoundAt::Pair => 0,
        FoundAt::Step => 1,
    }
}

/// Runs worker `worker.index()` of a numbered distributed product search to its end (see the
/// module documentation).
pub(super) fn run_worker<P>(
    worker: &mut Worker,
    product: &P,
    opts: &PairOptions,
    stop: &StopSignal,
) -> Result<PairSearch, DistError>
where
    P: KeyedProduct + ?Sized,
{
    let start = std::time::Instant::now();
    let me = worker.index();
    let peers = worker.peers();
    let mut successors = Rounds::new(worker);
    let mut ranking = Rounds::new(worker);
    let mut counts = Rounds::new(worker);
    let mut ids = Rounds::new(worker);
    let mut paths = Rounds::new(worker);
    let max_pairs = opts.max_pairs.unwrap_or(u64::MAX).min(u32::MAX as u64 - 1);
    let report = DistOptions {
        on_level: opts.on_level.clone(),
        ..DistOptions::default()
    };
    let width = product.key_width();

    let mut owned = Owned::new(width);
    let mut key = vec![0u32; width];
    let mut state = vec![0u32; width];
    product.initial_key(&mut key);
    // 0. Every process must be making the same search.
    let [o_lo, o_hi] = split(opts.fingerprint);
    let mut words = vec![o_lo, o_hi, width as u32, 1];
    words.extend_from_slice(&key);
    let [f_lo, f_hi] = split(crate::hash::hash_words(&words));
    let gathered = all_gather(&mut counts, worker, &[me as u32, f_lo, f_hi]);
    if gathered.iter().any(|r| r[1] != f_lo || r[2] != f_hi) {
        return Err(DistError::Worker(
            "the processes of the run are not at the same search (their runs went apart: \
             a limit or an error in one process and not in another, or different scripts or \
             options)"
                .into(),
        ));
    }
    let mut antichain = product.has_antichain().then(Antichain::default);
    // This worker's pairs of the level to expand: (id, number), by id.
    let mut frontier: Vec<(u32, u32)> = Vec::new();
    product.state_part(&key, &mut state);
    if owner_of(&state, peers) == me {
        let record: Vec<u32> = [u32::MAX, u32::MAX].iter().chain(&key).copied().collect();
        owned.offer_batch(&record)?;
        if let Some(antichain) = &mut antichain {
            antichain.prune(product, &mut owned);
        }
        let n = owned.candidates.pop().expect("the initial pair is new");
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
    let mut dead_ends = 0u64;
    let mut stopped = None;
    let mut least: Option<(FoundAt, u32)> = None;
    let mut witness: Option<(FoundAt, u32)> = None;
    let mut record = vec![0u32; 2 + width];
    let mut held = 1u64;
    let mut most_held = 1u64;
    while level_start < level_end {
        levels += 1;
        // 1. Expand this worker's pairs of the level, by id; send each step to its target's
        // owner. Once a violation is met, the level's other pairs are still expanded (a
        // lesser one may be among them, and their steps are counted, as the engine counts
        // them) but their successors are not sent: the level's new pairs are not numbered.
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
            owned.index.read_key(n, &mut key);
            let mut k = 0u32;
            let sending = least.is_none();
            let found = product.expand_key(&key, &mut |target| {
                if sending {
                    record[0] = id;
                    record[1] = k;
                    record[2..].copy_from_slice(target);
                    product.state_part(target, &mut state);
                    successors.push(owner_of(&state, peers), &record);
                }
                k += 1;
            });
            transitions += k as u64;
            match found {
                // The frontier is in id order: the first met at a pair, or else at a step,
                // is this worker's least.
                Some(at) if least.is_none_or(|(l, _)| at < l) => least = Some((at, id)),
                Some(_) => {}
                None => dead_ends += u64::from(k == 0),
            }
        }
        successors.finish_round(worker, |batch| {
            if let Err(e) = owned.offer_batch(&batch) {
                failure.get_or_insert(e);
            }
        });
        // The new pairs that the pairs kept so far, or others of the level, cover go.
        if let Some(antichain) = &mut antichain {
            antichain.prune(product, &mut owned);
        }

        // 2. Send each new pair's least key to the worker ranking its parent's range of ids.
        let ranked = owned.rank_candidates(&mut ranking, worker, level_start..level_end);

        // 3. All-gather the number of new pairs each ranker holds, stops and failures, steps,
        // and each worker's least violation.
        let code = if failure.is_some() {
            FAILED
        } else {
            stop_code(stop.reason())
        };
        let [t_lo, t_hi] = split(transitions);
        let (at, at_id) = least.map_or((NONE_FOUND, 0), |(at, id)| (found_code(at), id));
        // The change in the pairs this worker keeps (as a two's complement word pair).
        let kept = antichain
            .as_ref()
            .map_or(ranked.len() as u64, |a| a.held.wrapping_sub(a.held_before));
        let [k_lo, k_hi] = split(kept);
        let gathered = all_gather(
            &mut counts,
            worker,
            &[
                me as u32,
                ranked.len() as u32,
                code,
                t_lo,
                t_hi,
                at,
                at_id,
                k_lo,
                k_hi,
            ],
        );
        all_transitions = gathered.iter().map(|r| join(r[3], r[4])).sum();
        if let Some(code) = gathered.iter().map(|r| r[2]).find(|&c| c != 0) {
            if code == FAILED {
                return Err(failure.unwrap_or_else(|| {
                    DistError::Worker("a worker of another process failed".into())
                }));
            }
            stopped = stop_reason(code);
            break;
        }
        witness = gathered
            .iter()
            .filter(|r| r[5] != NONE_FOUND)
            .map(|r| (r[5], r[6]))
            .min()
            .map(|(at, id)| {
                (
                    if at == 0 {
                        FoundAt::Pair
                    } else {
                        FoundAt::Step
                    },
                    id,
                )
            });
        if witness.is_some() {
            break;
        }

        // 4. Rank: ids in key order across the rankers; send each id to the pair's owner.
        let new_pairs: Vec<u64> = gathered.iter().map(|r| r[1] as u64).collect();
        let offset = level_end + new_pairs[..me].iter().sum::<u64>();
        let total: u64 = new_pairs.iter().sum();
        let room = max_pairs.saturating_sub(level_end);
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
        // What the owners keep: every pair numbered, or the antichain's pairs.
        held = gathered
            .iter()
            .fold(held, |h, r| h.wrapping_add(join(r[7], r[8])));
        most_held = most_held.max(held);
        report_level(&report, me, levels, level_end, all_transitions, start);
        if total > room {
            stopped = Some(StopReason::StateLimit);
            break;
        }
    }

    let [d_lo, d_hi] = split(dead_ends);
    let gathered = all_gather(&mut counts, worker, &[me as u32, d_lo, d_hi]);
    let dead_ends: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let marks = union_gather(&mut counts, worker, &product.marks());
    let witness = match witness {
        Some((at, id)) if stopped.is_none() => {
            let PairPath { id, keys, steps } = pair_path(worker, &mut paths, &owned, id)?;
            Some(PairWitness {
                id,
                at,
                keys,
                steps,
            })
        }
        _ => None,
    };
    // Every worker reads the same `witness` and `stopped` (from the level's all-gather).
    let deepest = if witness.is_none() && stopped.is_none() && opts.deepest_path {
        let id = deepest_id(worker, &mut counts, product, &owned)?;
        Some(pair_path(worker, &mut paths, &owned, id)?)
    } else {
        None
    };
    debug_assert!(owned
        .id_of
        .iter()
        .all(|&id| id == UNNUMBERED || id < level_end as u32));
    Ok(PairSearch {
        pairs: level_end,
        transitions: all_transitions,
        levels,
        widest_level: widest,
        violated: witness.is_some(),
        dead_ends,
        stopped,
        bytes: 0,
        workers: peers,
        most_held,
        witness,
        deepest,
        marks,
    })
}

/// The least path to the pair with id `id` ([`path_to`]), as the keys of its pairs and the
/// index of each step.
fn pair_path(
    worker: &mut Worker,
    paths: &mut Rounds,
    owned: &Owned,
    id: u32,
) -> Result<PairPath, DistError> {
    let path = path_to(worker, paths, owned, id)?;
    let steps = path.iter().skip(1).map(|&(_, k)| k).collect();
    Ok(PairPath {
        id,
        keys: path.into_iter().map(|(key, _)| key).collect(),
        steps,
    })
}

/// The id of the pair of the greatest node among all the workers' numbered pairs, the least
/// id among those (an all-gather of each worker's own).
fn deepest_id<P: KeyedProduct + ?Sized>(
    worker: &mut Worker,
    counts: &mut Rounds,
    product: &P,
    owned: &Owned,
) -> Result<u32, DistError> {
    let mut key = vec![0u32; owned.width];
    // This worker's: (node, id); the numbered pairs come by id, so the first of a node is
    // the least.
    let mut best: Option<(u32, u32)> = None;
    for &(id, n) in owned.numbered() {
        owned.index.read_key(n, &mut key);
        let node = product.node_of(&key);
        if best.is_none_or(|(b, _)| node > b) {
            best = Some((node, id));
        }
    }
    let me = worker.index() as u32;
    let (node, id) = best.unwrap_or((0, UNNUMBERED));
    let gathered = all_gather(counts, worker, &[me, best.is_some() as u32, node, id]);
    gathered
        .iter()
        .filter(|r| r[1] != 0)
        .map(|r| (std::cmp::Reverse(r[2]), r[3]))
        .min()
        .map(|(_, id)| id)
        .ok_or_else(|| DistError::Worker("no worker holds a numbered pair".into()))
}

/// The antichain of one owner's pairs, by implementation state: the nodes of the pairs kept
/// (the ⊆-least of all met, [`KeyedProduct::covers`]). A level's new pairs are all offered
/// first (each with its least step); then those that a kept pair, or another new pair of the
/// level, covers go, and the rest are kept, with the kept pairs they cover dropped: what the
/// engine's antichain holds at a level's end, whatever the order the pairs came in.
#[derive(Default)]
struct Antichain {
    nodes: std::collections::HashMap<Box<[u32]>, Vec<u32>, crate::hash::WordBuildHasher>,
    /// Pairs kept now.
    held: u64,
    /// Pairs kept before the last pruning (the change is the level's).
    held_before: u64,
}

impl Antichain {
    /// Drops the new pairs of `owned` that are covered; keeps the others.
    fn prune<P: KeyedProduct + ?Sized>(&mut self, product: &P, owned: &mut Owned) {
        self.held_before = self.held;
        let width = owned.width;
        let mut key = vec![0u32; width];
        // The level's new pairs by implementation state: (node, number).
        let mut by_state: std::collections::HashMap<Box<[u32]>, Vec<(u32, u32)>> =
            Default::default();
        for &n in &owned.candidates {
            owned.index.read_key(n, &mut key);
            let mut state = vec![0u32; width];
            product.state_part(&key, &mut state);
            by_state
                .entry(state.into_boxed_slice())
                .or_default()
                .push((product.node_of(&key), n));
        }
        let mut kept_numbers = Vec::with_capacity(owned.candidates.len());
        // Strictly covers: two nodes covering each other (the same set) count as one, the
        // lesser.
        let strictly = |a: u32, b: u32| product.covers(a, b) && (!product.covers(b, a) || a < b);
        for (state, new) in by_state {
            let nodes = self.nodes.entry(state).or_default();
            let kept: Vec<(u32, u32)> = new
                .iter()
                .copied()
                .filter(|&(c, _)| {
                    !nodes.iter().any(|&h| product.covers(h, c))
                        && !new.iter().any(|&(o, _)| o != c && strictly(o, c))
                })
                .collect();
            let before = nodes.len();
            nodes.retain(|&h| !kept.iter().any(|&(c, _)| product.covers(c, h)));
            self.held -= (before - nodes.len()) as u64;
            self.held += kept.len() as u64;
            nodes.extend(kept.iter().map(|&(c, _)| c));
            kept_numbers.extend(kept.iter().map(|&(_, n)| n));
        }
        owned.candidates = kept_numbers;
    }
}
