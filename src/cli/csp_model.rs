//! Loading CSPm models for the commands: the script, the process to explore, its system.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use super::{LimitReached, UsageError};

use weft::csp::{load_script_until, CspSystem, ErrorKind, Proc, Script, Value};
use weft::explore::{try_explore, ExploreOptions, StopReason, StopSignal};

use super::limits::SearchArgs;
use weft::lts::Lts;

/// True if `path` names a CSPm script (`.csp`, `.cspm`).
pub fn is_csp(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("csp" | "cspm")
    )
}

/// Whether `path` names an LTS file (`.aut` or `.aut.gz`).
pub fn is_aut(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".aut") || name.ends_with(".aut.gz")
}

/// Loads the script at `path` (errors carry their file, line and column).
///
/// `explore` and `refines` work on one process of a script that must be sound as a whole (as
/// FDR loads it): an error anywhere in the script (a definition, an assertion) is an error
/// here. `weft check` instead checks every assertion the errors leave intact.
///
/// The load stops (an error of kind `Stopped`, exit 2) when `stop` is raised: the caller's
/// watchdog watches the run's memory and time limits from before the load.
pub fn load(path: &Path, stop: &StopSignal) -> Result<Arc<Script>> {
    let script = load_script_until(path, stop)?;
    let first_error = script.errors().first().cloned().or_else(|| {
        script
            .assertions()
            .iter()
            .find_map(|a| a.check.as_ref().err().cloned())
    });
    match first_error {
        Some(e) => Err(e.into()),
        None => Ok(Arc::new(script)),
    }
}

/// The process named by `spec` (`P`, or `P(3, true)` with integer or boolean arguments);
/// without `spec`: `SYSTEM` if defined, else the last process the script declares.
pub fn select_process(script: &Script, spec: Option<&str>) -> Result<(String, Proc)> {
    if let Some(spec) = spec {
        let (name, args) = parse_call(spec)?;
        let proc = match script.process(&name, &args) {
            Ok(proc) => proc,
            Err(e) if e.kind == ErrorKind::UnknownName && e.location.is_none() => {
                return Err(UsageError(format!("{}; {}", e.message, defines(script))).into())
            }
            Err(e) => return Err(e.into()),
        };
        return Ok((spec.to_string(), proc));
    }
    let names = script.definition_names();
    if names.contains(&"SYSTEM") {
        return Ok(("SYSTEM".into(), script.process("SYSTEM", &[])?));
    }
    for name in names.iter().rev() {
        match script.process(name, &[]) {
            Ok(p) => return Ok((name.to_string(), p)),
            // A constant or a function: not a candidate.
            Err(e) if matches!(e.kind, ErrorKind::Type | ErrorKind::Arity) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(UsageError(
        "the script defines no process without parameters (name one with --process)".into(),
    )
    .into())
}

/// The processes without parameters that `script` defines, in source order.
pub fn process_names(script: &Script) -> Vec<String> {
    script
        .definition_names()
        .into_iter()
        .filter(|name| script.process(name, &[]).is_ok())
        .map(str::to_string)
        .collect()
}

/// `the script defines the processes A, B` (or that it defines none without parameters).
pub fn defines(script: &Script) -> String {
    let names = process_names(script);
    if names.is_empty() {
        "the script defines no process without parameters".to_string()
    } else {
        format!("the script defines the processes {}", names.join(", "))
    }
}

/// Splits `P(1, true)` into the name and the argument values.
fn parse_call(spec: &str) -> Result<(String, Vec<Value>)> {
    let spec = spec.trim();
    let Some(open) = spec.find('(') else {
        return Ok((spec.to_string(), Vec::new()));
    };
    let Some(inner) = spec[open + 1..].strip_suffix(')') else {
        bail!("`{spec}`: expected `NAME(ARG, ...)`");
    };
    let args = inner
        .split(',')
        .map(|a| {
            let a = a.trim();
            match a {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => a.parse::<i64>().map(Value::Int).with_context(|| {
                    format!("`{a}`: process arguments on the command line are integers or booleans")
                }),
            }
        })
        .collect::<Result<_>>()?;
    Ok((spec[..open].trim().to_string(), args))
}

/// `FILE.csp:PROCESS` as a system (for an on-the-fly check); `None` when `arg` is not of
/// that form.
pub fn system_of(arg: &str, stop: &StopSignal) -> Result<Option<CspSystem>> {
    let Some((file, process)) = arg.rsplit_once(':') else {
        return Ok(None);
    };
    if !is_csp(Path::new(file)) {
        return Ok(None);
    }
    Ok(Some(system_named(arg, file, process, stop)?))
}

/// The system of `process` in the script `file` (`arg` is `file:process`, for messages); its
/// load stops when `stop` is raised.
fn system_named(arg: &str, file: &str, process: &str, stop: &StopSignal) -> Result<CspSystem> {
    let script = load(Path::new(file), stop)?;
    if process.trim().is_empty() {
        return Err(UsageError(format!(
            "`{arg}`: name the process after the colon; {}",
            defines(&script)
        ))
        .into());
    }
    let (_, proc) = select_process(&script, Some(process))?;
    Ok(CspSystem::new(&script, &proc)?)
}

/// `FILE.csp:PROCESS` as an explicit LTS (explored with every core), stopping with
/// [`LimitReached`] past `max_states` states.
pub fn lts_of(arg: &str, search: &SearchArgs, stop: &StopSignal) -> Result<Lts> {
    let max_states = search.max_states;
    let Some((file, process)) = arg.rsplit_once(':') else {
        return Err(UsageError(format!("`{arg}`: expected FILE.csp:PROCESS")).into());
    };
    let system = system_named(arg, file, process, stop)?;
    let opts = ExploreOptions {
        threads: search.threads(),
        record_transitions: true,
        max_states,
        on_level: None,
        ..Default::default()
    };
    let exploration = try_explore(&system, &opts, stop)?;
    if let Some(e) = system.take_error() {
        return Err(e.into());
    }
    if let Some(reason) = exploration.stats.stopped {
        let limit = match (reason, max_states) {
            (StopReason::StateLimit, Some(n)) => format!(", --max-states {n}"),
            _ => String::new(),
        };
        return Err(LimitReached(format!(
            "stopped exploring {arg} by {} ({} states, {} transitions so far{limit}): no verdict",
            reason.describe(),
            exploration.stats.states,
            exploration.stats.transitions,
        ))
        .into());
    }
    Ok(exploration.to_lts(&system))
}
