//! [`CspSystem`]: a CSPm process as a [`TransitionSystem`].
//!
//! # States
//!
//! The sequential processes a system meets are terms of the process-wide term table
//! ([`crate::term::global`]), each numbered once in a table of leaves that also keeps its
//! transitions (as pairs of a label and a target's number).
//!
//! - When the process is a network (static operators at the top), a state is, as in FDR, the
//!   vector of its leaves' numbers, packed into words ([`Layout`]) and kept in a
//!   [`StateIndex`] that numbers each vector once. Each position of the network has its own
//!   leaves: when the system is made, each position's sequential process is explored on its
//!   own ([`LeafLts`]), so that its numbers take just the bits they need (a philosopher's 8
//!   states take 3 bits, a solitaire hole's 2 states one bit); a position whose process has
//!   more than [`EXPLICIT_LEAVES`] states, or fails to evaluate somewhere, is numbered as met
//!   instead ([`LeafTable`], 32 bits). Ω (after ✓) has every field at its reserved value,
//!   and is told by position 0 alone: only that position's field keeps room for a value no
//!   leaf has (one more bit where its count of leaves is a power of two). A state's successors combine its
//!   leaves' transitions ([`combine`]): no term is made per network state.
//! - A compression (`normal(P)`, ...) that a position's process meets is made first, outside
//!   the construction's section, and the construction runs again: so a compressed component
//!   is an explicit position, as in FDR, explored up to [`EXPLICIT_COMPRESSED_LEAVES`] states
//!   when the position's process is the compression itself.
//! - Otherwise a state is a process term and its number is its leaf number. The process is
//!   explored whole when the system is made, as an explicit position is (up to
//!   [`EXPLICIT_LEAVES`] states, [`EXPLICIT_COMPRESSED_LEAVES`] for a compression), so its
//!   numbers are canonical; a larger one is numbered as met.
//!
//! A [`CspState`] is that number, fixed when the state is first met, so the explorer needs no
//! index of its own ([`TransitionSystem::state_number`]).
//!
//! # Canonical order of successors
//!
//! Numbers given as met (a network's vectors, a lazy position's or a large term's leaves)
//! come in the order threads happen to meet states, so they differ between runs and thread
//! counts; the order in which a state's successors are emitted must not (see
//! [`TransitionSystem::for_each_successor`]). Successors come out sorted by label, then by a
//! canonical key of the target, a function of the process only:
//!
//! - a sequential process's transitions are sorted by the canonical order of terms
//!   (`Encoding::cmp_terms`: by structure and by the contents of the values in them, never by
//!   addresses or intern numbers), so an explicit leaf's breadth-first numbering is canonical
//!   too, and a term state's successors are emitted in that order;
//! - a network state's successors are ordered by their vectors of leaves, position by
//!   position: an explicit position by its (canonical) leaf number, a lazy one (numbered as
//!   met) by the canonical order of its terms, read only where two vectors differ there. When
//!   every position is explicit the packed words themselves are compared.
//!
//! # Garbage collection
//!
//! All term work for one state runs inside one shared section of the calling thread's
//! [`TermThread`], so no collection runs meanwhile and the terms read or created there need no
//! protection. What outlives the section is held by the system's [`RootSet`], registered for
//! the system's lifetime: the leaf tables and Ω; and by its semantics' (a root set of its own,
//! registered for as long as the system or the
//! [`SystemMaker`](super::shared_leaves::SystemMaker) sharing it lives): the memo of
//! transitions (every fired term and every target), the activated lazy processes and the
//! leaves explored on their own. They only grow while the system lives; dropping the system
//! (and its maker) unregisters them and the next collection frees what nothing else holds.
//! The leaf table's lock is taken only inside shared sections, so a collector (which visits
//! the roots in its exclusive section) never waits for it.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::explore::{IndexHandle, StateIndex};
use crate::term::{global, RootRegistration, RootSet, TermId, TermThread};
use crate::ts::{Label, NoCanonicalEncoding, TransitionSystem};

use super::labels::TICK;
use super::layout::Layout;
use super::leaves::{LeafTable, Position};
use super::network::{combine, distributed_termination, LeafMoves, NetNode, Scratch};
use super::semantics::Semantics;
use super::shared_leaves::merge_compressions;
use super::stop_poll::POLL_WORDS;
use super::terms::{term, Encoding, Section};
use crate::csp::error::CspError;
use crate::csp::eval::Script;
use crate::csp::value::Proc;

