//! A thread's use of a term table: its protection set and the protected [`Term`] handle.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::Ordering as StdOrdering;
use std::sync::Arc;

use super::node::{Node, TermId, TermRef};
use super::symbol::Symbol;
use super::table::{ProtectionSet, TermTable};
use crate::sync::shim::{self, AtomicPtr, Ordering, UnsafeCell};
use crate::sync::{BusyForbidden, SectionLock};

/// Insertions a thread counts locally before it updates the table's countdown.
const INSERT_BATCH: u32 = 64;
/// Creations a thread counts locally before it adds them to the table's statistics.
const STATS_BATCH: u64 = 4096;

/// One thread's access to a [`TermTable`]: its membership in the table's lock and its
/// protection set. Neither `Send` nor `Sync`, whatever the lock: create one per thread with
/// [`TermTable::register_thread`].
pub struct TermThread<L: SectionLock = BusyForbidden> {
    table: Arc<TermTable<L>>,
    member: L::Member,
    protection: Arc<ProtectionSet>,
    /// Free slots of the protection set; only this thread uses it.
    free_slots: RefCell<Vec<u32>>,
    unflushed_inserts: Cell<u32>,
    unflushed_creations: Cell<u64>,
    unflushed_hits: Cell<u64>,
    /// Keeps the type on its thread even for locks whose membership could move (parking_lot's,
    /// the unsynchronised one): a thread's protection set and lock membership are its own.
    _not_send: PhantomData<*const ()>,
}

impl<L: SectionLock> TermTable<L> {
    /// Makes the calling thread a user of the table.
    pub fn register_thread(self: &Arc<Self>) -> TermThread<L> {
        TermThread::new(self.clone())
    }
}

impl<L: SectionLock> TermThread<L> {
    fn new(table: Arc<TermTable<L>>) -> TermThread<L> {
        let member = table.lock.join();
        let protection = Arc::new(ProtectionSet {
            slots: UnsafeCell::new(Vec::new()),
        });
        shim::lock(&table.protection_sets).push(protection.clone());
        TermThread {
            table,
            member,
            protection,
            free_slots: RefCell::new(Vec::new()),
            unflushed_inserts: Cell::new(0),
            unflushed_creations: Cell::new(0),
            unflushed_hits: Cell::new(0),
            _not_send: PhantomData,
        }
    }

    /// The table this thread uses.
    pub fn table(&self) -> &Arc<TermTable<L>> {
        &self.table
    }

    /// The term `symbol(args)`, protected for as long as the handle lives. Panics if the
    /// number of arguments differs from the symbol's arity.
    #[inline]
    pub fn create(&self, symbol: Symbol, args: &[TermRef<'_>]) -> Term<'_, L> {
        let payload = payload_of(symbol, args);
        self.create_with_payload(symbol, payload)
    }

    /// The constant `symbol` (arity 0).
    #[inline]
    pub fn constant(&self, symbol: Symbol) -> Term<'_, L> {
        self.create(symbol, &[])
    }

    /// The integer term with value `value`.
    #[inline]
    pub fn int(&self, value: i64) -> Term<'_, L> {
        self.create_with_payload(Symbol::int(), &[value as usize])
    }

