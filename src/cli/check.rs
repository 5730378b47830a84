//! `weft check MODEL.csp`: checks every assertion of a CSPm script, in order, and renders the
//! results of the library's assertion run ([`weft::verify`]) as text or JSON.
//!
//! Exit code 2 if an assertion could not be checked or was stopped by a limit, else 1 if one
//! fails, else 0. Results go to stdout; diagnostics (errors, limits, notes) to stderr.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use clap::Args;

use super::distributed::{shared_searches, DistArgs};
use super::limits::SearchArgs;
use super::progress::LevelProgress;
use super::refines::{angle, braces, explain_violation};
use super::UsageError;
use weft::csp::{load_script_until, ComponentState};
use weft::explore::{StopSignal, Watchdog};
use weft::refine::properties::PropertyViolation;
use weft::verify::{
    AssertionResult, AssertionRun, Progress, Summary, Verdict, VerifyError, VerifyOptions, Witness,
};

/// Arguments of `weft check`.
#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct CheckArgs {
    /// The CSPm script.
    model: PathBuf,
    #[command(flatten)]
    search: SearchArgs,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// Keep the product pairs of refinement checks numbered, with parents, from the start
    /// (by default a refinement check of a process with a compact encoding keeps them
    /// compactly, and searches again only when it fails).
    #[arg(long)]
    pub no_compact: bool,
    #[command(flatten)]
    dist: DistArgs,
}

/// Runs `weft check`; returns the exit code.
pub fn run(args: &CheckArgs) -> Result<i32> {
    if super::csp_model::is_aut(&args.model) {
        return Err(UsageError(format!(
            "{} is a labelled transition system (.aut), not a CSPm script: `weft check` runs the \
             assertions of a CSPm script; for .aut files use `weft refines SPEC.aut IMPL.aut`, \
             `weft explore FILE.aut` or `weft info FILE.aut`",
            args.model.display()
        ))
        .into());
    }
    // The load is watched by the run's memory and time limits: a script may declare sets of
    // millions of values, listed at load.
    let script = {
        let stop = StopSignal::new();
        let _watchdog = Watchdog::start(args.search.resource_limits(), &stop);
        Arc::new(load_script_until(&args.model, &stop)?)
    };
    for note in script.notes() {
        eprintln!("{}: note: {}", note.location, note.message);
    }
    // Errors in definitions no assertion uses: reported, and the exit code says so, but
    // every assertion is still checked.
    for e in script.errors() {
        eprintln!("{}", weft::diag::render(e, weft::diag::use_color()));
    }
    let unused_errors = script.errors().len();
    // A distributed run: every process runs every assertion; the searches of refinements
    // are shared among the processes, and process 0 prints the results.
    let cluster = args.dist.cluster(&args.search)?;
    let prints = cluster.as_ref().is_none_or(|c| c.process == 0);
    let threads = match &cluster {
        Some(c) => weft::threads::Threads::new(c.workers)?,
        None => args.search.threads(),
    };
    let cluster_searches = cluster.map(|c| shared_searches(c, &args.dist));
    let distributed = cluster_searches
        .clone()
        .map(|s| s as weft::refine::SharedSearches);
    // The progress line, and whether it counts product pairs.
    let line: Arc<Mutex<Option<(LevelProgress, &str)>>> = Arc::new(Mutex::new(None));
    let progress_line = line.clone();
    let opts = VerifyOptions {
        threads,
        max_states: args.search.max_states,
        max_memory: args.search.max_memory(),
        timeout: args.search.timeout,
        compact: !args.no_compact,
        distributed,
        progress: prints.then(|| -> weft::verify::ProgressObserver {
            Arc::new(move |p: Progress<'_>| {
                let mut line = progress_line.lock().unwrap_or_else(|e| e.into_inner());
                match p {
                    Progress::Exploring(process) => {
                        *line = LevelProgress::start(&format!("exploring {}", head(process, 60)))
                            .map(|l| (l, "states"));
                    }
                    Progress::Checking(assertion) => {
                        *line = LevelProgress::start(&format!("checking {}", head(assertion, 60)))
                            .map(|l| (l, "pairs"));
                    }
                    Progress::Level(report) => {
                        if let Some((l, noun)) = line.as_ref() {
                            l.update(&report, noun);
                        }
                    }
                    Progress::Explored => {
                        if let Some((l, _)) = line.take() {
                            l.finish();
                        }
                    }
                }
            })
        }),
    };
    let mut run = AssertionRun::new(script.clone(), opts);
    // In a distributed run, what the keys of each assertion's shared searches came to.
    let mut search_keys = Vec::new();
    let results = run.run_all(|r| {
        search_keys.push(cluster_searches.as_ref().map(|s| s.take_keys()));
        // Diagnostics in every process (each has its own standard error); results in one.
        report_diagnostics(r);
        if prints && !args.json {
            print!("{}", render_text(r));
        }
    });
    let summary = Summary::of(&results);
    let other_errors = if unused_errors == 0 {
        String::new()
    } else {
        format!(
            "; {unused_errors} error{} in definitions no assertion uses",
            if unused_errors == 1 { "" } else { "s" }
        )
    };
    if !prints {
    } else if args.json {
        let assertions: Vec<_> = results
            .iter()
            .zip(&search_keys)
            .map(|(r, keys)| {
                let mut value = result_json(r);
                if let Some(keys) = keys {
                    if let Some(words) = keys.key_words {
                        value["key_words"] = words.into();
                    }
                    value["key_restarts"] = keys.key_restarts.into();
                }
                value
            })
            .collect();
        let errors: Vec<_> = script
            .errors()
            .iter()
            .map(|e| error_json(&VerifyError::Script(e.clone())))
            .collect();
        println!(
            "{}",
            serde_json::to_string(&serde_json::json!({
                "assertions": assertions,
                "summary": summary,
                "errors": errors,
            }))?
        );
    } else if results.is_empty() {
        println!("{}: no assertions{other_errors}", args.model.display());
    } else {
        println!("{summary}{other_errors}");
    }
    Ok(if unused_errors > 0 {
        super::EXIT_ERROR
    } else {
        summary.exit_code()
    })
}

