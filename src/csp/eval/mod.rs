//! Evaluation, the third stage of the CSPm front end: loaded scripts, their tables,
//! expression evaluation to values and process terms.
//!
//! [`load_script`] parses, checks and loads a script. Loading evaluates every top-level
//! constant, channel type, datatype and assertion, and checks the outputs of every prefix
//! with no free variables against its channel's type, so most errors appear at load time
//! with their position. Process expressions evaluate to [`Proc`] terms: named processes stay
//! as [`Call`]s and prefixes as closures, unfolded on demand by [`Script::unfold`] and
//! [`Script::prefix_transitions`].
//!
//! A loaded [`Script`] is an [`Evaluator`] with the results of its load. The evaluator's
//! tables (`tables`) are filled once, at load, in dependency order, and only read afterwards;
//! the caches evaluation writes (the bodies of process calls) are in `memo`, apart.
//!
//! The files of this module are the concerns of evaluation, each an `impl Evaluator` block:
//! `load` loads a script and fills the program's tables (`tables`), `expr` evaluates
//! expressions, `names` and
//! `apply` look up definitions and apply functions, `patterns` matches values,
//! `types` and `dotted` know channel and datatype fields and the event table, `prefix`
//! enumerates the events of prefixes, `builtins` holds the built-in functions, `print`
//! prints values, `guards` bounds stack and depth, `assertions` evaluates assertions, and
//! `timed` gives the constructs of timed sections their tock-CSP meaning.

#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;

use crate::csp::error::{CspError, ErrorKind};
use crate::csp::resolve::{self, DefGroup, DefKind, GlobalKind, Program, Site};
use crate::csp::syntax::ast::*;
use crate::csp::syntax::parser;
use crate::csp::syntax::source::{Location, SourceMap, Span};
use value::*;

mod api;
mod apply;
mod assertions;
mod builtins;
mod diagnostics;
mod dotted;
mod engagement;
mod expr;
mod guards;
mod infinite;
mod lazy_seq;
mod load;
mod memo;
mod names;
mod operators;
mod patterns;
mod prefix;
mod print;
mod process_ops;
mod ranges;
mod seq_value;
mod stop_poll;
mod tables;
mod timed;
mod types;
pub mod value;

use apply::func;
use expr::flatten_dots;
pub use guards::set_thread_stack_budget;
use guards::{
    evaluating, in_progress, recursive_reference, stack_exhausted, EventGuard, Frame, Reference,
    StackGuard,
};
use load::collapse_ws;
pub use load::{load_script, load_script_until, load_str};
use memo::Memo;
use tables::{LoadCells, Tables};

/// Deepest nesting of function and process calls the evaluator follows.
pub const MAX_EVAL_DEPTH: u32 = 1_000_000;

pub use crate::threads::DEFAULT_STACK_BUDGET;

/// Largest set or sequence the evaluator builds.
pub const MAX_COLLECTION: usize = 10_000_000;

/// Most events the channels of a script may have, in all, to be enumerated up front (a channel
/// with more is numbered as its events are met), and most events one prefix may offer in one
/// state. Each event costs a few hundred bytes in the tables and the transitions: beyond this
/// bound one state's successors alone would take gigabytes (`c?x?y?z` over three `{0..1000}`).
pub const MAX_EVENTS: usize = 1 << 21;

/// Elements of a large set or sequence shown in a message ([`Evaluator::show_brief`]).
pub const BRIEF_ITEMS: usize = 10;

/// Stack size of the thread [`load_script`] evaluates on.
pub const LOAD_STACK_BYTES: usize = 256 << 20;

