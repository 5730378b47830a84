//! Sequence values: a range of a shared buffer, so that `tail(s)`, the patterns `<x>^xs` and
//! `xs^<x>` and every other slice of a sequence take constant time instead of copying the
//! rest (a function recursing over a sequence of `n` elements was quadratic in `n`).
//!
//! Equality, ordering and hashing are those of the elements in order, whatever buffer they
//! lie in: two sequences with the same elements are the same value. The hash of a range is
//! computed in constant time from prefix hashes of its buffer (a polynomial hash modulo the
//! Mersenne prime 2^61 - 1 over the elements' own hashes), computed once per buffer the
//! first time one of its ranges is hashed; so a function over the suffixes of a sequence
//! (whose calls the memo of results keys by their arguments) hashes each in constant time.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::value::Value;
use crate::hash::WordBuildHasher;

/// A finite sequence of values: the elements `start..end` of a shared buffer.
#[derive(Clone)]
pub struct SeqValue {
    buf: Arc<SeqBuffer>,
    start: usize,
    end: usize,
}

/// The elements of one or more sequences, with their prefix hashes once asked for.
struct SeqBuffer {
    items: Box<[Value]>,
    /// `prefix[i]`: the polynomial hash of `items[..i]` (see [`SeqValue::content_hash`]).
    prefix: OnceLock<Box<[u64]>>,
}

/// The modulus of the polynomial hash: the Mersenne prime 2^61 - 1.
const MODULUS: u64 = (1 << 61) - 1;
/// The base of the polynomial hash (any number below the modulus, far from 0 and 1).
const BASE: u64 = 0x0a3b_95c6_2f1d_7e49 % MODULUS;

fn mul_mod(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    let folded = (p & u128::from(MODULUS)) + (p >> 61);
    let r = folded as u64;
    if r >= MODULUS {
        r - MODULUS
    } else {
        r
    }
}

fn add_mod(a: u64, b: u64) -> u64 {
    let r = a + b;
    if r >= MODULUS {
        r - MODULUS
    } else {
        r
    }
}

fn pow_mod(mut base: u64, mut exp: usize) -> u64 {
    let mut r = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            r = mul_mod(r, base);
        }
        base = mul_mod(base, base);
        exp >>= 1;
    }
    r
}

/// The hash of one element, reduced below the modulus.
fn element_hash(v: &Value) -> u64 {
    WordBuildHasher::default().hash_one(v) % MODULUS
}

impl SeqValue {
    /// The empty sequence.
    pub fn empty() -> SeqValue {
        SeqValue::from(Vec::new())
    }

    /// The elements, in order.
    pub fn as_slice(&self) -> &[Value] {
        &self.buf.items[self.start..self.end]
    }

    /// The elements `range` of this sequence (indices relative to it), sharing its buffer:
    /// constant time. Panics if `range` is out of bounds, as slicing does.
    pub fn slice(&self, range: Range<usize>) -> SeqValue {
        assert!(range.start <= range.end && range.end <= self.len());
        SeqValue {
            buf: self.buf.clone(),
            start: self.start + range.start,
            end: self.start + range.end,
        }
    }

    /// The sequence without its first `k` elements (empty when it has fewer).
    pub fn skip(&self, k: usize) -> SeqValue {
        self.slice(k.min(self.len())..self.len())
    }

    /// The polynomial hash of the elements (`sum h(x_i) * BASE^(n-1-i)` modulo 2^61 - 1):
    /// constant time once the buffer's prefix hashes are made.
    fn content_hash(&self) -> u64 {
        let prefix = self.buf.prefix.get_or_init(|| {
            let mut out = Vec::with_capacity(self.buf.items.len() + 1);
            let mut h = 0;
            out.push(h);
            for v in self.buf.items.iter() {
                h = add_mod(mul_mod(h, BASE), element_hash(v));
                out.push(h);
            }
            out.into_boxed_slice()
        });
        let shifted = mul_mod(prefix[self.start], pow_mod(BASE, self.end - self.start));
        add_mod(prefix[self.end], MODULUS - shifted)
    }

    /// True if both are the same range of the same buffer.
    fn same_range(&self, other: &SeqValue) -> bool {
        Arc::ptr_eq(&self.buf, &other.buf) && self.start == other.start && self.end == other.end
    }
}

impl std::ops::Deref for SeqValue {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        self.as_slice()
    }
}

impl std::fmt::Debug for SeqValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl PartialEq for SeqValue {
    fn eq(&self, other: &SeqValue) -> bool {
        if self.len() != other.len() {
            return false;
        }
        if self.same_range(other) {
            return true;
        }
        // where both buffers are hashed already, different hashes settle it at once
        if self.buf.prefix.get().is_some()
            && other.buf.prefix.get().is_some()
            && self.content_hash() != other.content_hash()
        {
            return false;
        }
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SeqValue {}

impl PartialOrd for SeqValue {
    fn partial_cmp(&self, other: &SeqValue) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SeqValue {
    fn cmp(&self, other: &SeqValue) -> Ordering {
        if self.same_range(other) {
            return Ordering::Equal;
        }
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for SeqValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        state.write_u64(self.content_hash());
    }
}

impl From<Vec<Value>> for SeqValue {
    fn from(items: Vec<Value>) -> SeqValue {
        let end = items.len();
        SeqValue {
            buf: Arc::new(SeqBuffer {
                items: items.into_boxed_slice(),
                prefix: OnceLock::new(),
            }),
            start: 0,
            end,
        }
    }
}

impl From<&[Value]> for SeqValue {
    fn from(items: &[Value]) -> SeqValue {
        SeqValue::from(items.to_vec())
    }
}

impl<const N: usize> From<[Value; N]> for SeqValue {
    fn from(items: [Value; N]) -> SeqValue {
        SeqValue::from(Vec::from(items))
    }
}

impl FromIterator<Value> for SeqValue {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> SeqValue {
        SeqValue::from(iter.into_iter().collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(r: Range<i64>) -> SeqValue {
        r.map(Value::Int).collect()
    }

    fn hash_of(s: &SeqValue) -> u64 {
        WordBuildHasher::default().hash_one(s)
    }

    #[test]
    fn slices_equal_fresh_sequences_and_hash_alike() {
        let whole = ints(0..50);
        for a in 0..50 {
            for b in a..=50 {
                let part = whole.slice(a as usize..b as usize);
                let fresh = ints(a..b);
                assert_eq!(part, fresh);
                assert_eq!(part.cmp(&fresh), Ordering::Equal);
                assert_eq!(hash_of(&part), hash_of(&fresh), "{a}..{b}");
            }
        }
        // ranges of the same length with different elements differ
        assert_ne!(whole.slice(0..3), whole.slice(1..4));
        assert_ne!(hash_of(&whole.slice(0..3)), hash_of(&whole.slice(1..4)));
        assert!(whole.slice(0..3) < whole.slice(1..4));
        assert!(whole.slice(0..3) < whole.slice(0..4));
    }
}
