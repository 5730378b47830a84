//! The busy-forbidden readers-writer protocol (Table 5.2 of the thesis).
//!
//! Every participating thread owns two flags, each on its own cache line: `busy` (it is in, or
//! entering, a shared section; written only by its owner) and `forbidden` (some thread wants or
//! has the exclusive section; written only by the thread holding the mutex). Entering a shared
//! section costs a store of `busy`, a light barrier and a load of `forbidden`; leaving costs one
//! store. Entering the exclusive section takes the mutex, forbids every thread, and, if it then
//! finds some thread busy, withdraws the prohibitions and tries again, until all are forbidden
//! while none is busy.
//!
//! Two mutexes play the part of Table 5.2's one. `writer` is held from the start of
//! `enter_exclusive` to the end of `leave_exclusive`: writers queue on it and a forbidden reader
//! backs off on it. `mutex` guards the registry of participants and the `forbidden` flags; the
//! writer holds it for each forbid-and-check pass, releases it while it waits for busy readers,
//! and keeps it from the successful pass to `leave_exclusive`. With a single mutex held across
//! the wait, a thread registering (or leaving) while a writer waited for a busy reader would
//! block, and if that reader waited for the registrant, neither would progress (found by the
//! loom model `shared_entry_granted_to_late_registrant_while_writer_waits`).
//!
//! The nondeterministic "sometimes" branches of Table 5.2 exist to make the implementation
//! model branching bisimilar to the specification (§5.2.2) and are not needed for correctness;
//! they are left out. Shared sections nest with a per-thread counter; only the outermost entry
//! and exit touch the flags.

use std::cell::Cell;
use std::marker::PhantomData;

use crossbeam::utils::CachePadded;

use super::barrier::Barriers;
use super::shim::{self, Arc, AtomicBool, Ordering, RawMutex, UnsafeCell};

/// The two flags of one participating thread.
#[derive(Debug, Default)]
struct ThreadFlags {
    busy: CachePadded<AtomicBool>,
    forbidden: CachePadded<AtomicBool>,
}

#[derive(Debug)]
struct Protocol {
    /// Guards `registry` and the writes of `forbidden`: held for each forbid-and-check pass of
    /// a writer and from its successful pass to `leave_exclusive`, and to join or leave.
    mutex: RawMutex,
    /// Held from the start of `enter_exclusive` to the end of `leave_exclusive`: writers queue
    /// on it and forbidden readers back off on it (the timed lock of Table 5.2).
    writer: RawMutex,
    registry: UnsafeCell<Vec<Arc<ThreadFlags>>>,
    barriers: Barriers,
}

// SAFETY: `registry` is only accessed with `mutex` held (see `Protocol::with_registry`); the
// flags are atomics.
unsafe impl Sync for Protocol {}
// SAFETY: as above; nothing in `Protocol` is tied to a thread.
unsafe impl Send for Protocol {}

impl Protocol {
    /// Runs `f` on the registry; the caller must hold `mutex`.
    ///
    /// # Safety
    /// `mutex` is held by the calling thread for the duration of the call.
    unsafe fn with_registry<R>(&self, f: impl FnOnce(&mut Vec<Arc<ThreadFlags>>) -> R) -> R {
        // SAFETY: the mutex gives this thread exclusive access to the registry.
        self.registry
            .with_mut(|registry| f(unsafe { &mut *registry }))
    }
}

