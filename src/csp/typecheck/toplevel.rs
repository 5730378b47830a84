//! The declarations: top-level names typed one strongly connected group at a time (in
//! dependency order, each group generalised), `let` groups, channels, datatypes and name
//! types, assertions, and the checks of type annotations against the inferred types.

use std::collections::{HashMap, HashSet};

use super::annotations::{AnnotationReader, ReadError, TypeName};
use super::types::Ty;
use super::{CResult, Checker, Scheme};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::resolve::{DefKind, GlobalKind, Program};
use crate::csp::syntax::ast::*;
use crate::csp::syntax::parser::RawAnnotation;
use crate::csp::syntax::source::Span;

/// An annotation read: its rigid type, its rigid variables by name, and those it introduced.
struct Read {
    ty: Ty,
    names: HashMap<String, Ty>,
    own: Vec<u32>,
}

impl<'p> Checker<'p> {
    /// Reads annotation `a` (`Ok(None)` when it is of a form the checker does not read).
    fn read_annotation(&mut self, a: &RawAnnotation) -> CResult<Option<Read>> {
        let prog = self.prog;
        let lookup = |n: &str| match prog.globals.get(n) {
            Some(GlobalKind::DataType(id)) => TypeName::Data(*id, n.into()),
            Some(_) => TypeName::Opaque,
            None => TypeName::Unknown,
        };
        let end = a
            .tokens
            .last()
            .map(|t| t.span)
            .unwrap_or(a.names[a.names.len() - 1].span);
        let inherited = self.rigid_names.clone();
        let before: HashSet<String> = inherited.keys().cloned().collect();
        let reader = AnnotationReader::new(&a.tokens, end, &lookup, &mut self.vars, inherited);
        match reader.read() {
            Ok((ty, names)) => {
                let own = names
                    .iter()
                    .filter(|(n, _)| !before.contains(*n))
                    .filter_map(|(_, t)| match t {
                        Ty::Rigid(r) => Some(*r),
                        _ => None,
                    })
                    .collect();
                Ok(Some(Read { ty, names, own }))
            }
            Err(ReadError::Unread) => Ok(None),
            Err(ReadError::Error(e)) => Err(e),
        }
    }

