//! [`Layout`]: how the state of a network, one small number per leaf position, is packed into
//! `u32` words (as FDR packs its state vectors): position `i` takes just the bits its leaf
//! numbers need.

#![forbid(unsafe_code)]

/// Where the number of one position lives in a packed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    word: u32,
    shift: u32,
    /// `bits` ones. In position 0 also the value reserved for Ω (never a leaf's number
    /// there); other positions may use it for a leaf.
    mask: u32,
}

/// The packing of a network's states. Fields never straddle two words.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    fields: Vec<Field>,
    words: usize,
}

impl Layout {
    /// One field per position of `bits[i]` bits (1 to 32), packed in order.
    pub(crate) fn new(bits: &[u32]) -> Layout {
        let mut fields = Vec::with_capacity(bits.len());
        let (mut word, mut used) = (0u32, 0u32);
        for &b in bits {
            assert!((1..=32).contains(&b), "a field has 1 to 32 bits");
            if used + b > 32 {
                word += 1;
                used = 0;
            }
            let mask = if b == 32 { u32::MAX } else { (1 << b) - 1 };
            fields.push(Field {
                word,
                shift: used,
                mask,
            });
            used += b;
        }
        Layout {
            fields,
            words: word as usize + 1,
        }
    }

    /// The bits a field needs for the numbers `0..=count` (`0..count` plus a reserved value
    /// `count`); at least 1.
    pub(crate) fn bits_for(count: u64) -> u32 {
        (64 - count.leading_zeros()).max(1)
    }

    /// Words per packed state.
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    /// The bits a packed state spans, read as one number (word 0 lowest): every packed state
    /// is below `2^bits`.
    pub(crate) fn bits(&self) -> u32 {
        let last = self.words as u32 - 1;
        let top = self
            .fields
            .iter()
            .filter(|f| f.word == last)
            .map(|f| f.shift + f.mask.count_ones())
            .max()
            .unwrap_or(0);
        32 * last + top
    }

    /// Whether the highest bit of the last word is in no field (always 0 in a packed state).
    pub(crate) fn top_bit_free(&self) -> bool {
        let last = self.words as u32 - 1;
        self.fields
            .iter()
            .filter(|f| f.word == last)
            .all(|f| f.shift + f.mask.count_ones() < 32)
    }

    /// The number at `position` of `key`.
    #[inline]
    pub(crate) fn get(&self, key: &[u32], position: usize) -> u32 {
        let f = self.fields[position];
        (key[f.word as usize] >> f.shift) & f.mask
    }

    /// Sets the number at `position` of `key` (it must fit the field).
    #[inline]
    pub(crate) fn set(&self, key: &mut [u32], position: usize, value: u32) {
        let f = self.fields[position];
        debug_assert!(value <= f.mask);
        let w = &mut key[f.word as usize];
        *w = (*w & !(f.mask << f.shift)) | (value << f.shift);
    }

    /// The all-ones value of `position`'s field. In position 0 no leaf has it, so a key
    /// holding it there is Ω (whatever the other fields hold: Ω's key is [`Layout::omega`]).
    #[inline]
    pub(crate) fn reserved(&self, position: usize) -> u32 {
        self.fields[position].mask
    }

    /// The packed Ω: every field holds its all-ones value (position 0's marks it as Ω).
    pub(crate) fn omega(&self) -> Vec<u32> {
        let mut key = vec![0; self.words];
        for p in 0..self.fields.len() {
            self.set(&mut key, p, self.reserved(p));
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Setting fields in any order and reading them back gives what was set, and no field
        /// disturbs another.
        #[test]
        fn fields_are_independent(
            fields in proptest::collection::vec((1u32..=32, any::<u32>()), 1..20),
            order in proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
        ) {
            let bits: Vec<u32> = fields.iter().map(|f| f.0).collect();
            let layout = Layout::new(&bits);
            let values: Vec<u32> = fields
                .iter()
                .map(|&(b, v)| if b == 32 { v } else { v & ((1 << b) - 1) })
                .collect();
            let mut key = vec![0u32; layout.words()];
            let mut expected = vec![0u32; values.len()];
            for ix in order {
                let p = ix.index(values.len());
                layout.set(&mut key, p, values[p]);
                expected[p] = values[p];
            }
            for (p, v) in values.iter().enumerate() {
                layout.set(&mut key, p, *v);
                expected[p] = *v;
            }
            for (p, e) in expected.iter().enumerate() {
                prop_assert_eq!(layout.get(&key, p), *e);
            }
            let total: u32 = bits.iter().sum();
            prop_assert!(layout.words() <= bits.len());
            prop_assert!(layout.words() as u32 * 32 >= total);
        }
    }

    #[test]
    fn bits_leave_room_for_the_reserved_value() {
        for count in [1u64, 2, 3, 7, 8, 255, 256, 1 << 20] {
            let b = Layout::bits_for(count);
            assert!((1u64 << b) > count, "count {count}: {b} bits");
            assert!(b == 1 || (1u64 << (b - 1)) - 1 < count);
        }
    }
}
