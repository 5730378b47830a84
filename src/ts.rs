//! The one interface between models and engines.
//!
//! A [`TransitionSystem`] has an initial state and an on-the-fly successor function reporting
//! `(label, state)` pairs. Label [`TAU`] (0) is the internal action. Explicit LTSs (`lts`) and
//! CSPm processes (`csp`) implement it; the explorer and the refinement checker consume it.
//! This module imports nothing of weft.

#![forbid(unsafe_code)]

use std::hash::Hash;

/// A transition label: an index into the system's label table; [`TAU`] is internal.
pub type Label = u32;

/// The internal action's label.
pub const TAU: Label = 0;

/// A labelled transition system given by its initial state and successor function.
pub trait TransitionSystem: Sync {
    /// A state of the system; equal states must compare equal and hash alike.
    type State: Clone + Eq + Hash + Send + Sync;

    /// The initial state.
    fn initial_state(&self) -> Self::State;

    /// Calls `emit(label, target)` once for every outgoing transition of `state`.
    ///
    /// Requirement: the sequence of `(label, target)` emitted must be a function of the
    /// content of `state` (what it denotes) only: the same sequence, in the same order, in
    /// every run and at every thread count. In particular it must not depend on numbers or
    /// addresses given to states in the order threads happen to meet them. The explorer's
    /// canonical ids (ranked by least parent, then by the index of the step in the parent's
    /// enumeration) rest on it. Sorting by label, then by a canonical key of the target, is
    /// one way to meet it.
    fn for_each_successor(&self, state: &Self::State, emit: &mut dyn FnMut(Label, Self::State));

    /// The printable name of `label` (`"tau"` for [`TAU`]).
    fn label_name(&self, label: Label) -> String;

    /// For a system that numbers its states itself: the number of `state`, fixed when the
    /// state is first created and unique to it (numbers are small: below the count of states
    /// created plus a little slack). The explorer then tells new states by their numbers
    /// instead of hashing them a second time. `None` (the default) for other systems.
    fn state_number(&self, _state: &Self::State) -> Option<StateNumber> {
        None
    }
}

/// A system's own number of one of its states ([`TransitionSystem::state_number`]): fixed
/// when the state is created, so it may depend on the order in which workers created states
/// (unlike a [`crate::explore::CanonicalId`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateNumber(pub u32);

impl StateNumber {
    /// The number as an index (into tables keyed by state).
    #[inline]
    pub fn index(self) -> u64 {
        self.0 as u64
    }
}
