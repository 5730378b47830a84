//! The CSPm front end, in the stages of its pipeline (libcspm's phases): [`syntax`] (source
//! map, tokens, lexer, parser, AST, printer), [`resolve`] (names, arity, free variables),
//! [`typecheck`] (static types, as libcspm checks them; a script it rejects does not load),
//! [`eval`] (the program's tables, the evaluator, values) and [`process`] (process terms,
//! firing rules, networks and the system the engines explore). The paths of the modules
//! before this split (`csp::parser`, `csp::value`, `csp::labels`, ...) are re-exported.
//!
//! The subset accepted is the one of FDR's classic examples (see the project's issue 4); any
//! construct outside it is rejected with an error naming it and its position.

pub mod error;
pub mod eval;
pub mod process;
pub mod resolve;
pub mod syntax;
pub mod typecheck;

pub use eval::value;
pub use process::labels;
pub use resolve as check;
pub use syntax::{ast, lexer, parser, pretty, source};

pub use error::{CspError, ErrorKind};
pub use eval::{
    load_script, load_script_until, load_str, set_thread_stack_budget, Assertion, AssertionCheck,
    EventTable, FieldSet, Note, Script,
};
pub use process::describe::ComponentState;
pub use process::labels::TICK;
pub use process::shared_leaves::SystemMaker;
pub use process::system::{CspState, CspSystem};
pub use process::terms::MAX_NESTING;
pub use source::{Location, SourceMap, Span};
pub use value::{
    Binding, Call, EventRelation, EventSet, Func, PrefixClosure, Proc, ProcNode, Target, TimedProc,
    Value,
};
