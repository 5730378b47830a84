//! A slow, obviously-correct interpreter of CSP's firing rules directly on `Proc` values (no
//! terms, no memo, no networks), and the comparison of two LTSs up to strong bisimulation.
//! It is the oracle the tests hold `CspSystem` against.

use std::collections::{BTreeSet, HashMap, VecDeque};

use std::sync::Arc;

use weft::csp::value::PriorityOrder;
use weft::csp::{CspError, CspSystem, ErrorKind, Proc, ProcNode, Script, TimedProc, Value};
use weft::explore::{explore, ExploreOptions};

/// A move's event.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ev {
    Tau,
    Tick,
    Event(Value),
}

/// A state: a normalised process, or Ω after ✓.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OState {
    Proc(Proc),
    Omega,
}

type R<T> = Result<T, CspError>;

pub struct Oracle<'a> {
    pub script: &'a Script,
    /// Set when a compressed process (`normal(P)`, ...) is met: the oracle does not compress,
    /// so it gives no LTS to compare (compressions are tested in `compress_props.rs`).
    pub met_compression: std::cell::Cell<bool>,
    /// Set when two nested renamings were merged into one. weft merges them too, but where
    /// it keeps the outer renaming as a network node and the inner one in a leaf the two
    /// count the merged states differently: the LTSs are then compared up to bisimilarity
    /// only, not by their numbers of states and transitions.
    pub met_nested_renaming: std::cell::Cell<bool>,
}

fn proc(n: ProcNode) -> Proc {
    Proc::new(n)
}

fn timed(t: TimedProc) -> Proc {
    Proc::new(ProcNode::Timed(Arc::new(t)))
}

fn replaced(ps: &[Proc], i: usize, with: Proc) -> Vec<Proc> {
    let mut v = ps.to_vec();
    v[i] = with;
    v
}

/// `p \ a`, nested hidings merged: `(P \ A) \ B` is `P \ union(A, B)` (same transitions).
fn hide(p: Proc, a: &weft::csp::EventSet) -> Proc {
    if let ProcNode::Hide(q, b) = p.node() {
        let mut union: Vec<Value> = a.iter().chain(b.iter()).cloned().collect();
        union.sort();
        union.dedup();
        return proc(ProcNode::Hide(q.clone(), union.into()));
    }
    proc(ProcNode::Hide(p, a.clone()))
}

/// `p [[rel]]`, nested renamings merged: `(P [[R1]]) [[R2]]` is `P [[R]]` where `R` relates
/// each event of `P` to what `R1` then `R2` make of it (an event outside a relation's domain
/// passes unchanged), as a sorted set of pairs, so that a recursion through renaming stays
/// finite. Relations over events that are not enumerated are left nested.
fn rename(p: Proc, rel: &weft::csp::EventRelation, merged: &std::cell::Cell<bool>) -> Proc {
    let enumerated = |r: &[(Value, Value)]| !r.iter().any(|(a, _)| matches!(a, Value::Infinite(_)));
    if let ProcNode::Rename(q, inner) = p.node() {
        if enumerated(inner) && enumerated(rel) {
            let mut pairs = BTreeSet::new();
            let in_domain = |r: &[(Value, Value)], e: &Value| r.iter().any(|(a, _)| a == e);
            // every event `P` may perform that either relation mentions
            let events: BTreeSet<&Value> = inner
                .iter()
                .map(|(a, _)| a)
                .chain(rel.iter().map(|(a, _)| a))
                .collect();
            for e in events {
                let middle: Vec<&Value> = if in_domain(inner, e) {
                    inner
                        .iter()
                        .filter(|(a, _)| a == e)
                        .map(|(_, b)| b)
                        .collect()
                } else {
                    vec![e]
                };
                for m in middle {
                    if in_domain(rel, m) {
                        for (_, c) in rel.iter().filter(|(a, _)| a == m) {
                            pairs.insert((e.clone(), c.clone()));
                        }
                    } else {
                        pairs.insert((e.clone(), m.clone()));
                    }
                }
            }
            let composed: Vec<(Value, Value)> = pairs.into_iter().collect();
            merged.set(true);
            return proc(ProcNode::Rename(q.clone(), composed.into()));
        }
    }
    proc(ProcNode::Rename(p, rel.clone()))
}

