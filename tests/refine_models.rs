//! The revivals and refusal-testing models (`[V=`, `[VD=`, `[R=`, `[RD=`) and ✓ as a signal.
//!
//! - On random small LTS pairs (taus, tau cycles, ✓ to a terminated state, events one side
//!   never mentions), weft's verdict in each of the seven models agrees with an independent
//!   checker that evaluates the models' definitions (module `oracle`), at 1, 2 and 4 threads
//!   (the same result at each), depth first, and without the antichain; and the hierarchy of
//!   the models holds of weft's verdicts.
//! - Hand-made pairs whose verdicts differ between F and V, and between V and R, and pairs that
//!   pin how ✓ is treated, with the verdicts FDR gives (derived from the definitions).
//! - Larger random pairs with wide breadth-first levels: the same result at 1, 2 and 4 threads,
//!   and the verdict of the depth-first and classical searches.
//! - CSPm processes checked on the fly through `weft refines`: the same JSON at 1, 2 and 4
//!   threads.

#[path = "refine_determinism/json.rs"]
mod json;
mod refine_common;
#[allow(dead_code)]
#[path = "refine_determinism/rng.rs"]
mod rng;

use std::collections::{BTreeSet, HashSet, VecDeque};
use weft::threads::Threads;

use proptest::prelude::*;
use weft::lts::Lts;
use weft::refine::replay::replay;
use weft::refine::{check, CheckOptions, CheckResult, Model, Search, Violation};

use refine_common::{lts, run};

const TICK: &str = "✓";

/// The definitions of the seven models, evaluated on explicit LTSs, sharing no code with
/// weft's checker.
///
/// ✓ is a signal (Roscoe, *Understanding Concurrent Systems*; FDR): a state that can perform
/// ✓ is not stable, and it behaves as if it could also move internally to a stable state that
/// offers ✓ alone, which refuses every other event and then terminates. So for a state `p`:
/// - `p` refuses `X` (a set of visible events, ✓ included) iff `p` is stable (no tau, no ✓)
///   and offers nothing of `X`, or `p` can perform ✓ and `✓ ∉ X`;
/// - `p` shows the revival `(X, a)` (`a` not ✓) iff `p` is stable, offers nothing of `X` and
///   offers `a`;
/// - `p` is deadlocked iff it is stable and offers nothing;
/// - a refusal-testing step `(X, a)` leaves `p` for `q` iff `p` refuses `X` (as above) and
///   `p -a-> q`, where a ✓-capable `p` refusing by its ✓ option can only do ✓.
///
/// After a (refusal) trace a system is in the tau-closed set of states the trace reaches. The
/// checker explores every pair of such sets (specification, implementation) reached by the
/// same observations, breadth first, and compares what the two sets show:
/// - traces: every event the implementation set can perform, the specification set can;
/// - failures: every refusal of the implementation set is one of the specification set;
/// - revivals: traces, deadlocks and revivals likewise;
/// - refusal testing: the pairs are reached by steps `(X or no observation, a)`, and every
///   step and every final refusal of the implementation set is one of the specification set;
/// - with divergences: a specification set with a divergent state allows everything (its pair
///   is not explored further); otherwise an implementation set with one is a violation.
mod oracle {
    use super::*;

