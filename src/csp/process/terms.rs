//! Process states as terms of the term library, and back.
//!
//! Operators are function symbols (`[]`/n, `|~|`/n, `;`/2, ...). What is not a process is an
//! integer argument numbering an entry of a per-system intern table: a prefix closure
//! (`prefix(k)`), an event set (`[|A|]`), a renaming or link relation, the alphabets of an
//! alphabetised parallel. Equal [`Proc`]s therefore give one term.
//!
//! States are *normalised*: a call at an active position (the top of the process, a
//! component of a choice, a parallel, a hiding, the left of `;`, both sides of `/\`, the left
//! of `[>`) is unfolded, so a [`Call`] is never a state. Positions that are not active yet (the
//! branches of `|~|`, the right of `;` and of `[>`) keep the process unevaluated as
//! `lazy(k)`, activated when a tau makes it active; so `P = a -> SKIP ; P` or
//! `P = STOP |~| P` are fine, while an unguarded recursion such as `P = P [] a -> STOP` is
//! reported as an error instead of looping.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use parking_lot::RwLock;

use crate::hash::WordBuildHasher;
use crate::term::{SharedSection, Symbol, TermId, TermRef};
use crate::ts::Label;

use super::compress::CompressedSlot;
use super::labels::{Alphabets, LabelSet, Labels, LinkMap, RenameMap};
use super::priority::CompiledPriority;
use crate::csp::error::{CspError, ErrorKind};
use crate::csp::eval::Script;
use crate::csp::value::{
    EventRelation, EventSet, PrefixClosure, PriorityOrder, Proc, ProcNode, Value,
};
use crate::reduce::Compression;

/// Deepest nesting of process operators followed when building or firing a term. Building and
/// firing grow their thread's stack as needed (`stacker`), so this is no limit a script
/// reaches in practice: it only stops a runaway recursion before it exhausts memory.
pub const MAX_NESTING: u32 = 10_000_000;

/// Stack left free below which a recursive step of building or firing moves to a new stack
/// segment, and the size of that segment.
pub(crate) const STACK_RED_ZONE: usize = 256 << 10;
pub(crate) const STACK_SEGMENT: usize = 8 << 20;

/// The shared section every term operation of the semantics runs in.
pub(crate) type Section<'t> = SharedSection<'t>;

/// The term `id` stands for, borrowed for the section.
#[inline]
pub(crate) fn term<'s>(sec: &'s Section<'_>, id: TermId) -> TermRef<'s> {
    // SAFETY: every `TermId` the semantics holds is held by its system's root set (the memo
    // tables and the pinned states, see `system.rs`), which lives as long as the system; and
    // during the section no collection runs.
    unsafe { sec.term(id) }
}

/// The operator of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Stop,
    Skip,
    /// The terminated process Ω (after ✓).
    Omega,
    /// `prefix(k)`: prefix closure `k`.
    Prefix,
    /// `lazy(k)`: the unevaluated process `k` at a position that is not active yet.
    Lazy,
    Ext,
    Int,
    Interleave,
    /// `[|A|](k, P1, ..., Pn)`
    Parallel,
    /// `[A||B](k, P1, ..., Pn)`
    AlphaParallel,
    /// `;(P, lazy)`
    Seq,
    /// `\(P, k)`
    Hide,
    /// `[[R]](P, k)`
    Rename,
    /// `[<->](P, k, Q)`
    Link,
    /// `/\(P, Q)`
    Interrupt,
    /// `[>(P, lazy)`
    Timeout,
    /// A network state of a system (see `network.rs`).
    Net,
    /// `tstop(L)`: timed `STOP` with `tock` label `L` (see `timed.rs`, as the six below).
    TStop,
    /// `tskip(L)`
    TSkip,
    /// `delay(L, n, lazy)`: `n` tocks, then the lazy process.
    Delay,
    /// `tprefix(k)`: timed prefix `k`.
    TPrefix,
    /// `[+A+](k, P1, ..., Pn)`: synchronising external choice.
    SyncExt,
    /// `/+A+\(k, P, Q)`: synchronising interrupt.
    SyncInt,
    /// `tprio(L, P)`: `timed_priority(P)`.
    TPrio,
    /// `toperand(L, P)`: `P` as an operand of a parallel of a timed section.
    TOperand,
    /// `tΩ(L)`: a terminated operand of a parallel of a timed section (it agrees to `L`).
    TOmega,
    /// `compress(k, s)`: state `s` of compressed process `k` (see `compress.rs`).
    Compressed,
    /// `[|A|>(k, P, lazy)`: exception (see `priority.rs`, as the one below).
    Exception,
    /// `prio(k, P)`: `P` under priority order `k`.
    Prio,
    /// `DIV`: a tau to itself.
    Div,
    /// `chase(P)`: `P` with its taus forced, on the fly (see `chase.rs`).
    Chase,
}

