//! Guards of evaluation: the stack budget and call depth of each thread, the items being
//! computed (cycles between definitions), and calls named inside their own bodies.

use super::*;

/// Why a definition that names itself with nothing between is refused.
const UNGUARDED: &str = "unguarded recursion (a process must perform an event, or finish the \
                         left operand of `;`, before it is named again)";

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static STACK_BASE: Cell<usize> = const { Cell::new(0) };
    static IN_PROGRESS: RefCell<Vec<(u8, u32)>> = const { RefCell::new(Vec::new()) };
    /// The constant definitions and calls being evaluated, innermost last (see
    /// [`recursive_reference`]).
    static EVALUATING: RefCell<Vec<Evaluating>> = const { RefCell::new(Vec::new()) };
    /// Where each frame of [`EVALUATING`] is on it (innermost last): a call chain a million
    /// deep (`g(x) = g(x + 1)`) asks at every call whether the call is already on the stack.
    static POSITIONS: RefCell<HashMap<Frame, Vec<usize>>> = RefCell::new(HashMap::new());
    /// How many right operands of `;` behind an event are being evaluated (see
    /// [`EventGuard`]).
    static EVENT_GUARDS: Cell<u32> = const { Cell::new(0) };
}

/// True if the item `key` is being computed on this thread.
pub(super) fn in_progress(key: (u8, u32)) -> bool {
    IN_PROGRESS.with(|p| p.borrow().contains(&key))
}

/// Sets how many bytes of stack evaluation may use on the calling thread (deep recursion in
/// a script then fails with a positioned error instead of overflowing the stack). Set it a
/// few MiB below the thread's stack size. Unoptimised builds use about 40 KiB of stack per
/// level of CSPm function recursion, optimised builds about 4 KiB.
pub fn set_thread_stack_budget(bytes: usize) {
    crate::threads::set_stack_budget(bytes);
}

pub(super) fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Marks the outermost evaluation on this thread: stack use is measured from here.
pub(super) struct StackGuard(bool);

