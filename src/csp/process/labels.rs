//! Transition labels of CSP processes, and the operators' event sets and relations compiled
//! to tables over labels.
//!
//! Label 0 is tau ([`TAU`]), label 1 is ✓ ([`TICK`]), and the script's enumerated events
//! follow in the order of its [`EventTable`]: event number `e` is label `e + 2`. The events of
//! the channels that are not enumerated (a field of an infinite type: `channel c : Int`) are
//! numbered after those, as the system meets them ([`Labels`]). Those numbers depend on the
//! order threads meet the events, so labels are ordered by [`Labels::cmp`], by the events they
//! stand for, never by number.
//!
//! An event set or relation may describe infinitely many events (`{| c |}` for
//! `channel c : Int`). Its table holds the labels known when it is made; a label numbered
//! later is looked up in the description once and remembered.

#![forbid(unsafe_code)]

use std::cmp::Ordering;
use std::ops::Deref;
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::{Mutex, RwLock};

use crate::hash::WordBuildHasher;
use crate::ts::{Label, TAU};

use crate::csp::error::{CspError, ErrorKind};
use crate::csp::eval::{EventTable, Script};
use crate::csp::value::{InfSet, Value};

/// The label of successful termination (✓).
pub const TICK: Label = 1;
/// The label of the first event of the script.
pub(crate) const FIRST_EVENT: Label = 2;

/// The labels of one system: the script's event table, then the events met that are not in
/// it.
pub(crate) struct Labels {
    script: Arc<Script>,
    table: Arc<EventTable>,
    /// The first label after the table's.
    first_met: Label,
    /// Events met that are not in the table, with their names: label `first_met + i` is
    /// `met[i]`.
    met: RwLock<Vec<(Value, Arc<str>)>>,
    numbers: DashMap<Value, Label, WordBuildHasher>,
    /// The first error met deciding whether a label is in a described set.
    error: Mutex<Option<CspError>>,
}

impl Labels {
    pub(crate) fn new(script: Arc<Script>) -> Result<Labels, CspError> {
        let table = script.event_table()?;
        let first_met = table.events.len() as Label + FIRST_EVENT;
        Ok(Labels {
            script,
            table,
            first_met,
            met: RwLock::new(Vec::new()),
            numbers: DashMap::default(),
            error: Mutex::new(None),
        })
    }

    /// The number of labels so far (tau, ✓, the table's events and the events met).
    pub(crate) fn count(&self) -> u32 {
        self.first_met + self.met.read().len() as u32
    }

    /// The first label that is not an event of the table.
    pub(crate) fn first_met(&self) -> Label {
        self.first_met
    }

    /// The label of `event`, numbering it if it is an event met for the first time; an error
    /// naming it when it is not an event of the script.
    pub(crate) fn label_of(&self, event: &Value) -> Result<Label, CspError> {
        if let Some(e) = self.table.id(event) {
            return Ok(e + FIRST_EVENT);
        }
        if let Some(l) = self.numbers.get(event) {
            return Ok(*l);
        }
        let lazy = matches!(event.atoms().first(), Some(Value::Chan(c)) if self.table.lazy_channels.contains(c));
        if !lazy || !self.script.is_event(event) {
            return Err(CspError::unpositioned(
                ErrorKind::Type,
                format!(
                    "{} is not an event of a declared channel",
                    self.script.show(event)
                ),
            ));
        }
        let mut met = self.met.write();
        if let Some(l) = self.numbers.get(event) {
            return Ok(*l);
        }
        let l = self.first_met + met.len() as Label;
        met.push((event.clone(), self.script.show(event).into()));
        self.numbers.insert(event.clone(), l);
        Ok(l)
    }

    /// The event of label `l` (`None` for tau and ✓).
    pub(crate) fn event(&self, l: Label) -> Option<Value> {
        if l < FIRST_EVENT {
            None
        } else if l < self.first_met {
            self.table.events.get((l - FIRST_EVENT) as usize).cloned()
        } else {
            self.met
                .read()
                .get((l - self.first_met) as usize)
                .map(|e| e.0.clone())
        }
    }

    /// The name of label `l`.
    pub(crate) fn name(&self, l: Label) -> String {
        match l {
            TAU => "tau".to_string(),
            TICK => "✓".to_string(),
            l if l < self.first_met => self.table.names[(l - FIRST_EVENT) as usize].clone(),
            l => self
                .met
                .read()
                .get((l - self.first_met) as usize)
                .map_or_else(|| format!("label{l}"), |e| e.1.to_string()),
        }
    }

