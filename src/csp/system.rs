//! [`CspSystem`]: a CSPm process as a [`TransitionSystem`].
//!
//! # States
//!
//! The sequential processes a system meets are terms of the process-wide term table
//! ([`crate::term::global`]), each numbered once in the system's [`LeafTable`], which also keeps
//! its transitions (as pairs of a label and a target's number).
//!
//! - When the process is a network (static operators at the top), a state is, as in FDR, the
//!   vector of its leaves' numbers, kept in a [`StateIndex`] that numbers each vector once;
//!   Ω (after ✓) is the vector of [`OMEGA_LEAF`]s. A state's successors combine its leaves'
//!   transitions ([`combine`]): no term is made per network state.
//! - Otherwise a state is a process term and its number is its leaf number.
//!
//! A [`CspState`] is that number, fixed when the state is first met, so the explorer needs no
//! index of its own ([`TransitionSystem::state_number`]).
//!
//! # Garbage collection
//!
//! All term work for one state runs inside one shared section of the calling thread's
//! [`TermThread`], so no collection runs meanwhile and the terms read or created there need no
//! protection. What outlives the section is held by the system's [`RootSet`], registered for
//! the system's lifetime: the memo of transitions (every fired term and every target), the
//! activated lazy processes, the leaf table and Ω. They only grow while the system lives;
//! dropping the system unregisters them and the next collection frees what nothing else holds.
//! The leaf table's lock is taken only inside shared sections, so a collector (which visits
//! the roots in its exclusive section) never waits for it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use dashmap::DashMap;
use parking_lot::{Mutex, RwLock};

use crate::explore::{IndexHandle, StateIndex};
use crate::hash::WordBuildHasher;
use crate::term::{global, RootRegistration, RootSet, TermId, TermThread};
use crate::ts::{Label, TransitionSystem};

use super::error::{CspError, ErrorKind};
use super::eval::Script;
use super::labels::TICK;
use super::network::{combine, LeafMoves, NetNode, Scratch};
use super::semantics::Semantics;
use super::terms::{term, BuildPath, Encoding, Op, Section};
use super::value::Proc;

/// A state of a [`CspSystem`]: its number (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CspState(u32);

/// The leaf number standing for Ω in a network's state vector.
pub(crate) const OMEGA_LEAF: u32 = u32::MAX;

/// How states are made.
enum Shape {
    /// States are process terms, numbered as leaves.
    Term,
    /// States are vectors of leaf numbers in `index`; `omega` is the number of Ω.
    Network {
        node: NetNode,
        index: StateIndex,
        omega: u32,
    },
}

/// One sequential process met by the system, and its transitions once computed.
struct Leaf {
    term: TermId,
    moves: Option<Arc<[(Label, u32)]>>,
}

/// The sequential processes of a system, numbered densely in the order they are met.
#[derive(Default)]
struct LeafTable {
    numbers: DashMap<TermId, u32, WordBuildHasher>,
    /// By number; written only under the write lock, which also makes numbering unique.
    leaves: RwLock<Vec<Leaf>>,
}

impl LeafTable {
    /// The number of `t`, given on first call.
    fn number(&self, t: TermId) -> u32 {
        if let Some(n) = self.numbers.get(&t) {
            return *n;
        }
        let mut leaves = self.leaves.write();
        if let Some(n) = self.numbers.get(&t) {
            return *n;
        }
        let n = leaves.len() as u32;
        leaves.push(Leaf {
            term: t,
            moves: None,
        });
        self.numbers.insert(t, n);
        n
    }

    fn term(&self, n: u32) -> TermId {
        self.leaves.read()[n as usize].term
    }

    /// The transitions of leaf `n`, computed on first call (inside a shared section).
    fn moves(
        &self,
        sem: &Semantics,
        sec: &Section<'_>,
        n: u32,
    ) -> Result<Arc<[(Label, u32)]>, CspError> {
        let t = {
            let leaves = self.leaves.read();
            let leaf = &leaves[n as usize];
            if let Some(moves) = &leaf.moves {
                return Ok(moves.clone());
            }
            leaf.term
        };
        let fired = sem.transitions(sec, term(sec, t), 0)?;
        let moves: Arc<[(Label, u32)]> = fired
            .iter()
            .map(|&(label, target)| (label, self.number(target)))
            .collect();
        let mut leaves = self.leaves.write();
        Ok(leaves[n as usize].moves.get_or_insert(moves).clone())
    }
}

/// What the threads of a system share; also its root set.
struct Shared {
    id: u64,
    sem: Semantics,
    shape: Shape,
    leaves: LeafTable,
    initial: u32,
    omega: TermId,
    labels: Vec<String>,
    failed: AtomicBool,
    error: Mutex<Option<CspError>>,
}