/// Definitions every script has unless it defines the name itself. `BUFFER(n, io)` is FDR's
/// built-in FIFO buffer of capacity `n`: it inputs the first event of a pair of `io` and, in
/// order, outputs the second. `BUFFER_needs_capacity_1_and_one_to_one_pairs'` refuses (no
/// clause matches `false`) a capacity below 1 or pairs that are not one-to-one (FDR rejects
/// both); `BUFFER'` is the state. (No `error(...)` here: a script may declare its own `error`.)
/// The parameters and bound names end in `_'` so that no name of a script can capture them: a
/// script's constructor `A` would otherwise turn a parameter `A` into a pattern that matches
/// only that constructor (`datatype Agent = A | B` made `RUN(A)` match nothing).
const PRELUDE: &str = "\
RUN(events_') = [] event_':events_' @ event_' -> RUN(events_')
CHAOS(events_') = STOP |~| ([] event_':events_' @ event_' -> CHAOS(events_'))
BUFFER(size_', io_') = BUFFER_needs_capacity_1_and_one_to_one_pairs'(size_' >= 1
                              and card({o_' | (_, o_') <- io_'}) == card(io_')
                              and card({i_' | (i_', _) <- io_'}) == card(io_'), size_', io_')
BUFFER_needs_capacity_1_and_one_to_one_pairs'(true, size_', io_') = BUFFER'(size_', io_', <>)
BUFFER'(size_', io_', held_') =
     (#held_' < size_' & [] (i_', o_') : io_' @ i_' -> BUFFER'(size_', io_', held_' ^ <o_'>))
  [] (#held_' > 0 & head(held_') -> BUFFER'(size_', io_', tail(held_')))
";

type Env = Vec<(Name, Binding)>;

/// Sorted atom lists of the events of one channel.
type AtomTable = Arc<[Arc<[Value]>]>;

/// Clauses of a definition: parameter groups and body.
type Clauses<'a> = Vec<(Vec<Vec<Pattern>>, &'a Expr)>;

type EResult<T> = Result<T, CspError>;

/// The type of one field of a channel or constructor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldSet {
    /// A finite set of values.
    Finite(SetElems),
    /// A set weft does not enumerate (`Int`, `Seq(X)`, ...).
    Infinite(Arc<InfSet>),
    /// The values of a datatype (by index), which may be infinite.
    DataType(u32),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventStatus {
    Complete,
    Partial,
    Invalid,
}

/// The events of a script's channels, numbered: all of them, except those of the channels
/// whose events are not enumerated (a field of an infinite type, or too many events), which
/// [`EventTable::lazy_channels`] lists; their events are numbered as a process meets them.
#[derive(Debug)]
pub struct EventTable {
    /// The events, channel by channel in declaration order, each channel's in value order.
    pub events: Vec<Value>,
    /// Their printed names (`c.1.true`).
    pub names: Vec<String>,
    index: HashMap<Value, u32, crate::hash::WordBuildHasher>,
    /// The channels whose events are not in the table, in declaration order.
    pub lazy_channels: Vec<u32>,
}

impl EventTable {
    /// The number of an event.
    pub fn id(&self, event: &Value) -> Option<u32> {
        self.index.get(event).copied()
    }
}

/// What an assertion checks, with its processes evaluated.
#[derive(Clone, Debug)]
pub enum AssertionCheck {
    /// `spec [M= imp`
    Refinement {
        /// Specification.
        spec: Proc,
        /// Model.
        model: Model,
        /// Implementation.
        imp: Proc,
    },
    /// `P :[deadlock free [M]]`
    DeadlockFree {
        /// The process.
        process: Proc,
        /// Model (F or FD).
        model: Model,
    },
    /// `P :[divergence free]`
    DivergenceFree {
        /// The process.
        process: Proc,
    },
    /// `P :[deterministic [M]]`
    Deterministic {
        /// The process.
        process: Proc,
        /// Model (F or FD).
        model: Model,
    },
    /// `P :[has trace [M]]: <e1, e2>`
    HasTrace {
        /// The process.
        process: Proc,
        /// Model.
        model: Model,
        /// The trace's events.
        trace: Vec<Value>,
    },
}

impl AssertionCheck {
    /// The processes the assertion is about (specification first for refinements).
    pub fn processes(&self) -> Vec<&Proc> {
        match self {
            AssertionCheck::Refinement { spec, imp, .. } => vec![spec, imp],
            AssertionCheck::DeadlockFree { process, .. }
            | AssertionCheck::DivergenceFree { process }
            | AssertionCheck::Deterministic { process, .. }
            | AssertionCheck::HasTrace { process, .. } => vec![process],
        }
    }
}

/// An assertion of the script.
#[derive(Clone, Debug)]
pub struct Assertion {
    /// `assert not ...`
    pub negated: bool,
    /// What to check, or why it cannot be checked (an error in a definition it uses, or in
    /// the assertion itself), positioned.
    pub check: Result<AssertionCheck, CspError>,
    /// Where the `assert` is (its line is `location.line`).
    pub location: Location,
    /// The assertion as written (white space collapsed), without the keyword `assert`.
    pub text: String,
}

/// A message for the user that is not an error.
#[derive(Clone, Debug)]
pub struct Note {
    /// Where it applies.
    pub location: Location,
    /// What it says.
    pub message: String,
}

/// A loaded CSPm script: its [`Evaluator`] (which it dereferences to) and what loading
/// found (assertions, notes, errors).
pub struct Script {
    evaluator: Evaluator,
    assertions: Vec<Assertion>,
    notes: Vec<Note>,
    user_defs: usize,
    /// Errors of definitions that no assertion reports.
    errors: Vec<CspError>,
}

impl std::ops::Deref for Script {
    type Target = Evaluator;

    fn deref(&self) -> &Evaluator {
        &self.evaluator
    }
}

/// The evaluator of a loaded script: the checked program and its tables, filled once at
/// load in dependency order ([`tables`]) and only read afterwards; its methods take `&self`
/// and may run on many threads at once. What it records while it evaluates (the bodies of
/// process calls met) is in a separate memo ([`memo`]), not in the tables.
pub struct Evaluator {
    sources: SourceMap,
    prog: Program,
    tables: Tables,
    /// The cells of the tables while the script loads; `None` afterwards.
    loading: Option<Box<LoadCells>>,
    memo: Memo,
    /// The signal that stops long evaluations (see `stop_poll`): the load's while the script
    /// loads, then that of the run checking an assertion.
    stop: parking_lot::Mutex<crate::explore::StopSignal>,
    /// Whether an evaluation was cut short by `stop` (a load so cut short fails as stopped).
    cut_short: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("channels", &self.prog.channels.len())
            .field("definitions", &self.prog.top.defs.len())
            .finish()
    }
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script")
            .field("channels", &self.prog.channels.len())
            .field("definitions", &self.prog.top.defs.len())
            .field("assertions", &self.assertions.len())
            .finish()
    }
}