    pub struct System<'a> {
        lts: &'a Lts,
        divergent: Vec<bool>,
    }

    impl<'a> System<'a> {
        pub fn new(lts: &'a Lts) -> Self {
            // s diverges iff there is a tau path of length n from s (n states: it repeats one).
            let n = lts.num_states() as usize;
            let mut has_path = vec![true; n];
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

        fn name(&self, label: u32) -> &str {
            &self.lts.label_names()[label as usize]
        }

        fn closure(&self, mut set: BTreeSet<u32>) -> BTreeSet<u32> {
            loop {
                let more: Vec<u32> = set
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

        /// The visible events `s` offers (✓ included).
        fn offers(&self, s: u32) -> BTreeSet<&str> {
            self.lts
                .successors(s)
                .filter(|&(l, _)| l != 0)
                .map(|(l, _)| self.name(l))
                .collect()
        }

        fn stable(&self, s: u32) -> bool {
            self.lts
                .successors(s)
                .all(|(l, _)| l != 0 && self.name(l) != TICK)
        }

        fn can_tick(&self, s: u32) -> bool {
            self.offers(s).contains(TICK)
        }

        /// Whether `s` refuses the events of `x`.
        fn refuses(&self, s: u32, x: &BTreeSet<&str>) -> bool {
            (self.stable(s) && self.offers(s).is_disjoint(x))
                || (self.can_tick(s) && !x.contains(TICK))
        }

        /// The states reached from `set` by `event`: from every state, or, with a refusal
        /// `Some(x)` observed first, from the states refusing `x` (a stable one by `event`, a
        /// ✓-capable one by ✓ only).
        pub fn step(
            &self,
            set: &BTreeSet<u32>,
            x: Option<&BTreeSet<&str>>,
            event: &str,
        ) -> BTreeSet<u32> {
            let mut direct = BTreeSet::new();
            for &s in set {
                let allowed = match x {
                    None => true,
                    Some(x) => {
                        (self.stable(s) && self.offers(s).is_disjoint(x))
                            || (event == TICK && self.can_tick(s) && !x.contains(TICK))
                    }
                };
                if !allowed {
                    continue;
                }
                for (l, t) in self.lts.successors(s) {
                    if l != 0 && self.name(l) == event {
                        direct.insert(t);
                    }
                }
            }
            self.closure(direct)
        }

        pub fn any_divergent(&self, set: &BTreeSet<u32>) -> bool {
            set.iter().any(|&s| self.divergent[s as usize])
        }

        /// The refusals of `set`, each a set of events of `sigma`.
        pub fn refusals<'s>(
            &self,
            set: &BTreeSet<u32>,
            sigma: &[&'s str],
        ) -> HashSet<BTreeSet<&'s str>> {
            subsets(sigma)
                .into_iter()
                .filter(|x| set.iter().any(|&s| self.refuses(s, x)))
                .collect()
        }

        /// The revivals `(X, a)` of `set`.
        pub fn revivals<'s>(
            &self,
            set: &BTreeSet<u32>,
            sigma: &[&'s str],
        ) -> HashSet<(BTreeSet<&'s str>, &'s str)> {
            let mut out = HashSet::new();
            for x in subsets(sigma) {
                for &a in sigma {
                    if a == TICK {
                        continue;
                    }
                    let shows = set.iter().any(|&s| {
                        self.stable(s)
                            && self.offers(s).is_disjoint(&x)
                            && self.offers(s).contains(a)
                    });
                    if shows {
                        out.insert((x.clone(), a));
                    }
                }
            }
            out
        }

        pub fn deadlocked(&self, set: &BTreeSet<u32>) -> bool {
            set.iter()
                .any(|&s| self.stable(s) && self.offers(s).is_empty())
        }
    }

    fn subsets<'s>(sigma: &[&'s str]) -> Vec<BTreeSet<&'s str>> {
        (0..1u32 << sigma.len())
            .map(|bits| {
                (0..sigma.len())
                    .filter(|&i| bits & (1 << i) != 0)
                    .map(|i| sigma[i])
                    .collect()
            })
            .collect()
    }

    /// Does `impl_` refine `spec` in `model`?
    pub fn refines(spec: &Lts, impl_: &Lts, model: Model) -> bool {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for l in [spec, impl_] {
            names.extend(l.label_names()[1..].iter().map(String::as_str));
        }
        let sigma: Vec<&str> = names.into_iter().collect();
        let (sp, im) = (System::new(spec), System::new(impl_));
        let divergences = matches!(
            model,
            Model::FailuresDivergences
                | Model::RevivalsDivergences
                | Model::RefusalTestingDivergences
        );
        let refusal_testing = matches!(
            model,
            Model::RefusalTesting | Model::RefusalTestingDivergences
        );
        // The observations before an event: none, or (refusal testing) each refusal.
        let mut befores: Vec<Option<BTreeSet<&str>>> = vec![None];
        if refusal_testing {
            befores.extend(subsets(&sigma).into_iter().map(Some));
        }
        let start = (sp.initial(), im.initial());
        let mut seen: HashSet<(BTreeSet<u32>, BTreeSet<u32>)> = HashSet::from([start.clone()]);
        let mut todo = VecDeque::from([start]);
        while let Some((s, i)) = todo.pop_front() {
            if divergences {
                if sp.any_divergent(&s) {
                    continue;
                }
                if im.any_divergent(&i) {
                    return false;
                }
            }
            let ok = match model {
                Model::Traces => true,
                Model::Failures | Model::FailuresDivergences => {
                    im.refusals(&i, &sigma).is_subset(&sp.refusals(&s, &sigma))
                }
                Model::Revivals | Model::RevivalsDivergences => {
                    (!im.deadlocked(&i) || sp.deadlocked(&s))
                        && im.revivals(&i, &sigma).is_subset(&sp.revivals(&s, &sigma))
                }
                Model::RefusalTesting | Model::RefusalTestingDivergences => {
                    im.refusals(&i, &sigma).is_subset(&sp.refusals(&s, &sigma))
                }
            };
            if !ok {
                return false;
            }
            for before in &befores {
                for &e in &sigma {
                    let i2 = im.step(&i, before.as_ref(), e);
                    if i2.is_empty() {
                        continue;
                    }
                    let s2 = sp.step(&s, before.as_ref(), e);
                    if s2.is_empty() {
                        return false;
                    }
                    if seen.insert((s2.clone(), i2.clone())) {
                        todo.push_back((s2, i2));
                    }
                }
            }
        }
        true
    }

    /// Whether no state reachable in `l` diverges.
    pub fn divergence_free(l: &Lts) -> bool {
        let sys = System::new(l);
        let mut reach = BTreeSet::from([l.initial()]);
        let mut todo = vec![l.initial()];
        while let Some(s) = todo.pop() {
            for (_, t) in l.successors(s) {
                if reach.insert(t) {
                    todo.push(t);
                }
            }
        }
        !sys.any_divergent(&reach)
    }
}

