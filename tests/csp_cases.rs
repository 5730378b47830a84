//! Data-driven CSPm cases (`tests/cases/`, format in its README): every script of
//! `should_pass/` loads and each of its assertions gets FDR's verdict, listed in order in the
//! sibling `.expected` file; every script of `should_fail/` is rejected (at load or when its
//! assertions run) with an error at the `line:col` its `.expected` names, whose message contains
//! each of the listed fragments.
//!
//! Each test runs every case of its folder and reports all mismatches at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use weft::csp::load_script;
use weft::threads::Threads;
use weft::verify::{AssertionRun, Verdict, VerifyError, VerifyOptions};

/// The `.csp` files of `tests/cases/<folder>`, sorted, each with its `.expected` file's text.
/// A script without an expectation, or an expectation without a script, is a failure.
fn cases(folder: &str, failures: &mut Vec<String>) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(folder);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    paths.sort();
    let mut found = Vec::new();
    for path in &paths {
        match path.extension().and_then(|e| e.to_str()) {
            Some("csp") => match std::fs::read_to_string(path.with_extension("expected")) {
                Ok(expected) => found.push((path.clone(), expected)),
                Err(e) => failures.push(format!("{}: no .expected file ({e})", path.display())),
            },
            Some("expected") if !path.with_extension("csp").exists() => {
                failures.push(format!("{}: no .csp file beside it", path.display()));
            }
            _ => {}
        }
    }
    found
}

/// The lines of an `.expected` file that say something: trimmed, neither empty nor comments.
fn meaningful_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// White space collapsed to single spaces, as weft reports an assertion's text.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Options of every run: small limits, so that a case that runs away stops instead of hanging.
fn options() -> VerifyOptions {
    VerifyOptions {
        threads: Threads::new(2).expect("2 threads"),
        max_states: Some(1_000_000),
        timeout: Some(Duration::from_secs(60)),
        ..VerifyOptions::default()
    }
}

/// Runs a `should_pass` case; returns its mismatches.
fn check_passing(path: &Path, expected: &str) -> Vec<String> {
    let name = path.display();
    let script = match load_script(path) {
        Ok(script) => Arc::new(script),
        Err(e) => return vec![format!("{name}: does not load: {e}")],
    };
    let mut problems: Vec<String> = script
        .errors()
        .iter()
        .map(|e| format!("{name}: error in a definition: {e}"))
        .collect();
    let wanted: Vec<(String, &str)> = meaningful_lines(expected)
        .map(|line| match line.rsplit_once(": ") {
            Some((text, verdict)) => (collapse(text), verdict.trim()),
            None => (collapse(line), "(no verdict given)"),
        })
        .collect();
    let results = AssertionRun::new(script, options()).run_all(|_| {});
    if results.len() != wanted.len() {
        problems.push(format!(
            "{name}: {} assertions in the script, {} lines in the .expected file",
            results.len(),
            wanted.len()
        ));
    }
    for (got, (text, verdict)) in results.iter().zip(&wanted) {
        let shown = match &got.verdict {
            Verdict::Error(e) => format!("error: {e}"),
            Verdict::Stopped { reason, .. } => format!("stopped by {}", reason.describe()),
            v => v.name().to_string(),
        };
        if got.text != *text || shown != *verdict {
            problems.push(format!(
                "{name}:{}: expected `{text}: {verdict}`, got `{}: {shown}`",
                got.location.line, got.text
            ));
        }
    }
    problems
}

/// What a `should_fail` case's `.expected` file asks for.
struct Rejection {
    line: u32,
    column: u32,
    fragments: Vec<String>,
}

