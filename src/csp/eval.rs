//! The evaluator: loaded scripts, expression evaluation and process terms.
//!
//! [`load_script`] parses, checks and loads a script. Loading evaluates every top-level
//! constant, channel type, datatype and assertion, and checks the outputs of every prefix
//! with no free variables against its channel's type, so most errors appear at load time
//! with their position. Process expressions evaluate to [`Proc`] terms: named processes stay
//! as [`Call`]s and prefixes as closures, unfolded on demand by [`Script::unfold`] and
//! [`Script::prefix_transitions`].

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;

use super::ast::*;
use super::error::{CspError, ErrorKind};
use super::parser;
use super::resolve::{self, DefGroup, DefKind, GlobalKind, Program};
use super::source::{Location, SourceMap, Span};
use super::value::*;

/// Deepest nesting of function and process calls the evaluator follows.
pub const MAX_EVAL_DEPTH: u32 = 1_000_000;
/// Stack the evaluator may use on a thread that did not call [`set_thread_stack_budget`]
/// (safe on the 2 MiB stacks of spawned threads).
pub const DEFAULT_STACK_BUDGET: usize = 1 << 20;
/// Largest set or sequence the evaluator builds.
pub const MAX_COLLECTION: usize = 10_000_000;
/// Stack size of the thread [`load_script`] evaluates on.
pub const LOAD_STACK_BYTES: usize = 256 << 20;

/// Definitions every script has unless it defines the name itself.
const PRELUDE: &str = "\
RUN(A) = [] x:A @ x -> RUN(A)
CHAOS(A) = STOP |~| ([] x:A @ x -> CHAOS(A))
";

type Env = Vec<(Name, Binding)>;
/// Sorted atom lists of the events of one channel.
type AtomTable = Arc<[Arc<[Value]>]>;
/// Clauses of a definition: parameter groups and body.
type Clauses<'a> = Vec<(Vec<Vec<Pattern>>, &'a Expr)>;
type EResult<T> = Result<T, CspError>;

/// The type of one field of a channel or constructor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldSet {
    /// A finite set of values.
    Finite(Arc<[Value]>),
    /// All integers.
    Ints,
    /// The values of a datatype (by index), which may be infinite.
    DataType(u32),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventStatus {
    Complete,
    Partial,
    Invalid,
}

/// All events of a script's channels, numbered.
#[derive(Debug)]
pub struct EventTable {
    /// The events, channel by channel in declaration order, each channel's in value order.
    pub events: Vec<Value>,
    /// Their printed names (`c.1.true`).
    pub names: Vec<String>,
    index: HashMap<Value, u32>,
}

impl EventTable {
    /// The number of an event.
    pub fn id(&self, event: &Value) -> Option<u32> {
        self.index.get(event).copied()
    }
}

/// What an assertion checks, with its processes evaluated.
#[derive(Clone, Debug)]
pub enum AssertionCheck {
    /// `spec [M= imp`
    Refinement {
        /// Specification.
        spec: Proc,
        /// Model.
        model: Model,
        /// Implementation.
        imp: Proc,
    },
    /// `P :[deadlock free [M]]`
    DeadlockFree {
        /// The process.
        process: Proc,
        /// Model (F or FD).
        model: Model,
    },
    /// `P :[divergence free]`
    DivergenceFree {
        /// The process.
        process: Proc,
    },
    /// `P :[deterministic [M]]`
    Deterministic {
        /// The process.
        process: Proc,
        /// Model (F or FD).
        model: Model,
    },
    /// `P :[has trace [M]]: <e1, e2>`
    HasTrace {
        /// The process.
        process: Proc,
        /// Model.
        model: Model,
        /// The trace's events.
        trace: Vec<Value>,
    },
}

impl AssertionCheck {
    /// The processes the assertion is about (specification first for refinements).
    pub fn processes(&self) -> Vec<&Proc> {
        match self {
            AssertionCheck::Refinement { spec, imp, .. } => vec![spec, imp],
            AssertionCheck::DeadlockFree { process, .. }
            | AssertionCheck::DivergenceFree { process }
            | AssertionCheck::Deterministic { process, .. }
            | AssertionCheck::HasTrace { process, .. } => vec![process],
        }
    }
}

/// An assertion of the script.
#[derive(Clone, Debug)]
pub struct Assertion {
    /// `assert not ...`
    pub negated: bool,
    /// What to check, or why it cannot be checked (an error in a definition it uses, or in
    /// the assertion itself), positioned.
    pub check: Result<AssertionCheck, CspError>,
    /// Where the `assert` is (its line is `location.line`).
    pub location: Location,
    /// The assertion as written (white space collapsed), without the keyword `assert`.
    pub text: String,
}

/// A message for the user that is not an error.
#[derive(Clone, Debug)]
pub struct Note {
    /// Where it applies.
    pub location: Location,
    /// What it says.
    pub message: String,
}

/// A loaded CSPm script.
pub struct Script {
    sources: SourceMap,
    prog: Program,
    def_values: Vec<OnceLock<EResult<Value>>>,
    bind_values: Vec<OnceLock<EResult<Value>>>,
    chan_fields: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    ctor_fields: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    datatype_values: Vec<OnceLock<EResult<Value>>>,
    nametype_fields: Vec<OnceLock<EResult<Arc<[FieldSet]>>>>,
    chan_events: Vec<OnceLock<EResult<AtomTable>>>,
    events: OnceLock<EResult<EventTable>>,
    unfolds: DashMap<Call, Proc>,
    let_values: DashMap<(Arc<LetRef>, u32), Value>,
    assertions: Vec<Assertion>,
    notes: Vec<Note>,
    user_defs: usize,
    /// Names whose definition has an error, with it: every use reports it.
    broken: HashMap<Name, CspError>,
    /// Channels whose type has an error (their events are left out of `Events`).
    broken_chans: Vec<bool>,
    /// Why `Events` cannot be used (a channel's type has an error).
    events_error: Option<CspError>,
    /// Errors of definitions that no assertion reports.
    errors: Vec<CspError>,
    /// Calls whose value is the call itself (`P = P`), with where they were used.
    endless: DashMap<Call, Span>,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Script")
            .field("channels", &self.prog.channels.len())
            .field("definitions", &self.prog.top.defs.len())
            .field("assertions", &self.assertions.len())
            .finish()
    }
}

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static STACK_BASE: Cell<usize> = const { Cell::new(0) };
    static STACK_BUDGET: Cell<usize> = const { Cell::new(DEFAULT_STACK_BUDGET) };
    static IN_PROGRESS: RefCell<Vec<(u8, u32)>> = const { RefCell::new(Vec::new()) };
    /// The constant definitions and calls being evaluated, innermost last, each with whether
    /// it was named inside its own body (see `Script::self_reference`).
    static EVALUATING: RefCell<Vec<(Frame, bool)>> = const { RefCell::new(Vec::new()) };
}

/// Sets how many bytes of stack evaluation may use on the calling thread (deep recursion in
/// a script then fails with a positioned error instead of overflowing the stack). Set it a
/// few MiB below the thread's stack size. Unoptimised builds use about 40 KiB of stack per
/// level of CSPm function recursion, optimised builds about 4 KiB.
pub fn set_thread_stack_budget(bytes: usize) {
    STACK_BUDGET.with(|b| b.set(bytes));
}

fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Marks the outermost evaluation on this thread: stack use is measured from here.
struct StackGuard(bool);

impl StackGuard {
    fn enter() -> StackGuard {
        STACK_BASE.with(|b| {
            if b.get() == 0 {
                b.set(stack_address());
                StackGuard(true)
            } else {
                StackGuard(false)
            }
        })
    }
}

impl Drop for StackGuard {
    fn drop(&mut self) {
        if self.0 {
            STACK_BASE.with(|b| b.set(0));
        }
    }
}

fn stack_exhausted() -> bool {
    let base = STACK_BASE.with(Cell::get);
    base != 0 && base.saturating_sub(stack_address()) > STACK_BUDGET.with(Cell::get)
}

struct DepthGuard;

