//! The CSPm front end: lexer, parser (with source spans), name resolution and checks, and the
//! evaluator of expressions and process terms.
//!
//! The subset accepted is the one of FDR's classic examples (see the project's issue 4); any
//! construct outside it is rejected with an error naming it and its position.

pub mod error;
pub mod eval;
pub mod labels;
mod layout;
mod network;
pub mod resolve;
mod semantics;
pub mod syntax;
mod system;
mod terms;
pub mod value;

pub use resolve as check;
pub use syntax::{ast, lexer, parser, pretty, source};

pub use error::{CspError, ErrorKind};
pub use eval::{
    load_script, load_str, set_thread_stack_budget, Assertion, AssertionCheck, EventTable,
    FieldSet, Note, Script,
};
pub use labels::TICK;
pub use source::{Location, SourceMap, Span};
pub use system::{ComponentState, CspState, CspSystem};
pub use terms::MAX_NESTING;
pub use value::{
    Binding, Call, EventRelation, EventSet, Func, PrefixClosure, Proc, ProcNode, Target, Value,
};