    /// The canonical order of labels: tau, ✓, then the events in value order (channels in
    /// declaration order), whatever order they were numbered in.
    #[inline]
    pub(crate) fn cmp(&self, a: Label, b: Label) -> Ordering {
        if a == b || (a < self.first_met && b < self.first_met) || a.min(b) < FIRST_EVENT {
            return a.cmp(&b);
        }
        self.cmp_events(a, b)
    }

    #[cold]
    fn cmp_events(&self, a: Label, b: Label) -> Ordering {
        match (self.event(a), self.event(b)) {
            (Some(x), Some(y)) => x.atoms().cmp(y.atoms()).then(a.cmp(&b)),
            _ => a.cmp(&b),
        }
    }

    /// True if the event of label `l` is in the set `set`; an error is kept (see
    /// [`Labels::take_error`]) and counts as not.
    fn member(&self, set: &Value, l: Label) -> bool {
        let Some(event) = self.event(l) else {
            return false;
        };
        match self.script.member(set, &event) {
            Ok(b) => b,
            Err(e) => {
                self.record(e);
                false
            }
        }
    }

    fn record(&self, e: CspError) {
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// The first error met while deciding membership in a described set or renaming a
    /// label met late, if any (taken).
    pub(crate) fn take_error(&self) -> Option<CspError> {
        self.error.lock().take()
    }

    /// The image of label `l` under the described pair `(a, b)` (`{| a |}` to `{| b |}`):
    /// `b.r` if `l` is the event `a.r`.
    fn image(&self, a: &Value, b: &Value, l: Label) -> Option<Label> {
        let event = self.event(l)?;
        let (pre, atoms) = (a.atoms(), event.atoms());
        if atoms.len() < pre.len() || atoms[..pre.len()] != *pre {
            return None;
        }
        let mut image = b.atoms().to_vec();
        image.extend_from_slice(&atoms[pre.len()..]);
        match self.label_of(&Value::from_atoms(&image)) {
            Ok(l) => Some(l),
            Err(e) => {
                self.record(e);
                None
            }
        }
    }

    /// The labels met so far that may be in `set` (all events, or only those met that are
    /// not in the table).
    fn candidates(&self, set: &Value) -> std::ops::Range<Label> {
        let from = if self.script.may_hold_enumerated_events(set) {
            FIRST_EVENT
        } else {
            self.first_met
        };
        from..self.count()
    }
}

/// Labels, borrowed from a table or computed for a label met late.
pub(crate) enum LabelsRef<'a, T> {
    Borrowed(&'a [T]),
    Shared(Arc<[T]>),
    One([T; 1]),
}

impl<T> Deref for LabelsRef<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            LabelsRef::Borrowed(s) => s,
            LabelsRef::Shared(s) => s,
            LabelsRef::One(s) => s,
        }
    }
}

/// The part of a set given by descriptions, for labels met after the set was made.
struct Described {
    labels: Arc<Labels>,
    /// The descriptions ([`Value::Infinite`]).
    sets: Vec<Value>,
    known: DashMap<Label, bool, WordBuildHasher>,
}

impl Described {
    fn contains(&self, l: Label) -> bool {
        if let Some(b) = self.known.get(&l) {
            return *b;
        }
        let b = self.sets.iter().any(|s| self.labels.member(s, l));
        self.known.insert(l, b);
        b
    }
}

/// A set of labels: a bitset of the labels known when it was made, and the descriptions of
/// its infinite part for the labels met later.
pub(crate) struct LabelSet {
    words: Box<[u64]>,
    /// Labels from this on were met after the set was made.
    known: Label,
    described: Option<Described>,
}

impl std::fmt::Debug for LabelSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LabelSet")
            .field("known", &self.known)
            .field("described", &self.described.as_ref().map(|d| &d.sets))
            .finish()
    }
}