const THREADS: [usize; 3] = [1, 2, 4];

/// `check` breadth first (on the fly) at 1, 2 and 4 threads; asserts the results are equal
/// apart from the time taken, and returns the first.
fn check_at_thread_counts(spec: &Lts, impl_: &Lts, model: Model) -> CheckResult {
    let mut first: Option<CheckResult> = None;
    for threads in THREADS {
        let opts = CheckOptions {
            model,
            search: Search::Bfs,
            no_antichain: false,
            threads: Threads::new(threads).expect("threads"),
        };
        let mut r = check(spec, impl_, &opts)
            .unwrap_or_else(|e| panic!("{model:?} at {threads} threads: {e}"));
        r.stats.seconds = 0.0;
        r.stats.threads = 0;
        match &first {
            None => first = Some(r),
            Some(f) => assert_eq!(&r, f, "{model:?}: {threads} threads differ from 1"),
        }
    }
    first.expect("a thread count")
}

/// weft's verdict in `model`: on the fly at every thread count, and the same verdict depth
/// first and with the classical algorithm (exact pairs), breadth and depth first.
fn verdict(spec: &Lts, impl_: &Lts, model: Model) -> bool {
    let holds = check_at_thread_counts(spec, impl_, model).holds();
    for (search, exact) in [
        (Search::Dfs, false),
        (Search::Bfs, true),
        (Search::Dfs, true),
    ] {
        let other = run(spec, impl_, model, search, exact);
        assert_eq!(
            other.holds(),
            holds,
            "{model:?}: {search:?} (exact {exact}) disagrees with the on-the-fly check"
        );
    }
    holds
}

/// The labels of the random LTSs: tau twice as likely as each event; ✓ goes to the
/// terminated state.
const LABELS: [&str; 6] = ["tau", "a", "b", "c", "tau", TICK];

/// A random LTS: 1 to `max_states` states and one more, Ω, the target of every ✓, with no
/// transitions.
fn arb_lts(max_states: u32) -> impl Strategy<Value = Lts> {
    (1..=max_states).prop_flat_map(|n| {
        let transition = (0..n, 0..LABELS.len(), 0..n);
        (
            0..n,
            prop::collection::vec(transition, 0..(3 * n as usize + 2)),
        )
            .prop_map(move |(init, ts)| {
                let triples: Vec<(u32, &str, u32)> = ts
                    .into_iter()
                    .map(|(s, l, t)| {
                        let label = LABELS[l];
                        (s, label, if label == TICK { n } else { t })
                    })
                    .collect();
                lts(init, n + 1, &triples)
            })
    })
}

