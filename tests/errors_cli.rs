//! Errors a user can act on, end to end: every error exits 2, names its file, line and
//! column, shows the source line with the span underlined, is reported once, and is also a
//! JSON object on stdout with `--json`. Bad `.aut` files never panic, abort or allocate from
//! an untrusted header.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs weft; on Linux with its address space bounded (4 GiB), so that an allocation sized by
/// an untrusted count fails the test instead of exhausting the machine.
fn run(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weft"));
    command.args(args).env("NO_COLOR", "1");
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only setrlimit, async-signal-safe, runs in the child before exec.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 4 << 30,
                    rlim_max: 4 << 30,
                };
                libc::setrlimit(libc::RLIMIT_AS, &limit);
                Ok(())
            });
        }
    }
    command.output().expect("run weft")
}

/// Exit code, stdout, stderr.
fn weft(args: &[&str]) -> (i32, String, String) {
    let out = run(args);
    (
        out.status.code().expect("exited (no signal)"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str, bytes: &[u8]) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("errors_cli");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.display().to_string()
}

/// The `error` object of a `--json` run's stdout.
fn json_error(stdout: &str) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    v["error"].clone()
}

/// Checks the usual shape of a reported error: exit 2, said once, never `error: error`.
fn assert_error(code: i32, err: &str) {
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("error: error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let reports = err
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("weft: error:"))
        .count();
    assert_eq!(reports, 1, "{err}");
}

/// `.aut` inputs that must be refused: the text, the position reported, and what the message
/// says.
const BAD_AUT: &[(&str, &[u8], u64, u64, &str)] = &[
    (
        "out_of_range",
        b"des (0,1,2)\n(0,\"a\",2)\n",
        2,
        8,
        "state 2 is out of range: the header declares 2 states",
    ),
    (
        "more_transitions",
        b"des (0,1,2)\n(0,a,1)\n(1,b,0)\n",
        3,
        1,
        "one transition more than the 1 the header declares",
    ),
    (
        "fewer_transitions",
        b"des (0,3,2)\n(0,a,1)\n",
        1,
        8,
        "the header declares 3 transitions, but the file ends after 1",
    ),
    (
        "huge_transition_count",
        b"des (0,18446744073709551615,2)\n(0,a,1)\n",
        1,
        8,
        "declares 18446744073709551615 transitions",
    ),
    (
        "transition_count_over_u64",
        b"des (0,99999999999999999999,2)\n",
        1,
        8,
        "expected a number below 2^64",
    ),
    (
        "initial_out_of_range",
        b"des (5,0,2)\n",
        1,
        6,
        "the initial state 5 is out of range",
    ),
    (
        "negative",
        b"des (0,1,2)\n(0,a,-1)\n",
        2,
        6,
        "expected the target state, found '-1)'",
    ),
    (
        "over_u32",
        b"des (0,1,2)\n(4294967296,a,1)\n",
        2,
        2,
        "expected a number below 2^32",
    ),
    (
        "states_over_u32",
        b"des (0,1,4294967296)\n",
        1,
        10,
        "expected a number below 2^32",
    ),
    (
        "missing_closing_quote",
        b"des (0,1,2)\n(0,\"a,1)\n",
        2,
        9,
        "expected '\"' closing the label",
    ),
    (
        "missing_label",
        b"des (0,1,2)\n(0,,1)\n",
        2,
        4,
        "expected a label",
    ),
    (
        "empty",
        b"",
        1,
        1,
        "expected the header 'des (initial, transitions, states)', found an empty file",
    ),
    ("blank_lines_only", b"\n\n  \n", 3, 1, "found end of file"),
    (
        "binary",
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\xff\xfe\n\x00\x01",
        1,
        1,
        "expected the header",
    ),
    ("no_header", b"(0,a,1)\n", 1, 1, "expected the header"),
];

