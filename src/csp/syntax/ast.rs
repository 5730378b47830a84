//! The CSPm abstract syntax tree (weft's subset), with source spans.
//!
//! Every expression carries a [`Span`] and a numeric id unique within its script (ids are
//! assigned in parse order, so they are the same on every run). Nodes that become closures at
//! evaluation time (prefixes, lambdas, `let`) are reference counted so the evaluator can keep
//! them in tables.

use std::sync::Arc;

pub use super::lexer::Model;
use super::source::Span;

/// A name as written.
pub type Name = Arc<str>;

/// An identifier with its position.
#[derive(Clone, Debug)]
pub struct Ident {
    /// The name.
    pub name: Name,
    /// Where it is written.
    pub span: Span,
}

/// An expression node.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
    /// Unique id of the node within its script.
    pub id: u32,
}

/// Binary operators on values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    And,
    Or,
    Concat,
    /// `p1 @@ p2`: a pattern that matches a value both patterns match (only in patterns).
    Both,
}

impl BinOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Concat => "^",
            BinOp::Both => "@@",
        }
    }
}

/// Unary operators on values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `not e`
    Not,
    /// `#s`
    Len,
}

/// Binary process operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcOp {
    /// `P [] Q`
    ExtChoice,
    /// `P |~| Q`
    IntChoice,
    /// `P ||| Q`
    Interleave,
    /// `P ; Q`
    Seq,
    /// `P /\ Q`
    Interrupt,
    /// `P [> Q`
    Timeout,
}

impl ProcOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            ProcOp::ExtChoice => "[]",
            ProcOp::IntChoice => "|~|",
            ProcOp::Interleave => "|||",
            ProcOp::Seq => ";",
            ProcOp::Interrupt => "/\\",
            ProcOp::Timeout => "[>",
        }
    }
}

/// Replicated process operators.
#[derive(Clone, Debug)]
pub enum RepOp {
    /// `[] x:S @ P`
    ExtChoice,
    /// `|~| x:S @ P`
    IntChoice,
    /// `||| x:S @ P`
    Interleave,
    /// `; x:<s> @ P`
    Seq,
    /// `[|A|] x:S @ P`
    Parallel(Box<Expr>),
    /// `|| x:S @ [A] P`: the alphabet expression (evaluated per binding).
    AlphaParallel(Box<Expr>),
    /// `[+A+] x:S @ P`: synchronising external choice over the set `A`.
    SyncExtChoice(Box<Expr>),
    /// `[a <-> b, ... | stmts] x:<s> @ P`: link parallel chaining the processes of a
    /// sequence, each linked to the next by the pairs evaluated with the binding of the
    /// first of the two.
    Link(Vec<(Expr, Expr)>, Vec<Stmt>),
}

/// Process operators with an event set between two processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetProcOp {
    /// `P [| A |> Q`: exception (an event of `A` done by `P` hands over to `Q`).
    Exception,
    /// `P [+ A +] Q`: synchronising external choice.
    SyncExtChoice,
    /// `P /+ A +\ Q`: synchronising interrupt.
    SyncInterrupt,
}

impl SetProcOp {
    /// The opening and closing brackets of the operator as written.
    pub fn brackets(self) -> (&'static str, &'static str) {
        match self {
            SetProcOp::Exception => ("[|", "|>"),
            SetProcOp::SyncExtChoice => ("[+", "+]"),
            SetProcOp::SyncInterrupt => ("/+", "+\\"),
        }
    }
}

/// A comprehension or replication statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `p <- e` or `p : e`
    Generator(Pattern, Expr),
    /// A boolean condition.
    Qualifier(Expr),
}

/// A prefix field.
#[derive(Clone, Debug)]
pub enum Field {
    /// `!e`
    Output(Expr),
    /// `?p` or `?p:S`
    Input(Pattern, Option<Expr>),
    /// `$p` or `$p:S`: nondeterministic input (an internal choice over the values).
    NondetInput(Pattern, Option<Expr>),
}

