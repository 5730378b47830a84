//! Static type checking of CSPm (libcspm's type checker, in part): Hindley–Milner inference
//! over the resolved declarations with CSPm's types, and the check of type annotations
//! (`f :: (Int) -> Int`) against the inferred types.
//!
//! The checker runs after name resolution, on scripts without resolution errors, and rejects
//! a script with a positioned error ("Couldn't match expected type Int with actual type
//! Bool"). It must never reject a script FDR accepts: whatever it cannot type with certainty
//! (dotted values other than a channel or constructor given fields of certain types (see
//! `dots`), dot types, productions and `extensions`, timed sections, compression and
//! external functions, the prelude) gets the type [`types::Ty::Any`], which unifies with
//! every type. Top-level definitions are generalised (in dependency order, one strongly
//! connected group at a time); `let` definitions are monomorphic unless annotated, as in
//! libcspm.

#![forbid(unsafe_code)]

mod annotations;
mod classes;
mod dots;
mod infer;
mod modules;
mod productions;
mod toplevel;
mod types;

use std::collections::HashMap;

use crate::csp::error::RawError;
use crate::csp::resolve::Program;
use crate::csp::syntax::ast::Name;
use crate::csp::syntax::parser::RawAnnotation;

pub(crate) use modules::check_modules;
use types::{Class, Ty, Vars};

type CResult<T> = Result<T, RawError>;

/// A type scheme: a type with the flexible and rigid variables each use instantiates afresh.
#[derive(Clone, Debug)]
pub(super) struct Scheme {
    generic: Vec<u32>,
    rigid: Vec<u32>,
    ty: Ty,
}

impl Scheme {
    fn mono(ty: Ty) -> Scheme {
        Scheme {
            generic: Vec::new(),
            rigid: Vec::new(),
            ty,
        }
    }
}

/// The state of the checker.
pub(super) struct Checker<'p> {
    prog: &'p Program,
    vars: Vars,
    /// Local names, innermost last.
    scope: Vec<(Name, Scheme)>,
    /// Top-level names typed so far.
    globals: HashMap<Name, Scheme>,
    /// The annotations of each `let` (by the position of its keyword).
    let_annotations: HashMap<(u32, u32), Vec<&'p RawAnnotation>>,
    /// The rigid variables of the annotations being checked, by name.
    rigid_names: HashMap<String, Ty>,
    /// The fields of channels and constructors written as the empty set (directly or as a
    /// constant): their type must be fixed by the end (libcspm's "ambiguous type").
    empty_fields: Vec<(crate::csp::syntax::source::Span, Name, Ty)>,
    /// Dot patterns whose first part is a variable or `_` (`x.y`, `_.b`), with their type:
    /// it must not be a datatype's or events' by the end (see `check_dot_heads`).
    dot_heads: Vec<(crate::csp::syntax::source::Span, Ty)>,
    /// The `Eq` and `Ord` requirements (`==`, `<`) met in the group being typed, checked
    /// again at its end: a datatype of the group may turn out to have no equality.
    class_checks: Vec<(Class, Ty, crate::csp::syntax::source::Span)>,
    /// Variables dotted after a channel or constructor with more parts after them (`x` in
    /// `e.x.y`), with the type of the field they take (see `check_shortest_matches`).
    shortest_matches: Vec<(crate::csp::syntax::source::Span, Ty, Ty)>,
    /// The types of the local variables given to a productions set as they are (`x` in
    /// `{| x |}`): libcspm makes each a value with fields left (see `check_first_fields`).
    extendable_locals: Vec<Ty>,
    /// Dotted values headed by a local variable (`x.y`): the type of the variable, the type
    /// of the part after it and where that part is (see `check_first_fields`).
    dotted_locals: Vec<(Ty, Ty, crate::csp::syntax::source::Span)>,
}

