//! Rendering errors for people: the file, line and column, the source line with the span
//! underlined, and the message (what is wrong and what was expected).
//!
//! ```text
//! error: expected `=` after the left-hand side, found `->`
//!  --> model.csp:3:3
//!   |
//! 3 | P a -> STOP
//!   |   ^^
//! ```
//!
//! Errors that carry a position ([`CspError`], [`AutError`]) keep an [`Excerpt`] of their
//! source, captured when they are created, so that they can be rendered after the source is
//! gone. [`render`] renders a [`CspError`]; [`Diagnostic`] is the common form of any
//! positioned error (also as JSON, [`Diagnostic::to_json`]). Rendering uses the
//! `annotate-snippets` crate (the renderer of rustc's diagnostics); colour is the caller's
//! choice ([`use_color`] tells whether standard error is a terminal).

#![forbid(unsafe_code)]

use std::io::IsTerminal;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

use crate::csp::{CspError, ErrorKind};
pub use crate::excerpt::{Excerpt, CONTEXT_BYTES};
use crate::lts::AutError;

/// Whether diagnostics written to standard error should be coloured: it is a terminal and
/// `NO_COLOR` is not set.
pub fn use_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The common form of an error for display: a kind, a message, and a position when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic<'a> {
    /// A short machine-readable category (`"syntax"`, `"unknown_name"`, `"io"`, ...).
    pub kind: &'static str,
    /// What is wrong, and what was expected.
    pub message: String,
    /// The file, when the error is about one.
    pub file: Option<String>,
    /// The line (from 1), when known.
    pub line: Option<u64>,
    /// The column (from 1, in characters), when known.
    pub column: Option<u64>,
    /// The source around the position, when known.
    pub excerpt: Option<&'a Excerpt>,
}

impl Diagnostic<'_> {
    /// The multi-line rendering: `error: message`, then the position and, when the source is
    /// known, the source line with the span underlined. Without a position: `error: message`.
    /// Ends without a newline.
    pub fn render(&self, color: bool) -> String {
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        let title = Level::ERROR.primary_title(self.message.as_str());
        let group: Group<'_> = match (&self.file, self.excerpt, self.line) {
            (Some(file), Some(excerpt), _) if !excerpt.clipped => title.element(
                Snippet::source(excerpt.text.as_str())
                    .line_start(excerpt.line as usize)
                    .path(file.as_str())
                    .annotation(AnnotationKind::Primary.span(excerpt.range.clone())),
            ),
            // A line shortened at its start (thousands of bytes before the span): the
            // position alone.
            (Some(file), _, Some(_)) => title.element(origin(file, self.line, self.column)),
            (Some(file), _, None) => title.element(Origin::path(file.as_str())),
            (None, _, _) => Group::with_title(title),
        };
        renderer.render(&[group])
    }

    /// The one-line form, `file:line:col: error: message` (parts omitted when unknown).
    pub fn one_line(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(file);
            if let Some(line) = self.line {
                out.push_str(&format!(":{line}"));
                if let Some(column) = self.column {
                    out.push_str(&format!(":{column}"));
                }
            }
            out.push_str(": ");
        }
        out.push_str("error: ");
        out.push_str(&self.message);
        out
    }

    /// `{"error": {"kind": ..., "message": ..., "file": ..., "line": ..., "column": ...}}`
    /// (the position fields omitted when unknown).
    pub fn to_json(&self) -> serde_json::Value {
        let mut error = serde_json::Map::new();
        error.insert("kind".into(), self.kind.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(file) = &self.file {
            error.insert("file".into(), file.clone().into());
        }
        if let Some(line) = self.line {
            error.insert("line".into(), line.into());
        }
        if let Some(column) = self.column {
            error.insert("column".into(), column.into());
        }
        serde_json::json!({ "error": error })
    }
}

fn origin<'a>(file: &'a str, line: Option<u64>, column: Option<u64>) -> Origin<'a> {
    let mut origin = Origin::path(file);
    if let Some(line) = line {
        origin = origin.line(line as usize);
        if let Some(column) = column {
            origin = origin.char_column(column as usize);
        }
    }
    origin
}

/// The name of a [`ErrorKind`] in JSON output.
pub fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Io => "io",
        ErrorKind::Syntax => "syntax",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::UnknownName => "unknown_name",
        ErrorKind::Duplicate => "duplicate",
        ErrorKind::Arity => "arity",
        ErrorKind::Type => "type",
        ErrorKind::Eval => "eval",
        ErrorKind::Limit => "limit",
        ErrorKind::Stopped => "stopped",
    }
}

