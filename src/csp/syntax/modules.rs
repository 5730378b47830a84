//! Flattening of modules: `module M ... endmodule` and `instance I = M(args)` become plain
//! top-level declarations whose names are qualified (`M::x`, `I::x`).
//!
//! A module's members are renamed throughout its declarations (every occurrence of a
//! member's name, bound or used, gets the qualified name, so local variables that shadow a
//! member are renamed consistently with their uses). A member declared before `exports` is
//! private: its qualified name carries [`PRIVATE_SUFFIX`], which no script can write, so
//! `M::x` outside the module does not find it. A module with parameters is only flattened
//! by an instance: its parameters become private definitions of the instance, bound to the
//! arguments (evaluated where the instance is declared). A module without parameters is
//! flattened as itself (and may also be instantiated).
//!
//! Every copy of a module's declarations gets fresh expression ids: the evaluator keys what
//! it knows of an expression (a prefix's free variables, for one) by its id, so two instances
//! of one module must not share them.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use super::ast::*;
use super::parser::{RED_ZONE, STACK_PER_RECURSION};
use crate::csp::error::{ErrorKind, RawError};

/// What the qualified name of a private member ends with.
pub const PRIVATE_SUFFIX: &str = " (private)";

/// What a name ends with where it stands, inside a module, for a module declared in it that
/// has no member of that name (`X` in `module G ... module X ... endmodule ... J = X.0`):
/// no value has such a name, so name resolution refuses the use, as libcspm does (there `X`
/// is ambiguous when a value `X` is also declared outside `G`).
pub const MODULE_SUFFIX: &str = " (module)";

/// The declarations with every module and instance flattened. Errors (an instance of an
/// unknown module, a wrong number of arguments) become invalid declarations. The expressions
/// of the flattened copies are numbered from `next_id` on (which is advanced past them).
pub fn flatten(decls: Vec<Decl>, next_id: &mut u32) -> Vec<Decl> {
    let mut modules: HashMap<Name, Arc<ModuleDecl>> = HashMap::new();
    collect_modules(&decls, "", &mut modules);
    let ids = Cell::new(*next_id);
    let out = flatten_in(decls, &mut modules, "", 0, &ids);
    *next_id = ids.get();
    out
}

/// Registers every module (nested ones under their qualified names).
fn collect_modules(decls: &[Decl], prefix: &str, out: &mut HashMap<Name, Arc<ModuleDecl>>) {
    for d in decls {
        if let DeclKind::Module(m) = &d.kind {
            let name = format!("{prefix}{}", m.name.name);
            out.insert(name.as_str().into(), m.clone());
            let inner = format!("{name}::");
            collect_modules(&m.private, &inner, out);
            collect_modules(&m.exported, &inner, out);
        }
    }
}

/// How deep instances may nest (an instance of a module that instantiates itself).
const MAX_DEPTH: usize = 32;

fn flatten_in(
    decls: Vec<Decl>,
    modules: &mut HashMap<Name, Arc<ModuleDecl>>,
    scope: &str,
    depth: usize,
    ids: &Cell<u32>,
) -> Vec<Decl> {
    let mut out = Vec::new();
    for d in decls {
        match &d.kind {
            DeclKind::Module(m) => {
                if m.params.is_none() {
                    let qualified = format!("{scope}{}", m.name.name);
                    out.extend(instantiate(
                        m,
                        &m.name.name,
                        &qualified,
                        None,
                        modules,
                        depth,
                        ids,
                    ));
                }
            }
            DeclKind::Instance(name, module, args) => {
                let found = modules
                    .get(&*format!("{scope}{}", module.name))
                    .or_else(|| modules.get(&module.name))
                    .cloned();
                let Some(m) = found else {
                    out.push(invalid(
                        &d,
                        name,
                        module.span,
                        ErrorKind::UnknownName,
                        format!("unknown module `{}`", module.name),
                    ));
                    continue;
                };
                let expected = m.params.as_ref().map_or(0, Vec::len);
                if expected != args.len() {
                    out.push(invalid(
                        &d,
                        name,
                        module.span,
                        ErrorKind::Arity,
                        format!(
                            "the module `{}` takes {expected} argument(s) but is given {}",
                            module.name,
                            args.len()
                        ),
                    ));
                    continue;
                }
                if depth >= MAX_DEPTH {
                    out.push(invalid(
                        &d,
                        name,
                        module.span,
                        ErrorKind::Limit,
                        "instances nested too deeply (a module that instantiates itself?)".into(),
                    ));
                    continue;
                }
                let qualified = format!("{scope}{}", m.name.name);
                out.extend(instantiate(
                    &m,
                    &name.name,
                    &qualified,
                    Some(args),
                    modules,
                    depth + 1,
                    ids,
                ));
            }
            _ => out.push(d),
        }
    }
    out
}

