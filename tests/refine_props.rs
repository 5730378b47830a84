//! Property tests: on random small LTS pairs (with taus, tau cycles, deadlocks, events one side
//! never mentions) the antichain checker with BFS and DFS, and the classical algorithm, agree
//! with each other and with a brute-force checker written from the definitions; every
//! counterexample replays (the checker replays it before returning, an `Err` fails the test);
//! the antichain BFS counterexample is as short as the classical BFS one.

mod refine_common;

use std::collections::{BTreeSet, HashSet, VecDeque};

use proptest::prelude::*;
use weft::lts::Lts;
use weft::refine::Model;

use refine_common::{lts, verdict_all_ways};

/// The brute-force checker: the definitions of thesis §2.1 evaluated by enumerating every
/// weak trace ρ ∈ Σ* up to equivalence. For each ρ it tracks, per system, the set of states
/// `{s | ι =ρ=> s}` and whether ρ is a divergence (some prefix reaches a divergent state);
/// both determine the failures with trace ρ, and there are finitely many such tuples.
mod oracle {
    use super::*;

    pub struct System<'a> {
        lts: &'a Lts,
        divergent: Vec<bool>,
    }

    impl<'a> System<'a> {
        pub fn new(lts: &'a Lts) -> Self {
            // s⇑ iff there is a tau path of length n from s (n states: it repeats a state).
            let n = lts.num_states() as usize;
            let mut has_path = vec![true; n]; // tau paths of length 0
            for _ in 0..n {
                has_path = (0..n as u32)
                    .map(|s| lts.tau_successors(s).any(|t| has_path[t as usize]))
                    .collect();
            }
            System {
                lts,
                divergent: has_path,
            }
        }

        fn closure(&self, mut set: BTreeSet<u32>) -> BTreeSet<u32> {
            loop {
                let more: BTreeSet<u32> = set
                    .iter()
                    .flat_map(|&s| self.lts.tau_successors(s))
                    .collect();
                let before = set.len();
                set.extend(more);
                if set.len() == before {
                    return set;
                }
            }
        }

        pub fn initial(&self) -> BTreeSet<u32> {
            self.closure(BTreeSet::from([self.lts.initial()]))
        }

        pub fn after(&self, set: &BTreeSet<u32>, event: &str) -> BTreeSet<u32> {
            let names = self.lts.label_names();
            let direct = set
                .iter()
                .flat_map(|&s| self.lts.successors(s))
                .filter(|&(l, _)| l != 0 && names[l as usize] == event)
                .map(|(_, t)| t)
                .collect();
            self.closure(direct)
        }

        pub fn any_divergent(&self, set: &BTreeSet<u32>) -> bool {
            set.iter().any(|&s| self.divergent[s as usize])
        }

        /// The refusal sets (as bitmasks over `sigma`) of the stable states of `set`:
        /// X is refused by stable s iff X contains no event enabled in s.
        pub fn refusals(&self, set: &BTreeSet<u32>, sigma: &[String]) -> HashSet<u32> {
            let names = self.lts.label_names();
            let mut out = HashSet::new();
            for &s in set {
                if self.lts.successors(s).any(|(l, _)| l == 0) {
                    continue; // not stable
                }
                let enabled: HashSet<&str> = self
                    .lts
                    .successors(s)
                    .map(|(l, _)| names[l as usize].as_str())
                    .collect();
                for x in 0..(1u32 << sigma.len()) {
                    let refuses = (0..sigma.len())
                        .filter(|&i| x & (1 << i) != 0)
                        .all(|i| !enabled.contains(sigma[i].as_str()));
                    if refuses {
                        out.insert(x);
                    }
                }
            }
            out
        }
    }

    /// Does `impl_` refine `spec` in `model`?
    pub fn refines(spec: &Lts, impl_: &Lts, model: Model) -> bool {
        let mut sigma: BTreeSet<String> = BTreeSet::new();
        for l in [spec, impl_] {
            sigma.extend(l.label_names()[1..].iter().cloned());
        }
        let sigma: Vec<String> = sigma.into_iter().collect();
        let all_sets: HashSet<u32> = (0..(1u32 << sigma.len())).collect();
        let (sp, im) = (System::new(spec), System::new(impl_));
        type Key = (BTreeSet<u32>, bool, BTreeSet<u32>, bool);
        let start: Key = {
            let (s, i) = (sp.initial(), im.initial());
            let (sd, id) = (sp.any_divergent(&s), im.any_divergent(&i));
            (s, sd, i, id)
        };
        let mut seen: HashSet<Key> = HashSet::from([start.clone()]);
        let mut todo = VecDeque::from([start]);
        while let Some((s, s_div, i, i_div)) = todo.pop_front() {
            // Weak traces: ρ ∈ weaktraces(impl) ⇒ ρ ∈ weaktraces(spec).
            let trace_ok = i.is_empty() || !s.is_empty();
            let ok = match model {
                Model::Traces => trace_ok,
                Model::Failures => {
                    trace_ok && im.refusals(&i, &sigma).is_subset(&sp.refusals(&s, &sigma))
                }
                Model::FailuresDivergences => {
                    // failures⊥ and divergences with trace ρ.
                    let fail = |sys: &System, set: &BTreeSet<u32>, div: bool| {
                        if div {
                            all_sets.clone()
                        } else {
                            sys.refusals(set, &sigma)
                        }
                    };
                    let div_ok = !i_div || s_div;
                    div_ok && fail(&im, &i, i_div).is_subset(&fail(&sp, &s, s_div))
                }
                other => unimplemented!("{other:?}: see tests/refine_models.rs"),
            };
            if !ok {
                return false;
            }
            for e in &sigma {
                let (s2, i2) = (sp.after(&s, e), im.after(&i, e));
                let key = (
                    s2.clone(),
                    s_div || sp.any_divergent(&s2),
                    i2.clone(),
                    i_div || im.any_divergent(&i2),
                );
                if seen.insert(key.clone()) {
                    todo.push_back(key);
                }
            }
        }
        true
    }
}

