//! Name resolution and static checks.
//!
//! Builds the table of top-level definitions, resolves every name (unknown names, names
//! defined twice, names used outside the subset), checks the arity of calls to named
//! functions and processes, rejects repeated variables in one pattern or comprehension, and
//! computes the free variables of every closure-forming node (prefixes, lambdas, `let`
//! groups), which makes closures canonical: a closure holds exactly the bindings of its free
//! variables. Checks that need values (fields of channels, membership in channel types) are
//! done by the evaluator, at load time where the expression is closed.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::ast::*;
use super::error::{ErrorKind, RawError};
use super::source::Span;
use super::value::Builtin;

/// The compression functions weft accepts (as the identity) when declared `transparent`.
/// (`normalise` is FDR2's name for `normal`.)
pub const COMPRESSIONS: [&str; 6] = [
    "normal",
    "normalise",
    "sbisim",
    "wbisim",
    "diamond",
    "explicate",
];

/// FDR built-ins that weft does not support, with the reason given to users.
const UNSUPPORTED_BUILTINS: &[(&str, &str)] = &[
    ("Seq", "the infinite type `Seq(...)`"),
    ("Proc", "the type `Proc`"),
    ("Char", "the type `Char`"),
    ("Event", "the type name `Event`"),
    ("error", "the built-in `error`"),
    ("show", "the built-in `show`"),
    ("prioritise", "the built-in `prioritise`"),
    ("prioritisepo", "the built-in `prioritisepo`"),
    ("chase", "the built-in `chase`"),
    ("chase_nocache", "the built-in `chase_nocache`"),
    ("mapFromList", "maps"),
    ("mapLookup", "maps"),
    ("mapMember", "maps"),
    ("mapToList", "maps"),
    ("mapUpdate", "maps"),
    ("mapUpdateMultiple", "maps"),
    ("mapDelete", "maps"),
    ("emptyMap", "maps"),
    ("Map", "maps"),
    ("WAIT", "timed CSP (`WAIT`)"),
    ("tock", "timed CSP (`tock`)"),
    ("timed_priority", "timed CSP (`timed_priority`)"),
    ("loop", "the built-in `loop`"),
    ("relational_image", "the built-in `relational_image`"),
    (
        "relational_inverse_image",
        "the built-in `relational_inverse_image`",
    ),
    ("transpose", "the built-in `transpose`"),
    ("mtransclose", "the built-in `mtransclose`"),
    ("DIV", "the built-in process `DIV`"),
    ("BUFFER", "the built-in process `BUFFER`"),
    ("WEAK_BUFFER", "the built-in process `WEAK_BUFFER`"),
    ("TSTOP", "timed CSP (`TSTOP`)"),
    ("TSKIP", "timed CSP (`TSKIP`)"),
];

/// What a top-level name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GlobalKind {
    Chan(u32),
    Ctor(u32),
    DataType(u32),
    NameType(u32),
    Def(u32),
    Builtin(Builtin),
    Stop,
    Skip,
    Int,
    Bool,
    Events,
    True,
    False,
    Compression(&'static str),
}

/// A definition (top level or in a `let` group).
#[derive(Debug)]
pub(crate) struct Def {
    pub name: Name,
    pub span: Span,
    pub kind: DefKind,
}

#[derive(Debug)]
pub(crate) enum DefKind {
    /// `f(p..)(q..) = e` clauses; `groups` are the group sizes.
    Function {
        clauses: Vec<Clause>,
        groups: Vec<usize>,
    },
    /// `x = e`
    Constant { expr: Expr },
    /// A name bound by the pattern binding with this index.
    Part { bind: u32 },
}

/// A pattern binding `(a, b) = e`.
#[derive(Debug)]
pub(crate) struct PatBindDef {
    pub pat: Pattern,
    pub expr: Expr,
}

/// Definitions of one scope (the top level or a `let` group).
#[derive(Debug, Default)]
pub(crate) struct DefGroup {
    pub defs: Vec<Def>,
    pub binds: Vec<PatBindDef>,
    pub index: HashMap<Name, u32>,
}

/// A `let` group: its definitions and free variables.
#[derive(Debug)]
pub(crate) struct LetInfo {
    pub group: DefGroup,
    pub free: Arc<[Name]>,
}