/// The hierarchy of the models, on weft's verdicts `v` (by model): F ⇒ T; R ⇒ V ⇒ F;
/// RD ⇒ VD ⇒ FD; and for a divergence-free specification FD ⇒ F, VD ⇒ V, RD ⇒ R (a
/// divergent specification allows everything after its divergence in the divergence models
/// only).
fn hierarchy(v: &dyn Fn(Model) -> bool, spec_divergence_free: bool) -> Result<(), TestCaseError> {
    use Model::*;
    let mut implications = vec![
        (Failures, Traces),
        (RefusalTesting, Revivals),
        (Revivals, Failures),
        (RefusalTestingDivergences, RevivalsDivergences),
        (RevivalsDivergences, FailuresDivergences),
    ];
    if spec_divergence_free {
        implications.extend([
            (FailuresDivergences, Failures),
            (RevivalsDivergences, Revivals),
            (RefusalTestingDivergences, RefusalTesting),
        ]);
    }
    for (stronger, weaker) in implications {
        prop_assert!(
            !v(stronger) || v(weaker),
            "{:?} holds but {:?} does not",
            stronger,
            weaker
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn models_agree_with_the_definitions(spec in arb_lts(4), impl_ in arb_lts(5)) {
        let mut verdicts = Vec::new();
        for model in Model::ALL {
            let expected = oracle::refines(&spec, &impl_, model);
            let got = verdict(&spec, &impl_, model);
            prop_assert_eq!(got, expected, "{:?}", model);
            verdicts.push((model, got));
        }
        let v = |m: Model| verdicts.iter().find(|(x, _)| *x == m).expect("every model").1;
        hierarchy(&v, oracle::divergence_free(&spec))?;
    }

    #[test]
    fn every_system_refines_itself(l in arb_lts(5)) {
        for model in Model::ALL {
            prop_assert!(check_at_thread_counts(&l, &l, model).holds(), "{:?}", model);
        }
    }
}

/// A raw LTS: states `0..n` (initial 0), `(from, label index into LABELS, to)`; ✓ goes to
/// Ω = `n`, whatever the target says.
type Raw = (u32, Vec<(u32, usize, u32)>);

fn build((n, ts): &Raw) -> Lts {
    let triples: Vec<(u32, &str, u32)> = ts
        .iter()
        .map(|&(s, l, t)| (s, LABELS[l], if LABELS[l] == TICK { *n } else { t }))
        .collect();
    lts(0, n + 1, &triples)
}

/// A random LTS of *choice* states (two or three taus) and *ready* states (stable, offering a
/// random subset of a, b, c, each to a random state, and sometimes ✓ instead): the shape in
/// which the models differ.
fn arb_choices(max_states: u32) -> impl Strategy<Value = Raw> {
    (2..=max_states)
        .prop_flat_map(|n| {
            let state = (
                any::<bool>(),
                prop::collection::vec(0..n, 2..=3),
                0..8usize,
                prop::collection::vec(0..n, 3),
                0..4u32,
            );
            (Just(n), prop::collection::vec(state, n as usize))
        })
        .prop_map(|(n, states)| {
            let mut ts = Vec::new();
            for (s, (choice, branches, offered, targets, tick)) in states.into_iter().enumerate() {
                let s = s as u32;
                if choice {
                    ts.extend(branches.into_iter().map(|b| (s, 0, b)));
                } else if offered == 0 && tick == 0 {
                    ts.push((s, 5, 0));
                } else {
                    for (e, &target) in targets.iter().enumerate() {
                        if offered & (1 << e) != 0 {
                            ts.push((s, e + 1, target));
                        }
                    }
                }
            }
            (n, ts)
        })
}

/// `spec` changed where the models tell processes apart: two ready branches `r1`, `r2` of a
/// choice state (picked by `pick`) either swap their targets for an event both offer (the
/// same traces and acceptances after each trace, so often the same revivals, but other
/// refusal traces), or the choice gets a new branch offering `r1`'s events and one of `r2`'s
/// (often the same failures, but a new revival). Unchanged when no such branches exist.
fn targeted_mutation(spec: &Raw, swap: bool, pick: (usize, usize)) -> Raw {
    let (n, ts) = spec;
    let is_ready = |s: u32| !ts.iter().any(|&(x, l, _)| x == s && l == 0);
    let offers = |s: u32| -> Vec<(usize, u32)> {
        ts.iter()
            .filter(|&&(x, l, _)| x == s && l != 0)
            .map(|&(_, l, t)| (l, t))
            .collect()
    };
    let mut branch_pairs = Vec::new();
    for c in 0..*n {
        let ready: Vec<u32> = ts
            .iter()
            .filter(|&&(x, l, t)| x == c && l == 0 && is_ready(t))
            .map(|&(_, _, t)| t)
            .collect();
        for &r1 in &ready {
            for &r2 in &ready {
                if r1 != r2 {
                    branch_pairs.push((c, r1, r2));
                }
            }
        }
    }
    let mut out = spec.clone();
    if branch_pairs.is_empty() {
        return out;
    }
    let (c, r1, r2) = branch_pairs[pick.0 % branch_pairs.len()];
    let (o1, o2) = (offers(r1), offers(r2));
    if swap {
        let shared: Vec<(usize, u32, u32)> = o1
            .iter()
            .filter_map(|&(l, t1)| o2.iter().find(|q| q.0 == l).map(|&(_, t2)| (l, t1, t2)))
            .collect();
        if shared.is_empty() {
            return out;
        }
        let (e, t1, t2) = shared[pick.1 % shared.len()];
        for tr in out.1.iter_mut() {
            if tr.1 == e && tr.0 == r1 {
                tr.2 = t2;
            } else if tr.1 == e && tr.0 == r2 {
                tr.2 = t1;
            }
        }
    } else {
        let extra: Vec<(usize, u32)> = o2
            .into_iter()
            .filter(|q| !o1.iter().any(|p| p.0 == q.0))
            .collect();
        if extra.is_empty() {
            return out;
        }
        let new = out.0;
        out.0 += 1;
        out.1.extend(o1.iter().map(|&(l, t)| (new, l, t)));
        let (l, t) = extra[pick.1 % extra.len()];
        out.1.push((new, l, t));
        out.1.push((c, 0, new));
    }
    out
}

/// Pairs (specification, its targeted mutation) from a fixed seed: weft agrees with the
/// definitions in every model on each, and among them are pairs that the failures model
/// cannot tell apart and the revivals model can, and pairs that the revivals model cannot
/// tell apart and the refusal-testing model can.
#[test]
fn close_pairs_agree_with_the_definitions() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let pairs = (arb_choices(6), any::<bool>(), any::<(usize, usize)>());
    let (mut f_not_v, mut v_not_r, mut failing) = (0, 0, 0);
    for case in 0..1500 {
        let (spec, swap, pick) = pairs.new_tree(&mut runner).expect("a case").current();
        let implementation = targeted_mutation(&spec, swap, pick);
        let (s, i) = (build(&spec), build(&implementation));
        let mut verdicts = Vec::new();
        for model in Model::ALL {
            let expected = oracle::refines(&s, &i, model);
            let got = verdict(&s, &i, model);
            assert_eq!(
                got, expected,
                "case {case}, {model:?}:\n  spec {spec:?}\n  impl {implementation:?}"
            );
            verdicts.push(got);
        }
        let v = |m: Model| verdicts[Model::ALL.iter().position(|&x| x == m).expect("a model")];
        hierarchy(&v, oracle::divergence_free(&s)).expect("the hierarchy");
        f_not_v += usize::from(v(Model::Failures) && !v(Model::Revivals));
        v_not_r += usize::from(v(Model::Revivals) && !v(Model::RefusalTesting));
        failing += usize::from(!v(Model::RefusalTestingDivergences));
    }
    eprintln!("close pairs: {failing} fail in RD, {f_not_v} F but not V, {v_not_r} V but not R");
    assert!(
        f_not_v >= 5 && v_not_r >= 3,
        "too few pairs that tell the models apart"
    );
}

/// A permissive specification with two modes over a, b, c: in each, a tau to a stable state
/// offering one of {a}, {b}, {a, b}, {b, c}, {a, b, c}; every event leads back to mode X,
/// except a from X's {a, b} state and c from Y's {b, c} state, which lead to mode Y. Refusal
/// testing then follows smaller sets than the revivals model does.
fn two_mode_spec() -> Lts {
    const OFFERS: [&[&str]; 5] = [&["a"], &["b"], &["a", "b"], &["b", "c"], &["a", "b", "c"]];
    let mut ts: Vec<(u32, &str, u32)> = Vec::new();
    let mut next = 2;
    for (mode, to_y) in [(0, ("a", 2usize)), (1, ("c", 3usize))] {
        for (k, offered) in OFFERS.iter().enumerate() {
            let ready = next;
            next += 1;
            ts.push((mode, "tau", ready));
            for &e in offered.iter() {
                let target = if (e, k) == to_y { 1 } else { 0 };
                ts.push((ready, e, target));
            }
        }
    }
    lts(0, next, &ts)
}

/// A wide layered implementation: `levels` levels of `width` states, each unstable (a tau and
/// up to two events onward) or stable with an acceptance the specification allows; from level
/// 6 on, rarely, a stable state offering {c}, {a, c} or nothing, or a tau self-loop. The last
/// level leads back to the first.
fn wide_impl(rng: &mut rng::Rng, levels: u32, width: u32) -> Lts {
    const GOOD: [&[&str]; 4] = [&["a"], &["b"], &["a", "b"], &["a", "b", "c"]];
    const BAD: [&[&str]; 3] = [&["c"], &["a", "c"], &[]];
    const EVENTS: [&str; 3] = ["a", "b", "c"];
    let mut ts: Vec<(u32, &str, u32)> = Vec::new();
    for level in 0..levels {
        let next_level = (level + 1) % levels;
        for k in 0..width {
            let s = level * width + k;
            let onward = |rng: &mut rng::Rng| next_level * width + rng.below(width as usize) as u32;
            if level >= 6 && rng.below(1000) < 2 {
                if rng.chance(25) {
                    ts.push((s, "tau", s));
                    continue;
                }
                let offered = BAD[rng.below(BAD.len())];
                for &e in offered {
                    ts.push((s, e, onward(rng)));
                }
                continue;
            }
            if rng.chance(40) {
                ts.push((s, "tau", onward(rng)));
                for _ in 0..rng.below(3) {
                    let e = EVENTS[rng.below(3)];
                    ts.push((s, e, onward(rng)));
                }
            } else {
                let offered = GOOD[rng.below(GOOD.len())];
                for &e in offered {
                    ts.push((s, e, onward(rng)));
                }
            }
        }
    }
    lts(0, levels * width, &ts)
}

/// Wide breadth-first levels (hundreds of pairs, shared by the workers): the same result at
/// 1, 2 and 4 threads in the revivals and refusal-testing models, and the verdict of the
/// depth-first and classical searches.
#[test]
fn wide_pairs_give_one_answer_at_every_thread_count() {
    let spec = two_mode_spec();
    let mut rng = rng::Rng::new(0x5EED_0013);
    let (mut failing, mut deepest, mut widest) = (0, 0, 0);
    for case in 0..12 {
        let implementation = wide_impl(&mut rng, 12, 300);
        for model in [
            Model::Failures,
            Model::Revivals,
            Model::RevivalsDivergences,
            Model::RefusalTesting,
            Model::RefusalTestingDivergences,
        ] {
            let result = check_at_thread_counts(&spec, &implementation, model);
            widest = widest.max(result.stats.max_working);
            for (search, exact) in [(Search::Dfs, false), (Search::Bfs, true)] {
                let other = run(&spec, &implementation, model, search, exact);
                assert_eq!(
                    other.holds(),
                    result.holds(),
                    "case {case}, {model:?}, {search:?}"
                );
                if let (true, Some(a), Some(b)) =
                    (exact, &result.counterexample, &other.counterexample)
                {
                    assert_eq!(
                        a.steps, b.steps,
                        "case {case}, {model:?}: not a shortest one"
                    );
                }
            }
            if let Some(cex) = &result.counterexample {
                failing += 1;
                deepest = deepest.max(cex.steps);
            }
        }
    }
    eprintln!(
        "wide pairs: {failing} failing checks, the deepest at step {deepest}, the widest level \
         {widest} pairs"
    );
    assert!(
        failing > 0 && deepest >= 5,
        "the violations are too few or too shallow"
    );
    assert!(
        widest >= 200,
        "no level wide enough to be shared by the workers"
    );
}

fn counterexample(spec: &Lts, impl_: &Lts, model: Model) -> weft::refine::Counterexample {
    check_at_thread_counts(spec, impl_, model)
        .counterexample
        .unwrap_or_else(|| panic!("{model:?}: expected a counterexample"))
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `Q = (a -> STOP [] b -> STOP) |~| c -> STOP` and `P = Q |~| (a -> STOP [] c -> STOP)`.
///
/// Their stable states after `<>` accept {a, b} and {c} (Q), and also {a, c} (P). The failures
/// are the same: {a, c} is a superset of {c}, so it adds no refusal. The revival
/// `(<>, {b}, a)` (refuse b, then do a) is P's and not Q's: Q's only stable state offering a
/// also offers b. FDR: `Q [F= P` and `Q [FD= P` pass, `Q [V= P`, `Q [VD= P`, `Q [R= P` and
/// `Q [RD= P` fail; `P [X= Q` passes in every model (Q's branches are P's).
#[test]
fn failures_and_revivals_differ() {
    let q = lts(
        0,
        4,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 3),
            (1, "b", 3),
            (2, "c", 3),
        ],
    );
    let p = lts(
        0,
        5,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (0, "tau", 4),
            (1, "a", 3),
            (1, "b", 3),
            (2, "c", 3),
            (4, "a", 3),
            (4, "c", 3),
        ],
    );
    for model in Model::ALL {
        let fails = matches!(
            model,
            Model::Revivals
                | Model::RevivalsDivergences
                | Model::RefusalTesting
                | Model::RefusalTestingDivergences
        );
        assert_eq!(verdict(&q, &p, model), !fails, "Q [{}= P", model.letters());
        assert_eq!(
            oracle::refines(&q, &p, model),
            !fails,
            "oracle: Q [{}= P",
            model.letters()
        );
        assert!(verdict(&p, &q, model), "P [{}= Q", model.letters());
    }
    let cex = counterexample(&q, &p, Model::Revivals);
    assert!(cex.trace.is_empty());
    assert_eq!(
        cex.violation,
        Violation::Revival {
            accepted: names(&["a", "c"]),
            event: "a".into(),
            refused: names(&["b"]),
            spec_acceptances: vec![names(&["a", "b"])],
        }
    );
    assert!(cex.acceptances.is_empty());
    assert_eq!(cex.steps, 1);
}

