//! The CSPm parser: tokens to [`ast`](super::ast) declarations, resolving `include`.
//!
//! Operator precedence and associativity are FDR's. The FDR 4 manual's "Binding Strength"
//! table (cocotec.io/fdr/manual/cspm/syntax.html) gives, tightest first: application and
//! renaming; arithmetic; sequences; comparisons; booleans; `->` `&` `;`; `[>` `/\` `[]`
//! `|~|`; `[| |]` `[ || ]` `[ <-> ]` `|||`; `if`, `let`, `\`, lambdas; replicated operators.
//! The order inside each group is libcspm's (the parser FDR uses: the `%left`/`%right`/
//! `%nonassoc` declarations of `src/CSPM/Parser/Parser.ppy` in tomgr/libcspm), loosest
//! first: `\` (left); `|||` (left); `[| |]`, `[ || ]`, `[ <-> ]` (non-associative); `|~|`;
//! `[]`; `/\`; `[>`; `;` (all left); `->` and `&` (right); the prefix fields `?` `!`; `.`
//! (right); `or`; `and`; `not`; comparisons (non-associative); `+ -`; `* / %`; `#`; `^`;
//! application and renaming. So `P [| A |] Q \ B` is `(P [| A |] Q) \ B`, `P \ A \ B` is
//! `(P \ A) \ B`, and `P \ A ||| Q` is `P \ (A ||| Q)`. `if`, `let`, lambdas and replicated
//! operators bind loosest of all: their bodies extend as far to the right as possible
//! (`if b then P else Q \ A` hides in the `else` branch only).
//!
//! Inside a sequence `<...>` a `>` closes the sequence unless it is nested in other brackets,
//! as in libcspm. Line breaks end declarations as described in [`lexer`](super::lexer).
//!
//! Depth is bounded by memory only: the recursive entry points grow the stack on demand
//! ([`stacker`]), so chains of 100,000 prefixes or deeply nested brackets parse.
//!
//! A declaration that cannot be read (a syntax error, or a construct outside weft's subset)
//! does not stop the parse: it becomes [`DeclKind::Invalid`], naming what it would have
//! defined, and parsing resumes at the next declaration (see [`Parser::recover`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ast::*;
use super::error::{CspError, ErrorKind, RawError};
use super::lexer::{lex, Tok, Token};
use super::source::{SourceMap, Span};

/// Stack kept free before a recursive step grows the stack (see [`stacker::maybe_grow`]).
pub(crate) const RED_ZONE: usize = 128 * 1024;
/// Size of each stack segment added when the red zone is reached.
pub(crate) const STACK_PER_RECURSION: usize = 4 * 1024 * 1024;
/// Deepest chain of `include`s.
pub const MAX_INCLUDE_DEPTH: usize = 32;

