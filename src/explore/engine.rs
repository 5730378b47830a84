//! The level-synchronous parallel breadth-first engine, with canonical ids.
//!
//! An [`Engine`] owns one pool of worker threads for a whole run. It drives any [`Driven`]
//! system (a process being explored, the product of a normal form and an implementation, a
//! process under a property test): the workers share each BFS level, expand its states in
//! chunks, and offer every successor to a [`Visited`] policy (an exact index, or an antichain
//! that prunes covered states), which tells new states from known ones.
//!
//! # Canonical ids
//!
//! A successor found by the `k`-th step of the state with id `p` has the *key* `(p, k)`. While
//! a level runs, each new state keeps the least key of the steps that found it (a candidate
//! of the level, named by a provisional id, see [`LevelSlots`]). When the level ends, its
//! surviving candidates are sorted by key and given the next ids in that order, and each keeps
//! the step of its least key as its parent. Since a system emits a state's successors in an
//! order that depends only on the state ([`crate::ts::TransitionSystem::for_each_successor`]), ids,
//! parents and everything derived from them (counterexamples, written LTSs) are the same at
//! every thread count, with no renumbering pass.
//!
//! # Witnesses
//!
//! Expanding a state may find a violation at the state itself ([`Found::AtState`]) or at one
//! of its steps ([`Found::AtStep`], one step deeper). The search ends at the end of the first
//! level in which one is found, and picks the least by (depth, id): a shortest one, the same at
//! every thread count.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::ids::{CanonicalId, ProvisionalId};
use super::limits::{StopReason, StopSignal};
pub use super::visited::{HashedVisited, LevelSlots, LevelWriter, NumberedVisited, Offer, Visited};
use super::{ExploreError, ExploreStats, LevelObserver, LevelReport, WORKER_STACK_BYTES};
use crate::threads::Threads;
use crate::ts::Label;

/// States expanded by a worker between two looks at the stop signal.
const CHUNK: usize = 64;
/// Levels of at most this many states are expanded by one worker.
const SMALL_LEVEL: usize = 2 * CHUNK;
/// Chunks a worker takes at least, once a level is split: a level of a few thousand states
/// then wakes a few workers, not all of them (on many cores, waking every worker for a small
/// level costs more than the level's work). A level with fewer than this many chunks per
/// worker is shared out evenly instead (on two workers, a level of 400 states is two jobs,
/// not one).
const JOB_CHUNKS: usize = 4;

/// A system the engine drives: an initial state and an expansion that emits successors and
/// may find a violation.
pub trait Driven: Sync {
    /// A state of the search.
    type State: Clone + Send + Sync;
    /// What a violation found by [`Driven::expand`] carries.
    type Witness: Send;

    /// The initial state.
    fn initial_state(&self) -> Self::State;

    /// Emits the successors of `state` (in an order that depends only on `state`), or finds a
    /// violation at it or at one of its steps.
    fn expand(
        &self,
        state: &Self::State,
        emit: &mut dyn FnMut(Label, Self::State),
    ) -> Option<Found<Self::Witness>>;
}

/// A violation found by expanding a state.
#[derive(Debug)]
pub enum Found<W> {
    /// At the state itself (a deadlock, a refusal, a divergence).
    AtState(W),
    /// At a step out of the state (an event the specification cannot do): one step deeper.
    AtStep(W),
}

/// The key of the `k`-th step of the state `parent`.
#[inline]
fn step_key(parent: CanonicalId, k: u32) -> u64 {
    ((parent.0 as u64) << 32) | k as u64
}

/// The parent id in a key.
#[inline]
fn parent_of(key: u64) -> CanonicalId {
    CanonicalId((key >> 32) as u32)
}

