//! Helpers of the tests of distributed runs (`dist_explore.rs`, `dist_check.rs`): weft
//! processes on localhost, started with a host file of free ports.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch folder of this test process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-dist-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A host file naming `n` free ports of localhost.
pub fn hostfile(n: usize) -> PathBuf {
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

/// Starts `processes` weft processes of `workers` workers each, connected by a fresh host
/// file, running `command` with its arguments, `--json` and `extra`; stdout piped, stderr
/// discarded.
pub fn spawn_distributed(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> Vec<std::process::Child> {
    spawn_distributed_as(command, command_args, processes, workers, extra, true)
}

/// [`spawn_distributed`], with `--json` only where `json` is set.
fn spawn_distributed_as(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
    json: bool,
) -> Vec<std::process::Child> {
    let hosts = hostfile(processes);
    (0..processes)
        .map(|i| {
            Command::new(WEFT)
                .arg(command)
                .args(command_args)
                .args(json.then_some("--json"))
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
        .collect()
}

/// Runs `processes` weft processes of `workers` workers each with `command` (`explore`,
/// `check`, `refines`) and its arguments; returns process 0's JSON output and exit code (the
/// others print nothing on stdout and exit alike).
pub fn weft_distributed_command(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> (Value, i32) {
    let model = Path::new(command_args[0]);
    let (text, code) =
        weft_distributed_output(command, command_args, processes, workers, extra, true);
    let value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {text}", model.display()));
    (value, code)
}

/// As [`weft_distributed_command`], returning process 0's standard output as it is, in text
/// or (with `json`) in JSON.
pub fn weft_distributed_output(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
    json: bool,
) -> (String, i32) {
    let model = Path::new(command_args[0]);
    let mut children = spawn_distributed_as(command, command_args, processes, workers, extra, json);
    // Each output is read while the processes run: one larger than a pipe holds would
    // otherwise stop its process before it exits.
    let readers: Vec<_> = children
        .iter_mut()
        .map(|child| {
            let mut stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                let mut text = String::new();
                stdout.read_to_string(&mut text).unwrap();
                text
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut codes = Vec::new();
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
        codes.push(code);
    }
    let mut outputs: Vec<String> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    for (i, text) in outputs.iter().enumerate().skip(1) {
        assert_eq!(text, "", "process {i} printed on stdout");
        assert_eq!(codes[i], codes[0], "process {i}'s exit code");
    }
    (outputs.swap_remove(0), codes[0])
}

/// Runs weft with `args`; returns its exit code and standard error.
pub fn weft(args: &[&str]) -> (i32, String) {
    let out = Command::new(WEFT).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The process `weft explore` explores by default: `SYSTEM` if defined, else the last
/// process declared.
pub fn default_process(script: &weft::csp::Script) -> weft::csp::Proc {
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

/// Runs `weft COMMAND ARGS --json` in one process (threaded: `args` say how many threads);
/// returns its JSON output and exit code.
pub fn weft_single(command: &str, args: &[&str]) -> (Value, i32) {
    let out = Command::new(WEFT)
        .arg(command)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{command} {args:?}: not JSON ({e}): {text}"));
    (value, out.status.code().unwrap_or(-1))
}

/// Starts `processes` weft processes of `workers` workers each as
/// [`weft_distributed_command`] does (with `--json`, and `--connect-timeout 20s` before
/// `extra`), for runs that end in an error in every process: each process's standard output
/// and exit code.
pub fn weft_distributed_outputs(
    command: &str,
    command_args: &[&str],
    processes: usize,
    workers: usize,
    extra: &[&str],
) -> Vec<(String, i32)> {
    let extra: Vec<&str> = ["--connect-timeout", "20s"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    spawn_distributed(command, command_args, processes, workers, &extra)
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

/// The figures of `weft explore --json` that a distributed run gives as one process does,
/// each as `field: value`.
pub fn figures(run: &Value) -> Vec<String> {
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

/// `value` (a JSON output) without what differs between a distributed run and one process,
/// or between runs: its timings, thread counts and memory figures, whether a search was
/// shared among processes, and the keys of a distributed run's searches (`key_words`,
/// `key_restarts`, which one process does not report).
pub fn without_timings(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !(["seconds", "threads", "peak_memory", "shared"].contains(&k.as_str())
                        || k.contains("bytes")
                        || k.contains("per_second")
                        || k.starts_with("key_"))
                })
                .map(|(k, v)| (k.clone(), without_timings(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_timings).collect()),
        other => other.clone(),
    }
}
