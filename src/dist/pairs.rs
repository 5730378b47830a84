//! A distributed product search: the pairs `(normal-form node, implementation state)` of a
//! refinement check spread over the workers of a cluster, each pair kept by one owner.
//!
//! A pair travels and is kept as its key ([`KeyedProduct`]): fixed-width words that mean the
//! same in every process (one `u64` of packed encoding with the node above it, or the node
//! followed by a wider encoding); an owner keeps its pairs in a [`KeySet`], with no ids, no
//! parents and only the level being expanded. The node numbers must mean the same in every
//! process: the caller builds the specification's normal form whole, in a fixed order, before
//! the search. A level is two rounds, as in the count-only exploration: expand and send each
//! successor pair to its owner; then an all-gather of the counts and of whether some worker
//! met a violation. The search ends at the end of the first level with one (nothing else:
//! the caller then searches again for the counterexample, with [`PairOptions::witness_path`]),
//! or when a level adds nothing.
//!
//! [`ClusterPairSearch`] offers the search to `refine` (which knows nothing of `dist`)
//! through its [`SharedPairSearch`] trait.

#![forbid(unsafe_code)]

use std::time::Instant;

use timely::worker::Worker;

use super::checkpoint::{remove_others, write_part, Head, Part, Persistence};
use super::keys::KeyTrouble;
use super::rounds::Rounds;
use super::search::{
    all_gather, level_code, level_error, owner_of, report_level, run_code, stop_reason,
    union_gather, FAILED, TOO_NARROW,
};
use super::{execute_scoped, Connected, Connector, DistError, DistOptions};
pub use crate::explore::compact::{pair_key, AlonePairs};
use crate::explore::keyed::{join, split, KeyForm, KeySet, KeyedProduct, SharedSearchError};
pub use crate::explore::keyed::{PairOptions, PairSearch};
use crate::explore::StopSignal;
use crate::refine::SharedPairSearch;

/// States expanded between two looks at the channels (and at the stop signal).
const POLL_EVERY: usize = 256;

/// The distributed product searches of a run, each connecting anew through its connector
/// (every process of the run makes the same searches in the same order): what the CLI hands
/// to `refine` and `verify` as their [`SharedPairSearch`].
pub struct ClusterPairSearch {
    connect: Connector,
    first_key_words: Option<usize>,
    /// What the keys of the searches made since the last [`ClusterPairSearch::take_keys`]
    /// came to (a run makes its searches one after another).
    keys: std::sync::Mutex<SearchKeys>,
}

/// What the keys of the searches of products keyed by their implementation's structural
/// encoding came to: the words of the last one's, and how many times a search started again
/// with keys twice as wide (for products of fixed-width encodings: `None` and 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchKeys {
    /// The words of the implementation state's keys of the last search that ended, if its
    /// product was keyed by its structural encoding.
    pub key_words: Option<usize>,
    /// Searches that met keys too narrow (each then made again with keys twice as wide).
    pub key_restarts: u32,
}

impl ClusterPairSearch {
    /// The searches made with the connections `connect` makes.
    pub fn new(connect: Connector) -> ClusterPairSearch {
        ClusterPairSearch {
            connect,
            first_key_words: None,
            keys: std::sync::Mutex::default(),
        }
    }

