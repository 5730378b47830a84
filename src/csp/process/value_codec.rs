//! The values in process terms written as sequences of small numbers, and read back: what
//! the structural encoding of a term ([`super::structural`]) writes for the entries of its
//! intern tables (prefix closures, lazy processes, event sets, ...).
//!
//! Everything written is a function of the value's structure only: a variant is its index
//! in its type's declaration, an integer its two halves, a character its code point, a
//! channel, constructor, definition or syntax node its number in the script (declaration
//! order, fixed when the script is loaded), a built-in function or a compression its index
//! in its table, and every sequence of values (a tuple, a set, a sequence, a map, a list of
//! bindings) its length, then its elements. Equal values are written alike (sets and maps
//! are sorted already), so two processes loading the same script write the same words.
//!
//! A value that is a computation in progress (a [`Value::LazySeq`]) is not written
//! ([`Unwritable`]). Reading checks what it reads (lengths within the words left, sets and
//! maps sorted, indices in range) and gives `None` for words no value writes.

#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::csp::eval::FieldSet;
use crate::csp::value::{
    Binding, Builtin, Call, Func, InfSet, IntRanges, LetRef, PrefixClosure, PriorityOrder, Proc,
    ProcNode, SeqValue, SetElems, Target, TimedProc, Value,
};
use crate::reduce::compressions::NAMES as COMPRESSION_NAMES;
use crate::reduce::Compression;

use super::terms::{STACK_RED_ZONE, STACK_SEGMENT};

/// A value the structural encoding does not write: a lazily computed infinite sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unwritable;

/// Where writing goes.
pub(crate) type Out = Vec<u32>;

/// The words being read.
pub(crate) struct Reader<'w> {
    words: &'w [u32],
    at: usize,
}

impl<'w> Reader<'w> {
    /// Reads `words` from the first.
    pub(crate) fn new(words: &'w [u32]) -> Reader<'w> {
        Reader { words, at: 0 }
    }

    /// Words not read yet.
    pub(crate) fn left(&self) -> usize {
        self.words.len() - self.at
    }

    /// The next word.
    pub(crate) fn word(&mut self) -> Option<u32> {
        let w = *self.words.get(self.at)?;
        self.at += 1;
        Some(w)
    }

    /// The next two words as an `i64` (low half first).
    pub(crate) fn int(&mut self) -> Option<i64> {
        let lo = self.word()? as u64;
        let hi = self.word()? as u64;
        Some((lo | (hi << 32)) as i64)
    }

    /// A length: at most the words left (every element takes a word at least).
    fn len(&mut self) -> Option<usize> {
        let n = self.word()? as usize;
        (n <= self.left()).then_some(n)
    }

    fn char(&mut self) -> Option<char> {
        char::from_u32(self.word()?)
    }
}

/// Writes `i` as two words (low half first).
pub(crate) fn write_int(out: &mut Out, i: i64) {
    out.push(i as u64 as u32);
    out.push(((i as u64) >> 32) as u32);
}

fn write_len(out: &mut Out, n: usize) {
    out.push(n as u32);
}

/// Writes `v`.
pub(crate) fn write_value(out: &mut Out, v: &Value) -> Result<(), Unwritable> {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || write_value_node(out, v))
}

fn write_values(out: &mut Out, vs: &[Value]) -> Result<(), Unwritable> {
    write_len(out, vs.len());
    vs.iter().try_for_each(|v| write_value(out, v))
}

fn write_value_node(out: &mut Out, v: &Value) -> Result<(), Unwritable> {
    match v {
        Value::Int(i) => {
            out.push(0);
            write_int(out, *i);
        }
        Value::Bool(b) => out.extend([1, u32::from(*b)]),
        Value::Char(c) => out.extend([2, *c as u32]),
        Value::Tuple(vs) => {
            out.push(3);
            write_values(out, vs)?;
        }
        Value::Set(s) => {
            out.push(4);
            write_values(out, s)?;
        }
        Value::Seq(s) => {
            out.push(5);
            write_values(out, s.as_slice())?;
        }
        Value::InfSeq(s, from) => {
            out.push(6);
            write_values(out, s.as_slice())?;
            write_int(out, *from);
        }
        Value::LazySeq(_) => return Err(Unwritable),
        Value::Map(pairs) => {
            out.push(7);
            write_pairs(out, pairs)?;
        }
        Value::Chan(c) => out.extend([8, *c]),
        Value::Ctor(c) => out.extend([9, *c]),
        Value::Dot(vs) => {
            out.push(10);
            write_values(out, vs)?;
        }
        Value::Infinite(s) => {
            out.push(11);
            write_inf_set(out, s)?;
        }
        Value::Func(f) => {
            out.push(12);
            write_func(out, f)?;
        }
        Value::Proc(p) => {
            out.push(13);
            write_proc(out, p)?;
        }
    }
    Ok(())
}

