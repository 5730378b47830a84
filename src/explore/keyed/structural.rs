//! Fixed-width keys for a system whose canonical encoding has a varying length
//! ([`TransitionSystem::write_structural`]: a CSPm process with a component numbered as met),
//! shared by a distributed exploration (`dist::keys`) and by a distributed check's product
//! ([`StructuralPairKeys`]).
//!
//! A state's key is its structural encoding, padded with zeros to a width the search chooses,
//! its length in the last word (so that the last word's highest bit is free, as the engines
//! ask). A state whose encoding needs more words than the width holds raises the keys'
//! [`KeyTrouble`]: the distributed search stops at the end of the level (every worker of
//! every process learns it at the same level barrier) and its caller searches again from the
//! start with keys twice as wide ([`wider_keys`]).

use std::sync::atomic::{AtomicU8, Ordering};

use super::{FoundAt, KeyedProduct};
use crate::explore::engine::Driven;
use crate::ts::{NoCanonicalEncoding, TransitionSystem};

/// Words of the keys a search starts with, unless told otherwise (or its initial state needs
/// more).
pub const FIRST_KEY_WORDS: usize = 16;

/// The widest keys a search tries (a checkpoint refuses wider ones).
pub const MOST_KEY_WORDS: usize = 1 << 16;

/// What keys met that stops a search at the end of its level (the worst met is kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyFault {
    /// A state's encoding needed more words than the keys hold: search again with wider keys.
    TooNarrow = 1,
    /// A state holds what its encoding does not write (a lazily computed infinite sequence).
    Unwritable = 2,
    /// A key did not read back as a state (processes that loaded different models?).
    Unreadable = 3,
}

/// What a search's keys met so far: nothing, or the worst [`KeyFault`].
#[derive(Debug, Default)]
pub struct KeyTrouble(AtomicU8);

impl KeyTrouble {
    /// Records `fault` (the worst met is kept).
    pub fn raise(&self, fault: KeyFault) {
        // Ordering: Relaxed; each worker reads it after its own expansion of the level, on
        // the thread that raised it (program order makes its own raise visible). Where the
        // workers of a process share the keys (a check's product), another worker may see a
        // raise a level late or not at all: the one that raised it stops the level for all
        // (its stop code goes through the level's all-gather), so no worker needs to.
        self.0.fetch_max(fault as u8, Ordering::Relaxed);
    }

    /// The worst fault met, if any.
    pub fn fault(&self) -> Option<KeyFault> {
        // Ordering: Relaxed; see `raise`.
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(KeyFault::TooNarrow),
            2 => Some(KeyFault::Unwritable),
            _ => Some(KeyFault::Unreadable),
        }
    }
}

/// The words of the keys a search of `ts` by its structural encoding starts with: `first`
/// (default [`FIRST_KEY_WORDS`]) or what the initial state needs, whichever is more (at least
/// three: narrower keys would be packed as one-word encodings are); or why it has none.
pub fn first_key_words<T: TransitionSystem>(
    ts: &T,
    first: Option<usize>,
) -> Result<usize, NoCanonicalEncoding> {
    let mut initial = Vec::new();
    ts.write_structural(&ts.initial_state(), &mut initial)?;
    let width = first
        .unwrap_or(FIRST_KEY_WORDS)
        .max(initial.len() + 1)
        .max(3);
    if width > MOST_KEY_WORDS {
        return Err(too_wide());
    }
    Ok(width)
}

/// The next width after keys of `width` words turned out too narrow, or why there is none.
pub fn wider_keys(width: usize) -> Result<usize, NoCanonicalEncoding> {
    let next = width * 2;
    if next > MOST_KEY_WORDS {
        return Err(too_wide());
    }
    Ok(next)
}

fn too_wide() -> NoCanonicalEncoding {
    NoCanonicalEncoding(format!(
        "a state's structural encoding needs more than {MOST_KEY_WORDS} words"
    ))
}

