//! `weft refines SPEC IMPL`: does IMPL refine SPEC (FDR's `assert SPEC [X= IMPL`)?

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::{LimitReached, UsageError, EXIT_FAILS, EXIT_HOLDS};
use weft::csp::{ComponentState, CspSystem};
use weft::explore::{Engine, StopSignal, Watchdog};
use weft::lts::aut::{read_aut_file_on, AutOptions};
use weft::lts::Lts;
use weft::refine::{
    check_system, check_until, CheckOptions, CheckResult, Counterexample, Model, RefineError,
    Search, SystemOptions, Violation,
};

use super::limits::SearchArgs;

/// Arguments of `weft refines`.
#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct RefinesArgs {
    /// The specification (an `.aut` or `.aut.gz` file, or `FILE.csp:PROCESS`).
    spec: String,
    /// The implementation (an `.aut` or `.aut.gz` file, or `FILE.csp:PROCESS`).
    #[arg(name = "IMPL")]
    implementation: String,
    /// The semantic model (FDR's letters are accepted too: T, F, FD, V, VD, R, RD).
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        default_value = "failures-divergences"
    )]
    model: ModelArg,
    /// The search order (breadth-first gives shortest counterexamples).
    #[arg(long, value_enum, default_value = "bfs")]
    search: SearchArg,
    /// Use the classical algorithm (exact visited set) instead of the antichain.
    #[arg(long)]
    no_antichain: bool,
    /// Reduce both systems modulo divergence-preserving branching bisimulation before the
    /// check (it preserves the traces, failures and failures-divergences models; ignored in
    /// the other models and for a CSPm implementation checked on the fly). The
    /// counterexample is replayed on the original systems.
    #[arg(long, overrides_with = "no_reduce")]
    reduce: bool,
    /// Check the systems as they are (the default).
    #[arg(long, overrides_with = "reduce")]
    no_reduce: bool,
    /// The label of the internal action (default: `tau` and `i`).
    #[arg(long, value_name = "NAME")]
    tau: Option<String>,
    /// Threads and limits: `--max-states` stops when a system has more states (a CSPm
    /// process is explored up to that many, an `.aut` file's reachable states are counted);
    /// every limit ends the run with exit code 2 and no verdict.
    #[command(flatten)]
    limits: SearchArgs,
    /// Print one JSON object instead of text (an error too: `{"error": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// A distributed run: the product search is shared among the processes (the traces,
    /// failures and failures-divergences models, implementations with a compact encoding);
    /// process 0 prints the result.
    #[command(flatten)]
    dist: super::distributed::DistArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    /// Traces (`[T=`).
    #[value(alias = "T")]
    Traces,
    /// Stable failures (`[F=`).
    #[value(alias = "F")]
    Failures,
    /// Failures-divergences (`[FD=`).
    #[value(alias = "FD")]
    FailuresDivergences,
    /// Stable revivals (`[V=`).
    #[value(alias = "V")]
    Revivals,
    /// Revivals-divergences (`[VD=`).
    #[value(alias = "VD")]
    RevivalsDivergences,
    /// Refusal testing (`[R=`).
    #[value(alias = "R")]
    RefusalTesting,
    /// Refusal-testing-divergences (`[RD=`).
    #[value(alias = "RD")]
    RefusalTestingDivergences,
}

#[derive(Clone, Copy, ValueEnum)]
enum SearchArg {
    Bfs,
    Dfs,
}

/// Resolves a command-line argument naming a system to its LTS.
///
/// An argument is an `.aut` / `.aut.gz` file or `FILE.csp:PROCESS` (the process's state space,
/// explored).
///
/// Errors name their file themselves (positioned ones are rendered with their source line);
/// a CSPm script without `:PROCESS` gets a [`UsageError`] listing the script's processes.
pub fn load_system(
    arg: &str,
    tau: Option<&str>,
    search: &SearchArgs,
    stop: &StopSignal,
) -> Result<Lts> {
    let max_states = search.max_states;
    if let Some((file, _)) = arg.rsplit_once(':') {
        if super::csp_model::is_csp(Path::new(file)) {
            return super::csp_model::lts_of(arg, search, stop);
        }
    }
    if super::csp_model::is_csp(Path::new(arg)) {
        let script = super::csp_model::load(Path::new(arg), stop)?;
        return Err(UsageError(format!(
            "{arg} is a CSPm script: name the process to check as `{arg}:PROCESS`; {}",
            super::csp_model::defines(&script)
        ))
        .into());
    }
    let mut opts = AutOptions::default();
    if let Some(name) = tau {
        opts.tau_labels = vec![name.to_string()];
    }
    // With more than one thread, a gzipped file is decompressed while it is parsed.
    let lts = read_aut_file_on(Path::new(arg), &opts, search.threads())?;
    if let Some(limit) = max_states {
        let states = u64::from(lts.num_reachable());
        if states > limit {
            return Err(LimitReached(format!(
                "{arg} has {states} reachable states, more than --max-states {limit}: no verdict"
            ))
            .into());
        }
    }
    Ok(lts)
}