#[test]
fn bad_aut_files_give_a_positioned_error_and_exit_2() {
    for &(name, bytes, line, column, message) in BAD_AUT {
        let file = scratch(&format!("{name}.aut"), bytes);
        let (code, out, err) = weft(&["info", &file]);
        assert_error(code, &err);
        assert!(out.is_empty(), "{name}: {out}");
        assert!(
            err.contains(&format!("--> {file}:{line}:{column}")),
            "{name}: {err}"
        );
        assert!(err.contains(message), "{name}: {err}");
        if !bytes.is_empty() && !name.starts_with("blank") {
            // The offending line is shown, with a caret under the span.
            assert!(err.contains(&format!("{line} | ")), "{name}: {err}");
            assert!(err.contains('^'), "{name}: {err}");
        }
        let (code, out, _) = weft(&["info", "--json", &file]);
        assert_eq!(code, 2, "{name}");
        let e = json_error(&out);
        assert_eq!(e["file"], file.as_str(), "{name}: {out}");
        assert_eq!(e["line"], line, "{name}: {out}");
        assert_eq!(e["column"], column, "{name}: {out}");
        assert!(
            e["message"].as_str().unwrap().contains(message),
            "{name}: {out}"
        );
        assert!(matches!(
            e["kind"].as_str(),
            Some("syntax" | "header_mismatch")
        ));
        // The same through `refines` and `explore`.
        let (code, _, err) = weft(&["refines", &file, &file]);
        assert_error(code, &err);
        assert!(
            err.contains(&format!("{file}:{line}:{column}")),
            "{name}: {err}"
        );
        let (code, out, err) = weft(&["explore", "--json", &file]);
        assert_error(code, &err);
        assert_eq!(json_error(&out)["line"], line, "{name}: {out}");
    }
}

#[test]
fn sparse_state_numbers_cost_no_memory() {
    // 44 bytes naming state 4000000000: read within the 4 GiB address-space bound.
    let file = scratch("big.aut", b"des (0,1,4000000001)\n(0,\"a\",4000000000)\n");
    let (code, out, err) = weft(&["info", "--json", &file]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["states"], 4_000_000_001u64);
    assert_eq!(v["reachable_states"], 2);
    assert_eq!(v["transitions"], 1);
    // The implementation's state in a counterexample keeps its number in the file.
    let spec = scratch("stop.aut", b"des (0,0,1)\n");
    let (code, out, err) = weft(&["refines", "--json", "--model", "traces", &spec, &file]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["counterexample"]["impl_state"], 0, "{out}");
    let start_late = scratch(
        "late.aut",
        b"des (4000000000,1,4000000001)\n(4000000000,\"a\",7)\n",
    );
    let (code, out, _) = weft(&["info", "--json", &start_late]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["initial"], 4_000_000_000u64);
}

#[test]
fn huge_label_counts_are_read() {
    let mut text = String::from("des (0,100000,2)\n");
    for i in 0..100_000 {
        text.push_str(&format!("(0,\"label{i}\",1)\n"));
    }
    let file = scratch("labels.aut", text.as_bytes());
    let (code, out, err) = weft(&["info", "--json", &file]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["visible_labels"], 100_000);
}

#[test]
fn truncated_gzip_is_an_error() {
    let text = b"des (0,2,3)\n(0,\"a\",1)\n(1,\"b\",2)\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text).unwrap();
    let bytes = gz.finish().unwrap();
    let file = scratch("cut.aut.gz", &bytes[..bytes.len() - 6]);
    let (code, out, err) = weft(&["info", "--json", &file]);
    assert_error(code, &err);
    assert!(
        err.contains("cannot be read further") && err.contains(&format!("{file}:")),
        "{err}"
    );
    // Positioned where the text read so far ends (the fuzzers' rule: every error has one).
    let e = json_error(&out);
    assert_eq!(e["kind"], "syntax");
    assert_eq!(e["line"], 4);
    let garbage = scratch("garbage.aut.gz", &[0x1f, 0x8b, 0x08, 0, 1, 2, 3, 4, 5, 6]);
    let (code, _, err) = weft(&["info", &garbage]);
    assert_error(code, &err);
}