/// A readers-writer lock for read-mostly workloads: shared sections cost no read-modify-write
/// and touch only the calling thread's own cache lines.
///
/// Threads take part through a [`Participant`] obtained from [`BusyForbidden::register`]; a
/// participant that is dropped leaves the protocol, so exited threads never block a later
/// exclusive section. Cloning the lock gives another handle to the same lock.
#[derive(Clone, Debug)]
pub struct BusyForbidden {
    protocol: Arc<Protocol>,
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
            protocol: Arc::new(Protocol {
                mutex: RawMutex::new(),
                writer: RawMutex::new(),
                registry: UnsafeCell::new(Vec::new()),
                barriers,
            }),
        }
    }

    /// The barriers this lock uses.
    pub fn barriers(&self) -> Barriers {
        self.protocol.barriers
    }

    /// Makes the calling thread a participant. Blocks while an exclusive section is in progress.
    pub fn register(&self) -> Participant {
        let flags = Arc::new(ThreadFlags::default());
        let protocol = &self.protocol;
        protocol.mutex.lock();
        // SAFETY: the mutex is held until the unlock below.
        unsafe {
            protocol.with_registry(|registry| registry.push(flags.clone()));
            protocol.mutex.unlock();
        }
        Participant {
            protocol: self.protocol.clone(),
            flags,
            depth: Cell::new(0),
            exclusive: Cell::new(false),
            barriers: protocol.barriers,
            _not_send: PhantomData,
        }
    }

    /// Number of registered participants.
    pub fn participants(&self) -> usize {
        let protocol = &self.protocol;
        protocol.mutex.lock();
        // SAFETY: the mutex is held until the unlock below.
        unsafe {
            let n = protocol.with_registry(|registry| registry.len());
            protocol.mutex.unlock();
            n
        }
    }
}

/// One thread's membership in a [`BusyForbidden`] lock. Not `Send`: its flags belong to the
/// thread that registered it.
pub struct Participant {
    protocol: Arc<Protocol>,
    flags: Arc<ThreadFlags>,
    /// Nesting depth of shared sections; only the owner thread reads or writes it.
    depth: Cell<u32>,
    /// True from `enter_exclusive` to `leave_exclusive` (this thread then holds the mutex).
    exclusive: Cell<bool>,
    barriers: Barriers,
    _not_send: PhantomData<*const ()>,
}

impl Participant {
    /// Enters a (possibly nested) shared section. Returns once no thread is exclusive.
    #[inline]
    pub fn enter_shared(&self) {
        let depth = self.depth.get();
        if depth > 0 {
            self.depth.set(depth + 1);
            return;
        }
        debug_assert!(
            !self.exclusive.get(),
            "shared section requested inside this thread's exclusive section"
        );
        // Ordering: Relaxed; the barrier below orders it before the load of `forbidden`.
        self.flags.busy.store(true, Ordering::Relaxed);
        self.barriers.light();
        // Ordering: Acquire; reading `false` written by `leave_exclusive` (Release) makes the
        // previous exclusive section's writes visible in this shared section.
        while self.flags.forbidden.load(Ordering::Acquire) {
            self.back_off();
        }
        self.depth.set(1);
    }

    #[cold]
    fn back_off(&self) {
        // Ordering: Relaxed; nothing was done inside the section that needs publishing.
        self.flags.busy.store(false, Ordering::Relaxed);
        // Waits (a while) for the writer to leave its exclusive section.
        if self.protocol.writer.try_lock_for_a_while() {
            // SAFETY: `try_lock_for_a_while` returned true, so this thread holds the mutex.
            unsafe { self.protocol.writer.unlock() };
        }
        // Ordering: Relaxed, as in `enter_shared`; the caller reloads `forbidden`.
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
    pub fn shared(&self) -> SharedGuard<'_> {
        self.enter_shared();
        SharedGuard { participant: self }
    }

    /// Enters the exclusive section: returns once no other thread is in a shared or exclusive
    /// section. Must not be called inside a shared section, nor twice without leaving.
    pub fn enter_exclusive(&self) {
        assert_eq!(
            self.depth.get(),
            0,
            "exclusive section requested inside a shared section (would deadlock)"
        );
        assert!(!self.exclusive.get(), "exclusive section entered twice");
        let protocol = &*self.protocol;
        protocol.writer.lock();
        loop {
            protocol.mutex.lock();
            // SAFETY: this thread holds the mutex for the call.
            if unsafe { protocol.with_registry(|registry| forbid_all(registry, &self.barriers)) } {
                // Keep the mutex (and so the registry) until `leave_exclusive`.
                break;
            }
            // Let threads join or leave while the busy ones finish their shared sections.
            // SAFETY: taken at the top of this iteration.
            unsafe { protocol.mutex.unlock() };
            shim::spin_wait();
        }
        self.exclusive.set(true);
    }