    #[inline]
    fn create_with_payload(&self, symbol: Symbol, payload: &[usize]) -> Term<'_, L> {
        L::enter_shared(&self.member);
        let (node, found) = self.table.find_or_insert(symbol, payload);
        let slot = self.protect_inside_section(node);
        self.count_creation(found);
        self.leave_shared();
        Term {
            node,
            slot,
            thread: self,
        }
    }

    /// Protects `term` again: a second handle, independent of the first.
    pub fn protect(&self, term: TermRef<'_>) -> Term<'_, L> {
        L::enter_shared(&self.member);
        let node = term.id().node_ptr();
        let slot = self.protect_inside_section(node);
        self.leave_shared();
        Term {
            node,
            slot,
            thread: self,
        }
    }

    /// Enters a shared section for the lifetime of the guard. Creations inside it skip the
    /// handshake (sections nest); keep it short, since it holds off garbage collection, and
    /// never wait on another thread while holding it.
    pub fn shared_section(&self) -> SharedSection<'_, L> {
        L::enter_shared(&self.member);
        SharedSection { thread: self }
    }

    /// Runs a garbage collection now (and grows the table if needed). Must not be called
    /// inside a shared section.
    pub fn collect_garbage(&self) {
        self.collect_reserving(0);
    }

    /// Runs a garbage collection now and grows the table so that it holds, besides the live
    /// terms, at least `reserve` insertions before the next collection (for a construction
    /// that gave up for the table to grow and runs again, see `csp::process::growth`). Must
    /// not be called inside a shared section.
    pub fn collect_reserving(&self, reserve: usize) {
        self.flush_counts();
        L::enter_exclusive(&self.member);
        self.table
            .collection_requested
            .store(false, StdOrdering::Relaxed);
        self.table.collect_exclusive_reserving(reserve);
        L::leave_exclusive(&self.member);
    }

    #[inline]
    fn leave_shared(&self) {
        // Ordering: Relaxed; a hint (see `TermTable::collection_requested`).
        if L::leave_shared(&self.member)
            && self.table.collection_requested.load(StdOrdering::Relaxed)
        {
            self.collect_requested();
        }
    }

    #[cold]
    fn collect_requested(&self) {
        L::enter_exclusive(&self.member);
        // Ordering: Relaxed; the exclusive section serialises the collectors.
        if self
            .table
            .collection_requested
            .swap(false, StdOrdering::Relaxed)
        {
            self.table.collect_exclusive();
        }
        L::leave_exclusive(&self.member);
    }

    /// Puts `node` in a slot of the protection set. Inside a shared section only: the vector may
    /// grow, which the collector must not see half-done.
    #[inline]
    fn protect_inside_section(&self, node: NonNull<Node>) -> u32 {
        if let Some(slot) = self.free_slots.borrow_mut().pop() {
            self.protection.slots.with(|slots| {
                // SAFETY: only this thread changes the vector; we only read its buffer here.
                let slots = unsafe { &*slots };
                // Ordering: Relaxed; the protocol orders this shared section with collections.
                slots[slot as usize].store(node.as_ptr(), Ordering::Relaxed);
            });
            return slot;
        }
        self.protection.slots.with_mut(|slots| {
            // SAFETY: inside a shared section (the caller's contract), so no collector reads
            // the vector while it grows; only this thread changes it.
            let slots = unsafe { &mut *slots };
            slots.push(AtomicPtr::new(node.as_ptr()));
            u32::try_from(slots.len() - 1).expect("more than 2^32 protected terms in one thread")
        })
    }

    /// Frees a slot. Needs no section: the collector either sees the old value (the term
    /// survives one more collection) or null (the thread no longer holds it through this slot).
    #[inline]
    fn unprotect(&self, slot: u32) {
        self.protection.slots.with(|slots| {
            // SAFETY: only this thread changes the vector; we only read its buffer here.
            let slots = unsafe { &*slots };
            // Ordering: Relaxed; see above.
            slots[slot as usize].store(std::ptr::null_mut(), Ordering::Relaxed);
        });
        self.free_slots.borrow_mut().push(slot);
    }

    #[inline]
    fn count_creation(&self, found: bool) {
        let creations = self.unflushed_creations.get() + 1;
        self.unflushed_creations.set(creations);
        if found {
            self.unflushed_hits.set(self.unflushed_hits.get() + 1);
        } else {
            let inserts = self.unflushed_inserts.get() + 1;
            self.unflushed_inserts.set(inserts);
            if inserts == INSERT_BATCH {
                self.flush_inserts();
            }
        }
        if creations == STATS_BATCH {
            self.flush_statistics();
        }
    }

    fn flush_inserts(&self) {
        let n = self.unflushed_inserts.replace(0) as i64;
        // Ordering (all): Relaxed; counters and a hint, no data is published through them.
        self.table
            .inserted
            .fetch_add(n as u64, StdOrdering::Relaxed);
        if self.table.countdown.fetch_sub(n, StdOrdering::Relaxed) <= n {
            self.table
                .collection_requested
                .store(true, StdOrdering::Relaxed);
        }
    }

    fn flush_statistics(&self) {
        // Ordering (both): Relaxed; statistics.
        self.table
            .creations
            .fetch_add(self.unflushed_creations.replace(0), StdOrdering::Relaxed);
        self.table
            .hits
            .fetch_add(self.unflushed_hits.replace(0), StdOrdering::Relaxed);
    }

    /// Adds this thread's pending counts to the table's.
    pub fn flush_counts(&self) {
        self.flush_inserts();
        self.flush_statistics();
    }

    /// Number of terms this thread protects right now.
    pub fn protected_count(&self) -> usize {
        let total = self.protection.slots.with(|slots| {
            // SAFETY: only this thread changes the vector.
            unsafe { (*slots).len() }
        });
        total - self.free_slots.borrow().len()
    }
}

impl<L: SectionLock> Drop for TermThread<L> {
    fn drop(&mut self) {
        self.flush_counts();
        let mine = &self.protection;
        shim::lock(&self.table.protection_sets).retain(|set| !Arc::ptr_eq(set, mine));
    }
}

