//! Distributed checks (`weft check` and `weft refines --processes N`): the same verdicts,
//! counts and counterexamples as one process, every search the model lets share shared (a
//! refinement in T, F or FD, deadlock and divergence freedom), over the examples and the
//! corpus CSPm scripts; a run whose peers never connect, or went apart, stops with an error.

#[path = "common/dist.rs"]
mod dist;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dist::{
    hostfile, root, scratch, weft, weft_distributed_command, weft_distributed_output, weft_single,
    without_timings, WEFT,
};
use serde_json::Value;

/// `weft check FILE --json` (or `weft refines ...`) in one process with 2 threads.
fn weft_json(command: &str, args: &[&str]) -> (Value, i32) {
    let args: Vec<&str> = args.iter().copied().chain(["--threads", "2"]).collect();
    weft_single(command, &args)
}

/// Whether a distributed run shares an assertion's search: a refinement in the traces,
/// failures or failures-divergences model, deadlock or divergence (livelock) freedom,
/// determinism, or `has trace`.
fn shareable(assertion: &str) -> bool {
    let text: String = assertion.split_whitespace().collect();
    [
        "[T=",
        "[F=",
        "[FD=",
        ":[deadlockfree",
        ":[divergencefree",
        ":[livelockfree",
        ":[hastrace",
        ":[deterministic",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// `weft check SCRIPT --json` in one process, which shares nothing.
fn single_check(script: &str) -> (Value, i32) {
    let (single, code) = weft_json("check", &[script]);
    for a in single["assertions"].as_array().unwrap() {
        assert_eq!(a["shared"], false, "{script}: one process shares nothing");
    }
    (single, code)
}

/// Checks `script` in `processes` of `workers` workers: the exit code, verdicts, counts and
/// counterexamples of one process (`single`), and every assertion the model lets share (and
/// that met no error) shared. Returns the number shared.
fn same_check_and_shared(
    script: &str,
    (single, code): &(Value, i32),
    processes: usize,
    workers: usize,
) -> usize {
    let (run, run_code) = weft_distributed_command("check", &[script], processes, workers, &[]);
    assert_eq!(
        run_code, *code,
        "{script}: exit code with {processes} processes"
    );
    assert_eq!(
        without_timings(&run),
        without_timings(single),
        "{script}: {processes} processes of {workers} workers"
    );
    let mut shared = 0;
    for a in run["assertions"].as_array().unwrap() {
        let text = a["assertion"].as_str().unwrap();
        let expected = shareable(text) && a["error"].is_null();
        assert_eq!(a["shared"], expected, "{script}: {text} shared");
        shared += expected as usize;
    }
    shared
}

/// Scripts checked with 2 and 3 processes (`distributed_checks_give_...`); the other examples
/// and the corpus scripts are checked with 2 (`every_shareable_assertion_...`).
const CHECKED_SCRIPTS: [&str; 9] = [
    "examples/dining_philosophers.csp",
    "examples/bounded_buffer.csp",
    "examples/alternating_bit.csp",
    "examples/mutual_exclusion.csp",
    "examples/compression_pipeline.csp",
    "tests/cases/should_pass/compact_wide_encoding.csp",
    "tests/cases/should_pass/dist_wide_encoding.csp",
    "tests/cases/should_pass/divergence.csp",
    "tests/cases/should_pass/real_buffers.csp",
];

#[test]
fn distributed_checks_give_the_single_process_verdicts_counts_and_counterexamples() {
    let mut searched_compactly = 0;
    let mut failing = 0;
    let mut shared_wide = 0;
    let mut shared_terms = 0;
    for script in CHECKED_SCRIPTS {
        let path = root().join(script);
        let path = path.to_str().unwrap();
        let single = single_check(path);
        for (processes, workers) in [(2, 1), (3, 2)] {
            // Every refinement, deadlock and divergence check is shared, whatever the width
            // of its pairs: every one of the wide script's (its state vector takes more than
            // two words), and `compact_wide_encoding`'s (where `S(0)`'s sixteen nodes do not
            // fit beside the encoding in one word); and where the implementation is not a
            // network but a process explored whole (`S(0)`, `RUNT`, `CELL`, `BUFF(<>)`).
            let shared = same_check_and_shared(path, &single, processes, workers);
            for a in single.0["assertions"].as_array().unwrap() {
                let text = a["assertion"].as_str().unwrap();
                if script.contains("wide_encoding") {
                    shared_wide += shareable(text) as usize;
                }
                shared_terms += [
                    "SYSTEM [F= S(0)",
                    "SYSTEM [T= RUNT",
                    "BUFF(<>) [T= CELL",
                    "CHAIN(N) [FD= BUFF(<>)",
                ]
                .contains(&text) as usize;
            }
            assert!(shared > 0, "{script}");
            if processes == 2 {
                for a in single.0["assertions"].as_array().unwrap() {
                    searched_compactly += a["visited_bytes"].is_number() as usize;
                    failing += (a["holds"] == false) as usize;
                }
            }
        }
    }
    assert!(
        searched_compactly >= 12,
        "{searched_compactly} searches shared"
    );
    assert!(failing >= 5, "{failing} failing assertions");
    assert_eq!(shared_wide, 2 * (8 + 7), "searches of wide pairs shared");
    assert_eq!(
        shared_terms,
        2 * 4,
        "searches of processes explored whole shared"
    );
}

/// Scripts with failing checks of every kind that a distributed run shares: refinements in
/// T, F and FD (antichain pairs, packed in one word or wide), deadlock and divergence freedom,
/// `has trace` (a trace performed, a divergence after a prefix, the deepest pair of one not
/// performed) and determinism (nodes wider than the first keys, divergences).
const FAILING_SCRIPTS: [&str; 6] = [
    "examples/bounded_buffer.csp",
    "examples/mutual_exclusion.csp",
    "tests/cases/should_pass/divergence.csp",
    "tests/cases/should_pass/dist_wide_encoding.csp",
    "tests/cases/should_pass/compact_wide_encoding.csp",
    "tests/cases/should_pass/dist11_shared_properties.csp",
];

/// `weft check SCRIPT` (text) in one process of `threads` threads: its output and exit code.
fn single_text(script: &str, threads: usize) -> (String, i32) {
    let out = Command::new(WEFT)
        .args(["check", script, "--threads", &threads.to_string()])
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// A failing check's counterexample is rebuilt by the processes together (the owners number
/// the pairs as one process numbers them, and the path comes back from their parent
/// records): the text output is byte for byte that of one process of 1 or 2 threads, and the
/// JSON output is too but for timings, at 1, 2 and 3 processes of 1 or 2 workers (layouts
/// 1x2, 2x1, 2x2, 3x1, 3x2), every shareable assertion shared.
#[test]
fn failing_distributed_checks_print_the_single_process_counterexamples_byte_for_byte() {
    let mut failing = [0usize; 7];
    for script in FAILING_SCRIPTS {
        let path = root().join(script);
        let path = path.to_str().unwrap();
        let (text, code) = single_text(path, 1);
        assert_eq!(
            single_text(path, 2),
            (text.clone(), code),
            "{script}: 2 threads"
        );
        let single = single_check(path);
        for a in single.0["assertions"].as_array().unwrap() {
            if a["holds"] != false {
                continue;
            }
            let assertion: String = a["assertion"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect();
            let kind = [
                "[T=",
                "[F=",
                "[FD=",
                "deadlockfree",
                "divergencefree",
                "hastrace",
                "deterministic",
            ]
            .iter()
            .position(|k| assertion.contains(k));
            if let Some(kind) = kind {
                failing[kind] += 1;
            }
        }
        for (processes, workers) in [(1, 2), (2, 1), (2, 2), (3, 1), (3, 2)] {
            let (run_text, run_code) =
                weft_distributed_output("check", &[path], processes, workers, &[], false);
            assert_eq!(run_code, code, "{script}: {processes}x{workers} exit code");
            assert_eq!(
                run_text, text,
                "{script}: {processes} processes of {workers} workers, text"
            );
            same_check_and_shared(path, &single, processes, workers);
        }
    }
    assert!(
        failing.iter().all(|&n| n >= 1),
        "failing checks by kind (T, F, FD, deadlock, divergence, has trace, determinism): \
         {failing:?}"
    );
}

/// Scripts of `examples/` and of the corpus not checked by 2 processes here, and why.
const NOT_CHECKED: [(&str, &str); 1] = [(
    "scaling_philosophers.csp",
    "6.6 million states, too long for the suite: a network, shared like the others \
     (`a_lost_process_ends_the_others_...` and scripts/speedup.sh run it distributed)",
)];

/// Every assertion of the examples and of the corpus CSPm scripts (the ProB/FDR inputs of
/// `cspmf_parser_inputs`, the `itdojp_cspx` problems) whose model is traces, failures or
/// failures-divergences, or that is a deadlock, divergence, determinism or `has trace`
/// check, is shared by 2 processes and by 3, which give the verdicts, counts and
/// counterexamples of one process (issue 15's first "must show", with `dist_corpus.rs` for
/// `weft explore`). No exceptions: a process that is not a network is explored whole first
/// (up to 4096 states), so its implementation has a canonical encoding; one with a component
/// numbered as met (`Andrew.csp`) is keyed by its structural encoding (`dist_structural.rs`).
#[test]
fn every_shareable_assertion_of_the_examples_and_the_corpus_is_shared() {
    let mut scripts: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "tests/corpus/csp/cspmf_parser_inputs"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "csp" || x == "fdr2") {
                scripts.push(path);
            }
        }
    }
    let problems = root().join("tests/corpus/csp/itdojp_cspx/problems");
    for entry in std::fs::read_dir(problems).unwrap() {
        scripts.push(entry.unwrap().path().join("model.cspm"));
    }
    scripts.sort();
    let (mut checked, mut shared, mut failing) = (0, 0, 0);
    for path in scripts {
        let name = path.file_name().unwrap().to_str().unwrap();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // A problem of refines (spec and implementation), not of check.
        };
        let script = path.to_str().unwrap();
        if NOT_CHECKED.iter().any(|(n, _)| *n == name)
            || CHECKED_SCRIPTS.iter().any(|c| script.ends_with(c))
            || !text.lines().any(|l| l.trim_start().starts_with("assert"))
        {
            continue;
        }
        let single = single_check(script);
        for (processes, workers) in [(2, 1), (3, 1)] {
            shared += same_check_and_shared(script, &single, processes, workers);
        }
        checked += 1;
        failing += single.0["assertions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["holds"] == false)
            .count();
    }
    assert!(checked >= 35, "{checked} scripts checked");
    assert!(
        shared >= 2 * 100,
        "{shared} searches shared (2 and 3 processes)"
    );
    assert!(failing >= 20, "{failing} failing assertions");
}

/// A distributed refinement check keeps exact pairs (no antichain): its figures are those of
/// one process's `--no-antichain` check of `.aut` files, and of its compact on-the-fly check
/// of a CSPm process (exact pairs too). Every figure of the JSON output but timings is one
/// process's, `spec_sets` too: the processes make the normal form whole before the search,
/// and count the nodes that one process makes as its search asks for them (fewer where the
/// implementation leaves some of the specification's branches untried, or a check fails
/// early).
#[test]
fn distributed_refines_gives_the_single_process_result() {
    let spec = root().join("tests/corpus/aut/generated/linearizability/treiberStack_spec.aut");
    let imp = root().join("tests/corpus/aut/generated/linearizability/treiberStack_impl.aut.gz");
    let buffers = root().join("examples/bounded_buffer.csp");
    // A specification whose normal form has nodes that the implementation never reaches
    // (`STOP` after `a -> c`): 4 nodes whole (the empty one, `SPEC`, after `a`, `STOP`), 3
    // made on demand (the successors of `SPEC` only). `IMPL` refines it in the traces
    // model, not in the failures model (it refuses `a`).
    let branches = scratch("branches").join("dist11_untried_branches.csp");
    std::fs::write(
        &branches,
        "channel a, b, c\nSPEC = a -> (b -> SPEC [] c -> STOP) [] b -> SPEC\n\
         IMPL = b -> IMPL\n",
    )
    .unwrap();
    let cases = [
        vec![
            spec.to_str().unwrap().to_string(),
            imp.to_str().unwrap().to_string(),
            "--model".into(),
            "failures-divergences".into(),
            "--no-antichain".into(),
        ],
        vec![
            format!("{}:CHAIN(3)", buffers.display()),
            format!("{}:BUSY", buffers.display()),
            "--model".into(),
            "failures".into(),
        ],
        // Failing, with the antichain (its figures, `max_antichain` among them, and the
        // counterexample those of one process) and without.
        vec![
            format!("{}:CHAIN(3)", buffers.display()),
            format!("{}:CELL", buffers.display()),
            "--model".into(),
            "failures".into(),
        ],
        vec![
            format!("{}:CHAIN(3)", buffers.display()),
            format!("{}:BUSY", buffers.display()),
            "--model".into(),
            "failures-divergences".into(),
        ],
        vec![
            format!("{}:CHAIN(3)", buffers.display()),
            format!("{}:CHAIN(4)", buffers.display()),
            "--model".into(),
            "traces".into(),
            "--no-antichain".into(),
        ],
        vec![
            format!("{}:SPEC", branches.display()),
            format!("{}:IMPL", branches.display()),
            "--model".into(),
            "failures".into(),
        ],
        vec![
            format!("{}:SPEC", branches.display()),
            format!("{}:IMPL", branches.display()),
            "--model".into(),
            "traces".into(),
        ],
    ];
    let mut failing = 0;
    let mut fewer_nodes = 0;
    for case in cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let (single, code) = weft_json("refines", &args);
        for (processes, workers) in [(2, 1), (3, 2)] {
            let (run, run_code) =
                weft_distributed_command("refines", &args, processes, workers, &[]);
            assert_eq!(run_code, code, "{args:?}");
            assert_eq!(without_timings(&run), without_timings(&single), "{args:?}");
            assert_eq!(run["stats"]["shared"], true, "{args:?}");
        }
        failing += (single["holds"] == false) as usize;
        if case[0].contains("untried") {
            let made = single["stats"]["spec_sets"].as_u64().unwrap();
            assert_eq!(made, 3, "{args:?}: the empty node, SPEC, SPEC after a");
            fewer_nodes += 1;
        }
    }
    assert_eq!(failing, 4, "failing refinements");
    assert_eq!(fewer_nodes, 2);
}

