//! The `has trace` and determinism searches shared by the processes of a distributed run
//! (`search_trace`, `search_determinism` with [`SystemOptions::distributed`]) on random small
//! LTSs, run by two processes of one worker each (two clusters' processes in this test
//! process, on one pair of localhost ports reused by every search), against slow searches
//! written here from the definitions (over the brute-force trace sets of
//! `common::failures_oracle`): the same verdict, a shortest counterexample, and the
//! counterexample replayed on the LTS; and the same answer, counts and state as one process.
//! A determinism search whose normal-form node outgrows the first key's room runs again with
//! wider keys, and gives the one-process answer.

mod common;

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::failures_oracle::{arb_process_lts, Oracle, TICK};
use proptest::prelude::*;
use weft::dist::pairs::ClusterPairSearch;
use weft::dist::{Cluster, Connector};
use weft::explore::keyed::{KeyedProduct, PairOptions, PairSearch, SharedSearchError};
use weft::explore::{Engine, StopSignal};
use weft::lts::Lts;
use weft::refine::properties::{HasTrace, PropertyViolation};
use weft::refine::{
    search_determinism, search_trace, Model, PropertySearch, SharedPairSearch, SharedSearches,
    SystemOptions,
};
use weft::threads::Threads;
use weft::ts::{Label, TAU};

/// A shared search that records the key width of every product it is asked to search (the
/// determinism search's keys widen when it restarts).
struct Recording {
    inner: ClusterPairSearch,
    widths: Mutex<Vec<usize>>,
}

impl SharedPairSearch for Recording {
    fn search(
        &self,
        product: &dyn KeyedProduct,
        opts: &PairOptions,
        stop: &StopSignal,
    ) -> Result<PairSearch, SharedSearchError> {
        self.widths.lock().unwrap().push(product.key_width());
        self.inner.search(product, opts, stop)
    }
}

/// The two processes' searches, each connecting anew (within 30 s) to the other at one pair
/// of free localhost ports, made once for the whole test process.
fn two_processes() -> &'static [Arc<Recording>; 2] {
    static PROCESSES: OnceLock<[Arc<Recording>; 2]> = OnceLock::new();
    PROCESSES.get_or_init(|| {
        let listeners: Vec<_> = (0..2)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let addresses: Vec<String> = listeners
            .iter()
            .map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port()))
            .collect();
        let hosts = std::env::temp_dir().join(format!("weft-shared-{}", std::process::id()));
        std::fs::write(&hosts, addresses.join("\n")).unwrap();
        drop(listeners);
        [0, 1].map(|process| {
            let cluster = Cluster::from_hostfile(1, 2, process, &hosts).unwrap();
            let connect: Connector =
                Arc::new(move || cluster.connect_within(Duration::from_secs(30)));
            Arc::new(Recording {
                inner: ClusterPairSearch::new(connect),
                widths: Mutex::new(Vec::new()),
            })
        })
    })
}

/// Runs `search` in both processes at once (each with its own shared searches): it returns
/// its answer as text, and its result. Both must answer alike: returns process 0's answer
/// and result, and the key widths its searches used.
fn in_two_processes<R: Send>(
    search: impl Fn(&SystemOptions) -> (String, R) + Sync,
) -> ((String, R), Vec<usize>) {
    // One test at a time uses the pair of processes (they must make the same searches in the
    // same order).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let processes = two_processes();
    for p in processes {
        p.widths.lock().unwrap().clear();
    }
    let search = &search;
    let [first, second] = std::thread::scope(|scope| {
        processes
            .clone()
            .map(|p| {
                scope.spawn(move || {
                    let opts = SystemOptions {
                        distributed: Some(p as SharedSearches),
                        ..SystemOptions::default()
                    };
                    search(&opts)
                })
            })
            .map(|h| h.join().expect("a process's search panicked"))
    });
    assert_eq!(first.0, second.0, "the two processes' answers");
    let widths = processes[0].widths.lock().unwrap().clone();
    (first, widths)
}

fn one_thread() -> Engine {
    Engine::new(Threads::new(1).expect("threads")).expect("engine")
}

