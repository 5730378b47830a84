//! `weft explore`: generate a state space with the parallel explorer.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

use weft::csp::CspSystem;
use weft::dist::DistOptions;
use weft::explore::{
    count_states_with, try_explore, ExploreOptions, ExploreStats, Persistence, StopSignal, Watchdog,
};
use weft::lts::aut::{read_aut_file, write_aut, AutOptions};
use weft::lts::Lts;
use weft::ts::TransitionSystem;

use super::distributed::DistArgs;
use super::limits::SearchArgs;
use super::{UsageError, EXIT_HOLDS};

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct ExploreArgs {
    /// The model: an LTS (`.aut`, `.aut.gz`) or a CSPm script (`.csp`, `.cspm`).
    model: PathBuf,
    /// The process of a CSPm script to explore, `P` or `P(3)` (default: `SYSTEM` if defined,
    /// else the last process declared).
    #[arg(long)]
    process: Option<String>,
    /// Write the state space to this `.aut` file.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    search: SearchArgs,
    #[command(flatten)]
    dist: DistArgs,
    /// Print the labels of a shortest path to the first deadlock (in canonical order), if
    /// there is one.
    #[arg(long)]
    trace: bool,
    /// Name of the internal action in an `.aut` input (default: `tau` and `i`).
    #[arg(long)]
    tau: Option<String>,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// Expand at most this many BFS levels (exit code 2: the state space is incomplete).
    #[arg(long, value_name = "N", conflicts_with_all = ["processes", "workers"])]
    max_depth: Option<u32>,
    /// Write a checkpoint of the search into this folder at level boundaries (at most one per
    /// `--checkpoint-interval`); `--resume` goes on from it after a crash, a kill or a limit.
    /// In a distributed run each process writes its own part (DIR/process-K).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "trace"])]
    checkpoint: Option<PathBuf>,
    /// Least time between two checkpoints, e.g. 30s, 5m, 0 for every level (default 60s).
    #[arg(long, value_name = "TIME", value_parser = parse_interval, requires = "checkpoint")]
    checkpoint_interval: Option<std::time::Duration>,
    /// Go on from the checkpoint in this folder (written by `--checkpoint` for the same model
    /// and process; in a distributed run, with the same --processes and --workers); the counts
    /// are then those of the whole search.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "trace"])]
    resume: Option<PathBuf>,
}

pub fn run(args: &ExploreArgs) -> Result<i32> {
    let cluster = args.dist.cluster(&args.search)?;
    if cluster.is_some() && args.out.is_some() {
        return Err(UsageError(
            "--out is not available in a distributed run (--processes, --workers)".into(),
        )
        .into());
    }
    if super::csp_model::is_csp(&args.model) {
        return run_csp(args);
    }
    if args.process.is_some() {
        return Err(UsageError(format!(
            "--process applies to CSPm scripts (.csp, .cspm) only; {} is read as an LTS",
            args.model.display()
        ))
        .into());
    }
    if !super::csp_model::is_aut(&args.model) {
        return Err(UsageError(format!(
            "{}: unknown model format (expected an .aut, .aut.gz, .csp or .cspm file)",
            args.model.display()
        ))
        .into());
    }
    let mut aut = AutOptions::default();
    if let Some(tau) = &args.tau {
        aut.tau_labels = vec![tau.clone()];
    }
    let lts = read_aut_file(&args.model, &aut)?;
    let stop = StopSignal::new();
    let watchdog = Watchdog::start(args.search.resource_limits(), &stop);
    if let Some(cluster) = args.dist.cluster(&args.search)? {
        let result = super::distributed::explore(
            Arc::new(lts),
            &cluster,
            &args.dist,
            dist_options(args, &cluster)?,
            &stop,
            watchdog,
        )?;
        return report_distributed(&result, args, None, cluster.process);
    }
    let explored = run_exploration::<Lts>(&lts, args, &stop, watchdog)?;
    report(&explored, args, None)
}

/// `weft explore MODEL.csp`: explores a process of a CSPm script.
fn run_csp(args: &ExploreArgs) -> Result<i32> {
    // The limits start before the script is loaded: loading may list large sets, and making
    // the system may explore processes to compress them, both of which the signal stops.
    let stop = StopSignal::new();
    let watchdog = Watchdog::start(args.search.resource_limits(), &stop);
    let script = super::csp_model::load(&args.model, &stop)?;
    for note in script.notes() {
        eprintln!("{}: note: {}", note.location, note.message);
    }
    let (_, process) = super::csp_model::select_process(&script, args.process.as_deref())?;
    let system = CspSystem::new_until(&script, &process, &stop)?;
    if let Some(cluster) = args.dist.cluster(&args.search)? {
        let system = Arc::new(system);
        // The run's signal is the system's (made with it): the limits stop its work too.
        let result = super::distributed::explore(
            system.clone(),
            &cluster,
            &args.dist,
            dist_options(args, &cluster)?,
            &stop,
            watchdog,
        )?;
        if let Some(e) = system.take_error() {
            return Err(e.into());
        }
        return report_distributed(&result, args, Some(term_report()), cluster.process);
    }
    let explored = run_exploration(&system, args, &stop, watchdog)?;
    if let Some(e) = system.take_error() {
        return Err(e.into());
    }
    report(&explored, args, Some(term_report()))
}

