//! Errors in one part of a script: they stop only the assertions that use it, they are
//! positioned, and no bad input hangs (a channel type that needs its own events, a value that
//! calls itself) or hits a depth limit (wide choices, long chains).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::Arc;

use weft::csp::{load_str, AssertionCheck, CspError, ErrorKind, Script};
use weft::verify::{AssertionRun, Verdict, VerifyError, VerifyOptions};

fn load(text: &str) -> Script {
    load_str("t.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"))
}

/// The error of assertion `i`, which must have one.
fn assertion_error(s: &Script, i: usize) -> &CspError {
    match &s.assertions()[i].check {
        Err(e) => e,
        Ok(_) => panic!(
            "assertion {i} (`{}`) must be an error",
            s.assertions()[i].text
        ),
    }
}

/// The error that checking assertion `i` ends with: an evaluation error (in a prefix, say) is
/// met when the search reaches it, as in FDR, not when the script is loaded.
fn checked_error(s: &Arc<Script>, i: usize) -> CspError {
    let mut run = AssertionRun::new(s.clone(), VerifyOptions::default());
    match run.check(&s.assertions()[i]).verdict {
        Verdict::Error(VerifyError::Script(e)) => e,
        other => panic!(
            "assertion {i} (`{}`) must end with an error, not {other:?}",
            s.assertions()[i].text
        ),
    }
}

fn assert_ok(s: &Script, i: usize) -> &AssertionCheck {
    match &s.assertions()[i].check {
        Ok(c) => c,
        Err(e) => panic!("assertion {i} (`{}`): {e}", s.assertions()[i].text),
    }
}

fn line_col(e: &CspError) -> (u32, u32) {
    let l = e
        .location
        .as_ref()
        .unwrap_or_else(|| panic!("unpositioned: {e}"));
    (l.line, l.column)
}

#[test]
fn one_bad_definition_blocks_only_its_assertions() {
    let s = Arc::new(load(
        "channel a, b\n\
         P = a -> P\n\
         Q = a -> UNDEFINED\n\
         R = b -> Q\n\
         N = 1 / 0\n\
         S = c!N -> STOP\n\
         assert P :[deadlock free]\n\
         assert R :[deadlock free]\n\
         assert P [T= P\n\
         assert S :[deadlock free]\n\
         assert not P :[divergence free]\n\
         channel c : Int\n",
    ));
    assert_eq!(s.assertions().len(), 5);
    assert_ok(&s, 0);
    let e = assertion_error(&s, 1);
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert_eq!(line_col(e), (3, 10), "{e}");
    assert!(e.message.contains("unknown name `UNDEFINED`"), "{e}");
    assert_ok(&s, 2);
    assert_ok(&s, 3);
    let e = checked_error(&s, 3);
    assert!(e.message.contains("division by zero"), "{e}");
    assert_eq!(line_col(&e).0, 5, "{e}");
    assert!(s.assertions()[4].negated);
    assert_ok(&s, 4);
    // every error is reported by an assertion: none is left for warnings
    assert!(s.errors().is_empty(), "{:?}", s.errors());
}

#[test]
fn unsupported_constructs_break_only_their_names() {
    let s = load(
        "channel a\n\
         external mystery\n\
         transparent frobnicate\n\
         P = a -> P\n\
         Q = frobnicate(P)\n\
         R = mystery(P)\n\
         assert P :[deadlock free]\n\
         assert Q :[deadlock free]\n\
         assert R :[deadlock free]\n\
         assert P [F= P\n",
    );
    assert_ok(&s, 0);
    let e = assertion_error(&s, 1);
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(line_col(e), (3, 13), "{e}");
    assert!(
        e.message.contains("transparent function `frobnicate`"),
        "{e}"
    );
    let e = assertion_error(&s, 2);
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(line_col(e), (2, 10), "{e}");
    assert_ok(&s, 3);
}

