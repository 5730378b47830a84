//! Distributed runs of models with a component numbered as met (too large to explore ahead):
//! their states travel and are kept as fixed-width keys of their structural encoding
//! (`src/dist/keys.rs`), and a search whose keys turn out too narrow starts again, in every
//! process at the same level, with keys twice as wide.
//!
//! - In this process (the library): the workers number every state as the threaded explorer
//!   numbers it (compared by structural encoding), with the default keys and with keys of 3
//!   words to begin with, which must start again (the restarts are counted and asserted).
//! - In 1, 2 and 3 processes (`weft explore`, with the hidden `--first-key-words 3`): the
//!   counts, levels and deadlock trace of one process, every process starting again alike.
//! - A checkpointed run of such a model, stopped by a state limit (after starting again with
//!   wider keys, or not) and resumed, ends with the counts of a run never interrupted.
//!
//! `dist_corpus.rs` compares the four corpus scripts of this kind with the other scripts.

#[path = "common/dist.rs"]
mod dist;

use std::path::PathBuf;
use std::sync::Arc;

use dist::{
    default_process, figures, root, scratch, weft_distributed_command, weft_single, without_timings,
};
use serde_json::Value;
use weft::csp::{load_script, CspSystem};
use weft::dist::{explore_distributed, Cluster, DistOptions};
use weft::explore::{explore, ExploreOptions, StopSignal};
use weft::threads::Threads;
use weft::ts::TransitionSystem;

/// The corpus scripts whose explored process has a component numbered as met.
const SCRIPTS: [&str; 4] = [
    "Andrew.csp",
    "ex.csp",
    "subtype_ex.csp",
    "subtype_nametype_ex.csp",
];

fn corpus(name: &str) -> PathBuf {
    root()
        .join("tests/corpus/csp/cspmf_parser_inputs")
        .join(name)
}

fn system(name: &str) -> CspSystem {
    let script = Arc::new(load_script(&corpus(name)).unwrap());
    let process = default_process(&script);
    CspSystem::new(&script, &process).unwrap()
}

/// The structural encodings of the states of a threaded exploration of `ts`, by id, and its
/// transitions.
fn threaded_numbering(ts: &CspSystem) -> (Vec<Vec<u32>>, u64) {
    let opts = ExploreOptions {
        threads: Threads::new(2).unwrap(),
        ..Default::default()
    };
    let run = explore(ts, &opts);
    let states = run
        .states
        .iter()
        .map(|s| ts.structural_encoding(s).unwrap())
        .collect();
    (states, run.stats.transitions)
}

/// The structural encoding in a key: its first words, as many as its last word says.
fn encoding_of(key: &[u32]) -> &[u32] {
    let (&len, body) = key.split_last().unwrap();
    &body[..len as usize]
}

#[test]
fn workers_number_structurally_keyed_states_canonically_whatever_restarts() {
    let mut restarted = 0;
    for name in SCRIPTS {
        let first = system(name);
        assert!(first.encoded_width().is_err(), "{name}: numbered as met");
        let (expected, transitions) = threaded_numbering(&first);
        for first_key_words in [None, Some(3)] {
            // A system of its own (which meets its states in another order).
            let ts = Arc::new(system(name));
            let opts = DistOptions {
                keep_states: true,
                deadlock_trace: true,
                first_key_words,
                ..Default::default()
            };
            let what = format!("{name}, keys of {first_key_words:?} words to begin with");
            let run =
                explore_distributed(ts, &Cluster::single(3).unwrap(), &opts, &StopSignal::new())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(run.stats.complete, "{what}");
            assert_eq!(run.stats.states, expected.len() as u64, "{what}");
            assert_eq!(run.stats.transitions, transitions, "{what}");
            assert_eq!(run.states.len(), expected.len(), "{what}");
            for (id, key) in &run.states {
                assert_eq!(
                    encoding_of(key),
                    expected[id.index()],
                    "{what}: state {}",
                    id.0
                );
            }
            let width = run.key_words.expect("keyed by the structural encoding");
            let widest = expected.iter().map(Vec::len).max().unwrap();
            assert!(width > widest, "{what}: keys of {width} words");
            // Keys of 3 words hold no state of these scripts: the search starts again until
            // they hold every one, and only so far.
            if first_key_words.is_some() {
                assert!(run.key_restarts >= 1, "{what}");
                assert!(width / 2 <= widest, "{what}: keys of {width} words");
                restarted += 1;
            }
        }
    }
    assert_eq!(restarted, SCRIPTS.len());
}

