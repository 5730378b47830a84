//! The front end's error type.

use std::fmt;

use super::source::{Location, SourceMap, Span};

/// What went wrong, broadly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file could not be read.
    Io,
    /// Malformed input: a lexical or syntax error.
    Syntax,
    /// Valid CSPm that weft does not support (yet); the message names the construct.
    Unsupported,
    /// A name that is not defined.
    UnknownName,
    /// A name defined twice in one scope.
    Duplicate,
    /// A function or process applied to the wrong number of arguments, or a channel given the
    /// wrong number of fields.
    Arity,
    /// A value of the wrong type (for example outside its channel's type).
    Type,
    /// Any other failure while evaluating (division by zero, empty internal choice, ...).
    Eval,
    /// A limit was hit (nesting depth, set size).
    Limit,
}

/// A positioned error: displayed as `file:line:col: error: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}error: {message}", LocationPrefix(location))]
pub struct CspError {
    /// Broad category.
    pub kind: ErrorKind,
    /// Where the problem is, when known.
    pub location: Option<Location>,
    /// What is wrong, and what was expected.
    pub message: String,
}

struct LocationPrefix<'a>(&'a Option<Location>);

impl fmt::Display for LocationPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, "{l}: "),
            None => Ok(()),
        }
    }
}

impl CspError {
    /// An error at `span` of `sources`.
    pub fn at(
        sources: &SourceMap,
        span: Span,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> Self {
        CspError {
            kind,
            location: Some(sources.location(span)),
            message: message.into(),
        }
    }

    /// An error without a position.
    pub fn unpositioned(kind: ErrorKind, message: impl Into<String>) -> Self {
        CspError {
            kind,
            location: None,
            message: message.into(),
        }
    }
}

/// An error raised before the source map is available to resolve it: a span and a message.
#[derive(Clone, Debug)]
pub(crate) struct RawError {
    pub span: Span,
    pub kind: ErrorKind,
    pub message: String,
}

impl RawError {
    pub fn new(span: Span, kind: ErrorKind, message: impl Into<String>) -> Self {
        RawError {
            span,
            kind,
            message: message.into(),
        }
    }

    pub fn resolve(self, sources: &SourceMap) -> CspError {
        CspError::at(sources, self.span, self.kind, self.message)
    }
}