#[test]
fn unused_broken_definitions_are_listed_as_errors() {
    let s = load(
        "channel a\n\
         P = a -> P\n\
         Q(x) = a -> Q(x, x)\n\
         P = STOP\n\
         assert STOP :[deadlock free]\n",
    );
    assert_ok(&s, 0);
    let errors: Vec<String> = s.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("t.csp:3:") && errors[0].contains("`Q` takes 1 argument"));
    assert!(errors[1].contains("t.csp:4:1") && errors[1].contains("defined more than once"));
}

#[test]
fn an_error_in_the_assertion_itself_is_its_own() {
    let s = load(
        "channel a\n\
         P = a -> P\n\
         assert P [T= Pp\n\
         assert P :[has trace]: <a, 1>\n\
         assert P :[deadlock free]\n",
    );
    let e = assertion_error(&s, 0);
    assert_eq!(line_col(e), (3, 14), "{e}");
    let e = assertion_error(&s, 1);
    assert_eq!(e.kind, ErrorKind::Type);
    assert_ok(&s, 2);
    assert!(s.errors().is_empty());
}

#[test]
fn a_bad_channel_type_breaks_the_channel_and_events() {
    let s = load(
        "channel a\n\
         channel c : {0..1/0}\n\
         P = a -> P\n\
         Q = c.1 -> STOP\n\
         assert P :[deadlock free]\n\
         assert Q :[deadlock free]\n\
         assert P [T= RUN(Events)\n",
    );
    assert_ok(&s, 0);
    assert_eq!(s.events().expect("events").events.len(), 1);
    let e = assertion_error(&s, 1);
    assert!(e.message.contains("division by zero"), "{e}");
    let e = assertion_error(&s, 2);
    assert!(
        e.message
            .contains("`Events` includes the events of channel `c`"),
        "{e}"
    );
}

#[test]
fn unknown_names_suggest_the_nearest() {
    let s = load(
        "channel a\n\
         SYSTEM = a -> SYSTEM\n\
         assert SYTEM :[deadlock free]\n\
         assert system :[deadlock free]\n\
         assert Xyzzy :[deadlock free]\n\
         assert SYSTEM [T= RUN({a}) ||| STP\n",
    );
    let msg = |i| assertion_error(&s, i).message.clone();
    assert_eq!(msg(0), "unknown name `SYTEM`; did you mean `SYSTEM`?");
    assert_eq!(msg(1), "unknown name `system`; did you mean `SYSTEM`?");
    assert_eq!(msg(2), "unknown name `Xyzzy`");
    assert_eq!(msg(3), "unknown name `STP`; did you mean `STOP`?");
}

#[test]
fn a_value_calling_itself_is_reported_as_not_terminating() {
    let s = Arc::new(load(
        "f(x) = f(x)\n\
         g(x) = g(x) + 1\n\
         h(n) = if n == 0 then 0 else 1 + h(n - 1)\n\
         N = f(0) + 1\n\
         M = g(2)\n\
         K = h(50000)\n\
         L = (if K == 50000 then STOP else SKIP)\n\
         channel c : {0..3}\n\
         P = c!N -> STOP\n\
         assert P :[deadlock free]\n\
         assert L :[deadlock free]\n",
    ));
    let e = checked_error(&s, 0);
    assert_eq!(line_col(&e), (1, 1), "{e}");
    assert!(
        e.message.contains("`f(0)` does not terminate")
            && e.message.contains("calls itself with the same arguments")
            && e.message.contains("used at t.csp:4:5"),
        "{e}"
    );
    let e = s.value("M").expect_err("M does not terminate");
    assert!(e.message.contains("`g(2)` does not terminate"), "{e}");
    assert_eq!(line_col(&e), (2, 1));
    // deep recursion that terminates is fine (evaluated at load, on the loader's stack)
    assert_ok(&s, 1);
}

// ------------------------------------------------------------- the weft binary, with a timeout