const NAMES: [(&str, Op); 30] = [
    ("STOP", Op::Stop),
    ("SKIP", Op::Skip),
    ("Ω", Op::Omega),
    ("prefix", Op::Prefix),
    ("lazy", Op::Lazy),
    ("[]", Op::Ext),
    ("|~|", Op::Int),
    ("|||", Op::Interleave),
    ("[|A|]", Op::Parallel),
    ("[A||B]", Op::AlphaParallel),
    (";", Op::Seq),
    ("\\", Op::Hide),
    ("[[R]]", Op::Rename),
    ("[<->]", Op::Link),
    ("/\\", Op::Interrupt),
    ("[>", Op::Timeout),
    ("tstop", Op::TStop),
    ("tskip", Op::TSkip),
    ("delay", Op::Delay),
    ("tprefix", Op::TPrefix),
    ("[+A+]", Op::SyncExt),
    ("/+A+\\", Op::SyncInt),
    ("tprio", Op::TPrio),
    ("compress", Op::Compressed),
    ("[|A|>", Op::Exception),
    ("prio", Op::Prio),
    ("DIV", Op::Div),
    ("chase", Op::Chase),
    // Last, so that the ranks of the operators before them stay as they were.
    ("toperand", Op::TOperand),
    ("tΩ", Op::TOmega),
];

impl Op {
    /// The operator of `t` (integer terms are not processes and never asked).
    pub(crate) fn of(t: TermRef<'_>) -> Op {
        let name = t.symbol().name();
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
            .unwrap_or(Op::Net)
    }

    /// The rank of this operator in the canonical order of terms ([`Encoding::cmp_terms`]).
    pub(super) fn rank(self) -> usize {
        NAMES
            .iter()
            .position(|(_, op)| *op == self)
            .unwrap_or(NAMES.len())
    }

    /// The intern table numbered by argument `i` of a term of this operator, if that argument
    /// is a number.
    pub(super) fn table_of(self, i: usize) -> Option<Table> {
        match (self, i) {
            (Op::Prefix, 0) => Some(Table::Prefixes),
            (Op::Lazy, 0) => Some(Table::Lazies),
            (Op::Parallel | Op::SyncExt | Op::SyncInt | Op::Exception, 0) | (Op::Hide, 1) => {
                Some(Table::Sets)
            }
            (Op::Prio, 0) => Some(Table::Priorities),
            (Op::TPrefix, 0) => Some(Table::TimedPrefixes),
            (Op::Compressed, 0) => Some(Table::Compressed),
            (Op::AlphaParallel, 0) => Some(Table::Alphabets),
            (Op::Rename, 1) => Some(Table::Renamings),
            (Op::Link, 1) => Some(Table::Links),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .unwrap_or("net")
    }

    /// The symbol of this operator with `arity` arguments.
    pub(crate) fn symbol(self, arity: usize) -> Symbol {
        Symbol::new(self.name(), arity)
    }

    /// True for the static operators: those that keep their shape under transitions (a
    /// network's nodes).
    pub(crate) fn is_static(self) -> bool {
        matches!(
            self,
            Op::Interleave | Op::Parallel | Op::AlphaParallel | Op::Hide | Op::Rename | Op::Link
        )
    }
}

/// The operator of rank `rank` in the canonical order of terms ([`Op::rank`]), if one has it
/// (a network state's does not).
pub(super) fn op_of_rank(rank: usize) -> Option<Op> {
    NAMES.get(rank).map(|&(_, op)| op)
}

/// The intern tables of an [`Encoding`], as named by an operator's numeric argument.
#[derive(Clone, Copy)]
pub(super) enum Table {
    Prefixes,
    Lazies,
    Sets,
    Alphabets,
    Renamings,
    Links,
    TimedPrefixes,
    Compressed,
    Priorities,
}

/// A table numbering distinct values of `K`, each with data `V` computed once.
pub(crate) struct Interned<K, V> {
    index: DashMap<K, u32, WordBuildHasher>,
    items: RwLock<Vec<Arc<(K, V)>>>,
}

impl<K: Clone + Eq + Hash, V> Interned<K, V> {
    fn new() -> Self {
        Interned {
            index: DashMap::default(),
            items: RwLock::new(Vec::new()),
        }
    }

