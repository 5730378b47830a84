//! The checked program: the tables of top-level names, definitions, channels, datatypes,
//! assertions and closures that resolution fills and the evaluator reads.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::csp::error::RawError;
use crate::csp::syntax::ast::*;
use crate::csp::syntax::source::Span;
use crate::csp::value::Builtin;

use super::order::DeclGroup;
use super::recursion_sites::Site;

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
    /// `DIV`
    Div,
    /// `Proc`, the set of all processes
    ProcType,
    Int,
    Bool,
    /// The type `Char`.
    Char,
    /// The empty map `emptyMap`.
    EmptyMap,
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
    /// For a prefix some of whose input variables are not used after `->`, the input
    /// variables its body uses (in field order): the body is the same for every event that
    /// gives these the same values (`send?a?b?f -> P(f)`), so it is evaluated once for them.
    pub prefix_body_inputs: HashMap<u32, Arc<[Name]>>,
    pub lambdas: HashMap<u32, (Arc<LambdaExpr>, Arc<[Name]>)>,
    pub lets: HashMap<u32, LetInfo>,
    /// Prefixes with no free variables (their outputs are checked at load time).
    pub closed_prefixes: Vec<ClosedPrefix>,
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
    /// The declarations of `decl_refs` in dependency order, grouped into strongly connected
    /// components (see [`super::dependency_order`]).
    pub order: Vec<DeclGroup>,
    /// The names and calls written in transparent or tail positions of their definition's
    /// body, by expression id (see [`super::recursion_sites`]); every other one is opaque.
    pub sites: HashMap<u32, Site>,
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
    pub(super) fn break_names(&mut self, names: &[Name], error: RawError) {
        let k = self.errors.len();
        self.errors.push(error);
        for n in names {
            self.broken.entry(n.clone()).or_insert(k);
        }
    }
}

/// A prefix with no free variables, whose event and outputs the load checks.
#[derive(Clone, Debug)]
pub struct ClosedPrefix {
    /// The prefix's expression id.
    pub id: u32,
    /// The names of the top-level declaration it is written in.
    pub owner: Arc<[Name]>,
    /// Whether it is written where evaluation may never reach it even when its declaration
    /// is used: a branch of `if`, the process of a guard `b & P`, a `let`, a lambda, a
    /// replicated operator or comprehension, or a function with parameters.
    pub conditional: bool,
}
