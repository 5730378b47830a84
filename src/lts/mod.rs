//! Explicit labelled transition systems in compact form.
//!
//! States and labels are dense `u32` ids; label 0 is tau. Transitions are grouped per source
//! state (compressed adjacency: `offsets[s]..offsets[s + 1]` indexes `labels`/`targets`), in the
//! order in which they were given (for `.aut` files: file order).
//!
//! Only the states `0..covered` that occur in some transition (or are initial) have an entry
//! in `offsets`; the remaining states `covered..num_states` exist (a header may declare them)
//! but have no transitions, so a header declaring billions of isolated states costs no memory.
//!
//! Derived facts (tau-SCCs, divergence, stability, enabled sets, reachability, determinism,
//! tau-closures) are computed on first use and cached inside the `Lts` (see [`facts`]); an `Lts`
//! is immutable, so the caches never go stale. Equality ignores the caches.
//!
//! Submodules: [`aut`] (the Aldebaran `.aut` reader and writer), [`dot`] (Graphviz output),
//! [`facts`] (the derived facts).

#![forbid(unsafe_code)]

pub mod aut;
pub mod dot;
pub mod facts;

pub use aut::{read_aut, read_aut_file, read_aut_file_on, write_aut, AutError, AutOptions};
pub use dot::write_dot;
pub use facts::{LtsSummary, TauClosures};

use crate::ts::{Label, TransitionSystem, TAU};

/// An explicit LTS: initial state, label names, and transitions grouped by source state.
#[derive(Clone)]
pub struct Lts {
    initial: u32,
    num_states: u32,
    label_names: Vec<String>,
    /// `offsets.len() - 1` states are covered; states beyond have no transitions.
    offsets: Vec<u64>,
    labels: Vec<Label>,
    targets: Vec<u32>,
    /// The state numbers of the input, when they were renumbered densely on reading (an
    /// `.aut` file using a few scattered numbers up to 4 billion): `numbers[s]` is the number
    /// of covered state `s`.
    numbers: Option<Box<[u32]>>,
    facts: facts::FactsCache,
}

impl PartialEq for Lts {
    /// Structural equality: same initial state, state count, label names, and transitions in
    /// the same order per state. Cached facts and the input's state numbers are ignored.
    fn eq(&self, other: &Lts) -> bool {
        if self.initial != other.initial
            || self.num_states != other.num_states
            || self.label_names != other.label_names
            || self.labels.len() != other.labels.len()
        {
            return false;
        }
        // `covered` may differ between equal systems (a trailing state without transitions);
        // compare state by state over the larger covered range.
        let covered = self.covered().max(other.covered());
        (0..covered).all(|s| self.outgoing(s) == other.outgoing(s))
    }
}

impl Eq for Lts {}

