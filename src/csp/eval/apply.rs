//! Application: calls of functions, processes and built-ins, by argument groups.

use super::*;
use crate::reduce::Compression;

pub(super) fn func(target: Target) -> Value {
    Value::Func(Arc::new(Func {
        target,
        applied: Vec::new(),
    }))
}

impl Evaluator {
    pub(super) fn groups_of(&self, target: &Target) -> EResult<Vec<usize>> {
        Ok(match target {
            Target::Global(i) => match &self.prog.top.defs[*i as usize].kind {
                DefKind::Function { groups, .. } => groups.clone(),
                _ => Vec::new(),
            },
            Target::Let(r, i) => {
                let info = self
                    .prog
                    .lets
                    .get(&r.group)
                    .ok_or_else(|| self.internal("unknown let group"))?;
                match &info.group.defs[*i as usize].kind {
                    DefKind::Function { groups, .. } => groups.clone(),
                    _ => Vec::new(),
                }
            }
            Target::Lambda(id, _) => vec![self
                .prog
                .lambdas
                .get(id)
                .map(|l| l.0.params.len())
                .unwrap_or(0)],
            Target::Builtin(b) => vec![b.arity()],
            Target::Compression(_) => vec![1],
        })
    }

    /// Splits a call's flat argument list back into groups.
    pub(super) fn regroup(&self, target: &Target, args: &[Value]) -> EResult<Vec<Arc<[Value]>>> {
        let sizes = self.groups_of(target)?;
        let mut out = Vec::new();
        let mut i = 0;
        for s in sizes {
            if i + s > args.len() {
                return Err(self.internal("call with too few arguments"));
            }
            out.push(Arc::from(&args[i..i + s]));
            i += s;
        }
        Ok(out)
    }

    /// `f` applied to `args` (a call written at `span`, outside any body or at an opaque
    /// site).
    pub(super) fn apply(&self, f: &Value, args: Vec<Value>, span: Span) -> EResult<Value> {
        self.apply_at(f, args, span, Site::Opaque)
    }

