//! [`CspSystem`]: a CSPm process as a [`TransitionSystem`] over process terms.
//!
//! # States and garbage collection
//!
//! A state is a term of the process-wide term table ([`crate::term::global`]). When the
//! process is a network (static operators at the top), a state is one flat term
//! `net#k(L1, ..., Ln)` of its leaves (the symbol is private to the system); otherwise it is the
//! process term itself; after ✓ it is Ω.
//!
//! All term work for one state runs inside one shared section of the calling thread's
//! [`TermThread`], so no collection runs meanwhile and the terms read or created there need no
//! protection. Whatever outlives the section is held by the system's [`RootSet`], registered
//! for the system's lifetime, so collections (which stay enabled: the table's countdown
//! triggers them between two states) never take a term the system or the explorer holds:
//!
//! - the memo of transitions (every fired term and every target) and the activated lazy
//!   processes;
//! - the *pinned* network states: a thread that *inserts* a `net#k` term into the table pushes
//!   it onto its own pinned list before its section ends. Only this system creates `net#k`
//!   terms and it pins every one it inserts, so a `net#k` term found in the table is pinned
//!   already; every state handed to the explorer is thus kept, at the cost of one word per
//!   state (not per transition) and no hashing. Lists are per thread so that pinning takes
//!   no shared lock;
//! - the initial state and Ω.
//!
//! The memo and the pinned lists only grow while the system lives; dropping the system
//! unregisters them and the next collection frees what nothing else holds.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::hash::WordBuildHasher;
use crate::term::{global, RootRegistration, RootSet, Symbol, TermId, TermRef, TermThread};
use crate::ts::{Label, TransitionSystem};

use super::error::CspError;
use super::eval::Script;
use super::labels::TICK;
use super::network::{combine, LeafMoves, NetNode, Scratch};
use super::semantics::{sort_moves, Semantics};
use super::terms::{term, BuildPath, Encoding, Op, Section};
use super::value::Proc;

/// A state of a [`CspSystem`]: a term kept alive by the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CspState(pub TermId);

/// How states are made.
enum Shape {
    /// States are process terms; successors come from the memo.
    Term,
    /// States are `symbol(leaves)`; successors combine the leaves' memoised transitions.
    Network { node: NetNode, symbol: Symbol },
}

/// What the threads of a system share; also its root set.
struct Shared {
    id: u64,
    sem: Semantics,
    shape: Shape,
    initial: TermId,
    omega: TermId,
    labels: Vec<String>,
    /// Every thread's pinned network states.
    pinned: Mutex<Vec<Arc<Mutex<Vec<TermId>>>>>,
    failed: AtomicBool,
    error: Mutex<Option<CspError>>,
}

impl RootSet for Shared {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        visit(self.initial);
        visit(self.omega);
        self.sem.for_each_term(visit);
        for list in self.pinned.lock().iter() {
            for &t in list.lock().iter() {
                visit(t);
            }
        }
    }
}

/// A CSPm process as a transition system: labels are [`crate::ts::TAU`] (0),
/// [`CspSystem::tick_label`] (1), then the script's events in the order of its
/// [`EventTable`](super::EventTable).
///
/// Evaluation errors met while firing a state (an output outside its channel's type, an
/// unguarded recursion, ...) cannot be returned through the trait: the first one is kept
/// (see [`CspSystem::take_error`]) and the state gets no transitions. Check it after
/// exploring.
pub struct CspSystem {
    shared: Arc<Shared>,
    _roots: RootRegistration,
}

thread_local! {
    /// This thread's access to the global term table.
    static TERMS: TermThread = global().register_thread();
    /// This thread's caches, one per system it has worked for.
    static CONTEXTS: RefCell<Vec<ThreadContext>> = const { RefCell::new(Vec::new()) };
}

/// One thread's working memory for one system.
struct ThreadContext {
    system: u64,
    owner: Weak<Shared>,
    pinned: Arc<Mutex<Vec<TermId>>>,
    /// Leaf term → its transitions in `leaves.flat` (copied from the shared memo once per
    /// thread, so reading them takes no lock and touches no shared cache line).
    cache: HashMap<TermId, (u32, u32), WordBuildHasher>,
    leaves: LeafMoves,
    scratch: Scratch,
    out: Vec<(Label, TermId)>,
}