fn write_pairs(out: &mut Out, pairs: &[(Value, Value)]) -> Result<(), Unwritable> {
    write_len(out, pairs.len());
    for (a, b) in pairs {
        write_value(out, a)?;
        write_value(out, b)?;
    }
    Ok(())
}

fn write_inf_set(out: &mut Out, s: &InfSet) -> Result<(), Unwritable> {
    match s {
        InfSet::Ints(r) => {
            out.push(0);
            write_len(out, r.intervals().len());
            for &(lo, hi) in r.intervals() {
                write_int(out, lo);
                write_int(out, hi);
            }
        }
        InfSet::Chars => out.push(1),
        InfSet::Maps(k, v) => {
            out.push(2);
            write_value(out, k)?;
            write_value(out, v)?;
        }
        InfSet::Seqs(x) => {
            out.push(3);
            write_value(out, x)?;
        }
        InfSet::Sets(x) => {
            out.push(4);
            write_value(out, x)?;
        }
        InfSet::DataType(d) => out.extend([5, *d]),
        InfSet::Dotted(fields) => {
            out.push(6);
            write_len(out, fields.len());
            for f in fields.iter() {
                match f {
                    FieldSet::Finite(s) => {
                        out.push(0);
                        write_values(out, s)?;
                    }
                    FieldSet::Infinite(s) => {
                        out.push(1);
                        write_inf_set(out, s)?;
                    }
                    FieldSet::DataType(d) => out.extend([2, *d]),
                }
            }
        }
        InfSet::Tuples(vs) => {
            out.push(7);
            write_values(out, vs)?;
        }
        InfSet::Productions(v) => {
            out.push(8);
            write_value(out, v)?;
        }
        InfSet::Union(vs) => {
            out.push(9);
            write_values(out, vs)?;
        }
        InfSet::Inter(vs) => {
            out.push(10);
            write_values(out, vs)?;
        }
        InfSet::Diff(a, b) => {
            out.push(11);
            write_value(out, a)?;
            write_value(out, b)?;
        }
        InfSet::Procs => out.push(12),
    }
    Ok(())
}

fn write_bindings(out: &mut Out, bs: &[Binding]) -> Result<(), Unwritable> {
    write_len(out, bs.len());
    for b in bs {
        match b {
            Binding::Value(v) => {
                out.push(0);
                write_value(out, v)?;
            }
            Binding::Let(l) => {
                out.push(1);
                write_let(out, l)?;
            }
        }
    }
    Ok(())
}

fn write_let(out: &mut Out, l: &LetRef) -> Result<(), Unwritable> {
    out.push(l.group);
    write_bindings(out, &l.captured)
}

fn write_target(out: &mut Out, t: &Target) -> Result<(), Unwritable> {
    match t {
        Target::Global(g) => out.extend([0, *g]),
        Target::Let(l, i) => {
            out.push(1);
            write_let(out, l)?;
            out.push(*i);
        }
        Target::Lambda(node, bs) => {
            out.extend([2, *node]);
            write_bindings(out, bs)?;
        }
        Target::Builtin(b) => {
            let i = Builtin::ALL.iter().position(|x| x == b).ok_or(Unwritable)?;
            out.extend([3, i as u32]);
        }
        Target::Compression(name) => {
            let i = COMPRESSION_NAMES
                .iter()
                .position(|(n, _)| n == name)
                .ok_or(Unwritable)?;
            out.extend([4, i as u32]);
        }
    }
    Ok(())
}