#[derive(Debug)]
pub(crate) struct ChannelDef {
    pub name: Name,
    pub span: Span,
    pub ty: Option<Expr>,
}

#[derive(Debug)]
pub(crate) struct CtorDef {
    pub name: Name,
    pub span: Span,
    pub datatype: u32,
    pub fields: Option<Expr>,
}

#[derive(Debug)]
pub(crate) struct DataTypeDef {
    pub name: Name,
    pub ctors: Vec<u32>,
}

#[derive(Debug)]
pub(crate) struct NameTypeDef {
    pub name: Name,
    pub expr: Expr,
}

/// A prefix node, its free variables (sorted) and its span.
pub(crate) type PrefixInfo = (Arc<PrefixExpr>, Arc<[Name]>, Span);

/// The checked program: everything the evaluator needs.
#[derive(Debug, Default)]
pub(crate) struct Program {
    pub globals: HashMap<Name, GlobalKind>,
    pub top: DefGroup,
    pub channels: Vec<ChannelDef>,
    pub ctors: Vec<CtorDef>,
    pub datatypes: Vec<DataTypeDef>,
    pub nametypes: Vec<NameTypeDef>,
    pub assertions: Vec<AssertEntry>,
    pub prefixes: HashMap<u32, PrefixInfo>,
    pub lambdas: HashMap<u32, (Arc<LambdaExpr>, Arc<[Name]>)>,
    pub lets: HashMap<u32, LetInfo>,
    /// Prefixes with no free variables (their outputs are checked at load time), each with
    /// the names of the top-level declaration it is written in.
    pub closed_prefixes: Vec<(u32, Arc<[Name]>)>,
    /// Notes for the user (compression functions applied as the identity).
    pub notes: Vec<(Span, String)>,
    /// Errors of the declarations that could not be resolved, in source order.
    pub errors: Vec<RawError>,
    /// The names whose declaration has an error (index into `errors`): every use of them
    /// reports it.
    pub broken: HashMap<Name, usize>,
    /// The names each top-level declaration (other than an assertion) defines, and the
    /// top-level names it refers to: an error in a name breaks the declarations referring
    /// to it.
    pub decl_refs: Vec<(Arc<[Name]>, BTreeSet<Name>)>,
}

/// An assertion of the script: its body, or the error that stops it from being checked.
#[derive(Debug)]
pub(crate) struct AssertEntry {
    /// The assertion (`None` when the parser could not read it).
    pub decl: Option<AssertDecl>,
    /// Where it is.
    pub span: Span,
    /// Why it cannot be checked, if it cannot.
    pub error: Option<RawError>,
    /// The top-level names it refers to.
    pub refs: BTreeSet<Name>,
}

impl Program {
    /// Records `error` as the error of the declaration defining `names` (a name keeps the
    /// first error recorded for it).
    fn break_names(&mut self, names: &[Name], error: RawError) {
        let k = self.errors.len();
        self.errors.push(error);
        for n in names {
            self.broken.entry(n.clone()).or_insert(k);
        }
    }
}

