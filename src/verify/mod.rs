//! The assertion run of a CSPm script: every assertion checked in order, each with its own
//! verdict, error or stop, none lost to another.
//!
//! Each process an assertion names is explored once (in parallel) into an explicit LTS,
//! renumbered canonically (so counterexamples do not depend on the thread count), and kept for
//! the later assertions that name it; a refinement runs the antichain checker on the two LTSs,
//! the other assertions run the checks of [`crate::refine::properties`]. `assert not` inverts
//! the verdict.
//!
//! An assertion that cannot be evaluated (an error in a definition it uses, a construct weft
//! does not support) is reported as an error and the next one is checked. An assertion stopped
//! by a limit (states, memory, time) is reported as stopped, never with a verdict; each
//! assertion gets the whole time limit and a fresh stop signal.

#![forbid(unsafe_code)]

mod numbering;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::csp::lexer::Model as CspModel;
use crate::csp::{
    Assertion, AssertionCheck, CspError, CspState, CspSystem, Location, Proc, Script,
};
use crate::explore::{
    try_explore, ExploreError, ExploreOptions, LevelObserver, ResourceLimits, StopReason,
    StopSignal, Watchdog,
};
use crate::lts::Lts;
use crate::refine::properties::{
    deadlock_free, deterministic, divergence_free, has_trace, tick_label, HasTrace,
    PropertyCounterexample,
};
use crate::refine::{check_until, CheckOptions, Counterexample, Model, RefineError};

/// Receives the [`Progress`] of an assertion run.
pub type ProgressObserver = Arc<dyn Fn(Progress<'_>) + Send + Sync>;

/// Options of an assertion run.
#[derive(Clone)]
pub struct VerifyOptions {
    /// Worker threads of the explorer (at least 1).
    pub threads: usize,
    /// Stop exploring a process after this many states.
    pub max_states: Option<u64>,
    /// Stop a search when the process's resident memory exceeds this many bytes.
    pub max_memory: Option<u64>,
    /// Stop an assertion after this long (each assertion gets the whole time).
    pub timeout: Option<Duration>,
    /// Told when a process starts and ends being explored, and of each level (for a progress
    /// line).
    pub progress: Option<ProgressObserver>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            threads: num_cpus::get(),
            max_states: None,
            max_memory: None,
            timeout: None,
            progress: None,
        }
    }
}

/// What an assertion run is doing, for progress reports.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// A process starts being explored (printed as CSPm, possibly long).
    Exploring(&'a str),
    /// The exploration finished a level.
    Level {
        /// Levels done.
        levels: u32,
        /// States known.
        states: u64,
        /// Transitions seen.
        transitions: u64,
    },
    /// The exploration ended.
    Explored,
}

/// Why an assertion has no verdict because of an error.
#[derive(Clone, Debug, thiserror::Error)]
pub enum VerifyError {
    /// An error in the script (positioned when the front end knows where).
    #[error(transparent)]
    Script(#[from] CspError),
    /// The checker could not run (for example, worker threads could not be started), or an
    /// internal check failed.
    #[error("{0}")]
    Checker(String),
}

impl From<ExploreError> for VerifyError {
    fn from(e: ExploreError) -> Self {
        VerifyError::Checker(e.to_string())
    }
}

/// The outcome of one assertion.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// The assertion holds.
    Holds,
    /// The assertion fails.
    Fails,
    /// The assertion could not be checked.
    Error(VerifyError),
    /// A limit or an interrupt stopped the check: no verdict.
    Stopped {
        /// Which limit.
        reason: StopReason,
        /// States explored when it stopped (of the process being explored; 0 when the stop
        /// came in the refinement search).
        states: u64,
    },
}

impl Verdict {
    /// `holds`, `fails`, `error` or `stopped`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
            Verdict::Error(_) => "error",
            Verdict::Stopped { .. } => "stopped",
        }
    }
}

/// What explains a verdict: why an assertion fails, or, for an `assert not` that holds, why
/// the property without `not` fails.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Witness {
    /// A refinement counterexample.
    Refinement {
        /// The counterexample.
        #[serde(flatten)]
        counterexample: Counterexample,
        /// The implementation's state where it shows, printed as CSPm.
        process: String,
    },
    /// A counterexample to deadlock freedom, divergence freedom, determinism or `has trace`.
    Property {
        /// The counterexample.
        #[serde(flatten)]
        counterexample: PropertyCounterexample,
        /// The process state where it shows, printed as CSPm.
        process: String,
    },
    /// The process performs the trace of a `has trace` assertion.
    Trace {
        /// The trace performed.
        trace: Vec<String>,
        /// Always `trace`.
        kind: &'static str,
        /// The state reached (canonical number).
        state: u32,
        /// The state reached, printed as CSPm.
        process: String,
    },
}

