//! Property tests of `weft::refine::properties` on random small LTSs (taus, tau cycles,
//! deadlocks, and ✓ transitions into a terminated state Ω): every verdict agrees with the
//! brute-force trace/failure oracle of `tests/common/failures_oracle.rs`, every counterexample
//! is checked against the oracle's definitions, and counterexamples are shortest. Deadlock
//! freedom is also cross-checked against the refinement checker (`DF [F= P`, `DF [FD= P`).

mod common;

use std::collections::BTreeSet;

use common::failures_oracle::{arb_process_lts, Oracle, TICK};
use proptest::prelude::*;
use weft::lts::Lts;
use weft::refine::properties::{
    deadlock_free, deterministic, divergence_free, has_trace, tick_label, HasTrace,
    PropertyCounterexample, PropertyViolation,
};
use weft::refine::{check, CheckOptions, Model};
use weft::ts::Label;

/// Depth up to which the oracle enumerates traces for determinism (the normal form of an LTS
/// with n states can need traces up to 2^n long; counterexamples longer than this are
/// checked for being valid and for no shorter one existing up to this depth).
const DETERMINISM_DEPTH: usize = 6;

fn model_of(fd: bool) -> Model {
    if fd {
        Model::FailuresDivergences
    } else {
        Model::Failures
    }
}

/// Targets of ✓ transitions (the terminated state), computed here.
fn tick_targets(lts: &Lts) -> BTreeSet<u32> {
    lts.transitions()
        .filter(|&(_, l, _)| lts.label_names()[l as usize] == TICK)
        .map(|(_, _, t)| t)
        .collect()
}

/// FDR's `DF`: `|~| a : Σ @ a -> DF` (with ✓ leading to a final state), as an LTS.
fn df_spec(sigma: &[String]) -> Lts {
    let mut names = vec!["tau".to_string()];
    let mut transitions = Vec::new();
    let omega = sigma.len() as u32 + 1;
    for (i, e) in sigma.iter().enumerate() {
        names.push(e.clone());
        let branch = i as u32 + 1;
        transitions.push((0, 0, branch));
        let target = if e == TICK { omega } else { 0 };
        transitions.push((branch, branch, target));
    }
    Lts::from_transitions(0, omega + 1, names, &transitions)
}

