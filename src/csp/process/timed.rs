//! The processes of timed sections as terms, and their firing rules (tock-CSP as FDR defines
//! it; the values are built by `csp::eval::timed`, which describes the translation). `L` is
//! the label of the section's `tock`.
//!
//! - `tstop(L) -L-> tstop(L)`; `tskip(L) -L-> tskip(L)` and `-✓-> Ω`.
//! - `delay(L, n, P) -L-> delay(L, n-1, P)`, and for `n = 1` to `P` made active.
//! - `tprefix(k) -L-> tprefix(k)`; `-e->` `et(e)` tocks then the continuation, for each event
//!   `e` of the prefix.
//! - `[+A+](k, P1, ..., Pn)`: a tau of an operand keeps the choice; an event of `A` that every
//!   operand can do is done by all together and keeps the choice; any other event or ✓ of an
//!   operand resolves it (FDR's synchronising external choice).
//! - `/+A+\(k, P, Q)`: `P`'s moves keep the interrupt (its ✓ ends it), `Q`'s tau keeps it,
//!   an event of `A` is done by both and keeps it, and `Q`'s other events and ✓ resolve it to
//!   `Q`'s continuation (FDR's synchronising interrupt).
//! - `tprio(L, P)`: `P`'s moves, except `L` where `P` can do tau or ✓ (maximal progress:
//!   FDR's `prioritise(P, <{}, {tock}>)`, in which tau and ✓ have priority over the events of
//!   the later sets and events in no set are unaffected).
//! - `toperand(L, P)` (an operand of a parallel of a section): `P`'s moves, its ✓ going to
//!   `tΩ(L)` instead of Ω (the parallel turns that ✓ into a tau, as for any operand).
//! - `tΩ(L) -L-> tΩ(L)`: terminated (`semantics::is_terminated`), so the parallel counts it
//!   as done for its own ✓, and it still agrees to `tock`.

use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::labels::TICK;
use super::semantics::Semantics;
use super::terms::{int_arg, term, BuildPath, Encoding, Op, Section};
use crate::csp::error::{CspError, ErrorKind};
use crate::csp::value::{Proc, ProcNode, TimedProc, Value};

impl Encoding {
    /// The label of `event` as a term argument.
    fn label_arg(&self, event: &Value) -> Result<i64, CspError> {
        Ok(self.labels.label_of(event)? as i64)
    }

