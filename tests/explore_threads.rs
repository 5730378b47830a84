//! The parallel explorer against a sequential BFS oracle, on corpus LTSs: the same states,
//! transitions, levels and deadlocks for 1, 2 and 4 threads, and shortest traces that replay.

mod common;

use std::collections::{BTreeSet, VecDeque};
use weft::explore::CanonicalId;

use weft::explore::{explore, ExploreOptions};
use weft::lts::aut::{read_aut_file, AutOptions};
use weft::lts::Lts;

type Transitions = BTreeSet<(u32, u32, u32)>;

/// Sequential BFS: (reachable transitions, BFS distance of each state, number of levels).
fn oracle(lts: &Lts) -> (Transitions, Vec<Option<u32>>, u32) {
    let mut dist = vec![None; lts.num_states() as usize];
    let mut queue = VecDeque::from([lts.initial()]);
    dist[lts.initial() as usize] = Some(0);
    let mut transitions = BTreeSet::new();
    let mut levels = 0;
    while let Some(s) = queue.pop_front() {
        let d = dist[s as usize].unwrap();
        levels = levels.max(d + 1);
        for (l, t) in lts.successors(s) {
            transitions.insert((s, l, t));
            if dist[t as usize].is_none() {
                dist[t as usize] = Some(d + 1);
                queue.push_back(t);
            }
        }
    }
    (transitions, dist, levels)
}

fn check(path: &str) {
    let lts = read_aut_file(&common::corpus_dir().join(path), &AutOptions::default()).unwrap();
    let (transitions, dist, levels) = oracle(&lts);
    let reachable = dist.iter().filter(|d| d.is_some()).count() as u64;
    for threads in [1, 2, 4] {
        let opts = ExploreOptions {
            threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
            record_transitions: true,
            ..Default::default()
        };
        let result = explore(&lts, &opts);
        assert!(result.stats.complete);
        assert_eq!(result.stats.states, reachable, "{path}, {threads} threads");
        assert_eq!(result.stats.transitions, transitions.len() as u64);
        assert_eq!(result.stats.levels, levels);
        // Map ids back to the LTS's own states: the explored LTS is the reachable part.
        let mapped: BTreeSet<(u32, u32, u32)> = result
            .transitions
            .iter()
            .map(|&(s, l, t)| (result.states[s.index()], l, result.states[t.index()]))
            .collect();
        assert_eq!(mapped, transitions, "{path}, {threads} threads");
        let deadlocks: BTreeSet<u32> = result
            .deadlocks
            .iter()
            .map(|&id| result.states[id.index()])
            .collect();
        let expected: BTreeSet<u32> = (0..lts.num_states())
            .filter(|&s| dist[s as usize].is_some() && lts.successors(s).next().is_none())
            .collect();
        assert_eq!(deadlocks, expected);
        // Shortest traces: replay each parent path and compare its length with the distance.
        for id in (0..result.states.len() as u32).step_by(97) {
            let trace = result.trace_to(CanonicalId(id));
            let mut at = BTreeSet::from([lts.initial()]);
            for &label in &trace {
                at = at
                    .iter()
                    .flat_map(|&s| lts.successors(s).filter(move |&(l, _)| l == label))
                    .map(|(_, t)| t)
                    .collect();
            }
            let target = result.states[id as usize];
            assert!(at.contains(&target), "trace to {target} does not replay");
            assert_eq!(Some(trace.len() as u32), dist[target as usize]);
        }
    }
}

#[test]
fn explorer_matches_sequential_bfs_on_vlts() {
    check("aut/vlts/vasy_0_1.aut");
    check("aut/vlts/cwi_3_14.aut");
    check("aut/vlts/vasy_1_4.aut");
}

#[test]
fn explorer_matches_sequential_bfs_on_mcrl2_examples() {
    check("aut/generated/mcrl2_examples/abp.aut");
    check("aut/generated/mcrl2_examples/dining8.aut");
}

#[test]
fn state_limit_stops_cleanly() {
    let path = common::corpus_dir().join("aut/generated/mcrl2_examples/dining8.aut");
    let lts = read_aut_file(&path, &AutOptions::default()).unwrap();
    for threads in [1, 2] {
        let opts = ExploreOptions {
            threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
            max_states: Some(1000),
            ..Default::default()
        };
        let result = explore(&lts, &opts);
        assert!(!result.stats.complete);
        assert_eq!(result.stats.states, 1000);
        assert_eq!(result.states.len(), 1000);
    }
}