/// The first `n` characters of `s`, with ` …` when cut.
fn head(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((cut, _)) => format!("{} …", &s[..cut]),
        None => s.to_string(),
    }
}

/// Errors and stops on stderr, positioned at the assertion when the error has no position.
fn report_diagnostics(r: &AssertionResult) {
    match &r.verdict {
        Verdict::Error(VerifyError::Script(e)) if e.location.is_some() => {
            eprintln!("{}", weft::diag::render(e, weft::diag::use_color()))
        }
        Verdict::Error(VerifyError::Script(e)) => eprintln!(
            "{}: error: checking `{}`: {}",
            r.location, r.text, e.message
        ),
        Verdict::Error(e) => eprintln!("{}: error: checking `{}`: {e}", r.location, r.text),
        Verdict::Stopped { reason, states } => eprintln!(
            "{}: error: checking `{}`: stopped by {}{}: no verdict",
            r.location,
            r.text,
            reason.describe(),
            if *states > 0 {
                format!(" ({states} states explored)")
            } else {
                String::new()
            }
        ),
        Verdict::Holds | Verdict::Fails => {}
    }
}

/// The text report of one assertion: its verdict and what explains it.
fn render_text(r: &AssertionResult) -> String {
    let mut text = String::new();
    let status = match &r.verdict {
        Verdict::Stopped { reason, .. } => format!("stopped by {} (no verdict)", reason.describe()),
        Verdict::Error(_) => "error (no verdict)".to_string(),
        v => v.name().to_string(),
    };
    let _ = writeln!(text, "{}: assert {}: {status}", r.location.line, r.text);
    if let Some(w) = &r.witness {
        if matches!(r.verdict, Verdict::Holds) {
            let _ = writeln!(text, "  it holds because the property without `not` fails:");
        }
        explain(&mut text, w);
    }
    text
}