/// `weft explore SCRIPT --json ARGS` in one process.
fn weft_explore(script: &str, args: &[&str]) -> (Value, i32) {
    weft_single("explore", &[&[script], args].concat())
}

/// Every process starts again with wider keys at the same level: the results of one process,
/// in layouts 1x1, 1x2, 1x4, 2x1 and 3x2, with a state limit that stops the run or not; the
/// JSON says the keys' final words and how many times the run started again with wider ones
/// (the same in every layout; one process says neither).
#[test]
fn processes_start_again_with_wider_keys_together() {
    for name in ["ex.csp", "Andrew.csp"] {
        let script = corpus(name);
        let script = script.to_str().unwrap();
        for limit in ["100000", "700"] {
            let args = ["--trace", "--max-states", limit];
            let (single, code) = weft_explore(script, &[&args[..], &["--threads", "2"]].concat());
            assert!(single["error"].is_null(), "{name}: {single}");
            assert!(single.get("key_words").is_none(), "{name}: {single}");
            assert!(single.get("key_restarts").is_none(), "{name}: {single}");
            for first in ["3", "16"] {
                let mut keys = None;
                for (processes, workers) in [(1, 1), (1, 2), (1, 4), (2, 1), (3, 2)] {
                    let extra = [&args[..], &["--first-key-words", first]].concat();
                    let (run, run_code) =
                        weft_distributed_command("explore", &[script], processes, workers, &extra);
                    let what = format!("{name} ({limit}), {processes}x{workers}, keys of {first}");
                    assert_eq!(run_code, code, "{what}: {run}");
                    assert_eq!(figures(&run), figures(&single), "{what}");
                    let words = run["key_words"].as_u64().expect("structural keys");
                    let restarts = run["key_restarts"].as_u64().expect("restarts");
                    if first == "3" {
                        assert!(restarts >= 1, "{what}: keys of 3 words hold no state");
                    }
                    // The first keys (those asked for, or those the initial state needs),
                    // twice as wide at each restart.
                    let base = words >> restarts;
                    assert_eq!(base << restarts, words, "{what}: {restarts} restarts");
                    assert!(base >= first.parse().unwrap(), "{what}: {words} words");
                    match keys {
                        None => keys = Some((words, restarts)),
                        Some(keys) => assert_eq!((words, restarts), keys, "{what}"),
                    }
                }
            }
        }
    }
}

/// A checkpointed distributed run of a model keyed by its structural encoding, stopped by a
/// state limit and resumed, ends with the counts of a run never interrupted; also when the
/// run started again with wider keys before it wrote its checkpoints (those of the narrower
/// keys go), and when the resumed run's keys are the checkpoint's.
#[test]
fn a_checkpointed_structurally_keyed_run_resumes_with_the_same_counts() {
    let dir = scratch("structural-checkpoints");
    let script = corpus("ex.csp");
    let script = script.to_str().unwrap();
    let (whole, code) = weft_distributed_command("explore", &[script], 2, 1, &[]);
    assert_eq!(code, 0, "{whole}");
    assert_eq!(whole["complete"], true);
    for (name, first, workers) in [("default", "16", 1), ("narrow", "3", 2)] {
        let checkpoint = dir.join(name);
        let _ = std::fs::remove_dir_all(&checkpoint);
        let checkpoint_arg = checkpoint.to_str().unwrap();
        let (cut, cut_code) = weft_distributed_command(
            "explore",
            &[script],
            2,
            workers,
            &[
                "--checkpoint",
                checkpoint_arg,
                "--checkpoint-interval",
                "0",
                "--max-states",
                "600",
                "--first-key-words",
                first,
            ],
        );
        assert_eq!(cut_code, 2, "{name}: {cut}");
        assert_eq!(cut["stopped"], "state-limit", "{name}");
        for process in 0..2 {
            let parts = std::fs::read_dir(checkpoint.join(format!("process-{process}")))
                .unwrap()
                .count();
            assert_eq!(parts, workers, "{name}: process {process}'s parts");
        }
        let (resumed, resumed_code) = weft_distributed_command(
            "explore",
            &[script],
            2,
            workers,
            &["--resume", checkpoint_arg],
        );
        assert_eq!(resumed_code, 0, "{name}: {resumed}");
        for field in ["states", "transitions", "deadlocks", "levels", "complete"] {
            assert_eq!(resumed[field], whole[field], "{name}: {field}");
        }
        assert!(resumed["states"].as_u64().unwrap() > 600, "{name}");
    }
}