/// Runs `weft refines`; returns the exit code.
pub fn run(args: RefinesArgs) -> Result<i32> {
    let stop = StopSignal::new();
    let _watchdog = Watchdog::start(args.limits.resource_limits(), &stop);
    let tau = args.tau.as_deref();
    let opts = CheckOptions {
        model: match args.model {
            ModelArg::Traces => Model::Traces,
            ModelArg::Failures => Model::Failures,
            ModelArg::FailuresDivergences => Model::FailuresDivergences,
            ModelArg::Revivals => Model::Revivals,
            ModelArg::RevivalsDivergences => Model::RevivalsDivergences,
            ModelArg::RefusalTesting => Model::RefusalTesting,
            ModelArg::RefusalTestingDivergences => Model::RefusalTestingDivergences,
        },
        search: match args.search {
            SearchArg::Bfs => Search::Bfs,
            SearchArg::Dfs => Search::Dfs,
        },
        no_antichain: args.no_antichain,
        threads: args.limits.threads(),
    };
    let cluster = args.dist.cluster(&args.limits)?;
    let prints = cluster.as_ref().is_none_or(|c| c.process == 0);
    let opts = CheckOptions {
        threads: match &cluster {
            Some(c) => weft::threads::Threads::new(c.workers)?,
            None => opts.threads,
        },
        ..opts
    };
    let distributed = cluster.map(|c| {
        super::distributed::shared_searches(c, &args.dist) as weft::refine::SharedSearches
    });
    if distributed.is_some() && (opts.search != Search::Bfs || args.reduce) {
        return Err(UsageError(
            "a distributed check searches breadth first, without --reduce".into(),
        )
        .into());
    }
    if opts.search == Search::Bfs && names_csp_process(&args.implementation) {
        let spec = load_system(&args.spec, tau, &args.limits, &stop)?;
        if let Some(system) = super::csp_model::system_of(&args.implementation, &stop)? {
            return check_on_the_fly(&args, &spec, &system, &opts, distributed, prints, &stop);
        }
    }
    // Both systems are read at once on two threads, unless one is asked for (the
    // specification's error first).
    let (spec, implementation) = super::reduced_check::both(
        opts.threads.get() > 1,
        || load_system(&args.spec, tau, &args.limits, &stop),
        || load_system(&args.implementation, tau, &args.limits, &stop),
    );
    let (spec, implementation) = (spec?, implementation?);
    let reducing = args.reduce
        && matches!(
            opts.model,
            Model::Traces | Model::Failures | Model::FailuresDivergences
        );
    let mut result = if reducing {
        super::reduced_check::check_reduced(&spec, &implementation, &opts, &stop)?
    } else if distributed.is_some() {
        let engine = Engine::new(opts.threads)?;
        let checked = verdict_or_limit(check_system(
            &engine,
            &spec,
            &implementation,
            &opts,
            &search_options(&args, distributed),
            &stop,
        ))?;
        let mut result = checked.result;
        if let (Some(cex), Some(state)) = (&mut result.counterexample, checked.impl_state) {
            cex.impl_state = state;
        }
        result
    } else {
        verdict_or_limit(check_until(&spec, &implementation, &opts, &stop))?
    };
    if let Some(cex) = &mut result.counterexample {
        // As numbered in the implementation's file.
        cex.impl_state = implementation.state_number(cex.impl_state);
    }
    if !prints {
    } else if args.json {
        println!("{}", to_json(&result));
    } else {
        print!(
            "{}",
            explain(&result, &args.spec, &args.implementation, None)
        );
        print!("{}", stats_line(&result));
    }
    Ok(if result.holds() {
        EXIT_HOLDS
    } else {
        EXIT_FAILS
    })
}

