//! CSP's firing rules (Roscoe's structured operational semantics) on process terms, memoised
//! by term address.
//!
//! - `STOP` and Ω have no transitions; `SKIP -✓-> Ω`; `DIV -τ-> DIV`; a prefix fires its
//!   events.
//! - `P [] Q`: a tau of a side keeps the choice (`P [] Q -τ-> P' [] Q`); a visible event or ✓
//!   resolves it.
//! - `P |~| Q -τ-> P` and `-τ-> Q`.
//! - `P ; Q`: `P`'s ✓ becomes a tau to `Q`; its other moves keep `; Q`.
//! - `P /\ Q`: `P`'s moves keep the interrupt, except its ✓, which ends it; `Q`'s tau keeps it,
//!   `Q`'s visible events and ✓ resolve it to `Q`'s continuation.
//! - `P [> Q`: `P`'s visible events and ✓ resolve it, `P`'s tau keeps it, and a tau moves to `Q`.
//! - The static operators (parallels, hiding, renaming, linking) are the rules of a network
//!   (`network.rs`) whose leaves are the operands.
//! - The exception `P [| A |> Q` and priority (`prioritise` and its kin): `priority.rs`.
//! - The processes of timed sections (timed `STOP`, `SKIP` and prefixes, delays, the
//!   synchronising choice and interrupt, `timed_priority`): `timed.rs`.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

use crate::hash::WordBuildHasher;
use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::labels::TICK;
use super::network::{combine, distributed_termination, LeafMoves, NetNode, Scratch};
use super::shared_leaves::{record_compression, recorded_mark, recorded_since, LeafCache};
use super::terms::{
    int_arg, term, BuildPath, Encoding, Op, Section, MAX_NESTING, STACK_RED_ZONE, STACK_SEGMENT,
};
use crate::csp::error::{CspError, ErrorKind};

/// The transitions of a term: (label, target) pairs without duplicates, in canonical order
/// (see [`sort_moves`]).
pub(crate) type Moves = Arc<[(Label, TermId)]>;

/// The semantics of one system: its encoding and the memo of transitions by term.
pub(crate) struct Semantics {
    pub(crate) enc: Encoding,
    /// Transitions of every term fired so far (part of the system's root set).
    memo: DashMap<TermId, Moves, WordBuildHasher>,
    /// The leaves explored on their own, by term (shared by the systems made on these
    /// semantics, see `shared_leaves.rs`).
    pub(super) leaf_cache: LeafCache,
    /// The compressions applied in firing each term whose firing applied one (sorted).
    compress_deps: DashMap<TermId, Arc<[u32]>, WordBuildHasher>,
    /// `compress_deps` is not empty.
    any_compress_deps: AtomicBool,
    /// `chase` walks by firing every state as a term, as its first version did (the oracle of
    /// the tests of `chase_net.rs`).
    #[cfg(test)]
    pub(super) chase_by_terms: bool,
}

/// Sorts transitions by label then target in the canonical order of terms
/// ([`Encoding::cmp_terms`]) and removes duplicates: the order depends only on the processes,
/// so a leaf's transitions, and the numbers an explicit leaf's exploration gives its states,
/// are the same in every run and at every thread count.
///
/// The sort is the standard library's stable one, for its use of sorted runs: an operator's
/// moves come in runs of its operands' sorted moves (a total order, so a stable sort gives
/// what any sort would).
pub(crate) fn sort_moves(enc: &Encoding, sec: &Section<'_>, moves: &mut Vec<(Label, TermId)>) {
    moves.sort_by(|&(l, t), &(m, u)| {
        enc.labels
            .cmp(l, m)
            .then_with(|| enc.cmp_terms(term(sec, t), term(sec, u)))
    });
    moves.dedup();
}

impl Semantics {
    pub(crate) fn new(enc: Encoding) -> Semantics {
        Semantics {
            enc,
            memo: DashMap::with_hasher(Default::default()),
            leaf_cache: LeafCache::default(),
            compress_deps: DashMap::with_hasher(Default::default()),
            any_compress_deps: AtomicBool::new(false),
            #[cfg(test)]
            chase_by_terms: false,
        }
    }

    /// Whether the transitions of `t` are memoised.
    pub(super) fn is_memoised(&self, t: TermRef<'_>) -> bool {
        self.memo.contains_key(&t.id())
    }

