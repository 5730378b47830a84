//! Command-line interface: argument parsing and the subcommands.
//!
//! Exit codes: 0 "holds" / success, 1 "does not hold", 2 error. Results go to stdout,
//! diagnostics to stderr. Every error is reported once by [`report_error`]: a positioned one
//! (CSPm or `.aut`) as the source line with the span underlined, any other as
//! `weft: error: message`; with `--json`, also as `{"error": {...}}` on stdout.

#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};

use weft::csp::CspError;
use weft::diag::{use_color, Diagnostic};
use weft::lts::AutError;

mod check;
mod compare;
mod csp_model;
mod distributed;
mod explore;
mod info;
mod limits;
mod progress;
mod reduce;
mod reduced_check;
mod refines;

/// Exit code when the checked property holds (or the command succeeded).
pub const EXIT_HOLDS: i32 = 0;
/// Exit code when the checked property does not hold.
pub const EXIT_FAILS: i32 = 1;
/// Exit code on any error (bad input, I/O, limits).
pub const EXIT_ERROR: i32 = 2;

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Parallel state-space exploration and refinement checking"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print sizes and facts of an LTS file: states, transitions, labels, tau transitions,
    /// deadlocks, divergences, determinism.
    Info(info::InfoArgs),
    /// Generate the state space of a model with the parallel breadth-first explorer.
    Explore(explore::ExploreArgs),
    /// Check every assertion of a CSPm script, in order (exit 0 all hold, 1 one fails, 2 error).
    Check(check::CheckArgs),
    /// Check that IMPL refines SPEC (FDR's `assert SPEC [FD= IMPL`; exit 0 holds, 1 not, 2 error).
    Refines(refines::RefinesArgs),
    /// Reduce a system modulo an equivalence (strong, branching, divergence-preserving
    /// branching bisimulation, trace, weak trace) and optionally write the quotient.
    Reduce(reduce::ReduceArgs),
    /// Are two systems equivalent (exit 0 yes, 1 no with a distinguishing trace, 2 error)?
    Compare(compare::CompareArgs),
}

/// Parses the arguments, runs the subcommand and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_ERROR
            } else {
                EXIT_HOLDS
            };
            let _ = e.print();
            return code;
        }
    };
    let json = match &cli.command {
        Command::Info(args) => args.json,
        Command::Explore(args) => args.json,
        Command::Refines(args) => args.json,
        Command::Check(args) => args.json,
        Command::Reduce(args) => args.json,
        Command::Compare(args) => args.json,
    };
    let result: anyhow::Result<i32> = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Explore(args) => explore::run(&args),
        Command::Refines(args) => refines::run(args),
        Command::Check(args) => check::run(&args),
        Command::Reduce(args) => reduce::run(&args),
        Command::Compare(args) => compare::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => report_error(&e, json),
    }
}

/// A mistake in how weft was called that the user can fix (the wrong kind of file, a
/// missing `:PROCESS`); the message says what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub String);

/// A search stopped by a limit (`--max-states`): no verdict; the message gives the figures.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct LimitReached(pub String);

/// The diagnostic of `error`: the first positioned error of its chain (a CSPm or `.aut`
/// error), else the whole chain as one message.
fn diagnostic_of(error: &anyhow::Error) -> Diagnostic<'_> {
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<CspError>() {
            return Diagnostic::from(e);
        }
        if let Some(e) = cause.downcast_ref::<AutError>() {
            return Diagnostic::from(e);
        }
    }
    let kind = if error.downcast_ref::<UsageError>().is_some() {
        "usage"
    } else if error.downcast_ref::<LimitReached>().is_some() {
        "limit"
    } else {
        "error"
    };
    Diagnostic {
        kind,
        message: format!("{error:#}"),
        file: None,
        line: None,
        column: None,
        excerpt: None,
    }
}

/// Reports `error` once and returns the exit code (2): a positioned error as its source
/// line with the span underlined, any other as `weft: error: message`, on stderr (coloured
/// on a terminal); with `json`, also `{"error": {"kind", "message", "file", "line",
/// "column"}}` on stdout.
pub(crate) fn report_error(error: &anyhow::Error, json: bool) -> i32 {
    let diagnostic = diagnostic_of(error);
    if diagnostic.file.is_some() {
        eprintln!("{}", diagnostic.render(use_color()));
    } else {
        eprintln!("weft: error: {}", diagnostic.message);
    }
    if json {
        println!("{}", diagnostic.to_json());
    }
    EXIT_ERROR
}
