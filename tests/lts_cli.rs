//! `weft info` end to end: output formats, the `--tau` option, exit codes and error messages.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{corpus_dir, read_tsv};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft")
}

fn info_json(path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["info", "--json"];
    args.extend_from_slice(extra);
    let path = path.to_string_lossy().into_owned();
    args.push(&path);
    let out = weft(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// A scratch file under the system's temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, contents: &[u8]) -> Scratch {
        let path = std::env::temp_dir().join(format!("weft-lts-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).expect("write scratch file");
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn json_figures_match_the_vlts_oracle() {
    let corpus = corpus_dir();
    let (header, rows) = read_tsv(&corpus.join("aut/vlts/oracle.tsv"));
    let states = header.iter().position(|h| h.starts_with("states")).unwrap();
    let transitions = header
        .iter()
        .position(|h| h.starts_with("transitions"))
        .unwrap();
    let deadlocks = header
        .iter()
        .position(|h| h.contains("reachable deadlock"))
        .unwrap();
    for row in rows.iter().take(4) {
        let json = info_json(&corpus.join(&row[0]), &[]);
        assert_eq!(json["states"].to_string(), row[states], "{}", row[0]);
        assert_eq!(json["transitions"].to_string(), row[transitions]);
        assert_eq!(
            json["reachable_deadlock_states"].to_string(),
            row[deadlocks]
        );
        for key in [
            "visible_labels",
            "tau_occurs",
            "tau_transitions",
            "deadlock_states",
            "divergent_states",
            "deterministic",
            "timing",
        ] {
            assert!(!json[key].is_null(), "{key} missing in {json}");
        }
    }
}

#[test]
fn tau_option_renames_the_internal_action() {
    let path = corpus_dir().join("aut/vlts/cwi_3_14.aut");
    let text = std::fs::read_to_string(&path).unwrap();
    let count = |label: &str| {
        text.lines()
            .filter(|l| l.split(',').nth(1).map(str::trim) == Some(label))
            .count() as u64
    };
    let default = info_json(&path, &[]);
    assert_eq!(default["tau_transitions"].as_u64(), Some(count("i")));
    let renamed = info_json(&path, &["--tau", "leader"]);
    assert_eq!(renamed["tau_transitions"].as_u64(), Some(count("leader")));
    assert_eq!(renamed["visible_labels"].as_u64(), Some(1));
}

#[test]
fn human_output_names_every_figure() {
    let path = corpus_dir().join("aut/generated/mcrl2_examples/dining_10.aut.gz");
    let out = weft(&["info", &path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for field in [
        "states:",
        "transitions:",
        "labels:",
        "deadlock states:",
        "divergent states:",
        "deterministic:",
    ] {
        assert!(text.contains(field), "{field} missing in\n{text}");
    }
    assert!(text.contains("tau does not occur"), "{text}");
}

#[test]
fn malformed_files_exit_2_naming_file_and_line() {
    let bad = Scratch::new("bad.aut", b"des (0,2,2)\n(0,\"a\",1)\n(1 \"b\",0)\n");
    let out = weft(&["info", &bad.0.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    let name = bad.0.to_string_lossy();
    assert!(err.contains(&format!("--> {name}:3:4")), "{err}");
    assert!(err.contains("3 | (1 \"b\",0)"), "{err}");
    assert_eq!(err.matches(&*name).count(), 1, "{err}");

    let short = Scratch::new("short.aut", b"des (0,3,2)\n(0,a,1)\n");
    let err = String::from_utf8(weft(&["info", &short.0.to_string_lossy()]).stderr).unwrap();
    assert!(err.contains("declares 3"), "{err}");

    let missing = weft(&["info", "/nonexistent/weft-test.aut"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/weft-test.aut"));

    let usage = weft(&["info"]);
    assert_eq!(usage.status.code(), Some(2));
}