/// `weft check` of the one corpus script of this kind with assertions (`Andrew.csp`: three
/// trace refinements, one failing) in layouts 1x2, 2x1 and 3x2 (and 2x1, 3x1 from keys of 3
/// words) gives one process's verdicts, counts and counterexamples, every search shared: the product keys its implementation's
/// states by their structural encoding (`src/explore/keyed/structural.rs`), from the default
/// keys, and from keys of 3 words, which hold no state of it, so that every search starts
/// again with wider keys, in every process alike, until they hold every pair. One process
/// searches indexed (its structural encodings, kept whole, would take 64 KB a pair). Each
/// assertion's JSON says its keys' final words and how many times its searches started again
/// with wider keys, the same in every layout (one process says neither).
#[test]
fn checks_of_a_structurally_keyed_script_are_shared_and_give_the_single_process_results() {
    let script = corpus("Andrew.csp");
    let script = script.to_str().unwrap();
    let (single, code) = weft_single("check", &[script, "--threads", "2"]);
    let assertions = single["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 3);
    assert_eq!(assertions.iter().filter(|a| a["holds"] == false).count(), 1);
    for a in assertions {
        assert_eq!(a["shared"], false, "{}", a["assertion"]);
    }
    let layouts = [
        (1, 2, None),
        (2, 1, None),
        (3, 2, None),
        (2, 1, Some("3")),
        (3, 1, Some("3")),
    ];
    // Per first keys, what the keys of each assertion's searches came to in the first layout.
    let mut keys: std::collections::HashMap<Option<&str>, Vec<(u64, u64)>> = Default::default();
    for (processes, workers, first) in layouts {
        let extra: Vec<&str> = first.map_or(vec![], |w| vec!["--first-key-words", w]);
        let (run, run_code) =
            weft_distributed_command("check", &[script], processes, workers, &extra);
        let what = format!("{processes}x{workers}, keys of {first:?} words to begin with");
        assert_eq!(run_code, code, "{what}");
        assert_eq!(without_timings(&run), without_timings(&single), "{what}");
        let mut these = Vec::new();
        for a in run["assertions"].as_array().unwrap() {
            assert_eq!(a["shared"], true, "{what}: {}", a["assertion"]);
            let words = a["key_words"].as_u64().expect("keyed structurally");
            let restarts = a["key_restarts"].as_u64().expect("restarts");
            if first.is_some() {
                assert!(restarts >= 1, "{what}: {}", a["assertion"]);
            }
            these.push((words, restarts));
        }
        let expected = keys.entry(first).or_insert_with(|| these.clone());
        assert_eq!(&these, expected, "{what}: the same keys in every layout");
    }
    for a in assertions {
        assert!(a.get("key_words").is_none(), "one process: {a}");
        assert!(a.get("key_restarts").is_none(), "one process: {a}");
    }
}

/// Copies the files of `from` (a checkpoint folder: one folder per process) into `to`.
fn copy_checkpoint(from: &std::path::Path, to: &std::path::Path) {
    for process in std::fs::read_dir(from).unwrap() {
        let process = process.unwrap().path();
        let target = to.join(process.file_name().unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for part in std::fs::read_dir(&process).unwrap() {
            let part = part.unwrap().path();
            std::fs::copy(&part, target.join(part.file_name().unwrap())).unwrap();
        }
    }
}

/// A run killed right after it started again with wider keys (its checkpoint folder as it
/// was when the wider keys' search finished its first level, before it wrote its part of
/// it) resumes with the counts of a run never interrupted: the narrower keys' checkpoint
/// stays until the wider keys' first one is whole, and the resumed run goes on from it with
/// the narrower keys, and starts again alike. (The folder is copied when the first worker
/// reports that level: with one worker, nothing else writes meanwhile.)
#[test]
fn a_run_killed_right_after_starting_again_with_wider_keys_resumes_with_the_same_counts() {
    use weft::dist::checkpoint::Persistence;
    use weft::explore::LevelReport;
    let dir = scratch("killed-after-restart");
    let checkpoint = dir.join("checkpoint");
    let snapshot = dir.join("snapshot");
    let _ = std::fs::remove_dir_all(&checkpoint);
    let _ = std::fs::remove_dir_all(&snapshot);
    let persistence = |checkpoint: Option<PathBuf>, resume: Option<PathBuf>| Persistence {
        checkpoint,
        interval: std::time::Duration::ZERO,
        resume,
        fingerprint: 7,
        process: 0,
        processes: 1,
        key_restarts: 0,
    };
    let last_level = Arc::new(std::sync::Mutex::new(0u32));
    let copied = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let observer = {
        let (last_level, copied) = (last_level.clone(), copied.clone());
        let (checkpoint, snapshot) = (checkpoint.clone(), snapshot.clone());
        Arc::new(move |report: &LevelReport| {
            let mut last = last_level.lock().unwrap();
            if report.level <= *last && !copied.swap(true, std::sync::atomic::Ordering::SeqCst) {
                copy_checkpoint(&checkpoint, &snapshot);
            }
            *last = report.level;
        })
    };
    let run = |persist: Persistence, on_level: Option<weft::explore::LevelObserver>| {
        let opts = DistOptions {
            persist: Some(persist),
            first_key_words: Some(3),
            on_level,
            ..Default::default()
        };
        explore_distributed(
            Arc::new(system("ex.csp")),
            &Cluster::single(1).unwrap(),
            &opts,
            &StopSignal::new(),
        )
        .unwrap()
    };
    let whole = run(persistence(Some(checkpoint.clone()), None), Some(observer));
    assert!(whole.stats.complete);
    assert!(whole.key_restarts >= 1, "the run started again");
    assert!(copied.load(std::sync::atomic::Ordering::SeqCst));
    let parts = std::fs::read_dir(snapshot.join("process-0"))
        .unwrap()
        .count();
    assert_eq!(
        parts, 1,
        "the narrower keys' part is kept after starting again"
    );
    let resumed = run(persistence(None, Some(snapshot.clone())), None);
    assert!(resumed.stats.complete);
    assert_eq!(resumed.stats.states, whole.stats.states);
    assert_eq!(resumed.stats.transitions, whole.stats.transitions);
    assert_eq!(resumed.stats.levels, whole.stats.levels);
    assert_eq!(resumed.stats.deadlocks, whole.stats.deadlocks);
}

/// Memory of a structurally keyed check in two processes (Andrew.csp: encodings of about
/// 19,000 words, keys of 32,768): its keys are kept and sent trimmed, not padded to the keys'
/// width (`src/explore/keyed/trimmed.rs`, `src/explore/index/trimmed_keys.rs`). Kept whole,
/// each process took about 200 MB, and a limit of 120 MB stopped the second check; trimmed,
/// each takes about 80 MB, and the limit changes nothing: the single process's verdicts,
/// counts and counterexample.
#[test]
fn a_structurally_keyed_check_in_two_processes_keeps_its_keys_trimmed() {
    let script = corpus("Andrew.csp");
    let script = script.to_str().unwrap();
    let (single, single_code) = weft_single("check", &[script]);
    let (run, code) = weft_distributed_command("check", &[script], 2, 1, &["--max-memory", "120M"]);
    assert_eq!(code, single_code);
    for a in run["assertions"].as_array().unwrap() {
        assert!(
            a["stopped"].is_null(),
            "{}: {}",
            a["assertion"],
            a["stopped"]
        );
        let peak = a["peak_memory"].as_u64().unwrap();
        assert!(peak < 120 << 20, "{}: {peak} bytes", a["assertion"]);
    }
    assert_eq!(without_timings(&run), without_timings(&single));
}
