//! The worked examples of the seeds: the ATM of thesis Example 2.1.12 (with Examples 2.2.8,
//! 2.2.15 and 2.2.25) and Example 2 of seed 000 (= thesis Example 2.3.3).

mod refine_common;

use weft::lts::Lts;
use weft::refine::{Model, Search, Violation};

use refine_common::{lts, run, verdict_all_ways};

const T: Model = Model::Traces;
const F: Model = Model::Failures;
const FD: Model = Model::FailuresDivergences;

/// Specification s0: REQ, then either 20 or 10 twice, back to s0 (internal choice after REQ).
fn atm_s0() -> Lts {
    // s0=0 s1=1 s2=2 s3=3 s5=4
    lts(
        0,
        5,
        &[
            (0, "REQ", 1),
            (1, "tau", 2),
            (1, "tau", 4),
            (2, "20", 0),
            (4, "10", 3),
            (3, "10", 0),
        ],
    )
}

/// Implementation t0: REQ, 20, then deadlock.
fn atm_t0() -> Lts {
    lts(0, 3, &[(0, "REQ", 1), (1, "20", 2)])
}

/// Implementation u0: REQ, then a tau self-loop (polling) or 20 and back to u0 by a tau.
fn atm_u0() -> Lts {
    lts(
        0,
        3,
        &[(0, "REQ", 1), (1, "tau", 1), (1, "20", 2), (2, "tau", 0)],
    )
}

/// `spec ⊑ impl_` in `model`, all four search configurations agreeing.
fn refines(spec: &Lts, impl_: &Lts, model: Model) -> bool {
    verdict_all_ways(spec, impl_, model)
}

#[test]
fn atm_verdicts_stated_in_the_thesis() {
    let (s0, t0, u0) = (atm_s0(), atm_t0(), atm_u0());
    // Example 2.1.12.
    assert!(refines(&s0, &t0, T), "s0 ⊑tr t0");
    assert!(!refines(&s0, &t0, F), "s0 ⋢sfr t0");
    assert!(!refines(&s0, &t0, FD), "s0 ⋢fdr t0");
    assert!(refines(&s0, &u0, T), "s0 ⊑tr u0");
    assert!(refines(&s0, &u0, F), "s0 ⊑sfr u0");
    assert!(!refines(&s0, &u0, FD), "s0 ⋢fdr u0");
    assert!(refines(&u0, &s0, FD), "u0 ⊑fdr s0");
    assert!(!refines(&u0, &s0, T), "u0 ⋢tr s0");
    assert!(!refines(&u0, &s0, F), "u0 ⋢sfr s0");
    // Examples 2.2.15 and 2.2.25.
    assert!(refines(&u0, &t0, FD), "u0 ⊑fdr t0");
    // Each system refines itself in every model.
    for x in [&s0, &t0, &u0] {
        for m in [T, F, FD] {
            assert!(refines(x, x, m));
        }
    }
}

#[test]
fn atm_counterexamples_are_the_ones_the_thesis_explains() {
    let (s0, t0, u0) = (atm_s0(), atm_t0(), atm_u0());
    // Example 2.2.8: the failure (REQ 20, {10, 20, REQ}) of t0 is not one of s0; after
    // REQ 20 the spec is back in s0, which accepts REQ.
    let r = run(&s0, &t0, F, Search::Bfs, false);
    let cex = r.counterexample.expect("s0 ⋢sfr t0");
    assert_eq!(cex.trace, ["REQ", "20"]);
    assert_eq!(cex.impl_state, 2);
    assert_eq!(cex.steps, 2);
    assert_eq!(
        cex.violation,
        Violation::Refusal {
            refused: vec!["REQ".into()],
            spec_acceptances: vec![vec!["REQ".into()]],
        }
    );
    // u0 diverges after REQ; s0 does not.
    let r = run(&s0, &u0, FD, Search::Bfs, false);
    let cex = r.counterexample.expect("s0 ⋢fdr u0");
    assert_eq!(cex.trace, ["REQ"]);
    assert_eq!(cex.violation, Violation::Divergence);
    assert_eq!(cex.impl_state, 1);
    // s0 can do REQ 10; u0 cannot.
    let r = run(&u0, &s0, T, Search::Bfs, false);
    let cex = r.counterexample.expect("u0 ⋢tr s0");
    assert_eq!(cex.trace, ["REQ"]);
    assert_eq!(cex.violation, Violation::Trace { event: "10".into() });
    // (REQ, {10}) is a failure of s0 (in s2) but not of u0, which has no stable state there.
    let r = run(&u0, &s0, F, Search::Bfs, false);
    let cex = r.counterexample.expect("u0 ⋢sfr s0");
    assert_eq!(cex.trace, ["REQ"]);
    // The shortest witness: after REQ and one tau, s0 is in its stable state s2 while u0 is in
    // u1, which is never stable: the spec has no acceptance to compare with.
    assert_eq!(cex.steps, 2);
    assert_eq!(cex.impl_state, 2);
    assert_eq!(
        cex.violation,
        Violation::Refusal {
            refused: vec![],
            spec_acceptances: vec![],
        }
    );
}