/// The term table's figures now.
fn term_report() -> TermReport {
    let gc = weft::term::global().stats();
    TermReport {
        terms: CspSystem::term_count(),
        collections: gc.collections,
        collection_seconds: gc.collection_seconds,
    }
}

/// What an exploration gives the report.
pub(crate) struct Explored {
    /// Its statistics.
    pub stats: ExploreStats,
    /// Whether the `.aut` output was written.
    pub written: bool,
    /// The labels of a shortest path to the first deadlock (`--trace`, when there is one).
    pub deadlock_trace: Option<Vec<String>>,
    /// How a distributed run was made.
    pub distribution: Option<Distribution>,
}

/// How a distributed exploration was made.
pub(crate) struct Distribution {
    /// Processes of the run.
    pub processes: usize,
    /// Workers in each process.
    pub workers: usize,
    /// For a model keyed by its structural encoding: the words of the keys of the search that
    /// gave the result (`None` for a fixed-width encoding).
    pub key_words: Option<usize>,
    /// Times the search started again with keys twice as wide (0 for a fixed-width
    /// encoding); a resumed run counts those of the run that wrote its checkpoint.
    pub key_restarts: u32,
}

/// Prints a distributed run's results in process 0 only (the others print nothing).
fn report_distributed(
    result: &weft::dist::DistExploration,
    args: &ExploreArgs,
    terms: Option<TermReport>,
    process: usize,
) -> Result<i32> {
    let explored = Explored {
        stats: result.stats.clone(),
        written: false,
        deadlock_trace: result.deadlock_trace.clone(),
        distribution: Some(Distribution {
            processes: result.processes,
            workers: result.workers,
            key_words: result.key_words,
            key_restarts: result.key_restarts,
        }),
    };
    if process == 0 {
        return report(&explored, args, terms);
    }
    Ok(if explored.stats.stopped.is_some() {
        super::EXIT_ERROR
    } else {
        EXIT_HOLDS
    })
}

