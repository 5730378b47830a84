//! Fixed-width keys for a system whose canonical encoding has a varying length
//! ([`TransitionSystem::write_structural`]): a CSPm process with a component numbered as met
//! (too large to explore ahead) has no fixed-width encoding, but every state of it writes a
//! structural one, derived from the script alone.
//!
//! A distributed run of such a system keys its states by [`StructuralKeys`]: the structural
//! encoding, padded with zeros to a width the run chooses, its length in the last word (so
//! that the last word's highest bit is free, as the engines ask). A state whose encoding
//! needs more words than the width holds stops the level ([`KeyTrouble`]): the stop is
//! gathered at the level barrier with the stop codes (every worker of every process learns
//! it at the same level), and every worker searches again from the start with keys twice as
//! wide (as the determinism search does with its subset keys). No result of a search that
//! stopped so is kept: the result is that of the search that fitted, which is one process's.

#![forbid(unsafe_code)]

use std::sync::Mutex;

use super::DistError;
use crate::explore::keyed::{read_structural_key, write_structural_key};
pub use crate::explore::keyed::{KeyFault, KeyTrouble, FIRST_KEY_WORDS, MOST_KEY_WORDS};
use crate::ts::{Label, NoCanonicalEncoding, TransitionSystem};

/// How a distributed run keys a system's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keying {
    /// By its canonical encoding of this many words.
    Fixed(usize),
    /// By its structural encoding, padded to this many words to begin with.
    Structural(usize),
}

impl Keying {
    /// How `ts` is keyed: by its fixed-width encoding if it has one, else by its structural
    /// one, starting at `first` words (default [`FIRST_KEY_WORDS`]) or at the words the initial
    /// state needs, whichever is more. Why neither works otherwise.
    pub fn of<T: TransitionSystem>(ts: &T, first: Option<usize>) -> Result<Keying, DistError> {
        let fixed = match ts.encoded_width() {
            Ok(width) => return Ok(Keying::Fixed(width)),
            Err(why) => why,
        };
        crate::explore::keyed::first_key_words(ts, first)
            .map(Keying::Structural)
            .map_err(|e| DistError::NoEncoding(NoCanonicalEncoding(format!("{fixed}; and {e}"))))
    }
}

/// The next width after keys of `width` words turned out too narrow, or the error if there
/// is none.
pub(super) fn wider(width: usize) -> Result<usize, DistError> {
    crate::explore::keyed::wider_keys(width).map_err(DistError::NoEncoding)
}

impl KeyTrouble {
    /// The error that stops the search, if any: [`DistError::KeyTooNarrow`] for keys too
    /// narrow (the search starts again with wider ones), a failure else.
    pub(super) fn error(&self) -> Option<DistError> {
        match self.fault()? {
            KeyFault::TooNarrow => Some(DistError::KeyTooNarrow),
            KeyFault::Unwritable => Some(DistError::NoEncoding(NoCanonicalEncoding(
                "a state holds a value its structural encoding does not write (a lazily \
                 computed infinite sequence)"
                    .into(),
            ))),
            KeyFault::Unreadable => Some(DistError::Worker(
                "a state's key did not read back as a state (processes that loaded different \
                 models?)"
                    .into(),
            )),
        }
    }
}

/// A system seen through fixed-width keys of its structural encoding (see the module
/// documentation): its encoding is the key; the successors of a key are those of the state
/// it reads back as. One per worker (its [`KeyTrouble`] is the worker's).
pub struct StructuralKeys<'a, T> {
    ts: &'a T,
    width: usize,
    trouble: KeyTrouble,
    /// The encoding being written (one worker's thread uses it; the lock is never contended).
    buffer: Mutex<Vec<u32>>,
}

impl<'a, T: TransitionSystem> StructuralKeys<'a, T> {
    /// `ts` keyed by its structural encoding padded to `width` words.
    pub fn new(ts: &'a T, width: usize) -> Self {
        StructuralKeys {
            ts,
            width,
            trouble: KeyTrouble::default(),
            buffer: Mutex::new(Vec::new()),
        }
    }

    /// What the keys met so far.
    pub fn trouble(&self) -> &KeyTrouble {
        &self.trouble
    }
}

impl<T: TransitionSystem> TransitionSystem for StructuralKeys<'_, T> {
    type State = T::State;

    fn initial_state(&self) -> T::State {
        self.ts.initial_state()
    }

    fn for_each_successor(&self, state: &T::State, emit: &mut dyn FnMut(Label, T::State)) {
        self.ts.for_each_successor(state, emit);
    }

    fn label_name(&self, label: Label) -> String {
        self.ts.label_name(label)
    }

    fn encoded_width(&self) -> Result<usize, NoCanonicalEncoding> {
        Ok(self.width)
    }

    /// The encoding, zeros, and its length in the last word; a state that does not fit (or
    /// does not encode) raises the trouble and writes a key of no state (its last word
    /// `width`, which no encoding that fits has).
    fn encode_state(&self, state: &T::State, words: &mut [u32]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        write_structural_key(self.ts, state, words, &mut buffer, &self.trouble);
    }

    fn decode_state(&self, words: &[u32]) -> Option<T::State> {
        read_structural_key(self.ts, words, self.width)
    }

    /// As the default, but a key that reads back as no state raises the trouble (rather than
    /// passing for a deadlock).
    fn for_each_encoded_successor(&self, words: &[u32], emit: &mut dyn FnMut(Label, &[u32])) {
        let Some(state) = self.decode_state(words) else {
            self.trouble.raise(KeyFault::Unreadable);
            return;
        };
        let mut target_words = vec![0; words.len()];
        self.ts.for_each_successor(&state, &mut |label, target| {
            self.encode_state(&target, &mut target_words);
            emit(label, &target_words);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csp::{load_str, CspSystem};

    /// A process with a component too large to explore ahead (an unbounded counter).
    fn counter() -> CspSystem {
        let text = "channel up, down\nC(n) = up -> C(n+1) [] n > 0 & down -> C(n-1)\n\
                    B = up -> down -> B\nSYSTEM = C(0) [| {up} |] (B ||| B)\n";
        let script = std::sync::Arc::new(
            load_str("counter.csp", text, std::path::Path::new(".")).expect("loads"),
        );
        let process = script.process("SYSTEM", &[]).expect("SYSTEM");
        CspSystem::new(&script, &process).expect("the system")
    }

    /// A key reads back as its state; a state too wide for narrow keys raises the trouble and
    /// writes a key that reads back as nothing.
    #[test]
    fn keys_read_back_and_narrow_keys_raise_the_trouble() {
        let ts = counter();
        let Ok(Keying::Structural(width)) = Keying::of(&ts, None) else {
            panic!("a structural keying");
        };
        let keys = StructuralKeys::new(&ts, width);
        let initial = ts.initial_state();
        let mut words = vec![0; width];
        keys.encode_state(&initial, &mut words);
        assert!(keys.trouble().error().is_none());
        assert_eq!(keys.decode_state(&words), Some(initial));
        assert!(words[width - 1] < 1 << 31);
        let mut changed = words.clone();
        changed[width - 1] += 1;
        assert_eq!(keys.decode_state(&changed), None);

        let mut encoding = Vec::new();
        ts.write_structural(&initial, &mut encoding).unwrap();
        let narrow = StructuralKeys::new(&ts, encoding.len());
        let mut words = vec![0; encoding.len()];
        narrow.encode_state(&initial, &mut words);
        assert!(matches!(
            narrow.trouble().error(),
            Some(DistError::KeyTooNarrow)
        ));
        assert_eq!(narrow.decode_state(&words), None);
    }
}
