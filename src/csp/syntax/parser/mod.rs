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
use super::lexer::{lex, Tok, Token};
pub use super::precedence::expr_level;
use super::precedence::*;
use super::source::{SourceMap, Span};
use crate::csp::error::{CspError, ErrorKind, RawError};
pub use annotations::PRINT_PREFIX;
pub(crate) use annotations::SUBTYPE_VAR;

mod annotations;
mod decls;
mod exprs;
mod modules;
mod patterns;
mod timed;

pub(crate) use patterns::to_pattern;

/// A bound on the depth of the expressions a script may hold: each operand read counts one
/// level, each operator folded into the operand before it one more (so a prefix chain
/// `a -> b -> … -> STOP` counts two per event: 20,000 events load). The parser grows its stack
/// as it needs, but the later stages walk expressions recursively: beyond this bound (far
/// beyond any script written by hand) a script is refused with a positioned error instead of
/// overflowing a stack.
pub(crate) const MAX_EXPR_DEPTH: u32 = 40_000;

/// Stack kept free before a recursive step grows the stack (see [`stacker::maybe_grow`]).
pub(crate) const RED_ZONE: usize = 128 * 1024;
/// Size of each stack segment added when the red zone is reached.
pub(crate) const STACK_PER_RECURSION: usize = 4 * 1024 * 1024;
/// Deepest chain of `include`s.
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Shared state of one parse: the files read so far and the next node id.
pub(crate) struct ParseContext {
    pub sources: SourceMap,
    pub next_id: u32,
    include_stack: Vec<PathBuf>,
    /// Whether a timed section was read (the loader then lowers the sections).
    pub has_timed: bool,
    /// The type annotations read (`f :: (Int) -> Int`), for the type checker.
    pub annotations: Vec<RawAnnotation>,
}

/// Where a type annotation is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnnotationScope {
    /// Among the top-level declarations of the script (or of a file it includes).
    Top,
    /// Among the declarations of the `let` whose keyword starts at this span.
    Let(Span),
    /// Inside a module (names there are renamed when modules are flattened): the span from
    /// the module's name to its `endmodule` (`None` while the module is being parsed).
    Module(Option<Span>),
}

/// A type annotation `n1, n2 :: type` as read: the names and the tokens of the type (the
/// type checker reads them).
#[derive(Clone, Debug)]
pub struct RawAnnotation {
    /// The annotated names.
    pub names: Vec<Ident>,
    /// The tokens of the type, after `::`.
    pub tokens: Vec<Token>,
    /// Where the annotation is.
    pub scope: AnnotationScope,
}

impl ParseContext {
    pub fn new() -> Self {
        ParseContext {
            sources: SourceMap::new(),
            next_id: 0,
            include_stack: Vec::new(),
            has_timed: false,
            annotations: Vec::new(),
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
    /// A bound on the depth of the expression being read: operands being read plus operators
    /// folded into them (see [`MAX_EXPR_DEPTH`]).
    nesting: u32,
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
            nesting: 0,
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
}