fn write_func(out: &mut Out, f: &Func) -> Result<(), Unwritable> {
    write_target(out, &f.target)?;
    write_len(out, f.applied.len());
    f.applied.iter().try_for_each(|g| write_values(out, g))
}

/// Writes the prefix closure `c`.
pub(crate) fn write_prefix(out: &mut Out, c: &PrefixClosure) -> Result<(), Unwritable> {
    out.push(c.expr);
    write_bindings(out, &c.captured)?;
    match &c.choice {
        None => out.push(0),
        Some(vs) => {
            out.push(1);
            write_values(out, vs)?;
        }
    }
    Ok(())
}

/// Writes an event set.
pub(crate) fn write_set(out: &mut Out, s: &[Value]) -> Result<(), Unwritable> {
    write_values(out, s)
}

/// Writes an event relation.
pub(crate) fn write_relation(out: &mut Out, r: &[(Value, Value)]) -> Result<(), Unwritable> {
    write_pairs(out, r)
}

/// Writes the compression `c`.
pub(crate) fn write_compression(out: &mut Out, c: Compression) {
    let i = COMPRESSION_NAMES
        .iter()
        .position(|&(_, x)| x == c)
        .unwrap_or(0);
    out.push(i as u32);
}

/// Writes a priority order.
pub(crate) fn write_priority(out: &mut Out, o: &PriorityOrder) -> Result<(), Unwritable> {
    match o {
        PriorityOrder::Levels(levels) => {
            out.push(0);
            write_len(out, levels.len());
            levels.iter().try_for_each(|s| write_values(out, s))
        }
        PriorityOrder::Partial {
            events,
            order,
            maximal,
        } => {
            out.push(1);
            write_values(out, events)?;
            write_pairs(out, order)?;
            write_values(out, maximal)
        }
        PriorityOrder::TauOver(s) => {
            out.push(2);
            write_values(out, s)
        }
    }
}

fn write_procs(out: &mut Out, ps: &[Proc]) -> Result<(), Unwritable> {
    write_len(out, ps.len());
    ps.iter().try_for_each(|p| write_proc(out, p))
}

/// Writes the process `p`.
pub(crate) fn write_proc(out: &mut Out, p: &Proc) -> Result<(), Unwritable> {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
        write_proc_node(out, p.node())
    })
}

fn write_proc_node(out: &mut Out, p: &ProcNode) -> Result<(), Unwritable> {
    match p {
        ProcNode::Stop => out.push(0),
        ProcNode::Skip => out.push(1),
        ProcNode::Div => out.push(2),
        ProcNode::Call(c) => {
            out.push(3);
            write_target(out, &c.target)?;
            write_values(out, &c.args)?;
        }
        ProcNode::Prefix(c) => {
            out.push(4);
            write_prefix(out, c)?;
        }
        ProcNode::ExtChoice(ps) => {
            out.push(5);
            write_procs(out, ps)?;
        }
        ProcNode::IntChoice(ps) => {
            out.push(6);
            write_procs(out, ps)?;
        }
        ProcNode::Interleave(ps) => {
            out.push(7);
            write_procs(out, ps)?;
        }
        ProcNode::Parallel(a, ps) => {
            out.push(8);
            write_values(out, a)?;
            write_procs(out, ps)?;
        }
        ProcNode::AlphaParallel(cs) => {
            out.push(9);
            write_len(out, cs.len());
            for (a, q) in cs {
                write_values(out, a)?;
                write_proc(out, q)?;
            }
        }
        ProcNode::Seq(a, b) => {
            out.push(10);
            write_proc(out, a)?;
            write_proc(out, b)?;
        }
        ProcNode::Hide(q, a) => {
            out.push(11);
            write_proc(out, q)?;
            write_values(out, a)?;
        }
        ProcNode::Rename(q, r) => {
            out.push(12);
            write_proc(out, q)?;
            write_pairs(out, r)?;
        }
        ProcNode::Link(a, r, b) => {
            out.push(13);
            write_proc(out, a)?;
            write_pairs(out, r)?;
            write_proc(out, b)?;
        }
        ProcNode::Interrupt(a, b) => {
            out.push(14);
            write_proc(out, a)?;
            write_proc(out, b)?;
        }
        ProcNode::Timeout(a, b) => {
            out.push(15);
            write_proc(out, a)?;
            write_proc(out, b)?;
        }
        ProcNode::Timed(t) => {
            out.push(16);
            write_timed(out, t)?;
        }
        ProcNode::Compressed(c, q) => {
            out.push(17);
            write_compression(out, *c);
            write_proc(out, q)?;
        }
        ProcNode::Exception(a, s, b) => {
            out.push(18);
            write_proc(out, a)?;
            write_values(out, s)?;
            write_proc(out, b)?;
        }
        ProcNode::Prioritise(q, o) => {
            out.push(19);
            write_proc(out, q)?;
            write_priority(out, o)?;
        }
    }
    Ok(())
}

