//! The structural encoding of the states of any [`CspSystem`]: a state written as a sequence
//! of small numbers that every process loading the same script derives identically, and read
//! back into the same state ([`CspSystem::structural_encoding`],
//! [`CspSystem::from_structural_encoding`]).
//!
//! Unlike the packed encoding of [`super::encoding`], it needs no canonical numbering of the
//! states: a component numbered as met (a network position too large to explore ahead, a
//! large process that is not a network) is written as its term, so every system has it. Its
//! length varies with the state.
//!
//! - A term is its operator (its rank in the operators' table), its arity, then each
//!   argument with a tag: `0` a process term (written so, recursively), `1` an integer (two
//!   words), `2` an entry of an intern table (its key, written by [`super::value_codec`]:
//!   the prefix closure, lazy process, event set, ... never the entry's number, given as
//!   met), `3` a label (its event, written as a value; labels of events met late are
//!   numbered as met).
//! - A network state is the packed vector of its positions' leaf numbers ([`Layout`]), the
//!   fields of positions numbered as met left 0, then the term of each such position, in
//!   position order. An explicit position's number is canonical already (see
//!   [`super::encoding`]).
//!
//! Reading rebuilds the terms (hash-consed: the same term as the writer's, in a system of
//! the same script) and numbers them in this system's tables, as meeting them would.

#![forbid(unsafe_code)]

use std::sync::Arc;

use super::compress::CompressedSlot;
use super::labels::LinkMap;
use super::leaves::Position;
use super::priority::CompiledPriority;
use super::system::{CspState, CspSystem, Shape};
use super::terms::{int_arg, BuildPath, Encoding, Op, Section, Table};
use super::value_codec::{self as codec, Out, Reader, Unwritable};
use crate::term::TermRef;
use crate::ts::{Label, NoCanonicalEncoding};

/// The first word of each kind of state.
const NETWORK: u32 = 1;
const OMEGA: u32 = 2;
const EXPLORED_TERM: u32 = 3;
const TERM: u32 = 4;

/// Argument tags of a written term.
const ARG_TERM: u32 = 0;
const ARG_INT: u32 = 1;
const ARG_TABLE: u32 = 2;
const ARG_LABEL: u32 = 3;

/// Whether argument `i` of a term of `op` is a label.
fn is_label(op: Op, i: usize) -> bool {
    i == 0
        && matches!(
            op,
            Op::TStop | Op::TSkip | Op::Delay | Op::TPrio | Op::TOperand | Op::TOmega
        )
}

pub(super) fn unwritable() -> NoCanonicalEncoding {
    NoCanonicalEncoding(
        "a state holds a value the structural encoding does not write (a lazily computed \
         infinite sequence)"
            .into(),
    )
}

impl Encoding {
    /// Writes the term `t`.
    pub(super) fn write_term(&self, out: &mut Out, t: TermRef<'_>) -> Result<(), Unwritable> {
        stacker::maybe_grow(
            super::terms::STACK_RED_ZONE,
            super::terms::STACK_SEGMENT,
            || self.write_term_node(out, t),
        )
    }

    fn write_term_node(&self, out: &mut Out, t: TermRef<'_>) -> Result<(), Unwritable> {
        let op = Op::of(t);
        if op == Op::Net {
            return Err(Unwritable);
        }
        out.push(op.rank() as u32);
        out.push(t.arity() as u32);
        for (i, a) in t.args().enumerate() {
            match (op.table_of(i), a.int_value()) {
                (Some(table), Some(k)) => {
                    out.push(ARG_TABLE);
                    self.write_entry(out, table, k as u32)?;
                }
                (None, Some(x)) if is_label(op, i) => {
                    out.push(ARG_LABEL);
                    let event = self.labels.event(x as Label).ok_or(Unwritable)?;
                    codec::write_value(out, &event)?;
                }
                (None, Some(x)) => {
                    out.push(ARG_INT);
                    codec::write_int(out, x);
                }
                _ => {
                    out.push(ARG_TERM);
                    self.write_term(out, a)?;
                }
            }
        }
        Ok(())
    }

