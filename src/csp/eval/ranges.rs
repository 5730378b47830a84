//! Sets of integers as unions of intervals: the canonical form of the integer sets weft does
//! not enumerate (`Int`, `{m..}`, their unions, intersections and differences).
//!
//! Integers are `i64` (arithmetic overflow is an error), so `Int` is the interval
//! `[i64::MIN, i64::MAX]` and `{m..}` is `[m, i64::MAX]`. The intervals are sorted, disjoint
//! and not adjacent, so two equal sets have equal representations.

use std::sync::Arc;

/// A set of integers: sorted, disjoint, non-adjacent closed intervals `[lo, hi]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IntRanges(Arc<[(i64, i64)]>);

impl IntRanges {
    /// All integers (`Int`).
    pub fn all() -> IntRanges {
        IntRanges(Arc::from([(i64::MIN, i64::MAX)]))
    }

    /// The integers from `lo` on (`{lo..}`).
    pub fn from(lo: i64) -> IntRanges {
        IntRanges(Arc::from([(lo, i64::MAX)]))
    }

    /// The integers from `lo` to `hi` (empty if `hi < lo`).
    pub fn between(lo: i64, hi: i64) -> IntRanges {
        if hi < lo {
            IntRanges(Arc::from([]))
        } else {
            IntRanges(Arc::from([(lo, hi)]))
        }
    }

    /// The set of the given integers.
    pub fn of_ints(ints: impl IntoIterator<Item = i64>) -> IntRanges {
        Self::normalise(ints.into_iter().map(|i| (i, i)).collect())
    }

    /// The set of the integers of the given intervals (in any order, overlapping or not).
    pub fn of_intervals(intervals: Vec<(i64, i64)>) -> IntRanges {
        Self::normalise(intervals)
    }

    /// The intervals, sorted.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.0
    }

    /// The number of integers in the set (at most 2^64).
    pub fn len(&self) -> u128 {
        self.0
            .iter()
            .map(|&(lo, hi)| (hi as i128 - lo as i128 + 1) as u128)
            .sum()
    }

    /// True for the empty set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True if `i` is in the set.
    pub fn contains(&self, i: i64) -> bool {
        let at = self.0.partition_point(|&(_, hi)| hi < i);
        self.0.get(at).is_some_and(|&(lo, _)| lo <= i)
    }

    /// The integers of the set, in order (callers check [`IntRanges::len`] first).
    pub fn ints(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().flat_map(|&(lo, hi)| lo..=hi)
    }

    /// The union of two sets.
    pub fn union(&self, other: &IntRanges) -> IntRanges {
        Self::normalise(self.0.iter().chain(other.0.iter()).copied().collect())
    }

    /// The integers not in the set.
    pub fn complement(&self) -> IntRanges {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut next = Some(i64::MIN);
        for &(lo, hi) in self.0.iter() {
            if let Some(from) = next {
                if from < lo {
                    out.push((from, lo - 1));
                }
            }
            next = hi.checked_add(1);
        }
        if let Some(from) = next {
            out.push((from, i64::MAX));
        }
        IntRanges(out.into())
    }

    /// The intersection of two sets.
    pub fn inter(&self, other: &IntRanges) -> IntRanges {
        self.complement().union(&other.complement()).complement()
    }

    /// The integers of `self` not in `other`.
    pub fn diff(&self, other: &IntRanges) -> IntRanges {
        self.inter(&other.complement())
    }

    /// True if every integer of `self` is in `other`.
    pub fn is_subset(&self, other: &IntRanges) -> bool {
        self.diff(other).is_empty()
    }

    /// Sorts and merges overlapping or adjacent intervals.
    fn normalise(mut v: Vec<(i64, i64)>) -> IntRanges {
        v.retain(|&(lo, hi)| lo <= hi);
        v.sort_unstable();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
        for (lo, hi) in v {
            match out.last_mut() {
                Some(last) if last.1 == i64::MAX || lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        IntRanges(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlapping_and_adjacent_intervals() {
        let a = IntRanges::between(0, 3).union(&IntRanges::between(4, 6));
        assert_eq!(a.intervals(), &[(0, 6)]);
        let b = IntRanges::from(1).union(&IntRanges::from(0));
        assert_eq!(b, IntRanges::from(0));
        let c = IntRanges::of_ints([5, 1, 2, 9]);
        assert_eq!(c.intervals(), &[(1, 2), (5, 5), (9, 9)]);
    }

    #[test]
    fn difference_and_intersection_are_exact() {
        let d = IntRanges::from(1).diff(&IntRanges::of_ints([1]));
        assert_eq!(d, IntRanges::from(2));
        assert!(IntRanges::from(1).diff(&IntRanges::all()).is_empty());
        let i = IntRanges::from(0).inter(&IntRanges::between(-5, 2));
        assert_eq!(i.intervals(), &[(0, 2)]);
        assert_eq!(IntRanges::all().complement().intervals(), &[]);
        assert_eq!(
            IntRanges::from(0).complement().intervals(),
            &[(i64::MIN, -1)]
        );
    }

    #[test]
    fn membership_and_size() {
        let s = IntRanges::of_ints([1, 2, 3]).union(&IntRanges::from(10));
        assert!(s.contains(2) && s.contains(10) && s.contains(i64::MAX));
        assert!(!s.contains(0) && !s.contains(5));
        assert_eq!(IntRanges::between(-1, 1).len(), 3);
        assert_eq!(IntRanges::all().len(), 1u128 << 64);
        assert!(IntRanges::from(3).is_subset(&IntRanges::from(0)));
        assert!(!IntRanges::from(0).is_subset(&IntRanges::from(3)));
    }
}
