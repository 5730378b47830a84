//! Antichain refinement checking: trace, stable-failures, failures-divergences, revivals and
//! refusal-testing refinement of an implementation against a specification [`Lts`].
//!
//! The algorithms are Algorithms 4, 5 and 6 of the thesis (seed 004, ch. 2; Algorithm 2 of seed
//! 000 for the failures models). The specification is normalised on the fly: a normal-form
//! state is a tau-closed set of specification states, interned once (module `normal`), with its
//! divergence, its minimal acceptance sets and its successor per event computed once. The
//! product of that normal form with the implementation is explored breadth-first (default: the
//! counterexample is a shortest one, counted in product steps, taus included) or depth-first,
//! pruning every pair that is covered by the antichain, keyed by implementation state.
//!
//! FDR's revivals and refusal-testing models (`[V=`, `[VD=`, `[R=`, `[RD=`) run on the same
//! product with the per-pair tests of module `revivals`; in refusal testing a normal-form node
//! is any tau-closed set of specification states (after a stable implementation state, the
//! specification continues only from its states that can refuse as much), not one per trace.
//! ✓ is a signal in every model (see [`Model`]).
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
mod compact;
mod determinism;
mod divergence;
mod engine;
mod label_names;
pub(crate) mod normal;
mod product;
pub mod properties;
mod property_search;
pub mod replay;
mod revivals;
mod shared_normal;
mod trace_search;
mod witness;

use serde::Serialize;
use std::time::{Duration, Instant};

use crate::explore::{
    Engine, HashedVisited, LevelObserver, Run, RunOptions, StopReason, StopSignal,
};
use crate::lts::Lts;
use crate::threads::Threads;
use crate::ts::{Label, TransitionSystem};
use antichain::ConcurrentAntichain;
use shared_normal::SharedNormalForm;

pub use compact::SharedPairSearch;
pub use determinism::search_determinism;
use product::{Product, SpecEvents};
pub use property_search::{search_property, Property, PropertySearch};
pub use trace_search::{search_trace, TraceSearch};

/// The semantic model of a check (FDR's `[T=`, `[F=`, `[FD=`, `[R=`, `[RD=`, `[V=`, `[VD=`).
///
/// ✓ (successful termination, the label named [`properties::TICK`]) is a signal, as in FDR:
/// an implementation state that can perform ✓ may terminate without the environment's
/// agreement, so it counts as unstable (it shows no refusal, revival or deadlock of its own;
/// that it can refuse every other event follows from ✓ being a trace). Observations end
/// with ✓.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Weak trace refinement.
    Traces,
    /// Stable-failures refinement (weak traces and stable failures).
    Failures,
    /// Failures-divergences refinement (failures and divergences, divergence is chaos).
    FailuresDivergences,
    /// Stable revivals refinement: traces, deadlocks (traces after which a stable state
    /// accepts nothing) and revivals `(s, X, a)` (after `s` a stable state refuses `X` and then
    /// performs `a`).
    Revivals,
    /// Revivals-divergences refinement: revivals and divergences, divergence is chaos.
    RevivalsDivergences,
    /// Refusal-testing refinement: refusal traces `X0 a1 X1 a2 … an Xn`, each `Xi` a set the
    /// process refuses in a stable state just before `a(i+1)` (or at the end), or no
    /// observation.
    RefusalTesting,
    /// Refusal-testing-divergences refinement: refusal traces and the refusal traces after
    /// which the process can diverge; divergence is chaos.
    RefusalTestingDivergences,
}

impl Model {
    /// Every model, weakest first within each family.
    pub const ALL: [Model; 7] = [
        Model::Traces,
        Model::Failures,
        Model::FailuresDivergences,
        Model::Revivals,
        Model::RevivalsDivergences,
        Model::RefusalTesting,
        Model::RefusalTestingDivergences,
    ];

