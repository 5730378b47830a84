//! The assertion session's verdicts (`weft::verify`, which searches CSPm processes on the fly
//! with the parallel engine) against an independent path on random CSPm scripts: each process
//! explored completely to an explicit LTS, then
//! - refinement: the plain breadth-first oracle of `refine_determinism/oracle.rs` (no
//!   antichain, no normal form) gives the verdict and the length of a shortest counterexample;
//! - deadlock freedom, divergence freedom, determinism, has trace: the checks on an explicit
//!   LTS of `refine::properties` (tested against the failures oracle in `properties_props.rs`)
//!   give the verdict and the counterexample's trace.
//!
//! `WEFT_DET_CASES` sets the number of scripts (a quarter of it; default 50), `WEFT_DET_SEED`
//! the seed.

#[path = "refine_determinism/csp_gen.rs"]
mod csp_gen;
#[path = "refine_determinism/lts_gen.rs"]
#[allow(dead_code)]
mod lts_gen;
#[path = "refine_determinism/oracle.rs"]
mod oracle;
#[path = "refine_determinism/rng.rs"]
#[allow(dead_code)]
mod rng;

use std::path::Path;
use std::sync::Arc;

use lts_gen::RawLts;
use rng::Rng;
use weft::csp::lexer::Model as CspModel;
use weft::csp::{load_str, AssertionCheck, CspSystem, Proc, Script};
use weft::explore::{explore, ExploreOptions};
use weft::lts::Lts;
use weft::refine::properties::{
    deadlock_free, deterministic, divergence_free, has_trace, tick_label, HasTrace,
};
use weft::refine::Model;
use weft::threads::Threads;
use weft::verify::{AssertionRun, Verdict, VerifyOptions, Witness};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn model_of(m: CspModel) -> Model {
    Model::from_name(m.letters()).expect("a model weft knows")
}

fn explored(script: &Arc<Script>, process: &Proc) -> Lts {
    let system = CspSystem::new(script, process).expect("system");
    let opts = ExploreOptions {
        threads: Threads::ONE,
        record_transitions: true,
        max_states: None,
        on_level: None,
        ..Default::default()
    };
    explore(&system, &opts).to_lts(&system)
}

fn raw(lts: &Lts) -> RawLts {
    RawLts {
        initial: lts.initial(),
        num_states: lts.num_states(),
        transitions: lts
            .transitions()
            .map(|(s, l, t)| {
                (
                    s,
                    (l != 0).then(|| lts.label_names()[l as usize].clone()),
                    t,
                )
            })
            .collect(),
    }
}

/// The oracle's verdict of an assertion (without `not`) and the trace of its counterexample
/// (or its length, for refinement).
#[derive(Debug, PartialEq, Eq)]
enum Expected {
    Holds,
    FailsAfter(Vec<String>),
    FailsInSteps(usize),
}

/// Whether `lts` has a path of exactly `steps` transitions whose visible events are `trace`
/// and that ends in a state `bad` holds of: a counterexample of that length is real. (Two
/// shortest counterexamples may differ where paths tie: the session takes the least in
/// the order of parents' canonical ids, the explicit oracle the least label sequence.)
fn leads_to(lts: &Lts, trace: &[String], steps: usize, bad: impl Fn(u32) -> bool) -> bool {
    let names = lts.label_names();
    let mut now: std::collections::BTreeSet<(u32, usize)> = [(lts.initial(), 0)].into();
    for _ in 0..steps {
        let mut next = std::collections::BTreeSet::new();
        for &(s, done) in &now {
            for (l, t) in lts.successors(s) {
                if l == 0 {
                    next.insert((t, done));
                } else if trace.get(done) == Some(&names[l as usize]) {
                    next.insert((t, done + 1));
                }
            }
        }
        now = next;
    }
    now.iter().any(|&(s, done)| done == trace.len() && bad(s))
}

