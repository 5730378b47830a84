//! The per-pair tests of the revivals and refusal-testing models (FDR's `[V=`, `[VD=`, `[R=`,
//! `[RD=`), on the stable members of a normal-form node grouped by acceptance.
//!
//! A revival `(s, X, a)`: after trace `s` the process is in a stable state that refuses `X`
//! and then performs `a`. An implementation state that is stable with acceptance `I` (the
//! visible events it offers) shows the revivals `(s, X, a)` for `X ⊆ Σ ∖ I`, `a ∈ I`, and, when
//! `I = ∅`, the deadlock `s`. Revivals are closed under shrinking `X`, so the specification
//! matches all of them iff it matches those with the largest refusal `Σ ∖ I`: for each `a ∈ I`
//! some stable member `σ` of the node with `a ∈ init(σ) ⊆ I` (it refuses `Σ ∖ I` and does
//! `a`), and for `I = ∅` a stable member with `init(σ) = ∅`. A member `σ` is *admissible* for
//! `I` when `init(σ) ⊆ I`: the test is that some member is admissible (that much is the
//! stable-failures test) and that the admissible acceptances together cover `I`.
//!
//! Refusal testing observes the same at every step of a trace, not only at its end: after a
//! stable implementation state with acceptance `I` performs `a`, the specification's states
//! that match are the `a`-successors (tau-closed) of its *admissible* members only. Refusal
//! traces are closed under shrinking any refusal and under forgetting it (no observation),
//! and a larger specification set matches everything a smaller one does; so at a stable
//! implementation state only the largest refusal `Σ ∖ I` needs to be followed: the successor
//! set it gives is contained in the one of any smaller refusal (and in the one of no
//! observation), so whatever it lets the implementation do, they let it do too. An unstable
//! implementation state observes no refusal. Normal-form nodes are then arbitrary tau-closed
//! sets of specification states, not one per trace; the antichain stays sound, since a smaller
//! set is harder to match.
//!
//! ✓ is a signal (see [`super::Model`]): a state that can perform ✓ is not stable, on either
//! side. (On the specification's side this changes no verdict: ✓ is never in the acceptance
//! of a stable implementation state, so a state offering it would never be admissible.)

use super::normal::{can_terminate, sorted_subset};
use crate::lts::Lts;

/// The stable members of a normal-form node that share one acceptance.
pub(crate) struct StableGroup {
    /// The visible events they offer, sorted.
    pub(crate) acceptance: Box<[u32]>,
    /// The members, sorted.
    pub(crate) members: Box<[u32]>,
}

/// The stable members among `members` (specification states, sorted; stable: neither tau nor
/// ✓), grouped by acceptance (events by `event_of_label`); groups sorted by acceptance.
pub(crate) fn stable_groups(
    spec: &Lts,
    event_of_label: &[u32],
    members: &[u32],
) -> Vec<StableGroup> {
    let mut stable: Vec<(Vec<u32>, u32)> = Vec::new();
    for &s in members {
        if !spec.is_stable(s) || can_terminate(spec, s) {
            continue;
        }
        let mut acceptance: Vec<u32> = spec
            .enabled(s)
            .iter()
            .map(|&l| event_of_label[l as usize])
            .collect();
        acceptance.sort_unstable();
        acceptance.dedup();
        stable.push((acceptance, s));
    }
    stable.sort_unstable();
    stable
        .chunk_by(|a, b| a.0 == b.0)
        .map(|group| StableGroup {
            acceptance: group[0].0.clone().into(),
            members: group.iter().map(|&(_, s)| s).collect(),
        })
        .collect()
}

/// The groups admissible for a stable implementation state whose acceptance is `enabled`
/// (sorted): those whose acceptance is a subset of it.
pub(crate) fn admissible<'g>(
    groups: &'g [StableGroup],
    enabled: &'g [u32],
) -> impl Iterator<Item = &'g StableGroup> + 'g {
    groups
        .iter()
        .filter(move |g| sorted_subset(&g.acceptance, enabled))
}

/// The union of the acceptances of the groups admissible for `enabled`, sorted, or `None`
/// when no group is (the specification cannot refuse what the implementation state refuses).
pub(crate) fn admissible_union(groups: &[StableGroup], enabled: &[u32]) -> Option<Vec<u32>> {
    let mut any = false;
    let mut union: Vec<u32> = Vec::new();
    for g in admissible(groups, enabled) {
        any = true;
        union.extend_from_slice(&g.acceptance);
    }
    union.sort_unstable();
    union.dedup();
    any.then_some(union)
}

/// The members of the groups admissible for `enabled`, sorted.
pub(crate) fn admissible_members(groups: &[StableGroup], enabled: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = admissible(groups, enabled)
        .flat_map(|g| g.members.iter().copied())
        .collect();
    out.sort_unstable();
    out
}

/// What the specification says of a revival the implementation shows: the acceptances of its
/// stable states (after the trace) that can perform `event` (each sorted, the list sorted and
/// without repeats), and the events of those acceptances that `enabled` lacks (sorted).
pub(crate) fn revival_evidence(
    groups: &[StableGroup],
    enabled: &[u32],
    event: u32,
) -> (Vec<Vec<u32>>, Vec<u32>) {
    let mut acceptances: Vec<Vec<u32>> = Vec::new();
    let mut refused: Vec<u32> = Vec::new();
    for g in groups {
        if g.acceptance.binary_search(&event).is_ok() {
            acceptances.push(g.acceptance.to_vec());
            refused.extend(
                g.acceptance
                    .iter()
                    .filter(|e| enabled.binary_search(e).is_err()),
            );
        }
    }
    refused.sort_unstable();
    refused.dedup();
    (acceptances, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_admissibility_and_union() {
        // 0 -a-> 0, 0 -b-> 0 (accepts {a, b}); 1 -a-> 1 (accepts {a}); 2 -tau-> 0 (unstable);
        // 3 (accepts nothing); 4 -a-> 3 (accepts {a}, with 1).
        let names = vec!["tau".into(), "a".into(), "b".into()];
        let spec = Lts::from_transitions(
            0,
            5,
            names,
            &[(0, 1, 0), (0, 2, 0), (1, 1, 1), (2, 0, 0), (4, 1, 3)],
        );
        let groups = stable_groups(&spec, &[0, 1, 2], &[0, 1, 2, 3, 4]);
        let accs: Vec<&[u32]> = groups.iter().map(|g| &*g.acceptance).collect();
        assert_eq!(accs, vec![&[][..], &[1][..], &[1, 2][..]]);
        assert_eq!(&*groups[1].members, &[1, 4]);
        // A state offering {a}: {} and {a} are admissible, and cover {a}.
        assert_eq!(admissible_union(&groups, &[1]), Some(vec![1]));
        assert_eq!(admissible_members(&groups, &[1]), vec![1, 3, 4]);
        // A state offering {b}: only {} is admissible, which does not cover b.
        assert_eq!(admissible_union(&groups, &[2]), Some(vec![]));
        let (accs, refused) = revival_evidence(&groups, &[2], 2);
        assert_eq!(accs, vec![vec![1, 2]]);
        assert_eq!(refused, vec![1]);
        // Without the deadlocked state nothing is admissible for {b}.
        let groups = stable_groups(&spec, &[0, 1, 2], &[0, 1, 2]);
        assert_eq!(admissible_union(&groups, &[2]), None);
        assert_eq!(admissible_union(&groups, &[]), None);
    }
}
