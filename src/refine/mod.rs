//! Antichain refinement checking: trace, stable-failures and failures-divergences refinement of
//! an implementation [`Lts`] against a specification [`Lts`].
//!
//! The algorithms are Algorithms 4, 5 and 6 of the thesis (seed 004, ch. 2; Algorithm 2 of seed
//! 000 for the failures models). The specification is normalised on the fly: a normal-form
//! state is a tau-closed set of specification states, interned once (module `normal`), with its
//! divergence, its minimal acceptance sets and its successor per event computed once. The
//! product of that normal form with the implementation is explored breadth-first (default: the
//! counterexample is a shortest one, counted in product steps, taus included) or depth-first,
//! pruning every pair that is covered by the antichain, keyed by implementation state.
//!
//! A pair enters the antichain when it is discovered, and its witness conditions are tested at
//! that moment. The algorithms test them when the pair is popped; since every discovered pair is
//! popped before the search ends, the verdict is the same, and testing at discovery makes the
//! first witness found by a breadth-first search one of least depth. In the failures-divergences
//! model a pair whose specification set diverges enters the antichain but is not scheduled
//! (Algorithm 6 would pop it and do nothing); the specification's divergence is tested before
//! the implementation's.
//!
//! Spec and implementation have their own label tables; visible labels are matched by name, and
//! an implementation event the specification never mentions is one the specification cannot do.
//! Every counterexample is replayed on both systems by an independent checker ([`replay`])
//! before it is returned; a replay that fails is an internal error, never a verdict.
//!
//! Statistics: the `seconds` of [`CheckStats`] time the whole check, including the derived
//! facts of the two systems (tau-closures, divergence, enabled sets) that the `Lts` computes on
//! first use and caches.

#![forbid(unsafe_code)]

mod antichain;
mod divergence;
mod engine;
mod normal;
mod product;
pub mod properties;
mod property_search;
pub mod replay;
mod shared_normal;

use serde::Serialize;
use std::time::{Duration, Instant};

use crate::explore::{Engine, HashedVisited, LevelObserver, RunOptions, StopReason, StopSignal};
use crate::lts::Lts;
use crate::threads::Threads;
use crate::ts::{Label, TransitionSystem, TAU};
use antichain::ConcurrentAntichain;
use shared_normal::SharedNormalForm;

use product::{Product, ProductWitness, SpecEvents};
pub use property_search::{search_property, Property, PropertySearch};

/// The semantic model of a check (FDR's `[T=`, `[F=`, `[FD=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Weak trace refinement.
    Traces,
    /// Stable-failures refinement (weak traces and stable failures).
    Failures,
    /// Failures-divergences refinement (failures and divergences, divergence is chaos).
    FailuresDivergences,
}

impl Model {
    /// The name used on the command line and in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Model::Traces => "traces",
            Model::Failures => "failures",
            Model::FailuresDivergences => "failures-divergences",
        }
    }
}

/// The order in which the product is explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// Breadth-first: the counterexample is a shortest one.
    Bfs,
    /// Depth-first (a stack of discovered pairs, as in the algorithms' pseudocode).
    Dfs,
}

/// What to check and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// The semantic model.
    pub model: Model,
    /// The exploration order.
    pub search: Search,
    /// Use the classical algorithm: a visited set of exact pairs instead of the antichain.
    pub no_antichain: bool,
    /// Worker threads of the breadth-first search. The verdict, the statistics and the
    /// counterexample do not depend on it.
    pub threads: Threads,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            model: Model::FailuresDivergences,
            search: Search::Bfs,
            no_antichain: false,
            threads: Threads::ONE,
        }
    }
}

/// What went wrong at the end of a counterexample's trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Violation {
    /// After the trace the implementation can perform `event`; the specification cannot.
    Trace {
        /// The event the specification cannot perform.
        event: String,
    },
    /// After the trace the implementation is in a stable state that refuses `refused`, a set
    /// the specification cannot refuse after that trace. `spec_acceptances` are the minimal
    /// sets of events the specification's stable states accept there (empty when it has no
    /// stable state there); `refused` holds, from each of them, the events the implementation
    /// state does not accept.
    Refusal {
        /// Events the implementation state refuses (it is stable).
        refused: Vec<String>,
        /// The specification's minimal acceptance sets after the trace.
        spec_acceptances: Vec<Vec<String>>,
    },
    /// After the trace the implementation can diverge (perform infinitely many taus); the
    /// specification cannot diverge on the trace or any prefix of it.
    Divergence,
}

/// A witness of non-refinement: a trace of visible events and what goes wrong at its end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    /// The visible events, in order (taus left out).
    pub trace: Vec<String>,
    /// The implementation state reached by the trace where the violation shows.
    pub impl_state: u32,
    /// The number of product steps to the violation, implementation taus included (for a
    /// trace violation, the step with the offending event counts).
    pub steps: usize,
    /// What goes wrong at the end of the trace.
    #[serde(flatten)]
    pub violation: Violation,
}