impl LabelSet {
    /// The labels of the events in `events` (events, and descriptions of events).
    pub(crate) fn of_events(labels: &Arc<Labels>, events: &[Value]) -> Result<LabelSet, CspError> {
        let mut ids = Vec::with_capacity(events.len());
        let mut sets = Vec::new();
        for e in events {
            match e {
                Value::Infinite(_) => sets.push(e.clone()),
                _ => ids.push(labels.label_of(e)?),
            }
        }
        let known = labels.count();
        let mut set = LabelSet::empty(known);
        for l in ids {
            set.insert(l);
        }
        if !sets.is_empty() {
            for s in &sets {
                for l in labels.candidates(s) {
                    if l < known && labels.member(s, l) {
                        set.insert(l);
                    }
                }
            }
            if let Some(e) = labels.take_error() {
                return Err(e);
            }
            set.described = Some(Described {
                labels: labels.clone(),
                sets,
                known: DashMap::default(),
            });
        }
        Ok(set)
    }

    /// The empty set over labels below `bound`.
    pub(crate) fn empty(bound: u32) -> LabelSet {
        LabelSet {
            words: vec![0; (bound as usize).div_ceil(64)].into(),
            known: bound,
            described: None,
        }
    }

    pub(crate) fn insert(&mut self, l: Label) {
        self.words[l as usize / 64] |= 1 << (l % 64);
    }

    /// True if `l` is in the set.
    #[inline(always)]
    pub(crate) fn contains(&self, l: Label) -> bool {
        if l < self.known {
            self.words[l as usize / 64] & (1 << (l % 64)) != 0
        } else {
            self.described.as_ref().is_some_and(|d| d.contains(l))
        }
    }
}

/// Pairs of values.
type Pairs = Vec<(Value, Value)>;

/// Relation pairs given by descriptions (`({| a |}, {| b |})`), for labels met late.
struct DescribedPairs {
    labels: Arc<Labels>,
    pairs: Vec<(Value, Value)>,
    images: DashMap<Label, Arc<[Label]>, WordBuildHasher>,
}

impl DescribedPairs {
    /// Splits `pairs` into pairs of events and described pairs (as their prefixes `a`, `b`).
    fn split(pairs: &[(Value, Value)]) -> (Pairs, Pairs) {
        let mut events = Vec::new();
        let mut described = Vec::new();
        for (a, b) in pairs {
            match (a, b) {
                (Value::Infinite(x), Value::Infinite(y)) => {
                    if let (InfSet::Productions(a), InfSet::Productions(b)) = (&**x, &**y) {
                        described.push((a.clone(), b.clone()));
                    }
                }
                _ => events.push((a.clone(), b.clone())),
            }
        }
        (events, described)
    }

    /// The images of `l` under the described pairs.
    fn images_of(&self, l: Label) -> Vec<Label> {
        let mut out: Vec<Label> = self
            .pairs
            .iter()
            .filter_map(|(a, b)| self.labels.image(a, b, l))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn images(&self, l: Label) -> Arc<[Label]> {
        if let Some(v) = self.images.get(&l) {
            return v.clone();
        }
        let v: Arc<[Label]> = self.images_of(l).into();
        self.images.insert(l, v.clone());
        v
    }
}

/// Per-label images of a relation (labels known when it was made) and its described pairs.
struct LabelRelation {
    images: Vec<Box<[Label]>>,
    described: Option<DescribedPairs>,
}

impl LabelRelation {
    fn new(labels: &Arc<Labels>, pairs: &[(Value, Value)]) -> Result<LabelRelation, CspError> {
        let (events, described) = DescribedPairs::split(pairs);
        let mut ids = Vec::with_capacity(events.len());
        for (a, b) in &events {
            ids.push((labels.label_of(a)?, labels.label_of(b)?));
        }
        let described = (!described.is_empty()).then(|| DescribedPairs {
            labels: labels.clone(),
            pairs: described,
            images: DashMap::default(),
        });
        let known = labels.count();
        let mut images: Vec<Vec<Label>> = vec![Vec::new(); known as usize];
        for (a, b) in ids {
            images[a as usize].push(b);
        }
        if let Some(d) = &described {
            for l in labels.first_met()..known {
                images[l as usize].extend(d.images_of(l));
            }
            if let Some(e) = labels.take_error() {
                return Err(e);
            }
        }
        Ok(LabelRelation {
            images: images
                .into_iter()
                .map(|mut v| {
                    v.sort_unstable();
                    v.dedup();
                    v.into()
                })
                .collect(),
            described,
        })
    }

