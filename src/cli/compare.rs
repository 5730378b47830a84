//! `weft compare A B`: are two systems equivalent?

use std::time::Instant;

use anyhow::Result;
use clap::Args;

use super::csp_model::system_of;
use super::limits::SearchArgs;
use super::reduce::EquivalenceArg;
use super::refines::{angle, load_system};
use super::{EXIT_FAILS, EXIT_HOLDS};
use weft::csp::CspSystem;
use weft::explore::{StopSignal, Watchdog};
use weft::lts::Lts;
use weft::reduce::on_the_fly::{trace_search, TraceSearch};
use weft::reduce::{compare, compare::Comparison, compare::Side, Equivalence};
use weft::ts::TransitionSystem;

/// A system to compare: a CSPm process (explored on the fly) or an explicit LTS.
enum System {
    Csp(CspSystem),
    Explicit(Box<Lts>),
}

/// The on-the-fly trace search on `first` and `second`, whatever their kinds.
fn search_pair(first: &System, second: &System, weak: bool, stop: &StopSignal) -> TraceSearch {
    fn go<A: TransitionSystem, B: TransitionSystem>(
        a: &A,
        b: &B,
        weak: bool,
        stop: &StopSignal,
    ) -> TraceSearch {
        trace_search(a, b, weak, stop)
    }
    match (first, second) {
        (System::Csp(a), System::Csp(b)) => go(a, b, weak, stop),
        (System::Csp(a), System::Explicit(b)) => go(a, &**b, weak, stop),
        (System::Explicit(a), System::Csp(b)) => go(&**a, b, weak, stop),
        (System::Explicit(a), System::Explicit(b)) => go(&**a, &**b, weak, stop),
    }
}

/// Compares two systems of which at least one is a CSPm process: first on the fly (a trace
/// difference found there also separates them modulo the bisimulations); when their (weak)
/// traces agree and `equivalence` is a bisimulation, on the explicit LTSs.
fn compare_on_the_fly(
    args: &CompareArgs,
    equivalence: Equivalence,
    stop: &StopSignal,
) -> Result<Comparison> {
    let tau = args.tau.as_deref();
    let open = |arg: &str| -> Result<System> {
        Ok(match system_of(arg, stop)? {
            Some(system) => System::Csp(system),
            None => System::Explicit(Box::new(load_system(arg, tau, &args.limits, stop)?)),
        })
    };
    let first = open(&args.first)?;
    let second = open(&args.second)?;
    let weak = !matches!(equivalence, Equivalence::Strong | Equivalence::Trace);
    let found = search_pair(&first, &second, weak, stop);
    for (arg, system) in [(&args.first, &first), (&args.second, &second)] {
        if let System::Csp(s) = system {
            if let Some(e) = s.take_error() {
                return Err(anyhow::Error::from(e).context(format!("while exploring {arg}")));
            }
        }
    }
    match found {
        TraceSearch::Differ { difference, .. } => Ok(Comparison {
            equivalent: false,
            difference: Some(difference),
        }),
        TraceSearch::Stopped => Err(super::LimitReached(format!(
            "stopped comparing {} and {} by {}: no verdict",
            args.first,
            args.second,
            stop.reason().map_or("a limit", |r| r.describe()),
        ))
        .into()),
        TraceSearch::SameTraces { .. } if !equivalence.is_bisimulation() => Ok(Comparison {
            equivalent: true,
            difference: None,
        }),
        TraceSearch::SameTraces { .. } => {
            let first = load_system(&args.first, tau, &args.limits, stop)?;
            let second = load_system(&args.second, tau, &args.limits, stop)?;
            Ok(compare(&first, &second, equivalence))
        }
    }
}

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
    let equivalence = Equivalence::from(args.equivalence);
    let on_the_fly =
        system_of(&args.first, &stop)?.is_some() || system_of(&args.second, &stop)?.is_some();
    let started = Instant::now();
    let result = if on_the_fly {
        compare_on_the_fly(args, equivalence, &stop)?
    } else {
        let first = load_system(&args.first, tau, &args.limits, &stop)?;
        let second = load_system(&args.second, tau, &args.limits, &stop)?;
        compare(&first, &second, equivalence)
    };
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