/// Statistics of one check (as in Tables 2.3–2.6 of the thesis).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CheckStats {
    /// Pairs taken from the working set and expanded.
    pub pairs_explored: u64,
    /// Pairs discovered (inserted into the antichain or visited set).
    pub pairs_discovered: u64,
    /// The largest size of the working set (queue or stack).
    pub max_working: u64,
    /// Membership tests that found the pair covered (pruned).
    pub antichain_hits: u64,
    /// Membership tests that found the pair new (it was inserted).
    pub antichain_misses: u64,
    /// The largest number of pairs held in the antichain (visited set) at one time.
    pub max_antichain: u64,
    /// Normal-form states (sets of specification states) interned.
    pub spec_sets: u64,
    /// Product transitions seen (the parallel search; 0 for the sequential one).
    pub transitions: u64,
    /// Wall-clock time of the check, in seconds (reading the inputs excluded).
    pub seconds: f64,
    /// Breadth-first levels of the product searched.
    pub levels: u32,
    /// Worker threads.
    pub threads: usize,
}

/// The outcome of a check: the verdict (with a counterexample when it fails) and statistics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    /// The model checked.
    pub model: Model,
    /// `None` when the refinement holds.
    pub counterexample: Option<Counterexample>,
    /// Statistics of the search.
    pub stats: CheckStats,
}

impl CheckResult {
    /// Whether the refinement holds.
    pub fn holds(&self) -> bool {
        self.counterexample.is_none()
    }
}

