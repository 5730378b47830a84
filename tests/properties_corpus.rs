//! The assertion checks of `weft::refine::properties` on the VLTS benchmark LTSs of the shared
//! corpus, against `aut/vlts/oracle.tsv` (reachable deadlock states, tau cycles) and the
//! brute-force oracle of `tests/common/failures_oracle.rs` (counterexamples replayed from the
//! definitions, shortest by plain breadth-first search).

mod common;

use common::failures_oracle::Oracle;
use common::{corpus_dir, read_tsv};
use weft::lts::{read_aut_file, AutOptions};
use weft::refine::properties::{
    deadlock_free, deterministic, divergence_free, has_trace, HasTrace, PropertyViolation,
};
use weft::refine::Model;

fn column(header: &[String], needle: &str) -> usize {
    header
        .iter()
        .position(|h| h.to_lowercase().contains(needle))
        .unwrap_or_else(|| panic!("no column {needle:?} in {header:?}"))
}

#[test]
fn vlts_deadlocks_and_divergences_match_the_oracle_table() {
    let root = corpus_dir();
    let (header, rows) = read_tsv(&root.join("aut/vlts/oracle.tsv"));
    let file_col = column(&header, "file");
    let deadlock_col = column(&header, "reachable deadlock");
    let cycle_col = column(&header, "cycle of");
    assert!(rows.len() >= 10, "only {} rows", rows.len());
    let mut with_deadlock = 0;
    for row in &rows {
        let path = root.join(&row[file_col]);
        let lts = read_aut_file(&path, &AutOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = &row[file_col];
        let deadlocks: u64 = row[deadlock_col].trim().parse().expect("a count");
        let tau_cycle = row[cycle_col].trim() == "True";
        let oracle = Oracle::new(&lts);

        let got = deadlock_free(&lts, Model::Failures, None);
        assert_eq!(got.is_some(), deadlocks > 0, "{name}: deadlock verdict");
        if let Some(cex) = &got {
            with_deadlock += 1;
            assert_eq!(cex.violation, PropertyViolation::Deadlock, "{name}");
            assert!(lts.out_degree(cex.state) == 0, "{name}: not a deadlock");
            assert!(
                oracle.after(&cex.trace).contains(&cex.state),
                "{name}: the trace does not lead to the state"
            );
            let shortest = oracle.min_steps_to(|s| lts.out_degree(s) == 0);
            assert_eq!(Some(cex.steps), shortest, "{name}: not shortest");
            // The deadlock's trace is a trace; extended by an event it is not.
            assert!(has_trace(&lts, &cex.trace, Model::Traces).holds(), "{name}");
            let mut longer = cex.trace.clone();
            longer.push(lts.label_names()[lts.label_names().len() - 1].clone());
            let after_state: Vec<_> = oracle.after(&longer).into_iter().collect();
            assert_eq!(
                has_trace(&lts, &longer, Model::Traces).holds(),
                !after_state.is_empty(),
                "{name}"
            );
        }

        let divergence = divergence_free(&lts);
        assert_eq!(
            divergence.is_some(),
            tau_cycle,
            "{name}: divergence verdict"
        );
        // Without divergence, FD deadlock freedom is F deadlock freedom.
        if !tau_cycle {
            assert_eq!(
                deadlock_free(&lts, Model::FailuresDivergences, None),
                got,
                "{name}"
            );
        }

        for model in [Model::Failures, Model::FailuresDivergences] {
            let Some(cex) = deterministic(&lts, model) else {
                continue;
            };
            let after = oracle.after(&cex.trace);
            assert!(after.contains(&cex.state), "{name}: {cex:?}");
            match &cex.violation {
                PropertyViolation::Nondeterminism {
                    event, performer, ..
                } => {
                    assert!(oracle.refuses(cex.state, event), "{name}");
                    assert!(after.contains(performer), "{name}");
                    assert!(oracle.offers(*performer).contains(event), "{name}");
                }
                PropertyViolation::Divergence => assert!(oracle.is_divergent(cex.state)),
                other => panic!("{name}: unexpected {other:?}"),
            }
            // Shortest: the oracle finds no violation with a shorter trace (enumerated while
            // that stays cheap).
            if oracle.sigma.len() <= 32 && cex.trace.len() <= 2 {
                let found = oracle
                    .nondeterminism(cex.trace.len(), model == Model::FailuresDivergences)
                    .unwrap_or_else(|| panic!("{name}: the oracle finds none"));
                assert_eq!(found.trace.len(), cex.trace.len(), "{name}");
            }
        }
        match has_trace(&lts, &[], Model::Traces) {
            HasTrace::Performs(path) => assert_eq!(path.state, lts.initial()),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(
        with_deadlock >= 3,
        "only {with_deadlock} LTSs with deadlocks"
    );
}
