//! What the systems of one run share: [`SystemMaker`] makes every system of a run of
//! assertions on one [`Semantics`] (one encoding, one memo of transitions), so that a
//! sequential process met by several systems (the same process, with the same arguments, in
//! `SYSTEM` and in `SYSTEM \ H`) is explored on its own once ([`LeafCache`]), and a
//! compression is made once.
//!
//! Terms are hash-consed in one encoding, so a leaf's term is its canonical key: the same
//! process gives the same term in every system made by one maker. A leaf's exploration
//! ([`LeafLts::explore`]) depends on its term only (the firing rules and the canonical order
//! of transitions), so a cached one is the exploration the system would have made itself:
//! the same numbers, the same transitions.
//!
//! # Compressions a system applies
//!
//! [`CspSystem::compressions`](super::system::CspSystem::compressions) names the
//! compressions a system applied, which a shared encoding no longer tells (it holds those of
//! every system of the run). So the compressions fired are recorded: on each thread while a
//! term is fired ([`record_compression`], gathered by [`Semantics::recording`]), kept per term
//! whose firing applied one (a term fired again from the memo, by another system, reports
//! them again), per cached leaf, and per system.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

use crate::csp::error::CspError;
use crate::csp::eval::Script;
use crate::csp::value::Proc;
use crate::hash::WordBuildHasher;
use crate::term::{global, RootRegistration, TermId};

use super::leaves::{LeafLts, NotExplored};
use super::semantics::Semantics;
use super::system::CspSystem;
use super::terms::{Encoding, Section};

thread_local! {
    /// The compressions (entries of the encoding's table) fired on this thread since the
    /// outermost [`Semantics::recording`] began.
    static FIRED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Notes that compressions `ks` were fired on this thread.
pub(super) fn record_compression(ks: &[u32]) {
    if !ks.is_empty() {
        FIRED.with(|f| f.borrow_mut().extend_from_slice(ks));
    }
}

/// How far this thread's record of fired compressions reaches.
pub(super) fn recorded_mark() -> usize {
    FIRED.with(|f| f.borrow().len())
}

/// The compressions recorded on this thread since `mark`, sorted, without duplicates; they stay
/// recorded (an enclosing firing applied them too).
pub(super) fn recorded_since(mark: usize) -> Vec<u32> {
    FIRED.with(|f| {
        let f = f.borrow();
        let mut ks = f.get(mark..).map(<[u32]>::to_vec).unwrap_or_default();
        ks.sort_unstable();
        ks.dedup();
        ks
    })
}

/// Forgets what was recorded on this thread since `mark`.
pub(super) fn forget_since(mark: usize) {
    FIRED.with(|f| f.borrow_mut().truncate(mark));
}

/// Adds the sorted `ks` to the sorted set `into`.
pub(super) fn merge_compressions(into: &mut Vec<u32>, ks: &[u32]) {
    if ks.iter().all(|k| into.binary_search(k).is_ok()) {
        return;
    }
    into.extend_from_slice(ks);
    into.sort_unstable();
    into.dedup();
}

impl Semantics {
    /// Runs `f`, returning with its result the compressions fired meanwhile on this thread
    /// (sorted); the record is as it was before.
    pub(super) fn recording<R>(&self, f: impl FnOnce() -> R) -> (R, Vec<u32>) {
        let mark = recorded_mark();
        let r = f();
        let ks = recorded_since(mark);
        forget_since(mark);
        (r, ks)
    }
}

/// A sequential process explored on its own (or found too large, or failing, to be), with the
/// compressions its exploration fired.
pub(super) struct CachedLeaf {
    pub(super) explored: Option<Arc<LeafLts>>,
    pub(super) compressions: Vec<u32>,
}

/// The explorations of leaves, by term (part of the semantics' root set).
#[derive(Default)]
pub(super) struct LeafCache {
    leaves: DashMap<TermId, Arc<CachedLeaf>, WordBuildHasher>,
    explorations: AtomicU64,
}

impl LeafCache {
    /// The exploration of the leaf `start` (up to `limit` states), made on first call.
    /// A leaf that needs a compression made first is not kept (it is explored again once
    /// the compression is made), nor is one that failed while the compressions it met were
    /// not all complete (a stopped compression stays in its slot, see [`SystemMaker`]).
    pub(super) fn explore(
        &self,
        sem: &Semantics,
        sec: &Section<'_>,
        start: TermId,
        limit: usize,
    ) -> Result<Arc<CachedLeaf>, NotExplored> {
        if let Some(leaf) = self.leaves.get(&start) {
            return Ok(leaf.clone());
        }
        let (explored, compressions) = sem.recording(|| LeafLts::explore(sem, sec, start, limit));
        if super::growth::gave_up() {
            // Not the leaf's failure: the system is made again once the table has grown.
            return Err(NotExplored::Lazy);
        }
        let explored = match explored {
            Ok(lts) => Some(Arc::new(lts)),
            Err(NotExplored::Pending(k)) => return Err(NotExplored::Pending(k)),
            Err(NotExplored::Lazy) => None,
        };
        // Ordering: Relaxed; a count read after the work.
        self.explorations.fetch_add(1, Ordering::Relaxed);
        let leaf = Arc::new(CachedLeaf {
            explored,
            compressions,
        });
        // Inserted inside the section: its terms are kept from now on.
        Ok(self.leaves.entry(start).or_insert(leaf).clone())
    }

    /// Number of leaves explored and kept so far (a try given up for the table to grow, or
    /// for a compression to be made, is not counted).
    pub(super) fn explorations(&self) -> u64 {
        // Ordering: Relaxed; see `explore`.
        self.explorations.load(Ordering::Relaxed)
    }

    /// Calls `visit` on every term the cached explorations hold.
    pub(super) fn for_each_term(&self, visit: &mut dyn FnMut(TermId)) {
        for e in self.leaves.iter() {
            visit(*e.key());
            if let Some(lts) = &e.value().explored {
                lts.terms.iter().for_each(|&t| visit(t));
            }
        }
    }
}

/// Makes the systems of one run on one semantics, so that they share the explorations of
/// their leaves and their compressions (see the module documentation). Its terms stay alive
/// while it lives.
pub struct SystemMaker {
    sem: Arc<Semantics>,
    _roots: RootRegistration,
}

impl SystemMaker {
    /// A maker of systems of `script`'s processes.
    pub fn new(script: &Arc<Script>) -> Result<SystemMaker, CspError> {
        let sem = Arc::new(Semantics::new(Encoding::new(script.clone())?));
        let roots = global().register_roots(sem.clone());
        Ok(SystemMaker { sem, _roots: roots })
    }

    /// The system of `process` (as [`CspSystem::new_until`]), sharing what this maker's
    /// systems made before. A compression stopped by `stop` stays stopped in this maker: make
    /// a new maker after a stop.
    pub fn system(
        &self,
        process: &Proc,
        stop: &crate::explore::StopSignal,
    ) -> Result<CspSystem, CspError> {
        let made = CspSystem::on_semantics(&self.sem, process, stop, None);
        if made.is_err() {
            // An error met deciding a label's membership while the system was made belongs
            // to it, not to the next system.
            let _ = self.sem.enc.labels.take_error();
        }
        made
    }

    /// Number of leaves explored on their own so far (each distinct leaf once).
    pub fn leaf_explorations(&self) -> u64 {
        self.sem.leaf_cache.explorations()
    }
}
