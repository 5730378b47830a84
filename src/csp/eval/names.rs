//! Names: the values of variables, top-level definitions, pattern bindings and `let` groups.

use super::*;

impl Evaluator {
    /// The value of `name` written at `span`, at `site` of the body being evaluated (see
    /// [`recursive_reference`]).
    pub(super) fn lookup(&self, name: &Name, env: &Env, span: Span, site: Site) -> EResult<Value> {
        if let Some((_, b)) = env.iter().rev().find(|(n, _)| n == name) {
            return match b {
                Binding::Value(v) => Ok(v.clone()),
                Binding::Let(r) => self.let_value(r, name, span, site),
            };
        }
        self.check_broken(name)?;
        let Some(g) = self.prog.globals.get(name).copied() else {
            return Err(self.err(
                span,
                ErrorKind::UnknownName,
                format!("unknown name `{name}`"),
            ));
        };
        Ok(match g {
            GlobalKind::Chan(c) => Value::Chan(c),
            GlobalKind::Ctor(k) => Value::Ctor(k),
            GlobalKind::DataType(d) => self.datatype_value(d)?,
            GlobalKind::NameType(t) => {
                let fields = self.nametype_fields(t)?;
                self.fields_value(&fields, span)?
            }
            GlobalKind::Def(i) => self.def_value(i, span, site)?,
            GlobalKind::Builtin(b) => func(Target::Builtin(b)),
            GlobalKind::Stop => Value::Proc(Proc::new(ProcNode::Stop)),
            GlobalKind::Skip => Value::Proc(Proc::new(ProcNode::Skip)),
            GlobalKind::Div => Value::Proc(Proc::new(ProcNode::Div)),
            GlobalKind::Int => InfSet::Ints(IntRanges::all()).value(),
            GlobalKind::Char => InfSet::Chars.value(),
            GlobalKind::EmptyMap => Value::Map(Arc::from([])),
            GlobalKind::ProcType => InfSet::Procs.value(),
            GlobalKind::Bool => Value::Set(vec![Value::Bool(false), Value::Bool(true)].into()),
            GlobalKind::Events => self.events_value()?,
            GlobalKind::True => Value::Bool(true),
            GlobalKind::False => Value::Bool(false),
            GlobalKind::Compression(c) => func(Target::Compression(c)),
        })
    }

