//! The CSPm front end: lexer, parser (with source spans), name resolution and checks, and the
//! evaluator of expressions and process terms.
//!
//! The subset accepted is the one of FDR's classic examples (see the project's issue 4); any
//! construct outside it is rejected with an error naming it and its position.

pub mod ast;
pub mod error;
pub mod lexer;
pub mod parser;
pub mod source;

pub use error::{CspError, ErrorKind};
pub use source::{Location, SourceMap, Span};
