//! Helpers shared by the refinement tests.

use std::collections::HashMap;

use weft::lts::Lts;
use weft::refine::{check, CheckOptions, CheckResult, Model, Search};

/// Builds an LTS from `(from, label, to)` triples; the label `tau` is the internal action.
#[allow(dead_code)]
pub fn lts(initial: u32, num_states: u32, transitions: &[(u32, &str, u32)]) -> Lts {
    let mut names = vec!["tau".to_string()];
    let mut ids: HashMap<&str, u32> = HashMap::from([("tau", 0)]);
    let triples: Vec<(u32, u32, u32)> = transitions
        .iter()
        .map(|&(s, l, t)| {
            let id = *ids.entry(l).or_insert_with(|| {
                names.push(l.to_string());
                (names.len() - 1) as u32
            });
            (s, id, t)
        })
        .collect();
    Lts::from_transitions(initial, num_states, names, &triples)
}

/// Runs one configuration; panics on an internal error (a counterexample that did not replay).
pub fn run(
    spec: &Lts,
    impl_: &Lts,
    model: Model,
    search: Search,
    no_antichain: bool,
) -> CheckResult {
    let opts = CheckOptions {
        model,
        search,
        no_antichain,
        threads: weft::threads::Threads::ONE,
    };
    check(spec, impl_, &opts).unwrap_or_else(|e| panic!("{model:?} {search:?} {no_antichain}: {e}"))
}

/// Checks `impl_` against `spec` with BFS and DFS, with and without the antichain; asserts that
/// all four agree and that the antichain BFS counterexample is as short as the classical BFS
/// one (the true minimum). Returns the verdict.
#[allow(dead_code)]
pub fn verdict_all_ways(spec: &Lts, impl_: &Lts, model: Model) -> bool {
    let bfs = run(spec, impl_, model, Search::Bfs, false);
    let dfs = run(spec, impl_, model, Search::Dfs, false);
    let bfs_exact = run(spec, impl_, model, Search::Bfs, true);
    let dfs_exact = run(spec, impl_, model, Search::Dfs, true);
    let holds = bfs.holds();
    assert_eq!(
        dfs.holds(),
        holds,
        "{model:?}: DFS antichain disagrees with BFS"
    );
    assert_eq!(
        bfs_exact.holds(),
        holds,
        "{model:?}: classical BFS disagrees"
    );
    assert_eq!(
        dfs_exact.holds(),
        holds,
        "{model:?}: classical DFS disagrees"
    );
    if let (Some(a), Some(b)) = (&bfs.counterexample, &bfs_exact.counterexample) {
        assert_eq!(
            a.steps, b.steps,
            "{model:?}: BFS counterexample is not a shortest one"
        );
    }
    holds
}
