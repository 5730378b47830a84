//! The libcspm test suite (the parser and type checker FDR uses) against weft's front end.
//!
//! Every file is classified: accepted, rejected as outside weft's subset (the error must name
//! the construct), or rejected as erroneous. `should_pass` files must be accepted unless a
//! table below lists them with the reason; `should_fail` files must be rejected with a
//! positioned message unless `FAIL_NOT_REJECTED` lists them with the reason. Evaluator
//! `should_pass` files must also make every top-level boolean `test*` binding true, and every
//! `procTest*` process must unfold (all reachable terms) without error. An evaluator
//! `should_fail` file whose `test*` binding is false is rejected, as libcspm's runner has it
//! ("test11 was false", at the binding).
//!
//! Run with `--nocapture` to see the counts per folder.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use common::walk;
use weft::csp::{load_script, parser, CspError, ErrorKind, Value};

/// Files outside weft's subset: (path under `tests/`, a word the error message must contain).
const OUT_OF_SUBSET: &[(&str, &str)] = &[
    ("evaluator/should_pass/buffer.csp", "WEAK_BUFFER"),
    ("evaluator/should_pass/deter_test.csp", "external function"),
    (
        "evaluator/should_pass/failure_watchdog.csp",
        "external function",
    ),
    (
        "evaluator/should_pass/trace_watchdog.csp",
        "external function",
    ),
];

/// `should_pass` files weft rejects although they are within the subset's syntax, with the
/// reason: (path, a word the message must contain, why).
const PASS_REJECTED: &[(&str, &str, &str)] = &[
    (
        "prettyprinter/should_pass/timed_sections.csp",
        "`tock`",
        "a pretty-printer test: its timed sections have no `tock` (FDR requires `channel tock`)",
    ),
    (
        "parser/should_pass/module_instance_2.csp",
        "unknown module",
        "a parser test: `instance M1 = M2` instantiates a module the file does not define",
    ),
    (
        "parser/should_pass/module_with_no_argument_list.csp",
        "`im::y`",
        "a parser test: `print im::y` names an instance the file comments out",
    ),
    (
        "parser/should_pass/string_brackets.csp",
        "unknown name",
        "a parser test: uses `f`, which the file does not define (it parses)",
    ),
    (
        "parser/should_pass/type_annotations.csp",
        "unknown name",
        "a parser test: uses `x`, which the file does not define (its annotations parse)",
    ),
    (
        "typechecker/should_pass/dot_operator_2.csp",
        "incomplete",
        "weft compares values as it computes them and refuses the incomplete dotted value `IA.1` (libcspm only type-checks this file)",
    ),
    (
        "typechecker/should_pass/recursive_eq.csp",
        "depends on itself",
        "`subtype C = F2.B` of a recursive datatype: weft lowers a subtype to a set, which recursion makes infinite",
    ),
    (
        "typechecker/should_pass/recursive_eq5.csp",
        "draw from",
        "a subtype clause whose field is a tuple of sets (`VMMM2.(XXX2,XXX2)`) is not lowered to a set of values",
    ),
    (
        "evaluator/should_pass/call_stacks.csp",
        "Error:",
        "its assertion reaches `error(...)`, as in FDR (the file tests how the error's call stack is shown)",
    ),
    (
        "evaluator/should_pass/module_instance_transparent.csp",
        "N::normal",
        "`transparent normal` inside a module does not define `N::normal`",
    ),
    (
        "prettyprinter/should_pass/complete.csp",
        "incomplete",
        "a pretty-printer test: weft refuses the incomplete dotted value `IA.1` in the type of \
         channel `iveval` (libcspm only type-checks this file); its `start_at.-1`, outside \
         `start_at`'s type, is an error only where evaluated, as in FDR",
    ),
    (
        "prettyprinter/should_pass/output.csp",
        "incomplete",
        "a pretty-printer test: it includes svacomp.csp, where weft refuses the incomplete \
         dotted value `IA.1` in the type of channel `iveval` (libcspm only type-checks it)",
    ),
    (
        "prettyprinter/should_pass/refsva.csp",
        "unknown name",
        "a pretty-printer test: uses `ParReads`, which the file does not define",
    ),
    (
        "prettyprinter/should_pass/svacomp.csp",
        "unknown name",
        "a pretty-printer test: uses `ianums`, which the file does not define",
    ),
    (
        "parser/should_pass/assert_timed_section.csp",
        "`tock`",
        "a parser test: its timed section has no `tock` (FDR requires `channel tock`) and no `f`",
    ),
    (
        "parser/should_pass/timed_sections.csp",
        "`tock`",
        "a parser test: its timed sections have no `tock` (FDR requires `channel tock`), and it \
         uses names it does not define (`a`, `maosfklas`)",
    ),
    (
        "typechecker/should_pass/recursive_rect.csp",
        "outside the type",
        "weft evaluates datatype types when it loads a script: `{X.A.0, X.A.1}` contains X.A.1, \
         outside X's field type `{A.0}` (libcspm only type-checks this file)",
    ),
    (
        "prettyprinter/should_pass/zbullyr.csp",
        "unknown name",
        "uses `sbd`, which the file does not define (a pretty-printer test; it parses)",
    ),
];

