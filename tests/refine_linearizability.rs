//! The linearisability benchmarks of the antichain paper (seed 000 Table 1, thesis Table 2.1):
//! every refinement verdict of `aut/generated/linearizability/results_mcrl2.tsv`, in all three
//! models (and mCRL2's strong trace preorder, tau visible), with BFS and DFS. The big systems
//! make this a release-mode test; run it with `cargo test --release --test
//! refine_linearizability -- --nocapture` to see the time of each check.

mod common;
mod refine_common;

use std::path::Path;
use std::time::Instant;

use weft::lts::aut::{read_aut_file, AutOptions};
use weft::lts::Lts;
use weft::refine::{Model, Search};

use refine_common::run;

fn read(dir: &Path, name: &str, tau_visible: bool) -> Lts {
    let opts = if tau_visible {
        AutOptions { tau_labels: vec![] }
    } else {
        AutOptions::default()
    };
    // Files over 5 MB are stored gzipped.
    let plain = dir.join(name);
    let path = if plain.exists() {
        plain
    } else {
        dir.join(format!("{name}.gz"))
    };
    read_aut_file(&path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
#[cfg_attr(debug_assertions, ignore = "big inputs: run with --release")]
fn linearizability_verdicts_of_mcrl2() {
    let dir = common::corpus_dir().join("aut/generated/linearizability");
    let table = std::fs::read_to_string(dir.join("results_mcrl2.tsv")).expect("results");
    let mut wrong = Vec::new();
    let mut checks = 0;
    eprintln!("case\tmodel\tsearch\tholds\tpairs\tseconds");
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (case, lts1, lts2, command, expected) = (f[0], f[1], f[2], f[3], f[4]);
        // LTS1 plays the implementation, LTS2 the specification.
        let (model, tau_visible, both_ways) = if command.contains("-ptrace-ac") {
            (Model::Traces, true, false)
        } else if command.contains("-pweak-trace-ac") {
            (Model::Traces, false, false)
        } else if command.contains("-pweak-failures") {
            (Model::Failures, false, false)
        } else if command.contains("-pfailures-divergence") {
            (Model::FailuresDivergences, false, false)
        } else if command.contains("-eweak-trace") {
            (Model::Traces, false, true)
        } else {
            continue; // bisimulations
        };
        let impl_ = read(&dir, lts1, tau_visible);
        let spec = read(&dir, lts2, tau_visible);
        let mut directions = vec![(&spec, &impl_)];
        if both_ways {
            directions.push((&impl_, &spec));
        }
        let mut verdict = true;
        for (s, i) in directions {
            let mut holds = None;
            for search in [Search::Bfs, Search::Dfs] {
                let start = Instant::now();
                let r = run(s, i, model, search, false);
                let secs = start.elapsed().as_secs_f64();
                eprintln!(
                    "{case}\t{}{}\t{search:?}\t{}\t{}\t{secs:.3}",
                    model.name(),
                    if tau_visible { " (tau visible)" } else { "" },
                    r.holds(),
                    r.stats.pairs_explored,
                );
                assert!(
                    holds.is_none() || holds == Some(r.holds()),
                    "{case}: BFS/DFS"
                );
                holds = Some(r.holds());
                checks += 1;
                if case.starts_with("treiberStack") && model == Model::FailuresDivergences {
                    assert!(secs < 30.0, "treiberStack FD took {secs:.1} s");
                }
            }
            verdict &= holds.expect("ran");
        }
        if verdict.to_string() != expected {
            wrong.push(format!(
                "{case} {command}: expected {expected}, got {verdict}"
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
    assert_eq!(checks, 2 * (6 * 6 + 4), "rows of results_mcrl2.tsv changed");
}

/// The classical algorithm (no antichain) agrees on the smaller systems, and the antichain
/// BFS counterexample of pracNonBlock is as short as the classical one.
#[test]
#[cfg_attr(debug_assertions, ignore = "big inputs: run with --release")]
fn classical_algorithm_agrees_on_small_linearizability_cases() {
    let dir = common::corpus_dir().join("aut/generated/linearizability");
    for case in ["pracNonBlock", "fineGrainedSet", "lazySet"] {
        let impl_ = read(&dir, &format!("{case}_impl.aut"), false);
        let spec = read(&dir, &format!("{case}_spec.aut"), false);
        for model in [Model::Traces, Model::Failures, Model::FailuresDivergences] {
            let fast = run(&spec, &impl_, model, Search::Bfs, false);
            let exact = run(&spec, &impl_, model, Search::Bfs, true);
            assert_eq!(fast.holds(), exact.holds(), "{case} {model:?}");
            assert_eq!(
                fast.counterexample.map(|c| c.steps),
                exact.counterexample.map(|c| c.steps),
                "{case} {model:?}"
            );
            assert!(fast.stats.pairs_discovered <= exact.stats.pairs_discovered);
        }
    }
}