/// A state of a [`CspSystem`]: its number (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CspState(pub(super) u32);

/// Most states of one position's process explored when the system is made.
pub const EXPLICIT_LEAVES: usize = 1 << 12;

/// Most states of a position whose process is a compression (`normal(P)`, ...), explored when
/// the system is made: its LTS is explicit already (at most
/// [`MAX_COMPRESSED_STATES`](super::compress::MAX_COMPRESSED_STATES) states).
pub const EXPLICIT_COMPRESSED_LEAVES: usize = 1 << 22;

/// How states are made.
pub(super) enum Shape {
    /// States are process terms, numbered as leaves of `Shared::leaves`: when the process
    /// was explored whole when the system was made (`explored` is its number of states),
    /// breadth first in the canonical order of transitions, as an explicit leaf of a network
    /// is (see [`CspSystem::new`]); else as met.
    Term { explored: Option<u32> },
    /// States are packed vectors of the positions' leaf numbers in `index`; `omega` is the
    /// number of Ω.
    Network {
        node: NetNode,
        positions: Vec<Position>,
        layout: Layout,
        index: Box<StateIndex>,
        omega: u32,
        /// Every position is explicit: packed keys compare canonically as they are.
        all_explicit: bool,
        /// Per position: an operand of a parallel operator, which terminates by itself
        /// (`network::distributed_termination`).
        under_parallel: Vec<bool>,
    },
}

/// What the threads of a system share; also its root set.
pub(super) struct Shared {
    pub(super) id: u64,
    pub(super) sem: Arc<Semantics>,
    pub(super) shape: Shape,
    pub(super) leaves: LeafTable,
    pub(super) initial: u32,
    pub(super) omega: TermId,
    /// The compressions fired exploring its leaves when it was made (sorted); those its
    /// lazy leaves fire are in their tables.
    pub(super) compressions: Vec<u32>,
    pub(super) failed: AtomicBool,
    pub(super) error: Mutex<Option<CspError>>,
}

/// A system's semantics' memo is a root set of its own, registered by the system or by the
/// [`SystemMaker`](super::shared_leaves::SystemMaker) that shares it between systems.
impl RootSet for Semantics {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        self.for_each_term(visit);
    }
}

impl RootSet for Shared {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        // The semantics is a root set of its own (see `CspSystem::_sem_roots`).
        visit(self.omega);
        for leaf in self.leaves.leaves.read().iter() {
            visit(leaf.term);
        }
        if let Shape::Network { positions, .. } = &self.shape {
            positions.iter().for_each(|p| p.for_each_term(visit));
        }
    }
}

/// A CSPm process as a transition system: labels are [`crate::ts::TAU`] (0),
/// [`CspSystem::tick_label`] (1), then the script's events in the order of its
/// [`EventTable`](crate::csp::EventTable).
///
/// Evaluation errors met while firing a state (an output outside its channel's type, an
/// unguarded recursion, ...) cannot be returned through the trait: the first one is kept
/// (see [`CspSystem::take_error`]) and the state gets no transitions. Check it after
/// exploring.
pub struct CspSystem {
    pub(super) shared: Arc<Shared>,
    pub(super) _roots: RootRegistration,
    /// The registration of the semantics as a root set, where the system owns it (else its
    /// [`SystemMaker`](super::shared_leaves::SystemMaker) does). Not in `Shared`: a root set
    /// is dropped while the table's list of root sets is locked, and must not unregister.
    pub(super) _sem_roots: Option<RootRegistration>,
}

thread_local! {
    /// This thread's access to the global term table.
    pub(super) static TERMS: TermThread = global().register_thread();
    /// This thread's caches, one per system it has worked for.
    static CONTEXTS: RefCell<Vec<ThreadContext>> = const { RefCell::new(Vec::new()) };
}

