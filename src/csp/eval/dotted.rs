//! Dotted values: how many atoms each field takes, whether a dotted value is a complete,
//! partial or invalid event or datatype value, and the errors explaining why not.

use super::*;

impl Evaluator {
    /// Number of atoms of the grouped value starting at `atoms[i]` (a constructor takes its
    /// fields); stops at the end of `atoms`.
    pub(super) fn value_len(&self, atoms: &[Value], i: usize) -> EResult<usize> {
        let mut need = 1usize;
        let mut j = i;
        while need > 0 && j < atoms.len() {
            need -= 1;
            if let Value::Ctor(k) = &atoms[j] {
                need += self.ctor_arity(*k)?;
            }
            j += 1;
        }
        Ok(j - i)
    }

    /// Number of atoms of the value of a field of type `f` starting at `atoms[pos]`: a
    /// constructor takes its fields; a type of dotted values (`{0.0, 0.1}`) takes the length
    /// of the member found there.
    pub(super) fn field_len(
        &self,
        f: Option<&FieldSet>,
        atoms: &[Value],
        pos: usize,
    ) -> EResult<usize> {
        if matches!(atoms.get(pos), Some(Value::Ctor(_))) {
            return self.value_len(atoms, pos);
        }
        let Some(FieldSet::Finite(set)) = f else {
            return Ok(1);
        };
        if !matches!(set.last(), Some(Value::Dot(_))) {
            return Ok(1);
        }
        let mut lengths: Vec<usize> = set.iter().map(|v| v.atoms().len()).collect();
        lengths.sort_unstable();
        lengths.dedup();
        for &len in lengths.iter().rev() {
            if pos + len <= atoms.len()
                && set
                    .binary_search(&Value::from_atoms(&atoms[pos..pos + len]))
                    .is_ok()
            {
                return Ok(len);
            }
        }
        let rest = &atoms[pos..];
        if set
            .iter()
            .any(|v| v.atoms().len() > rest.len() && v.atoms()[..rest.len()] == *rest)
        {
            return Ok(rest.len());
        }
        Ok(1)
    }

    /// True if `v` is a value of the field type `f`.
    pub(super) fn field_contains(&self, f: &FieldSet, v: &Value) -> EResult<bool> {
        Ok(match f {
            FieldSet::Finite(s) => s.binary_search(v).is_ok(),
            FieldSet::Infinite(i) => self.inf_contains(i, v)?,
            FieldSet::DataType(d) => {
                let atoms = v.atoms();
                let Some(Value::Ctor(k)) = atoms.first() else {
                    return Ok(false);
                };
                if self.prog.ctors[*k as usize].datatype != *d {
                    return Ok(false);
                }
                let fields = self.ctor_fields(*k)?;
                self.fields_contain(&fields, &atoms[1..])?
            }
        })
    }

    /// Splits the atoms after channel `c` into field values (with whether each is complete),
    /// guided by the channel's field types.
    pub(super) fn typed_groups(&self, c: u32, rest: &[Value]) -> EResult<Vec<(Value, bool)>> {
        let fields = self.chan_fields(c)?;
        self.groups_by_fields(&fields, rest)
    }