    /// The error of `name`'s definition, if it has one.
    #[inline]
    pub(super) fn check_broken(&self, name: &Name) -> EResult<()> {
        if self.tables.broken.is_empty() {
            return Ok(());
        }
        match self.tables.broken.get(name) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The set of values of a (product) type.
    pub(super) fn fields_value(&self, fields: &[FieldSet], span: Span) -> EResult<Value> {
        if fields.len() == 1 {
            return self.field_value(&fields[0]);
        }
        for f in fields {
            if !self.field_finite(f)? {
                return Ok(InfSet::Dotted(fields.into()).value());
            }
        }
        let mut all = Vec::new();
        self.product(&[], fields, span, &mut |a| all.push(Value::from_atoms(a)))?;
        Ok(Value::set_from(all))
    }

    /// The value of top-level definition `i`, named at `span`, at `site` of the body being
    /// evaluated (see [`recursive_reference`]).
    pub(super) fn def_value(&self, i: u32, span: Span, site: Site) -> EResult<Value> {
        let def = &self.prog.top.defs[i as usize];
        self.check_broken(&def.name)?;
        if let DefKind::Function { .. } = def.kind {
            return Ok(func(Target::Global(i)));
        }
        let cell = &self.tables.defs[i as usize];
        if cell.get().is_none() && matches!(def.kind, DefKind::Constant { .. }) {
            let call = Call {
                target: Target::Global(i),
                args: Arc::from([]),
            };
            // (an unguarded cycle is reported by `guarded` below, as any cycle between
            // top-level definitions)
            if let Reference::Itself(placeholder) = recursive_reference(&Frame::Def(i), &call, site)
            {
                return Ok(placeholder);
            }
        }
        let compute = || {
            self.guarded((5, i), &def.name, span, || match &def.kind {
                DefKind::Constant { expr } => {
                    let call = Call {
                        target: Target::Global(i),
                        args: Arc::from([]),
                    };
                    let r = evaluating(Frame::Def(i), site, false, || {
                        self.eval(expr, &mut Env::new())
                    });
                    let v = self
                        .self_call_result(r, &call, span)
                        .map_err(|e| self.at_if_unpositioned(self.endless_use(e), def.span))?;
                    Ok(self.name_process(Target::Global(i), Vec::new(), v))
                }
                DefKind::Part { bind } => {
                    let whole = self.bind_value(*bind)?;
                    let b = &self.prog.top.binds[*bind as usize];
                    self.extract(&b.pat, &whole, &def.name, b.expr.span)
                }
                DefKind::Function { .. } => Ok(func(Target::Global(i))),
            })
        };
        Self::lazy_entry(cell, compute)
    }

    pub(super) fn bind_value(&self, b: u32) -> EResult<Value> {
        let bind = &self.prog.top.binds[b as usize];
        Self::lazy_entry(&self.tables.binds[b as usize], || {
            self.guarded((6, b), "pattern binding", bind.expr.span, || {
                self.eval(&bind.expr, &mut Env::new())
            })
        })
    }

    /// Matches `pat` against `whole` and returns the value bound to `name`.
    pub(super) fn extract(
        &self,
        pat: &Pattern,
        whole: &Value,
        name: &Name,
        span: Span,
    ) -> EResult<Value> {
        let mut env = Env::new();
        if !self.match_pattern(pat, whole, &mut env)? {
            return Err(self.err(
                span,
                ErrorKind::Eval,
                format!("the value {} does not match the pattern", self.show(whole)),
            ));
        }
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, b)| match b {
                Binding::Value(v) => Some(v.clone()),
                Binding::Let(_) => None,
            })
            .ok_or_else(|| self.internal("pattern binding lost a name"))
    }

    pub(super) fn let_env(&self, r: &Arc<LetRef>) -> EResult<(Env, &DefGroup)> {
        let info = self
            .prog
            .lets
            .get(&r.group)
            .ok_or_else(|| self.internal("unknown let group"))?;
        let mut env: Env = info
            .free
            .iter()
            .cloned()
            .zip(r.captured.iter().cloned())
            .collect();
        for d in &info.group.defs {
            env.push((d.name.clone(), Binding::Let(r.clone())));
        }
        Ok((env, &info.group))
    }

    /// The value of `name` of the `let` group `r`, named at `span`, at `site` of the body
    /// being evaluated (see [`recursive_reference`]).
    pub(super) fn let_value(
        &self,
        r: &Arc<LetRef>,
        name: &Name,
        span: Span,
        site: Site,
    ) -> EResult<Value> {
        let (mut env, group) = self.let_env(r)?;
        let idx = *group
            .index
            .get(name)
            .ok_or_else(|| self.internal("name missing from its let group"))?;
        let def = &group.defs[idx as usize];
        if let DefKind::Function { .. } = def.kind {
            return Ok(func(Target::Let(r.clone(), idx)));
        }
        let key = (r.clone(), idx);
        if let Some(v) = self.memo.let_values.get(&key) {
            return Ok(v.clone());
        }
        let _d = self.depth(span)?;
        let v = match &def.kind {
            DefKind::Constant { expr } => {
                // a name of the group used while it is being evaluated (`X = (a -> SKIP) ; Y`,
                // `Y = (b -> SKIP) ; X`): see `recursive_reference`
                let call = Call {
                    target: Target::Let(r.clone(), idx),
                    args: Arc::from([]),
                };
                let frame = Frame::Call(call.clone());
                match recursive_reference(&frame, &call, site) {
                    Reference::Fresh => {}
                    Reference::Itself(placeholder) => return Ok(placeholder),
                    Reference::Unguarded(through) => {
                        return Err(self.unguarded(&call, &through, span))
                    }
                }
                let r2 = evaluating(frame, site, true, || self.eval(expr, &mut env));
                let v = self.self_call_result(r2, &call, span)?;
                self.name_process(Target::Let(r.clone(), idx), Vec::new(), v)
            }
            DefKind::Part { bind } => {
                let b = &group.binds[*bind as usize];
                let whole = self.eval(&b.expr, &mut env)?;
                self.extract(&b.pat, &whole, name, b.expr.span)?
            }
            DefKind::Function { .. } => func(Target::Let(r.clone(), idx)),
        };
        self.memo.let_values.insert(key, v.clone());
        Ok(v)
    }

    /// A process result of a named definition becomes a call (remembering its body).
    pub(super) fn name_process(&self, target: Target, args: Vec<Value>, v: Value) -> Value {
        match v {
            Value::Proc(body) => {
                let call = Call {
                    target,
                    args: args.into(),
                };
                self.memo.unfolds.entry(call.clone()).or_insert(body);
                Value::Proc(Proc::new(ProcNode::Call(call)))
            }
            other => other,
        }
    }
}