/// Whether `arg` names a process of a CSPm script (`FILE.csp:PROCESS`), which is checked on
/// the fly.
fn names_csp_process(arg: &str) -> bool {
    arg.rsplit_once(':')
        .is_some_and(|(file, _)| super::csp_model::is_csp(Path::new(file)))
}

/// A check's result, or its stop as [`LimitReached`] (no verdict).
pub(super) fn verdict_or_limit<T>(checked: Result<T, RefineError>) -> Result<T> {
    match checked {
        Err(RefineError::Stopped(reason)) => Err(LimitReached(format!(
            "the refinement check was stopped by {}: no verdict",
            reason.describe()
        ))
        .into()),
        other => Ok(other?),
    }
}

/// Checks a CSPm implementation on the fly (the product explored as far as the check needs,
/// never the implementation alone); its state is shown as CSPm, per component.
fn check_on_the_fly(
    args: &RefinesArgs,
    spec: &Lts,
    system: &CspSystem,
    opts: &CheckOptions,
    distributed: Option<weft::refine::SharedSearches>,
    prints: bool,
    stop: &StopSignal,
) -> Result<i32> {
    let engine = Engine::new(opts.threads)?;
    let system_opts = search_options(args, distributed);
    let checked = check_system(&engine, spec, system, opts, &system_opts, stop);
    if let Some(e) = system.take_error() {
        return Err(e.into());
    }
    let checked = verdict_or_limit(checked)?;
    let result = &checked.result;
    let components = checked
        .impl_state
        .map(|s| system.describe_components(s))
        .unwrap_or_default();
    if !prints {
    } else if args.json {
        let mut value = to_json(result);
        if let Some(s) = checked.impl_state {
            value["counterexample"]["process"] = system.describe(s).into();
            value["counterexample"]["components"] = serde_json::to_value(&components)?;
        }
        println!("{value}");
    } else {
        print!(
            "{}",
            explain(result, &args.spec, &args.implementation, Some(&components))
        );
        print!("{}", stats_line(result));
    }
    Ok(if result.holds() {
        EXIT_HOLDS
    } else {
        EXIT_FAILS
    })
}

/// The options of an on-the-fly product search: the state limit, compact pairs first, and the
/// processes of a distributed run if any.
fn search_options(
    args: &RefinesArgs,
    distributed: Option<weft::refine::SharedSearches>,
) -> SystemOptions {
    SystemOptions {
        max_pairs: args.limits.max_states,
        on_level: None,
        compact: true,
        distributed,
    }
}

fn to_json(result: &CheckResult) -> serde_json::Value {
    serde_json::json!({
        "holds": result.holds(),
        "model": result.model.name(),
        "counterexample": result.counterexample,
        "stats": result.stats,
    })
}

/// `{a, b}`.
pub(super) fn braces(events: &[String]) -> String {
    format!("{{{}}}", events.join(", "))
}

/// Events a text report lists in one set before it abbreviates (`--json` has them all).
const LISTED_EVENTS: usize = 16;

/// Sets a text report lists before it abbreviates.
const LISTED_SETS: usize = 6;

/// `{a, b, …}`, abbreviated after [`LISTED_EVENTS`] events with their count.
fn braces_abbreviated(events: &[String]) -> String {
    if events.len() <= LISTED_EVENTS {
        return braces(events);
    }
    format!(
        "{{{}, … ({} events)}}",
        events[..LISTED_EVENTS].join(", "),
        events.len()
    )
}

/// `<a, b>`.
pub(super) fn angle(trace: &[String]) -> String {
    format!("<{}>", trace.join(", "))
}