fn write_timed(out: &mut Out, t: &TimedProc) -> Result<(), Unwritable> {
    match t {
        TimedProc::Stop(v) => {
            out.push(0);
            write_value(out, v)
        }
        TimedProc::Skip(v) => {
            out.push(1);
            write_value(out, v)
        }
        TimedProc::Delay(v, n, q) => {
            out.push(2);
            write_value(out, v)?;
            write_int(out, *n);
            write_proc(out, q)
        }
        TimedProc::Prefix(c, v) => {
            out.push(3);
            write_prefix(out, c)?;
            write_value(out, v)
        }
        TimedProc::SyncChoice(s, ps) => {
            out.push(4);
            write_values(out, s)?;
            write_procs(out, ps)
        }
        TimedProc::SyncInterrupt(a, s, b) => {
            out.push(5);
            write_proc(out, a)?;
            write_values(out, s)?;
            write_proc(out, b)
        }
        TimedProc::Priority(v, q) => {
            out.push(6);
            write_value(out, v)?;
            write_proc(out, q)
        }
        TimedProc::Operand(v, q) => {
            out.push(7);
            write_value(out, v)?;
            write_proc(out, q)
        }
        TimedProc::Terminated(v) => {
            out.push(8);
            write_value(out, v)
        }
    }
}

// Reading.

/// Reads a value.
pub(crate) fn read_value(r: &mut Reader<'_>) -> Option<Value> {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || read_value_node(r))
}

fn read_values(r: &mut Reader<'_>) -> Option<Arc<[Value]>> {
    let n = r.len()?;
    (0..n).map(|_| read_value(r)).collect()
}

/// Reads values that must be strictly increasing (a set's).
fn read_sorted(r: &mut Reader<'_>) -> Option<Arc<[Value]>> {
    let vs = read_values(r)?;
    vs.windows(2).all(|w| w[0] < w[1]).then_some(vs)
}

fn read_value_node(r: &mut Reader<'_>) -> Option<Value> {
    Some(match r.word()? {
        0 => Value::Int(r.int()?),
        1 => match r.word()? {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            _ => return None,
        },
        2 => Value::Char(r.char()?),
        3 => Value::Tuple(read_values(r)?),
        4 => Value::Set(SetElems::new(read_sorted(r)?)),
        5 => Value::Seq(SeqValue::from(&*read_values(r)?)),
        6 => {
            let prefix = read_values(r)?;
            Value::InfSeq(SeqValue::from(&*prefix), r.int()?)
        }
        7 => Value::Map(read_pairs(r, true)?),
        8 => Value::Chan(r.word()?),
        9 => Value::Ctor(r.word()?),
        10 => Value::Dot(read_values(r)?),
        11 => Value::Infinite(Arc::new(read_inf_set(r)?)),
        12 => Value::Func(Arc::new(read_func(r)?)),
        13 => Value::Proc(read_proc(r)?),
        _ => return None,
    })
}

fn read_pairs(r: &mut Reader<'_>, sorted: bool) -> Option<Arc<[(Value, Value)]>> {
    let n = r.len()?;
    let pairs: Arc<[(Value, Value)]> = (0..n)
        .map(|_| Some((read_value(r)?, read_value(r)?)))
        .collect::<Option<_>>()?;
    // A map's keys are strictly increasing (a relation is read as written).
    let ordered = !sorted || pairs.windows(2).all(|w| w[0].0 < w[1].0);
    ordered.then_some(pairs)
}

fn read_inf_set(r: &mut Reader<'_>) -> Option<InfSet> {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || read_inf_set_node(r))
}