/// `S = (a -> STOP [] b -> STOP) |~| a -> c -> STOP` and
/// `I = (a -> c -> STOP [] b -> STOP) |~| a -> STOP`.
///
/// After every trace both have the same stable acceptances (after `<>`: {a, b} and {a};
/// after `<a>`: {} and {c}), so the same traces, failures, deadlocks and revivals. Refusal
/// testing tells them apart: `I` can refuse b, then do a, then refuse c (its {a} branch
/// continues with STOP); after refusing b and doing a, `S` is in `c -> STOP` and cannot refuse
/// c. Symmetrically `S` can refuse b, do a, then do c, which `I` cannot. FDR: `S [V= I` and
/// `I [V= S` pass (F, FD, VD too); `S [R= I`, `I [R= S` (and RD) fail.
#[test]
fn revivals_and_refusal_testing_differ() {
    let s = lts(
        0,
        6,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 3),
            (1, "b", 3),
            (2, "a", 4),
            (4, "c", 5),
        ],
    );
    let i = lts(
        0,
        6,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 4),
            (1, "b", 3),
            (2, "a", 3),
            (4, "c", 5),
        ],
    );
    for model in Model::ALL {
        let fails = matches!(
            model,
            Model::RefusalTesting | Model::RefusalTestingDivergences
        );
        for (spec, imp, what) in [(&s, &i, "S [X= I"), (&i, &s, "I [X= S")] {
            assert_eq!(verdict(spec, imp, model), !fails, "{what} in {model:?}");
            assert_eq!(
                oracle::refines(spec, imp, model),
                !fails,
                "oracle: {what} in {model:?}"
            );
        }
    }
    // I refuses everything but a, does a, then refuses c.
    let cex = counterexample(&s, &i, Model::RefusalTesting);
    assert_eq!(cex.trace, names(&["a"]));
    assert_eq!(cex.acceptances, vec![Some(names(&["a"]))]);
    assert_eq!(
        cex.violation,
        Violation::Refusal {
            refused: names(&["c"]),
            spec_acceptances: vec![names(&["c"])],
        }
    );
    // S refuses everything but a, does a, then does c.
    let cex = counterexample(&i, &s, Model::RefusalTestingDivergences);
    assert_eq!(cex.trace, names(&["a"]));
    assert_eq!(cex.acceptances, vec![Some(names(&["a"]))]);
    assert_eq!(cex.violation, Violation::Trace { event: "c".into() });
}