/// Options of one run of the engine.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Keep every transition `(source id, label, target id)` (targets that are kept states).
    pub record_transitions: bool,
    /// Keep at most this many states: the run stops at the end of the level that reaches it
    /// (the level's first states in canonical order are kept).
    pub max_states: Option<u64>,
    /// Told after each level.
    pub on_level: Option<LevelObserver>,
    /// Keep only the states of the level being expanded and no parents: for runs that
    /// report counts only (the memory per state is then the visited policy's alone).
    /// [`Run::states`] then holds the last level's states, [`Run::parents`] nothing.
    pub frontier_only: bool,
    /// Expand at most this many levels: the run stops (with [`StopReason::DepthLimit`]) at
    /// the end of that level, every level up to it complete.
    pub max_levels: Option<u32>,
}

/// Where a frontier-only run ([`RunOptions::frontier_only`]) starts again: what a
/// [`Boundary`] showed, with the visited policy already holding every state met.
pub struct Resume<S> {
    /// The states of the next level to expand.
    pub frontier: Vec<S>,
    /// Levels expanded before.
    pub levels: u32,
    /// States met before, the frontier's included.
    pub states: u64,
    /// Transitions seen before.
    pub transitions: u64,
    /// Deadlocks found before (ids as they were given).
    pub deadlocks: Vec<CanonicalId>,
}

/// The search between two levels, every level before complete: what a checkpoint keeps.
pub struct Boundary<'a, S> {
    /// Levels expanded.
    pub levels: u32,
    /// States met, the frontier's included.
    pub states: u64,
    /// Transitions seen.
    pub transitions: u64,
    /// Deadlocks found.
    pub deadlocks: &'a [CanonicalId],
    /// The states of the next level to expand.
    pub frontier: &'a [S],
}

/// A violation chosen at the end of a search.
#[derive(Debug)]
pub struct Witnessed<W> {
    /// The id of the state where it was found (for a step, the step's source).
    pub id: CanonicalId,
    /// Whether it is at a step out of that state (one step deeper).
    pub at_step: bool,
    /// The system's witness.
    pub witness: W,
}

/// The result of a run: the states by canonical id, one parent per state (the least step
/// to it), the deadlocks, the transitions on request, the violation found, statistics.
pub struct Run<S, W> {
    /// State of each id; id 0 is the initial state.
    pub states: Vec<S>,
    /// For each id but 0: the id of its parent (one level up) and the label of the step.
    pub parents: Vec<(CanonicalId, Label)>,
    /// The BFS level (depth) of each id is implicit: ids are in level order; this gives the
    /// first id of each level.
    pub level_starts: Vec<CanonicalId>,
    /// Ids of states without successors (and without a violation), increasing.
    pub deadlocks: Vec<CanonicalId>,
    /// Recorded transitions `(source, label, target)`, sorted, when asked for.
    pub transitions: Vec<(CanonicalId, Label, CanonicalId)>,
    /// The least violation of the first level that had one.
    pub witness: Option<Witnessed<W>>,
    /// Statistics (states are the ids given).
    pub stats: ExploreStats,
    /// The most states the visited policy held at the end of a level (fewer than the states
    /// when an antichain removes superseded ones).
    pub max_held: u64,
}

impl<S, W> Run<S, W> {
    /// The labels of the least path from the initial state to `id`.
    pub fn trace_to(&self, id: CanonicalId) -> Vec<Label> {
        self.path_to(id).into_iter().map(|(l, _)| l).collect()
    }

    /// The steps `(label, id reached)` of the least path from the initial state to `id`.
    pub fn path_to(&self, id: CanonicalId) -> Vec<(Label, CanonicalId)> {
        let mut path = Vec::new();
        let mut at = id;
        while at != CanonicalId::INITIAL {
            let (parent, label) = self.parents[at.index()];
            path.push((label, at));
            at = parent;
        }
        path.reverse();
        path
    }

    /// The state of `id`.
    pub fn state(&self, id: CanonicalId) -> &S {
        &self.states[id.index()]
    }

    /// The depth (BFS level) of `id`.
    pub fn depth(&self, id: CanonicalId) -> u32 {
        (self.level_starts.partition_point(|&start| start <= id) - 1) as u32
    }
}

