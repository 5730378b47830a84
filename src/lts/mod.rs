//! Explicit labelled transition systems in compact form.
//!
//! States and labels are dense `u32` ids; label 0 is tau. Transitions are grouped per source
//! state (compressed adjacency: `offsets[s]..offsets[s + 1]` indexes `labels`/`targets`).

use crate::ts::{Label, TransitionSystem, TAU};

/// An explicit LTS: initial state, label names, and transitions grouped by source state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lts {
    initial: u32,
    label_names: Vec<String>,
    offsets: Vec<u64>,
    labels: Vec<Label>,
    targets: Vec<u32>,
}

impl Lts {
    /// Builds an LTS with `num_states` states from `(source, label, target)` triples.
    ///
    /// `label_names[0]` names tau. Panics if a triple names a state or label out of range
    /// (callers validate user input before building).
    pub fn from_transitions(
        initial: u32,
        num_states: u32,
        label_names: Vec<String>,
        transitions: &[(u32, Label, u32)],
    ) -> Lts {
        assert!(initial < num_states.max(1), "initial state out of range");
        assert!(!label_names.is_empty(), "label 0 (tau) must be named");
        let n = num_states as usize;
        let mut offsets = vec![0u64; n + 1];
        for &(s, l, t) in transitions {
            assert!((s as usize) < n && (t as usize) < n, "state out of range");
            assert!((l as usize) < label_names.len(), "label out of range");
            offsets[s as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<u64> = offsets[..n].to_vec();
        let mut labels = vec![0; transitions.len()];
        let mut targets = vec![0; transitions.len()];
        for &(s, l, t) in transitions {
            let at = fill[s as usize] as usize;
            labels[at] = l;
            targets[at] = t;
            fill[s as usize] += 1;
        }
        Lts {
            initial,
            label_names,
            offsets,
            labels,
            targets,
        }
    }

    /// The initial state.
    pub fn initial(&self) -> u32 {
        self.initial
    }

    /// Number of states.
    pub fn num_states(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of transitions.
    pub fn num_transitions(&self) -> u64 {
        self.labels.len() as u64
    }

    /// Label names, indexed by label id; entry 0 names tau.
    pub fn label_names(&self) -> &[String] {
        &self.label_names
    }

    /// The outgoing transitions of `state` as parallel slices `(labels, targets)`.
    pub fn outgoing(&self, state: u32) -> (&[Label], &[u32]) {
        let lo = self.offsets[state as usize] as usize;
        let hi = self.offsets[state as usize + 1] as usize;
        (&self.labels[lo..hi], &self.targets[lo..hi])
    }

    /// Iterates over `(label, target)` of the outgoing transitions of `state`.
    pub fn successors(&self, state: u32) -> impl Iterator<Item = (Label, u32)> + '_ {
        let (l, t) = self.outgoing(state);
        l.iter().copied().zip(t.iter().copied())
    }

    /// Iterates over the tau-successors of `state`.
    pub fn tau_successors(&self, state: u32) -> impl Iterator<Item = u32> + '_ {
        self.successors(state)
            .filter(|&(l, _)| l == TAU)
            .map(|(_, t)| t)
    }
}

impl TransitionSystem for Lts {
    type State = u32;

    fn initial_state(&self) -> u32 {
        self.initial
    }

    fn for_each_successor(&self, state: &u32, emit: &mut dyn FnMut(Label, u32)) {
        for (l, t) in self.successors(*state) {
            emit(l, t);
        }
    }

    fn label_name(&self, label: Label) -> String {
        self.label_names[label as usize].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_transitions_by_source() {
        let names = vec!["tau".to_string(), "a".to_string()];
        let lts = Lts::from_transitions(0, 3, names, &[(1, 1, 2), (0, 0, 1), (0, 1, 2)]);
        assert_eq!(lts.num_states(), 3);
        assert_eq!(lts.num_transitions(), 3);
        let mut out: Vec<_> = lts.successors(0).collect();
        out.sort();
        assert_eq!(out, vec![(0, 1), (1, 2)]);
        assert_eq!(lts.tau_successors(0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(lts.successors(2).count(), 0);
    }
}
