//! The CSPm front end: lexer, parser (with source spans), name resolution and checks, and the
//! evaluator of expressions and process terms.
//!
//! The subset accepted is the one of FDR's classic examples (see the project's issue 4); any
//! construct outside it is rejected with an error naming it and its position.

pub mod error;
pub mod eval;
pub mod process;
pub mod resolve;
pub mod syntax;
pub mod value;

pub use process::labels;
pub use resolve as check;
pub use syntax::{ast, lexer, parser, pretty, source};

pub use error::{CspError, ErrorKind};
pub use eval::{
    load_script, load_str, set_thread_stack_budget, Assertion, AssertionCheck, EventTable,
    FieldSet, Note, Script,
};
pub use process::labels::TICK;
pub use process::system::{ComponentState, CspState, CspSystem};
pub use process::terms::MAX_NESTING;
pub use source::{Location, SourceMap, Span};
pub use value::{
    Binding, Call, EventRelation, EventSet, Func, PrefixClosure, Proc, ProcNode, Target, Value,
};
