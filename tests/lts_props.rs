//! Property tests of `weft::lts`: derived facts against slow searches on random LTSs, `.aut`
//! write/read round trips, and the reader on random and mutated input (errors, never panics).

mod common;

use common::naive;
use proptest::prelude::*;
use weft::lts::{read_aut, write_aut, write_dot, AutError, AutOptions, Lts};
use weft::ts::{Label, TAU};

/// A random LTS: up to `max_states` states, labels `0..labels` (tau drawn often), with tau
/// cycles, self-loops, duplicates and deadlocks all likely.
fn arb_lts(max_states: u32, labels: u32) -> impl Strategy<Value = Lts> {
    (1..=max_states).prop_flat_map(move |n| {
        let transition = (0..n, prop_oneof![2 => Just(TAU), 3 => 0..labels], 0..n);
        (
            0..n,
            Just(n),
            proptest::collection::vec(transition, 0..(3 * n as usize + 2)),
        )
            .prop_map(move |(initial, n, transitions)| {
                let names = std::iter::once("tau".to_string())
                    .chain((1..labels).map(|i| format!("act({i}, \"x\")")))
                    .collect();
                Lts::from_transitions(initial, n, names, &transitions)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn divergence_equals_search_for_tau_cycles(lts in arb_lts(24, 3)) {
        let expected = naive::divergent(&lts);
        for s in 0..lts.num_states() {
            prop_assert_eq!(lts.is_divergent(s), expected[s as usize], "state {}", s);
        }
    }

    #[test]
    fn tau_closures_equal_breadth_first_search(lts in arb_lts(24, 3)) {
        let table = lts.tau_closures();
        for s in 0..lts.num_states() {
            let expected: Vec<u32> = naive::tau_reach(&lts, s, 0).into_iter().collect();
            prop_assert_eq!(&lts.tau_closure(s), &expected);
            if let Some(table) = table {
                prop_assert_eq!(table.get(s), &expected[..]);
            }
        }
        let set: Vec<u32> = (0..lts.num_states()).step_by(3).collect();
        let mut expected: Vec<u32> = set
            .iter()
            .flat_map(|&s| naive::tau_reach(&lts, s, 0))
            .collect();
        expected.sort_unstable();
        expected.dedup();
        prop_assert_eq!(lts.tau_closure_of_set(&set), expected);
    }

    #[test]
    fn tau_sccs_are_mutual_tau_reachability(lts in arb_lts(16, 2)) {
        let reach: Vec<_> = (0..lts.num_states()).map(|s| naive::tau_reach(&lts, s, 0)).collect();
        for s in 0..lts.num_states() {
            for t in 0..lts.num_states() {
                let mutual = reach[s as usize].contains(&t) && reach[t as usize].contains(&s);
                prop_assert_eq!(lts.tau_scc(s) == lts.tau_scc(t), mutual);
            }
            for t in lts.tau_successors(s) {
                prop_assert!(lts.tau_scc(t) <= lts.tau_scc(s));
            }
        }
        let distinct: std::collections::BTreeSet<u32> =
            (0..lts.num_states()).map(|s| lts.tau_scc(s)).collect();
        prop_assert_eq!(distinct.len() as u32, lts.num_tau_sccs());
    }

    #[test]
    fn per_state_facts_equal_definitions(lts in arb_lts(24, 4)) {
        let reachable = naive::reachable(&lts);
        for s in 0..lts.num_states() {
            prop_assert_eq!(lts.enabled(s), &naive::enabled(&lts, s)[..]);
            prop_assert_eq!(lts.is_stable(s), lts.successors(s).all(|(l, _)| l != TAU));
            prop_assert_eq!(lts.is_deadlock(s), lts.successors(s).next().is_none());
            prop_assert_eq!(lts.is_reachable(s), reachable[s as usize]);
        }
        prop_assert_eq!(lts.is_deterministic(), naive::deterministic(&lts));
        let summary = lts.summary();
        prop_assert_eq!(summary.reachable_states as usize, reachable.iter().filter(|&&r| r).count());
        let divergent = naive::divergent(&lts);
        prop_assert_eq!(summary.divergent_states as usize, divergent.iter().filter(|&&d| d).count());
        prop_assert_eq!(
            summary.tau_transitions,
            lts.transitions().filter(|&(_, l, _)| l == TAU).count() as u64
        );
    }

    #[test]
    fn deterministic_systems_are_recognised(n in 1u32..20, seed in proptest::collection::vec(0u32..1000, 0..60)) {
        // One target per (state, label), possibly repeated: deterministic by construction.
        let transitions: Vec<(u32, Label, u32)> = seed
            .iter()
            .map(|&x| {
                let (state, label) = (x % n, 1 + (x / n) % 3);
                (state, label, (state * 5 + label * 3 + 1) % n)
            })
            .collect();
        let names = vec!["tau".into(), "a".into(), "b".into(), "c".into()];
        let lts = Lts::from_transitions(0, n, names, &transitions);
        prop_assert!(lts.is_deterministic());
        prop_assert_eq!(lts.summary().divergent_states, 0);
    }

    #[test]
    fn reading_groups_transitions_by_source_stably(
        n in 1u32..12,
        raw in proptest::collection::vec((0u32..12, 0u32..4, 0u32..12), 0..40),
        sorted_prefix in any::<bool>(),
    ) {
        // Transitions in any order (optionally a sorted run first, then disorder), written by
        // hand; reading them must group them per source in file order, as from_transitions does.
        let mut triples: Vec<(u32, u32, u32)> =
            raw.iter().map(|&(s, l, t)| (s % n, l, t % n)).collect();
        if sorted_prefix {
            let half = triples.len() / 2;
            triples[..half].sort_by_key(|&(s, _, _)| s);
        }
        let names = ["tau", "a", "b(1, 2)", "c"];
        let mut text = format!("des (0,{},{})\n", triples.len(), n);
        for &(s, l, t) in &triples {
            text.push_str(&format!("({s},\"{}\",{t})\n", names[l as usize]));
        }
        let lts = read_aut(text.as_bytes(), &AutOptions::default()).unwrap();
        // Expected: label ids by first appearance, transitions grouped stably by source.
        let mut ids: Vec<u32> = vec![u32::MAX; 4];
        ids[0] = 0;
        let mut label_names = vec!["tau".to_string()];
        for &(_, l, _) in &triples {
            if ids[l as usize] == u32::MAX {
                ids[l as usize] = label_names.len() as u32;
                label_names.push(names[l as usize].to_string());
            }
        }
        let renamed: Vec<(u32, Label, u32)> =
            triples.iter().map(|&(s, l, t)| (s, ids[l as usize], t)).collect();
        let expected = Lts::from_transitions(0, n, label_names, &renamed);
        prop_assert_eq!(lts, expected);
    }

    #[test]
    fn write_then_read_round_trips(lts in arb_lts(30, 5)) {
        let mut text = Vec::new();
        write_aut(&lts, &mut text).unwrap();
        let again = read_aut(&text[..], &AutOptions::default()).unwrap();
        prop_assert_eq!(again.initial(), lts.initial());
        prop_assert_eq!(again.num_states(), lts.num_states());
        prop_assert_eq!(naive::named_transitions(&again), naive::named_transitions(&lts));
        // Same transitions in the same order per state: writing again gives the same bytes.
        let mut twice = Vec::new();
        write_aut(&again, &mut twice).unwrap();
        prop_assert_eq!(&twice, &text);
        let mut dot = Vec::new();
        write_dot(&lts, &mut dot).unwrap();
        prop_assert_eq!(
            String::from_utf8(dot).unwrap().matches(" -> s").count() as u64,
            lts.num_transitions() + 1
        );
    }
}

/// Checks that reading `bytes` returns (no panic) and that an error names a line of the input.
fn read_never_panics(bytes: &[u8]) -> Result<Option<Lts>, TestCaseError> {
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    match read_aut(bytes, &AutOptions::default()) {
        Ok(lts) => {
            prop_assert!(lts.initial() < lts.num_states());
            let _ = lts.summary();
            Ok(Some(lts))
        }
        Err(e) => {
            if let Some(line) = e.line() {
                prop_assert!(
                    line >= 1 && line <= lines,
                    "line {} of {}: {}",
                    line,
                    lines,
                    e
                );
            }
            prop_assert!(!e.to_string().is_empty());
            Ok(None)
        }
    }
}

/// Bytes that matter to the format, to reach deep into the parser.
fn arb_aut_like_text() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"des"[..]),
        Just(&b"("[..]),
        Just(&b")"[..]),
        Just(&b","[..]),
        Just(&b"\""[..]),
        Just(&b" "[..]),
        Just(&b"\n"[..]),
        Just(&b"\r\n"[..]),
        Just(&b"0"[..]),
        Just(&b"1"[..]),
        Just(&b"2"[..]),
        Just(&b"99999999999"[..]),
        Just(&b"tau"[..]),
        Just(&b"i"[..]),
        Just(&b"a"[..]),
        Just(&b"\xff"[..]),
    ];
    proptest::collection::vec(token, 0..60).prop_map(|tokens| tokens.concat())
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Insert(usize, u8),
    Replace(usize, u8),
    DuplicateLine(usize),
    DeleteLine(usize),
}

fn apply(text: &mut Vec<u8>, mutation: &Mutation) {
    let len = text.len().max(1);
    match *mutation {
        Mutation::Delete(at) => {
            if !text.is_empty() {
                text.remove(at % len);
            }
        }
        Mutation::Insert(at, byte) => text.insert(at % (text.len() + 1), byte),
        Mutation::Replace(at, byte) => {
            if !text.is_empty() {
                text[at % len] = byte;
            }
        }
        Mutation::DuplicateLine(n) | Mutation::DeleteLine(n) => {
            let mut lines: Vec<Vec<u8>> = text.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            let at = n % lines.len();
            if matches!(mutation, Mutation::DuplicateLine(_)) {
                let line = lines[at].clone();
                lines.insert(at, line);
            } else {
                lines.remove(at);
            }
            *text = lines.join(&b'\n');
        }
    }
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        Just(b'('),
        Just(b')'),
        Just(b','),
        Just(b'"'),
        Just(b' '),
        Just(b'\n'),
        Just(b'7'),
        any::<u8>()
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), byte.clone()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), byte).prop_map(|(a, b)| Mutation::Replace(a, b)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::DeleteLine),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        read_never_panics(&bytes)?;
        let mut with_header = b"des (0,3,4)\n".to_vec();
        with_header.extend_from_slice(&bytes);
        read_never_panics(&with_header)?;
    }

    #[test]
    fn random_format_tokens_never_panic(text in arb_aut_like_text()) {
        read_never_panics(&text)?;
        let mut with_header = b"des (0,2,3)\n(".to_vec();
        with_header.extend_from_slice(&text);
        read_never_panics(&with_header)?;
    }

    #[test]
    fn mutated_valid_files_never_panic(
        lts in arb_lts(8, 3),
        mutations in proptest::collection::vec(arb_mutation(), 1..4),
    ) {
        let mut text = Vec::new();
        write_aut(&lts, &mut text).unwrap();
        for m in &mutations {
            apply(&mut text, m);
        }
        if let Some(read) = read_never_panics(&text)? {
            // Whatever was accepted agrees with its own header.
            let mut again = Vec::new();
            write_aut(&read, &mut again).unwrap();
            let reread = read_aut(&again[..], &AutOptions::default()).unwrap();
            prop_assert_eq!(naive::named_transitions(&reread), naive::named_transitions(&read));
        }
    }

    #[test]
    fn mutated_gzip_streams_never_panic(
        lts in arb_lts(8, 3),
        mutations in proptest::collection::vec(arb_mutation(), 1..3),
    ) {
        use std::io::Write;
        let mut text = Vec::new();
        write_aut(&lts, &mut text).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let mut bytes = gz.finish().unwrap();
        prop_assert_eq!(
            naive::named_transitions(&read_aut(&bytes[..], &AutOptions::default()).unwrap()),
            naive::named_transitions(&lts)
        );
        // Keep the magic bytes so that the decompressor, not the text parser, meets the damage.
        let header = bytes.split_off(2.min(bytes.len()));
        let mut body = header;
        for m in &mutations {
            apply(&mut body, m);
        }
        bytes.extend_from_slice(&body);
        // Damage shows as an error (usually a decompression I/O error), never as a panic.
        if let Err(e) = read_aut(&bytes[..], &AutOptions::default()) {
            prop_assert!(matches!(e, AutError::Io { .. }) || e.line().is_some(), "{}", e);
        }
    }
}

#[test]
fn tarjan_handles_million_state_tau_paths_without_recursion() {
    // A tau chain 0 -> 1 -> ... -> n-1 whose last state loops back to the middle.
    let n = 1_000_000u32;
    let mut transitions: Vec<(u32, Label, u32)> = (0..n - 1).map(|s| (s, TAU, s + 1)).collect();
    transitions.push((n - 1, TAU, n / 2));
    let lts = Lts::from_transitions(0, n, vec!["tau".into()], &transitions);
    assert!(lts.is_divergent(0));
    assert!(lts.is_divergent(n - 1));
    assert_eq!(lts.tau_scc(n / 2), lts.tau_scc(n - 1));
    assert_ne!(lts.tau_scc(n / 2 - 1), lts.tau_scc(n / 2));
    assert_eq!(lts.summary().tau_cycles, 1);
    // Closures are quadratic here: the table is refused and single closures still work.
    assert!(lts.tau_closures().is_none());
    assert_eq!(lts.tau_closure(n - 2).len() as u32, n / 2);
    // Without the back edge nothing diverges.
    transitions.pop();
    let acyclic = Lts::from_transitions(0, n, vec!["tau".into()], &transitions);
    assert_eq!(acyclic.summary().divergent_states, 0);
}