/// An operand of a parallel operator that has terminated (Ω): it has no moves, and lets the
/// parallel terminate once every operand is Ω. (An empty internal choice, which no script
/// makes.)
fn terminated() -> Proc {
    proc(ProcNode::IntChoice(Vec::new()))
}

/// Ω, or a parallel (perhaps hidden or renamed) whose operands have all terminated: weft
/// counts the latter as terminated at once, where FDR's rules take one more tau to reach Ω
/// (the same behaviour in every model; see `network::distributed_termination`).
fn is_terminated(p: &Proc) -> bool {
    match p.node() {
        ProcNode::IntChoice(ps) => ps.is_empty(),
        // the terminated operand of a parallel of a timed section (it still lets time pass)
        ProcNode::Timed(t) => matches!(**t, TimedProc::Terminated(_)),
        ProcNode::Interleave(ps) | ProcNode::Parallel(_, ps) => ps.iter().all(is_terminated),
        ProcNode::AlphaParallel(cs) => cs.iter().all(|(_, q)| is_terminated(q)),
        ProcNode::Link(l, _, r) => is_terminated(l) && is_terminated(r),
        ProcNode::Hide(q, _) | ProcNode::Rename(q, _) => is_parallel(q) && is_terminated(q),
        _ => false,
    }
}

fn is_parallel(p: &Proc) -> bool {
    match p.node() {
        ProcNode::Interleave(_)
        | ProcNode::Parallel(..)
        | ProcNode::AlphaParallel(_)
        | ProcNode::Link(..) => true,
        ProcNode::Hide(q, _) | ProcNode::Rename(q, _) => is_parallel(q),
        _ => false,
    }
}

/// The moves of an operand of a parallel operator, by FDR's distributed termination: the
/// operand's ✓ is a tau to Ω, and an operand at Ω offers ✓ (standing for "has terminated").
fn operand_moves(p: &Proc, moves: Vec<(Ev, OState)>) -> Vec<(Ev, OState)> {
    if is_terminated(p) {
        // ✓ together with the others; a terminated operand of a timed section keeps its tock
        let mut out = vec![(Ev::Tick, OState::Proc(p.clone()))];
        out.extend(moves.into_iter().filter(|(e, _)| *e != Ev::Tick));
        return out;
    }
    moves
        .into_iter()
        .map(|(e, s)| match (e, s) {
            // (an operand of a timed parallel terminates into its own terminated state)
            (Ev::Tick, OState::Proc(q)) if is_terminated(&q) => (Ev::Tau, OState::Proc(q)),
            (Ev::Tick, _) => (Ev::Tau, OState::Proc(terminated())),
            (e, s) => (e, s),
        })
        .collect()
}

/// True if a move `m` removes a move `l` of the same state under `order` (FDR4's
/// `prioritise`: tau and ✓ rank with the first set; `prioritisepo`: the closed order, tau and
/// ✓ above the non-maximal events; `:[tau priority over]: A`: tau above `A`).
fn beats(order: &PriorityOrder, m: &Ev, l: &Ev) -> bool {
    if m == l {
        return false;
    }
    let urgent = |e: &Ev| matches!(e, Ev::Tau | Ev::Tick);
    match order {
        PriorityOrder::Levels(sets) => {
            let rank = |e: &Ev| match e {
                Ev::Tau | Ev::Tick => Some(0),
                Ev::Event(v) => sets.iter().position(|s| s.contains(v)),
            };
            matches!((rank(m), rank(l)), (Some(a), Some(b)) if a < b)
        }
        PriorityOrder::Partial {
            events,
            order,
            maximal,
        } => match (m, l) {
            (_, Ev::Event(y)) if urgent(m) => events.contains(y) && !maximal.contains(y),
            (Ev::Event(x), Ev::Event(y)) => order.iter().any(|(a, b)| a == x && b == y),
            _ => false,
        },
        PriorityOrder::TauOver(set) => {
            matches!((m, l), (Ev::Tau, Ev::Event(y)) if set.contains(y))
        }
    }
}

