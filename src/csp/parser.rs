//! The CSPm parser: tokens to [`ast`](super::ast) declarations, resolving `include`.
//!
//! Operator precedence and associativity follow libcspm's grammar (the parser FDR uses), from
//! loosest to tightest: `|||`; the parallel operators `[| |]`, `[ || ]`, `[ <-> ]`
//! (non-associative); `|~|`; `[]`; `/\`; `[>`; `;`; `\`; `->` and `&` (right); the prefix fields
//! `?` `!`; `.` (right); `or`; `and`; `not`; comparisons (non-associative); `+ -`; `* / %`; `#`;
//! `^`; application and renaming. `if`, `let`, lambdas and replicated operators extend as far
//! to the right as possible. Hiding binds tighter than the other binary process operators, as in
//! current libcspm (its test `hide_parsing` reads `STOP \ {c} ||| STOP` as
//! `(STOP \ {c}) ||| STOP`).
//!
//! Inside a sequence `<...>` a `>` closes the sequence unless it is nested in other brackets,
//! as in libcspm. Line breaks end declarations as described in [`lexer`](super::lexer).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ast::*;
use super::error::{CspError, ErrorKind, RawError};
use super::lexer::{lex, Tok, Token};
use super::source::{SourceMap, Span};

/// Deepest nesting of expressions the parser accepts.
pub const MAX_NESTING: usize = 200;
/// Deepest chain of `include`s.
pub const MAX_INCLUDE_DEPTH: usize = 32;

pub(crate) const L_INTERLEAVE: u8 = 1;
pub(crate) const L_PAR: u8 = 2;
pub(crate) const L_INTCHOICE: u8 = 3;
pub(crate) const L_EXTCHOICE: u8 = 4;
pub(crate) const L_INTERRUPT: u8 = 5;
pub(crate) const L_TIMEOUT: u8 = 6;
pub(crate) const L_SEQ: u8 = 7;
pub(crate) const L_HIDE: u8 = 8;
pub(crate) const L_PREFIX: u8 = 9;
pub(crate) const L_FIELD: u8 = 10;
pub(crate) const L_DOT: u8 = 11;
pub(crate) const L_OR: u8 = 13;
pub(crate) const L_AND: u8 = 14;
pub(crate) const L_NOT: u8 = 15;
pub(crate) const L_CMP: u8 = 16;
pub(crate) const L_ADD: u8 = 17;
pub(crate) const L_MUL: u8 = 18;
pub(crate) const L_HASH: u8 = 19;
pub(crate) const L_CAT: u8 = 20;
pub(crate) const L_APP: u8 = 21;

/// Binding strength of an expression's top operator (used by the pretty-printer).
pub fn expr_level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Proc(op, ..) => match op {
            ProcOp::Interleave => L_INTERLEAVE,
            ProcOp::IntChoice => L_INTCHOICE,
            ProcOp::ExtChoice => L_EXTCHOICE,
            ProcOp::Interrupt => L_INTERRUPT,
            ProcOp::Timeout => L_TIMEOUT,
            ProcOp::Seq => L_SEQ,
        },
        ExprKind::Parallel(..) | ExprKind::AlphaParallel(..) | ExprKind::Link(..) => L_PAR,
        ExprKind::Hide(..) => L_HIDE,
        ExprKind::Prefix(_) | ExprKind::Guard(..) => L_PREFIX,
        ExprKind::Dot(..) => L_DOT,
        ExprKind::Binary(op, ..) => match op {
            BinOp::Or => L_OR,
            BinOp::And => L_AND,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => L_CMP,
            BinOp::Add | BinOp::Sub => L_ADD,
            BinOp::Mul | BinOp::Div | BinOp::Mod => L_MUL,
            BinOp::Concat => L_CAT,
        },
        ExprKind::Unary(UnOp::Not, _) => L_NOT,
        ExprKind::Unary(UnOp::Neg, _) => L_ADD,
        ExprKind::Unary(UnOp::Len, _) => L_HASH,
        ExprKind::If(..) | ExprKind::Let(_) | ExprKind::Lambda(_) | ExprKind::Replicated(..) => 0,
        _ => L_APP + 1,
    }
}

/// Shared state of one parse: the files read so far and the next node id.
pub(crate) struct ParseContext {
    pub sources: SourceMap,
    pub next_id: u32,
    include_stack: Vec<PathBuf>,
}

impl ParseContext {
    pub fn new() -> Self {
        ParseContext {
            sources: SourceMap::new(),
            next_id: 0,
            include_stack: Vec::new(),
        }
    }
}