    /// Calls `visit` on every term the memo tables hold.
    pub(crate) fn for_each_term(&self, visit: &mut dyn FnMut(TermId)) {
        for e in self.memo.iter() {
            visit(*e.key());
            for &(_, t) in e.value().iter() {
                visit(t);
            }
        }
        self.enc.for_each_term(visit);
        self.leaf_cache.for_each_term(visit);
    }

    /// Number of terms whose transitions are memoised.
    pub(crate) fn memo_len(&self) -> usize {
        self.memo.len()
    }

    /// The transitions of `t` (computed once per term).
    pub(crate) fn transitions<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        depth: u32,
    ) -> Result<Moves, CspError> {
        if let Some(m) = self.memo.get(&t.id()) {
            // Ordering: Relaxed; the entries themselves are behind the map's locks, and one
            // inserted on another thread is seen with the memo entry that follows it.
            if self.any_compress_deps.load(Ordering::Relaxed) {
                if let Some(ks) = self.compress_deps.get(&t.id()) {
                    record_compression(&ks);
                }
            }
            return Ok(m.clone());
        }
        if depth >= MAX_NESTING {
            return Err(CspError::unpositioned(
                ErrorKind::Limit,
                format!("a process term is nested more than {MAX_NESTING} operators deep"),
            ));
        }
        let mut out = Vec::new();
        let mark = recorded_mark();
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.fire(sec, t, depth + 1, &mut out)
        })?;
        self.enc.poll_stop(1 + out.len())?;
        sort_moves(&self.enc, sec, &mut out);
        let moves: Moves = out.into();
        if recorded_mark() > mark {
            // Before the memo entry: a thread that finds the entry finds these too.
            self.compress_deps
                .insert(t.id(), recorded_since(mark).into());
            // Ordering: Relaxed; see the memo lookup above.
            self.any_compress_deps.store(true, Ordering::Relaxed);
        }
        // Inserted inside the section: the targets are kept from now on.
        self.memo.insert(t.id(), moves.clone());
        Ok(moves)
    }

    fn fire<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        depth: u32,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let enc = &self.enc;
        let op = Op::of(t);
        let rebuild = |i: usize, with: TermRef<'_>| -> TermId {
            let mut args: Vec<TermRef<'_>> = t.args().collect();
            args[i] = with;
            sec.create(t.symbol(), &args).0.id()
        };
        match op {
            Op::Stop | Op::Omega => {}
            Op::Skip => out.push((TICK, enc.omega(sec).id())),
            Op::Div => out.push((TAU, t.id())),
            Op::Prefix => {
                let closure = enc.prefixes.get(int_arg(t, 0));
                for (event, next) in enc.script.prefix_transitions(&closure.0)? {
                    let label = enc.labels.label_of(&event)?;
                    let next = enc.build(sec, &next, &mut BuildPath::default())?;
                    out.push((label, next.id()));
                }
            }
            Op::Lazy => {
                // Not a state (lazy terms sit only at inactive positions); fire its active form.
                let active = enc.activate_lazy(sec, t)?;
                out.extend(self.transitions(sec, active, depth)?.iter().copied());
            }
            Op::Ext => {
                for (i, p) in t.args().enumerate() {
                    for &(l, next) in self.transitions(sec, p, depth)?.iter() {
                        if l == TAU {
                            out.push((TAU, rebuild(i, term(sec, next))));
                        } else {
                            out.push((l, next));
                        }
                    }
                }
            }
            Op::Int => {
                for branch in t.args() {
                    out.push((TAU, enc.activate_lazy(sec, branch)?.id()));
                }
            }
            Op::Seq => {
                for &(l, next) in self.transitions(sec, t.arg(0), depth)?.iter() {
                    if l == TICK {
                        out.push((TAU, enc.activate_lazy(sec, t.arg(1))?.id()));
                    } else {
                        out.push((l, rebuild(0, term(sec, next))));
                    }
                }
            }
            Op::Interrupt => {
                for &(l, next) in self.transitions(sec, t.arg(0), depth)?.iter() {
                    if l == TICK {
                        out.push((TICK, next));
                    } else {
                        out.push((l, rebuild(0, term(sec, next))));
                    }
                }
                for &(l, next) in self.transitions(sec, t.arg(1), depth)?.iter() {
                    if l == TAU {
                        out.push((TAU, rebuild(1, term(sec, next))));
                    } else {
                        out.push((l, next));
                    }
                }
            }
            Op::Timeout => {
                for &(l, next) in self.transitions(sec, t.arg(0), depth)?.iter() {
                    if l == TAU {
                        out.push((TAU, rebuild(0, term(sec, next))));
                    } else {
                        out.push((l, next));
                    }
                }
                out.push((TAU, enc.activate_lazy(sec, t.arg(1))?.id()));
            }
            Op::Interleave
            | Op::Parallel
            | Op::AlphaParallel
            | Op::Hide
            | Op::Rename
            | Op::Link => self.fire_static(sec, t, op, depth, out)?,
            Op::TStop
            | Op::TSkip
            | Op::Delay
            | Op::TPrefix
            | Op::SyncExt
            | Op::SyncInt
            | Op::TPrio
            | Op::TOperand
            | Op::TOmega => self.fire_timed(sec, t, op, depth, out)?,
            Op::Compressed => self.fire_compressed(sec, t, out)?,
            Op::Chase => self.fire_chase(sec, t, depth, out)?,
            Op::Exception | Op::Prio => self.fire_priority_ops(sec, t, op, depth, out)?,
            Op::Net => {
                return Err(CspError::unpositioned(
                    ErrorKind::Eval,
                    "internal error: a network state of another system",
                ))
            }
        }
        Ok(())
    }

    /// A static operator: the network of depth one over its operands.
    fn fire_static<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        op: Op,
        depth: u32,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let mut leaves = Vec::new();
        let net = NetNode::compile(&self.enc, t, 1, &mut leaves);
        let positions = process_positions(op, t.arity());
        let mut moves = LeafMoves::default();
        let parallel = !matches!(op, Op::Hide | Op::Rename);
        for &leaf in &leaves {
            let mut m = self.transitions(sec, leaf, depth)?;
            if parallel {
                let terminated = is_terminated(leaf).then_some(leaf.id());
                let labels = &self.enc.labels;
                m = distributed_termination(&m, terminated, |a, b| labels.cmp(a, b)).into();
            }
            moves.spans.push((moves.flat.len() as u32, m.len() as u32));
            moves.flat.extend_from_slice(&m);
        }
        let mut scratch = Scratch::default();
        combine(&net, &moves, &mut scratch);
        let mut args: Vec<TermRef<'s>> = t.args().collect();
        for m in &scratch.moves {
            if m.label == TICK {
                out.push((TICK, self.enc.omega(sec).id()));
                continue;
            }
            for &(leaf, next) in &scratch.updates[m.start as usize..(m.start + m.len) as usize] {
                args[positions[leaf as usize]] = term(sec, next);
            }
            let next = match op {
                Op::Hide => self.enc.hide(sec, args[0], int_arg(t, 1))?,
                Op::Rename => self.enc.rename(sec, args[0], int_arg(t, 1))?,
                _ => sec.create(t.symbol(), &args).0,
            };
            out.push((m.label, next.id()));
            for &(leaf, _) in &scratch.updates[m.start as usize..(m.start + m.len) as usize] {
                let p = positions[leaf as usize];
                args[p] = t.arg(p);
            }
        }
        Ok(())
    }
}

