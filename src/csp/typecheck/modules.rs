//! The static checks of modules libcspm makes before modules are flattened: a module or
//! instance name defined twice in one scope (or also given to another declaration), a
//! nested module reached through a module with parameters instead of an instance of it,
//! and modules that instantiate themselves (directly, or through the members of their own
//! instances).

use std::collections::{HashMap, HashSet};

use crate::csp::error::{ErrorKind, RawError};
use crate::csp::syntax::ast::*;
use crate::csp::syntax::source::Span;

type CResult<T> = Result<T, RawError>;

/// Checks the modules and instances of the script's declarations (before flattening).
pub(crate) fn check_modules(decls: &[Decl]) -> CResult<()> {
    let mut modules: HashMap<String, (&ModuleDecl, String)> = HashMap::new();
    collect(decls, "", &mut modules);
    if modules.is_empty()
        && !decls
            .iter()
            .any(|d| matches!(d.kind, DeclKind::Instance(..)))
    {
        return Ok(());
    }
    check_scope(decls, "", &modules)?;
    check_cycles(decls, &modules)
}

/// Every module by its qualified name (`M`, `M::N`), with the scope it is declared in.
fn collect<'a>(
    decls: &'a [Decl],
    prefix: &str,
    out: &mut HashMap<String, (&'a ModuleDecl, String)>,
) {
    for d in decls {
        if let DeclKind::Module(m) = &d.kind {
            let name = format!("{prefix}{}", m.name.name);
            out.insert(name.clone(), (m, prefix.to_string()));
            let inner = format!("{name}::");
            collect(&m.private, &inner, out);
            collect(&m.exported, &inner, out);
        }
    }
}

/// The names a declaration defines in its scope, with their positions.
fn defined(d: &Decl, out: &mut Vec<(Name, Span)>) {
    match &d.kind {
        DeclKind::Channel(ns, _) | DeclKind::Transparent(ns) | DeclKind::External(ns) => {
            out.extend(ns.iter().map(|n| (n.name.clone(), n.span)))
        }
        DeclKind::DataType(n, clauses) => {
            out.push((n.name.clone(), n.span));
            out.extend(clauses.iter().map(|c| (c.name.name.clone(), c.name.span)));
        }
        DeclKind::NameType(n, _) | DeclKind::Function(n, _) => out.push((n.name.clone(), n.span)),
        DeclKind::PatBind(p, _) => {
            if let PatKind::Var(n) = &p.kind {
                out.push((n.clone(), p.span));
            }
        }
        DeclKind::Module(m) => out.push((m.name.name.clone(), m.name.span)),
        DeclKind::Instance(n, _, _) => out.push((n.name.clone(), n.span)),
        DeclKind::Timed(t) => t.decls.iter().for_each(|d| defined(d, out)),
        DeclKind::Assert(_) | DeclKind::Invalid(_) => {}
    }
}

