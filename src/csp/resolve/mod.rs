//! Name resolution and static checks.
//!
//! Builds the table of top-level definitions, resolves every name (unknown names, names
//! defined twice, names used outside the subset), checks the arity of calls to named
//! functions and processes, rejects repeated variables in one pattern or comprehension, and
//! computes the free variables of every closure-forming node (prefixes, lambdas, `let`
//! groups), which makes closures canonical: a closure holds exactly the bindings of its free
//! variables, and puts the declarations in dependency order (`order`). Checks that need values (fields of channels, membership in channel types) are
//! done by the evaluator, at load time where the expression is closed.

#![forbid(unsafe_code)]

mod arity;
mod definitions;
mod free_vars;
mod names;
mod order;
mod prefix_fields;
mod program;
mod recursion_sites;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::csp::error::{ErrorKind, RawError};
use crate::csp::syntax::ast::*;
use crate::csp::syntax::source::Span;
use crate::csp::value::Builtin;

use definitions::{add_definition, check_concat_patterns, pattern_vars};
use free_vars::{Free, Resolver};
use names::Local;
pub use names::COMPRESSIONS;
pub(crate) use order::dependency_order;
pub(crate) use program::*;
pub(crate) use recursion_sites::Site;

pub(super) type CResult<T> = Result<T, RawError>;

/// The names a declaration defines.
pub(super) fn decl_names(d: &Decl, is_constant: &dyn Fn(&Name) -> bool) -> Vec<Name> {
    match &d.kind {
        DeclKind::Channel(names, _) | DeclKind::Transparent(names) | DeclKind::External(names) => {
            names.iter().map(|n| n.name.clone()).collect()
        }
        DeclKind::DataType(name, clauses) => std::iter::once(name.name.clone())
            .chain(clauses.iter().map(|c| c.name.name.clone()))
            .collect(),
        DeclKind::NameType(name, _) | DeclKind::Function(name, _) => vec![name.name.clone()],
        DeclKind::PatBind(pat, _) => {
            if let PatKind::Var(n) = &pat.kind {
                return vec![n.clone()];
            }
            let mut names = Vec::new();
            pattern_vars(pat, &mut names);
            names
                .into_iter()
                .map(|(n, _)| n)
                .filter(|n| !is_constant(n))
                .collect()
        }
        DeclKind::Invalid(inv) => inv.names.iter().map(|n| n.name.clone()).collect(),
        DeclKind::Timed(t) => t
            .decls
            .iter()
            .flat_map(|d| decl_names(d, is_constant))
            .collect(),
        // flattened by the loader before resolution (`syntax::modules`)
        DeclKind::Assert(_) | DeclKind::Module(_) | DeclKind::Instance(..) => Vec::new(),
    }
}

/// The error recorded for a declaration the parser could not read.
fn invalid_error(inv: &InvalidDecl) -> RawError {
    let message = if inv.names.is_empty() {
        inv.message.clone()
    } else {
        let names: Vec<String> = inv.names.iter().map(|n| format!("`{}`", n.name)).collect();
        format!("{} could not be read: {}", names.join(", "), inv.message)
    };
    RawError::new(inv.error_span, inv.kind, message)
}