impl DepthGuard {
    fn enter() -> Option<DepthGuard> {
        DEPTH.with(|d| {
            if d.get() >= MAX_EVAL_DEPTH {
                None
            } else {
                d.set(d.get() + 1);
                Some(DepthGuard)
            }
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

struct ProgressGuard((u8, u32));

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        IN_PROGRESS.with(|p| {
            let mut p = p.borrow_mut();
            if let Some(i) = p.iter().rposition(|k| *k == self.0) {
                p.remove(i);
            }
        });
    }
}

/// Loads the script at `path`: parses it (with its includes), checks it and evaluates its
/// channel types, datatypes and assertions.
///
/// An error in one definition does not fail the load: the assertions whose evaluation reaches
/// it get it as their [`Assertion::check`], and [`Script::errors`] lists those no assertion
/// reports. Loading fails only when the files cannot be read, when the parser cannot read the
/// script, and on internal errors.
pub fn load_script(path: &Path) -> Result<Script, CspError> {
    let path = path.to_path_buf();
    run_on_big_stack(move || {
        let mut ctx = parser::ParseContext::new();
        let decls = parser::parse_file_in_context(&mut ctx, &path)?;
        finish_load(ctx, decls)
    })
}

/// Loads a script from text (`name` appears in messages; includes resolve relative to
/// `base_dir`).
pub fn load_str(name: &str, text: &str, base_dir: &Path) -> Result<Script, CspError> {
    let (name, text, base_dir) = (name.to_string(), text.to_string(), base_dir.to_path_buf());
    run_on_big_stack(move || {
        let mut ctx = parser::ParseContext::new();
        let decls = parser::parse_text_in_context(&mut ctx, &base_dir.join(&name), name, text)?;
        finish_load(ctx, decls)
    })
}

fn run_on_big_stack<F>(f: F) -> Result<Script, CspError>
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

fn finish_load(mut ctx: parser::ParseContext, decls: Vec<Decl>) -> Result<Script, CspError> {
    let prelude = parser::parse_text_in_context(
        &mut ctx,
        Path::new("<prelude>"),
        "<prelude>".into(),
        PRELUDE.into(),
    )?;
    let sources = ctx.sources;
    let prog = resolve::check(&decls, &prelude).map_err(|e| e.resolve(&sources))?;
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
    let mut script = Script {
        def_values: cells(prog.top.defs.len()),
        bind_values: cells(prog.top.binds.len()),
        chan_fields: cells(prog.channels.len()),
        ctor_fields: cells(prog.ctors.len()),
        datatype_values: cells(prog.datatypes.len()),
        nametype_fields: cells(prog.nametypes.len()),
        chan_events: cells(prog.channels.len()),
        events: OnceLock::new(),
        unfolds: DashMap::new(),
        let_values: DashMap::new(),
        assertions: Vec::new(),
        notes,
        user_defs,
        broken,
        broken_chans: vec![false; prog.channels.len()],
        events_error: None,
        errors: Vec::new(),
        endless: DashMap::new(),
        sources,
        prog,
    };
    set_thread_stack_budget(LOAD_STACK_BYTES - (16 << 20));
    let _g = StackGuard::enter();
    script.force_all();
    Ok(script)
}

fn cells<T>(n: usize) -> Vec<OnceLock<T>> {
    (0..n).map(|_| OnceLock::new()).collect()
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Script {
    // ------------------------------------------------------------------ public API

    /// The source files of the script.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

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
            .collect()
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
        let v = self.def_value(i, self.prog.top.defs[i as usize].span)?;
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
        if let Some(p) = self.unfolds.get(call) {
            return Ok(p.clone());
        }
        let groups = self.regroup(&call.target, &call.args)?;
        let v = self.call_body(&call.target, &groups, Span::default())?;
        match v {
            Value::Proc(p) => match p.node() {
                ProcNode::Call(c) if c == call => self
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

    /// The initial events of a prefix and the process after each (inputs enumerated over
    /// the channel's type, outputs checked against it).
    pub fn prefix_transitions(
        &self,
        prefix: &PrefixClosure,
    ) -> Result<Vec<(Value, Proc)>, CspError> {
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
        self.prefix_fields(&pre, chan, 0, atoms, &mut env, &mut out)?;
        Ok(out)
    }

    /// All events of the script's channels (computed once; an error if a channel's type is
    /// infinite or the events are too many).
    pub fn events(&self) -> Result<&EventTable, CspError> {
        if self.events.get().is_none() {
            // Computed outside the cell: a channel type that needs `Events` re-enters here,
            // which `guarded` reports as a cycle (a re-entered `OnceLock` would hang).
            let table = self.guarded((8, 0), "Events", Span::default(), || {
                let _g = StackGuard::enter();
                self.build_event_table()
            });
            let _ = self.events.set(table);
        }
        match self.events.get() {
            Some(r) => r.as_ref().map_err(Clone::clone),
            None => Err(self.internal("the event table is missing")),
        }
    }

    /// The printed form of a value (`c.1.true`, `{1, 2}`, `<a, b>`).
    pub fn show(&self, v: &Value) -> String {
        let mut s = String::new();
        self.write_value(&mut s, v);
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

    // ------------------------------------------------------------------ loading

    /// Evaluates the channel types, datatypes, name types, closed prefixes and assertions.
    /// An error breaks the definition it is in (every use of it then reports the error) and
    /// stops only the assertions that reach it.
    fn force_all(&mut self) {
        let mut load_errors: Vec<CspError> = Vec::new();
        for c in 0..self.prog.channels.len() {
            if let Err(e) = self.chan_fields(c as u32) {
                let name = self.prog.channels[c].name.clone();
                if self.events_error.is_none() {
                    let mut events_error = e.clone();
                    events_error.message = format!(
                        "`Events` includes the events of channel `{name}`, whose type has an \
                         error: {}",
                        e.message
                    );
                    self.events_error = Some(events_error);
                }
                self.broken_chans[c] = true;
                self.broken.entry(name).or_insert_with(|| e.clone());
                load_errors.push(e);
            }
        }
        if self.broken_chans.contains(&true) {
            // The event table may have been computed (and failed) inside a broken channel's
            // type: compute it again without the broken channels.
            self.events = OnceLock::new();
        }
        if let Some(e) = &self.events_error {
            self.broken.insert(Name::from("Events"), e.clone());
        }
        for k in 0..self.prog.ctors.len() {
            if let Err(e) = self.ctor_fields(k as u32) {
                let ctor = &self.prog.ctors[k];
                let dt = self.prog.datatypes[ctor.datatype as usize].name.clone();
                for n in [ctor.name.clone(), dt] {
                    self.broken.entry(n).or_insert_with(|| e.clone());
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
                        self.broken.entry(n).or_insert_with(|| e.clone());
                    }
                    load_errors.push(e);
                }
                Ok(_) => {}
            }
        }
        for t in 0..self.prog.nametypes.len() {
            if let Err(e) = self.nametype_fields(t as u32) {
                let name = self.prog.nametypes[t].name.clone();
                self.broken.entry(name).or_insert_with(|| e.clone());
                load_errors.push(e);
            }
        }
        let mut closed = self.prog.closed_prefixes.clone();
        closed.sort_unstable_by_key(|(id, _)| *id);
        for (id, owner) in closed {
            if let Err(e) = self.check_closed_prefix(id) {
                for n in owner.iter() {
                    self.broken.entry(n.clone()).or_insert_with(|| e.clone());
                }
                load_errors.push(e);
            }
        }
        // A definition that refers to a broken name is broken with the same error (even
        // where evaluation would not reach it, as FDR rejects such a script).
        loop {
            let mut changed = false;
            for (names, refs) in &self.prog.decl_refs {
                if names.iter().all(|n| self.broken.contains_key(n)) {
                    continue;
                }
                if let Some(e) = refs.iter().find_map(|r| self.broken.get(r)) {
                    let e = e.clone();
                    for n in names.iter() {
                        self.broken.entry(n.clone()).or_insert_with(|| e.clone());
                    }
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut assertions = Vec::new();
        for entry in &self.prog.assertions {
            let broken_ref = entry.refs.iter().find_map(|r| self.broken.get(r));
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
        self.errors = kept;
        self.assertions = assertions;
    }

    /// Evaluates the processes (and trace) of an assertion.
    fn assertion_check(&self, a: &AssertDecl) -> EResult<AssertionCheck> {
        let mut env = Env::new();
        let proc_of = |e: &Expr, env: &mut Env| self.eval_proc(e, env);
        Ok(match &a.kind {
            AssertionKind::Refinement { spec, model, imp } => AssertionCheck::Refinement {
                spec: proc_of(spec, &mut env)?,
                model: *model,
                imp: proc_of(imp, &mut env)?,
            },
            AssertionKind::Property { process, property } => {
                let process = proc_of(process, &mut env)?;
                match property {
                    Property::DeadlockFree(model) => AssertionCheck::DeadlockFree {
                        process,
                        model: *model,
                    },
                    Property::DivergenceFree => AssertionCheck::DivergenceFree { process },
                    Property::Deterministic(model) => AssertionCheck::Deterministic {
                        process,
                        model: *model,
                    },
                    Property::HasTrace(model, t) => {
                        let tv = self.eval(t, &mut env)?;
                        let Value::Seq(items) = &tv else {
                            return Err(self.err(
                                t.span,
                                ErrorKind::Type,
                                format!(
                                    "`:[has trace]` needs a sequence of events, found {}",
                                    self.show(&tv)
                                ),
                            ));
                        };
                        for ev in items.iter() {
                            if !self.validate_event(ev.atoms(), t.span)? {
                                return Err(self.err(
                                    t.span,
                                    ErrorKind::Type,
                                    format!("{} is not an event", self.show(ev)),
                                ));
                            }
                        }
                        AssertionCheck::HasTrace {
                            process,
                            model: *model,
                            trace: items.to_vec(),
                        }
                    }
                }
            }
        })
    }

    /// Evaluates every top-level constant and pattern binding of the script (loading
    /// evaluates them only when used, as FDR does); returns the first error.
    pub fn evaluate_all_definitions(&self) -> Result<(), CspError> {
        let _g = StackGuard::enter();
        for i in 0..self.prog.top.defs.len() {
            if !matches!(self.prog.top.defs[i].kind, DefKind::Function { .. }) {
                self.def_value(i as u32, self.prog.top.defs[i].span)?;
            }
        }
        Ok(())
    }

    /// Checks the event and leading outputs of a prefix with no free variables.
    fn check_closed_prefix(&self, id: u32) -> EResult<()> {
        let Some((pre, _, _)) = self.prog.prefixes.get(&id).cloned() else {
            return Ok(());
        };
        let mut env = Env::new();
        let ev = self.eval(&pre.event, &mut env)?;
        let Some(Value::Chan(c)) = ev.atoms().first().cloned() else {
            return Err(self.err(
                pre.event.span,
                ErrorKind::Type,
                format!("`->` needs an event, found {}", self.show(&ev)),
            ));
        };
        let mut atoms = ev.atoms().to_vec();
        let mut span = pre.event.span;
        self.check_partial_event(&atoms, span)?;
        for f in &pre.fields {
            match f {
                Field::Output(e) => {
                    let v = self.eval(e, &mut env)?;
                    atoms.extend_from_slice(v.atoms());
                    span = e.span;
                    self.check_partial_event(&atoms, span)?;
                }
                Field::Input(..) => return Ok(()),
            }
        }
        if !self.validate_event(&atoms, span)? {
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

    // ------------------------------------------------------------------ helpers

    fn err(&self, span: Span, kind: ErrorKind, msg: impl Into<String>) -> CspError {
        if span == Span::default() && self.sources.is_empty() {
            CspError::unpositioned(kind, msg)
        } else {
            CspError::at(&self.sources, span, kind, msg)
        }
    }

    /// `e`, placed at `span` if it has no position yet.
    fn at_if_unpositioned(&self, e: CspError, span: Span) -> CspError {
        if e.location.is_some() || span == Span::default() {
            e
        } else {
            self.err(span, e.kind, e.message)
        }
    }

    fn internal(&self, what: &str) -> CspError {
        CspError::unpositioned(ErrorKind::Eval, format!("internal error: {what}"))
    }

    fn depth(&self, span: Span) -> EResult<DepthGuard> {
        DepthGuard::enter().ok_or_else(|| {
            self.err(
                span,
                ErrorKind::Limit,
                format!(
                    "evaluation nested more than {MAX_EVAL_DEPTH} calls deep \
                     (unbounded recursion, or a process defined in terms of itself without a prefix?)"
                ),
            )
        })
    }

    /// Runs `f` unless the item `key` is already being computed on this thread (a cycle).
    fn guarded<T>(
        &self,
        key: (u8, u32),
        name: &str,
        span: Span,
        f: impl FnOnce() -> EResult<T>,
    ) -> EResult<T> {
        let cycle = IN_PROGRESS.with(|p| p.borrow().iter().position(|k| *k == key));
        if let Some(from) = cycle {
            return Err(if key.0 == 1 {
                let through = self.cycle_path(from);
                self.err(
                    span,
                    ErrorKind::Eval,
                    format!(
                        "the type of channel `{name}` refers to the events of `{name}`{through}"
                    ),
                )
            } else if key.0 == 8 {
                let through = self.cycle_path(from);
                self.err(
                    span,
                    ErrorKind::Eval,
                    format!("`Events` is needed to compute itself{through}"),
                )
            } else if matches!(key.0, 2 | 3) {
                self.err(
                    span,
                    ErrorKind::Unsupported,
                    format!("the recursive datatype `{name}` is outside weft's CSPm subset"),
                )
            } else {
                self.err(
                    span,
                    ErrorKind::Eval,
                    format!("the definition of `{name}` depends on itself (a process must pass a prefix before recursing)"),
                )
            });
        }
        IN_PROGRESS.with(|p| p.borrow_mut().push(key));
        let _g = ProgressGuard(key);
        let _d = self.depth(span)?;
        f()
    }

    /// The value of `call` evaluated by `evaluating`. A call named in its own body stands for
    /// itself (a recursive process); if its value is then the call itself, or is not a
    /// process, or the stand-in was used as a value (`f(x) = f(x) + 1`), the evaluation does
    /// not terminate: that is reported at the definition, with the use.
    fn self_call_result(
        &self,
        r: (EResult<Value>, bool),
        call: &Call,
        use_span: Span,
    ) -> EResult<Value> {
        let (v, named) = r;
        if !named {
            return v;
        }
        let shown = self.show_call(call);
        let endless = match &v {
            Ok(Value::Proc(p)) => {
                if matches!(p.node(), ProcNode::Call(c) if c == call) {
                    // `P = P` is a process (an error only if explored); used as a value,
                    // it does not terminate (see `endless_use`)
                    self.endless.insert(call.clone(), use_span);
                }
                false
            }
            Ok(_) => true,
            Err(e) => e.kind == ErrorKind::Type && e.message.contains(&shown),
        };
        if !endless {
            return v;
        }
        Err(self.not_terminating(call, use_span))
    }

    /// `e`, or the non-termination of a call defined as itself that `e` (a type error)
    /// shows used as a value (`f(x) = f(x)`, `N = f(0) + 1`).
    fn endless_use(&self, e: CspError) -> CspError {
        if e.kind != ErrorKind::Type || self.endless.is_empty() {
            return e;
        }
        let found = self.endless.iter().find_map(|entry| {
            let shown = self.show_call(entry.key());
            e.message
                .contains(&shown)
                .then(|| (entry.key().clone(), *entry.value()))
        });
        match found {
            Some((call, use_span)) => self.not_terminating(&call, use_span),
            None => e,
        }
    }

    fn not_terminating(&self, call: &Call, use_span: Span) -> CspError {
        let shown = self.show_call(call);
        let name = self.target_name(&call.target);
        let why = if call.args.is_empty() {
            format!("`{name}` is defined in terms of itself")
        } else {
            format!("`{name}` calls itself with the same arguments")
        };
        let at = self.target_span(&call.target).unwrap_or(use_span);
        let used = if use_span == Span::default() || use_span == at {
            String::new()
        } else {
            format!(" (used at {})", self.sources.location(use_span))
        };
        self.err(
            at,
            ErrorKind::Eval,
            format!("the evaluation of `{shown}` does not terminate: {why}{used}"),
        )
    }

    /// `f(1, 2)`, or `N` for a constant.
    fn show_call(&self, call: &Call) -> String {
        let mut s = self.target_name(&call.target);
        if !call.args.is_empty() {
            let args: Vec<String> = call.args.iter().map(|a| self.show(a)).collect();
            s.push_str(&format!("({})", args.join(", ")));
        }
        s
    }

    /// Where a named definition is.
    fn target_span(&self, t: &Target) -> Option<Span> {
        match t {
            Target::Global(i) => Some(self.prog.top.defs[*i as usize].span),
            Target::Let(r, i) => self
                .prog
                .lets
                .get(&r.group)
                .map(|l| l.group.defs[*i as usize].span),
            _ => None,
        }
    }

    /// ` (through `P`, `Events`)`: the named items being computed on this thread from the
    /// entry `from` of the in-progress stack on (empty if none).
    fn cycle_path(&self, from: usize) -> String {
        let names: Vec<String> = IN_PROGRESS.with(|p| {
            let mut names: Vec<String> = Vec::new();
            for &(kind, i) in &p.borrow()[from + 1..] {
                let name = match kind {
                    1 => self.prog.channels[i as usize].name.to_string(),
                    3 => self.prog.datatypes[i as usize].name.to_string(),
                    4 => self.prog.nametypes[i as usize].name.to_string(),
                    5 => self.prog.top.defs[i as usize].name.to_string(),
                    8 => "Events".to_string(),
                    _ => continue,
                };
                let name = format!("`{name}`");
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            names
        });
        if names.is_empty() {
            String::new()
        } else {
            format!(" (through {})", names.join(", "))
        }
    }

    fn target_name(&self, t: &Target) -> String {
        match t {
            Target::Global(i) => self.prog.top.defs[*i as usize].name.to_string(),
            Target::Let(r, i) => self
                .prog
                .lets
                .get(&r.group)
                .map(|l| l.group.defs[*i as usize].name.to_string())
                .unwrap_or_else(|| "?".into()),
            Target::Lambda(..) => "\\ @".into(),
            Target::Builtin(b) => b.name().into(),
            Target::Compression(c) => (*c).into(),
        }
    }

    // ------------------------------------------------------------------ types

    fn chan_fields(&self, c: u32) -> EResult<Arc<[FieldSet]>> {
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

    fn ctor_fields(&self, k: u32) -> EResult<Arc<[FieldSet]>> {
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

    fn datatype_value(&self, d: u32) -> EResult<Value> {
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

    fn nametype_fields(&self, t: u32) -> EResult<Arc<[FieldSet]>> {
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
    fn type_fields(&self, e: &Expr) -> EResult<Vec<FieldSet>> {
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

    fn type_component(&self, e: &Expr) -> EResult<FieldSet> {
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
    fn product(
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
    fn chan_events(&self, c: u32, span: Span) -> EResult<AtomTable> {
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

    fn build_event_table(&self) -> EResult<EventTable> {
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

    /// Number of atoms of the grouped value starting at `atoms[i]` (a constructor takes its
    /// fields); stops at the end of `atoms`.
    fn value_len(&self, atoms: &[Value], i: usize) -> EResult<usize> {
        let mut need = 1usize;
        let mut j = i;
        while need > 0 && j < atoms.len() {
            need -= 1;
            if let Value::Ctor(k) = &atoms[j] {
                need += self.ctor_fields(*k)?.len();
            }
            j += 1;
        }
        Ok(j - i)
    }

    /// Number of atoms of the value of a field of type `f` starting at `atoms[pos]`: a
    /// constructor takes its fields; a type of dotted values (`{0.0, 0.1}`) takes the length
    /// of the member found there.
    fn field_len(&self, f: Option<&FieldSet>, atoms: &[Value], pos: usize) -> EResult<usize> {
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
    fn field_contains(&self, f: &FieldSet, v: &Value) -> EResult<bool> {
        Ok(match f {
            FieldSet::Finite(s) => s.binary_search(v).is_ok(),
            FieldSet::Ints => matches!(v, Value::Int(_)),
            FieldSet::DataType(d) => {
                let atoms = v.atoms();
                let Some(Value::Ctor(k)) = atoms.first() else {
                    return Ok(false);
                };
                if self.prog.ctors[*k as usize].datatype != *d {
                    return Ok(false);
                }
                let fields = self.ctor_fields(*k)?;
                let mut pos = 1;
                for fi in fields.iter() {
                    if pos >= atoms.len() {
                        return Ok(false);
                    }
                    let len = self.field_len(Some(fi), atoms, pos)?.max(1);
                    if pos + len > atoms.len()
                        || !self.field_contains(fi, &Value::from_atoms(&atoms[pos..pos + len]))?
                    {
                        return Ok(false);
                    }
                    pos += len;
                }
                pos == atoms.len()
            }
        })
    }

    /// Splits the atoms after channel `c` into field values (with whether each is complete),
    /// guided by the channel's field types.
    fn typed_groups(&self, c: u32, rest: &[Value]) -> EResult<Vec<(Value, bool)>> {
        let fields = self.chan_fields(c)?;
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
    fn event_status(&self, atoms: &[Value], span: Span) -> EResult<EventStatus> {
        let Some(Value::Chan(c)) = atoms.first() else {
            return Ok(EventStatus::Invalid);
        };
        match self.chan_events(*c, span) {
            Ok(evs) => {
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
            Err(e) if matches!(e.kind, ErrorKind::Unsupported | ErrorKind::Limit) => {
                let fields = self.chan_fields(*c)?;
                let groups = self.typed_groups(*c, &atoms[1..])?;
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
            Err(e) => Err(e),
        }
    }

    /// Why `atoms` (headed by channel `c`) is not an event or a prefix of one.
    fn explain_invalid(&self, c: u32, atoms: &[Value], span: Span) -> CspError {
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
    fn validate_event(&self, atoms: &[Value], span: Span) -> EResult<bool> {
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
    fn check_partial_event(&self, atoms: &[Value], span: Span) -> EResult<()> {
        self.validate_event(atoms, span).map(|_| ())
    }

    fn complete_value(&self, v: &Value) -> EResult<bool> {
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
                    need += self.ctor_fields(*k)?.len();
                }
            }
            return Ok(need == 0);
        }
        Ok(true)
    }

    /// Checks the fields given so far of a dotted value headed by a channel or constructor
    /// (as libcspm does when it builds the value).
    fn check_dotted(&self, v: &Value, span: Span) -> EResult<()> {
        let atoms = v.atoms();
        match atoms.first() {
            Some(Value::Chan(_)) => self.check_partial_event(atoms, span),
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
    fn kind_of(&self, v: &Value) -> (u8, u32) {
        match v {
            Value::Int(_) => (0, 0),
            Value::Bool(_) => (1, 0),
            Value::Tuple(t) => (2, t.len() as u32),
            Value::Set(_) | Value::IntSet => (3, 0),
            Value::Seq(_) => (4, 0),
            Value::Chan(_) => (5, 0),
            Value::Ctor(k) => (6, self.prog.ctors[*k as usize].datatype),
            Value::Dot(a) => match a.first() {
                Some(Value::Chan(_)) => (5, 0),
                Some(Value::Ctor(k)) => (6, self.prog.ctors[*k as usize].datatype),
                _ => (7, 0),
            },
            Value::Func(_) => (8, 0),
            Value::Proc(_) => (9, 0),
        }
    }

    /// Errors unless `v` is complete when it is a datatype value (a constructor with all its
    /// fields).
    fn require_complete(&self, v: &Value, span: Span) -> EResult<()> {
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

    fn too_many_fields(&self, c: u32, atoms: &[Value], span: Span) -> CspError {
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

    fn outside_type(&self, c: u32, i: usize, v: &Value, span: Span) -> CspError {
        let ty = match self.chan_fields(c) {
            Ok(f) => match &f[i] {
                FieldSet::Finite(s) => self.show(&Value::Set(s.clone())),
                FieldSet::Ints => "Int".into(),
                FieldSet::DataType(d) => self.prog.datatypes[*d as usize].name.to_string(),
            },
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

    // ------------------------------------------------------------------ names

    fn lookup(&self, name: &Name, env: &Env, span: Span) -> EResult<Value> {
        if let Some((_, b)) = env.iter().rev().find(|(n, _)| n == name) {
            return match b {
                Binding::Value(v) => Ok(v.clone()),
                Binding::Let(r) => self.let_value(r, name, span),
            };
        }
        self.check_broken(name)?;
        let Some(g) = self.prog.globals.get(name).copied() else {
            return Err(self.err(
                span,
                ErrorKind::UnknownName,
                format!("unknown name `{name}`"),
            ));
        };
        Ok(match g {
            GlobalKind::Chan(c) => Value::Chan(c),
            GlobalKind::Ctor(k) => Value::Ctor(k),
            GlobalKind::DataType(d) => self.datatype_value(d)?,
            GlobalKind::NameType(t) => {
                let fields = self.nametype_fields(t)?;
                self.fields_value(&fields, span)?
            }
            GlobalKind::Def(i) => self.def_value(i, span)?,
            GlobalKind::Builtin(b) => func(Target::Builtin(b)),
            GlobalKind::Stop => Value::Proc(Proc::new(ProcNode::Stop)),
            GlobalKind::Skip => Value::Proc(Proc::new(ProcNode::Skip)),
            GlobalKind::Int => Value::IntSet,
            GlobalKind::Bool => Value::Set(Arc::from(vec![Value::Bool(false), Value::Bool(true)])),
            GlobalKind::Events => {
                if let Some(e) = &self.events_error {
                    return Err(e.clone());
                }
                let t = self.events()?;
                Value::set_from(t.events.clone())
            }
            GlobalKind::True => Value::Bool(true),
            GlobalKind::False => Value::Bool(false),
            GlobalKind::Compression(c) => func(Target::Compression(c)),
        })
    }

    /// The error of `name`'s definition, if it has one.
    #[inline]
    fn check_broken(&self, name: &Name) -> EResult<()> {
        if self.broken.is_empty() {
            return Ok(());
        }
        match self.broken.get(name) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The set of values of a (product) type.
    fn fields_value(&self, fields: &[FieldSet], span: Span) -> EResult<Value> {
        if fields.len() == 1 {
            return match &fields[0] {
                FieldSet::Finite(s) => Ok(Value::Set(s.clone())),
                FieldSet::Ints => Ok(Value::IntSet),
                FieldSet::DataType(d) => self.datatype_value(*d),
            };
        }
        let mut all = Vec::new();
        self.product(&[], fields, span, &mut |a| all.push(Value::from_atoms(a)))?;
        Ok(Value::set_from(all))
    }

    fn def_value(&self, i: u32, span: Span) -> EResult<Value> {
        let def = &self.prog.top.defs[i as usize];
        self.check_broken(&def.name)?;
        if let DefKind::Function { .. } = def.kind {
            return Ok(func(Target::Global(i)));
        }
        if let Some(r) = self.def_values[i as usize].get() {
            return r.clone();
        }
        if matches!(def.kind, DefKind::Constant { .. }) {
            let call = Call {
                target: Target::Global(i),
                args: Arc::from([]),
            };
            if let Some(placeholder) = self_reference(Frame::Def(i), &call) {
                return Ok(placeholder);
            }
        }
        let r = self.guarded((5, i), &def.name, span, || match &def.kind {
            DefKind::Constant { expr } => {
                let call = Call {
                    target: Target::Global(i),
                    args: Arc::from([]),
                };
                let r = evaluating(Frame::Def(i), || self.eval(expr, &mut Env::new()));
                let v = self
                    .self_call_result(r, &call, span)
                    .map_err(|e| self.at_if_unpositioned(self.endless_use(e), def.span))?;
                Ok(self.name_process(Target::Global(i), Vec::new(), v))
            }
            DefKind::Part { bind } => {
                let whole = self.bind_value(*bind)?;
                let b = &self.prog.top.binds[*bind as usize];
                self.extract(&b.pat, &whole, &def.name, b.expr.span)
            }
            DefKind::Function { .. } => Ok(func(Target::Global(i))),
        });
        self.def_values[i as usize].get_or_init(|| r).clone()
    }

    fn bind_value(&self, b: u32) -> EResult<Value> {
        if let Some(r) = self.bind_values[b as usize].get() {
            return r.clone();
        }
        let bind = &self.prog.top.binds[b as usize];
        let r = self.guarded((6, b), "pattern binding", bind.expr.span, || {
            self.eval(&bind.expr, &mut Env::new())
        });
        self.bind_values[b as usize].get_or_init(|| r).clone()
    }

    /// Matches `pat` against `whole` and returns the value bound to `name`.
    fn extract(&self, pat: &Pattern, whole: &Value, name: &Name, span: Span) -> EResult<Value> {
        let mut env = Env::new();
        if !self.match_pattern(pat, whole, &mut env)? {
            return Err(self.err(
                span,
                ErrorKind::Eval,
                format!("the value {} does not match the pattern", self.show(whole)),
            ));
        }
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, b)| match b {
                Binding::Value(v) => Some(v.clone()),
                Binding::Let(_) => None,
            })
            .ok_or_else(|| self.internal("pattern binding lost a name"))
    }

    fn let_env(&self, r: &Arc<LetRef>) -> EResult<(Env, &DefGroup)> {
        let info = self
            .prog
            .lets
            .get(&r.group)
            .ok_or_else(|| self.internal("unknown let group"))?;
        let mut env: Env = info
            .free
            .iter()
            .cloned()
            .zip(r.captured.iter().cloned())
            .collect();
        for d in &info.group.defs {
            env.push((d.name.clone(), Binding::Let(r.clone())));
        }
        Ok((env, &info.group))
    }

    fn let_value(&self, r: &Arc<LetRef>, name: &Name, span: Span) -> EResult<Value> {
        let (mut env, group) = self.let_env(r)?;
        let idx = *group
            .index
            .get(name)
            .ok_or_else(|| self.internal("name missing from its let group"))?;
        let def = &group.defs[idx as usize];
        if let DefKind::Function { .. } = def.kind {
            return Ok(func(Target::Let(r.clone(), idx)));
        }
        let key = (r.clone(), idx);
        if let Some(v) = self.let_values.get(&key) {
            return Ok(v.clone());
        }
        let _d = self.depth(span)?;
        let v = match &def.kind {
            DefKind::Constant { expr } => {
                let v = self.eval(expr, &mut env)?;
                self.name_process(Target::Let(r.clone(), idx), Vec::new(), v)
            }
            DefKind::Part { bind } => {
                let b = &group.binds[*bind as usize];
                let whole = self.eval(&b.expr, &mut env)?;
                self.extract(&b.pat, &whole, name, b.expr.span)?
            }
            DefKind::Function { .. } => func(Target::Let(r.clone(), idx)),
        };
        self.let_values.insert(key, v.clone());
        Ok(v)
    }

    /// A process result of a named definition becomes a call (remembering its body).
    fn name_process(&self, target: Target, args: Vec<Value>, v: Value) -> Value {
        match v {
            Value::Proc(body) => {
                let call = Call {
                    target,
                    args: args.into(),
                };
                self.unfolds.entry(call.clone()).or_insert(body);
                Value::Proc(Proc::new(ProcNode::Call(call)))
            }
            other => other,
        }
    }

    // ------------------------------------------------------------------ application

    fn groups_of(&self, target: &Target) -> EResult<Vec<usize>> {
        Ok(match target {
            Target::Global(i) => match &self.prog.top.defs[*i as usize].kind {
                DefKind::Function { groups, .. } => groups.clone(),
                _ => Vec::new(),
            },
            Target::Let(r, i) => {
                let info = self
                    .prog
                    .lets
                    .get(&r.group)
                    .ok_or_else(|| self.internal("unknown let group"))?;
                match &info.group.defs[*i as usize].kind {
                    DefKind::Function { groups, .. } => groups.clone(),
                    _ => Vec::new(),
                }
            }
            Target::Lambda(id, _) => vec![self
                .prog
                .lambdas
                .get(id)
                .map(|l| l.0.params.len())
                .unwrap_or(0)],
            Target::Builtin(b) => vec![b.arity()],
            Target::Compression(_) => vec![1],
        })
    }

    /// Splits a call's flat argument list back into groups.
    fn regroup(&self, target: &Target, args: &[Value]) -> EResult<Vec<Arc<[Value]>>> {
        let sizes = self.groups_of(target)?;
        let mut out = Vec::new();
        let mut i = 0;
        for s in sizes {
            if i + s > args.len() {
                return Err(self.internal("call with too few arguments"));
            }
            out.push(Arc::from(&args[i..i + s]));
            i += s;
        }
        Ok(out)
    }

    fn apply(&self, f: &Value, args: Vec<Value>, span: Span) -> EResult<Value> {
        let Value::Func(fv) = f else {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!("{} is not a function", self.show(f)),
            ));
        };
        match &fv.target {
            Target::Builtin(b) => return self.builtin(*b, &args, span),
            Target::Compression(c) => {
                return match args.as_slice() {
                    [Value::Proc(p)] => Ok(Value::Proc(p.clone())),
                    _ => Err(self.err(span, ErrorKind::Type, format!("`{c}` takes one process"))),
                }
            }
            _ => {}
        }
        let groups = self.groups_of(&fv.target)?;
        let k = fv.applied.len();
        if k >= groups.len() || groups[k] != args.len() {
            let expected = groups.get(k).copied().unwrap_or(0);
            return Err(self.err(
                span,
                ErrorKind::Arity,
                format!(
                    "`{}` takes {expected} argument{} but is given {}",
                    self.target_name(&fv.target),
                    if expected == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut applied = fv.applied.clone();
        applied.push(args.into());
        if applied.len() < groups.len() {
            return Ok(Value::Func(Arc::new(Func {
                target: fv.target.clone(),
                applied,
            })));
        }
        let flat: Vec<Value> = applied.iter().flat_map(|g| g.iter().cloned()).collect();
        let call = Call {
            target: fv.target.clone(),
            args: flat.clone().into(),
        };
        if self.unfolds.contains_key(&call) {
            return Ok(Value::Proc(Proc::new(ProcNode::Call(call))));
        }
        let frame = Frame::Call(call.clone());
        if let Some(placeholder) = self_reference(frame.clone(), &call) {
            return Ok(placeholder);
        }
        let r = evaluating(frame, || self.call_body(&fv.target, &applied, span));
        let v = self
            .self_call_result(r, &call, span)
            .map_err(|e| self.at_if_unpositioned(e, span))?;
        Ok(self.name_process(fv.target.clone(), flat, v))
    }

    /// Evaluates the clause of `target` matching the argument groups.
    fn call_body(&self, target: &Target, groups: &[Arc<[Value]>], span: Span) -> EResult<Value> {
        let _d = self.depth(span)?;
        let (mut env, clauses): (Env, Clauses) = match target {
            Target::Global(i) => match &self.prog.top.defs[*i as usize].kind {
                DefKind::Function { clauses, .. } => (
                    Env::new(),
                    clauses
                        .iter()
                        .map(|c| (c.groups.clone(), &c.body))
                        .collect(),
                ),
                _ => return Err(self.internal("call of a constant")),
            },
            Target::Let(r, i) => {
                let (env, group) = self.let_env(r)?;
                match &group.defs[*i as usize].kind {
                    DefKind::Function { clauses, .. } => (
                        env,
                        clauses
                            .iter()
                            .map(|c| (c.groups.clone(), &c.body))
                            .collect(),
                    ),
                    _ => return Err(self.internal("call of a constant")),
                }
            }
            Target::Lambda(id, captured) => {
                let (l, free) = self
                    .prog
                    .lambdas
                    .get(id)
                    .ok_or_else(|| self.internal("unknown lambda"))?;
                let env: Env = free.iter().cloned().zip(captured.iter().cloned()).collect();
                (env, vec![(vec![l.params.clone()], &l.body)])
            }
            _ => return Err(self.internal("call of a builtin")),
        };
        for (pats, body) in clauses {
            let mark = env.len();
            let mut ok = true;
            'groups: for (g, args) in pats.iter().zip(groups) {
                for (p, a) in g.iter().zip(args.iter()) {
                    if !self.match_pattern(p, a, &mut env)? {
                        ok = false;
                        break 'groups;
                    }
                }
            }
            if ok {
                return self.eval(body, &mut env);
            }
            env.truncate(mark);
        }
        let shown: Vec<String> = groups
            .iter()
            .flat_map(|g| g.iter().map(|v| self.show(v)))
            .collect();
        Err(self.err(
            span,
            ErrorKind::Eval,
            format!(
                "no clause of `{}` matches the arguments ({})",
                self.target_name(target),
                shown.join(", ")
            ),
        ))
    }

    // ------------------------------------------------------------------ patterns

    fn match_pattern(&self, p: &Pattern, v: &Value, env: &mut Env) -> EResult<bool> {
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
                let Value::Seq(vs) = v else { return Ok(false) };
                let fixed = |q: &Pattern| match &q.kind {
                    PatKind::Seq(items) => Some(items.len()),
                    _ => None,
                };
                let split = match (fixed(a), fixed(b)) {
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
                self.match_pattern(a, &Value::Seq(vs[..split].into()), env)?
                    && self.match_pattern(b, &Value::Seq(vs[split..].into()), env)?
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

    // ------------------------------------------------------------------ expressions

    fn eval_proc(&self, e: &Expr, env: &mut Env) -> EResult<Proc> {
        match self.eval(e, env)? {
            Value::Proc(p) => Ok(p),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected a process, found {}", self.show(&other)),
            )),
        }
    }

    fn eval_bool(&self, e: &Expr, env: &mut Env) -> EResult<bool> {
        match self.eval(e, env)? {
            Value::Bool(b) => Ok(b),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected a boolean, found {}", self.show(&other)),
            )),
        }
    }

    fn eval_int(&self, e: &Expr, env: &mut Env) -> EResult<i64> {
        match self.eval(e, env)? {
            Value::Int(i) => Ok(i),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected an integer, found {}", self.show(&other)),
            )),
        }
    }

    fn capture(&self, names: &[Name], env: &Env) -> EResult<Arc<[Binding]>> {
        names
            .iter()
            .map(|n| {
                env.iter()
                    .rev()
                    .find(|(m, _)| m == n)
                    .map(|(_, b)| b.clone())
                    .ok_or_else(|| self.internal(&format!("free variable `{n}` not bound")))
            })
            .collect()
    }

    /// The elements a generator draws from.
    fn elements(&self, e: &Expr, env: &mut Env) -> EResult<Arc<[Value]>> {
        match self.eval(e, env)? {
            Value::Set(s) | Value::Seq(s) => Ok(s),
            Value::IntSet => Err(self.err(
                e.span,
                ErrorKind::Unsupported,
                "drawing from the infinite set Int is outside weft's CSPm subset",
            )),
            other => Err(self.err(
                e.span,
                ErrorKind::Type,
                format!(
                    "expected a set or sequence to draw from, found {}",
                    self.show(&other)
                ),
            )),
        }
    }

    /// Calls `body` once per binding of the statements (in order).
    fn for_each(
        &self,
        stmts: &[Stmt],
        env: &mut Env,
        body: &mut dyn FnMut(&Self, &mut Env) -> EResult<()>,
    ) -> EResult<()> {
        let Some((first, rest)) = stmts.split_first() else {
            return body(self, env);
        };
        match first {
            Stmt::Qualifier(q) => {
                if self.eval_bool(q, env)? {
                    self.for_each(rest, env, body)?;
                }
            }
            Stmt::Generator(p, src) => {
                let items = self.elements(src, env)?;
                for it in items.iter() {
                    let mark = env.len();
                    if self.match_pattern(p, it, env)? {
                        self.for_each(rest, env, body)?;
                    }
                    env.truncate(mark);
                }
            }
        }
        Ok(())
    }

    fn make_set(&self, items: Vec<Value>, span: Span) -> EResult<Value> {
        if let Some(bad) = items.iter().find(|v| matches!(v, Value::Func(_))) {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "{} cannot be put in a set (functions are not comparable)",
                    self.show(bad)
                ),
            ));
        }
        if items.len() > MAX_COLLECTION {
            return Err(self.err(
                span,
                ErrorKind::Limit,
                format!("set with more than {MAX_COLLECTION} elements"),
            ));
        }
        Ok(Value::set_from(items))
    }

    fn range(&self, lo: &Expr, hi: &Expr, env: &mut Env, span: Span) -> EResult<Vec<Value>> {
        let a = self.eval_int(lo, env)?;
        let b = self.eval_int(hi, env)?;
        if b >= a && (b - a) as u128 >= MAX_COLLECTION as u128 {
            return Err(self.err(
                span,
                ErrorKind::Limit,
                format!("range with more than {MAX_COLLECTION} elements"),
            ));
        }
        Ok((a..=b).map(Value::Int).collect())
    }

    /// Evaluates an expression in `env`.
    fn eval(&self, e: &Expr, env: &mut Env) -> EResult<Value> {
        use ExprKind as K;
        if stack_exhausted() {
            return Err(self.err(
                e.span,
                ErrorKind::Limit,
                "evaluation too deep for this thread's stack (unbounded recursion, or a process \
                 defined in terms of itself without a prefix?)",
            ));
        }
        Ok(match &e.kind {
            K::Int(i) => Value::Int(*i),
            K::Bool(b) => Value::Bool(*b),
            K::Var(n) => self.lookup(n, env, e.span)?,
            K::Wildcard => {
                return Err(self.err(
                    e.span,
                    ErrorKind::Syntax,
                    "`_` can only be used in a pattern",
                ))
            }
            K::Dot(a, b) => {
                let va = self.eval(a, env)?;
                let vb = self.eval(b, env)?;
                if matches!(va, Value::Proc(_) | Value::Func(_)) {
                    return Err(self.err(
                        e.span,
                        ErrorKind::Type,
                        format!("cannot apply `.` to {}", self.show(&va)),
                    ));
                }
                let v = Value::dot(&va, &vb);
                self.check_dotted(&v, e.span)?;
                v
            }
            K::App(f, args) => {
                let fv = self.eval(f, env)?;
                let avs = args
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                self.apply(&fv, avs, e.span)?
            }
            K::Binary(op, a, b) => self.binary(*op, a, b, env, e.span)?,
            K::Unary(op, a) => match op {
                UnOp::Neg => Value::Int(
                    self.eval_int(a, env)?
                        .checked_neg()
                        .ok_or_else(|| self.err(e.span, ErrorKind::Eval, "integer overflow"))?,
                ),
                UnOp::Not => Value::Bool(!self.eval_bool(a, env)?),
                UnOp::Len => match self.eval(a, env)? {
                    Value::Seq(s) => Value::Int(s.len() as i64),
                    other => {
                        return Err(self.err(
                            a.span,
                            ErrorKind::Type,
                            format!("`#` needs a sequence, found {}", self.show(&other)),
                        ))
                    }
                },
            },
            K::If(c, t, f) => {
                if self.eval_bool(c, env)? {
                    self.eval(t, env)?
                } else {
                    self.eval(f, env)?
                }
            }
            _ => self.eval_complex(e, env)?,
        })
    }

    /// The expression kinds with large evaluation frames (kept out of `eval` so that deep
    /// recursion through `eval` uses little stack).
    #[inline(never)]
    fn eval_complex(&self, e: &Expr, env: &mut Env) -> EResult<Value> {
        use ExprKind as K;
        Ok(match &e.kind {
            K::Tuple(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                Value::Tuple(vs.into())
            }
            K::Let(l) => {
                let info = self
                    .prog
                    .lets
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown let"))?;
                let r = Arc::new(LetRef {
                    group: e.id,
                    captured: self.capture(&info.free, env)?,
                });
                let mark = env.len();
                for d in &info.group.defs {
                    env.push((d.name.clone(), Binding::Let(r.clone())));
                }
                let v = self.eval(&l.body, env);
                env.truncate(mark);
                v?
            }
            K::Lambda(_) => {
                let (_, free) = self
                    .prog
                    .lambdas
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown lambda"))?;
                func(Target::Lambda(e.id, self.capture(free, env)?))
            }
            K::SeqLit(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                Value::Seq(vs.into())
            }
            K::SeqRange(a, b) => Value::Seq(self.range(a, b, env, e.span)?.into()),
            K::SeqComp(items, stmts) => {
                let mut out = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    for it in items {
                        out.push(s.eval(it, env)?);
                        if out.len() > MAX_COLLECTION {
                            return Err(s.err(e.span, ErrorKind::Limit, "sequence too long"));
                        }
                    }
                    Ok(())
                })?;
                Value::Seq(out.into())
            }
            K::SetLit(items) => {
                let vs = items
                    .iter()
                    .map(|x| self.eval(x, env))
                    .collect::<EResult<Vec<_>>>()?;
                self.make_set(vs, e.span)?
            }
            K::SetRange(a, b) => Value::Set(self.range(a, b, env, e.span)?.into()),
            K::SetComp(items, stmts) => {
                let mut out = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    for it in items {
                        out.push(s.eval(it, env)?);
                        if out.len() > MAX_COLLECTION {
                            return Err(s.err(e.span, ErrorKind::Limit, "set too large"));
                        }
                    }
                    Ok(())
                })?;
                self.make_set(out, e.span)?
            }
            K::Productions(items) => {
                let mut out = Vec::new();
                for it in items {
                    let v = self.eval(it, env)?;
                    self.productions(&v, it.span, &mut out)?;
                }
                self.make_set(out, e.span)?
            }
            K::ProductionsComp(items, stmts) => {
                let mut out = Vec::new();
                self.for_each(stmts, env, &mut |s, env| {
                    for it in items {
                        let v = s.eval(it, env)?;
                        s.productions(&v, it.span, &mut out)?;
                    }
                    Ok(())
                })?;
                self.make_set(out, e.span)?
            }
            K::Prefix(_) => {
                let (_, free, _) = self
                    .prog
                    .prefixes
                    .get(&e.id)
                    .ok_or_else(|| self.internal("unknown prefix"))?;
                Value::Proc(Proc::new(ProcNode::Prefix(PrefixClosure {
                    expr: e.id,
                    captured: self.capture(free, env)?,
                })))
            }
            K::Guard(b, p) => {
                if self.eval_bool(b, env)? {
                    Value::Proc(self.eval_proc(p, env)?)
                } else {
                    Value::Proc(Proc::new(ProcNode::Stop))
                }
            }
            K::Proc(op @ (ProcOp::ExtChoice | ProcOp::IntChoice | ProcOp::Interleave), _, _) => {
                // Associative: a chain `P1 [] P2 [] ...` is one n-ary node, its operands
                // collected without recursion (so thousands of branches are fine).
                let mut operands = Vec::new();
                let mut todo = vec![e];
                while let Some(x) = todo.pop() {
                    match &x.kind {
                        K::Proc(o, a, b) if o == op => {
                            todo.push(b);
                            todo.push(a);
                        }
                        _ => operands.push(self.eval_proc(x, env)?),
                    }
                }
                Value::Proc(Proc::new(match op {
                    ProcOp::ExtChoice => ProcNode::ExtChoice(operands),
                    ProcOp::IntChoice => ProcNode::IntChoice(operands),
                    _ => ProcNode::Interleave(operands),
                }))
            }
            K::Proc(ProcOp::Seq, _, _) => {
                // Associative: a chain `P1 ; P2 ; ...` (read left to right) becomes
                // `P1 ; (P2 ; (...))`, whose states keep the rest unevaluated (a constant-size
                // term per state instead of the whole left spine), built without recursion.
                let mut operands = Vec::new();
                let mut todo = vec![e];
                while let Some(x) = todo.pop() {
                    match &x.kind {
                        K::Proc(ProcOp::Seq, a, b) => {
                            todo.push(b);
                            todo.push(a);
                        }
                        _ => operands.push(self.eval_proc(x, env)?),
                    }
                }
                let mut rest = operands.pop().ok_or_else(|| self.internal("empty `;`"))?;
                while let Some(first) = operands.pop() {
                    rest = Proc::new(ProcNode::Seq(first, rest));
                }
                Value::Proc(rest)
            }
            K::Proc(op, a, b) => {
                let pa = self.eval_proc(a, env)?;
                let pb = self.eval_proc(b, env)?;
                Value::Proc(Proc::new(match op {
                    ProcOp::ExtChoice => ProcNode::ExtChoice(vec![pa, pb]),
                    ProcOp::IntChoice => ProcNode::IntChoice(vec![pa, pb]),
                    ProcOp::Interleave => ProcNode::Interleave(vec![pa, pb]),
                    ProcOp::Seq => ProcNode::Seq(pa, pb),
                    ProcOp::Interrupt => ProcNode::Interrupt(pa, pb),
                    ProcOp::Timeout => ProcNode::Timeout(pa, pb),
                }))
            }
            K::Hide(p, a) => {
                let pp = self.eval_proc(p, env)?;
                let set = self.event_set(a, env)?;
                Value::Proc(Proc::new(ProcNode::Hide(pp, set)))
            }
            K::Parallel(p, a, q) => {
                let pp = self.eval_proc(p, env)?;
                let set = self.event_set(a, env)?;
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::Parallel(set, vec![pp, pq])))
            }
            K::AlphaParallel(p, a, b, q) => {
                let pp = self.eval_proc(p, env)?;
                let sa = self.event_set(a, env)?;
                let sb = self.event_set(b, env)?;
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::AlphaParallel(vec![(sa, pp), (sb, pq)])))
            }
            K::Rename(p, pairs, stmts) => {
                let pp = self.eval_proc(p, env)?;
                let rel = self.relation(pairs, stmts, env, e.span)?;
                Value::Proc(Proc::new(ProcNode::Rename(pp, rel)))
            }
            K::Link(p, pairs, stmts, q) => {
                let pp = self.eval_proc(p, env)?;
                let rel = self.relation(pairs, stmts, env, e.span)?;
                for side in 0..2 {
                    let mut seen: Vec<&Value> = rel
                        .iter()
                        .map(|(x, y)| if side == 0 { x } else { y })
                        .collect();
                    seen.sort_unstable();
                    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                        return Err(self.err(
                            e.span,
                            ErrorKind::Eval,
                            format!(
                                "the link parallel links {} to more than one event",
                                self.show(w[0])
                            ),
                        ));
                    }
                }
                let pq = self.eval_proc(q, env)?;
                Value::Proc(Proc::new(ProcNode::Link(pp, rel, pq)))
            }
            K::Replicated(op, stmts, body) => self.replicated(op, stmts, body, env, e.span)?,
            _ => return Err(self.internal("eval_complex on a simple expression")),
        })
    }

    fn replicated(
        &self,
        op: &RepOp,
        stmts: &[Stmt],
        body: &Expr,
        env: &mut Env,
        span: Span,
    ) -> EResult<Value> {
        let shared = match op {
            RepOp::Parallel(a) => Some(self.event_set(a, env)?),
            _ => None,
        };
        let mut procs: Vec<Proc> = Vec::new();
        let mut alphas: Vec<(EventSet, Proc)> = Vec::new();
        self.for_each(stmts, env, &mut |s, env| {
            let p = s.eval_proc(body, env)?;
            if let RepOp::AlphaParallel(a) = op {
                alphas.push((s.event_set(a, env)?, p));
            } else {
                procs.push(p);
            }
            Ok(())
        })?;
        let node = match op {
            RepOp::ExtChoice if procs.is_empty() => ProcNode::Stop,
            RepOp::ExtChoice => ProcNode::ExtChoice(procs),
            RepOp::IntChoice if procs.is_empty() => {
                return Err(self.err(
                    span,
                    ErrorKind::Eval,
                    "replicated internal choice over an empty set",
                ))
            }
            RepOp::IntChoice => ProcNode::IntChoice(procs),
            RepOp::Interleave if procs.is_empty() => ProcNode::Skip,
            RepOp::Interleave => ProcNode::Interleave(procs),
            RepOp::Parallel(_) if procs.is_empty() => ProcNode::Skip,
            RepOp::Parallel(_) => {
                ProcNode::Parallel(shared.unwrap_or_else(|| Arc::from(Vec::new())), procs)
            }
            RepOp::AlphaParallel(_) if alphas.is_empty() => ProcNode::Skip,
            RepOp::AlphaParallel(_) => ProcNode::AlphaParallel(alphas),
            RepOp::Seq => {
                if let Some(Stmt::Generator(_, src)) = stmts.first() {
                    if let Value::Set(_) = self.eval(src, &mut env.clone())? {
                        return Err(self.err(
                            src.span,
                            ErrorKind::Type,
                            "replicated `;` draws from a sequence, not a set",
                        ));
                    }
                }
                let mut it = procs.into_iter().rev();
                match it.next() {
                    None => ProcNode::Skip,
                    Some(last) => {
                        let mut acc = last;
                        for p in it {
                            acc = Proc::new(ProcNode::Seq(p, acc));
                        }
                        return Ok(Value::Proc(acc));
                    }
                }
            }
        };
        Ok(Value::Proc(Proc::new(node)))
    }

    /// Evaluates a set of events (each element must be a complete event).
    fn event_set(&self, e: &Expr, env: &mut Env) -> EResult<EventSet> {
        let v = self.eval(e, env)?;
        let Value::Set(items) = &v else {
            return Err(self.err(
                e.span,
                ErrorKind::Type,
                format!("expected a set of events, found {}", self.show(&v)),
            ));
        };
        for it in items.iter() {
            if !self.validate_event(it.atoms(), e.span)? {
                let hint = match it.atoms().first() {
                    Some(Value::Chan(_)) => {
                        format!(" (use {{| {} |}} for all its events)", self.show(it))
                    }
                    _ => String::new(),
                };
                return Err(self.err(
                    e.span,
                    ErrorKind::Type,
                    format!("{} in this set is not an event{hint}", self.show(it)),
                ));
            }
        }
        Ok(items.clone())
    }

    /// Events of `v`'s channel (or values of its datatype) extending `v`.
    fn productions(&self, v: &Value, span: Span, out: &mut Vec<Value>) -> EResult<()> {
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
    fn extensions(&self, v: &Value, span: Span) -> EResult<Vec<Value>> {
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
    fn relation(
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

    fn prefix_fields(
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

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr, env: &mut Env, span: Span) -> EResult<Value> {
        match op {
            BinOp::And => {
                return Ok(Value::Bool(
                    self.eval_bool(a, env)? && self.eval_bool(b, env)?,
                ))
            }
            BinOp::Or => {
                return Ok(Value::Bool(
                    self.eval_bool(a, env)? || self.eval_bool(b, env)?,
                ))
            }
            _ => {}
        }
        let va = self.eval(a, env)?;
        let vb = self.eval(b, env)?;
        let overflow = || self.err(span, ErrorKind::Eval, "integer overflow");
        let ints = |x: &Value, y: &Value| -> EResult<(i64, i64)> {
            match (x, y) {
                (Value::Int(p), Value::Int(q)) => Ok((*p, *q)),
                _ => Err(self.err(
                    span,
                    ErrorKind::Type,
                    format!(
                        "`{}` needs integers, found {} and {}",
                        op.text(),
                        self.show(x),
                        self.show(y)
                    ),
                )),
            }
        };
        Ok(match op {
            BinOp::Add => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_add(y).ok_or_else(overflow)?)
            }
            BinOp::Sub => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_sub(y).ok_or_else(overflow)?)
            }
            BinOp::Mul => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_mul(y).ok_or_else(overflow)?)
            }
            BinOp::Div | BinOp::Mod => {
                let (x, y) = ints(&va, &vb)?;
                if y == 0 {
                    return Err(self.err(span, ErrorKind::Eval, "division by zero"));
                }
                // Haskell's `div` and `mod` (as libcspm): round towards negative infinity.
                let q = x.checked_div(y).ok_or_else(overflow)?;
                let r = x - q * y;
                let (q, r) = if r != 0 && ((r < 0) != (y < 0)) {
                    (q - 1, r + y)
                } else {
                    (q, r)
                };
                Value::Int(if op == BinOp::Div { q } else { r })
            }
            BinOp::Eq | BinOp::Ne => {
                self.require_complete(&va, a.span)?;
                self.require_complete(&vb, b.span)?;
                if self.kind_of(&va) != self.kind_of(&vb) {
                    return Err(self.err(
                        span,
                        ErrorKind::Type,
                        format!(
                            "cannot compare {} with {}: they have different types",
                            self.show(&va),
                            self.show(&vb)
                        ),
                    ));
                }
                for v in [&va, &vb] {
                    if !v.is_comparable() {
                        return Err(self.err(
                            span,
                            ErrorKind::Type,
                            format!(
                                "{} cannot be compared (processes and functions have no equality)",
                                self.show(v)
                            ),
                        ));
                    }
                }
                Value::Bool((va == vb) == (op == BinOp::Eq))
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                let (x, y) = if matches!(op, BinOp::Gt | BinOp::Ge) {
                    (&vb, &va)
                } else {
                    (&va, &vb)
                };
                let strict = matches!(op, BinOp::Lt | BinOp::Gt);
                Value::Bool(self.less(x, y, strict, span)?)
            }
            BinOp::Concat => match (&va, &vb) {
                (Value::Seq(x), Value::Seq(y)) => {
                    let mut v = x.to_vec();
                    v.extend_from_slice(y);
                    Value::Seq(v.into())
                }
                _ => {
                    return Err(self.err(
                        span,
                        ErrorKind::Type,
                        format!(
                            "`^` needs sequences, found {} and {}",
                            self.show(&va),
                            self.show(&vb)
                        ),
                    ))
                }
            },
            BinOp::And | BinOp::Or => return Err(self.internal("and/or evaluated twice")),
        })
    }

    /// CSPm's ordering: integers numerically, sets by inclusion, sequences by prefix.
    fn less(&self, x: &Value, y: &Value, strict: bool, span: Span) -> EResult<bool> {
        Ok(match (x, y) {
            (Value::Int(a), Value::Int(b)) => {
                if strict {
                    a < b
                } else {
                    a <= b
                }
            }
            (Value::Set(a), Value::Set(b)) => {
                let sub = a.iter().all(|v| b.binary_search(v).is_ok());
                sub && (!strict || a.len() < b.len())
            }
            (Value::Seq(a), Value::Seq(b)) => {
                let prefix = a.len() <= b.len() && a[..] == b[..a.len()];
                prefix && (!strict || a.len() < b.len())
            }
            (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
                for (p, q) in a.iter().zip(b.iter()) {
                    if p != q {
                        return self.less(p, q, true, span);
                    }
                }
                !strict
            }
            _ => {
                return Err(self.err(
                    span,
                    ErrorKind::Type,
                    format!("{} and {} cannot be ordered", self.show(x), self.show(y)),
                ))
            }
        })
    }

    fn builtin(&self, b: Builtin, args: &[Value], span: Span) -> EResult<Value> {
        if args.len() != b.arity() {
            return Err(self.err(
                span,
                ErrorKind::Arity,
                format!(
                    "`{}` takes {} argument(s) but is given {}",
                    b.name(),
                    b.arity(),
                    args.len()
                ),
            ));
        }
        let bad = |what: &str| {
            let shown: Vec<String> = args.iter().map(|a| self.show(a)).collect();
            Err(self.err(
                span,
                ErrorKind::Type,
                format!("`{}` needs {what}, given ({})", b.name(), shown.join(", ")),
            ))
        };
        let set = |v: &Value| -> Option<Arc<[Value]>> {
            match v {
                Value::Set(s) => Some(s.clone()),
                _ => None,
            }
        };
        if matches!(
            b,
            Builtin::Member
                | Builtin::Card
                | Builtin::Elem
                | Builtin::Union
                | Builtin::Inter
                | Builtin::Diff
                | Builtin::UnionAll
                | Builtin::InterAll
                | Builtin::SetOfSeq
                | Builtin::SeqOfSet
        ) && args.iter().any(|a| !a.is_comparable())
        {
            return Err(self.err(
                span,
                ErrorKind::Type,
                format!(
                    "`{}` needs comparable values: processes and functions have no equality",
                    b.name()
                ),
            ));
        }
        match b {
            Builtin::Union | Builtin::Inter | Builtin::Diff => {
                match (&args[0], &args[1], b) {
                    (Value::IntSet, Value::Set(s), Builtin::Inter)
                    | (Value::Set(s), Value::IntSet, Builtin::Inter) => {
                        return Ok(Value::Set(
                            s.iter()
                                .filter(|v| matches!(v, Value::Int(_)))
                                .cloned()
                                .collect(),
                        ))
                    }
                    (Value::Set(s), Value::IntSet, Builtin::Diff) => {
                        return Ok(Value::Set(
                            s.iter()
                                .filter(|v| !matches!(v, Value::Int(_)))
                                .cloned()
                                .collect(),
                        ))
                    }
                    (Value::IntSet, Value::IntSet, Builtin::Union | Builtin::Inter) => {
                        return Ok(Value::IntSet)
                    }
                    _ => {}
                }
                let (Some(x), Some(y)) = (set(&args[0]), set(&args[1])) else {
                    return bad("two finite sets");
                };
                let items: Vec<Value> = match b {
                    Builtin::Union => x.iter().chain(y.iter()).cloned().collect(),
                    Builtin::Inter => x
                        .iter()
                        .filter(|v| y.binary_search(v).is_ok())
                        .cloned()
                        .collect(),
                    _ => x
                        .iter()
                        .filter(|v| y.binary_search(v).is_err())
                        .cloned()
                        .collect(),
                };
                Ok(Value::set_from(items))
            }
            Builtin::UnionAll | Builtin::InterAll => {
                let Some(sets) = set(&args[0]) else {
                    return bad("a set of sets");
                };
                let mut parts = Vec::new();
                for s in sets.iter() {
                    match set(s) {
                        Some(p) => parts.push(p),
                        None => return bad("a set of sets"),
                    }
                }
                if b == Builtin::UnionAll {
                    Ok(Value::set_from(
                        parts.iter().flat_map(|p| p.iter().cloned()).collect(),
                    ))
                } else {
                    let Some((first, rest)) = parts.split_first() else {
                        return Err(self.err(
                            span,
                            ErrorKind::Eval,
                            "`Inter` of an empty set of sets",
                        ));
                    };
                    Ok(Value::Set(
                        first
                            .iter()
                            .filter(|v| rest.iter().all(|p| p.binary_search(v).is_ok()))
                            .cloned()
                            .collect(),
                    ))
                }
            }
            Builtin::Member => match &args[1] {
                Value::Set(s) => Ok(Value::Bool(s.binary_search(&args[0]).is_ok())),
                Value::IntSet => Ok(Value::Bool(matches!(args[0], Value::Int(_)))),
                _ => bad("a value and a set"),
            },
            Builtin::Card => match &args[0] {
                Value::Set(s) => Ok(Value::Int(s.len() as i64)),
                _ => bad("a finite set"),
            },
            Builtin::Empty => match &args[0] {
                Value::Set(s) => Ok(Value::Bool(s.is_empty())),
                Value::IntSet => Ok(Value::Bool(false)),
                _ => bad("a set"),
            },
            Builtin::SetOfSeq => match &args[0] {
                Value::Seq(s) => self.make_set(s.to_vec(), span),
                _ => bad("a sequence"),
            },
            Builtin::SeqOfSet => match &args[0] {
                Value::Set(s) => Ok(Value::Seq(s.clone())),
                _ => bad("a finite set"),
            },
            Builtin::Powerset => {
                let Some(s) = set(&args[0]) else {
                    return bad("a finite set");
                };
                if s.len() > 20 {
                    return Err(self.err(
                        span,
                        ErrorKind::Limit,
                        "`Set` of a set with more than 20 elements",
                    ));
                }
                let mut out = Vec::with_capacity(1 << s.len());
                for mask in 0u32..(1u32 << s.len()) {
                    let sub: Vec<Value> = (0..s.len())
                        .filter(|i| mask & (1 << i) != 0)
                        .map(|i| s[i].clone())
                        .collect();
                    out.push(Value::Set(sub.into()));
                }
                Ok(Value::set_from(out))
            }
            Builtin::Head | Builtin::Tail => match &args[0] {
                Value::Seq(s) if !s.is_empty() => Ok(if b == Builtin::Head {
                    s[0].clone()
                } else {
                    Value::Seq(s[1..].into())
                }),
                Value::Seq(_) => Err(self.err(
                    span,
                    ErrorKind::Eval,
                    format!("`{}` of the empty sequence", b.name()),
                )),
                _ => bad("a sequence"),
            },
            Builtin::Concat => {
                let Value::Seq(s) = &args[0] else {
                    return bad("a sequence of sequences");
                };
                let mut out = Vec::new();
                for x in s.iter() {
                    match x {
                        Value::Seq(t) => out.extend_from_slice(t),
                        _ => return bad("a sequence of sequences"),
                    }
                }
                Ok(Value::Seq(out.into()))
            }
            Builtin::Null => match &args[0] {
                Value::Seq(s) => Ok(Value::Bool(s.is_empty())),
                _ => bad("a sequence"),
            },
            Builtin::Elem => match &args[1] {
                Value::Seq(s) => Ok(Value::Bool(s.contains(&args[0]))),
                _ => bad("a value and a sequence"),
            },
            Builtin::Length => match &args[0] {
                Value::Seq(s) => Ok(Value::Int(s.len() as i64)),
                _ => bad("a sequence"),
            },
            Builtin::Productions => {
                let mut out = Vec::new();
                self.productions(&args[0], span, &mut out)?;
                self.make_set(out, span)
            }
            Builtin::Extensions => {
                let out = self.extensions(&args[0], span)?;
                self.make_set(out, span)
            }
        }
    }

    // ------------------------------------------------------------------ printing

    fn write_value(&self, s: &mut String, v: &Value) {
        use std::fmt::Write;
        match v {
            Value::Int(i) => {
                let _ = write!(s, "{i}");
            }
            Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            Value::Tuple(items) => {
                s.push('(');
                self.write_list(s, items);
                s.push(')');
            }
            Value::Set(items) => {
                s.push('{');
                self.write_list(s, items);
                s.push('}');
            }
            Value::Seq(items) => {
                s.push('<');
                self.write_list(s, items);
                s.push('>');
            }
            Value::Chan(c) => s.push_str(
                self.prog
                    .channels
                    .get(*c as usize)
                    .map_or("?", |d| &*d.name),
            ),
            Value::Ctor(k) => {
                s.push_str(self.prog.ctors.get(*k as usize).map_or("?", |d| &*d.name))
            }
            Value::Dot(atoms) => {
                for (i, a) in atoms.iter().enumerate() {
                    if i > 0 {
                        s.push('.');
                    }
                    let nested = matches!(a, Value::Dot(_));
                    if nested {
                        s.push('(');
                    }
                    self.write_value(s, a);
                    if nested {
                        s.push(')');
                    }
                }
            }
            Value::IntSet => s.push_str("Int"),
            Value::Func(f) => {
                s.push_str(&self.target_name(&f.target));
                for g in &f.applied {
                    s.push('(');
                    self.write_list(s, g);
                    s.push(')');
                }
            }
            Value::Proc(p) => self.write_proc(s, p, 0),
        }
    }

    fn write_list(&self, s: &mut String, items: &[Value]) {
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            self.write_value(s, v);
        }
    }

    fn write_set(&self, s: &mut String, set: &[Value]) {
        s.push('{');
        self.write_list(s, set);
        s.push('}');
    }

    fn write_proc(&self, s: &mut String, p: &Proc, depth: usize) {
        if depth > 50 {
            s.push('…');
            return;
        }
        let sub = |s: &mut String, q: &Proc| {
            let simple = matches!(
                q.node(),
                ProcNode::Stop | ProcNode::Skip | ProcNode::Call(_)
            );
            if !simple {
                s.push('(');
            }
            self.write_proc(s, q, depth + 1);
            if !simple {
                s.push(')');
            }
        };
        let join = |s: &mut String, ps: &[Proc], op: &str| {
            for (i, q) in ps.iter().enumerate() {
                if i > 0 {
                    s.push_str(op);
                }
                sub(s, q);
            }
        };
        match p.node() {
            ProcNode::Stop => s.push_str("STOP"),
            ProcNode::Skip => s.push_str("SKIP"),
            ProcNode::Call(c) => {
                s.push_str(&self.target_name(&c.target));
                if !c.args.is_empty() {
                    s.push('(');
                    self.write_list(s, &c.args);
                    s.push(')');
                }
            }
            ProcNode::Prefix(pc) => {
                let text = self
                    .prog
                    .prefixes
                    .get(&pc.expr)
                    .map(|(_, _, span)| collapse_ws(self.sources.text(*span)))
                    .unwrap_or_default();
                s.push_str(&text);
                let free = self.prog.prefixes.get(&pc.expr).map(|p| p.1.clone());
                if let Some(free) = free {
                    let vals: Vec<String> = free
                        .iter()
                        .zip(pc.captured.iter())
                        .filter_map(|(n, b)| match b {
                            Binding::Value(v) => Some(format!("{n}={}", self.show(v))),
                            Binding::Let(_) => None,
                        })
                        .collect();
                    if !vals.is_empty() {
                        s.push_str(" with ");
                        s.push_str(&vals.join(", "));
                    }
                }
            }
            ProcNode::ExtChoice(ps) => join(s, ps, " [] "),
            ProcNode::IntChoice(ps) => join(s, ps, " |~| "),
            ProcNode::Interleave(ps) => join(s, ps, " ||| "),
            ProcNode::Parallel(a, ps) => {
                let mut op = String::from(" [| ");
                self.write_set(&mut op, a);
                op.push_str(" |] ");
                join(s, ps, &op);
            }
            ProcNode::AlphaParallel(parts) => {
                s.push_str("|| ");
                for (i, (a, q)) in parts.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push('[');
                    self.write_set(s, a);
                    s.push_str("] ");
                    sub(s, q);
                }
            }
            ProcNode::Seq(a, b) => {
                sub(s, a);
                s.push_str(" ; ");
                sub(s, b);
            }
            ProcNode::Hide(a, set) => {
                sub(s, a);
                s.push_str(" \\ ");
                self.write_set(s, set);
            }
            ProcNode::Rename(a, rel) | ProcNode::Link(a, rel, _) => {
                let link = matches!(p.node(), ProcNode::Link(..));
                sub(s, a);
                s.push_str(if link { " [" } else { " [[" });
                for (i, (x, y)) in rel.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.write_value(s, x);
                    s.push_str(if link { " <-> " } else { " <- " });
                    self.write_value(s, y);
                }
                s.push_str(if link { "] " } else { "]]" });
                if let ProcNode::Link(_, _, b) = p.node() {
                    sub(s, b);
                }
            }
            ProcNode::Interrupt(a, b) => {
                sub(s, a);
                s.push_str(" /\\ ");
                sub(s, b);
            }
            ProcNode::Timeout(a, b) => {
                sub(s, a);
                s.push_str(" [> ");
                sub(s, b);
            }
        }
    }

    /// Evaluates the top-level constant `name` (for tests and tools).
    pub fn value(&self, name: &str) -> Result<Value, CspError> {
        let _g = StackGuard::enter();
        match self.prog.globals.get(name).copied() {
            Some(GlobalKind::Def(i)) => self.def_value(i, self.prog.top.defs[i as usize].span),
            Some(_) => self.lookup(&Name::from(name), &Env::new(), Span::default()),
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

/// A constant definition or a call being evaluated.
#[derive(Clone, PartialEq, Eq)]
enum Frame {
    Def(u32),
    Call(Call),
}

/// `P = (a -> SKIP) ; P`, `Q(n) = (a -> SKIP) ; Q(n)`: a process named directly inside its own
/// body, not behind a prefix, is a call of itself (unfolded when the semantics reaches it), as
/// in FDR. When `frame` is the innermost definition being evaluated, this returns that call and
/// marks the frame, whose value must then be a process (`evaluating` checks it). A cycle through
/// other definitions (`Q = R [] b -> STOP`, `R = Q |~| STOP`) is still reported by `guarded`.
fn self_reference(frame: Frame, call: &Call) -> Option<Value> {
    EVALUATING.with(|stack| {
        let mut stack = stack.borrow_mut();
        match stack.last_mut() {
            Some((top, named)) if *top == frame => {
                *named = true;
                Some(Value::Proc(Proc::new(ProcNode::Call(call.clone()))))
            }
            _ => None,
        }
    })
}

/// Evaluates `body` with `frame` innermost; also says whether the frame was named in its own
/// body (see [`Script::self_call_result`]).
fn evaluating(frame: Frame, body: impl FnOnce() -> EResult<Value>) -> (EResult<Value>, bool) {
    EVALUATING.with(|stack| stack.borrow_mut().push((frame, false)));
    let v = body();
    let named = EVALUATING
        .with(|stack| stack.borrow_mut().pop())
        .is_some_and(|(_, named)| named);
    (v, named)
}

fn func(target: Target) -> Value {
    Value::Func(Arc::new(Func {
        target,
        applied: Vec::new(),
    }))
}

fn flatten_dots<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Dot(a, b) => {
            flatten_dots(a, out);
            flatten_dots(b, out);
        }
        _ => out.push(e),
    }
}
