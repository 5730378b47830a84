//! The memo of evaluation: what the [`Evaluator`] records while it evaluates, kept apart from
//! the program's tables ([`Tables`], read-only after load).

use super::*;
use crate::hash::WordBuildHasher;

/// Caches and records the evaluator writes after load, each for a reason:
///
/// - `unfolds`: the body of every named process call met (`P(3)` to the right-hand side of
///   `P` with its parameter bound to 3). A call is a process term's name for its body: the
///   semantics unfolds calls on every visit of a state, and evaluating a body again each time
///   would make exploration slower by a factor of the body's size; it also gives `P = P` its
///   body (the call itself). Which calls a script reaches is known only by exploring, so this
///   cannot be a table filled at load.
/// - `let_values`: the value of each `let` constant of each closure instance (the same
///   instance is evaluated once, however often its body uses the name).
/// - `endless`: calls found defined as themselves (`P = P`), with where they were used, to
///   report a non-terminating evaluation at the definition.
///
/// All are concurrent maps: exploration threads share one evaluator. Entries are keyed by
/// values only, so what they hold does not depend on which thread wrote it first.
#[derive(Default)]
pub(super) struct Memo {
    pub(super) unfolds: DashMap<Call, Proc, WordBuildHasher>,
    pub(super) let_values: DashMap<(Arc<LetRef>, u32), Value, WordBuildHasher>,
    pub(super) endless: DashMap<Call, Span, WordBuildHasher>,
}
