//! The parallel breadth-first explorer over any [`TransitionSystem`].
//!
//! Worker threads share each BFS level: they take states of the current level in chunks,
//! compute successors, and insert them into a concurrent state index (state → dense `u32` id,
//! sharded, so no global lock). States that are new form the next level. On request the
//! explorer records every transition (for `.aut` output); it always records one parent per
//! state (so a shortest trace to any state, e.g. a deadlock, can be rebuilt) and the deadlocks.
//!
//! A system that numbers its states itself ([`TransitionSystem::state_number`], e.g. CSP
//! networks, whose states live in a [`StateIndex`]) is not hashed a second time: workers mark
//! the numbers they meet in a concurrent bitmap, and the explorer's ids are given to the new
//! states when a level is merged.
//!
//! The numbers of states, transitions, levels and deadlocks do not depend on the thread count;
//! the ids of states may (the LTS is the same up to renumbering).

pub mod index;
pub mod limits;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use dashmap::DashMap;
use rayon::prelude::*;

use crate::lts::Lts;
use crate::ts::{Label, TransitionSystem};

use crate::sync::shim::AtomicU64;
use index::Segmented;
pub use index::{IndexFull, IndexHandle, StateIndex};
pub use limits::{ResourceLimits, StopReason, StopSignal, Watchdog};

/// Stack size of the worker threads.
pub const WORKER_STACK_BYTES: usize = 64 << 20;

/// Called after each level with (levels done, states known, transitions seen).
pub type LevelObserver = std::sync::Arc<dyn Fn(u32, u64, u64) + Send + Sync>;

/// Options of an exploration.
#[derive(Clone)]
pub struct ExploreOptions {
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Keep every transition (needed for [`Exploration::to_lts`]).
    pub record_transitions: bool,
    /// Keep at most this many states; exploration stops at the end of the level in which the
    /// limit was reached, and the result is marked incomplete.
    pub max_states: Option<u64>,
    /// Called after each level with (levels done, states known, transitions seen).
    pub on_level: Option<LevelObserver>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            threads: num_cpus::get(),
            record_transitions: false,
            max_states: None,
            on_level: None,
        }
    }
}

/// Statistics of an exploration.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ExploreStats {
    pub states: u64,
    pub transitions: u64,
    pub deadlocks: u64,
    /// BFS levels (the initial state is level 0; this counts the non-empty levels).
    pub levels: u32,
    pub seconds: f64,
    pub states_per_second: f64,
    pub threads: usize,
    /// False when a limit stopped the exploration before it was finished.
    pub complete: bool,
    /// Why the exploration stopped before it was finished (`None` when complete).
    pub stopped: Option<StopReason>,
}

/// Failures to run an exploration at all.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The worker threads could not be started.
    #[error("cannot start {threads} worker threads: {reason}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// What the system said.
        reason: String,
    },
}

/// The result of an exploration: states by id, one parent per state, deadlocks, and (on
/// request) all transitions.
pub struct Exploration<S> {
    /// State of each id; id 0 is the initial state.
    pub states: Vec<S>,
    /// For each id but 0: the id of a state one level up and the label leading from it.
    pub parents: Vec<(u32, Label)>,
    /// Ids of states without outgoing transitions, in increasing order.
    pub deadlocks: Vec<u32>,
    /// Recorded transitions `(source, label, target)`, sorted, when asked for.
    pub transitions: Vec<(u32, Label, u32)>,
    pub stats: ExploreStats,
}

impl<S> Exploration<S> {
    /// The labels of a shortest path from the initial state to `id`.
    pub fn trace_to(&self, id: u32) -> Vec<Label> {
        let mut labels = Vec::new();
        let mut at = id;
        while at != 0 {
            let (parent, label) = self.parents[at as usize];
            labels.push(label);
            at = parent;
        }
        labels.reverse();
        labels
    }

    /// The explored system as an explicit LTS (requires `record_transitions`).
    pub fn to_lts<T: TransitionSystem<State = S>>(&self, ts: &T) -> Lts {
        let mut used: Vec<Label> = self.transitions.iter().map(|t| t.1).collect();
        used.sort_unstable();
        used.dedup();
        let max = used.last().copied().unwrap_or(0) as usize;
        let mut remap = vec![0u32; max + 1];
        let mut names = vec!["tau".to_string()];
        for &l in &used {
            if l != crate::ts::TAU {
                remap[l as usize] = names.len() as u32;
                names.push(ts.label_name(l));
            }
        }
        let transitions: Vec<_> = self
            .transitions
            .iter()
            .map(|&(s, l, t)| (s, remap[l as usize], t))
            .collect();
        Lts::from_transitions(0, self.states.len().max(1) as u32, names, &transitions)
    }
}