/// A shared section of a [`TermThread`], left when dropped (see
/// [`TermThread::shared_section`]).
pub struct SharedSection<'t, L: SectionLock = BusyForbidden> {
    thread: &'t TermThread<L>,
}

impl<'t, L: SectionLock> SharedSection<'t, L> {
    /// The term `symbol(args)`, found or inserted, *without* protecting it: it stays valid
    /// while this section lasts (no collection can run meanwhile). The second component is true
    /// when this call inserted the term (it was not in the table). Callers that keep the term
    /// past the section must store it in a registered [`RootSet`](super::RootSet) before the
    /// section ends. Panics if the number of arguments differs from the symbol's arity.
    #[inline]
    pub fn create(&self, symbol: Symbol, args: &[TermRef<'_>]) -> (TermRef<'_>, bool) {
        let payload = payload_of(symbol, args);
        let (node, found) = self.thread.table.find_or_insert(symbol, payload);
        self.thread.count_creation(found);
        // SAFETY: the node is published; no collection runs before this section ends, and the
        // reference borrows the section.
        (unsafe { TermRef::from_node(node) }, !found)
    }

    /// The integer term `value`, unprotected, valid while this section lasts.
    #[inline]
    pub fn int(&self, value: i64) -> TermRef<'_> {
        let (node, found) = self
            .thread
            .table
            .find_or_insert(Symbol::int(), &[value as usize]);
        self.thread.count_creation(found);
        // SAFETY: as in `create`.
        unsafe { TermRef::from_node(node) }
    }

    /// The term `id` stands for, borrowed for this section.
    ///
    /// # Safety
    /// The term must be alive when the section starts: protected by some thread, or held by a
    /// registered root set (and not yet collected). It then stays alive for the section.
    #[inline]
    pub unsafe fn term(&self, id: TermId) -> TermRef<'_> {
        // SAFETY: forwarded from the caller; no collection runs during the section.
        unsafe { id.get() }
    }
}

impl<L: SectionLock> Drop for SharedSection<'_, L> {
    #[inline]
    fn drop(&mut self) {
        self.thread.leave_shared();
    }
}

/// A protected term: it stays at its address with its contents while the handle lives.
/// Dropping the handle releases its slot in the owning thread's protection set.
pub struct Term<'t, L: SectionLock = BusyForbidden> {
    node: NonNull<Node>,
    slot: u32,
    thread: &'t TermThread<L>,
}

impl<L: SectionLock> Term<'_, L> {
    /// The term, borrowed for as long as this handle.
    #[inline]
    pub fn as_ref(&self) -> TermRef<'_> {
        // SAFETY: the handle protects the node for as long as it is borrowed.
        unsafe { TermRef::from_node(self.node) }
    }

    /// The function symbol.
    #[inline]
    pub fn symbol(&self) -> Symbol {
        self.as_ref().symbol()
    }

    /// The `i`-th argument.
    #[inline]
    pub fn arg(&self, i: usize) -> TermRef<'_> {
        self.as_ref().arg(i)
    }

    /// The value of an integer term.
    #[inline]
    pub fn int_value(&self) -> Option<i64> {
        self.as_ref().int_value()
    }
}

impl<L: SectionLock> Drop for Term<'_, L> {
    #[inline]
    fn drop(&mut self) {
        self.thread.unprotect(self.slot);
    }
}

impl<L: SectionLock> Clone for Term<'_, L> {
    fn clone(&self) -> Self {
        self.thread.protect(self.as_ref())
    }
}

impl<L: SectionLock> PartialEq for Term<'_, L> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

impl<L: SectionLock> Eq for Term<'_, L> {}

impl<L: SectionLock> Hash for Term<'_, L> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_ref().hash(state);
    }
}

impl<L: SectionLock> fmt::Display for Term<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_ref(), f)
    }
}

impl<L: SectionLock> fmt::Debug for Term<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_ref(), f)
    }
}

/// The payload of `symbol(args)`: its arguments' addresses. Panics if the number of arguments
/// differs from the symbol's arity, or for the integer symbol.
#[inline]
fn payload_of<'a>(symbol: Symbol, args: &'a [TermRef<'_>]) -> &'a [usize] {
    assert_eq!(
        symbol.arity(),
        args.len(),
        "{} takes {} arguments",
        symbol.name(),
        symbol.arity()
    );
    assert!(!symbol.is_int(), "integer terms are made with `int`");
    // SAFETY: `TermRef` is `repr(transparent)` over `NonNull<Node>`, which has the size and
    // alignment of `usize`; the payload of a term is its arguments' addresses.
    unsafe { std::slice::from_raw_parts(args.as_ptr() as *const usize, args.len()) }
}