/// ✓ is a signal: a process that can terminate can refuse every other event (Roscoe's axiom
/// `s^<✓> ∈ traces(P) ⇒ (s, Σ) ∈ failures(P)`), and `P [] SKIP = (P [] SKIP) |~| SKIP`.
///
/// - `a -> STOP [] SKIP [X= SKIP` passes in every model: SKIP's only observations are the
///   trace <✓> and the refusal of every event but ✓, which the specification shares.
/// - `a -> STOP [] SKIP [T= a -> STOP |~| SKIP` passes, and fails in every other model: the
///   branch `a -> STOP` refuses ✓, which the specification cannot refuse.
/// - `SKIP [T= a -> STOP [] SKIP` fails (the trace <a>), `SKIP [X= STOP` passes in T only
///   (STOP deadlocks; SKIP does not), `STOP [T= SKIP` fails (the trace <✓>).
#[test]
fn termination_is_a_signal() {
    // a -> STOP [] SKIP: 0 -a-> 1, 0 -✓-> 2.
    let choice = lts(0, 3, &[(0, "a", 1), (0, TICK, 2)]);
    let skip = lts(0, 2, &[(0, TICK, 1)]);
    let stop = lts(0, 1, &[]);
    // a -> STOP |~| SKIP.
    let internal = lts(
        0,
        5,
        &[(0, "tau", 1), (0, "tau", 2), (1, "a", 3), (2, TICK, 4)],
    );
    for model in Model::ALL {
        let traces = model == Model::Traces;
        let cases: [(&Lts, &Lts, bool, &str); 5] = [
            (&choice, &skip, true, "a -> STOP [] SKIP [X= SKIP"),
            (
                &choice,
                &internal,
                traces,
                "a -> STOP [] SKIP [X= a -> STOP |~| SKIP",
            ),
            (&skip, &choice, false, "SKIP [X= a -> STOP [] SKIP"),
            (&skip, &stop, traces, "SKIP [X= STOP"),
            (&stop, &skip, false, "STOP [X= SKIP"),
        ];
        for (spec, imp, holds, what) in cases {
            assert_eq!(verdict(spec, imp, model), holds, "{what} in {model:?}");
            assert_eq!(
                oracle::refines(spec, imp, model),
                holds,
                "oracle: {what} in {model:?}"
            );
        }
    }
    // The refusal of ✓ is what the specification cannot match.
    let cex = counterexample(&choice, &internal, Model::Revivals);
    assert_eq!(
        cex.violation,
        Violation::Refusal {
            refused: names(&[TICK]),
            spec_acceptances: vec![],
        }
    );
}

