//! Tokens of CSPm: the token kinds, the refinement models named in assertions, and which
//! tokens continue an expression across a line break (see the [`lexer`](super::lexer)).

use std::fmt;

use super::source::Span;

/// Refinement models of assertions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Model {
    /// Traces `[T=`.
    Traces,
    /// Stable failures `[F=`.
    Failures,
    /// Failures-divergences `[FD=`.
    FailuresDivergences,
    /// Revivals `[V=`.
    Revivals,
    /// Revivals-divergences `[VD=`.
    RevivalsDivergences,
    /// Refusal testing `[R=`.
    RefusalTesting,
    /// Refusal-testing-divergences `[RD=`.
    RefusalTestingDivergences,
}

impl Model {
    /// Every model, in the order [`Model::letters`] are tried by the lexer (longest first).
    pub const ALL: [Model; 7] = [
        Model::FailuresDivergences,
        Model::Failures,
        Model::Traces,
        Model::RevivalsDivergences,
        Model::Revivals,
        Model::RefusalTestingDivergences,
        Model::RefusalTesting,
    ];

    /// The model's letters as written in CSPm (`T`, `F`, `FD`, `V`, `VD`, `R`, `RD`).
    pub fn letters(self) -> &'static str {
        match self {
            Model::Traces => "T",
            Model::Failures => "F",
            Model::FailuresDivergences => "FD",
            Model::Revivals => "V",
            Model::RevivalsDivergences => "VD",
            Model::RefusalTesting => "R",
            Model::RefusalTestingDivergences => "RD",
        }
    }

    /// The model written with `letters`, if any.
    pub fn from_letters(letters: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.letters() == letters)
    }
}

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Int(i64),
    Ident(String),
    /// A string literal (escapes resolved).
    Str(String),
    /// A character literal `'c'` (escapes resolved).
    Char(char),
    /// Text that is not a token (the message says why). Lexing goes on after it, so that one
    /// bad character loses only the declaration it is in; the parser reports it when met.
    Error(String),
    // keywords
    Channel,
    Datatype,
    Nametype,
    Subtype,
    Assert,
    Include,
    Transparent,
    External,
    Module,
    Exports,
    EndModule,
    Instance,
    Timed,
    Print,
    If,
    Then,
    Else,
    Let,
    Within,
    And,
    Or,
    Not,
    True,
    False,
    // brackets
    LParen,
    RParen,
    LBrace,
    RBrace,
    LPipeBrace,
    RPipeBrace,
    LBrack,
    RBrack,
    LRename,
    RRename,
    LPar,
    RPar,
    // punctuation and operators
    Comma,
    Dot,
    DotDot,
    Question,
    Bang,
    Dollar,
    Colon,
    ColonColon,
    Arrow,
    /// `=>` of a map literal.
    FatArrow,
    DrawFrom,
    Tie,
    Pipe,
    At,
    AtAt,
    Underscore,
    Backslash,
    Define,
    EqEq,
    NotEq,
    Lt,
    Gt,
    LtEq,
    GtEq,
    EmptySeq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Hash,
    Amp,
    Semi,
    ExtChoice,
    IntChoice,
    Interleave,
    Parallel,
    Interrupt,
    Timeout,
    /// `[+` (synchronising external choice)
    LSyncExt,
    /// `+]`
    RSyncExt,
    /// `/+` (synchronising interrupt)
    LSyncInt,
    /// `+\`
    RSyncInt,
    /// `|>` (closing the exception operator `[| A |>`)
    RException,
    /// `|\` (projection)
    Project,
    /// `[T=`, `[F=`, `[FD=`, `[V=`, `[VD=`, `[R=`, `[RD=`.
    Refines(Model),
    /// `:[name [model]]` of an assertion; `name` normalised to single spaces, lower case.
    Property {
        name: String,
        model: Option<String>,
    },
    /// An operator outside the subset, with the name to report.
    Unsupported(&'static str),
    Eof,
}

impl Tok {
    /// True when a line break after this token never ends a declaration.
    pub fn continues_after(&self) -> bool {
        use Tok::*;
        matches!(
            self,
            ExtChoice
                | IntChoice
                | Interleave
                | Interrupt
                | Arrow
                | FatArrow
                | Timeout
                | LSyncExt
                | RSyncExt
                | LSyncInt
                | RSyncInt
                | RException
                | Project
                | Parallel
                | Semi
                | Amp
                | And
                | Or
                | Not
                | EqEq
                | NotEq
                | LtEq
                | GtEq
                | Lt
                | LParen
                | LPipeBrace
                | LBrace
                | LRename
                | LPar
                | RPar
                | LBrack
                | RBrack
                | Pipe
                | Comma
                | DotDot
                | Dot
                | Question
                | Bang
                | Dollar
                | DrawFrom
                | Tie
                | Colon
                | ColonColon
                | AtAt
                | Define
                | If
                | Then
                | Else
                | Let
                | Within
                | Channel
                | Datatype
                | Nametype
                | Subtype
                | External
                | Transparent
                | Assert
                | Backslash
                | At
                | Plus
                | Minus
                | Star
                | Slash
                | Percent
                | Caret
                | Hash
                | Underscore
                | Refines(_)
                | Unsupported(_)
        )
    }

