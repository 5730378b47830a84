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
