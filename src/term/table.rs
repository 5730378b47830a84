//! The global hash-consing table: buckets of intrusive chains, lock-free lookup and insertion
//! inside shared sections (Table 5.1), mark-and-sweep garbage collection and growth inside the
//! exclusive section.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool as StdAtomicBool, AtomicI64, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use super::node::{hash_of, Node, TermId};
use super::symbol::Symbol;
use crate::sync::shim::{self, AtomicPtr, Mutex, Ordering, UnsafeCell};
use crate::sync::{BusyForbidden, SectionLock};

/// Smallest number of buckets, and the fewest insertions between two garbage collections.
#[cfg(not(loom))]
const MIN_BUCKETS: usize = 1 << 12;
/// Under loom every bucket is a modelled atomic: keep the table tiny.
#[cfg(loom)]
const MIN_BUCKETS: usize = 2;

/// Something that holds terms without protecting them one by one (for example the explorer's
/// state index) and reports them to the garbage collector.
///
/// Contract: the container changes only inside shared sections of its table, and
/// `for_each_root` neither enters a section nor blocks on a thread that might be in one.
pub trait RootSet: Send + Sync {
    /// Calls `visit` on every term the container holds.
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId));
}

/// Counters of a term table.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct TermStats {
    /// Terms in the table after the last collection plus those inserted since (approximate
    /// while threads run: per-thread counts are added in batches).
    pub live_terms: u64,
    /// Calls that created a term (found or inserted).
    pub creations: u64,
    /// Creations that found the term already in the table.
    pub hits: u64,
    /// Garbage collections run.
    pub collections: u64,
    /// Seconds spent in garbage collection (including growth of the table).
    pub collection_seconds: f64,
    /// Current number of buckets.
    pub buckets: u64,
}

/// The per-thread protection set: a root set only its owner changes.
pub(crate) struct ProtectionSet {
    /// Protected nodes (null: free slot). The owner grows the vector only inside shared
    /// sections and stores into slots anywhere; the collector reads it in the exclusive section.
    pub(crate) slots: UnsafeCell<Vec<AtomicPtr<Node>>>,
}

// SAFETY: the vector is resized only by its owner inside shared sections and read by others
// only in the exclusive section, which the protocol keeps apart; slots are atomics.
unsafe impl Sync for ProtectionSet {}
// SAFETY: as above.
unsafe impl Send for ProtectionSet {}

/// A thread-safe table of maximally shared terms, guarded by a readers-writer lock `L`
/// (the busy-forbidden protocol by default). Threads use it through a `TermThread` (module
/// `thread`, which adds `register_thread`: this module knows nothing of threads' handles).
pub struct TermTable<L: SectionLock = BusyForbidden> {
    pub(crate) lock: L,
    /// Replaced only in the exclusive section; read in shared sections.
    buckets: UnsafeCell<Box<[AtomicPtr<Node>]>>,
    pub(crate) protection_sets: Mutex<Vec<Arc<ProtectionSet>>>,
    root_sets: Mutex<Vec<(u64, Arc<dyn RootSet>)>>,
    next_root_id: AtomicU64,
    /// Insertions left before the next collection (decremented in per-thread batches).
    pub(crate) countdown: AtomicI64,
    /// Set when the countdown reaches zero; the next thread to leave its shared sections
    /// collects. Ordering: Relaxed everywhere: it is a hint, the collection itself is guarded
    /// by the exclusive section.
    pub(crate) collection_requested: StdAtomicBool,
    live_after_collection: AtomicU64,
    pub(crate) inserted: AtomicU64,
    pub(crate) creations: AtomicU64,
    pub(crate) hits: AtomicU64,
    collections: AtomicU64,
    collection_nanos: AtomicU64,
    bucket_count: AtomicU64,
}