/// The process of a target (targets of non-✓ moves are never Ω).
fn p_of(s: &OState) -> Proc {
    match s {
        OState::Proc(p) => p.clone(),
        OState::Omega => panic!("oracle: Ω where a process was expected"),
    }
}

impl<'a> Oracle<'a> {
    /// Unfolds the calls at active positions; empty choices and parallels become STOP/SKIP.
    pub fn norm(&self, p: &Proc, stack: &mut Vec<Proc>) -> R<Proc> {
        Ok(match p.node() {
            ProcNode::Call(c) => {
                if stack.contains(p) {
                    return Err(CspError::unpositioned(
                        ErrorKind::Eval,
                        "oracle: unguarded recursion",
                    ));
                }
                stack.push(p.clone());
                let body = self.script.unfold(c)?;
                let r = self.norm(&body, stack);
                stack.pop();
                r?
            }
            ProcNode::Stop | ProcNode::Skip | ProcNode::Div | ProcNode::Prefix(_) => p.clone(),
            ProcNode::ExtChoice(ps) if ps.is_empty() => proc(ProcNode::Stop),
            // (the evaluator never makes an empty internal choice: here it marks Ω)
            ProcNode::IntChoice(ps) if ps.is_empty() => p.clone(),
            ProcNode::Interleave(ps) if ps.is_empty() => proc(ProcNode::Skip),
            ProcNode::Parallel(_, ps) if ps.is_empty() => proc(ProcNode::Skip),
            ProcNode::AlphaParallel(cs) if cs.is_empty() => proc(ProcNode::Skip),
            ProcNode::ExtChoice(ps) => proc(ProcNode::ExtChoice(self.all(ps, stack)?)),
            ProcNode::IntChoice(_) => p.clone(),
            ProcNode::Interleave(ps) => proc(ProcNode::Interleave(self.all(ps, stack)?)),
            ProcNode::Parallel(a, ps) => proc(ProcNode::Parallel(a.clone(), self.all(ps, stack)?)),
            ProcNode::AlphaParallel(cs) => {
                let mut out = Vec::new();
                for (a, q) in cs {
                    out.push((a.clone(), self.norm(q, stack)?));
                }
                proc(ProcNode::AlphaParallel(out))
            }
            ProcNode::Seq(l, r) => proc(ProcNode::Seq(self.norm(l, stack)?, r.clone())),
            ProcNode::Hide(q, a) => hide(self.norm(q, stack)?, a),
            ProcNode::Rename(q, rel) => {
                rename(self.norm(q, stack)?, rel, &self.met_nested_renaming)
            }
            ProcNode::Compressed(..) => p.clone(),
            ProcNode::Link(l, rel, r) => proc(ProcNode::Link(
                self.norm(l, stack)?,
                rel.clone(),
                self.norm(r, stack)?,
            )),
            ProcNode::Interrupt(l, r) => proc(ProcNode::Interrupt(
                self.norm(l, stack)?,
                self.norm(r, stack)?,
            )),
            ProcNode::Timeout(l, r) => proc(ProcNode::Timeout(self.norm(l, stack)?, r.clone())),
            ProcNode::Exception(l, a, r) => proc(ProcNode::Exception(
                self.norm(l, stack)?,
                a.clone(),
                r.clone(),
            )),
            ProcNode::Prioritise(q, o) => {
                proc(ProcNode::Prioritise(self.norm(q, stack)?, o.clone()))
            }
            ProcNode::Timed(t) => match &**t {
                TimedProc::SyncChoice(a, ps) => {
                    timed(TimedProc::SyncChoice(a.clone(), self.all(ps, stack)?))
                }
                TimedProc::SyncInterrupt(l, a, r) => timed(TimedProc::SyncInterrupt(
                    self.norm(l, stack)?,
                    a.clone(),
                    self.norm(r, stack)?,
                )),
                TimedProc::Priority(tock, q) => {
                    timed(TimedProc::Priority(tock.clone(), self.norm(q, stack)?))
                }
                TimedProc::Operand(tock, q) => {
                    timed(TimedProc::Operand(tock.clone(), self.norm(q, stack)?))
                }
                _ => p.clone(),
            },
        })
    }