/// Explores `ts` as the arguments ask, until `stop` is raised (`watchdog` raises it at the
/// arguments' limits, and is dropped when the search ends); writes the `.aut` output if
/// requested.
pub(crate) fn run_exploration<T: TransitionSystem>(
    ts: &T,
    args: &ExploreArgs,
    stop: &StopSignal,
    watchdog: Option<Watchdog>,
) -> Result<Explored> {
    let progress = super::progress::LevelProgress::start("exploring");
    let opts = ExploreOptions {
        threads: args.search.threads(),
        record_transitions: args.out.is_some(),
        max_states: args.search.max_states,
        on_level: progress.as_ref().map(|p| p.observer()),
        max_levels: args.max_depth,
    };
    if args.out.is_none() && !args.trace {
        // Counts only: the most compact storage the system allows.
        let persistence = Persistence {
            checkpoint: args.checkpoint.clone(),
            interval: args
                .checkpoint_interval
                .unwrap_or(std::time::Duration::from_secs(60)),
            resume: args.resume.clone(),
            fingerprint: model_fingerprint(args)?,
        };
        let stats = count_states_with(ts, &opts, stop, &persistence);
        drop(watchdog);
        if let Some(p) = progress {
            p.finish();
        }
        return Ok(Explored {
            stats: stats?,
            written: false,
            deadlock_trace: None,
            distribution: None,
        });
    }
    let result = try_explore(ts, &opts, stop);
    drop(watchdog);
    if let Some(p) = progress {
        p.finish();
    }
    let result = result?;
    let mut written = false;
    if let Some(out) = &args.out {
        let lts = result.to_lts(ts);
        let file = std::fs::File::create(out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        write_aut(&lts, std::io::BufWriter::new(file))
            .with_context(|| format!("cannot write {}", out.display()))?;
        written = true;
    }
    let deadlock_trace = match result.deadlocks.first() {
        Some(&first) if args.trace => Some(
            result
                .trace_to(first)
                .into_iter()
                .map(|l| ts.label_name(l))
                .collect(),
        ),
        _ => None,
    };
    Ok(Explored {
        stats: result.stats,
        written,
        deadlock_trace,
        distribution: None,
    })
}

/// What a distributed exploration is asked for (but its progress line).
fn dist_options(args: &ExploreArgs, cluster: &weft::dist::Cluster) -> Result<DistOptions> {
    Ok(DistOptions {
        max_states: args.search.max_states,
        deadlock_trace: args.trace,
        persist: persistence(args, cluster.process, cluster.processes)?,
        ..DistOptions::default()
    })
}

/// The checkpoints of a distributed exploration (process `process`'s part), if asked for.
fn persistence(
    args: &ExploreArgs,
    process: usize,
    processes: usize,
) -> Result<Option<weft::dist::checkpoint::Persistence>> {
    if args.checkpoint.is_none() && args.resume.is_none() {
        return Ok(None);
    }
    Ok(Some(weft::dist::checkpoint::Persistence {
        checkpoint: args.checkpoint.clone(),
        interval: args
            .checkpoint_interval
            .unwrap_or(std::time::Duration::from_secs(60)),
        resume: args.resume.clone(),
        fingerprint: model_fingerprint(args)?,
        process,
        processes,
        key_restarts: 0,
    }))
}

/// A time between checkpoints: as `--timeout` takes it, or 0.
fn parse_interval(s: &str) -> Result<std::time::Duration, String> {
    if s.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    super::limits::parse_duration(s)
}

/// Identifies the model a checkpoint is of: the model file's bytes and the process asked
/// for (a script's included files are not part of it).
fn model_fingerprint(args: &ExploreArgs) -> Result<u64> {
    if args.checkpoint.is_none() && args.resume.is_none() {
        return Ok(0);
    }
    let bytes = std::fs::read(&args.model)
        .with_context(|| format!("cannot read {}", args.model.display()))?;
    let process = args.process.as_deref().unwrap_or("");
    Ok(weft::explore::checkpoint::fingerprint(&[
        &bytes,
        process.as_bytes(),
    ]))
}

/// The term table's figures after a CSPm exploration.
pub(crate) struct TermReport {
    /// Terms in the table.
    pub terms: u64,
    /// Garbage collections run.
    pub collections: u64,
    /// Seconds spent collecting.
    pub collection_seconds: f64,
}

/// Prints the statistics; the exit code is 2 when a limit cut the exploration short.
pub(crate) fn report(
    explored: &Explored,
    args: &ExploreArgs,
    terms: Option<TermReport>,
) -> Result<i32> {
    let stats = &explored.stats;
    if args.json {
        let mut value = serde_json::to_value(stats)?;
        if let Some(d) = &explored.distribution {
            value["processes"] = d.processes.into();
            value["workers"] = d.workers.into();
            if let Some(words) = d.key_words {
                value["key_words"] = words.into();
            }
            value["key_restarts"] = d.key_restarts.into();
        }
        if args.trace {
            value["deadlock_trace"] = serde_json::to_value(&explored.deadlock_trace)?;
        }
        if let Some(t) = &terms {
            value["terms"] = t.terms.into();
            value["collections"] = t.collections.into();
            value["collection_seconds"] = t.collection_seconds.into();
        }
        println!("{value}");
    } else {
        println!("states:            {}", stats.states);
        println!("transitions:       {}", stats.transitions);
        println!("deadlocks:         {}", stats.deadlocks);
        println!("levels:            {}", stats.levels);
        println!("seconds:           {:.3}", stats.seconds);
        println!("states per second: {:.0}", stats.states_per_second);
        println!("threads:           {}", stats.threads);
        if let Some(d) = &explored.distribution {
            println!("processes:         {}", d.processes);
            println!("workers:           {} per process", d.workers);
            if let Some(words) = d.key_words {
                println!("key words:         {words}");
            }
            println!("key restarts:      {}", d.key_restarts);
        }
        if args.trace {
            match &explored.deadlock_trace {
                Some(trace) if trace.is_empty() => {
                    println!("deadlock trace:    (the initial state)")
                }
                Some(trace) => println!("deadlock trace:    {}", trace.join(", ")),
                None => println!("deadlock trace:    (no deadlock)"),
            }
        }
        if let Some(t) = &terms {
            println!("terms:             {}", t.terms);
            println!(
                "collections:       {} ({:.3} s)",
                t.collections, t.collection_seconds
            );
        }
        if explored.written {
            if let Some(out) = &args.out {
                println!("written:           {}", out.display());
            }
        }
    }
    if let Some(reason) = stats.stopped {
        eprintln!(
            "weft: stopped by {} ({} states, {} transitions so far): the state space is \
             incomplete",
            reason.describe(),
            stats.states,
            stats.transitions
        );
        return Ok(super::EXIT_ERROR);
    }
    Ok(EXIT_HOLDS)
}
