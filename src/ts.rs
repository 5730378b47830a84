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

    /// For a system whose states are single words that identify them (a system driven by its
    /// packed canonical encodings): the state as a key. Memos of facts about states key them
    /// by it where the system gives no [`TransitionSystem::state_number`]. `None` (the default)
    /// for other systems.
    fn state_key(&self, _state: &Self::State) -> Option<u64> {
        None
    }

    /// The number of words of the canonical encoding of every state
    /// ([`TransitionSystem::encode_state`]), or why this system has none.
    ///
    /// A canonical encoding is what lets a state leave the process that made it: be sent to
    /// another process of a distributed run, or written to a checkpoint and read back by a
    /// later run. It is a fixed number of `u32` words that every process loading the same
    /// model derives identically from the model alone: never an address, an intern number or
    /// any number given in the order threads happened to meet states. The highest bit of the
    /// last word is always 0 (engines may use it as a mark).
    fn encoded_width(&self) -> Result<usize, NoCanonicalEncoding> {
        Err(NoCanonicalEncoding(
            "this system has no canonical encoding of its states".to_string(),
        ))
    }

    /// A bound on the canonical encodings: read as one number (word 0 lowest), every encoding
    /// is below `2^encoded_bits`. An engine may keep other data in the bits above (the
    /// default, `32 * width - 1`, leaves only the highest bit of the last word).
    fn encoded_bits(&self) -> Result<u32, NoCanonicalEncoding> {
        Ok(self.encoded_width()? as u32 * 32 - 1)
    }

    /// Writes the canonical encoding of `state` into `words` (exactly
    /// [`TransitionSystem::encoded_width`] words). Called only when `encoded_width` is `Ok`.
    fn encode_state(&self, _state: &Self::State, _words: &mut [u32]) {
        unreachable!("encode_state called on a system without a canonical encoding")
    }

    /// The state whose canonical encoding is `words`, or `None` if no state of this system
    /// encodes to them (a corrupted checkpoint, another model's message). Called only when
    /// `encoded_width` is `Ok`; safe to call from any thread.
    fn decode_state(&self, _words: &[u32]) -> Option<Self::State> {
        None
    }

    /// For a system with no canonical encoding of a fixed width
    /// ([`TransitionSystem::encoded_width`] is `Err`): appends a canonical encoding of `state`
    /// of varying length to `out` (as canonical as the fixed-width one: words derived from the
    /// model alone, the same in every process), or says why it cannot. A distributed run keys
    /// such a system's states by it, padded to a width of its own choosing. The default has
    /// none.
    fn write_structural(
        &self,
        _state: &Self::State,
        _out: &mut Vec<u32>,
    ) -> Result<(), NoCanonicalEncoding> {
        Err(NoCanonicalEncoding(
            "this system has no canonical encoding of its states".to_string(),
        ))
    }

    /// The state whose encoding of varying length
    /// ([`TransitionSystem::write_structural`]) is `words`, or `None` if no state of this
    /// system writes them. Safe to call from any thread.
    fn read_structural(&self, _words: &[u32]) -> Option<Self::State> {
        None
    }

    /// Calls `emit(label, encoding)` for every outgoing transition of the state encoded by
    /// `words`, with the encodings of the targets, in the order of
    /// [`TransitionSystem::for_each_successor`]. Called only when `encoded_width` is `Ok`.
    ///
    /// The default decodes, enumerates and encodes; a system that can compute successors on
    /// encodings directly overrides it, so that an engine storing encodings (compactly, or on
    /// other machines) makes the system keep no state of its own.
    fn for_each_encoded_successor(&self, words: &[u32], emit: &mut dyn FnMut(Label, &[u32])) {
        let Some(state) = self.decode_state(words) else {
            return;
        };
        let mut buffer = vec![0; words.len()];
        self.for_each_successor(&state, &mut |label, target| {
            self.encode_state(&target, &mut buffer);
            emit(label, &buffer);
        });
    }
}

/// Why a system cannot encode its states canonically ([`TransitionSystem::encoded_width`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCanonicalEncoding(pub String);

impl std::fmt::Display for NoCanonicalEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoCanonicalEncoding {}

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
