//! Types: the fields of channels and constructors, the values of datatypes and name types,
//! products of field sets, and the table of all events.

use super::*;

impl Script {
    pub(super) fn chan_fields(&self, c: u32) -> EResult<Arc<[FieldSet]>> {
        if let Some(r) = self.chan_fields[c as usize].get() {
            return r.clone();
        }
        let def = &self.prog.channels[c as usize];
        let r = match &def.ty {
            None => Ok(Arc::from(Vec::new())),
            Some(t) => self.guarded((1, c), &def.name, def.span, || {
                self.type_fields(t).map(Arc::from)
            }),
        };
        self.chan_fields[c as usize].get_or_init(|| r).clone()
    }

    pub(super) fn ctor_fields(&self, k: u32) -> EResult<Arc<[FieldSet]>> {
        if let Some(r) = self.ctor_fields[k as usize].get() {
            return r.clone();
        }
        let def = &self.prog.ctors[k as usize];
        let r = match &def.fields {
            None => Ok(Arc::from(Vec::new())),
            Some(t) => self.guarded(
                (2, k),
                &self.prog.datatypes[def.datatype as usize].name,
                def.span,
                || self.type_fields(t).map(Arc::from),
            ),
        };
        self.ctor_fields[k as usize].get_or_init(|| r).clone()
    }

    pub(super) fn datatype_value(&self, d: u32) -> EResult<Value> {
        if let Some(r) = self.datatype_values[d as usize].get() {
            return r.clone();
        }
        let dt = &self.prog.datatypes[d as usize];
        let span = self.prog.ctors[dt.ctors[0] as usize].span;
        let r = self.guarded((3, d), &dt.name, span, || {
            let mut all = Vec::new();
            for &k in &dt.ctors {
                let fields = self.ctor_fields(k)?;
                let prefix = vec![Value::Ctor(k)];
                self.product(&prefix, &fields, span, &mut |atoms| {
                    all.push(Value::from_atoms(atoms));
                })?;
            }
            Ok(Value::set_from(all))
        });
        self.datatype_values[d as usize].get_or_init(|| r).clone()
    }

    pub(super) fn nametype_fields(&self, t: u32) -> EResult<Arc<[FieldSet]>> {
        if let Some(r) = self.nametype_fields[t as usize].get() {
            return r.clone();
        }
        let def = &self.prog.nametypes[t as usize];
        let r = self.guarded((4, t), &def.name, def.expr.span, || {
            self.type_fields(&def.expr).map(Arc::from)
        });
        self.nametype_fields[t as usize].get_or_init(|| r).clone()
    }

    /// The fields of a type expression `T1.T2...` (nametypes that are products splice in).
    pub(super) fn type_fields(&self, e: &Expr) -> EResult<Vec<FieldSet>> {
        let mut parts = Vec::new();
        flatten_dots(e, &mut parts);
        let mut out = Vec::new();
        for p in parts {
            if let ExprKind::Var(n) = &p.kind {
                self.check_broken(n)?;
                if let Some(GlobalKind::NameType(t)) = self.prog.globals.get(n) {
                    out.extend(self.nametype_fields(*t)?.iter().cloned());
                    continue;
                }
            }
            out.push(self.type_component(p)?);
        }
        Ok(out)
    }

