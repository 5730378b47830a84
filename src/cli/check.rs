//! `weft check MODEL.csp`: checks every assertion of a CSPm script, in order.
//!
//! Each process an assertion names is explored once (in parallel) into an explicit LTS; a
//! refinement runs the antichain checker on the two LTSs, the other assertions run the
//! checks of `refine::properties`. `assert not` inverts the verdict. Exit code 0 if every
//! assertion holds, 1 if one fails, 2 on an error (a positioned message on stderr).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Result};
use clap::Args;
use serde::Serialize;

use super::refines::{angle, braces, explain_violation};
use super::{EXIT_ERROR, EXIT_FAILS, EXIT_HOLDS};
use weft::csp::lexer::Model as CspModel;
use weft::csp::{load_script, Assertion, AssertionCheck, CspError, CspState, CspSystem, Proc};
use weft::explore::{explore, ExploreOptions};
use weft::lts::Lts;
use weft::refine::properties::{
    deadlock_free, deterministic, divergence_free, has_trace, tick_label, HasTrace,
    PropertyCounterexample, PropertyViolation,
};
use weft::refine::{check, CheckOptions, Counterexample, Model};
use weft::ts::Label;

/// Arguments of `weft check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The CSPm script.
    model: PathBuf,
    /// Worker threads for exploring each process (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Stop exploring a process after this many states (exit code 2: the check is
    /// incomplete).
    #[arg(long)]
    max_states: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A process explored: its LTS and the process state of each LTS state.
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

/// What went wrong, in one of the two counterexample shapes.
enum Witness {
    Refinement(Counterexample),
    Property(PropertyCounterexample),
    /// `assert not P :[has trace]: t` fails: P has the trace (the path found).
    Trace {
        trace: Vec<String>,
        state: u32,
    },
}

/// The verdict of one assertion.
#[derive(Serialize)]
struct Outcome {
    assertion: String,
    line: u32,
    holds: bool,
    /// The counterexample when the assertion fails (`null` when it holds, and when a failed
    /// `assert not` has no finite witness).
    counterexample: Option<serde_json::Value>,
    /// States and transitions of the process checked (the implementation of a refinement).
    states: u64,
    transitions: u64,
    seconds: f64,
}

/// Runs `weft check`; returns the exit code.
pub fn run(args: &CheckArgs) -> Result<i32> {
    let threads = args.threads.unwrap_or_else(num_cpus::get);
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let script = match load_script(&args.model) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("{e}");
            return Ok(EXIT_ERROR);
        }
    };
    for note in script.notes() {
        eprintln!("{}: note: {}", note.location, note.message);
    }
    // Until the per-assertion report lands (src/verify/), an error in a definition fails the
    // check as loading did before.
    if let Some(e) = script.errors().first() {
        eprintln!("{e}");
        return Ok(EXIT_ERROR);
    }
    let mut checker = Checker {
        script: script.clone(),
        threads,
        max_states: args.max_states,
        explored: HashMap::new(),
    };
    let mut outcomes = Vec::new();
    let mut all_hold = true;
    for assertion in script.assertions() {
        let started = std::time::Instant::now();
        let (outcome, text) = match checker.check(assertion) {
            Ok(r) => r,
            Err(CheckError::Csp(e)) => {
                eprintln!("{e}");
                return Ok(EXIT_ERROR);
            }
            Err(CheckError::Limit(states)) => {
                eprintln!(
                    "{}: error: checking `{}`: stopped at the state limit ({states} states \
                     explored): the check is incomplete",
                    assertion.location, assertion.text
                );
                return Ok(EXIT_ERROR);
            }
            Err(CheckError::Other(e)) => {
                return Err(e.context(format!(
                    "{}: checking `{}`",
                    assertion.location, assertion.text
                )))
            }
        };
        let outcome = Outcome {
            seconds: started.elapsed().as_secs_f64(),
            ..outcome
        };
        all_hold &= outcome.holds;
        if !args.json {
            print!("{text}");
        }
        outcomes.push(outcome);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&serde_json::json!({ "assertions": outcomes }))?
        );
    } else if script.assertions().is_empty() {
        println!("{}: no assertions", args.model.display());
    }
    Ok(if all_hold { EXIT_HOLDS } else { EXIT_FAILS })
}

enum CheckError {
    /// An error in the script (positioned when the front end knows where).
    Csp(CspError),
    /// The state limit stopped the exploration of a process (states so far).
    Limit(u64),
    /// Anything else (an internal error of the checker).
    Other(anyhow::Error),
}

impl From<CspError> for CheckError {
    fn from(e: CspError) -> Self {
        CheckError::Csp(e)
    }
}

struct Checker {
    script: Arc<weft::csp::Script>,
    threads: usize,
    max_states: Option<u64>,
    /// Every process explored so far (assertions often share processes).
    explored: HashMap<Proc, Arc<Explored>>,
}