/// Builds and checks the program from the declarations of the script and its prelude
/// (prelude definitions apply only where the script does not define the name).
///
/// An error in one declaration does not fail the program: the names it defines are recorded
/// as broken (`Program::broken`), and an assertion that cannot be resolved keeps its error
/// (`AssertEntry::error`). Only an error in the prelude fails the whole check.
pub(crate) fn check(decls: &[Decl], prelude: &[Decl]) -> CResult<Program> {
    let mut p = Program::default();
    let mut first_def: HashMap<Name, Span> = HashMap::new();
    // Registers a top-level name; a second definition of a name breaks the name.
    let define = |p: &mut Program,
                  first_def: &mut HashMap<Name, Span>,
                  name: &Name,
                  span: Span,
                  kind: GlobalKind| {
        if first_def.contains_key(name) {
            p.break_names(
                std::slice::from_ref(name),
                RawError::new(
                    span,
                    ErrorKind::Duplicate,
                    format!("`{name}` is defined more than once"),
                ),
            );
            return;
        }
        first_def.insert(name.clone(), span);
        p.globals.insert(name.clone(), kind);
    };
    // pass 1: the names
    for d in decls {
        match &d.kind {
            DeclKind::Channel(names, ty) => {
                for n in names {
                    let id = p.channels.len() as u32;
                    p.channels.push(ChannelDef {
                        name: n.name.clone(),
                        span: n.span,
                        ty: ty.clone(),
                    });
                    define(
                        &mut p,
                        &mut first_def,
                        &n.name,
                        n.span,
                        GlobalKind::Chan(id),
                    );
                }
            }
            DeclKind::DataType(name, clauses) => {
                let dt = p.datatypes.len() as u32;
                let mut ctors = Vec::new();
                for c in clauses {
                    let id = p.ctors.len() as u32;
                    p.ctors.push(CtorDef {
                        name: c.name.name.clone(),
                        span: c.name.span,
                        datatype: dt,
                        fields: c.fields.clone(),
                    });
                    ctors.push(id);
                    let g = GlobalKind::Ctor(id);
                    define(&mut p, &mut first_def, &c.name.name, c.name.span, g);
                }
                p.datatypes.push(DataTypeDef {
                    name: name.name.clone(),
                    ctors,
                });
                let g = GlobalKind::DataType(dt);
                define(&mut p, &mut first_def, &name.name, name.span, g);
            }
            DeclKind::NameType(name, e) => {
                let id = p.nametypes.len() as u32;
                p.nametypes.push(NameTypeDef {
                    name: name.name.clone(),
                    expr: e.clone(),
                });
                let g = GlobalKind::NameType(id);
                define(&mut p, &mut first_def, &name.name, name.span, g);
            }
            // lowered by the loader before resolution (`syntax::timed`)
            DeclKind::Function(..) | DeclKind::PatBind(..) | DeclKind::Timed(_) => {}
            // flattened by the loader before resolution (`syntax::modules`)
            DeclKind::Module(_) | DeclKind::Instance(..) => {}
            DeclKind::Assert(a) => p.assertions.push(AssertEntry {
                decl: Some(a.clone()),
                span: d.span,
                error: None,
                refs: BTreeSet::new(),
            }),
            DeclKind::Transparent(names) => {
                for n in names {
                    let Some(c) = COMPRESSIONS.iter().find(|c| **c == &*n.name) else {
                        p.break_names(
                            std::slice::from_ref(&n.name),
                            RawError::new(
                                n.span,
                                ErrorKind::Unsupported,
                                format!(
                                    "the transparent function `{}` is outside weft's CSPm \
                                     subset (supported: {})",
                                    n.name,
                                    COMPRESSIONS.join(", ")
                                ),
                            ),
                        );
                        continue;
                    };
                    let g = GlobalKind::Compression(c);
                    define(&mut p, &mut first_def, &n.name, n.span, g);
                }
            }
            DeclKind::Invalid(inv) => {
                if inv.assertion {
                    p.assertions.push(AssertEntry {
                        decl: None,
                        span: d.span,
                        error: Some(invalid_error(inv)),
                        refs: BTreeSet::new(),
                    });
                } else {
                    let names: Vec<Name> = inv.names.iter().map(|n| n.name.clone()).collect();
                    p.break_names(&names, invalid_error(inv));
                }
            }
            DeclKind::External(names) => {
                for n in names {
                    if let Some(c) = COMPRESSIONS.iter().find(|c| **c == &*n.name) {
                        let g = GlobalKind::Compression(c);
                        define(&mut p, &mut first_def, &n.name, n.span, g);
                        continue;
                    }
                    if let Some(b) = names::external_builtin(&n.name) {
                        p.globals.insert(n.name.clone(), GlobalKind::Builtin(b));
                        continue;
                    }
                    if names::builtin_global(&n.name).is_some() {
                        // a built-in weft has: the declaration changes nothing
                        continue;
                    }
                    if names::unsupported_external(&n.name).is_some() {
                        // rejected where it is used (a script may declare it and not use it)
                        continue;
                    }
                    p.break_names(
                        std::slice::from_ref(&n.name),
                        RawError::new(
                            n.span,
                            ErrorKind::Unsupported,
                            format!(
                                "the external function `{}` is outside weft's CSPm subset",
                                n.name
                            ),
                        ),
                    );
                }
            }
        }
    }
    // definitions (after the types, so that constructor names in patterns are constants)
    let constants: BTreeSet<Name> = p
        .globals
        .iter()
        .filter(|(_, g)| matches!(g, GlobalKind::Chan(_) | GlobalKind::Ctor(_)))
        .map(|(n, _)| n.clone())
        .chain(["true".into(), "false".into()])
        .collect();
    let is_constant = |n: &Name| constants.contains(n);
    for d in decls {
        if let DeclKind::Function(..) | DeclKind::PatBind(..) = &d.kind {
            let before = p.top.defs.len();
            if let Err(e) = add_definition(&mut p.top, d, &is_constant) {
                let names = decl_names(d, &is_constant);
                p.break_names(&names, e);
            }
            for i in before..p.top.defs.len() {
                let (name, span) = (p.top.defs[i].name.clone(), p.top.defs[i].span);
                define(
                    &mut p,
                    &mut first_def,
                    &name,
                    span,
                    GlobalKind::Def(i as u32),
                );
            }
        }
    }
    // the prelude, where not overridden
    for d in prelude {
        if let DeclKind::Function(name, _) = &d.kind {
            if p.globals.contains_key(&name.name) || p.broken.contains_key(&name.name) {
                continue;
            }
            let before = p.top.defs.len();
            add_definition(&mut p.top, d, &is_constant)?;
            for i in before..p.top.defs.len() {
                let name = p.top.defs[i].name.clone();
                p.globals.insert(name, GlobalKind::Def(i as u32));
            }
        }
    }
    // pass 2: resolve every expression
    let mut r = Resolver {
        prog: &mut p,
        scope: Vec::new(),
        owner: Arc::from([]),
        refs: BTreeSet::new(),
        conditional: 0,
    };
    r.resolve_program(decls, &is_constant);
    let prelude_defs: Vec<&Decl> = prelude.iter().collect();
    for d in prelude_defs {
        if let DeclKind::Function(name, clauses) = &d.kind {
            if matches!(r.prog.globals.get(&name.name), Some(GlobalKind::Def(i))
                if r.prog.top.defs[*i as usize].span == name.span)
            {
                for c in clauses {
                    r.resolve_clause(c)?;
                }
            }
        }
    }
    p.order = dependency_order(&p.decl_refs);
    recursion_sites::record_sites(&mut p);
    Ok(p)
}