/// `should_fail` files weft accepts, with the reason (a static error of dot types that weft's
/// type checker (`csp::typecheck`) cannot find with certainty would be listed here). None:
/// every `should_fail` file is rejected with a positioned message.
const FAIL_NOT_REJECTED: &[(&str, &str)] = &[];

const FOLDERS: [&str; 8] = [
    "parser/should_pass",
    "parser/should_fail",
    "typechecker/should_pass",
    "typechecker/should_fail",
    "evaluator/should_pass",
    "evaluator/should_fail",
    "desugar/should_fail",
    "prettyprinter/should_pass",
];

#[derive(Debug)]
enum Outcome {
    Accepted,
    OutOfSubset(CspError),
    Rejected(CspError),
    /// A `test*` binding that is not `true`: the binding and its value, and where it is.
    TestFalse(String, Option<weft::csp::source::Location>),
}

/// Loads `path`; with `deep`, also evaluates every definition, the `test*` bindings and the
/// `procTest*` processes.
fn outcome(path: &Path, folder: &str) -> Outcome {
    let parse_only = folder.starts_with("parser/") || folder.starts_with("prettyprinter/");
    let should_fail = folder.ends_with("should_fail");
    let evaluator = folder.starts_with("evaluator/");
    // "Rejected" is a failed load or a script reporting an error (in a definition, or in an
    // assertion): one bad part no longer fails the load, but it is still an error.
    let loaded = load_script(path).and_then(|s| {
        let first = s.errors().first().cloned().or_else(|| {
            s.assertions()
                .iter()
                .find_map(|a| a.check.as_ref().err().cloned())
        });
        match first {
            Some(e) => Err(e),
            None => Ok(s),
        }
    });
    let script = match loaded {
        Ok(s) => s,
        Err(e) if e.kind == ErrorKind::Unsupported => return Outcome::OutOfSubset(e),
        Err(e) => {
            if parse_only && !should_fail && parser::parse_file(path).is_ok() {
                // parser tests need not define every name they use
                return Outcome::Rejected(e);
            }
            return Outcome::Rejected(e);
        }
    };
    if should_fail {
        if let Err(e) = script.evaluate_all_definitions() {
            return classify(e);
        }
    }
    if should_fail || evaluator {
        for name in script.definition_names() {
            if !(name.starts_with("test") || name.starts_with("procTest")) {
                continue;
            }
            match script.value(name) {
                Ok(Value::Bool(true)) | Ok(Value::Func(_)) => {}
                Ok(Value::Proc(p)) => {
                    if let Err(e) = walk(&script, &p, 5000) {
                        return classify(e);
                    }
                }
                Ok(v) => {
                    if evaluator || should_fail {
                        return Outcome::TestFalse(
                            format!("{name} = {}", script.show(&v)),
                            script.definition_location(name),
                        );
                    }
                }
                Err(e) => return classify(e),
            }
        }
    }
    Outcome::Accepted
}

fn classify(e: CspError) -> Outcome {
    if e.kind == ErrorKind::Unsupported {
        Outcome::OutOfSubset(e)
    } else {
        Outcome::Rejected(e)
    }
}

