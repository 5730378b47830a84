//! Subset construction: the deterministic LTS with the same (weak) traces.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// The tau-closure of `states` (sorted, deduplicated), using `mark` (one entry per state,
/// all different from `stamp` on entry) as the visited set.
fn closure(lts: &Lts, states: &mut Vec<u32>, mark: &mut [u32], stamp: u32) {
    let mut stack: Vec<u32> = Vec::new();
    for &s in states.iter() {
        mark[s as usize] = stamp;
        stack.push(s);
    }
    while let Some(s) = stack.pop() {
        for t in lts.tau_successors(s) {
            if mark[t as usize] != stamp {
                mark[t as usize] = stamp;
                states.push(t);
                stack.push(t);
            }
        }
    }
    states.sort_unstable();
}

/// The subset construction of `lts`: state 0 is `{initial}` (its tau-closure when `weak`);
/// the `a`-successor of a set is the set of `a`-successors of its members (tau-closed, and no
/// tau transitions, when `weak`). Only non-empty sets are states, so every state has an
/// outgoing transition exactly for the labels some member can perform. Sets are numbered in
/// breadth-first order with labels in increasing order.
pub fn determinise(lts: &Lts, weak: bool) -> Lts {
    let n = lts.num_states() as usize;
    if n == 0 {
        return lts.clone();
    }
    let covered = lts.covered() as usize;
    let mut mark = vec![u32::MAX; covered.max(1)];
    let mut stamp = 0u32;
    let mut initial = vec![lts.initial()];
    if weak {
        closure(lts, &mut initial, &mut mark, stamp);
        stamp += 1;
    }
    let mut sets: Vec<Vec<u32>> = vec![initial.clone()];
    let mut ids: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    ids.insert(initial, 0);
    let mut transitions: Vec<(u32, Label, u32)> = Vec::new();
    let mut at = 0;
    while at < sets.len() {
        let mut by_label: BTreeMap<Label, Vec<u32>> = BTreeMap::new();
        for &s in &sets[at] {
            for (a, t) in lts.successors(s) {
                if weak && a == TAU {
                    continue;
                }
                by_label.entry(a).or_default().push(t);
            }
        }
        for (a, mut targets) in by_label {
            if weak {
                targets.sort_unstable();
                targets.dedup();
                closure(lts, &mut targets, &mut mark, stamp);
                stamp = stamp.wrapping_add(1);
                if stamp == u32::MAX {
                    mark.iter_mut().for_each(|m| *m = u32::MAX);
                    stamp = 0;
                }
            } else {
                targets.sort_unstable();
                targets.dedup();
            }
            let id = match ids.get(&targets) {
                Some(&id) => id,
                None => {
                    let id = sets.len() as u32;
                    ids.insert(targets.clone(), id);
                    sets.push(targets);
                    id
                }
            };
            transitions.push((at as u32, a, id));
        }
        at += 1;
    }
    Lts::from_transitions(
        0,
        sets.len() as u32,
        lts.label_names().to_vec(),
        &transitions,
    )
}
