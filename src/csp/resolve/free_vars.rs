//! Free variables: the resolution pass over every expression, which records for each
//! closure-forming node (prefix, lambda, `let` group) the variables it captures.

use super::*;

pub(super) struct Resolver<'p> {
    pub(super) prog: &'p mut Program,
    pub(super) scope: Vec<Local>,
    /// The names of the top-level declaration being resolved.
    pub(super) owner: Arc<[Name]>,
    /// The top-level names it refers to.
    pub(super) refs: BTreeSet<Name>,
    /// How many constructs around the expression being resolved may keep evaluation from
    /// reaching it (see [`ClosedPrefix::conditional`]).
    pub(super) conditional: u32,
}

pub(super) type Free = BTreeSet<Name>;

impl Resolver<'_> {
    /// Resolves every declaration; an error breaks the names of its declaration (or stops
    /// its assertion) and resolution goes on with the next one.
    pub(super) fn resolve_program(&mut self, decls: &[Decl], is_constant: &dyn Fn(&Name) -> bool) {
        let mut assertion = 0;
        for d in decls {
            let names: Arc<[Name]> = decl_names(d, is_constant).into();
            self.owner = names.clone();
            self.refs.clear();
            let r = self.resolve_decl(d);
            self.scope.clear();
            let refs = std::mem::take(&mut self.refs);
            match (&d.kind, r) {
                (DeclKind::Assert(_), r) => {
                    let entry = &mut self.prog.assertions[assertion];
                    if let Err(e) = r {
                        entry.error = Some(e);
                    }
                    entry.refs = refs;
                    assertion += 1;
                }
                (DeclKind::Invalid(inv), _) if inv.assertion => assertion += 1,
                (_, Ok(())) => self.prog.decl_refs.push((names, refs)),
                (_, Err(e)) => self.prog.break_names(&names, e),
            }
        }
        self.owner = Arc::from([]);
    }

    pub(super) fn resolve_decl(&mut self, d: &Decl) -> CResult<()> {
        match &d.kind {
            DeclKind::Channel(_, Some(ty)) => {
                self.resolve(ty)?;
            }
            DeclKind::DataType(_, clauses) => {
                for c in clauses {
                    if let Some(f) = &c.fields {
                        self.resolve(f)?;
                    }
                }
            }
            DeclKind::NameType(_, e) => {
                self.resolve(e)?;
            }
            DeclKind::Function(_, clauses) => {
                for c in clauses {
                    self.resolve_clause(c)?;
                }
            }
            DeclKind::PatBind(pat, e) => {
                check_concat_patterns(pat)?;
                self.resolve(e)?;
            }
            DeclKind::Assert(a) => {
                match &a.kind {
                    AssertionKind::Refinement { spec, imp, .. } => {
                        self.resolve(spec)?;
                        self.resolve(imp)?;
                    }
                    AssertionKind::Property { process, property } => {
                        self.resolve(process)?;
                        if let Property::HasTrace(_, t) = property {
                            self.resolve(t)?;
                        }
                    }
                }
                if let Some(set) = &a.tau_priority {
                    self.resolve(set)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs `f` with the expression it resolves counted as conditional.
    fn conditionally<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.conditional += 1;
        let r = f(self);
        self.conditional -= 1;
        r
    }

    pub(super) fn resolve_clause(&mut self, c: &Clause) -> CResult<Free> {
        // A function's body is evaluated only for the arguments it is applied to.
        if c.groups.is_empty() {
            self.resolve_clause_body(c)
        } else {
            self.conditionally(|r| r.resolve_clause_body(c))
        }
    }

    fn resolve_clause_body(&mut self, c: &Clause) -> CResult<Free> {
        let mark = self.scope.len();
        let mut bound = Vec::new();
        for g in &c.groups {
            for p in g {
                self.bind_pattern(p, &mut bound)?;
            }
        }
        let free = self.resolve(&c.body);
        self.scope.truncate(mark);
        let mut free = free?;
        for (n, _) in &bound {
            free.remove(n);
        }
        Ok(free)
    }

    /// Binds the variables of `p` (pushing them on the scope); `bound` collects the names
    /// bound so far in the same binding group, to reject repeats.
    pub(super) fn bind_pattern(
        &mut self,
        p: &Pattern,
        bound: &mut Vec<(Name, Span)>,
    ) -> CResult<()> {
        check_concat_patterns(p)?;
        let mut vars = Vec::new();
        pattern_vars(p, &mut vars);
        for (n, span) in vars {
            if self.is_constant_name(&n) {
                continue;
            }
            if bound.iter().any(|(m, _)| *m == n) {
                return Err(RawError::new(
                    span,
                    ErrorKind::Duplicate,
                    format!("the variable `{n}` is bound twice here"),
                ));
            }
            bound.push((n.clone(), span));
            self.scope.push(Local {
                name: n,
                arity: None,
            });
        }
        Ok(())
    }

    pub(super) fn resolve_all(&mut self, es: &[Expr]) -> CResult<Free> {
        let mut free = BTreeSet::new();
        for e in es {
            free.extend(self.resolve(e)?);
        }
        Ok(free)
    }

    /// Resolves statements (binding their variables on the scope; the caller truncates).
    pub(super) fn resolve_stmts(
        &mut self,
        stmts: &[Stmt],
        bound: &mut Vec<(Name, Span)>,
    ) -> CResult<Free> {
        let mut free = BTreeSet::new();
        for s in stmts {
            match s {
                Stmt::Generator(p, e) => {
                    let f = self.resolve(e)?;
                    free.extend(f.into_iter().filter(|n| !bound.iter().any(|(m, _)| m == n)));
                    self.bind_pattern(p, bound)?;
                }
                Stmt::Qualifier(e) => {
                    let f = self.resolve(e)?;
                    free.extend(f.into_iter().filter(|n| !bound.iter().any(|(m, _)| m == n)));
                }
            }
        }
        Ok(free)
    }

    /// Resolves `body` expressions under statements: free variables exclude the bound ones.
    pub(super) fn resolve_under_stmts(
        &mut self,
        stmts: &[Stmt],
        bodies: &[&Expr],
    ) -> CResult<Free> {
        let mark = self.scope.len();
        let mut bound = Vec::new();
        let r = (|| -> CResult<Free> {
            let mut free = self.resolve_stmts(stmts, &mut bound)?;
            for b in bodies {
                let f = self.resolve(b)?;
                free.extend(f.into_iter().filter(|n| !bound.iter().any(|(m, _)| m == n)));
            }
            Ok(free)
        })();
        self.scope.truncate(mark);
        r
    }

    pub(super) fn resolve(&mut self, e: &Expr) -> CResult<Free> {
        use ExprKind::*;
        match &e.kind {
            Int(_) | Bool(_) | Char(_) | Str(_) => Ok(BTreeSet::new()),
            Map(pairs) => {
                let mut free = BTreeSet::new();
                for (k, v) in pairs {
                    free.extend(self.resolve(k)?);
                    free.extend(self.resolve(v)?);
                }
                Ok(free)
            }
            Var(n) => self.resolve_name(n, e.span),
            Wildcard => Err(RawError::new(
                e.span,
                ErrorKind::Syntax,
                "`_` can only be used in a pattern",
            )),
            Binary(BinOp::Both, ..) => Err(RawError::new(
                e.span,
                ErrorKind::Syntax,
                "`@@` joins two patterns; it cannot be used in an expression",
            )),
            Tuple(es) | SeqLit(es) | SetLit(es) | Productions(es) => self.resolve_all(es),
            Dot(a, b)
            | Binary(_, a, b)
            | SeqRange(a, b)
            | SetRange(a, b)
            | Proc(_, a, b)
            | Hide(a, b)
            | Project(a, b) => {
                let mut f = self.resolve(a)?;
                f.extend(self.resolve(b)?);
                Ok(f)
            }
            Guard(a, b) => {
                let mut f = self.resolve(a)?;
                f.extend(self.conditionally(|r| r.resolve(b))?);
                Ok(f)
            }
            Unary(_, a) | SetFrom(a) | SeqFrom(a) => self.resolve(a),
            RangeComp(r, stmts) => self.resolve_under_stmts(stmts, &[&**r]),
            App(f, args) => {
                self.check_arity(f, args.len(), e.span)?;
                let mut free = self.resolve(f)?;
                free.extend(self.resolve_all(args)?);
                Ok(free)
            }
            If(c, t, f) => {
                let mut free = self.resolve(c)?;
                free.extend(self.conditionally(|r| r.resolve(t))?);
                free.extend(self.conditionally(|r| r.resolve(f))?);
                Ok(free)
            }
            Parallel(p, a, q) | SetProc(_, p, a, q) => {
                let mut free = self.resolve(p)?;
                free.extend(self.resolve(a)?);
                free.extend(self.resolve(q)?);
                Ok(free)
            }
            AlphaParallel(p, a, b, q) => {
                let mut free = self.resolve(p)?;
                free.extend(self.resolve(a)?);
                free.extend(self.resolve(b)?);
                free.extend(self.resolve(q)?);
                Ok(free)
            }
            SeqComp(es, stmts) | SetComp(es, stmts) | ProductionsComp(es, stmts) => {
                let bodies: Vec<&Expr> = es.iter().collect();
                self.conditionally(|r| r.resolve_under_stmts(stmts, &bodies))
            }
            Rename(p, pairs, stmts) => {
                let mut free = self.resolve(p)?;
                let bodies: Vec<&Expr> = pairs.iter().flat_map(|(a, b)| [a, b]).collect();
                free.extend(self.resolve_under_stmts(stmts, &bodies)?);
                Ok(free)
            }
            Link(p, pairs, stmts, q) => {
                let mut free = self.resolve(p)?;
                free.extend(self.resolve(q)?);
                let bodies: Vec<&Expr> = pairs.iter().flat_map(|(a, b)| [a, b]).collect();
                free.extend(self.resolve_under_stmts(stmts, &bodies)?);
                Ok(free)
            }
            Replicated(op, stmts, body) => {
                let mut bodies: Vec<&Expr> = vec![body];
                if let RepOp::AlphaParallel(a) = op {
                    bodies.push(a);
                }
                let mut free = self.conditionally(|r| r.resolve_under_stmts(stmts, &bodies))?;
                if let RepOp::Parallel(a) | RepOp::SyncExtChoice(a) = op {
                    free.extend(self.resolve(a)?);
                }
                if let RepOp::Link(pairs, tie_stmts) = op {
                    // The pairs see the replicated variables, then their own statements'.
                    let all: Vec<Stmt> = stmts.iter().chain(tie_stmts).cloned().collect();
                    let ties: Vec<&Expr> = pairs.iter().flat_map(|(a, b)| [a, b]).collect();
                    free.extend(self.resolve_under_stmts(&all, &ties)?);
                }
                Ok(free)
            }
            Lambda(l) => {
                let mark = self.scope.len();
                let mut bound = Vec::new();
                let r = (|| -> CResult<Free> {
                    for p in &l.params {
                        self.bind_pattern(p, &mut bound)?;
                    }
                    self.conditionally(|r| r.resolve(&l.body))
                })();
                self.scope.truncate(mark);
                let mut free = r?;
                for (n, _) in &bound {
                    free.remove(n);
                }
                let list: Arc<[Name]> = free.iter().cloned().collect();
                self.prog.lambdas.insert(e.id, (l.clone(), list));
                Ok(free)
            }
            Prefix(pre) => {
                let mut free = self.resolve(&pre.event)?;
                let mark = self.scope.len();
                let mut bound = Vec::new();
                let r = (|| -> CResult<Free> {
                    let mut f = BTreeSet::new();
                    let not_bound =
                        |n: &Name, bound: &Vec<(Name, Span)>| !bound.iter().any(|(m, _)| m == n);
                    for field in &pre.fields {
                        match field {
                            Field::Output(x) => {
                                let g = self.resolve(x)?;
                                f.extend(g.into_iter().filter(|n| not_bound(n, &bound)));
                            }
                            Field::Input(p, restriction) | Field::NondetInput(p, restriction) => {
                                if let Some(s) = restriction {
                                    let g = self.resolve(s)?;
                                    f.extend(g.into_iter().filter(|n| not_bound(n, &bound)));
                                }
                                self.bind_pattern(p, &mut bound)?;
                            }
                        }
                    }
                    let g = self.resolve(&pre.body)?;
                    if bound.iter().any(|(n, _)| !g.contains(n)) {
                        let used: Arc<[Name]> = bound
                            .iter()
                            .filter(|(n, _)| g.contains(n))
                            .map(|(n, _)| n.clone())
                            .collect();
                        self.prog.prefix_body_inputs.insert(e.id, used);
                    }
                    f.extend(g.into_iter().filter(|n| not_bound(n, &bound)));
                    Ok(f)
                })();
                self.scope.truncate(mark);
                free.extend(r?);
                self.check_prefix_field_count(pre, e.span)?;
                let list: Arc<[Name]> = free.iter().cloned().collect();
                if list.is_empty() {
                    self.prog.closed_prefixes.push(ClosedPrefix {
                        id: e.id,
                        owner: self.owner.clone(),
                        conditional: self.conditional > 0,
                    });
                }
                self.prog.prefixes.insert(e.id, (pre.clone(), list, e.span));
                Ok(free)
            }
            Let(l) => self.conditionally(|r| r.resolve_let(e, l)),
            TimedHeader(tock, et) => {
                let mut free = self.resolve(tock).map_err(|mut err| {
                    if err.kind == ErrorKind::UnknownName {
                        err.message = "a timed section needs the event `tock`: declare it \
                                       (`channel tock`)"
                            .into();
                    }
                    err
                })?;
                if let Some(et) = et {
                    free.extend(self.resolve(et)?);
                }
                Ok(free)
            }
            Timed(t) => {
                let mut free = self.resolve(&t.section)?;
                match &t.form {
                    TimedForm::Prefix(x)
                    | TimedForm::Wait(x)
                    | TimedForm::Priority(x)
                    | TimedForm::Operator(x) => free.extend(self.resolve(x)?),
                    TimedForm::Stop | TimedForm::Skip => {}
                }
                Ok(free)
            }
        }
    }

    pub(super) fn resolve_let(&mut self, e: &Expr, l: &Arc<LetExpr>) -> CResult<Free> {
        let mut group = DefGroup::default();
        for d in &l.decls {
            match &d.kind {
                DeclKind::Function(..) | DeclKind::PatBind(..) => {
                    let scope = &self.scope;
                    let globals = &self.prog.globals;
                    let is_constant = |n: &Name| {
                        !scope.iter().any(|l| &l.name == n)
                            && matches!(
                                globals.get(n),
                                Some(
                                    GlobalKind::Chan(_)
                                        | GlobalKind::Ctor(_)
                                        | GlobalKind::True
                                        | GlobalKind::False
                                )
                            )
                    };
                    add_definition(&mut group, d, &is_constant)?
                }
                DeclKind::Transparent(names) => {
                    for n in names {
                        if !COMPRESSIONS.contains(&&*n.name) {
                            return Err(RawError::new(
                                n.span,
                                ErrorKind::Unsupported,
                                format!(
                                    "the transparent function `{}` is outside weft's CSPm subset",
                                    n.name
                                ),
                            ));
                        }
                    }
                }
                DeclKind::External(names)
                    if names.iter().all(|n| {
                        COMPRESSIONS.contains(&&*n.name)
                            || super::names::builtin_global(&n.name).is_some()
                            || super::names::unsupported_external(&n.name).is_some()
                    }) => {}
                DeclKind::External(names) => {
                    return Err(RawError::new(
                        names[0].span,
                        ErrorKind::Unsupported,
                        format!(
                            "the external function `{}` is outside weft's CSPm subset",
                            names[0].name
                        ),
                    ))
                }
                _ => {
                    return Err(RawError::new(
                        d.span,
                        ErrorKind::Syntax,
                        "only definitions are allowed inside `let`",
                    ))
                }
            }
        }
        let mark = self.scope.len();
        for d in &group.defs {
            let arity = match &d.kind {
                DefKind::Function { groups, .. } => Some(groups[0]),
                _ => None,
            };
            self.scope.push(Local {
                name: d.name.clone(),
                arity,
            });
        }
        let r = (|| -> CResult<(Free, Free)> {
            let mut group_free = BTreeSet::new();
            for d in &group.defs {
                match &d.kind {
                    DefKind::Function { clauses, .. } => {
                        for c in clauses {
                            group_free.extend(self.resolve_clause(c)?);
                        }
                    }
                    DefKind::Constant { expr } => group_free.extend(self.resolve(expr)?),
                    DefKind::Part { .. } => {}
                }
            }
            for b in &group.binds {
                group_free.extend(self.resolve(&b.expr)?);
            }
            let body_free = self.resolve(&l.body)?;
            Ok((group_free, body_free))
        })();
        self.scope.truncate(mark);
        let (mut group_free, mut body_free) = r?;
        for d in &group.defs {
            group_free.remove(&d.name);
            body_free.remove(&d.name);
        }
        let list: Arc<[Name]> = group_free.iter().cloned().collect();
        self.prog.lets.insert(e.id, LetInfo { group, free: list });
        group_free.extend(body_free);
        Ok(group_free)
    }
}
