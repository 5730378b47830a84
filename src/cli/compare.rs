//! `weft compare A B`: are two systems equivalent?

use std::time::Instant;

use anyhow::Result;
use clap::Args;

use super::limits::SearchArgs;
use super::reduce::EquivalenceArg;
use super::refines::{angle, load_system};
use super::{EXIT_FAILS, EXIT_HOLDS};
use weft::explore::{StopSignal, Watchdog};
use weft::reduce::{compare, compare::Side, Equivalence};

/// Arguments of `weft compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// The first system (an `.aut` or `.aut.gz` file, or `FILE.csp:PROCESS`).
    first: String,
    /// The second system.
    second: String,
    /// The equivalence.
    #[arg(long, value_enum, default_value = "strong")]
    equivalence: EquivalenceArg,
    /// The label of the internal action (default: `tau` and `i`).
    #[arg(long, value_name = "NAME")]
    tau: Option<String>,
    /// Threads and limits.
    #[command(flatten)]
    limits: SearchArgs,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
}

/// Runs `weft compare`; returns 0 when equivalent, 1 when not.
pub fn run(args: &CompareArgs) -> Result<i32> {
    let stop = StopSignal::new();
    let _watchdog = Watchdog::start(args.limits.resource_limits(), &stop);
    let tau = args.tau.as_deref();
    let first = load_system(&args.first, tau, &args.limits, &stop)?;
    let second = load_system(&args.second, tau, &args.limits, &stop)?;
    let equivalence = Equivalence::from(args.equivalence);
    let started = Instant::now();
    let result = compare(&first, &second, equivalence);
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let value = serde_json::json!({
            "equivalent": result.equivalent,
            "equivalence": equivalence.name(),
            "difference": result.difference,
            "seconds": seconds,
        });
        println!("{value}");
    } else if let Some(d) = &result.difference {
        let (can, cannot) = match d.side {
            Side::First => (&args.first, &args.second),
            Side::Second => (&args.second, &args.first),
        };
        println!(
            "not equivalent: {} and {} differ modulo {}",
            args.first, args.second, equivalence
        );
        println!("  trace: {}", angle(&d.trace));
        match &d.event {
            Some(event) if equivalence.is_bisimulation() => println!(
                "  then {can} can perform {event}; {cannot}, in the state it reached by the same \
                 trace, cannot"
            ),
            Some(event) => println!("  then {can} can perform {event}; {cannot} cannot"),
            None => println!(
                "  then {can} can diverge (perform taus forever within its class); {cannot} cannot"
            ),
        }
    } else {
        println!(
            "equivalent: {} and {} modulo {}",
            args.first, args.second, equivalence
        );
    }
    if !args.json {
        eprintln!("compared in {seconds:.3} s");
    }
    Ok(if result.equivalent {
        EXIT_HOLDS
    } else {
        EXIT_FAILS
    })
}
