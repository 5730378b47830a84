//! The numberings of states in a search, one type each so that they cannot be mixed up:
//! [`CanonicalId`] (a state's place in a run, the same at every thread count) and
//! [`ProvisionalId`] (a candidate's name while its level runs). A system's own numbering of
//! its states is [`crate::ts::StateNumber`].

#![forbid(unsafe_code)]

use serde::Serialize;

/// The canonical id of a state of a run: ids follow BFS levels, and within a level the order
/// of the least steps that found the states (see [`super::engine`]). Id 0 is the initial
/// state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct CanonicalId(pub u32);

impl CanonicalId {
    /// The initial state's id.
    pub const INITIAL: CanonicalId = CanonicalId(0);

    /// The id as an index into a run's vectors.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for CanonicalId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The provisional id of a candidate state while a level runs (taken in blocks by the
/// workers, so it depends on timing); replaced by a [`CanonicalId`] at the level's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProvisionalId(pub u32);
