//! The front end's error type.

#![forbid(unsafe_code)]

use std::fmt;

use super::source::{Location, SourceMap, Span};
use crate::diag::Excerpt;

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
    /// The run's stop signal (`--timeout`, `--max-memory`, an interrupt) was raised while the
    /// work ran (making a compression): no verdict, and nothing wrong with the script.
    Stopped,
}

/// A positioned error: displayed as `file:line:col: error: message` (one line, for logs);
/// [`crate::diag::render`] shows it with its source line and the span underlined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}error: {message}", LocationPrefix(location))]
pub struct CspError {
    /// Broad category.
    pub kind: ErrorKind,
    /// Where the problem is, when known.
    pub location: Option<Location>,
    /// What is wrong, and what was expected.
    pub message: String,
    /// The source around the span, captured from the source map when the error was made,
    /// with the location it was captured for (so that it is not shown if `location` changes).
    excerpt: Option<Box<(Location, Excerpt)>>,
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
        let location = sources.location(span);
        let excerpt = (location.line > 0).then(|| {
            let text = &sources.file(span.file).text;
            let excerpt = Excerpt::of(text, span.lo as usize, span.hi as usize, location.line);
            Box::new((location.clone(), excerpt))
        });
        CspError {
            kind,
            location: Some(location),
            message: message.into(),
            excerpt,
        }
    }

    /// An error without a position.
    pub fn unpositioned(kind: ErrorKind, message: impl Into<String>) -> Self {
        CspError {
            kind,
            location: None,
            message: message.into(),
            excerpt: None,
        }
    }

    /// The source line around the error's position, when it is known (it is when the error
    /// was made by [`CspError::at`] and its `location` has not been changed since).
    pub fn excerpt(&self) -> Option<&Excerpt> {
        match (&self.excerpt, &self.location) {
            (Some(b), Some(location)) if b.0 == *location => Some(&b.1),
            _ => None,
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
