//! Built-ins on sequences: `set`, `seq`, `head`, `tail`, `concat`, `null`, `elem` and
//! `length`.

use super::*;

/// `set(s)`: the elements of a sequence.
pub(super) fn set_of_seq(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Seq(s) => c.script.make_set(s.to_vec(), c.span),
        Value::InfSeq(..) | Value::LazySeq(_) => Err(infinite_seq(c)),
        _ => c.bad("a sequence"),
    }
}

/// `seq(s)`: a finite set as a sequence, in value order.
pub(super) fn seq_of_set(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) => Ok(Value::Seq(s.items()[..].into())),
        _ => c.bad("a finite set"),
    }
}

/// `head(s)`, `tail(s)` of a non-empty sequence.
pub(super) fn head_tail(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Seq(s) if !s.is_empty() => Ok(if c.b == Builtin::Head {
            s[0].clone()
        } else {
            Value::Seq(s.skip(1))
        }),
        Value::Seq(_) => Err(c.err(
            ErrorKind::Eval,
            format!("`{}` of the empty sequence", c.b.name()),
        )),
        v @ (Value::InfSeq(..) | Value::LazySeq(_)) => match c.script.uncons(v, c.span)? {
            Some((x, rest)) => Ok(if c.b == Builtin::Head { x } else { rest }),
            None => c.bad("a sequence"),
        },
        _ => c.bad("a sequence"),
    }
}

/// `concat(s)` of a sequence of sequences.
pub(super) fn concat(c: &BuiltinCall) -> EResult<Value> {
    let Value::Seq(s) = &c.args[0] else {
        return c.bad("a sequence of sequences");
    };
    let mut out = Vec::new();
    for x in s.iter() {
        match x {
            Value::Seq(t) => out.extend_from_slice(t),
            _ => return c.bad("a sequence of sequences"),
        }
    }
    Ok(Value::Seq(out.into()))
}

/// `null(s)`.
pub(super) fn null(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Seq(s) => Ok(Value::Bool(s.is_empty())),
        Value::InfSeq(..) => Ok(Value::Bool(false)),
        v @ Value::LazySeq(_) => Ok(Value::Bool(c.script.uncons(v, c.span)?.is_none())),
        _ => c.bad("a sequence"),
    }
}

/// `elem(x, s)`: of an infinite sequence, true once `x` is drawn from it.
pub(super) fn elem(c: &BuiltinCall) -> EResult<Value> {
    match c.script.seq_contains(&c.args[0], &c.args[1], c.span)? {
        Some(found) => Ok(Value::Bool(found)),
        None => c.bad("a value and a sequence"),
    }
}

/// `length(s)`.
pub(super) fn length(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Seq(s) => Ok(Value::Int(s.len() as i64)),
        Value::InfSeq(..) | Value::LazySeq(_) => Err(infinite_seq(c)),
        _ => c.bad("a sequence"),
    }
}

/// The error of a built-in that would need all of an infinite sequence `<m..>`.
fn infinite_seq(c: &BuiltinCall) -> CspError {
    c.err(
        ErrorKind::Eval,
        format!(
            "`{}` needs all of {}, an infinite sequence",
            c.b.name(),
            c.script.show(&c.args[0])
        ),
    )
}
