//! Command-line interface: argument parsing and the subcommands.
//!
//! Exit codes: 0 "holds" / success, 1 "does not hold", 2 error. Results go to stdout,
//! diagnostics to stderr.

use clap::{Parser, Subcommand};

mod check;
mod csp_model;
mod explore;
mod info;
mod limits;
mod progress;
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
    let result: anyhow::Result<i32> = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Explore(args) => explore::run(&args),
        Command::Refines(args) => refines::run(args),
        Command::Check(args) => check::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("weft: error: {e:#}");
            EXIT_ERROR
        }
    }
}
