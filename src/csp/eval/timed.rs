//! Timed sections: the values of the constructs the lowering of `Timed(et) { ... }` makes
//! (`syntax::timed`), with the tock-CSP meaning FDR gives them (Armstrong, Lowe, Ouaknine and
//! Roscoe, "Model checking Timed CSP"; libcspm's evaluator is the reference):
//!
//! - `STOP` is `TSTOP = tock -> TSTOP`; `SKIP` is `TSKIP = (tock -> TSKIP) [] SKIP`;
//!   `WAIT(n)` is `n` tocks then `TSKIP`;
//! - a prefix `e -> P` is `X` where `X = tock -> X [] e -> tock -> ... -> P`, with `et(e)`
//!   tocks after `e` (and an input prefix does this for each of its events);
//! - `P [] Q` is `P [+{tock}+] Q` (time passes in both without resolving the choice);
//!   `P ||| Q` is `P [|{tock}|] Q`; `[|A|]` synchronises on `A ∪ {tock}`; each alphabet of
//!   `[A||B]` gains `tock`; `P /\ Q` is `P /+{tock}+\ Q`; `false & P` is `TSTOP`;
//! - the replicated `[]`, `|||`, `[|A|]` and `||` follow the binary forms, and are `TSTOP`
//!   over no processes; the replicated `;` over no processes is `TSKIP`;
//! - `timed_priority(P)` is `prioritise(P, <{}, {tock}>)`: `tock` only where `P` can do
//!   neither tau nor ✓ (FDR applies it only where the script writes it);
//! - an operand of a parallel of a section that has terminated still agrees to `tock` while
//!   the other operands go on ([`TimedProc::Operand`], [`TimedProc::Terminated`]): time does
//!   not stop when one side of `P ||| Q` ends. libcspm translates the parallel to a plain
//!   `[|{tock}|]`, which alone would leave the terminated side as Ω, refusing `tock`; but FDR's
//!   runs of the RoboChart models (each state machine writes `State [| X |] SKIP` in its
//!   section, and FDR 4.2.7 shows `tock` after that `SKIP` has terminated under
//!   `timed_priority`) and the tick-tock semantics of Baxter, Ribeiro and Cavalcanti
//!   ("Sound reasoning in tock-CSP", 2022: "implicit tocks allowed after termination") both
//!   let time pass there. Parallels written outside a section keep the untimed rule.
//!
//! The processes are [`TimedProc`] nodes; their firing rules are in `csp::process::timed`.

use super::*;

/// `n` tocks (`n >= 0`) then `p`.
pub(super) fn delay(tock: Value, n: i64, p: Proc) -> Proc {
    if n == 0 {
        p
    } else {
        timed(TimedProc::Delay(tock, n, p))
    }
}

fn timed(t: TimedProc) -> Proc {
    Proc::new(ProcNode::Timed(Arc::new(t)))
}

/// `p` as an operand of a parallel of a timed section: its termination lets time pass.
fn operand(tock: &Value, p: Proc) -> Proc {
    timed(TimedProc::Operand(tock.clone(), p))
}

/// The operands `ps` of a parallel of a timed section.
fn operands(tock: &Value, ps: Vec<Proc>) -> Vec<Proc> {
    ps.into_iter().map(|p| operand(tock, p)).collect()
}

/// `set ∪ {tock}`.
fn with_tock(set: &EventSet, tock: &Value) -> EventSet {
    let mut v = set.to_vec();
    if let Err(i) = v.binary_search(tock) {
        v.insert(i, tock.clone());
    }
    v.into()
}

/// The `tock` and `et` of a section's header value.
fn header_parts(header: &Value) -> Option<(&Value, &Value)> {
    match header {
        Value::Tuple(parts) if parts.len() == 2 => Some((&parts[0], &parts[1])),
        _ => None,
    }
}

impl Evaluator {
    /// The header of a timed section: the pair `(tock, et)` (`et` is the integer 1 when the
    /// section has no function: every event then takes one tock, as in FDR).
    pub(super) fn timed_header(
        &self,
        tock: &Expr,
        et: Option<&Expr>,
        env: &mut Env,
    ) -> EResult<Value> {
        let t = self.eval(tock, env)?;
        if !t.is_comparable() || !self.validate_event(t.atoms(), tock.span)? {
            return Err(self.err(
                tock.span,
                ErrorKind::Type,
                format!(
                    "a timed section needs `tock` to be an event, but `tock` is {}",
                    self.show(&t)
                ),
            ));
        }
        let et = match et {
            None => Value::Int(1),
            Some(e) => match self.eval(e, env)? {
                f @ Value::Func(_) => f,
                other => {
                    return Err(self.err(
                        e.span,
                        ErrorKind::Type,
                        format!(
                            "`Timed(...)` needs a function from events to integers (the tocks \
                             each event takes), found {}",
                            self.show(&other)
                        ),
                    ))
                }
            },
        };
        Ok(Value::Tuple(Arc::from(vec![t, et])))
    }