/// Checks one scope (the top level, or the members of one module) and the modules in it.
fn check_scope(
    decls: &[Decl],
    prefix: &str,
    modules: &HashMap<String, (&ModuleDecl, String)>,
) -> CResult<()> {
    // module and instance names are unique in their scope
    let mut names = Vec::new();
    for d in decls {
        defined(d, &mut names);
    }
    let mut module_names: HashSet<&Name> = HashSet::new();
    for d in decls {
        match &d.kind {
            DeclKind::Module(m) => {
                module_names.insert(&m.name.name);
            }
            DeclKind::Instance(n, _, _) => {
                module_names.insert(&n.name);
            }
            _ => {}
        }
    }
    let mut seen: HashMap<&Name, Span> = HashMap::new();
    for (n, span) in &names {
        if seen.contains_key(n) {
            if module_names.contains(n) {
                return Err(RawError::new(
                    *span,
                    ErrorKind::Duplicate,
                    format!("`{n}` is defined more than once (a module or instance has this name)"),
                ));
            }
        } else {
            seen.insert(n, *span);
        }
    }
    for d in decls {
        match &d.kind {
            DeclKind::Instance(_, module, _) => {
                // `M::N` through a module with parameters: only an instance of `M` has `N`
                if let Some((outer, _)) = module.name.split_once("::") {
                    let outer_q = format!("{prefix}{outer}");
                    let found = modules.get(&outer_q).or_else(|| modules.get(outer));
                    if let Some((m, _)) = found {
                        if m.params.as_ref().is_some_and(|p| !p.is_empty()) {
                            return Err(RawError::new(
                                module.span,
                                ErrorKind::Type,
                                format!(
                                    "the module `{outer}` has parameters: `{}` is reached \
                                     through an instance of `{outer}`",
                                    module.name
                                ),
                            ));
                        }
                    }
                }
            }
            DeclKind::Module(m) => {
                let inner = format!("{prefix}{}::", m.name.name);
                let mut all: Vec<Decl> = m.private.clone();
                all.extend(m.exported.iter().cloned());
                check_scope(&all, &inner, modules)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Modules that instantiate themselves: the edges go from a module to the modules it
/// instantiates and to those whose instances its members refer to (`I::x`).
fn check_cycles(decls: &[Decl], modules: &HashMap<String, (&ModuleDecl, String)>) -> CResult<()> {
    // instances by name (as written where declared, and qualified), with their module
    let mut instances: HashMap<String, String> = HashMap::new();
    fn collect_instances(
        decls: &[Decl],
        prefix: &str,
        modules: &HashMap<String, (&ModuleDecl, String)>,
        out: &mut HashMap<String, String>,
    ) {
        for d in decls {
            match &d.kind {
                DeclKind::Instance(n, m, _) => {
                    let target = resolve_module(&m.name, prefix, modules);
                    if let Some(t) = target {
                        out.insert(format!("{prefix}{}", n.name), t.clone());
                        out.entry(n.name.to_string()).or_insert(t);
                    }
                }
                DeclKind::Module(m) => {
                    let inner = format!("{prefix}{}::", m.name.name);
                    collect_instances(&m.private, &inner, modules, out);
                    collect_instances(&m.exported, &inner, modules, out);
                }
                _ => {}
            }
        }
    }
    collect_instances(decls, "", modules, &mut instances);
    let mut edges: HashMap<String, Vec<(String, Span)>> = HashMap::new();
    for (q, (m, _)) in modules {
        let prefix = format!("{q}::");
        let mut out = Vec::new();
        for d in m.private.iter().chain(&m.exported) {
            match &d.kind {
                DeclKind::Instance(_, k, _) => {
                    if let Some(t) = resolve_module(&k.name, &prefix, modules) {
                        out.push((t, k.span));
                    }
                }
                DeclKind::Module(_) => {}
                _ => {
                    let mut refs = Vec::new();
                    decl_refs(d, &mut refs);
                    for (n, span) in refs {
                        if let Some((inst, _)) = n.rsplit_once("::") {
                            let target = instances
                                .get(&format!("{prefix}{inst}"))
                                .or_else(|| instances.get(inst));
                            if let Some(t) = target {
                                out.push((t.clone(), span));
                            }
                        }
                    }
                }
            }
        }
        edges.insert(q.clone(), out);
    }
    // depth-first search for a cycle
    let mut state: HashMap<&str, u8> = HashMap::new();
    fn dfs<'a>(
        v: &'a str,
        edges: &'a HashMap<String, Vec<(String, Span)>>,
        state: &mut HashMap<&'a str, u8>,
    ) -> Option<Span> {
        state.insert(v, 1);
        for (w, span) in edges.get(v).map(|e| &e[..]).unwrap_or(&[]) {
            match state.get(w.as_str()) {
                Some(1) => return Some(*span),
                Some(_) => {}
                None => {
                    if let Some(s) = dfs(w, edges, state) {
                        return Some(s);
                    }
                }
            }
        }
        state.insert(v, 2);
        None
    }
    let mut keys: Vec<&String> = edges.keys().collect();
    keys.sort();
    for k in keys {
        if state.contains_key(k.as_str()) {
            continue;
        }
        if let Some(span) = dfs(k, &edges, &mut state) {
            return Err(RawError::new(
                span,
                ErrorKind::Type,
                "this makes a module depend on an instance of itself (modules cannot be \
                 instantiated recursively)",
            ));
        }
    }
    Ok(())
}

/// The qualified name of the module `name` written in scope `prefix`.
fn resolve_module(
    name: &str,
    prefix: &str,
    modules: &HashMap<String, (&ModuleDecl, String)>,
) -> Option<String> {
    let mut scope = prefix.to_string();
    loop {
        let q = format!("{scope}{name}");
        if modules.contains_key(&q) {
            return Some(q);
        }
        if scope.is_empty() {
            return None;
        }
        // drop the innermost module of the scope
        let trimmed = scope.trim_end_matches("::");
        scope = match trimmed.rsplit_once("::") {
            Some((outer, _)) => format!("{outer}::"),
            None => String::new(),
        };
    }
}

/// The qualified names (`I::x`) a declaration's expressions use.
fn decl_refs(d: &Decl, out: &mut Vec<(Name, Span)>) {
    match &d.kind {
        DeclKind::Channel(_, Some(e)) | DeclKind::NameType(_, e) | DeclKind::PatBind(_, e) => {
            expr_refs(e, out)
        }
        DeclKind::DataType(_, clauses) => {
            for c in clauses {
                if let Some(f) = &c.fields {
                    expr_refs(f, out);
                }
            }
        }
        DeclKind::Function(_, clauses) => clauses.iter().for_each(|c| expr_refs(&c.body, out)),
        DeclKind::Timed(t) => t.decls.iter().for_each(|d| decl_refs(d, out)),
        _ => {}
    }
}

fn stmts_refs(stmts: &[Stmt], out: &mut Vec<(Name, Span)>) {
    for s in stmts {
        match s {
            Stmt::Generator(_, e) | Stmt::Qualifier(e) => expr_refs(e, out),
        }
    }
}

fn expr_refs(e: &Expr, out: &mut Vec<(Name, Span)>) {
    use ExprKind as K;
    let mut go = |x: &Expr| expr_refs(x, out);
    match &e.kind {
        K::Var(n) => {
            if n.contains("::") {
                out.push((n.clone(), e.span));
            }
        }
        K::Int(_) | K::Bool(_) | K::Char(_) | K::Str(_) | K::Wildcard => {}
        K::Map(pairs) => pairs.iter().for_each(|(a, b)| {
            expr_refs(a, out);
            expr_refs(b, out);
        }),
        K::Tuple(es) | K::SeqLit(es) | K::SetLit(es) | K::Productions(es) => es.iter().for_each(go),
        K::Dot(a, b) | K::Binary(_, a, b) | K::SeqRange(a, b) | K::SetRange(a, b) => {
            go(a);
            go(b);
        }
        K::Guard(a, b) | K::Proc(_, a, b) | K::Hide(a, b) | K::Project(a, b) => {
            go(a);
            go(b);
        }
        K::App(f, args) => {
            go(f);
            args.iter().for_each(go);
        }
        K::Unary(_, a) | K::SetFrom(a) | K::SeqFrom(a) => go(a),
        K::If(a, b, c) | K::SetProc(_, a, b, c) | K::Parallel(a, b, c) => {
            go(a);
            go(b);
            go(c);
        }
        K::AlphaParallel(a, b, c, d) => {
            go(a);
            go(b);
            go(c);
            go(d);
        }
        K::Let(l) => {
            l.decls.iter().for_each(|d| decl_refs(d, out));
            expr_refs(&l.body, out);
        }
        K::Lambda(l) => go(&l.body),
        K::SeqComp(es, st) | K::SetComp(es, st) | K::ProductionsComp(es, st) => {
            stmts_refs(st, out);
            es.iter().for_each(|x| expr_refs(x, out));
        }
        K::RangeComp(r, st) => {
            stmts_refs(st, out);
            expr_refs(r, out);
        }
        K::Prefix(p) => {
            expr_refs(&p.event, out);
            for f in &p.fields {
                match f {
                    Field::Output(x) => expr_refs(x, out),
                    Field::Input(_, s) | Field::NondetInput(_, s) => {
                        if let Some(s) = s {
                            expr_refs(s, out);
                        }
                    }
                }
            }
            expr_refs(&p.body, out);
        }
        K::Link(a, pairs, st, b) => {
            expr_refs(a, out);
            expr_refs(b, out);
            stmts_refs(st, out);
            pairs.iter().for_each(|(x, y)| {
                expr_refs(x, out);
                expr_refs(y, out);
            });
        }
        K::Rename(a, pairs, st) => {
            expr_refs(a, out);
            stmts_refs(st, out);
            pairs.iter().for_each(|(x, y)| {
                expr_refs(x, out);
                expr_refs(y, out);
            });
        }
        K::Replicated(op, st, body) => {
            stmts_refs(st, out);
            match op {
                RepOp::Parallel(a) | RepOp::AlphaParallel(a) | RepOp::SyncExtChoice(a) => {
                    expr_refs(a, out)
                }
                RepOp::Link(pairs, st2) => {
                    stmts_refs(st2, out);
                    pairs.iter().for_each(|(x, y)| {
                        expr_refs(x, out);
                        expr_refs(y, out);
                    });
                }
                _ => {}
            }
            expr_refs(body, out);
        }
        K::TimedHeader(..) | K::Timed(_) => {}
    }
}