/// The declaration an error makes of an instance.
fn invalid(
    d: &Decl,
    name: &Ident,
    span: crate::csp::syntax::source::Span,
    kind: ErrorKind,
    message: String,
) -> Decl {
    let e = RawError::new(span, kind, message);
    Decl {
        kind: DeclKind::Invalid(InvalidDecl {
            names: vec![name.clone()],
            assertion: false,
            kind: e.kind,
            error_span: e.span,
            message: e.message,
        }),
        span: d.span,
    }
}

/// The declarations of module `m` as the instance `prefix` (the module's own name for a
/// module flattened as itself): members renamed `prefix::x`, parameters bound to `args`.
fn instantiate(
    m: &ModuleDecl,
    prefix: &str,
    qualified: &str,
    args: Option<&Vec<Expr>>,
    modules: &mut HashMap<Name, Arc<ModuleDecl>>,
    depth: usize,
    ids: &Cell<u32>,
) -> Vec<Decl> {
    let inner_scope = format!("{qualified}::");
    let private = flatten_in(m.private.clone(), modules, &inner_scope, depth, ids);
    let exported = flatten_in(m.exported.clone(), modules, &inner_scope, depth, ids);
    let mut names: HashMap<Name, Name> = HashMap::new();
    let add = |names: &mut HashMap<Name, Name>, n: &Name, private: bool| {
        let suffix = if private { PRIVATE_SUFFIX } else { "" };
        let q: Name = format!("{prefix}::{n}{suffix}").into();
        names.entry(n.clone()).or_insert(q);
    };
    for d in &exported {
        for n in defined_names(d) {
            add(&mut names, &n, false);
        }
    }
    for d in &private {
        for n in defined_names(d) {
            add(&mut names, &n, true);
        }
    }
    let mut out = Vec::new();
    if let (Some(params), Some(args)) = (&m.params, args) {
        for (p, a) in params.iter().zip(args.iter()) {
            add(&mut names, &p.name, true);
            let pat = Pattern {
                kind: PatKind::Var(names[&p.name].clone()),
                span: p.span,
            };
            out.push(Decl {
                kind: DeclKind::PatBind(pat, a.clone()),
                span: a.span,
            });
        }
    }
    // a module declared inside, whose name is no member's or parameter's: its name is no
    // value here (see `MODULE_SUFFIX`)
    for d in m.private.iter().chain(&m.exported) {
        if let DeclKind::Module(inner) = &d.kind {
            let n = &inner.name.name;
            let q: Name = format!("{qualified}::{n}{MODULE_SUFFIX}").into();
            names.entry(n.clone()).or_insert(q);
        }
    }
    let names = Names { map: names, ids };
    // the modules exported from inside, as members of this copy: `instance J = I::N(...)`
    // (a private one is not reachable from outside)
    for d in &m.exported {
        if let DeclKind::Module(inner) = &d.kind {
            let copy = nested_module_copy(inner, &names);
            modules.insert(
                format!("{prefix}::{}", inner.name.name).into(),
                Arc::new(copy),
            );
        }
    }
    for mut d in private.into_iter().chain(exported) {
        rename_decl(&mut d, &names);
        out.push(d);
    }
    out
}

/// A module declared inside another, as a member of one copy of the outer module: the outer
/// members it uses get that copy's names, except those its own parameters and declarations
/// shadow.
fn nested_module_copy(inner: &ModuleDecl, outer: &Names) -> ModuleDecl {
    let mut own: Vec<Name> = inner
        .params
        .iter()
        .flatten()
        .map(|p| p.name.clone())
        .collect();
    for d in inner.private.iter().chain(&inner.exported) {
        own.extend(defined_names(d));
    }
    let mut map = outer.map.clone();
    for n in &own {
        map.remove(n);
    }
    let names = Names {
        map,
        ids: outer.ids,
    };
    let mut copy = inner.clone();
    for d in copy.private.iter_mut().chain(copy.exported.iter_mut()) {
        rename_decl(d, &names);
    }
    copy
}

