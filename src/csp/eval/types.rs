//! Types: the fields of channels and constructors, the values of datatypes and name types,
//! products of field sets, and the table of all events.

use super::*;

impl Evaluator {
    pub(super) fn chan_fields(&self, c: u32) -> EResult<Arc<[FieldSet]>> {
        let def = &self.prog.channels[c as usize];
        let compute = || match &def.ty {
            None => Ok(Arc::from(Vec::new())),
            Some(t) => self.guarded((1, c), &def.name, def.span, || {
                let fields = self.type_fields(t)?;
                self.check_rectangular_fields(&fields, t.span)?;
                if fields.iter().any(carries_processes) {
                    return Err(self.err(
                        t.span,
                        ErrorKind::Type,
                        format!("channel `{}` cannot carry processes (`Proc`)", def.name),
                    ));
                }
                Ok(Arc::from(fields))
            }),
        };
        self.table_entry(
            self.tables.chan_fields.get(c as usize),
            |cells| &cells.chan_fields[c as usize],
            compute,
        )
    }

    pub(super) fn ctor_fields(&self, k: u32) -> EResult<Arc<[FieldSet]>> {
        let def = &self.prog.ctors[k as usize];
        let compute = || match &def.fields {
            None => Ok(Arc::from(Vec::new())),
            Some(t) => self.guarded(
                (2, k),
                &self.prog.datatypes[def.datatype as usize].name,
                def.span,
                || {
                    let fields = self.type_fields(t)?;
                    self.check_rectangular_fields(&fields, t.span)?;
                    Ok(Arc::from(fields))
                },
            ),
        };
        self.table_entry(
            self.tables.ctor_fields.get(k as usize),
            |cells| &cells.ctor_fields[k as usize],
            compute,
        )
    }

    pub(super) fn datatype_value(&self, d: u32) -> EResult<Value> {
        let loaded = self.tables.datatypes.get(d as usize);
        let dt = &self.prog.datatypes[d as usize];
        // Asked for while its own values, or the field types of one of its constructors, are
        // being computed: the datatype is recursive, so infinite.
        if loaded.is_none() && in_progress((3, d)) || dt.ctors.iter().any(|&k| in_progress((2, k)))
        {
            return Ok(InfSet::DataType(d).value());
        }
        let span = self.prog.ctors[dt.ctors[0] as usize].span;
        let compute = || {
            self.guarded((3, d), &dt.name, span, || {
                // A datatype with an infinite field (or too many values) is not enumerated.
                let mut total: u128 = 0;
                for &k in &dt.ctors {
                    match self.fields_size(&self.ctor_fields(k)?)? {
                        Some(n) => total = total.saturating_add(n),
                        None => return Ok(InfSet::DataType(d).value()),
                    }
                }
                if total > MAX_COLLECTION as u128 {
                    return Ok(InfSet::DataType(d).value());
                }
                let mut all = Vec::new();
                for &k in &dt.ctors {
                    let fields = self.ctor_fields(k)?;
                    let prefix = vec![Value::Ctor(k)];
                    self.product(&prefix, &fields, span, &mut |atoms| {
                        all.push(Value::from_atoms(atoms));
                    })?;
                }
                Ok(Value::set_from(all))
            })
        };
        self.table_entry(loaded, |cells| &cells.datatypes[d as usize], compute)
    }

