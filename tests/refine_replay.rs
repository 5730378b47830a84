//! The replay check rejects counterexamples that do not witness non-refinement, so a wrong
//! verdict of the search cannot be printed.

mod refine_common;

use weft::refine::replay::replay;
use weft::refine::{Counterexample, Model, Search, Violation};

use refine_common::{lts, run};

#[test]
fn replay_accepts_real_and_rejects_altered_counterexamples() {
    // spec: a then b forever; impl: a then either b or a deadlock (after a tau), or c.
    let spec = lts(0, 2, &[(0, "a", 1), (1, "b", 0)]);
    let impl_ = lts(
        0,
        5,
        &[
            (0, "a", 1),
            (1, "b", 0),
            (1, "tau", 2),
            (0, "c", 3),
            (4, "tau", 4),
        ],
    );
    let cex = run(&spec, &impl_, Model::Failures, Search::Bfs, false)
        .counterexample
        .expect("fails");
    assert!(replay(&spec, &impl_, Model::Failures, &cex).is_ok());
    assert_eq!(cex.violation, Violation::Trace { event: "c".into() });
    assert!(cex.trace.is_empty());

    let altered = |f: &dyn Fn(&mut Counterexample)| {
        let mut c = cex.clone();
        f(&mut c);
        c
    };
    // The spec can do a.
    let c = altered(&|c| c.violation = Violation::Trace { event: "a".into() });
    assert!(replay(&spec, &impl_, Model::Failures, &c).is_err());
    // The impl cannot do b in its initial state.
    let c = altered(&|c| c.violation = Violation::Trace { event: "b".into() });
    assert!(replay(&spec, &impl_, Model::Failures, &c).is_err());
    // State 4 is not reachable.
    let c = altered(&|c| c.impl_state = 4);
    assert!(replay(&spec, &impl_, Model::Failures, &c).is_err());

    // The deadlock after a (impl state 2) refuses b, which the spec cannot refuse after a.
    let refusal = Counterexample {
        trace: vec!["a".into()],
        impl_state: 2,
        steps: 2,
        violation: Violation::Refusal {
            refused: vec!["b".into()],
            spec_acceptances: vec![vec!["b".into()]],
        },
        acceptances: vec![],
    };
    assert!(replay(&spec, &impl_, Model::Failures, &refusal).is_ok());
    assert!(replay(&spec, &impl_, Model::Traces, &refusal).is_err());
    // Impl state 1 is not stable; state 0 is not reached by a; the spec may refuse a there.
    for c in [
        Counterexample {
            impl_state: 1,
            ..refusal.clone()
        },
        Counterexample {
            impl_state: 0,
            ..refusal.clone()
        },
        Counterexample {
            violation: Violation::Refusal {
                refused: vec!["a".into()],
                spec_acceptances: vec![vec!["b".into()]],
            },
            ..refusal.clone()
        },
        Counterexample {
            violation: Violation::Refusal {
                refused: vec!["b".into()],
                spec_acceptances: vec![vec!["a".into()]],
            },
            ..refusal.clone()
        },
    ] {
        assert!(replay(&spec, &impl_, Model::Failures, &c).is_err(), "{c:?}");
    }
    // No divergence anywhere reachable.
    let div = Counterexample {
        violation: Violation::Divergence,
        ..refusal.clone()
    };
    assert!(replay(&spec, &impl_, Model::FailuresDivergences, &div).is_err());
}

#[test]
fn replay_of_divergences_respects_spec_divergence() {
    let spec_div = lts(0, 2, &[(0, "a", 1), (1, "tau", 1)]);
    let spec = lts(0, 2, &[(0, "a", 1)]);
    let impl_ = lts(0, 3, &[(0, "a", 1), (1, "tau", 2), (2, "tau", 1)]);
    let cex = Counterexample {
        trace: vec!["a".into()],
        impl_state: 1,
        steps: 1,
        violation: Violation::Divergence,
        acceptances: vec![],
    };
    assert!(replay(&spec, &impl_, Model::FailuresDivergences, &cex).is_ok());
    assert!(replay(&spec_div, &impl_, Model::FailuresDivergences, &cex).is_err());
    assert!(replay(&spec, &impl_, Model::Failures, &cex).is_err());
    let found = run(
        &spec,
        &impl_,
        Model::FailuresDivergences,
        Search::Bfs,
        false,
    );
    assert_eq!(found.counterexample, Some(cex));
    assert!(run(
        &spec_div,
        &impl_,
        Model::FailuresDivergences,
        Search::Dfs,
        false
    )
    .holds());
}