fn read_source(path: &Path) -> Result<String, CspError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CspError::unpositioned(
            ErrorKind::Io,
            format!("cannot read `{}`: {e}", path.display()),
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Stack size of the thread the public parsing functions run on (the parser is recursive).
pub const PARSE_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a thread with a [`PARSE_STACK_BYTES`] stack (panics are passed on).
pub(crate) fn with_parse_stack<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CspError> + Send + 'static,
) -> Result<T, CspError> {
    let handle = std::thread::Builder::new()
        .name("weft-csp-parse".into())
        .stack_size(PARSE_STACK_BYTES)
        .spawn(f)
        .map_err(|e| {
            CspError::unpositioned(ErrorKind::Limit, format!("cannot start the parser: {e}"))
        })?;
    handle
        .join()
        .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

/// Parses the script at `path` and everything it includes.
pub fn parse_file(path: &Path) -> Result<(SourceMap, Vec<Decl>), CspError> {
    let path = path.to_path_buf();
    with_parse_stack(move || {
        let mut ctx = ParseContext::new();
        let decls = parse_file_in(&mut ctx, &path, None)?;
        Ok((ctx.sources, decls))
    })
}

/// Parses script text; `name` is used in messages and includes resolve relative to `base_dir`.
pub fn parse_str(
    name: &str,
    text: &str,
    base_dir: &Path,
) -> Result<(SourceMap, Vec<Decl>), CspError> {
    let (name, text, path) = (name.to_string(), text.to_string(), base_dir.join(name));
    with_parse_stack(move || {
        let mut ctx = ParseContext::new();
        let decls = parse_text_in(&mut ctx, &path, name, text)?;
        Ok((ctx.sources, decls))
    })
}

/// Parses one expression (for tests and interactive use).
pub fn parse_expression(text: &str) -> Result<(SourceMap, Expr), CspError> {
    let text = text.to_string();
    with_parse_stack(move || parse_expression_here(&text))
}

fn parse_expression_here(text: &str) -> Result<(SourceMap, Expr), CspError> {
    let mut ctx = ParseContext::new();
    let file = ctx.sources.add(
        Path::new("<expression>"),
        "<expression>".into(),
        text.into(),
    );
    let tokens = lex(file, text).map_err(|e| e.resolve(&ctx.sources))?;
    let mut p = Parser::new(tokens, &mut ctx, file);
    let r = p.parse_expr(0).and_then(|e| {
        if p.peek() != &Tok::Eof {
            Err(p.unexpected("the end of the expression"))
        } else {
            Ok(e)
        }
    });
    match r {
        Ok(e) => Ok((ctx.sources, e)),
        Err(e) => Err(e.resolve(&ctx.sources)),
    }
}

/// Parses the file at `path` into `ctx` (used by the loader).
pub(crate) fn parse_file_in_context(
    ctx: &mut ParseContext,
    path: &Path,
) -> Result<Vec<Decl>, CspError> {
    parse_file_in(ctx, path, None)
}

/// Parses `text` as the file `path` into `ctx` (used by the loader).
pub(crate) fn parse_text_in_context(
    ctx: &mut ParseContext,
    path: &Path,
    name: String,
    text: String,
) -> Result<Vec<Decl>, CspError> {
    parse_text_in(ctx, path, name, text)
}

fn parse_file_in(
    ctx: &mut ParseContext,
    path: &Path,
    include_span: Option<Span>,
) -> Result<Vec<Decl>, CspError> {
    let text = match read_source(path) {
        Ok(t) => t,
        Err(e) => {
            return Err(match include_span {
                Some(span) => CspError::at(&ctx.sources, span, ErrorKind::Io, e.message),
                None => e,
            })
        }
    };
    parse_text_in(ctx, path, path.display().to_string(), text)
}

fn parse_text_in(
    ctx: &mut ParseContext,
    path: &Path,
    name: String,
    text: String,
) -> Result<Vec<Decl>, CspError> {
    let file = ctx.sources.add(path, name, text);
    let text = ctx.sources.file(file).text.clone();
    let tokens = lex(file, &text).map_err(|e| e.resolve(&ctx.sources))?;
    ctx.include_stack.push(path.to_path_buf());
    let mut p = Parser::new(tokens, ctx, file);
    let result = p.parse_decls();
    let includes_error = p.include_error.take();
    ctx.include_stack.pop();
    match (result, includes_error) {
        (_, Some(e)) => Err(e),
        (Ok(d), None) => Ok(d),
        (Err(e), None) => Err(e.resolve(&ctx.sources)),
    }
}

type PResult<T> = Result<T, RawError>;

/// The pairs of a renaming or link parallel and its comprehension statements.
type PairsAndStmts = (Vec<(Expr, Expr)>, Vec<Stmt>);

struct Parser<'c> {
    tokens: Vec<Token>,
    pos: usize,
    ctx: &'c mut ParseContext,
    file: u32,
    depth: usize,
    /// Per bracket nesting level: how many sequences `<` are open, and the loosest operator
    /// the trailing body of `if`/`let`/lambda may contain (`->` is excluded inside prefix
    /// fields, so that `c!if b then x else y -> P` reads as ProB and FDR users expect).
    seq_stack: Vec<(u32, u8)>,
    /// An error from an included file (already resolved against its own file).
    include_error: Option<CspError>,
}

fn unsupported(span: Span, what: &str) -> RawError {
    RawError::new(
        span,
        ErrorKind::Unsupported,
        format!("{what} is outside weft's CSPm subset"),
    )
}

impl<'c> Parser<'c> {
    fn new(tokens: Vec<Token>, ctx: &'c mut ParseContext, file: u32) -> Self {
        Parser {
            tokens,
            pos: 0,
            ctx,
            file,
            depth: 0,
            seq_stack: vec![(0, 0)],
            include_error: None,
        }
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.tokens[0].span
        } else {
            self.tokens[self.pos - 1].span
        }
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    /// A line break before the current token ends the current declaration.
    fn at_boundary(&self) -> bool {
        let cur = &self.tokens[self.pos];
        if cur.tok == Tok::Eof {
            return true;
        }
        cur.newline_before
            && self.pos > 0
            && !self.tokens[self.pos - 1].tok.continues_after()
            && !cur.tok.continues_before()
    }

