//! Prefixes: the events a prefix offers (its fields, input sets and outputs), the events
//! extending a dotted value, and renaming and link relations.

use super::*;

/// One event of a prefix: the values its `$` fields took (in field order), the event and
/// the continuation.
pub(super) type PrefixMove = (Vec<Value>, Value, Proc);

/// The processes after the events of one prefix, by the values of the input variables its
/// body uses, for a prefix whose body does not use all of them (`send?a?b?f -> P(f)`: one
/// body per `f`, not one per event). `used` is `None` for other prefixes: nothing is kept.
pub(super) struct BodyCache {
    used: Option<Arc<[Name]>>,
    bodies: HashMap<Arc<[Binding]>, Proc, crate::hash::WordBuildHasher>,
}

impl BodyCache {
    /// The cache for the prefix of node `expr`.
    pub(super) fn for_prefix(eval: &Evaluator, expr: u32) -> BodyCache {
        BodyCache {
            used: eval.prog.prefix_body_inputs.get(&expr).cloned(),
            bodies: HashMap::default(),
        }
    }
}

impl Evaluator {
    /// `{| v |}`: the events of `v`'s channel (or values of its datatype) extending `v`; a
    /// description ([`InfSet::Productions`]) where they cannot be enumerated.
    pub(super) fn productions(&self, v: &Value, span: Span) -> EResult<Value> {
        let atoms = v.atoms();
        match atoms.first() {
            Some(Value::Chan(c)) => {
                self.check_partial_event(atoms, span)?;
                if self.lazy_channel(*c)? {
                    return self.lazy_productions(v, span);
                }
                let evs = self.chan_events(*c, span)?;
                let lo = evs.partition_point(|e| e[..e.len().min(atoms.len())] < *atoms);
                let mut out = Vec::new();
                for e in evs[lo..].iter() {
                    if e.len() < atoms.len() || e[..atoms.len()] != *atoms {
                        break;
                    }
                    out.push(Value::from_atoms(e));
                }
                Ok(Value::Set(out.into()))
            }
            Some(Value::Ctor(k)) => {
                // Too many values to enumerate (the datatype may still be enumerated): kept
                // as a description, as for channels.
                if let Some(rest) = self.remaining_fields(v)? {
                    if matches!(self.fields_size(&rest)?, Some(n) if n > MAX_EVENTS as u128) {
                        return Ok(InfSet::Productions(v.clone()).value());
                    }
                }
                let dt = self.prog.ctors[*k as usize].datatype;
                let Value::Set(all) = self.datatype_value(dt)? else {
                    return self.lazy_productions(v, span);
                };
                let mut out = Vec::new();
                for x in all.iter() {
                    let xa = x.atoms();
                    if xa.len() >= atoms.len() && xa[..atoms.len()] == *atoms {
                        out.push(x.clone());
                    }
                }
                Ok(Value::Set(out.into()))
            }
            // FDR2's closure of a value that is not dotted is the value itself
            _ if v.is_comparable() && !matches!(v, Value::Dot(_)) => {
                Ok(Value::Set([v.clone()].into()))
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

    /// The field types left after the fields `v` gives (`v` a channel or constructor with
    /// some of its fields), or `None` when `v` ends inside a field.
    pub(super) fn remaining_fields(&self, v: &Value) -> EResult<Option<Vec<FieldSet>>> {
        let atoms = v.atoms();
        match atoms.first() {
            Some(Value::Chan(c)) => {
                let fields = self.chan_fields(*c)?;
                let groups = self.typed_groups(*c, &atoms[1..])?;
                if groups.last().is_some_and(|g| !g.1) || groups.len() > fields.len() {
                    return Ok(None);
                }
                Ok(Some(fields[groups.len()..].to_vec()))
            }
            Some(Value::Ctor(k)) => {
                // a constructor with some of its fields (`Leaf.0` of a recursive datatype)
                let fields = self.ctor_fields(*k)?;
                let groups = self.groups_by_fields(&fields, &atoms[1..])?;
                if groups.last().is_some_and(|g| !g.1) || groups.len() > fields.len() {
                    return Ok(None);
                }
                Ok(Some(fields[groups.len()..].to_vec()))
            }
            _ => Ok(None),
        }
    }

    /// [`Evaluator::productions`] of a channel or datatype that is not enumerated: the events
    /// (values) extending `v` when the fields left are finite, a description otherwise.
    fn lazy_productions(&self, v: &Value, span: Span) -> EResult<Value> {
        if let Some(rest) = self.remaining_fields(v)? {
            if matches!(self.fields_size(&rest)?, Some(n) if n <= MAX_EVENTS as u128) {
                let mut out = Vec::new();
                self.product(v.atoms(), &rest, span, &mut |a| {
                    out.push(Value::from_atoms(a))
                })?;
                return Ok(Value::set_from(out));
            }
        }
        Ok(InfSet::Productions(v.clone()).value())
    }

    /// The remainders `r` such that `v.r` is an event (of `v`'s channel).
    pub(super) fn extensions(&self, v: &Value, span: Span) -> EResult<Value> {
        let evs = match self.productions(v, span)? {
            Value::Set(evs) => evs,
            inf => {
                return match self.remaining_fields(v)? {
                    Some(rest) if !rest.is_empty() => self.fields_value(&rest, span),
                    _ => Err(self.infinite_error(span, &inf, "`extensions`")),
                }
            }
        };
        let n = v.atoms().len();
        Ok(Value::set_from(
            evs.iter()
                .filter(|e| e.atoms().len() > n)
                .map(|e| Value::from_atoms(&e.atoms()[n..]))
                .collect(),
        ))
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
                let evs = match s.productions(&va, a.span)? {
                    Value::Set(evs) => evs,
                    _ => {
                        out.push(s.symbolic_pair(&va, &vb, b.span)?);
                        continue;
                    }
                };
                for ev in evs.iter().cloned() {
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
                // As many pairs as a prefix may offer events: more would take gigabytes.
                if out.len() > MAX_EVENTS {
                    return Err(s.err(
                        span,
                        ErrorKind::Limit,
                        format!(
                            "this relation pairs more than {MAX_EVENTS} events: too large to \
                             build"
                        ),
                    ));
                }
            }
            Ok(())
        })?;
        out.sort_unstable();
        out.dedup();
        Ok(out.into())
    }

    /// The pair `({| a |}, {| b |})` of a relation over a channel whose events extending `a`
    /// are not enumerated: `a.r` goes to `b.r` for every event `a.r`. Every such `b.r` must be
    /// an event, which weft checks by the field types left after `a` and `b` being the same.
    fn symbolic_pair(&self, a: &Value, b: &Value, span: Span) -> EResult<(Value, Value)> {
        self.check_partial_event(b.atoms(), span)?;
        let (ra, rb) = (self.remaining_fields(a)?, self.remaining_fields(b)?);
        match (ra, rb) {
            (Some(x), Some(y))
                if x == y
                    && matches!(a.atoms().first(), Some(Value::Chan(_)))
                    && matches!(b.atoms().first(), Some(Value::Chan(_))) =>
            {
                Ok((
                    InfSet::Productions(a.clone()).value(),
                    InfSet::Productions(b.clone()).value(),
                ))
            }
            _ => Err(self.err(
                span,
                ErrorKind::Unsupported,
                format!(
                    "renaming or linking the events of {} (not enumerated: an infinite type) to \
                     those of {} needs the two to have the same field types left",
                    self.show(a),
                    self.show(b)
                ),
            )),
        }
    }

    /// The events of prefix `pre` from field `i` on, after `atoms`, each with its
    /// continuation and the values given to the `$` fields on the way (`chosen`, the values
    /// of the fields before `i`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn prefix_fields(
        &self,
        pre: &PrefixExpr,
        chan: u32,
        i: usize,
        atoms: Vec<Value>,
        env: &mut Env,
        chosen: &mut Vec<Value>,
        out: &mut Vec<PrefixMove>,
        bodies: &mut BodyCache,
    ) -> EResult<()> {
        if i == pre.fields.len() {
            let at = pre.fields.last().map_or(pre.event.span, |f| match f {
                Field::Output(e) => e.span,
                Field::Input(p, _) | Field::NondetInput(p, _) => p.span,
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
            let body = match &bodies.used {
                Some(used) => {
                    let key = self.capture(used, env)?;
                    match bodies.bodies.get(&key) {
                        Some(p) => p.clone(),
                        None => {
                            let p = self.eval_proc(&pre.body, env)?;
                            bodies.bodies.insert(key, p.clone());
                            p
                        }
                    }
                }
                None => self.eval_proc(&pre.body, env)?,
            };
            if out.len() >= MAX_EVENTS {
                return Err(self.err(
                    pre.event.span,
                    ErrorKind::Limit,
                    format!("this prefix offers more than {MAX_EVENTS} events in one state"),
                ));
            }
            out.push((chosen.clone(), Value::from_atoms(&atoms), body));
            return Ok(());
        }
        match &pre.fields[i] {
            Field::Output(e) => {
                let v = self.eval(e, env)?;
                let mut next = atoms;
                next.extend_from_slice(v.atoms());
                self.check_partial_event(&next, e.span)?;
                self.prefix_fields(pre, chan, i + 1, next, env, chosen, out, bodies)
            }
            Field::Input(p, restriction) | Field::NondetInput(p, restriction) => {
                let nondet = matches!(&pre.fields[i], Field::NondetInput(..));
                let last = i + 1 == pre.fields.len();
                let parts = match &p.kind {
                    PatKind::Dot(ps) => self.pattern_fields(ps)?,
                    _ => 1,
                };
                let allowed = match restriction {
                    Some(r) => match self.eval(r, env)? {
                        s @ (Value::Set(_) | Value::Infinite(_)) => Some(s),
                        other => {
                            return Err(self.err(
                                r.span,
                                ErrorKind::Type,
                                format!(
                                    "`{}x:S` needs a set, found {}",
                                    if nondet { '$' } else { '?' },
                                    self.show(&other)
                                ),
                            ))
                        }
                    },
                    None => None,
                };
                let mut choices = if self.lazy_channel(chan)? {
                    self.lazy_input_choices(chan, &atoms, parts, last, allowed.as_ref(), p.span)?
                } else {
                    self.input_choices(chan, &atoms, parts, last, p.span)?
                };
                let complete = choices.is_empty()
                    && self.event_status(&atoms, p.span)? == EventStatus::Complete;
                if complete && restriction.is_none() && parts == 1 {
                    // As FDR (libcspm's `extensions` of a complete event is the one empty
                    // extension): an input after the last field binds its variable to the
                    // empty dotted value and leaves the event as it is, so a generic
                    // `ic?tag?data -> oc!tag!data` also serves a channel of one field.
                    choices.insert(Value::from_atoms(&[]));
                } else if complete {
                    let n = self.chan_fields(chan)?.len();
                    return Err(self.err(
                        p.span,
                        ErrorKind::Arity,
                        format!(
                            "`{}` has no field left to input: {} already has all {n} field{} of channel `{}`",
                            if nondet { '$' } else { '?' },
                            self.show(&Value::from_atoms(&atoms)),
                            if n == 1 { "" } else { "s" },
                            self.prog.channels[chan as usize].name
                        ),
                    ));
                }
                for v in choices {
                    if let Some(a) = &allowed {
                        if !self.set_contains(a, &v)? {
                            continue;
                        }
                    }
                    let mark = env.len();
                    if self.match_pattern(p, &v, env)? {
                        let mut next = atoms.clone();
                        next.extend_from_slice(v.atoms());
                        if nondet {
                            chosen.push(v.clone());
                        }
                        let r =
                            self.prefix_fields(pre, chan, i + 1, next, env, chosen, out, bodies);
                        if nondet {
                            chosen.pop();
                        }
                        r?;
                    }
                    env.truncate(mark);
                }
                Ok(())
            }
        }
    }

    /// How many channel fields the components `ps` of a dotted input pattern cover: a
    /// constructor with fields takes its arguments with it into one field (`?k.N.v` with
    /// `N` a constructor of one field covers two fields, as FDR's type checker has it).
    fn pattern_fields(&self, ps: &[Pattern]) -> EResult<usize> {
        let mut i = 0;
        let mut fields = 0;
        while i < ps.len() {
            i = self.pattern_unit_end(ps, i)?;
            fields += 1;
        }
        Ok(fields)
    }

    /// The index after the field that starts at component `i` of `ps`.
    pub(super) fn pattern_unit_end(&self, ps: &[Pattern], i: usize) -> EResult<usize> {
        let arity = match &ps[i].kind {
            PatKind::Var(n) => match self.prog.globals.get(n) {
                Some(GlobalKind::Ctor(k)) => self.ctor_fields(*k)?.len(),
                _ => 0,
            },
            _ => 0,
        };
        let mut j = i + 1;
        for _ in 0..arity {
            if j >= ps.len() {
                break;
            }
            j = self.pattern_unit_end(ps, j)?;
        }
        Ok(j)
    }

    /// The values an input `?p` (covering `parts` fields, or all the fields left if `last`)
    /// offers after `atoms`, from the enumerated events of channel `chan`.
    fn input_choices(
        &self,
        chan: u32,
        atoms: &[Value],
        parts: usize,
        last: bool,
        span: Span,
    ) -> EResult<BTreeSet<Value>> {
        let evs = self.chan_events(chan, span)?;
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
        Ok(choices)
    }

    /// [`Evaluator::input_choices`] for a channel whose events are not enumerated: the values
    /// of a finite restriction `?p:S` that fit the fields input, or else all values of those
    /// fields, which must be finite.
    fn lazy_input_choices(
        &self,
        chan: u32,
        atoms: &[Value],
        parts: usize,
        last: bool,
        allowed: Option<&Value>,
        span: Span,
    ) -> EResult<BTreeSet<Value>> {
        let fields = self.chan_fields(chan)?;
        let groups = self.typed_groups(chan, &atoms[1..])?;
        let name = &self.prog.channels[chan as usize].name;
        if groups.last().is_some_and(|g| !g.1) {
            return Err(self.err(
                span,
                ErrorKind::Unsupported,
                format!(
                    "an input inside a field of channel `{name}`, whose events are not \
                     enumerated (an infinite type), is outside weft's CSPm subset"
                ),
            ));
        }
        let k = groups.len();
        if k >= fields.len() {
            return Ok(BTreeSet::new());
        }
        let covered = if last {
            &fields[k..]
        } else {
            &fields[k..(k + parts).min(fields.len())]
        };
        let mut out = BTreeSet::new();
        if let Some(Value::Set(s)) = allowed {
            for v in s.iter() {
                if self.fields_contain(covered, v.atoms())? {
                    out.insert(v.clone());
                }
            }
            return Ok(out);
        }
        match self.fields_size(covered)? {
            Some(n) if n <= MAX_EVENTS as u128 => {
                self.product(&[], covered, span, &mut |a| {
                    out.insert(Value::from_atoms(a));
                })?;
                Ok(out)
            }
            _ => {
                let ty = self.fields_value(covered, span)?;
                Err(self.err(
                    span,
                    ErrorKind::Eval,
                    format!(
                        "the input `?{}` needs every value of field{} {} of channel `{name}`, \
                         of the infinite type {} (restrict it: `?x:S`)",
                        self.sources.text(span),
                        if covered.len() == 1 { "" } else { "s" },
                        (k + 1..=k + covered.len())
                            .map(|i| i.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.show_brief(&ty)
                    ),
                ))
            }
        }
    }
}
