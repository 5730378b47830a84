//! Prefixes: the events a prefix offers (its fields, input sets and outputs), the events
//! extending a dotted value, and renaming and link relations.

use super::*;

impl Script {
    /// Events of `v`'s channel (or values of its datatype) extending `v`.
    pub(super) fn productions(&self, v: &Value, span: Span, out: &mut Vec<Value>) -> EResult<()> {
        let atoms = v.atoms();
        match atoms.first() {
            Some(Value::Chan(c)) => {
                self.check_partial_event(atoms, span)?;
                let evs = self.chan_events(*c, span)?;
                let lo = evs.partition_point(|e| e[..e.len().min(atoms.len())] < *atoms);
                for e in evs[lo..].iter() {
                    if e.len() < atoms.len() || e[..atoms.len()] != *atoms {
                        break;
                    }
                    out.push(Value::from_atoms(e));
                }
                Ok(())
            }
            Some(Value::Ctor(k)) => {
                let dt = self.prog.ctors[*k as usize].datatype;
                let Value::Set(all) = self.datatype_value(dt)? else {
                    return Ok(());
                };
                for x in all.iter() {
                    let xa = x.atoms();
                    if xa.len() >= atoms.len() && xa[..atoms.len()] == *atoms {
                        out.push(x.clone());
                    }
                }
                Ok(())
            }
            // FDR2's closure of a value that is not dotted is the value itself
            _ if v.is_comparable() && !matches!(v, Value::Dot(_)) => {
                out.push(v.clone());
                Ok(())
            }
            _ => Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "`{{| |}}` needs channels or constructors, found {}",
                    self.show(v)
                ),
            )),
        }
    }

    /// The remainders `r` such that `v.r` is an event (of `v`'s channel).
    pub(super) fn extensions(&self, v: &Value, span: Span) -> EResult<Vec<Value>> {
        let mut evs = Vec::new();
        self.productions(v, span, &mut evs)?;
        let n = v.atoms().len();
        Ok(evs
            .iter()
            .filter(|e| e.atoms().len() > n)
            .map(|e| Value::from_atoms(&e.atoms()[n..]))
            .collect())
    }

    /// A renaming or link relation: every event extending the left side, paired with the
    /// same extension of the right side.
    pub(super) fn relation(
        &self,
        pairs: &[(Expr, Expr)],
        stmts: &[Stmt],
        env: &mut Env,
        span: Span,
    ) -> EResult<EventRelation> {
        let mut out: Vec<(Value, Value)> = Vec::new();
        self.for_each(stmts, env, &mut |s, env| {
            for (a, b) in pairs {
                let va = s.eval(a, env)?;
                let vb = s.eval(b, env)?;
                let n = va.atoms().len();
                let mut evs = Vec::new();
                s.productions(&va, a.span, &mut evs)?;
                for ev in evs {
                    let mut target = vb.atoms().to_vec();
                    target.extend_from_slice(&ev.atoms()[n..]);
                    if !s.validate_event(&target, b.span)? {
                        return Err(s.err(
                            b.span,
                            ErrorKind::Type,
                            format!(
                                "{} maps {} to {}, which is not an event",
                                s.show(&va),
                                s.show(&ev),
                                s.show(&Value::from_atoms(&target))
                            ),
                        ));
                    }
                    out.push((ev, Value::from_atoms(&target)));
                }
            }
            Ok(())
        })?;
        let _ = span;
        out.sort_unstable();
        out.dedup();
        Ok(out.into())
    }

    pub(super) fn prefix_fields(
        &self,
        pre: &PrefixExpr,
        chan: u32,
        i: usize,
        atoms: Vec<Value>,
        env: &mut Env,
        out: &mut Vec<(Value, Proc)>,
    ) -> EResult<()> {
        if i == pre.fields.len() {
            let at = pre.fields.last().map_or(pre.event.span, |f| match f {
                Field::Output(e) => e.span,
                Field::Input(p, _) => p.span,
            });
            if !self.validate_event(&atoms, at)? {
                let n = self.chan_fields(chan)?.len();
                return Err(self.err(
                    at,
                    ErrorKind::Arity,
                    format!(
                        "{} is not a complete event: channel `{}` has {n} field{}",
                        self.show(&Value::from_atoms(&atoms)),
                        self.prog.channels[chan as usize].name,
                        if n == 1 { "" } else { "s" }
                    ),
                ));
            }
            let body = self.eval_proc(&pre.body, env)?;
            out.push((Value::from_atoms(&atoms), body));
            return Ok(());
        }
        match &pre.fields[i] {
            Field::Output(e) => {
                let v = self.eval(e, env)?;
                let mut next = atoms;
                next.extend_from_slice(v.atoms());
                self.check_partial_event(&next, e.span)?;
                self.prefix_fields(pre, chan, i + 1, next, env, out)
            }
            Field::Input(p, restriction) => {
                let last = i + 1 == pre.fields.len();
                let parts = match &p.kind {
                    PatKind::Dot(ps) => ps.len(),
                    _ => 1,
                };
                let evs = self.chan_events(chan, p.span)?;
                let fields = self.chan_fields(chan)?;
                let groups = self.typed_groups(chan, &atoms[1..])?;
                let mid_field = groups.last().is_some_and(|g| !g.1);
                let field_index = groups.len();
                let lo = evs.partition_point(|e| e[..e.len().min(atoms.len())] < *atoms);
                let mut choices: BTreeSet<Value> = BTreeSet::new();
                for e in evs[lo..].iter() {
                    if e.len() < atoms.len() || e[..atoms.len()] != *atoms {
                        break;
                    }
                    let rest = &e[atoms.len()..];
                    if rest.is_empty() {
                        continue;
                    }
                    let n = if last {
                        rest.len()
                    } else {
                        let mut n = 0;
                        for m in 0..parts {
                            if n < rest.len() {
                                let f = if mid_field {
                                    None
                                } else {
                                    fields.get(field_index + m)
                                };
                                n += self.field_len(f, rest, n)?.max(1);
                            }
                        }
                        n.min(rest.len())
                    };
                    choices.insert(Value::from_atoms(&rest[..n]));
                }
                if choices.is_empty() {
                    let n = self.chan_fields(chan)?.len();
                    return Err(self.err(
                        p.span,
                        ErrorKind::Arity,
                        format!(
                            "`?` has no field left to input: {} already has all {n} field{} of channel `{}`",
                            self.show(&Value::from_atoms(&atoms)),
                            if n == 1 { "" } else { "s" },
                            self.prog.channels[chan as usize].name
                        ),
                    ));
                }
                let allowed = match restriction {
                    Some(r) => match self.eval(r, env)? {
                        Value::Set(s) => Some(FieldSet::Finite(s)),
                        Value::IntSet => Some(FieldSet::Ints),
                        other => {
                            return Err(self.err(
                                r.span,
                                ErrorKind::Type,
                                format!("`?x:S` needs a set, found {}", self.show(&other)),
                            ))
                        }
                    },
                    None => None,
                };
                for v in choices {
                    if let Some(a) = &allowed {
                        if !self.field_contains(a, &v)? {
                            continue;
                        }
                    }
                    let mark = env.len();
                    if self.match_pattern(p, &v, env)? {
                        let mut next = atoms.clone();
                        next.extend_from_slice(v.atoms());
                        self.prefix_fields(pre, chan, i + 1, next, env, out)?;
                    }
                    env.truncate(mark);
                }
                Ok(())
            }
        }
    }
}
