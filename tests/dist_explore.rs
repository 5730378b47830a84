//! Distributed exploration (`src/dist/`, `weft explore --processes N`): the same states,
//! transitions, deadlocks, levels, canonical ids and shortest deadlock trace as the threaded
//! explorer; real runs of 2 and 3 `weft` processes on localhost; bad options refused.
//! Distributed checks (`weft check` and `weft refines --processes N`): the same verdicts,
//! counts and counterexamples as one process.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use weft::csp::{load_script, CspSystem};
use weft::dist::{explore_distributed, Cluster, DistOptions};
use weft::explore::{explore, ExploreOptions, StopSignal};
use weft::lts::aut::{read_aut_file, AutOptions};
use weft::threads::Threads;
use weft::ts::TransitionSystem;

const WEFT: &str = env!("CARGO_BIN_EXE_weft");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-dist-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The bundled scaling model with `n` philosophers (it deadlocks: all hold their left fork).
fn philosophers(n: usize) -> PathBuf {
    let text = std::fs::read_to_string(root().join("examples/scaling_philosophers.csp")).unwrap();
    assert!(text.contains("\nN = 8\n"));
    let path = scratch("models").join(format!("philosophers_{n}.csp"));
    std::fs::write(&path, text.replace("\nN = 8\n", &format!("\nN = {n}\n"))).unwrap();
    path
}

/// Models explored both ways: examples with a canonical encoding, a deadlocking one, and
/// corpus LTSs (two of them with deadlocks).
fn models() -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = [
        "examples/bounded_buffer.csp",
        "examples/busy_forbidden.csp",
        "examples/dining_philosophers.csp",
        "tests/corpus/aut/vlts/vasy_0_1.aut",
        "tests/corpus/aut/generated/mcrl2_examples/abp.aut",
        "tests/corpus/aut/generated/linearizability/pracNonBlock_impl.aut",
        "tests/corpus/aut/generated/linearizability/fineGrainedSet_impl.aut",
    ]
    .iter()
    .map(|m| root().join(m))
    .collect();
    models.push(philosophers(5));
    models
}

/// Ids and encodings of a threaded exploration of `ts`, by id.
fn threaded_numbering<T: TransitionSystem>(ts: &T) -> (Vec<Vec<u32>>, u64) {
    let opts = ExploreOptions {
        threads: Threads::new(2).unwrap(),
        ..Default::default()
    };
    let run = explore(ts, &opts);
    let width = ts.encoded_width().unwrap();
    let states = run
        .states
        .iter()
        .map(|s| {
            let mut words = vec![0; width];
            ts.encode_state(s, &mut words);
            words
        })
        .collect();
    (states, run.stats.transitions)
}

/// Checks that 3 workers in this process number every state as the threaded explorer does.
fn same_numbering<T: TransitionSystem + Send + 'static>(ts: Arc<T>, what: &str) {
    let (expected, transitions) = threaded_numbering(&*ts);
    let opts = DistOptions {
        keep_states: true,
        deadlock_trace: true,
        ..Default::default()
    };
    let cluster = Cluster::single(3).unwrap();
    let run = explore_distributed(ts, &cluster, &opts, &StopSignal::new()).unwrap();
    assert_eq!(run.stats.states, expected.len() as u64, "{what}");
    assert_eq!(run.stats.transitions, transitions, "{what}");
    assert_eq!(run.states.len(), expected.len(), "{what}");
    for (id, words) in &run.states {
        assert_eq!(words, &expected[id.index()], "{what}: state {}", id.0);
    }
}

/// The process `weft explore` explores by default: `SYSTEM` if defined, else the last
/// process declared.
fn default_process(script: &weft::csp::Script) -> weft::csp::Proc {
    let names = script.definition_names();
    let name = if names.contains(&"SYSTEM") {
        "SYSTEM"
    } else {
        names
            .iter()
            .rev()
            .find(|n| script.process(n, &[]).is_ok())
            .expect("a process")
    };
    script.process(name, &[]).unwrap()
}

