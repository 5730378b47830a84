//! The parallel breadth-first explorer over any [`TransitionSystem`].
//!
//! Exploring a system is one use of the level-synchronous [`Engine`] (module [`engine`]):
//! worker threads share each BFS level, compute successors in chunks, and tell new states from
//! known ones with a concurrent index (a map from states to ids, or, for a system that numbers
//! its states itself ([`TransitionSystem::state_number`], e.g. CSP networks, whose states live
//! in a [`StateIndex`]), an array indexed by those numbers, so that no state is hashed twice).
//! On request the explorer records every transition (for `.aut` output); it always records one
//! parent per state (so a shortest trace to any state, e.g. a deadlock, can be rebuilt) and the
//! deadlocks.
//!
//! Ids are canonical: every count, id, parent and recorded transition is the same at every
//! thread count (see [`engine`]).

pub mod checkpoint;
pub mod compact;
pub mod engine;
pub mod ids;
pub mod index;
pub mod keyed;
pub mod limits;
pub mod visited;
pub mod zeroed;

use crate::lts::Lts;
use crate::threads::Threads;
use crate::ts::{Label, TransitionSystem};

pub use engine::{
    Driven, Engine, Found, HashedVisited, LevelSlots, LevelWriter, NumberedVisited, Offer, Run,
    RunOptions, Visited, Witnessed,
};
pub use ids::{CanonicalId, ProvisionalId};
pub use index::{IndexFull, IndexHandle, StateIndex};
pub use limits::{ResourceLimits, StopReason, StopSignal, Watchdog};

pub use crate::threads::WORKER_STACK_BYTES;

/// What a search has done when a level ends.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct LevelReport {
    /// Levels done.
    pub level: u32,
    /// States (or product pairs) known.
    pub states: u64,
    /// Transitions seen.
    pub transitions: u64,
    /// Seconds since the search started.
    pub seconds: f64,
}

/// Told after each level of a search.
pub type LevelObserver = std::sync::Arc<dyn Fn(&LevelReport) + Send + Sync>;

/// Options of an exploration.
#[derive(Clone)]
pub struct ExploreOptions {
    /// Worker threads.
    pub threads: Threads,
    /// Keep every transition (needed for [`Exploration::to_lts`]).
    pub record_transitions: bool,
    /// Keep at most this many states; exploration stops at the end of the level in which the
    /// limit was reached, and the result is marked incomplete.
    pub max_states: Option<u64>,
    /// Told after each level.
    pub on_level: Option<LevelObserver>,
    /// Expand at most this many levels (the run is then incomplete, every level up to the
    /// limit complete).
    pub max_levels: Option<u32>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            threads: Threads::all_cores(),
            record_transitions: false,
            max_states: None,
            on_level: None,
            max_levels: None,
        }
    }
}

/// Where a count-only exploration ([`count_states_with`]) writes checkpoints and where it
/// resumes from (see [`checkpoint`]).
#[derive(Clone, Debug, Default)]
pub struct Persistence {
    /// Write a checkpoint into this folder at level boundaries.
    pub checkpoint: Option<std::path::PathBuf>,
    /// At least this long between two checkpoints (zero: at every level boundary).
    pub interval: std::time::Duration,
    /// Resume from the checkpoint in this folder.
    pub resume: Option<std::path::PathBuf>,
    /// Identifies the model explored ([`checkpoint::fingerprint`]); a checkpoint of another
    /// is refused.
    pub fingerprint: u64,
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
    /// How the visited states were stored: `"compact"` (their canonical encodings alone,
    /// [`count_states`]) or `"indexed"` (with ids and parents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage: Option<&'static str>,
    /// For compact storage: the bytes of the table of visited states, and per state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visited_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_state: Option<f64>,
}

/// Failures to run an exploration at all.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// A checkpoint could not be written, read, or does not fit the model.
    #[error(transparent)]
    Checkpoint(#[from] checkpoint::CheckpointError),
    /// Checkpoints were asked for a system whose states cannot be written down canonically.
    #[error("this model cannot be checkpointed: {0}")]
    NoCheckpoints(String),
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
    pub parents: Vec<(CanonicalId, Label)>,
    /// Ids of states without outgoing transitions, in increasing order.
    pub deadlocks: Vec<CanonicalId>,
    /// Recorded transitions `(source, label, target)`, sorted, when asked for.
    pub transitions: Vec<(CanonicalId, Label, CanonicalId)>,
    pub stats: ExploreStats,
}

