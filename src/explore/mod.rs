//! The parallel breadth-first explorer over any [`TransitionSystem`].
//!
//! Worker threads share each BFS level: they take states of the current level in chunks,
//! compute successors, and insert them into a concurrent state index (state → dense `u32` id,
//! sharded, so no global lock). States that are new form the next level. On request the
//! explorer records every transition (for `.aut` output); it always records one parent per
//! state (so a shortest trace to any state, e.g. a deadlock, can be rebuilt) and the deadlocks.
//!
//! The numbers of states, transitions, levels and deadlocks do not depend on the thread count;
//! the ids of states may (the LTS is the same up to renumbering).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use dashmap::DashMap;
use rayon::prelude::*;

use crate::lts::Lts;
use crate::ts::{Label, TransitionSystem};

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

type Index<S> = DashMap<S, u32, crate::hash::WordBuildHasher>;

/// What one worker found in its share of a level.
struct LevelPart<S> {
    /// New states: (id, state, parent id, label).
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
pub fn explore<T: TransitionSystem>(ts: &T, opts: &ExploreOptions) -> Exploration<T::State> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        // Successor functions may recurse deeply (nested process terms): reserve room (virtual
        // memory only; pages are touched as used).
        .stack_size(WORKER_STACK_BYTES)
        .build()
        .expect("cannot start worker threads");
    pool.install(|| explore_in_pool(ts, opts))
}

fn explore_in_pool<T: TransitionSystem>(ts: &T, opts: &ExploreOptions) -> Exploration<T::State> {
    let start = Instant::now();
    // Many more shards than threads: two workers then rarely want the same shard's lock at
    // once (dashmap's default, four per core, had them collide on every few insertions).
    let shards = (opts.threads.max(1) * 256).next_power_of_two();
    let index: Index<T::State> = DashMap::with_hasher_and_shard_amount(Default::default(), shards);
    let next_id = AtomicU32::new(1);
    let limit_hit = AtomicBool::new(false);
    let max_states = opts.max_states.unwrap_or(u64::MAX).min(u32::MAX as u64);
    let initial = ts.initial_state();
    index.insert(initial.clone(), 0);
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
                for (id, state) in chunk {
                    expand(
                        ts, opts, &index, &next_id, &limit_hit, max_states, *id, state, &mut part,
                    );
                }
                part
            })
            .collect();
        // Ids were assigned concurrently: place the new states and their parents at their ids.
        let total = (next_id.load(Ordering::Relaxed) as u64).min(max_states) as usize;
        parents.resize(total, (0, 0));
        let mut next_level = Vec::new();
        for part in parts {
            transition_count += part.transition_count;
            transitions.extend(part.transitions);
            deadlocks.extend(part.deadlocks);
            for (id, state, parent, label) in part.discovered {
                parents[id as usize] = (parent, label);
                next_level.push((id, state));
            }
        }
        next_level.sort_unstable_by_key(|(id, _)| *id);
        states.extend(next_level.iter().map(|(_, state)| state.clone()));
        debug_assert_eq!(states.len(), total);
        level = next_level;
        if let Some(report) = &opts.on_level {
            report(levels, states.len() as u64, transition_count);
        }
        if limit_hit.load(Ordering::Relaxed) {
            break;
        }
    }
    deadlocks.sort_unstable();
    transitions.sort_unstable();
    let seconds = start.elapsed().as_secs_f64();
    let complete = !limit_hit.load(Ordering::Relaxed);
    let stats = ExploreStats {
        states: states.len() as u64,
        transitions: transition_count,
        deadlocks: deadlocks.len() as u64,
        levels,
        seconds,
        states_per_second: states.len() as f64 / seconds.max(1e-9),
        threads: opts.threads.max(1),
        complete,
    };
    Exploration {
        states,
        parents,
        deadlocks,
        transitions,
        stats,
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn expand<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    index: &Index<T::State>,
    next_id: &AtomicU32,
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
        let target_id = match index.entry(target) {
            dashmap::mapref::entry::Entry::Occupied(e) => *e.get(),
            dashmap::mapref::entry::Entry::Vacant(v) => {
                // Ordering: Relaxed; ids need only be unique, the level barrier publishes them.
                let new = next_id.fetch_add(1, Ordering::Relaxed);
                if new as u64 >= max_states {
                    // Over the limit: the state is not kept, nor the transition to it.
                    limit_hit.store(true, Ordering::Relaxed);
                    return;
                }
                let state = v.key().clone();
                v.insert(new);
                part.discovered.push((new, state, id, label));
                new
            }
        };
        if opts.record_transitions {
            part.transitions.push((id, label, target_id));
        }
    });
    if !any {
        part.deadlocks.push(id);
    }
}
