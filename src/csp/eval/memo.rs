//! The memo of evaluation: what the [`Evaluator`] records while it evaluates, kept apart from
//! the program's tables ([`Tables`], read-only after load).

use super::*;
use crate::hash::WordBuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};

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
/// - `lazy_channels`: whether a channel's events are enumerated (a fact of its type, asked
///   for every event a prefix offers).
/// - `results`: the value of each call of a function whose result is plain data (no process,
///   no function), as `Deduce(S)` of an intruder's knowledge `S`: evaluation is pure, so a
///   call met again (the same set from another state, or for each of the events of an
///   input) is looked up instead of evaluated again. Errors are not recorded (they are met
///   again, at their position). Bounded by [`MAX_RESULTS_WEIGHT`].
/// - `events`: the value of `Events`, so that every use shares one set.
///
/// All are concurrent maps: exploration threads share one evaluator. Entries are keyed by
/// values only, so what they hold does not depend on which thread wrote it first.
#[derive(Default)]
pub(super) struct Memo {
    pub(super) unfolds: DashMap<Call, Proc, WordBuildHasher>,
    pub(super) let_values: DashMap<(Arc<LetRef>, u32), Value, WordBuildHasher>,
    pub(super) endless: DashMap<Call, Span, WordBuildHasher>,
    pub(super) results: DashMap<Call, Value, WordBuildHasher>,
    /// Whether each channel met is lazy (`Evaluator::lazy_channel`, asked for every event
    /// of every prefix).
    pub(super) lazy_channels: DashMap<u32, bool, WordBuildHasher>,
    /// The value of `Events`, made once (see `Evaluator::events_value`).
    pub(super) events: std::sync::OnceLock<Value>,
    /// The weight of `results` so far (see [`Memo::record_result`]).
    results_weight: AtomicUsize,
}

/// Most values (counted one per argument, element or field at the top of each key and
/// result) the memo of function results holds; calls met after it is full are evaluated
/// each time. Keeps a script that recurses over long sequences (a key per suffix) from
/// using memory quadratic in their length.
pub(super) const MAX_RESULTS_WEIGHT: usize = 1 << 22;

/// The number of values at the top of `v`: its elements or fields, or 1.
fn shallow_weight(v: &Value) -> usize {
    1 + match v {
        Value::Set(a) => a.len(),
        Value::Tuple(a) | Value::Dot(a) => a.len(),
        Value::Seq(a) | Value::InfSeq(a, _) => a.len(),
        Value::Map(m) => 2 * m.len(),
        _ => 0,
    }
}

impl Memo {
    /// Records `result` as the value of `call` if it is plain data and the memo has room.
    pub(super) fn record_result(&self, call: &Call, result: &Value) {
        if !result.is_comparable() {
            return;
        }
        let weight = shallow_weight(result) + call.args.iter().map(shallow_weight).sum::<usize>();
        if self.results_weight.fetch_add(weight, Ordering::Relaxed) + weight > MAX_RESULTS_WEIGHT {
            self.results_weight.fetch_sub(weight, Ordering::Relaxed);
            return;
        }
        self.results.insert(call.clone(), result.clone());
    }
}
