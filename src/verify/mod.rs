//! The assertion run of a CSPm script: every assertion checked in order, each with its own
//! verdict, error or stop, none lost to another.
//!
//! All searches of a run share one [`Engine`] (one pool of worker threads). A refinement
//! explores its specification into an explicit LTS (its normal form needs it) and checks the
//! implementation on the fly: the product of the normal form and the implementation is searched
//! breadth first and the check ends with the first level that holds a violation
//! ([`crate::refine::check_system`]). Deadlock and divergence freedom are searched on the fly
//! too, and so are determinism and `has trace`. Ids are canonical, so verdicts,
//! counts and counterexamples are the same at every thread count. Each process is made into a
//! system once and explored at most once, and both are kept for later assertions. `assert not`
//! inverts the verdict.
//!
//! An assertion that cannot be evaluated (an error in a definition it uses, a construct weft
//! does not support) is reported as an error and the next one is checked. An assertion stopped
//! by a limit (states, memory, time) is reported as stopped, never with a verdict; each
//! assertion gets the whole time limit and a fresh stop signal.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::csp::lexer::Model as CspModel;
use crate::csp::{
    Assertion, AssertionCheck, CspError, CspState, CspSystem, Proc, Script, SystemMaker,
};
use crate::explore::limits::peak_resident_bytes;
use crate::explore::{
    explore_on, Engine, ExploreOptions, LevelObserver, LevelReport, ResourceLimits, StopReason,
    StopSignal, Watchdog,
};
use crate::lts::Lts;
use crate::refine::properties::HasTrace;
use crate::refine::{
    check_system, search_determinism, search_property, search_trace, CheckOptions, Model, Property,
    PropertySearch, RefineError, SystemOptions,
};
use crate::threads::Threads;

mod outcome;

pub use outcome::{AssertionResult, Summary, Verdict, VerifyError, Witness};

/// Receives the [`Progress`] of an assertion run.
pub type ProgressObserver = Arc<dyn Fn(Progress<'_>) + Send + Sync>;

/// Options of an assertion run.
#[derive(Clone)]
pub struct VerifyOptions {
    /// Worker threads of the explorer.
    pub threads: Threads,
    /// Stop exploring a process after this many states.
    pub max_states: Option<u64>,
    /// Stop a search when the process's resident memory exceeds this many bytes.
    pub max_memory: Option<u64>,
    /// Stop an assertion after this long (each assertion gets the whole time).
    pub timeout: Option<Duration>,
    /// Told when a process starts and ends being explored, and of each level (for a progress
    /// line).
    pub progress: Option<ProgressObserver>,
    /// Search the product of a refinement compactly first where the implementation allows it
    /// ([`crate::refine::SystemOptions::compact`]).
    pub compact: bool,
    /// Search the products of refinements with the processes of a distributed run
    /// ([`crate::refine::SystemOptions::distributed`]).
    pub distributed: Option<crate::refine::SharedSearches>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            threads: Threads::all_cores(),
            max_states: None,
            max_memory: None,
            timeout: None,
            progress: None,
            compact: true,
            distributed: None,
        }
    }
}