    /// The term of the timed process `t` (the node of `p`) at an active position.
    pub(super) fn build_timed<'s>(
        &self,
        sec: &'s Section<'_>,
        p: &Proc,
        t: &TimedProc,
        path: &mut BuildPath,
    ) -> Result<TermRef<'s>, CspError> {
        let mk = |op: Op, args: &[TermRef<'_>]| sec.create(op.symbol(args.len()), args).0;
        Ok(match t {
            TimedProc::Stop(tock) => mk(Op::TStop, &[sec.int(self.label_arg(tock)?)]),
            TimedProc::Skip(tock) => mk(Op::TSkip, &[sec.int(self.label_arg(tock)?)]),
            TimedProc::Delay(tock, n, q) => mk(
                Op::Delay,
                &[
                    sec.int(self.label_arg(tock)?),
                    sec.int(*n),
                    self.lazy(sec, q)?,
                ],
            ),
            TimedProc::Prefix(_, header) => {
                let tock = match header {
                    Value::Tuple(parts) if parts.len() == 2 => &parts[0],
                    _ => return Err(internal("a timed prefix without its header")),
                };
                let k = self
                    .timed_prefixes
                    .intern(p, |_| Ok(self.label_arg(tock)? as Label))?;
                mk(Op::TPrefix, &[sec.int(k as i64)])
            }
            TimedProc::SyncChoice(set, ps) => {
                let mut args = vec![sec.int(self.set_id(set)? as i64)];
                for q in ps {
                    args.push(self.build(sec, q, path)?);
                }
                mk(Op::SyncExt, &args)
            }
            TimedProc::SyncInterrupt(a, set, b) => {
                let k = sec.int(self.set_id(set)? as i64);
                let a = self.build(sec, a, path)?;
                mk(Op::SyncInt, &[k, a, self.build(sec, b, path)?])
            }
            TimedProc::Priority(tock, q) => {
                let l = sec.int(self.label_arg(tock)?);
                mk(Op::TPrio, &[l, self.build(sec, q, path)?])
            }
            TimedProc::Operand(tock, q) => {
                let l = sec.int(self.label_arg(tock)?);
                mk(Op::TOperand, &[l, self.build(sec, q, path)?])
            }
            TimedProc::Terminated(tock) => mk(Op::TOmega, &[sec.int(self.label_arg(tock)?)]),
        })
    }

    /// The process a timed term stands for.
    pub(super) fn timed_to_proc(&self, t: TermRef<'_>) -> Option<Proc> {
        let event = |i: usize| -> Option<Value> { self.labels.event(int_arg(t, i) as Label) };
        let arg = |i: usize| {
            self.to_proc(t.arg(i))
                .unwrap_or_else(|| Proc::new(ProcNode::Skip))
        };
        let node = match Op::of(t) {
            Op::TStop => TimedProc::Stop(event(0)?),
            Op::TSkip => TimedProc::Skip(event(0)?),
            Op::Delay => TimedProc::Delay(event(0)?, t.arg(1).int_value()?, arg(2)),
            Op::TPrefix => return Some(self.timed_prefixes.get(int_arg(t, 0)).0.clone()),
            Op::SyncExt => TimedProc::SyncChoice(
                self.sets.get(int_arg(t, 0)).0.clone(),
                (1..t.arity()).map(arg).collect(),
            ),
            Op::SyncInt => {
                TimedProc::SyncInterrupt(arg(1), self.sets.get(int_arg(t, 0)).0.clone(), arg(2))
            }
            Op::TPrio => TimedProc::Priority(event(0)?, arg(1)),
            Op::TOperand => TimedProc::Operand(event(0)?, arg(1)),
            Op::TOmega => TimedProc::Terminated(event(0)?),
            _ => return None,
        };
        Some(Proc::new(ProcNode::Timed(node.into())))
    }
}

