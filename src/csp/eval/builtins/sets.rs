//! Built-ins on sets: `union`, `inter`, `diff`, `Union`, `Inter`, `member`, `card`, `empty`
//! and `Set`.

use super::*;

/// True for a set value, finite or not.
fn is_set(v: &Value) -> bool {
    matches!(v, Value::Set(_) | Value::Infinite(_))
}

/// `union(a, b)`, `inter(a, b)`, `diff(a, b)`.
pub(super) fn union_inter_diff(c: &BuiltinCall) -> EResult<Value> {
    let (args, b) = (c.args, c.b);
    if !is_set(&args[0]) || !is_set(&args[1]) {
        return c.bad("two sets");
    }
    match b {
        Builtin::Union => c.script.set_union(args.to_vec()),
        Builtin::Inter => c.script.set_inter(&args[0], &args[1]),
        _ => c.script.set_diff(&args[0], &args[1]),
    }
}

/// `Union(s)`, `Inter(s)` of a set of sets.
pub(super) fn union_inter_all(c: &BuiltinCall) -> EResult<Value> {
    let Some(sets) = as_set(&c.args[0]) else {
        return match &c.args[0] {
            Value::Infinite(_) => {
                Err(c
                    .script
                    .infinite_error(c.span, &c.args[0], &format!("`{}`", c.b.name())))
            }
            _ => c.bad("a set of sets"),
        };
    };
    if sets.iter().any(|s| !is_set(s)) {
        return c.bad("a set of sets");
    }
    if c.b == Builtin::UnionAll {
        return c.script.set_union(sets.to_vec());
    }
    let Some((first, rest)) = sets.split_first() else {
        return Err(c.err(ErrorKind::Eval, "`Inter` of an empty set of sets"));
    };
    let mut acc = first.clone();
    for s in rest {
        acc = c.script.set_inter(&acc, s)?;
    }
    Ok(acc)
}

/// `member(x, s)`.
pub(super) fn member(c: &BuiltinCall) -> EResult<Value> {
    if !is_set(&c.args[1]) {
        return c.bad("a value and a set");
    }
    Ok(Value::Bool(c.script.set_contains(&c.args[1], &c.args[0])?))
}

/// `card(s)`.
pub(super) fn card(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) => Ok(Value::Int(s.len() as i64)),
        // A datatype or a closure `{| v |}` too large to enumerate: its size is known.
        v @ Value::Infinite(i) => match c.script.described_size(i)? {
            Some(n) => i64::try_from(n).map(Value::Int).map_err(|_| {
                c.err(
                    ErrorKind::Limit,
                    format!("`card`: the set has {n} elements, more than an integer holds"),
                )
            }),
            None => Err(c.script.infinite_error(c.span, v, "`card`")),
        },
        _ => c.bad("a finite set"),
    }
}

/// `empty(s)`.
pub(super) fn empty(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) => Ok(Value::Bool(s.is_empty())),
        Value::Infinite(i) if c.script.surely_huge(i)? => Ok(Value::Bool(false)),
        v @ Value::Infinite(_) => Err(c.err(
            ErrorKind::Unsupported,
            format!(
                "weft cannot decide whether the infinite set {} is empty",
                c.script.show(v)
            ),
        )),
        _ => c.bad("a set"),
    }
}

/// `Set(s)`: all subsets of a set; kept as a description (finite subsets) when `s` is
/// infinite or has more than 20 elements.
pub(super) fn powerset(c: &BuiltinCall) -> EResult<Value> {
    let s = match &c.args[0] {
        Value::Set(s) if s.len() <= 20 => s.clone(),
        v @ (Value::Set(_) | Value::Infinite(_)) => return Ok(InfSet::Sets(v.clone()).value()),
        _ => return c.bad("a set"),
    };
    let mut out = Vec::with_capacity(1 << s.len());
    for mask in 0u32..(1u32 << s.len()) {
        let sub: Vec<Value> = (0..s.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| s[i].clone())
            .collect();
        out.push(Value::Set(sub.into()));
    }
    Ok(Value::set_from(out))
}

/// `Seq(s)`: the finite sequences with elements in `s`, kept as a description (`{<>}` when
/// `s` is empty).
pub(super) fn seq_type(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) if s.is_empty() => Ok(Value::Set([Value::Seq(SeqValue::empty())].into())),
        v @ (Value::Set(_) | Value::Infinite(_)) => Ok(InfSet::Seqs(v.clone()).value()),
        _ => c.bad("a set"),
    }
}