impl<'a> From<&'a CspError> for Diagnostic<'a> {
    fn from(e: &'a CspError) -> Diagnostic<'a> {
        let location = e.location.as_ref();
        Diagnostic {
            kind: kind_name(e.kind),
            message: e.message.clone(),
            file: location.map(|l| l.file.clone()),
            line: location.map(|l| u64::from(l.line)),
            column: location.map(|l| u64::from(l.column)),
            excerpt: e.excerpt(),
        }
    }
}

impl<'a> From<&'a AutError> for Diagnostic<'a> {
    fn from(e: &'a AutError) -> Diagnostic<'a> {
        let file = e.path().map(|p| p.display().to_string());
        match e {
            AutError::Syntax {
                line,
                column,
                expected,
                found,
                excerpt,
                ..
            } => Diagnostic {
                kind: "syntax",
                message: format!("expected {expected}, found {found}"),
                file,
                line: Some(*line),
                column: Some(*column),
                excerpt: excerpt.as_deref(),
            },
            AutError::HeaderMismatch {
                line,
                column,
                message,
                excerpt,
                ..
            } => Diagnostic {
                kind: "header_mismatch",
                message: message.clone(),
                file,
                line: Some(*line),
                column: Some(*column),
                excerpt: excerpt.as_deref(),
            },
            AutError::Io { source, .. } => Diagnostic {
                kind: "io",
                message: match &file {
                    Some(f) => format!("cannot read {f}: {source}"),
                    None => format!("cannot read the input: {source}"),
                },
                file: None,
                line: None,
                column: None,
                excerpt: None,
            },
        }
    }
}

/// Renders `error` for a person: `error: message`, then `--> file:line:col` and the source
/// line with the span underlined (just the message when the error has no position). With
/// `color`, ANSI colours (pass [`use_color`] when writing to standard error). Ends without a
/// newline.
pub fn render(error: &CspError, color: bool) -> String {
    Diagnostic::from(error).render(color)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csp::{SourceMap, Span};
    use std::path::Path;

    fn error_at(text: &str, lo: u32, hi: u32, message: &str) -> CspError {
        let mut sources = SourceMap::new();
        let file = sources.add(Path::new("m.csp"), "m.csp".into(), text.into());
        CspError::at(&sources, Span { file, lo, hi }, ErrorKind::Syntax, message)
    }

    #[test]
    fn renders_the_line_with_the_span_underlined() {
        let e = error_at(
            "channel a\nP = a -> -> STOP\n",
            19,
            21,
            "expected a process",
        );
        let text = render(&e, false);
        assert!(text.starts_with("error: expected a process\n"), "{text}");
        assert!(text.contains("--> m.csp:2:10"), "{text}");
        assert!(text.contains("2 | P = a -> -> STOP"), "{text}");
        assert!(text.contains("  |          ^^"), "{text}");
        assert_eq!(e.to_string(), "m.csp:2:10: error: expected a process");
        assert!(!text.contains('\u{1b}'));
        assert!(render(&e, true).contains('\u{1b}'));
    }

    #[test]
    fn an_empty_span_at_the_end_of_the_file_is_shown() {
        let e = error_at("P = a ->", 8, 8, "unexpected end of file");
        let text = render(&e, false);
        assert!(text.contains("--> m.csp:1:9"), "{text}");
        assert!(text.contains("1 | P = a ->"), "{text}");
    }

    #[test]
    fn multibyte_text_and_long_lines() {
        let e = error_at("P = «é» -> STOP", 4, 11, "bad");
        assert!(render(&e, false).contains("--> m.csp:1:5"));
        let long = format!("P = {}x", "a + ".repeat(200));
        let at = long.len() as u32 - 1;
        let e = error_at(&long, at, at + 1, "here");
        let text = render(&e, false);
        assert!(text.contains("--> m.csp:1:805"), "{text}");
        assert!(text.lines().all(|l| l.len() < 200), "{text}");
        let longer = format!("P = {}x", "a + ".repeat(2000));
        let at = longer.len() as u32 - 1;
        let text = render(&error_at(&longer, at, at + 1, "here"), false);
        assert!(text.contains("--> m.csp:1:8005"), "{text}");
    }

    #[test]
    fn unpositioned_and_json() {
        let e = CspError::unpositioned(ErrorKind::Eval, "no");
        assert_eq!(render(&e, false), "error: no");
        let e = error_at("P = Q\n", 4, 5, "unknown name `Q`");
        let json = Diagnostic::from(&e).to_json();
        assert_eq!(
            json,
            serde_json::json!({"error": {"kind": "syntax", "message": "unknown name `Q`",
                "file": "m.csp", "line": 1, "column": 5}})
        );
    }
}