fn read_inf_set_node(r: &mut Reader<'_>) -> Option<InfSet> {
    Some(match r.word()? {
        0 => {
            let n = r.len()?;
            let mut ranges = IntRanges::of_ints([]);
            let mut intervals = Vec::with_capacity(n);
            for _ in 0..n {
                let (lo, hi) = (r.int()?, r.int()?);
                ranges = ranges.union(&IntRanges::between(lo, hi));
                intervals.push((lo, hi));
            }
            // Only the canonical intervals (what a value holds) are read back.
            if ranges.intervals() != intervals.as_slice() {
                return None;
            }
            InfSet::Ints(ranges)
        }
        1 => InfSet::Chars,
        2 => InfSet::Maps(read_value(r)?, read_value(r)?),
        3 => InfSet::Seqs(read_value(r)?),
        4 => InfSet::Sets(read_value(r)?),
        5 => InfSet::DataType(r.word()?),
        6 => {
            let n = r.len()?;
            let fields: Arc<[FieldSet]> = (0..n)
                .map(|_| {
                    Some(match r.word()? {
                        0 => FieldSet::Finite(SetElems::new(read_sorted(r)?)),
                        1 => FieldSet::Infinite(Arc::new(read_inf_set(r)?)),
                        2 => FieldSet::DataType(r.word()?),
                        _ => return None,
                    })
                })
                .collect::<Option<_>>()?;
            InfSet::Dotted(fields)
        }
        7 => InfSet::Tuples(read_values(r)?),
        8 => InfSet::Productions(read_value(r)?),
        9 => InfSet::Union(read_values(r)?),
        10 => InfSet::Inter(read_values(r)?),
        11 => InfSet::Diff(read_value(r)?, read_value(r)?),
        12 => InfSet::Procs,
        _ => return None,
    })
}

fn read_bindings(r: &mut Reader<'_>) -> Option<Arc<[Binding]>> {
    let n = r.len()?;
    (0..n)
        .map(|_| {
            Some(match r.word()? {
                0 => Binding::Value(read_value(r)?),
                1 => Binding::Let(Arc::new(read_let(r)?)),
                _ => return None,
            })
        })
        .collect()
}

fn read_let(r: &mut Reader<'_>) -> Option<LetRef> {
    let group = r.word()?;
    Some(LetRef {
        group,
        captured: read_bindings(r)?,
    })
}

fn read_target(r: &mut Reader<'_>) -> Option<Target> {
    Some(match r.word()? {
        0 => Target::Global(r.word()?),
        1 => {
            let l = read_let(r)?;
            Target::Let(Arc::new(l), r.word()?)
        }
        2 => {
            let node = r.word()?;
            Target::Lambda(node, read_bindings(r)?)
        }
        3 => Target::Builtin(*Builtin::ALL.get(r.word()? as usize)?),
        4 => Target::Compression(COMPRESSION_NAMES.get(r.word()? as usize)?.0),
        _ => return None,
    })
}

fn read_func(r: &mut Reader<'_>) -> Option<Func> {
    let target = read_target(r)?;
    let n = r.len()?;
    let applied = (0..n).map(|_| read_values(r)).collect::<Option<_>>()?;
    Some(Func { target, applied })
}

/// Reads a prefix closure.
pub(crate) fn read_prefix(r: &mut Reader<'_>) -> Option<PrefixClosure> {
    let expr = r.word()?;
    let captured = read_bindings(r)?;
    let choice = match r.word()? {
        0 => None,
        1 => Some(read_values(r)?),
        _ => return None,
    };
    Some(PrefixClosure {
        expr,
        captured,
        choice,
    })
}

/// Reads an event set.
pub(crate) fn read_set(r: &mut Reader<'_>) -> Option<Arc<[Value]>> {
    read_sorted(r)
}

/// Reads an event relation.
pub(crate) fn read_relation(r: &mut Reader<'_>) -> Option<Arc<[(Value, Value)]>> {
    read_pairs(r, false)
}

/// Reads a compression.
pub(crate) fn read_compression(r: &mut Reader<'_>) -> Option<Compression> {
    Some(COMPRESSION_NAMES.get(r.word()? as usize)?.1)
}

