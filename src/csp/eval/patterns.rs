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
                let fields = self.value_fields(v.atoms())?;
                self.match_dot(ps, fields, env)?
            }
        })
    }

    /// The top-level fields of a dotted value, as libcspm holds them: a channel head, then
    /// the channel's fields by its declared types; otherwise each field is one whole value
    /// (a constructor with its own fields, recursively; any other value alone), so
    /// `A.1.B` (with `A` of one field) is the two fields `A.1` and `B`.
    pub(super) fn value_fields(&self, atoms: &[Value]) -> EResult<Vec<Value>> {
        if let Some(Value::Chan(c)) = atoms.first() {
            let mut out = vec![atoms[0].clone()];
            out.extend(self.typed_groups(*c, &atoms[1..])?.into_iter().map(|g| g.0));
            return Ok(out);
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < atoms.len() {
            let n = self.value_len(atoms, i)?.max(1);
            out.push(Value::from_atoms(&atoms[i..i + n]));
            i += n;
        }
        Ok(out)
    }

    /// The head and the fields of `v` when it is one channel or constructor value with
    /// fields (`A.1` is `A` and `1`), or `None`.
    fn open_head(&self, v: &Value) -> EResult<Option<Vec<Value>>> {
        let atoms = v.atoms();
        let fields = match atoms.first() {
            Some(Value::Chan(c)) if atoms.len() > 1 => self.chan_fields(*c)?,
            Some(Value::Ctor(k)) if atoms.len() > 1 => self.ctor_fields(*k)?,
            _ => return Ok(None),
        };
        let mut out = vec![atoms[0].clone()];
        out.extend(
            self.groups_by_fields(&fields, &atoms[1..])?
                .into_iter()
                .map(|g| g.0),
        );
        Ok(Some(out))
    }

    /// Matches the components `ps` of a dotted pattern against the top-level `fields` of a
    /// value: each unit of the pattern (a constructor named in the pattern with its argument
    /// units, or any other component) takes one field, the last unit all the fields left.
    /// A pattern that names the value's head first (`A.n`, `c.x.y`), or that has more units
    /// than the value has fields (`x.y` against `B.1`), opens the first field into its head
    /// and the head's own fields.
    pub(super) fn match_dot(
        &self,
        ps: &[Pattern],
        mut fields: Vec<Value>,
        env: &mut Env,
    ) -> EResult<bool> {
        let names_head = |q: &Pattern| match &q.kind {
            PatKind::Var(n) => matches!(
                self.prog.globals.get(n),
                Some(GlobalKind::Chan(_) | GlobalKind::Ctor(_))
            ),
            _ => false,
        };
        let mut units = Vec::new();
        let mut k = 0;
        if ps.first().is_some_and(names_head) {
            units.push(&ps[..1]);
            k = 1;
        }
        while k < ps.len() {
            let end = self.pattern_unit_end(ps, k)?;
            units.push(&ps[k..end]);
            k = end;
        }
        let opens = ps.len() > 1 && (names_head(&ps[0]) || units.len() > fields.len());
        if opens && !fields.is_empty() {
            if let Some(parts) = self.open_head(&fields[0])? {
                fields.splice(0..1, parts);
            }
        }
        let mut f = 0;
        for (u, unit) in units.iter().enumerate() {
            if f >= fields.len() {
                return Ok(false);
            }
            let last = u + 1 == units.len();
            // a unit such as `(x.y) @@ (a.b.c)` over plain atoms takes as many atoms as its
            // longest dotted side
            let width = unit.iter().map(min_width).sum::<usize>();
            let mut end = f + 1;
            let mut atoms_taken = fields[f].atoms().len();
            while !last && atoms_taken < width && end < fields.len() {
                atoms_taken += fields[end].atoms().len();
                end += 1;
            }
            if last {
                end = fields.len();
            }
            let part = if end == f + 1 {
                fields[f].clone()
            } else {
                let atoms: Vec<Value> = fields[f..end]
                    .iter()
                    .flat_map(|x| x.atoms().iter().cloned())
                    .collect();
                Value::from_atoms(&atoms)
            };
            let ok = match unit {
                [q] => self.match_pattern(q, &part, env)?,
                _ => {
                    let inner = self.value_fields(part.atoms())?;
                    self.match_dot(unit, inner, env)?
                }
            };
            if !ok {
                return Ok(false);
            }
            f = end;
        }
        Ok(f == fields.len())
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