    /// True when a line break before this token never ends a declaration.
    pub fn continues_before(&self) -> bool {
        use Tok::*;
        matches!(
            self,
            ExtChoice
                | IntChoice
                | Interleave
                | Interrupt
                | Arrow
                | FatArrow
                | Timeout
                | LSyncExt
                | RSyncExt
                | LSyncInt
                | RSyncInt
                | RException
                | Project
                | Parallel
                | Semi
                | Amp
                | And
                | Or
                | Not
                | EqEq
                | NotEq
                | LtEq
                | GtEq
                | Gt
                | RParen
                | RPipeBrace
                | RBrace
                | LRename
                | RRename
                | LPar
                | RPar
                | LBrack
                | RBrack
                | Pipe
                | Comma
                | DotDot
                | Dot
                | Question
                | Bang
                | Dollar
                | DrawFrom
                | Tie
                | Colon
                | ColonColon
                | AtAt
                | Define
                | Then
                | Else
                | Within
                | Backslash
                | At
                | Plus
                | Star
                | Slash
                | Percent
                | Caret
                | Refines(_)
                | Property { .. }
                | Unsupported(_)
        )
    }

    /// How the token is shown in error messages.
    pub fn describe(&self) -> String {
        use Tok::*;
        let s = match self {
            Int(i) => return format!("integer `{i}`"),
            Ident(s) => return format!("name `{s}`"),
            Str(s) => return format!("string \"{s}\""),
            Char(c) => return format!("character '{}'", c.escape_default()),
            Error(m) => return m.clone(),
            Eof => "end of file",
            Property { name, .. } => return format!("`:[{name}]`"),
            Refines(m) => return format!("`[{}=`", m.letters()),
            Unsupported(s) => return format!("`{s}`"),
            other => return format!("`{}`", other.text()),
        };
        s.to_string()
    }

    /// The token's text for fixed tokens.
    pub fn text(&self) -> &'static str {
        use Tok::*;
        match self {
            Channel => "channel",
            Datatype => "datatype",
            Nametype => "nametype",
            Subtype => "subtype",
            Assert => "assert",
            Include => "include",
            Transparent => "transparent",
            External => "external",
            Module => "module",
            Exports => "exports",
            EndModule => "endmodule",
            Instance => "instance",
            Timed => "Timed",
            Print => "print",
            If => "if",
            Then => "then",
            Else => "else",
            Let => "let",
            Within => "within",
            And => "and",
            Or => "or",
            Not => "not",
            True => "true",
            False => "false",
            LParen => "(",
            RParen => ")",
            LBrace => "{",
            RBrace => "}",
            LPipeBrace => "{|",
            RPipeBrace => "|}",
            LBrack => "[",
            RBrack => "]",
            LRename => "[[",
            RRename => "]]",
            LPar => "[|",
            RPar => "|]",
            Comma => ",",
            Dot => ".",
            DotDot => "..",
            Question => "?",
            Bang => "!",
            Dollar => "$",
            Colon => ":",
            ColonColon => "::",
            Arrow => "->",
            FatArrow => "=>",
            DrawFrom => "<-",
            Tie => "<->",
            Pipe => "|",
            At => "@",
            AtAt => "@@",
            Underscore => "_",
            Backslash => "\\",
            Define => "=",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            Gt => ">",
            LtEq => "<=",
            GtEq => ">=",
            EmptySeq => "<>",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Caret => "^",
            Hash => "#",
            Amp => "&",
            Semi => ";",
            ExtChoice => "[]",
            IntChoice => "|~|",
            Interleave => "|||",
            Parallel => "||",
            Interrupt => "/\\",
            Timeout => "[>",
            LSyncExt => "[+",
            RSyncExt => "+]",
            LSyncInt => "/+",
            RSyncInt => "+\\",
            RException => "|>",
            Project => "|\\",
            _ => "?",
        }
    }
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A token with its span and whether a line break precedes it.
#[derive(Clone, Debug)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
    /// A line break (possibly inside a comment) lies between the previous token and this one.
    pub newline_before: bool,
    /// The token starts in column 1 of its line (where declarations begin; used to resume
    /// after an error).
    pub line_start: bool,
}