/// The FDR-style lines of a refinement counterexample: the trace, then what the
/// implementation does at its end and what the specification allows there. Callers add the
/// implementation's state in their own terms (a number, a process).
pub(super) fn explain_violation(out: &mut String, cex: &Counterexample) {
    let _ = writeln!(out, "  trace: {}", angle(&cex.trace));
    if cex.acceptances.iter().any(Option::is_some) {
        let _ = writeln!(out, "  refusals observed along the trace:");
        for (i, (event, acceptance)) in cex.trace.iter().zip(&cex.acceptances).enumerate() {
            let _ = match acceptance {
                Some(accepted) => writeln!(
                    out,
                    "    before {event} (event {}): stable, offering only {}, refusing every \
                     other event",
                    i + 1,
                    braces(accepted)
                ),
                None => writeln!(out, "    before {event} (event {}): unstable", i + 1),
            };
        }
    }
    match &cex.violation {
        Violation::Trace { event } => {
            let _ = writeln!(
                out,
                "  then the implementation performs {event}, which the specification cannot"
            );
        }
        Violation::Refusal {
            refused,
            spec_acceptances,
        } => {
            let _ = writeln!(
                out,
                "  then the implementation refuses {} in a stable state",
                braces_abbreviated(refused)
            );
            let tick_refused = refused.iter().any(|e| e == weft::refine::properties::TICK);
            if tick_refused {
                let _ = writeln!(
                    out,
                    "  the specification can terminate after the trace, so it can refuse every \
                     event but ✓"
                );
            }
            // A specification that can terminate has no acceptance set there when its only
            // stable behaviour is to terminate (as SKIP): the line above has said what it
            // refuses, and "refuses nothing" would contradict it.
            if spec_acceptances.is_empty() && tick_refused {
                let _ = writeln!(
                    out,
                    "  terminating is the specification's only stable behaviour there: it never \
                     refuses ✓"
                );
            } else if spec_acceptances.is_empty() {
                let _ = writeln!(
                    out,
                    "  the specification has no stable state after the trace, so it refuses nothing \
                     in a stable state"
                );
            } else {
                let mut sets: Vec<String> = spec_acceptances
                    .iter()
                    .take(LISTED_SETS)
                    .map(|a| braces_abbreviated(a))
                    .collect();
                if spec_acceptances.len() > LISTED_SETS {
                    sets.push(format!("… ({} sets)", spec_acceptances.len()));
                }
                let _ = writeln!(
                    out,
                    "  the specification's minimal acceptances there: {} (each of its stable \
                     states accepts all of one of them; the implementation refuses an event of each)",
                    sets.join(", ")
                );
            }
        }
        Violation::Divergence => {
            let _ = writeln!(
                out,
                "  then the implementation diverges; the specification does not"
            );
        }
        Violation::Revival {
            accepted,
            event,
            refused,
            spec_acceptances,
        } => {
            let _ = writeln!(
                out,
                "  then the implementation, stable and offering only {}, refuses every other \
                 event and performs {event}; the specification cannot (no stable state of it \
                 there refuses that much and can perform {event})",
                braces(accepted)
            );
            if spec_acceptances.is_empty() {
                let _ = writeln!(
                    out,
                    "  no stable state of the specification can perform {event} there"
                );
            } else {
                let sets: Vec<String> = spec_acceptances.iter().map(|a| braces(a)).collect();
                let _ = writeln!(
                    out,
                    "  its stable states that can perform {event} there accept {}: each also \
                     accepts an event of {}, which the implementation refuses",
                    sets.join(", "),
                    braces(refused)
                );
            }
        }
    }
}

/// The human-readable verdict and counterexample.
fn explain(
    result: &CheckResult,
    spec: &str,
    implementation: &str,
    components: Option<&[ComponentState]>,
) -> String {
    let mut out = String::new();
    let model = result.model.name();
    let Some(cex) = &result.counterexample else {
        let _ = writeln!(out, "holds: {implementation} refines {spec} ({model})");
        return out;
    };
    let _ = writeln!(
        out,
        "does not hold: {implementation} does not refine {spec} ({model})"
    );
    explain_violation(&mut out, cex);
    match components {
        None => {
            let _ = writeln!(
                out,
                "  ({} product steps, taus included; implementation state {})",
                cex.steps, cex.impl_state
            );
        }
        Some(components) => {
            let _ = writeln!(out, "  ({} product steps, taus included)", cex.steps);
            let _ = writeln!(out, "  implementation state, by component:");
            for c in components {
                let _ = writeln!(out, "    {c}");
            }
        }
    }
    out
}

fn stats_line(result: &CheckResult) -> String {
    let s = &result.stats;
    format!(
        "pairs explored {}, discovered {}, max working {}, antichain hits {}, misses {}, \
         max antichain {}, spec sets {}, {:.3} s\n",
        s.pairs_explored,
        s.pairs_discovered,
        s.max_working,
        s.antichain_hits,
        s.antichain_misses,
        s.max_antichain,
        s.spec_sets,
        s.seconds
    )
}