    /// Orders entries `a` and `b` by their keys (not by their numbers, which are given in the
    /// order the keys are met).
    fn cmp_entries(&self, a: u32, b: u32) -> Ordering
    where
        K: Ord,
    {
        if a == b {
            return Ordering::Equal;
        }
        let items = self.items.read();
        items[a as usize].0.cmp(&items[b as usize].0)
    }

    /// The number of `key`, computing its data with `make` the first time.
    pub(crate) fn intern(
        &self,
        key: &K,
        make: impl FnOnce(&K) -> Result<V, CspError>,
    ) -> Result<u32, CspError> {
        if let Some(k) = self.index.get(key) {
            return Ok(*k);
        }
        let data = make(key)?;
        let entry = self.index.entry(key.clone()).or_insert_with(|| {
            let mut items = self.items.write();
            items.push(Arc::new((key.clone(), data)));
            (items.len() - 1) as u32
        });
        Ok(*entry)
    }

    /// The entry numbered `k`.
    pub(crate) fn get(&self, k: u32) -> Arc<(K, V)> {
        self.items.read()[k as usize].clone()
    }
}

/// The intern tables of one system: what the integer arguments of its terms number.
pub(crate) struct Encoding {
    pub(crate) script: Arc<Script>,
    /// The labels (tau, ✓ and the events).
    pub(crate) labels: Arc<Labels>,
    pub(crate) prefixes: Interned<PrefixClosure, ()>,
    pub(crate) lazies: Interned<Proc, ()>,
    pub(crate) sets: Interned<EventSet, LabelSet>,
    pub(crate) renamings: Interned<EventRelation, RenameMap>,
    pub(crate) links: Interned<EventRelation, LinkMap>,
    pub(crate) alphabets: Interned<Vec<EventSet>, Alphabets>,
    /// Prefixes of timed sections (each a [`ProcNode::Timed`] prefix), with their `tock`'s
    /// label.
    pub(crate) timed_prefixes: Interned<Proc, Label>,
    /// Compressed processes (`normal(P)`, ...): the compression and its argument, with the
    /// explicit LTS made the first time one of its states fires.
    pub(crate) compressed: Interned<(Compression, Proc), CompressedSlot>,
    /// The priority orders of `prioritise` and its kin, compiled to labels.
    pub(crate) priorities: Interned<Arc<PriorityOrder>, CompiledPriority>,
    /// Activated processes: `lazy(k)` made active (calls unfolded), by `k`.
    activated: DashMap<u32, TermId, WordBuildHasher>,
    omega: OnceLock<TermId>,
    /// The signal that stops the long work done outside a search's own loop (building a
    /// process, firing a term, exploring a process to compress it); the run using the system
    /// sets it (see `CspSystem::set_stop`, and `stop_poll.rs`).
    pub(crate) stop: parking_lot::Mutex<crate::explore::StopSignal>,
    /// A number no other encoding of the run has: the same term stands for different processes
    /// in two encodings (their tables number prefixes, sets, ... in the order met), so the
    /// memo of the canonical order of terms (`term_order.rs`) holds for one encoding only.
    pub(super) number: u64,
}

/// The number of the next encoding made ([`Encoding::number`]).
static NEXT_ENCODING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Per-activation bookkeeping: the lazy processes being activated on this path (to find
/// unguarded recursion) and the nesting depth.
#[derive(Default)]
pub(crate) struct BuildPath {
    activating: Vec<u32>,
    depth: u32,
}

fn too_deep() -> CspError {
    CspError::unpositioned(
        ErrorKind::Limit,
        format!("a process term is nested more than {MAX_NESTING} operators deep"),
    )
}

impl Encoding {
    pub(crate) fn new(script: Arc<Script>) -> Result<Encoding, CspError> {
        let labels = Arc::new(Labels::new(script.clone())?);
        Ok(Encoding {
            script,
            labels,
            prefixes: Interned::new(),
            lazies: Interned::new(),
            sets: Interned::new(),
            renamings: Interned::new(),
            links: Interned::new(),
            alphabets: Interned::new(),
            timed_prefixes: Interned::new(),
            compressed: Interned::new(),
            priorities: Interned::new(),
            activated: DashMap::default(),
            omega: OnceLock::new(),
            stop: parking_lot::Mutex::new(crate::explore::StopSignal::new()),
            // Ordering: Relaxed; only the uniqueness of the numbers matters.
            number: NEXT_ENCODING.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Calls `visit` on every term the tables hold (for the garbage collector).
    pub(crate) fn for_each_term(&self, visit: &mut dyn FnMut(TermId)) {
        for e in self.activated.iter() {
            visit(*e.value());
        }
        if let Some(&o) = self.omega.get() {
            visit(o);
        }
    }

    /// Orders entries `a` and `b` of `table` by their keys.
    pub(super) fn cmp_numbered(&self, table: Table, a: u32, b: u32) -> Ordering {
        match table {
            Table::Prefixes => self.prefixes.cmp_entries(a, b),
            Table::Lazies => self.lazies.cmp_entries(a, b),
            Table::Sets => self.sets.cmp_entries(a, b),
            Table::Alphabets => self.alphabets.cmp_entries(a, b),
            Table::Renamings => self.renamings.cmp_entries(a, b),
            Table::Links => self.links.cmp_entries(a, b),
            Table::TimedPrefixes => self.timed_prefixes.cmp_entries(a, b),
            Table::Compressed => self.compressed.cmp_entries(a, b),
            Table::Priorities => self.priorities.cmp_entries(a, b),
        }
    }

    /// For each term that is the unfolding of a named process (a call such as `PHIL(3)`), that
    /// call; the least one where several unfold to the same term.
    pub(crate) fn calls_by_term(&self) -> HashMap<TermId, Proc> {
        let mut calls: HashMap<TermId, Proc> = HashMap::new();
        for e in self.activated.iter() {
            let p = self.lazies.get(*e.key()).0.clone();
            if !matches!(p.node(), ProcNode::Call(_)) {
                continue;
            }
            match calls.get_mut(e.value()) {
                Some(q) if *q <= p => {}
                Some(q) => *q = p,
                None => {
                    calls.insert(*e.value(), p);
                }
            }
        }
        calls
    }

    /// The terminated process Ω.
    pub(crate) fn omega<'s>(&self, sec: &'s Section<'_>) -> TermRef<'s> {
        let (t, _) = sec.create(Op::Omega.symbol(0), &[]);
        // Kept by the root set from the first call on (the set reads `omega`).
        self.omega.get_or_init(|| t.id());
        t
    }

    pub(super) fn set_id(&self, set: &EventSet) -> Result<u32, CspError> {
        self.sets
            .intern(set, |s| LabelSet::of_events(&self.labels, s))
    }

    /// The term of `p` at an active position (calls unfolded).
    pub(crate) fn build<'s>(
        &self,
        sec: &'s Section<'_>,
        p: &Proc,
        path: &mut BuildPath,
    ) -> Result<TermRef<'s>, CspError> {
        if path.depth >= MAX_NESTING {
            return Err(too_deep());
        }
        super::growth::check()?;
        self.poll_stop(1)?;
        path.depth += 1;
        let r = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.build_node(sec, p, path)
        });
        path.depth -= 1;
        r
    }

    fn build_node<'s>(
        &self,
        sec: &'s Section<'_>,
        p: &Proc,
        path: &mut BuildPath,
    ) -> Result<TermRef<'s>, CspError> {
        let mk = |op: Op, args: &[TermRef<'_>]| sec.create(op.symbol(args.len()), args).0;
        let all = |ps: &[Proc], path: &mut BuildPath| -> Result<Vec<TermRef<'s>>, CspError> {
            ps.iter().map(|q| self.build(sec, q, path)).collect()
        };
        // A replicated parallel over millions of values: refused before its components are
        // built (the network would be refused anyway).
        let components = match p.node() {
            ProcNode::Interleave(ps) | ProcNode::Parallel(_, ps) => ps.len(),
            ProcNode::AlphaParallel(cs) => cs.len(),
            _ => 0,
        };
        if components as u64 > super::network::MAX_LEAVES {
            return Err(super::network::too_many_leaves());
        }
        Ok(match p.node() {
            ProcNode::Stop => mk(Op::Stop, &[]),
            ProcNode::Skip => mk(Op::Skip, &[]),
            ProcNode::Div => mk(Op::Div, &[]),
            ProcNode::Call(_) => {
                let k = self.lazies.intern(p, |_| Ok(()))?;
                return self.activate(sec, k, path);
            }
            ProcNode::Prefix(c) => {
                let k = self.prefixes.intern(c, |_| Ok(()))?;
                mk(Op::Prefix, &[sec.int(k as i64)])
            }
            ProcNode::ExtChoice(ps) if ps.is_empty() => mk(Op::Stop, &[]),
            ProcNode::ExtChoice(ps) => mk(Op::Ext, &all(ps, path)?),
            ProcNode::IntChoice(ps) if ps.is_empty() => mk(Op::Stop, &[]),
            ProcNode::IntChoice(ps) => {
                let lazies: Vec<TermRef<'s>> = ps
                    .iter()
                    .map(|q| self.lazy(sec, q))
                    .collect::<Result<_, _>>()?;
                mk(Op::Int, &lazies)
            }
            ProcNode::Interleave(ps) if ps.is_empty() => mk(Op::Skip, &[]),
            ProcNode::Interleave(ps) => mk(Op::Interleave, &all(ps, path)?),
            ProcNode::Parallel(_, ps) if ps.is_empty() => mk(Op::Skip, &[]),
            ProcNode::Parallel(a, ps) => {
                let mut args = vec![sec.int(self.set_id(a)? as i64)];
                args.extend(all(ps, path)?);
                mk(Op::Parallel, &args)
            }
            ProcNode::AlphaParallel(cs) if cs.is_empty() => mk(Op::Skip, &[]),
            ProcNode::AlphaParallel(cs) => {
                let alphas: Vec<EventSet> = cs.iter().map(|(a, _)| a.clone()).collect();
                let k = self.alphabets_id(&alphas)?;
                let mut args = vec![sec.int(k as i64)];
                for (_, q) in cs {
                    args.push(self.build(sec, q, path)?);
                }
                mk(Op::AlphaParallel, &args)
            }
            ProcNode::Seq(l, r) => {
                let l = self.build(sec, l, path)?;
                mk(Op::Seq, &[l, self.lazy(sec, r)?])
            }
            ProcNode::Hide(q, a) => {
                let q = self.build(sec, q, path)?;
                self.hide(sec, q, self.set_id(a)?)?
            }
            ProcNode::Rename(q, rel) => {
                let q = self.build(sec, q, path)?;
                self.rename(sec, q, self.relation_id(rel)?)?
            }
            ProcNode::Link(l, rel, r) => {
                let l = self.build(sec, l, path)?;
                let r = self.build(sec, r, path)?;
                let k = self
                    .links
                    .intern(rel, |rel| LinkMap::new(&self.labels, rel))?;
                mk(Op::Link, &[l, sec.int(k as i64), r])
            }
            ProcNode::Interrupt(l, r) => {
                let l = self.build(sec, l, path)?;
                mk(Op::Interrupt, &[l, self.build(sec, r, path)?])
            }
            ProcNode::Timeout(l, r) => {
                let l = self.build(sec, l, path)?;
                mk(Op::Timeout, &[l, self.lazy(sec, r)?])
            }
            ProcNode::Timed(t) => self.build_timed(sec, p, t, path)?,
            ProcNode::Compressed(Compression::Chase, q) => {
                mk(Op::Chase, &[self.build(sec, q, path)?])
            }
            ProcNode::Compressed(c, q) => {
                let k = self
                    .compressed
                    .intern(&(*c, q.clone()), |_| Ok(CompressedSlot::default()))?;
                mk(Op::Compressed, &[sec.int(k as i64), sec.int(0)])
            }
            ProcNode::Exception(l, a, r) => {
                let k = sec.int(self.set_id(a)? as i64);
                let l = self.build(sec, l, path)?;
                mk(Op::Exception, &[k, l, self.lazy(sec, r)?])
            }
            ProcNode::Prioritise(q, order) => {
                let k = self
                    .priorities
                    .intern(order, |o| CompiledPriority::new(&self.labels, o))?;
                let q = self.build(sec, q, path)?;
                mk(Op::Prio, &[sec.int(k as i64), q])
            }
        })
    }

    /// `q \ A` for event set number `set`, with nested hidings merged: `(P \ A) \ B` is
    /// `P \ union(A, B)` (the two have the same transitions), so that a recursion through
    /// hiding such as `P = (a -> P) \ {a}` stays finite.
    pub(crate) fn hide<'s>(
        &self,
        sec: &'s Section<'_>,
        q: TermRef<'s>,
        set: u32,
    ) -> Result<TermRef<'s>, CspError> {
        let (q, set) = if Op::of(q) == Op::Hide {
            let inner = int_arg(q, 1);
            let set = if inner == set {
                set
            } else {
                let mut union: Vec<_> = self.sets.get(inner).0.to_vec();
                union.extend(self.sets.get(set).0.iter().cloned());
                union.sort_unstable();
                union.dedup();
                self.set_id(&union.into())?
            };
            (q.arg(0), set)
        } else {
            (q, set)
        };
        Ok(sec.create(Op::Hide.symbol(2), &[q, sec.int(set as i64)]).0)
    }

    /// The number of the alphabets `alphas` of an alphabetised parallel.
    pub(super) fn alphabets_id(&self, alphas: &Vec<EventSet>) -> Result<u32, CspError> {
        self.alphabets.intern(alphas, |sets| {
            let sets = sets
                .iter()
                .map(|s| LabelSet::of_events(&self.labels, s))
                .collect::<Result<_, _>>()?;
            Ok(Alphabets::new(sets, self.labels.count()))
        })
    }

    /// The number of the renaming `rel`.
    pub(super) fn relation_id(&self, rel: &EventRelation) -> Result<u32, CspError> {
        self.renamings
            .intern(rel, |rel| RenameMap::new(&self.labels, rel))
    }

    /// `q [[R]]` for renaming number `rel`, with nested renamings merged: `(P [[R1]]) [[R2]]`
    /// is `P [[R]]` for the composition `R` (an event of `P` renamed by `R1`, then what it
    /// became renamed by `R2`; events outside a relation's domain unchanged), so that a
    /// recursion through renaming such as `P = a -> P [[a <- b]]` stays finite.
    pub(crate) fn rename<'s>(
        &self,
        sec: &'s Section<'_>,
        q: TermRef<'s>,
        rel: u32,
    ) -> Result<TermRef<'s>, CspError> {
        let described = |r: &EventRelation| r.iter().any(|p| matches!(p.0, Value::Infinite(_)));
        let (q, rel) = if Op::of(q) == Op::Rename {
            let inner = self.renamings.get(int_arg(q, 1));
            let outer = self.renamings.get(rel);
            if described(&inner.0) || described(&outer.0) {
                // (Relations over events that are not enumerated are not composed.)
                (q, rel)
            } else {
                let composed = compose_relations(&inner.0, &outer.0);
                (q.arg(0), self.relation_id(&composed)?)
            }
        } else {
            (q, rel)
        };
        Ok(sec
            .create(Op::Rename.symbol(2), &[q, sec.int(rel as i64)])
            .0)
    }

    /// `lazy(k)` for `p`.
    pub(super) fn lazy<'s>(&self, sec: &'s Section<'_>, p: &Proc) -> Result<TermRef<'s>, CspError> {
        let k = self.lazies.intern(p, |_| Ok(()))?;
        Ok(sec.create(Op::Lazy.symbol(1), &[sec.int(k as i64)]).0)
    }

    /// The active term of lazy process `k` (memoised).
    fn activate<'s>(
        &self,
        sec: &'s Section<'_>,
        k: u32,
        path: &mut BuildPath,
    ) -> Result<TermRef<'s>, CspError> {
        if let Some(t) = self.activated.get(&k) {
            return Ok(term(sec, *t));
        }
        let entry = self.lazies.get(k);
        let p = &entry.0;
        if path.activating.contains(&k) {
            let what = format!("`{}`", self.script.show_proc(p));
            let mut error = CspError::unpositioned(
                ErrorKind::Eval,
                format!(
                    "unguarded recursion: unfolding {what} reaches {what} again before any event"
                ),
            );
            // Point at the definition of the process that recurses, when it is a named one.
            if let ProcNode::Call(c) = p.node() {
                error.location = self.script.definition_location(&self.script.call_name(c));
            }
            return Err(error);
        }
        path.activating.push(k);
        let body = match p.node() {
            ProcNode::Call(c) => self.script.unfold(c).map(Some),
            _ => Ok(None),
        };
        let built = match body {
            Ok(Some(body)) => self.build(sec, &body, path),
            Ok(None) => self.build_node(sec, p, path),
            Err(e) => Err(e),
        };
        path.activating.pop();
        let t = built?;
        // The table is part of the root set: `t` stays alive after the section.
        self.activated.insert(k, t.id());
        Ok(t)
    }

    /// The active form of the term `lazy(k)`.
    pub(crate) fn activate_lazy<'s>(
        &self,
        sec: &'s Section<'_>,
        lazy: TermRef<'_>,
    ) -> Result<TermRef<'s>, CspError> {
        debug_assert_eq!(Op::of(lazy), Op::Lazy);
        let k = int_arg(lazy, 0);
        self.activate(sec, k, &mut BuildPath::default())
    }

    /// The process a term stands for (`None` for Ω).
    pub(crate) fn to_proc(&self, t: TermRef<'_>) -> Option<Proc> {
        // A term nested thousands of operators deep (a chain `(STOP /\ STOP) /\ …` 20,000
        // long, shown in a counterexample) recurses as deep: on a stack grown as needed.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.to_proc_here(t))
    }

    /// [`Encoding::to_proc`] on the current stack.
    fn to_proc_here(&self, t: TermRef<'_>) -> Option<Proc> {
        let procs = |from: usize| -> Vec<Proc> {
            t.args()
                .skip(from)
                .map(|a| self.to_proc(a).unwrap_or_else(|| Proc::new(ProcNode::Skip)))
                .collect()
        };
        let arg = |i: usize| {
            self.to_proc(t.arg(i))
                .unwrap_or_else(|| Proc::new(ProcNode::Skip))
        };
        let node = match Op::of(t) {
            Op::Omega => return None,
            Op::Net => return None,
            Op::Stop => ProcNode::Stop,
            Op::Skip => ProcNode::Skip,
            Op::Div => ProcNode::Div,
            Op::Chase => ProcNode::Compressed(Compression::Chase, arg(0)),
            Op::Prefix => ProcNode::Prefix(self.prefixes.get(int_arg(t, 0)).0.clone()),
            Op::Lazy => return Some(self.lazies.get(int_arg(t, 0)).0.clone()),
            Op::Ext => ProcNode::ExtChoice(procs(0)),
            Op::Int => ProcNode::IntChoice(procs(0)),
            Op::Interleave => ProcNode::Interleave(procs(0)),
            Op::Parallel => ProcNode::Parallel(self.sets.get(int_arg(t, 0)).0.clone(), procs(1)),
            Op::AlphaParallel => {
                let alphas = self.alphabets.get(int_arg(t, 0));
                ProcNode::AlphaParallel(alphas.0.iter().cloned().zip(procs(1)).collect())
            }
            Op::Seq => ProcNode::Seq(arg(0), arg(1)),
            Op::Hide => ProcNode::Hide(arg(0), self.sets.get(int_arg(t, 1)).0.clone()),
            Op::Rename => ProcNode::Rename(arg(0), self.renamings.get(int_arg(t, 1)).0.clone()),
            Op::Link => ProcNode::Link(arg(0), self.links.get(int_arg(t, 1)).0.clone(), arg(2)),
            Op::Interrupt => ProcNode::Interrupt(arg(0), arg(1)),
            Op::Timeout => ProcNode::Timeout(arg(0), arg(1)),
            Op::Exception => {
                ProcNode::Exception(arg(1), self.sets.get(int_arg(t, 0)).0.clone(), arg(2))
            }
            Op::Prio => ProcNode::Prioritise(arg(1), self.priorities.get(int_arg(t, 0)).0.clone()),
            Op::TStop
            | Op::TSkip
            | Op::Delay
            | Op::TPrefix
            | Op::SyncExt
            | Op::SyncInt
            | Op::TPrio
            | Op::TOperand
            | Op::TOmega => return self.timed_to_proc(t),
            Op::Compressed => {
                let entry = self.compressed.get(int_arg(t, 0));
                ProcNode::Compressed(entry.0 .0, entry.0 .1.clone())
            }
        };
        Some(Proc::new(node))
    }
}