/// The names a (flattened) declaration defines.
pub(super) fn defined_names(d: &Decl) -> Vec<Name> {
    match &d.kind {
        DeclKind::Channel(names, _) => names.iter().map(|n| n.name.clone()).collect(),
        DeclKind::DataType(name, clauses) => std::iter::once(name.name.clone())
            .chain(clauses.iter().map(|c| c.name.name.clone()))
            .collect(),
        DeclKind::NameType(name, _) | DeclKind::Function(name, _) => vec![name.name.clone()],
        DeclKind::PatBind(p, _) => {
            let mut out = Vec::new();
            pattern_names(p, &mut out);
            out
        }
        DeclKind::Invalid(inv) => inv.names.iter().map(|n| n.name.clone()).collect(),
        DeclKind::Timed(t) => t.decls.iter().flat_map(defined_names).collect(),
        _ => Vec::new(),
    }
}

fn pattern_names(p: &Pattern, out: &mut Vec<Name>) {
    match &p.kind {
        PatKind::Var(n) => out.push(n.clone()),
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            ps.iter().for_each(|q| pattern_names(q, out))
        }
        PatKind::Concat(a, b) | PatKind::Both(a, b) => {
            pattern_names(a, out);
            pattern_names(b, out);
        }
        PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) | PatKind::Char(_) => {}
    }
}

/// How one copy of a module's declarations is renamed: its members' qualified names, and
/// the source of fresh expression ids.
struct Names<'a> {
    map: HashMap<Name, Name>,
    ids: &'a Cell<u32>,
}

impl Names<'_> {
    fn fresh_id(&self) -> u32 {
        let id = self.ids.get();
        self.ids.set(id + 1);
        id
    }
}

fn rename_name(n: &mut Name, names: &Names) {
    // (members of instances and modules declared inside are named `J::x` here)
    if let Some(q) = names.map.get(n) {
        *n = q.clone();
    }
}

fn rename_ident(i: &mut Ident, names: &Names) {
    rename_name(&mut i.name, names);
}

fn rename_decl(d: &mut Decl, names: &Names) {
    match &mut d.kind {
        DeclKind::Channel(ns, ty) => {
            ns.iter_mut().for_each(|n| rename_ident(n, names));
            if let Some(t) = ty {
                rename_expr(t, names);
            }
        }
        DeclKind::DataType(n, clauses) => {
            rename_ident(n, names);
            for c in clauses {
                rename_ident(&mut c.name, names);
                if let Some(f) = &mut c.fields {
                    rename_expr(f, names);
                }
            }
        }
        DeclKind::NameType(n, e) => {
            rename_ident(n, names);
            rename_expr(e, names);
        }
        DeclKind::Function(n, clauses) => {
            rename_ident(n, names);
            for c in clauses {
                c.groups
                    .iter_mut()
                    .flatten()
                    .for_each(|p| rename_pattern(p, names));
                rename_expr(&mut c.body, names);
            }
        }
        DeclKind::PatBind(p, e) => {
            rename_pattern(p, names);
            rename_expr(e, names);
        }
        DeclKind::Assert(a) => match &mut a.kind {
            AssertionKind::Refinement { spec, imp, .. } => {
                rename_expr(spec, names);
                rename_expr(imp, names);
            }
            AssertionKind::Property { process, property } => {
                rename_expr(process, names);
                if let Property::HasTrace(_, t) = property {
                    rename_expr(t, names);
                }
            }
        },
        DeclKind::Timed(t) => {
            if let Some(et) = &mut t.et {
                rename_expr(et, names);
            }
            t.decls.iter_mut().for_each(|d| rename_decl(d, names));
        }
        DeclKind::Invalid(inv) => inv.names.iter_mut().for_each(|n| rename_ident(n, names)),
        // compression functions keep their names; modules and instances are flattened
        DeclKind::Transparent(_)
        | DeclKind::External(_)
        | DeclKind::Module(_)
        | DeclKind::Instance(..) => {}
    }
}

fn rename_pattern(p: &mut Pattern, names: &Names) {
    match &mut p.kind {
        PatKind::Var(n) => rename_name(n, names),
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            ps.iter_mut().for_each(|q| rename_pattern(q, names))
        }
        PatKind::Concat(a, b) | PatKind::Both(a, b) => {
            rename_pattern(a, names);
            rename_pattern(b, names);
        }
        PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) | PatKind::Char(_) => {}
    }
}

