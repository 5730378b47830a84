//! Built-ins on sets: `union`, `inter`, `diff`, `Union`, `Inter`, `member`, `card`, `empty`
//! and `Set`.

use super::*;

/// `union(a, b)`, `inter(a, b)`, `diff(a, b)`.
pub(super) fn union_inter_diff(c: &BuiltinCall) -> EResult<Value> {
    let (args, b) = (c.args, c.b);
    match (&args[0], &args[1], b) {
        (Value::IntSet, Value::Set(s), Builtin::Inter)
        | (Value::Set(s), Value::IntSet, Builtin::Inter) => {
            return Ok(Value::Set(
                s.iter()
                    .filter(|v| matches!(v, Value::Int(_)))
                    .cloned()
                    .collect(),
            ))
        }
        (Value::Set(s), Value::IntSet, Builtin::Diff) => {
            return Ok(Value::Set(
                s.iter()
                    .filter(|v| !matches!(v, Value::Int(_)))
                    .cloned()
                    .collect(),
            ))
        }
        (Value::IntSet, Value::IntSet, Builtin::Union | Builtin::Inter) => {
            return Ok(Value::IntSet)
        }
        _ => {}
    }
    let (Some(x), Some(y)) = (as_set(&args[0]), as_set(&args[1])) else {
        return c.bad("two finite sets");
    };
    let items: Vec<Value> = match b {
        Builtin::Union => x.iter().chain(y.iter()).cloned().collect(),
        Builtin::Inter => x
            .iter()
            .filter(|v| y.binary_search(v).is_ok())
            .cloned()
            .collect(),
        _ => x
            .iter()
            .filter(|v| y.binary_search(v).is_err())
            .cloned()
            .collect(),
    };
    Ok(Value::set_from(items))
}

/// `Union(s)`, `Inter(s)` of a set of sets.
pub(super) fn union_inter_all(c: &BuiltinCall) -> EResult<Value> {
    let Some(sets) = as_set(&c.args[0]) else {
        return c.bad("a set of sets");
    };
    let mut parts = Vec::new();
    for s in sets.iter() {
        match as_set(s) {
            Some(p) => parts.push(p),
            None => return c.bad("a set of sets"),
        }
    }
    if c.b == Builtin::UnionAll {
        Ok(Value::set_from(
            parts.iter().flat_map(|p| p.iter().cloned()).collect(),
        ))
    } else {
        let Some((first, rest)) = parts.split_first() else {
            return Err(c.err(ErrorKind::Eval, "`Inter` of an empty set of sets"));
        };
        Ok(Value::Set(
            first
                .iter()
                .filter(|v| rest.iter().all(|p| p.binary_search(v).is_ok()))
                .cloned()
                .collect(),
        ))
    }
}

/// `member(x, s)`.
pub(super) fn member(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[1] {
        Value::Set(s) => Ok(Value::Bool(s.binary_search(&c.args[0]).is_ok())),
        Value::IntSet => Ok(Value::Bool(matches!(c.args[0], Value::Int(_)))),
        _ => c.bad("a value and a set"),
    }
}

/// `card(s)`.
pub(super) fn card(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) => Ok(Value::Int(s.len() as i64)),
        _ => c.bad("a finite set"),
    }
}

/// `empty(s)`.
pub(super) fn empty(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Set(s) => Ok(Value::Bool(s.is_empty())),
        Value::IntSet => Ok(Value::Bool(false)),
        _ => c.bad("a set"),
    }
}

/// `Set(s)`: all subsets of a set of at most 20 elements.
pub(super) fn powerset(c: &BuiltinCall) -> EResult<Value> {
    let Some(s) = as_set(&c.args[0]) else {
        return c.bad("a finite set");
    };
    if s.len() > 20 {
        return Err(c.err(
            ErrorKind::Limit,
            "`Set` of a set with more than 20 elements",
        ));
    }
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