    pub(super) fn type_component(&self, e: &Expr) -> EResult<FieldSet> {
        let mut env = Env::new();
        if let ExprKind::Var(n) = &e.kind {
            self.check_broken(n)?;
            if let Some(GlobalKind::DataType(d)) = self.prog.globals.get(n) {
                return Ok(FieldSet::DataType(*d));
            }
        }
        if let ExprKind::Tuple(items) = &e.kind {
            let mut sets = Vec::new();
            for it in items {
                match self.type_component(it)? {
                    FieldSet::Finite(s) => sets.push(s),
                    FieldSet::DataType(d) => match self.datatype_value(d)? {
                        Value::Set(s) => sets.push(s),
                        _ => return Err(self.internal("datatype value is not a set")),
                    },
                    FieldSet::Ints => {
                        return Err(self.err(
                            it.span,
                            ErrorKind::Unsupported,
                            "a tuple type with an infinite component is outside weft's CSPm subset",
                        ))
                    }
                }
            }
            let mut out = vec![Vec::new()];
            for s in &sets {
                let mut next = Vec::new();
                for prefix in &out {
                    for v in s.iter() {
                        let mut t: Vec<Value> = prefix.clone();
                        t.push(v.clone());
                        next.push(t);
                    }
                }
                if next.len() > MAX_COLLECTION {
                    return Err(self.err(e.span, ErrorKind::Limit, "tuple type too large"));
                }
                out = next;
            }
            let vals = out.into_iter().map(|t| Value::Tuple(t.into())).collect();
            return Ok(FieldSet::Finite(match Value::set_from(vals) {
                Value::Set(s) => s,
                _ => Arc::from(Vec::new()),
            }));
        }
        match self.eval(e, &mut env)? {
            Value::Set(s) => {
                for v in s.iter() {
                    if matches!(v.atoms().first(), Some(Value::Ctor(_)))
                        && !self.complete_value(v)?
                    {
                        return Err(self.err(
                            e.span,
                            ErrorKind::Type,
                            format!(
                                "the type contains {}, which is incomplete (fields are missing)",
                                self.show(v)
                            ),
                        ));
                    }
                }
                Ok(FieldSet::Finite(s))
            }
            Value::IntSet => Ok(FieldSet::Ints),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("a type must be a set, found {}", self.show(&other)),
            )),
        }
    }

    /// Calls `emit` with `prefix` extended by every combination of field values.
    pub(super) fn product(
        &self,
        prefix: &[Value],
        fields: &[FieldSet],
        span: Span,
        emit: &mut dyn FnMut(&[Value]),
    ) -> EResult<()> {
        let mut total: usize = 1;
        let mut sets = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let f = match f {
                FieldSet::DataType(d) => match self.datatype_value(*d)? {
                    Value::Set(s) => FieldSet::Finite(s),
                    _ => return Err(self.internal("datatype value is not a set")),
                },
                other => other.clone(),
            };
            match &f {
                FieldSet::DataType(_) => return Err(self.internal("datatype field left")),
                FieldSet::Finite(s) => {
                    total = total.saturating_mul(s.len());
                    sets.push(s.clone());
                }
                FieldSet::Ints => {
                    return Err(self.err(
                        span,
                        ErrorKind::Unsupported,
                        format!(
                            "field {} of {} has the infinite type Int: weft needs finite types to enumerate it",
                            i + 1,
                            self.show(&Value::from_atoms(prefix))
                        ),
                    ))
                }
            }
        }
        if total > MAX_COLLECTION {
            return Err(self.err(
                span,
                ErrorKind::Limit,
                format!(
                    "{} has more than {MAX_COLLECTION} values",
                    self.show(&Value::from_atoms(prefix))
                ),
            ));
        }
        let mut atoms = prefix.to_vec();
        fn rec(sets: &[Arc<[Value]>], atoms: &mut Vec<Value>, emit: &mut dyn FnMut(&[Value])) {
            match sets.split_first() {
                None => emit(atoms),
                Some((s, rest)) => {
                    for v in s.iter() {
                        let mark = atoms.len();
                        atoms.extend_from_slice(v.atoms());
                        rec(rest, atoms, emit);
                        atoms.truncate(mark);
                    }
                }
            }
        }
        rec(&sets, &mut atoms, emit);
        Ok(())
    }

    /// Sorted atom lists of all events of channel `c`.
    pub(super) fn chan_events(&self, c: u32, span: Span) -> EResult<AtomTable> {
        if let Some(r) = self.chan_events[c as usize].get() {
            return r.clone();
        }
        let r = (|| {
            let fields = self.chan_fields(c)?;
            let mut all: Vec<Arc<[Value]>> = Vec::new();
            self.product(&[Value::Chan(c)], &fields, span, &mut |a| {
                all.push(a.into())
            })?;
            all.sort_unstable();
            all.dedup();
            Ok(all.into())
        })();
        self.chan_events[c as usize].get_or_init(|| r).clone()
    }

    pub(super) fn build_event_table(&self) -> EResult<EventTable> {
        let _g = StackGuard::enter();
        let mut events = Vec::new();
        for c in 0..self.prog.channels.len() {
            if self.broken_chans[c] {
                continue;
            }
            let evs = self.chan_events(c as u32, self.prog.channels[c].span)?;
            events.extend(evs.iter().map(|a| Value::from_atoms(a)));
            if events.len() > MAX_COLLECTION {
                return Err(CspError::unpositioned(
                    ErrorKind::Limit,
                    format!("the script has more than {MAX_COLLECTION} events"),
                ));
            }
        }
        let names = events.iter().map(|e| self.show(e)).collect();
        let index = events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.clone(), i as u32))
            .collect();
        Ok(EventTable {
            events,
            names,
            index,
        })
    }
}