impl<S> Exploration<S> {
    /// The labels of a shortest path from the initial state to `id`.
    pub fn trace_to(&self, id: CanonicalId) -> Vec<Label> {
        let mut labels = Vec::new();
        let mut at = id;
        while at != CanonicalId::INITIAL {
            let (parent, label) = self.parents[at.index()];
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
            .map(|&(s, l, t)| (s.0, remap[l as usize], t.0))
            .collect();
        Lts::from_transitions(0, self.states.len().max(1) as u32, names, &transitions)
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
    let engine = Engine::new(opts.threads)?;
    Ok(explore_on(&engine, ts, opts, stop))
}

/// Explores `ts` for its counts only (states, transitions, deadlocks, levels), as
/// [`try_explore`] does, but keeping as little as it can: when the system has a canonical
/// encoding of at most two words ([`TransitionSystem::encoded_width`]), the visited states are
/// those encodings in a [`compact::CompactSet`] (about 12 bytes per state), the system keeps
/// no state of its own, and no ids or parents are kept. Otherwise it explores as
/// [`try_explore`] does. The counts are the same either way, at every thread count.
pub fn count_states<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    stop: &StopSignal,
) -> Result<ExploreStats, ExploreError> {
    count_states_with(ts, opts, stop, &Persistence::default())
}

/// As [`count_states`], writing checkpoints and resuming from one as `persistence` asks
/// (which needs the compact storage: a refusal otherwise). A checkpoint is written at a
/// level boundary, every level before it complete, so a run resumed from it ends with the
/// counts of a run never interrupted.
pub fn count_states_with<T: TransitionSystem>(
    ts: &T,
    opts: &ExploreOptions,
    stop: &StopSignal,
    persistence: &Persistence,
) -> Result<ExploreStats, ExploreError> {
    let engine = Engine::new(opts.threads)?;
    let Some(packed) = compact::Packed::new(ts) else {
        if persistence.checkpoint.is_some() || persistence.resume.is_some() {
            let why = match ts.encoded_width() {
                Err(e) => e.0,
                Ok(w) => format!("its states take {w} words (checkpoints take at most 2)"),
            };
            return Err(ExploreError::NoCheckpoints(why));
        }
        let mut stats = explore_on(&engine, ts, opts, stop).stats;
        stats.storage = Some("indexed");
        return Ok(stats);
    };
    let width = packed.width() as u32;
    let visited = compact::CompactVisited::stopping(stop);
    let resume = match &persistence.resume {
        None => None,
        Some(dir) => {
            let c = checkpoint::Checkpoint::read(dir, persistence.fingerprint, width)?;
            engine.install(|| {
                use rayon::prelude::*;
                c.visited.par_iter().for_each(|&k| {
                    visited.set().insert(k);
                })
            });
            Some(engine::Resume {
                frontier: c.frontier,
                levels: c.levels,
                states: c.states,
                transitions: c.transitions,
                deadlocks: c.deadlocks,
            })
        }
    };
    let run_opts = RunOptions {
        record_transitions: false,
        max_states: opts.max_states,
        on_level: opts.on_level.clone(),
        frontier_only: true,
        max_levels: opts.max_levels,
    };
    let mut last = std::time::Instant::now();
    let mut failure = None;
    let mut at_boundary = |b: &engine::Boundary<'_, u64>| {
        let Some(dir) = &persistence.checkpoint else {
            return;
        };
        if failure.is_some() || last.elapsed() < persistence.interval {
            return;
        }
        let head = checkpoint::Head {
            fingerprint: persistence.fingerprint,
            width,
            levels: b.levels,
            states: b.states,
            transitions: b.transitions,
        };
        let written = checkpoint::write_streaming(dir, &head, b.deadlocks, b.frontier, &mut |f| {
            visited.set().for_each(f)
        });
        match written {
            Ok(()) => last = std::time::Instant::now(),
            Err(e) => {
                failure = Some(e);
                stop.stop(StopReason::Interrupted);
            }
        }
    };
    let run = engine.resume(
        &Plain(&packed),
        &visited,
        &run_opts,
        stop,
        resume,
        &mut at_boundary,
    );
    if let Some(e) = failure {
        return Err(e.into());
    }
    let mut stats = run.stats;
    let bytes = visited.set().bytes();
    stats.storage = Some("compact");
    stats.visited_bytes = Some(bytes);
    stats.bytes_per_state = Some(bytes as f64 / stats.states.max(1) as f64);
    Ok(stats)
}

/// A transition system driven as it is: no violations.
pub(crate) struct Plain<'a, T>(pub(crate) &'a T);

impl<T: TransitionSystem> Driven for Plain<'_, T> {
    type State = T::State;
    type Witness = std::convert::Infallible;

    fn initial_state(&self) -> T::State {
        self.0.initial_state()
    }

    #[inline]
    fn expand(
        &self,
        state: &T::State,
        emit: &mut dyn FnMut(Label, T::State),
    ) -> Option<Found<Self::Witness>> {
        self.0.for_each_successor(state, emit);
        None
    }
}

/// Explores `ts` on `engine` (see [`try_explore`]).
pub fn explore_on<T: TransitionSystem>(
    engine: &Engine,
    ts: &T,
    opts: &ExploreOptions,
    stop: &StopSignal,
) -> Exploration<T::State> {
    let run_opts = RunOptions {
        record_transitions: opts.record_transitions,
        max_states: opts.max_states,
        on_level: opts.on_level.clone(),
        max_levels: opts.max_levels,
        ..Default::default()
    };
    let run = if ts.state_number(&ts.initial_state()).is_some() {
        engine.run(&Plain(ts), &NumberedVisited::new(ts), &run_opts, stop)
    } else {
        engine.run(
            &Plain(ts),
            &HashedVisited::new(engine.threads()),
            &run_opts,
            stop,
        )
    };
    Exploration {
        states: run.states,
        parents: run.parents,
        deadlocks: run.deadlocks,
        transitions: run.transitions,
        stats: run.stats,
    }
}
