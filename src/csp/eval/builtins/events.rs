//! Built-ins on events: `productions` and `extensions`.

use super::*;

/// `productions(x)`: the events that extend `x`.
pub(super) fn productions(c: &BuiltinCall) -> EResult<Value> {
    c.script.productions(&c.args[0], c.span)
}

/// `extensions(x)`: the remainders `r` such that `x.r` is an event.
pub(super) fn extensions(c: &BuiltinCall) -> EResult<Value> {
    c.script.extensions(&c.args[0], c.span)
}