    /// Writes the key of entry `k` of `table`.
    fn write_entry(&self, out: &mut Out, table: Table, k: u32) -> Result<(), Unwritable> {
        match table {
            Table::Prefixes => codec::write_prefix(out, &self.prefixes.get(k).0),
            Table::Lazies => codec::write_proc(out, &self.lazies.get(k).0),
            Table::Sets => codec::write_set(out, &self.sets.get(k).0),
            Table::Alphabets => {
                let entry = self.alphabets.get(k);
                out.push(entry.0.len() as u32);
                entry.0.iter().try_for_each(|s| codec::write_set(out, s))
            }
            Table::Renamings => codec::write_relation(out, &self.renamings.get(k).0),
            Table::Links => codec::write_relation(out, &self.links.get(k).0),
            Table::TimedPrefixes => codec::write_proc(out, &self.timed_prefixes.get(k).0),
            Table::Compressed => {
                let entry = self.compressed.get(k);
                codec::write_compression(out, entry.0 .0);
                codec::write_proc(out, &entry.0 .1)
            }
            Table::Priorities => codec::write_priority(out, &self.priorities.get(k).0),
        }
    }

    /// Reads a term written by [`Encoding::write_term`], built in `sec`.
    pub(super) fn read_term<'s>(
        &self,
        sec: &'s Section<'_>,
        r: &mut Reader<'_>,
    ) -> Option<TermRef<'s>> {
        stacker::maybe_grow(
            super::terms::STACK_RED_ZONE,
            super::terms::STACK_SEGMENT,
            || self.read_term_node(sec, r),
        )
    }

    fn read_term_node<'s>(&self, sec: &'s Section<'_>, r: &mut Reader<'_>) -> Option<TermRef<'s>> {
        let op = super::terms::op_of_rank(r.word()? as usize)?;
        let arity = r.word()? as usize;
        if arity > r.left() {
            return None;
        }
        let mut args = Vec::with_capacity(arity);
        for i in 0..arity {
            let arg = match (r.word()?, op.table_of(i)) {
                (ARG_TABLE, Some(table)) => sec.int(self.read_entry(sec, r, table)? as i64),
                (ARG_LABEL, None) if is_label(op, i) => {
                    let event = codec::read_value(r)?;
                    sec.int(self.labels.label_of(&event).ok()? as i64)
                }
                (ARG_INT, None) => sec.int(r.int()?),
                (ARG_TERM, _) => self.read_term(sec, r)?,
                _ => return None,
            };
            args.push(arg);
        }
        Some(sec.create(op.symbol(arity), &args).0)
    }

    /// Reads the key of an entry of `table`; returns its number in this system's table.
    fn read_entry(&self, sec: &Section<'_>, r: &mut Reader<'_>, table: Table) -> Option<u32> {
        match table {
            Table::Prefixes => {
                let c = codec::read_prefix(r)?;
                self.prefixes.intern(&c, |_| Ok(())).ok()
            }
            Table::Lazies => {
                let p = codec::read_proc(r)?;
                self.lazies.intern(&p, |_| Ok(())).ok()
            }
            Table::Sets => self.set_id(&codec::read_set(r)?).ok(),
            Table::Alphabets => {
                let n = r.word()? as usize;
                if n > r.left() {
                    return None;
                }
                let alphas = (0..n)
                    .map(|_| codec::read_set(r))
                    .collect::<Option<Vec<_>>>()?;
                self.alphabets_id(&alphas).ok()
            }
            Table::Renamings => self.relation_id(&codec::read_relation(r)?).ok(),
            Table::Links => {
                let rel = codec::read_relation(r)?;
                self.links
                    .intern(&rel, |rel| LinkMap::new(&self.labels, rel))
                    .ok()
            }
            Table::TimedPrefixes => {
                // Building the timed prefix interns it, with its `tock`'s label.
                let p = codec::read_proc(r)?;
                let t = self.build(sec, &p, &mut BuildPath::default()).ok()?;
                (Op::of(t) == Op::TPrefix).then(|| int_arg(t, 0))
            }
            Table::Compressed => {
                let c = codec::read_compression(r)?;
                let p = codec::read_proc(r)?;
                self.compressed
                    .intern(&(c, p), |_| Ok(CompressedSlot::default()))
                    .ok()
            }
            Table::Priorities => {
                let o = Arc::new(codec::read_priority(r)?);
                self.priorities
                    .intern(&o, |o| CompiledPriority::new(&self.labels, o))
                    .ok()
            }
        }
    }
}

