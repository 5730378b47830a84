//! `weft compare` on CSPm processes: the pair of systems is explored on the fly and the
//! comparison stops at the first difference (GreASE's approach, seed 002). The verdicts below
//! follow from the definitions, by hand (see each test's comment).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("weft runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reduce_compare_on_the_fly");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn compare(first: &str, second: &str, equivalence: &str) -> (Option<i32>, serde_json::Value) {
    let out = weft(&[
        "compare",
        first,
        second,
        "--equivalence",
        equivalence,
        "--json",
    ]);
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{out:?}");
    (code, json(&out))
}

const EQUIVALENCES: [&str; 5] = [
    "strong",
    "branching",
    "divergence-preserving-branching",
    "trace",
    "weak-trace",
];

/// The target: SYSTEM of examples/scaling_philosophers.csp (6.6 million states)
/// against the copy in which thinks.0 is renamed to ponders.0 (see the example's header):
/// initially SYSTEM offers thinks.0..thinks.7, the copy ponders.0 and thinks.1..thinks.7, so
/// the empty trace followed by ponders.0 (the smallest differing event) separates them in
/// every equivalence; found in well under a second, without building either system.
#[test]
fn renamed_philosopher_is_told_apart_at_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let system = format!(
        "{}:SYSTEM",
        root.join("examples/scaling_philosophers.csp").display()
    );
    let renamed = format!(
        "{}:RENAMED",
        root.join("examples/compare_renamed_philosopher.csp")
            .display()
    );
    for eq in EQUIVALENCES {
        let started = Instant::now();
        let (code, report) = compare(&system, &renamed, eq);
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(code, Some(1), "{eq}: {report}");
        assert_eq!(report["equivalent"], false);
        let d = &report["difference"];
        assert_eq!(d["trace"], serde_json::json!([]), "{eq}: {report}");
        assert_eq!(d["side"], "second", "{eq}: {report}");
        assert_eq!(d["event"], "ponders.0", "{eq}: {report}");
        assert!(
            report["seconds"].as_f64().unwrap() < 1.0,
            "{eq}: took {report}"
        );
        // The whole command (loading the script included), with slack for a loaded machine.
        assert!(wall < 10.0, "{eq}: whole command took {wall} s");
    }
}

/// P = a -> b -> c -> P and Q = a -> b -> d -> Q: both deterministic; after <a, b> P offers
/// only c and Q only d, so every equivalence separates them with trace <a, b>, and c
/// (smaller than d) is the event reported: P (first) can do it, Q cannot.
#[test]
fn a_deeper_difference_gives_the_shortest_trace() {
    let script = scratch(
        "deep.csp",
        "channel a, b, c, d\nP = a -> b -> c -> P\nQ = a -> b -> d -> Q\n",
    );
    let s = script.display();
    for eq in EQUIVALENCES {
        let (code, report) = compare(&format!("{s}:P"), &format!("{s}:Q"), eq);
        assert_eq!(code, Some(1), "{eq}: {report}");
        let d = &report["difference"];
        assert_eq!(d["trace"], serde_json::json!(["a", "b"]), "{eq}: {report}");
        assert_eq!(d["side"], "first", "{eq}: {report}");
        assert_eq!(d["event"], "c", "{eq}: {report}");
    }
}

/// P = a -> (b -> STOP [] c -> STOP) and Q = a -> b -> STOP [] a -> c -> STOP have the same
/// traces {<>, <a>, <a,b>, <a,c>} (and no taus): trace and weak-trace equivalent. Not
/// bisimilar in any sense: Q's state after its first a can do b but not c, and no state of P
/// after a matches it. The on-the-fly search finds no trace difference; the bisimulation
/// verdict comes from the explicit systems.
#[test]
fn same_traces_but_not_bisimilar() {
    let script = scratch(
        "branch.csp",
        "channel a, b, c\nP = a -> (b -> STOP [] c -> STOP)\nQ = a -> b -> STOP [] a -> c -> STOP\n",
    );
    let s = script.display();
    for eq in EQUIVALENCES {
        let (code, report) = compare(&format!("{s}:P"), &format!("{s}:Q"), eq);
        let traces_only = eq == "trace" || eq == "weak-trace";
        assert_eq!(
            code,
            Some(if traces_only { 0 } else { 1 }),
            "{eq}: {report}"
        );
    }
}

/// P = a -> STOP and Q = (a -> b -> STOP) \ {b}, which does a then a tau to STOP. Weak
/// traces agree ({<>, <a>}); the tau after a is inert (it leads to a deadlocked state, as
/// does P's), so they are branching bisimilar, and divergence-preserving too (no tau cycle).
/// Not strongly bisimilar nor trace equivalent with tau visible: after <a> Q can do tau and
/// P cannot.
#[test]
fn a_hidden_event_matters_only_to_the_strong_equivalences() {
    let script = scratch(
        "hide.csp",
        "channel a, b\nP = a -> STOP\nQ = (a -> b -> STOP) \\ {b}\n",
    );
    let s = script.display();
    for eq in EQUIVALENCES {
        let (code, report) = compare(&format!("{s}:P"), &format!("{s}:Q"), eq);
        let strong = eq == "strong" || eq == "trace";
        assert_eq!(code, Some(if strong { 1 } else { 0 }), "{eq}: {report}");
        if strong {
            let d = &report["difference"];
            assert_eq!(d["trace"], serde_json::json!(["a"]), "{eq}: {report}");
            assert_eq!(d["side"], "second", "{eq}: {report}");
            assert_eq!(d["event"], "tau", "{eq}: {report}");
        }
    }
}

/// A CSPm process against an `.aut` file: P = a -> b -> P against the LTS 0 -a-> 1 -b-> 0
/// (equivalent) and 0 -a-> 1 -a-> 0 (after <a>, P offers b and the LTS offers a; a < b, so
/// the LTS, second, is reported).
#[test]
fn a_process_against_an_explicit_lts() {
    let script = scratch("ab.csp", "channel a, b\nP = a -> b -> P\n");
    let same = scratch("ab.aut", "des (0,2,2)\n(0,\"a\",1)\n(1,\"b\",0)\n");
    let other = scratch("aa.aut", "des (0,2,2)\n(0,\"a\",1)\n(1,\"a\",0)\n");
    let p = format!("{}:P", script.display());
    for eq in EQUIVALENCES {
        let (code, report) = compare(&p, same.to_str().unwrap(), eq);
        assert_eq!(code, Some(0), "{eq}: {report}");
        let (code, report) = compare(&p, other.to_str().unwrap(), eq);
        assert_eq!(code, Some(1), "{eq}: {report}");
        let d = &report["difference"];
        assert_eq!(d["trace"], serde_json::json!(["a"]), "{eq}: {report}");
        assert_eq!(d["side"], "second", "{eq}: {report}");
        assert_eq!(d["event"], "a", "{eq}: {report}");
    }
}
