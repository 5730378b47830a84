//! `weft reduce IN`: the quotient of a system modulo an equivalence.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::limits::SearchArgs;
use super::refines::load_system;
use super::EXIT_HOLDS;
use weft::explore::{StopSignal, Watchdog};
use weft::lts::write_aut;
use weft::reduce::{reduce_by, BranchingAlgorithm, Equivalence};

/// The equivalence argument shared by `weft reduce` and `weft compare`.
#[derive(Clone, Copy, ValueEnum)]
pub enum EquivalenceArg {
    /// Strong bisimulation.
    Strong,
    /// Branching bisimulation.
    Branching,
    /// Divergence-preserving branching bisimulation (preserves T, F and FD).
    DivergencePreservingBranching,
    /// Trace equivalence (tau is an ordinary label).
    Trace,
    /// Weak-trace equivalence.
    WeakTrace,
}

impl From<EquivalenceArg> for Equivalence {
    fn from(arg: EquivalenceArg) -> Equivalence {
        match arg {
            EquivalenceArg::Strong => Equivalence::Strong,
            EquivalenceArg::Branching => Equivalence::Branching,
            EquivalenceArg::DivergencePreservingBranching => {
                Equivalence::DivergencePreservingBranching
            }
            EquivalenceArg::Trace => Equivalence::Trace,
            EquivalenceArg::WeakTrace => Equivalence::WeakTrace,
        }
    }
}

/// The `--branching-algorithm` argument of `weft reduce`.
#[derive(Clone, Copy, ValueEnum)]
pub enum BranchingAlgorithmArg {
    /// The default, chosen by measurement on the corpus.
    Auto,
    /// Signature refinement (full, then incremental rounds; in parallel).
    Signatures,
    /// Splitting under constellations (Groote, Jansen, Keiren, Wijs), on one thread.
    Constellations,
    /// Signature refinement for one incremental round, then constellations.
    SignaturesThenConstellations,
}

impl From<BranchingAlgorithmArg> for BranchingAlgorithm {
    fn from(arg: BranchingAlgorithmArg) -> BranchingAlgorithm {
        match arg {
            BranchingAlgorithmArg::Auto => BranchingAlgorithm::Auto,
            BranchingAlgorithmArg::Signatures => BranchingAlgorithm::Signatures,
            BranchingAlgorithmArg::Constellations => BranchingAlgorithm::Constellations,
            BranchingAlgorithmArg::SignaturesThenConstellations => {
                BranchingAlgorithm::SignaturesThenConstellations(1)
            }
        }
    }
}

/// Arguments of `weft reduce`.
#[derive(Args)]
pub struct ReduceArgs {
    /// The system (an `.aut` or `.aut.gz` file, or `FILE.csp:PROCESS`).
    input: String,
    /// Write the quotient to this `.aut` file.
    #[arg(short = 'o', long = "output", value_name = "OUT.aut")]
    output: Option<String>,
    /// The equivalence to reduce modulo.
    #[arg(long, value_enum, default_value = "strong")]
    equivalence: EquivalenceArg,
    /// The algorithm for the branching bisimulations (the quotient is the same with each).
    #[arg(long, value_enum, default_value = "auto")]
    branching_algorithm: BranchingAlgorithmArg,
    /// The label of the internal action (default: `tau` and `i`).
    #[arg(long, value_name = "NAME")]
    tau: Option<String>,
    /// Threads and limits (for exploring a CSPm process; `--max-states` also bounds an
    /// `.aut` file's reachable states).
    #[command(flatten)]
    limits: SearchArgs,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ReduceReport {
    input: String,
    equivalence: &'static str,
    states_before: u32,
    transitions_before: u64,
    states_after: u32,
    transitions_after: u64,
    rounds: u32,
    threads: usize,
    load_seconds: f64,
    reduce_seconds: f64,
    output: Option<String>,
}

/// Runs `weft reduce`; returns the exit code.
pub fn run(args: &ReduceArgs) -> Result<i32> {
    let stop = StopSignal::new();
    let _watchdog = Watchdog::start(args.limits.resource_limits(), &stop);
    let started = Instant::now();
    let lts = load_system(&args.input, args.tau.as_deref(), &args.limits, &stop)?;
    let load_seconds = started.elapsed().as_secs_f64();
    let equivalence = Equivalence::from(args.equivalence);
    let reducing = Instant::now();
    let threads = args.limits.threads();
    let reduction = reduce_by(&lts, equivalence, threads, args.branching_algorithm.into());
    let reduce_seconds = reducing.elapsed().as_secs_f64();
    if let Some(path) = &args.output {
        let file = File::create(path).with_context(|| format!("cannot create {path}"))?;
        let mut w = BufWriter::new(file);
        write_aut(&reduction.quotient, &mut w)
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {path}"))?;
    }
    let report = ReduceReport {
        input: args.input.clone(),
        equivalence: equivalence.name(),
        states_before: lts.num_states(),
        transitions_before: lts.num_transitions(),
        states_after: reduction.quotient.num_states(),
        transitions_after: reduction.quotient.num_transitions(),
        rounds: reduction.rounds,
        threads: threads.get(),
        load_seconds,
        reduce_seconds,
        output: args.output.clone(),
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{}: {} states, {} transitions; modulo {}: {} states, {} transitions",
            report.input,
            report.states_before,
            report.transitions_before,
            report.equivalence,
            report.states_after,
            report.transitions_after
        );
        if let Some(path) = &report.output {
            println!("quotient written to {path}");
        }
        eprintln!(
            "loaded in {:.3} s; reduced in {:.3} s ({} rounds)",
            load_seconds, reduce_seconds, report.rounds
        );
    }
    Ok(EXIT_HOLDS)
}
