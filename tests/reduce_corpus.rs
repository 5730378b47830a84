//! Quotient sizes of `weft::reduce` against mCRL2's on the corpus:
//! `aut/mcrl2_reductions/expected_reductions.tsv` (mCRL2's own test expectations, every
//! equivalence weft implements), `aut/vlts/oracle.tsv` and `aut/generated/oracle_quotients.tsv`
//! (`ltsconvert -ebisim / -ebranching-bisim / -edpbranching-bisim`). mCRL2 counts the tau
//! self-loop that marks a divergent class as a transition, and so does weft.

use std::path::{Path, PathBuf};

use weft::lts::{read_aut_file, AutOptions};
use weft::reduce::{reduce, reduce_by, BranchingAlgorithm, Equivalence};
use weft::threads::Threads;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// `"states/transitions"` (a third `/labels` part is ignored).
fn sizes(text: &str) -> (u32, u64) {
    let mut parts = text.trim().split('/');
    let states = parts.next().unwrap().parse().unwrap();
    let transitions = parts.next().unwrap().parse().unwrap();
    (states, transitions)
}

/// Reduces `file` modulo each equivalence and compares the quotient's size (for the branching
/// bisimulations, with each algorithm too); returns the mismatches as text.
fn check(file: &Path, expected: &[(Equivalence, (u32, u64))]) -> Vec<String> {
    let lts = read_aut_file(file, &AutOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut wrong = Vec::new();
    for &(equivalence, want) in expected {
        let mut quotients = vec![("default", reduce(&lts, equivalence).quotient)];
        if matches!(
            equivalence,
            Equivalence::Branching | Equivalence::DivergencePreservingBranching
        ) {
            for (name, algorithm) in [
                ("signatures", BranchingAlgorithm::Signatures),
                ("constellations", BranchingAlgorithm::Constellations),
                (
                    "signatures then constellations",
                    BranchingAlgorithm::SignaturesThenConstellations(1),
                ),
            ] {
                let q = reduce_by(&lts, equivalence, Threads::ONE, algorithm).quotient;
                quotients.push((name, q));
            }
        }
        for (name, q) in quotients {
            let got = (q.num_states(), q.num_transitions());
            if got != want {
                wrong.push(format!(
                    "{} {equivalence} ({name}): weft {}/{}, mCRL2 {}/{}",
                    file.display(),
                    got.0,
                    got.1,
                    want.0,
                    want.1
                ));
            }
        }
    }
    wrong
}

#[test]
fn mcrl2_test_expectations() {
    let dir = corpus().join("aut/mcrl2_reductions");
    let table = std::fs::read_to_string(dir.join("expected_reductions.tsv")).unwrap();
    let names = [
        ("bisimulation", Equivalence::Strong),
        ("branching_bisimulation", Equivalence::Branching),
        (
            "divergence_preserving_branching_bisimulation",
            Equivalence::DivergencePreservingBranching,
        ),
        ("trace_equivalence", Equivalence::Trace),
        ("weak_trace_equivalence", Equivalence::WeakTrace),
    ];
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let mut expected = Vec::new();
        for entry in cols[5].split(';') {
            if let Some((key, value)) = entry.trim().split_once('=') {
                if let Some(&(_, eq)) = names.iter().find(|(n, _)| *n == key) {
                    expected.push((eq, sizes(value)));
                }
            }
        }
        if expected.is_empty() {
            continue;
        }
        checked += expected.len();
        wrong.extend(check(&dir.join(cols[0]), &expected));
    }
    assert!(checked >= 100, "only {checked} expectations found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Rows of an oracle table: `(file, [(equivalence, column)])`.
fn oracle(table: &str, columns: &[(Equivalence, usize)]) {
    let text = std::fs::read_to_string(corpus().join(table)).unwrap();
    let mut wrong = Vec::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let expected: Vec<_> = columns
            .iter()
            .map(|&(eq, c)| (eq, sizes(cols[c])))
            .collect();
        wrong.extend(check(&corpus().join(cols[0]), &expected));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn vlts_quotients() {
    oracle(
        "aut/vlts/oracle.tsv",
        &[
            (Equivalence::Strong, 6),
            (Equivalence::Branching, 8),
            (Equivalence::DivergencePreservingBranching, 9),
        ],
    );
}

#[test]
fn generated_quotients() {
    oracle(
        "aut/generated/oracle_quotients.tsv",
        &[
            (Equivalence::Strong, 6),
            (Equivalence::Branching, 7),
            (Equivalence::DivergencePreservingBranching, 8),
        ],
    );
}

/// A random LTS of `n` states, about `per_state` transitions each over `labels` labels (label 0
/// is tau), from a fixed seed (a linear congruential generator: no dependency on `rand`).
fn random_lts(n: u32, per_state: u32, labels: u32, seed: u64) -> weft::lts::Lts {
    let mut x = seed;
    let mut next = move |bound: u32| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % u64::from(bound)) as u32
    };
    let names: Vec<String> = std::iter::once("tau".to_string())
        .chain((1..labels).map(|i| format!("a{i}")))
        .collect();
    let mut transitions = Vec::new();
    for s in 0..n {
        for _ in 0..next(2 * per_state + 1) {
            // Mostly local targets, so that the tau graph has cycles and long chains.
            let t = if next(4) == 0 {
                next(n)
            } else {
                (s + 1 + next(8)) % n
            };
            transitions.push((s, next(labels), t));
        }
    }
    weft::lts::Lts::from_transitions(0, n, names, &transitions)
}

/// The quotient, state map included, is the same on 1, 2 and 4 threads (a round's signatures
/// are computed in parallel above a size threshold: the large inputs reach it). The trace
/// equivalences run the same refinement on a subset construction, too large here.
#[test]
fn quotients_do_not_depend_on_the_thread_count() {
    use weft::reduce::reduce_on;
    use weft::threads::Threads;
    let gen = corpus().join("aut/generated");
    let mut inputs: Vec<(String, weft::lts::Lts)> = [
        "mcrl2_examples/1394-fin.aut.gz",
        "linearizability/treiberStack_impl.aut.gz",
    ]
    .iter()
    .map(|f| {
        let lts = read_aut_file(&gen.join(f), &AutOptions::default()).unwrap();
        (f.to_string(), lts)
    })
    .collect();
    for (seed, labels) in [(1u64, 2u32), (2, 3), (3, 5)] {
        inputs.push((
            format!("random seed {seed}"),
            random_lts(20_000, 2, labels, seed),
        ));
    }
    for (name, lts) in &inputs {
        for eq in [
            Equivalence::Strong,
            Equivalence::Branching,
            Equivalence::DivergencePreservingBranching,
        ] {
            let one = reduce_on(lts, eq, Threads::ONE);
            for threads in [2, 4] {
                // Parallel rounds at every size (by default these inputs stay on one thread).
                let par = weft::reduce::reduce_by_from(
                    lts,
                    eq,
                    Threads::new(threads).unwrap(),
                    weft::reduce::BranchingAlgorithm::Auto,
                    0,
                );
                assert_eq!(
                    one.state_map, par.state_map,
                    "{name} {eq}: state maps differ"
                );
                let t1: Vec<_> = one.quotient.transitions().collect();
                let t2: Vec<_> = par.quotient.transitions().collect();
                assert_eq!(
                    one.quotient.initial(),
                    par.quotient.initial(),
                    "{name} {eq}"
                );
                assert!(t1 == t2, "{name} {eq}: quotients differ");
            }
        }
    }
}

/// Every branching algorithm gives the same quotient, state numbering included, on the vlts
/// rows whose signature refinement needs many rounds (vasy_40_60: 10,002, where the default
/// hands over to the constellation algorithm) and on a few others.
#[test]
fn branching_algorithms_give_the_same_quotient() {
    use weft::lts::write_aut;
    let files = [
        "aut/vlts_from_eqfiddle_csv/vasy_40_60.aut",
        "aut/vlts_from_eqfiddle_csv/vasy_10_56.aut",
        "aut/vlts/cwi_1_2.aut",
    ];
    for file in files {
        let lts = read_aut_file(&corpus().join(file), &AutOptions::default()).unwrap();
        for eq in [
            Equivalence::Branching,
            Equivalence::DivergencePreservingBranching,
        ] {
            let text = |algorithm| {
                let q = reduce_by(&lts, eq, Threads::ONE, algorithm).quotient;
                let mut out = Vec::new();
                write_aut(&q, &mut out).unwrap();
                out
            };
            let reference = text(BranchingAlgorithm::Signatures);
            for algorithm in [
                BranchingAlgorithm::Auto,
                BranchingAlgorithm::Constellations,
                BranchingAlgorithm::SignaturesThenConstellations(1),
            ] {
                assert!(
                    text(algorithm) == reference,
                    "{file} {eq}: {algorithm:?} gives another quotient"
                );
            }
        }
    }
}