#[test]
fn workers_number_states_canonically() {
    for model in models() {
        let what = model.display().to_string();
        if what.ends_with(".aut") {
            let lts = read_aut_file(&model, &AutOptions::default()).unwrap();
            same_numbering(Arc::new(lts), &what);
        } else {
            let script = Arc::new(load_script(&model).unwrap());
            let process = default_process(&script);
            let system = CspSystem::new(&script, &process).unwrap();
            same_numbering(Arc::new(system), &what);
        }
    }
}

#[test]
fn a_state_limit_keeps_the_first_states_in_canonical_order() {
    let lts = Arc::new(
        read_aut_file(
            &root().join("tests/corpus/aut/vlts/vasy_1_4.aut"),
            &AutOptions::default(),
        )
        .unwrap(),
    );
    let (expected, _) = threaded_numbering(&*lts);
    let opts = DistOptions {
        max_states: Some(500),
        keep_states: true,
        ..Default::default()
    };
    let run =
        explore_distributed(lts, &Cluster::single(2).unwrap(), &opts, &StopSignal::new()).unwrap();
    assert_eq!(run.stats.states, 500);
    assert!(!run.stats.complete);
    assert_eq!(run.states.len(), 500);
    for (id, words) in &run.states {
        assert_eq!(words, &expected[id.index()]);
    }
}

/// Runs `weft explore MODEL --json ARGS`; returns its JSON output and exit code.
fn weft_explore(model: &Path, args: &[&str]) -> (Value, i32) {
    let out = Command::new(WEFT)
        .arg("explore")
        .arg(model)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {text}", model.display()));
    (value, out.status.code().unwrap_or(-1))
}

/// A host file naming `n` free ports of localhost.
fn hostfile(n: usize) -> PathBuf {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let lines: String = listeners
        .iter()
        .map(|l| format!("127.0.0.1:{}\n", l.local_addr().unwrap().port()))
        .collect();
    // One file per call: tests run at the same time and must not share ports.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = scratch("hosts").join(format!("hosts-{call}-{n}"));
    std::fs::write(&path, lines).unwrap();
    path
}