#[test]
fn a_distributed_check_without_its_peers_fails_fast_with_an_error() {
    let hosts = hostfile(2);
    let script = root().join("examples/bounded_buffer.csp");
    let start = Instant::now();
    let (code, stderr) = weft(&[
        "check",
        script.to_str().unwrap(),
        "--processes",
        "2",
        "--hostfile",
        hosts.to_str().unwrap(),
        "--connect-timeout",
        "1s",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("did not connect"), "{stderr}");
    // The first search waits for the time-out; the others fail at once.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn processes_at_different_searches_stop_with_an_error_not_a_verdict() {
    let dir = scratch("apart");
    let script = |name: &str, spec: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "channel a, b\nA = a -> A\nB = b -> B\nP = A ||| B\n{spec}\nassert SPEC [T= P\n"
            ),
        )
        .unwrap();
        path
    };
    // Both hold, and the network `P` is searched by both processes together: each with its
    // own specification (one normal-form node, or two).
    let one = script("one.csp", "SPEC = a -> SPEC [] b -> SPEC");
    let other = script(
        "other.csp",
        "SPEC = a -> S2 [] b -> SPEC\nS2 = a -> SPEC [] b -> S2",
    );
    let hosts = hostfile(2);
    let children: Vec<_> = [&one, &other]
        .iter()
        .enumerate()
        .map(|(i, path)| {
            Command::new(WEFT)
                .arg("check")
                .arg(path)
                .args(["--processes", "2", "--process-index", &i.to_string()])
                .arg("--hostfile")
                .arg(&hosts)
                .args(["--connect-timeout", "20s"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not at the same search"), "{stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("holds"));
    }
}