    /// Splits `rest` into field values (with whether each is complete), guided by the field
    /// types `fields` (of a channel or a constructor).
    pub(super) fn groups_by_fields(
        &self,
        fields: &[FieldSet],
        rest: &[Value],
    ) -> EResult<Vec<(Value, bool)>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < rest.len() {
            let len = self.field_len(fields.get(out.len()), rest, pos)?.max(1);
            let end = (pos + len).min(rest.len());
            let v = Value::from_atoms(&rest[pos..end]);
            let complete = match fields.get(out.len()) {
                Some(FieldSet::Finite(set)) if matches!(set.last(), Some(Value::Dot(_))) => {
                    let n = v.atoms().len();
                    set.binary_search(&v).is_ok()
                        || !set
                            .iter()
                            .any(|m| m.atoms().len() > n && m.atoms()[..n] == *v.atoms())
                }
                _ => self.complete_value(&v)?,
            };
            out.push((v, complete));
            pos = end;
        }
        Ok(out)
    }

    /// Whether `atoms` is a complete event, a proper prefix of events, or neither.
    pub(super) fn event_status(&self, atoms: &[Value], span: Span) -> EResult<EventStatus> {
        let Some(Value::Chan(c)) = atoms.first() else {
            return Ok(EventStatus::Invalid);
        };
        if self.lazy_channel(*c)? {
            return self.typed_event_status(*c, atoms);
        }
        let evs = self.chan_events(*c, span)?;
        if evs.binary_search_by(|e| (**e).cmp(atoms)).is_ok() {
            return Ok(EventStatus::Complete);
        }
        let lo = evs.partition_point(|e| e[..e.len().min(atoms.len())] < *atoms);
        let extends = evs
            .get(lo)
            .is_some_and(|e| e.len() > atoms.len() && e[..atoms.len()] == *atoms);
        Ok(if extends {
            EventStatus::Partial
        } else {
            EventStatus::Invalid
        })
    }

    /// [`Evaluator::event_status`] for a channel whose events are not enumerated: the atoms
    /// split into fields, each checked against its type.
    fn typed_event_status(&self, c: u32, atoms: &[Value]) -> EResult<EventStatus> {
        let fields = self.chan_fields(c)?;
        let groups = self.typed_groups(c, &atoms[1..])?;
        if groups.len() > fields.len() {
            return Ok(EventStatus::Invalid);
        }
        for (i, (v, complete)) in groups.iter().enumerate() {
            if *complete && !self.field_contains(&fields[i], v)? {
                return Ok(EventStatus::Invalid);
            }
            if !complete {
                return Ok(if i + 1 == groups.len() {
                    EventStatus::Partial
                } else {
                    EventStatus::Invalid
                });
            }
        }
        Ok(if groups.len() == fields.len() {
            EventStatus::Complete
        } else {
            EventStatus::Partial
        })
    }

    /// Why `atoms` (headed by channel `c`) is not an event or a prefix of one.
    pub(super) fn explain_invalid(&self, c: u32, atoms: &[Value], span: Span) -> CspError {
        let fields = match self.chan_fields(c) {
            Ok(f) => f,
            Err(e) => return e,
        };
        let groups = match self.typed_groups(c, &atoms[1..]) {
            Ok(g) => g,
            Err(e) => return e,
        };
        for (i, (v, complete)) in groups.iter().enumerate() {
            if i >= fields.len() {
                return self.too_many_fields(c, atoms, span);
            }
            if *complete && !self.field_contains(&fields[i], v).unwrap_or(false) {
                return self.outside_type(c, i, v, span);
            }
        }
        self.err(
            span,
            ErrorKind::Type,
            format!(
                "{} is not an event of channel `{}`",
                self.show(&Value::from_atoms(atoms)),
                self.prog.channels[c as usize].name
            ),
        )
    }

    /// True if `atoms` is a complete event with every field in its type; false if it is an
    /// incomplete prefix of events (or not headed by a channel). Errors name a field outside
    /// its type or too many fields.
    pub(super) fn validate_event(&self, atoms: &[Value], span: Span) -> EResult<bool> {
        match self.event_status(atoms, span)? {
            EventStatus::Complete => Ok(true),
            EventStatus::Partial => Ok(false),
            EventStatus::Invalid => match atoms.first() {
                Some(Value::Chan(c)) => Err(self.explain_invalid(*c, atoms, span)),
                _ => Ok(false),
            },
        }
    }

    /// Checks the fields given so far of a partial event (errors only).
    pub(super) fn check_partial_event(&self, atoms: &[Value], span: Span) -> EResult<()> {
        self.validate_event(atoms, span).map(|_| ())
    }

    pub(super) fn complete_value(&self, v: &Value) -> EResult<bool> {
        let atoms = v.atoms();
        if let Some(Value::Ctor(_)) = atoms.first() {
            let n = self.value_len(atoms, 0)?;
            if n < atoms.len() {
                return Ok(true);
            }
            // complete iff every constructor got all its fields
            let mut need = 1usize;
            for a in atoms {
                if need == 0 {
                    break;
                }
                need -= 1;
                if let Value::Ctor(k) = a {
                    need += self.ctor_arity(*k)?;
                }
            }
            return Ok(need == 0);
        }
        Ok(true)
    }

    /// Checks the fields given so far of a dotted value headed by a channel or constructor
    /// (as libcspm does when it builds the value).
    pub(super) fn check_dotted(&self, v: &Value, span: Span) -> EResult<()> {
        let atoms = v.atoms();
        match atoms.first() {
            Some(Value::Chan(_)) => self.check_partial_event(atoms, span),
            // (not while the constructor's own field types are being computed: a type such
            // as `Sq.Seq(fact).agents` with `agents = {Sq.<Ground>.Ground, ...}`)
            Some(Value::Ctor(k)) if in_progress((2, *k)) => Ok(()),
            Some(Value::Ctor(k)) => {
                let fields = self.ctor_fields(*k)?;
                let mut pos = 1;
                for (i, f) in fields.iter().enumerate() {
                    if pos >= atoms.len() {
                        break;
                    }
                    let len = self.field_len(Some(f), atoms, pos)?.max(1);
                    let end = (pos + len).min(atoms.len());
                    let part = Value::from_atoms(&atoms[pos..end]);
                    let prefix_of_member = match f {
                        FieldSet::Finite(set) if matches!(set.last(), Some(Value::Dot(_))) => {
                            let n = part.atoms().len();
                            set.iter()
                                .any(|m| m.atoms().len() > n && m.atoms()[..n] == *part.atoms())
                        }
                        _ => false,
                    };
                    if pos + len <= atoms.len()
                        && !prefix_of_member
                        && self.complete_value(&part)?
                        && !self.field_contains(f, &part)?
                    {
                        return Err(self.err(
                            span,
                            ErrorKind::Type,
                            format!(
                                "the value {} is outside the type of field {} of constructor `{}`",
                                self.show(&part),
                                i + 1,
                                self.prog.ctors[*k as usize].name
                            ),
                        ));
                    }
                    pos = end;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A coarse type of a value, to reject comparisons of values of different types.
    pub(super) fn kind_of(&self, v: &Value) -> (u8, u32) {
        match v {
            Value::Int(_) => (0, 0),
            Value::Bool(_) => (1, 0),
            Value::Tuple(t) => (2, t.len() as u32),
            Value::Set(_) | Value::Infinite(_) => (3, 0),
            Value::Seq(_) | Value::InfSeq(..) | Value::LazySeq(_) => (4, 0),
            Value::Chan(_) => (5, 0),
            Value::Ctor(k) => (6, self.prog.ctors[*k as usize].datatype),
            Value::Dot(a) => match a.first() {
                Some(Value::Chan(_)) => (5, 0),
                Some(Value::Ctor(k)) => (6, self.prog.ctors[*k as usize].datatype),
                _ => (7, 0),
            },
            Value::Func(_) => (8, 0),
            Value::Proc(_) => (9, 0),
            Value::Char(_) => (10, 0),
            Value::Map(_) => (11, 0),
        }
    }

    /// Errors unless `v` is complete when it is a datatype value (a constructor with all its
    /// fields).
    pub(super) fn require_complete(&self, v: &Value, span: Span) -> EResult<()> {
        let atoms = v.atoms();
        // (channel names and partial events may be compared, as FDR2 scripts do)
        let complete = match atoms.first() {
            Some(Value::Ctor(_)) => self.complete_value(v)?,
            _ => true,
        };
        if complete {
            Ok(())
        } else {
            Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "{} is incomplete (fields are missing), so it cannot be compared",
                    self.show(v)
                ),
            ))
        }
    }

    pub(super) fn too_many_fields(&self, c: u32, atoms: &[Value], span: Span) -> CspError {
        let n = self.chan_fields(c).map(|f| f.len()).unwrap_or(0);
        self.err(
            span,
            ErrorKind::Arity,
            format!(
                "{} has too many fields: channel `{}` has {n} field{}",
                self.show(&Value::from_atoms(atoms)),
                self.prog.channels[c as usize].name,
                if n == 1 { "" } else { "s" }
            ),
        )
    }

    pub(super) fn outside_type(&self, c: u32, i: usize, v: &Value, span: Span) -> CspError {
        let ty = match self.chan_fields(c) {
            Ok(f) => {
                let mut s = String::new();
                self.write_field(&mut s, &f[i]);
                s
            }
            Err(_) => "?".into(),
        };
        self.err(
            span,
            ErrorKind::Type,
            format!(
                "the value {} is outside the type of field {} of channel `{}` ({ty})",
                self.show(v),
                i + 1,
                self.prog.channels[c as usize].name
            ),
        )
    }
}