fn expected(script: &Arc<Script>, check: &AssertionCheck) -> Expected {
    let tick = |lts: &Lts| tick_label(lts);
    let property = |cex: Option<weft::refine::properties::PropertyCounterexample>| match cex {
        None => Expected::Holds,
        Some(c) => Expected::FailsAfter(c.trace),
    };
    let in_steps = |cex: Option<weft::refine::properties::PropertyCounterexample>| match cex {
        None => Expected::Holds,
        Some(c) => Expected::FailsInSteps(c.steps),
    };
    match check {
        AssertionCheck::Refinement { spec, model, imp } => {
            let (s, i) = (explored(script, spec), explored(script, imp));
            match oracle::shortest_violation(&raw(&s), &raw(&i), model_of(*model)) {
                None => Expected::Holds,
                Some(steps) => Expected::FailsInSteps(steps),
            }
        }
        AssertionCheck::DeadlockFree { process, model } => {
            let lts = explored(script, process);
            in_steps(deadlock_free(&lts, model_of(*model), tick(&lts)))
        }
        AssertionCheck::DivergenceFree { process } => {
            in_steps(divergence_free(&explored(script, process)))
        }
        AssertionCheck::Deterministic { process, model } => {
            property(deterministic(&explored(script, process), model_of(*model)))
        }
        AssertionCheck::HasTrace {
            process,
            model,
            trace,
        } => {
            let names: Vec<String> = trace.iter().map(|v| script.show(v)).collect();
            match has_trace(&explored(script, process), &names, model_of(*model)) {
                HasTrace::Performs(_) => Expected::Holds,
                HasTrace::Cannot(c) => Expected::FailsAfter(c.trace),
            }
        }
    }
}

#[test]
fn verdicts_agree_with_the_explicit_oracles() {
    let scripts = (env_number("WEFT_DET_CASES", 200) / 4).max(1);
    let mut rng = Rng::new(env_number("WEFT_DET_SEED", 0x5EED) ^ 0x0AC1E);
    let (mut holds, mut fails) = (0, 0);
    for i in 0..scripts {
        let text = csp_gen::random_script(&mut rng);
        let script =
            Arc::new(load_str(&format!("script{i}.csp"), &text, Path::new(".")).expect("load"));
        let mut run = AssertionRun::new(
            script.clone(),
            VerifyOptions {
                threads: Threads::new(2).expect("2 threads"),
                ..VerifyOptions::default()
            },
        );
        for assertion in script.assertions() {
            let result = run.check(assertion);
            let check = assertion.check.as_ref().expect("a checkable assertion");
            let want = expected(&script, check);
            let got = match (&result.verdict, result.negated) {
                (Verdict::Holds, false) | (Verdict::Fails, true) => Expected::Holds,
                (Verdict::Fails, false) | (Verdict::Holds, true) => match &result.witness {
                    Some(Witness::Refinement { counterexample, .. }) => {
                        Expected::FailsInSteps(counterexample.steps)
                    }
                    Some(Witness::Property { counterexample, .. }) => match check {
                        AssertionCheck::DeadlockFree { process, model } => {
                            let lts = explored(&script, process);
                            let fd = model_of(*model).has_divergences();
                            // States after ✓ are not deadlocks.
                            let tick = tick_label(&lts);
                            let ended: std::collections::BTreeSet<u32> = lts
                                .transitions()
                                .filter(|&(_, l, _)| Some(l) == tick)
                                .map(|(_, _, t)| t)
                                .collect();
                            let bad = |s: u32| {
                                (fd && lts.is_divergent(s))
                                    || (lts.is_deadlock(s) && !ended.contains(&s))
                            };
                            let (trace, steps) = (&counterexample.trace, counterexample.steps);
                            assert!(
                                leads_to(&lts, trace, steps, bad),
                                "script{i}: {}: {trace:?} in {steps} steps is no path to a \
                                 deadlock\n{text}",
                                result.text
                            );
                            Expected::FailsInSteps(steps)
                        }
                        AssertionCheck::DivergenceFree { process } => {
                            let lts = explored(&script, process);
                            let (trace, steps) = (&counterexample.trace, counterexample.steps);
                            assert!(
                                leads_to(&lts, trace, steps, |s| lts.is_divergent(s)),
                                "script{i}: {}: {trace:?} in {steps} steps is no path to a \
                                 divergence\n{text}",
                                result.text
                            );
                            Expected::FailsInSteps(steps)
                        }
                        _ => Expected::FailsAfter(counterexample.trace.clone()),
                    },
                    other => panic!("script{i}: {}: witness {other:?}\n{text}", result.text),
                },
                (other, _) => panic!("script{i}: {}: {other:?}\n{text}", result.text),
            };
            assert_eq!(got, want, "script{i}: {}\n{text}", result.text);
            if want == Expected::Holds {
                holds += 1;
            } else {
                fails += 1;
            }
        }
    }
    eprintln!("{scripts} scripts: {fails} assertions fail, {holds} hold, all as the oracles say");
    assert!(fails > 0 && holds > 0);
}