    /// The value of a construct of a timed section.
    pub(super) fn eval_timed(&self, t: &TimedExpr, env: &mut Env) -> EResult<Value> {
        let header = self.eval(&t.section, env)?;
        let tock = match header_parts(&header) {
            Some((tock, _)) => tock.clone(),
            None => return Err(self.internal("a timed section's header is not a pair")),
        };
        let p = match &t.form {
            TimedForm::Stop => timed(TimedProc::Stop(tock)),
            TimedForm::Skip => timed(TimedProc::Skip(tock)),
            TimedForm::Wait(n) => {
                let k = self.eval_int(n, env)?;
                if k < 0 {
                    return Err(self.err(
                        n.span,
                        ErrorKind::Eval,
                        format!("`WAIT` needs a number of tocks that is not negative, given {k}"),
                    ));
                }
                delay(tock.clone(), k, timed(TimedProc::Skip(tock)))
            }
            TimedForm::Priority(p) => timed(TimedProc::Priority(tock, self.eval_proc(p, env)?)),
            TimedForm::Prefix(e) => match self.eval_proc(e, env)?.node() {
                ProcNode::Prefix(c) => timed(TimedProc::Prefix(c.clone(), header)),
                _ => return Err(self.internal("a timed prefix is not a prefix")),
            },
            TimedForm::Operator(e) => self.timed_operator(e, &t.section, &tock, env)?,
        };
        Ok(Value::Proc(p))
    }

    /// An operator of a timed section (`e`, of the section whose header `section` names).
    fn timed_operator(
        &self,
        e: &Expr,
        section: &Expr,
        tock: &Value,
        env: &mut Env,
    ) -> EResult<Proc> {
        use ExprKind as K;
        let tocks: EventSet = Arc::from(vec![tock.clone()]);
        Ok(match &e.kind {
            K::Proc(op @ (ProcOp::ExtChoice | ProcOp::Interleave), _, _) => {
                // A chain `P1 [] P2 [] ...` is one n-ary node, collected without recursion.
                let mut operands = Vec::new();
                let mut todo = vec![e];
                while let Some(x) = todo.pop() {
                    match same_operator(x, *op, section) {
                        Some((a, b)) => {
                            todo.push(b);
                            todo.push(a);
                        }
                        None => operands.push(self.eval_proc(x, env)?),
                    }
                }
                if *op == ProcOp::ExtChoice {
                    timed(TimedProc::SyncChoice(tocks, operands))
                } else {
                    Proc::new(ProcNode::Parallel(tocks, self::operands(tock, operands)))
                }
            }
            K::Proc(ProcOp::Interrupt, a, b) => {
                let pa = self.eval_proc(a, env)?;
                let pb = self.eval_proc(b, env)?;
                timed(TimedProc::SyncInterrupt(pa, tocks, pb))
            }
            K::Parallel(p, a, q) => {
                let pp = self.eval_proc(p, env)?;
                let set = self.event_set(a, env)?;
                let pq = self.eval_proc(q, env)?;
                Proc::new(ProcNode::Parallel(
                    with_tock(&set, tock),
                    vec![operand(tock, pp), operand(tock, pq)],
                ))
            }
            K::AlphaParallel(p, a, b, q) => {
                let pp = self.eval_proc(p, env)?;
                let sa = self.event_set(a, env)?;
                let sb = self.event_set(b, env)?;
                let pq = self.eval_proc(q, env)?;
                Proc::new(ProcNode::AlphaParallel(vec![
                    (with_tock(&sa, tock), operand(tock, pp)),
                    (with_tock(&sb, tock), operand(tock, pq)),
                ]))
            }
            K::SetProc(op, p, a, q) => {
                let pp = self.eval_proc(p, env)?;
                let set = with_tock(&self.event_set(a, env)?, tock);
                let pq = self.eval_proc(q, env)?;
                match op {
                    SetProcOp::SyncInterrupt => timed(TimedProc::SyncInterrupt(pp, set, pq)),
                    _ => timed(TimedProc::SyncChoice(set, vec![pp, pq])),
                }
            }
            K::Guard(b, p) => {
                if self.eval_bool(b, env)? {
                    self.eval_proc(p, env)?
                } else {
                    timed(TimedProc::Stop(tock.clone()))
                }
            }
            K::Replicated(op, stmts, body) => self.timed_replicated(op, stmts, body, tock, env)?,
            _ => return Err(self.internal("an operator of a timed section")),
        })
    }