/// Divergence in the revivals and refusal-testing divergence models: a divergent
/// specification allows everything after it, a divergent implementation fails against a
/// specification that does not diverge.
#[test]
fn divergence_models() {
    // DIV = tau-loop; a -> DIV; a -> STOP.
    let div = lts(0, 1, &[(0, "tau", 0)]);
    let a_div = lts(0, 2, &[(0, "a", 1), (1, "tau", 1)]);
    let a_stop = lts(0, 2, &[(0, "a", 1)]);
    let b_then_c = lts(0, 3, &[(0, "b", 1), (1, "c", 2)]);
    for model in [Model::RevivalsDivergences, Model::RefusalTestingDivergences] {
        assert!(verdict(&div, &b_then_c, model), "DIV refined by anything");
        assert!(verdict(&a_div, &a_stop, model));
        assert!(!verdict(&a_stop, &a_div, model));
        let cex = counterexample(&a_stop, &a_div, model);
        assert_eq!(cex.violation, Violation::Divergence);
        assert_eq!(cex.trace, names(&["a"]));
    }
    for model in [Model::Revivals, Model::RefusalTesting] {
        assert!(!verdict(&div, &b_then_c, model), "DIV has no trace <b>");
        assert!(
            verdict(&a_stop, &a_div, model),
            "divergence is not observed"
        );
    }
}

/// The model names: FDR's letters and the long names, as `weft refines --model` and CSPm
/// take them.
#[test]
fn model_names() {
    for model in Model::ALL {
        assert_eq!(Model::from_name(model.letters()), Some(model));
        assert_eq!(Model::from_name(model.name()), Some(model));
        assert_eq!(
            Model::from_name(&model.letters().to_lowercase()),
            Some(model)
        );
        assert_eq!(serde_json::to_value(model).expect("JSON"), model.name());
    }
    assert_eq!(
        Model::from_name("Refusal Testing"),
        Some(Model::RefusalTesting)
    );
    assert_eq!(
        Model::from_name("revivals_divergences"),
        Some(Model::RevivalsDivergences)
    );
    assert_eq!(Model::from_name("VX"), None);
    assert_eq!(Model::from_name(""), None);
}

