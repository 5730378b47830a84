//! The memory layout of a term, and the borrowed and raw references to it.
//!
//! A term is one allocation: a header (`Node`) followed by its payload, one word per argument
//! (the argument's address) or, for an integer term, the value. Terms are immutable once
//! published in the table; only `next` (the bucket chain) and `marked` change, and only inside
//! shared sections (`next`, before publication) or the exclusive section (both).

use std::alloc::Layout;
use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::symbol::Symbol;
use crate::hash::WordHasher;
use crate::sync::shim::{AtomicPtr, Ordering};

#[repr(C)]
pub(crate) struct Node {
    /// Next node in the same bucket.
    pub(crate) next: AtomicPtr<Node>,
    pub(crate) symbol: Symbol,
    /// Garbage-collection mark; read and written only in the exclusive section.
    pub(crate) marked: Cell<bool>,
}

const _: () = assert!(std::mem::align_of::<Node>() >= std::mem::align_of::<usize>());

impl Node {
    fn layout(payload_len: usize) -> Layout {
        let (layout, _) = Layout::new::<Node>()
            .extend(Layout::array::<usize>(payload_len).expect("payload size overflow"))
            .expect("term size overflow");
        layout.pad_to_align()
    }

    /// Allocates an unpublished node with the given payload and chain successor.
    pub(crate) fn alloc(symbol: Symbol, payload: &[usize], next: *mut Node) -> NonNull<Node> {
        debug_assert_eq!(payload.len(), symbol.payload_len());
        let layout = Node::layout(payload.len());
        // SAFETY: the layout has non-zero size (the header is non-empty).
        let raw = unsafe { std::alloc::alloc(layout) } as *mut Node;
        let Some(node) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: `raw` is a fresh allocation of `layout`, large enough for the header
        // followed by `payload.len()` words (the header's size is a multiple of the word's
        // alignment, checked above).
        unsafe {
            raw.write(Node {
                next: AtomicPtr::new(next),
                symbol,
                marked: Cell::new(false),
            });
            let words = raw.add(1) as *mut usize;
            std::ptr::copy_nonoverlapping(payload.as_ptr(), words, payload.len());
        }
        node
    }

    /// Frees a node.
    ///
    /// # Safety
    /// `node` came from [`Node::alloc`], is not reachable from the table, and no reference to it
    /// is used afterwards.
    pub(crate) unsafe fn free(node: NonNull<Node>) {
        // SAFETY: per the contract, the node is live and exclusively ours.
        unsafe {
            let layout = Node::layout(node.as_ref().symbol.payload_len());
            std::ptr::drop_in_place(node.as_ptr());
            std::alloc::dealloc(node.as_ptr() as *mut u8, layout);
        }
    }

    /// The payload words.
    #[inline]
    pub(crate) fn payload(&self) -> &[usize] {
        // SAFETY: every node was allocated by `alloc` with `symbol.payload_len()` words right
        // after the header, initialised and never changed.
        unsafe {
            std::slice::from_raw_parts(
                (self as *const Node).add(1) as *const usize,
                self.symbol.payload_len(),
            )
        }
    }

    /// Successor in the bucket chain.
    #[inline]
    pub(crate) fn next(&self) -> *mut Node {
        // Ordering: Relaxed; `next` is written before the node is published by the bucket's
        // Release CAS (which the reader acquired), or in the exclusive section.
        self.next.load(Ordering::Relaxed)
    }
}

/// Hash of a term given by its symbol and payload: the crate's hasher over the symbol's address
/// and the payload words (the table takes the bucket from the low bits).
#[cfg(not(loom))]
#[inline]
pub(crate) fn hash_of(symbol: Symbol, payload: &[usize]) -> u64 {
    let mut h = WordHasher::default();
    h.write_usize(symbol.addr());
    for &w in payload {
        h.write_usize(w);
    }
    h.finish()
}

/// Hash of a term under loom: loom replays a schedule by running the model again and needs
/// every run to touch the same buckets, but addresses (of symbols and of argument terms) differ
/// from run to run; so only the symbol's name and arity and an integer's value count here.
#[cfg(loom)]
pub(crate) fn hash_of(symbol: Symbol, payload: &[usize]) -> u64 {
    let mut h = WordHasher::default();
    h.write_usize(symbol.arity());
    h.write(symbol.name().as_bytes());
    if symbol.is_int() {
        h.write_usize(payload[0]);
    }
    h.finish()
}