/// Runs `weft check` on `text`, killed after 20 s (a hang fails the test instead of
/// freezing the suite); its exit code and output.
fn weft_check(name: &str, text: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("weft-csp-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .arg("check")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("weft runs");
    let started = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break;
        }
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`weft check {name}` did not finish in 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

const SELF_TYPED: [(&str, &str, &str); 2] = [
    (
        "events.csp",
        "channel a\nchannel b : Events\nP = a -> STOP\nQ = b?x -> STOP\n",
        "t.csp:2:9: error: the type of channel `b` refers to the events of `b` (through `Events`)",
    ),
    (
        "productions.csp",
        "channel a\nchannel b : {| b |}\nP = a -> STOP\nQ = b?x -> STOP\n",
        "t.csp:2:9: error: the type of channel `b` refers to the events of `b`",
    ),
];

#[test]
fn a_channel_typed_by_a_process_is_a_static_type_error() {
    // `R` is a process, not a set: the type checker rejects the script when it loads (as
    // FDR does), before any channel type is evaluated
    let text = "channel a\nchannel b : R\nR = STOP [[ a <- b.true ]]\nQ = b?x -> STOP\n\
                P = a -> STOP\nassert Q :[deadlock free]\n";
    let e = load_str("t.csp", text, Path::new("/nonexistent")).expect_err("R is a process");
    assert!(e.message.contains("Couldn't match"), "{e}");
    assert!(e.location.is_some());
    let (code, out) = weft_check("process.csp", text);
    assert_eq!(code, 2, "{out}");
}

#[test]
fn a_channel_typed_by_its_own_events_is_an_error_not_a_hang() {
    for (name, text, expected) in SELF_TYPED {
        // in the library: the channel is broken, the rest of the script is fine
        let s = load(&format!(
            "{text}assert P :[deadlock free]\nassert Q :[deadlock free]\n"
        ));
        assert_ok(&s, 0);
        let e = assertion_error(&s, 1).to_string();
        assert!(e.starts_with(expected), "{name}: {e}");
        // and through the binary: no hang
        let (code, out) = weft_check(
            name,
            &format!("{text}assert Q :[deadlock free]\nassert P :[deadlock free]\n"),
        );
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains("refers to the events of `b`"), "{name}: {out}");
    }
}

#[test]
fn channel_types_evaluated_on_many_threads_do_not_deadlock() {
    let (_, text, _) = SELF_TYPED[0];
    let s = std::sync::Arc::new(load(&format!("{text}assert P :[deadlock free]\n")));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    assert!(s.channel_fields("b").expect("a channel").is_err());
                    assert_eq!(s.events().expect("the events of `a`").events.len(), 1);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("no panic");
    }
}

#[test]
fn a_choice_of_2000_branches_is_checked() {
    let branches: Vec<String> = (0..2000).map(|i| format!("c.{i} -> STOP")).collect();
    let text = format!(
        "channel c : {{0..1999}}\nP = {}\nassert P :[deadlock free]\nassert P [T= P\n",
        branches.join(" [] ")
    );
    let (code, out) = weft_check("wide.csp", &text);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fails"), "{out}");
}

#[test]
fn a_choice_of_20000_branches_and_a_chain_of_5000_sequences_are_checked() {
    let branches: Vec<String> = (0..20_000).map(|i| format!("c.{i} -> STOP")).collect();
    let steps = vec!["a -> SKIP"; 5000];
    let text = format!(
        "channel a\nchannel c : {{0..19999}}\nP = {}\nQ = {}\n\
         assert Q :[deadlock free]\nassert P [T= P\nassert Q [T= Q\n",
        branches.join(" [] "),
        steps.join(" ; ")
    );
    let (code, out) = weft_check("deep.csp", &text);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("fails"), "{out}");
}