// Example 2 of seed 000 (thesis Example 2.3.3): s0 diverges and can do a and b; s1 is STOP;
// s2 diverges and can do a into t2, which does a forever; s3 diverges and can do a into the
// deadlock t3.
fn ex2_s0() -> Lts {
    lts(0, 1, &[(0, "tau", 0), (0, "a", 0), (0, "b", 0)])
}
fn ex2_s1() -> Lts {
    lts(0, 1, &[])
}
fn ex2_s2() -> Lts {
    lts(0, 2, &[(0, "tau", 0), (0, "a", 1), (1, "a", 1)])
}
fn ex2_s3() -> Lts {
    lts(0, 2, &[(0, "tau", 0), (0, "a", 1)])
}

#[test]
fn example_2_of_the_antichain_paper() {
    let (s0, s1, s2, s3) = (ex2_s0(), ex2_s1(), ex2_s2(), ex2_s3());
    // s1 ⋢sfr s0: s0 has weak traces a and b, s1 has none.
    assert!(!refines(&s1, &s0, F));
    assert!(!refines(&s1, &s0, T));
    // s0 ⊑fdr s1: the root of s0 diverges, so every system refines it.
    assert!(refines(&s0, &s1, FD));
    // With the standard definitions s2 ⊑fdr s3 holds (s2 diverges at the root); the paper's
    // point is that the non-standard relation of [137] would not hold: (a, {a}) is a failure
    // of s3 but not of s2, so stable-failures refinement fails.
    assert!(refines(&s2, &s3, FD));
    assert!(!refines(&s2, &s3, F));
    assert!(refines(&s2, &s3, T));
    let cex = run(&s2, &s3, F, Search::Bfs, false)
        .counterexample
        .expect("s2 ⋢sfr s3");
    assert_eq!(cex.trace, ["a"]);
    assert_eq!(
        cex.violation,
        Violation::Refusal {
            refused: vec!["a".into()],
            spec_acceptances: vec![vec!["a".into()]],
        }
    );
    // s0 has no stable state, so it has no stable failures: STOP's (ε, {a, b}) is not one.
    assert!(!refines(&s0, &s1, F));
    assert!(refines(&s0, &s1, T));
    // A divergent implementation refines only a specification that diverges there.
    assert!(!refines(&s1, &s3, FD));
    assert!(refines(&s3, &s2, FD));
}

/// Example 2.3.5 / Example 4 of seed 000: the spec set {t1} is discovered before {t1, t2}
/// for the same implementation state; the larger pair is covered and pruned.
#[test]
fn antichain_prunes_the_larger_set() {
    let spec = lts(0, 3, &[(0, "a", 1), (0, "b", 1), (0, "b", 2)]);
    let impl_ = lts(0, 2, &[(0, "a", 1), (0, "b", 1)]);
    let r = run(&spec, &impl_, T, Search::Bfs, false);
    assert!(r.holds());
    assert_eq!(r.stats.antichain_hits, 1);
    assert_eq!(r.stats.antichain_misses, 2);
    assert_eq!(r.stats.max_antichain, 2);
    let exact = run(&spec, &impl_, T, Search::Bfs, true);
    assert_eq!(exact.stats.antichain_misses, 3);
}
