//! The `.aut` reader and the derived facts against the shared corpus and its oracles.

mod common;

use std::path::{Path, PathBuf};

use common::{corpus_dir, naive, read_tsv};
use weft::lts::{read_aut, read_aut_file, write_aut, AutOptions, Lts, LtsSummary};

fn aut_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            aut_files(&path, out);
        } else if name.ends_with(".aut") || name.ends_with(".aut.gz") {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> Lts {
    read_aut_file(path, &AutOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The column whose header contains `needle` (case-insensitive).
fn column(header: &[String], needle: &str) -> usize {
    header
        .iter()
        .position(|h| h.to_lowercase().contains(needle))
        .unwrap_or_else(|| panic!("no column {needle:?} in {header:?}"))
}

fn number(text: &str) -> u64 {
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{text:?} is not a number: {e}"))
}

fn boolean(text: &str) -> bool {
    match text.trim() {
        "True" | "true" => true,
        "False" | "false" => false,
        other => panic!("{other:?} is not a boolean"),
    }
}

#[test]
fn every_corpus_aut_file_reads_and_round_trips() {
    let mut files = Vec::new();
    aut_files(&corpus_dir().join("aut"), &mut files);
    assert!(files.len() >= 80, "only {} .aut files found", files.len());
    let mut gzipped = 0;
    for path in &files {
        let lts = read(path);
        gzipped += usize::from(path.to_string_lossy().ends_with(".gz"));
        // Every state id and label is within range, and the figures agree with themselves.
        assert!(lts.initial() < lts.num_states());
        assert_eq!(lts.transitions().count() as u64, lts.num_transitions());
        // Writing and reading back gives the same transitions, with the same label names.
        let mut text = Vec::new();
        write_aut(&lts, &mut text).expect("write to memory");
        let again = read_aut(&text[..], &AutOptions::default())
            .unwrap_or_else(|e| panic!("{} written back: {e}", path.display()));
        assert_eq!(again.initial(), lts.initial(), "{}", path.display());
        assert_eq!(again.num_states(), lts.num_states(), "{}", path.display());
        assert_eq!(
            naive::named_transitions(&again),
            naive::named_transitions(&lts),
            "{}",
            path.display()
        );
    }
    assert!(gzipped >= 3, "only {gzipped} gzipped files");
}

/// Compares a summary with one row of an oracle table; `distinct labels` counts tau as a label.
fn check_oracle_row(path: &Path, header: &[String], row: &[String], s: &LtsSummary) {
    let name = path.display();
    let states = column(header, "states");
    let transitions = column(header, "transitions");
    let labels = column(header, "distinct labels");
    let deadlocks = column(header, "reachable deadlock");
    let cycle = column(header, "cycle");
    assert_eq!(u64::from(s.states), number(&row[states]), "{name}: states");
    assert_eq!(
        s.transitions,
        number(&row[transitions]),
        "{name}: transitions"
    );
    assert_eq!(
        u64::from(s.visible_labels) + u64::from(s.tau_occurs),
        number(&row[labels]),
        "{name}: distinct labels"
    );
    assert_eq!(
        s.reachable_deadlock_states,
        number(&row[deadlocks]),
        "{name}: reachable deadlocks"
    );
    assert_eq!(
        s.reachable_divergent_states > 0,
        boolean(&row[cycle]),
        "{name}: reachable tau-cycle"
    );
}

#[test]
fn vlts_files_match_their_oracle() {
    let corpus = corpus_dir();
    let (header, rows) = read_tsv(&corpus.join("aut/vlts/oracle.tsv"));
    assert!(rows.len() >= 9);
    for row in &rows {
        let path = corpus.join(&row[0]);
        let lts = read(&path);
        let summary = lts.summary();
        check_oracle_row(&path, &header, row, &summary);
        // VLTS uses "i" for the internal action; with another internal name, "i" is visible.
        let other = read_aut_file(
            &path,
            &AutOptions {
                tau_labels: vec!["tau".to_string()],
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s = other.summary();
        assert_eq!(s.tau_transitions, 0, "{}", path.display());
        assert_eq!(
            s.visible_labels,
            summary.visible_labels + u32::from(summary.tau_occurs)
        );
    }
}

#[test]
fn generated_files_match_their_oracle() {
    let corpus = corpus_dir();
    let (header, rows) = read_tsv(&corpus.join("aut/generated/oracle_quotients.tsv"));
    assert!(rows.len() >= 16);
    assert!(rows.iter().any(|r| r[0].ends_with(".gz")));
    for row in &rows {
        let path = corpus.join(&row[0]);
        check_oracle_row(&path, &header, row, &read(&path).summary());
    }
}

/// `plain=S/T/L` (states, transitions, labels with tau) and `is_deterministic` of mCRL2's tests.
#[test]
fn mcrl2_reduction_files_match_their_stated_sizes() {
    let dir = corpus_dir().join("aut/mcrl2_reductions");
    let (header, rows) = read_tsv(&dir.join("expected_reductions.tsv"));
    let expected = column(&header, "expected");
    let mut sizes_checked = 0;
    let mut determinism_checked = 0;
    for row in &rows {
        let path = dir.join(&row[0]);
        let lts = read(&path);
        let s = lts.summary();
        let text = &row[expected];
        if let Some(plain) = text
            .split(';')
            .find_map(|f| f.trim().strip_prefix("plain="))
        {
            let figures: Vec<u64> = plain.split('/').map(number).collect();
            // mCRL2 always counts tau among the labels.
            let ours = [
                u64::from(s.states),
                s.transitions,
                u64::from(s.visible_labels) + 1,
            ];
            assert_eq!(&ours[..], &figures[..], "{}", path.display());
            sizes_checked += 1;
        }
        // mCRL2's is_deterministic treats tau as an ordinary label and checks every state;
        // weft's is stricter (no reachable tau): they agree on tau-free, fully reachable LTSs.
        if let Some(at) = text.find("is_deterministic") {
            let value = text[at..].contains("true");
            if s.reachable_states == s.states {
                assert_eq!(
                    s.deterministic,
                    value && s.tau_transitions == 0,
                    "{}",
                    path.display()
                );
                determinism_checked += 1;
            }
        }
    }
    assert!(sizes_checked >= 20 && determinism_checked >= 20);
}

/// On every small corpus file, the cached facts equal the slow searches.
#[test]
fn facts_of_small_corpus_files_equal_naive_searches() {
    let mut files = Vec::new();
    aut_files(&corpus_dir().join("aut"), &mut files);
    let mut checked = 0;
    for path in &files {
        let lts = read(path);
        if lts.num_states() > 3000 {
            continue;
        }
        checked += 1;
        let name = path.display();
        let divergent = naive::divergent(&lts);
        let reachable = naive::reachable(&lts);
        for s in 0..lts.num_states() {
            assert_eq!(
                lts.is_divergent(s),
                divergent[s as usize],
                "{name}: state {s}"
            );
            assert_eq!(
                lts.is_reachable(s),
                reachable[s as usize],
                "{name}: state {s}"
            );
            let closure: Vec<u32> = naive::tau_reach(&lts, s, 0).into_iter().collect();
            assert_eq!(lts.tau_closure(s), closure, "{name}: state {s}");
            assert_eq!(lts.enabled(s), &naive::enabled(&lts, s)[..], "{name}: {s}");
            assert_eq!(
                lts.is_stable(s),
                lts.tau_successors(s).next().is_none(),
                "{name}: {s}"
            );
        }
        assert_eq!(lts.is_deterministic(), naive::deterministic(&lts), "{name}");
    }
    assert!(checked >= 60, "only {checked} small files");
}

#[test]
fn odd_corpus_files_read_as_intended() {
    let dir = corpus_dir().join("aut/merc_examples");
    // Windows line endings and a padded header.
    let crlf = read(&dir.join("abp.aut"));
    assert_eq!((crlf.num_states(), crlf.num_transitions()), (74, 92));
    assert!(crlf.label_names().iter().all(|n| !n.contains('\r')));
    // No newline after the last transition, trailing blanks on every line.
    let open = read(&dir.join("selfloops.aut"));
    assert_eq!(open.num_transitions(), 5);
    assert_eq!(open.label_names(), &["tau", "a", "b", "c"]);
    // Bare labels, initial state other than 0.
    let bare = read(&corpus_dir().join("aut/mcrl2_compare/lts_impl.aut"));
    assert_eq!(bare.initial(), 1);
    assert!(bare.label_names().iter().all(|n| !n.contains('"')));
}