/// Runs `processes` weft processes of `workers` workers each on `model`; returns process 0's
/// JSON output and exit code (the others print nothing on stdout and exit alike).
fn weft_distributed(
    model: &Path,
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> (Value, i32) {
    weft_distributed_command(
        "explore",
        &[model.to_str().unwrap()],
        processes,
        workers,
        extra,
    )
}

/// [`weft_distributed`] for any command (`explore`, `check`, `refines`) and its arguments.
fn weft_distributed_command(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> (Value, i32) {
    let model = Path::new(command_args[0]);
    let hosts = hostfile(processes);
    let mut children: Vec<_> = (0..processes)
        .map(|i| {
            Command::new(WEFT)
                .arg(command)
                .args(command_args)
                .arg("--json")
                .args(["--processes", &processes.to_string()])
                .args(["--process-index", &i.to_string()])
                .args(["--workers", &workers.to_string()])
                .arg("--hostfile")
                .arg(&hosts)
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut codes = Vec::new();
    let mut outputs = Vec::new();
    for child in &mut children {
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{}: a distributed run did not end", model.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut text = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        codes.push(code);
        outputs.push(text);
    }
    for (i, text) in outputs.iter().enumerate().skip(1) {
        assert_eq!(text, "", "process {i} printed on stdout");
        assert_eq!(codes[i], codes[0], "process {i}'s exit code");
    }
    let value = serde_json::from_str(outputs[0].trim())
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {}", model.display(), outputs[0]));
    (value, codes[0])
}

fn assert_same_run(single: &Value, distributed: &Value, what: &str) {
    for field in [
        "states",
        "transitions",
        "deadlocks",
        "levels",
        "complete",
        "deadlock_trace",
    ] {
        assert_eq!(single[field], distributed[field], "{what}: {field}");
    }
}

#[test]
fn two_and_three_processes_give_the_single_process_results() {
    let mut traces = 0;
    for model in models() {
        let what = model.display().to_string();
        let (single, code) = weft_explore(&model, &["--threads", "2", "--trace"]);
        assert_eq!(code, 0, "{what}");
        traces += single["deadlock_trace"].is_array() as usize;
        let (two, code) = weft_distributed(&model, 2, 1, &["--trace"]);
        assert_eq!(code, 0, "{what}");
        assert_same_run(&single, &two, &what);
        assert_eq!(two["processes"], 2);
        assert_eq!(two["workers"], 1);
        assert_eq!(two["threads"], 2);
    }
    assert!(traces >= 3, "the models include deadlocks");
    for model in [
        philosophers(5),
        root().join("tests/corpus/aut/generated/linearizability/pracNonBlock_impl.aut"),
    ] {
        let what = model.display().to_string();
        let (single, _) = weft_explore(&model, &["--threads", "1", "--trace"]);
        let (three, code) = weft_distributed(&model, 3, 2, &["--trace"]);
        assert_eq!(code, 0, "{what}");
        assert_same_run(&single, &three, &what);
        assert_eq!(three["threads"], 6);
    }
}

#[test]
fn a_state_limit_stops_every_process_alike() {
    let model = philosophers(5);
    for trace in [&["--trace"][..], &[]] {
        let mut args = vec!["--threads", "2", "--max-states", "5000"];
        args.extend(trace);
        let (single, code) = weft_explore(&model, &args);
        assert_eq!(code, 2);
        assert_eq!(single["states"], 5000);
        let mut args = vec!["--max-states", "5000"];
        args.extend(trace);
        let (limited, code) = weft_distributed(&model, 2, 1, &args);
        assert_eq!(code, 2);
        assert_same_run(&single, &limited, "state limit");
        assert_eq!(limited["stopped"], "state-limit");
    }
}

#[test]
fn count_only_runs_keep_states_compactly_with_the_same_counts() {
    for model in models() {
        let what = model.display().to_string();
        let (single, code) = weft_explore(&model, &["--threads", "2"]);
        assert_eq!(code, 0, "{what}");
        assert_eq!(single["storage"], "compact", "{what}");
        for (processes, workers) in [(2, 1), (3, 2)] {
            let (run, code) = weft_distributed(&model, processes, workers, &[]);
            assert_eq!(code, 0, "{what}");
            assert_same_run(&single, &run, &what);
            assert_eq!(run["storage"], "compact", "{what}");
            let per_state = run["bytes_per_state"].as_f64().expect("bytes per state");
            assert!(per_state > 0.0, "{what}: {per_state}");
        }
    }
}

/// Runs weft with `args`; returns its exit code and standard error.
fn weft(args: &[&str]) -> (i32, String) {
    let out = Command::new(WEFT).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_distribution_options_are_refused() {
    let model = root().join("examples/bounded_buffer.csp");
    let model = model.to_str().unwrap();
    let hosts = hostfile(1);
    let hosts = hosts.to_str().unwrap();
    for (args, message) in [
        (
            vec!["--processes", "2", "--process-index", "2"],
            "out of range",
        ),
        (vec!["--workers", "2", "--threads", "2"], "--threads"),
        (vec!["--hostfile", hosts], "--processes"),
        (vec!["--processes", "2", "--hostfile", hosts], "names 1"),
        (vec!["--workers", "0"], "at least 1"),
        (vec!["--workers", "2", "--out", "x.aut"], "--out"),
    ] {
        let mut all = vec!["explore", model];
        all.extend(&args);
        let (code, stderr) = weft(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A process whose states are not encoded canonically cannot be distributed.
    let plain = root().join("examples/mutual_exclusion.csp");
    let (code, stderr) = weft(&["explore", plain.to_str().unwrap(), "--workers", "2"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cannot be explored by several processes"),
        "{stderr}"
    );
}

#[test]
fn a_process_whose_peers_never_connect_gives_up_with_an_error() {
    let model = root().join("examples/bounded_buffer.csp");
    let hosts = hostfile(2);
    let started = Instant::now();
    let (code, stderr) = weft(&[
        "explore",
        model.to_str().unwrap(),
        "--processes",
        "2",
        "--process-index",
        "0",
        "--hostfile",
        hosts.to_str().unwrap(),
        "--connect-timeout",
        "1s",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("connected within 1 s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_lost_process_ends_the_others_with_an_error_not_a_panic() {
    // Long enough (several seconds) that the kill lands mid-run.
    let model = root().join("examples/scaling_philosophers.csp");
    let hosts = hostfile(2);
    let spawn = |i: usize| {
        Command::new(WEFT)
            .arg("explore")
            .arg(&model)
            .args(["--processes", "2", "--process-index", &i.to_string()])
            .arg("--hostfile")
            .arg(&hosts)
            .args(["--connect-timeout", "30s"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut survivor = spawn(0);
    let mut victim = spawn(1);
    std::thread::sleep(Duration::from_secs(2));
    victim.kill().unwrap();
    victim.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = survivor.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        assert!(
            Instant::now() < deadline,
            "the surviving process did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    survivor
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("weft: error:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `weft check FILE --json` (or `weft refines ...`) in one process with 2 threads.
fn weft_json(command: &str, args: &[&str]) -> (Value, i32) {
    let out = Command::new(WEFT)
        .arg(command)
        .args(args)
        .args(["--json", "--threads", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {text}"));
    (value, out.status.code().unwrap_or(-1))
}

/// `value` without its timings, thread counts and memory figures (which differ between runs),
/// and without whether a search was shared among processes.
fn without_timings(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !(["seconds", "threads", "peak_memory", "shared"].contains(&k.as_str())
                        || k.contains("bytes")
                        || k.contains("per_second"))
                })
                .map(|(k, v)| (k.clone(), without_timings(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_timings).collect()),
        other => other.clone(),
    }
}

#[test]
fn distributed_checks_give_the_single_process_verdicts_counts_and_counterexamples() {
    let scripts = [
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
    let mut searched_compactly = 0;
    let mut failing = 0;
    let mut shared_wide = 0;
    for script in scripts {
        let path = root().join(script);
        let path = path.to_str().unwrap();
        let (single, code) = weft_json("check", &[path]);
        for a in single["assertions"].as_array().unwrap() {
            assert_eq!(a["shared"], false, "{script}: one process shares nothing");
        }
        for (processes, workers) in [(2, 1), (3, 2)] {
            let (run, run_code) =
                weft_distributed_command("check", &[path], processes, workers, &[]);
            let assertions = run["assertions"].as_array().unwrap();
            // A search whose implementation has a canonical encoding (the networks `SYSTEM`
            // and `DEAD`) is shared, whatever its width: every one of the wide script's (its
            // state vector takes more than two words), and `compact_wide_encoding`'s (where
            // `S(0)`'s sixteen nodes do not fit beside the encoding in one word).
            if script.contains("wide_encoding") {
                for a in assertions {
                    let text = a["assertion"].as_str().unwrap();
                    let encodable = text.contains(":[")
                        || text.ends_with("= SYSTEM")
                        || text.ends_with("= DEAD");
                    assert_eq!(a["shared"], encodable, "{script}: {text} shared");
                    shared_wide += encodable as usize;
                }
            }
            assert_eq!(
                run_code, code,
                "{script}: exit code with {processes} processes"
            );
            assert_eq!(
                without_timings(&run),
                without_timings(&single),
                "{script}: {processes} processes of {workers} workers"
            );
        }
        for a in single["assertions"].as_array().unwrap() {
            searched_compactly += a["visited_bytes"].is_number() as usize;
            failing += (a["holds"] == false) as usize;
        }
    }
    assert!(
        searched_compactly >= 12,
        "{searched_compactly} searches shared"
    );
    assert!(failing >= 5, "{failing} failing assertions");
    assert_eq!(shared_wide, 2 * (8 + 5), "searches of wide pairs shared");
}

/// A distributed refinement check keeps exact pairs (no antichain): its figures are those of
/// one process's `--no-antichain` check of `.aut` files, and of its compact on-the-fly check
/// of a CSPm process (exact pairs too).
#[test]
fn distributed_refines_gives_the_single_process_result() {
    let spec = root().join("tests/corpus/aut/generated/linearizability/treiberStack_spec.aut");
    let imp = root().join("tests/corpus/aut/generated/linearizability/treiberStack_impl.aut.gz");
    let buffers = root().join("examples/bounded_buffer.csp");
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
    ];
    for case in cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let (single, code) = weft_json("refines", &args);
        let (two, two_code) = weft_distributed_command("refines", &args, 2, 1, &[]);
        assert_eq!(two_code, code, "{args:?}");
        assert_eq!(without_timings(&two), without_timings(&single), "{args:?}");
    }
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

/// A network whose state vector takes more than two words (fifty cells in step, beside a
/// counter of 61 states): 122 states, at distances 0 to 61 (62 levels).
fn wide_model() -> PathBuf {
    let path = scratch("models").join("wide_counter.csp");
    std::fs::write(
        &path,
        "channel tick, tock, up\n\
         C(i) = tick -> tock -> C(i)\n\
         CELLS = [| {tick, tock} |] i : {0..49} @ C(i)\n\
         COUNT(n) = n < 60 & up -> COUNT(n + 1)\n\
         SYSTEM = CELLS ||| COUNT(0)\n",
    )
    .unwrap();
    path
}

/// `weft explore MODEL --json` in `processes` processes of `workers` workers with `extra`,
/// each process's output and exit code (for runs that end in an error in every process).
fn weft_distributed_outputs(
    model: &Path,
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> Vec<(String, i32)> {
    let hosts = hostfile(processes);
    let children: Vec<_> = (0..processes)
        .map(|i| {
            Command::new(WEFT)
                .arg("explore")
                .arg(model)
                .arg("--json")
                .args(["--processes", &processes.to_string()])
                .args(["--process-index", &i.to_string()])
                .args(["--workers", &workers.to_string()])
                .arg("--hostfile")
                .arg(&hosts)
                .args(["--connect-timeout", "20s"])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                out.status.code().unwrap_or(-1),
            )
        })
        .collect()
}

/// A distributed exploration stopped by a state limit, with a checkpoint at every level
/// boundary, and resumed from it ends with the counts of a run never interrupted: for a
/// system of one-word states and one of wide states, with one and two workers a process.
/// Each process writes its own part; a resume with other workers is refused with an error.
#[test]
fn a_checkpointed_distributed_exploration_resumes_with_the_same_counts() {
    let dir = scratch("checkpoints");
    let cases = [
        (philosophers(5), "philosophers", 1, "3000"),
        (philosophers(5), "philosophers-2w", 2, "7000"),
        (wide_model(), "wide", 2, "50"),
    ];
    for (model, name, workers, limit) in cases {
        let checkpoint = dir.join(name);
        let _ = std::fs::remove_dir_all(&checkpoint);
        let checkpoint_arg = checkpoint.to_str().unwrap();
        let (whole, code) = weft_distributed(&model, 2, workers, &[]);
        assert_eq!(code, 0, "{name}");
        let (cut, cut_code) = weft_distributed(
            &model,
            2,
            workers,
            &[
                "--checkpoint",
                checkpoint_arg,
                "--checkpoint-interval",
                "0",
                "--max-states",
                limit,
            ],
        );
        assert_eq!(cut_code, 2, "{name}");
        assert_eq!(cut["stopped"], "state-limit", "{name}");
        for process in 0..2 {
            let parts = std::fs::read_dir(checkpoint.join(format!("process-{process}")))
                .unwrap()
                .count();
            assert_eq!(parts, workers, "{name}: process {process}'s parts");
        }
        let (resumed, resumed_code) =
            weft_distributed(&model, 2, workers, &["--resume", checkpoint_arg]);
        assert_eq!(resumed_code, 0, "{name}");
        for field in ["states", "transitions", "deadlocks", "levels", "complete"] {
            assert_eq!(resumed[field], whole[field], "{name}: {field}");
        }
        assert!(
            resumed["states"].as_u64().unwrap() > limit.parse::<u64>().unwrap(),
            "{name}"
        );
        // Other workers than the run that wrote it: refused in every process.
        for (out, code) in
            weft_distributed_outputs(&model, 2, workers + 1, &["--resume", checkpoint_arg])
        {
            assert_eq!(code, 2, "{name}: {out}");
            assert!(
                out.contains("same --processes and --workers"),
                "{name}: {out}"
            );
        }
    }
    let wide = weft_distributed(&wide_model(), 2, 1, &[]).0;
    assert_eq!(
        (wide["states"].as_u64(), wide["levels"].as_u64()),
        (Some(122), Some(62))
    );
}
