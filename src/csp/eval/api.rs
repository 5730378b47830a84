//! The public interface of a loaded script: its assertions, notes and errors ([`Script`]),
//! and its processes, values, events and sources ([`Evaluator`]).

use super::*;

impl Script {
    /// The assertions, in source order.
    pub fn assertions(&self) -> &[Assertion] {
        &self.assertions
    }

    /// Notes for the user (for example compression functions applied as the identity).
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The errors of definitions (and declarations) that no assertion reports, positioned,
    /// in source order: a definition that cannot be evaluated but that no assertion uses
    /// (to be shown as warnings). An error that an assertion reports is in its
    /// [`Assertion::check`] instead.
    pub fn errors(&self) -> &[CspError] {
        &self.errors
    }

    /// The names of the top-level definitions of the script, in source order (functions,
    /// processes and constants; not the prelude's).
    pub fn definition_names(&self) -> Vec<&str> {
        self.prog.top.defs[..self.user_defs]
            .iter()
            .map(|d| &*d.name)
            // the hidden headers of timed sections
            .filter(|n| !n.starts_with('#'))
            .collect()
    }
}

impl Evaluator {
    /// The source files of the script.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// The process named `name` applied to `args` (no arguments for a process constant).
    pub fn process(&self, name: &str, args: &[Value]) -> Result<Proc, CspError> {
        let _g = StackGuard::enter();
        let Some(GlobalKind::Def(i)) = self.prog.globals.get(name).copied() else {
            return Err(CspError::unpositioned(
                ErrorKind::UnknownName,
                format!("no process named `{name}` is defined"),
            ));
        };
        let v = self.def_value(i, self.prog.top.defs[i as usize].span, Site::Opaque)?;
        let v = if args.is_empty() && !matches!(v, Value::Func(_)) {
            v
        } else {
            self.apply(&v, args.to_vec(), self.prog.top.defs[i as usize].span)?
        };
        match v {
            Value::Proc(p) => Ok(p),
            other => Err(CspError::unpositioned(
                ErrorKind::Type,
                format!("`{name}` is not a process: it is {}", self.show(&other)),
            )),
        }
    }

    /// The body of a named process call: `P(3)` unfolds to the right-hand side of `P`
    /// evaluated with its parameters bound to 3 (which may itself be a call).
    pub fn unfold(&self, call: &Call) -> Result<Proc, CspError> {
        let _g = StackGuard::enter();
        if let Some(p) = self.memo.unfolds.get(call) {
            return Ok(p.clone());
        }
        if let Some(p) = self.unfold_constant(call)? {
            return Ok(p);
        }
        let groups = self.regroup(&call.target, &call.args)?;
        let v = self.call_body(&call.target, &groups, Span::default())?;
        match v {
            Value::Proc(p) => match p.node() {
                ProcNode::Call(c) if c == call => self
                    .memo
                    .unfolds
                    .get(call)
                    .map(|p| p.clone())
                    .ok_or_else(|| self.internal("unfolding a call gave the call itself")),
                _ => Ok(p),
            },
            other => Err(CspError::unpositioned(
                ErrorKind::Type,
                format!(
                    "`{}` is not a process: it is {}",
                    self.target_name(&call.target),
                    self.show(&other)
                ),
            )),
        }
    }