    fn unexpected(&self, expected: &str) -> RawError {
        let t = &self.tokens[self.pos];
        if let Tok::Unsupported(what) = &t.tok {
            return unsupported(t.span, &format!("the operator {what}"));
        }
        let found = if self.at_boundary() && t.tok != Tok::Eof {
            format!("a new line before {}", t.tok.describe())
        } else {
            t.tok.describe()
        };
        RawError::new(
            t.span,
            ErrorKind::Syntax,
            format!("expected {expected}, found {found}"),
        )
    }

    fn expect(&mut self, t: &Tok, expected: &str) -> PResult<Span> {
        if self.peek() == t {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident {
                    name: name.into(),
                    span,
                })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = self.ctx.next_id;
        self.ctx.next_id += 1;
        Expr { kind, span, id }
    }

    fn open_bracket(&mut self) {
        self.seq_stack.push((0, 0));
    }

    fn close_bracket(&mut self) {
        if self.seq_stack.len() > 1 {
            self.seq_stack.pop();
        }
    }

    fn in_sequence(&self) -> bool {
        self.seq_stack.last().map_or(0, |t| t.0) > 0
    }

    /// The minimum level for the trailing body of `if`, `let` and lambdas here.
    fn body_min(&self) -> u8 {
        self.seq_stack.last().map_or(0, |t| t.1)
    }

    /// Parses a prefix field's expression at `level`, bounding trailing bodies before `->`.
    fn parse_field_expr(&mut self, level: u8) -> PResult<Expr> {
        let saved = self.seq_stack.last().map_or(0, |t| t.1);
        if let Some(top) = self.seq_stack.last_mut() {
            top.1 = L_DOT;
        }
        let r = self.parse_expr(level);
        if let Some(top) = self.seq_stack.last_mut() {
            top.1 = saved;
        }
        r
    }

    // ---------------------------------------------------------------- declarations

    fn parse_decls(&mut self) -> PResult<Vec<Decl>> {
        let mut decls: Vec<Decl> = Vec::new();
        while self.peek() != &Tok::Eof {
            if self.peek() == &Tok::Include {
                let span = self.bump().span;
                let (name, name_span) = match self.peek().clone() {
                    Tok::Str(s) => (s, self.bump().span),
                    _ => return Err(self.unexpected("a quoted file name after `include`")),
                };
                self.end_of_decl()?;
                let included = self.include(&name, span.to(name_span))?;
                decls.extend(included);
                continue;
            }
            let d = self.parse_decl(true)?;
            self.end_of_decl()?;
            push_decl(&mut decls, d);
        }
        Ok(decls)
    }

    fn end_of_decl(&self) -> PResult<()> {
        if self.peek() == &Tok::Eof || self.at_boundary() {
            Ok(())
        } else {
            Err(self.unexpected("an operator or the end of the declaration"))
        }
    }

    fn include(&mut self, name: &str, span: Span) -> PResult<Vec<Decl>> {
        let base = self
            .ctx
            .sources
            .file(self.file)
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let path = base.join(name);
        if self.ctx.include_stack.len() >= MAX_INCLUDE_DEPTH
            || self.ctx.include_stack.iter().any(|p| p == &path)
        {
            return Err(RawError::new(
                span,
                ErrorKind::Limit,
                format!("`include \"{name}\"` includes itself (directly or through other files)"),
            ));
        }
        match parse_file_in(self.ctx, &path, Some(span)) {
            Ok(d) => Ok(d),
            Err(e) => {
                let msg = e.message.clone();
                self.include_error = Some(e);
                Err(RawError::new(span, ErrorKind::Syntax, msg))
            }
        }
    }

