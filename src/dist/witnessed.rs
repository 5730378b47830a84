//! A distributed product search that numbers its pairs canonically and rebuilds the path to
//! its least violation across processes ([`super::pairs::PairOptions::witness_path`]): what a
//! check whose compact search met a violation runs next, for its counterexample.
//!
//! A level runs as in the numbered exploration (module `search`), by the same driver (module
//! `levels`; this module's [`LevelSearch`] says what a step records and when the search
//! ends): each owner expands its
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

use super::levels::{LevelDriver, LevelSearch, Owned, DRIVER_WORDS};
use super::rounds::Rounds;
use super::search::{all_gather, join, owner_of, path_to, split, union_gather, UNNUMBERED};
use super::{DistError, DistOptions};
use crate::explore::keyed::{
    FoundAt, KeyedProduct, PairOptions, PairPath, PairSearch, PairWitness,
};
use crate::explore::StopSignal;

/// The least violation a worker met in a level, as it travels: where it shows (0 at a pair,
/// 1 at a step; [`NONE_FOUND`] for none), and the pair's id.
const NONE_FOUND: u32 = u32::MAX;

fn found_code(at: FoundAt) -> u32 {
    match at {
        FoundAt::Pair => 0,
        FoundAt::Step => 1,
    }
}

/// The product search's part of a level ([`LevelSearch`]): once this worker meets a
/// violation, the level's other pairs are still expanded (a lesser one may be among them, and
/// their steps are counted, as the engine counts them) but their successors are not sent: the
/// level's new pairs are not numbered.
struct Witnessed<'a, P: ?Sized> {
    product: &'a P,
    peers: usize,
    /// The implementation part of a key (what decides its owner).
    state: Vec<u32>,
    /// The pairs of the antichain, for a product that keeps one.
    antichain: Option<Antichain>,
    /// Pairs expanded with no steps and no violation.
    dead_ends: u64,
    /// This worker's least violation: where it shows, and the pair's id.
    least: Option<(FoundAt, u32)>,
    /// The least violation of all workers, once a level met one.
    witness: Option<(FoundAt, u32)>,
    /// Pairs kept by all workers now, and the most at a level's end.
    held: u64,
    most_held: u64,
}

impl<P: KeyedProduct + ?Sized> LevelSearch for Witnessed<'_, P> {
    fn owner(&mut self, key: &[u32], peers: usize) -> usize {
        self.product.state_part(key, &mut self.state);
        owner_of(&self.state, peers)
    }

    #[inline]
    fn expand<S: FnMut(u32, usize, &[u32])>(&mut self, id: u32, key: &[u32], mut send: S) -> u32 {
        let product = self.product;
        let peers = self.peers;
        let state = &mut self.state;
        let sending = self.least.is_none();
        let mut k = 0u32;
        let found = product.expand_key(key, &mut |target| {
            if sending {
                product.state_part(target, state);
                send(k, owner_of(state, peers), target);
            }
            k += 1;
        });
        match found {
            // The frontier is in id order: the first met at a pair, or else at a step, is
            // this worker's least.
            Some(at) if self.least.is_none_or(|(l, _)| at < l) => self.least = Some((at, id)),
            Some(_) => {}
            None => self.dead_ends += u64::from(k == 0),
        }
        k
    }

    fn trouble(&self) -> Option<DistError> {
        self.product.trouble()?.error()
    }

    fn offered(&mut self, owned: &mut Owned) {
        // The new pairs that the pairs kept so far, or others of the level, cover go.
        if let Some(antichain) = &mut self.antichain {
            antichain.prune(self.product, owned);
        }
    }

    fn gather_words(&self, ranked: usize, words: &mut Vec<u32>) {
        let (at, at_id) = self
            .least
            .map_or((NONE_FOUND, 0), |(at, id)| (found_code(at), id));
        // The change in the pairs this worker keeps (as a two's complement word pair).
        let kept = self
            .antichain
            .as_ref()
            .map_or(ranked as u64, |a| a.held.wrapping_sub(a.held_before));
        words.extend_from_slice(&[at, at_id]);
        words.extend_from_slice(&split(kept));
    }

    fn gathered(&mut self, gathered: &[Vec<u32>]) -> bool {
        const AT: usize = DRIVER_WORDS;
        self.witness = gathered
            .iter()
            .filter(|r| r[AT] != NONE_FOUND)
            .map(|r| (r[AT], r[AT + 1]))
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
        if self.witness.is_some() {
            return true;
        }
        // What the owners keep once this level is numbered: every pair numbered, or the
        // antichain's pairs.
        self.held = gathered
            .iter()
            .fold(self.held, |h, r| h.wrapping_add(join(r[AT + 2], r[AT + 3])));
        self.most_held = self.most_held.max(self.held);
        false
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
    let me = worker.index();
    let peers = worker.peers();
    let width = product.key_width();
    let mut driver = LevelDriver::new(worker, width);
    let report = DistOptions {
        on_level: opts.on_level.clone(),
        ..DistOptions::default()
    };
    let mut key = vec![0u32; width];
    product.initial_key(&mut key);
    // 0. Every process must be making the same search.
    let [o_lo, o_hi] = split(opts.fingerprint);
    let mut words = vec![o_lo, o_hi, width as u32, 1];
    words.extend_from_slice(&key);
    let [f_lo, f_hi] = split(crate::hash::hash_words(&words));
    let gathered = all_gather(&mut driver.counts, worker, &[me as u32, f_lo, f_hi]);
    if gathered.iter().any(|r| r[1] != f_lo || r[2] != f_hi) {
        return Err(DistError::Worker(
            "the processes of the run are not at the same search (their runs went apart: \
             a limit or an error in one process and not in another, or different scripts or \
             options)"
                .into(),
        ));
    }
    let mut search = Witnessed {
        product,
        peers,
        state: vec![0u32; width],
        antichain: product.has_antichain().then(Antichain::default),
        dead_ends: 0,
        least: None,
        witness: None,
        held: 1,
        most_held: 1,
    };
    let max_pairs = opts.max_pairs.unwrap_or(u64::MAX);
    let levels = driver.run(worker, &mut search, &key, max_pairs, &report, stop)?;

    let [d_lo, d_hi] = split(search.dead_ends);
    let gathered = all_gather(&mut driver.counts, worker, &[me as u32, d_lo, d_hi]);
    let dead_ends: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let marks = union_gather(&mut driver.counts, worker, &product.marks());
    let owned = &driver.owned;
    let witness = match search.witness {
        Some((at, id)) if levels.stopped.is_none() => {
            let PairPath { id, keys, steps } = pair_path(worker, &mut driver.paths, owned, id)?;
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
    let deepest = if witness.is_none() && levels.stopped.is_none() && opts.deepest_path {
        let id = deepest_id(worker, &mut driver.counts, product, owned)?;
        Some(pair_path(worker, &mut driver.paths, owned, id)?)
    } else {
        None
    };
    Ok(PairSearch {
        pairs: levels.numbered,
        transitions: levels.transitions,
        levels: levels.levels,
        widest_level: levels.widest,
        violated: witness.is_some(),
        dead_ends,
        stopped: levels.stopped,
        bytes: 0,
        workers: peers,
        most_held: search.most_held,
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
