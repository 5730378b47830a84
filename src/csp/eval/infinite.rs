//! Sets that are not enumerated ([`InfSet`]): membership, the set operations, comparison and
//! printing, and the error for what would need to enumerate one.
//!
//! As in FDR, a script may declare channels and datatypes over infinite types and use their
//! sets (`{| c |}`, `Events`, `Int`, `Seq(X)`) as long as nothing enumerates them: membership
//! tests, synchronisation sets, hiding and renaming work on the description; `card`, a
//! generator, an unrestricted input over an infinite field, or printing the elements fail
//! with an error naming the set and what needed it.

use super::*;

impl Evaluator {
    /// The integer set `r` as a value: a finite set when it can be enumerated.
    /// Lists it with looks at the stop signal: ten million integers take a second and
    /// hundreds of megabytes.
    pub(super) fn ints_value(&self, r: IntRanges) -> EResult<Value> {
        let len = r.len();
        if len <= MAX_COLLECTION as u128 {
            let items = self.collect_polled(r.ints().map(Value::Int), len as usize)?;
            Ok(Value::Set(items.into()))
        } else {
            Ok(InfSet::Ints(r).value())
        }
    }

    /// The integers of a set of integers (`None` for other sets).
    pub(super) fn as_int_ranges(&self, v: &Value) -> Option<IntRanges> {
        match v {
            Value::Set(s) => {
                // Sorted integers: runs of consecutive ones are intervals (one pass, no copy
                // of the elements).
                let mut runs: Vec<(i64, i64)> = Vec::new();
                for x in s.iter() {
                    let Value::Int(i) = x else { return None };
                    match runs.last_mut() {
                        Some(last) if last.1.checked_add(1) == Some(*i) => last.1 = *i,
                        _ => runs.push((*i, *i)),
                    }
                }
                Some(IntRanges::of_intervals(runs))
            }
            Value::Infinite(i) => match &**i {
                InfSet::Ints(r) => Some(r.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The error for an enumeration of the infinite set `set`, which `what` needed.
    pub(super) fn infinite_error(&self, span: Span, set: &Value, what: &str) -> CspError {
        self.err(
            span,
            ErrorKind::Eval,
            format!(
                "{what} needs to enumerate {}, which is infinite (or too large to enumerate)",
                self.show_brief(set)
            ),
        )
    }

    /// True if `x` is in the set `set` (a finite or infinite set).
    pub(super) fn set_contains(&self, set: &Value, x: &Value) -> EResult<bool> {
        match set {
            Value::Set(s) => Ok(s.binary_search(x).is_ok()),
            Value::Infinite(i) => self.inf_contains(i, x),
            other => Err(self.internal(&format!(
                "a membership test in {}, which is not a set",
                self.show(other)
            ))),
        }
    }

    /// True if `x` is in the infinite set `s`.
    pub(super) fn inf_contains(&self, s: &InfSet, x: &Value) -> EResult<bool> {
        Ok(match s {
            InfSet::Procs => matches!(x, Value::Proc(_)),
            InfSet::Ints(r) => matches!(x, Value::Int(i) if r.contains(*i)),
            InfSet::Chars => matches!(x, Value::Char(_)),
            InfSet::Maps(keys, values) => match x {
                Value::Map(pairs) => {
                    for (k, v) in pairs.iter() {
                        if !self.set_contains(keys, k)? || !self.set_contains(values, v)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            InfSet::Seqs(elems) => match x {
                Value::Seq(items) => {
                    for it in items.iter() {
                        if !self.set_contains(elems, it)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            InfSet::Sets(elems) => match x {
                Value::Set(items) => {
                    for it in items.iter() {
                        if !self.set_contains(elems, it)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            InfSet::DataType(d) => self.field_contains(&FieldSet::DataType(*d), x)?,
            InfSet::Dotted(fields) => self.fields_contain(fields, x.atoms())?,
            InfSet::Tuples(sets) => match x {
                Value::Tuple(items) if items.len() == sets.len() => {
                    for (s, it) in sets.iter().zip(items.iter()) {
                        if !self.set_contains(s, it)? {
                            return Ok(false);
                        }
                    }
                    true
                }
                _ => false,
            },
            InfSet::Productions(v) => {
                let (pre, atoms) = (v.atoms(), x.atoms());
                if atoms.len() < pre.len() || atoms[..pre.len()] != *pre {
                    return Ok(false);
                }
                match pre.first() {
                    Some(Value::Chan(_)) => {
                        self.event_status(atoms, Span::default())? == EventStatus::Complete
                    }
                    Some(Value::Ctor(k)) => {
                        let d = self.prog.ctors[*k as usize].datatype;
                        self.field_contains(&FieldSet::DataType(d), x)?
                    }
                    _ => x == v,
                }
            }
            InfSet::Union(parts) => {
                for p in parts.iter() {
                    if self.set_contains(p, x)? {
                        return Ok(true);
                    }
                }
                false
            }
            InfSet::Inter(parts) => {
                for p in parts.iter() {
                    if !self.set_contains(p, x)? {
                        return Ok(false);
                    }
                }
                true
            }
            InfSet::Diff(a, b) => self.set_contains(a, x)? && !self.set_contains(b, x)?,
        })
    }

    /// True if `atoms` is a value `v1.v2...` with each `vi` in field type `i`.
    pub(super) fn fields_contain(&self, fields: &[FieldSet], atoms: &[Value]) -> EResult<bool> {
        let mut pos = 0;
        for f in fields {
            if pos >= atoms.len() {
                return Ok(false);
            }
            let len = self.field_len(Some(f), atoms, pos)?.max(1);
            if pos + len > atoms.len()
                || !self.field_contains(f, &Value::from_atoms(&atoms[pos..pos + len]))?
            {
                return Ok(false);
            }
            pos += len;
        }
        Ok(pos == atoms.len())
    }

    /// True if the field type `f` can be enumerated.
    pub(super) fn field_finite(&self, f: &FieldSet) -> EResult<bool> {
        Ok(match f {
            FieldSet::Finite(_) => true,
            FieldSet::Infinite(_) => false,
            FieldSet::DataType(d) => matches!(self.datatype_value(*d)?, Value::Set(_)),
        })
    }

    /// The set of values of field type `f`.
    pub(super) fn field_value(&self, f: &FieldSet) -> EResult<Value> {
        Ok(match f {
            FieldSet::Finite(s) => Value::Set(s.clone()),
            FieldSet::Infinite(i) => Value::Infinite(i.clone()),
            FieldSet::DataType(d) => self.datatype_value(*d)?,
        })
    }

    /// The number of elements of a datatype or of the closure `{| v |}` kept as a description
    /// (too many to enumerate) when its fields are finite, or of a bounded set of integers
    /// kept as intervals; `None` when it is infinite or another kind of set.
    pub(super) fn described_size(&self, s: &InfSet) -> EResult<Option<u128>> {
        match s {
            InfSet::DataType(d) => {
                let mut total: u128 = 0;
                for &k in &self.prog.datatypes[*d as usize].ctors {
                    match self.fields_size(&self.ctor_fields(k)?)? {
                        Some(n) => total = total.saturating_add(n),
                        None => return Ok(None),
                    }
                }
                Ok(Some(total))
            }
            InfSet::Productions(v) => match self.remaining_fields(v)? {
                Some(rest) => self.fields_size(&rest),
                None => Ok(None),
            },
            // A set of integers kept as intervals because it is too large to list
            // (`{0..10000000}`): its size is the intervals' (FDR's `card` gives it). An
            // interval that reaches an end of the integers (`Int`, `{m..}`) is infinite.
            InfSet::Ints(r)
                if r.intervals()
                    .iter()
                    .all(|&(lo, hi)| lo != i64::MIN && hi != i64::MAX) =>
            {
                Ok(Some(r.len()))
            }
            _ => Ok(None),
        }
    }

    /// True if the set surely has more than [`MAX_COLLECTION`] elements (so it differs from
    /// every finite set weft builds).
    pub(super) fn surely_huge(&self, s: &InfSet) -> EResult<bool> {
        let nonempty = |f: &FieldSet| -> EResult<bool> {
            Ok(match f {
                FieldSet::Finite(s) => !s.is_empty(),
                _ => true,
            })
        };
        Ok(match s {
            InfSet::Procs => true,
            InfSet::Ints(r) => r.len() > MAX_COLLECTION as u128,
            InfSet::Seqs(x) => !matches!(x, Value::Set(s) if s.is_empty()),
            InfSet::Chars => true,
            InfSet::Maps(k, v) => match (k, v) {
                (Value::Set(k), Value::Set(v)) => {
                    (v.len() as f64 + 1.0).powf(k.len() as f64) > MAX_COLLECTION as f64
                }
                (Value::Set(k), _) => !k.is_empty(),
                _ => true,
            },
            InfSet::Sets(x) => match x {
                Value::Set(s) => s.len() >= 24,
                Value::Infinite(i) => self.surely_huge(i)?,
                _ => false,
            },
            InfSet::DataType(_) | InfSet::Productions(_) => self
                .described_size(s)?
                .is_none_or(|n| n > MAX_COLLECTION as u128),
            InfSet::Dotted(fields) => {
                for f in fields.iter() {
                    if !nonempty(f)? {
                        return Ok(false);
                    }
                }
                true
            }
            InfSet::Tuples(sets) => {
                for s in sets.iter() {
                    if matches!(s, Value::Set(x) if x.is_empty()) {
                        return Ok(false);
                    }
                }
                true
            }
            InfSet::Union(parts) => {
                for p in parts.iter() {
                    if let Value::Infinite(i) = p {
                        if self.surely_huge(i)? {
                            return Ok(true);
                        }
                    }
                }
                false
            }
            InfSet::Inter(_) | InfSet::Diff(..) => false,
        })
    }

    /// `union(a, b)` of two sets, finite or not.
    pub(super) fn set_union(&self, parts: Vec<Value>) -> EResult<Value> {
        if let [Value::Set(a), Value::Set(b)] = parts.as_slice() {
            return Ok(union_sorted(a, b));
        }
        let mut finite: Vec<Value> = Vec::new();
        let mut infinite: Vec<Value> = Vec::new();
        let mut ints: Option<IntRanges> = None;
        let mut todo = parts;
        while let Some(p) = todo.pop() {
            match p {
                Value::Set(s) => finite.extend(s.iter().cloned()),
                Value::Infinite(i) => match &*i {
                    InfSet::Ints(r) => {
                        ints = Some(match ints {
                            Some(x) => x.union(r),
                            None => r.clone(),
                        })
                    }
                    InfSet::Union(ps) => todo.extend(ps.iter().cloned()),
                    _ => infinite.push(Value::Infinite(i)),
                },
                // (callers pass sets only)
                other => finite.push(other),
            }
        }
        if let Some(r) = ints {
            // The integers of the finite part join the ranges.
            let (int_items, rest): (Vec<Value>, Vec<Value>) =
                finite.into_iter().partition(|v| matches!(v, Value::Int(_)));
            finite = rest;
            let extra = IntRanges::of_ints(int_items.iter().filter_map(|v| match v {
                Value::Int(i) => Some(*i),
                _ => None,
            }));
            infinite.push(self.ints_value(r.union(&extra))?);
        }
        infinite.sort_unstable();
        infinite.dedup();
        let finite = Value::set_from(finite);
        if infinite.is_empty() {
            return Ok(finite);
        }
        if matches!(&finite, Value::Set(s) if !s.is_empty()) {
            infinite.insert(0, finite);
        }
        if infinite.len() == 1 {
            return Ok(infinite.pop().unwrap_or(Value::Set([].into())));
        }
        Ok(InfSet::Union(infinite.into()).value())
    }

    /// `inter(a, b)` of two sets, finite or not.
    pub(super) fn set_inter(&self, a: &Value, b: &Value) -> EResult<Value> {
        if let (Some(x), Some(y)) = (self.as_int_ranges(a), self.as_int_ranges(b)) {
            return self.ints_value(x.inter(&y));
        }
        let filter = |s: &Arc<[Value]>, other: &Value| -> EResult<Value> {
            let mut out = Vec::new();
            for v in s.iter() {
                self.poll_stop(1)?;
                if self.set_contains(other, v)? {
                    out.push(v.clone());
                }
            }
            Ok(Value::Set(out.into()))
        };
        match (a, b) {
            (Value::Set(s), other) | (other, Value::Set(s)) => filter(s, other),
            _ if a == b => Ok(a.clone()),
            _ => {
                let mut parts = vec![a.clone(), b.clone()];
                parts.sort_unstable();
                Ok(InfSet::Inter(parts.into()).value())
            }
        }
    }

    /// `diff(a, b)` of two sets, finite or not.
    pub(super) fn set_diff(&self, a: &Value, b: &Value) -> EResult<Value> {
        if let (Some(x), Some(y)) = (self.as_int_ranges(a), self.as_int_ranges(b)) {
            return self.ints_value(x.diff(&y));
        }
        match a {
            Value::Set(s) => {
                let mut out = Vec::new();
                for v in s.iter() {
                    self.poll_stop(1)?;
                    if !self.set_contains(b, v)? {
                        out.push(v.clone());
                    }
                }
                Ok(Value::Set(out.into()))
            }
            _ if a == b => Ok(Value::Set([].into())),
            _ if matches!(b, Value::Set(s) if s.is_empty()) => Ok(a.clone()),
            _ => Ok(InfSet::Diff(a.clone(), b.clone()).value()),
        }
    }

    /// `a == b` for two sets, one of them infinite; an error where weft cannot decide it.
    pub(super) fn infinite_sets_equal(&self, a: &Value, b: &Value, span: Span) -> EResult<bool> {
        if a == b {
            return Ok(true);
        }
        if let (Some(x), Some(y)) = (self.as_int_ranges(a), self.as_int_ranges(b)) {
            return Ok(x == y);
        }
        for (x, y) in [(a, b), (b, a)] {
            if let (Value::Set(_), Value::Infinite(i)) = (x, y) {
                if self.surely_huge(i)? {
                    return Ok(false);
                }
            }
        }
        Err(self.undecided(a, b, "compare", span))
    }

    /// `a <= b` (inclusion; `strict` for `<`) for two sets, one of them infinite.
    pub(super) fn infinite_subset(
        &self,
        a: &Value,
        b: &Value,
        strict: bool,
        span: Span,
    ) -> EResult<bool> {
        if let (Some(x), Some(y)) = (self.as_int_ranges(a), self.as_int_ranges(b)) {
            return Ok(x.is_subset(&y) && !(strict && x == y));
        }
        match (a, b) {
            (Value::Set(s), _) => {
                for v in s.iter() {
                    if !self.set_contains(b, v)? {
                        return Ok(false);
                    }
                }
                // A finite set differs from a huge one.
                Ok(!strict || !self.infinite_sets_equal(a, b, span)?)
            }
            (Value::Infinite(i), Value::Set(_)) if self.surely_huge(i)? => Ok(false),
            _ if a == b => Ok(!strict),
            _ => Err(self.undecided(a, b, "order", span)),
        }
    }

    fn undecided(&self, a: &Value, b: &Value, what: &str, span: Span) -> CspError {
        self.err(
            span,
            ErrorKind::Unsupported,
            format!(
                "weft cannot {what} the infinite sets {} and {}",
                self.show(a),
                self.show(b)
            ),
        )
    }

    /// Prints an infinite set as CSPm.
    pub(super) fn write_infinite(&self, s: &mut String, set: &InfSet) {
        use std::fmt::Write;
        let call = |this: &Self, s: &mut String, name: &str, parts: &[Value]| {
            s.push_str(name);
            s.push('(');
            this.write_list(s, parts);
            s.push(')');
        };
        match set {
            InfSet::Procs => s.push_str("Proc"),
            InfSet::Ints(r) => {
                let shown: Vec<String> = r
                    .intervals()
                    .iter()
                    .map(|&(lo, hi)| match (lo, hi) {
                        (i64::MIN, i64::MAX) => "Int".to_string(),
                        (lo, i64::MAX) => format!("{{{lo}..}}"),
                        (i64::MIN, hi) => format!("diff(Int, {{{}..}})", hi as i128 + 1),
                        (lo, hi) if lo == hi => format!("{{{lo}}}"),
                        (lo, hi) => format!("{{{lo}..{hi}}}"),
                    })
                    .collect();
                if shown.len() == 1 {
                    s.push_str(&shown[0]);
                } else {
                    let _ = write!(s, "Union({{{}}})", shown.join(", "));
                }
            }
            InfSet::Seqs(x) => call(self, s, "Seq", std::slice::from_ref(x)),
            InfSet::Chars => s.push_str("Char"),
            InfSet::Maps(k, v) => call(self, s, "Map", &[k.clone(), v.clone()]),
            InfSet::Sets(x) => call(self, s, "Set", std::slice::from_ref(x)),
            InfSet::DataType(d) => s.push_str(
                self.prog
                    .datatypes
                    .get(*d as usize)
                    .map_or("?", |t| &*t.name),
            ),
            InfSet::Dotted(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push('.');
                    }
                    self.write_field(s, f);
                }
            }
            InfSet::Tuples(sets) => {
                s.push('(');
                self.write_list(s, sets);
                s.push(')');
            }
            InfSet::Productions(v) => {
                s.push_str("{|");
                self.write_value(s, v);
                s.push_str("|}");
            }
            InfSet::Union(parts) => call(self, s, "Union", &[Value::Set(parts.clone().into())]),
            InfSet::Inter(parts) => call(self, s, "Inter", &[Value::Set(parts.clone().into())]),
            InfSet::Diff(a, b) => call(self, s, "diff", &[a.clone(), b.clone()]),
        }
    }

    /// Prints a field type.
    pub(super) fn write_field(&self, s: &mut String, f: &FieldSet) {
        match f {
            FieldSet::Finite(set) => self.write_set(s, set),
            FieldSet::Infinite(i) => self.write_infinite(s, i),
            FieldSet::DataType(d) => s.push_str(
                self.prog
                    .datatypes
                    .get(*d as usize)
                    .map_or("?", |t| &*t.name),
            ),
        }
    }

    /// The event set of an infinite set `v` (see [`EventSet`]): the events of its finite
    /// parts, then the descriptions of the rest, each checked to hold only events.
    pub(super) fn infinite_event_set(&self, v: &Value, span: Span) -> EResult<EventSet> {
        let parts: Vec<Value> = match v {
            Value::Infinite(i) => match &**i {
                InfSet::Union(ps) => ps.to_vec(),
                _ => vec![v.clone()],
            },
            other => vec![other.clone()],
        };
        let mut out = Vec::new();
        for p in parts {
            match &p {
                Value::Set(items) => {
                    for it in items.iter() {
                        if !self.validate_event(it.atoms(), span)? {
                            return Err(self.err(
                                span,
                                ErrorKind::Type,
                                format!("{} in this set is not an event", self.show(it)),
                            ));
                        }
                    }
                    out.extend(items.iter().cloned());
                }
                Value::Infinite(i) if self.describes_events(i) => out.push(p.clone()),
                _ => {
                    return Err(self.err(
                        span,
                        ErrorKind::Type,
                        format!("expected a set of events, found {}", self.show(&p)),
                    ))
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out.into())
    }

    /// True if every member of `s` is an event.
    fn describes_events(&self, s: &InfSet) -> bool {
        let part = |v: &Value| match v {
            Value::Infinite(i) => self.describes_events(i),
            Value::Set(items) => items.iter().all(|x| {
                matches!(
                    self.event_status(x.atoms(), Span::default()),
                    Ok(EventStatus::Complete)
                )
            }),
            _ => false,
        };
        match s {
            InfSet::Productions(v) => matches!(v.atoms().first(), Some(Value::Chan(_))),
            InfSet::Union(parts) => parts.iter().all(part),
            InfSet::Inter(parts) => parts.iter().any(part),
            InfSet::Diff(a, _) => part(a),
            _ => false,
        }
    }
}

impl Evaluator {
    /// See [`Evaluator::may_hold_enumerated_events`].
    pub(super) fn may_hold_table_events(&self, set: &Value) -> bool {
        match set {
            Value::Set(items) => !items.is_empty(),
            Value::Infinite(i) => match &**i {
                InfSet::Productions(v) => match v.atoms().first() {
                    Some(Value::Chan(c)) => !matches!(self.lazy_channel(*c), Ok(true)),
                    _ => false,
                },
                InfSet::Union(parts) => parts.iter().any(|p| self.may_hold_table_events(p)),
                InfSet::Inter(parts) => parts.iter().all(|p| self.may_hold_table_events(p)),
                InfSet::Diff(a, _) => self.may_hold_table_events(a),
                _ => true,
            },
            _ => true,
        }
    }
}

impl Evaluator {
    /// Prints an event set with described parts (see [`EventSet`]): `{| c, d |}` when it is
    /// all the events of some channels, a union otherwise.
    pub(super) fn write_described_events(&self, s: &mut String, set: &[Value]) {
        let split = set.partition_point(|v| !matches!(v, Value::Infinite(_)));
        let (events, described) = set.split_at(split);
        let prefixes: Option<Vec<&Value>> = described
            .iter()
            .map(|d| match d {
                Value::Infinite(i) => match &**i {
                    InfSet::Productions(v) => Some(v),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let mut parts = Vec::new();
        if !events.is_empty() {
            parts.push(Value::Set(events.into()));
        }
        match prefixes {
            Some(ps) => {
                let mut text = String::from("{|");
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        text.push_str(", ");
                    }
                    self.write_value(&mut text, p);
                }
                text.push_str("|}");
                if parts.is_empty() {
                    s.push_str(&text);
                    return;
                }
                s.push_str("union(");
                self.write_value(s, &parts[0]);
                s.push_str(", ");
                s.push_str(&text);
                s.push(')');
            }
            None => {
                parts.extend(described.iter().cloned());
                self.write_value(s, &InfSet::Union(parts.into()).value());
            }
        }
    }
}

/// The union of two finite sets (sorted, without duplicates) by one merge; a set that holds
/// the other is returned itself, shared (`union(K, {f})` for an `f` already in `K` is `K`).
pub(super) fn union_sorted(a: &SetElems, b: &SetElems) -> Value {
    use std::cmp::Ordering;
    if Arc::ptr_eq(a.items(), b.items()) || b.is_empty() {
        return Value::Set(a.clone());
    }
    if a.is_empty() {
        return Value::Set(b.clone());
    }
    for (big, small) in [(a, b), (b, a)] {
        if let [x] = &small[..] {
            return match big.binary_search(x) {
                Ok(_) => Value::Set(big.clone()),
                Err(at) => {
                    let mut out: Vec<Value> = Vec::with_capacity(big.len() + 1);
                    out.extend_from_slice(&big[..at]);
                    out.push(x.clone());
                    out.extend_from_slice(&big[at..]);
                    Value::Set(out.into())
                }
            };
        }
    }
    let mut out: Vec<Value> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    if out.len() == a.len() {
        Value::Set(a.clone())
    } else if out.len() == b.len() {
        Value::Set(b.clone())
    } else {
        Value::Set(out.into())
    }
}
