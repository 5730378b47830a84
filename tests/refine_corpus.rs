//! Refinement cases of the corpus with their stated verdicts: mCRL2's own preorder unit tests
//! (`aut/mcrl2_compare/cases.tsv`) and MERC's documentation example (`aut/merc_examples`).

mod common;
mod refine_common;

use std::path::Path;

use weft::lts::aut::{read_aut_file, AutOptions};
use weft::lts::Lts;
use weft::refine::Model;

use refine_common::verdict_all_ways;

/// Reads a corpus `.aut` file; with `tau_visible`, `tau` is an ordinary visible label (mCRL2's
/// strong preorders treat tau as visible).
fn read(dir: &Path, name: &str, tau_visible: bool) -> Lts {
    let opts = if tau_visible {
        AutOptions { tau_labels: vec![] }
    } else {
        AutOptions::default()
    };
    read_aut_file(&dir.join(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// How an mCRL2 relation maps onto weft's checks: the model, whether tau is visible, and
/// whether it is an equivalence (refinement both ways).
fn mapping(relation: &str) -> Option<(Model, bool, bool)> {
    Some(match relation {
        "lts_pre_weak_trace" | "lts_pre_weak_trace_anti_chain" => (Model::Traces, false, false),
        "lts_eq_weak_trace" => (Model::Traces, false, true),
        "lts_pre_weak_failures_refinement" => (Model::Failures, false, false),
        "lts_pre_failures_divergence_refinement" => (Model::FailuresDivergences, false, false),
        // Strong trace inclusion: tau is an ordinary event.
        "lts_pre_trace" | "lts_pre_trace_anti_chain" => (Model::Traces, true, false),
        "lts_eq_trace" => (Model::Traces, true, true),
        // Strong failures: tau is an ordinary event, so every state is stable.
        "lts_pre_failures_refinement" => (Model::Failures, true, false),
        _ => return None,
    })
}

#[test]
fn mcrl2_compare_cases() {
    let dir = common::corpus_dir().join("aut/mcrl2_compare");
    let table = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    let mut covered = 0;
    let mut skipped = 0;
    let mut wrong = Vec::new();
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (id, lts1, lts2, relation, expected) = (f[0], f[2], f[3], f[5], f[6]);
        let Some((model, tau_visible, both_ways)) = mapping(relation) else {
            skipped += 1;
            continue;
        };
        let expected = match expected {
            "true" => true,
            "false" => false,
            other => panic!("{id}: expected verdict {other:?}"),
        };
        // relation(LTS1, LTS2): LTS1 is the implementation, LTS2 the specification.
        let impl_ = read(&dir, lts1, tau_visible);
        let spec = read(&dir, lts2, tau_visible);
        let mut got = verdict_all_ways(&spec, &impl_, model);
        if both_ways {
            got &= verdict_all_ways(&impl_, &spec, model);
        }
        if got != expected {
            wrong.push(format!(
                "{id} {relation} {lts1} {lts2}: expected {expected}, got {got}"
            ));
        }
        covered += 1;
    }
    eprintln!(
        "mcrl2_compare: {covered} cases covered, {skipped} skipped (simulation/bisimulation)"
    );
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
    assert_eq!(
        covered, 86,
        "the number of refinement cases in cases.tsv changed"
    );
}

#[test]
fn merc_readme_example() {
    let dir = common::corpus_dir().join("aut/merc_examples");
    let table = std::fs::read_to_string(dir.join("cases.tsv")).expect("cases.tsv");
    let mut covered = 0;
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (id, lts1, lts2, relation, expected) = (f[0], f[1], f[2], f[3], f[4]);
        if !relation.starts_with("strong trace refinement") {
            continue;
        }
        let impl_ = read(&dir, lts1, true);
        let spec = read(&dir, lts2, true);
        let got = verdict_all_ways(&spec, &impl_, Model::Traces);
        assert_eq!(got.to_string(), expected, "{id}");
        covered += 1;
    }
    assert_eq!(covered, 1);
}