/// The length of a shortest trace after which `lts` is nondeterministic (an event both
/// possible and refused, or in `fd` a divergence), by a breadth-first search over the sets of
/// states the traces reach (a trace's future depends on its set only); `None` if none is.
fn shortest_nondeterminism(oracle: &Oracle, fd: bool) -> Option<usize> {
    let start = oracle.after(&[]);
    let mut seen: HashSet<BTreeSet<u32>> = HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([(Vec::<String>::new(), start)]);
    while let Some((trace, set)) = queue.pop_front() {
        if fd && set.iter().any(|&s| oracle.is_divergent(s)) {
            return Some(trace.len());
        }
        for a in &oracle.sigma {
            let next = oracle.step(&set, a);
            if next.is_empty() {
                continue;
            }
            if oracle.is_failure(&trace, &BTreeSet::from([a.clone()])) {
                return Some(trace.len());
            }
            if seen.insert(next.clone()) {
                let mut longer = trace.clone();
                longer.push(a.clone());
                queue.push_back((longer, next));
            }
        }
    }
    None
}

/// The fewest transitions (taus included) on a path of `lts` that performs `wanted` whole, or
/// in `fd` reaches a divergence after a prefix of it; else, the fewest to a state after the
/// longest prefix it performs (`Err`): a breadth-first search over (state, events performed).
fn fewest_steps_for_trace(
    lts: &Lts,
    oracle: &Oracle,
    wanted: &[String],
    fd: bool,
) -> Result<usize, usize> {
    let mut depth = std::collections::HashMap::from([((lts.initial(), 0usize), 0usize)]);
    let mut queue = VecDeque::from([(lts.initial(), 0usize)]);
    // The deepest prefix met, and the fewest steps to it (breadth first: the first met).
    let mut deepest = (0usize, 0usize);
    while let Some((s, done)) = queue.pop_front() {
        let d = depth[&(s, done)];
        if done == wanted.len() || (fd && oracle.is_divergent(s)) {
            return Ok(d);
        }
        if done > deepest.0 {
            deepest = (done, d);
        }
        for (l, t) in lts.successors(s) {
            let next = if l == TAU {
                (t, done)
            } else if lts.label_names()[l as usize] == wanted[done] {
                (t, done + 1)
            } else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(e) = depth.entry(next) {
                e.insert(d + 1);
                queue.push_back(next);
            }
        }
    }
    Err(deepest.1)
}

/// What a determinism search answers, compared between runs.
fn determinism_answer(search: &PropertySearch<u32>) -> String {
    format!(
        "{:?} state {:?} performer {:?}, {} pairs, {} levels",
        search.counterexample, search.state, search.performer, search.states, search.levels
    )
}