    fn parse_decl(&mut self, top: bool) -> PResult<Decl> {
        let start = self.span();
        let tok = self.peek().clone();
        let not_in_let = |p: &Self, what: &str| -> PResult<()> {
            if top {
                Ok(())
            } else {
                Err(RawError::new(
                    p.span(),
                    ErrorKind::Syntax,
                    format!("{what} declarations are not allowed inside `let`"),
                ))
            }
        };
        let kind = match tok {
            Tok::Channel => {
                not_in_let(self, "channel")?;
                self.bump();
                let mut names = vec![self.ident("a channel name")?];
                while self.eat(&Tok::Comma) {
                    names.push(self.ident("a channel name")?);
                }
                let ty = if self.eat(&Tok::Colon) {
                    Some(self.parse_expr(0)?)
                } else {
                    None
                };
                DeclKind::Channel(names, ty)
            }
            Tok::Datatype => {
                not_in_let(self, "datatype")?;
                self.bump();
                let name = self.ident("a datatype name")?;
                self.expect(&Tok::Define, "`=` after the datatype name")?;
                let mut clauses = Vec::new();
                loop {
                    let cname = self.ident("a constructor name")?;
                    let fields = if self.eat(&Tok::Dot) {
                        Some(self.parse_expr(L_DOT)?)
                    } else {
                        None
                    };
                    clauses.push(CtorClause {
                        name: cname,
                        fields,
                    });
                    if !self.eat(&Tok::Pipe) {
                        break;
                    }
                }
                DeclKind::DataType(name, clauses)
            }
            Tok::Nametype => {
                not_in_let(self, "nametype")?;
                self.bump();
                let name = self.ident("a type name")?;
                self.expect(&Tok::Define, "`=` after the nametype name")?;
                DeclKind::NameType(name, self.parse_expr(0)?)
            }
            Tok::Assert => {
                not_in_let(self, "assert")?;
                self.bump();
                DeclKind::Assert(self.parse_assertion()?)
            }
            Tok::Transparent | Tok::External => {
                self.bump();
                let mut names = vec![self.ident("a function name")?];
                while self.eat(&Tok::Comma) {
                    names.push(self.ident("a function name")?);
                }
                if tok == Tok::Transparent {
                    DeclKind::Transparent(names)
                } else {
                    DeclKind::External(names)
                }
            }
            Tok::Subtype => return Err(unsupported(start, "`subtype`")),
            Tok::Module | Tok::Exports | Tok::EndModule | Tok::Instance => {
                return Err(unsupported(start, "modules (`module`/`instance`)"))
            }
            Tok::Timed => return Err(unsupported(start, "a timed section (`Timed`)")),
            Tok::Print => return Err(unsupported(start, "`print`")),
            Tok::Include => {
                return Err(RawError::new(
                    start,
                    ErrorKind::Syntax,
                    "`include` is only allowed at the top level of a file",
                ))
            }
            _ => {
                let lhs = self.parse_expr(0)?;
                if self.peek() != &Tok::Define {
                    let found = self.unexpected("`=`").message;
                    return Err(RawError::new(
                        lhs.span,
                        ErrorKind::Syntax,
                        format!(
                            "a declaration must be a definition `name = ...`: {found} after this expression"
                        ),
                    ));
                }
                self.bump();
                let rhs = self.parse_expr(0)?;
                let span = lhs.span.to(rhs.span);
                return Ok(Decl {
                    kind: definition(lhs, rhs, span)?,
                    span,
                });
            }
        };
        Ok(Decl {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    fn parse_assertion(&mut self) -> PResult<AssertDecl> {
        let negated = self.eat(&Tok::Not);
        let process = self.parse_expr(0)?;
        let kind = match self.peek().clone() {
            Tok::Refines(model) => {
                self.bump();
                let imp = self.parse_expr(0)?;
                AssertionKind::Refinement {
                    spec: process,
                    model,
                    imp,
                }
            }
            Tok::RefinesOther(m) => {
                return Err(unsupported(
                    self.span(),
                    &format!("refinement in the `[{m}=` model"),
                ))
            }
            Tok::Property { name, model } => {
                let span = self.bump().span;
                let model = match model.as_deref() {
                    None => None,
                    Some("T") => Some(Model::Traces),
                    Some("F") => Some(Model::Failures),
                    Some("FD") => Some(Model::FailuresDivergences),
                    Some(other) => {
                        return Err(unsupported(span, &format!("the model `[{other}]`")));
                    }
                };
                let property = match name.as_str() {
                    "deadlock free" => {
                        Property::DeadlockFree(model.unwrap_or(Model::FailuresDivergences))
                    }
                    "divergence free" | "livelock free" => Property::DivergenceFree,
                    "deterministic" => {
                        Property::Deterministic(model.unwrap_or(Model::FailuresDivergences))
                    }
                    "has trace" => {
                        let trace = self.parse_expr(0)?;
                        Property::HasTrace(model.unwrap_or(Model::Traces), trace)
                    }
                    other => {
                        return Err(unsupported(span, &format!("the assertion `:[{other}]`")));
                    }
                };
                AssertionKind::Property { process, property }
            }
            _ => return Err(self.unexpected("`[T=`, `[F=`, `[FD=` or `:[...]` in an assertion")),
        };
        if let Tok::Property { name, .. } = self.peek().clone() {
            return Err(unsupported(
                self.span(),
                &format!("the assertion option `:[{name}]`"),
            ));
        }
        Ok(AssertDecl { negated, kind })
    }

    // ---------------------------------------------------------------- expressions

    fn parse_expr(&mut self, min: u8) -> PResult<Expr> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let span = self.span();
            self.depth -= 1;
            return Err(RawError::new(
                span,
                ErrorKind::Limit,
                format!("expression nested more than {MAX_NESTING} levels deep"),
            ));
        }
        let r = self.parse_expr_inner(min);
        self.depth -= 1;
        r
    }

    fn parse_expr_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.parse_unary()?;
        loop {
            if self.at_boundary() {
                break;
            }
            let tok = self.peek().clone();
            let (level, right_min): (u8, u8) = match &tok {
                Tok::Interleave => (L_INTERLEAVE, L_INTERLEAVE + 1),
                Tok::LPar | Tok::LBrack => (L_PAR, L_PAR + 1),
                Tok::IntChoice => (L_INTCHOICE, L_INTCHOICE + 1),
                Tok::ExtChoice => (L_EXTCHOICE, L_EXTCHOICE + 1),
                Tok::Interrupt => (L_INTERRUPT, L_INTERRUPT + 1),
                Tok::Timeout => (L_TIMEOUT, L_TIMEOUT + 1),
                Tok::Semi => (L_SEQ, L_SEQ + 1),
                Tok::Backslash => (L_HIDE, L_HIDE + 1),
                Tok::Arrow | Tok::Amp => (L_PREFIX, L_PREFIX),
                Tok::Question | Tok::Bang | Tok::Dollar => (L_FIELD, L_PREFIX),
                Tok::Dot => (L_DOT, L_DOT),
                Tok::Or => (L_OR, L_OR + 1),
                Tok::And => (L_AND, L_AND + 1),
                Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::LtEq | Tok::GtEq => (L_CMP, L_CMP + 1),
                Tok::Gt if !self.in_sequence() => (L_CMP, L_CMP + 1),
                Tok::Plus | Tok::Minus => (L_ADD, L_ADD + 1),
                Tok::Star | Tok::Slash | Tok::Percent => (L_MUL, L_MUL + 1),
                Tok::Caret => (L_CAT, L_CAT + 1),
                Tok::LParen | Tok::LRename => (L_APP, L_APP),
                Tok::AtAt => return Err(unsupported(self.span(), "the pattern operator `@@`")),
                Tok::ColonColon => {
                    return Err(unsupported(
                        self.span(),
                        "a qualified name or type annotation `::`",
                    ))
                }
                Tok::Unsupported(what) => {
                    return Err(unsupported(self.span(), &format!("the operator {what}")))
                }
                _ => break,
            };
            if level < min {
                break;
            }
            let op_span = self.span();
            lhs = match tok {
                Tok::Interleave
                | Tok::IntChoice
                | Tok::ExtChoice
                | Tok::Interrupt
                | Tok::Timeout
                | Tok::Semi => {
                    self.bump();
                    let op = match tok {
                        Tok::Interleave => ProcOp::Interleave,
                        Tok::IntChoice => ProcOp::IntChoice,
                        Tok::ExtChoice => ProcOp::ExtChoice,
                        Tok::Interrupt => ProcOp::Interrupt,
                        Tok::Timeout => ProcOp::Timeout,
                        _ => ProcOp::Seq,
                    };
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Proc(op, Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::LPar => {
                    self.bump();
                    self.open_bracket();
                    let a = self.parse_expr(0)?;
                    self.close_bracket();
                    self.expect(&Tok::RPar, "`|]` closing `[|`")?;
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    let e = self.mk(
                        ExprKind::Parallel(Box::new(lhs), Box::new(a), Box::new(rhs)),
                        span,
                    );
                    self.check_nonassoc_parallel(op_span)?;
                    e
                }
                Tok::LBrack => {
                    self.bump();
                    self.open_bracket();
                    let first = self.parse_expr(0)?;
                    let e = if self.eat(&Tok::Parallel) {
                        let b = self.parse_expr(0)?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing `[A || B]`")?;
                        let rhs = self.parse_expr(right_min)?;
                        let span = lhs.span.to(rhs.span);
                        self.mk(
                            ExprKind::AlphaParallel(
                                Box::new(lhs),
                                Box::new(first),
                                Box::new(b),
                                Box::new(rhs),
                            ),
                            span,
                        )
                    } else if self.peek() == &Tok::Tie {
                        let (ties, stmts) = self.parse_pairs(first, &Tok::Tie, "`<->`")?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing a link parallel `[a <-> b]`")?;
                        let rhs = self.parse_expr(right_min)?;
                        let span = lhs.span.to(rhs.span);
                        self.mk(
                            ExprKind::Link(Box::new(lhs), ties, stmts, Box::new(rhs)),
                            span,
                        )
                    } else {
                        return Err(self.unexpected("`||` or `<->` in a parallel operator"));
                    };
                    self.check_nonassoc_parallel(op_span)?;
                    e
                }
                Tok::Backslash => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Hide(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::Arrow => {
                    self.bump();
                    let body = self.parse_expr(L_PREFIX)?;
                    let span = lhs.span.to(body.span);
                    self.mk(
                        ExprKind::Prefix(Arc::new(PrefixExpr {
                            event: lhs,
                            fields: Vec::new(),
                            body,
                        })),
                        span,
                    )
                }
                Tok::Question | Tok::Bang | Tok::Dollar => {
                    let mut fields = Vec::new();
                    loop {
                        match self.peek() {
                            Tok::Bang => {
                                self.bump();
                                fields.push(Field::Output(self.parse_field_expr(L_DOT)?));
                            }
                            Tok::Question => {
                                self.bump();
                                let p = self.parse_field_expr(L_DOT)?;
                                let pat = to_pattern(&p)?;
                                let restriction = if self.eat(&Tok::Colon) {
                                    Some(self.parse_field_expr(L_OR)?)
                                } else {
                                    None
                                };
                                fields.push(Field::Input(pat, restriction));
                            }
                            Tok::Dollar => {
                                return Err(unsupported(self.span(), "nondeterministic input `$`"))
                            }
                            _ => break,
                        }
                    }
                    self.expect(&Tok::Arrow, "`->` after the prefix's fields")?;
                    let body = self.parse_expr(L_PREFIX)?;
                    let span = lhs.span.to(body.span);
                    self.mk(
                        ExprKind::Prefix(Arc::new(PrefixExpr {
                            event: lhs,
                            fields,
                            body,
                        })),
                        span,
                    )
                }
                Tok::Amp => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Guard(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::Dot => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Dot(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::LParen => {
                    self.bump();
                    self.open_bracket();
                    let mut args = Vec::new();
                    if self.peek() != &Tok::RParen {
                        loop {
                            args.push(self.parse_expr(0)?);
                            if !self.eat(&Tok::Comma) {
                                break;
                            }
                        }
                    }
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`,` or `)` in an argument list")?;
                    let span = lhs.span.to(end);
                    self.mk(ExprKind::App(Box::new(lhs), args), span)
                }
                Tok::LRename => {
                    self.bump();
                    self.open_bracket();
                    let (pairs, stmts) = if self.peek() == &Tok::RRename {
                        (Vec::new(), Vec::new())
                    } else {
                        let first = self.parse_expr(0)?;
                        self.parse_pairs(first, &Tok::DrawFrom, "`<-`")?
                    };
                    self.close_bracket();
                    let end = self.expect(&Tok::RRename, "`]]` closing a renaming")?;
                    let span = lhs.span.to(end);
                    self.mk(ExprKind::Rename(Box::new(lhs), pairs, stmts), span)
                }
                _ => {
                    // binary value operators
                    self.bump();
                    let op = match tok {
                        Tok::Or => BinOp::Or,
                        Tok::And => BinOp::And,
                        Tok::EqEq => BinOp::Eq,
                        Tok::NotEq => BinOp::Ne,
                        Tok::Lt => BinOp::Lt,
                        Tok::Gt => BinOp::Gt,
                        Tok::LtEq => BinOp::Le,
                        Tok::GtEq => BinOp::Ge,
                        Tok::Plus => BinOp::Add,
                        Tok::Minus => BinOp::Sub,
                        Tok::Star => BinOp::Mul,
                        Tok::Slash => BinOp::Div,
                        Tok::Percent => BinOp::Mod,
                        _ => BinOp::Concat,
                    };
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    let e = self.mk(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
                    if level == L_CMP && !self.at_boundary() {
                        let next_cmp = match self.peek() {
                            Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::LtEq | Tok::GtEq => true,
                            Tok::Gt => !self.in_sequence(),
                            _ => false,
                        };
                        if next_cmp {
                            return Err(RawError::new(
                                self.span(),
                                ErrorKind::Syntax,
                                "comparison operators do not associate: add parentheses",
                            ));
                        }
                    }
                    e
                }
            };
        }
        Ok(lhs)
    }

    fn check_nonassoc_parallel(&self, first_op: Span) -> PResult<()> {
        if !self.at_boundary() && matches!(self.peek(), Tok::LPar | Tok::LBrack) {
            let loc = self.span();
            let _ = first_op;
            return Err(RawError::new(
                loc,
                ErrorKind::Syntax,
                "parallel operators `[| |]`, `[ || ]` and `[ <-> ]` do not associate: add parentheses",
            ));
        }
        Ok(())
    }

    /// `a op b, c op d | stmts` after the first expression `a` (renaming and linking).
    fn parse_pairs(&mut self, first: Expr, sep: &Tok, sep_text: &str) -> PResult<PairsAndStmts> {
        let mut pairs = Vec::new();
        let mut left = first;
        loop {
            self.expect(sep, sep_text)?;
            let right = self.parse_expr(0)?;
            pairs.push((left, right));
            if self.eat(&Tok::Comma) {
                left = self.parse_expr(0)?;
            } else {
                break;
            }
        }
        let stmts = if self.eat(&Tok::Pipe) {
            self.parse_stmts()?
        } else {
            Vec::new()
        };
        Ok((pairs, stmts))
    }

    fn parse_stmts(&mut self) -> PResult<Vec<Stmt>> {
        let mut stmts = Vec::new();
        loop {
            let e = self.parse_expr(0)?;
            if self.eat(&Tok::DrawFrom) || self.eat(&Tok::Colon) {
                let pat = to_pattern(&e)?;
                let src = self.parse_expr(0)?;
                stmts.push(Stmt::Generator(pat, src));
            } else {
                stmts.push(Stmt::Qualifier(e));
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(stmts)
    }

    fn parse_unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let tok = self.peek().clone();
        match tok {
            Tok::Int(v) => {
                self.bump();
                Ok(self.mk(ExprKind::Int(v), start))
            }
            Tok::True | Tok::False => {
                self.bump();
                Ok(self.mk(ExprKind::Bool(tok == Tok::True), start))
            }
            Tok::Ident(name) => {
                self.bump();
                Ok(self.mk(ExprKind::Var(name.into()), start))
            }
            Tok::Underscore => {
                self.bump();
                Ok(self.mk(ExprKind::Wildcard, start))
            }
            Tok::Minus => {
                self.bump();
                let e = self.parse_expr(L_MUL)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Neg, Box::new(e)), span))
            }
            Tok::Not => {
                self.bump();
                let e = self.parse_expr(L_CMP)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Not, Box::new(e)), span))
            }
            Tok::Hash => {
                self.bump();
                let e = self.parse_expr(L_CAT)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Len, Box::new(e)), span))
            }
            Tok::If => {
                self.bump();
                let c = self.parse_expr(0)?;
                self.expect(&Tok::Then, "`then`")?;
                let t = self.parse_expr(0)?;
                self.expect(&Tok::Else, "`else`")?;
                let e = self.parse_expr(self.body_min())?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::If(Box::new(c), Box::new(t), Box::new(e)), span))
            }
            Tok::Let => {
                self.bump();
                let mut decls: Vec<Decl> = Vec::new();
                loop {
                    let d = self.parse_decl(false)?;
                    push_decl(&mut decls, d);
                    if self.peek() == &Tok::Within {
                        break;
                    }
                    if !self.at_boundary() {
                        return Err(self.unexpected("a new line or `within`"));
                    }
                }
                self.expect(&Tok::Within, "`within`")?;
                let body = self.parse_expr(self.body_min())?;
                let span = start.to(body.span);
                Ok(self.mk(ExprKind::Let(Arc::new(LetExpr { decls, body })), span))
            }
            Tok::Backslash => {
                self.bump();
                let mut params = Vec::new();
                loop {
                    let p = self.parse_expr(0)?;
                    params.push(to_pattern(&p)?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::At, "`@` in a lambda `\\ x @ e`")?;
                let body = self.parse_expr(self.body_min())?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Lambda(Arc::new(LambdaExpr { params, body })),
                    span,
                ))
            }
            Tok::LParen => {
                self.bump();
                if self.peek() == &Tok::Pipe && self.tokens[self.pos].span.lo == start.hi {
                    return Err(unsupported(start, "a map `(| ... |)`"));
                }
                self.open_bracket();
                let first = self.parse_expr(0)?;
                let e = if self.eat(&Tok::Comma) {
                    let mut items = vec![first];
                    loop {
                        items.push(self.parse_expr(0)?);
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`,` or `)` in a tuple")?;
                    self.mk(ExprKind::Tuple(items), start.to(end))
                } else {
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`)`")?;
                    let mut e = first;
                    e.span = start.to(end);
                    e
                };
                Ok(e)
            }
            Tok::LBrace => {
                self.bump();
                self.open_bracket();
                if self.peek() == &Tok::RBrace {
                    self.close_bracket();
                    let end = self.bump().span;
                    return Ok(self.mk(ExprKind::SetLit(Vec::new()), start.to(end)));
                }
                let first = self.parse_expr(0)?;
                let kind = if self.eat(&Tok::DotDot) {
                    if matches!(self.peek(), Tok::RBrace | Tok::Pipe) {
                        return Err(unsupported(
                            start.to(self.span()),
                            "the infinite set `{m..}`",
                        ));
                    }
                    let hi = self.parse_expr(0)?;
                    ExprKind::SetRange(Box::new(first), Box::new(hi))
                } else {
                    let items = self.comma_list(first)?;
                    if self.eat(&Tok::Pipe) {
                        ExprKind::SetComp(items, self.parse_stmts()?)
                    } else {
                        ExprKind::SetLit(items)
                    }
                };
                self.close_bracket();
                let end = self.expect(&Tok::RBrace, "`,`, `|` or `}` in a set")?;
                Ok(self.mk(kind, start.to(end)))
            }
            Tok::LPipeBrace => {
                self.bump();
                self.open_bracket();
                let first = self.parse_expr(0)?;
                let items = self.comma_list(first)?;
                let kind = if self.eat(&Tok::Pipe) {
                    ExprKind::ProductionsComp(items, self.parse_stmts()?)
                } else {
                    ExprKind::Productions(items)
                };
                self.close_bracket();
                let end = self.expect(&Tok::RPipeBrace, "`,`, `|` or `|}` in `{| ... |}`")?;
                Ok(self.mk(kind, start.to(end)))
            }
            Tok::EmptySeq => {
                self.bump();
                Ok(self.mk(ExprKind::SeqLit(Vec::new()), start))
            }
            Tok::Lt => {
                self.bump();
                if let Some(top) = self.seq_stack.last_mut() {
                    top.0 += 1;
                }
                let r = self.parse_seq_body(start);
                if let Some(top) = self.seq_stack.last_mut() {
                    top.0 = top.0.saturating_sub(1);
                }
                r
            }
            Tok::ExtChoice | Tok::IntChoice | Tok::Interleave | Tok::Semi | Tok::Parallel => {
                self.bump();
                let stmts = self.parse_stmts()?;
                self.expect(&Tok::At, "`@` in a replicated operator")?;
                let op = match tok {
                    Tok::ExtChoice => RepOp::ExtChoice,
                    Tok::IntChoice => RepOp::IntChoice,
                    Tok::Interleave => RepOp::Interleave,
                    Tok::Semi => RepOp::Seq,
                    _ => {
                        self.open_bracket();
                        self.expect(&Tok::LBrack, "`[` (the alphabet in `|| x:S @ [A] P`)")?;
                        let a = self.parse_expr(0)?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing the alphabet")?;
                        RepOp::AlphaParallel(Box::new(a))
                    }
                };
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(ExprKind::Replicated(op, stmts, Box::new(body)), span))
            }
            Tok::LPar => {
                self.bump();
                self.open_bracket();
                let a = self.parse_expr(0)?;
                self.close_bracket();
                self.expect(&Tok::RPar, "`|]` closing `[|`")?;
                let stmts = self.parse_stmts()?;
                self.expect(&Tok::At, "`@` in a replicated parallel")?;
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Replicated(RepOp::Parallel(Box::new(a)), stmts, Box::new(body)),
                    span,
                ))
            }
            Tok::LBrack => Err(unsupported(
                start,
                "replicated link parallel `[a <-> b] x:S @ P`",
            )),
            Tok::Str(_) => Err(unsupported(start, "a string literal")),
            Tok::Char => Err(unsupported(start, "a character literal")),
            Tok::Unsupported(what) => Err(unsupported(start, &format!("the operator {what}"))),
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn comma_list(&mut self, first: Expr) -> PResult<Vec<Expr>> {
        let mut items = vec![first];
        while self.eat(&Tok::Comma) {
            items.push(self.parse_expr(0)?);
        }
        Ok(items)
    }

    /// After `<`: elements, a comprehension or a range, and the closing `>`.
    fn parse_seq_body(&mut self, start: Span) -> PResult<Expr> {
        let first = self.parse_expr(0)?;
        let kind = if self.eat(&Tok::DotDot) {
            if matches!(self.peek(), Tok::Gt | Tok::Pipe) {
                return Err(unsupported(
                    start.to(self.span()),
                    "the infinite sequence `<m..>`",
                ));
            }
            let hi = self.parse_expr(0)?;
            ExprKind::SeqRange(Box::new(first), Box::new(hi))
        } else {
            let items = self.comma_list(first)?;
            if self.eat(&Tok::Pipe) {
                ExprKind::SeqComp(items, self.parse_stmts()?)
            } else {
                ExprKind::SeqLit(items)
            }
        };
        if self.peek() != &Tok::Gt {
            return Err(self.unexpected("`,`, `|` or `>` in a sequence"));
        }
        let end = self.bump().span;
        Ok(self.mk(kind, start.to(end)))
    }
}

