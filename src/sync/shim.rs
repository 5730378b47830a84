//! The primitives the protocol is written with: std's (and parking_lot's) normally, loom's
//! under `cfg(loom)`, so that the code loom model-checks is the code that runs.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicPtr, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

/// The mutex of the protocol; it also guards the registry of participating threads.
#[cfg(not(loom))]
pub(crate) type Mutex<T> = parking_lot::Mutex<T>;
#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
#[cfg(loom)]
pub(crate) type Mutex<T> = loom::sync::Mutex<T>;
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

/// Locks `mutex` (blocking).
#[cfg(not(loom))]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock()
}
#[cfg(loom)]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().expect("loom mutex poisoned")
}

/// Waits a little for `mutex` to become free; true when it was acquired (and released again).
/// This is the timed lock of Table 5.2, used only to back off: it affects speed, not safety.
#[cfg(not(loom))]
pub(crate) fn wait_for_unlock<T>(mutex: &Mutex<T>) -> bool {
    mutex
        .try_lock_for(std::time::Duration::from_micros(50))
        .is_some()
}
#[cfg(loom)]
pub(crate) fn wait_for_unlock<T>(mutex: &Mutex<T>) -> bool {
    let got = mutex.try_lock().is_ok();
    loom::thread::yield_now();
    got
}

/// One turn of a busy-wait loop.
#[cfg(not(loom))]
pub(crate) fn spin_wait() {
    std::thread::yield_now();
}
#[cfg(loom)]
pub(crate) fn spin_wait() {
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