/// What an assertion run is doing, for progress reports.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// A process starts being explored (printed as CSPm, possibly long).
    Exploring(&'a str),
    /// An assertion starts being checked on the fly (its text).
    Checking(&'a str),
    /// The exploration or check finished a level (its `states` are product pairs in a
    /// refinement check).
    Level(LevelReport),
    /// The exploration or check ended.
    Explored,
}

/// A specification explored: its LTS (ids canonical).
struct Explored {
    lts: Lts,
}

/// Why a check ended without a verdict.
enum Interrupted {
    Error(VerifyError),
    Stopped(StopReason, u64),
}

impl<E: Into<VerifyError>> From<E> for Interrupted {
    fn from(e: E) -> Self {
        Interrupted::Error(e.into())
    }
}

/// Runs the assertions of a loaded script.
pub struct AssertionRun {
    script: Arc<Script>,
    opts: VerifyOptions,
    /// The workers of every search of the run (started on first use).
    engine: Option<Result<Arc<Engine>, VerifyError>>,
    /// Every process made into a system so far, or the error that kept it from being one.
    systems: HashMap<Proc, Result<Arc<CspSystem>, VerifyError>>,
    /// What makes the systems, shared by them all: each leaf process is explored once and
    /// each compression made once in the run (made again after a stop).
    maker: Option<SystemMaker>,
    /// Leaves explored by the makers dropped so far.
    leaf_explorations: u64,
    /// Every process explored so far, or the error its exploration ended with (assertions
    /// often share processes).
    explored: HashMap<Proc, Result<Arc<Explored>, VerifyError>>,
    /// States (or pairs) known at the end of the last level of the running search: what a
    /// stopped search reports.
    reached: Arc<AtomicU64>,
}

/// A search's own figures, for the assertion's result.
#[derive(Default)]
struct Searched {
    states: u64,
    transitions: u64,
    levels: u32,
    /// Bytes of the set of pairs, when the product was kept compactly.
    visited_bytes: Option<u64>,
    /// Whether the processes of a distributed run searched together.
    shared: bool,
}

impl AssertionRun {
    /// A run of `script`'s assertions with `opts`.
    pub fn new(script: Arc<Script>, opts: VerifyOptions) -> Self {
        AssertionRun {
            script,
            opts,
            engine: None,
            systems: HashMap::new(),
            maker: None,
            leaf_explorations: 0,
            explored: HashMap::new(),
            reached: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Checks every assertion in order, calling `each` with each result as soon as it is
    /// known; returns them all. After an interrupt ([`crate::explore::limits::request_interrupt`])
    /// the assertions not yet checked are reported as stopped, unchecked.
    pub fn run_all(&mut self, mut each: impl FnMut(&AssertionResult)) -> Vec<AssertionResult> {
        let script = self.script.clone();
        script
            .assertions()
            .iter()
            .map(|a| {
                let r = if crate::explore::limits::interrupt_requested() {
                    AssertionResult {
                        verdict: Verdict::Stopped {
                            reason: StopReason::Interrupted,
                            states: 0,
                        },
                        ..AssertionResult::unchecked(a)
                    }
                } else {
                    self.check(a)
                };
                each(&r);
                r
            })
            .collect()
    }

    /// Checks one assertion.
    pub fn check(&mut self, assertion: &Assertion) -> AssertionResult {
        let started = Instant::now();
        let stop = StopSignal::new();
        let limits = ResourceLimits {
            // Memory freed by earlier searches stays with the allocator for reuse: the budget
            // is never below what the process already holds.
            max_memory: self
                .opts
                .max_memory
                .map(|m| m.max(crate::explore::limits::resident_bytes().unwrap_or(0))),
            deadline: self.opts.timeout.map(|t| started + t),
            interruptible: true,
        };
        let watchdog = Watchdog::start(limits, &stop);
        let outcome = self.decide(assertion, &stop);
        drop(watchdog);
        let mut result = AssertionResult::unchecked(assertion);
        result.threads = self.opts.threads.get();
        match outcome {
            Ok(decided) => {
                let holds = decided.inner_holds != assertion.negated;
                result.verdict = if holds {
                    Verdict::Holds
                } else {
                    Verdict::Fails
                };
                // The witness explains a failure; for a holding `assert not`, it is the inner
                // property's counterexample, which explains why it holds.
                if !holds || assertion.negated {
                    result.witness = decided.witness;
                }
                result.states = decided.searched.states;
                result.transitions = decided.searched.transitions;
                result.levels = decided.searched.levels;
                result.visited_bytes = decided.searched.visited_bytes;
                result.shared = decided.searched.shared;
            }
            Err(Interrupted::Error(e)) => result.verdict = Verdict::Error(e),
            Err(Interrupted::Stopped(reason, states)) => {
                if reason == StopReason::MemoryLimit {
                    // Let the next assertion have the memory the kept processes hold.
                    self.explored.clear();
                }
                // A system may keep a compression the stop cut short (it stays in its slot,
                // to be met when a search next reaches it): the next assertion makes its
                // systems again.
                self.systems.clear();
                self.drop_maker();
                result.verdict = Verdict::Stopped { reason, states };
                result.states = states;
            }
        }
        result.peak_memory = peak_resident_bytes();
        result.seconds = started.elapsed().as_secs_f64();
        result
    }

    /// The engine of the run.
    fn engine(&mut self) -> Result<Arc<Engine>, VerifyError> {
        let threads = self.opts.threads;
        self.engine
            .get_or_insert_with(|| {
                Engine::new(threads)
                    .map(Arc::new)
                    .map_err(VerifyError::from)
            })
            .clone()
    }

    /// `process` as a system (made once per process).
    fn system(&mut self, process: &Proc, stop: &StopSignal) -> Result<Arc<CspSystem>, Interrupted> {
        if let Some(s) = self.systems.get(process) {
            if let Ok(system) = s {
                system.set_stop(stop);
            }
            return s.clone().map_err(Interrupted::Error);
        }
        let maker = match &self.maker {
            Some(maker) => maker,
            None => match SystemMaker::new(&self.script) {
                Ok(maker) => self.maker.insert(maker),
                Err(e) => return Err(Interrupted::Error(e.into())),
            },
        };
        let made = maker.system(process, stop);
        if let Err(e) = &made {
            if e.kind == crate::csp::ErrorKind::Stopped {
                // Stopped by this assertion's limits: the next one makes it again.
                return Err(Interrupted::Stopped(
                    stop.reason().unwrap_or(StopReason::Interrupted),
                    0,
                ));
            }
        }
        let made = made.map(Arc::new).map_err(VerifyError::from);
        self.systems.insert(process.clone(), made.clone());
        made.map_err(Interrupted::Error)
    }

    /// Drops the maker of systems (its stopped compressions with it).
    fn drop_maker(&mut self) {
        if let Some(maker) = self.maker.take() {
            self.leaf_explorations += maker.leaf_explorations();
        }
    }

    /// Number of processes explored on their own (the leaves of networks, and processes
    /// explored whole) when the run's systems were made: a leaf met by several systems is
    /// explored once (again after a stop).
    pub fn leaf_explorations(&self) -> u64 {
        self.leaf_explorations + self.maker.as_ref().map_or(0, |m| m.leaf_explorations())
    }

    /// After a search of `system`: the evaluation error it met, if any (the search's result
    /// is then void, and so is the system for later assertions). A compression stopped by
    /// `stop` is a stop, and the system is made again for the next assertion.
    fn system_error(
        &mut self,
        process: &Proc,
        system: &CspSystem,
        stop: &StopSignal,
    ) -> Result<(), Interrupted> {
        match system.take_error() {
            None => Ok(()),
            Some(e) if e.kind == crate::csp::ErrorKind::Stopped => {
                self.systems.remove(process);
                // Ordering: Relaxed; the search has ended.
                Err(Interrupted::Stopped(
                    stop.reason().unwrap_or(StopReason::Interrupted),
                    self.reached.load(Ordering::Relaxed),
                ))
            }
            Some(e) => {
                let e = VerifyError::from(e);
                self.systems.insert(process.clone(), Err(e.clone()));
                self.explored.insert(process.clone(), Err(e.clone()));
                Err(Interrupted::Error(e))
            }
        }
    }

    /// A level observer that keeps the count of states reached and reports progress.
    fn on_level(&self) -> Option<LevelObserver> {
        let progress = self.opts.progress.clone();
        let reached = self.reached.clone();
        // Ordering: Relaxed; read after the search.
        reached.store(0, Ordering::Relaxed);
        Some(Arc::new(move |r: &LevelReport| {
            reached.store(r.states, Ordering::Relaxed);
            if let Some(p) = &progress {
                p(Progress::Level(*r));
            }
        }))
    }

    /// A refinement or property search's failure as a stop (with the states it reached) or
    /// an error.
    fn stopped_or_error(&self, e: RefineError) -> Interrupted {
        match e {
            // Ordering: Relaxed; the search has ended.
            RefineError::Stopped(reason) => {
                Interrupted::Stopped(reason, self.reached.load(Ordering::Relaxed))
            }
            e => Interrupted::Error(VerifyError::Checker(e.to_string())),
        }
    }

    /// Explores `process` into an LTS (once per process).
    fn explore(&mut self, process: &Proc, stop: &StopSignal) -> Result<Arc<Explored>, Interrupted> {
        if let Some(e) = self.explored.get(process) {
            return e.clone().map_err(Interrupted::Error);
        }
        let result = self.explore_uncached(process, stop);
        match &result {
            Ok(explored) => {
                self.explored.insert(process.clone(), Ok(explored.clone()));
            }
            Err(Interrupted::Error(e)) => {
                self.explored.insert(process.clone(), Err(e.clone()));
            }
            // A stopped exploration may finish under another assertion's limits.
            Err(Interrupted::Stopped(..)) => {}
        }
        result
    }

    fn explore_uncached(
        &mut self,
        process: &Proc,
        stop: &StopSignal,
    ) -> Result<Arc<Explored>, Interrupted> {
        let system = self.system(process, stop)?;
        let engine = self.engine()?;
        let progress = self.opts.progress.clone();
        if let Some(p) = &progress {
            p(Progress::Exploring(&self.script.show_proc(process)));
        }
        let opts = ExploreOptions {
            threads: self.opts.threads,
            record_transitions: true,
            max_states: self.opts.max_states,
            on_level: self.on_level(),
            ..Default::default()
        };
        let exploration = explore_on(&engine, &*system, &opts, stop);
        if let Some(p) = &progress {
            p(Progress::Explored);
        }
        self.system_error(process, &system, stop)?;
        if let Some(reason) = exploration.stats.stopped {
            return Err(Interrupted::Stopped(reason, exploration.stats.states));
        }
        let lts = exploration.to_lts(&*system);
        Ok(Arc::new(Explored { lts }))
    }

    /// Options of an on-the-fly search, telling progress that `assertion` is being checked.
    fn search_options(&self, assertion: &Assertion) -> SystemOptions {
        if let Some(p) = &self.opts.progress {
            p(Progress::Checking(&assertion.text));
        }
        SystemOptions {
            max_pairs: self.opts.max_states,
            on_level: self.on_level(),
            compact: self.opts.compact,
            distributed: self.opts.distributed.clone(),
        }
    }

    fn searched(&self) {
        if let Some(p) = &self.opts.progress {
            p(Progress::Explored);
        }
    }

    /// The verdict of the assertion without `not`, its witness and the search's figures.
    fn decide(&mut self, assertion: &Assertion, stop: &StopSignal) -> Result<Decided, Interrupted> {
        let check = assertion_check(assertion)?;
        let decided = self.decide_check(assertion, check, stop)?;
        let (processes, model) = match check {
            AssertionCheck::Refinement { spec, model, imp } => (vec![spec, imp], model_of(*model)),
            AssertionCheck::DeadlockFree { process, model }
            | AssertionCheck::Deterministic { process, model }
            | AssertionCheck::HasTrace { process, model, .. } => (vec![process], model_of(*model)),
            AssertionCheck::DivergenceFree { process } => {
                (vec![process], crate::refine::Model::FailuresDivergences)
            }
        };
        self.compressions_valid_in(&processes, model)?;
        Ok(decided)
    }

    /// An error if a compression that the systems of `processes` applied is not valid in
    /// `model` (FDR refuses such a check: the compressed process may behave differently there).
    fn compressions_valid_in(
        &self,
        processes: &[&Proc],
        model: crate::refine::Model,
    ) -> Result<(), Interrupted> {
        for &p in processes {
            let Some(Ok(system)) = self.systems.get(p) else {
                continue;
            };
            if let Some(c) = system
                .compressions()
                .into_iter()
                .find(|c| !c.valid_in(model))
            {
                return Err(Interrupted::Error(VerifyError::Script(
                    CspError::unpositioned(
                        crate::csp::ErrorKind::Unsupported,
                        format!(
                            "`{}` is valid only in the models {}, and this assertion is in the {} \
                         model: its verdict could differ from the uncompressed process's",
                            c.name(),
                            c.valid_models(),
                            model.name()
                        ),
                    ),
                )));
            }
        }
        Ok(())
    }

    fn decide_check(
        &mut self,
        assertion: &Assertion,
        check: &AssertionCheck,
        stop: &StopSignal,
    ) -> Result<Decided, Interrupted> {
        let decided = match check {
            AssertionCheck::Refinement { spec, model, imp } => {
                let spec = self.explore(spec, stop)?;
                let system = self.system(imp, stop)?;
                let engine = self.engine()?;
                let opts = CheckOptions {
                    model: model_of(*model),
                    threads: self.opts.threads,
                    ..CheckOptions::default()
                };
                let system_opts = self.search_options(assertion);
                let checked = check_system(&engine, &spec.lts, &*system, &opts, &system_opts, stop);
                self.searched();
                self.system_error(imp, &system, stop)?;
                let checked = checked.map_err(|e| self.stopped_or_error(e))?;
                let stats = &checked.result.stats;
                let searched = Searched {
                    states: stats.pairs_discovered,
                    transitions: stats.transitions,
                    levels: stats.levels,
                    visited_bytes: stats.pair_bytes,
                    shared: stats.shared,
                };
                let witness = checked.result.counterexample.map(|c| {
                    let state = checked.impl_state.expect("a counterexample's state");
                    Witness::Refinement {
                        process: system.describe(state),
                        components: system.describe_components(state),
                        counterexample: c,
                    }
                });
                Decided {
                    inner_holds: witness.is_none(),
                    witness,
                    searched,
                }
            }
            AssertionCheck::DeadlockFree { process, model } => {
                let tick = Some(crate::csp::TICK);
                self.search(
                    assertion,
                    process,
                    Property::DeadlockFree(model_of(*model)),
                    tick,
                    stop,
                )?
            }
            AssertionCheck::DivergenceFree { process } => {
                let tick = Some(crate::csp::TICK);
                self.search(assertion, process, Property::DivergenceFree, tick, stop)?
            }
            AssertionCheck::Deterministic { process, model } => {
                let system = self.system(process, stop)?;
                let engine = self.engine()?;
                let system_opts = self.search_options(assertion);
                let model = model_of(*model);
                let searched = search_determinism(&engine, &*system, model, &system_opts, stop);
                self.searched();
                self.system_error(process, &system, stop)?;
                let searched = searched.map_err(|e| self.stopped_or_error(e))?;
                Decided::searched(searched, &system)
            }
            AssertionCheck::HasTrace {
                process,
                model,
                trace,
            } => {
                let system = self.system(process, stop)?;
                let engine = self.engine()?;
                let system_opts = self.search_options(assertion);
                let names: Vec<String> = trace.iter().map(|v| self.script.show(v)).collect();
                let model = model_of(*model);
                let searched = search_trace(&engine, &*system, &names, model, &system_opts, stop);
                self.searched();
                self.system_error(process, &system, stop)?;
                let found = searched.map_err(|e| self.stopped_or_error(e))?;
                let searched = Searched {
                    states: found.states,
                    transitions: found.transitions,
                    levels: found.levels,
                    visited_bytes: None,
                    shared: found.shared,
                };
                match found.outcome {
                    HasTrace::Performs(path) => Decided {
                        inner_holds: true,
                        witness: Some(Witness::Trace {
                            trace: path.trace,
                            kind: "trace",
                            state: path.state,
                            process: system.describe(found.state),
                        }),
                        searched,
                    },
                    HasTrace::Cannot(cex) => Decided {
                        inner_holds: false,
                        witness: Some(Witness::Property {
                            process: system.describe(found.state),
                            components: system.describe_components(found.state),
                            counterexample: cex,
                        }),
                        searched,
                    },
                }
            }
        };
        Ok(decided)
    }

    /// Searches `process` on the fly for a violation of `property`.
    fn search(
        &mut self,
        assertion: &Assertion,
        process: &Proc,
        property: Property,
        tick: Option<crate::ts::Label>,
        stop: &StopSignal,
    ) -> Result<Decided, Interrupted> {
        let system = self.system(process, stop)?;
        let engine = self.engine()?;
        let system_opts = self.search_options(assertion);
        let searched = search_property(&engine, &*system, property, tick, &system_opts, stop);
        self.searched();
        self.system_error(process, &system, stop)?;
        let searched = searched.map_err(|e| self.stopped_or_error(e))?;
        Ok(Decided::searched(searched, &system))
    }
}

/// The check of an assertion, or the error that keeps it from being checked.
fn assertion_check(assertion: &Assertion) -> Result<&AssertionCheck, CspError> {
    assertion.check.as_ref().map_err(Clone::clone)
}

/// The verdict of an assertion without `not`.
struct Decided {
    inner_holds: bool,
    witness: Option<Witness>,
    searched: Searched,
}

impl Decided {
    /// The verdict of a property search on `system`.
    fn searched(searched: PropertySearch<CspState>, system: &CspSystem) -> Decided {
        let witness = searched.counterexample.map(|c| {
            let state = searched.state.expect("a counterexample's state");
            Witness::Property {
                process: system.describe(state),
                components: system.describe_components(state),
                counterexample: c,
            }
        });
        Decided {
            inner_holds: witness.is_none(),
            witness,
            searched: Searched {
                states: searched.states,
                transitions: searched.transitions,
                levels: searched.levels,
                visited_bytes: searched.visited_bytes,
                shared: searched.shared,
            },
        }
    }
}

fn model_of(m: CspModel) -> Model {
    match m {
        CspModel::Traces => Model::Traces,
        CspModel::Failures => Model::Failures,
        CspModel::FailuresDivergences => Model::FailuresDivergences,
        CspModel::Revivals => Model::Revivals,
        CspModel::RevivalsDivergences => Model::RevivalsDivergences,
        CspModel::RefusalTesting => Model::RefusalTesting,
        CspModel::RefusalTestingDivergences => Model::RefusalTestingDivergences,
    }
}