/// Type checks the resolved program `prog` with the annotations read by the parser;
/// `user_defs` is the number of the program's definitions that are the script's (the rest
/// are the prelude's).
pub(crate) fn check(
    prog: &Program,
    annotations: &[RawAnnotation],
    user_defs: usize,
) -> Result<(), RawError> {
    let mut checker = Checker {
        prog,
        vars: Vars::default(),
        scope: Vec::new(),
        globals: HashMap::new(),
        let_annotations: HashMap::new(),
        rigid_names: HashMap::new(),
        empty_fields: Vec::new(),
        dot_heads: Vec::new(),
        class_checks: Vec::new(),
        shortest_matches: Vec::new(),
        extendable_locals: Vec::new(),
        dotted_locals: Vec::new(),
    };
    let qualified = module_annotations(prog, annotations);
    let mut top: Vec<&RawAnnotation> = qualified.iter().collect();
    let mut seen = std::collections::HashSet::new();
    for a in annotations {
        // an annotation read twice (the parser may read a declaration again) counts once
        let Some(first) = a.names.first() else {
            continue;
        };
        if !seen.insert((first.span.file, first.span.lo)) {
            continue;
        }
        match a.scope {
            crate::csp::syntax::parser::AnnotationScope::Top => top.push(a),
            crate::csp::syntax::parser::AnnotationScope::Let(s) => checker
                .let_annotations
                .entry((s.file, s.lo))
                .or_default()
                .push(a),
            crate::csp::syntax::parser::AnnotationScope::Module(_) => {}
        }
    }
    // the prelude's definitions are not typed
    for d in prog.top.defs.iter().skip(user_defs) {
        checker
            .globals
            .insert(d.name.clone(), Scheme::mono(Ty::Any));
    }
    checker.top_level(&top)
}

/// The annotations written inside modules, as top-level annotations of the flattened names
/// they annotate (`f :: T` in module `M` annotates `M::f`, or each instance's copy of `f`).
/// The definitions annotated are those of that name whose text is inside the module. An
/// annotation is left unchecked where that is not certain: no such definition, definitions
/// at different places (a nested module's `f` beside the module's own), or a type that names
/// something a module declares (which the flattened program knows under another name).
fn module_annotations(prog: &Program, annotations: &[RawAnnotation]) -> Vec<RawAnnotation> {
    use crate::csp::syntax::lexer::Tok;
    use crate::csp::syntax::modules::PRIVATE_SUFFIX;
    let simple = |name: &str| -> String {
        let name = name.strip_suffix(PRIVATE_SUFFIX).unwrap_or(name);
        name.rsplit("::").next().unwrap_or(name).to_string()
    };
    let module_names: std::collections::HashSet<String> = prog
        .globals
        .keys()
        .filter(|g| g.contains("::"))
        .map(|g| simple(&g[..]))
        .collect();
    let mut out = Vec::new();
    // an annotation read twice (the parser may read a declaration again) counts once
    let mut seen = std::collections::HashSet::new();
    for a in annotations {
        let crate::csp::syntax::parser::AnnotationScope::Module(Some(extent)) = a.scope else {
            continue;
        };
        let names_module_decl = a.tokens.iter().any(|t| match &t.tok {
            Tok::Ident(x) => module_names.contains(x.as_str()),
            _ => false,
        });
        if names_module_decl {
            continue;
        }
        for n in &a.names {
            let defs: Vec<_> = prog
                .top
                .defs
                .iter()
                .filter(|d| {
                    d.name.contains("::")
                        && simple(&d.name) == *n.name
                        && d.span.file == extent.file
                        && extent.lo <= d.span.lo
                        && d.span.hi <= extent.hi
                })
                .collect();
            let first = defs.first().map(|d| (d.span.lo, d.span.hi));
            if defs.iter().any(|d| Some((d.span.lo, d.span.hi)) != first) {
                continue;
            }
            for d in defs {
                if !seen.insert((n.span.file, n.span.lo, d.name.clone())) {
                    continue;
                }
                out.push(RawAnnotation {
                    names: vec![crate::csp::syntax::ast::Ident {
                        name: d.name.clone(),
                        span: n.span,
                    }],
                    tokens: a.tokens.clone(),
                    scope: crate::csp::syntax::parser::AnnotationScope::Top,
                });
            }
        }
    }
    out
}