    /// What the keys of the searches made since the last call came to (and forgets it): the
    /// CLI reports it for each assertion.
    pub fn take_keys(&self) -> SearchKeys {
        std::mem::take(&mut *self.keys.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The same, the products of an implementation keyed by its structural encoding starting
    /// with keys of `words` words (tests set it small to make searches start again).
    pub fn with_first_key_words(self, words: Option<usize>) -> ClusterPairSearch {
        ClusterPairSearch {
            first_key_words: words,
            ..self
        }
    }
}

impl SharedPairSearch for ClusterPairSearch {
    fn search(
        &self,
        product: &dyn KeyedProduct,
        opts: &PairOptions,
        stop: &StopSignal,
    ) -> Result<PairSearch, SharedSearchError> {
        let failed = |e: DistError| match e {
            DistError::KeyTooNarrow => SharedSearchError::KeysTooNarrow,
            e => SharedSearchError::Failed(e.to_string()),
        };
        let connected = (self.connect)().map_err(failed)?;
        let searched = search_pairs(product, connected, opts, stop).map_err(failed);
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        match &searched {
            Err(SharedSearchError::KeysTooNarrow) => keys.key_restarts += 1,
            // A product keyed by a structural encoding: the node's word, then the state's.
            Ok(_) if product.trouble().is_some() => {
                keys.key_words = Some(product.key_width().saturating_sub(1))
            }
            _ => {}
        }
        searched
    }

    fn first_key_words(&self) -> Option<usize> {
        self.first_key_words
    }
}

/// Searches the product `product` (its pairs keyed alike in every process) with the workers
/// of `connected`, every process calling this with the same product and options: keeping
/// the pairs compactly, or, with [`PairOptions::witness_path`], numbering them and rebuilding
/// the path to the least violation (module `witnessed`).
pub fn search_pairs<P>(
    product: &P,
    connected: Connected,
    opts: &PairOptions,
    stop: &StopSignal,
) -> Result<PairSearch, DistError>
where
    P: KeyedProduct + ?Sized,
{
    let outcomes = execute_scoped(connected, |worker| {
        if opts.witness_path {
            super::witnessed::run_worker(worker, product, opts, stop)
        } else {
            run_worker(worker, product, opts, None, None, stop, None)
        }
    })?;
    outcomes
        .into_iter()
        .next()
        .ok_or_else(|| DistError::Worker("no worker ran in this process".into()))?
}

/// Runs worker `worker.index()` of the search of [`search_pairs`] to its end; with `persist`,
/// it writes checkpoints at level boundaries and resumes from one (module `checkpoint`): from
/// `resumed`, the part the caller agreed on and read (module `resume`), or else from the part
/// of its keys' width that every worker agrees on.
/// `trouble`: what the keys of a system keyed by its structural encoding meet (keys too
/// narrow end the search with [`DistError::KeyTooNarrow`] in every worker, at one level).
pub(super) fn run_worker<P>(
    worker: &mut Worker,
    product: &P,
    opts: &PairOptions,
    persist: Option<&Persistence>,
    resumed: Option<Part>,
    stop: &StopSignal,
    trouble: Option<&KeyTrouble>,
) -> Result<PairSearch, DistError>
where
    P: KeyedProduct + ?Sized,
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
    let width = product.key_width();

    // Keys padded with zeros (a structural encoding's) are kept and sent trimmed: their
    // width is what the longest encoding met needs, most encodings far shorter.
    let form = if product.padded_keys() || trouble.is_some() {
        KeyForm::trimmed(width)
    } else {
        KeyForm::whole(width)
    };
    let owned = KeySet::of_form(form);
    let mut initial = vec![0u32; width];
    product.initial_key(&mut initial);
    let mut this = Head {
        fingerprint: persist.map_or(0, |p| p.fingerprint),
        workers: peers as u64,
        worker: me as u64,
        width: width as u64,
        states: 1,
        widest: 1,
        key_restarts: persist.map_or(0, |p| p.key_restarts as u64),
        ..Head::default()
    };
    // The records of the level being expanded and of the next one, one after another (the
    // keys, or the trimmed keys: `form`).
    let mut frontier: Vec<u32> = Vec::new();
    let resumed = match (
        resumed,
        persist.and_then(|p| Some((p, p.resume.as_deref()?))),
    ) {
        (Some(part), _) => Some(part),
        (None, Some((persist, dir))) => Some(super::resume::agree_and_read(
            worker,
            &mut counts,
            dir,
            persist,
            &this,
            Some(width as u64),
        )?),
        (None, None) => None,
    };
    match resumed {
        Some(part) => {
            if part.head.width != width as u64 {
                return Err(DistError::Checkpoint(format!(
                    "the checkpoint's keys take {} words, the search's {width}",
                    part.head.width
                )));
            }
            this = part.head;
            for key in part.owned.chunks_exact(width) {
                owned.insert(key);
            }
            for key in part.frontier.chunks_exact(width) {
                form.push(key, &mut frontier);
            }
        }
        None => {
            if owner_of(&initial, peers) == me {
                owned.insert(&initial);
                form.push(&initial, &mut frontier);
            }
        }
    }
    // 0. Every process must be making the same search (and be resuming the same level).
    let [o_lo, o_hi] = split(opts.fingerprint);
    let [s_lo, s_hi] = split(this.states);
    let mut words = vec![o_lo, o_hi, width as u32, this.levels as u32, s_lo, s_hi];
    words.extend_from_slice(&initial);
    let fingerprint = crate::hash::hash_words(&words);
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
    let mut next: Vec<u32> = Vec::new();
    // A received batch is offered in order; the slots of the keys `AHEAD` places on are
    // prefetched meanwhile, so that their cache misses overlap.
    const AHEAD: usize = 8;
    let receive = |batch: Vec<u32>, next: &mut Vec<u32>| {
        if form.is_trimmed() {
            for record in form.records(&batch) {
                if owned.insert_record(&form, record) {
                    next.extend_from_slice(record);
                }
            }
            return;
        }
        for (i, key) in batch.chunks_exact(width).enumerate() {
            if let Some(later) = batch.get((i + AHEAD) * width..(i + AHEAD + 1) * width) {
                owned.prefetch(later);
            }
            if owned.insert(key) {
                next.extend_from_slice(key);
            }
        }
    };

    let mut level_end = this.states;
    let mut widest = this.widest;
    let mut levels = this.levels as u32;
    let mut transitions = this.transitions;
    let mut all_transitions;
    let mut violated = false;
    let mut dead_ends = this.dead_ends;
    let mut stopped = None;
    let mut last_written = Instant::now();
    // The key being expanded, and a successor's record (keys sent trimmed).
    let mut key = vec![0u32; width];
    let mut record: Vec<u32> = Vec::new();
    loop {
        levels += 1;
        // 1. Expand this worker's pairs of the level; send each successor to its owner. Once
        // a violation is found, the level's other pairs are still expanded (their steps are
        // counted, as the threaded search counts them) but their successors are not sent.
        for (i, at) in form.records(&frontier).enumerate() {
            if i % POLL_EVERY == POLL_EVERY - 1 {
                if stop.is_raised() {
                    break;
                }
                successors.poll(worker, |batch| receive(batch, &mut next));
            }
            // A whole key is expanded where it lies; a trimmed one is first written out.
            let whole: &[u32] = if form.is_trimmed() {
                form.expand(at, &mut key);
                &key
            } else {
                at
            };
            let mut steps = 0u64;
            let found = product.expand_key(whole, &mut |target| {
                steps += 1;
                if !violated {
                    // The owner by the whole key, as every process (and a checkpoint) has it.
                    let owner = owner_of(target, peers);
                    if form.is_trimmed() {
                        record.clear();
                        form.push(target, &mut record);
                        successors.push(owner, &record);
                    } else {
                        successors.push(owner, target);
                    }
                }
            });
            transitions += steps;
            dead_ends += u64::from(steps == 0 && found.is_none());
            violated |= found.is_some();
        }
        successors.finish_round(worker, |batch| receive(batch, &mut next));

        // 2. All-gather the number of new pairs each worker holds, its steps, its stop and
        // whether it met a violation.
        let failure = trouble.or(product.trouble()).and_then(KeyTrouble::error);
        let code = level_code(failure.as_ref(), stop);
        let [t_lo, t_hi] = split(transitions);
        let [n_lo, n_hi] = split(form.records(&next).count() as u64);
        let due =
            persist.is_some_and(|p| p.checkpoint.is_some() && last_written.elapsed() >= p.interval);
        let gathered = all_gather(
            &mut counts,
            worker,
            &[
                me as u32,
                n_lo,
                n_hi,
                code,
                t_lo,
                t_hi,
                violated as u32,
                due as u32,
            ],
        );
        let new_pairs: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
        all_transitions = gathered.iter().map(|r| join(r[4], r[5])).sum();
        if let Some(code) = run_code(gathered.iter().map(|r| r[3])) {
            if code == FAILED || code == TOO_NARROW {
                return Err(level_error(code, failure));
            }
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
            stopped = Some(crate::explore::StopReason::StateLimit);
            break;
        }
        if new_pairs == 0 {
            break;
        }
        frontier = std::mem::take(&mut next);
        // 3. At a level boundary some worker asked for: a checkpoint (every worker writes its
        // part, then all agree that every part is written).
        if let Some(p) = persist.filter(|_| gathered.iter().any(|r| r[7] != 0)) {
            let head = Head {
                levels: levels as u64,
                states: level_end,
                widest,
                all_transitions,
                transitions,
                dead_ends,
                ..this
            };
            let whole = whole_keys(&form, &frontier);
            checkpoint(worker, &mut counts, p, &head, &whole, &owned)?;
            last_written = Instant::now();
        }
    }

    let [b_lo, b_hi] = split(owned.bytes());
    let [d_lo, d_hi] = split(dead_ends);
    let gathered = all_gather(&mut counts, worker, &[me as u32, b_lo, b_hi, d_lo, d_hi]);
    let bytes: u64 = gathered.iter().map(|r| join(r[1], r[2])).sum();
    let dead_ends: u64 = gathered.iter().map(|r| join(r[3], r[4])).sum();
    let marks = union_gather(&mut counts, worker, &product.marks());
    Ok(PairSearch {
        pairs: level_end,
        transitions: all_transitions,
        levels,
        widest_level: widest,
        violated,
        dead_ends,
        stopped,
        bytes,
        workers: peers,
        most_held: level_end,
        witness: None,
        deepest: None,
        marks,
    })
}

/// The keys of the records `records` (of the form `form`), whole, one after another.
fn whole_keys<'a>(form: &KeyForm, records: &'a [u32]) -> std::borrow::Cow<'a, [u32]> {
    if !form.is_trimmed() {
        return records.into();
    }
    let width = form.width();
    let mut whole = Vec::new();
    for record in form.records(records) {
        let at = whole.len();
        whole.resize(at + width, 0);
        form.expand(record, &mut whole[at..]);
    }
    whole.into()
}

/// Writes this worker's part of the checkpoint of `head.levels` into the checkpoint folder
/// of `persist`, then agrees with every worker that all parts are written (and only then
/// removes this worker's parts of earlier levels).
fn checkpoint(
    worker: &mut Worker,
    counts: &mut Rounds,
    persist: &Persistence,
    head: &Head,
    frontier: &[u32],
    owned: &KeySet,
) -> Result<(), DistError> {
    let Some(dir) = &persist.checkpoint else {
        return Ok(());
    };
    let written = write_part(dir, persist.process, head, frontier, owned);
    let me = worker.index() as u32;
    let gathered = all_gather(counts, worker, &[me, written.is_ok() as u32]);
    written.map_err(DistError::Checkpoint)?;
    if gathered.iter().any(|r| r[1] == 0) {
        return Err(DistError::Checkpoint(
            "another process could not write its part of the checkpoint (see its error)".into(),
        ));
    }
    // Every other part of this worker goes: earlier levels, and the parts of a search with
    // narrower keys that started again (whatever their levels).
    remove_others(dir, persist.process, head.worker, (head.width, head.levels));
    Ok(())
}