    fn all(&self, ps: &[Proc], stack: &mut Vec<Proc>) -> R<Vec<Proc>> {
        ps.iter().map(|q| self.norm(q, stack)).collect()
    }

    fn n(&self, p: &Proc) -> R<Proc> {
        self.norm(p, &mut Vec::new())
    }

    /// The moves of a normalised process.
    pub fn moves(&self, p: &Proc) -> R<Vec<(Ev, OState)>> {
        use OState::{Omega, Proc as P};
        let mut out = Vec::new();
        match p.node() {
            ProcNode::Stop => {}
            ProcNode::Skip => out.push((Ev::Tick, Omega)),
            ProcNode::Div => out.push((Ev::Tau, P(p.clone()))),
            ProcNode::Exception(l, a, r) => {
                for (e, s) in self.moves(l)? {
                    match e {
                        Ev::Tick => out.push((e, Omega)),
                        Ev::Event(ref v) if a.contains(v) => out.push((e, P(self.n(r)?))),
                        e => out.push((
                            e,
                            P(proc(ProcNode::Exception(p_of(&s), a.clone(), r.clone()))),
                        )),
                    }
                }
            }
            ProcNode::Prioritise(q, order) => {
                let moves = self.moves(q)?;
                for (e, s) in &moves {
                    if moves.iter().any(|(m, _)| beats(order, m, e)) {
                        continue;
                    }
                    let next = match s {
                        Omega => Omega,
                        s => P(proc(ProcNode::Prioritise(p_of(s), order.clone()))),
                    };
                    out.push((e.clone(), next));
                }
            }
            ProcNode::Call(_) => panic!("oracle: a call at an active position"),
            ProcNode::Prefix(c) => {
                for (v, next) in self.script.prefix_transitions(c)? {
                    out.push((Ev::Event(v), P(self.n(&next)?)));
                }
            }
            ProcNode::ExtChoice(ps) => {
                for (i, q) in ps.iter().enumerate() {
                    for (e, s) in self.moves(q)? {
                        if e == Ev::Tau {
                            out.push((e, P(proc(ProcNode::ExtChoice(replaced(ps, i, p_of(&s)))))));
                        } else {
                            out.push((e, s));
                        }
                    }
                }
            }
            ProcNode::IntChoice(ps) => {
                for q in ps {
                    out.push((Ev::Tau, P(self.n(q)?)));
                }
            }
            ProcNode::Timed(t) => self.timed_moves(p, t, &mut out)?,
            ProcNode::Compressed(..) => self.met_compression.set(true),
            ProcNode::Seq(l, r) => {
                for (e, s) in self.moves(l)? {
                    if e == Ev::Tick {
                        out.push((Ev::Tau, P(self.n(r)?)));
                    } else {
                        out.push((e, P(proc(ProcNode::Seq(p_of(&s), r.clone())))));
                    }
                }
            }
            ProcNode::Interrupt(l, r) => {
                for (e, s) in self.moves(l)? {
                    if e == Ev::Tick {
                        out.push((e, Omega));
                    } else {
                        out.push((e, P(proc(ProcNode::Interrupt(p_of(&s), r.clone())))));
                    }
                }
                for (e, s) in self.moves(r)? {
                    if e == Ev::Tau {
                        out.push((e, P(proc(ProcNode::Interrupt(l.clone(), p_of(&s))))));
                    } else {
                        out.push((e, s));
                    }
                }
            }
            ProcNode::Timeout(l, r) => {
                for (e, s) in self.moves(l)? {
                    if e == Ev::Tau {
                        out.push((e, P(proc(ProcNode::Timeout(p_of(&s), r.clone())))));
                    } else {
                        out.push((e, s));
                    }
                }
                out.push((Ev::Tau, P(self.n(r)?)));
            }
            ProcNode::Hide(q, a) => {
                for (e, s) in self.moves(q)? {
                    match e {
                        Ev::Tick => out.push((e, Omega)),
                        Ev::Event(ref v) if a.contains(v) => {
                            out.push((Ev::Tau, P(hide(p_of(&s), a))))
                        }
                        e => out.push((e, P(hide(p_of(&s), a)))),
                    }
                }
            }
            ProcNode::Rename(q, rel) => {
                for (e, s) in self.moves(q)? {
                    let next = || P(rename(p_of(&s), rel, &self.met_nested_renaming));
                    match e {
                        Ev::Tick => out.push((e, Omega)),
                        Ev::Tau => out.push((e, next())),
                        Ev::Event(v) => {
                            let images: Vec<&Value> = rel
                                .iter()
                                .filter(|(a, _)| *a == v)
                                .map(|(_, b)| b)
                                .collect();
                            if images.is_empty() {
                                out.push((Ev::Event(v), next()));
                            }
                            for b in images {
                                out.push((Ev::Event(b.clone()), next()));
                            }
                        }
                    }
                }
            }
            ProcNode::Link(l, rel, r) => {
                let lm = operand_moves(l, self.moves(l)?);
                let rm = operand_moves(r, self.moves(r)?);
                let link = |a: Proc, b: Proc| P(proc(ProcNode::Link(a, rel.clone(), b)));
                if lm.iter().any(|m| m.0 == Ev::Tick) && rm.iter().any(|m| m.0 == Ev::Tick) {
                    out.push((Ev::Tick, Omega));
                }
                for (e, s) in &lm {
                    match e {
                        Ev::Tick => {}
                        Ev::Event(a) if rel.iter().any(|(x, _)| x == a) => {
                            for (_, b) in rel.iter().filter(|(x, _)| x == a) {
                                for (f, t) in &rm {
                                    if *f == Ev::Event(b.clone()) {
                                        out.push((Ev::Tau, link(p_of(s), p_of(t))));
                                    }
                                }
                            }
                        }
                        e => out.push((e.clone(), link(p_of(s), r.clone()))),
                    }
                }
                for (e, t) in &rm {
                    match e {
                        Ev::Tick => {}
                        Ev::Event(b) if rel.iter().any(|(_, y)| y == b) => {}
                        e => out.push((e.clone(), link(l.clone(), p_of(t)))),
                    }
                }
            }
            ProcNode::Interleave(ps) => {
                let comps: Vec<(Option<&[Value]>, &Proc)> = ps.iter().map(|q| (None, q)).collect();
                self.parallel(&comps, &[], false, &mut out, ProcNode::Interleave)?;
            }
            ProcNode::Parallel(a, ps) => {
                let comps: Vec<(Option<&[Value]>, &Proc)> = ps.iter().map(|q| (None, q)).collect();
                self.parallel(&comps, a, false, &mut out, |qs| {
                    ProcNode::Parallel(a.clone(), qs)
                })?;
            }
            ProcNode::AlphaParallel(cs) => {
                let comps: Vec<(Option<&[Value]>, &Proc)> =
                    cs.iter().map(|(a, q)| (Some(&a[..]), q)).collect();
                let alphas: Vec<_> = cs.iter().map(|(a, _)| a.clone()).collect();
                self.parallel(&comps, &[], true, &mut out, |qs| {
                    ProcNode::AlphaParallel(alphas.iter().cloned().zip(qs).collect())
                })?;
            }
        }
        Ok(out)
    }