impl StackGuard {
    pub(super) fn enter() -> StackGuard {
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

pub(super) fn stack_exhausted() -> bool {
    let base = STACK_BASE.with(Cell::get);
    base != 0 && base.saturating_sub(stack_address()) > crate::threads::stack_budget()
}

pub(super) struct DepthGuard;

impl DepthGuard {
    pub(super) fn enter() -> Option<DepthGuard> {
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

pub(super) struct ProgressGuard((u8, u32));

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

/// A constant definition or a call being evaluated.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) enum Frame {
    Def(u32),
    Call(Call),
}

/// A constant definition or call being evaluated on this thread.
struct Evaluating {
    frame: Frame,
    /// Whether it was named inside its own evaluation (it then stands for itself).
    named: bool,
    /// Where the name or call that started it is written, in the body being evaluated
    /// below it.
    entry: Site,
    /// A constant of a `let` group: entered at a transparent site (`let X = ... within X`),
    /// it only names the body below it, and the rule for a process named in its own body
    /// looks through it.
    alias: bool,
    /// The event guards open when it started.
    guards: u32,
}

/// Where a definition is named while it is being evaluated on this thread.
pub(super) enum Reference {
    /// It is not being evaluated: evaluate it.
    Fresh,
    /// It stands for itself: the call, unfolded when the semantics reaches it.
    Itself(Value),
    /// Its value would be needed to compute itself before any event: the definitions
    /// evaluated in between, outermost first.
    Unguarded(Vec<Frame>),
}

/// A definition named while it is being evaluated (`frame`, whose call is `call`), written
/// at `site` of the body being evaluated. It stands for itself (a call, unfolded when the
/// semantics reaches it, as FDR unfolds recursion) when
/// - it is named directly in its own body (`P = (a -> SKIP) ; P`, `P = STOP |~| P`; also
///   through `let` constants that only name a body, `P = let X = ... P ... within X`): an
///   unguarded use (`P = P [] a -> STOP`) is then reported when the process is explored
///   (`csp::process::terms`), as it always was, except at a [`Site::Mixed`] (`P = (SKIP ;
///   P) [] b -> STOP`, refused here: unfolded, it would grow without end);
/// - or it is named behind an event: in the right operand of a `;` whose left operand must
///   perform an event before it terminates (`I = (a -> SKIP) ; F(A)`, see [`EventGuard`]),
///   as a prefix guards a process;
/// - or it is named through other definitions behind the right operand of `;` only
///   (`I = (a -> SKIP) ; A`, `A = SKIP ; (b -> SKIP) ; I`): every name on the way, and this
///   one, is written at a transparent or tail site ([`Site`]), and at least one at a tail
///   site. The recursion then passes the termination of a left operand of `;` (a tau), and
///   unfolding it needs nothing of the definition's own first steps.
///
/// Any other cycle (through `[]`, `|~|`, `|||`, `[| |]`, `\`, renaming, `/\`, `[>` or the
/// left of `;`, with no event on the way: `P = Q |~| STOP`, `Q = P`) is [`Reference::Unguarded`].
/// A frame named as itself is marked: its value must then be a process (see
/// [`Evaluator::self_call_result`]).
pub(super) fn recursive_reference(frame: &Frame, call: &Call, site: Site) -> Reference {
    EVALUATING.with(|stack| {
        let mut stack = stack.borrow_mut();
        let innermost = POSITIONS.with(|p| p.borrow().get(frame).and_then(|at| at.last().copied()));
        let Some(i) = innermost else {
            return Reference::Fresh;
        };
        let above = &stack[i + 1..];
        let direct = above
            .iter()
            .all(|e| e.alias && e.entry == Site::Transparent);
        let sequential = |s: Site| matches!(s, Site::Transparent | Site::Tail);
        let behind_event = EVENT_GUARDS.with(Cell::get) > stack[i].guards;
        let behind_sequence = sequential(site)
            && above.iter().all(|e| sequential(e.entry))
            && (site == Site::Tail || above.iter().any(|e| e.entry == Site::Tail));
        // named in its own body under an operator that stays around it and behind a tau
        // (`P = (SKIP ; P) [] b -> STOP`): each unfolding would wrap it once more
        let growing = direct && site == Site::Mixed;
        if (direct && !growing) || behind_event || behind_sequence {
            stack[i].named = true;
            Reference::Itself(Value::Proc(Proc::new(ProcNode::Call(call.clone()))))
        } else {
            Reference::Unguarded(above.iter().map(|e| e.frame.clone()).collect())
        }
    })
}

/// Evaluates `body` with `frame` innermost, started by a name written at `entry` (`alias`:
/// a constant of a `let` group); also says whether the frame was named as itself (see
/// [`Evaluator::self_call_result`]).
pub(super) fn evaluating(
    frame: Frame,
    entry: Site,
    alias: bool,
    body: impl FnOnce() -> EResult<Value>,
) -> (EResult<Value>, bool) {
    let guards = EVENT_GUARDS.with(Cell::get);
    EVALUATING.with(|stack| {
        let mut stack = stack.borrow_mut();
        POSITIONS.with(|p| {
            p.borrow_mut()
                .entry(frame.clone())
                .or_default()
                .push(stack.len())
        });
        stack.push(Evaluating {
            frame,
            named: false,
            entry,
            alias,
            guards,
        })
    });
    let v = body();
    let popped = EVALUATING.with(|stack| stack.borrow_mut().pop());
    if let Some(e) = &popped {
        POSITIONS.with(|p| {
            let mut p = p.borrow_mut();
            if let Some(at) = p.get_mut(&e.frame) {
                at.pop();
                if at.is_empty() {
                    p.remove(&e.frame);
                }
            }
        });
    }
    (v, popped.is_some_and(|e| e.named))
}

/// The evaluation of the right operands of a `;` whose left operand must perform an event
/// before it terminates (`(a -> SKIP) ; P`): the definitions named there are reached only
/// after that event, as behind a prefix (see [`recursive_reference`]).
pub(super) struct EventGuard;

impl EventGuard {
    pub(super) fn enter() -> EventGuard {
        EVENT_GUARDS.with(|g| g.set(g.get() + 1));
        EventGuard
    }
}

impl Drop for EventGuard {
    fn drop(&mut self) {
        EVENT_GUARDS.with(|g| g.set(g.get().saturating_sub(1)));
    }
}

impl Evaluator {
    pub(super) fn depth(&self, span: Span) -> EResult<DepthGuard> {
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
    pub(super) fn guarded<T>(
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
                    format!("the definition of `{name}` depends on itself: {UNGUARDED}"),
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
    pub(super) fn self_call_result(
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
                    self.memo.endless.insert(call.clone(), use_span);
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
    pub(super) fn endless_use(&self, e: CspError) -> CspError {
        if e.kind != ErrorKind::Type || self.memo.endless.is_empty() {
            return e;
        }
        let found = self.memo.endless.iter().find_map(|entry| {
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

    pub(super) fn not_terminating(&self, call: &Call, use_span: Span) -> CspError {
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

    /// The error of `call` named at `use_span` while it is being evaluated, with no event
    /// and no right operand of `;` since (the definitions evaluated in between: `through`).
    pub(super) fn unguarded(&self, call: &Call, through: &[Frame], use_span: Span) -> CspError {
        let names: Vec<String> = through
            .iter()
            .map(|f| match f {
                Frame::Def(i) => format!("`{}`", self.prog.top.defs[*i as usize].name),
                Frame::Call(c) => format!("`{}`", self.show_call(c)),
            })
            .collect();
        let through = if names.is_empty() {
            String::new()
        } else {
            format!(" (through {})", names.join(", "))
        };
        self.err(
            use_span,
            ErrorKind::Eval,
            format!(
                "the definition of `{}` depends on itself{through}: {UNGUARDED}",
                self.show_call(call)
            ),
        )
    }

    /// ` (through `P`, `Events`)`: the named items being computed on this thread from the
    /// entry `from` of the in-progress stack on (empty if none).
    pub(super) fn cycle_path(&self, from: usize) -> String {
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
}