    /// `f` applied to `args`, a call written at `span`, at `site` of the body being evaluated
    /// (see [`recursive_reference`]).
    pub(super) fn apply_at(
        &self,
        f: &Value,
        args: Vec<Value>,
        span: Span,
        site: Site,
    ) -> EResult<Value> {
        let Value::Func(fv) = f else {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!("{} is not a function", self.show(f)),
            ));
        };
        match &fv.target {
            Target::Builtin(b) => {
                return match fv.applied.first() {
                    Some(first) => self.builtin_result(*b, first, &args, span),
                    None => self.builtin(*b, &args, span),
                }
            }
            Target::Compression(c) => {
                return match args.as_slice() {
                    [Value::Proc(p)] => Ok(Value::Proc(match Compression::from_name(c) {
                        Some(kind) => Proc::new(ProcNode::Compressed(kind, p.clone())),
                        None => p.clone(),
                    })),
                    _ => Err(self.err(span, ErrorKind::Type, format!("`{c}` takes one process"))),
                }
            }
            _ => {}
        }
        let groups = self.groups_of(&fv.target)?;
        let k = fv.applied.len();
        if k >= groups.len() || groups[k] != args.len() {
            let expected = groups.get(k).copied().unwrap_or(0);
            return Err(self.err(
                span,
                ErrorKind::Arity,
                format!(
                    "`{}` takes {expected} argument{} but is given {}",
                    self.target_name(&fv.target),
                    if expected == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut applied = fv.applied.clone();
        applied.push(args.into());
        if applied.len() < groups.len() {
            return Ok(Value::Func(Arc::new(Func {
                target: fv.target.clone(),
                applied,
            })));
        }
        let flat: Vec<Value> = applied.iter().flat_map(|g| g.iter().cloned()).collect();
        let call = Call {
            target: fv.target.clone(),
            args: flat.clone().into(),
        };
        if self.memo.unfolds.contains_key(&call) {
            return Ok(Value::Proc(Proc::new(ProcNode::Call(call))));
        }
        if let Some(v) = self.memo.results.get(&call) {
            return Ok(v.clone());
        }
        let frame = Frame::Call(call.clone());
        match recursive_reference(&frame, &call, site) {
            Reference::Fresh => {}
            Reference::Itself(placeholder) => return Ok(placeholder),
            Reference::Unguarded(through) => return Err(self.unguarded(&call, &through, span)),
        }
        let r = evaluating(frame, site, false, || {
            self.call_body(&fv.target, &applied, span)
        });
        if let (Ok(v), false) = (&r.0, r.1) {
            if !matches!(v, Value::Proc(_)) {
                self.memo.record_result(&call, v);
            }
        }
        let v = self
            .self_call_result(r, &call, span)
            .map_err(|e| self.at_if_unpositioned(e, span))
            .map_err(|e| self.at_call_of_prelude(e, span))?;
        Ok(self.name_process(fv.target.clone(), flat, v))
    }

    /// Evaluates the clause of `target` matching the argument groups.
    pub(super) fn call_body(
        &self,
        target: &Target,
        groups: &[Arc<[Value]>],
        span: Span,
    ) -> EResult<Value> {
        let _d = self.depth(span)?;
        let (mut env, clauses): (Env, Clauses) = match target {
            Target::Global(i) => match &self.prog.top.defs[*i as usize].kind {
                DefKind::Function { clauses, .. } => (
                    Env::new(),
                    clauses
                        .iter()
                        .map(|c| (c.groups.clone(), &c.body))
                        .collect(),
                ),
                _ => return Err(self.internal("call of a constant")),
            },
            Target::Let(r, i) => {
                let (env, group) = self.let_env(r)?;
                match &group.defs[*i as usize].kind {
                    DefKind::Function { clauses, .. } => (
                        env,
                        clauses
                            .iter()
                            .map(|c| (c.groups.clone(), &c.body))
                            .collect(),
                    ),
                    _ => return Err(self.internal("call of a constant")),
                }
            }
            Target::Lambda(id, captured) => {
                let (l, free) = self
                    .prog
                    .lambdas
                    .get(id)
                    .ok_or_else(|| self.internal("unknown lambda"))?;
                let env: Env = free.iter().cloned().zip(captured.iter().cloned()).collect();
                (env, vec![(vec![l.params.clone()], &l.body)])
            }
            Target::Builtin(Builtin::Loop) => {
                // `loop(P)` unfolds to `P ; loop(P)`
                let [arg] = groups else {
                    return Err(self.internal("`loop` with other than one argument"));
                };
                let Some(Value::Proc(p)) = arg.first() else {
                    return Err(self.internal("`loop` of a value that is not a process"));
                };
                let again = Proc::new(ProcNode::Call(Call {
                    target: target.clone(),
                    args: arg.clone(),
                }));
                return Ok(Value::Proc(Proc::new(ProcNode::Seq(p.clone(), again))));
            }
            _ => return Err(self.internal("call of a builtin")),
        };
        for (pats, body) in clauses {
            let mark = env.len();
            let mut ok = true;
            'groups: for (g, args) in pats.iter().zip(groups) {
                for (p, a) in g.iter().zip(args.iter()) {
                    if !self.match_pattern(p, a, &mut env)? {
                        ok = false;
                        break 'groups;
                    }
                }
            }
            if ok {
                return self.eval(body, &mut env);
            }
            env.truncate(mark);
        }
        let shown: Vec<String> = groups
            .iter()
            .flat_map(|g| g.iter().map(|v| self.show(v)))
            .collect();
        Err(self.err(
            span,
            ErrorKind::Eval,
            format!(
                "no clause of `{}` matches the arguments ({})",
                self.target_name(target),
                shown.join(", ")
            ),
        ))
    }
}
