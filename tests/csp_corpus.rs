//! CSPm scripts of the shared corpus: the ProB/FDR examples of `cspmf_parser_inputs` and the
//! problems of `itdojp_cspx`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::walk;
use weft::csp::{load_script, parser, AssertionCheck, ErrorKind};

/// cspmf inputs that use constructs outside weft's subset: (file, word of the message).
const CSPMF_OUT_OF_SUBSET: &[(&str, &str)] = &[];

/// cspmf inputs that parse but do not load, with the reason (a word of the message, why).
const CSPMF_LOAD_ERRORS: &[(&str, &str, &str)] = &[
    (
        "RepWithGuard.csp",
        "Couldn't match expected type",
        "`[] i : op @ STOP` draws from `op = 1`, an integer: a static type error (a ProB parser test)",
    ),
    (
        "exp.csp",
        "unknown name `x`",
        "a parser stress test using an undefined `x`",
    ),
    (
        "RepWithGuard.csp",
        "Couldn't match",
        "`[] i : op @ STOP` draws from `op = 1`, an integer (a ProB parser test): a static type error",
    ),
    (
        "oopsla.csp",
        "unknown name `Acks`",
        "`Acks` is never defined",
    ),
    (
        "prioProb.csp",
        "but this prefix gives it 1",
        "`out!e` with `channel out, e` (and `TestFact2` is defined twice; FDR rejects both)",
    ),
    (
        "protocol.fix.csp",
        "takes 2 arguments but is given 1",
        "FDR2 style: `hostof(h, p)` applied to one pair; FDR 3 and weft reject it",
    ),
];

/// cspmf inputs that load but fail when their definitions are evaluated or their processes
/// unfolded: (file, a word of the message, why). (`oopseq.csp` evaluates: its
/// `[] chan:{uptodown.1, downout0.x} @ chan?y` inputs nothing after the complete event
/// `downout0.x`, binding `y` to the empty extension, as FDR does.)
const CSPMF_EVAL_ERRORS: &[(&str, &str, &str)] = &[(
    "t1.csp",
    "not a complete event",
    "`{enter.GateSeg}` holds a partial event used as an event (the script marks the same \
         expression two lines above as a type error)",
)];

#[test]
fn cspmf_inputs_parse_and_load() {
    let dir = common::corpus_dir().join("csp/cspmf_parser_inputs");
    let oos: BTreeMap<&str, &str> = CSPMF_OUT_OF_SUBSET.iter().copied().collect();
    let load_errors: BTreeMap<&str, &str> =
        CSPMF_LOAD_ERRORS.iter().map(|(f, w, _)| (*f, *w)).collect();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csp" || x == "fdr2"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 40,
        "expected the 42 cspmf scripts, found {}",
        files.len()
    );
    let eval_errors: BTreeMap<&str, &str> =
        CSPMF_EVAL_ERRORS.iter().map(|(f, w, _)| (*f, *w)).collect();
    let (mut parsed, mut loaded, mut evaluated, mut failures) = (0, 0, 0, Vec::new());
    for path in &files {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        match (parser::parse_file(path), oos.get(name.as_str())) {
            (Ok(_), None) => parsed += 1,
            (Err(e), Some(word))
                if e.kind == ErrorKind::Unsupported && e.message.contains(word) =>
            {
                continue
            }
            // the parser keeps an unsupported declaration as `Invalid` and reads the rest
            (Ok((_, decls)), Some(word))
                if decls.iter().any(|d| {
                    matches!(&d.kind, weft::csp::ast::DeclKind::Invalid(i)
                        if i.kind == ErrorKind::Unsupported && i.message.contains(word))
                }) =>
            {
                continue
            }
            (r, _) => {
                failures.push(format!("{name}: parse: {:?}", r.err()));
                continue;
            }
        }
        let script = match (load_checked(path), load_errors.get(name.as_str())) {
            (Ok(s), None) => s,
            (Err(e), Some(word)) if e.message.contains(word) && e.location.is_some() => continue,
            (r, _) => {
                failures.push(format!("{name}: load: {:?}", r.err()));
                continue;
            }
        };
        loaded += 1;
        // evaluate every definition and unfold the processes of every assertion
        let deep = script.evaluate_all_definitions().and_then(|()| {
            for a in script.assertions() {
                for p in a.check.as_ref().map_err(Clone::clone)?.processes() {
                    walk(&script, p, 3000)?;
                }
            }
            Ok(())
        });
        match (deep, eval_errors.get(name.as_str())) {
            (Ok(()), None) => evaluated += 1,
            (Err(e), Some(word)) if e.message.contains(word) && e.location.is_some() => {}
            (r, _) => failures.push(format!("{name}: evaluation: {:?}", r.err())),
        }
    }
    println!(
        "cspmf: {} files, {parsed} parse, {} outside the subset, {loaded} load, {} load errors \
         (listed), {evaluated} evaluate completely, {} evaluation errors (listed)",
        files.len(),
        CSPMF_OUT_OF_SUBSET.len(),
        CSPMF_LOAD_ERRORS.len(),
        CSPMF_EVAL_ERRORS.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Loads a script; its first error (load error, error of a definition, or error of an
/// assertion) if it has one.
fn load_checked(path: &Path) -> Result<weft::csp::Script, weft::csp::CspError> {
    let script = load_script(path)?;
    if let Some(e) = script.errors().first() {
        return Err(e.clone());
    }
    if let Some(e) = script
        .assertions()
        .iter()
        .find_map(|a| a.check.as_ref().err())
    {
        return Err(e.clone());
    }
    Ok(script)
}

fn problem_dir(name: &str) -> std::path::PathBuf {
    common::corpus_dir()
        .join("csp/itdojp_cspx/problems")
        .join(name)
}

fn expect_error(problem: &str, kind: ErrorKind, line: u32, column: u32, word: &str) {
    let path = problem_dir(problem).join("model.cspm");
    let err = load_checked(&path).expect_err("the model must be rejected");
    assert_eq!(err.kind, kind, "{err}");
    let loc = err.location.clone().expect("a positioned error");
    assert_eq!((loc.line, loc.column), (line, column), "{err}");
    assert!(err.message.contains(word), "{err}");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}:{line}:{column}: error: ", path.display())),
        "{shown}"
    );
}

