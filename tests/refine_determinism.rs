//! The refinement checker's answer does not depend on the thread count, and its
//! counterexample is a shortest one.
//!
//! - Random small LTS pairs (shared events, taus, tau cycles, nondeterminism), in each of the
//!   three models until enough of them fail: `weft::refine::check` at 1, 2 and 4 threads gives
//!   the same `CheckResult` (time aside) for every pair; its verdict and the counterexample's
//!   `steps` are those of an independent breadth-first oracle (`refine_determinism/oracle.rs`);
//!   and for every failing pair (and a quarter of the holding ones) `weft refines --json`
//!   prints the same JSON, timing fields removed, at `--threads` 1, 2 and 4.
//! - Random CSPm scripts with refinement, deadlock- and divergence-freedom assertions:
//!   `weft check --json` prints the same JSON, timing fields removed, at 1, 2 and 4 threads.
//!
//! `WEFT_DET_CASES` sets the number of failing pairs per model (default 200; a quarter as many
//! scripts), `WEFT_DET_SEED` the seed. Inputs are written under the test's scratch folder
//! (`CARGO_TARGET_TMPDIR/refine_determinism`), where a failing case's files are left.

#[path = "refine_determinism/csp_gen.rs"]
mod csp_gen;
#[path = "refine_determinism/json.rs"]
mod json;
#[path = "refine_determinism/lts_gen.rs"]
mod lts_gen;
#[path = "refine_determinism/oracle.rs"]
mod oracle;
#[path = "refine_determinism/rng.rs"]
mod rng;

use std::path::{Path, PathBuf};

use weft::lts::{write_aut, Lts};
use weft::refine::{check, CheckOptions, CheckResult, Model, Search};

use json::run_at_thread_counts;
use lts_gen::{random_pair, RawLts};
use rng::Rng;

const THREADS: [usize; 3] = [1, 2, 4];

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text}: not a number")),
        Err(_) => default,
    }
}

/// Failing pairs wanted per model.
fn cases() -> usize {
    env_number("WEFT_DET_CASES", 200).max(1) as usize
}

