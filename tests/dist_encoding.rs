//! The structural encoding of CSPm states (`CspSystem::structural_encoding`,
//! `from_structural_encoding`): what lets a state whose component is numbered as met (too
//! large to explore ahead) leave the process that made it.
//!
//! On the states of the corpus scripts a distributed run used to refuse (`Andrew.csp`,
//! `ex.csp`, `subtype_ex.csp`, `subtype_nametype_ex.csp`), on other corpus scripts and
//! examples, and on random scripts whose processes are made too large to explore ahead (an
//! unbounded counter beside them), for every state reached (up to a bound):
//! - decoding the encoding gives the state back, in the system that made it;
//! - a second system made from a second load of the script, which meets its states in another
//!   order (it meets them by decoding, in reverse), decodes the words to a state whose
//!   encoding is the same words, and whose successors encode as the first system's do, in
//!   the same order (the encoding is a function of the script, not of a run);
//! - words that encode no state (truncated, extended, a changed word) decode to `None` or to
//!   a state whose encoding is those words.
//!
//! `WEFT_ENCODING_CASES` sets the number of random scripts (default 24), `WEFT_ENCODING_SEED`
//! the seed.

#[path = "refine_determinism/csp_gen.rs"]
mod csp_gen;
#[path = "refine_determinism/rng.rs"]
#[allow(dead_code)]
mod rng;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft::csp::{load_script, load_str, CspState, CspSystem, Proc, Script};
use weft::ts::{Label, TransitionSystem};

/// Every reachable state (up to `limit`) in breadth-first order.
fn reachable(ts: &CspSystem, limit: usize) -> Vec<CspState> {
    let mut seen = HashSet::new();
    let mut order = vec![ts.initial_state()];
    seen.insert(ts.initial_state());
    let mut queue = VecDeque::from([ts.initial_state()]);
    while let Some(s) = queue.pop_front() {
        if order.len() >= limit {
            break;
        }
        ts.for_each_successor(&s, &mut |_, t| {
            if seen.insert(t) {
                order.push(t);
                queue.push_back(t);
            }
        });
    }
    order
}

fn encode(ts: &CspSystem, s: &CspState, what: &str) -> Vec<u32> {
    ts.structural_encoding(s)
        .unwrap_or_else(|e| panic!("{what}: no structural encoding: {e}"))
}

/// The successors of `s` as (label name, encoding), in order.
fn successors(ts: &CspSystem, s: &CspState, what: &str) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(Label, CspState)> = Vec::new();
    ts.for_each_successor(s, &mut |l, t| out.push((l, t)));
    out.iter()
        .map(|(l, t)| (ts.label_name(*l), encode(ts, t, what)))
        .collect()
}

/// Checks the structural encoding of the states of `process` of `script` (up to `limit`)
/// against a system of `twin` (the same script loaded again); returns the states checked.
fn check(
    script: &Arc<Script>,
    process: &Proc,
    twin: &Arc<Script>,
    twin_process: &Proc,
    limit: usize,
    what: &str,
) -> usize {
    let Ok(system) = CspSystem::new(script, process) else {
        return 0;
    };
    let other = CspSystem::new(twin, twin_process).expect("the twin's system");
    let states = reachable(&system, limit);
    if system.failed() {
        return 0;
    }
    let encodings: Vec<Vec<u32>> = states.iter().map(|s| encode(&system, s, what)).collect();
    for (s, words) in states.iter().zip(&encodings) {
        assert_eq!(
            system.from_structural_encoding(words),
            Some(*s),
            "{what}: {words:?} does not decode to its state"
        );
    }
    assert_eq!(
        encodings.iter().collect::<HashSet<_>>().len(),
        states.len(),
        "{what}: two states encode alike"
    );
    // The twin meets the states in reverse, by decoding them.
    for (s, words) in states.iter().zip(&encodings).rev() {
        let theirs = other
            .from_structural_encoding(words)
            .unwrap_or_else(|| panic!("{what}: the twin does not decode {words:?}"));
        assert_eq!(
            &encode(&other, &theirs, what),
            words,
            "{what}: the twin's encoding"
        );
        assert_eq!(
            successors(&other, &theirs, what),
            successors(&system, s, what),
            "{what}: the successors of {words:?}"
        );
    }
    // Words no state encodes.
    for words in encodings.iter().take(20) {
        let mut variants = vec![
            words[..words.len() - 1].to_vec(),
            [&words[..], &[0]].concat(),
        ];
        // At most 40 changed words, spread over the encoding.
        for i in (0..words.len()).step_by(words.len().div_ceil(40)) {
            let mut changed = words.clone();
            changed[i] ^= 1 << (i % 7);
            variants.push(changed);
        }
        for v in variants {
            if let Some(t) = system.from_structural_encoding(&v) {
                assert_eq!(
                    encode(&system, &t, what),
                    v,
                    "{what}: {v:?} decodes to another state"
                );
            }
        }
    }
    assert!(
        !system.failed() && !other.failed(),
        "{what}: an evaluation error"
    );
    let longest = encodings.iter().map(Vec::len).max().unwrap_or(0);
    eprintln!(
        "{}: {} states, longest encoding {longest} words",
        what.lines().next().unwrap_or(""),
        states.len()
    );
    states.len()
}

