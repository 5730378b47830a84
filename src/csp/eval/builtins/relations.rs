//! Built-ins on relations (sets of pairs): `transpose`, `relational_image`,
//! `relational_inverse_image` and `mtransclose`.

use std::collections::BTreeMap;

use super::*;

/// The pairs of a finite set of pairs.
fn pairs_of(v: &Value) -> Option<Vec<(Value, Value)>> {
    let Value::Set(items) = v else {
        return None;
    };
    items
        .iter()
        .map(|p| match p {
            Value::Tuple(xy) if xy.len() == 2 => Some((xy[0].clone(), xy[1].clone())),
            _ => None,
        })
        .collect()
}

/// `transpose(R)`: `{(y, x) | (x, y) <- R}`.
pub(super) fn transpose(c: &BuiltinCall) -> EResult<Value> {
    let Some(pairs) = pairs_of(&c.args[0]) else {
        return c.bad("a finite set of pairs");
    };
    Ok(Value::set_from(
        pairs
            .into_iter()
            .map(|(x, y)| Value::Tuple(Arc::from([y, x])))
            .collect(),
    ))
}

/// `relational_image(R)` and `relational_inverse_image(R)`: the function itself, `R`
/// applied (the image is computed when it is applied to a value, see [`image`]).
pub(super) fn image_function(c: &BuiltinCall) -> EResult<Value> {
    if pairs_of(&c.args[0]).is_none() {
        return c.bad("a finite set of pairs");
    }
    Ok(Value::Func(Arc::new(Func {
        target: Target::Builtin(c.b),
        applied: vec![Arc::from(c.args)],
    })))
}

/// `relational_image(R)(x)` = `{y | (x', y) <- R, x' == x}`, and
/// `relational_inverse_image(R)(y)` = `{x | (x, y') <- R, y' == y}`.
pub(super) fn image(c: &BuiltinCall, relation: &Value) -> EResult<Value> {
    let Some(pairs) = pairs_of(relation) else {
        return c.bad("a finite set of pairs");
    };
    let inverse = c.b == Builtin::RelationalInverseImage;
    let x = &c.args[0];
    Ok(Value::set_from(
        pairs
            .into_iter()
            .filter_map(|(a, b)| {
                let (from, to) = if inverse { (b, a) } else { (a, b) };
                (&from == x).then_some(to)
            })
            .collect(),
    ))
}

/// `mtransclose(R, D)`, as FDR defines it: the classes of the symmetric transitive closure
/// of `R` (not reflexive: an element in no pair of `R` is in no class), each with a
/// representative (weft takes its least element); the result holds `(rep(x), x)` for every
/// `x` of a class other than its representative, where both are in `D`.
pub(super) fn mtransclose(c: &BuiltinCall) -> EResult<Value> {
    let (Some(pairs), Value::Set(domain)) = (pairs_of(&c.args[0]), &c.args[1]) else {
        return c.bad("a finite set of pairs and a finite set");
    };
    // union-find over the elements of the pairs; the root of a class is its least element
    let mut parent: BTreeMap<Value, Value> = BTreeMap::new();
    fn root(parent: &BTreeMap<Value, Value>, x: &Value) -> Value {
        let mut r = x.clone();
        while let Some(p) = parent.get(&r) {
            if *p == r {
                break;
            }
            r = p.clone();
        }
        r
    }
    for (a, b) in &pairs {
        parent.entry(a.clone()).or_insert_with(|| a.clone());
        parent.entry(b.clone()).or_insert_with(|| b.clone());
        let (ra, rb) = (root(&parent, a), root(&parent, b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            parent.insert(hi, lo);
        }
    }
    let in_domain = |v: &Value| domain.binary_search(v).is_ok();
    let out: Vec<Value> = parent
        .keys()
        .filter_map(|x| {
            let r = root(&parent, x);
            (r != *x && in_domain(x) && in_domain(&r))
                .then(|| Value::Tuple(Arc::from([r, x.clone()])))
        })
        .collect();
    Ok(Value::set_from(out))
}

/// `loop(P)`: the process `P ; loop(P)`, named so that it is finite.
pub(super) fn loop_process(c: &BuiltinCall) -> EResult<Value> {
    match &c.args[0] {
        Value::Proc(_) => Ok(Value::Proc(Proc::new(ProcNode::Call(Call {
            target: Target::Builtin(Builtin::Loop),
            args: Arc::from(c.args),
        })))),
        _ => c.bad("a process"),
    }
}
