//! Expressions: the evaluation of every kind of expression to a value or a process term.

use super::*;

impl Evaluator {
    pub(super) fn eval_proc(&self, e: &Expr, env: &mut Env) -> EResult<Proc> {
        match self.eval(e, env)? {
            Value::Proc(p) => Ok(p),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected a process, found {}", self.show(&other)),
            )),
        }
    }

    pub(super) fn eval_bool(&self, e: &Expr, env: &mut Env) -> EResult<bool> {
        match self.eval(e, env)? {
            Value::Bool(b) => Ok(b),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected a boolean, found {}", self.show(&other)),
            )),
        }
    }

    pub(super) fn eval_int(&self, e: &Expr, env: &mut Env) -> EResult<i64> {
        match self.eval(e, env)? {
            Value::Int(i) => Ok(i),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected an integer, found {}", self.show(&other)),
            )),
        }
    }

    pub(super) fn capture(&self, names: &[Name], env: &Env) -> EResult<Arc<[Binding]>> {
        names
            .iter()
            .map(|n| {
                env.iter()
                    .rev()
                    .find(|(m, _)| m == n)
                    .map(|(_, b)| b.clone())
                    .ok_or_else(|| self.internal(&format!("free variable `{n}` not bound")))
            })
            .collect()
    }

    /// The elements a generator draws from.
    pub(super) fn elements(&self, e: &Expr, env: &mut Env) -> EResult<Arc<[Value]>> {
        let v = self.eval(e, env)?;
        self.elements_of(v, e.span)
    }

    /// The elements of `v`, the value of a generator's source written at `span`.
    pub(super) fn elements_of(&self, v: Value, span: Span) -> EResult<Arc<[Value]>> {
        match v {
            Value::Set(s) => Ok(s.items().clone()),
            Value::Seq(s) => Ok(s.as_slice().into()),
            v @ Value::Infinite(_) => {
                Err(self.infinite_error(span, &v, "a comprehension or replicated operator"))
            }
            v @ (Value::InfSeq(..) | Value::LazySeq(_)) => Err(self.err(
                span,
                ErrorKind::Unsupported,
                format!(
                    "drawing from {}, an infinite sequence, in a comprehension or replicated \
                     operator is outside weft's CSPm subset",
                    self.show(&v)
                ),
            )),
            other => Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "expected a set or sequence to draw from, found {}",
                    self.show(&other)
                ),
            )),
        }
    }

    /// Calls `body` once per binding of the statements (in order).
    pub(super) fn for_each(
        &self,
        stmts: &[Stmt],
        env: &mut Env,
        body: &mut dyn FnMut(&Self, &mut Env) -> EResult<()>,
    ) -> EResult<()> {
        let Some((first, rest)) = stmts.split_first() else {
            return body(self, env);
        };
        match first {
            Stmt::Qualifier(q) => {
                if self.eval_bool(q, env)? {
                    self.for_each(rest, env, body)?;
                }
            }
            Stmt::Generator(p, src) => {
                let items = self.elements(src, env)?;
                for it in items.iter() {
                    self.poll_stop(1)?;
                    let mark = env.len();
                    if self.match_pattern(p, it, env)? {
                        self.for_each(rest, env, body)?;
                    }
                    env.truncate(mark);
                }
            }
        }
        Ok(())
    }

    pub(super) fn make_set(&self, items: Vec<Value>, span: Span) -> EResult<Value> {
        if let Some(bad) = items.iter().find(|v| matches!(v, Value::Func(_))) {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "{} cannot be put in a set (functions are not comparable)",
                    self.show(bad)
                ),
            ));
        }
        if items.len() > MAX_COLLECTION {
            return Err(self.err(
                span,
                ErrorKind::Limit,
                format!("set with more than {MAX_COLLECTION} elements"),
            ));
        }
        Ok(Value::set_from(items))
    }

    pub(super) fn range(
        &self,
        lo: &Expr,
        hi: &Expr,
        env: &mut Env,
        span: Span,
    ) -> EResult<Vec<Value>> {
        let a = self.eval_int(lo, env)?;
        let b = self.eval_int(hi, env)?;
        if b >= a && (b - a) as u128 >= MAX_COLLECTION as u128 {
            return Err(self.err(
                span,
                ErrorKind::Limit,
                format!("range with more than {MAX_COLLECTION} elements"),
            ));
        }
        let len = if b >= a { (b - a) as usize + 1 } else { 0 };
        self.collect_polled((a..=b).map(Value::Int), len)
    }

    /// Evaluates an expression in `env`.
    pub(super) fn eval(&self, e: &Expr, env: &mut Env) -> EResult<Value> {
        use ExprKind as K;
        if stack_exhausted() {
            return Err(self.err(
                e.span,
                ErrorKind::Limit,
                "evaluation too deep for this thread's stack (unbounded recursion, or a process \
                 defined in terms of itself without a prefix?)",
            ));
        }
        Ok(match &e.kind {
            K::Int(i) => Value::Int(*i),
            K::Bool(b) => Value::Bool(*b),
            K::Char(c) => Value::Char(*c),
            K::Str(text) => Value::string(text),
            K::Map(pairs) => {
                let mut items = Vec::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let k = self.eval(k, env)?;
                    let v = self.eval(v, env)?;
                    // only keys must be comparable; values may be processes, as in FDR
                    if !k.is_comparable() {
                        return Err(self.err(
                            e.span,
                            ErrorKind::Type,
                            format!(
                                "{} cannot be put in a map as a key (processes and functions \
                                 are not comparable)",
                                self.show(&k)
                            ),
                        ));
                    }
                    items.push((k, v));
                }
                Value::map_from(items)
            }
            K::Var(n) => self.lookup(n, env, e.span, self.prog.site(e.id))?,
            K::Wildcard => {
                return Err(self.err(
                    e.span,
                    ErrorKind::Syntax,
                    "`_` can only be used in a pattern",
                ))
            }
            K::Dot(..) => {
                // The whole chain `x.y.z` is one dotted value, checked once it is complete
                // (as libcspm combines the operands): an operand that is itself a complete
                // event may be followed by more fields (`ev.x.i.V` with `x` an event of a
                // field of type `{a, b, c}`), which its own partial chain `x.i.V` could not.
                let mut operands = Vec::new();
                flatten_dots(e, &mut operands);
                let last = operands.len() - 1;
                let mut v: Option<Value> = None;
                for (i, operand) in operands.iter().enumerate() {
                    let vo = self.eval(operand, env)?;
                    if i < last && matches!(vo, Value::Proc(_) | Value::Func(_)) {
                        return Err(self.err(
                            operand.span.to(operands[last].span),
                            ErrorKind::Type,
                            format!("cannot apply `.` to {}", self.show(&vo)),
                        ));
                    }
                    v = Some(match v {
                        None => vo,
                        Some(acc) => Value::dot(&acc, &vo),
                    });
                }
                let v = v.expect("a dotted chain has operands");
                self.check_dotted(&v, e.span)?;
                v
            }
            K::App(f, args) => {
                let fv = self.eval(f, env)?;
                let avs = args
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                self.apply_at(&fv, avs, e.span, self.prog.site(e.id))?
            }
            K::Binary(op, a, b) => self.binary(*op, a, b, env, e.span)?,
            K::Unary(op, a) => match op {
                UnOp::Neg => Value::Int(
                    self.eval_int(a, env)?
                        .checked_neg()
                        .ok_or_else(|| self.err(e.span, ErrorKind::Eval, "integer overflow"))?,
                ),
                UnOp::Not => Value::Bool(!self.eval_bool(a, env)?),
                UnOp::Len => match self.eval(a, env)? {
                    Value::Seq(s) => Value::Int(s.len() as i64),
                    v @ (Value::InfSeq(..) | Value::LazySeq(_)) => {
                        return Err(self.err(
                            a.span,
                            ErrorKind::Eval,
                            format!("`#` of {}, an infinite sequence", self.show(&v)),
                        ))
                    }
                    other => {
                        return Err(self.err(
                            a.span,
                            ErrorKind::Type,
                            format!("`#` needs a sequence, found {}", self.show(&other)),
                        ))
                    }
                },
            },
            K::If(c, t, f) => {
                if self.eval_bool(c, env)? {
                    self.eval(t, env)?
                } else {
                    self.eval(f, env)?
                }
            }
            _ => self.eval_complex(e, env)?,
        })
    }

    /// The expression kinds with large evaluation frames (kept out of `eval` so that deep
    /// recursion through `eval` uses little stack).
    #[inline(never)]
    pub(super) fn eval_complex(&self, e: &Expr, env: &mut Env) -> EResult<Value> {
        use ExprKind as K;
        Ok(match &e.kind {
            K::Tuple(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                Value::Tuple(vs.into())
            }
            K::Let(l) => {
                let info = self
                    .prog
                    .lets
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown let"))?;
                let r = Arc::new(LetRef {
                    group: e.id,
                    captured: self.capture(&info.free, env)?,
                });
                let mark = env.len();
                for d in &info.group.defs {
                    env.push((d.name.clone(), Binding::Let(r.clone())));
                }
                let v = self.eval(&l.body, env);
                env.truncate(mark);
                v?
            }
            K::Lambda(_) => {
                let (_, free) = self
                    .prog
                    .lambdas
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown lambda"))?;
                func(Target::Lambda(e.id, self.capture(free, env)?))
            }
            K::SeqLit(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                Value::Seq(vs.into())
            }
            K::SeqRange(a, b) => Value::Seq(self.range(a, b, env, e.span)?.into()),
            // a generator over an infinite sequence makes the rest lazy (eval::lazy_seq)
            K::SeqComp(items, stmts) => self.seq_comprehension(e, items, stmts, env)?,
            K::SetLit(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                self.make_set(vs, e.span)?
            }
            K::SetFrom(a) => self.ints_value(IntRanges::from(self.eval_int(a, env)?))?,
            K::SeqFrom(a) => Value::InfSeq(SeqValue::empty(), self.eval_int(a, env)?),
            K::RangeComp(range, stmts) => {
                let set = matches!(range.kind, K::SetRange(..) | K::SetFrom(_));
                let mut parts = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    parts.push(s.eval(range, env)?);
                    Ok(())
                })?;
                if set {
                    self.set_union(parts)?
                } else {
                    let mut out = Vec::new();
                    for p in parts {
                        if let Value::Seq(items) = p {
                            out.extend(items.iter().cloned());
                        }
                        if out.len() > MAX_COLLECTION {
                            return Err(self.err(e.span, ErrorKind::Limit, "sequence too long"));
                        }
                    }
                    Value::Seq(out.into())
                }
            }
            K::SetRange(a, b) => {
                let lo = self.eval_int(a, env)?;
                let hi = self.eval_int(b, env)?;
                self.ints_value(IntRanges::between(lo, hi))?
            }
            K::SetComp(items, stmts) => {
                let mut out = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    for it in items {
                        out.push(s.eval(it, env)?);
                        if out.len() > MAX_COLLECTION {
                            return Err(s.err(e.span, ErrorKind::Limit, "set too large"));
                        }
                    }
                    Ok(())
                })?;
                self.make_set(out, e.span)?
            }
            K::Productions(items) => {
                let mut out = Vec::new();
                for it in items {
                    let v = self.eval(it, env)?;
                    out.push(self.productions(&v, it.span)?);
                }
                self.set_union(out)?
            }
            K::ProductionsComp(items, stmts) => {
                let mut out = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    for it in items {
                        let v = s.eval(it, env)?;
                        out.push(s.productions(&v, it.span)?);
                    }
                    Ok(())
                })?;
                self.set_union(out)?
            }
            K::Prefix(pre) => {
                let (_, free, _) = self
                    .prog
                    .prefixes
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown prefix"))?;
                let closure = PrefixClosure {
                    expr: e.id,
                    captured: self.capture(free, env)?,
                    choice: None,
                };
                if pre
                    .fields
                    .iter()
                    .any(|f| matches!(f, Field::NondetInput(..)))
                {
                    Value::Proc(self.nondeterministic_prefix(closure, e.span)?)
                } else {
                    Value::Proc(Proc::new(ProcNode::Prefix(closure)))
                }
            }
            K::Guard(b, p) => {
                if self.eval_bool(b, env)? {
                    Value::Proc(self.eval_proc(p, env)?)
                } else {
                    Value::Proc(Proc::new(ProcNode::Stop))
                }
            }
            K::Proc(op @ (ProcOp::ExtChoice | ProcOp::IntChoice | ProcOp::Interleave), _, _) => {
                // Associative: a chain `P1 [] P2 [] ...` is one n-ary node, its operands
                // collected without recursion (so thousands of branches are fine).
                let mut operands = Vec::new();
                let mut todo = vec![e];
                while let Some(x) = todo.pop() {
                    match &x.kind {
                        K::Proc(o, a, b) if o == op => {
                            todo.push(b);
                            todo.push(a);
                        }
                        _ => operands.push(self.eval_proc(x, env)?),
                    }
                }
                Value::Proc(Proc::new(match op {
                    ProcOp::ExtChoice => ProcNode::ExtChoice(operands),
                    ProcOp::IntChoice => ProcNode::IntChoice(operands),
                    _ => ProcNode::Interleave(operands),
                }))
            }
            K::Proc(ProcOp::Seq, _, _) => {
                // Associative: a chain `P1 ; P2 ; ...` (read left to right) becomes
                // `P1 ; (P2 ; (...))`, whose states keep the rest unevaluated (a constant-size
                // term per state instead of the whole left spine), built without recursion.
                // The operands after one that must perform an event before it terminates
                // are reached only after that event: a definition named there while it is
                // being evaluated stands for itself, as behind a prefix (`EventGuard`).
                let mut operands = Vec::new();
                let mut behind_event: Option<EventGuard> = None;
                let mut todo = vec![e];
                while let Some(x) = todo.pop() {
                    match &x.kind {
                        K::Proc(ProcOp::Seq, a, b) => {
                            todo.push(b);
                            todo.push(a);
                        }
                        _ => {
                            let p = self.eval_proc(x, env)?;
                            if behind_event.is_none() && !todo.is_empty() && self.must_engage(&p) {
                                behind_event = Some(EventGuard::enter());
                            }
                            operands.push(p);
                        }
                    }
                }
                drop(behind_event);
                let mut rest = operands.pop().ok_or_else(|| self.internal("empty `;`"))?;
                while let Some(first) = operands.pop() {
                    rest = Proc::new(ProcNode::Seq(first, rest));
                }
                Value::Proc(rest)
            }
            K::Proc(op, a, b) => {
                let pa = self.eval_proc(a, env)?;
                let pb = self.eval_proc(b, env)?;
                Value::Proc(Proc::new(match op {
                    ProcOp::ExtChoice => ProcNode::ExtChoice(vec![pa, pb]),
                    ProcOp::IntChoice => ProcNode::IntChoice(vec![pa, pb]),
                    ProcOp::Interleave => ProcNode::Interleave(vec![pa, pb]),
                    ProcOp::Seq => ProcNode::Seq(pa, pb),
                    ProcOp::Interrupt => ProcNode::Interrupt(pa, pb),
                    ProcOp::Timeout => ProcNode::Timeout(pa, pb),
                }))
            }
            K::Hide(p, a) => {
                let pp = self.eval_proc(p, env)?;
                let set = self.event_set(a, env)?;
                Value::Proc(Proc::new(ProcNode::Hide(pp, set)))
            }
            K::Parallel(p, a, q) => {
                let pp = self.eval_proc(p, env)?;
                let set = self.event_set(a, env)?;
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::Parallel(set, vec![pp, pq])))
            }
            K::AlphaParallel(p, a, b, q) => {
                let pp = self.eval_proc(p, env)?;
                let sa = self.event_set(a, env)?;
                let sb = self.event_set(b, env)?;
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::AlphaParallel(vec![(sa, pp), (sb, pq)])))
            }
            K::Rename(p, pairs, stmts) => {
                let pp = self.eval_proc(p, env)?;
                let rel = self.relation(pairs, stmts, env, e.span)?;
                Value::Proc(Proc::new(ProcNode::Rename(pp, rel)))
            }
            K::Link(p, pairs, stmts, q) => {
                let pp = self.eval_proc(p, env)?;
                let rel = self.link_relation(pairs, stmts, env, e.span)?;
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::Link(pp, rel, pq)))
            }
            K::Project(p, a) => self.project(p, a, env)?,
            K::SetProc(op, p, a, q) => self.set_proc(*op, p, a, q, env)?,
            K::Replicated(op, stmts, body) => self.replicated(op, stmts, body, env, e.span)?,
            K::TimedHeader(tock, et) => self.timed_header(tock, et.as_deref(), env)?,
            K::Timed(t) => self.eval_timed(t, env)?,
            _ => return Err(self.internal("eval_complex on a simple expression")),
        })
    }

    pub(super) fn replicated(
        &self,
        op: &RepOp,
        stmts: &[Stmt],
        body: &Expr,
        env: &mut Env,
        span: Span,
    ) -> EResult<Value> {
        let shared = match op {
            RepOp::Parallel(a) | RepOp::SyncExtChoice(a) => Some(self.event_set(a, env)?),
            RepOp::Link(pairs, tie_stmts) => {
                return self.replicated_link(pairs, tie_stmts, stmts, body, env, span)
            }
            _ => None,
        };
        let mut procs: Vec<Proc> = Vec::new();
        let mut alphas: Vec<(EventSet, Proc)> = Vec::new();
        self.for_each(stmts, env, &mut |s, env| {
            // As many branches as a prefix may offer events: more would take gigabytes to
            // build, and a state with that many moves (or components) cannot be explored.
            if procs.len() + alphas.len() >= MAX_EVENTS {
                return Err(s.err(
                    span,
                    ErrorKind::Limit,
                    format!(
                        "this replicated operator combines more than {MAX_EVENTS} processes: \
                         too large to explore"
                    ),
                ));
            }
            let p = s.eval_proc(body, env)?;
            if let RepOp::AlphaParallel(a) = op {
                alphas.push((s.event_set(a, env)?, p));
            } else {
                procs.push(p);
            }
            Ok(())
        })?;
        let node = match op {
            RepOp::ExtChoice if procs.is_empty() => ProcNode::Stop,
            RepOp::ExtChoice => ProcNode::ExtChoice(procs),
            RepOp::IntChoice if procs.is_empty() => {
                return Err(self.err(
                    span,
                    ErrorKind::Eval,
                    "replicated internal choice over an empty set",
                ))
            }
            RepOp::IntChoice => ProcNode::IntChoice(procs),
            RepOp::Interleave if procs.is_empty() => ProcNode::Skip,
            RepOp::Interleave => ProcNode::Interleave(procs),
            RepOp::Parallel(_) if procs.is_empty() => ProcNode::Skip,
            RepOp::Parallel(_) => {
                ProcNode::Parallel(shared.unwrap_or_else(|| Arc::from(Vec::new())), procs)
            }
            RepOp::AlphaParallel(_) if alphas.is_empty() => ProcNode::Skip,
            RepOp::AlphaParallel(_) => ProcNode::AlphaParallel(alphas),
            RepOp::SyncExtChoice(_) if procs.is_empty() => ProcNode::Stop,
            RepOp::SyncExtChoice(_) if procs.len() == 1 => return Ok(Value::Proc(procs.remove(0))),
            RepOp::SyncExtChoice(_) => ProcNode::Timed(Arc::new(TimedProc::SyncChoice(
                shared.unwrap_or_else(|| Arc::from(Vec::new())),
                procs,
            ))),
            RepOp::Link(..) => return Err(self.internal("replicated link parallel")),
            RepOp::Seq => {
                if let Some(Stmt::Generator(_, src)) = stmts.first() {
                    if let Value::Set(_) = self.eval(src, &mut env.clone())? {
                        return Err(self.err(
                            src.span,
                            ErrorKind::Type,
                            "replicated `;` draws from a sequence, not a set",
                        ));
                    }
                }
                let mut it = procs.into_iter().rev();
                match it.next() {
                    None => ProcNode::Skip,
                    Some(last) => {
                        let mut acc = last;
                        for p in it {
                            acc = Proc::new(ProcNode::Seq(p, acc));
                        }
                        return Ok(Value::Proc(acc));
                    }
                }
            }
        };
        Ok(Value::Proc(Proc::new(node)))
    }

    /// A prefix with nondeterministic inputs (`c$x -> P`): the internal choice, over the
    /// values its `$` fields can take, of the prefix offering the events with those values
    /// (its `?` fields, which come after every `$`, still an external choice), as FDR
    /// defines `$`; an error when there is no value to choose.
    fn nondeterministic_prefix(&self, closure: PrefixClosure, span: Span) -> EResult<Proc> {
        let mut choices: Vec<Vec<Value>> = self
            .prefix_moves(&closure)
            .map_err(|e| self.at_if_unpositioned(e, span))?
            .into_iter()
            .map(|(chosen, _, _)| chosen)
            .collect();
        choices.sort_unstable();
        choices.dedup();
        let mut branches: Vec<Proc> = choices
            .into_iter()
            .map(|c| {
                Proc::new(ProcNode::Prefix(PrefixClosure {
                    choice: Some(c.into()),
                    ..closure.clone()
                }))
            })
            .collect();
        Ok(match branches.len() {
            0 => {
                return Err(self.err(
                    span,
                    ErrorKind::Eval,
                    "a nondeterministic input `$` with no value to choose (an internal choice \
                     over nothing)",
                ))
            }
            1 => branches.remove(0),
            _ => Proc::new(ProcNode::IntChoice(branches)),
        })
    }

    /// Evaluates a set of events (each element must be a complete event).
    pub(super) fn event_set(&self, e: &Expr, env: &mut Env) -> EResult<EventSet> {
        let v = self.eval(e, env)?;
        self.value_event_set(&v, e.span)
    }

    /// The set of events `v` is (each element must be a complete event); `span` is where
    /// it is written.
    pub(super) fn value_event_set(&self, v: &Value, span: Span) -> EResult<EventSet> {
        if let Value::Infinite(_) = v {
            return self.infinite_event_set(v, span);
        }
        let Value::Set(items) = v else {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!("expected a set of events, found {}", self.show(v)),
            ));
        };
        for it in items.iter() {
            if !self.validate_event(it.atoms(), span)? {
                let hint = match it.atoms().first() {
                    Some(Value::Chan(_)) => {
                        format!(" (use {{| {} |}} for all its events)", self.show(it))
                    }
                    _ => String::new(),
                };
                return Err(self.err(
                    span,
                    ErrorKind::Type,
                    format!("{} in this set is not an event{hint}", self.show(it)),
                ));
            }
        }
        Ok(items.items().clone())
    }
}

pub(super) fn flatten_dots<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Dot(a, b) => {
            flatten_dots(a, out);
            flatten_dots(b, out);
        }
        _ => out.push(e),
    }
}