impl Checker {
    /// Explores `process` into an LTS (once per process).
    fn explore(&mut self, process: &Proc) -> Result<Arc<Explored>, CheckError> {
        if let Some(e) = self.explored.get(process) {
            return Ok(e.clone());
        }
        let system = CspSystem::new(&self.script, process)?;
        // One terminal line: the process's first characters.
        let shown = self.script.show_proc(process);
        let mut head: String = shown.chars().take(60).collect();
        if head.len() < shown.len() {
            head.push_str(" …");
        }
        let progress = super::progress::LevelProgress::start(&format!("exploring {head}"));
        let opts = ExploreOptions {
            threads: self.threads,
            record_transitions: true,
            max_states: self.max_states,
            on_level: progress.as_ref().map(|p| p.observer()),
        };
        let exploration = explore(&system, &opts);
        if let Some(p) = progress {
            p.finish();
        }
        if let Some(e) = system.take_error() {
            return Err(CheckError::Csp(e));
        }
        if !exploration.stats.complete {
            return Err(CheckError::Limit(exploration.stats.states));
        }
        let lts = exploration.to_lts(&system);
        let (lts, states) = canonical_numbering(&lts, &exploration.states, |s| system.describe(s));
        let explored = Arc::new(Explored {
            system,
            states,
            lts,
        });
        self.explored.insert(process.clone(), explored.clone());
        Ok(explored)
    }

    /// Checks one assertion: its outcome and its text report.
    fn check(&mut self, assertion: &Assertion) -> Result<(Outcome, String), CheckError> {
        let what = assertion
            .check
            .as_ref()
            .map_err(|e| CheckError::Csp(e.clone()))?;
        let (inner_holds, witness, checked) = match what {
            AssertionCheck::Refinement { spec, model, imp } => {
                let spec = self.explore(spec)?;
                let imp = self.explore(imp)?;
                let opts = CheckOptions {
                    model: model_of(*model),
                    ..CheckOptions::default()
                };
                let result =
                    check(&spec.lts, &imp.lts, &opts).map_err(|e| CheckError::Other(e.into()))?;
                let holds = result.holds();
                (holds, result.counterexample.map(Witness::Refinement), imp)
            }
            AssertionCheck::DeadlockFree { process, model } => {
                let p = self.explore(process)?;
                let cex = deadlock_free(&p.lts, model_of(*model), tick_label(&p.lts));
                (cex.is_none(), cex.map(Witness::Property), p)
            }
            AssertionCheck::DivergenceFree { process } => {
                let p = self.explore(process)?;
                let cex = divergence_free(&p.lts);
                (cex.is_none(), cex.map(Witness::Property), p)
            }
            AssertionCheck::Deterministic { process, model } => {
                let p = self.explore(process)?;
                let cex = deterministic(&p.lts, model_of(*model));
                (cex.is_none(), cex.map(Witness::Property), p)
            }
            AssertionCheck::HasTrace {
                process,
                model,
                trace,
            } => {
                let p = self.explore(process)?;
                let names: Vec<String> = trace.iter().map(|v| self.script.show(v)).collect();
                match has_trace(&p.lts, &names, model_of(*model)) {
                    HasTrace::Performs(path) => (
                        true,
                        Some(Witness::Trace {
                            trace: path.trace,
                            state: path.state,
                        }),
                        p,
                    ),
                    HasTrace::Cannot(cex) => (false, Some(Witness::Property(cex)), p),
                }
            }
        };
        let holds = inner_holds != assertion.negated;
        // The witness explains a failure (for a failed `assert not ... :[has trace]`, the
        // path performing the trace); for a holding `assert not`, it is the inner property's
        // counterexample, which explains why it holds.
        let counterexample = if holds {
            None
        } else {
            witness.as_ref().map(|w| witness_json(w, &checked))
        };
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{}: assert {}: {}",
            assertion.location.line,
            assertion.text,
            if holds { "holds" } else { "fails" }
        );
        if let Some(w) = witness.as_ref().filter(|_| !holds || assertion.negated) {
            if holds {
                let _ = writeln!(text, "  it holds because the property without `not` fails:");
            }
            explain(&mut text, w, &checked);
        }
        Ok((
            Outcome {
                assertion: assertion.text.clone(),
                line: assertion.location.line,
                holds,
                counterexample,
                states: checked.lts.num_states() as u64,
                transitions: checked.lts.num_transitions(),
                seconds: 0.0,
            },
            text,
        ))
    }
}

fn model_of(m: CspModel) -> Model {
    match m {
        CspModel::Traces => Model::Traces,
        CspModel::Failures => Model::Failures,
        CspModel::FailuresDivergences => Model::FailuresDivergences,
    }
}

/// The counterexample as JSON: `trace`, `kind` and the kind's fields, plus `process` (the
/// process state where it shows, printed as CSPm).
fn witness_json(w: &Witness, checked: &Explored) -> serde_json::Value {
    let (mut value, state) = match w {
        Witness::Refinement(c) => (serde_json::to_value(c), c.impl_state),
        Witness::Property(c) => (serde_json::to_value(c), c.state),
        Witness::Trace { trace, state } => (
            Ok(serde_json::json!({ "trace": trace, "kind": "trace", "state": state })),
            *state,
        ),
    };
    if let Ok(serde_json::Value::Object(map)) = &mut value {
        map.insert("process".into(), checked.describe(state).into());
    }
    value.unwrap_or(serde_json::Value::Null)
}

