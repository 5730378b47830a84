//! The canonical state encoding (`TransitionSystem::encoded_width`, `encode_state`,
//! `decode_state`, `for_each_encoded_successor`): on every process of the bundled examples and
//! of the data-driven cases that has one, and on LTSs,
//! - decoding an encoding gives the state back, and the highest bit of the last word is 0;
//! - every encoding is below `2^encoded_bits`;
//! - the successors computed on encodings are the encodings of the successors, in order;
//! - a second system made from a second load of the script decodes the same words to a state
//!   with the same encoded successors (the encoding is a function of the script, not of a run);
//! - words that encode no state decode to `None`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use weft::csp::{load_script, CspSystem};
use weft::ts::{Label, TransitionSystem};

/// Every reachable state (up to `limit`) in breadth-first order.
fn reachable<T: TransitionSystem>(ts: &T, limit: usize) -> Vec<T::State> {
    let mut seen = HashMap::new();
    let mut order = vec![ts.initial_state()];
    seen.insert(ts.initial_state(), ());
    let mut queue = VecDeque::from([ts.initial_state()]);
    while let Some(s) = queue.pop_front() {
        if order.len() >= limit {
            break;
        }
        ts.for_each_successor(&s, &mut |_, t| {
            if seen.insert(t.clone(), ()).is_none() {
                order.push(t.clone());
                queue.push_back(t);
            }
        });
    }
    order
}

fn encode<T: TransitionSystem>(ts: &T, s: &T::State) -> Vec<u32> {
    let mut words = vec![0; ts.encoded_width().expect("an encoding")];
    ts.encode_state(s, &mut words);
    words
}

fn encoded_successors<T: TransitionSystem>(ts: &T, words: &[u32]) -> Vec<(Label, Vec<u32>)> {
    let mut out = Vec::new();
    ts.for_each_encoded_successor(words, &mut |l, w| out.push((l, w.to_vec())));
    out
}

/// Checks the encoding of `ts` against `twin` (the same model loaded again); returns the
/// number of states checked.
fn check<T: TransitionSystem>(ts: &T, twin: &T, what: &str) -> usize
where
    T::State: std::fmt::Debug,
{
    let width = ts.encoded_width().expect("an encoding");
    assert_eq!(twin.encoded_width(), Ok(width), "{what}");
    let bits = ts.encoded_bits().expect("a bound on the encodings");
    assert!(
        bits < 32 * width as u32,
        "{what}: {bits} bits in {width} words"
    );
    let states = reachable(ts, 20_000);
    for s in &states {
        let words = encode(ts, s);
        assert_eq!(words[width - 1] >> 31, 0, "{what}: top bit of {words:?}");
        // Below 2^bits: every word above the bound is 0, and the bound's word has no bit above.
        for (i, w) in words.iter().enumerate() {
            let below = bits.saturating_sub(32 * i as u32).min(32);
            assert!(
                below == 32 || (*w as u64) >> below == 0,
                "{what}: {words:?} not below 2^{bits}"
            );
        }
        assert_eq!(
            ts.decode_state(&words).as_ref(),
            Some(s),
            "{what}: {words:?}"
        );
        let direct: Vec<(Label, Vec<u32>)> = {
            let mut out = Vec::new();
            ts.for_each_successor(s, &mut |l, t| out.push((l, encode(ts, &t))));
            out
        };
        assert_eq!(encoded_successors(ts, &words), direct, "{what}: {words:?}");
        let there = twin.decode_state(&words).expect("decoded by the twin");
        let names = |sys: &T, v: &[(Label, Vec<u32>)]| -> Vec<(String, Vec<u32>)> {
            v.iter()
                .map(|(l, w)| (sys.label_name(*l), w.clone()))
                .collect()
        };
        assert_eq!(
            names(twin, &encoded_successors(twin, &encode(twin, &there))),
            names(ts, &direct),
            "{what}: the twin disagrees at {words:?}"
        );
    }
    // Words no state has: a too-short or too-long slice, and every field at its maximum
    // where that is not Ω (checked only when it decodes to nothing known).
    assert_eq!(ts.decode_state(&vec![0; width + 1]), None, "{what}");
    assert_eq!(ts.decode_state(&[]), None, "{what}");
    states.len()
}