/// `e fields -> body`
#[derive(Clone, Debug)]
pub struct PrefixExpr {
    /// The event expression before the fields (`c.1` in `c.1?x -> P`).
    pub event: Expr,
    /// `?`/`!` fields in order.
    pub fields: Vec<Field>,
    /// The process after the event.
    pub body: Expr,
}

/// `\ p1, p2 @ e`
#[derive(Clone, Debug)]
pub struct LambdaExpr {
    /// Parameter patterns.
    pub params: Vec<Pattern>,
    /// Body.
    pub body: Expr,
}

/// `let decls within e`
#[derive(Clone, Debug)]
pub struct LetExpr {
    /// Local definitions (functions, pattern bindings, transparent/external).
    pub decls: Vec<Decl>,
    /// Body.
    pub body: Expr,
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    Bool(bool),
    /// A character literal `'c'`.
    Char(char),
    /// A string literal `"..."` (a sequence of characters).
    Str(Name),
    /// A map literal `(| k => v, ... |)`.
    Map(Vec<(Expr, Expr)>),
    /// A name (variable, definition, channel, constructor, builtin).
    Var(Name),
    /// `_`: valid only where a pattern is expected.
    Wildcard,
    /// `(a, b, ...)`, at least two.
    Tuple(Vec<Expr>),
    /// `a.b`
    Dot(Box<Expr>, Box<Expr>),
    /// `f(args)`
    App(Box<Expr>, Vec<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Let(Arc<LetExpr>),
    Lambda(Arc<LambdaExpr>),
    /// `<a, b>`
    SeqLit(Vec<Expr>),
    /// `<e | stmts>`
    SeqComp(Vec<Expr>, Vec<Stmt>),
    /// `<m..n>`
    SeqRange(Box<Expr>, Box<Expr>),
    /// `{a, b}`
    SetLit(Vec<Expr>),
    /// `{e | stmts}`
    SetComp(Vec<Expr>, Vec<Stmt>),
    /// `{m..n}`
    SetRange(Box<Expr>, Box<Expr>),
    /// `{m..}`
    SetFrom(Box<Expr>),
    /// `<m..>`
    SeqFrom(Box<Expr>),
    /// `{r | stmts}` or `<r | stmts>` where `r` is a range (`SetRange`, `SetFrom`,
    /// `SeqRange` or `SeqFrom`): the union (concatenation) of the ranges.
    RangeComp(Box<Expr>, Vec<Stmt>),
    /// `{| c, d.1 |}`
    Productions(Vec<Expr>),
    /// `{| e | stmts |}`
    ProductionsComp(Vec<Expr>, Vec<Stmt>),
    // processes
    Prefix(Arc<PrefixExpr>),
    /// `b & P`
    Guard(Box<Expr>, Box<Expr>),
    Proc(ProcOp, Box<Expr>, Box<Expr>),
    /// `P \ A`
    Hide(Box<Expr>, Box<Expr>),
    /// `P |\ A`: projection (every event outside `A` hidden).
    Project(Box<Expr>, Box<Expr>),
    /// `P [| A |> Q`, `P [+ A +] Q`, `P /+ A +\ Q`.
    SetProc(SetProcOp, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `P [| A |] Q`
    Parallel(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `P [A || B] Q`
    AlphaParallel(Box<Expr>, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `P [a <-> b, ... | stmts] Q`
    Link(Box<Expr>, Vec<(Expr, Expr)>, Vec<Stmt>, Box<Expr>),
    /// `P [[a <- b, ... | stmts]]`
    Rename(Box<Expr>, Vec<(Expr, Expr)>, Vec<Stmt>),
    /// Replicated operators.
    Replicated(RepOp, Vec<Stmt>, Box<Expr>),
    /// The header of a timed section, the body of the hidden definition the lowering of
    /// the section makes (see [`super::timed`]): `tock` and the section's `et` function
    /// (`None` when the section has none), in the section's enclosing scope.
    TimedHeader(Box<Expr>, Option<Box<Expr>>),
    /// A process construct written in a timed section, given its tock-CSP meaning (made by
    /// the lowering of timed sections only).
    Timed(Arc<TimedExpr>),
}

/// A process construct of a timed section (see [`super::timed`]).
#[derive(Clone, Debug)]
pub struct TimedExpr {
    /// A reference to the hidden definition of the section's header (a `Var`).
    pub section: Expr,
    /// What it is.
    pub form: TimedForm,
}

/// The constructs whose meaning a timed section changes.
#[derive(Clone, Debug)]
pub enum TimedForm {
    /// A prefix (the `Prefix` expression, its parts already lowered): it lets time pass
    /// until its event, which takes `et(event)` tocks.
    Prefix(Expr),
    /// `STOP`: only time passes.
    Stop,
    /// `SKIP`: terminates, or lets time pass first.
    Skip,
    /// `WAIT(n)`: exactly `n` tocks, then `SKIP`.
    Wait(Expr),
    /// `timed_priority(P)`: tau and ✓ before `tock`.
    Priority(Expr),
    /// An operator that synchronises on `tock` in a timed section (`[]`, `|||`, `[|A|]`,
    /// `[A||B]`, `/\`, `b & P` and the replicated forms): the expression, its operands
    /// already lowered.
    Operator(Expr),
}

/// `Timed(et) { decls }` as written (the parser's output; the loader lowers it).
#[derive(Clone, Debug)]
pub struct TimedSection {
    /// Where the keyword `Timed` is.
    pub keyword: Span,
    /// The function giving each event's duration in tocks (`Timed { ... }` has none).
    pub et: Option<Expr>,
    /// The declarations inside.
    pub decls: Vec<Decl>,
}

/// A pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// What it matches.
    pub kind: PatKind,
    /// Where it is.
    pub span: Span,
}

/// Pattern kinds.
#[derive(Clone, Debug)]
pub enum PatKind {
    /// A name: binds a variable, or matches a channel/constructor constant of that name.
    Var(Name),
    Wildcard,
    Int(i64),
    Bool(bool),
    /// A character literal.
    Char(char),
    Tuple(Vec<Pattern>),
    /// `p1.p2....`, flattened.
    Dot(Vec<Pattern>),
    /// `<p1, ...>`
    Seq(Vec<Pattern>),
    /// `p1 ^ p2` (one side must be a sequence literal pattern)
    Concat(Box<Pattern>, Box<Pattern>),
    /// `p1 @@ p2`: matches a value both match, binding the variables of both.
    Both(Box<Pattern>, Box<Pattern>),
    /// `{}` or `{p}`
    Set(Vec<Pattern>),
}

impl Pattern {
    /// The length of every sequence this pattern matches, where that is fixed: a sequence
    /// literal `<p1, ..., pn>`, or a concatenation of such (`<x>^<y>`, which `<x>^<y>^s`
    /// has on its left as `^` associates to the left).
    pub fn fixed_seq_len(&self) -> Option<usize> {
        match &self.kind {
            PatKind::Seq(items) => Some(items.len()),
            PatKind::Concat(a, b) => Some(a.fixed_seq_len()? + b.fixed_seq_len()?),
            PatKind::Both(a, b) => a.fixed_seq_len().or_else(|| b.fixed_seq_len()),
            _ => None,
        }
    }
}

/// One clause of a function definition: `f(p1, p2)(p3) = body`.
#[derive(Clone, Debug)]
pub struct Clause {
    /// Parameter groups (curried application).
    pub groups: Vec<Vec<Pattern>>,
    /// Right-hand side.
    pub body: Expr,
    /// Span of the whole clause.
    pub span: Span,
}

/// A datatype constructor clause `C.T1.T2`.
#[derive(Clone, Debug)]
pub struct CtorClause {
    /// Constructor name.
    pub name: Ident,
    /// Field type expression, if any (a dotted product of sets).
    pub fields: Option<Expr>,
}

/// Semantic properties of `:[...]` assertions.
#[derive(Clone, Debug)]
pub enum Property {
    /// `:[deadlock free [M]]` (default FD).
    DeadlockFree(Model),
    /// `:[divergence free]`, `:[livelock free]`.
    DivergenceFree,
    /// `:[deterministic [M]]` (default FD).
    Deterministic(Model),
    /// `:[has trace [M]]: <...>` (default T).
    HasTrace(Model, Expr),
}

/// An assertion's body.
#[derive(Clone, Debug)]
pub enum AssertionKind {
    /// `Spec [M= Impl`
    Refinement {
        /// Left side.
        spec: Expr,
        /// The model.
        model: Model,
        /// Right side.
        imp: Expr,
    },
    /// `P :[property]`
    Property {
        /// The process.
        process: Expr,
        /// The property.
        property: Property,
    },
}

/// An `assert` declaration.
#[derive(Clone, Debug)]
pub struct AssertDecl {
    /// `assert not ...`
    pub negated: bool,
    /// What is asserted.
    pub kind: AssertionKind,
    /// `:[tau priority over]: A`: the set `A` whose events the checked process (the
    /// implementation of a refinement) may do only in states without tau.
    pub tau_priority: Option<Expr>,
}

/// Declaration kinds.
#[derive(Clone, Debug)]
pub enum DeclKind {
    /// `channel a, b : T`
    Channel(Vec<Ident>, Option<Expr>),
    /// `datatype D = A | B.T`
    DataType(Ident, Vec<CtorClause>),
    /// `nametype N = e`
    NameType(Ident, Expr),
    /// `f(p) = e` clauses of one function (adjacent clauses merged).
    Function(Ident, Vec<Clause>),
    /// `p = e` (includes simple constants `x = e`).
    PatBind(Pattern, Expr),
    /// `assert ...`
    Assert(AssertDecl),
    /// `transparent f, g`
    Transparent(Vec<Ident>),
    /// `external f, g`
    External(Vec<Ident>),
    /// `Timed(et) { ... }`: a timed section.
    Timed(TimedSection),
    /// `module M(params) ... exports ... endmodule` (flattened by the loader, see
    /// [`super::modules`]).
    Module(Arc<ModuleDecl>),
    /// `instance I = M(args)` (flattened by the loader).
    Instance(Ident, Ident, Vec<Expr>),
    /// A declaration the parser could not read (a construct weft does not support, or a
    /// syntax error it could recover from at the next declaration): it defines `names`, and
    /// any use of them, or the assertion it was, reports `error`.
    Invalid(InvalidDecl),
}

/// A module as written.
#[derive(Clone, Debug)]
pub struct ModuleDecl {
    /// Its name.
    pub name: Ident,
    /// Its parameters (`None` for a module without a parameter list).
    pub params: Option<Vec<Ident>>,
    /// The declarations before `exports`: visible only inside the module.
    pub private: Vec<Decl>,
    /// The declarations after `exports`: visible outside as `M::name`.
    pub exported: Vec<Decl>,
}

/// A declaration that could not be parsed, kept so that only what uses it fails.
#[derive(Clone, Debug)]
pub struct InvalidDecl {
    /// The names it would have defined (empty for an assertion or when they are unknown).
    pub names: Vec<Ident>,
    /// Whether it was an `assert`.
    pub assertion: bool,
    /// Broad category of the error.
    pub kind: crate::csp::ErrorKind,
    /// Where the error is.
    pub error_span: Span,
    /// What is wrong.
    pub message: String,
}

/// A declaration.
#[derive(Clone, Debug)]
pub struct Decl {
    /// What it declares.
    pub kind: DeclKind,
    /// Where it is.
    pub span: Span,
}
