//! Readers-writer locks behind one interface, so that the term table can be measured with each
//! (the comparison of Figure 5.4): the busy-forbidden protocol, parking_lot's and std's
//! `RwLock`, and no lock at all for the single-threaded baseline.
//!
//! Every implementation supports nested shared sections per thread.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use parking_lot::lock_api::RawRwLock as RawRwLockApi;

use super::busy_forbidden::{BusyForbidden, Participant};

/// A readers-writer lock that threads join explicitly. Shared sections nest; the exclusive
/// section does not, and must not be requested inside a shared one.
pub trait SectionLock: Sync + Send + Default + 'static {
    /// Short name used in benchmark output.
    const NAME: &'static str;

    /// A thread's membership in the lock.
    type Member;

    /// Makes the calling thread a member.
    fn join(&self) -> Self::Member;
    /// Enters a (nested) shared section.
    fn enter_shared(member: &Self::Member);
    /// Leaves a shared section; true when the thread is now outside all of them.
    fn leave_shared(member: &Self::Member) -> bool;
    /// Enters the exclusive section.
    fn enter_exclusive(member: &Self::Member);
    /// Leaves the exclusive section.
    fn leave_exclusive(member: &Self::Member);
}

impl SectionLock for BusyForbidden {
    const NAME: &'static str = "bf";
    type Member = Participant;

    fn join(&self) -> Participant {
        self.register()
    }
    #[inline(always)]
    fn enter_shared(member: &Participant) {
        member.enter_shared();
    }
    #[inline(always)]
    fn leave_shared(member: &Participant) -> bool {
        member.leave_shared()
    }
    fn enter_exclusive(member: &Participant) {
        member.enter_exclusive();
    }
    fn leave_exclusive(member: &Participant) {
        member.leave_exclusive();
    }
}

/// parking_lot's `RwLock` (one word; an atomic read-modify-write on every entry and exit).
pub struct ParkingLotRwLock(Arc<parking_lot::RawRwLock>);

impl Default for ParkingLotRwLock {
    fn default() -> Self {
        ParkingLotRwLock(Arc::new(<parking_lot::RawRwLock as RawRwLockApi>::INIT))
    }
}

/// Membership in a [`ParkingLotRwLock`].
pub struct ParkingLotMember {
    lock: Arc<parking_lot::RawRwLock>,
    depth: Cell<u32>,
}

impl SectionLock for ParkingLotRwLock {
    const NAME: &'static str = "rwlock-pl";
    type Member = ParkingLotMember;

    fn join(&self) -> ParkingLotMember {
        ParkingLotMember {
            lock: self.0.clone(),
            depth: Cell::new(0),
        }
    }
    #[inline]
    fn enter_shared(m: &ParkingLotMember) {
        let d = m.depth.get();
        if d == 0 {
            <parking_lot::RawRwLock as RawRwLockApi>::lock_shared(&m.lock);
        }
        m.depth.set(d + 1);
    }
    #[inline]
    fn leave_shared(m: &ParkingLotMember) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        if d == 0 {
            // SAFETY: depth went from 1 to 0, so this member holds the shared lock taken by
            // the outermost `enter_shared`.
            unsafe { <parking_lot::RawRwLock as RawRwLockApi>::unlock_shared(&m.lock) };
        }
        d == 0
    }
    fn enter_exclusive(m: &ParkingLotMember) {
        <parking_lot::RawRwLock as RawRwLockApi>::lock_exclusive(&m.lock);
    }
    fn leave_exclusive(m: &ParkingLotMember) {
        // SAFETY: callers pair this with `enter_exclusive` on the same member.
        unsafe { <parking_lot::RawRwLock as RawRwLockApi>::unlock_exclusive(&m.lock) };
    }
}

/// std's `RwLock` (the analogue of C++'s `std::shared_mutex` in the thesis's measurements).
///
/// std has no raw lock interface, so members keep the guards; the lock itself is leaked to
/// give them a `'static` borrow (one small allocation per lock, made for benchmarks).
pub struct StdRwLock(&'static std::sync::RwLock<()>);

impl Default for StdRwLock {
    fn default() -> Self {
        StdRwLock(Box::leak(Box::default()))
    }
}

/// Membership in a [`StdRwLock`]: holds the guard of the outermost section.
pub struct StdMember {
    lock: &'static std::sync::RwLock<()>,
    depth: Cell<u32>,
    read: RefCell<Option<std::sync::RwLockReadGuard<'static, ()>>>,
    write: RefCell<Option<std::sync::RwLockWriteGuard<'static, ()>>>,
}

impl SectionLock for StdRwLock {
    const NAME: &'static str = "rwlock-std";
    type Member = StdMember;

    fn join(&self) -> StdMember {
        StdMember {
            lock: self.0,
            depth: Cell::new(0),
            read: RefCell::new(None),
            write: RefCell::new(None),
        }
    }
    #[inline]
    fn enter_shared(m: &StdMember) {
        let d = m.depth.get();
        if d == 0 {
            // A poisoned lock guards `()`: there is no state a panic could have broken.
            *m.read.borrow_mut() = Some(m.lock.read().unwrap_or_else(|e| e.into_inner()));
        }
        m.depth.set(d + 1);
    }
    #[inline]
    fn leave_shared(m: &StdMember) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        if d == 0 {
            m.read.borrow_mut().take();
        }
        d == 0
    }
    fn enter_exclusive(m: &StdMember) {
        *m.write.borrow_mut() = Some(m.lock.write().unwrap_or_else(|e| e.into_inner()));
    }
    fn leave_exclusive(m: &StdMember) {
        m.write.borrow_mut().take();
    }
}

/// No synchronisation: the single-threaded baseline. A second concurrent member is refused
/// (panics), since two threads would race.
#[derive(Default)]
pub struct Unsynchronised {
    joined: Arc<std::sync::atomic::AtomicBool>,
}

/// Membership in [`Unsynchronised`]: only the nesting counter.
pub struct UnsynchronisedMember {
    joined: Arc<std::sync::atomic::AtomicBool>,
    depth: Cell<u32>,
}

impl Drop for UnsynchronisedMember {
    fn drop(&mut self) {
        // Ordering: Release; a later member on another thread sees everything this one did.
        self.joined
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

impl SectionLock for Unsynchronised {
    const NAME: &'static str = "sequential";
    type Member = UnsynchronisedMember;

    fn join(&self) -> UnsynchronisedMember {
        // Ordering: Acquire, pairs with the Release in the previous member's drop.
        let taken = self.joined.swap(true, std::sync::atomic::Ordering::Acquire);
        assert!(
            !taken,
            "the unsynchronised lock admits one member at a time"
        );
        UnsynchronisedMember {
            joined: self.joined.clone(),
            depth: Cell::new(0),
        }
    }
    #[inline(always)]
    fn enter_shared(m: &UnsynchronisedMember) {
        m.depth.set(m.depth.get() + 1);
    }
    #[inline(always)]
    fn leave_shared(m: &UnsynchronisedMember) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        d == 0
    }
    fn enter_exclusive(_: &UnsynchronisedMember) {}
    fn leave_exclusive(_: &UnsynchronisedMember) {}
}
