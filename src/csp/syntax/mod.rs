//! Syntax, the first stage of the CSPm front end: the source map, tokens and the lexer, the
//! parser (declarations, expressions, patterns) with its precedence table, the AST, the
//! printer back to CSPm text, and the lowering of timed sections to explicit timed nodes
//! (`timed`, run by the loader before resolution).

#![forbid(unsafe_code)]

pub mod ast;
pub mod lexer;
pub mod modules;
pub mod parser;
pub mod precedence;
pub mod pretty;
pub mod shape;
pub mod source;
pub(crate) mod timed;
pub mod tokens;