    /// Leaves the exclusive section.
    pub fn leave_exclusive(&self) {
        assert!(
            self.exclusive.get(),
            "leave_exclusive without enter_exclusive"
        );
        let protocol = &*self.protocol;
        // SAFETY: `exclusive` is true, so this thread holds both mutexes (taken in
        // `enter_exclusive`); it releases them here, after the last access to the registry.
        unsafe {
            protocol.with_registry(|registry| {
                for flags in registry.iter() {
                    // Ordering: Release; a reader that loads this `false` (Acquire) sees every
                    // write of the exclusive section.
                    flags.forbidden.store(false, Ordering::Release);
                }
            });
            self.exclusive.set(false);
            protocol.mutex.unlock();
            protocol.writer.unlock();
        }
    }

    /// True while this thread holds the exclusive section.
    pub fn is_exclusive(&self) -> bool {
        self.exclusive.get()
    }

    /// Enters the exclusive section for the lifetime of the returned guard.
    pub fn exclusive(&self) -> ExclusiveGuard<'_> {
        self.enter_exclusive();
        ExclusiveGuard { participant: self }
    }
}

/// One pass of `enter_exclusive`: forbids every thread; true if then none is busy, otherwise
/// withdraws the prohibitions and returns false (the caller waits and tries again).
fn forbid_all(registry: &[Arc<ThreadFlags>], barriers: &Barriers) -> bool {
    for flags in registry {
        // Ordering: Relaxed; only the mutex holder writes `forbidden`, and the heavy
        // barrier below orders this store before the loads of `busy`.
        flags.forbidden.store(true, Ordering::Relaxed);
    }
    barriers.heavy();
    if cfg!(feature = "mutant") {
        // MUTANT (loom-tests only): trusts the prohibition without re-checking `busy`,
        // so a thread already inside its shared section is overlooked.
        return true;
    }
    // Ordering: Acquire; reading `false` written by `leave_shared` (Release) makes that
    // thread's shared section happen before this exclusive section.
    if !registry
        .iter()
        .any(|flags| flags.busy.load(Ordering::Acquire))
    {
        return true;
    }
    // Some thread is inside a shared section (or entering one). Withdraw every prohibition
    // while we wait for it: a thread that stays busy must not keep the others out of their
    // shared sections (property 3 of §5.2.3: shared entry is refused only while a thread is
    // *in* the exclusive section).
    for flags in registry {
        // Ordering: Relaxed; nothing was written under the prohibition.
        flags.forbidden.store(false, Ordering::Relaxed);
    }
    false
}

impl Drop for Participant {
    fn drop(&mut self) {
        if self.exclusive.get() {
            self.leave_exclusive();
        }
        if self.depth.get() > 0 {
            // Only a thread unwinding out of its shared section gets here (guards borrow the
            // participant, so they are gone; a panic skipped a `leave_shared`).
            debug_assert!(
                std::thread::panicking(),
                "participant dropped inside a shared section"
            );
            self.depth.set(0);
            // Ordering: Release, as in `leave_shared`.
            self.flags.busy.store(false, Ordering::Release);
        }
        if cfg!(loom) && std::thread::panicking() {
            // A failing loom model unwinds; locking loom's mutex then would abort the report.
            return;
        }
        let protocol = &*self.protocol;
        protocol.mutex.lock();
        // SAFETY: the mutex is held until the unlock below.
        unsafe {
            protocol.with_registry(|registry| {
                registry.retain(|flags| !Arc::ptr_eq(flags, &self.flags))
            });
            protocol.mutex.unlock();
        }
    }
}

/// A shared section, left when dropped.
pub struct SharedGuard<'p> {
    participant: &'p Participant,
}

impl Drop for SharedGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.participant.leave_shared();
    }
}

/// The exclusive section, left when dropped.
pub struct ExclusiveGuard<'p> {
    participant: &'p Participant,
}

impl Drop for ExclusiveGuard<'_> {
    fn drop(&mut self) {
        self.participant.leave_exclusive();
    }
}