    /// The body of `call` when it names a process constant (top level or of a `let` group)
    /// whose body is not known yet: a constant named as itself while it was evaluated
    /// (`I = (a -> SKIP) ; A`, `A = SKIP ; I`) gives its call before its body is recorded,
    /// and another thread may meet the call first (or the evaluation failed). The constant
    /// is evaluated (or its error given); `None` for other calls.
    fn unfold_constant(&self, call: &Call) -> Result<Option<Proc>, CspError> {
        if !call.args.is_empty() {
            return Ok(None);
        }
        let v = match &call.target {
            Target::Global(i) => {
                let def = &self.prog.top.defs[*i as usize];
                if !matches!(def.kind, DefKind::Constant { .. }) {
                    return Ok(None);
                }
                self.def_value(*i, def.span, Site::Opaque)?
            }
            Target::Let(r, idx) => {
                let (_, group) = self.let_env(r)?;
                let def = &group.defs[*idx as usize];
                if !matches!(def.kind, DefKind::Constant { .. }) {
                    return Ok(None);
                }
                self.let_value(r, &def.name, def.span, Site::Opaque)?
            }
            _ => return Ok(None),
        };
        match (v, self.memo.unfolds.get(call)) {
            (_, Some(p)) => Ok(Some(p.clone())),
            (Value::Proc(p), None) => Ok(Some(p)),
            (other, None) => Err(CspError::unpositioned(
                ErrorKind::Type,
                format!(
                    "`{}` is not a process: it is {}",
                    self.target_name(&call.target),
                    self.show(&other)
                ),
            )),
        }
    }

    /// The initial events of a prefix and the process after each (inputs enumerated over
    /// the channel's type, outputs checked against it); for a prefix with `$` fields whose
    /// internal choice is made, the events of that choice only.
    pub fn prefix_transitions(
        &self,
        prefix: &PrefixClosure,
    ) -> Result<Vec<(Value, Proc)>, CspError> {
        Ok(self
            .prefix_moves(prefix)?
            .into_iter()
            .filter(|(chosen, _, _)| prefix.choice.as_deref().is_none_or(|c| c == &chosen[..]))
            .map(|(_, event, next)| (event, next))
            .collect())
    }

    /// Every event of a prefix with the values of its `$` fields (whatever its `choice`).
    pub(super) fn prefix_moves(
        &self,
        prefix: &PrefixClosure,
    ) -> Result<Vec<prefix::PrefixMove>, CspError> {
        let _g = StackGuard::enter();
        let (pre, free, _) = self
            .prog
            .prefixes
            .get(&prefix.expr)
            .cloned()
            .ok_or_else(|| self.internal("unknown prefix node"))?;
        let mut env: Env = free
            .iter()
            .cloned()
            .zip(prefix.captured.iter().cloned())
            .collect();
        let ev = self.eval(&pre.event, &mut env)?;
        let chan = match ev.atoms().first() {
            Some(Value::Chan(c)) => *c,
            _ => {
                return Err(self.err(
                    pre.event.span,
                    ErrorKind::Type,
                    format!("`->` needs an event, found {}", self.show(&ev)),
                ))
            }
        };
        let mut out = Vec::new();
        let atoms = ev.atoms().to_vec();
        let mut bodies = prefix::BodyCache::for_prefix(self, prefix.expr);
        self.prefix_fields(
            &pre,
            chan,
            0,
            atoms,
            &mut env,
            &mut Vec::new(),
            &mut out,
            &mut bodies,
        )?;
        Ok(out)
    }

    /// All events of the script's channels (computed once; an error if a channel's type is
    /// infinite or the events are too many).
    pub fn events(&self) -> Result<&EventTable, CspError> {
        self.event_cell().map(|t| &**t)
    }

    /// The event table, shared (see [`Script::events`]).
    pub fn event_table(&self) -> Result<Arc<EventTable>, CspError> {
        self.event_cell().cloned()
    }

    fn event_cell(&self) -> Result<&Arc<EventTable>, CspError> {
        if let Some(table) = &self.tables.events {
            return table.as_ref().map_err(Clone::clone);
        }
        let Some(cells) = &self.loading else {
            return Err(self.internal("the event table is missing"));
        };
        if cells.events.get().is_none() {
            // Computed outside the cell: a channel type that needs `Events` re-enters here,
            // which `guarded` reports as a cycle (a re-entered `OnceLock` would hang).
            let table = self.guarded((8, 0), "Events", Span::default(), || {
                let _g = StackGuard::enter();
                self.build_event_table().map(Arc::new)
            });
            let _ = cells.events.set(table);
        }
        match cells.events.get() {
            Some(r) => r.as_ref().map_err(Clone::clone),
            None => Err(self.internal("the event table is missing")),
        }
    }

