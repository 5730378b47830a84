//! Guards of evaluation: the stack budget and call depth of each thread, the items being
//! computed (cycles between definitions), and calls named inside their own bodies.

use super::*;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static STACK_BASE: Cell<usize> = const { Cell::new(0) };
    static IN_PROGRESS: RefCell<Vec<(u8, u32)>> = const { RefCell::new(Vec::new()) };
    /// The constant definitions and calls being evaluated, innermost last, each with whether
    /// it was named inside its own body (see `Evaluator::self_reference`).
    static EVALUATING: RefCell<Vec<(Frame, bool)>> = const { RefCell::new(Vec::new()) };
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
#[derive(Clone, PartialEq, Eq)]
pub(super) enum Frame {
    Def(u32),
    Call(Call),
}

/// `P = (a -> SKIP) ; P`, `Q(n) = (a -> SKIP) ; Q(n)`: a process named directly inside its own
/// body, not behind a prefix, is a call of itself (unfolded when the semantics reaches it), as
/// in FDR. When `frame` is the innermost definition being evaluated, this returns that call and
/// marks the frame, whose value must then be a process (`evaluating` checks it). A cycle through
/// other definitions (`Q = R [] b -> STOP`, `R = Q |~| STOP`) is still reported by `guarded`.
pub(super) fn self_reference(frame: Frame, call: &Call) -> Option<Value> {
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
/// body (see [`Evaluator::self_call_result`]).
pub(super) fn evaluating(
    frame: Frame,
    body: impl FnOnce() -> EResult<Value>,
) -> (EResult<Value>, bool) {
    EVALUATING.with(|stack| stack.borrow_mut().push((frame, false)));
    let v = body();
    let named = EVALUATING
        .with(|stack| stack.borrow_mut().pop())
        .is_some_and(|(_, named)| named);
    (v, named)
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