// SAFETY: `buckets` is replaced only in the exclusive section and read only in shared ones;
// everything else is atomic or behind a mutex.
unsafe impl<L: SectionLock> Sync for TermTable<L> {}
// SAFETY: as above; nodes are plain heap memory owned by the table.
unsafe impl<L: SectionLock> Send for TermTable<L> {}

impl<L: SectionLock> Default for TermTable<L> {
    fn default() -> Self {
        TermTable::with_lock(L::default())
    }
}

impl TermTable<BusyForbidden> {
    /// A new, empty table guarded by the busy-forbidden protocol.
    pub fn new() -> Arc<TermTable<BusyForbidden>> {
        Arc::new(TermTable::default())
    }
}

fn empty_buckets(n: usize) -> Box<[AtomicPtr<Node>]> {
    (0..n)
        .map(|_| AtomicPtr::new(std::ptr::null_mut()))
        .collect()
}

#[inline]
fn bucket_index(hash: u64, len: usize) -> usize {
    (hash as usize) & (len - 1)
}

impl<L: SectionLock> TermTable<L> {
    /// A new, empty table guarded by `lock`.
    pub fn with_lock(lock: L) -> TermTable<L> {
        TermTable {
            lock,
            buckets: UnsafeCell::new(empty_buckets(MIN_BUCKETS)),
            protection_sets: Mutex::new(Vec::new()),
            root_sets: Mutex::new(Vec::new()),
            next_root_id: AtomicU64::new(0),
            countdown: AtomicI64::new(MIN_BUCKETS as i64),
            collection_requested: StdAtomicBool::new(false),
            live_after_collection: AtomicU64::new(0),
            inserted: AtomicU64::new(0),
            creations: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            collections: AtomicU64::new(0),
            collection_nanos: AtomicU64::new(0),
            bucket_count: AtomicU64::new(MIN_BUCKETS as u64),
        }
    }

    /// Registers a container whose terms the collector must keep; it stays registered until
    /// the returned registration is dropped.
    pub fn register_roots(self: &Arc<Self>, roots: Arc<dyn RootSet>) -> RootRegistration<L> {
        // Ordering: Relaxed; only uniqueness matters.
        let id = self
            .next_root_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shim::lock(&self.root_sets).push((id, roots));
        RootRegistration {
            table: self.clone(),
            id,
        }
    }

