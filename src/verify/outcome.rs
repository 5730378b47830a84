//! What an assertion run tells of each assertion: its [`Verdict`], the [`Witness`] that explains
//! it, the [`AssertionResult`] with the search's figures, and the [`Summary`] of a run.

#![forbid(unsafe_code)]

use serde::Serialize;

use crate::csp::{Assertion, ComponentState, CspError, Location};
use crate::explore::{ExploreError, StopReason};
use crate::refine::properties::PropertyCounterexample;
use crate::refine::Counterexample;

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
        /// The counterexample (its `impl_state` is the canonical id of the product pair).
        #[serde(flatten)]
        counterexample: Counterexample,
        /// The implementation's state where it shows, printed as CSPm.
        process: String,
        /// The same state, one entry per component of its parallel composition.
        components: Vec<ComponentState>,
    },
    /// A counterexample to deadlock freedom, divergence freedom, determinism or `has trace`.
    Property {
        /// The counterexample.
        #[serde(flatten)]
        counterexample: PropertyCounterexample,
        /// The process state where it shows, printed as CSPm.
        process: String,
        /// The same state, one entry per component of its parallel composition.
        components: Vec<ComponentState>,
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
    /// States searched: product pairs for a refinement, states of the process otherwise; 0
    /// when nothing was searched.
    pub states: u64,
    /// Transitions seen by the search.
    pub transitions: u64,
    /// Breadth-first levels of the search.
    pub levels: u32,
    /// Worker threads.
    pub threads: usize,
    /// The process's peak resident memory in bytes when the assertion ended (Linux).
    pub peak_memory: Option<u64>,
    /// Bytes of the compact set of product pairs, when the search kept one (a refinement
    /// that holds, see [`VerifyOptions::compact`]).
    pub visited_bytes: Option<u64>,
    /// Whether the processes of a distributed run searched the assertion together (a
    /// failing one's counterexample is then searched for again in each process).
    pub shared: bool,
    /// Wall-clock time of the assertion.
    pub seconds: f64,
}

impl AssertionResult {
    /// The result of `assertion` before it is checked (verdict `Holds`, no statistics).
    pub(super) fn unchecked(assertion: &Assertion) -> AssertionResult {
        AssertionResult {
            text: assertion.text.clone(),
            location: assertion.location.clone(),
            negated: assertion.negated,
            verdict: Verdict::Holds,
            witness: None,
            states: 0,
            transitions: 0,
            levels: 0,
            threads: 0,
            peak_memory: None,
            visited_bytes: None,
            shared: false,
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
