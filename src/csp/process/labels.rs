//! Transition labels of CSP processes, and the operators' event sets and relations compiled
//! to tables over labels.
//!
//! Label 0 is tau ([`TAU`]), label 1 is ✓ ([`TICK`]), and the script's events follow in the
//! order of its [`EventTable`]: event number `e` is label `e + 2`.

#![forbid(unsafe_code)]

use crate::ts::{Label, TAU};

use crate::csp::error::{CspError, ErrorKind};
use crate::csp::eval::{EventTable, Script};
use crate::csp::value::Value;

/// The label of successful termination (✓).
pub const TICK: Label = 1;
/// The label of the first event of the script.
pub(crate) const FIRST_EVENT: Label = 2;

/// The label of `event`, or an error naming it when it is not an event of the script.
pub(crate) fn label_of(
    script: &Script,
    table: &EventTable,
    event: &Value,
) -> Result<Label, CspError> {
    table.id(event).map(|e| e + FIRST_EVENT).ok_or_else(|| {
        CspError::unpositioned(
            ErrorKind::Type,
            format!(
                "{} is not an event of a declared channel",
                script.show(event)
            ),
        )
    })
}

/// A set of labels as a bitset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LabelSet {
    words: Box<[u64]>,
}

impl LabelSet {
    /// The labels of the events in `events`.
    pub(crate) fn of_events(
        script: &Script,
        table: &EventTable,
        events: &[Value],
    ) -> Result<LabelSet, CspError> {
        let mut set = LabelSet::empty(table.events.len() as u32 + FIRST_EVENT);
        for e in events {
            set.insert(label_of(script, table, e)?);
        }
        Ok(set)
    }

    /// The empty set over labels below `bound`.
    pub(crate) fn empty(bound: u32) -> LabelSet {
        LabelSet {
            words: vec![0; (bound as usize).div_ceil(64)].into(),
        }
    }

    pub(crate) fn insert(&mut self, l: Label) {
        self.words[l as usize / 64] |= 1 << (l % 64);
    }

    /// True if `l` is in the set (labels beyond the bound are not).
    #[inline]
    pub(crate) fn contains(&self, l: Label) -> bool {
        self.words
            .get(l as usize / 64)
            .is_some_and(|w| w & (1 << (l % 64)) != 0)
    }
}

/// A renaming `[[a <- b, ...]]` as a table: each label's images (a label outside the
/// relation's domain is its own image).
#[derive(Debug)]
pub(crate) struct RenameMap {
    images: Vec<Box<[Label]>>,
}

impl RenameMap {
    pub(crate) fn new(
        script: &Script,
        table: &EventTable,
        pairs: &[(Value, Value)],
    ) -> Result<RenameMap, CspError> {
        let mut images: Vec<Vec<Label>> = vec![Vec::new(); table.events.len() + 2];
        for (old, new) in pairs {
            let (old, new) = (label_of(script, table, old)?, label_of(script, table, new)?);
            images[old as usize].push(new);
        }
        Ok(RenameMap {
            images: images
                .into_iter()
                .enumerate()
                .map(|(l, mut v)| {
                    if v.is_empty() {
                        vec![l as Label].into()
                    } else {
                        v.sort_unstable();
                        v.dedup();
                        v.into()
                    }
                })
                .collect(),
        })
    }

    /// The images of `l` (tau and ✓ are their own).
    #[inline]
    pub(crate) fn images(&self, l: Label) -> &[Label] {
        &self.images[l as usize]
    }
}

/// A link relation `[a <-> b, ...]`: which events of the left process synchronise with which
/// of the right.
#[derive(Debug)]
pub(crate) struct LinkMap {
    /// Sorted pairs (left label, right label).
    pub(crate) pairs: Box<[(Label, Label)]>,
    pub(crate) left: LabelSet,
    pub(crate) right: LabelSet,
}

impl LinkMap {
    pub(crate) fn new(
        script: &Script,
        table: &EventTable,
        pairs: &[(Value, Value)],
    ) -> Result<LinkMap, CspError> {
        let bound = table.events.len() as u32 + FIRST_EVENT;
        let (mut left, mut right) = (LabelSet::empty(bound), LabelSet::empty(bound));
        let mut out = Vec::with_capacity(pairs.len());
        for (a, b) in pairs {
            let (a, b) = (label_of(script, table, a)?, label_of(script, table, b)?);
            left.insert(a);
            right.insert(b);
            out.push((a, b));
        }
        out.sort_unstable();
        out.dedup();
        Ok(LinkMap {
            pairs: out.into(),
            left,
            right,
        })
    }

    /// The right labels linked to left label `a`.
    pub(crate) fn partners(&self, a: Label) -> impl Iterator<Item = Label> + '_ {
        let from = self.pairs.partition_point(|p| p.0 < a);
        self.pairs[from..]
            .iter()
            .take_while(move |p| p.0 == a)
            .map(|p| p.1)
    }
}

/// The alphabets of an alphabetised parallel, with, per label, the components that must take
/// part in it.
#[derive(Debug)]
pub(crate) struct Alphabets {
    pub(crate) sets: Vec<LabelSet>,
    /// For each label: the indices of the components whose alphabet holds it (increasing).
    pub(crate) participants: Vec<Box<[u32]>>,
    /// All component indices (✓ needs every component).
    pub(crate) everyone: Box<[u32]>,
}

impl Alphabets {
    pub(crate) fn new(sets: Vec<LabelSet>, bound: u32) -> Alphabets {
        let participants = (0..bound)
            .map(|l| {
                if l == TAU || l == TICK {
                    return Box::default();
                }
                (0..sets.len() as u32)
                    .filter(|&i| sets[i as usize].contains(l))
                    .collect()
            })
            .collect();
        let everyone = (0..sets.len() as u32).collect();
        Alphabets {
            sets,
            participants,
            everyone,
        }
    }
}