#[test]
fn libcspm_suite_is_classified() {
    let root = common::corpus_dir().join("csp/libcspm_tests/tests");
    let out_of_subset: BTreeMap<&str, &str> = OUT_OF_SUBSET.iter().copied().collect();
    let pass_rejected: BTreeMap<&str, (&str, &str)> = PASS_REJECTED
        .iter()
        .map(|(f, w, why)| (*f, (*w, *why)))
        .collect();
    let fail_accepted: BTreeMap<&str, &str> = FAIL_NOT_REJECTED.iter().copied().collect();
    let mut failures = Vec::new();
    let mut listed = HashSet::new();
    let suggest = std::env::var_os("WEFT_SUGGEST_TABLES").is_some();
    for folder in FOLDERS {
        let mut files: Vec<_> = std::fs::read_dir(root.join(folder))
            .unwrap_or_else(|e| panic!("cannot read {folder}: {e}"))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "csp"))
            .collect();
        files.sort();
        let should_fail = folder.ends_with("should_fail");
        let (mut accepted, mut unsupported, mut rejected, mut failing) = (0, 0, 0, 0);
        for path in files {
            let file = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .to_string();
            let key = format!("{folder}/{file}");
            let out = outcome(&path, folder);
            let problem: Option<String> = match (&out, should_fail) {
                (Outcome::Accepted, false) => {
                    accepted += 1;
                    (out_of_subset.contains_key(key.as_str())
                        || pass_rejected.contains_key(key.as_str()))
                    .then(|| "accepted but listed as rejected".to_string())
                }
                (Outcome::OutOfSubset(e), false) => {
                    unsupported += 1;
                    match out_of_subset.get(key.as_str()) {
                        Some(word) if e.message.contains(word) && e.location.is_some() => None,
                        _ => Some(format!("out of subset, not listed: {e}")),
                    }
                }
                (Outcome::Rejected(e), false) => {
                    rejected += 1;
                    match pass_rejected.get(key.as_str()) {
                        Some((word, _)) if e.message.contains(word) => None,
                        _ => Some(format!("rejected: {e}")),
                    }
                }
                (Outcome::TestFalse(t, _), false) => {
                    failing += 1;
                    Some(format!("test binding not true: {t}"))
                }
                (Outcome::Accepted, true) => {
                    accepted += 1;
                    (!fail_accepted.contains_key(key.as_str()))
                        .then(|| "should_fail file accepted".to_string())
                }
                // libcspm's runner fails an evaluator test whose `test*` binding is false
                // ("test11 was false", at the binding): that is how non_rect.csp, whose
                // `extensions(F)` is `{D.0, D.1, E.false}` in libcspm as in weft, fails
                (Outcome::TestFalse(t, loc), true) if folder.starts_with("evaluator/") => {
                    rejected += 1;
                    if loc.is_none() {
                        Some(format!("test binding not true, without a position: {t}"))
                    } else if fail_accepted.contains_key(key.as_str()) {
                        Some("rejected but listed as not rejected".to_string())
                    } else {
                        None
                    }
                }
                (Outcome::TestFalse(t, _), true) => {
                    accepted += 1;
                    (!fail_accepted.contains_key(key.as_str()))
                        .then(|| format!("should_fail file accepted ({t})"))
                }
                (Outcome::OutOfSubset(e), true) | (Outcome::Rejected(e), true) => {
                    if matches!(out, Outcome::OutOfSubset(_)) {
                        unsupported += 1;
                    } else {
                        rejected += 1;
                    }
                    if e.location.is_none() {
                        Some(format!("rejected without a position: {e}"))
                    } else if fail_accepted.contains_key(key.as_str()) {
                        Some("rejected but listed as not rejected".to_string())
                    } else {
                        None
                    }
                }
            };
            listed.insert(key.clone());
            if let Some(p) = problem {
                if suggest {
                    println!("SUGGEST {key} :: {out:?}");
                }
                failing += 1;
                failures.push(format!("{key}: {p}"));
            }
        }
        println!(
            "{folder:28} accepted {accepted:3}  rejected as outside the subset {unsupported:3}  \
             rejected as erroneous {rejected:3}  failing {failing:3}"
        );
    }
    for key in out_of_subset
        .keys()
        .chain(pass_rejected.keys())
        .chain(fail_accepted.keys())
    {
        if !listed.contains(*key) {
            failures.push(format!("{key}: listed in a table but not found"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