fn check_deadlock_cex(
    oracle: &Oracle,
    lts: &Lts,
    fd: bool,
    cex: &PropertyCounterexample,
) -> Result<(), TestCaseError> {
    prop_assert!(oracle.after(&cex.trace).contains(&cex.state), "{cex:?}");
    let ticks = tick_targets(lts);
    let bad = |s: u32| {
        (oracle.refuses_everything(s) && !ticks.contains(&s)) || (fd && oracle.is_divergent(s))
    };
    match cex.violation {
        PropertyViolation::Deadlock => {
            prop_assert!(oracle.refuses_everything(cex.state) && !ticks.contains(&cex.state))
        }
        PropertyViolation::Divergence => prop_assert!(fd && oracle.is_divergent(cex.state)),
        _ => prop_assert!(false, "unexpected kind {cex:?}"),
    }
    prop_assert_eq!(Some(cex.steps), oracle.min_steps_to(bad), "not shortest");
    prop_assert_eq!(
        Some(cex.trace.clone()),
        oracle.least_path_trace(cex.steps, bad),
        "not the least path"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn deadlock_freedom_agrees_with_the_oracle_and_with_df_refinement(lts in arb_process_lts(6)) {
        let oracle = Oracle::new(&lts);
        let depth = lts.num_states() as usize + 1;
        for fd in [false, true] {
            let got = deadlock_free(&lts, model_of(fd), tick_label(&lts));
            let expected = oracle.deadlock(depth, fd);
            prop_assert_eq!(got.is_none(), expected.is_none(), "fd {}: {:?} vs {:?}", fd, got, expected);
            if let Some(cex) = &got {
                check_deadlock_cex(&oracle, &lts, fd, cex)?;
            }
            let opts = CheckOptions { model: model_of(fd), ..CheckOptions::default() };
            let refinement = check(&df_spec(&lts.label_names()[1..]), &lts, &opts).expect("check runs");
            prop_assert_eq!(refinement.holds(), got.is_none(), "DF refinement disagrees (fd {})", fd);
        }
    }

    #[test]
    fn divergence_freedom_agrees_with_the_oracle(lts in arb_process_lts(6)) {
        let oracle = Oracle::new(&lts);
        let got = divergence_free(&lts);
        let expected = oracle.divergence(lts.num_states() as usize + 1);
        prop_assert_eq!(got.is_none(), expected.is_none());
        if let Some(cex) = got {
            prop_assert_eq!(&cex.violation, &PropertyViolation::Divergence);
            prop_assert!(oracle.after(&cex.trace).contains(&cex.state));
            prop_assert!(oracle.is_divergent(cex.state));
            prop_assert_eq!(Some(cex.steps), oracle.min_steps_to(|s| oracle.is_divergent(s)));
            prop_assert_eq!(
                Some(cex.trace.clone()),
                oracle.least_path_trace(cex.steps, |s| oracle.is_divergent(s))
            );
        }
    }

    #[test]
    fn determinism_agrees_with_the_oracle(lts in arb_process_lts(6)) {
        let oracle = Oracle::new(&lts);
        for fd in [false, true] {
            let got = deterministic(&lts, model_of(fd));
            let expected = oracle.nondeterminism(DETERMINISM_DEPTH, fd);
            match (&got, &expected) {
                (None, None) => {}
                (None, Some(found)) => prop_assert!(false, "fd {fd}: missed {found:?}"),
                (Some(cex), _) => {
                    if cex.trace.len() <= DETERMINISM_DEPTH {
                        let found = expected.as_ref().expect("the oracle finds it too");
                        prop_assert_eq!(found.trace.len(), cex.trace.len(), "not shortest");
                    } else {
                        prop_assert!(expected.is_none(), "a shorter one exists: {expected:?}");
                    }
                    prop_assert_eq!(cex.steps, cex.trace.len());
                    let after = oracle.after(&cex.trace);
                    prop_assert!(after.contains(&cex.state), "{cex:?}");
                    match &cex.violation {
                        PropertyViolation::Nondeterminism { event, accepted, performer } => {
                            let mut longer = cex.trace.clone();
                            longer.push(event.clone());
                            prop_assert!(!oracle.after(&longer).is_empty());
                            prop_assert!(oracle.refuses(cex.state, event));
                            prop_assert_eq!(
                                &oracle.acceptance(cex.state),
                                &accepted.iter().cloned().collect()
                            );
                            prop_assert!(after.contains(performer));
                            prop_assert!(oracle.offers(*performer).contains(event));
                        }
                        PropertyViolation::Divergence => {
                            prop_assert!(fd && oracle.is_divergent(cex.state));
                        }
                        other => prop_assert!(false, "unexpected kind {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn has_trace_agrees_with_the_oracle(
        lts in arb_process_lts(6),
        wanted in proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just(TICK), Just("c")], 0..5),
    ) {
        let oracle = Oracle::new(&lts);
        let wanted: Vec<String> = wanted.into_iter().map(String::from).collect();
        for (model, fd) in [(Model::Traces, false), (Model::Failures, false), (Model::FailuresDivergences, true)] {
            let got = has_trace(&lts, &wanted, model);
            prop_assert_eq!(got.holds(), oracle.has_trace(&wanted, fd), "{:?}: {:?}", model, got);
            match got {
                HasTrace::Performs(path) => {
                    prop_assert!(oracle.after(&path.trace).contains(&path.state));
                    if path.diverges {
                        prop_assert!(fd && oracle.is_divergent(path.state));
                        prop_assert!(wanted.starts_with(&path.trace) && path.trace.len() < wanted.len());
                    } else {
                        prop_assert_eq!(&path.trace, &wanted);
                    }
                }
                HasTrace::Cannot(cex) => {
                    let k = oracle.longest_prefix(&wanted);
                    prop_assert_eq!(&cex.trace[..], &wanted[..k]);
                    prop_assert!(oracle.after(&cex.trace).contains(&cex.state));
                    prop_assert_eq!(cex.violation, PropertyViolation::NotATrace { event: wanted[k].clone() });
                }
            }
        }
    }

    /// The counterexample does not depend on how the states are numbered (the search follows
    /// label names): renumbering the states gives the same trace and kind.
    #[test]
    fn counterexample_traces_do_not_depend_on_state_numbering(
        lts in arb_process_lts(6),
        keys in proptest::collection::vec(any::<u32>(), 7),
    ) {
        let n = lts.num_states();
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&s| (keys[s as usize], s));
        let mut position = vec![0u32; n as usize];
        for (i, &s) in order.iter().enumerate() {
            position[s as usize] = i as u32;
        }
        let map = |s: u32| position[s as usize];
        let moved: Vec<(u32, Label, u32)> = lts.transitions().map(|(s, l, t)| (map(s), l, map(t))).collect();
        let renumbered = Lts::from_transitions(map(lts.initial()), n, lts.label_names().to_vec(), &moved);
        for fd in [false, true] {
            let a = deadlock_free(&lts, model_of(fd), tick_label(&lts));
            let b = deadlock_free(&renumbered, model_of(fd), tick_label(&renumbered));
            prop_assert_eq!(a.as_ref().map(|c| (&c.trace, &c.violation, c.steps)), b.as_ref().map(|c| (&c.trace, &c.violation, c.steps)));
            let a = deterministic(&lts, model_of(fd));
            let b = deterministic(&renumbered, model_of(fd));
            prop_assert_eq!(a.as_ref().map(|c| &c.trace), b.as_ref().map(|c| &c.trace));
        }
    }
}