    /// The moves of a normalised timed process `p` (node `t`): tock-CSP's rules, on values.
    fn timed_moves(&self, p: &Proc, t: &TimedProc, out: &mut Vec<(Ev, OState)>) -> R<()> {
        use OState::{Omega, Proc as P};
        let ev = |v: &Value| Ev::Event(v.clone());
        match t {
            TimedProc::Stop(tock) => out.push((ev(tock), P(p.clone()))),
            TimedProc::Skip(tock) => {
                out.push((ev(tock), P(p.clone())));
                out.push((Ev::Tick, Omega));
            }
            TimedProc::Delay(tock, n, q) => {
                let next = if *n > 1 {
                    timed(TimedProc::Delay(tock.clone(), n - 1, q.clone()))
                } else {
                    self.n(q)?
                };
                out.push((ev(tock), P(next)));
            }
            TimedProc::Prefix(c, header) => {
                let Value::Tuple(parts) = header else {
                    panic!("oracle: a timed prefix's header is not a pair");
                };
                out.push((ev(&parts[0]), P(p.clone())));
                for (v, next) in self.script.timed_prefix_transitions(c, header)? {
                    out.push((Ev::Event(v), P(self.n(&next)?)));
                }
            }
            TimedProc::SyncChoice(a, ps) => {
                let moves: Vec<Vec<(Ev, OState)>> =
                    ps.iter().map(|q| self.moves(q)).collect::<R<_>>()?;
                let mut synced = BTreeSet::new();
                for (i, m) in moves.iter().enumerate() {
                    for (e, s) in m {
                        match e {
                            Ev::Tau => {
                                let next = replaced(ps, i, p_of(s));
                                out.push((
                                    Ev::Tau,
                                    P(timed(TimedProc::SyncChoice(a.clone(), next))),
                                ));
                            }
                            Ev::Event(v) if a.contains(v) => {
                                synced.insert(v.clone());
                            }
                            _ => out.push((e.clone(), s.clone())),
                        }
                    }
                }
                for v in synced {
                    let mut combos: Vec<Vec<Proc>> = vec![Vec::new()];
                    for m in &moves {
                        let mut next = Vec::new();
                        for c in &combos {
                            for (e, s) in m {
                                if *e == Ev::Event(v.clone()) {
                                    let mut c = c.clone();
                                    c.push(p_of(s));
                                    next.push(c);
                                }
                            }
                        }
                        combos = next;
                    }
                    for c in combos {
                        out.push((
                            Ev::Event(v.clone()),
                            P(timed(TimedProc::SyncChoice(a.clone(), c))),
                        ));
                    }
                }
            }
            TimedProc::SyncInterrupt(l, a, r) => {
                let right = self.moves(r)?;
                let make = |x: Proc, y: Proc| P(timed(TimedProc::SyncInterrupt(x, a.clone(), y)));
                for (e, s) in self.moves(l)? {
                    match &e {
                        Ev::Tick => out.push((e, Omega)),
                        Ev::Event(v) if a.contains(v) => {
                            for (f, t) in &right {
                                if *f == e {
                                    out.push((e.clone(), make(p_of(&s), p_of(t))));
                                }
                            }
                        }
                        _ => out.push((e, make(p_of(&s), r.clone()))),
                    }
                }
                for (e, s) in right {
                    match &e {
                        Ev::Tau => out.push((e, make(l.clone(), p_of(&s)))),
                        Ev::Event(v) if a.contains(v) => {}
                        _ => out.push((e, s)),
                    }
                }
            }
            // tick-tock termination in a timed parallel: the operand's ✓ leaves a process that
            // agrees to every tock (and counts as terminated for the parallel's own ✓)
            TimedProc::Operand(tock, q) => {
                for (e, s) in self.moves(q)? {
                    match e {
                        Ev::Tick => {
                            out.push((Ev::Tick, P(timed(TimedProc::Terminated(tock.clone())))))
                        }
                        e => out.push((e, P(timed(TimedProc::Operand(tock.clone(), p_of(&s)))))),
                    }
                }
            }
            TimedProc::Terminated(tock) => out.push((ev(tock), P(p.clone()))),
            TimedProc::Priority(tock, q) => {
                let moves = self.moves(q)?;
                let urgent = moves.iter().any(|(e, _)| matches!(e, Ev::Tau | Ev::Tick));
                for (e, s) in moves {
                    match &e {
                        Ev::Tick => out.push((e, s)),
                        Ev::Event(v) if urgent && v == tock => {}
                        _ => out.push((e, P(timed(TimedProc::Priority(tock.clone(), p_of(&s)))))),
                    }
                }
            }
        }
        Ok(())
    }