#[test]
fn itdojp_p001_syntax_error_is_positioned() {
    expect_error("P001_syntax_error", ErrorKind::Syntax, 3, 7, "STOP");
}

#[test]
fn itdojp_p002_undefined_identifier_is_positioned() {
    expect_error(
        "P002_undefined_identifier",
        ErrorKind::UnknownName,
        4,
        16,
        "`Q`",
    );
}

/// `P = ch!2 -> STOP` with `channel ch : {0..1}`: the prefix is the whole body of a
/// definition with no parameters, so every use of `P` fails; the script is refused at load
/// (cspx's expectation), where a value out of range in a branch evaluation may not reach is
/// an error only when the search reaches it (`should_pass/lang10_range_dead_branch`).
#[test]
fn itdojp_p003_value_outside_channel_type_is_positioned() {
    expect_error(
        "P003_type_error_channel_payload_out_of_range",
        ErrorKind::Type,
        3,
        8,
        "outside the type of field 1 of channel `ch`",
    );
}

#[test]
fn itdojp_other_problems_load_with_their_assertions() {
    let root = common::corpus_dir().join("csp/itdojp_cspx/problems");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("problems folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut loaded = 0;
    for dir in dirs {
        let name = dir.file_name().expect("name").to_string_lossy().to_string();
        if ["P001", "P002", "P003"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        for entry in std::fs::read_dir(&dir).expect("problem folder") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|x| x != "cspm") {
                continue;
            }
            let script = load_script(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let text = std::fs::read_to_string(&path).expect("model text");
            let asserts = text
                .lines()
                .filter(|l| l.trim_start().starts_with("assert"))
                .count();
            assert_eq!(script.assertions().len(), asserts, "{name}");
            for a in script.assertions() {
                assert!(text
                    .lines()
                    .nth(a.location.line as usize - 1)
                    .is_some_and(|l| l.contains("assert")));
                assert!(!a.text.starts_with("assert"), "{}", a.text);
            }
            loaded += 1;
        }
    }
    assert!(loaded >= 34, "only {loaded} models loaded");
}

#[test]
fn itdojp_dining_philosophers_assertion_is_a_deadlock_check() {
    let path = problem_dir("P901_dining_philosophers_small").join("model.cspm");
    let script = load_script(Path::new(&path)).expect("loads");
    let [a] = script.assertions() else {
        panic!("one assertion expected")
    };
    assert_eq!(a.text, "System :[deadlock free [F]]");
    assert!(matches!(a.check, Ok(AssertionCheck::DeadlockFree { .. })));
    assert_eq!(a.location.line, 8);
}