    /// A replicated operator of a timed section.
    fn timed_replicated(
        &self,
        op: &RepOp,
        stmts: &[Stmt],
        body: &Expr,
        tock: &Value,
        env: &mut Env,
    ) -> EResult<Proc> {
        let shared = match op {
            RepOp::Parallel(a) | RepOp::SyncExtChoice(a) => {
                Some(with_tock(&self.event_set(a, env)?, tock))
            }
            _ => None,
        };
        if let (RepOp::Seq, Some(Stmt::Generator(_, src))) = (op, stmts.first()) {
            if let Value::Set(_) = self.eval(src, &mut env.clone())? {
                return Err(self.err(
                    src.span,
                    ErrorKind::Type,
                    "replicated `;` draws from a sequence, not a set",
                ));
            }
        }
        let mut procs: Vec<Proc> = Vec::new();
        let mut alphas: Vec<(EventSet, Proc)> = Vec::new();
        self.for_each(stmts, env, &mut |s, env| {
            let p = s.eval_proc(body, env)?;
            if let RepOp::AlphaParallel(a) = op {
                alphas.push((with_tock(&s.event_set(a, env)?, tock), operand(tock, p)));
            } else {
                procs.push(p);
            }
            Ok(())
        })?;
        let stop = || timed(TimedProc::Stop(tock.clone()));
        let tocks = || -> EventSet { Arc::from(vec![tock.clone()]) };
        Ok(match op {
            RepOp::Seq => match procs.pop() {
                None => timed(TimedProc::Skip(tock.clone())),
                Some(last) => procs
                    .into_iter()
                    .rev()
                    .fold(last, |acc, p| Proc::new(ProcNode::Seq(p, acc))),
            },
            RepOp::AlphaParallel(_) if alphas.is_empty() => stop(),
            RepOp::AlphaParallel(_) => Proc::new(ProcNode::AlphaParallel(alphas)),
            _ if procs.is_empty() => stop(),
            RepOp::ExtChoice => timed(TimedProc::SyncChoice(tocks(), procs)),
            RepOp::Interleave => Proc::new(ProcNode::Parallel(tocks(), operands(tock, procs))),
            RepOp::Parallel(_) => Proc::new(ProcNode::Parallel(
                shared.unwrap_or_else(tocks),
                operands(tock, procs),
            )),
            RepOp::SyncExtChoice(_) => {
                timed(TimedProc::SyncChoice(shared.unwrap_or_else(tocks), procs))
            }
            RepOp::IntChoice | RepOp::Link(..) => {
                return Err(self.internal("a timed replicated operator the lowering rejects"))
            }
        })
    }

    /// The duration of `event` in tocks, as the section's `et` gives it (`span`: the prefix).
    fn duration(&self, et: &Value, event: &Value, span: Span) -> EResult<i64> {
        let v = match et {
            Value::Int(n) => Value::Int(*n),
            f => self.apply(f, vec![event.clone()], span)?,
        };
        match v {
            Value::Int(n) if n >= 0 => Ok(n),
            other => Err(self.err(
                span,
                ErrorKind::Eval,
                format!(
                    "the function of `Timed(...)` must give each event a number of tocks that \
                     is not negative; it gives {} for {}",
                    self.show(&other),
                    self.show(event)
                ),
            )),
        }
    }

    /// The events of a prefix written in a timed section, each with the process after it:
    /// `et(e)` tocks, then the prefix's continuation. (The prefix can also let time pass:
    /// its `tock`, back to itself, is not listed.)
    pub fn timed_prefix_transitions(
        &self,
        prefix: &PrefixClosure,
        header: &Value,
    ) -> Result<Vec<(Value, Proc)>, CspError> {
        let _g = StackGuard::enter();
        let Some((tock, et)) = header_parts(header) else {
            return Err(self.internal("a timed section's header is not a pair"));
        };
        let span = self
            .prog
            .prefixes
            .get(&prefix.expr)
            .map(|p| p.2)
            .unwrap_or_default();
        let mut out = Vec::new();
        for (event, next) in self.prefix_transitions(prefix)? {
            let n = self.duration(et, &event, span)?;
            out.push((event, delay(tock.clone(), n, next)));
        }
        Ok(out)
    }