/// Appends `d`, merging adjacent clauses of the same function.
fn push_decl(decls: &mut Vec<Decl>, d: Decl) {
    if let DeclKind::Function(name, clauses) = &d.kind {
        if let Some(Decl {
            kind: DeclKind::Function(prev, prev_clauses),
            span,
        }) = decls.last_mut()
        {
            if prev.name == name.name {
                prev_clauses.extend(clauses.iter().cloned());
                *span = span.to(d.span);
                return;
            }
        }
    }
    decls.push(d);
}

/// Turns `lhs = rhs` into a function clause or a pattern binding.
fn definition(lhs: Expr, rhs: Expr, span: Span) -> PResult<DeclKind> {
    let mut groups = Vec::new();
    let mut head = &lhs;
    while let ExprKind::App(f, args) = &head.kind {
        groups.push(args.iter().map(to_pattern).collect::<PResult<Vec<_>>>()?);
        head = f;
    }
    if groups.is_empty() {
        return Ok(DeclKind::PatBind(to_pattern(&lhs)?, rhs));
    }
    match &head.kind {
        ExprKind::Var(name) => {
            groups.reverse();
            Ok(DeclKind::Function(
                Ident {
                    name: name.clone(),
                    span: head.span,
                },
                vec![Clause {
                    groups,
                    body: rhs,
                    span,
                }],
            ))
        }
        _ => Err(RawError::new(
            head.span,
            ErrorKind::Syntax,
            "the left side of a function definition must be a name applied to patterns",
        )),
    }
}