/// The integer argument `i` of `t`, as a table index.
#[inline]
pub(crate) fn int_arg(t: TermRef<'_>, i: usize) -> u32 {
    t.arg(i).int_value().unwrap_or(0) as u32
}

/// The renaming `inner` then `outer`: `a` becomes `c` when `inner` takes `a` to `b` (or leaves
/// `a` alone, `b = a`, when `a` is outside its domain) and `outer` takes `b` to `c` (or leaves
/// it alone).
fn compose_relations(inner: &[(Value, Value)], outer: &[(Value, Value)]) -> EventRelation {
    let images = |rel: &[(Value, Value)], b: &Value| -> Vec<Value> {
        rel.iter()
            .filter(|(from, _)| from == b)
            .map(|(_, to)| to.clone())
            .collect()
    };
    let mut composed = Vec::new();
    for (a, b) in inner {
        let outer_images = images(outer, b);
        if outer_images.is_empty() {
            composed.push((a.clone(), b.clone()));
        } else {
            composed.extend(outer_images.into_iter().map(|c| (a.clone(), c)));
        }
    }
    for (b, c) in outer {
        if !inner.iter().any(|(from, _)| from == b) {
            composed.push((b.clone(), c.clone()));
        }
    }
    composed.sort();
    composed.dedup();
    composed.into()
}
