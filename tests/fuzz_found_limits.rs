//! Inputs the grammar-aware fuzzer found (see `tests/fuzz_found/README.md`), run through the
//! command line under the fuzzers' address-space bound: each ends within seconds with a
//! positioned error or a limit stop (exit 2), never a hang, an abort or a verdict after a stop.

#[path = "common/fuzz_run.rs"]
#[allow(dead_code)] // the numeric knobs are the fuzzers'
mod fuzz_run;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fuzz_run::{binary, limit_address_space};

/// Writes `text` to `name` in this test binary's scratch folder; returns the path.
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_found_limits");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Runs `weft check FILE ARGS` under the address-space bound: (exit code, stderr, time).
fn check(path: &PathBuf, args: &[&str]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let mut command = Command::new(binary());
    limit_address_space(&mut command);
    let out = command
        .arg("check")
        .arg(path)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run weft");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed(),
    )
}

/// Cases 206, 310, 311: a chain of sliding choices 20,000 deep. Firing its top term fires
/// every level below it, in one step of the search that the search's own limit checks do
/// not see: the time limit must stop it there.
#[test]
fn a_deep_chain_of_sliding_choices_stops_at_the_time_limit() {
    let depth = 20_000;
    let body = format!("{}STOP{}", "(".repeat(depth), " [> STOP)".repeat(depth));
    let path = scratch(
        "deep_timeout_chain.csp",
        &format!("P = {body}\nassert STOP [T= P\n"),
    );
    let (code, err, took) = check(&path, &["--timeout", "2", "--max-memory", "1G"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("stopped by the time limit"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {err}");
}

/// Case 224: a replicated parallel over 10^7 values is refused where it is written, before
/// its components are built.
#[test]
fn a_ten_million_way_replicated_parallel_is_refused_with_a_position() {
    let path = scratch(
        "replicated_parallel.csp",
        "channel a\nP = || x : {0..9999999} @ [{a}] a -> STOP\nassert P :[deadlock free]\n",
    );
    let (code, err, took) = check(&path, &["--timeout", "3", "--max-memory", "1G"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("replicated_parallel.csp:2:5"), "{err}");
    assert!(err.contains("too large to explore"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {err}");
}