    /// Parallel composition: generalised (`sync` shared by all) or alphabetised (each
    /// component's own alphabet: an event needs every component whose alphabet holds it, and a
    /// component cannot do events outside its alphabet).
    fn parallel(
        &self,
        comps: &[(Option<&[Value]>, &Proc)],
        sync: &[Value],
        alphabetised: bool,
        out: &mut Vec<(Ev, OState)>,
        make: impl Fn(Vec<Proc>) -> ProcNode,
    ) -> R<()> {
        let moves: Vec<Vec<(Ev, OState)>> = comps
            .iter()
            .map(|(_, q)| Ok(operand_moves(q, self.moves(q)?)))
            .collect::<R<_>>()?;
        let current: Vec<Proc> = comps.iter().map(|(_, q)| (*q).clone()).collect();
        if moves.iter().all(|m| m.iter().any(|(e, _)| *e == Ev::Tick)) {
            out.push((Ev::Tick, OState::Omega));
        }
        let in_alpha = |i: usize, v: &Value| comps[i].0.is_some_and(|a| a.contains(v));
        let mut events: BTreeSet<Value> = BTreeSet::new();
        for (i, m) in moves.iter().enumerate() {
            for (e, s) in m {
                match e {
                    Ev::Tick => {}
                    Ev::Tau => out.push((
                        Ev::Tau,
                        OState::Proc(proc(make(replaced(&current, i, p_of(s))))),
                    )),
                    Ev::Event(v) => {
                        let synced = if alphabetised {
                            if !in_alpha(i, v) {
                                continue;
                            }
                            true
                        } else {
                            sync.contains(v)
                        };
                        if synced {
                            events.insert(v.clone());
                        } else {
                            out.push((
                                e.clone(),
                                OState::Proc(proc(make(replaced(&current, i, p_of(s))))),
                            ));
                        }
                    }
                }
            }
        }
        for v in events {
            let who: Vec<usize> = (0..comps.len())
                .filter(|&i| !alphabetised || in_alpha(i, &v))
                .collect();
            // Every participant's moves on v; the cartesian product of them.
            let mut combos: Vec<Vec<Proc>> = vec![current.clone()];
            for &i in &who {
                let mut next = Vec::new();
                for c in &combos {
                    for (e, s) in &moves[i] {
                        if *e == Ev::Event(v.clone()) {
                            next.push(replaced(c, i, p_of(s)));
                        }
                    }
                }
                combos = next;
            }
            for c in combos {
                out.push((Ev::Event(v.clone()), OState::Proc(proc(make(c)))));
            }
        }
        Ok(())
    }