/// CSPm processes checked on the fly by `weft refines`: the same JSON at 1, 2 and 4 threads,
/// with the verdicts of the pairs above.
#[test]
fn csp_processes_on_the_fly() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("refine_models");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let script = dir.join("models.csp");
    std::fs::write(
        &script,
        "channel a, b, c\n\
         Q = (a -> STOP [] b -> STOP) |~| c -> STOP\n\
         P = Q |~| (a -> STOP [] c -> STOP)\n\
         S = (a -> STOP [] b -> STOP) |~| a -> c -> STOP\n\
         I = (a -> c -> STOP [] b -> STOP) |~| a -> STOP\n\
         CHOICE = a -> STOP [] SKIP\n\
         INTERNAL = a -> STOP |~| SKIP\n\
         TERMINATE = SKIP\n",
    )
    .expect("write the script");
    let at = |p: &str| format!("{}:{p}", script.display());
    let cases: [(&str, &str, &str, bool); 9] = [
        ("Q", "P", "F", true),
        ("Q", "P", "V", false),
        ("Q", "P", "revivals-divergences", false),
        ("S", "I", "VD", true),
        ("S", "I", "R", false),
        ("I", "S", "RD", false),
        ("CHOICE", "TERMINATE", "R", true),
        ("CHOICE", "INTERNAL", "V", false),
        ("CHOICE", "INTERNAL", "T", true),
    ];
    for (spec, imp, model, holds) in cases {
        let (spec, imp) = (at(spec), at(imp));
        let runs =
            json::run_at_thread_counts(&["refines", &spec, &imp, "--model", model], &THREADS, &dir);
        let (code, value) = runs.assert_identical(&dir);
        assert_eq!(
            code,
            if holds { 0 } else { 1 },
            "{spec} [{model}= {imp}: {value}"
        );
        assert_eq!(value["holds"].as_bool(), Some(holds), "{value}");
    }
}

/// The replay rejects revival and refusal-testing counterexamples that do not witness
/// non-refinement, so a wrong verdict cannot be printed.
#[test]
fn replay_rejects_altered_counterexamples() {
    // The pairs of `revivals_and_refusal_testing_differ` and `failures_and_revivals_differ`.
    let s = lts(
        0,
        6,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 3),
            (1, "b", 3),
            (2, "a", 4),
            (4, "c", 5),
        ],
    );
    let i = lts(
        0,
        6,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 4),
            (1, "b", 3),
            (2, "a", 3),
            (4, "c", 5),
        ],
    );
    let cex = counterexample(&s, &i, Model::RefusalTesting);
    assert!(replay(&s, &i, Model::RefusalTesting, &cex).is_ok());
    let altered = |f: &dyn Fn(&mut weft::refine::Counterexample)| {
        let mut c = cex.clone();
        f(&mut c);
        c
    };
    for (what, c, model) in [
        // Without the refusal before a, the specification can refuse c after a.
        (
            "no refusal observed",
            altered(&|c| c.acceptances = vec![None]),
            Model::RefusalTesting,
        ),
        // The implementation's state before a does not offer exactly {a, b}.
        (
            "another acceptance",
            altered(&|c| c.acceptances = vec![Some(names(&["a", "b"]))]),
            Model::RefusalTesting,
        ),
        (
            "one observation missing",
            altered(&|c| c.acceptances = vec![]),
            Model::RefusalTesting,
        ),
        (
            "refusals in the revivals model",
            cex.clone(),
            Model::Revivals,
        ),
    ] {
        assert!(replay(&s, &i, model, &c).is_err(), "{what}: {c:?}");
    }

    let q = lts(
        0,
        4,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (1, "a", 3),
            (1, "b", 3),
            (2, "c", 3),
        ],
    );
    let p = lts(
        0,
        5,
        &[
            (0, "tau", 1),
            (0, "tau", 2),
            (0, "tau", 4),
            (1, "a", 3),
            (1, "b", 3),
            (2, "c", 3),
            (4, "a", 3),
            (4, "c", 3),
        ],
    );
    let cex = counterexample(&q, &p, Model::Revivals);
    assert!(replay(&q, &p, Model::Revivals, &cex).is_ok());
    let revival = |accepted: &[&str], event: &str, impl_state: u32| weft::refine::Counterexample {
        impl_state,
        violation: Violation::Revival {
            accepted: names(accepted),
            event: event.into(),
            refused: names(&["b"]),
            spec_acceptances: vec![names(&["a", "b"])],
        },
        ..cex.clone()
    };
    for (what, c, model) in [
        (
            "not the state's acceptance",
            revival(&["a"], "a", 4),
            Model::Revivals,
        ),
        // Q's {c} state refuses what {a, c} refuses and then does c.
        (
            "a revival the spec has",
            revival(&["a", "c"], "c", 4),
            Model::Revivals,
        ),
        // State 1 ({a, b}) is no violation: Q has it.
        (
            "the spec's own state",
            revival(&["a", "b"], "a", 1),
            Model::Revivals,
        ),
        (
            "a revival in the failures model",
            cex.clone(),
            Model::Failures,
        ),
    ] {
        assert!(replay(&q, &p, model, &c).is_err(), "{what}: {c:?}");
    }
}