/// One thread's working memory for one system.
pub(super) struct ThreadContext {
    system: u64,
    owner: Weak<Shared>,
    /// This thread's access to a network's state index.
    pub(super) handle: Option<IndexHandle>,
    /// Position → leaf number → its transitions in `leaves.flat` (copied from the position's
    /// table once per thread, so reading them takes no lock; `(u32::MAX, 0)` for not yet).
    spans: Vec<Vec<(u32, u32)>>,
    leaves: LeafMoves<u32>,
    scratch: Scratch<u32>,
    /// The state being expanded, its successors' keys and labels, and their numbers.
    pub(super) key: Vec<u32>,
    pub(super) next: Vec<u32>,
    pub(super) labels: Vec<Label>,
    pub(super) found: Vec<(u32, bool)>,
    /// Indices of successors of one label, put in canonical order.
    pub(super) perm: Vec<u32>,
    pub(super) out: Vec<(Label, u32)>,
    /// A successor's encoding being emitted (`encoded_successors`).
    pub(super) found_words: Vec<u32>,
}

/// Runs `f` in a shared section of this thread's access to the term table.
pub(crate) fn in_section<R>(f: impl FnOnce(&Section<'_>) -> R) -> R {
    TERMS.with(|tt| {
        let sec = tt.shared_section();
        f(&sec)
    })
}

impl CspSystem {
    /// The transition system of `process`, a process of `script`.
    ///
    /// A process that is not a network (whose states are process terms) is explored whole
    /// first, up to [`EXPLICIT_LEAVES`] states (a compression up to
    /// [`EXPLICIT_COMPRESSED_LEAVES`]), its states numbered breadth first in the canonical
    /// order of transitions as a network's explicit leaves are, so that it has a canonical
    /// encoding (one word, the state's number) that a distributed run and a compact search
    /// need. A larger one is numbered as met; the exploration up front, bounded so, is what
    /// a search that stops early pays for it.
    pub fn new(script: &Arc<Script>, process: &Proc) -> Result<CspSystem, CspError> {
        CspSystem::new_until(script, process, &crate::explore::StopSignal::new())
    }

    /// As [`CspSystem::new`], the compressions it makes stopped (with an error of kind
    /// [`ErrorKind::Stopped`](crate::csp::error::ErrorKind::Stopped)) when `stop` is raised;
    /// `stop` stays the system's until [`CspSystem::set_stop`].
    pub fn new_until(
        script: &Arc<Script>,
        process: &Proc,
        stop: &crate::explore::StopSignal,
    ) -> Result<CspSystem, CspError> {
        let sem = Arc::new(Semantics::new(Encoding::new(script.clone())?));
        // The semantics' memo is a root set of its own, kept by the system.
        let roots = global().register_roots(sem.clone());
        CspSystem::on_semantics(&sem, process, stop, Some(roots))
    }

    /// The compression functions applied in the states met so far, each once, in order.
    pub fn compressions(&self) -> Vec<crate::reduce::Compression> {
        let shared = &*self.shared;
        let mut fired = shared.compressions.clone();
        merge_compressions(&mut fired, &shared.leaves.compressions.lock());
        if let Shape::Network { positions, .. } = &shared.shape {
            for p in positions {
                if let Position::Lazy(table) = p {
                    merge_compressions(&mut fired, &table.compressions.lock());
                }
            }
        }
        let mut used: Vec<_> = shared
            .sem
            .with_nested(&fired)
            .into_iter()
            .map(|k| shared.sem.enc.compressed.get(k).0 .0)
            .collect();
        used.sort_unstable();
        used.dedup();
        used
    }

    /// The label of ✓ (successful termination).
    pub fn tick_label() -> Label {
        TICK
    }

    /// Makes `stop` the signal that stops the compressions the system makes from now on (a
    /// compression met while a search runs is made then, and the search's signal should stop
    /// it).
    pub fn set_stop(&self, stop: &crate::explore::StopSignal) {
        *self.shared.sem.enc.stop.lock() = stop.clone();
        self.shared.sem.enc.script.set_stop(stop);
    }

    /// The first evaluation error met while firing states, if any (taken: a second call
    /// returns `None`).
    pub fn take_error(&self) -> Option<CspError> {
        self.note_label_error();
        self.shared.error.lock().take()
    }

    /// True if an evaluation error was met (even if taken since).
    pub fn failed(&self) -> bool {
        self.note_label_error();
        // Ordering: Relaxed; a flag read after the exploration joined its threads.
        self.shared.failed.load(Ordering::Relaxed)
    }

    /// Records the error met deciding a label's membership in a described set, if any.
    fn note_label_error(&self) {
        if let Some(e) = self.shared.sem.enc.labels.take_error() {
            self.record(e);
        }
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

    /// Number of labels so far (tau, ✓, the script's enumerated events and the events of
    /// other channels met so far).
    pub fn label_count(&self) -> u32 {
        self.shared.sem.enc.labels.count()
    }

    pub(super) fn record(&self, e: CspError) {
        // Ordering: Relaxed; the error itself is behind the mutex.
        self.shared.failed.store(true, Ordering::Relaxed);
        let mut slot = self.shared.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// Runs `f` with this thread's context for the system and a shared section.
    pub(super) fn with_context<R>(
        &self,
        f: impl FnOnce(&mut ThreadContext, &Section<'_>) -> R,
    ) -> R {
        CONTEXTS.with(|contexts| {
            let mut contexts = contexts.borrow_mut();
            let i = match contexts.iter().position(|c| c.system == self.shared.id) {
                Some(i) => i,
                None => {
                    contexts.retain(|c| c.owner.strong_count() > 0);
                    let handle = match &self.shared.shape {
                        Shape::Network { index, .. } => Some(index.handle()),
                        Shape::Term { .. } => None,
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
                        labels: Vec::new(),
                        found: Vec::new(),
                        perm: Vec::new(),
                        out: Vec::new(),
                        found_words: Vec::new(),
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

    /// The span of the transitions of leaf `n` of `position` in `ctx.leaves.flat`.
    #[inline]
    fn leaf_span(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
        positions: &[Position],
        position: usize,
        n: u32,
    ) -> Result<(u32, u32), CspError> {
        if let Some(&span) = ctx.spans[position].get(n as usize) {
            if span.0 != u32::MAX {
                return Ok(span);
            }
        }
        let mut moves = positions[position].moves(&self.shared.sem, sec, n)?;
        if let Shape::Network { under_parallel, .. } = &self.shared.shape {
            if under_parallel[position] {
                let leaf = term(sec, positions[position].term(n));
                let terminated = super::semantics::is_terminated(leaf).then_some(n);
                let labels = &self.shared.sem.enc.labels;
                moves = distributed_termination(&moves, terminated, |a, b| labels.cmp(a, b)).into();
            }
        }
        let span = (ctx.leaves.flat.len() as u32, moves.len() as u32);
        ctx.leaves.flat.extend_from_slice(&moves);
        let spans = &mut ctx.spans[position];
        if spans.len() <= n as usize {
            spans.resize(n as usize + 1, (u32::MAX, 0));
        }
        spans[n as usize] = span;
        Ok(span)
    }

    /// The successors of network state `state` into `ctx.out`, without duplicates, in
    /// canonical order (see the module documentation).
    fn network_successors(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
        state: u32,
    ) -> Result<(), CspError> {
        let Shape::Network { index, omega, .. } = &self.shared.shape else {
            unreachable!("a network's state");
        };
        ctx.key.resize(index.width(), 0);
        index.read_key(state, &mut ctx.key);
        let Some(tick) = self.successor_keys(ctx, sec)? else {
            return Ok(()); // Ω
        };
        let handle = ctx.handle.as_mut().expect("a network context has a handle");
        ctx.found.clear();
        index
            .insert_many(handle, &ctx.next, &mut ctx.found)
            .map_err(|e| self.shared.sem.enc.index_error(e))?;
        let from = ctx.out.len();
        ctx.out.extend(
            ctx.labels
                .iter()
                .zip(&ctx.found)
                .map(|(&l, &(n, _))| (l, n)),
        );
        if ctx.labels.windows(2).any(|w| w[0] == w[1]) {
            self.order_ties(ctx, sec, from);
        }
        if tick {
            let at = ctx.out[from..].partition_point(|&(l, _)| l < TICK);
            ctx.out.insert(from + at, (TICK, *omega));
        }
        Ok(())
    }

    /// The successors of the network key `ctx.key` (not numbered): their keys one after
    /// another in `ctx.next` and their labels in `ctx.labels`, in the canonical order of
    /// labels, ✓ left out; returns whether ✓ is among them, or `None` for Ω.
    pub(super) fn successor_keys(
        &self,
        ctx: &mut ThreadContext,
        sec: &Section<'_>,
    ) -> Result<Option<bool>, CspError> {
        let Shape::Network {
            node,
            positions,
            layout,
            ..
        } = &self.shared.shape
        else {
            unreachable!("a network's state");
        };
        if layout.get(&ctx.key, 0) == layout.reserved(0) {
            return Ok(None); // Ω
        }
        if ctx.spans.len() < positions.len() {
            ctx.spans.resize(positions.len(), Vec::new());
        }
        ctx.leaves.spans.clear();
        for position in 0..positions.len() {
            let n = layout.get(&ctx.key, position);
            let span = self.leaf_span(ctx, sec, positions, position, n)?;
            ctx.leaves.spans.push(span);
        }
        ctx.scratch.clear();
        combine(node, &ctx.leaves, &mut ctx.scratch);
        // By label first (canonical order, see the module documentation), so that the keys
        // built below and their numbers come in that order too.
        let labels = &self.shared.sem.enc.labels;
        ctx.scratch
            .moves
            .sort_unstable_by(|a, b| labels.cmp(a.label, b.label));
        // The successors' keys, one after another.
        ctx.next.clear();
        ctx.labels.clear();
        let mut tick = false;
        let width = ctx.key.len();
        // Words written since the stop signal was last looked at: the successors of one state
        // of a wide network take hundreds of megabytes (10,000 components, 10,000 moves).
        let mut unpolled = 0;
        for m in &ctx.scratch.moves {
            if m.label == TICK {
                tick = true;
                continue;
            }
            unpolled += width;
            if unpolled >= POLL_WORDS {
                self.shared.sem.enc.poll_stop(unpolled)?;
                unpolled = 0;
            }
            let at = ctx.next.len();
            ctx.next.extend_from_slice(&ctx.key);
            let next = &mut ctx.next[at..at + width];
            for &(position, leaf) in
                &ctx.scratch.updates[m.start as usize..(m.start + m.len) as usize]
            {
                layout.set(next, position as usize, leaf);
            }
            ctx.labels.push(m.label);
        }
        Ok(Some(tick))
    }
}

impl TransitionSystem for CspSystem {
    type State = CspState;

    fn initial_state(&self) -> CspState {
        CspState(self.shared.initial)
    }

    fn for_each_successor(&self, state: &CspState, emit: &mut dyn FnMut(Label, CspState)) {
        let shared = &*self.shared;
        let successors = || {
            self.with_context(|ctx, sec| {
                ctx.out.clear();
                let r = match &shared.shape {
                    Shape::Network { .. } => self.network_successors(ctx, sec, state.0),
                    Shape::Term { .. } => shared
                        .leaves
                        .moves(&shared.sem, sec, state.0)
                        .map(|moves| ctx.out.extend_from_slice(&moves)),
                };
                // Both are without duplicates and in canonical order already: a term's moves
                // as the semantics sorted them (numbers given to distinct targets are
                // distinct).
                r.map(|()| std::mem::take(&mut ctx.out))
            })
        };
        let mut result = successors();
        // A compression met for the first time is made outside the section, then the
        // state is fired again.
        while result.is_err() {
            let Some(k) = super::compress::pending() else {
                break;
            };
            match shared.sem.make_compression(k) {
                Ok(()) => result = successors(),
                Err(e) => result = Err(e),
            }
        }
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
        self.shared.sem.enc.labels.name(label)
    }

    fn state_number(&self, state: &CspState) -> Option<crate::ts::StateNumber> {
        Some(crate::ts::StateNumber(state.0))
    }

    /// See [`CspSystem::encoding_width`].
    fn encoded_width(&self) -> Result<usize, NoCanonicalEncoding> {
        self.encoding_width()
    }

    fn encoded_bits(&self) -> Result<u32, NoCanonicalEncoding> {
        self.encoding_bits()
    }

    fn encode_state(&self, state: &CspState, words: &mut [u32]) {
        self.encode(state, words);
    }

    fn for_each_encoded_successor(&self, words: &[u32], emit: &mut dyn FnMut(Label, &[u32])) {
        if let Err(e) = self.encoded_successors(words, emit) {
            self.record(e);
        }
    }

    fn decode_state(&self, words: &[u32]) -> Option<CspState> {
        self.decode(words)
    }

    /// See [`CspSystem::structural_encoding`].
    fn write_structural(
        &self,
        state: &CspState,
        out: &mut Vec<u32>,
    ) -> Result<(), NoCanonicalEncoding> {
        self.append_structural(state, out)
            .map_err(|_| super::structural::unwritable())
    }

    fn read_structural(&self, words: &[u32]) -> Option<CspState> {
        self.from_structural_encoding(words)
    }
}
