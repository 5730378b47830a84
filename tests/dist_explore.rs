//! Distributed exploration (`src/dist/`, `weft explore --processes N`): the same states,
//! transitions, deadlocks, levels, canonical ids and shortest deadlock trace as the threaded
//! explorer; real runs of 2 and 3 `weft` processes on localhost; bad options refused.
//! Distributed checks are in `dist_check.rs`.

#[path = "common/dist.rs"]
mod dist;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dist::{
    default_process, figures, hostfile, root, scratch, weft, weft_distributed_command,
    weft_distributed_outputs, weft_single, WEFT,
};
use serde_json::Value;
use weft::csp::{load_script, CspSystem};
use weft::dist::{explore_distributed, Cluster, DistOptions};
use weft::explore::{explore, ExploreOptions, StopSignal};
use weft::lts::aut::{read_aut_file, AutOptions};
use weft::threads::Threads;
use weft::ts::TransitionSystem;

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
    weft_single("explore", &[&[model.to_str().unwrap()], args].concat())
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

fn assert_same_run(single: &Value, distributed: &Value, what: &str) {
    assert_eq!(figures(distributed), figures(single), "{what}");
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
        // Fixed-width encodings: no keys widened (and one process says nothing of keys).
        assert_eq!(two["key_restarts"], 0, "{what}");
        assert!(two.get("key_words").is_none(), "{what}");
        assert!(single.get("key_restarts").is_none(), "{what}");
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
    // A process that is not a network, with more states (5001) than are explored when the
    // system is made, has no fixed-width encoding: it is keyed by its structural encoding
    // (dist/keys.rs) and explored with the states of one process.
    let plain = scratch("models").join("long_counter.csp");
    std::fs::write(
        &plain,
        "channel up\nCOUNT(n) = n < 5000 & up -> COUNT(n + 1)\nSYSTEM = COUNT(0)\n",
    )
    .unwrap();
    let out = Command::new(WEFT)
        .args([
            "explore",
            plain.to_str().unwrap(),
            "--workers",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["states"], 5001, "{run}");
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

/// A distributed exploration stopped by a state limit, with a checkpoint at every level
/// boundary, and resumed from it ends with the counts of a run never interrupted: for a
/// system of one-word states and one of wide states, with one and two workers a process.
/// Each process writes its own part; a resume with other processes or workers is refused with
/// an error naming the mismatch.
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
        // Other processes or workers than the run that wrote it: refused in every process,
        // with an error that names the mismatch (also where the workers in all are the same,
        // split otherwise).
        let mut others = vec![(2, workers + 1), (3, workers), (1, 2 * workers)];
        if workers > 1 {
            others.push((2, workers - 1));
        }
        for (processes, other_workers) in others {
            for (out, code) in weft_distributed_outputs(
                "explore",
                &[model.to_str().unwrap()],
                processes,
                other_workers,
                &["--resume", checkpoint_arg],
            ) {
                let case = format!("{name}: resumed by {processes} processes of {other_workers}");
                assert_eq!(code, 2, "{case}: {out}");
                assert!(out.contains("--processes and --workers"), "{case}: {out}");
                assert!(!out.contains("\"states\""), "{case}: {out}");
            }
        }
        // The checkpoint is left as it was: the right run still resumes from it.
        let (again, again_code) =
            weft_distributed(&model, 2, workers, &["--resume", checkpoint_arg]);
        assert_eq!(again_code, 0, "{name}");
        assert_eq!(again["states"], whole["states"], "{name}");
    }
    let wide = weft_distributed(&wide_model(), 2, 1, &[]).0;
    assert_eq!(
        (wide["states"].as_u64(), wide["levels"].as_u64()),
        (Some(122), Some(62))
    );
}