fn rename_stmts(stmts: &mut [Stmt], names: &Names) {
    for s in stmts {
        match s {
            Stmt::Generator(p, e) => {
                rename_pattern(p, names);
                rename_expr(e, names);
            }
            Stmt::Qualifier(e) => rename_expr(e, names),
        }
    }
}

fn rename_all(es: &mut [Expr], names: &Names) {
    es.iter_mut().for_each(|e| rename_expr(e, names));
}

fn rename_pairs(pairs: &mut [(Expr, Expr)], names: &Names) {
    for (a, b) in pairs {
        rename_expr(a, names);
        rename_expr(b, names);
    }
}

fn rename_expr(e: &mut Expr, names: &Names) {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || rename_expr_here(e, names))
}

fn rename_expr_here(e: &mut Expr, names: &Names) {
    use ExprKind::*;
    e.id = names.fresh_id();
    match &mut e.kind {
        Int(_) | Bool(_) | Char(_) | Str(_) | Wildcard => {}
        Var(n) => rename_name(n, names),
        Map(pairs) => rename_pairs(pairs, names),
        Tuple(es) | SeqLit(es) | SetLit(es) | Productions(es) => rename_all(es, names),
        Dot(a, b)
        | Binary(_, a, b)
        | SeqRange(a, b)
        | SetRange(a, b)
        | Guard(a, b)
        | Proc(_, a, b)
        | Project(a, b)
        | Hide(a, b) => {
            rename_expr(a, names);
            rename_expr(b, names);
        }
        SetProc(_, p, a, q) => {
            rename_expr(p, names);
            rename_expr(a, names);
            rename_expr(q, names);
        }
        Unary(_, a) | SetFrom(a) | SeqFrom(a) => rename_expr(a, names),
        App(f, args) => {
            rename_expr(f, names);
            rename_all(args, names);
        }
        If(c, t, f) => {
            rename_expr(c, names);
            rename_expr(t, names);
            rename_expr(f, names);
        }
        Let(l) => {
            let l = Arc::make_mut(l);
            l.decls.iter_mut().for_each(|d| rename_decl(d, names));
            rename_expr(&mut l.body, names);
        }
        Lambda(l) => {
            let l = Arc::make_mut(l);
            l.params.iter_mut().for_each(|p| rename_pattern(p, names));
            rename_expr(&mut l.body, names);
        }
        SeqComp(es, stmts) | SetComp(es, stmts) | ProductionsComp(es, stmts) => {
            rename_all(es, names);
            rename_stmts(stmts, names);
        }
        RangeComp(r, stmts) => {
            rename_expr(r, names);
            rename_stmts(stmts, names);
        }
        Prefix(p) => {
            let p = Arc::make_mut(p);
            rename_expr(&mut p.event, names);
            for f in &mut p.fields {
                match f {
                    Field::Output(x) => rename_expr(x, names),
                    Field::Input(pat, set) | Field::NondetInput(pat, set) => {
                        rename_pattern(pat, names);
                        if let Some(s) = set {
                            rename_expr(s, names);
                        }
                    }
                }
            }
            rename_expr(&mut p.body, names);
        }
        Parallel(p, a, q) => {
            rename_expr(p, names);
            rename_expr(a, names);
            rename_expr(q, names);
        }
        AlphaParallel(p, a, b, q) => {
            rename_expr(p, names);
            rename_expr(a, names);
            rename_expr(b, names);
            rename_expr(q, names);
        }
        Link(p, pairs, stmts, q) => {
            rename_expr(p, names);
            rename_pairs(pairs, names);
            rename_stmts(stmts, names);
            rename_expr(q, names);
        }
        Rename(p, pairs, stmts) => {
            rename_expr(p, names);
            rename_pairs(pairs, names);
            rename_stmts(stmts, names);
        }
        Replicated(op, stmts, body) => {
            match op {
                RepOp::Parallel(a) | RepOp::AlphaParallel(a) => rename_expr(a, names),
                _ => {}
            }
            rename_stmts(stmts, names);
            rename_expr(body, names);
        }
        TimedHeader(t, et) => {
            rename_expr(t, names);
            if let Some(et) = et {
                rename_expr(et, names);
            }
        }
        Timed(t) => {
            let t = Arc::make_mut(t);
            rename_expr(&mut t.section, names);
            match &mut t.form {
                TimedForm::Prefix(x)
                | TimedForm::Wait(x)
                | TimedForm::Priority(x)
                | TimedForm::Operator(x) => rename_expr(x, names),
                TimedForm::Stop | TimedForm::Skip => {}
            }
        }
    }
}