/// Checks the shared determinism search of `lts` in `model` against one process and the
/// slow search; returns the key widths of the shared searches.
fn check_determinism(lts: &Lts, model: Model) -> Result<Vec<usize>, TestCaseError> {
    let oracle = Oracle::new(lts);
    let fd = model == Model::FailuresDivergences;
    let single = search_determinism(
        &one_thread(),
        lts,
        model,
        &SystemOptions::default(),
        &StopSignal::new(),
    )
    .expect("one process");
    let (shared, widths) = in_two_processes(|opts| {
        let got = search_determinism(&one_thread(), lts, model, opts, &StopSignal::new())
            .expect("two processes");
        (determinism_answer(&got), got)
    });
    let got = shared.1;
    prop_assert!(got.shared, "the search was shared");
    prop_assert_eq!(&shared.0, &determinism_answer(&single), "{:?}", model);
    let expected = shortest_nondeterminism(&oracle, fd);
    match (&expected, &got.counterexample) {
        (None, None) => {}
        (Some(length), Some(cex)) => {
            prop_assert_eq!(cex.trace.len(), *length, "{:?}: a shortest trace", model);
            prop_assert_eq!(cex.steps, cex.trace.len());
            // Replayed: the state named is reached by the trace, and diverges or refuses an
            // event that the trace can go on with.
            let after = oracle.after(&cex.trace);
            let state = got.state.expect("a state");
            prop_assert!(after.contains(&state));
            match &cex.violation {
                PropertyViolation::Divergence => {
                    prop_assert!(fd);
                    prop_assert!(oracle.is_divergent(state));
                }
                PropertyViolation::Nondeterminism { event, .. } => {
                    prop_assert!(oracle.refuses(state, event));
                    let performing = got.performer.expect("a performing state");
                    prop_assert!(after.contains(&performing));
                    prop_assert!(oracle.offers(performing).contains(event));
                    let mut longer = cex.trace.clone();
                    longer.push(event.clone());
                    prop_assert!(!oracle.after(&longer).is_empty());
                }
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
        _ => prop_assert!(
            false,
            "{:?}: the slow search says {:?}, the shared one {:?}",
            model,
            expected,
            got.counterexample
        ),
    }
    Ok(widths)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn shared_determinism_matches_the_slow_search_and_one_process(lts in arb_process_lts(6)) {
        for model in [Model::Failures, Model::FailuresDivergences] {
            check_determinism(&lts, model)?;
        }
    }

    #[test]
    fn shared_has_trace_matches_the_slow_search_and_one_process(
        lts in arb_process_lts(6),
        wanted in proptest::collection::vec(
            prop_oneof![3 => Just("a"), 3 => Just("b"), 1 => Just(TICK), 1 => Just("c")],
            0..5,
        ),
    ) {
        let oracle = Oracle::new(&lts);
        let wanted: Vec<String> = wanted.into_iter().map(String::from).collect();
        for model in [Model::Traces, Model::Failures, Model::FailuresDivergences] {
            let fd = model == Model::FailuresDivergences;
            let single = search_trace(
                &one_thread(), &lts, &wanted, model, &SystemOptions::default(), &StopSignal::new(),
            )
            .expect("one process");
            let ((answer, got), _) = in_two_processes(|opts| {
                let got = search_trace(&one_thread(), &lts, &wanted, model, opts, &StopSignal::new())
                    .expect("two processes");
                let answer = format!("{:?} at {}, {} pairs, {} levels", got.outcome, got.state, got.states, got.levels);
                (answer, got)
            });
            prop_assert!(got.shared, "the search was shared");
            let one = format!("{:?} at {}, {} pairs, {} levels", single.outcome, single.state, single.states, single.levels);
            prop_assert_eq!(&answer, &one, "{:?}", model);
            let fewest = fewest_steps_for_trace(&lts, &oracle, &wanted, fd);
            match &got.outcome {
                HasTrace::Performs(path) => {
                    prop_assert!(oracle.has_trace(&wanted, fd), "{:?}: the slow search has no such trace", model);
                    prop_assert_eq!(Ok(path.steps), fewest, "{:?}: a shortest path", model);
                    // Replayed: the trace performed (or a prefix, then a divergence) leads
                    // to the state named.
                    prop_assert!(wanted.starts_with(&path.trace));
                    prop_assert!(oracle.after(&path.trace).contains(&got.state));
                    if path.diverges {
                        prop_assert!(fd && oracle.is_divergent(got.state));
                    } else {
                        prop_assert_eq!(&path.trace, &wanted);
                    }
                }
                HasTrace::Cannot(cex) => {
                    prop_assert!(!oracle.has_trace(&wanted, fd), "{:?}: the slow search has the trace", model);
                    prop_assert_eq!(Err(cex.steps), fewest, "{:?}: a shortest path to the longest prefix", model);
                    prop_assert_eq!(cex.trace.len(), oracle.longest_prefix(&wanted));
                    prop_assert!(wanted.starts_with(&cex.trace));
                    prop_assert!(oracle.after(&cex.trace).contains(&got.state));
                }
            }
        }
    }
}

/// `0 -a-> 1..=6` (one normal-form node of six states after `a`), each of those `-b-> 7`;
/// with `odd`, state 1 also offers `c`, which the others refuse: nondeterministic after `a`.
fn wide_node(odd: bool) -> Lts {
    let mut transitions: Vec<(u32, Label, u32)> = (1..=6).map(|s| (0, 1, s)).collect();
    transitions.extend((1..=6).map(|s| (s, 2, 7)));
    if odd {
        transitions.push((1, 3, 7));
    }
    let names = ["tau", "a", "b", "c"].map(String::from).to_vec();
    Lts::from_transitions(0, 8, names, &transitions)
}

#[test]
fn a_node_wider_than_the_first_keys_restarts_the_search_with_the_same_answer() {
    for odd in [false, true] {
        let lts = wide_node(odd);
        for model in [Model::Failures, Model::FailuresDivergences] {
            let widths = check_determinism(&lts, model).unwrap();
            // The first keys hold 4 states (1 + 4 words of one-word encodings); the node of six
            // does not fit, and the search runs again with keys of 8 states, which it ends with.
            assert_eq!(widths.first(), Some(&5), "{odd} {model:?}: {widths:?}");
            assert_eq!(widths.last(), Some(&9), "{odd} {model:?}: {widths:?}");
            assert!(
                widths.iter().all(|&w| w == 5 || w == 9),
                "{odd} {model:?}: {widths:?}"
            );
        }
        // The verdict, on its own: nondeterministic after `a` exactly with `odd`.
        let single = search_determinism(
            &one_thread(),
            &lts,
            Model::Failures,
            &SystemOptions::default(),
            &StopSignal::new(),
        )
        .unwrap();
        assert_eq!(
            single.counterexample.map(|c| c.trace),
            odd.then(|| vec!["a".to_string()])
        );
    }
}