static NEXT_SYSTEM: AtomicU64 = AtomicU64::new(1);

impl CspSystem {
    /// The transition system of `process`, a process of `script`.
    pub fn new(script: &Arc<Script>, process: &Proc) -> Result<CspSystem, CspError> {
        // Ordering: Relaxed; only uniqueness matters.
        let id = NEXT_SYSTEM.fetch_add(1, Ordering::Relaxed);
        let enc = Encoding::new(script.clone())?;
        let table = script.events()?;
        let mut labels = vec!["tau".to_string(), "✓".to_string()];
        labels.extend(table.names.iter().cloned());
        TERMS.with(|tt| {
            // The whole construction runs in one section: the terms built stay valid until the
            // system's root set, registered before the section ends, holds them.
            let sec = tt.shared_section();
            let t = enc.build(&sec, process, &mut BuildPath::default())?;
            let omega = enc.omega(&sec).id();
            let (initial, shape) = if Op::of(t).is_static() {
                let mut leaves = Vec::new();
                let node = NetNode::compile(&enc, t, u32::MAX, &mut leaves);
                let symbol = Symbol::new(&format!("net#{id}"), leaves.len());
                (
                    sec.create(symbol, &leaves).0.id(),
                    Shape::Network { node, symbol },
                )
            } else {
                (t.id(), Shape::Term)
            };
            let shared = Arc::new(Shared {
                id,
                sem: Semantics::new(enc),
                shape,
                initial,
                omega,
                labels,
                pinned: Mutex::new(Vec::new()),
                failed: AtomicBool::new(false),
                error: Mutex::new(None),
            });
            let roots = global().register_roots(shared.clone());
            Ok(CspSystem {
                shared,
                _roots: roots,
            })
        })
    }

    /// The label of ✓ (successful termination).
    pub fn tick_label() -> Label {
        TICK
    }

    /// The first evaluation error met while firing states, if any (taken: a second call
    /// returns `None`).
    pub fn take_error(&self) -> Option<CspError> {
        self.shared.error.lock().take()
    }

    /// True if an evaluation error was met (even if taken since).
    pub fn failed(&self) -> bool {
        // Ordering: Relaxed; a flag read after the exploration joined its threads.
        self.shared.failed.load(Ordering::Relaxed)
    }

    /// The process of `state` printed as CSPm (`Ω` for the terminated process).
    pub fn describe(&self, state: CspState) -> String {
        match self.state_process(state) {
            Some(p) => self.shared.sem.enc.script.show_proc(&p),
            None => "Ω".to_string(),
        }
    }

    /// The process `state` stands for (`None` for Ω): a normalised process term, calls at
    /// active positions unfolded.
    pub fn state_process(&self, state: CspState) -> Option<Proc> {
        let shared = &*self.shared;
        TERMS.with(|tt| {
            let sec = tt.shared_section();
            let t = term(&sec, state.0);
            match (&shared.shape, Op::of(t)) {
                (Shape::Network { node, .. }, Op::Net) => {
                    let leaves: Vec<Proc> = t
                        .args()
                        .map(|l| shared.sem.enc.to_proc(l).expect("a leaf is never Ω"))
                        .collect();
                    Some(node.to_proc(&leaves))
                }
                _ => shared.sem.enc.to_proc(t),
            }
        })
    }

    /// Number of terms in the process-wide term table (live after the last collection plus
    /// those created since).
    pub fn term_count() -> u64 {
        TERMS.with(|tt| tt.flush_counts());
        global().stats().live_terms
    }

    /// Number of distinct terms whose transitions this system has memoised.
    pub fn memo_len(&self) -> usize {
        self.shared.sem.memo_len()
    }

    /// The script.
    pub fn script(&self) -> &Arc<Script> {
        &self.shared.sem.enc.script
    }

    /// Number of labels (tau, ✓ and the script's events).
    pub fn label_count(&self) -> u32 {
        self.shared.labels.len() as u32
    }

