//! Built-ins on maps: `Map`, `mapFromList`, `mapToList`, `mapLookup`, `mapMember`,
//! `mapUpdate`, `mapUpdateMultiple` and `mapDelete`.

use super::*;

/// The pairs of a sequence of pairs `<(k, v), ...>`.
fn pairs_of(c: &BuiltinCall, v: &Value) -> Option<Vec<(Value, Value)>> {
    let _ = c;
    let Value::Seq(items) = v else {
        return None;
    };
    items
        .iter()
        .map(|p| match p {
            Value::Tuple(kv) if kv.len() == 2 => Some((kv[0].clone(), kv[1].clone())),
            _ => None,
        })
        .collect()
}

/// Checks that every key of `pairs` can be compared (put in a map); values may be anything
/// (processes too), as in FDR, where only the keys' type must be in `Set`.
fn comparable(c: &BuiltinCall, pairs: &[(Value, Value)]) -> EResult<()> {
    match pairs.iter().find(|(k, _)| !k.is_comparable()) {
        Some((k, v)) => Err(c.err(
            ErrorKind::Type,
            format!(
                "`{}`: ({}, {}) cannot be put in a map (processes and functions are not \
                 comparable)",
                c.b.name(),
                c.script.show(k),
                c.script.show(v)
            ),
        )),
        None => Ok(()),
    }
}

/// The position of `key` in the sorted pairs of a map.
fn find(pairs: &[(Value, Value)], key: &Value) -> Result<usize, usize> {
    pairs.binary_search_by(|(k, _)| k.cmp(key))
}

/// `mapFromList(<(k, v), ...>)`: the later of two pairs with the same key wins.
pub(super) fn from_list(c: &BuiltinCall) -> EResult<Value> {
    let Some(pairs) = pairs_of(c, &c.args[0]) else {
        return c.bad("a sequence of pairs");
    };
    comparable(c, &pairs)?;
    Ok(Value::map_from(pairs))
}

/// `mapToList(m)`: the pairs in key order.
pub(super) fn to_list(c: &BuiltinCall) -> EResult<Value> {
    let Value::Map(m) = &c.args[0] else {
        return c.bad("a map");
    };
    Ok(Value::Seq(
        m.iter()
            .map(|(k, v)| Value::Tuple(Arc::from([k.clone(), v.clone()])))
            .collect(),
    ))
}

/// `mapLookup(m, k)`: an error when `k` is not a key of `m`.
pub(super) fn lookup(c: &BuiltinCall) -> EResult<Value> {
    let Value::Map(m) = &c.args[0] else {
        return c.bad("a map and a key");
    };
    match find(m, &c.args[1]) {
        Ok(i) => Ok(m[i].1.clone()),
        Err(_) => Err(c.err(
            ErrorKind::Eval,
            format!(
                "`mapLookup`: the key {} is not in the domain of the map {}",
                c.script.show(&c.args[1]),
                c.script.show(&c.args[0])
            ),
        )),
    }
}

/// `mapMember(m, k)`.
pub(super) fn member(c: &BuiltinCall) -> EResult<Value> {
    let Value::Map(m) = &c.args[0] else {
        return c.bad("a map and a key");
    };
    Ok(Value::Bool(find(m, &c.args[1]).is_ok()))
}

/// `mapUpdate(m, k, v)`: `m` with `k` mapped to `v`.
pub(super) fn update(c: &BuiltinCall) -> EResult<Value> {
    let Value::Map(m) = &c.args[0] else {
        return c.bad("a map, a key and a value");
    };
    let pair = (c.args[1].clone(), c.args[2].clone());
    comparable(c, std::slice::from_ref(&pair))?;
    let mut pairs = m.to_vec();
    pairs.push(pair);
    Ok(Value::map_from(pairs))
}

/// `mapUpdateMultiple(m, <(k, v), ...>)`: `m` updated with each pair in turn.
pub(super) fn update_multiple(c: &BuiltinCall) -> EResult<Value> {
    let (Value::Map(m), Some(more)) = (&c.args[0], pairs_of(c, &c.args[1])) else {
        return c.bad("a map and a sequence of pairs");
    };
    comparable(c, &more)?;
    let mut pairs = m.to_vec();
    pairs.extend(more);
    Ok(Value::map_from(pairs))
}

/// `mapDelete(m, k)`: `m` without the key `k` (the same map if it has no such key).
pub(super) fn delete(c: &BuiltinCall) -> EResult<Value> {
    let Value::Map(m) = &c.args[0] else {
        return c.bad("a map and a key");
    };
    let mut pairs = m.to_vec();
    if let Ok(i) = find(&pairs, &c.args[1]) {
        pairs.remove(i);
    }
    Ok(Value::Map(pairs.into()))
}

/// `Map(K, V)`: every finite map with keys in `K` and values in `V` — enumerated when there
/// are few enough (`(|V| + 1)^|K|`), else a set that answers membership only.
pub(super) fn map_type(c: &BuiltinCall) -> EResult<Value> {
    let is_set = |v: &Value| matches!(v, Value::Set(_) | Value::Infinite(_));
    if !is_set(&c.args[0]) || !is_set(&c.args[1]) {
        return c.bad("two sets");
    }
    let described = InfSet::Maps(c.args[0].clone(), c.args[1].clone());
    if c.script.surely_huge(&described)? {
        return Ok(described.value());
    }
    let (Value::Set(keys), Value::Set(values)) = (&c.args[0], &c.args[1]) else {
        return Ok(described.value());
    };
    let mut maps: Vec<Vec<(Value, Value)>> = vec![Vec::new()];
    for k in keys.iter() {
        let mut next = Vec::with_capacity(maps.len() * (values.len() + 1));
        for m in &maps {
            next.push(m.clone());
            for v in values.iter() {
                let mut with = m.clone();
                with.push((k.clone(), v.clone()));
                next.push(with);
            }
        }
        maps = next;
    }
    // keys come in sorted order, so each map's pairs are already sorted
    c.script.make_set(
        maps.into_iter().map(|m| Value::Map(m.into())).collect(),
        c.span,
    )
}