impl CspSystem {
    /// The structural encoding of `state` (see the module documentation): the same words in
    /// every system made from the same script and process, whatever order it met its states
    /// in. Fails only for a state holding a value the encoding does not write.
    pub fn structural_encoding(&self, state: &CspState) -> Result<Vec<u32>, NoCanonicalEncoding> {
        let mut out = Vec::new();
        self.append_structural(state, &mut out)
            .map_err(|Unwritable| unwritable())?;
        Ok(out)
    }

    /// Appends the structural encoding of `state` to `out`.
    pub(crate) fn append_structural(
        &self,
        state: &CspState,
        out: &mut Vec<u32>,
    ) -> Result<(), Unwritable> {
        let shared = &*self.shared;
        let enc = &shared.sem.enc;
        match &shared.shape {
            Shape::Term {
                explored: Some(_), ..
            } => {
                out.extend([EXPLORED_TERM, state.0]);
                Ok(())
            }
            Shape::Term { explored: None } => {
                out.push(TERM);
                let t = shared.leaves.term(state.0);
                self.with_context(|_, sec| enc.write_term(out, super::terms::term(sec, t)))
            }
            Shape::Network {
                positions,
                layout,
                index,
                omega,
                ..
            } => {
                if state.0 == *omega {
                    out.push(OMEGA);
                    return Ok(());
                }
                let mut key = vec![0; index.width()];
                index.read_key(state.0, &mut key);
                let lazy: Vec<(usize, u32)> = positions
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| matches!(p, Position::Lazy(_)))
                    .map(|(i, _)| (i, layout.get(&key, i)))
                    .collect();
                for &(i, _) in &lazy {
                    layout.set(&mut key, i, 0);
                }
                out.push(NETWORK);
                out.extend_from_slice(&key);
                self.with_context(|_, sec| {
                    lazy.iter().try_for_each(|&(i, n)| {
                        enc.write_term(out, super::terms::term(sec, positions[i].term(n)))
                    })
                })
            }
        }
    }

    /// The state whose structural encoding is `words`, if any (numbered in this system as
    /// meeting it would number it).
    pub fn from_structural_encoding(&self, words: &[u32]) -> Option<CspState> {
        let shared = &*self.shared;
        let enc = &shared.sem.enc;
        let mut r = Reader::new(words);
        let state = match (&shared.shape, r.word()?) {
            (
                Shape::Term {
                    explored: Some(count),
                },
                EXPLORED_TERM,
            ) => {
                let n = r.word()?;
                (n < *count).then_some(CspState(n))?
            }
            (Shape::Term { explored: None }, TERM) => self.with_context(|_, sec| {
                let t = enc.read_term(sec, &mut r)?;
                Some(CspState(shared.leaves.number(t.id())))
            })?,
            (Shape::Network { omega, .. }, OMEGA) => CspState(*omega),
            (
                Shape::Network {
                    positions,
                    layout,
                    index,
                    ..
                },
                NETWORK,
            ) => {
                let width = layout.words();
                if r.left() < width {
                    return None;
                }
                let mut key: Vec<u32> = (0..width).map(|_| r.word()).collect::<Option<_>>()?;
                let mut rebuilt = vec![0; width];
                // Every explicit field names a leaf; lazy fields, and bits outside fields,
                // are clear.
                for (p, position) in positions.iter().enumerate() {
                    let n = layout.get(&key, p);
                    match position {
                        Position::Explicit(lts) if (n as usize) < lts.terms.len() => {
                            layout.set(&mut rebuilt, p, n)
                        }
                        Position::Lazy(_) if n == 0 => {}
                        _ => return None,
                    }
                }
                if rebuilt != key {
                    return None;
                }
                self.with_context(|ctx, sec| {
                    for (p, position) in positions.iter().enumerate() {
                        if let Position::Lazy(table) = position {
                            let t = enc.read_term(sec, &mut r)?;
                            layout.set(&mut key, p, table.number(t.id()));
                        }
                    }
                    // Ω's key is written as Ω, never as a vector.
                    if layout.get(&key, 0) == layout.reserved(0) {
                        return None;
                    }
                    let handle = ctx.handle.as_mut()?;
                    index.insert(handle, &key).ok().map(|(n, _)| CspState(n))
                })?
            }
            _ => return None,
        };
        (r.left() == 0).then_some(state)
    }
}
