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

use dist::{root, scratch, weft_distributed_command, WEFT};
use serde_json::Value;
use weft::csp::{load_script, CspSystem, Script};
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

/// The process `weft explore` explores by default: `SYSTEM` if defined, else the last
/// process declared.
fn default_process(script: &Script) -> weft::csp::Proc {
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
    let out = std::process::Command::new(WEFT)
        .args(["explore", script, "--json"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{script}: not JSON ({e}): {text}"));
    (value, out.status.code().unwrap_or(-1))
}

fn figures(run: &Value) -> Vec<String> {
    [
        "states",
        "transitions",
        "deadlocks",
        "levels",
        "complete",
        "stopped",
        "deadlock_trace",
    ]
    .iter()
    .map(|f| format!("{f}: {}", run[f]))
    .collect()
}

/// Every process starts again with wider keys at the same level: the results of one process,
/// in layouts 1x2, 2x1 and 3x2, with a state limit that stops the run or not.
#[test]
fn processes_start_again_with_wider_keys_together() {
    for name in ["ex.csp", "Andrew.csp"] {
        let script = corpus(name);
        let script = script.to_str().unwrap();
        for limit in ["100000", "700"] {
            let args = ["--trace", "--max-states", limit];
            let (single, code) = weft_explore(script, &[&args[..], &["--threads", "2"]].concat());
            assert!(single["error"].is_null(), "{name}: {single}");
            for (processes, workers) in [(1, 2), (2, 1), (3, 2)] {
                for first in ["3", "16"] {
                    let extra = [&args[..], &["--first-key-words", first]].concat();
                    let (run, run_code) =
                        weft_distributed_command("explore", &[script], processes, workers, &extra);
                    let what = format!("{name} ({limit}), {processes}x{workers}, keys of {first}");
                    assert_eq!(run_code, code, "{what}: {run}");
                    assert_eq!(figures(&run), figures(&single), "{what}");
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

/// `weft check` of the one corpus script of this kind with assertions (`Andrew.csp`: three
/// trace refinements, one failing) in layouts 1x2, 2x1 and 3x2 gives one process's verdicts,
/// counts and counterexamples. Its searches are not shared yet: a check's product keys its
/// implementation's states by their fixed-width encoding (`src/refine`), which this
/// implementation has not, so each process checks alone (`shared` is false).
#[test]
fn checks_of_a_structurally_keyed_script_give_the_single_process_results() {
    let script = corpus("Andrew.csp");
    let script = script.to_str().unwrap();
    let out = std::process::Command::new(WEFT)
        .args(["check", script, "--json", "--threads", "2"])
        .output()
        .unwrap();
    let single: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let code = out.status.code().unwrap_or(-1);
    let assertions = single["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 3);
    assert_eq!(assertions.iter().filter(|a| a["holds"] == false).count(), 1);
    for (processes, workers) in [(1, 2), (2, 1), (3, 2)] {
        let (run, run_code) = weft_distributed_command("check", &[script], processes, workers, &[]);
        let what = format!("{processes}x{workers}");
        assert_eq!(run_code, code, "{what}");
        assert_eq!(without_timings(&run), without_timings(&single), "{what}");
        for a in run["assertions"].as_array().unwrap() {
            assert_eq!(a["shared"], false, "{what}: {}", a["assertion"]);
        }
    }
}
