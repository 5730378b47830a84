//! The canonical numbering of an explored process's LTS.

use crate::csp::CspState;
use crate::lts::Lts;
use crate::ts::Label;

/// Renumbers an explored LTS so that the numbering, and so every counterexample found on it,
/// does not depend on the explorer's thread count or timing: breadth-first from the initial
/// state, following transitions in the order of their label names; states reached by the
/// same least path (label sequence) are ordered by their process printed as CSPm (`describe`,
/// called only for such ties). Returns the LTS and the process state of each new id.
pub(super) fn canonical_numbering(
    lts: &Lts,
    states: &[CspState],
    describe: impl Fn(CspState) -> String,
) -> (Lts, Vec<CspState>) {
    const UNSEEN: u32 = u32::MAX;
    let names = lts.label_names();
    let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
    by_name.sort_by(|&a, &b| (a != 0, &names[a as usize]).cmp(&(b != 0, &names[b as usize])));
    let mut rank = vec![0u32; names.len()];
    for (r, &l) in by_name.iter().enumerate() {
        rank[l as usize] = r as u32;
    }
    let n = lts.num_states() as usize;
    let mut new_id = vec![UNSEEN; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    // The current level as (group, old state); a group holds the states of one least path.
    let mut level: Vec<(u32, u32)> = vec![(0, lts.initial())];
    new_id[lts.initial() as usize] = 0;
    let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
    while !level.is_empty() {
        // Order each group of ties by the printed process, then number the level.
        let mut start = 0;
        while start < level.len() {
            let mut end = start + 1;
            while end < level.len() && level[end].0 == level[start].0 {
                end += 1;
            }
            if end - start > 1 {
                level[start..end].sort_by_cached_key(|&(_, s)| describe(states[s as usize]));
            }
            start = end;
        }
        for &(_, s) in &level {
            new_id[s as usize] = order.len() as u32;
            order.push(s);
        }
        candidates.clear();
        for (position, &(_, s)) in level.iter().enumerate() {
            for (l, t) in lts.successors(s) {
                candidates.push((position as u32, rank[l as usize], t));
            }
        }
        candidates.sort_by_key(|&(position, r, _)| (position, r));
        let mut next: Vec<(u32, u32)> = Vec::new();
        let mut key = None;
        let mut group = 0u32;
        for &(position, r, t) in &candidates {
            if new_id[t as usize] != UNSEEN {
                continue;
            }
            // A provisional mark; the final id is given when the next level is numbered.
            new_id[t as usize] = UNSEEN - 1;
            let parent_group = level[position as usize].0;
            if key != Some((parent_group, r)) {
                if key.is_some() {
                    group += 1;
                }
                key = Some((parent_group, r));
            }
            next.push((group, t));
        }
        level = next;
    }
    let mut transitions: Vec<(u32, Label, u32)> =
        Vec::with_capacity(lts.num_transitions() as usize);
    for (id, &old) in order.iter().enumerate() {
        let first = transitions.len();
        transitions.extend(
            lts.successors(old)
                .map(|(l, t)| (id as u32, l, new_id[t as usize])),
        );
        transitions[first..].sort_unstable();
    }
    let renumbered = Lts::from_transitions(0, order.len() as u32, names.to_vec(), &transitions);
    let states = order.iter().map(|&s| states[s as usize]).collect();
    (renumbered, states)
}