/// The FDR-style explanation: the trace, then what happens at its end.
fn explain(out: &mut String, w: &Witness, checked: &Explored) {
    match w {
        Witness::Refinement(c) => {
            explain_violation(out, c);
            let _ = writeln!(
                out,
                "  implementation state: {}",
                shorten(&checked.describe(c.impl_state))
            );
        }
        Witness::Property(c) => {
            let _ = writeln!(out, "  trace: {}", angle(&c.trace));
            match &c.violation {
                PropertyViolation::Deadlock => {
                    let _ = writeln!(out, "  then deadlock: the process refuses every event");
                }
                PropertyViolation::Divergence => {
                    let _ = writeln!(
                        out,
                        "  then divergence: the process can perform taus forever"
                    );
                }
                PropertyViolation::Nondeterminism {
                    event, accepted, ..
                } => {
                    let _ = writeln!(
                        out,
                        "  then the process can perform {event} and can also refuse it (a stable \
                         state accepting only {})",
                        braces(accepted)
                    );
                }
                PropertyViolation::NotATrace { event } => {
                    let _ = writeln!(out, "  then the process cannot perform {event}");
                }
            }
            let _ = writeln!(out, "  state: {}", shorten(&checked.describe(c.state)));
        }
        Witness::Trace { trace, state } => {
            let _ = writeln!(out, "  the process performs {}", angle(trace));
            let _ = writeln!(out, "  reaching: {}", shorten(&checked.describe(*state)));
        }
    }
}

/// A process state for the text report: at most `MAX_SHOWN` characters (`--json` has it
/// whole).
fn shorten(process: &str) -> String {
    const MAX_SHOWN: usize = 400;
    match process.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{} …", &process[..cut]),
        None => process.to_string(),
    }
}

/// Renumbers an explored LTS so that the numbering, and so every counterexample found on it,
/// does not depend on the explorer's thread count or timing: breadth-first from the initial
/// state, following transitions in the order of their label names; states reached by the
/// same least path (label sequence) are ordered by their process printed as CSPm (`describe`,
/// called only for such ties). Returns the LTS and the process state of each new id.
fn canonical_numbering(
    lts: &Lts,
    states: &[CspState],
    describe: impl Fn(CspState) -> String,
) -> (Lts, Vec<CspState>) {
    const UNSEEN: u32 = u32::MAX;
    let names = lts.label_names();
    let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
    by_name.sort_by(|&a, &b| (a != 0, &names[a as usize]).cmp(&(b != 0, &names[b as usize])));
    let mut rank = vec![0u32; names.len()];
    for (r, &l) in by_name.iter().enumerate() {
        rank[l as usize] = r as u32;
    }
    let n = lts.num_states() as usize;
    let mut new_id = vec![UNSEEN; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    // The current level as (group, old state); a group holds the states of one least path.
    let mut level: Vec<(u32, u32)> = vec![(0, lts.initial())];
    new_id[lts.initial() as usize] = 0;
    let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
    while !level.is_empty() {
        // Order each group of ties by the printed process, then number the level.
        let mut start = 0;
        while start < level.len() {
            let mut end = start + 1;
            while end < level.len() && level[end].0 == level[start].0 {
                end += 1;
            }
            if end - start > 1 {
                level[start..end].sort_by_cached_key(|&(_, s)| describe(states[s as usize]));
            }
            start = end;
        }
        for &(_, s) in &level {
            new_id[s as usize] = order.len() as u32;
            order.push(s);
        }
        candidates.clear();
        for (position, &(_, s)) in level.iter().enumerate() {
            for (l, t) in lts.successors(s) {
                candidates.push((position as u32, rank[l as usize], t));
            }
        }
        candidates.sort_by_key(|&(position, r, _)| (position, r));
        let mut next: Vec<(u32, u32)> = Vec::new();
        let mut key = None;
        let mut group = 0u32;
        for &(position, r, t) in &candidates {
            if new_id[t as usize] != UNSEEN {
                continue;
            }
            // A provisional mark; the final id is given when the next level is numbered.
            new_id[t as usize] = UNSEEN - 1;
            let parent_group = level[position as usize].0;
            if key != Some((parent_group, r)) {
                if key.is_some() {
                    group += 1;
                }
                key = Some((parent_group, r));
            }
            next.push((group, t));
        }
        level = next;
    }
    let mut transitions: Vec<(u32, Label, u32)> =
        Vec::with_capacity(lts.num_transitions() as usize);
    for (id, &old) in order.iter().enumerate() {
        let first = transitions.len();
        transitions.extend(
            lts.successors(old)
                .map(|(l, t)| (id as u32, l, new_id[t as usize])),
        );
        transitions[first..].sort_unstable();
    }
    let renumbered = Lts::from_transitions(0, order.len() as u32, names.to_vec(), &transitions);
    let states = order.iter().map(|&s| states[s as usize]).collect();
    (renumbered, states)
}