    /// Explores `p` breadth first: (initial 0, number of states, transitions with label
    /// names), or `None` if more than `limit` states.
    pub fn explore(&self, p: &Proc, limit: usize) -> R<Option<NamedLts>> {
        let table = self.script.events()?;
        let name = |e: &Ev| match e {
            Ev::Tau => "tau".to_string(),
            Ev::Tick => "✓".to_string(),
            // (events of channels of infinite types are not in the table)
            Ev::Event(v) => match table.id(v) {
                Some(id) => table.names[id as usize].clone(),
                None => self.script.show(v),
            },
        };
        let init = OState::Proc(self.n(p)?);
        let mut ids: HashMap<OState, u32> = HashMap::from([(init.clone(), 0)]);
        let mut queue = VecDeque::from([init]);
        let mut transitions = BTreeSet::new();
        while let Some(s) = queue.pop_front() {
            let from = ids[&s];
            let moves = match &s {
                OState::Omega => Vec::new(),
                OState::Proc(q) => self.moves(q)?,
            };
            for (e, t) in moves {
                let next = ids.len() as u32;
                let to = *ids.entry(t.clone()).or_insert_with(|| {
                    queue.push_back(t);
                    next
                });
                if ids.len() > limit {
                    return Ok(None);
                }
                transitions.insert((from, name(&e), to));
            }
        }
        if self.met_compression.get() {
            return Ok(None);
        }
        Ok(Some(NamedLts {
            states: ids.len() as u32,
            transitions: transitions.into_iter().collect(),
        }))
    }
}

/// An LTS with initial state 0 and named labels.
#[derive(Debug)]
pub struct NamedLts {
    pub states: u32,
    pub transitions: Vec<(u32, String, u32)>,
}

impl NamedLts {
    /// From weft's explicit LTS.
    pub fn of(lts: &weft::lts::Lts) -> NamedLts {
        let mut transitions = Vec::new();
        for s in 0..lts.num_states() {
            for (l, t) in lts.successors(s) {
                transitions.push((s, lts.label_names()[l as usize].clone(), t));
            }
        }
        NamedLts {
            states: lts.num_states(),
            transitions,
        }
    }
}