    pub(super) fn nametype_fields(&self, t: u32) -> EResult<Arc<[FieldSet]>> {
        let def = &self.prog.nametypes[t as usize];
        self.table_entry(
            self.tables.nametypes.get(t as usize),
            |cells| &cells.nametypes[t as usize],
            || {
                self.guarded((4, t), &def.name, def.expr.span, || {
                    self.type_fields(&def.expr).map(Arc::from)
                })
            },
        )
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
            let mut values = Vec::new();
            for it in items {
                let f = self.type_component(it)?;
                values.push(self.field_value(&f)?);
            }
            let sets: Vec<Arc<[Value]>> = values
                .iter()
                .filter_map(|v| match v {
                    Value::Set(s) => Some(s.items().clone()),
                    _ => None,
                })
                .collect();
            let size = sets
                .iter()
                .fold(1u128, |n, s| n.saturating_mul(s.len() as u128));
            if sets.len() < values.len() || size > MAX_COLLECTION as u128 {
                return Ok(FieldSet::Infinite(Arc::new(InfSet::Tuples(values.into()))));
            }
            let mut out = vec![Vec::new()];
            for s in &sets {
                let mut next = Vec::new();
                for prefix in &out {
                    self.poll_stop(s.len())?;
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
                _ => Vec::new().into(),
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
            Value::Infinite(i) => Ok(FieldSet::Infinite(i)),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("a type must be a set, found {}", self.show(&other)),
            )),
        }
    }

    /// Refuses the fields of a channel or constructor (written at `span`) where one is a
    /// set of dotted values that is not rectangular (see [`Evaluator::check_rectangular`]).
    /// libcspm splits such a field into several when it declares the channel or datatype;
    /// a set of dotted values elsewhere (a name type's value, a tuple's part) is not split.
    fn check_rectangular_fields(&self, fields: &[FieldSet], span: Span) -> EResult<()> {
        for f in fields {
            if let FieldSet::Finite(s) = f {
                self.check_rectangular(s, span)?;
            }
        }
        Ok(())
    }

    /// Refuses a type (at `span`) whose set `s` of dotted values is not rectangular: not
    /// every combination of the values its parts take (`{x.y | x <- {0..3}, y <- {0..3},
    /// x+y < 3}`), as FDR does: such a type is not a product of fields. Only sets of
    /// dotted values of plain parts (no channel or constructor), all of as many parts,
    /// are checked.
    fn check_rectangular(&self, s: &SetElems, span: Span) -> EResult<()> {
        let mut parts: Vec<std::collections::HashSet<&Value>> = Vec::new();
        for v in s.iter() {
            let Value::Dot(atoms) = v else {
                return Ok(());
            };
            if atoms
                .iter()
                .any(|a| matches!(a, Value::Chan(_) | Value::Ctor(_)))
            {
                return Ok(());
            }
            if parts.is_empty() {
                parts.resize_with(atoms.len(), Default::default);
            }
            if parts.len() != atoms.len() {
                return Ok(());
            }
            for (p, a) in parts.iter_mut().zip(atoms.iter()) {
                p.insert(a);
            }
        }
        if parts.is_empty() {
            // no dotted value (the empty set)
            return Ok(());
        }
        let combinations = parts
            .iter()
            .fold(1u128, |n, p| n.saturating_mul(p.len() as u128));
        if combinations == s.len() as u128 {
            return Ok(());
        }
        Err(self.err(
            span,
            ErrorKind::Type,
            format!(
                "this type is not rectangular: its {} dotted values are not all the {} \
                 combinations of the values of their {} parts (FDR refuses such a type: a \
                 type of dotted values must be a product of sets)",
                s.len(),
                combinations,
                parts.len()
            ),
        ))
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
            match self.field_value(f)? {
                Value::Set(s) => {
                    total = total.saturating_mul(s.len());
                    sets.push(s.items().clone());
                }
                other => {
                    return Err(self.err(
                        span,
                        ErrorKind::Unsupported,
                        format!(
                            "field {} of {} has the infinite type {}: it cannot be enumerated",
                            i + 1,
                            self.show(&Value::from_atoms(prefix)),
                            self.show(&other)
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
        // Millions of combinations take seconds and gigabytes where they are kept: each one
        // counts as work between two looks at the stop signal.
        fn rec(
            script: &Evaluator,
            sets: &[Arc<[Value]>],
            atoms: &mut Vec<Value>,
            emit: &mut dyn FnMut(&[Value]),
        ) -> EResult<()> {
            match sets.split_first() {
                None => {
                    script.poll_stop(1)?;
                    emit(atoms);
                }
                Some((s, rest)) => {
                    for v in s.iter() {
                        let mark = atoms.len();
                        atoms.extend_from_slice(v.atoms());
                        rec(script, rest, atoms, emit)?;
                        atoms.truncate(mark);
                    }
                }
            }
            Ok(())
        }
        rec(self, &sets, &mut atoms, emit)
    }

    /// Sorted atom lists of all events of channel `c`. The events of a channel that is not
    /// enumerated ([`Evaluator::lazy_channel`]) are never listed: every use of them asks
    /// whether the channel is lazy first, so its entry is an error, made without listing up
    /// to [`MAX_COLLECTION`] events for nothing (10^7 events took a gigabyte at load).
    pub(super) fn chan_events(&self, c: u32, span: Span) -> EResult<AtomTable> {
        let compute = || {
            if self.lazy_channel(c)? {
                return Err(self.err(
                    span,
                    ErrorKind::Limit,
                    format!(
                        "the events of channel `{}` are not enumerated (an infinite field type, \
                         or more than {MAX_EVENTS} events)",
                        self.prog.channels[c as usize].name
                    ),
                ));
            }
            let fields = self.chan_fields(c)?;
            let mut all: Vec<Arc<[Value]>> = Vec::new();
            self.product(&[Value::Chan(c)], &fields, span, &mut |a| {
                all.push(a.into())
            })?;
            all.sort_unstable();
            all.dedup();
            Ok(all.into())
        };
        self.table_entry(
            self.tables.chan_events.get(c as usize),
            |cells| &cells.chan_events[c as usize],
            compute,
        )
    }

    /// The number of values of a product of field types (`None` if one is infinite).
    pub(super) fn fields_size(&self, fields: &[FieldSet]) -> EResult<Option<u128>> {
        let mut total: u128 = 1;
        for f in fields {
            match self.field_value(f)? {
                Value::Set(s) => total = total.saturating_mul(s.len() as u128),
                _ => return Ok(None),
            }
        }
        Ok(Some(total))
    }

    /// True if the events of channel `c` are not enumerated (a field type is infinite, or
    /// there are too many): they are numbered as met instead, and `{| c |}` is kept as a
    /// description.
    pub(super) fn lazy_channel(&self, c: u32) -> EResult<bool> {
        if let Some(lazy) = self.memo.lazy_channels.get(&c) {
            return Ok(*lazy);
        }
        let lazy = match self.fields_size(&self.chan_fields(c)?)? {
            Some(n) => n > MAX_EVENTS as u128,
            None => true,
        };
        self.memo.lazy_channels.insert(c, lazy);
        Ok(lazy)
    }

    pub(super) fn build_event_table(&self) -> EResult<EventTable> {
        let _g = StackGuard::enter();
        let mut events = Vec::new();
        let mut lazy_channels = Vec::new();
        for c in 0..self.prog.channels.len() {
            if self.tables.broken_chans[c] {
                continue;
            }
            if self.lazy_channel(c as u32)? {
                lazy_channels.push(c as u32);
                continue;
            }
            let evs = self.chan_events(c as u32, self.prog.channels[c].span)?;
            events.extend(evs.iter().map(|a| Value::from_atoms(a)));
            if events.len() > MAX_EVENTS {
                return Err(self.err(
                    self.prog.channels[c].span,
                    ErrorKind::Limit,
                    format!(
                        "the script has more than {MAX_EVENTS} events (with the channels \
                         declared up to this one)"
                    ),
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
            lazy_channels,
        })
    }
}

impl Evaluator {
    /// The number of fields of constructor `k`; read from its declaration while its field
    /// types are being computed (a datatype whose field types use its own values).
    pub(super) fn ctor_arity(&self, k: u32) -> EResult<usize> {
        if !in_progress((2, k)) {
            return Ok(self.ctor_fields(k)?.len());
        }
        let Some(t) = &self.prog.ctors[k as usize].fields else {
            return Ok(0);
        };
        let mut parts = Vec::new();
        flatten_dots(t, &mut parts);
        let mut n = 0;
        for p in parts {
            n += match &p.kind {
                ExprKind::Var(name) => match self.prog.globals.get(name) {
                    Some(GlobalKind::NameType(t)) => self.nametype_fields(*t)?.len(),
                    _ => 1,
                },
                _ => 1,
            };
        }
        Ok(n)
    }
}

/// True for a field type whose values are (or hold) processes: `Proc`, or sets, sequences
/// or tuples of them.
fn carries_processes(f: &FieldSet) -> bool {
    fn inf(i: &InfSet) -> bool {
        match i {
            InfSet::Procs => true,
            InfSet::Seqs(x) | InfSet::Sets(x) => val(x),
            InfSet::Tuples(xs) | InfSet::Union(xs) => xs.iter().any(val),
            _ => false,
        }
    }
    fn val(v: &Value) -> bool {
        matches!(v, Value::Infinite(i) if inf(i))
    }
    matches!(f, FieldSet::Infinite(i) if inf(i))
}