    /// Garbage collections run so far. A collection runs only in the exclusive section, so
    /// inside a shared section the number does not change; while it stays the same, an address
    /// stands for one term (addresses are freed and reused only by a collection's sweep).
    pub fn collections(&self) -> u64 {
        // Ordering: Relaxed; read inside a shared section, which the busy-forbidden protocol
        // orders after every collection that ended before the section began.
        self.collections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The table's counters (per-thread counts are included when their threads flush them:
    /// every 64 insertions, at a collection, and when a thread's handle is dropped).
    pub fn stats(&self) -> TermStats {
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        // Ordering (all loads): Relaxed; statistics need no synchronisation.
        TermStats {
            live_terms: self.live_after_collection.load(relaxed) + self.inserted.load(relaxed),
            creations: self.creations.load(relaxed),
            hits: self.hits.load(relaxed),
            collections: self.collections.load(relaxed),
            collection_seconds: self.collection_nanos.load(relaxed) as f64 * 1e-9,
            buckets: self.bucket_count.load(relaxed),
        }
    }

    /// Finds the term `symbol(payload)` or inserts it; true in the second component when it
    /// was found. Must be called inside a shared section.
    #[inline]
    pub(crate) fn find_or_insert(
        &self,
        symbol: Symbol,
        payload: &[usize],
    ) -> (NonNull<Node>, bool) {
        let hash = hash_of(symbol, payload);
        self.buckets.with(|buckets| {
            // SAFETY: we are in a shared section, so the bucket array is not being replaced.
            let buckets = unsafe { &*buckets };
            let bucket = &buckets[bucket_index(hash, buckets.len())];
            // Ordering: Acquire; synchronises with the Release CAS that published the head,
            // and through the release sequence of the bucket's CASes with every node below it.
            let mut head = bucket.load(Ordering::Acquire);
            if let Some(found) = find_in_chain(head, std::ptr::null_mut(), symbol, payload) {
                return (found, true);
            }
            let fresh = Node::alloc(symbol, payload, head);
            loop {
                // Ordering: Release publishes the new node's contents to readers that acquire
                // the head; Acquire on failure so that the competing nodes can be read.
                match bucket.compare_exchange(
                    head,
                    fresh.as_ptr(),
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return (fresh, false),
                    Err(current) => {
                        // Someone pushed meanwhile: look only at what they pushed.
                        if let Some(found) = find_in_chain(current, head, symbol, payload) {
                            // SAFETY: `fresh` was never published.
                            unsafe { Node::free(fresh) };
                            return (found, true);
                        }
                        head = current;
                        // SAFETY: `fresh` is still unpublished and ours alone.
                        unsafe { fresh.as_ref() }
                            .next
                            .store(head, Ordering::Relaxed);
                    }
                }
            }
        })
    }

    /// Collects garbage and grows the bucket array if needed. Must run in the exclusive section.
    pub(crate) fn collect_exclusive(&self) {
        self.collect_exclusive_reserving(0);
    }

    /// As [`TermTable::collect_exclusive`], the next collection after at least `reserve`
    /// insertions, with buckets for them.
    pub(crate) fn collect_exclusive_reserving(&self, reserve: usize) {
        let start = Instant::now();
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        self.mark();
        let (live, freed) = self.sweep();
        // The next collection comes after as many insertions as there are live terms (§5.1.3:
        // a constant cost per created term). When this one found little garbage (under a
        // quarter of the terms), as while an explorer keeps every state, it waits three times
        // as long: the cost per term stays constant, with fewer stops of every thread.
        let live_or_min = live.max(MIN_BUCKETS);
        let countdown = if freed * 3 < live {
            3 * live_or_min
        } else {
            live_or_min
        }
        .max(reserve);
        self.grow((live + countdown).next_power_of_two());
        // Ordering (counters): Relaxed; the exclusive section orders them with everything.
        self.live_after_collection.store(live as u64, relaxed);
        self.inserted.store(0, relaxed);
        self.countdown.store(countdown as i64, relaxed);
        self.collections.fetch_add(1, relaxed);
        self.collection_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, relaxed);
    }

    fn mark(&self) {
        let mut stack: Vec<NonNull<Node>> = Vec::new();
        for set in shim::lock(&self.protection_sets).iter() {
            set.slots.with(|slots| {
                // SAFETY: exclusive section: no owner is resizing its vector.
                for slot in unsafe { &*slots }.iter() {
                    // Ordering: Relaxed; protections made in shared sections happen before this
                    // exclusive section (the protocol); an unprotection racing with it either
                    // shows (the term is no longer needed) or not (it survives one more round).
                    if let Some(node) = NonNull::new(slot.load(Ordering::Relaxed)) {
                        stack.push(node);
                    }
                }
            });
        }
        for (_, roots) in shim::lock(&self.root_sets).iter() {
            roots.for_each_root(&mut |id| stack.push(id.node_ptr()));
        }
        while let Some(node) = stack.pop() {
            // SAFETY: every pushed node is reachable from a root, hence live.
            let node = unsafe { node.as_ref() };
            if node.marked.replace(true) || node.symbol.is_int() {
                continue;
            }
            for &word in node.payload() {
                // SAFETY: arguments of a live term are live, non-null terms.
                stack.push(unsafe { NonNull::new_unchecked(word as *mut Node) });
            }
        }
    }

