//! Unguarded recursion is refused in bounded time and memory: every `rec14_*` script of
//! `tests/cases/should_fail/` (cycles through `[]`, `|~|`, `|||`, `\`, the left of `;`, a
//! `let` group, calls with arguments) run by the binary under `--max-memory 1G` ends within
//! 30 s with exit 2 and an unguarded-recursion error, never by the memory or time limit (an
//! unfolding without bound, as a name standing for itself anywhere once did, reaches them).
//! The `rec14_*` scripts of `should_pass/` (recursion through `;`) run under the same bounds
//! with a verdict for every assertion.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `rec14_*.csp` scripts of `tests/cases/<folder>`, sorted.
fn scripts(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases")
        .join(folder);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "csp")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("rec14_"))
        })
        .collect();
    found.sort();
    found
}

/// Runs `weft check SCRIPT --max-memory 1G --timeout 20`, killed after 30 s; its exit code
/// and output.
fn check_bounded(script: &Path) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args([
            "check",
            "--max-memory",
            "1G",
            "--timeout",
            "20",
            "--threads",
            "2",
        ])
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("weft runs");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            child.kill().expect("kill");
            child.wait().expect("wait");
            panic!("`weft check {}` did not finish in 30 s", script.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn unguarded_cycles_are_refused_in_bounded_time_and_memory() {
    let found = scripts("should_fail");
    assert!(found.len() >= 7, "rec14 should_fail cases not found");
    for script in &found {
        let (code, out) = check_bounded(script);
        let name = script.display();
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains("unguarded recursion"), "{name}: {out}");
        assert!(
            !out.contains("stopped by"),
            "{name}: a limit, not the error: {out}"
        );
    }
}

#[test]
fn recursion_through_sequence_gets_verdicts_in_bounded_time_and_memory() {
    let found = scripts("should_pass");
    assert!(found.len() >= 4, "rec14 should_pass cases not found");
    for script in &found {
        let (code, out) = check_bounded(script);
        let name = script.display();
        // 0: every assertion holds, 1: some fails; 2 would be an error or a limit
        assert!(code == 0 || code == 1, "{name}: exit {code}: {out}");
        assert!(!out.contains("error"), "{name}: {out}");
    }
}