#[test]
fn missing_files_are_reported_once() {
    for args in [
        &["info", "/nonexistent/x.aut"][..],
        &["explore", "/nonexistent/x.aut"],
        &["refines", "/nonexistent/x.aut", "/nonexistent/x.aut"],
    ] {
        let (code, _, err) = weft(args);
        assert_error(code, &err);
        assert!(
            err.starts_with("weft: error: cannot read /nonexistent/x.aut"),
            "{err}"
        );
        assert_eq!(err.matches("/nonexistent/x.aut").count(), 1, "{err}");
    }
    let (code, _, err) = weft(&["explore", "/nonexistent/x.csp"]);
    assert_error(code, &err);
    assert_eq!(err.matches("/nonexistent/x.csp").count(), 1, "{err}");
}

const SCRIPT: &str = "channel a, b\nP = a -> b -> STOP\nQ = a -> STOP\nN = 3\nf(x) = x\n";
const BROKEN: &str = "channel a, b\nP = a -> b -> STOP\nR = a -> -> STOP\n";

#[test]
fn cspm_errors_show_the_line_and_a_caret() {
    let file = scratch("broken.csp", BROKEN.as_bytes());
    for args in [
        vec!["explore", file.as_str()],
        vec!["refines", &format!("{file}:P"), "x.aut"],
    ] {
        let args: Vec<&str> = args.iter().map(|s| &**s).collect();
        let (code, _, err) = weft(&args);
        assert_error(code, &err);
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(&format!("--> {file}:3:10")), "{err}");
        assert!(err.contains("3 | R = a -> -> STOP"), "{err}");
        assert!(err.contains("  |          ^^"), "{err}");
    }
    let target = format!("{file}:P");
    for args in [
        vec!["explore", "--json", file.as_str()],
        vec!["refines", "--json", &target, &target],
    ] {
        let (code, out, _) = weft(&args);
        assert_eq!(code, 2);
        let e = json_error(&out);
        assert_eq!(e["kind"], "syntax");
        assert_eq!(
            (e["line"].as_u64(), e["column"].as_u64()),
            (Some(3), Some(10))
        );
        assert_eq!(e["file"], file.as_str());
    }
}

