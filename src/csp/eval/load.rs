//! Loading: the program's tables (one cell per definition, channel, datatype and name type),
//! filled once at load time, and the checks made on them then.

use super::*;
use crate::csp::resolve::ClosedPrefix;

/// Loads the script at `path`: parses it (with its includes), checks it and evaluates its
/// channel types, datatypes and assertions.
///
/// An error in one definition does not fail the load: the assertions whose evaluation reaches
/// it get it as their [`Assertion::check`], and [`Script::errors`] lists those no assertion
/// reports. Loading fails only when the files cannot be read, when the parser cannot read the
/// script, and on internal errors.
pub fn load_script(path: &Path) -> Result<Script, CspError> {
    load_script_until(path, &crate::explore::StopSignal::new())
}

/// [`load_script`], stopped when `stop` is raised (by a [`crate::explore::Watchdog`] watching
/// the run's memory and time limits): evaluation at load polls it where it lists large sets,
/// and a load during which it was raised fails with an error of kind [`ErrorKind::Stopped`].
pub fn load_script_until(
    path: &Path,
    stop: &crate::explore::StopSignal,
) -> Result<Script, CspError> {
    let (path, stop) = (path.to_path_buf(), stop.clone());
    run_on_big_stack(move || {
        let mut ctx = parser::ParseContext::new();
        let decls = parser::parse_file_in_context(&mut ctx, &path)?;
        finish_load(ctx, decls, stop)
    })
}

/// Loads a script from text (`name` appears in messages; includes resolve relative to
/// `base_dir`).
pub fn load_str(name: &str, text: &str, base_dir: &Path) -> Result<Script, CspError> {
    let (name, text, base_dir) = (name.to_string(), text.to_string(), base_dir.to_path_buf());
    run_on_big_stack(move || {
        let mut ctx = parser::ParseContext::new();
        let decls = parser::parse_text_in_context(&mut ctx, &base_dir.join(&name), name, text)?;
        finish_load(ctx, decls, crate::explore::StopSignal::new())
    })
}