/// Internal failures of the checker (never a wrong verdict).
#[derive(Debug, thiserror::Error)]
pub enum RefineError {
    /// The counterexample found did not replay on the two systems: a bug in the checker.
    #[error("internal error: the counterexample did not replay: {0}")]
    ReplayFailed(String),
    /// A system has no states (not even an initial one).
    #[error("the {0} has no states")]
    NoStates(&'static str),
    /// The product has more pairs than the checker can index.
    #[error("the product has more than {0} pairs: too large to check")]
    TooManyPairs(u64),
    /// The worker threads could not be started (the system refused them; their number was
    /// checked when the [`Threads`] was made).
    #[error("{0}")]
    Threads(String),
    /// The implementation does not number its states (an on-the-fly check needs it).
    #[error("internal error: the implementation does not number its states")]
    Unnumbered,
    /// A limit (memory, time) or an interrupt stopped the check: no verdict.
    #[error("stopped by {}: the check is incomplete", .0.describe())]
    Stopped(StopReason),
}

/// Decides whether `impl_` refines `spec` in `opts.model` (FDR's `assert spec [X= impl_`).
///
/// Returns the verdict, a counterexample when it fails (replayed on both systems before it is
/// returned), and statistics.
pub fn check(spec: &Lts, impl_: &Lts, opts: &CheckOptions) -> Result<CheckResult, RefineError> {
    check_until(spec, impl_, opts, &StopSignal::new())
}

/// [`check`], stopped with [`RefineError::Stopped`] when `stop` is raised (the search looks at
/// it between chunks of pairs).
pub fn check_until(
    spec: &Lts,
    impl_: &Lts,
    opts: &CheckOptions,
    stop: &StopSignal,
) -> Result<CheckResult, RefineError> {
    if spec.num_states() == 0 {
        return Err(RefineError::NoStates("specification"));
    }
    if impl_.num_states() == 0 {
        return Err(RefineError::NoStates("implementation"));
    }
    if opts.search == Search::Bfs {
        let engine = Engine::new(opts.threads).map_err(|e| RefineError::Threads(e.to_string()))?;
        let checked = check_system(&engine, spec, impl_, opts, &SystemOptions::default(), stop)?;
        let mut result = checked.result;
        if let (Some(cex), Some(state)) = (&mut result.counterexample, checked.impl_state) {
            cex.impl_state = state;
        }
        return Ok(result);
    }
    let start = std::time::Instant::now();
    let (counterexample, mut stats) = engine::run(spec, impl_, opts, stop)?;
    let elapsed: Duration = start.elapsed();
    stats.seconds = elapsed.as_secs_f64();
    stats.threads = 1;
    if let Some(cex) = &counterexample {
        replay::replay(spec, impl_, opts.model, cex).map_err(RefineError::ReplayFailed)?;
    }
    Ok(CheckResult {
        model: opts.model,
        counterexample,
        stats,
    })
}

/// Options of [`check_system`] beyond the model's.
#[derive(Clone, Default)]
pub struct SystemOptions {
    /// Stop after this many product pairs (the run is then stopped by the state limit).
    pub max_pairs: Option<u64>,
    /// Told after each level of the product.
    pub on_level: Option<LevelObserver>,
}

/// A check of an implementation given as any [`TransitionSystem`].
#[derive(Clone, Debug)]
pub struct SystemCheck<S> {
    /// The verdict and statistics; a counterexample's `impl_state` is the canonical id of the
    /// product pair where the violation shows.
    pub result: CheckResult,
    /// The implementation's state where the violation shows.
    pub impl_state: Option<S>,
    /// The implementation's run to it: `(label, state)` per step, taus included.
    pub impl_path: Vec<(Label, S)>,
}

/// Decides whether `imp` refines `spec` in `opts.model`, exploring the product of the
/// specification's normal form and the implementation on the fly, breadth first, on the
/// engine's workers. The search ends at the end of the first level with a violation and
/// returns the least one: a shortest counterexample, the same at every thread count, replayed
/// on both systems before it is returned. `imp` must number its states
/// ([`TransitionSystem::state_number`]: the antichain and the divergence memo are keyed by
/// those numbers), as explicit LTSs and CSPm processes do.
pub fn check_system<I: TransitionSystem>(
    engine: &Engine,
    spec: &Lts,
    imp: &I,
    opts: &CheckOptions,
    system_opts: &SystemOptions,
    stop: &StopSignal,
) -> Result<SystemCheck<I::State>, RefineError> {
    if spec.num_states() == 0 {
        return Err(RefineError::NoStates("specification"));
    }
    if imp.state_number(&imp.initial_state()).is_none() {
        return Err(RefineError::Unnumbered);
    }
    let start = Instant::now();
    let events = SpecEvents::new(spec.label_names());
    let nf = SharedNormalForm::new(spec, events.of_label.clone());
    let model = opts.model;
    let product = Product::new(&nf, &events, imp, model);
    let run_opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
    };
    let run = if opts.no_antichain {
        let exact = HashedVisited::new(engine.threads());
        engine.run(&product, &exact, &run_opts, stop)
    } else {
        engine.run(
            &product,
            &ConcurrentAntichain::new(&nf, imp),
            &run_opts,
            stop,
        )
    };
    if let Some(reason) = run.stats.stopped {
        return Err(RefineError::Stopped(reason));
    }
    let pairs = run.states.len() as u64;
    let mut stats = CheckStats {
        pairs_explored: pairs,
        pairs_discovered: pairs,
        max_working: run
            .level_starts
            .windows(2)
            .map(|w| (w[1] - w[0]) as u64)
            .chain(std::iter::once(
                pairs - run.level_starts.last().copied().unwrap_or(0) as u64,
            ))
            .max()
            .unwrap_or(0),
        antichain_hits: run
            .stats
            .transitions
            .saturating_sub(pairs.saturating_sub(1)),
        antichain_misses: pairs,
        max_antichain: run.max_held,
        transitions: run.stats.transitions,
        spec_sets: nf.num_sets() as u64,
        seconds: 0.0,
        levels: run.stats.levels,
        threads: engine.threads().get(),
    };
    let mut impl_state = None;
    let mut impl_path = Vec::new();
    let counterexample = run.witness.as_ref().map(|w| {
        let path = run.path_to(w.id);
        impl_path = path
            .iter()
            .map(|&(label, id)| (label, run.states[id as usize].1.clone()))
            .collect();
        let (set, ref state) = run.states[w.id as usize];
        impl_state = Some(state.clone());
        let trace: Vec<String> = path
            .iter()
            .filter(|(l, _)| *l != TAU)
            .map(|&(l, _)| imp.label_name(l))
            .collect();
        let (violation, steps) = match w.witness {
            ProductWitness::Trace { label } => (
                Violation::Trace {
                    event: imp.label_name(label),
                },
                path.len() + 1,
            ),
            ProductWitness::Divergence => (Violation::Divergence, path.len()),
            ProductWitness::Refusal => {
                let (enabled, _) = product.enabled(state);
                let mut refused: Vec<String> = Vec::new();
                let mut spec_acceptances: Vec<Vec<String>> = Vec::new();
                for acceptance in nf.acceptances(set) {
                    let mut named: Vec<String> = Vec::new();
                    for &e in acceptance.iter() {
                        named.push(events.names[e as usize].clone());
                        if enabled.binary_search(&e).is_err() {
                            refused.push(events.names[e as usize].clone());
                        }
                    }
                    named.sort();
                    spec_acceptances.push(named);
                }
                refused.sort();
                refused.dedup();
                spec_acceptances.sort();
                (
                    Violation::Refusal {
                        refused,
                        spec_acceptances,
                    },
                    path.len(),
                )
            }
        };
        Counterexample {
            trace,
            impl_state: w.id,
            steps,
            violation,
        }
    });
    stats.seconds = start.elapsed().as_secs_f64();
    if let Some(cex) = &counterexample {
        replay::replay_run(spec, imp, model, cex, &impl_path).map_err(RefineError::ReplayFailed)?;
    }
    Ok(SystemCheck {
        result: CheckResult {
            model,
            counterexample,
            stats,
        },
        impl_state,
        impl_path,
    })
}