/// The process a run explores: `SYSTEM`, else the last process without parameters.
fn main_process(script: &Script) -> Option<Proc> {
    let names = script.definition_names();
    if names.contains(&"SYSTEM") {
        return script.process("SYSTEM", &[]).ok();
    }
    names.iter().rev().find_map(|n| script.process(n, &[]).ok())
}

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn check_file(path: &Path, limit: usize) -> usize {
    let script = Arc::new(load_script(path).expect("the script loads"));
    let twin = Arc::new(load_script(path).expect("the script loads again"));
    let (Some(p), Some(q)) = (main_process(&script), main_process(&twin)) else {
        panic!("{}: no process", path.display());
    };
    check(&script, &p, &twin, &q, limit, &path.display().to_string())
}

/// The scripts whose process has a component numbered as met.
const LAZY_SCRIPTS: [&str; 4] = [
    "tests/corpus/csp/cspmf_parser_inputs/Andrew.csp",
    "tests/corpus/csp/cspmf_parser_inputs/ex.csp",
    "tests/corpus/csp/cspmf_parser_inputs/subtype_ex.csp",
    "tests/corpus/csp/cspmf_parser_inputs/subtype_nametype_ex.csp",
];

#[test]
fn states_of_components_numbered_as_met_encode_structurally() {
    for name in LAZY_SCRIPTS {
        let path = corpus(name);
        let script = Arc::new(load_script(&path).expect("loads"));
        let system = CspSystem::new(&script, &main_process(&script).unwrap()).expect("a system");
        assert!(
            system.encoded_width().is_err(),
            "{name}: expected a component numbered as met"
        );
        let checked = check_file(&path, 3000);
        assert!(checked >= 20, "{name}: {checked} states");
    }
}

#[test]
fn states_of_explicit_processes_encode_structurally() {
    let mut checked = 0;
    for name in [
        "examples/dining_philosophers.csp",
        "examples/alternating_bit.csp",
        "examples/compression_pipeline.csp",
    ] {
        let path = corpus(name);
        if path.exists() {
            checked += check_file(&path, 3000);
        }
    }
    assert!(checked >= 20, "{checked} states");
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn states_of_random_scripts_encode_structurally() {
    let cases = env_number("WEFT_ENCODING_CASES", 24);
    let seed = env_number("WEFT_ENCODING_SEED", 0x5eed_0015);
    let mut rng = rng::Rng::new(seed);
    let (mut terms, mut networks) = (0, 0);
    for case in 0..cases {
        let text = csp_gen::random_script(&mut rng);
        let definitions: String = text
            .lines()
            .filter(|l| !l.starts_with("assert"))
            .map(|l| format!("{l}\n"))
            .collect();
        let names: Vec<String> = definitions
            .lines()
            .filter_map(|l| l.split_once(" = ").map(|(n, _)| n.trim().to_string()))
            .filter(|n| n.starts_with('P') || n.starts_with('Q'))
            .collect();
        // An unbounded counter makes a process too large to explore ahead: numbered as met.
        let mut full = definitions.clone();
        full.push_str("channel zup\nZC(n) = zup -> ZC(n + 1)\n");
        for (i, n) in names.iter().enumerate() {
            full.push_str(&format!(
                "ZT{i} = {n} [] ZC(0)\nZN{i} = ({n} [] ZC(0)) ||| {n}\n"
            ));
        }
        let load = || Arc::new(load_str("random.csp", &full, Path::new(".")).expect("loads"));
        let (script, twin) = (load(), load());
        for i in 0..names.len() {
            for (kind, count) in [("ZT", &mut terms), ("ZN", &mut networks)] {
                let name = format!("{kind}{i}");
                let (Ok(p), Ok(q)) = (script.process(&name, &[]), twin.process(&name, &[])) else {
                    continue;
                };
                let what = format!("case {case} (seed {seed:#x}) {name}:\n{full}");
                *count += check(&script, &p, &twin, &q, 400, &what);
            }
        }
    }
    assert!(
        terms >= 100 && networks >= 100,
        "{terms} term states, {networks} network states"
    );
}