fn scripts() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "tests/cases/should_pass"] {
        for e in std::fs::read_dir(root.join(dir)).expect("a directory") {
            let p = e.expect("an entry").path();
            if p.extension().is_some_and(|x| x == "csp") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn csp_networks_encode_canonically() {
    let mut encoded = 0;
    for path in scripts() {
        if path.ends_with("scaling_philosophers.csp")
            || path.ends_with("compare_renamed_philosopher.csp")
        {
            continue; // 6.6M states: covered by the CLI runs, too large here
        }
        let Ok(script) = load_script(&path) else {
            continue;
        };
        let twin = load_script(&path).expect("loads twice");
        let (script, twin) = (Arc::new(script), Arc::new(twin));
        let processes = |s: &weft::csp::Script| -> Vec<weft::csp::Proc> {
            s.assertions()
                .iter()
                .filter_map(|a| a.check.as_ref().ok())
                .flat_map(|c| c.processes().into_iter().cloned())
                .collect()
        };
        let (mine, theirs) = (processes(&script), processes(&twin));
        for (i, process) in mine.iter().enumerate() {
            let Ok(system) = CspSystem::new(&script, process) else {
                continue;
            };
            if system.encoded_width().is_err() {
                continue;
            }
            let other = CspSystem::new(&twin, &theirs[i]).expect("the twin's system");
            let what = format!("{} process {i}", path.display());
            check(&system, &other, &what);
            if !system.failed() {
                encoded += 1;
            }
        }
    }
    assert!(encoded >= 20, "only {encoded} processes with an encoding");
}

#[test]
fn ltss_encode_as_their_numbers() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/aut/mcrl2_compare");
    let mut checked = 0;
    for e in std::fs::read_dir(&root).expect("the corpus") {
        let p = e.expect("an entry").path();
        if !p.to_string_lossy().ends_with(".aut") {
            continue;
        }
        let opts = weft::lts::aut::AutOptions::default();
        let lts = weft::lts::aut::read_aut_file(&p, &opts).expect("reads");
        let twin = weft::lts::aut::read_aut_file(&p, &opts).expect("reads");
        check(&lts, &twin, &p.display().to_string());
        assert_eq!(lts.decode_state(&[lts.num_states()]), None);
        checked += 1;
    }
    assert!(checked > 0);
}

/// Explores `name` of `script` breadth first: (states, transitions), and whether the system
/// has a canonical encoding.
fn explore_named(script: &Arc<weft::csp::Script>, name: &str) -> (u64, u64, bool) {
    let process = script.process(name, &[]).expect("the process");
    let system = CspSystem::new(script, &process).expect("the system");
    let result = weft::explore::explore(&system, &weft::explore::ExploreOptions::default());
    assert!(system.take_error().is_none(), "{name}");
    (
        result.stats.states,
        result.stats.transitions,
        system.encoded_width().is_ok(),
    )
}

/// A compressed process enters a network as an explicit position (FDR's structure), even
/// with more than `EXPLICIT_LEAVES` states: the network has a canonical encoding, and the
/// same states as with the components uncompressed where the compression changes nothing.
#[test]
fn compressed_components_are_explicit_positions() {
    // C(i) is deterministic with two states, so the interleaving of 13 of them has 2^13 =
    // 8192 states, every one of them its own normal form (each has a different set of
    // initial events).
    let text = "channel up, down : {0..12}\nchannel a, b\n\
                C(i) = up.i -> down.i -> C(i)\n\
                CELLS = ||| i : {0..12} @ C(i)\n\
                P = a -> b -> P\n\
                Q = (a -> Q) |~| (b -> Q)\n\
                PLAIN = P ||| Q\n\
                PAIR = normal(P) ||| sbisim(Q)\n\
                BIG = normal(CELLS) [| {| up.0 |} |] up.0 -> STOP\n\
                BIG_PLAIN = CELLS [| {| up.0 |} |] up.0 -> STOP\n\
                HIDDEN = (normal(P) [| {b} |] diamond(Q)) \\ {b}\n\
                assert PAIR :[deadlock free]\n";
    let load = || Arc::new(weft::csp::load_str("c.csp", text, std::path::Path::new(".")).unwrap());
    let (script, twin) = (load(), load());
    for name in ["PAIR", "BIG", "HIDDEN"] {
        let process = script.process(name, &[]).expect("the process");
        let system = CspSystem::new(&script, &process).expect("the system");
        assert!(
            system.encoded_width().is_ok(),
            "{name}: {:?}",
            system.encoded_width()
        );
        let other = CspSystem::new(&twin, &twin.process(name, &[]).unwrap()).unwrap();
        check(&system, &other, name);
        assert!(system.take_error().is_none(), "{name}");
    }
    // P (2 states) is its own normal form, Q (3 states: two taus to `a -> Q` and `b -> Q`)
    // its own strong bisimulation quotient: the same network of 2 x 3 states, with 6 moves
    // of P and 2 x (2 + 1 + 1) of Q.
    let (s, t, _) = explore_named(&script, "PLAIN");
    assert_eq!(explore_named(&script, "PAIR"), (s, t, true));
    assert_eq!((s, t), (6, 14));
    // normal(CELLS) is one position of 8192 states (more than EXPLICIT_LEAVES), explicit
    // all the same; the network has the states of the uncompressed one, whose 13 cells are
    // positions of their own: 4096 with cell 0 down before up.0, and 2 x 4096 after it
    // (cell 0 up, or down again with up.0 refused from then on).
    let (s, t, _) = explore_named(&script, "BIG_PLAIN");
    assert_eq!(s, 3 * 4096);
    assert_eq!(explore_named(&script, "BIG"), (s, t, true));
}

/// A process that is not a network is explored whole when its system is made, up to
/// `EXPLICIT_LEAVES` (4096) states, a compression at its top up to the compressions' bound:
/// it encodes a state as its number, one word, given breadth first in the canonical order of
/// transitions (the order `reachable` meets the states in), and a second load of the script
/// decodes it alike. One state more and the process is numbered as met, without an encoding,
/// with the same states.
#[test]
fn processes_that_are_not_networks_encode_as_their_breadth_first_numbers() {
    let text = "channel up, down : {0..9}\nchannel a, b\n\
                COUNT(n) = n < 4095 & up.(n % 10) -> COUNT(n + 1)\n\
                LONG(n) = n < 4096 & up.(n % 10) -> LONG(n + 1)\n\
                FULL = COUNT(0)\nOVER = LONG(0)\n\
                CHOICE = (a -> b -> CHOICE) [] (b -> STOP) |~| up?x -> down!x -> CHOICE\n\
                SEQ = (a -> SKIP ||| b -> SKIP) ; CHOICE\n\
                NORMAL = normal(CHOICE)\n";
    let load = || Arc::new(weft::csp::load_str("t.csp", text, std::path::Path::new(".")).unwrap());
    let (script, twin) = (load(), load());
    for (name, states) in [("FULL", 4096), ("CHOICE", 15), ("SEQ", 0), ("NORMAL", 0)] {
        let process = script.process(name, &[]).expect("the process");
        let system = CspSystem::new(&script, &process).expect("the system");
        assert_eq!(system.encoded_width(), Ok(1), "{name}");
        let other = CspSystem::new(&twin, &twin.process(name, &[]).unwrap()).unwrap();
        let reached = reachable(&system, 10_000);
        for (n, s) in reached.iter().enumerate() {
            assert_eq!(encode(&system, s), vec![n as u32], "{name}: state {n}");
        }
        assert_eq!(system.decode_state(&[reached.len() as u32]), None, "{name}");
        assert_eq!(check(&system, &other, name), reached.len(), "{name}");
        if states > 0 {
            assert_eq!(reached.len(), states, "{name}");
        }
        assert!(system.take_error().is_none(), "{name}");
    }
    let (states, _, encoded) = explore_named(&script, "OVER");
    assert_eq!((states, encoded), (4097, false));
}