fn seed() -> u64 {
    env_number("WEFT_DET_SEED", 0x5EED_2024)
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("refine_determinism")
        .join(name);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn write_lts(path: &Path, lts: &Lts) {
    let file = std::fs::File::create(path).expect("create .aut");
    write_aut(lts, std::io::BufWriter::new(file)).expect("write .aut");
}

/// `check` at every thread count of [`THREADS`]; asserts the results are equal apart from the
/// time taken, and returns the first.
fn check_at_thread_counts(
    spec: &Lts,
    implementation: &Lts,
    model: Model,
    what: &str,
) -> CheckResult {
    let mut results = THREADS.iter().map(|&threads| {
        let opts = CheckOptions {
            model,
            search: Search::Bfs,
            no_antichain: false,
            threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
        };
        let mut r = check(spec, implementation, &opts)
            .unwrap_or_else(|e| panic!("{what}: --threads {threads}: {e}"));
        r.stats.seconds = 0.0;
        // The one figure that is meant to differ.
        r.stats.threads = 0;
        (threads, r)
    });
    let (t0, first) = results.next().expect("a thread count");
    for (t, r) in results {
        assert_eq!(
            r, first,
            "{what}: the result at {t} threads differs from the one at {t0}"
        );
    }
    first
}

fn describe(spec: &RawLts, implementation: &RawLts, model: Model, case: usize) -> String {
    format!(
        "{} case {case} (seed {:#x}):\n  spec {spec:?}\n  impl {implementation:?}",
        model.name(),
        seed()
    )
}

/// Random pairs until `cases()` of them fail in `model`; see the file's documentation.
fn random_pairs_in(model: Model, salt: u64) {
    let wanted = cases();
    let mut rng = Rng::new(seed() ^ salt);
    let dir = scratch_dir(model.name());
    let (spec_path, impl_path) = (dir.join("spec.aut"), dir.join("impl.aut"));
    let (spec_arg, impl_arg) = (
        spec_path.display().to_string(),
        impl_path.display().to_string(),
    );
    let (mut failing, mut holding, mut longest, mut cli_runs) = (0, 0, 0, 0);
    // Failing pairs by the length of their shortest counterexample.
    let mut lengths: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut case = 0;
    while failing < wanted {
        case += 1;
        assert!(
            case <= 100 * wanted,
            "{}: only {failing} failing pairs in {case} tries",
            model.name()
        );
        let (spec, implementation) = random_pair(&mut rng);
        let what = describe(&spec, &implementation, model, case);
        let expected = oracle::shortest_violation(&spec, &implementation, model);
        let result = check_at_thread_counts(&spec.to_lts(), &implementation.to_lts(), model, &what);
        let steps = result.counterexample.as_ref().map(|c| c.steps);
        assert_eq!(
            steps, expected,
            "{what}\nthe checker's counterexample steps (None: holds) differ from the oracle's; \
             the checker's result: {result:?}"
        );
        match expected {
            Some(n) => {
                failing += 1;
                longest = longest.max(n);
                *lengths.entry(n).or_default() += 1;
            }
            None => holding += 1,
        }
        if expected.is_none() && holding % 4 != 0 {
            continue;
        }
        cli_runs += 1;
        write_lts(&spec_path, &spec.to_lts());
        write_lts(&impl_path, &implementation.to_lts());
        let runs = run_at_thread_counts(
            &["refines", &spec_arg, &impl_arg, "--model", model.name()],
            &THREADS,
            &dir,
        );
        let (code, value) = runs.assert_identical(&dir);
        let context = format!("{what}\nweft refines printed {value}");
        assert_eq!(code, if expected.is_some() { 1 } else { 0 }, "{context}");
        assert_eq!(
            value["holds"].as_bool(),
            Some(expected.is_none()),
            "{context}"
        );
        assert_eq!(
            value["counterexample"]["steps"].as_u64(),
            expected.map(|n| n as u64),
            "{context}"
        );
    }
    eprintln!(
        "{}: {failing} failing and {holding} holding pairs, {cli_runs} of them through the \
         CLI; failing pairs by counterexample steps: {lengths:?}",
        model.name()
    );
    // The generator's own checks: both verdicts occur, and not every counterexample is trivial.
    assert!(holding > 0, "{}: no holding pair", model.name());
    if wanted >= 50 {
        assert!(
            longest >= 3,
            "{}: counterexamples all shorter than 3",
            model.name()
        );
    }
}

#[test]
fn random_pairs_traces() {
    random_pairs_in(Model::Traces, 0x7);
}

#[test]
fn random_pairs_failures() {
    random_pairs_in(Model::Failures, 0xF);
}

#[test]
fn random_pairs_failures_divergences() {
    random_pairs_in(Model::FailuresDivergences, 0xFD);
}

/// The oracle on pairs whose shortest violation is known by hand, and the checker with it.
#[test]
fn oracle_on_known_pairs() {
    fn raw(initial: u32, num_states: u32, ts: &[(u32, &str, u32)]) -> RawLts {
        RawLts {
            initial,
            num_states,
            transitions: ts
                .iter()
                .map(|&(s, l, t)| (s, (l != "tau").then(|| l.to_string()), t))
                .collect(),
        }
    }
    let a_stop = raw(0, 2, &[(0, "a", 1)]);
    let tau_a_b = raw(0, 4, &[(0, "tau", 1), (1, "a", 2), (2, "b", 3)]);
    let stop = raw(0, 1, &[]);
    let div = raw(0, 1, &[(0, "tau", 0)]);
    let run_a = raw(0, 1, &[(0, "a", 0)]);
    let run_a_or_stop = raw(0, 2, &[(0, "a", 0), (0, "tau", 1)]);
    let run_b = raw(0, 1, &[(0, "b", 0)]);
    let a_then_div = raw(0, 2, &[(0, "a", 1), (1, "tau", 1)]);
    let a_b = raw(0, 3, &[(0, "a", 1), (1, "b", 2)]);
    use Model::*;
    let cases: [(&RawLts, &RawLts, [Option<usize>; 3]); 6] = [
        // tau, a, then b which the spec cannot do.
        (&a_stop, &tau_a_b, [Some(3), Some(3), Some(3)]),
        // Divergence matters in FD only, at once.
        (&stop, &div, [None, None, Some(0)]),
        // One tau to a stable state refusing a.
        (&run_a, &run_a_or_stop, [None, Some(1), Some(1)]),
        // A divergent spec: chaos in FD; no stable state in F.
        (&div, &run_b, [Some(1), Some(0), None]),
        // The spec diverges after a: FD allows everything after it.
        (&a_then_div, &a_b, [Some(2), Some(1), None]),
        (&a_b, &a_b, [None, None, None]),
    ];
    for (i, (spec, implementation, expected)) in cases.into_iter().enumerate() {
        for (model, want) in [Traces, Failures, FailuresDivergences]
            .into_iter()
            .zip(expected)
        {
            let what = format!("known pair {i}, {}", model.name());
            assert_eq!(
                oracle::shortest_violation(spec, implementation, model),
                want,
                "{what}: oracle"
            );
            let r = check_at_thread_counts(&spec.to_lts(), &implementation.to_lts(), model, &what);
            assert_eq!(r.counterexample.map(|c| c.steps), want, "{what}: checker");
        }
    }
}

/// Random CSPm scripts: `weft check --json` prints the same at 1, 2 and 4 threads.
#[test]
fn random_scripts() {
    let wanted = (cases() / 4).max(1);
    let mut rng = Rng::new(seed() ^ 0xC5B);
    let dir = scratch_dir("scripts");
    let (mut failing_scripts, mut fails, mut holds) = (0, 0, 0);
    for i in 0..wanted {
        let text = csp_gen::random_script(&mut rng);
        let path = dir.join(format!("script{i}.csp"));
        std::fs::write(&path, &text).expect("write script");
        let runs = run_at_thread_counts(&["check", &path.display().to_string()], &THREADS, &path);
        let (code, value) = runs.assert_identical(&path);
        let summary = &value["summary"];
        let (f, h) = (
            summary["fails"].as_u64().unwrap_or(0),
            summary["holds"].as_u64().unwrap_or(0),
        );
        assert_eq!(
            summary["errors"].as_u64(),
            Some(0),
            "{}: errors\n{text}\n{value}",
            path.display()
        );
        assert_eq!(code, if f > 0 { 1 } else { 0 }, "{}", path.display());
        if f > 0 {
            failing_scripts += 1;
        }
        fails += f;
        holds += h;
    }
    eprintln!(
        "scripts: {wanted}, {failing_scripts} with a failing assertion; {fails} assertions \
         fail, {holds} hold"
    );
    assert!(
        failing_scripts * 2 >= wanted,
        "only {failing_scripts} of {wanted} scripts have a failing assertion"
    );
    assert!(holds > 0, "no assertion holds in any script");
}

/// The comparison removes timing fields at any depth, and only those.
#[test]
fn strip_timing_removes_only_timing_fields() {
    let mut value = serde_json::json!({
        "seconds": 1.5,
        "stats": { "pairs_explored": 3, "seconds": 0.1, "pairs_per_second": 30.0,
                   "peak_rss_mb": 7, "max_memory": 9, "threads": 4 },
        "assertions": [ { "states": 5, "seconds": 0.2, "states_per_second": 25.0,
                          "collection_seconds": 0.0, "steps": 2 } ],
    });
    json::strip_timing(&mut value);
    assert_eq!(
        value,
        serde_json::json!({
            "stats": { "pairs_explored": 3 },
            "assertions": [ { "states": 5, "steps": 2 } ],
        })
    );
}