/// Writes the key of `state` into `words` (its width): its structural encoding (written
/// through `buffer`), zeros, and its length in the last word. A state that does not fit (or
/// does not encode) raises `trouble` and gets a key of no state (its last word the width,
/// which no encoding that fits has).
pub fn write_structural_key<T: TransitionSystem>(
    ts: &T,
    state: &T::State,
    words: &mut [u32],
    buffer: &mut Vec<u32>,
    trouble: &KeyTrouble,
) {
    buffer.clear();
    let last = words.len() - 1;
    words.fill(0);
    match ts.write_structural(state, buffer) {
        Ok(()) if buffer.len() <= last => {
            words[..buffer.len()].copy_from_slice(buffer);
            words[last] = buffer.len() as u32;
        }
        Ok(()) => {
            trouble.raise(KeyFault::TooNarrow);
            words[last] = words.len() as u32;
        }
        Err(_) => {
            trouble.raise(KeyFault::Unwritable);
            words[last] = words.len() as u32;
        }
    }
}

/// The state whose key (of `width` words) is `words`, if it is one.
pub fn read_structural_key<T: TransitionSystem>(
    ts: &T,
    words: &[u32],
    width: usize,
) -> Option<T::State> {
    let (&len, body) = words.split_last()?;
    let len = len as usize;
    if words.len() != width || len > body.len() || body[len..].iter().any(|&w| w != 0) {
        return None;
    }
    ts.read_structural(&body[..len])
}

/// A product over an implementation `ts` that has no fixed-width canonical encoding but a
/// structural one, its pairs keyed as the node followed by the implementation state's
/// structural key of `width` words (see the module documentation). A key is read back
/// ([`TransitionSystem::read_structural`]) to be expanded. A product's keys are made for one
/// search: a search whose keys turn out too narrow is made again with a new product of wider
/// keys.
pub struct StructuralPairKeys<'a, D, T> {
    product: &'a D,
    ts: &'a T,
    width: usize,
    trouble: KeyTrouble,
}

impl<'a, D, T> StructuralPairKeys<'a, D, T>
where
    T: TransitionSystem,
    D: Driven<State = (u32, T::State)>,
{
    /// `product` over `ts`, its implementation states keyed by `width` words.
    pub fn new(product: &'a D, ts: &'a T, width: usize) -> Self {
        StructuralPairKeys {
            product,
            ts,
            width,
            trouble: KeyTrouble::default(),
        }
    }

    /// Writes the key of `pair` into `key` (of [`KeyedProduct::key_width`] words), through
    /// `buffer`.
    pub fn write_key(
        &self,
        (node, state): &(u32, T::State),
        key: &mut [u32],
        buffer: &mut Vec<u32>,
    ) {
        key[0] = *node;
        write_structural_key(self.ts, state, &mut key[1..], buffer, &self.trouble);
    }
}

impl<D, T> KeyedProduct for StructuralPairKeys<'_, D, T>
where
    T: TransitionSystem,
    D: Driven<State = (u32, T::State)>,
{
    fn key_width(&self) -> usize {
        1 + self.width
    }

    fn initial_key(&self, key: &mut [u32]) {
        self.write_key(&self.product.initial_state(), key, &mut Vec::new());
    }

    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt> {
        let Some(state) = read_structural_key(self.ts, &key[1..], self.width) else {
            self.trouble.raise(KeyFault::Unreadable);
            return None;
        };
        let mut target_key = vec![0u32; key.len()];
        let mut buffer = Vec::new();
        self.product
            .expand(&(key[0], state), &mut |_label, target| {
                self.write_key(&target, &mut target_key, &mut buffer);
                emit(&target_key);
            })
            .as_ref()
            .map(FoundAt::from)
    }

    fn padded_keys(&self) -> bool {
        true
    }

    fn trouble(&self) -> Option<&KeyTrouble> {
        Some(&self.trouble)
    }
}