    fn record(&self, e: CspError) {
        // Ordering: Relaxed; the error itself is behind the mutex.
        self.shared.failed.store(true, Ordering::Relaxed);
        let mut slot = self.shared.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// Runs `f` with this thread's context for the system and a shared section.
    fn with_context<R>(&self, f: impl FnOnce(&mut ThreadContext, &Section<'_>) -> R) -> R {
        CONTEXTS.with(|contexts| {
            let mut contexts = contexts.borrow_mut();
            let i = match contexts.iter().position(|c| c.system == self.shared.id) {
                Some(i) => i,
                None => {
                    contexts.retain(|c| c.owner.strong_count() > 0);
                    let pinned = Arc::new(Mutex::new(Vec::new()));
                    TERMS.with(|tt| {
                        // Registered inside a section: the root set changes only there.
                        let _sec = tt.shared_section();
                        self.shared.pinned.lock().push(pinned.clone());
                    });
                    contexts.push(ThreadContext {
                        system: self.shared.id,
                        owner: Arc::downgrade(&self.shared),
                        pinned,
                        cache: HashMap::default(),
                        leaves: LeafMoves::default(),
                        scratch: Scratch::default(),
                        out: Vec::new(),
                    });
                    contexts.len() - 1
                }
            };
            let ctx = &mut contexts[i];
            TERMS.with(|tt| {
                let sec = tt.shared_section();
                f(ctx, &sec)
            })
        })
    }

    /// The successors of a network state into `ctx.out`.
    fn network_successors(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
        node: &NetNode,
        symbol: Symbol,
        state: TermRef<'_>,
    ) -> Result<(), CspError> {
        let sem = &self.shared.sem;
        ctx.leaves.spans.clear();
        for leaf in state.args() {
            let span = match ctx.cache.get(&leaf.id()) {
                Some(&span) => span,
                None => {
                    let moves = sem.transitions(sec, leaf, 0)?;
                    let span = (ctx.leaves.flat.len() as u32, moves.len() as u32);
                    ctx.leaves.flat.extend_from_slice(&moves);
                    ctx.cache.insert(leaf.id(), span);
                    span
                }
            };
            ctx.leaves.spans.push(span);
        }
        ctx.scratch.clear();
        combine(node, &ctx.leaves, &mut ctx.scratch);
        let mut args: Vec<TermRef<'_>> = state.args().collect();
        let mut pinned = None;
        for m in &ctx.scratch.moves {
            if m.label == TICK {
                ctx.out.push((TICK, self.shared.omega));
                continue;
            }
            let updates = &ctx.scratch.updates[m.start as usize..(m.start + m.len) as usize];
            for &(leaf, next) in updates {
                args[leaf as usize] = term(sec, next);
            }
            let (next, inserted) = sec.create(symbol, &args);
            if inserted {
                pinned
                    .get_or_insert_with(|| ctx.pinned.lock())
                    .push(next.id());
            }
            ctx.out.push((m.label, next.id()));
            for &(leaf, _) in updates {
                args[leaf as usize] = state.arg(leaf as usize);
            }
        }
        Ok(())
    }
}

impl TransitionSystem for CspSystem {
    type State = CspState;

    fn initial_state(&self) -> CspState {
        CspState(self.shared.initial)
    }

    fn for_each_successor(&self, state: &CspState, emit: &mut dyn FnMut(Label, CspState)) {
        let shared = &*self.shared;
        let result = self.with_context(|ctx, sec| {
            ctx.out.clear();
            let t = term(sec, state.0);
            let r = match (&shared.shape, Op::of(t)) {
                (Shape::Network { node, symbol }, Op::Net) => {
                    self.network_successors(ctx, sec, node, *symbol, t)
                }
                _ => shared
                    .sem
                    .transitions(sec, t, 0)
                    .map(|moves| ctx.out.extend_from_slice(&moves)),
            };
            match r {
                Ok(()) => {
                    sort_moves(&mut ctx.out);
                    Ok(std::mem::take(&mut ctx.out))
                }
                Err(e) => Err(e),
            }
        });
        match result {
            Ok(mut out) => {
                for &(label, target) in &out {
                    emit(label, CspState(target));
                }
                out.clear();
                CONTEXTS.with(|contexts| {
                    if let Some(c) = contexts
                        .borrow_mut()
                        .iter_mut()
                        .find(|c| c.system == shared.id)
                    {
                        c.out = out;
                    }
                });
            }
            Err(e) => self.record(e),
        }
    }

    fn label_name(&self, label: Label) -> String {
        self.shared
            .labels
            .get(label as usize)
            .cloned()
            .unwrap_or_else(|| format!("label{label}"))
    }
}