fn parse_rejection(path: &Path, expected: &str) -> Result<Rejection, String> {
    let mut at = None;
    let mut fragments = Vec::new();
    for line in meaningful_lines(expected) {
        if let Some(position) = line.strip_prefix("at:") {
            let parsed = position.trim().split_once(':').and_then(|(l, c)| {
                Some((l.trim().parse::<u32>().ok()?, c.trim().parse::<u32>().ok()?))
            });
            match parsed {
                Some(p) if at.is_none() => at = Some(p),
                Some(_) => return Err(format!("{}: two `at:` lines", path.display())),
                None => {
                    return Err(format!(
                        "{}: `{line}` is not `at: LINE:COL`",
                        path.display()
                    ))
                }
            }
        } else if let Some(fragment) = line.strip_prefix("contains:") {
            fragments.push(fragment.trim().to_string());
        } else {
            return Err(format!(
                "{}: `{line}` is neither `at: LINE:COL` nor `contains: TEXT`",
                path.display()
            ));
        }
    }
    let Some((line, column)) = at else {
        return Err(format!("{}: no `at: LINE:COL` line", path.display()));
    };
    if fragments.is_empty() {
        return Err(format!("{}: no `contains: TEXT` line", path.display()));
    }
    Ok(Rejection {
        line,
        column,
        fragments,
    })
}

/// Every error of loading and running `path`: (line and column when positioned, message).
fn errors_of(path: &Path) -> Vec<(Option<(u32, u32)>, String)> {
    let script = match load_script(path) {
        Ok(script) => Arc::new(script),
        Err(e) => {
            let at = e.location.as_ref().map(|l| (l.line, l.column));
            return vec![(at, e.message)];
        }
    };
    let mut errors: Vec<_> = script
        .errors()
        .iter()
        .map(|e| {
            (
                e.location.as_ref().map(|l| (l.line, l.column)),
                e.message.clone(),
            )
        })
        .collect();
    for result in AssertionRun::new(script, options()).run_all(|_| {}) {
        match result.verdict {
            Verdict::Error(VerifyError::Script(e)) => {
                errors.push((e.location.as_ref().map(|l| (l.line, l.column)), e.message));
            }
            Verdict::Error(e @ VerifyError::Checker(_)) => errors.push((None, e.to_string())),
            _ => {}
        }
    }
    errors
}

/// Runs a `should_fail` case; returns its mismatches.
fn check_failing(path: &Path, expected: &str) -> Vec<String> {
    let want = match parse_rejection(path, expected) {
        Ok(want) => want,
        Err(problem) => return vec![problem],
    };
    let errors = errors_of(path);
    let name = path.display();
    if errors.is_empty() {
        return vec![format!(
            "{name}: accepted, and every assertion has a verdict"
        )];
    }
    let matches = |(at, message): &(Option<(u32, u32)>, String)| {
        *at == Some((want.line, want.column))
            && want.fragments.iter().all(|f| message.contains(f.as_str()))
    };
    if errors.iter().any(matches) {
        return Vec::new();
    }
    let got: Vec<String> = errors
        .iter()
        .map(|(at, message)| match at {
            Some((l, c)) => format!("{l}:{c}: {message}"),
            None => format!("(no position): {message}"),
        })
        .collect();
    vec![format!(
        "{name}: no error at {}:{} containing {:?}; the errors were:\n    {}",
        want.line,
        want.column,
        want.fragments,
        got.join("\n    ")
    )]
}

#[test]
fn should_pass_scripts_get_fdrs_verdicts() {
    let mut failures = Vec::new();
    let found = cases("should_pass", &mut failures);
    assert!(!found.is_empty(), "no should_pass cases");
    for (path, expected) in &found {
        failures.extend(check_passing(path, expected));
    }
    assert!(
        failures.is_empty(),
        "{} of {} should_pass cases:\n{}",
        failures.len(),
        found.len(),
        failures.join("\n")
    );
}

#[test]
fn should_fail_scripts_are_rejected_at_the_right_place() {
    let mut failures = Vec::new();
    let found = cases("should_fail", &mut failures);
    assert!(!found.is_empty(), "no should_fail cases");
    for (path, expected) in &found {
        failures.extend(check_failing(path, expected));
    }
    assert!(
        failures.is_empty(),
        "{} of {} should_fail cases:\n{}",
        failures.len(),
        found.len(),
        failures.join("\n")
    );
}