#[test]
fn refines_on_a_script_without_a_process_says_what_to_write() {
    let file = scratch("ok.csp", SCRIPT.as_bytes());
    let (code, out, err) = weft(&["refines", "--json", &file, &file]);
    assert_error(code, &err);
    assert!(
        err.contains(&format!("name the process to check as `{file}:PROCESS`")),
        "{err}"
    );
    assert!(
        err.contains("the script defines the processes P, Q"),
        "{err}"
    );
    assert!(!err.contains("expected"), "{err}");
    let e = json_error(&out);
    assert_eq!(e["kind"], "usage");
    assert!(e["message"].as_str().unwrap().contains("P, Q"));

    let (code, _, err) = weft(&["refines", &format!("{file}:X"), &format!("{file}:P")]);
    assert_error(code, &err);
    assert!(err.contains("no process named `X`"), "{err}");
    assert!(err.contains("P, Q"), "{err}");

    let (code, _, err) = weft(&["refines", &format!("{file}:"), &format!("{file}:P")]);
    assert_error(code, &err);
    assert!(err.contains("name the process after the colon"), "{err}");

    let (code, out, _) = weft(&["refines", &format!("{file}:Q"), &format!("{file}:P")]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn the_wrong_kind_of_file_gets_a_hint() {
    let file = scratch("hint.csp", SCRIPT.as_bytes());
    let (code, out, err) = weft(&["info", "--json", &file]);
    assert_error(code, &err);
    assert!(err.contains("`weft info` reads an LTS"), "{err}");
    assert!(
        err.contains(&format!("weft explore {file} --process PROCESS")),
        "{err}"
    );
    assert_eq!(json_error(&out)["kind"], "usage");

    let aut = scratch("hint.aut", b"des (0,1,2)\n(0,a,1)\n");
    let (code, _, err) = weft(&["explore", "--process", "P", &aut]);
    assert_error(code, &err);
    assert!(err.contains("--process applies to CSPm scripts"), "{err}");

    let other = scratch("model.txt", b"des (0,0,1)\n");
    let (code, _, err) = weft(&["explore", &other]);
    assert_error(code, &err);
    assert!(err.contains("unknown model format"), "{err}");

    let (code, _, err) = weft(&["explore", "--process", "Nope", &file]);
    assert_error(code, &err);
    assert!(err.contains("P, Q"), "{err}");
}

#[test]
fn refines_stops_at_max_states_without_a_verdict() {
    let file = scratch(
        "count.csp",
        b"channel c : {0..99}\nCOUNT(n) = c.n -> COUNT((n + 1) % 100)\nP = COUNT(0)\nS = c?x -> S\n",
    );
    let spec = format!("{file}:S");
    let imp = format!("{file}:P");
    let (code, out, _) = weft(&["refines", "--model", "traces", &spec, &imp]);
    assert_eq!(code, 0, "{out}");
    // (In the failures models P fails at once, before any limit: the check is on the fly.)
    let (code, out, err) = weft(&[
        "refines",
        "--model",
        "traces",
        "--max-states",
        "10",
        &spec,
        &imp,
    ]);
    assert_error(code, &err);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("state limit") && err.contains("no verdict"),
        "{err}"
    );
    let (code, out, _) = weft(&[
        "refines",
        "--model",
        "traces",
        "--json",
        "--max-states",
        "10",
        &spec,
        &imp,
    ]);
    assert_eq!(code, 2);
    assert_eq!(json_error(&out)["kind"], "limit");
    assert!(out.lines().count() == 1 && !out.contains("holds"), "{out}");

    let aut = scratch("three.aut", b"des (0,3,3)\n(0,a,1)\n(1,a,2)\n(2,a,0)\n");
    let (code, _, err) = weft(&["refines", "--max-states", "2", &aut, &aut]);
    assert_error(code, &err);
    assert!(
        err.contains("3 reachable states, more than --max-states 2"),
        "{err}"
    );
    let (code, _, _) = weft(&["refines", "--max-states", "3", &aut, &aut]);
    assert_eq!(code, 0);

    for command in ["refines", "explore"] {
        let (code, _, err) = weft(
            &[command, "--max-states", "0", &aut, &aut][..if command == "refines" { 5 } else { 4 }],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--max-states"), "{err}");
    }
}

/// Found by fuzz11: an `.aut` file (and a script) saved with a UTF-8 byte-order mark was
/// refused ("expected the header 'des …', found '\u{feff}des (0, 1, 2)'", the mark
/// invisible); the mark is skipped. CRLF line ends, escaped quotes in labels and 2^32 - 1
/// declared states are read; a state beyond the header and 2^32 states are positioned errors.
#[test]
fn odd_but_valid_aut_text_is_read_and_odd_invalid_text_is_positioned() {
    let bom = scratch("bom.aut", b"\xEF\xBB\xBFdes (0, 1, 2)\n(0, \"a\", 1)\n");
    let (code, out, err) = weft(&["info", "--json", &bom]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["states"].as_u64(), v["transitions"].as_u64()),
        (Some(2), Some(1))
    );
    let crlf = scratch(
        "crlf_escaped.aut",
        b"des (0, 2, 4294967295)\r\n(0, \"a\\\"b\", 1)\r\n(1, \"c\", 4294967294)\r\n",
    );
    let (code, out, err) = weft(&["info", "--json", &crlf]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["reachable_states"], 3, "{out}");
    assert_eq!(v["visible_labels"], 2, "{out}");
    for (name, text, at) in [
        (
            "beyond.aut",
            &b"des (0, 1, 2)\n(0, \"a\", 5)\n"[..],
            "beyond.aut:2:10",
        ),
        (
            "states_2_32.aut",
            b"des (0, 1, 4294967296)\n(0, \"a\", 1)\n",
            "states_2_32.aut:1:12",
        ),
    ] {
        let file = scratch(name, text);
        let (code, _, err) = weft(&["info", &file]);
        assert_error(code, &err);
        assert!(err.contains(at), "{name}: {err}");
    }
    let script = scratch(
        "bom.csp",
        b"\xEF\xBB\xBFchannel a\nP = a -> STOP\nassert P [T= a -> STOP\n",
    );
    let (code, out, err) = weft(&["check", &script]);
    assert_eq!(code, 0, "{out}{err}");
}