/// One assertion's JSON object.
fn result_json(r: &AssertionResult) -> serde_json::Value {
    let holds = match r.verdict {
        Verdict::Holds => Some(true),
        Verdict::Fails => Some(false),
        _ => None,
    };
    // The counterexample explains a failure; a holding `assert not` has none.
    let counterexample = match r.verdict {
        Verdict::Fails => r
            .witness
            .as_ref()
            .and_then(|w| serde_json::to_value(w).ok()),
        _ => None,
    };
    serde_json::json!({
        "assertion": r.text,
        "line": r.location.line,
        "column": r.location.column,
        "verdict": r.verdict.name(),
        "holds": holds,
        "counterexample": counterexample,
        "error": match &r.verdict {
            Verdict::Error(e) => error_json(e),
            _ => serde_json::Value::Null,
        },
        "stopped": match &r.verdict {
            Verdict::Stopped { reason, .. } => serde_json::to_value(reason).unwrap_or_default(),
            _ => serde_json::Value::Null,
        },
        "states": r.states,
        "pairs": r.states,
        "transitions": r.transitions,
        "levels": r.levels,
        "threads": r.threads,
        "peak_memory": r.peak_memory,
        "visited_bytes": r.visited_bytes,
        "shared": r.shared,
        "seconds": r.seconds,
    })
}

/// An error as JSON: kind, message and (when known) file, line and column, as every
/// command reports errors.
fn error_json(e: &VerifyError) -> serde_json::Value {
    match e {
        VerifyError::Script(e) => weft::diag::Diagnostic::from(e).to_json()["error"].take(),
        VerifyError::Checker(m) => serde_json::json!({ "kind": "internal", "message": m }),
    }
}

/// The FDR-style explanation: the trace, then what happens at its end.
fn explain(out: &mut String, w: &Witness) {
    match w {
        Witness::Refinement {
            counterexample,
            process,
            components,
        } => {
            explain_violation(out, counterexample);
            state_lines(out, "implementation state", process, components);
        }
        Witness::Property {
            counterexample: c,
            process,
            components,
        } => {
            let _ = writeln!(out, "  trace: {}", angle(&c.trace));
            let _ = match &c.violation {
                PropertyViolation::Deadlock => {
                    writeln!(out, "  then deadlock: the process refuses every event")
                }
                PropertyViolation::Divergence => writeln!(
                    out,
                    "  then divergence: the process can perform taus forever"
                ),
                PropertyViolation::Nondeterminism {
                    event, accepted, ..
                } => writeln!(
                    out,
                    "  then the process can perform {event} and can also refuse it (a stable \
                     state accepting only {})",
                    braces(accepted)
                ),
                PropertyViolation::NotATrace { event } => {
                    writeln!(out, "  then the process cannot perform {event}")
                }
            };
            state_lines(out, "state", process, components);
        }
        Witness::Trace { trace, process, .. } => {
            let _ = writeln!(out, "  the process performs {}", angle(trace));
            let _ = writeln!(out, "  reaching: {}", head(process, 400));
        }
    }
}

/// A process state as FDR's debugger shows it: one line per component of its parallel
/// composition (its place in the composition, then its process), or one line for a process
/// that is not a composition.
fn state_lines(out: &mut String, what: &str, process: &str, components: &[ComponentState]) {
    if components.len() <= 1 {
        let _ = writeln!(out, "  {what}: {}", head(process, 400));
        return;
    }
    let _ = writeln!(out, "  {what}, by component:");
    for c in components {
        let _ = writeln!(out, "    {}  {}", c.position(), head(&c.process, 200));
    }
}