/// Expressions of every shape nested `n` deep: a prefix chain, brackets, a left-associative
/// arithmetic chain, a right-leaning choice chain, negations, applications, sequences, sets,
/// conditionals, lets, tuples and a dotted event.
fn nested_scripts(n: usize) -> Vec<(&'static str, String)> {
    let ext = "\nchannel a\nchannel c : {0..2}\nchannel b : Bool\nf(y) = y\n";
    vec![
        ("prefixes", format!("P = {}STOP{ext}", "a -> ".repeat(n))),
        (
            "brackets",
            format!("P = {}STOP{}{ext}", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "sums",
            format!("x = {}1{ext}P = c!(x%3) -> STOP", "1+".repeat(n)),
        ),
        ("choices", format!("P = {}STOP{ext}", "STOP [] ".repeat(n))),
        (
            "negations",
            format!("x = {}true{ext}P = b!x -> STOP", "not ".repeat(n)),
        ),
        (
            "applications",
            format!(
                "x = {}1{}{ext}P = c!x -> STOP",
                "f(".repeat(n),
                ")".repeat(n)
            ),
        ),
        (
            "sequences",
            format!("x = {}1{}{ext}P = STOP", "<".repeat(n), ">".repeat(n)),
        ),
        (
            "sets",
            format!("x = {}1{}{ext}P = STOP", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "conditionals",
            format!(
                "x = {}1{}{ext}P = c!x -> STOP",
                "if true then ".repeat(n),
                " else 2".repeat(n)
            ),
        ),
        (
            "lets",
            format!("x = {}1{ext}P = c!x -> STOP", "let y = 1 within ".repeat(n)),
        ),
        (
            "tuples",
            format!("x = {}1{}{ext}P = STOP", "(1,".repeat(n), ")".repeat(n)),
        ),
        ("fields", format!("P = c{} -> STOP{ext}", ".0".repeat(n))),
    ]
}

#[test]
fn expressions_nested_too_deep_are_refused_not_a_stack_overflow() {
    // far beyond the bound: a positioned error, exit 2, for every shape
    for (name, body) in nested_scripts(200_000) {
        let (code, out) = weft_check(
            &format!("nested_{name}.csp"),
            &format!("{body}\nassert P :[deadlock free]\n"),
        );
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains("nested more than"), "{name}: {out}");
        assert!(out.contains(":2:") || out.contains(":1:"), "{name}: {out}");
    }
    // within it (a prefix chain of 15,000 events counts 30,000): every stage that walks the
    // expression does so without overflowing its stack (an answer, or for the ill-typed
    // dotted event an ordinary error)
    // (values nested deep, sequences of sequences..., are typed and compared in time
    // quadratic in their depth: 1,500 levels there)
    let values = ["sequences", "sets", "tuples"];
    let within = nested_scripts(15_000)
        .into_iter()
        .filter(|(name, _)| !values.contains(name))
        .chain(
            nested_scripts(1_500)
                .into_iter()
                .filter(|(name, _)| values.contains(name)),
        );
    for (name, body) in within {
        let (code, out) = weft_check(
            &format!("deep_{name}.csp"),
            &format!("{body}\nassert P :[deadlock free]\n"),
        );
        assert!((0..=2).contains(&code), "{name}: exit {code}: {out}");
        assert!(!out.contains("nested more than"), "{name}: {out}");
        if name != "fields" {
            assert!(code == 0 || code == 1, "{name}: exit {code}: {out}");
        }
    }
}

#[test]
fn a_constant_no_assertion_uses_is_never_computed() {
    // a billion triples: computed at load, this would take many seconds and gigabytes before
    // the collection limit stopped it; FDR computes a definition when it is first used
    let text = "channel a\nBig = card({(x, y, z) | x <- {0..1000}, y <- {0..1000}, \
                z <- {0..1000}})\nP = a -> P\nassert P :[deadlock free]\n";
    let started = Instant::now();
    let s = load(text);
    assert_ok(&s, 0);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "loading took {:?}",
        started.elapsed()
    );
}

#[test]
fn has_trace_of_the_empty_trace_evaluates_the_first_step() {
    let s = Arc::new(load(
        "channel c : {0..3}\n\
         R = c!head(<>) -> STOP\n\
         assert R :[has trace [T]]: <>\n\
         assert c!1 -> STOP :[has trace [T]]: <>\n",
    ));
    let e = checked_error(&s, 0);
    assert!(e.message.contains("`head` of the empty sequence"), "{e}");
    assert_eq!(line_col(&e), (2, 7), "{e}");
    let mut run = AssertionRun::new(s.clone(), VerifyOptions::default());
    assert!(matches!(
        run.check(&s.assertions()[1]).verdict,
        Verdict::Holds
    ));
}
