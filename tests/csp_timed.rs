//! Timed sections (`Timed(et) { ... }`): the transition systems of timed processes (state and
//! transition counts worked out by hand from the tock-CSP translation, each also held against
//! the slow interpreter of `common::csp_oracle`), every process of the timed cases against
//! the oracle, and the names and values a section defines.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::csp_oracle::{compare, system_lts};
use weft::csp::{load_script, load_str, ErrorKind, Script, Value};

fn script_of(src: &str) -> Arc<Script> {
    Arc::new(load_str("t.csp", src, Path::new(".")).unwrap())
}

/// States and transitions of `name` (checked against the oracle too).
fn counts(src: &str, name: &str) -> (u32, usize) {
    let script = script_of(src);
    let p = script.process(name, &[]).unwrap();
    assert!(compare(&script, &p, src), "{src}: too big");
    let lts = system_lts(&script, &p, 2).unwrap().unwrap();
    (lts.states, lts.transitions.len())
}

/// The labels of the transitions of `name`'s initial state, sorted.
fn initials(src: &str, name: &str) -> Vec<String> {
    let script = script_of(src);
    let p = script.process(name, &[]).unwrap();
    let lts = system_lts(&script, &p, 1).unwrap().unwrap();
    let mut labels: Vec<String> = lts
        .transitions
        .iter()
        .filter(|t| t.0 == 0)
        .map(|t| t.1.clone())
        .collect();
    labels.sort();
    labels
}

const HEAD: &str = "channel tock, a, b, c\n";

fn timed(body: &str) -> String {
    format!("{HEAD}Timed(\\ _ @ 1) {{\n{body}\n}}\n")
}

#[test]
fn prefix_lets_time_pass_then_takes_its_duration() {
    // a -> STOP: the prefix (tock to itself, a), one tock after a, then TSTOP (tock forever)
    assert_eq!(counts(&timed("P = a -> STOP"), "P"), (3, 4));
    assert_eq!(initials(&timed("P = a -> STOP"), "P"), ["a", "tock"]);
    // et(a) = 3: three tocks after a
    let src = format!("{HEAD}Timed(\\ _ @ 3) {{ P = a -> STOP }}");
    assert_eq!(counts(&src, "P"), (5, 6));
    // et(a) = 0: TSTOP right after a
    let src = format!("{HEAD}Timed(\\ _ @ 0) {{ P = a -> STOP }}");
    assert_eq!(counts(&src, "P"), (2, 3));
}

#[test]
fn external_choice_is_not_resolved_by_tock() {
    // the choice tocks to itself; a and b both lead to one tock, then TSTOP
    assert_eq!(counts(&timed("P = a -> STOP [] b -> STOP"), "P"), (3, 5));
    // the internal choice cannot let time pass, so neither can the choice until it is resolved
    let src = timed("P = (a -> STOP |~| b -> STOP) [] c -> STOP");
    assert_eq!(counts(&src, "P"), (5, 11));
    assert_eq!(initials(&src, "P"), ["c", "tau", "tau"]);
}

#[test]
fn interleaving_synchronises_on_tock() {
    // the nine pairs of (a-side, b-side) in {prefix, one tock left, TSTOP}
    assert_eq!(counts(&timed("P = a -> STOP ||| b -> STOP"), "P"), (9, 15));
}

#[test]
fn interrupt_lets_time_pass_in_both() {
    // a does not end the interrupt (b still can), b does
    assert_eq!(counts(&timed("P = a -> STOP /\\ b -> STOP"), "P"), (5, 9));
}

#[test]
fn wait_and_skip() {
    // WAIT(2): two tocks, then TSKIP (tock to itself, or ✓)
    assert_eq!(counts(&timed("P = WAIT(2)"), "P"), (4, 4));
    assert_eq!(initials(&timed("P = SKIP"), "P"), ["tock", "✓"]);
    assert_eq!(initials(&timed("P = STOP"), "P"), ["tock"]);
}

#[test]
fn timed_priority_gives_tau_priority_over_tock() {
    // with priority the hidden a happens before any tock
    let src = timed("P = timed_priority((a -> STOP) \\ {a})");
    assert_eq!(counts(&src, "P"), (3, 3));
    assert_eq!(initials(&src, "P"), ["tau"]);
    // without it time may pass first
    let src = timed("P = (a -> STOP) \\ {a}");
    assert_eq!(counts(&src, "P"), (3, 4));
    assert_eq!(initials(&src, "P"), ["tau", "tock"]);
    // ✓ has priority over tock too
    assert_eq!(initials(&timed("P = timed_priority(SKIP)"), "P"), ["✓"]);
}

#[test]
fn processes_defined_outside_keep_their_meaning() {
    let src = format!("{HEAD}Q = a -> STOP\nTimed(\\ _ @ 1) {{ P = Q }}\nR = a -> STOP");
    assert_eq!(initials(&src, "P"), ["a"]);
    assert_eq!(initials(&src, "R"), ["a"]);
    assert_eq!(counts(&src, "P"), (2, 1));
}

#[test]
fn section_names_are_top_level_names() {
    let src =
        format!("{HEAD}Timed(\\ _ @ 1) {{\n  channel d\n  N = 3\n  P = a -> STOP\n}}\nM = N + 1");
    let script = script_of(&src);
    assert_eq!(script.value("M").unwrap(), Value::Int(4));
    assert_eq!(script.definition_names(), ["N", "P", "M"]);
    assert!(script.process("P", &[]).is_ok());
    assert!(script.errors().is_empty());
}

#[test]
fn errors_in_sections_are_positioned() {
    // WAIT outside a section, and an unknown name inside one
    let s = script_of(&format!("{HEAD}P = WAIT(1)"));
    let e = &s.errors()[0];
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert_eq!(
        e.location.as_ref().map(|l| (l.line, l.column)),
        Some((2, 5))
    );
    let s = script_of(&timed("P = a -> NOPE"));
    let e = &s.errors()[0];
    assert!(e.message.contains("`NOPE`"), "{}", e.message);
    assert_eq!(e.location.as_ref().map(|l| l.line), Some(3));
    // the duration of an event must be an integer
    let s = script_of(&format!("{HEAD}Timed(\\ e @ e) {{ P = a -> STOP }}"));
    let p = s.process("P", &[]).unwrap();
    let e = common::walk(&s, &p, 100).unwrap_err();
    assert!(e.message.contains("number of tocks"), "{}", e.message);
}

#[test]
fn timed_cases_match_the_oracle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/should_pass");
    let mut compared = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("timed_") && n.ends_with(".csp"))
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "timed cases not found in {}",
        dir.display()
    );
    for file in &files {
        let script = Arc::new(load_script(file).unwrap());
        for name in script.definition_names() {
            let procs: Vec<_> = match script.process(name, &[]) {
                Ok(p) => vec![p],
                Err(_) => [1, 2, 3]
                    .iter()
                    .filter_map(|&i| script.process(name, &[Value::Int(i)]).ok())
                    .collect(),
            };
            for p in procs {
                let what = format!("{}: {}", file.display(), script.show_proc(&p));
                if compare(&script, &p, &what) {
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 80, "only {compared} timed processes compared");
}

#[test]
fn wait_must_be_applied_in_a_section() {
    let s = script_of(&timed("f = WAIT\nP = f(1)"));
    let e = &s.errors()[0];
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("`WAIT`"), "{}", e.message);
    assert_eq!(
        e.location.as_ref().map(|l| (l.line, l.column)),
        Some((3, 5))
    );
}