/// The names a declaration defines.
fn decl_names(d: &Decl, is_constant: &dyn Fn(&Name) -> bool) -> Vec<Name> {
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
        DeclKind::Assert(_) => Vec::new(),
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

type CResult<T> = Result<T, RawError>;

fn builtin_global(name: &str) -> Option<GlobalKind> {
    if let Some(b) = Builtin::ALL.iter().find(|b| b.name() == name) {
        return Some(GlobalKind::Builtin(*b));
    }
    Some(match name {
        "STOP" => GlobalKind::Stop,
        "SKIP" => GlobalKind::Skip,
        "Int" => GlobalKind::Int,
        "Bool" => GlobalKind::Bool,
        "Events" => GlobalKind::Events,
        "True" => GlobalKind::True,
        "False" => GlobalKind::False,
        _ => return None,
    })
}

/// A local name in scope, with the arity of its first argument group if it is a `let`
/// function.
#[derive(Clone)]
struct Local {
    name: Name,
    arity: Option<usize>,
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
            DeclKind::Function(..) | DeclKind::PatBind(..) => {}
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
                    p.notes.push((
                        n.span,
                        format!(
                            "`{c}` is applied as the identity: weft does not compress yet \
                             (the compression preserves the semantics)"
                        ),
                    ));
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
    Ok(p)
}

/// The candidate nearest to `name` in edit distance (insertions, deletions, substitutions
/// and transpositions of adjacent characters, ignoring case), if it is close: at most one
/// edit for names of three or four characters, two up to eight, three beyond; a name that
/// differs only in case always qualifies. Ties go to the candidate with fewer edits when case
/// counts, then to the first in alphabetical order.
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = match len {
        0..=2 => 0,
        3..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    let lower = name.to_lowercase();
    let mut best: Option<((usize, usize, &str), &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = edit_distance(&lower, &c.to_lowercase());
        if d > limit {
            continue;
        }
        let key = (d, edit_distance(name, c), c);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance between `a` and `b` (by characters).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows i-2, i-1 and i of the table
    let mut prev2 = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Adds the definitions of a function or pattern-binding declaration to `group`.
fn add_definition(
    group: &mut DefGroup,
    d: &Decl,
    is_constant: &dyn Fn(&Name) -> bool,
) -> CResult<()> {
    let push = |group: &mut DefGroup, name: Name, span: Span, kind: DefKind| -> CResult<()> {
        if group.index.contains_key(&name) {
            return Err(RawError::new(
                span,
                ErrorKind::Duplicate,
                format!("`{name}` is defined more than once"),
            ));
        }
        group.index.insert(name.clone(), group.defs.len() as u32);
        group.defs.push(Def { name, span, kind });
        Ok(())
    };
    match &d.kind {
        DeclKind::Function(name, clauses) => {
            let groups: Vec<usize> = clauses[0].groups.iter().map(Vec::len).collect();
            for c in clauses {
                let sizes: Vec<usize> = c.groups.iter().map(Vec::len).collect();
                if sizes != groups {
                    return Err(RawError::new(
                        c.span,
                        ErrorKind::Arity,
                        format!(
                            "this clause of `{}` has {} but its first clause has {}",
                            name.name,
                            describe_groups(&sizes),
                            describe_groups(&groups)
                        ),
                    ));
                }
            }
            push(
                group,
                name.name.clone(),
                name.span,
                DefKind::Function {
                    clauses: clauses.clone(),
                    groups,
                },
            )
        }
        DeclKind::PatBind(pat, expr) => {
            if let PatKind::Var(n) = &pat.kind {
                return push(
                    group,
                    n.clone(),
                    pat.span,
                    DefKind::Constant { expr: expr.clone() },
                );
            }
            let bind = group.binds.len() as u32;
            let mut names = Vec::new();
            pattern_vars(pat, &mut names);
            names.retain(|(n, _)| !is_constant(n));
            group.binds.push(PatBindDef {
                pat: pat.clone(),
                expr: expr.clone(),
            });
            for (n, span) in names {
                push(group, n, span, DefKind::Part { bind })?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn describe_groups(sizes: &[usize]) -> String {
    let parts: Vec<String> = sizes.iter().map(|n| format!("{n}")).collect();
    format!("argument groups of sizes ({})", parts.join(")("))
}

/// All variable names of a pattern (names that are constants are filtered by the caller's
/// context: at the point of definition every name in a pattern binds).
fn pattern_vars(p: &Pattern, out: &mut Vec<(Name, Span)>) {
    match &p.kind {
        PatKind::Var(n) => out.push((n.clone(), p.span)),
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            for q in ps {
                pattern_vars(q, out);
            }
        }
        PatKind::Concat(a, b) => {
            pattern_vars(a, out);
            pattern_vars(b, out);
        }
        PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) => {}
    }
}

/// `p ^ q` patterns need a sequence of fixed length on one side.
fn check_concat_patterns(p: &Pattern) -> CResult<()> {
    match &p.kind {
        PatKind::Concat(a, b) => {
            let fixed = |q: &Pattern| matches!(q.kind, PatKind::Seq(_));
            if !fixed(a) && !fixed(b) {
                return Err(RawError::new(
                    p.span,
                    ErrorKind::Syntax,
                    "a `^` pattern needs a sequence literal such as `<x>` on one side",
                ));
            }
            check_concat_patterns(a)?;
            check_concat_patterns(b)
        }
        PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
            ps.iter().try_for_each(check_concat_patterns)
        }
        _ => Ok(()),
    }
}

struct Resolver<'p> {
    prog: &'p mut Program,
    scope: Vec<Local>,
    /// The names of the top-level declaration being resolved.
    owner: Arc<[Name]>,
    /// The top-level names it refers to.
    refs: BTreeSet<Name>,
}

type Free = BTreeSet<Name>;

impl Resolver<'_> {
    /// Resolves every declaration; an error breaks the names of its declaration (or stops
    /// its assertion) and resolution goes on with the next one.
    fn resolve_program(&mut self, decls: &[Decl], is_constant: &dyn Fn(&Name) -> bool) {
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

    fn resolve_decl(&mut self, d: &Decl) -> CResult<()> {
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
            DeclKind::Assert(a) => match &a.kind {
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
            },
            _ => {}
        }
        Ok(())
    }

    fn resolve_clause(&mut self, c: &Clause) -> CResult<Free> {
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

    /// True if `name` used as a pattern is a constant (a channel or constructor) rather than
    /// a variable.
    fn is_constant_name(&self, name: &Name) -> bool {
        !self.scope.iter().any(|l| &l.name == name)
            && matches!(
                self.prog.globals.get(name),
                Some(
                    GlobalKind::Chan(_)
                        | GlobalKind::Ctor(_)
                        | GlobalKind::True
                        | GlobalKind::False
                )
            )
    }

    /// Binds the variables of `p` (pushing them on the scope); `bound` collects the names
    /// bound so far in the same binding group, to reject repeats.
    fn bind_pattern(&mut self, p: &Pattern, bound: &mut Vec<(Name, Span)>) -> CResult<()> {
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

    fn lookup_local(&self, name: &str) -> Option<&Local> {
        self.scope.iter().rev().find(|l| &*l.name == name)
    }

    fn resolve_name(&mut self, name: &Name, span: Span) -> CResult<Free> {
        if self.lookup_local(name).is_some() {
            return Ok(BTreeSet::from([name.clone()]));
        }
        if self.prog.globals.contains_key(name) || self.prog.broken.contains_key(name) {
            self.refs.insert(name.clone());
            return Ok(BTreeSet::new());
        }
        if let Some(g) = builtin_global(name) {
            self.refs.insert(name.clone());
            self.prog.globals.insert(name.clone(), g);
            return Ok(BTreeSet::new());
        }
        if COMPRESSIONS.contains(&&**name) {
            return Err(RawError::new(
                span,
                ErrorKind::UnknownName,
                format!("`{name}` must be declared first: `transparent {name}`"),
            ));
        }
        if let Some((_, what)) = UNSUPPORTED_BUILTINS.iter().find(|(n, _)| *n == &**name) {
            return Err(RawError::new(
                span,
                ErrorKind::Unsupported,
                format!("{what} is outside weft's CSPm subset"),
            ));
        }
        let suggestion = match self.nearest_name(name) {
            Some(n) => format!("; did you mean `{n}`?"),
            None => String::new(),
        };
        Err(RawError::new(
            span,
            ErrorKind::UnknownName,
            format!("unknown name `{name}`{suggestion}"),
        ))
    }

    /// The defined name nearest to the unknown `name`, if one is close enough to be a
    /// likely misspelling (see [`nearest`]).
    fn nearest_name(&self, name: &str) -> Option<Name> {
        let locals = self.scope.iter().map(|l| &*l.name);
        let globals = self.prog.globals.keys().map(|n| &**n);
        let broken = self.prog.broken.keys().map(|n| &**n);
        let builtins = Builtin::ALL.iter().map(|b| b.name());
        let fixed = [
            "STOP", "SKIP", "Int", "Bool", "Events", "True", "False", "true", "false",
        ];
        let candidates = locals
            .chain(globals)
            .chain(broken)
            .chain(builtins)
            .chain(fixed)
            .chain(COMPRESSIONS);
        nearest(name, candidates).map(Name::from)
    }

    fn resolve_all(&mut self, es: &[Expr]) -> CResult<Free> {
        let mut free = BTreeSet::new();
        for e in es {
            free.extend(self.resolve(e)?);
        }
        Ok(free)
    }

    /// Resolves statements (binding their variables on the scope; the caller truncates).
    fn resolve_stmts(&mut self, stmts: &[Stmt], bound: &mut Vec<(Name, Span)>) -> CResult<Free> {
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
    fn resolve_under_stmts(&mut self, stmts: &[Stmt], bodies: &[&Expr]) -> CResult<Free> {
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

    fn check_arity(&self, f: &Expr, nargs: usize, span: Span) -> CResult<()> {
        let ExprKind::Var(name) = &f.kind else {
            return Ok(());
        };
        let expected = if let Some(l) = self.lookup_local(name) {
            l.arity
        } else {
            match self.prog.globals.get(name) {
                Some(GlobalKind::Def(i)) => match &self.prog.top.defs[*i as usize].kind {
                    DefKind::Function { groups, .. } => Some(groups[0]),
                    _ => None,
                },
                Some(GlobalKind::Builtin(b)) => Some(b.arity()),
                Some(GlobalKind::Compression(_)) => Some(1),
                Some(GlobalKind::Chan(_)) | Some(GlobalKind::Ctor(_)) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Type,
                        format!("`{name}` is a channel or constructor: write `{name}.x`, not `{name}(x)`"),
                    ))
                }
                Some(GlobalKind::Stop) | Some(GlobalKind::Skip) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Arity,
                        format!("`{name}` takes no arguments"),
                    ))
                }
                _ => None,
            }
        };
        match expected {
            Some(k) if k != nargs => Err(RawError::new(
                span,
                ErrorKind::Arity,
                format!(
                    "`{name}` takes {k} argument{} but is given {nargs}",
                    if k == 1 { "" } else { "s" }
                ),
            )),
            _ => Ok(()),
        }
    }

    fn resolve(&mut self, e: &Expr) -> CResult<Free> {
        use ExprKind::*;
        match &e.kind {
            Int(_) | Bool(_) => Ok(BTreeSet::new()),
            Var(n) => self.resolve_name(n, e.span),
            Wildcard => Err(RawError::new(
                e.span,
                ErrorKind::Syntax,
                "`_` can only be used in a pattern",
            )),
            Tuple(es) | SeqLit(es) | SetLit(es) | Productions(es) => self.resolve_all(es),
            Dot(a, b)
            | Binary(_, a, b)
            | SeqRange(a, b)
            | SetRange(a, b)
            | Guard(a, b)
            | Proc(_, a, b)
            | Hide(a, b) => {
                let mut f = self.resolve(a)?;
                f.extend(self.resolve(b)?);
                Ok(f)
            }
            Unary(_, a) => self.resolve(a),
            App(f, args) => {
                self.check_arity(f, args.len(), e.span)?;
                let mut free = self.resolve(f)?;
                free.extend(self.resolve_all(args)?);
                Ok(free)
            }
            If(c, t, f) => {
                let mut free = self.resolve(c)?;
                free.extend(self.resolve(t)?);
                free.extend(self.resolve(f)?);
                Ok(free)
            }
            Parallel(p, a, q) => {
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
                self.resolve_under_stmts(stmts, &bodies)
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
                let mut free = self.resolve_under_stmts(stmts, &bodies)?;
                if let RepOp::Parallel(a) = op {
                    free.extend(self.resolve(a)?);
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
                    self.resolve(&l.body)
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
                            Field::Input(p, restriction) => {
                                if let Some(s) = restriction {
                                    let g = self.resolve(s)?;
                                    f.extend(g.into_iter().filter(|n| not_bound(n, &bound)));
                                }
                                self.bind_pattern(p, &mut bound)?;
                            }
                        }
                    }
                    let g = self.resolve(&pre.body)?;
                    f.extend(g.into_iter().filter(|n| not_bound(n, &bound)));
                    Ok(f)
                })();
                self.scope.truncate(mark);
                free.extend(r?);
                let list: Arc<[Name]> = free.iter().cloned().collect();
                if list.is_empty() {
                    self.prog.closed_prefixes.push((e.id, self.owner.clone()));
                }
                self.prog.prefixes.insert(e.id, (pre.clone(), list, e.span));
                Ok(free)
            }
            Let(l) => self.resolve_let(e, l),
        }
    }

    fn resolve_let(&mut self, e: &Expr, l: &Arc<LetExpr>) -> CResult<Free> {
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
