//! The busy-forbidden readers-writer protocol (Table 5.2 of the thesis).
//!
//! Every participating thread owns two flags, each on its own cache line: `busy` (it is in, or
//! entering, a shared section; written only by its owner) and `forbidden` (some thread wants or
//! has the exclusive section; written only by the thread holding the mutex). Entering a shared
//! section costs a store of `busy`, a light barrier and a load of `forbidden`; leaving costs one
//! store. Entering the exclusive section takes the mutex, forbids every thread and withdraws the
//! prohibition of each thread found busy, until all are forbidden while none is busy.
//!
//! The nondeterministic "sometimes" branches of Table 5.2 exist to make the implementation
//! model branching bisimilar to the specification (§5.2.2) and are not needed for correctness;
//! they are left out. Shared sections nest with a per-thread counter; only the outermost entry
//! and exit touch the flags.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use crossbeam::utils::CachePadded;

use super::barrier::Barriers;
use super::shim::{self, Arc, AtomicBool, Mutex, MutexGuard, Ordering};

/// The two flags of one participating thread.
#[derive(Debug, Default)]
struct ThreadFlags {
    busy: CachePadded<AtomicBool>,
    forbidden: CachePadded<AtomicBool>,
}

type Registry = Vec<Arc<ThreadFlags>>;

/// A readers-writer lock for read-mostly workloads: shared sections cost no read-modify-write
/// and touch only the calling thread's own cache lines.
///
/// Threads take part through a [`Participant`] obtained from [`BusyForbidden::register`]; a
/// participant that is dropped leaves the protocol, so exited threads never block a later
/// exclusive section.
#[derive(Debug)]
pub struct BusyForbidden {
    /// The mutex of Table 5.2. It also guards the registry of participating threads, so a
    /// thread registers or leaves only while no exclusive section is in progress.
    registry: Mutex<Registry>,
    barriers: Barriers,
}

impl Default for BusyForbidden {
    fn default() -> Self {
        BusyForbidden::new()
    }
}

impl BusyForbidden {
    /// A lock using the fastest barriers this process supports (see [`Barriers::detect`]).
    pub fn new() -> BusyForbidden {
        BusyForbidden::with_barriers(Barriers::detect())
    }

    /// A lock using the given barriers.
    pub fn with_barriers(barriers: Barriers) -> BusyForbidden {
        BusyForbidden {
            registry: Mutex::new(Vec::new()),
            barriers,
        }
    }

    /// The barriers this lock uses.
    pub fn barriers(&self) -> Barriers {
        self.barriers
    }

    /// Makes the calling thread a participant. Blocks while an exclusive section is in progress.
    pub fn register(&self) -> Participant<'_> {
        let flags = Arc::new(ThreadFlags::default());
        shim::lock(&self.registry).push(flags.clone());
        Participant {
            lock: self,
            flags,
            depth: Cell::new(0),
            barriers: self.barriers,
            exclusive: RefCell::new(None),
            _not_send: PhantomData,
        }
    }

    /// Number of registered participants.
    pub fn participants(&self) -> usize {
        shim::lock(&self.registry).len()
    }
}

/// One thread's membership in a [`BusyForbidden`] lock. Not `Send`: its flags belong to the
/// thread that registered it.
pub struct Participant<'a> {
    lock: &'a BusyForbidden,
    flags: Arc<ThreadFlags>,
    /// Nesting depth of shared sections; only the owner thread reads or writes it.
    depth: Cell<u32>,
    barriers: Barriers,
    /// The mutex guard, held from `enter_exclusive` to `leave_exclusive`.
    exclusive: RefCell<Option<MutexGuard<'a, Registry>>>,
    _not_send: PhantomData<*const ()>,
}

impl<'a> Participant<'a> {
    /// Enters a (possibly nested) shared section. Returns once no thread is exclusive.
    #[inline]
    pub fn enter_shared(&self) {
        let depth = self.depth.get();
        if depth > 0 {
            self.depth.set(depth + 1);
            return;
        }
        debug_assert!(
            self.exclusive.borrow().is_none(),
            "shared section requested inside this thread's exclusive section"
        );
        self.enter_shared_outermost();
        self.depth.set(1);
    }

    #[inline]
    fn enter_shared_outermost(&self) {
        // Ordering: Relaxed; the barrier below orders it before the load of `forbidden`.
        self.flags.busy.store(true, Ordering::Relaxed);
        self.barriers.light();
        // Ordering: Acquire; reading `false` written by `leave_exclusive` (Release) makes the
        // previous exclusive section's writes visible in this shared section.
        while self.flags.forbidden.load(Ordering::Acquire) {
            self.back_off();
        }
    }

