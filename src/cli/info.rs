//! `weft info FILE.aut`: sizes and derived facts of an LTS file.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

use super::{UsageError, EXIT_HOLDS};
use weft::lts::{read_aut_file, AutOptions, LtsSummary};

/// Arguments of `weft info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// The LTS file (`.aut`, or gzipped `.aut.gz`).
    pub file: PathBuf,
    /// Name of the internal action, replacing the defaults `tau` and `i`; may be repeated.
    #[arg(long = "tau", value_name = "NAME")]
    pub tau: Vec<String>,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct InfoReport {
    file: String,
    #[serde(flatten)]
    summary: LtsSummary,
    timing: Timing,
}

#[derive(Serialize)]
struct Timing {
    read_seconds: f64,
    analysis_seconds: f64,
    transitions_per_second: f64,
}

/// Reads the file, computes its summary and prints it (text or JSON).
pub fn run(args: &InfoArgs) -> anyhow::Result<i32> {
    let opts = if args.tau.is_empty() {
        AutOptions::default()
    } else {
        AutOptions {
            tau_labels: args.tau.clone(),
        }
    };
    if super::csp_model::is_csp(&args.file) {
        return Err(UsageError(format!(
            "{} is a CSPm script; `weft info` reads an LTS (.aut, .aut.gz). Explore a process \
             of the script with `weft explore {} --process PROCESS`, or check its assertions \
             with `weft check {}`",
            args.file.display(),
            args.file.display(),
            args.file.display()
        ))
        .into());
    }
    let started = Instant::now();
    let lts = read_aut_file(&args.file, &opts)?;
    let read_seconds = started.elapsed().as_secs_f64();
    let analysed = Instant::now();
    let summary = lts.summary();
    let analysis_seconds = analysed.elapsed().as_secs_f64();
    let transitions_per_second = summary.transitions as f64 / read_seconds.max(1e-9);
    let report = InfoReport {
        file: args.file.display().to_string(),
        summary,
        timing: Timing {
            read_seconds,
            analysis_seconds,
            transitions_per_second,
        },
    };
    if args.json {
        let text = serde_json::to_string(&report).context("serialising the report")?;
        println!("{text}");
    } else {
        print_text(&report);
        eprintln!(
            "read {} transitions in {:.3} s ({:.2} million/s); analysed in {:.3} s",
            report.summary.transitions,
            read_seconds,
            transitions_per_second / 1e6,
            analysis_seconds
        );
    }
    Ok(EXIT_HOLDS)
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn print_text(report: &InfoReport) {
    let s = &report.summary;
    println!("file:             {}", report.file);
    println!("initial state:    {}", s.initial);
    println!(
        "states:           {} ({} reachable)",
        s.states, s.reachable_states
    );
    println!(
        "transitions:      {} ({} tau)",
        s.transitions, s.tau_transitions
    );
    println!(
        "labels:           {} visible, tau {}",
        s.visible_labels,
        if s.tau_occurs {
            "occurs"
        } else {
            "does not occur"
        }
    );
    println!(
        "deadlock states:  {} ({} reachable)",
        s.deadlock_states, s.reachable_deadlock_states
    );
    println!(
        "divergent states: {} ({} reachable, {} tau-cycles)",
        s.divergent_states, s.reachable_divergent_states, s.tau_cycles
    );
    println!("deterministic:    {}", yes_no(s.deterministic));
}