/// What one worker found in its share of a level.
struct LevelPart<'a, S, W> {
    writer: LevelWriter<'a>,
    /// New candidates: (provisional id, state, key and label of the step that found it).
    candidates: Vec<(ProvisionalId, S, u64, Label)>,
    /// Steps that lowered the key of a candidate: (provisional id, key, label).
    lowered: Vec<(ProvisionalId, u64, Label)>,
    /// Recorded transitions with provisional targets.
    transitions: Vec<(CanonicalId, Label, ProvisionalId)>,
    transition_count: u64,
    deadlocks: Vec<CanonicalId>,
    witnesses: Vec<(bool, CanonicalId, W)>,
    /// New offers.
    created: u64,
    /// The successors of the state being expanded.
    successors: Vec<(Label, S)>,
    /// The successors of the next state, made one state ahead.
    ahead: Vec<(Label, S)>,
    /// New states, when the run keeps neither ids nor parents (`RunOptions::frontier_only`).
    fresh: Vec<S>,
}

impl<'a, S, W> LevelPart<'a, S, W> {
    fn new(slots: &'a LevelSlots) -> Self {
        LevelPart {
            writer: LevelWriter::new(slots),
            candidates: Vec::new(),
            lowered: Vec::new(),
            transitions: Vec::new(),
            transition_count: 0,
            deadlocks: Vec::new(),
            witnesses: Vec::new(),
            created: 0,
            successors: Vec::new(),
            ahead: Vec::new(),
            fresh: Vec::new(),
        }
    }
}

/// The engine: a pool of worker threads, kept for a whole run of searches.
pub struct Engine {
    pool: rayon::ThreadPool,
    threads: Threads,
}

