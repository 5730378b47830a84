//! The on-the-fly determinism and "has trace" searches (`search_determinism`, `search_trace`,
//! run by the parallel engine on any transition system) against the checks on an explicit LTS
//! (`properties::deterministic`, `properties::has_trace`, themselves tested against the
//! failures oracle in `properties_props.rs`): same verdict, same counterexample, at 1, 2 and 4
//! threads.

mod common;

use common::failures_oracle::{arb_process_lts, Oracle, TICK};
use proptest::prelude::*;
use weft::explore::{Engine, StopSignal};
use weft::refine::properties::{deterministic, has_trace, HasTrace, PropertyViolation};
use weft::refine::{search_determinism, search_trace, Model, SystemOptions};
use weft::threads::Threads;

const MODELS: [Model; 2] = [Model::Failures, Model::FailuresDivergences];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn determinism_on_the_fly_matches_the_lts_check(lts in arb_process_lts(7)) {
        let oracle = Oracle::new(&lts);
        for model in MODELS {
            let expected = deterministic(&lts, model);
            let mut first = None;
            for threads in [1, 2, 4] {
                let engine = Engine::new(Threads::new(threads).expect("threads")).expect("engine");
                let got = search_determinism(
                    &engine, &lts, model, &SystemOptions::default(), &StopSignal::new(),
                )
                .expect("search");
                let answer = (got.counterexample.clone(), got.state, got.states);
                prop_assert_eq!(first.get_or_insert(answer.clone()), &answer, "{} threads", threads);
                match (&expected, &got.counterexample) {
                    (None, None) => {}
                    (Some(e), Some(g)) => {
                        prop_assert_eq!(&e.trace, &g.trace, "{:?} at {} threads", model, threads);
                        prop_assert_eq!(e.steps, g.steps);
                        // The same event; the refusing state may be another one (each check
                        // names the first in its own order).
                        let event = |v: &PropertyViolation| match v {
                            PropertyViolation::Nondeterminism { event, .. } => Some(event.clone()),
                            _ => None,
                        };
                        prop_assert_eq!(event(&e.violation), event(&g.violation));
                        // The state named is reached by the trace and diverges, or refuses
                        // what the violation says.
                        let state = got.state.expect("a state");
                        prop_assert!(oracle.after(&g.trace).contains(&state));
                        match &g.violation {
                            PropertyViolation::Divergence => prop_assert!(lts.is_divergent(state)),
                            PropertyViolation::Nondeterminism { accepted, event, performer } => {
                                prop_assert!(oracle.refuses(state, event));
                                // The violation names the performing state by its position
                                // in discovery order; the search returns the state itself.
                                let performing = got.performer.expect("a performing state");
                                prop_assert!(oracle.after(&g.trace).contains(&performing));
                                prop_assert!(oracle.offers(performing).contains(event));
                                // Each state the trace reaches is listed once.
                                prop_assert!((*performer as usize) < oracle.after(&g.trace).len());
                                prop_assert_eq!(oracle.acceptance(state), accepted.iter().cloned().collect());
                            }
                            other => prop_assert!(false, "unexpected {other:?}"),
                        }
                    }
                    _ => prop_assert!(false, "{:?} at {} threads: {:?} vs {:?}", model, threads, expected, got.counterexample),
                }
            }
        }
    }

    #[test]
    fn has_trace_on_the_fly_matches_the_lts_check(
        lts in arb_process_lts(7),
        wanted in proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just(TICK), Just("c")], 0..5),
    ) {
        let oracle = Oracle::new(&lts);
        let wanted: Vec<String> = wanted.into_iter().map(String::from).collect();
        for model in [Model::Traces, Model::Failures, Model::FailuresDivergences] {
            let expected = has_trace(&lts, &wanted, model);
            let mut first = None;
            for threads in [1, 2, 4] {
                let engine = Engine::new(Threads::new(threads).expect("threads")).expect("engine");
                let got = search_trace(
                    &engine, &lts, &wanted, model, &SystemOptions::default(), &StopSignal::new(),
                )
                .expect("search");
                let answer = (format!("{:?}", got.outcome), got.state, got.states);
                prop_assert_eq!(first.get_or_insert(answer.clone()), &answer, "{} threads", threads);
                match (&expected, &got.outcome) {
                    (HasTrace::Performs(e), HasTrace::Performs(g)) => {
                        prop_assert_eq!(&e.trace, &g.trace);
                        prop_assert_eq!(e.steps, g.steps);
                        prop_assert_eq!(e.diverges, g.diverges);
                        prop_assert!(oracle.after(&g.trace).contains(&got.state));
                        prop_assert_eq!(g.diverges, lts.is_divergent(got.state) && g.trace.len() < wanted.len());
                    }
                    (HasTrace::Cannot(e), HasTrace::Cannot(g)) => {
                        prop_assert_eq!(&e.trace, &g.trace, "{:?} at {} threads", model, threads);
                        prop_assert_eq!(e.steps, g.steps);
                        prop_assert_eq!(&e.violation, &g.violation);
                        prop_assert!(oracle.after(&g.trace).contains(&got.state));
                    }
                    _ => prop_assert!(false, "{:?} at {} threads: {:?} vs {:?}", model, threads, expected, got.outcome),
                }
            }
        }
    }
}