/// The result of one assertion.
#[derive(Clone, Debug)]
pub struct AssertionResult {
    /// The assertion as written (without `assert`).
    pub text: String,
    /// Where it is.
    pub location: Location,
    /// Whether it is `assert not`.
    pub negated: bool,
    /// The outcome.
    pub verdict: Verdict,
    /// The explanation of the verdict (see [`Witness`]).
    pub witness: Option<Witness>,
    /// States of the process checked (the implementation of a refinement); 0 when it was not
    /// explored.
    pub states: u64,
    /// Its transitions.
    pub transitions: u64,
    /// Wall-clock time of the assertion.
    pub seconds: f64,
}

impl AssertionResult {
    /// The result of `assertion` before it is checked (verdict `Holds`, no statistics).
    fn unchecked(assertion: &Assertion) -> AssertionResult {
        AssertionResult {
            text: assertion.text.clone(),
            location: assertion.location.clone(),
            negated: assertion.negated,
            verdict: Verdict::Holds,
            witness: None,
            states: 0,
            transitions: 0,
            seconds: 0.0,
        }
    }
}

/// How many assertions ended how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Assertions that hold.
    pub holds: usize,
    /// Assertions that fail.
    pub fails: usize,
    /// Assertions that could not be checked.
    pub errors: usize,
    /// Assertions stopped by a limit.
    pub stopped: usize,
}

impl Summary {
    /// Counts the verdicts of `results`.
    pub fn of(results: &[AssertionResult]) -> Summary {
        let mut s = Summary::default();
        for r in results {
            match r.verdict {
                Verdict::Holds => s.holds += 1,
                Verdict::Fails => s.fails += 1,
                Verdict::Error(_) => s.errors += 1,
                Verdict::Stopped { .. } => s.stopped += 1,
            }
        }
        s
    }

    /// The number of assertions.
    pub fn total(&self) -> usize {
        self.holds + self.fails + self.errors + self.stopped
    }

    /// The exit code: 2 if an assertion erred or was stopped, else 1 if one fails, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.errors + self.stopped > 0 {
            2
        } else if self.fails > 0 {
            1
        } else {
            0
        }
    }
}

impl std::fmt::Display for Summary {
    /// `5 assertions: 3 hold, 1 fails, 1 error` (parts that are zero left out, but for holds).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.total();
        write!(
            f,
            "{n} assertion{}: {} hold{}",
            if n == 1 { "" } else { "s" },
            self.holds,
            if self.holds == 1 { "s" } else { "" }
        )?;
        if self.fails > 0 {
            write!(
                f,
                ", {} fail{}",
                self.fails,
                if self.fails == 1 { "s" } else { "" }
            )?;
        }
        if self.errors > 0 {
            write!(
                f,
                ", {} error{}",
                self.errors,
                if self.errors == 1 { "" } else { "s" }
            )?;
        }
        if self.stopped > 0 {
            write!(f, ", {} stopped (no verdict)", self.stopped)?;
        }
        Ok(())
    }
}

/// A process explored: its canonically numbered LTS and the process state of each LTS state.
struct Explored {
    system: CspSystem,
    states: Vec<CspState>,
    lts: Lts,
}

impl Explored {
    fn describe(&self, state: u32) -> String {
        self.states
            .get(state as usize)
            .map(|&s| self.system.describe(s))
            .unwrap_or_default()
    }
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
    /// Every process explored so far, or the error its exploration ended with (assertions
    /// often share processes).
    explored: HashMap<Proc, Result<Arc<Explored>, VerifyError>>,
}