    #[cold]
    fn back_off(&self) {
        // Ordering: Relaxed; nothing was done inside the section that needs publishing.
        self.flags.busy.store(false, Ordering::Relaxed);
        shim::wait_for_unlock(&self.lock.registry);
        // Ordering: Relaxed, as in `enter_shared_outermost`; the caller reloads `forbidden`.
        self.flags.busy.store(true, Ordering::Relaxed);
        self.barriers.light();
    }

    /// Leaves a shared section; returns true when the thread is now outside every shared section.
    #[inline]
    pub fn leave_shared(&self) -> bool {
        let depth = self.depth.get();
        debug_assert!(depth > 0, "leave_shared without enter_shared");
        self.depth.set(depth - 1);
        if depth == 1 {
            // Ordering: Release; a writer that reads this `false` (Acquire) sees every access
            // this thread made inside the section.
            self.flags.busy.store(false, Ordering::Release);
            true
        } else {
            false
        }
    }

    /// Depth of shared-section nesting (0: outside).
    #[inline]
    pub fn shared_depth(&self) -> u32 {
        self.depth.get()
    }

    /// Enters a shared section for the lifetime of the returned guard.
    #[inline]
    pub fn shared(&self) -> SharedGuard<'_, 'a> {
        self.enter_shared();
        SharedGuard { participant: self }
    }

    /// Enters the exclusive section: returns once no other thread is in a shared or exclusive
    /// section. Must not be called inside a shared section or twice without leaving.
    pub fn enter_exclusive(&self) {
        assert_eq!(
            self.depth.get(),
            0,
            "exclusive section requested inside a shared section (would deadlock)"
        );
        assert!(
            self.exclusive.borrow().is_none(),
            "exclusive section entered twice"
        );
        let registry = shim::lock(&self.lock.registry);
        loop {
            for flags in registry.iter() {
                // Ordering: Relaxed; only the mutex holder writes `forbidden`, and the heavy
                // barrier below orders this store before the loads of `busy`.
                flags.forbidden.store(true, Ordering::Relaxed);
            }
            self.barriers.heavy();
            if cfg!(feature = "mutant") {
                // MUTANT (loom-tests only): trusts the prohibition without re-checking `busy`,
                // so a thread already inside its shared section is overlooked.
                break;
            }
            // Ordering: Acquire; reading `false` written by `leave_shared` (Release) makes that
            // thread's shared section happen before this exclusive section.
            let some_busy = registry
                .iter()
                .any(|flags| flags.busy.load(Ordering::Acquire));
            if !some_busy {
                break;
            }
            // Some thread is inside a shared section (or entering one). Withdraw every
            // prohibition while we wait for it: a thread that stays busy must not keep the
            // others out of their shared sections (property 3 of §5.2.3: shared entry is
            // refused only while a thread is *in* the exclusive section).
            for flags in registry.iter() {
                // Ordering: Relaxed; nothing was written under the prohibition.
                flags.forbidden.store(false, Ordering::Relaxed);
            }
            shim::spin_wait();
        }
        *self.exclusive.borrow_mut() = Some(registry);
    }

    /// Leaves the exclusive section.
    pub fn leave_exclusive(&self) {
        let registry = self
            .exclusive
            .borrow_mut()
            .take()
            .expect("leave_exclusive without enter_exclusive");
        for flags in registry.iter() {
            // Ordering: Release; a reader that loads this `false` (Acquire) sees every write of
            // the exclusive section.
            flags.forbidden.store(false, Ordering::Release);
        }
        drop(registry);
    }

    /// True while this thread holds the exclusive section.
    pub fn is_exclusive(&self) -> bool {
        self.exclusive.borrow().is_some()
    }

    /// Enters the exclusive section for the lifetime of the returned guard.
    pub fn exclusive(&self) -> ExclusiveGuard<'_, 'a> {
        self.enter_exclusive();
        ExclusiveGuard { participant: self }
    }
}

impl Drop for Participant<'_> {
    fn drop(&mut self) {
        if self.is_exclusive() {
            self.leave_exclusive();
        }
        debug_assert_eq!(
            self.depth.get(),
            0,
            "participant dropped inside a shared section"
        );
        let mut registry = shim::lock(&self.lock.registry);
        registry.retain(|flags| !Arc::ptr_eq(flags, &self.flags));
    }
}

/// A shared section, left when dropped.
pub struct SharedGuard<'p, 'a> {
    participant: &'p Participant<'a>,
}

impl Drop for SharedGuard<'_, '_> {
    #[inline]
    fn drop(&mut self) {
        self.participant.leave_shared();
    }
}

/// The exclusive section, left when dropped.
pub struct ExclusiveGuard<'p, 'a> {
    participant: &'p Participant<'a>,
}

impl Drop for ExclusiveGuard<'_, '_> {
    fn drop(&mut self) {
        self.participant.leave_exclusive();
    }
}