const EVENTS: [&str; 5] = ["tau", "a", "b", "c", "tau"];

/// A random LTS: up to `max_states` states, transitions labelled tau (twice as likely) or
/// one of a, b, c; a spec and an impl drawn apart get different label tables.
fn arb_lts(max_states: u32) -> impl Strategy<Value = Lts> {
    (1..=max_states).prop_flat_map(|n| {
        let transition = (0..n, 0..EVENTS.len(), 0..n);
        (
            0..n,
            prop::collection::vec(transition, 0..(3 * n as usize + 2)),
        )
            .prop_map(move |(init, ts)| {
                let triples: Vec<(u32, &str, u32)> =
                    ts.into_iter().map(|(s, e, t)| (s, EVENTS[e], t)).collect();
                lts(init, n, &triples)
            })
    })
}

fn check_against_oracle(spec: &Lts, impl_: &Lts) -> Result<(), TestCaseError> {
    for model in [Model::Traces, Model::Failures, Model::FailuresDivergences] {
        let expected = oracle::refines(spec, impl_, model);
        let got = verdict_all_ways(spec, impl_, model);
        prop_assert_eq!(got, expected, "{:?}", model);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn checker_agrees_with_the_definitions(spec in arb_lts(4), impl_ in arb_lts(5)) {
        check_against_oracle(&spec, &impl_)?;
    }

    #[test]
    fn every_system_refines_itself(l in arb_lts(5)) {
        for model in [Model::Traces, Model::Failures, Model::FailuresDivergences] {
            prop_assert!(verdict_all_ways(&l, &l, model));
        }
    }
}

/// Refinement in each model, on hand-picked pairs, is what the oracle says; this also checks
/// the oracle itself against verdicts known by hand.
#[test]
fn oracle_on_known_pairs() {
    let stop = lts(0, 1, &[]);
    let div = lts(0, 1, &[(0, "tau", 0)]);
    let a_stop = lts(0, 2, &[(0, "a", 1)]);
    let a_or_stop = lts(0, 3, &[(0, "tau", 1), (0, "tau", 2), (1, "a", 2)]);
    use Model::*;
    let cases = [
        (&stop, &div, Traces, true),
        (&stop, &div, Failures, true),
        (&stop, &div, FailuresDivergences, false),
        (&div, &a_stop, FailuresDivergences, true),
        (&div, &a_stop, Failures, false),
        (&a_stop, &stop, Traces, true),
        (&a_stop, &stop, Failures, false),
        (&a_or_stop, &stop, Failures, true),
        (&a_or_stop, &a_stop, Failures, true),
        (&a_stop, &a_or_stop, Failures, false),
        (&stop, &a_stop, Traces, false),
    ];
    for (spec, impl_, model, expected) in cases {
        assert_eq!(oracle::refines(spec, impl_, model), expected, "{model:?}");
        assert_eq!(verdict_all_ways(spec, impl_, model), expected, "{model:?}");
    }
}