impl Semantics {
    /// The transitions of a timed term `t` (operator `op`).
    pub(super) fn fire_timed<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        op: Op,
        depth: u32,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let enc = &self.enc;
        let with = |replace: &[(usize, TermRef<'_>)]| -> TermId {
            let mut args: Vec<TermRef<'_>> = t.args().collect();
            for &(i, a) in replace {
                args[i] = a;
            }
            sec.create(t.symbol(), &args).0.id()
        };
        match op {
            Op::TStop => out.push((int_arg(t, 0), t.id())),
            Op::TSkip => {
                out.push((int_arg(t, 0), t.id()));
                out.push((TICK, enc.omega(sec).id()));
            }
            Op::Delay => {
                let n = t.arg(1).int_value().unwrap_or(1);
                let next = if n > 1 {
                    with(&[(1, sec.int(n - 1))])
                } else {
                    enc.activate_lazy(sec, t.arg(2))?.id()
                };
                out.push((int_arg(t, 0), next));
            }
            Op::TPrefix => {
                let entry = enc.timed_prefixes.get(int_arg(t, 0));
                let (proc, tock) = &*entry;
                out.push((*tock, t.id()));
                let ProcNode::Timed(tp) = proc.node() else {
                    return Err(internal("a timed prefix that is not timed"));
                };
                let TimedProc::Prefix(closure, header) = &**tp else {
                    return Err(internal("a timed prefix that is not a prefix"));
                };
                let script = &enc.script;
                for (event, next) in script.timed_prefix_transitions(closure, header)? {
                    let label = enc.labels.label_of(&event)?;
                    let next = enc.build(sec, &next, &mut BuildPath::default())?;
                    out.push((label, next.id()));
                }
            }
            Op::SyncExt => {
                let set = enc.sets.get(int_arg(t, 0));
                // per operand, its moves on the synchronised events
                let mut synced: Vec<Vec<(Label, TermId)>> = Vec::new();
                for i in 1..t.arity() {
                    let mut mine = Vec::new();
                    for &(l, next) in self.transitions(sec, t.arg(i), depth)?.iter() {
                        if l == TAU {
                            out.push((TAU, with(&[(i, term(sec, next))])));
                        } else if set.1.contains(l) {
                            mine.push((l, next));
                        } else {
                            out.push((l, next));
                        }
                    }
                    synced.push(mine);
                }
                let mut labels: Vec<Label> = synced[0].iter().map(|m| m.0).collect();
                labels.dedup();
                for l in labels {
                    let targets: Vec<Vec<TermId>> = synced
                        .iter()
                        .map(|ms| ms.iter().filter(|m| m.0 == l).map(|m| m.1).collect())
                        .collect();
                    if targets.iter().any(Vec::is_empty) {
                        continue;
                    }
                    // every combination of the operands' targets
                    let mut choice = vec![0usize; targets.len()];
                    loop {
                        let replace: Vec<(usize, TermRef<'_>)> = choice
                            .iter()
                            .enumerate()
                            .map(|(i, &c)| (i + 1, term(sec, targets[i][c])))
                            .collect();
                        out.push((l, with(&replace)));
                        let mut i = 0;
                        while i < choice.len() {
                            choice[i] += 1;
                            if choice[i] < targets[i].len() {
                                break;
                            }
                            choice[i] = 0;
                            i += 1;
                        }
                        if i == choice.len() {
                            break;
                        }
                    }
                }
            }
            Op::SyncInt => {
                let set = enc.sets.get(int_arg(t, 0));
                let right = self.transitions(sec, t.arg(2), depth)?;
                for &(l, next) in self.transitions(sec, t.arg(1), depth)?.iter() {
                    if l == TICK {
                        out.push((TICK, next));
                    } else if set.1.contains(l) {
                        for &(m, other) in right.iter() {
                            if m == l {
                                let both = [(1, term(sec, next)), (2, term(sec, other))];
                                out.push((l, with(&both)));
                            }
                        }
                    } else {
                        out.push((l, with(&[(1, term(sec, next))])));
                    }
                }
                for &(l, next) in right.iter() {
                    if l == TAU {
                        out.push((TAU, with(&[(2, term(sec, next))])));
                    } else if !set.1.contains(l) {
                        out.push((l, next));
                    }
                }
            }
            Op::TPrio => {
                let tock = int_arg(t, 0);
                let moves = self.transitions(sec, t.arg(1), depth)?;
                let urgent = moves.iter().any(|&(l, _)| l == TAU || l == TICK);
                for &(l, next) in moves.iter() {
                    if l == TICK {
                        out.push((TICK, next));
                    } else if !(urgent && l == tock) {
                        out.push((l, with(&[(1, term(sec, next))])));
                    }
                }
            }
            Op::TOperand => {
                let mut done = None;
                for &(l, next) in self.transitions(sec, t.arg(1), depth)?.iter() {
                    if l == TICK {
                        let omega = *done.get_or_insert_with(|| {
                            sec.create(Op::TOmega.symbol(1), &[t.arg(0)]).0.id()
                        });
                        out.push((TICK, omega));
                    } else {
                        out.push((l, with(&[(1, term(sec, next))])));
                    }
                }
            }
            Op::TOmega => out.push((int_arg(t, 0), t.id())),
            _ => return Err(internal("not a timed operator")),
        }
        Ok(())
    }
}

fn internal(what: &str) -> CspError {
    CspError::unpositioned(ErrorKind::Eval, format!("internal error: {what}"))
}