impl RootSet for Shared {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        visit(self.omega);
        self.sem.for_each_term(visit);
        for leaf in self.leaves.leaves.read().iter() {
            visit(leaf.term);
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
    /// This thread's access to a network's state index.
    handle: Option<IndexHandle>,
    /// Leaf number → its transitions in `leaves.flat` (copied from the leaf table once per
    /// thread, so reading them takes no lock; `(u32::MAX, 0)` for not yet).
    spans: Vec<(u32, u32)>,
    leaves: LeafMoves<u32>,
    scratch: Scratch<u32>,
    /// The state being expanded and its successor being built.
    key: Vec<u32>,
    next: Vec<u32>,
    out: Vec<(Label, u32)>,
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
            let leaf_table = LeafTable::default();
            let (initial, shape) = if Op::of(t).is_static() {
                let mut leaves = Vec::new();
                let node = NetNode::compile(&enc, t, u32::MAX, &mut leaves);
                let key: Vec<u32> = leaves.iter().map(|l| leaf_table.number(l.id())).collect();
                let index = StateIndex::new(key.len());
                let mut handle = index.handle();
                let too_many = |e: crate::explore::IndexFull| {
                    CspError::unpositioned(ErrorKind::Limit, e.to_string())
                };
                let initial = index.insert(&mut handle, &key).map_err(too_many)?.0;
                let omega_key = vec![OMEGA_LEAF; key.len()];
                let omega = index.insert(&mut handle, &omega_key).map_err(too_many)?.0;
                drop(handle);
                (initial, Shape::Network { node, index, omega })
            } else {
                (leaf_table.number(t.id()), Shape::Term)
            };
            let shared = Arc::new(Shared {
                id,
                sem: Semantics::new(enc),
                shape,
                leaves: leaf_table,
                initial,
                omega,
                labels,
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
            let leaf_proc = |n: u32| shared.sem.enc.to_proc(term(&sec, shared.leaves.term(n)));
            match &shared.shape {
                Shape::Network { node, index, .. } => {
                    let mut key = vec![0; index.width()];
                    index.read_key(state.0, &mut key);
                    if key[0] == OMEGA_LEAF {
                        return None;
                    }
                    let leaves: Vec<Proc> = key
                        .iter()
                        .map(|&n| leaf_proc(n).expect("a leaf is never Ω"))
                        .collect();
                    Some(node.to_proc(&leaves))
                }
                Shape::Term => leaf_proc(state.0),
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
                    let handle = match &self.shared.shape {
                        Shape::Network { index, .. } => Some(index.handle()),
                        Shape::Term => None,
                    };
                    contexts.push(ThreadContext {
                        system: self.shared.id,
                        owner: Arc::downgrade(&self.shared),
                        handle,
                        spans: Vec::new(),
                        leaves: LeafMoves::default(),
                        scratch: Scratch::default(),
                        key: Vec::new(),
                        next: Vec::new(),
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

    /// The span of leaf `n`'s transitions in `ctx.leaves.flat`.
    #[inline]
    fn leaf_span(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
        n: u32,
    ) -> Result<(u32, u32), CspError> {
        if let Some(&span) = ctx.spans.get(n as usize) {
            if span.0 != u32::MAX {
                return Ok(span);
            }
        }
        let shared = &*self.shared;
        let moves = shared.leaves.moves(&shared.sem, sec, n)?;
        let span = (ctx.leaves.flat.len() as u32, moves.len() as u32);
        ctx.leaves.flat.extend_from_slice(&moves);
        if ctx.spans.len() <= n as usize {
            ctx.spans.resize(n as usize + 1, (u32::MAX, 0));
        }
        ctx.spans[n as usize] = span;
        Ok(span)
    }

    /// The successors of network state `state` into `ctx.out`.
    fn network_successors(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
        node: &NetNode,
        index: &StateIndex,
        omega: u32,
        state: u32,
    ) -> Result<(), CspError> {
        let width = index.width();
        ctx.key.resize(width, 0);
        index.read_key(state, &mut ctx.key);
        if ctx.key[0] == OMEGA_LEAF {
            return Ok(());
        }
        ctx.leaves.spans.clear();
        for position in 0..width {
            let span = self.leaf_span(ctx, sec, ctx.key[position])?;
            ctx.leaves.spans.push(span);
        }
        ctx.scratch.clear();
        combine(node, &ctx.leaves, &mut ctx.scratch);
        ctx.next.clone_from(&ctx.key);
        let handle = ctx.handle.as_mut().expect("a network context has a handle");
        for m in &ctx.scratch.moves {
            if m.label == TICK {
                ctx.out.push((TICK, omega));
                continue;
            }
            let updates = &ctx.scratch.updates[m.start as usize..(m.start + m.len) as usize];
            for &(position, leaf) in updates {
                ctx.next[position as usize] = leaf;
            }
            let (next, _) = index
                .insert(handle, &ctx.next)
                .map_err(|e| CspError::unpositioned(ErrorKind::Limit, e.to_string()))?;
            ctx.out.push((m.label, next));
            for &(position, _) in updates {
                ctx.next[position as usize] = ctx.key[position as usize];
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
            let r = match &shared.shape {
                Shape::Network { node, index, omega } => {
                    self.network_successors(ctx, sec, node, index, *omega, state.0)
                }
                Shape::Term => shared
                    .leaves
                    .moves(&shared.sem, sec, state.0)
                    .map(|moves| ctx.out.extend_from_slice(&moves)),
            };
            r.map(|()| {
                ctx.out.sort_unstable();
                ctx.out.dedup();
                std::mem::take(&mut ctx.out)
            })
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

    fn state_number(&self, state: &CspState) -> Option<u32> {
        Some(state.0)
    }
}