    /// The processes a timed process consists of or moves to without its own `tock` (for
    /// traversals of process terms).
    pub fn timed_parts(&self, t: &TimedProc) -> Result<Vec<Proc>, CspError> {
        Ok(match t {
            TimedProc::Stop(_) | TimedProc::Skip(_) | TimedProc::Terminated(_) => Vec::new(),
            TimedProc::Delay(_, _, p) | TimedProc::Priority(_, p) | TimedProc::Operand(_, p) => {
                vec![p.clone()]
            }
            TimedProc::Prefix(c, header) => self
                .timed_prefix_transitions(c, header)?
                .into_iter()
                .map(|(_, p)| p)
                .collect(),
            TimedProc::SyncChoice(_, ps) => ps.clone(),
            TimedProc::SyncInterrupt(p, _, q) => vec![p.clone(), q.clone()],
        })
    }

    /// Writes a timed process (see `write_proc`): the timed `STOP` and `SKIP` as FDR shows
    /// them (`STOP(tock)`, `SKIP(tock)`).
    pub(super) fn write_timed(&self, s: &mut String, t: &TimedProc, depth: usize) {
        let sub = |s: &mut String, q: &Proc| {
            let simple = matches!(
                q.node(),
                ProcNode::Stop | ProcNode::Skip | ProcNode::Call(_)
            ) || matches!(q.node(), ProcNode::Timed(t) if matches!(**t, TimedProc::Stop(_) | TimedProc::Skip(_)));
            if !simple {
                s.push('(');
            }
            self.write_proc(s, q, depth + 1);
            if !simple {
                s.push(')');
            }
        };
        match t {
            TimedProc::Stop(tock) => s.push_str(&format!("STOP({})", self.show(tock))),
            TimedProc::Skip(tock) => s.push_str(&format!("SKIP({})", self.show(tock))),
            TimedProc::Delay(tock, n, p) => {
                let tock = self.show(tock);
                if *n <= 4 {
                    for _ in 0..*n {
                        s.push_str(&format!("{tock} -> "));
                    }
                } else {
                    s.push_str(&format!("{tock} -> ... ({n} times) -> "));
                }
                sub(s, p);
            }
            TimedProc::Prefix(c, _) => {
                s.push_str("timed ");
                self.write_proc(s, &Proc::new(ProcNode::Prefix(c.clone())), depth + 1);
            }
            TimedProc::SyncChoice(set, ps) => {
                let mut op = String::from(" [+");
                self.write_set(&mut op, set);
                op.push_str("+] ");
                for (i, q) in ps.iter().enumerate() {
                    if i > 0 {
                        s.push_str(&op);
                    }
                    sub(s, q);
                }
            }
            TimedProc::SyncInterrupt(p, set, q) => {
                sub(s, p);
                s.push_str(" /+");
                self.write_set(s, set);
                s.push_str("+\\ ");
                sub(s, q);
            }
            // Transparent: the operand is printed as written.
            TimedProc::Operand(_, p) => self.write_proc(s, p, depth),
            TimedProc::Terminated(_) => s.push('Ω'),
            TimedProc::Priority(_, p) => {
                s.push_str("timed_priority(");
                self.write_proc(s, p, depth + 1);
                s.push(')');
            }
        }
    }
}

/// The operands `(a, b)` of `x` if it is the binary operator `op` of the same timed section
/// as `section` (written `a op b` there), else `None`.
fn same_operator<'e>(x: &'e Expr, op: ProcOp, section: &Expr) -> Option<(&'e Expr, &'e Expr)> {
    let x = match &x.kind {
        ExprKind::Timed(t) => match (&t.form, &t.section.kind, &section.kind) {
            (TimedForm::Operator(inner), ExprKind::Var(m), ExprKind::Var(n)) if m == n => inner,
            _ => return None,
        },
        _ => x,
    };
    match &x.kind {
        ExprKind::Proc(o, a, b) if *o == op => Some((a, b)),
        _ => None,
    }
}