/// True if the initial states (0) of `a` and `b` are strongly bisimilar (naive partition
/// refinement on the disjoint union).
pub fn bisimilar(a: &NamedLts, b: &NamedLts) -> bool {
    let n = (a.states + b.states) as usize;
    let mut labels: HashMap<&str, u32> = HashMap::new();
    let mut succ: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
    for (off, lts) in [(0usize, a), (a.states as usize, b)] {
        for (s, l, t) in &lts.transitions {
            let next = labels.len() as u32;
            let l = *labels.entry(l.as_str()).or_insert(next);
            succ[off + *s as usize].push((l, off + *t as usize));
        }
    }
    let mut block = vec![0usize; n];
    let mut count = 1;
    loop {
        let mut sigs: HashMap<(usize, BTreeSet<(u32, usize)>), usize> = HashMap::new();
        let mut next = vec![0usize; n];
        for s in 0..n {
            let sig: BTreeSet<(u32, usize)> = succ[s].iter().map(|&(l, t)| (l, block[t])).collect();
            let k = sigs.len();
            next[s] = *sigs.entry((block[s], sig)).or_insert(k);
        }
        let new_count = sigs.len();
        block = next;
        if new_count == count {
            break;
        }
        count = new_count;
    }
    block[0] == block[a.states as usize]
}

/// Oracle explorations stop (and the case is skipped) beyond this many states.
pub const ORACLE_LIMIT: usize = 3000;

/// Explores `p` with `CspSystem`: the LTS, or `Err` with the evaluation error.
pub fn system_lts(
    script: &Arc<Script>,
    p: &Proc,
    threads: usize,
) -> Result<Option<NamedLts>, String> {
    system_lts_within(script, p, threads, ORACLE_LIMIT)
}

/// As [`system_lts`], with `limit` states at most.
pub fn system_lts_within(
    script: &Arc<Script>,
    p: &Proc,
    threads: usize,
    limit: usize,
) -> Result<Option<NamedLts>, String> {
    let sys = CspSystem::new(script, p).map_err(|e| e.to_string())?;
    let opts = ExploreOptions {
        threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
        record_transitions: true,
        max_states: Some(limit as u64 + 1),
        ..Default::default()
    };
    let r = explore(&sys, &opts);
    if let Some(e) = sys.take_error() {
        return Err(e.to_string());
    }
    if !r.stats.complete {
        return Ok(None);
    }
    let lts = NamedLts::of(&r.to_lts(&sys));
    assert_eq!(
        lts.transitions.len() as u64,
        r.stats.transitions,
        "duplicate transitions"
    );
    Ok(Some(lts))
}

/// Compares `CspSystem` with the oracle on `p`: the same numbers of states and transitions and
/// bisimilar LTSs, for 1, 2 and 4 threads. Returns false when the case was skipped (too big).
pub fn compare(script: &Arc<Script>, p: &Proc, what: &str) -> bool {
    compare_within(script, p, what, ORACLE_LIMIT)
}

/// As [`compare`], skipping processes of more than `limit` states.
pub fn compare_within(script: &Arc<Script>, p: &Proc, what: &str, limit: usize) -> bool {
    let oracle = Oracle {
        script,
        met_compression: Default::default(),
        met_nested_renaming: Default::default(),
    };
    let oracle_lts = oracle.explore(p, limit);
    let counted = !oracle.met_nested_renaming.get();
    let oracle = oracle_lts;
    if matches!(oracle, Ok(None)) {
        return false;
    }
    for threads in [1, 2, 4] {
        let sys = system_lts_within(script, p, threads, limit);
        match (&oracle, sys) {
            (Ok(None), _) | (_, Ok(None)) => return false,
            (Ok(Some(o)), Ok(Some(s))) => {
                if counted {
                    assert_eq!(s.states, o.states, "{what}: states ({threads} threads)");
                    assert_eq!(
                        s.transitions.len(),
                        o.transitions.len(),
                        "{what}: transitions ({threads} threads)"
                    );
                }
                assert!(
                    bisimilar(&s, o),
                    "{what}: not bisimilar ({threads} threads)"
                );
            }
            (Err(_), Err(_)) => {}
            (o, s) => panic!("{what}: oracle {o:?} but system {s:?}"),
        }
    }
    true
}