/// How workers tell new states from known ones.
enum Known<S> {
    /// A concurrent map from states to ids, given on discovery.
    Hashed {
        index: DashMap<S, u32, crate::hash::WordBuildHasher>,
        next_id: AtomicU32,
    },
    /// The system numbers its states: a bitmap of the numbers met (bit `n % 64` of word
    /// `n / 64`); ids are given when a level is merged.
    Numbered { seen: Box<Segmented<AtomicU64>> },
}

impl<S: Clone + Eq + std::hash::Hash> Known<S> {
    /// The key of `state` (its id, or its number), with the state itself when this call
    /// discovered it; `None` when it is new but over the limit.
    #[inline]
    fn discover<T: TransitionSystem<State = S>>(
        &self,
        ts: &T,
        state: S,
        max_states: u64,
        limit_hit: &AtomicBool,
    ) -> Option<(u32, Option<S>)> {
        match self {
            Known::Hashed { index, next_id } => match index.entry(state) {
                dashmap::mapref::entry::Entry::Occupied(e) => Some((*e.get(), None)),
                dashmap::mapref::entry::Entry::Vacant(v) => {
                    // Ordering: Relaxed; ids need only be unique, the level barrier publishes
                    // them.
                    let new = next_id.fetch_add(1, Ordering::Relaxed);
                    if new as u64 >= max_states {
                        // Over the limit: the state is not kept, nor the transition to it.
                        limit_hit.store(true, Ordering::Relaxed);
                        return None;
                    }
                    let state = v.key().clone();
                    v.insert(new);
                    Some((new, Some(state)))
                }
            },
            Known::Numbered { seen } => {
                let number = ts.state_number(&state).expect("a numbered system");
                let word = &seen.get_or_alloc(number as u64 / 64)[0];
                let bit = 1u64 << (number % 64);
                // Ordering: Relaxed, both; the bit only decides which worker adds the state
                // to the next level (the level's join publishes everything else).
                let new = word.load(Ordering::Relaxed) & bit == 0
                    && word.fetch_or(bit, Ordering::Relaxed) & bit == 0;
                Some((number, new.then_some(state)))
            }
        }
    }
}

/// What one worker found in its share of a level.
struct LevelPart<S> {
    /// New states: (id or number, state, parent id, label).
    discovered: Vec<(u32, S, u32, Label)>,
    transitions: Vec<(u32, Label, u32)>,
    transition_count: u64,
    deadlocks: Vec<u32>,
}

impl<S> Default for LevelPart<S> {
    fn default() -> Self {
        LevelPart {
            discovered: Vec::new(),
            transitions: Vec::new(),
            transition_count: 0,
            deadlocks: Vec::new(),
        }
    }
}

