//! Patterns: matching a value against a pattern, binding its variables.

use super::*;

impl Evaluator {
    pub(super) fn match_pattern(&self, p: &Pattern, v: &Value, env: &mut Env) -> EResult<bool> {
        Ok(match &p.kind {
            PatKind::Wildcard => true,
            PatKind::Var(n) => {
                let constant = match self.prog.globals.get(n) {
                    Some(GlobalKind::Chan(c)) => Some(Value::Chan(*c)),
                    Some(GlobalKind::Ctor(k)) => Some(Value::Ctor(*k)),
                    Some(GlobalKind::True) => Some(Value::Bool(true)),
                    Some(GlobalKind::False) => Some(Value::Bool(false)),
                    _ => None,
                };
                match constant {
                    Some(c) => &c == v,
                    None => {
                        env.push((n.clone(), Binding::Value(v.clone())));
                        true
                    }
                }
            }
            PatKind::Int(i) => v == &Value::Int(*i),
            PatKind::Bool(b) => v == &Value::Bool(*b),
            PatKind::Char(c) => v == &Value::Char(*c),
            PatKind::Tuple(ps) => match v {
                Value::Tuple(vs) if vs.len() == ps.len() => {
                    for (q, w) in ps.iter().zip(vs.iter()) {
                        if !self.match_pattern(q, w, env)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            PatKind::Seq(ps) => match v {
                Value::Seq(vs) if vs.len() == ps.len() => {
                    for (q, w) in ps.iter().zip(vs.iter()) {
                        if !self.match_pattern(q, w, env)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            PatKind::Set(_) if !v.is_comparable() => {
                return Err(self.err(
                    p.span,
                    ErrorKind::Type,
                    "a set pattern cannot match a set of processes or functions",
                ))
            }
            PatKind::Set(ps) => match (v, ps.as_slice()) {
                (Value::Set(vs), []) => vs.is_empty(),
                (Value::Set(vs), [q]) if vs.len() == 1 => self.match_pattern(q, &vs[0], env)?,
                _ => false,
            },
            PatKind::Concat(a, b) => {
                if let Value::InfSeq(..) | Value::LazySeq(_) = v {
                    // only a fixed-length left side can match: an infinite sequence has no end
                    let Some(k) = a.fixed_seq_len() else {
                        return Ok(false);
                    };
                    let mut first = Vec::with_capacity(k);
                    let mut rest = v.clone();
                    while first.len() < k {
                        let Some((x, next)) = self.uncons(&rest, p.span)? else {
                            return Ok(false);
                        };
                        first.push(x);
                        rest = next;
                    }
                    return Ok(self.match_pattern(a, &Value::Seq(first.into()), env)?
                        && self.match_pattern(b, &rest, env)?);
                }
                let Value::Seq(vs) = v else { return Ok(false) };
                let split = match (a.fixed_seq_len(), b.fixed_seq_len()) {
                    (Some(k), _) => k,
                    (None, Some(k)) => {
                        if k > vs.len() {
                            return Ok(false);
                        }
                        vs.len() - k
                    }
                    (None, None) => {
                        return Err(self.err(
                            p.span,
                            ErrorKind::Unsupported,
                            "a `^` pattern needs a sequence of fixed length on one side",
                        ))
                    }
                };
                if split > vs.len() {
                    return Ok(false);
                }
                self.match_pattern(a, &Value::Seq(vs.slice(0..split)), env)?
                    && self.match_pattern(b, &Value::Seq(vs.slice(split..vs.len())), env)?
            }
            PatKind::Both(a, b) => {
                self.match_pattern(a, v, env)? && self.match_pattern(b, v, env)?
            }
            PatKind::Dot(ps) => {
                let atoms = v.atoms();
                let mut i = 0;
                // Field types guide the split: a component naming a channel or constructor (or
                // the first component, over a channel or constructor value: `x.y` matches `B.1`
                // with `x = B`) takes one atom and opens the fields of that head.
                let mut contexts: Vec<(Arc<[FieldSet]>, usize)> = Vec::new();
                let next_field = |contexts: &mut Vec<(Arc<[FieldSet]>, usize)>| {
                    while contexts.last().is_some_and(|(f, j)| *j >= f.len()) {
                        contexts.pop();
                    }
                    contexts.last_mut().map(|(f, j)| {
                        *j += 1;
                        f[*j - 1].clone()
                    })
                };
                for (k, q) in ps.iter().enumerate() {
                    if i >= atoms.len() {
                        return Ok(false);
                    }
                    let names_head = match &q.kind {
                        PatKind::Var(n) => matches!(
                            self.prog.globals.get(n),
                            Some(GlobalKind::Chan(_) | GlobalKind::Ctor(_))
                        ),
                        _ => false,
                    };
                    let head_fields = match &atoms[i] {
                        Value::Chan(c) => Some(self.chan_fields(*c)?),
                        Value::Ctor(c) => Some(self.ctor_fields(*c)?),
                        _ => None,
                    };
                    let takes_head =
                        head_fields.is_some() && k + 1 < ps.len() && (names_head || k == 0);
                    let n = if takes_head {
                        next_field(&mut contexts);
                        if let Some(f) = head_fields {
                            contexts.push((f, 0));
                        }
                        1
                    } else if k + 1 == ps.len() {
                        atoms.len() - i
                    } else {
                        match next_field(&mut contexts) {
                            Some(f) => self.field_len(Some(&f), atoms, i)?.max(1),
                            None => self.value_len(atoms, i)?,
                        }
                    };
                    // a component such as `(x.y) @@ (a.b.c)` needs as many atoms as its
                    // longest dotted side
                    let n = if k + 1 < ps.len() {
                        n.max(min_width(q))
                    } else {
                        n
                    };
                    let n = n.min(atoms.len() - i);
                    let part = Value::from_atoms(&atoms[i..i + n]);
                    if !self.match_pattern(q, &part, env)? {
                        return Ok(false);
                    }
                    i += n;
                }
                i == atoms.len()
            }
        })
    }
}

/// The fewest atoms a value matching `p` has, as a component of a dotted pattern: a dotted
/// pattern takes one atom per component at least, `p @@ q` as many as the wider side.
fn min_width(p: &Pattern) -> usize {
    match &p.kind {
        PatKind::Dot(ps) => ps.iter().map(min_width).sum(),
        PatKind::Both(a, b) => min_width(a).max(min_width(b)),
        _ => 1,
    }
}