/// Reads a priority order.
pub(crate) fn read_priority(r: &mut Reader<'_>) -> Option<PriorityOrder> {
    Some(match r.word()? {
        0 => {
            let n = r.len()?;
            PriorityOrder::Levels((0..n).map(|_| read_sorted(r)).collect::<Option<_>>()?)
        }
        1 => PriorityOrder::Partial {
            events: read_sorted(r)?,
            order: read_pairs(r, false)?,
            maximal: read_sorted(r)?,
        },
        2 => PriorityOrder::TauOver(read_sorted(r)?),
        _ => return None,
    })
}

fn read_procs(r: &mut Reader<'_>) -> Option<Vec<Proc>> {
    let n = r.len()?;
    (0..n).map(|_| read_proc(r)).collect()
}

/// Reads a process.
pub(crate) fn read_proc(r: &mut Reader<'_>) -> Option<Proc> {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
        read_proc_node(r).map(Proc::new)
    })
}

fn read_proc_node(r: &mut Reader<'_>) -> Option<ProcNode> {
    Some(match r.word()? {
        0 => ProcNode::Stop,
        1 => ProcNode::Skip,
        2 => ProcNode::Div,
        3 => {
            let target = read_target(r)?;
            ProcNode::Call(Call {
                target,
                args: read_values(r)?,
            })
        }
        4 => ProcNode::Prefix(read_prefix(r)?),
        5 => ProcNode::ExtChoice(read_procs(r)?),
        6 => ProcNode::IntChoice(read_procs(r)?),
        7 => ProcNode::Interleave(read_procs(r)?),
        8 => {
            let a = read_values(r)?;
            ProcNode::Parallel(a, read_procs(r)?)
        }
        9 => {
            let n = r.len()?;
            let cs = (0..n)
                .map(|_| Some((read_values(r)?, read_proc(r)?)))
                .collect::<Option<_>>()?;
            ProcNode::AlphaParallel(cs)
        }
        10 => ProcNode::Seq(read_proc(r)?, read_proc(r)?),
        11 => {
            let q = read_proc(r)?;
            ProcNode::Hide(q, read_values(r)?)
        }
        12 => {
            let q = read_proc(r)?;
            ProcNode::Rename(q, read_pairs(r, false)?)
        }
        13 => {
            let a = read_proc(r)?;
            let rel = read_pairs(r, false)?;
            ProcNode::Link(a, rel, read_proc(r)?)
        }
        14 => ProcNode::Interrupt(read_proc(r)?, read_proc(r)?),
        15 => ProcNode::Timeout(read_proc(r)?, read_proc(r)?),
        16 => ProcNode::Timed(Arc::new(read_timed(r)?)),
        17 => {
            let c = read_compression(r)?;
            ProcNode::Compressed(c, read_proc(r)?)
        }
        18 => {
            let a = read_proc(r)?;
            let s = read_values(r)?;
            ProcNode::Exception(a, s, read_proc(r)?)
        }
        19 => {
            let q = read_proc(r)?;
            ProcNode::Prioritise(q, Arc::new(read_priority(r)?))
        }
        _ => return None,
    })
}

fn read_timed(r: &mut Reader<'_>) -> Option<TimedProc> {
    Some(match r.word()? {
        0 => TimedProc::Stop(read_value(r)?),
        1 => TimedProc::Skip(read_value(r)?),
        2 => {
            let v = read_value(r)?;
            let n = r.int()?;
            TimedProc::Delay(v, n, read_proc(r)?)
        }
        3 => {
            let c = read_prefix(r)?;
            TimedProc::Prefix(c, read_value(r)?)
        }
        4 => {
            let s = read_values(r)?;
            TimedProc::SyncChoice(s, read_procs(r)?)
        }
        5 => {
            let a = read_proc(r)?;
            let s = read_values(r)?;
            TimedProc::SyncInterrupt(a, s, read_proc(r)?)
        }
        6 => {
            let v = read_value(r)?;
            TimedProc::Priority(v, read_proc(r)?)
        }
        7 => {
            let v = read_value(r)?;
            TimedProc::Operand(v, read_proc(r)?)
        }
        8 => TimedProc::Terminated(read_value(r)?),
        _ => return None,
    })
}