/// Explores `ts` breadth first with `opts.threads` workers.
///
/// # Panics
///
/// When the worker threads cannot be started; [`try_explore`] returns that as an error.
pub fn explore<T: TransitionSystem>(ts: &T, opts: &ExploreOptions) -> Exploration<T::State> {
    try_explore(ts, opts, &StopSignal::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// Explores `ts` breadth first with `opts.threads` workers until it is finished, a limit of
/// `opts` is reached or `stop` is raised (the workers look at it between chunks of 64
/// states). A stopped exploration keeps the levels it finished and the part of the last one
/// it expanded, and is marked incomplete with the reason.
pub fn try_explore<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    stop: &StopSignal,
) -> Result<Exploration<T::State>, ExploreError> {
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        // Successor functions may recurse deeply (nested process terms): reserve room (virtual
        // memory only; pages are touched as used).
        .stack_size(WORKER_STACK_BYTES)
        .build()
        .map_err(|e| ExploreError::Threads {
            threads,
            reason: e.to_string(),
        })?;
    Ok(pool.install(|| explore_in_pool(ts, opts, stop)))
}

fn explore_in_pool<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    stop: &StopSignal,
) -> Exploration<T::State> {
    let start = Instant::now();
    let max_states = opts.max_states.unwrap_or(u64::MAX).min(u32::MAX as u64);
    let initial = ts.initial_state();
    let known = match ts.state_number(&initial) {
        Some(number) => {
            let seen: Box<Segmented<AtomicU64>> = Box::new(Segmented::new(1));
            let word = &seen.get_or_alloc(number as u64 / 64)[0];
            // Ordering: Relaxed; no worker runs yet.
            word.fetch_or(1 << (number % 64), Ordering::Relaxed);
            Known::Numbered { seen }
        }
        None => {
            // Many more shards than threads: two workers then rarely want the same shard's
            // lock at once (dashmap's default, four per core, had them collide on every few
            // insertions).
            let shards = (opts.threads.max(1) * 256).next_power_of_two();
            let index = DashMap::with_hasher_and_shard_amount(Default::default(), shards);
            index.insert(initial.clone(), 0);
            Known::Hashed {
                index,
                next_id: AtomicU32::new(1),
            }
        }
    };
    // For numbered systems recording transitions: the id of each number met (`u32::MAX`:
    // none), to turn the recorded targets into ids.
    let mut id_of_number: Vec<u32> = Vec::new();
    if let (Some(number), true) = (ts.state_number(&initial), opts.record_transitions) {
        set_id(&mut id_of_number, number, 0);
    }
    let limit_hit = AtomicBool::new(false);
    let mut states = vec![initial.clone()];
    let mut parents = vec![(0u32, 0 as Label)];
    let mut deadlocks = Vec::new();
    let mut transitions = Vec::new();
    let mut transition_count = 0u64;
    let mut level: Vec<(u32, T::State)> = vec![(0, initial)];
    let mut levels = 0u32;
    while !level.is_empty() {
        levels += 1;
        let parts: Vec<LevelPart<T::State>> = level
            .par_chunks(64)
            .fold(LevelPart::default, |mut part, chunk| {
                if stop.is_raised() {
                    return part;
                }
                for (id, state) in chunk {
                    expand(
                        ts, opts, &known, &limit_hit, max_states, *id, state, &mut part,
                    );
                }
                part
            })
            .collect();
        let mut next_level = Vec::new();
        for part in parts {
            transition_count += part.transition_count;
            transitions.extend(part.transitions);
            deadlocks.extend(part.deadlocks);
            for (key, state, parent, label) in part.discovered {
                let id = match known {
                    Known::Hashed { .. } => key,
                    Known::Numbered { .. } => {
                        let id = (states.len() + next_level.len()) as u32;
                        if id as u64 >= max_states {
                            limit_hit.store(true, Ordering::Relaxed);
                            continue;
                        }
                        if opts.record_transitions {
                            set_id(&mut id_of_number, key, id);
                        }
                        id
                    }
                };
                next_level.push((id, state, parent, label));
            }
        }
        // Ids were assigned concurrently: place the new states and their parents at their ids.
        next_level.sort_unstable_by_key(|(id, ..)| *id);
        parents.extend(
            next_level
                .iter()
                .map(|&(_, _, parent, label)| (parent, label)),
        );
        states.extend(next_level.iter().map(|(_, state, ..)| state.clone()));
        debug_assert!(next_level
            .iter()
            .enumerate()
            .all(|(i, l)| l.0 as usize == states.len() - next_level.len() + i));
        level = next_level
            .into_iter()
            .map(|(id, state, ..)| (id, state))
            .collect();
        if let Some(report) = &opts.on_level {
            report(levels, states.len() as u64, transition_count);
        }
        // Ordering: Relaxed; read after the level's join.
        if limit_hit.load(Ordering::Relaxed) {
            stop.stop(StopReason::StateLimit);
        }
        if stop.is_raised() {
            break;
        }
    }
    if let Known::Numbered { .. } = known {
        // Recorded targets are numbers: make them ids (dropping those over the limit).
        transitions.retain_mut(|t| match id_of_number.get(t.2 as usize) {
            Some(&id) if id != u32::MAX => {
                t.2 = id;
                true
            }
            _ => false,
        });
    }
    deadlocks.sort_unstable();
    transitions.sort_unstable();
    let seconds = start.elapsed().as_secs_f64();
    let stopped = stop.reason();
    let complete = stopped.is_none();
    let stats = ExploreStats {
        states: states.len() as u64,
        transitions: transition_count,
        deadlocks: deadlocks.len() as u64,
        levels,
        seconds,
        states_per_second: states.len() as f64 / seconds.max(1e-9),
        threads: opts.threads.max(1),
        complete,
        stopped,
    };
    Exploration {
        states,
        parents,
        deadlocks,
        transitions,
        stats,
    }
}

/// Records `id` for `number`.
fn set_id(id_of_number: &mut Vec<u32>, number: u32, id: u32) {
    if id_of_number.len() <= number as usize {
        id_of_number.resize(number as usize + 1, u32::MAX);
    }
    id_of_number[number as usize] = id;
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn expand<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    known: &Known<T::State>,
    limit_hit: &AtomicBool,
    max_states: u64,
    id: u32,
    state: &T::State,
    part: &mut LevelPart<T::State>,
) {
    let mut any = false;
    ts.for_each_successor(state, &mut |label, target| {
        any = true;
        part.transition_count += 1;
        let Some((key, new)) = known.discover(ts, target, max_states, limit_hit) else {
            return;
        };
        if let Some(target) = new {
            part.discovered.push((key, target, id, label));
        }
        if opts.record_transitions {
            part.transitions.push((id, label, key));
        }
    });
    if !any {
        part.deadlocks.push(id);
    }
}