impl std::fmt::Debug for Lts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lts")
            .field("initial", &self.initial)
            .field("num_states", &self.num_states)
            .field("label_names", &self.label_names)
            .field("num_transitions", &self.labels.len())
            .finish_non_exhaustive()
    }
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
        Lts::from_parts(initial, num_states, label_names, offsets, labels, targets)
    }

    /// Assembles an LTS from checked compressed-adjacency parts.
    ///
    /// Callers guarantee: `offsets` non-empty, non-decreasing, starting at 0 and ending at
    /// `labels.len() == targets.len()`; `offsets.len() - 1 <= num_states`; every target and
    /// `initial` below `offsets.len() - 1` (the covered states; `initial` may be 0 when
    /// `num_states == 0`); every label below `label_names.len()`.
    pub(crate) fn from_parts(
        initial: u32,
        num_states: u32,
        label_names: Vec<String>,
        offsets: Vec<u64>,
        labels: Vec<Label>,
        targets: Vec<u32>,
    ) -> Lts {
        debug_assert!(!offsets.is_empty() && offsets.len() - 1 <= num_states as usize);
        debug_assert!((initial as usize) < offsets.len() - 1 || num_states == 0);
        debug_assert_eq!(offsets.last().copied(), Some(labels.len() as u64));
        debug_assert_eq!(labels.len(), targets.len());
        Lts {
            initial,
            num_states,
            label_names,
            offsets,
            labels,
            targets,
            numbers: None,
            facts: facts::FactsCache::default(),
        }
    }

    /// This LTS with its covered states known by `numbers` in the input (`numbers[s]` for
    /// state `s`; one per covered state).
    pub(crate) fn with_numbers(mut self, numbers: Vec<u32>) -> Lts {
        debug_assert_eq!(numbers.len(), self.covered() as usize);
        self.numbers = Some(numbers.into_boxed_slice());
        self
    }

    /// The number of `state` in the input it was read from: `state` itself unless the reader
    /// renumbered sparse state numbers densely (see [`aut`]). Use it when showing a state to
    /// a user.
    pub fn state_number(&self, state: u32) -> u32 {
        match &self.numbers {
            Some(numbers) => numbers.get(state as usize).copied().unwrap_or(state),
            None => state,
        }
    }

    /// The initial state.
    pub fn initial(&self) -> u32 {
        self.initial
    }

    /// Number of states.
    pub fn num_states(&self) -> u32 {
        self.num_states
    }

    /// Number of transitions.
    pub fn num_transitions(&self) -> u64 {
        self.labels.len() as u64
    }

    /// Label names, indexed by label id; entry 0 names tau.
    pub fn label_names(&self) -> &[String] {
        &self.label_names
    }

    /// The id of the label called `name`, if any (`"tau"` gives [`TAU`]).
    pub fn label_id(&self, name: &str) -> Option<Label> {
        self.label_names
            .iter()
            .position(|n| n == name)
            .map(|i| i as Label)
    }

    /// Number of states with an entry in the adjacency arrays; every state at or above this
    /// has no outgoing transitions and is not the target of any transition.
    pub(crate) fn covered(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// The outgoing transitions of `state` as parallel slices `(labels, targets)`.
    ///
    /// Panics if `state >= num_states()`.
    pub fn outgoing(&self, state: u32) -> (&[Label], &[u32]) {
        assert!(state < self.num_states, "state {state} out of range");
        let s = state as usize;
        if s + 1 >= self.offsets.len() {
            return (&[], &[]);
        }
        let lo = self.offsets[s] as usize;
        let hi = self.offsets[s + 1] as usize;
        (&self.labels[lo..hi], &self.targets[lo..hi])
    }

    /// Number of outgoing transitions of `state`.
    pub fn out_degree(&self, state: u32) -> usize {
        self.outgoing(state).0.len()
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

    /// Iterates over all transitions `(source, label, target)`, grouped by source state.
    pub fn transitions(&self) -> impl Iterator<Item = (u32, Label, u32)> + '_ {
        (0..self.covered()).flat_map(move |s| self.successors(s).map(move |(l, t)| (s, l, t)))
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

    /// An LTS's states are numbers already.
    fn state_number(&self, state: &u32) -> Option<crate::ts::StateNumber> {
        Some(crate::ts::StateNumber(*state))
    }

    /// A state's number is its canonical encoding: it comes from the file (or the model the
    /// LTS was made from), not from the order of a run.
    /// One word, or two when numbers reach the highest bit (kept clear in the last word).
    fn encoded_width(&self) -> Result<usize, crate::ts::NoCanonicalEncoding> {
        Ok(if self.num_states() <= 1 << 31 { 1 } else { 2 })
    }

    fn encoded_bits(&self) -> Result<u32, crate::ts::NoCanonicalEncoding> {
        // States are `0..num_states`.
        Ok((64 - (self.num_states() as u64).saturating_sub(1).leading_zeros()).max(1))
    }

    fn encode_state(&self, state: &u32, words: &mut [u32]) {
        words[0] = *state;
        if let Some(w) = words.get_mut(1) {
            *w = 0;
        }
    }

    fn decode_state(&self, words: &[u32]) -> Option<u32> {
        let width = if self.num_states() <= 1 << 31 { 1 } else { 2 };
        match words {
            [s] | [s, 0] if words.len() == width && *s < self.num_states() => Some(*s),
            _ => None,
        }
    }

    fn for_each_encoded_successor(&self, words: &[u32], emit: &mut dyn FnMut(Label, &[u32])) {
        let mut buffer = [0u32; 2];
        for (l, t) in self.successors(words[0]) {
            buffer[0] = t;
            emit(l, &buffer[..words.len()]);
        }
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
        assert_eq!(
            lts.transitions().collect::<Vec<_>>(),
            vec![(0, 0, 1), (0, 1, 2), (1, 1, 2)]
        );
    }

    #[test]
    fn lts_is_shareable_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Lts>();
    }

    #[test]
    fn equality_ignores_caches_and_coverage() {
        let names = vec!["tau".to_string(), "a".to_string()];
        let a = Lts::from_transitions(0, 3, names.clone(), &[(0, 1, 1)]);
        let b = Lts::from_parts(0, 3, names, vec![0, 1, 1], vec![1], vec![1]);
        assert!(a.is_divergent(0) == b.is_divergent(0));
        assert_eq!(a, b);
        assert_eq!(b.outgoing(2), (&[][..], &[][..]));
    }
}