/// Whether `t` has terminated as an operand of a parallel: Ω (or `tΩ`, the terminated operand
/// of a parallel of a timed section), or a parallel (perhaps hidden or renamed) whose operands
/// have all terminated, as in a network (FDR's rules take one more tau from the latter to Ω;
/// see `network::distributed_termination`).
pub(crate) fn is_terminated(t: TermRef<'_>) -> bool {
    let op = Op::of(t);
    match op {
        Op::Omega | Op::TOmega => true,
        Op::Interleave | Op::Parallel | Op::AlphaParallel | Op::Link => {
            process_positions(op, t.arity())
                .into_iter()
                .all(|i| is_terminated(t.arg(i)))
        }
        Op::Hide | Op::Rename => {
            let inner = Op::of(t.arg(0));
            inner.is_static() && is_terminated(t.arg(0))
        }
        _ => false,
    }
}

/// The argument positions of the operands of a static operator, in leaf order.
pub(super) fn process_positions(op: Op, arity: usize) -> Vec<usize> {
    match op {
        Op::Interleave => (0..arity).collect(),
        Op::Parallel | Op::AlphaParallel => (1..arity).collect(),
        Op::Hide | Op::Rename => vec![0],
        Op::Link => vec![0, 2],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::csp::eval::load_str;
    use crate::csp::value::{Proc, Value};
    use crate::term::global;

    const SCRIPT: &str = "channel a\nchannel x : {0..7}\n\
        Q(i) = x.i -> STOP\n\
        X = |~| i : {0..7} @ Q(i)\n\
        Y = [] i : {0..7} @ a -> Q(7 - i)\n";

    /// The transitions of `X` and `Y` in a new encoding that first meets `Q(i)` for `i` in
    /// `order` (so its prefix closures are numbered in that order), as processes; checks
    /// they are sorted by label, then strictly by the canonical order of terms.
    fn moves_meeting(order: &[i64]) -> Vec<Vec<(Label, Option<Proc>)>> {
        let script = Arc::new(load_str("t.csp", SCRIPT, Path::new(".")).unwrap());
        let sem = Semantics::new(Encoding::new(script.clone()).unwrap());
        let tt = global().register_thread();
        let sec = tt.shared_section();
        for &i in order {
            let q = script.process("Q", &[Value::Int(i)]).unwrap();
            sem.enc.build(&sec, &q, &mut BuildPath::default()).unwrap();
        }
        ["X", "Y"]
            .iter()
            .map(|name| {
                let p = script.process(name, &[]).unwrap();
                let t = sem.enc.build(&sec, &p, &mut BuildPath::default()).unwrap();
                let moves = sem.transitions(&sec, t, 0).unwrap();
                assert_eq!(moves.len(), 8);
                for w in moves.windows(2) {
                    let order = w[0]
                        .0
                        .cmp(&w[1].0)
                        .then_with(|| sem.enc.cmp_terms(term(&sec, w[0].1), term(&sec, w[1].1)));
                    assert_eq!(order, std::cmp::Ordering::Less);
                }
                moves
                    .iter()
                    .map(|&(l, t)| (l, sem.enc.to_proc(term(&sec, t))))
                    .collect()
            })
            .collect()
    }

    /// The order of a term's transitions depends on the processes only, not on the numbers
    /// an encoding gives its prefixes nor on the addresses of the terms (the two encodings
    /// below share terms that stand for different processes in each).
    #[test]
    fn moves_are_in_an_order_independent_of_numbering() {
        let forward: Vec<i64> = (0..8).collect();
        let backward: Vec<i64> = (0..8).rev().collect();
        assert_eq!(moves_meeting(&forward), moves_meeting(&backward));
    }

    /// The canonical order of terms is a strict total order that agrees between encodings
    /// that number their values differently.
    #[test]
    fn canonical_term_order_is_total_and_independent_of_numbering() {
        let script = Arc::new(load_str("t.csp", SCRIPT, Path::new(".")).unwrap());
        let procs: Vec<Proc> = (0..8)
            .map(|i| script.process("Q", &[Value::Int(i)]).unwrap())
            .chain(["X", "Y"].iter().map(|n| script.process(n, &[]).unwrap()))
            .collect();
        let tt = global().register_thread();
        let sec = tt.shared_section();
        let orders: Vec<Vec<Vec<std::cmp::Ordering>>> = [false, true]
            .iter()
            .map(|&reverse| {
                let enc = Encoding::new(script.clone()).unwrap();
                let mut terms = vec![None; procs.len()];
                let mut at: Vec<usize> = (0..procs.len()).collect();
                if reverse {
                    at.reverse();
                }
                for i in at {
                    terms[i] = Some(
                        enc.build(&sec, &procs[i], &mut BuildPath::default())
                            .unwrap()
                            .id(),
                    );
                }
                let terms: Vec<TermId> = terms.into_iter().map(Option::unwrap).collect();
                terms
                    .iter()
                    .map(|&s| {
                        terms
                            .iter()
                            .map(|&t| enc.cmp_terms(term(&sec, s), term(&sec, t)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        assert_eq!(orders[0], orders[1]);
        let o = &orders[0];
        let n = procs.len();
        for i in 0..n {
            for j in 0..n {
                assert_eq!(o[i][j] == std::cmp::Ordering::Equal, i == j);
                assert_eq!(o[i][j], o[j][i].reverse());
                for k in 0..n {
                    if o[i][j].is_lt() && o[j][k].is_lt() {
                        assert!(o[i][k].is_lt());
                    }
                }
            }
        }
    }
}