    /// The name used on the command line and in JSON output (FDR's long name, in kebab case).
    pub fn name(self) -> &'static str {
        match self {
            Model::Traces => "traces",
            Model::Failures => "failures",
            Model::FailuresDivergences => "failures-divergences",
            Model::Revivals => "revivals",
            Model::RevivalsDivergences => "revivals-divergences",
            Model::RefusalTesting => "refusal-testing",
            Model::RefusalTestingDivergences => "refusal-testing-divergences",
        }
    }

    /// The model's letters as in FDR's assertions: `T`, `F`, `FD`, `V`, `VD`, `R`, `RD`
    /// (`assert P [V= Q`, `:[deadlock free [V]]`).
    pub fn letters(self) -> &'static str {
        match self {
            Model::Traces => "T",
            Model::Failures => "F",
            Model::FailuresDivergences => "FD",
            Model::Revivals => "V",
            Model::RevivalsDivergences => "VD",
            Model::RefusalTesting => "R",
            Model::RefusalTestingDivergences => "RD",
        }
    }

    /// The model named `name`: its letters ([`Model::letters`]) or its name ([`Model::name`]),
    /// case aside, with spaces or underscores for the hyphens (`"V"`, `"revivals"`,
    /// `"Refusal Testing"`); `None` for any other text.
    pub fn from_name(name: &str) -> Option<Model> {
        let wanted: String = name
            .trim()
            .chars()
            .map(|c| match c {
                ' ' | '_' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        Model::ALL
            .into_iter()
            .find(|m| m.name() == wanted || m.letters().eq_ignore_ascii_case(&wanted))
    }

    /// Whether divergence is observed (and is chaos): `FD`, `VD`, `RD`.
    pub fn has_divergences(self) -> bool {
        matches!(
            self,
            Model::FailuresDivergences
                | Model::RevivalsDivergences
                | Model::RefusalTestingDivergences
        )
    }

    /// Whether stable refusals are observed: every model but traces.
    pub fn observes_refusals(self) -> bool {
        self != Model::Traces
    }

    /// Whether revivals are observed (what a stable state does after refusing): the revivals
    /// and refusal-testing models.
    pub fn observes_revivals(self) -> bool {
        matches!(
            self,
            Model::Revivals
                | Model::RevivalsDivergences
                | Model::RefusalTesting
                | Model::RefusalTestingDivergences
        )
    }

    /// Whether refusals are observed along the trace, not only at its end: the
    /// refusal-testing models.
    pub fn observes_refusal_traces(self) -> bool {
        matches!(
            self,
            Model::RefusalTesting | Model::RefusalTestingDivergences
        )
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
    /// (Revivals and refusal-testing models.) After the trace the implementation is in a
    /// stable state that accepts exactly `accepted`, so refuses every other event, and then
    /// performs `event`; the specification cannot: no stable state of it after the trace
    /// both refuses what the implementation refuses and accepts `event`, though it can
    /// refuse that much and can perform `event` after the trace.
    Revival {
        /// The events the implementation's stable state accepts (sorted); it refuses all
        /// others.
        accepted: Vec<String>,
        /// The event it then performs (one of `accepted`).
        event: String,
        /// The events that the specification's stable states able to perform `event` after
        /// the trace accept and the implementation refuses (sorted): each such state accepts
        /// one of them.
        refused: Vec<String>,
        /// The acceptances of the specification's stable states after the trace that can
        /// perform `event` (each sorted; empty when no stable state can).
        spec_acceptances: Vec<Vec<String>>,
    },
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
    /// Refusal-testing models only (else empty): for each event of `trace`, the acceptance
    /// of the stable state the implementation performed it from (the events it offered,
    /// sorted; it was observed refusing every other event just before), or `None` where it
    /// performed the event from an unstable state (no refusal observed). With `trace` this
    /// is the refusal trace the specification cannot match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acceptances: Vec<Option<Vec<String>>>,
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
    /// Bytes of the compact set of pairs, when the product was kept compactly
    /// ([`SystemOptions::compact`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_bytes: Option<u64>,
    /// Wall-clock time of the check, in seconds (reading the inputs excluded).
    pub seconds: f64,
    /// Breadth-first levels of the product searched.
    pub levels: u32,
    /// Worker threads.
    pub threads: usize,
    /// Whether the processes of a distributed run searched the product together (a
    /// failing check's counterexample is then searched for again in each process).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
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
    /// A distributed check could not start or lost a process.
    #[error("{0}")]
    Distributed(String),
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
    /// Search the product in compact storage first where the implementation has a canonical
    /// encoding of at most two words: a check that holds then keeps about a dozen bytes per
    /// pair; one that fails is searched again, indexed, for its counterexample (see
    /// `refine/compact.rs`).
    pub compact: bool,
    /// Search the product with the processes of a distributed run, where the implementation
    /// has a canonical encoding of at most two words and the model is traces, failures or
    /// failures-divergences: each call connects once (every process of the run makes the same
    /// checks in the same order). As with [`SystemOptions::compact`], a check that holds ends
    /// there; one that fails is searched again by the processes together, numbering the pairs
    /// as the engine does, and its counterexample is rebuilt from their parent records.
    /// Other checks run in every process alike. `dist` makes the searches (the CLI hands
    /// them in: `refine` knows nothing of processes).
    pub distributed: Option<SharedSearches>,
}

/// The shared searches of a distributed run ([`SystemOptions::distributed`]).
pub type SharedSearches = std::sync::Arc<dyn SharedPairSearch>;

impl SystemOptions {
    /// Whether a distributed run shares the searches.
    pub(crate) fn shares(&self) -> bool {
        self.distributed.is_some()
    }
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
    let run_opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
        ..Default::default()
    };
    let mut shared = false;
    let searched = if system_opts.shares() && compact::distributable(model, &nf) {
        compact::search_product_shared(&nf, &events, imp, model, system_opts, &run_opts, stop)?
    } else {
        None
    };
    let searched = match searched {
        Some(searched) => {
            shared = true;
            Some(searched)
        }
        None if system_opts.compact => {
            compact::search_in_process(engine, &nf, &events, imp, model, &run_opts, stop)
        }
        None => None,
    };
    if let Some(searched) = searched {
        if let Some(reason) = searched.stopped {
            return Err(RefineError::Stopped(reason));
        }
        if !searched.violated {
            let mut stats = searched.stats;
            // A distributed check made its normal form whole: it counts the nodes that one
            // process's check, which makes them as its search asks, makes.
            stats.spec_sets = if shared {
                nf.made_on_demand(&searched.marks)
            } else {
                nf.num_sets() as u64
            };
            stats.seconds = start.elapsed().as_secs_f64();
            return Ok(SystemCheck {
                result: CheckResult {
                    model,
                    counterexample: None,
                    stats,
                },
                impl_state: None,
                impl_path: Vec::new(),
            });
        }
        // A violation: the indexed search finds it at the same level, with its canonical
        // counterexample; in a distributed run, the processes together.
        if shared {
            if let Some(found) = compact::search_product_witness_shared(
                &nf,
                &events,
                imp,
                model,
                !opts.no_antichain,
                system_opts,
                &run_opts,
                stop,
            )? {
                return shared_counterexample(spec, &nf, &events, imp, model, found, stop, start);
            }
        }
    }
    let product = Product::new(&nf, &events, imp, model, stop).limited_to(system_opts.max_pairs);
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
    let mut stats = run_stats(&run, nf.num_sets() as u64, engine);
    stats.shared = shared;
    let mut impl_state = None;
    let mut impl_path = Vec::new();
    let counterexample = run.witness.as_ref().map(|w| {
        let path: Vec<(Label, (u32, I::State))> = run
            .path_to(w.id)
            .into_iter()
            .map(|(label, id)| (label, run.state(id).clone()))
            .collect();
        let built = witness::counterexample_of(
            &witness::Found {
                spec,
                nf: &nf,
                events: &events,
                product: &product,
                model,
            },
            &path,
            run.state(w.id),
            w.id.0,
            &w.witness,
        );
        impl_path = built.1;
        impl_state = Some(run.state(w.id).1.clone());
        built.0
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

/// The result of a failing check whose counterexample the processes of a distributed run
/// rebuilt ([`compact::search_product_witness_shared`]), replayed on both systems.
#[allow(clippy::too_many_arguments)]
fn shared_counterexample<I: TransitionSystem>(
    spec: &Lts,
    nf: &SharedNormalForm<'_>,
    events: &SpecEvents,
    imp: &I,
    model: Model,
    found: compact::SharedWitness<I::State>,
    stop: &StopSignal,
    start: Instant,
) -> Result<SystemCheck<I::State>, RefineError> {
    let product = Product::new(nf, events, imp, model, stop);
    let searched = &found.search;
    let id = searched.witness.as_ref().map_or(0, |w| w.id);
    let (counterexample, impl_path) = witness::counterexample_of(
        &witness::Found {
            spec,
            nf,
            events,
            product: &product,
            model,
        },
        &found.path,
        &found.pair,
        id,
        &found.witness,
    );
    let pairs = searched.pairs;
    let stats = CheckStats {
        pairs_explored: pairs,
        pairs_discovered: pairs,
        max_working: searched.widest_level,
        antichain_hits: searched.transitions.saturating_sub(pairs.saturating_sub(1)),
        antichain_misses: pairs,
        max_antichain: searched.most_held,
        transitions: searched.transitions,
        // As one process's check counts them (the normal form here was made whole).
        spec_sets: nf.made_on_demand(&searched.marks),
        pair_bytes: None,
        seconds: start.elapsed().as_secs_f64(),
        levels: searched.levels,
        threads: searched.workers,
        shared: true,
    };
    replay::replay_run(spec, imp, model, &counterexample, &impl_path)
        .map_err(RefineError::ReplayFailed)?;
    Ok(SystemCheck {
        result: CheckResult {
            model,
            counterexample: Some(counterexample),
            stats,
        },
        impl_state: Some(found.pair.1),
        impl_path,
    })
}

/// The statistics of a product search (time not filled in).
pub(crate) fn run_stats<S, W>(run: &Run<S, W>, spec_sets: u64, engine: &Engine) -> CheckStats {
    // A frontier-only run holds its last level only: count pairs from its statistics.
    let pairs = run.stats.states;
    CheckStats {
        pairs_explored: pairs,
        pairs_discovered: pairs,
        max_working: run
            .level_starts
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) as u64)
            .chain(std::iter::once(
                pairs - run.level_starts.last().map_or(0, |id| id.0 as u64),
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
        spec_sets,
        pair_bytes: None,
        seconds: 0.0,
        levels: run.stats.levels,
        threads: engine.threads().get(),
        shared: false,
    }
}