    /// Channels declared together (`channel c1, c2 : Int`) are annotated together
    /// (`c1, c2 :: Int => Event`), as libcspm requires: an annotation that names some of
    /// them and not the others is refused.
    fn check_channels_annotated_together(
        prog: &Program,
        by_name: &HashMap<Name, &RawAnnotation>,
    ) -> CResult<()> {
        for (names, _) in &prog.decl_refs {
            let together = names.len() > 1
                && names
                    .iter()
                    .all(|n| matches!(prog.globals.get(n), Some(GlobalKind::Chan(_))));
            if !together {
                continue;
            }
            for n in names.iter() {
                let Some(a) = by_name.get(n) else { continue };
                let Some(missing) = names.iter().find(|m| {
                    !by_name
                        .get(*m)
                        .is_some_and(|b| std::ptr::eq::<RawAnnotation>(*a, *b))
                }) else {
                    continue;
                };
                let at = a
                    .names
                    .iter()
                    .find(|x| x.name == *n)
                    .map_or(a.names[0].span, |x| x.span);
                let all: Vec<&str> = names.iter().map(|m| &**m).collect();
                return Err(RawError::new(
                    at,
                    ErrorKind::Type,
                    format!(
                        "the channels {} are declared together, so one type annotation must \
                         name them all (`{} :: ...`); this one does not name `{missing}`",
                        all.iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        all.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The annotations of one scope by name, checking that no name is annotated twice and
    /// that every annotated name is among `defined`.
    fn annotations_by_name<'a>(
        &self,
        anns: &[&'a RawAnnotation],
        defined: &dyn Fn(&Name) -> bool,
    ) -> CResult<HashMap<Name, &'a RawAnnotation>> {
        let mut out: HashMap<Name, &RawAnnotation> = HashMap::new();
        for a in anns {
            for n in &a.names {
                if out.insert(n.name.clone(), a).is_some() {
                    return Err(RawError::new(
                        n.span,
                        ErrorKind::Duplicate,
                        format!("`{}` has more than one type annotation", n.name),
                    ));
                }
                if !defined(&n.name) {
                    return Err(RawError::new(
                        n.span,
                        ErrorKind::UnknownName,
                        format!(
                            "the type annotation of `{}` has no definition of `{}` beside it",
                            n.name, n.name
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Checks that `actual`, the type of the definition of `name` at `span`, matches its
    /// annotation `ann`.
    fn check_annotation(&mut self, name: &Name, ann: &Ty, actual: &Ty, span: Span) -> CResult<()> {
        // a module's private member is shown as written (`M::f`, not its hidden name)
        let name = name
            .strip_suffix(crate::csp::syntax::modules::PRIVATE_SUFFIX)
            .unwrap_or(name);
        self.vars.unify(ann, actual).map_err(|m| {
            RawError::new(
                span,
                ErrorKind::Type,
                format!(
                    "the definition of `{name}` does not have its annotated type {}: {}",
                    self.vars.show(ann),
                    self.vars.describe(&m)
                ),
            )
        })
    }

    /// The scheme of an annotated definition: its type for every instance of its own rigid
    /// variables.
    fn annotated_scheme(read: &Read) -> Scheme {
        Scheme {
            generic: Vec::new(),
            rigid: read.own.clone(),
            ty: read.ty.clone(),
        }
    }

    /// Types the whole program.
    pub(super) fn top_level(&mut self, anns: &[&'p RawAnnotation]) -> CResult<()> {
        let prog = self.prog;
        let by_name = self.annotations_by_name(anns, &|n| prog.globals.contains_key(n))?;
        Self::check_channels_annotated_together(prog, &by_name)?;
        // one strongly connected group of declarations at a time, in dependency order
        for group in &prog.order {
            let names: Vec<Name> = group
                .decls
                .iter()
                .flat_map(|&i| prog.decl_refs[i].0.iter().cloned())
                .collect();
            self.group(&names, &by_name)?;
        }
        for a in &prog.assertions {
            let Some(d) = &a.decl else { continue };
            match &d.kind {
                AssertionKind::Refinement { spec, imp, .. } => {
                    self.process(spec)?;
                    self.process(imp)?;
                }
                AssertionKind::Property { process, property } => {
                    self.process(process)?;
                    if let Property::HasTrace(_, t) = property {
                        self.expr(t)?;
                    }
                }
            }
            if let Some(t) = &d.tau_priority {
                self.expr(t)?;
            }
        }
        self.check_shortest_matches()?;
        self.check_first_fields()?;
        for (span, name, t) in std::mem::take(&mut self.empty_fields) {
            if let Ty::Var(_) = self.vars.shallow(&t) {
                return Err(RawError::new(
                    span,
                    ErrorKind::Type,
                    format!(
                        "the type of this field of `{name}` is ambiguous: nothing fixes the \
                         type of the elements of the empty set"
                    ),
                ));
            }
        }
        self.check_dot_heads()
    }

    /// Whether `e` is the empty set `{}`, or a top-level constant defined as `{}`.
    fn is_empty_set(&self, e: &Expr) -> bool {
        let empty = |e: &Expr| matches!(&e.kind, ExprKind::SetLit(es) if es.is_empty());
        match &e.kind {
            ExprKind::Var(n) => match self.prog.globals.get(n) {
                Some(GlobalKind::Def(i)) => matches!(
                    &self.prog.top.defs[*i as usize].kind,
                    DefKind::Constant { expr } if empty(expr)
                ),
                _ => false,
            },
            _ => empty(e),
        }
    }

    /// Types one strongly connected group of top-level names.
    fn group(&mut self, names: &[Name], anns: &HashMap<Name, &'p RawAnnotation>) -> CResult<()> {
        let prog = self.prog;
        let mut placeholders: HashMap<Name, Ty> = HashMap::new();
        let mut reads: HashMap<Name, Read> = HashMap::new();
        // only definitions, channels, datatypes and name types are typed here (a name
        // declared `external` or `transparent` keeps its built-in type)
        let names: Vec<Name> = names
            .iter()
            .filter(|n| {
                matches!(
                    prog.globals.get(*n),
                    Some(
                        GlobalKind::Def(_)
                            | GlobalKind::Chan(_)
                            | GlobalKind::Ctor(_)
                            | GlobalKind::DataType(_)
                            | GlobalKind::NameType(_)
                    )
                )
            })
            .cloned()
            .collect();
        let names = &names[..];
        for n in names {
            let is_def = matches!(prog.globals.get(n), Some(GlobalKind::Def(_)));
            if let Some(a) = anns.get(n) {
                if let Some(r) = self.read_annotation(a)? {
                    if is_def {
                        self.globals.insert(n.clone(), Self::annotated_scheme(&r));
                    }
                    reads.insert(n.clone(), r);
                }
            }
            if !(is_def && reads.contains_key(n)) {
                let v = self.vars.fresh();
                self.globals.insert(n.clone(), Scheme::mono(v.clone()));
                placeholders.insert(n.clone(), v);
            }
        }
        let mut binds_done = HashSet::new();
        for n in names {
            let Some(&kind) = prog.globals.get(n) else {
                continue;
            };
            let (ty, span) = match kind {
                GlobalKind::Def(i) => {
                    let d = &prog.top.defs[i as usize];
                    let saved = self.rigid_names.clone();
                    if let Some(r) = reads.get(n) {
                        self.rigid_names = r.names.clone();
                    }
                    let t = match &d.kind {
                        DefKind::Function { clauses, .. } => self.clauses_type(clauses),
                        DefKind::Constant { expr } => self.expr(expr),
                        DefKind::Part { bind } => {
                            if binds_done.insert(*bind) {
                                self.top_bind(*bind, &placeholders)?;
                            }
                            self.rigid_names = saved;
                            continue;
                        }
                    };
                    self.rigid_names = saved;
                    (t?, d.span)
                }
                GlobalKind::Chan(c) => {
                    let ch = &prog.channels[c as usize];
                    (self.fields_type(n, ch.ty.as_ref(), Ty::Event)?, ch.span)
                }
                GlobalKind::Ctor(c) => {
                    let ct = &prog.ctors[c as usize];
                    let dt = &prog.datatypes[ct.datatype as usize];
                    let data = Ty::Data(ct.datatype, dt.name.clone());
                    (self.fields_type(n, ct.fields.as_ref(), data)?, ct.span)
                }
                GlobalKind::DataType(d) => {
                    let dt = &prog.datatypes[d as usize];
                    let span = anns.get(n).map(|a| a.names[0].span);
                    let data = Ty::Data(d, dt.name.clone());
                    (Ty::set(data), span.unwrap_or_default())
                }
                GlobalKind::NameType(t) => {
                    let nt = &prog.nametypes[t as usize];
                    (Ty::set(self.type_set(&nt.expr)?), nt.expr.span)
                }
                _ => continue,
            };
            if let Some(r) = reads.get(n) {
                let is_def = matches!(kind, GlobalKind::Def(_));
                if !is_def && !r.own.is_empty() {
                    let span = anns.get(n).map_or(span, |a| a.names[0].span);
                    return Err(RawError::new(
                        span,
                        ErrorKind::Type,
                        format!(
                            "the type annotation of `{n}` is more general than its type {}",
                            self.vars.show(&ty)
                        ),
                    ));
                }
                let ann = r.ty.clone();
                self.check_annotation(n, &ann, &ty, span)?;
            }
            if let Some(p) = placeholders.get(n).cloned() {
                self.expect(&p, &ty, span)?;
            }
        }
        self.check_shortest_matches()?;
        self.check_first_fields()?;
        if names
            .iter()
            .any(|n| matches!(prog.globals.get(n), Some(GlobalKind::Ctor(_))))
        {
            self.find_datatypes_without_eq();
        }
        for (c, t, span) in std::mem::take(&mut self.class_checks) {
            self.vars
                .require(c, &t)
                .map_err(|m| self.mismatch(&m, span))?;
        }
        // generalise the definitions of the group
        let mut mono = Vec::new();
        for (m, s) in &self.globals {
            if !matches!(prog.globals.get(m), Some(GlobalKind::Def(_))) {
                self.vars.free_vars(&s.ty, &mut mono);
            }
        }
        for n in names {
            if !matches!(prog.globals.get(n), Some(GlobalKind::Def(_))) {
                continue;
            }
            let Some(p) = placeholders.get(n) else {
                continue;
            };
            let ty = self.vars.resolve(p);
            let mut fv = Vec::new();
            self.vars.free_vars(&ty, &mut fv);
            fv.retain(|v| !mono.contains(v));
            self.globals.insert(
                n.clone(),
                Scheme {
                    generic: fv,
                    rigid: Vec::new(),
                    ty,
                },
            );
        }
        Ok(())
    }

    /// Types the top-level pattern binding `bind`, unifying the types of its names with
    /// their placeholders.
    fn top_bind(&mut self, bind: u32, placeholders: &HashMap<Name, Ty>) -> CResult<()> {
        let b = &self.prog.top.binds[bind as usize];
        let te = self.expr(&b.expr)?;
        let mut binds = Vec::new();
        let tp = self.pattern(&b.pat, &mut binds)?;
        self.expect(&tp, &te, b.expr.span)?;
        for (n, t) in binds {
            if let Some(p) = placeholders.get(&n).cloned() {
                self.expect(&p, &t, b.pat.span)?;
            }
        }
        Ok(())
    }

    /// Marks (in [`Vars`]) the datatypes typed so far that have no equality, as libcspm
    /// derives it: a datatype is an instance of `Eq` when the fields of all its
    /// constructors are, so one with a field of processes or functions (directly, or
    /// through a tuple, sequence, set, map or another datatype without equality) is not.
    fn find_datatypes_without_eq(&mut self) {
        let prog = self.prog;
        let mut fields: Vec<(u32, Vec<Ty>)> = Vec::new();
        for ct in &prog.ctors {
            let Some(scheme) = self.globals.get(&ct.name) else {
                continue;
            };
            let mut t = self.vars.resolve(&scheme.ty);
            let mut tys = Vec::new();
            while let Ty::Dotable(a, r) = t {
                tys.push((*a).clone());
                t = (*r).clone();
            }
            fields.push((ct.datatype, tys));
        }
        loop {
            let mut changed = false;
            for (d, tys) in &fields {
                if !self.vars.data_has_eq(*d) {
                    continue;
                }
                if tys.iter().any(|t| !self.vars.may_have_eq(t)) {
                    self.vars.set_data_without_eq(*d);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The type of a channel or constructor with fields `fields` (a dotted product of sets)
    /// whose values are of type `result`.
    fn fields_type(&mut self, name: &Name, fields: Option<&Expr>, result: Ty) -> CResult<Ty> {
        let Some(fields) = fields else {
            return Ok(result);
        };
        let mut parts = Vec::new();
        flatten_dots(fields, &mut parts);
        let mut tys = Vec::new();
        for p in &parts {
            let t = self.type_set(p)?;
            if self.is_empty_set(p) {
                self.empty_fields.push((p.span, name.clone(), t.clone()));
            }
            tys.push(t);
        }
        Ok(tys.into_iter().rev().fold(result, |r, t| Ty::dotable(t, r)))
    }

    /// The type of the values of the set `e` written as a type (a field of a channel or
    /// constructor, a name type), where a tuple of sets is the set of tuples and a dotted
    /// product is not modelled.
    fn type_set(&mut self, e: &Expr) -> CResult<Ty> {
        match &e.kind {
            ExprKind::Tuple(es) => {
                let mut ts = Vec::new();
                for x in es {
                    ts.push(self.type_set(x)?);
                }
                Ok(Ty::tuple(ts))
            }
            ExprKind::Dot(..) => {
                self.expr(e)?;
                Ok(Ty::Any)
            }
            _ => {
                let t = self.expr(e)?;
                let x = self.vars.fresh();
                self.expect(&Ty::set(x.clone()), &t, e.span)?;
                Ok(x)
            }
        }
    }

    /// The type of `let decls within body` (at `span`).
    pub(super) fn let_expr(&mut self, l: &LetExpr, span: Span) -> CResult<Ty> {
        let anns = self
            .let_annotations
            .get(&(span.file, span.lo))
            .cloned()
            .unwrap_or_default();
        // the names defined, with the type each use sees
        let mut defined: Vec<Name> = Vec::new();
        let mut pat_binds: Vec<Vec<(Name, Ty)>> = Vec::new();
        let mut pat_types: Vec<Ty> = Vec::new();
        for d in &l.decls {
            match &d.kind {
                DeclKind::Function(n, _) => defined.push(n.name.clone()),
                DeclKind::PatBind(p, _) => {
                    let mut binds = Vec::new();
                    let t = self.pattern(p, &mut binds)?;
                    defined.extend(binds.iter().map(|(n, _)| n.clone()));
                    pat_binds.push(binds);
                    pat_types.push(t);
                }
                _ => {}
            }
        }
        let by_name = self.annotations_by_name(&anns, &|n| defined.contains(n))?;
        let mut reads: HashMap<Name, Read> = HashMap::new();
        for (n, a) in &by_name {
            if let Some(r) = self.read_annotation(a)? {
                reads.insert(n.clone(), r);
            }
        }
        let mut placeholders: HashMap<Name, Ty> = HashMap::new();
        let mut pushed = 0;
        for binds in &pat_binds {
            for (n, t) in binds {
                placeholders.insert(n.clone(), t.clone());
            }
        }
        for n in &defined {
            let scheme = match reads.get(n) {
                Some(r) => Self::annotated_scheme(r),
                None => {
                    let t = match placeholders.get(n) {
                        Some(t) => t.clone(),
                        None => {
                            let v = self.vars.fresh();
                            placeholders.insert(n.clone(), v.clone());
                            v
                        }
                    };
                    Scheme::mono(t)
                }
            };
            self.scope.push((n.clone(), scheme));
            pushed += 1;
        }
        let r = (|| {
            let mut k = 0;
            for d in &l.decls {
                match &d.kind {
                    DeclKind::Function(n, clauses) => {
                        let saved = self.rigid_names.clone();
                        if let Some(r) = reads.get(&n.name) {
                            self.rigid_names = r.names.clone();
                        }
                        let t = self.clauses_type(clauses);
                        self.rigid_names = saved;
                        let t = t?;
                        self.def_matches(&n.name, &t, n.span, &reads, &placeholders)?;
                    }
                    DeclKind::PatBind(p, e) => {
                        let te = self.expr(e)?;
                        let tp = pat_types[k].clone();
                        self.expect(&tp, &te, e.span)?;
                        for (n, t) in &pat_binds[k] {
                            self.def_matches(n, t, p.span, &reads, &placeholders)?;
                        }
                        k += 1;
                    }
                    _ => {}
                }
            }
            self.expr(&l.body)
        })();
        self.pop(pushed);
        r
    }

    fn def_matches(
        &mut self,
        n: &Name,
        t: &Ty,
        span: Span,
        reads: &HashMap<Name, Read>,
        placeholders: &HashMap<Name, Ty>,
    ) -> CResult<()> {
        if let Some(r) = reads.get(n) {
            let ann = r.ty.clone();
            self.check_annotation(n, &ann, t, span)
        } else if let Some(p) = placeholders.get(n).cloned() {
            self.expect(&p, t, span)
        } else {
            Ok(())
        }
    }
}

/// The fields of a dotted product `a.b.c`.
pub(super) fn flatten_dots<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    if let ExprKind::Dot(a, b) = &e.kind {
        flatten_dots(a, out);
        flatten_dots(b, out);
    } else {
        out.push(e);
    }
}