    /// Frees unmarked nodes and clears the marks; returns the numbers of live and freed terms.
    fn sweep(&self) -> (usize, usize) {
        self.buckets.with_mut(|buckets| {
            // SAFETY: exclusive section: no other thread reads or writes the buckets.
            let buckets = unsafe { &mut *buckets };
            let mut live = 0usize;
            let mut freed = 0usize;
            for bucket in buckets.iter() {
                let mut kept: *mut Node = std::ptr::null_mut();
                // Ordering (chain): Relaxed; the exclusive section orders all accesses.
                let mut cursor = bucket.load(Ordering::Relaxed);
                while let Some(node) = NonNull::new(cursor) {
                    // SAFETY: nodes in the table are live until freed here.
                    let n = unsafe { node.as_ref() };
                    cursor = n.next();
                    if n.marked.replace(false) {
                        n.next.store(kept, Ordering::Relaxed);
                        kept = node.as_ptr();
                        live += 1;
                    } else {
                        // SAFETY: unmarked: no root reaches it; unlinked from its chain.
                        unsafe { Node::free(node) };
                        freed += 1;
                    }
                }
                bucket.store(kept, Ordering::Relaxed);
            }
            (live, freed)
        })
    }

    /// Grows the bucket array to `wanted` buckets (a power of two) if it is smaller, so that
    /// the live terms and the insertions until the next collection fit at load factor at most
    /// one. Exclusive section only.
    fn grow(&self, wanted: usize) {
        self.buckets.with_mut(|buckets| {
            // SAFETY: exclusive section: no other thread reads or writes the buckets.
            let buckets = unsafe { &mut *buckets };
            if wanted > buckets.len() {
                let mut survivors: Vec<NonNull<Node>> = Vec::new();
                for bucket in buckets.iter() {
                    let mut cursor = bucket.load(Ordering::Relaxed);
                    while let Some(node) = NonNull::new(cursor) {
                        // SAFETY: live node, as above.
                        cursor = unsafe { node.as_ref() }.next();
                        survivors.push(node);
                    }
                }
                let grown = empty_buckets(wanted);
                for node in survivors {
                    // SAFETY: live node, as above.
                    let n = unsafe { node.as_ref() };
                    let b = &grown[bucket_index(hash_of(n.symbol, n.payload()), wanted)];
                    n.next.store(b.load(Ordering::Relaxed), Ordering::Relaxed);
                    b.store(node.as_ptr(), Ordering::Relaxed);
                }
                *buckets = grown;
                // Ordering: Relaxed; a statistic.
                self.bucket_count
                    .store(wanted as u64, std::sync::atomic::Ordering::Relaxed);
            }
        })
    }
}

/// Looks for `symbol(payload)` in the chain from `from` up to (excluding) `until`.
#[inline]
fn find_in_chain(
    from: *mut Node,
    until: *mut Node,
    symbol: Symbol,
    payload: &[usize],
) -> Option<NonNull<Node>> {
    let mut cursor = from;
    while cursor != until {
        let node = NonNull::new(cursor)?;
        // SAFETY: nodes reachable from a bucket inside a shared section are published and live.
        let n = unsafe { node.as_ref() };
        if n.symbol == symbol && n.payload() == payload {
            return Some(node);
        }
        cursor = n.next();
    }
    None
}

impl<L: SectionLock> Drop for TermTable<L> {
    fn drop(&mut self) {
        self.buckets.with_mut(|buckets| {
            // SAFETY: `&mut self`: no thread uses the table any more.
            for bucket in unsafe { &*buckets }.iter() {
                let mut cursor = bucket.load(Ordering::Relaxed);
                while let Some(node) = NonNull::new(cursor) {
                    // SAFETY: the table owns every node; each is freed once.
                    unsafe {
                        cursor = node.as_ref().next();
                        Node::free(node);
                    }
                }
            }
        });
    }
}

/// Keeps a [`RootSet`] registered with its table; dropping it unregisters the container.
pub struct RootRegistration<L: SectionLock = BusyForbidden> {
    table: Arc<TermTable<L>>,
    id: u64,
}

impl<L: SectionLock> Drop for RootRegistration<L> {
    fn drop(&mut self) {
        shim::lock(&self.table.root_sets).retain(|(id, _)| *id != self.id);
    }
}