/// Converts an expression parsed where a pattern is expected.
pub(crate) fn to_pattern(e: &Expr) -> PResult<Pattern> {
    let kind = match &e.kind {
        ExprKind::Var(n) => PatKind::Var(n.clone()),
        ExprKind::Wildcard => PatKind::Wildcard,
        ExprKind::Int(v) => PatKind::Int(*v),
        ExprKind::Bool(b) => PatKind::Bool(*b),
        ExprKind::Unary(UnOp::Neg, inner) => match inner.kind {
            ExprKind::Int(v) => PatKind::Int(-v),
            _ => {
                return Err(RawError::new(
                    e.span,
                    ErrorKind::Syntax,
                    "only integer literals can be negated in a pattern",
                ))
            }
        },
        ExprKind::Tuple(items) => {
            PatKind::Tuple(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        ExprKind::Dot(a, b) => {
            let mut parts = Vec::new();
            for side in [a, b] {
                let p = to_pattern(side)?;
                match p.kind {
                    PatKind::Dot(ps) => parts.extend(ps),
                    _ => parts.push(p),
                }
            }
            PatKind::Dot(parts)
        }
        ExprKind::SeqLit(items) => {
            PatKind::Seq(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        ExprKind::Binary(BinOp::Concat, a, b) => {
            PatKind::Concat(Box::new(to_pattern(a)?), Box::new(to_pattern(b)?))
        }
        ExprKind::SetLit(items) if items.len() <= 1 => {
            PatKind::Set(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        _ => return Err(RawError::new(
            e.span,
            ErrorKind::Syntax,
            "expected a pattern (a name, `_`, a literal, a tuple, a dotted value or a sequence)",
        )),
    };
    Ok(Pattern { kind, span: e.span })
}
