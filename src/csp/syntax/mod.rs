//! Syntax, the first stage of the CSPm front end: the source map, tokens and the lexer, the
//! parser (declarations, expressions, patterns) with its precedence table, the AST, and the
//! printer back to CSPm text.

#![forbid(unsafe_code)]

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod precedence;
pub mod pretty;
pub mod source;
pub mod tokens;