/// A term borrowed for `'a`: something (a [`Term`](super::Term) handle, a protected parent,
/// a registered root set) keeps it alive that long. Copy; equality and hashing by address.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct TermRef<'a> {
    node: NonNull<Node>,
    _alive: PhantomData<&'a Node>,
}

// SAFETY: a term is immutable once published (its `next`/`marked` fields are not reachable
// through a `TermRef`), so sharing the reference between threads is sound while it lives.
unsafe impl Send for TermRef<'_> {}
// SAFETY: as above.
unsafe impl Sync for TermRef<'_> {}

impl<'a> TermRef<'a> {
    /// # Safety
    /// The node is published and kept alive for `'a`.
    #[inline]
    pub(crate) unsafe fn from_node(node: NonNull<Node>) -> TermRef<'a> {
        TermRef {
            node,
            _alive: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn node(self) -> &'a Node {
        // SAFETY: the node lives for 'a (the type's invariant).
        unsafe { &*self.node.as_ptr() }
    }

    #[inline]
    pub(crate) fn addr(self) -> usize {
        self.node.as_ptr() as usize
    }

    /// The function symbol.
    #[inline]
    pub fn symbol(self) -> Symbol {
        self.node().symbol
    }

    /// Number of arguments (0 for integer terms).
    #[inline]
    pub fn arity(self) -> usize {
        self.symbol().arity()
    }

    /// The `i`-th argument (from 0). Panics if `i >= arity`.
    #[inline]
    pub fn arg(self, i: usize) -> TermRef<'a> {
        assert!(
            i < self.arity(),
            "argument {i} of a term of arity {}",
            self.arity()
        );
        let word = self.node().payload()[i];
        // SAFETY: arguments are live published terms, kept alive by this term (the garbage
        // collector marks the arguments of every reachable term).
        unsafe { TermRef::from_node(NonNull::new_unchecked(word as *mut Node)) }
    }

    /// The arguments, in order.
    #[inline]
    pub fn args(self) -> impl ExactSizeIterator<Item = TermRef<'a>> {
        let node = self.node();
        // SAFETY: the first `arity` payload words are the arguments (an integer term has
        // arity 0, so its value word is not included); they were initialised by `alloc`.
        let words: &'a [usize] = unsafe {
            std::slice::from_raw_parts(
                (node as *const Node).add(1) as *const usize,
                node.symbol.arity(),
            )
        };
        words.iter().map(|&word| {
            // SAFETY: as in `arg`: arguments of a live term are live, non-null terms.
            unsafe { TermRef::from_node(NonNull::new_unchecked(word as *mut Node)) }
        })
    }

    /// The value of an integer term; `None` for other terms.
    #[inline]
    pub fn int_value(self) -> Option<i64> {
        let node = self.node();
        node.symbol.is_int().then(|| node.payload()[0] as i64)
    }

    /// The raw, unprotected identity of this term (see [`TermId`]).
    #[inline]
    pub fn id(self) -> TermId {
        TermId(self.node)
    }
}

impl PartialEq for TermRef<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

impl Eq for TermRef<'_> {}

impl Hash for TermRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.addr().hash(state);
    }
}

impl fmt::Display for TermRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(v) = self.int_value() {
            return write!(f, "{v}");
        }
        f.write_str(self.symbol().name())?;
        if self.arity() > 0 {
            f.write_str("(")?;
            for (i, a) in self.args().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{a}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl fmt::Debug for TermRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The identity of a term without any protection: what containers registered as root sets
/// store. Copy, `Send`, `Sync`; equality and hashing by address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TermId(NonNull<Node>);

// SAFETY: a TermId is an address; dereferencing it requires `get`'s contract.
unsafe impl Send for TermId {}
// SAFETY: as above.
unsafe impl Sync for TermId {}

impl TermId {
    /// The term, borrowed for `'a`.
    ///
    /// # Safety
    /// The term must be kept alive for `'a`: protected by some thread, or stored in a root set
    /// registered with its table, and not collected meanwhile.
    #[inline]
    pub unsafe fn get<'a>(self) -> TermRef<'a> {
        // SAFETY: forwarded from the caller.
        unsafe { TermRef::from_node(self.0) }
    }

    /// The term's address, as a number (stable while the term lives).
    #[inline]
    pub fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }

    #[inline]
    pub(crate) fn node_ptr(self) -> NonNull<Node> {
        self.0
    }
}
