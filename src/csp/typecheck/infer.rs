//! Inference of the types of expressions and patterns (Hindley–Milner, with [`Ty::Any`]
//! wherever the checker cannot type with certainty: dotted values, productions, timed
//! constructs).

use std::collections::HashMap;

use super::types::{subst, Class, Mismatch, Ty};
use super::{CResult, Checker, Scheme};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::resolve::GlobalKind;
use crate::csp::syntax::ast::*;
use crate::csp::syntax::source::Span;
use crate::csp::value::Builtin;

/// Where the generators of a list of statements draw from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    Set,
    Seq,
    /// Either (the element type is not constrained).
    Either,
}

impl Checker<'_> {
    /// Unifies `expected` with `actual`, the type of what is at `span`.
    pub(super) fn expect(&mut self, expected: &Ty, actual: &Ty, span: Span) -> CResult<()> {
        self.vars
            .unify(expected, actual)
            .map_err(|m| self.mismatch(&m, span))
    }

    /// The error for a mismatch at `span`.
    pub(super) fn mismatch(&self, m: &Mismatch, span: Span) -> RawError {
        RawError::new(span, ErrorKind::Type, self.vars.describe(m))
    }

    pub(super) fn require(&mut self, c: Class, t: &Ty, span: Span) -> CResult<()> {
        self.vars
            .require(c, t)
            .map_err(|m| self.mismatch(&m, span))?;
        // checked again at the end of the group, when the datatypes of the group are
        // known to have equality or not (see `Checker::find_datatypes_without_eq`)
        self.class_checks.push((c, t.clone(), span));
        Ok(())
    }

    /// Instantiates a type scheme with fresh variables.
    pub(super) fn instantiate(&mut self, s: &Scheme) -> Ty {
        if s.generic.is_empty() && s.rigid.is_empty() {
            return s.ty.clone();
        }
        let mut flex = HashMap::new();
        for &v in &s.generic {
            let c = self.vars.var_classes(v);
            flex.insert(v, self.vars.fresh_with(c));
        }
        let mut rigid = HashMap::new();
        for &r in &s.rigid {
            let c = self.vars.rigid_classes(r);
            rigid.insert(r, self.vars.fresh_with(c));
        }
        let t = self.vars.resolve(&s.ty);
        subst(&t, &flex, &rigid)
    }

    /// The type of the name `n` where it is used.
    fn name_type(&mut self, n: &Name) -> Ty {
        if let Some(i) = self.scope.iter().rposition(|(m, _)| m == n) {
            let s = self.scope[i].1.clone();
            return self.instantiate(&s);
        }
        if let Some(s) = self.globals.get(n).cloned() {
            return self.instantiate(&s);
        }
        match self.prog.globals.get(n) {
            Some(GlobalKind::Builtin(b)) => self.builtin_type(*b),
            Some(GlobalKind::Stop | GlobalKind::Skip | GlobalKind::Div) => Ty::Proc,
            Some(GlobalKind::ProcType) => Ty::set(Ty::Proc),
            Some(GlobalKind::Int) => Ty::set(Ty::Int),
            Some(GlobalKind::Bool) => Ty::set(Ty::Bool),
            Some(GlobalKind::Char) => Ty::set(Ty::Char),
            Some(GlobalKind::Events) => Ty::set(Ty::Event),
            Some(GlobalKind::True | GlobalKind::False) => Ty::Bool,
            Some(GlobalKind::EmptyMap) => Ty::map(self.vars.fresh(), self.vars.fresh()),
            _ => Ty::Any,
        }
    }

    /// The types of the built-in functions the checker knows (others are [`Ty::Any`]).
    fn builtin_type(&mut self, b: Builtin) -> Ty {
        let a = self.vars.fresh();
        let set = |t: &Ty| Ty::set(t.clone());
        let seq = |t: &Ty| Ty::seq(t.clone());
        let fun = |args: Vec<Ty>, r: Ty| Ty::fun(args, r);
        match b {
            Builtin::Union | Builtin::Inter | Builtin::Diff => fun(vec![set(&a), set(&a)], set(&a)),
            Builtin::UnionAll | Builtin::InterAll => fun(vec![set(&set(&a))], set(&a)),
            Builtin::Member => fun(vec![a.clone(), set(&a)], Ty::Bool),
            Builtin::Card => fun(vec![set(&a)], Ty::Int),
            Builtin::Empty => fun(vec![set(&a)], Ty::Bool),
            Builtin::SetOfSeq => fun(vec![seq(&a)], set(&a)),
            Builtin::SeqOfSet => fun(vec![set(&a)], seq(&a)),
            Builtin::Powerset => fun(vec![set(&a)], set(&set(&a))),
            Builtin::Head => fun(vec![seq(&a)], a.clone()),
            Builtin::Tail => fun(vec![seq(&a)], seq(&a)),
            Builtin::Concat => fun(vec![seq(&seq(&a))], seq(&a)),
            Builtin::Null => fun(vec![seq(&a)], Ty::Bool),
            Builtin::Elem => fun(vec![a.clone(), seq(&a)], Ty::Bool),
            Builtin::Length => fun(vec![seq(&a)], Ty::Int),
            Builtin::Error => fun(vec![seq(&Ty::Char)], a.clone()),
            Builtin::Show => fun(vec![a.clone()], seq(&Ty::Char)),
            Builtin::Loop => fun(vec![Ty::Proc], Ty::Proc),
            Builtin::Transpose | Builtin::RelationalImage | Builtin::RelationalInverseImage => {
                let b2 = self.vars.fresh();
                let pairs = set(&Ty::tuple(vec![a.clone(), b2.clone()]));
                match b {
                    Builtin::Transpose => fun(vec![pairs], set(&Ty::tuple(vec![b2, a]))),
                    Builtin::RelationalImage => fun(vec![pairs], fun(vec![a], set(&b2))),
                    _ => fun(vec![pairs], fun(vec![b2], set(&a))),
                }
            }
            Builtin::Mtransclose => {
                let pairs = set(&Ty::tuple(vec![a.clone(), a.clone()]));
                fun(vec![pairs.clone(), set(&a)], pairs)
            }
            _ => Ty::Any,
        }
    }

    /// The type of `e`.
    pub(super) fn expr(&mut self, e: &Expr) -> CResult<Ty> {
        stacker::maybe_grow(
            crate::csp::syntax::parser::RED_ZONE,
            crate::csp::syntax::parser::STACK_PER_RECURSION,
            || self.expr_inner(e),
        )
    }

    fn expr_inner(&mut self, e: &Expr) -> CResult<Ty> {
        use ExprKind as K;
        let span = e.span;
        Ok(match &e.kind {
            K::Int(_) => Ty::Int,
            K::Bool(_) => Ty::Bool,
            K::Char(_) => Ty::Char,
            K::Str(_) => Ty::seq(Ty::Char),
            K::Var(n) => self.name_type(n),
            K::Wildcard | K::TimedHeader(..) | K::Timed(_) => Ty::Any,
            K::Map(pairs) => {
                let (k, v) = (self.vars.fresh(), self.vars.fresh());
                for (a, b) in pairs {
                    let ta = self.expr(a)?;
                    self.expect(&k, &ta, a.span)?;
                    let tb = self.expr(b)?;
                    self.expect(&v, &tb, b.span)?;
                }
                Ty::map(k, v)
            }
            K::Tuple(es) => {
                let mut ts = Vec::new();
                for x in es {
                    ts.push(self.expr(x)?);
                }
                Ty::tuple(ts)
            }
            K::Dot(..) => self.dot_type(e)?,
            K::App(f, args) => self.app(f, args)?,
            K::Binary(op, a, b) => self.binary(*op, a, b, span)?,
            K::Unary(op, a) => {
                let t = self.expr(a)?;
                match op {
                    UnOp::Neg => {
                        self.expect(&Ty::Int, &t, a.span)?;
                        Ty::Int
                    }
                    UnOp::Not => {
                        self.expect(&Ty::Bool, &t, a.span)?;
                        Ty::Bool
                    }
                    UnOp::Len => {
                        let x = self.vars.fresh();
                        self.expect(&Ty::seq(x), &t, a.span)?;
                        Ty::Int
                    }
                }
            }
            K::If(c, t, f) => {
                let tc = self.expr(c)?;
                self.expect(&Ty::Bool, &tc, c.span)?;
                let tt = self.expr(t)?;
                let tf = self.expr(f)?;
                self.expect(&tt, &tf, f.span)?;
                tt
            }
            K::Let(l) => self.let_expr(l, span)?,
            K::Lambda(l) => {
                let mut binds = Vec::new();
                let mut params = Vec::new();
                for p in &l.params {
                    params.push(self.pattern(p, &mut binds)?);
                }
                let n = self.push_binds(binds);
                let body = self.expr(&l.body);
                self.pop(n);
                Ty::fun(params, body?)
            }
            K::SeqLit(es) => Ty::seq(self.elements(es)?),
            K::SetLit(es) => Ty::set(self.elements(es)?),
            K::SeqComp(es, stmts) => {
                let n = self.stmts(stmts, Source::Seq)?;
                let t = self.elements(es);
                self.pop(n);
                Ty::seq(t?)
            }
            K::SetComp(es, stmts) => {
                let n = self.stmts(stmts, Source::Set)?;
                let t = self.elements(es);
                self.pop(n);
                Ty::set(t?)
            }
            K::SeqRange(a, b) | K::SetRange(a, b) => {
                for x in [a, b] {
                    let t = self.expr(x)?;
                    self.expect(&Ty::Int, &t, x.span)?;
                }
                if matches!(e.kind, K::SeqRange(..)) {
                    Ty::seq(Ty::Int)
                } else {
                    Ty::set(Ty::Int)
                }
            }
            K::SetFrom(a) | K::SeqFrom(a) => {
                let t = self.expr(a)?;
                self.expect(&Ty::Int, &t, a.span)?;
                if matches!(e.kind, K::SeqFrom(..)) {
                    Ty::seq(Ty::Int)
                } else {
                    Ty::set(Ty::Int)
                }
            }
            K::RangeComp(r, stmts) => {
                let n = self.stmts(stmts, Source::Either)?;
                let t = self.expr(r);
                self.pop(n);
                t?
            }
            K::Productions(es) => {
                for x in es {
                    self.expr(x)?;
                }
                Ty::set(self.productions_type(es)?)
            }
            K::ProductionsComp(es, stmts) => {
                let n = self.stmts(stmts, Source::Set)?;
                let r = es
                    .iter()
                    .try_for_each(|x| self.expr(x).map(drop))
                    .and_then(|()| self.productions_type(es));
                self.pop(n);
                Ty::set(r?)
            }
            K::Prefix(p) => self.prefix(p)?,
            K::Guard(b, p) => {
                let tb = self.expr(b)?;
                self.expect(&Ty::Bool, &tb, b.span)?;
                self.process(p)?;
                Ty::Proc
            }
            K::Proc(_, a, b) => {
                self.process(a)?;
                self.process(b)?;
                Ty::Proc
            }
            K::Hide(p, a) | K::Project(p, a) => {
                self.process(p)?;
                // weft binds `\` loosest (FDR's older table): `P \ A ||| Q` reads as
                // hiding `A ||| Q`, which libcspm reads as `(P \ A) ||| Q`; such a set is
                // not typed
                if !is_process_operator(a) {
                    self.set_of_any(a)?;
                }
                Ty::Proc
            }
            K::SetProc(_, p, a, q) | K::Parallel(p, a, q) => {
                self.process(p)?;
                self.set_of_any(a)?;
                self.process(q)?;
                Ty::Proc
            }
            K::AlphaParallel(p, a, b, q) => {
                self.process(p)?;
                self.set_of_any(a)?;
                self.set_of_any(b)?;
                self.process(q)?;
                Ty::Proc
            }
            K::Link(p, pairs, stmts, q) => {
                self.process(p)?;
                self.process(q)?;
                let n = self.stmts(stmts, Source::Set)?;
                let r = self.pairs(pairs);
                self.pop(n);
                r?;
                Ty::Proc
            }
            K::Rename(p, pairs, stmts) => {
                self.process(p)?;
                let n = self.stmts(stmts, Source::Set)?;
                let r = self.pairs(pairs);
                self.pop(n);
                r?;
                Ty::Proc
            }
            K::Replicated(op, stmts, body) => {
                let source = match op {
                    RepOp::Seq | RepOp::Link(..) => Source::Seq,
                    _ => Source::Set,
                };
                let n = self.stmts(stmts, source)?;
                let r = self.replicated(op, body);
                self.pop(n);
                r?;
                Ty::Proc
            }
        })
    }

    fn replicated(&mut self, op: &RepOp, body: &Expr) -> CResult<()> {
        match op {
            RepOp::Parallel(a) | RepOp::AlphaParallel(a) | RepOp::SyncExtChoice(a) => {
                self.set_of_any(a)?;
            }
            RepOp::Link(pairs, stmts) => {
                let n = self.stmts(stmts, Source::Set)?;
                let r = self.pairs(pairs);
                self.pop(n);
                r?;
            }
            _ => {}
        }
        self.process(body)
    }

    fn pairs(&mut self, pairs: &[(Expr, Expr)]) -> CResult<()> {
        for (a, b) in pairs {
            self.expr(a)?;
            self.expr(b)?;
        }
        Ok(())
    }

    /// Checks that `e` is a process.
    pub(super) fn process(&mut self, e: &Expr) -> CResult<()> {
        let t = self.expr(e)?;
        self.expect(&Ty::Proc, &t, e.span)
    }

    /// Checks that `e` is a set (of events, not checked).
    fn set_of_any(&mut self, e: &Expr) -> CResult<()> {
        let t = self.expr(e)?;
        let x = self.vars.fresh();
        self.expect(&Ty::set(x), &t, e.span)
    }

    /// The common type of the elements `es`.
    fn elements(&mut self, es: &[Expr]) -> CResult<Ty> {
        let t = self.vars.fresh();
        for x in es {
            let tx = self.expr(x)?;
            self.expect(&t, &tx, x.span)?;
        }
        Ok(t)
    }

    fn app(&mut self, f: &Expr, args: &[Expr]) -> CResult<Ty> {
        let tf = self.expr(f)?;
        let mut targs = Vec::new();
        for a in args {
            targs.push(self.expr(a)?);
        }
        self.check_extensions(f, args, &targs)?;
        if let Ty::Fun(params, ret) = self.vars.shallow(&tf) {
            if params.len() == args.len() {
                for ((p, a), t) in params.iter().zip(args).zip(&targs) {
                    self.expect(p, t, a.span)?;
                }
                return Ok((*ret).clone());
            }
        }
        let ret = self.vars.fresh();
        let want = Ty::fun(targs, ret.clone());
        self.expect(&want, &tf, f.span)?;
        Ok(ret)
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, span: Span) -> CResult<Ty> {
        let ta = self.expr(a)?;
        let tb = self.expr(b)?;
        Ok(match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                self.expect(&Ty::Int, &ta, a.span)?;
                self.expect(&Ty::Int, &tb, b.span)?;
                Ty::Int
            }
            BinOp::Eq | BinOp::Ne => {
                self.expect(&ta, &tb, b.span)?;
                self.require(Class::Eq, &ta, span)?;
                self.require_of_dotted(Class::Eq, [a, b], span)?;
                Ty::Bool
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                self.expect(&ta, &tb, b.span)?;
                self.require(Class::Ord, &ta, span)?;
                self.require_of_dotted(Class::Ord, [a, b], span)?;
                Ty::Bool
            }
            BinOp::And | BinOp::Or => {
                self.expect(&Ty::Bool, &ta, a.span)?;
                self.expect(&Ty::Bool, &tb, b.span)?;
                Ty::Bool
            }
            BinOp::Concat => {
                let x = Ty::seq(self.vars.fresh());
                self.expect(&x, &ta, a.span)?;
                self.expect(&x, &tb, b.span)?;
                x
            }
            BinOp::Both => Ty::Any,
        })
    }

    fn prefix(&mut self, p: &PrefixExpr) -> CResult<Ty> {
        let tev = self.expr(&p.event)?;
        if p.fields.is_empty() {
            self.check_certainly_event(&tev, p.event.span)?;
        }
        // the fields of the channel, when the event is a channel's name and every field of
        // the channel and of the prefix is a single value (no dotted value, which may fill
        // several fields, and no datatype, which may take several)
        let undotted = p.fields.iter().all(|f| match f {
            Field::Output(e) => !matches!(e.kind, ExprKind::Dot(..)),
            Field::Input(pat, _) | Field::NondetInput(pat, _) => {
                !matches!(pat.kind, PatKind::Dot(_))
            }
        });
        let chan_fields = self
            .simple_channel_fields(&p.event, &tev)
            .filter(|_| undotted);
        let matched = chan_fields
            .as_ref()
            .filter(|fs| fs.len() == p.fields.len())
            .cloned();
        // inputs without dots each take at least one field: more of them than the channel
        // has fields is no event (`e?x?y` over `channel e : M`, even when `M`'s values are
        // constructors with fields: an input never splits a field's value)
        let only_plain_inputs = p.fields.iter().all(|f| match f {
            Field::Output(_) => false,
            Field::Input(pat, _) | Field::NondetInput(pat, _) => {
                !matches!(pat.kind, PatKind::Dot(_) | PatKind::Both(..))
            }
        });
        if only_plain_inputs {
            if let Some(n) = self.channel_field_count(&p.event, &tev) {
                if p.fields.len() > n {
                    return Err(RawError::new(
                        p.event.span,
                        ErrorKind::Type,
                        format!(
                            "this prefix inputs {} field(s) from a channel of {n} field(s): \
                             each input takes a whole field, so it is not an event",
                            p.fields.len()
                        ),
                    ));
                }
            }
        }
        let mut values = Vec::new();
        let mut pushed = 0;
        let r = (|| {
            for (i, f) in p.fields.iter().enumerate() {
                match f {
                    Field::Output(e) => {
                        let t = self.expr(e)?;
                        if let Some(fs) = &matched {
                            self.expect(&fs[i], &t, e.span)?;
                        }
                        values.push(t);
                    }
                    Field::Input(pat, set) | Field::NondetInput(pat, set) => {
                        let mut binds = Vec::new();
                        let tp = self.pattern(pat, &mut binds)?;
                        if let Some(fs) = &matched {
                            self.expect(&fs[i], &tp, pat.span)?;
                        }
                        if let Some(s) = set {
                            let ts = self.expr(s)?;
                            self.expect(&Ty::set(tp.clone()), &ts, s.span)?;
                            // a field of an event is a complete value: a constructor or
                            // channel still waiting for fields can never be input
                            if let Ty::Set(inner) = self.vars.resolve(&ts) {
                                if matches!(self.vars.resolve(&inner), Ty::Dotable(..)) {
                                    return Err(RawError::new(
                                        s.span,
                                        ErrorKind::Type,
                                        format!(
                                            "the input draws from a set of values missing their \
                                             fields (of type {}): a field of an event is a \
                                             complete value, so none of them can be input",
                                            self.vars.show(&inner)
                                        ),
                                    ));
                                }
                            }
                        }
                        values.push(tp);
                        pushed += self.push_binds(binds);
                    }
                }
            }
            // a field of a prefix may be given several fields of the event (libcspm's
            // longest match)
            for t in &values {
                if matches!(self.vars.shallow(t), Ty::Var(_)) {
                    self.vars.mark_maybe_dotted(t);
                }
            }
            if let (Some(fs), None) = (&chan_fields, &matched) {
                if values.iter().all(|t| self.single_field(t)) {
                    return Err(RawError::new(
                        p.event.span,
                        ErrorKind::Type,
                        format!(
                            "this prefix gives {} field(s) to a channel of {} field(s): it is \
                             not an event",
                            values.len(),
                            fs.len()
                        ),
                    ));
                }
            }
            self.process(&p.body)
        })();
        self.pop(pushed);
        r?;
        Ok(Ty::Proc)
    }

    /// The field types of the channel `event` names (of type `t`), when each is of a type
    /// whose values are single fields.
    fn simple_channel_fields(&self, event: &Expr, t: &Ty) -> Option<Vec<Ty>> {
        let ExprKind::Var(n) = &event.kind else {
            return None;
        };
        if self.scope.iter().any(|(m, _)| m == n)
            || !matches!(self.prog.globals.get(n), Some(GlobalKind::Chan(_)))
        {
            return None;
        }
        let mut fields = Vec::new();
        let mut t = self.vars.resolve(t);
        while let Ty::Dotable(a, r) = t {
            if !self.single_field(&a) {
                return None;
            }
            fields.push((*a).clone());
            t = (*r).clone();
        }
        (t == Ty::Event).then_some(fields)
    }

    /// How many fields the channel `event` names (of type `t`) has, when each field's values
    /// are certainly single values (not dotted values of a name type, typed loosely).
    fn channel_field_count(&self, event: &Expr, t: &Ty) -> Option<usize> {
        let ExprKind::Var(n) = &event.kind else {
            return None;
        };
        if self.scope.iter().any(|(m, _)| m == n)
            || !matches!(self.prog.globals.get(n), Some(GlobalKind::Chan(_)))
        {
            return None;
        }
        let mut count = 0;
        let mut t = self.vars.resolve(t);
        while let Ty::Dotable(a, r) = t {
            if !(self.single_field(&a) || matches!(self.vars.resolve(&a), Ty::Data(..))) {
                return None;
            }
            count += 1;
            t = (*r).clone();
        }
        (t == Ty::Event).then_some(count)
    }

    /// Whether the values of type `t` are certainly single fields of an event (not dotted
    /// values or datatype values, which may fill or take several).
    pub(super) fn single_field(&self, t: &Ty) -> bool {
        matches!(
            self.vars.resolve(t),
            Ty::Int
                | Ty::Bool
                | Ty::Char
                | Ty::Proc
                | Ty::Seq(_)
                | Ty::Set(_)
                | Ty::Tuple(_)
                | Ty::Map(..)
                | Ty::Fun(..)
        )
    }

    /// Binds the generators of `stmts` (pushing their variables) and checks the qualifiers;
    /// returns how many names were pushed.
    pub(super) fn stmts(&mut self, stmts: &[Stmt], source: Source) -> CResult<usize> {
        let mut pushed = 0;
        for s in stmts {
            let r = match s {
                Stmt::Generator(p, e) => (|| {
                    let te = self.expr(e)?;
                    let mut binds = Vec::new();
                    let tp = self.pattern(p, &mut binds)?;
                    // a tuple of sets (`v <- (A, B)`) is what the lowering of a subtype
                    // clause with a tuple field draws from: not typed
                    let source = if matches!(e.kind, ExprKind::Tuple(_)) {
                        Source::Either
                    } else {
                        source
                    };
                    let want = match source {
                        Source::Set => Ty::set(tp),
                        Source::Seq => Ty::seq(tp),
                        Source::Either => Ty::Any,
                    };
                    self.vars.unify(&want, &te).map_err(|m| {
                        let mut err = self.mismatch(&m, e.span);
                        match (source, self.vars.shallow(&te)) {
                            (Source::Seq, Ty::Set(_)) => {
                                err.message = format!(
                                    "this generator draws from a sequence, not a set: {}",
                                    err.message
                                )
                            }
                            (Source::Set, Ty::Seq(_)) => {
                                err.message = format!(
                                    "this generator draws from a set, not a sequence: {}",
                                    err.message
                                )
                            }
                            _ => {}
                        }
                        err
                    })?;
                    Ok(self.push_binds(binds))
                })(),
                Stmt::Qualifier(e) => self
                    .expr(e)
                    .and_then(|t| self.expect(&Ty::Bool, &t, e.span))
                    .map(|_| 0),
            };
            match r {
                Ok(n) => pushed += n,
                Err(e) => {
                    self.pop(pushed);
                    return Err(e);
                }
            }
        }
        Ok(pushed)
    }

    /// Pushes monomorphic bindings; returns how many.
    pub(super) fn push_binds(&mut self, binds: Vec<(Name, Ty)>) -> usize {
        let n = binds.len();
        for (name, ty) in binds {
            self.scope.push((name, Scheme::mono(ty)));
        }
        n
    }

    /// Pops `n` bindings.
    pub(super) fn pop(&mut self, n: usize) {
        let len = self.scope.len() - n;
        self.scope.truncate(len);
    }

    /// The type of pattern `p`; the variables it binds are added to `binds`.
    pub(super) fn pattern(&mut self, p: &Pattern, binds: &mut Vec<(Name, Ty)>) -> CResult<Ty> {
        use PatKind as P;
        Ok(match &p.kind {
            P::Var(n) => match self.prog.globals.get(n) {
                Some(GlobalKind::Chan(_) | GlobalKind::Ctor(_)) => self.name_type(n),
                Some(GlobalKind::True | GlobalKind::False) => Ty::Bool,
                _ => {
                    let t = self.vars.fresh();
                    binds.push((n.clone(), t.clone()));
                    t
                }
            },
            P::Wildcard => self.vars.fresh(),
            P::Int(_) => Ty::Int,
            P::Bool(_) => Ty::Bool,
            P::Char(_) => Ty::Char,
            P::Tuple(ps) => {
                let mut ts = Vec::new();
                for q in ps {
                    ts.push(self.pattern(q, binds)?);
                }
                Ty::tuple(ts)
            }
            P::Dot(ps) => {
                for q in ps {
                    // libcspm may split a dot pattern's parts in any way (and give each
                    // several fields)
                    let tq = self.pattern(q, binds)?;
                    self.vars.mark_maybe_dotted(&tq);
                }
                let t = self.dot_pattern_type(p, ps);
                self.vars.mark_maybe_dotted(&t);
                t
            }
            P::Seq(ps) => {
                let t = self.vars.fresh();
                for q in ps {
                    let tq = self.pattern(q, binds)?;
                    self.expect(&t, &tq, q.span)?;
                }
                Ty::seq(t)
            }
            P::Set(ps) => {
                let t = self.vars.fresh();
                for q in ps {
                    let tq = self.pattern(q, binds)?;
                    self.expect(&t, &tq, q.span)?;
                }
                Ty::set(t)
            }
            P::Concat(a, b) => {
                let t = Ty::seq(self.vars.fresh());
                for q in [a, b] {
                    let tq = self.pattern(q, binds)?;
                    self.expect(&t, &tq, q.span)?;
                }
                t
            }
            P::Both(a, b) => {
                let ta = self.pattern(a, binds)?;
                let tb = self.pattern(b, binds)?;
                self.expect(&ta, &tb, b.span)?;
                ta
            }
        })
    }

    /// The type of a function given by `clauses`.
    pub(super) fn clauses_type(&mut self, clauses: &[Clause]) -> CResult<Ty> {
        let mut result: Option<Ty> = None;
        for c in clauses {
            let mut binds = Vec::new();
            let mut groups = Vec::new();
            for g in &c.groups {
                let mut ts = Vec::new();
                for p in g {
                    ts.push(self.pattern(p, &mut binds)?);
                }
                groups.push(ts);
            }
            let n = self.push_binds(binds);
            let body = self.expr(&c.body);
            self.pop(n);
            let mut t = body?;
            for g in groups.into_iter().rev() {
                t = Ty::fun(g, t);
            }
            match &result {
                None => result = Some(t),
                Some(r) => {
                    let r = r.clone();
                    self.expect(&r, &t, c.span)?;
                }
            }
        }
        Ok(result.unwrap_or(Ty::Any))
    }
}

/// Whether `e` is a binary process operator (see `ExprKind::Hide` in [`Checker::expr`]).
fn is_process_operator(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Proc(..)
            | ExprKind::Parallel(..)
            | ExprKind::AlphaParallel(..)
            | ExprKind::Link(..)
            | ExprKind::SetProc(..)
            | ExprKind::Hide(..)
            | ExprKind::Project(..)
    )
}