impl AssertionRun {
    /// A run of `script`'s assertions with `opts`.
    pub fn new(script: Arc<Script>, opts: VerifyOptions) -> Self {
        AssertionRun {
            script,
            opts,
            explored: HashMap::new(),
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
                result.states = decided.checked.lts.num_states() as u64;
                result.transitions = decided.checked.lts.num_transitions();
            }
            Err(Interrupted::Error(e)) => result.verdict = Verdict::Error(e),
            Err(Interrupted::Stopped(reason, states)) => {
                if reason == StopReason::MemoryLimit {
                    // Let the next assertion have the memory the kept explorations hold.
                    self.explored.clear();
                }
                result.verdict = Verdict::Stopped { reason, states };
                result.states = states;
            }
        }
        result.seconds = started.elapsed().as_secs_f64();
        result
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
        &self,
        process: &Proc,
        stop: &StopSignal,
    ) -> Result<Arc<Explored>, Interrupted> {
        let system = CspSystem::new(&self.script, process)?;
        let progress = self.opts.progress.clone();
        if let Some(p) = &progress {
            p(Progress::Exploring(&self.script.show_proc(process)));
        }
        let on_level: Option<LevelObserver> = progress.clone().map(|p| {
            Arc::new(move |r: &crate::explore::LevelReport| {
                p(Progress::Level {
                    levels: r.level,
                    states: r.states,
                    transitions: r.transitions,
                })
            }) as LevelObserver
        });
        let opts = ExploreOptions {
            threads: self.opts.threads,
            record_transitions: true,
            max_states: self.opts.max_states,
            on_level,
        };
        let exploration = try_explore(&system, &opts, stop);
        if let Some(p) = &progress {
            p(Progress::Explored);
        }
        let exploration = exploration?;
        if let Some(e) = system.take_error() {
            return Err(e.into());
        }
        if let Some(reason) = exploration.stats.stopped {
            return Err(Interrupted::Stopped(reason, exploration.stats.states));
        }
        let lts = exploration.to_lts(&system);
        let (lts, states) =
            numbering::canonical_numbering(&lts, &exploration.states, |s| system.describe(s));
        Ok(Arc::new(Explored {
            system,
            states,
            lts,
        }))
    }

    /// The verdict of the assertion without `not`, its witness and the process checked.
    fn decide(&mut self, assertion: &Assertion, stop: &StopSignal) -> Result<Decided, Interrupted> {
        let check = assertion_check(assertion)?;
        let decided = match check {
            AssertionCheck::Refinement { spec, model, imp } => {
                let spec = self.explore(spec, stop)?;
                let imp = self.explore(imp, stop)?;
                let opts = CheckOptions {
                    model: model_of(*model),
                    ..CheckOptions::default()
                };
                let result = match check_until(&spec.lts, &imp.lts, &opts, stop) {
                    Ok(r) => r,
                    Err(RefineError::Stopped(reason)) => {
                        return Err(Interrupted::Stopped(reason, 0))
                    }
                    Err(e) => return Err(VerifyError::Checker(e.to_string()).into()),
                };
                let witness = result.counterexample.map(|c| Witness::Refinement {
                    process: imp.describe(c.impl_state),
                    counterexample: c,
                });
                Decided {
                    inner_holds: witness.is_none(),
                    witness,
                    checked: imp,
                }
            }
            AssertionCheck::DeadlockFree { process, model } => {
                let p = self.explore(process, stop)?;
                let cex = deadlock_free(&p.lts, model_of(*model), tick_label(&p.lts));
                Decided::property(cex, p)
            }
            AssertionCheck::DivergenceFree { process } => {
                let p = self.explore(process, stop)?;
                let cex = divergence_free(&p.lts);
                Decided::property(cex, p)
            }
            AssertionCheck::Deterministic { process, model } => {
                let p = self.explore(process, stop)?;
                let cex = deterministic(&p.lts, model_of(*model));
                Decided::property(cex, p)
            }
            AssertionCheck::HasTrace {
                process,
                model,
                trace,
            } => {
                let p = self.explore(process, stop)?;
                let names: Vec<String> = trace.iter().map(|v| self.script.show(v)).collect();
                match has_trace(&p.lts, &names, model_of(*model)) {
                    HasTrace::Performs(path) => Decided {
                        inner_holds: true,
                        witness: Some(Witness::Trace {
                            trace: path.trace,
                            kind: "trace",
                            state: path.state,
                            process: p.describe(path.state),
                        }),
                        checked: p,
                    },
                    HasTrace::Cannot(cex) => Decided::property(Some(cex), p),
                }
            }
        };
        Ok(decided)
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
    checked: Arc<Explored>,
}

impl Decided {
    fn property(cex: Option<PropertyCounterexample>, checked: Arc<Explored>) -> Decided {
        Decided {
            inner_holds: cex.is_none(),
            witness: cex.map(|c| Witness::Property {
                process: checked.describe(c.state),
                counterexample: c,
            }),
            checked,
        }
    }
}

fn model_of(m: CspModel) -> Model {
    match m {
        CspModel::Traces => Model::Traces,
        CspModel::Failures => Model::Failures,
        CspModel::FailuresDivergences => Model::FailuresDivergences,
    }
}
