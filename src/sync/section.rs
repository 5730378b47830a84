//! Readers-writer locks behind one interface, so that the term table can be measured with each
//! (the comparison of Figure 5.4): the busy-forbidden protocol, parking_lot's and std's
//! `RwLock`, and no lock at all for the single-threaded baseline.
//!
//! Every implementation supports nested shared sections per thread.

use std::cell::{Cell, RefCell};

use super::busy_forbidden::{BusyForbidden, Participant};

/// A readers-writer lock that threads join explicitly. Shared sections nest; the exclusive
/// section does not, and must not be requested inside a shared one.
pub trait SectionLock: Sync + Send + Default {
    /// Short name used in benchmark output.
    const NAME: &'static str;

    /// A thread's membership in the lock.
    type Member<'a>
    where
        Self: 'a;

    /// Makes the calling thread a member.
    fn join(&self) -> Self::Member<'_>;
    /// Enters a (nested) shared section.
    fn enter_shared(member: &Self::Member<'_>);
    /// Leaves a shared section; true when the thread is now outside all of them.
    fn leave_shared(member: &Self::Member<'_>) -> bool;
    /// Enters the exclusive section.
    fn enter_exclusive(member: &Self::Member<'_>);
    /// Leaves the exclusive section.
    fn leave_exclusive(member: &Self::Member<'_>);
}

impl SectionLock for BusyForbidden {
    const NAME: &'static str = "bf";
    type Member<'a> = Participant<'a>;

    fn join(&self) -> Participant<'_> {
        self.register()
    }
    #[inline(always)]
    fn enter_shared(member: &Participant<'_>) {
        member.enter_shared();
    }
    #[inline(always)]
    fn leave_shared(member: &Participant<'_>) -> bool {
        member.leave_shared()
    }
    fn enter_exclusive(member: &Participant<'_>) {
        member.enter_exclusive();
    }
    fn leave_exclusive(member: &Participant<'_>) {
        member.leave_exclusive();
    }
}

/// parking_lot's `RwLock` (a word-sized lock with an atomic read-modify-write per entry).
#[derive(Default)]
pub struct ParkingLotRwLock(parking_lot::RwLock<()>);

/// Membership in a [`ParkingLotRwLock`]: holds the guard of the outermost section.
pub struct ParkingLotMember<'a> {
    lock: &'a parking_lot::RwLock<()>,
    depth: Cell<u32>,
    read: RefCell<Option<parking_lot::RwLockReadGuard<'a, ()>>>,
    write: RefCell<Option<parking_lot::RwLockWriteGuard<'a, ()>>>,
}

impl SectionLock for ParkingLotRwLock {
    const NAME: &'static str = "rwlock-pl";
    type Member<'a> = ParkingLotMember<'a>;

    fn join(&self) -> ParkingLotMember<'_> {
        ParkingLotMember {
            lock: &self.0,
            depth: Cell::new(0),
            read: RefCell::new(None),
            write: RefCell::new(None),
        }
    }
    #[inline]
    fn enter_shared(m: &ParkingLotMember<'_>) {
        let d = m.depth.get();
        if d == 0 {
            *m.read.borrow_mut() = Some(m.lock.read());
        }
        m.depth.set(d + 1);
    }
    #[inline]
    fn leave_shared(m: &ParkingLotMember<'_>) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        if d == 0 {
            m.read.borrow_mut().take();
        }
        d == 0
    }
    fn enter_exclusive(m: &ParkingLotMember<'_>) {
        *m.write.borrow_mut() = Some(m.lock.write());
    }
    fn leave_exclusive(m: &ParkingLotMember<'_>) {
        m.write.borrow_mut().take();
    }
}

/// std's `RwLock` (the analogue of C++'s `std::shared_mutex` in the thesis's measurements).
#[derive(Default)]
pub struct StdRwLock(std::sync::RwLock<()>);

/// Membership in a [`StdRwLock`]: holds the guard of the outermost section.
pub struct StdMember<'a> {
    lock: &'a std::sync::RwLock<()>,
    depth: Cell<u32>,
    read: RefCell<Option<std::sync::RwLockReadGuard<'a, ()>>>,
    write: RefCell<Option<std::sync::RwLockWriteGuard<'a, ()>>>,
}

impl SectionLock for StdRwLock {
    const NAME: &'static str = "rwlock-std";
    type Member<'a> = StdMember<'a>;

    fn join(&self) -> StdMember<'_> {
        StdMember {
            lock: &self.0,
            depth: Cell::new(0),
            read: RefCell::new(None),
            write: RefCell::new(None),
        }
    }
    #[inline]
    fn enter_shared(m: &StdMember<'_>) {
        let d = m.depth.get();
        if d == 0 {
            // A poisoned lock guards `()`: there is no state a panic could have broken.
            *m.read.borrow_mut() = Some(m.lock.read().unwrap_or_else(|e| e.into_inner()));
        }
        m.depth.set(d + 1);
    }
    #[inline]
    fn leave_shared(m: &StdMember<'_>) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        if d == 0 {
            m.read.borrow_mut().take();
        }
        d == 0
    }
    fn enter_exclusive(m: &StdMember<'_>) {
        *m.write.borrow_mut() = Some(m.lock.write().unwrap_or_else(|e| e.into_inner()));
    }
    fn leave_exclusive(m: &StdMember<'_>) {
        m.write.borrow_mut().take();
    }
}

/// No synchronisation: the single-threaded baseline. A second member is refused (panics),
/// since two threads would race.
#[derive(Default)]
pub struct Unsynchronised {
    joined: std::sync::atomic::AtomicBool,
}

/// Membership in [`Unsynchronised`]: only the nesting counter.
pub struct UnsynchronisedMember<'a> {
    owner: &'a Unsynchronised,
    depth: Cell<u32>,
}

impl Drop for UnsynchronisedMember<'_> {
    fn drop(&mut self) {
        // Ordering: Release; a later member on another thread sees everything this one did.
        self.owner
            .joined
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

impl SectionLock for Unsynchronised {
    const NAME: &'static str = "sequential";
    type Member<'a> = UnsynchronisedMember<'a>;

    fn join(&self) -> UnsynchronisedMember<'_> {
        // Ordering: Acquire, pairs with the Release in the previous member's drop.
        let taken = self.joined.swap(true, std::sync::atomic::Ordering::Acquire);
        assert!(
            !taken,
            "the unsynchronised lock admits one member at a time"
        );
        UnsynchronisedMember {
            owner: self,
            depth: Cell::new(0),
        }
    }
    #[inline(always)]
    fn enter_shared(m: &UnsynchronisedMember<'_>) {
        m.depth.set(m.depth.get() + 1);
    }
    #[inline(always)]
    fn leave_shared(m: &UnsynchronisedMember<'_>) -> bool {
        let d = m.depth.get() - 1;
        m.depth.set(d);
        d == 0
    }
    fn enter_exclusive(_: &UnsynchronisedMember<'_>) {}
    fn leave_exclusive(_: &UnsynchronisedMember<'_>) {}
}