    /// The images of `l` (empty outside the relation's domain).
    #[inline]
    fn images(&self, l: Label) -> LabelsRef<'_, Label> {
        match self.images.get(l as usize) {
            Some(v) => LabelsRef::Borrowed(v),
            None => match &self.described {
                Some(d) => LabelsRef::Shared(d.images(l)),
                None => LabelsRef::Borrowed(&[]),
            },
        }
    }
}

/// A renaming `[[a <- b, ...]]` as a table: each label's images (a label outside the
/// relation's domain is its own image).
pub(crate) struct RenameMap {
    relation: LabelRelation,
}

impl std::fmt::Debug for RenameMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenameMap").finish_non_exhaustive()
    }
}

impl RenameMap {
    pub(crate) fn new(
        labels: &Arc<Labels>,
        pairs: &[(Value, Value)],
    ) -> Result<RenameMap, CspError> {
        Ok(RenameMap {
            relation: LabelRelation::new(labels, pairs)?,
        })
    }

    /// The images of `l` (tau and ✓ are their own).
    #[inline]
    pub(crate) fn images(&self, l: Label) -> LabelsRef<'_, Label> {
        let images = self.relation.images(l);
        if images.is_empty() {
            LabelsRef::One([l])
        } else {
            images
        }
    }
}

/// A link relation `[a <-> b, ...]`: which events of the left process synchronise with which
/// of the right.
pub(crate) struct LinkMap {
    relation: LabelRelation,
    pub(crate) left: LabelSet,
    pub(crate) right: LabelSet,
}

impl std::fmt::Debug for LinkMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkMap").finish_non_exhaustive()
    }
}

impl LinkMap {
    pub(crate) fn new(labels: &Arc<Labels>, pairs: &[(Value, Value)]) -> Result<LinkMap, CspError> {
        let relation = LabelRelation::new(labels, pairs)?;
        let left: Vec<Value> = pairs.iter().map(|p| p.0.clone()).collect();
        let right: Vec<Value> = pairs.iter().map(|p| p.1.clone()).collect();
        Ok(LinkMap {
            relation,
            left: LabelSet::of_events(labels, &left)?,
            right: LabelSet::of_events(labels, &right)?,
        })
    }

    /// The right labels linked to left label `a`.
    #[inline]
    pub(crate) fn partners(&self, a: Label) -> LabelsRef<'_, Label> {
        self.relation.images(a)
    }
}

/// The alphabets of an alphabetised parallel, with, per label, the components that must take
/// part in it.
pub(crate) struct Alphabets {
    pub(crate) sets: Vec<LabelSet>,
    /// For each label known when made: the indices of the components whose alphabet holds
    /// it (increasing).
    participants: Vec<Box<[u32]>>,
    /// The same for labels met later.
    late: DashMap<Label, Arc<[u32]>, WordBuildHasher>,
    /// All component indices (✓ needs every component).
    pub(crate) everyone: Box<[u32]>,
}

impl std::fmt::Debug for Alphabets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alphabets")
            .field("sets", &self.sets)
            .finish_non_exhaustive()
    }
}

impl Alphabets {
    pub(crate) fn new(sets: Vec<LabelSet>, bound: u32) -> Alphabets {
        let participants = (0..bound)
            .map(|l| {
                if l == TAU || l == TICK {
                    return Box::default();
                }
                Self::holding(&sets, l).into()
            })
            .collect();
        let everyone = (0..sets.len() as u32).collect();
        Alphabets {
            sets,
            participants,
            late: DashMap::default(),
            everyone,
        }
    }

    fn holding(sets: &[LabelSet], l: Label) -> Vec<u32> {
        (0..sets.len() as u32)
            .filter(|&i| sets[i as usize].contains(l))
            .collect()
    }

    /// The components whose alphabet holds event label `l` (increasing).
    #[inline]
    pub(crate) fn participants(&self, l: Label) -> LabelsRef<'_, u32> {
        match self.participants.get(l as usize) {
            Some(v) => LabelsRef::Borrowed(v),
            None => LabelsRef::Shared(self.late_participants(l)),
        }
    }

    #[cold]
    fn late_participants(&self, l: Label) -> Arc<[u32]> {
        if let Some(v) = self.late.get(&l) {
            return v.clone();
        }
        let v: Arc<[u32]> = Self::holding(&self.sets, l).into();
        self.late.insert(l, v.clone());
        v
    }
}