pub(crate) const L_HIDE: u8 = 1;
pub(crate) const L_INTERLEAVE: u8 = 2;
pub(crate) const L_PAR: u8 = 3;
pub(crate) const L_INTCHOICE: u8 = 4;
pub(crate) const L_EXTCHOICE: u8 = 5;
pub(crate) const L_INTERRUPT: u8 = 6;
pub(crate) const L_TIMEOUT: u8 = 7;
pub(crate) const L_SEQ: u8 = 8;
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
    let tokens = lex(file, text);
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
    let tokens = lex(file, &text);
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
    /// Per bracket nesting level: how many sequences `<` are open, and the loosest operator
    /// the trailing body of `if`/`let`/lambda may contain (`->` is excluded inside prefix
    /// fields, so that `c!if b then x else y -> P` reads as ProB and FDR users expect).
    seq_stack: Vec<(u32, u8)>,
    /// An error from an included file (already resolved against its own file).
    include_error: Option<CspError>,
    /// The names the top-level declaration being parsed defines, as far as read so far
    /// (kept for [`DeclKind::Invalid`] when the rest of it cannot be read).
    decl_names: Vec<Ident>,
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
            seq_stack: vec![(0, 0)],
            include_error: None,
            decl_names: Vec::new(),
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
        match &t.tok {
            Tok::Unsupported(what) => return unsupported(t.span, &format!("the operator {what}")),
            Tok::Error(message) => {
                return RawError::new(t.span, ErrorKind::Syntax, message.clone())
            }
            _ => {}
        }
        // What was expected is missing at the end of a line (the next token starts a new
        // declaration or the file ends): the error is at the end of the previous token.
        if self.pos > 0
            && t.newline_before
            && (t.tok == Tok::Eof || t.line_start || self.at_boundary())
        {
            let prev = &self.tokens[self.pos - 1];
            let at = Span {
                lo: prev.span.hi,
                ..prev.span
            };
            let found = if t.tok == Tok::Eof {
                "the end of the file"
            } else {
                "the end of the line"
            };
            return RawError::new(
                at,
                ErrorKind::Syntax,
                format!(
                    "expected {expected} after {}, found {found}",
                    prev.tok.describe()
                ),
            );
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

    /// The first name after a declaration keyword: a name at the start of the next line
    /// begins the next declaration, so it is not taken (`channel` alone on a line is an error
    /// on that line).
    fn decl_name(&mut self, what: &str) -> PResult<Ident> {
        let t = &self.tokens[self.pos];
        if t.newline_before && t.line_start {
            return Err(self.unexpected(what));
        }
        let name = self.ident(what)?;
        self.decl_names.push(name.clone());
        Ok(name)
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
            let start = self.pos;
            self.decl_names.clear();
            let parsed = self.parse_decl(true).and_then(|d| {
                self.end_of_decl()?;
                Ok(d)
            });
            match parsed {
                Ok(d) => push_decl(&mut decls, d),
                Err(e) => {
                    if self.include_error.is_some() {
                        return Err(e);
                    }
                    let d = self.recover(start, e);
                    decls.push(d);
                }
            }
        }
        Ok(decls)
    }

    /// Records the declaration starting at token `start`, in which `err` was found, as
    /// [`DeclKind::Invalid`], and moves to the start of the next declaration.
    ///
    /// The next declaration starts at the first token after `start` that begins a line and
    /// either is a declaration keyword (`channel`, `datatype`, `assert`, ...) or stands in
    /// column 1 and can begin a definition (a name, `(` or `_`). Scripts indent continuation
    /// lines, and a closing bracket or an operator in column 1 continues the line before, so
    /// this finds the next declaration even when the bad one left a bracket open. A `Timed`
    /// section or a module is skipped whole (to its closing `}` or `endmodule`), and the
    /// names declared inside it are the names it would define.
    fn recover(&mut self, start: usize, err: RawError) -> Decl {
        let first = self.tokens[start].tok.clone();
        let last = self.tokens.len() - 1;
        let mut end = match first {
            Tok::Timed => self.block_end(start),
            Tok::Module => (start + 1..last)
                .find(|&i| self.tokens[i].tok == Tok::EndModule)
                .map_or(last, |i| i + 1),
            _ => start + 1,
        };
        while end < last && !self.begins_decl(end) {
            end += 1;
        }
        let mut names = std::mem::take(&mut self.decl_names);
        let scanned = match first {
            Tok::Timed | Tok::Module => {
                let mut inner = Vec::new();
                let mut i = start + 1;
                while i < end {
                    if self.tokens[i].newline_before {
                        inner.extend(self.scan_names(i, end));
                    }
                    i += 1;
                }
                inner
            }
            _ => self.scan_names(start, end),
        };
        for n in scanned {
            if !names.iter().any(|m| m.name == n.name) {
                names.push(n);
            }
        }
        let span = self.tokens[start]
            .span
            .to(self.tokens[end.saturating_sub(1).max(start)].span);
        self.pos = end;
        self.seq_stack = vec![(0, 0)];
        Decl {
            kind: DeclKind::Invalid(InvalidDecl {
                names,
                assertion: first == Tok::Assert,
                kind: err.kind,
                error_span: err.span,
                message: err.message,
            }),
            span,
        }
    }

    /// The token after the `{ ... }` block that follows `Timed(...)` at `start`.
    fn block_end(&self, start: usize) -> usize {
        let last = self.tokens.len() - 1;
        let Some(open) = (start..last).find(|&i| self.tokens[i].tok == Tok::LBrace) else {
            return start + 1;
        };
        let mut depth = 0usize;
        for i in open..last {
            match self.tokens[i].tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        last
    }

    /// Whether a declaration can start at token `i` (see [`Parser::recover`]).
    fn begins_decl(&self, i: usize) -> bool {
        let t = &self.tokens[i];
        if t.tok == Tok::Eof {
            return true;
        }
        if !t.newline_before {
            return false;
        }
        match t.tok {
            Tok::Channel
            | Tok::Datatype
            | Tok::Nametype
            | Tok::Subtype
            | Tok::Assert
            | Tok::Include
            | Tok::Transparent
            | Tok::External
            | Tok::Module
            | Tok::Instance
            | Tok::Timed
            | Tok::Print => true,
            Tok::Ident(_) | Tok::LParen | Tok::Underscore => t.line_start,
            _ => false,
        }
    }

    /// The names a declaration starting at token `i` (and ending before `end`) defines, read
    /// from its tokens alone: channel names, a datatype and its constructors, a nametype or
    /// subtype, or the name before `=` or `(` of a definition.
    fn scan_names(&self, i: usize, end: usize) -> Vec<Ident> {
        let ident_at = |j: usize| -> Option<Ident> {
            match &self.tokens.get(j)?.tok {
                Tok::Ident(n) if j < end => Some(Ident {
                    name: n.as_str().into(),
                    span: self.tokens[j].span,
                }),
                _ => None,
            }
        };
        let tok_at = |j: usize| self.tokens.get(j).filter(|_| j < end).map(|t| &t.tok);
        let mut names = Vec::new();
        match &self.tokens[i].tok {
            Tok::Channel | Tok::Transparent | Tok::External => {
                let mut j = i + 1;
                while let Some(n) = ident_at(j) {
                    names.push(n);
                    if tok_at(j + 1) != Some(&Tok::Comma) {
                        break;
                    }
                    j += 2;
                }
            }
            Tok::Datatype => {
                names.extend(ident_at(i + 1));
                let mut depth = 0i32;
                for j in i + 2..end {
                    match self.tokens[j].tok {
                        Tok::LParen | Tok::LBrace | Tok::LPipeBrace | Tok::LBrack | Tok::LPar => {
                            depth += 1
                        }
                        Tok::RParen | Tok::RBrace | Tok::RPipeBrace | Tok::RBrack | Tok::RPar => {
                            depth -= 1
                        }
                        Tok::Define | Tok::Pipe if depth == 0 => names.extend(ident_at(j + 1)),
                        _ => {}
                    }
                }
            }
            Tok::Nametype | Tok::Subtype => names.extend(ident_at(i + 1)),
            Tok::Ident(_) => {
                if matches!(tok_at(i + 1), Some(Tok::LParen | Tok::Define)) {
                    names.extend(ident_at(i));
                }
            }
            _ => {}
        }
        names
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
                let mut names = vec![self.decl_name("a channel name after `channel`")?];
                while self.eat(&Tok::Comma) {
                    names.push(self.ident("a channel name")?);
                    if top {
                        self.decl_names.extend(names.last().cloned());
                    }
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
                let name = self.decl_name("a datatype name after `datatype`")?;
                self.expect(&Tok::Define, "`=` after the datatype name")?;
                let mut clauses = Vec::new();
                loop {
                    let cname = self.ident("a constructor name")?;
                    self.decl_names.push(cname.clone());
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
                let name = self.decl_name("a type name after `nametype`")?;
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
                let mut names = vec![self.decl_name("a function name")?];
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
                if top {
                    self.decl_names = defined_names(&lhs);
                }
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
        stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || self.parse_expr_inner(min))
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

/// The names the definition `lhs = ...` defines: a function's name, or the variables of a
/// pattern (as written: a constructor in the pattern cannot be told apart here).
fn defined_names(lhs: &Expr) -> Vec<Ident> {
    let mut head = lhs;
    while let ExprKind::App(f, _) = &head.kind {
        head = f;
    }
    if !std::ptr::eq(head, lhs) {
        return match &head.kind {
            ExprKind::Var(name) => vec![Ident {
                name: name.clone(),
                span: head.span,
            }],
            _ => Vec::new(),
        };
    }
    fn vars(p: &Pattern, out: &mut Vec<Ident>) {
        match &p.kind {
            PatKind::Var(n) => out.push(Ident {
                name: n.clone(),
                span: p.span,
            }),
            PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
                ps.iter().for_each(|q| vars(q, out))
            }
            PatKind::Concat(a, b) => {
                vars(a, out);
                vars(b, out);
            }
            PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(p) = to_pattern(lhs) {
        vars(&p, &mut out);
    }
    out
}

/// Converts an expression parsed where a pattern is expected.
pub(crate) fn to_pattern(e: &Expr) -> PResult<Pattern> {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || to_pattern_here(e))
}

fn to_pattern_here(e: &Expr) -> PResult<Pattern> {
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
