//! Running the `weft` binary and comparing its JSON output up to timing fields.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs the release binary with `args`: exit code, stdout, stderr.
pub fn weft(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether a key holds a measurement that may differ between runs: times, rates, memory (the
/// bytes of a check's compact pairs depend on how its normal-form nodes were numbered), and
/// the thread count itself.
fn is_timing_key(key: &str) -> bool {
    key == "seconds"
        || key.ends_with("_seconds")
        || key.ends_with("_per_second")
        || key.contains("memory")
        || key.contains("bytes")
        || key.contains("rss")
        || key == "threads"
}

/// `value` without its timing fields, at any depth.
pub fn strip_timing(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !is_timing_key(k));
            map.values_mut().for_each(strip_timing);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timing),
        _ => {}
    }
}

/// The outputs of one command at several thread counts: (threads, exit code, stdout as
/// parsed and stripped of timing fields).
pub struct Runs {
    pub runs: Vec<(usize, i32, Value)>,
}

/// Runs `weft ARGS --json --threads T` for each `T` in `threads`; panics (naming `what`) if a
/// run exits with neither 0 nor 1 or prints something other than one JSON object.
pub fn run_at_thread_counts(args: &[&str], threads: &[usize], what: &Path) -> Runs {
    let mut runs = Vec::new();
    for &t in threads {
        let t_text = t.to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--json", "--threads", &t_text]);
        let (code, out, err) = weft(&all);
        assert!(
            code == 0 || code == 1,
            "{}: `weft {}` exited {code}\nstdout: {out}\nstderr: {err}",
            what.display(),
            all.join(" ")
        );
        let mut value: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {out}", what.display()));
        strip_timing(&mut value);
        runs.push((t, code, value));
    }
    Runs { runs }
}

impl Runs {
    /// Asserts that every run gave the same exit code and byte-identical JSON (timing fields
    /// removed); returns the first run's code and value.
    pub fn assert_identical(&self, what: &Path) -> (i32, &Value) {
        let (t0, code0, v0) = &self.runs[0];
        let text0 = serde_json::to_string(v0).expect("serialise");
        for (t, code, v) in &self.runs[1..] {
            let text = serde_json::to_string(v).expect("serialise");
            assert!(
                code == code0 && text == text0,
                "{}: output differs between --threads {t0} and --threads {t}\n\
                 --threads {t0} (exit {code0}): {text0}\n--threads {t} (exit {code}): {text}",
                what.display()
            );
        }
        (*code0, v0)
    }
}
