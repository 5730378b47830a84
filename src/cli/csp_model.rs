//! Loading CSPm models for the commands: the script, the process to explore, its system.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use weft::csp::{load_script, CspSystem, ErrorKind, Proc, Script, Value};
use weft::explore::{explore, ExploreOptions};
use weft::lts::Lts;

/// True if `path` names a CSPm script (`.csp`, `.cspm`).
pub fn is_csp(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("csp" | "cspm")
    )
}

/// Loads the script at `path` (errors carry their file, line and column).
pub fn load(path: &Path) -> Result<Arc<Script>> {
    Ok(Arc::new(load_script(path)?))
}

/// The process named by `spec` (`P`, or `P(3, true)` with integer or boolean arguments);
/// without `spec`: `SYSTEM` if defined, else the last process the script declares.
pub fn select_process(script: &Script, spec: Option<&str>) -> Result<(String, Proc)> {
    if let Some(spec) = spec {
        let (name, args) = parse_call(spec)?;
        let proc = script.process(&name, &args)?;
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
    bail!("the script defines no process without parameters (name one with --process)")
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

/// `FILE.csp:PROCESS` as an explicit LTS (explored with every core).
pub fn lts_of(arg: &str) -> Result<Lts> {
    let (file, process) = arg
        .rsplit_once(':')
        .with_context(|| format!("`{arg}`: expected FILE.csp:PROCESS"))?;
    let script = load(Path::new(file))?;
    let (_, proc) = select_process(&script, Some(process))?;
    let system = CspSystem::new(&script, &proc)?;
    let opts = ExploreOptions {
        record_transitions: true,
        ..Default::default()
    };
    let exploration = explore(&system, &opts);
    if let Some(e) = system.take_error() {
        return Err(e.into());
    }
    Ok(exploration.to_lts(&system))
}