    /// True if `x` is in the set `set` (finite or [`Value::Infinite`]).
    pub fn member(&self, set: &Value, x: &Value) -> Result<bool, CspError> {
        let _g = StackGuard::enter();
        self.set_contains(set, x)
    }

    /// False if the set `set` surely holds no event of the event table (it describes only
    /// events of channels that are not enumerated, [`EventTable::lazy_channels`]).
    pub fn may_hold_enumerated_events(&self, set: &Value) -> bool {
        let _g = StackGuard::enter();
        self.may_hold_table_events(set)
    }

    /// The printed form of a value (`c.1.true`, `{1, 2}`, `<a, b>`).
    pub fn show(&self, v: &Value) -> String {
        let mut s = String::new();
        self.write_value(&mut s, v);
        s
    }

    /// The printed form of a value in a message: as [`Evaluator::show`], except that a set or
    /// sequence of more than [`BRIEF_ITEMS`] elements shows its first ones and its size
    /// (`{0, 1, 2, …, 9, … (10000000 elements)}`): a message about a set of ten million
    /// integers is one line, not 88 MB.
    pub fn show_brief(&self, v: &Value) -> String {
        let (open, close, items): (&str, &str, &[Value]) = match v {
            Value::Set(items) => ("{", "}", items),
            Value::Seq(items) if !items.iter().all(|c| matches!(c, Value::Char(_))) => {
                ("<", ">", items)
            }
            _ => return self.show(v),
        };
        if items.len() <= BRIEF_ITEMS {
            return self.show(v);
        }
        let mut s = String::from(open);
        self.write_list(&mut s, &items[..BRIEF_ITEMS]);
        s.push_str(&format!(", … ({} elements){close}", items.len()));
        s
    }

    /// The printed form of a process term (calls by name: `P(3)`).
    pub fn show_proc(&self, p: &Proc) -> String {
        let mut s = String::new();
        self.write_proc(&mut s, p, 0);
        s
    }

    /// The name of a call's definition (`P` for `P(3)`).
    pub fn call_name(&self, call: &Call) -> String {
        self.target_name(&call.target)
    }

    /// The fields of a channel (by name), as sets of values.
    pub fn channel_fields(&self, name: &str) -> Option<Result<Arc<[FieldSet]>, CspError>> {
        match self.prog.globals.get(name) {
            Some(GlobalKind::Chan(c)) => Some(self.chan_fields(*c)),
            _ => None,
        }
    }

    /// True if `v` is a complete event of a declared channel.
    pub fn is_event(&self, v: &Value) -> bool {
        let _g = StackGuard::enter();
        matches!(self.validate_event(v.atoms(), Span::default()), Ok(true))
    }

    /// Evaluates the top-level constant `name` (for tests and tools).
    pub fn value(&self, name: &str) -> Result<Value, CspError> {
        let _g = StackGuard::enter();
        match self.prog.globals.get(name).copied() {
            Some(GlobalKind::Def(i)) => {
                self.def_value(i, self.prog.top.defs[i as usize].span, Site::Opaque)
            }
            Some(_) => self.lookup(
                &Name::from(name),
                &Env::new(),
                Span::default(),
                Site::Opaque,
            ),
            None => Err(CspError::unpositioned(
                ErrorKind::UnknownName,
                format!("unknown name `{name}`"),
            )),
        }
    }

    /// The source location of the top-level definition `name`.
    pub fn definition_location(&self, name: &str) -> Option<Location> {
        match self.prog.globals.get(name) {
            Some(GlobalKind::Def(i)) => {
                Some(self.sources.location(self.prog.top.defs[*i as usize].span))
            }
            _ => None,
        }
    }
}
