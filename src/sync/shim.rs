//! The primitives the protocol is written with: std's (and parking_lot's) normally, loom's
//! under `cfg(loom)`, so that the code loom model-checks is the code that runs.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    compiler_fence, fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

/// The protocol's mutex: a raw lock (no guard object), so that a participant can hold it from
/// `enter_exclusive` to `leave_exclusive` without borrowing from itself.
#[cfg(not(loom))]
pub(crate) struct RawMutex(parking_lot::RawMutex);

#[cfg(not(loom))]
impl std::fmt::Debug for RawMutex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RawMutex")
    }
}

#[cfg(not(loom))]
impl RawMutex {
    pub(crate) fn new() -> Self {
        RawMutex(<parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT)
    }

    pub(crate) fn lock(&self) {
        <parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::lock(&self.0);
    }

    /// # Safety
    /// The calling context must hold the lock (taken by `lock` or a successful `try_lock_for`).
    pub(crate) unsafe fn unlock(&self) {
        // SAFETY: forwarded from the caller's contract.
        unsafe { <parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::unlock(&self.0) }
    }

    /// Waits a little for the mutex; true when it was acquired (the caller must unlock it).
    /// This is the timed lock of Table 5.2: it affects speed, not safety.
    pub(crate) fn try_lock_for_a_while(&self) -> bool {
        <parking_lot::RawMutex as parking_lot::lock_api::RawMutexTimed>::try_lock_for(
            &self.0,
            std::time::Duration::from_micros(50),
        )
    }
}

/// The protocol's mutex under loom: a flag under a loom mutex, waited for on a loom condition
/// variable. A waiter blocks instead of spinning: loom's scheduler is not fair to a thread
/// that yields, so a spinning waiter could starve the holder and report a livelock that no
/// real machine has.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct RawMutex {
    locked: loom::sync::Mutex<bool>,
    unlocked: loom::sync::Condvar,
}

#[cfg(loom)]
impl RawMutex {
    pub(crate) fn new() -> Self {
        RawMutex {
            locked: loom::sync::Mutex::new(false),
            unlocked: loom::sync::Condvar::new(),
        }
    }

    pub(crate) fn lock(&self) {
        let mut locked = lock(&self.locked);
        while *locked {
            locked = self
                .unlocked
                .wait(locked)
                .unwrap_or_else(|e| e.into_inner());
        }
        *locked = true;
    }

    fn try_lock(&self) -> bool {
        let mut locked = lock(&self.locked);
        !std::mem::replace(&mut *locked, true)
    }

    /// # Safety
    /// The calling context must hold the lock.
    pub(crate) unsafe fn unlock(&self) {
        *lock(&self.locked) = false;
        self.unlocked.notify_one();
    }

    pub(crate) fn try_lock_for_a_while(&self) -> bool {
        let got = self.try_lock();
        spin_wait();
        got
    }
}

/// A mutex for registries read inside exclusive sections (loom's under `cfg(loom)`, since a
/// loom thread may be preempted while holding it).
#[cfg(not(loom))]
pub(crate) type Mutex<T> = parking_lot::Mutex<T>;
#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
#[cfg(loom)]
pub(crate) type Mutex<T> = loom::sync::Mutex<T>;
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

/// Locks `mutex`.
#[cfg(not(loom))]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock()
}
/// Locks `mutex`.
#[cfg(loom)]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One turn of a busy-wait loop.
#[cfg(not(loom))]
pub(crate) fn spin_wait() {
    std::thread::yield_now();
}
/// Under loom a spinning thread may read a stale value forever (loom's relaxed loads need
/// not ever see newer stores), which shows up as a livelock that no real machine has; the
/// fence makes each turn of a spin loop observe the stores that precede it in loom's order.
#[cfg(loom)]
pub(crate) fn spin_wait() {
    fence(Ordering::SeqCst);
    loom::thread::yield_now();
}

/// Cell for data that the protocol itself guards (loom checks its accesses for races).
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// Cell for data that the protocol itself guards, with loom's `with`/`with_mut` interface.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a mutable pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