pub(super) fn run_on_big_stack<F>(f: F) -> Result<Script, CspError>
where
    F: FnOnce() -> Result<Script, CspError> + Send + 'static,
{
    let handle = std::thread::Builder::new()
        .name("weft-csp-load".into())
        .stack_size(LOAD_STACK_BYTES)
        .spawn(f)
        .map_err(|e| {
            CspError::unpositioned(ErrorKind::Limit, format!("cannot start the loader: {e}"))
        })?;
    // A panic in the loader is a bug: pass it on rather than hide it.
    handle
        .join()
        .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

pub(super) fn finish_load(
    mut ctx: parser::ParseContext,
    decls: Vec<Decl>,
    stop: crate::explore::StopSignal,
) -> Result<Script, CspError> {
    let started = std::time::Instant::now();
    let module_error = crate::csp::typecheck::check_modules(&decls).err();
    let decls = crate::csp::syntax::modules::flatten(decls, &mut ctx.next_id);
    let decls = if ctx.has_timed {
        crate::csp::syntax::timed::lower(decls, &mut ctx.next_id)
    } else {
        decls
    };
    let prelude = parser::parse_text_in_context(
        &mut ctx,
        Path::new("<prelude>"),
        "<prelude>".into(),
        PRELUDE.into(),
    )?;
    let annotations = std::mem::take(&mut ctx.annotations);
    let sources = ctx.sources;
    let prog = resolve::check(&decls, &prelude).map_err(|e| e.resolve(&sources))?;
    if let Some(e) = module_error {
        return Err(e.resolve(&sources));
    }
    // static types, as libcspm checks them after renaming: only a script without errors
    // of names is type checked
    if prog.errors.is_empty() && prog.assertions.iter().all(|a| a.error.is_none()) {
        let user_defs = prog
            .top
            .defs
            .iter()
            .filter(|d| sources.file(d.span.file).name != "<prelude>")
            .count();
        crate::csp::typecheck::check(&prog, &annotations, user_defs)
            .map_err(|e| e.resolve(&sources))?;
    }
    let mut broken = HashMap::new();
    for (name, &k) in &prog.broken {
        broken.insert(name.clone(), prog.errors[k].clone().resolve(&sources));
    }
    let user_defs = prog
        .top
        .defs
        .iter()
        .filter(|d| sources.file(d.span.file).name != "<prelude>")
        .count();
    let notes = prog
        .notes
        .iter()
        .map(|(span, message)| Note {
            location: sources.location(*span),
            message: message.clone(),
        })
        .collect();
    let broken_chans = vec![false; prog.channels.len()];
    let mut evaluator = Evaluator {
        loading: Some(Box::new(LoadCells::new(&prog))),
        tables: Tables {
            broken,
            broken_chans,
            defs: (0..prog.top.defs.len()).map(|_| OnceLock::new()).collect(),
            binds: (0..prog.top.binds.len()).map(|_| OnceLock::new()).collect(),
            ..Tables::default()
        },
        memo: Memo::default(),
        stop: parking_lot::Mutex::new(stop),
        cut_short: Default::default(),
        sources,
        prog,
    };
    set_thread_stack_budget(LOAD_STACK_BYTES - (16 << 20));
    let _g = StackGuard::enter();
    let (assertions, notes, errors) = evaluator.load(notes);
    // A load the run's limits stopped is not a script with errors: what it found is cut
    // short, and the run ends as stopped.
    if let Some(e) = evaluator.load_stopped(started) {
        return Err(e);
    }
    evaluator.set_stop(&crate::explore::StopSignal::new());
    // the tables are filled: from here on the evaluator only reads them
    if let Some(cells) = evaluator.loading.take() {
        cells.into_tables(&mut evaluator.tables);
    }
    Ok(Script {
        evaluator,
        assertions,
        notes,
        user_defs,
        errors,
    })
}

pub(super) fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Evaluator {
    /// Fills the tables (see [`Evaluator::fill_tables`]), checks the closed prefixes and
    /// evaluates the assertions and `print`s; returns the assertions, the notes (`notes` and
    /// the printed values) and the errors no assertion reports. An error breaks the
    /// definition it is in (every use of it then reports the error) and stops only the
    /// assertions that reach it.
    pub(super) fn load(
        &mut self,
        mut notes: Vec<Note>,
    ) -> (Vec<Assertion>, Vec<Note>, Vec<CspError>) {
        let mut load_errors: Vec<CspError> = Vec::new();
        for c in 0..self.prog.channels.len() {
            if let Err(e) = self.chan_fields(c as u32) {
                let name = self.prog.channels[c].name.clone();
                if self.tables.events_error.is_none() {
                    let mut events_error = e.clone();
                    events_error.message = format!(
                        "`Events` includes the events of channel `{name}`, whose type has an \
                         error: {}",
                        e.message
                    );
                    self.tables.events_error = Some(events_error);
                }
                self.tables.broken_chans[c] = true;
                self.tables.broken.entry(name).or_insert_with(|| e.clone());
                load_errors.push(e);
            }
        }
        if self.tables.broken_chans.contains(&true) {
            // The event table may have been computed (and failed) inside a broken channel's
            // type: compute it again without the broken channels.
            if let Some(cells) = &mut self.loading {
                cells.events = OnceLock::new();
            }
        }
        if let Some(e) = &self.tables.events_error {
            self.tables.broken.insert(Name::from("Events"), e.clone());
        }
        for k in 0..self.prog.ctors.len() {
            if let Err(e) = self.ctor_fields(k as u32) {
                let ctor = &self.prog.ctors[k];
                let dt = self.prog.datatypes[ctor.datatype as usize].name.clone();
                for n in [ctor.name.clone(), dt] {
                    self.tables.broken.entry(n).or_insert_with(|| e.clone());
                }
                load_errors.push(e);
            }
        }
        for d in 0..self.prog.datatypes.len() {
            // infinite datatypes (with `Int` fields) are fine until enumerated
            match self.datatype_value(d as u32) {
                Err(e)
                    if matches!(e.kind, ErrorKind::Limit)
                        || (e.kind == ErrorKind::Unsupported && e.message.contains("infinite")) => {
                }
                Err(e) => {
                    let dt = &self.prog.datatypes[d];
                    let names: Vec<Name> = std::iter::once(dt.name.clone())
                        .chain(
                            dt.ctors
                                .iter()
                                .map(|&k| self.prog.ctors[k as usize].name.clone()),
                        )
                        .collect();
                    for n in names {
                        self.tables.broken.entry(n).or_insert_with(|| e.clone());
                    }
                    load_errors.push(e);
                }
                Ok(_) => {}
            }
        }
        for t in 0..self.prog.nametypes.len() {
            if let Err(e) = self.nametype_fields(t as u32) {
                let name = self.prog.nametypes[t].name.clone();
                self.tables.broken.entry(name).or_insert_with(|| e.clone());
                load_errors.push(e);
            }
        }
        let mut closed = self.prog.closed_prefixes.clone();
        closed.sort_unstable_by_key(|p| p.id);
        for ClosedPrefix {
            id,
            owner,
            conditional,
        } in closed
        {
            // Only what FDR's type checker rejects breaks a definition at load: an
            // evaluation error (`head(<>)`, `error(..)`, a division by zero) in a prefix
            // that evaluation never reaches (a dead branch) is no error, as in FDR.
            if let Err(e) = self.check_closed_prefix(id, conditional) {
                if matches!(
                    e.kind,
                    ErrorKind::Eval | ErrorKind::Limit | ErrorKind::Stopped
                ) {
                    continue;
                }
                for n in owner.iter() {
                    self.tables
                        .broken
                        .entry(n.clone())
                        .or_insert_with(|| e.clone());
                }
                load_errors.push(e);
            }
        }
        // A definition that refers to a broken name is broken with the same error (even
        // where evaluation would not reach it, as FDR rejects such a script).
        loop {
            let mut changed = false;
            for (names, refs) in &self.prog.decl_refs {
                if names.iter().all(|n| self.tables.broken.contains_key(n)) {
                    continue;
                }
                if let Some(e) = refs.iter().find_map(|r| self.tables.broken.get(r)) {
                    let e = e.clone();
                    for n in names.iter() {
                        self.tables
                            .broken
                            .entry(n.clone())
                            .or_insert_with(|| e.clone());
                    }
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // every table entry, in dependency order
        self.fill_tables();
        let mut assertions = Vec::new();
        for entry in &self.prog.assertions {
            let broken_ref = entry.refs.iter().find_map(|r| self.tables.broken.get(r));
            let check = match (&entry.error, &entry.decl) {
                (Some(e), _) => Err(e.clone().resolve(&self.sources)),
                (None, Some(_)) if broken_ref.is_some() => Err(broken_ref
                    .cloned()
                    .unwrap_or_else(|| self.internal("a broken name"))),
                (None, Some(a)) => self
                    .assertion_check(a)
                    .map_err(|e| self.at_if_unpositioned(e, entry.span)),
                (None, None) => Err(self.internal("an assertion without a body")),
            };
            let full = self.sources.text(entry.span);
            let text = collapse_ws(full.trim_start().strip_prefix("assert").unwrap_or(full));
            let negated = match &entry.decl {
                Some(a) => a.negated,
                None => text.starts_with("not "),
            };
            assertions.push(Assertion {
                negated,
                check,
                location: self.sources.location(entry.span),
                text,
            });
        }
        // `print e`: the value is a note, an error is an error of the script
        for i in 0..self.prog.top.defs.len() {
            let def = &self.prog.top.defs[i];
            if !def.name.starts_with(parser::PRINT_PREFIX) {
                continue;
            }
            let span = def.span;
            match self.def_value(i as u32, span, Site::Opaque) {
                Ok(v) => {
                    // a process is named after the `print` entry itself: show its body
                    let v = match &v {
                        Value::Proc(p) => match p.node() {
                            ProcNode::Call(c) if c.target == Target::Global(i as u32) => self
                                .memo
                                .unfolds
                                .get(c)
                                .map(|body| Value::Proc(body.clone()))
                                .unwrap_or(v),
                            _ => v,
                        },
                        _ => v,
                    };
                    let full = self.sources.text(span);
                    let text = collapse_ws(full.trim_start().strip_prefix("print").unwrap_or(full));
                    let message = format!("print {text}: {}", self.show(&v));
                    notes.push(Note {
                        location: self.sources.location(span),
                        message,
                    });
                }
                Err(e) => load_errors.push(self.at_if_unpositioned(e, span)),
            }
        }
        // The errors no assertion reports, in source order, each once.
        let mut errors: Vec<CspError> = self
            .prog
            .errors
            .iter()
            .map(|e| e.clone().resolve(&self.sources))
            .chain(load_errors)
            .collect();
        errors.sort_by(|a, b| {
            let key = |e: &CspError| e.location.as_ref().map(|l| (l.line, l.column));
            key(a).cmp(&key(b))
        });
        let mut seen: Vec<&CspError> = assertions
            .iter()
            .filter_map(|a| a.check.as_ref().err())
            .collect();
        let mut kept = Vec::new();
        for e in &errors {
            if !seen.contains(&e) {
                seen.push(e);
                kept.push(e.clone());
            }
        }
        (assertions, notes, kept)
    }

    /// Evaluates every top-level constant and pattern binding of the script (loading
    /// evaluates them only when used, as FDR does); returns the first error.
    pub fn evaluate_all_definitions(&self) -> Result<(), CspError> {
        let _g = StackGuard::enter();
        for i in 0..self.prog.top.defs.len() {
            if !matches!(self.prog.top.defs[i].kind, DefKind::Function { .. }) {
                self.def_value(i as u32, self.prog.top.defs[i].span, Site::Opaque)?;
            }
        }
        Ok(())
    }

    /// Checks the event and leading outputs of a prefix with no free variables; a value
    /// outside its field's set is an error of the load only where the prefix is not
    /// `conditional` (see [`Evaluator::range_error_deferred`]).
    pub(super) fn check_closed_prefix(&self, id: u32, conditional: bool) -> EResult<()> {
        let Some((pre, _, _)) = self.prog.prefixes.get(&id).cloned() else {
            return Ok(());
        };
        let mut env = Env::new();
        let ev = self
            .eval(&pre.event, &mut env)
            .map_err(|e| self.dotted_range_error_deferred(e, conditional, &[], &pre.event))?;
        let Some(Value::Chan(c)) = ev.atoms().first().cloned() else {
            return Err(self.err(
                pre.event.span,
                ErrorKind::Type,
                format!("`->` needs an event, found {}", self.show(&ev)),
            ));
        };
        let mut atoms = ev.atoms().to_vec();
        let mut span = pre.event.span;
        self.check_partial_event(&atoms, span)
            .map_err(|e| self.range_error_deferred(e, conditional, c, &atoms))?;
        for f in &pre.fields {
            match f {
                Field::Output(e) => {
                    let v = self.eval(e, &mut env).map_err(|err| {
                        self.dotted_range_error_deferred(err, conditional, &atoms, e)
                    })?;
                    atoms.extend_from_slice(v.atoms());
                    span = e.span;
                    self.check_partial_event(&atoms, span)
                        .map_err(|e| self.range_error_deferred(e, conditional, c, &atoms))?;
                }
                Field::Input(..) | Field::NondetInput(..) => return Ok(()),
            }
        }
        let complete = self
            .validate_event(&atoms, span)
            .map_err(|e| self.range_error_deferred(e, conditional, c, &atoms))?;
        if !complete {
            let fields = self.chan_fields(c)?;
            return Err(self.err(
                span,
                ErrorKind::Arity,
                format!(
                    "{} is not a complete event: channel `{}` has {} field{}",
                    self.show(&Value::from_atoms(&atoms)),
                    self.prog.channels[c as usize].name,
                    fields.len(),
                    if fields.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(())
    }

    /// `e`, an error of the event `atoms` (headed by channel `c`) of a closed prefix, made
    /// an evaluation error when what is wrong is only a value outside its field's set while
    /// of the field's type (`c!5` with `channel c : {0..3}`). FDR's type checker accepts
    /// such a prefix (5 is an Int), and evaluation reports it only if it performs the
    /// event; so does weft: the load skips evaluation errors of closed prefixes, and the
    /// search meets the error where it reaches the prefix. A value of another type
    /// (`c!true`) or too many fields stay errors of the load, and so does a value out of
    /// range in a prefix that is not `conditional` (`P = c!5 -> STOP`: every use of `P`
    /// fails, and the script is reported at once, as cspx's type check reports it).
    fn range_error_deferred(
        &self,
        mut e: CspError,
        conditional: bool,
        c: u32,
        atoms: &[Value],
    ) -> CspError {
        if conditional
            && e.kind == ErrorKind::Type
            && self.only_out_of_range(c, atoms).unwrap_or(false)
        {
            e.kind = ErrorKind::Eval;
        }
        e
    }

    /// `e`, the error of evaluating `expr` (the event of a closed prefix, or an output after
    /// the atoms `before`), made an evaluation error when it is one of a value outside its
    /// field's set (see [`Evaluator::range_error_deferred`]) met while the dotted value was
    /// built (`c.4`, `c!X.5`): the parts of the dot are evaluated one by one and the event
    /// they make is judged as a whole.
    fn dotted_range_error_deferred(
        &self,
        e: CspError,
        conditional: bool,
        before: &[Value],
        expr: &Expr,
    ) -> CspError {
        if !conditional || e.kind != ErrorKind::Type {
            return e;
        }
        let mut parts = Vec::new();
        expr::flatten_dots(expr, &mut parts);
        let mut atoms = before.to_vec();
        let mut env = Env::new();
        for part in parts {
            match self.eval(part, &mut env) {
                Ok(v) => atoms.extend_from_slice(v.atoms()),
                Err(_) => return e,
            }
        }
        match atoms.first() {
            Some(Value::Chan(c)) => {
                let c = *c;
                self.range_error_deferred(e, conditional, c, &atoms)
            }
            _ => e,
        }
    }

    /// Whether the invalid event `atoms` (headed by channel `c`) has at most as many fields
    /// as the channel, at least one complete field outside its set, and every such field of
    /// the coarse type of its set's members.
    fn only_out_of_range(&self, c: u32, atoms: &[Value]) -> EResult<bool> {
        let fields = self.chan_fields(c)?;
        let groups = self.typed_groups(c, &atoms[1..])?;
        if groups.len() > fields.len() {
            return Ok(false);
        }
        let mut outside = false;
        for ((v, complete), f) in groups.iter().zip(fields.iter()) {
            if !complete || self.field_contains(f, v)? {
                continue;
            }
            if !self.of_field_type(f, v) {
                return Ok(false);
            }
            outside = true;
        }
        Ok(outside)
    }

    /// Whether `v` has the coarse type ([`Evaluator::kind_of`]) of the members of the
    /// field set `f` (false when that cannot be told: an empty set, a set of mixed kinds).
    fn of_field_type(&self, f: &FieldSet, v: &Value) -> bool {
        let kind = self.kind_of(v);
        match f {
            FieldSet::Finite(set) => !set.is_empty() && set.iter().all(|m| self.kind_of(m) == kind),
            FieldSet::DataType(d) => kind == (6, *d),
            FieldSet::Infinite(inf) => match &**inf {
                InfSet::Ints(_) => kind == (0, 0),
                InfSet::Chars => kind == (10, 0),
                _ => false,
            },
        }
    }
}