impl Engine {
    /// An engine with `threads` workers.
    pub fn new(threads: Threads) -> Result<Engine, ExploreError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.get())
            // Successor functions may recurse deeply (nested process terms): reserve room
            // (virtual memory only; pages are touched as used).
            .stack_size(WORKER_STACK_BYTES)
            // ...and let the evaluator use it (its default budget suits 2 MiB stacks).
            .start_handler(|_| crate::threads::enter_worker_thread())
            .build()
            .map_err(|e| ExploreError::Threads {
                threads: threads.get(),
                reason: e.to_string(),
            })?;
        Ok(Engine { pool, threads })
    }

    /// The number of workers.
    pub fn threads(&self) -> Threads {
        self.threads
    }

    /// Runs `f` on the engine's workers (for work that is not a search, e.g. building a
    /// normal form with rayon).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Searches `system` breadth first until it is finished, a violation is found (the run
    /// ends with that level), a limit of `opts` is reached or `stop` is raised (looked at
    /// between chunks of states). A stopped run keeps the levels it finished.
    pub fn run<D: Driven, V: Visited<D::State>>(
        &self,
        system: &D,
        visited: &V,
        opts: &RunOptions,
        stop: &StopSignal,
    ) -> Run<D::State, D::Witness> {
        self.resume(system, visited, opts, stop, None, &mut |_| {})
    }

    /// As [`Engine::run`], from `resume` if given (a frontier-only run only), telling
    /// `at_boundary` the search after each complete level.
    pub fn resume<D: Driven, V: Visited<D::State>>(
        &self,
        system: &D,
        visited: &V,
        opts: &RunOptions,
        stop: &StopSignal,
        resume: Option<Resume<D::State>>,
        at_boundary: &mut (dyn FnMut(&Boundary<'_, D::State>) + Send),
    ) -> Run<D::State, D::Witness> {
        assert!(
            resume.is_none() || opts.frontier_only,
            "only a frontier-only run resumes"
        );
        self.pool.install(|| {
            run_in_pool(
                system,
                visited,
                opts,
                stop,
                self.threads.get(),
                resume,
                at_boundary,
            )
        })
    }
}

fn run_in_pool<D: Driven, V: Visited<D::State>>(
    system: &D,
    visited: &V,
    opts: &RunOptions,
    stop: &StopSignal,
    threads: usize,
    resume: Option<Resume<D::State>>,
    at_boundary: &mut (dyn FnMut(&Boundary<'_, D::State>) + Send),
) -> Run<D::State, D::Witness> {
    let start = Instant::now();
    let max_states = opts.max_states.unwrap_or(u64::MAX).min(u32::MAX as u64 - 1) as usize;
    let mut slots = LevelSlots::new(0);
    // The id of each provisional id (recording transitions only; u32::MAX: none).
    let mut id_of_prov: Vec<u32> = Vec::new();
    let mut states;
    // The id of `states[0]` (not 0 when expanded levels are dropped, `frontier_only`).
    let mut offset = 0usize;
    let mut parents = Vec::new();
    let mut level_starts = vec![CanonicalId::INITIAL];
    let mut deadlocks = Vec::new();
    let mut transition_count = 0u64;
    let mut levels = 0u32;
    let mut level_start = 0usize;
    let mut held = 1u64;
    match resume {
        None => {
            let initial = system.initial_state();
            let Offer::New(first) = visited.offer(&initial, 0, &mut LevelWriter::new(&slots))
            else {
                unreachable!("the first state offered is new");
            };
            if opts.record_transitions {
                set_id(&mut id_of_prov, first, CanonicalId::INITIAL);
            }
            visited.end_level(std::slice::from_ref(&initial));
            states = vec![initial];
            if !opts.frontier_only {
                parents.push((CanonicalId::INITIAL, 0 as Label));
            }
        }
        Some(r) => {
            offset = (r.states as usize).saturating_sub(r.frontier.len());
            level_start = offset;
            level_starts = vec![CanonicalId(offset as u32)];
            states = r.frontier;
            levels = r.levels;
            transition_count = r.transitions;
            deadlocks = r.deadlocks;
            held = r.states;
        }
    }
    let mut transitions = Vec::new();
    let mut witness = None;
    let mut max_held = held;
    while level_start < offset + states.len() {
        levels += 1;
        let base = slots.end();
        slots.reset(base);
        let slots = &slots;
        let full = AtomicBool::new(false);
        // Once a violation is found, the level's other states are still expanded (a lesser
        // one may be among them) but their successors are not kept.
        let found = AtomicBool::new(false);
        let expand_chunk = |part: &mut LevelPart<'_, D::State, D::Witness>,
                            (chunk, members): (usize, &[D::State])| {
            if stop.is_raised() {
                return;
            }
            let first_id = (level_start + chunk * CHUNK) as u32;
            // One state ahead: the successors of state `i + 1` are made (and their slots in
            // the visited set prefetched) before those of state `i` are offered, so that the
            // prefetches have a whole expansion's time to arrive. What is offered, and in
            // which order, is the same.
            let expand = |state: &D::State, into: &mut Vec<(Label, D::State)>| {
                into.clear();
                system.expand(state, &mut |label, target| {
                    visited.prefetch(&target);
                    into.push((label, target));
                })
            };
            let mut successors = std::mem::take(&mut part.successors);
            let mut ahead = std::mem::take(&mut part.ahead);
            let mut next_outcome = members.first().and_then(|s| expand(s, &mut ahead));
            for (i, _) in members.iter().enumerate() {
                // A state can take long to expand (a network of 10,000 components has 10,000
                // successors of 40 KB each): the signal is looked at before each one, not only
                // before each chunk. The level of a stopped search is dropped whole, so a chunk
                // left half done changes nothing.
                if stop.is_raised() {
                    break;
                }
                let id = CanonicalId(first_id + i as u32);
                let mut k = 0u32;
                std::mem::swap(&mut successors, &mut ahead);
                let outcome = next_outcome.take();
                if let Some(next) = members.get(i + 1) {
                    next_outcome = expand(next, &mut ahead);
                }
                for (label, target) in successors.drain(..) {
                    let key = step_key(id, k);
                    k += 1;
                    part.transition_count += 1;
                    // Ordering: Relaxed; a hint that saves work, read again at the end.
                    if found.load(Ordering::Relaxed) {
                        continue;
                    }
                    let target_prov = match visited.offer(&target, key, &mut part.writer) {
                        Offer::New(p) if opts.frontier_only => {
                            part.created += 1;
                            part.fresh.push(target);
                            p
                        }
                        Offer::New(p) => {
                            part.created += 1;
                            part.candidates.push((p, target, key, label));
                            p
                        }
                        Offer::Current(p, lowered) => {
                            if lowered {
                                part.lowered.push((p, key, label));
                            }
                            p
                        }
                        Offer::Old(p) => p,
                        Offer::Covered => continue,
                        Offer::Full => {
                            full.store(true, Ordering::Relaxed);
                            continue;
                        }
                    };
                    if opts.record_transitions {
                        part.transitions.push((id, label, target_prov));
                    }
                }
                match outcome {
                    Some(Found::AtState(w)) => {
                        found.store(true, Ordering::Relaxed);
                        part.witnesses.push((false, id, w));
                    }
                    Some(Found::AtStep(w)) => {
                        found.store(true, Ordering::Relaxed);
                        part.witnesses.push((true, id, w));
                    }
                    None if k == 0 => part.deadlocks.push(id),
                    None => {}
                }
            }
            part.successors = successors;
            part.ahead = ahead;
        };
        let level = &states[level_start - offset..];
        // A small level is not worth the workers' hand-over (a long chain of small levels,
        // as in L(n,k), would spend its time there).
        let small = level.len() <= SMALL_LEVEL;
        let parts: Vec<LevelPart<D::State, D::Witness>> = if small {
            vec![level
                .chunks(CHUNK)
                .enumerate()
                .fold(LevelPart::new(slots), |mut part, c| {
                    expand_chunk(&mut part, c);
                    part
                })]
        } else {
            let chunks = level.len().div_ceil(CHUNK);
            let min_len = JOB_CHUNKS.min(chunks / threads).max(1);
            level
                .par_chunks(CHUNK)
                .enumerate()
                .with_min_len(min_len)
                .fold(
                    || LevelPart::new(slots),
                    |mut part, c| {
                        expand_chunk(&mut part, c);
                        part
                    },
                )
                .collect()
        };
        let mut candidates = Vec::with_capacity(parts.len());
        let mut lowered = Vec::new();
        let mut witnesses = Vec::new();
        let mut fresh = Vec::new();
        for part in parts {
            // Candidates made minus states removed: what the policy holds (whatever the
            // order of discovery, at the level's end).
            held += part.created;
            held -= part.writer.removed;
            transition_count += part.transition_count;
            transitions.extend(part.transitions);
            deadlocks.extend(part.deadlocks);
            candidates.push(part.candidates);
            lowered.extend(part.lowered);
            witnesses.extend(part.witnesses);
            fresh.push(part.fresh);
        }
        if stop.is_raised() {
            break;
        }
        if !witnesses.is_empty() {
            // The least by (depth, id): a violation at a state before one at a step.
            witness = witnesses
                .into_iter()
                .min_by_key(|&(at_step, id, _)| (at_step, id))
                .map(|(at_step, id, witness)| Witnessed {
                    id,
                    at_step,
                    witness,
                });
            break;
        }
        if opts.frontier_only {
            // No ids, no parents: the next level is the new states as found (its order
            // changes no count).
            let found: usize = fresh.iter().map(Vec::len).sum();
            let room = max_states.saturating_sub(offset + states.len());
            if found > room {
                stop.stop(StopReason::StateLimit);
            }
            level_start = offset + states.len();
            offset = level_start;
            states.clear();
            for part in fresh {
                let take = part.len().min(room - states.len());
                states.extend(part.into_iter().take(take));
            }
            if !states.is_empty() {
                level_starts.push(CanonicalId(level_start as u32));
            }
            visited.end_level(&states);
        } else {
            // The surviving candidates, with their least keys, in canonical order.
            let mut kept = in_key_order(candidates, |p| slots.least_key(p));
            if kept.iter().any(|c| c.3 == Label::MAX) {
                // Labels of least keys found by other steps than the candidates' own.
                let mut label_of: std::collections::HashMap<ProvisionalId, Label> =
                    Default::default();
                for (p, key, label) in lowered {
                    if slots.least_key(p) == Some(key) {
                        label_of.insert(p, label);
                    }
                }
                for c in kept.iter_mut().filter(|c| c.3 == Label::MAX) {
                    c.3 = label_of[&c.1];
                }
            }
            let room = max_states.saturating_sub(offset + states.len());
            if kept.len() > room {
                kept.truncate(room);
                stop.stop(StopReason::StateLimit);
            }
            level_start = offset + states.len();
            if !kept.is_empty() {
                level_starts.push(CanonicalId(level_start as u32));
            }
            for (i, (key, p, state, label)) in kept.into_iter().enumerate() {
                if opts.record_transitions {
                    set_id(&mut id_of_prov, p, CanonicalId((level_start + i) as u32));
                }
                parents.push((parent_of(key), label));
                states.push(state);
            }
            visited.end_level(&states[level_start - offset..]);
        }
        max_held = max_held.max(held);
        if let Some(report) = &opts.on_level {
            report(&LevelReport {
                level: levels,
                states: (offset + states.len()) as u64,
                transitions: transition_count,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        // Ordering: Relaxed; read after the level's join.
        if full.load(Ordering::Relaxed) {
            // Ids used up, or a table that could not grow (a failed allocation).
            stop.stop(if slots.memory_failed() {
                StopReason::MemoryLimit
            } else {
                StopReason::StateLimit
            });
        }
        if stop.is_raised() {
            break;
        }
        if level_start < offset + states.len() {
            at_boundary(&Boundary {
                levels,
                states: (offset + states.len()) as u64,
                transitions: transition_count,
                deadlocks: &deadlocks,
                frontier: &states[level_start - offset..],
            });
            if opts.max_levels.is_some_and(|max| levels >= max) {
                stop.stop(StopReason::DepthLimit);
                break;
            }
        }
    }
    let mut transitions_out = Vec::new();
    if opts.record_transitions {
        // Targets are provisional ids: make them ids (dropping states not kept).
        let mut numbered: Vec<(CanonicalId, Label, CanonicalId)> = transitions
            .into_iter()
            .filter_map(
                |(source, label, target)| match id_of_prov.get(target.0 as usize) {
                    Some(&id) if id != u32::MAX => Some((source, label, CanonicalId(id))),
                    _ => None,
                },
            )
            .collect();
        numbered.par_sort_unstable();
        transitions_out = numbered;
    }
    deadlocks.sort_unstable();
    let seconds = start.elapsed().as_secs_f64();
    let stopped = stop.reason();
    let total = (offset + states.len()) as u64;
    let stats = ExploreStats {
        states: total,
        transitions: transition_count,
        deadlocks: deadlocks.len() as u64,
        levels,
        seconds,
        states_per_second: total as f64 / seconds.max(1e-9),
        threads,
        complete: stopped.is_none(),
        stopped,
        ..Default::default()
    };
    Run {
        states,
        parents,
        level_starts,
        deadlocks,
        transitions: transitions_out,
        witness,
        stats,
        max_held,
    }
}

/// The surviving candidates of a level, `(least key, provisional id, state, label)` sorted by
/// least key; the label is `Label::MAX` where the least key is another step's than the
/// candidate's own.
///
/// The parts come in the order of the chunks they expanded, and each part's candidates in
/// the order of their steps, so the candidates' own keys ascend. Most survivors keep their
/// own key; the few whose key another worker lowered are sorted apart and merged in: linear
/// where a sort of the whole level was not. (Keys are distinct, so the order is the same
/// whichever way it is reached.)
fn in_key_order<S: Send>(
    parts: Vec<Vec<(ProvisionalId, S, u64, Label)>>,
    least_key: impl Fn(ProvisionalId) -> Option<u64>,
) -> Vec<(u64, ProvisionalId, S, Label)> {
    let total = parts.iter().map(Vec::len).sum();
    let mut own = Vec::with_capacity(total);
    let mut moved = Vec::new();
    for (p, state, key, label) in parts.into_iter().flatten() {
        match least_key(p) {
            Some(least) if least == key => own.push((least, p, state, label)),
            Some(least) => moved.push((least, p, state, Label::MAX)),
            None => {}
        }
    }
    if !own.is_sorted_by_key(|c: &(u64, ProvisionalId, S, Label)| c.0) {
        // Not the order the parts are made in; kept correct all the same.
        own.par_sort_unstable_by_key(|c| c.0);
    }
    if moved.is_empty() {
        return own;
    }
    moved.sort_unstable_by_key(|c| c.0);
    let mut kept = Vec::with_capacity(own.len() + moved.len());
    let mut moved = moved.into_iter().peekable();
    for c in own {
        while let Some(m) = moved.next_if(|m| m.0 < c.0) {
            kept.push(m);
        }
        kept.push(c);
    }
    kept.extend(moved);
    kept
}

/// Records `id` for provisional id `prov` (`u32::MAX`: not kept).
fn set_id(id_of_prov: &mut Vec<u32>, prov: ProvisionalId, id: CanonicalId) {
    let at = prov.0 as usize;
    if id_of_prov.len() <= at {
        id_of_prov.resize(at + 1, u32::MAX);
    }
    id_of_prov[at] = id.0;
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// What `in_key_order` must give: every survivor with its least key, sorted by it.
    fn sorted_survivors(
        parts: &[Vec<(ProvisionalId, u32, u64, Label)>],
        least: &HashMap<u32, u64>,
    ) -> Vec<(u64, ProvisionalId, u32, Label)> {
        let mut all: Vec<_> = parts
            .iter()
            .flatten()
            .filter_map(|&(p, s, key, label)| {
                least
                    .get(&p.0)
                    .map(|&l| (l, p, s, if l == key { label } else { Label::MAX }))
            })
            .collect();
        all.sort_by_key(|c| c.0);
        all
    }

    proptest! {
        /// Parts of ascending own keys (as a level's parts come) and parts in any order
        /// (the fallback) give the survivors sorted by least key: lowered keys merged in,
        /// removed candidates dropped.
        #[test]
        fn survivors_come_out_sorted_by_least_key(
            steps in proptest::collection::vec((1u64..4, 0u8..10), 0..300),
            cuts in proptest::collection::vec(0usize..300, 0..6),
            shuffled in any::<bool>(),
        ) {
            // Own keys ascend in steps of 4 to 12; a candidate is removed (0), lowered (1, 2:
            // to a key below every own key, or to one just below its own) or kept. Keys stay
            // distinct, as steps' keys are.
            let mut key = 1000u64;
            let mut flat = Vec::new();
            let mut least = HashMap::new();
            for (i, &(gap, fate)) in steps.iter().enumerate() {
                key += 4 * gap;
                let p = ProvisionalId(i as u32);
                flat.push((p, i as u32, key, (i % 7) as Label));
                match fate {
                    0 => {}
                    1 => { least.insert(p.0, i as u64); }
                    2 => { least.insert(p.0, key - 1); }
                    _ => { least.insert(p.0, key); }
                }
            }
            if shuffled {
                flat.reverse();
            }
            let mut parts = Vec::new();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(flat.len())).collect();
            cuts.sort_unstable();
            let mut from = 0;
            for c in cuts.into_iter().chain([flat.len()]) {
                parts.push(flat[from..c].to_vec());
                from = c;
            }
            let expected = sorted_survivors(&parts, &least);
            let got = in_key_order(parts, |p| least.get(&p.0).copied());
            prop_assert_eq!(got, expected);
        }
    }
}
