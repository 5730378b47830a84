//! The thread-safe, maximally shared term library (chapter 5 of the thesis).
//!
//! A term is `f(t1, …, tn)` for a [`Symbol`] `f` of arity `n`, or a 64-bit integer. Terms are
//! immutable and hash-consed in one [`TermTable`]: equal terms have one address, so equality
//! and hashing are pointer operations, and creating a term that exists is one lookup.
//!
//! - Creation runs in a *shared* section of the table's lock (the busy-forbidden protocol by
//!   default): a lock-free lookup, and on a miss a compare-and-swap push on the bucket
//!   (Table 5.1). Garbage collection and growth of the table run in the *exclusive* section.
//! - A thread works through its [`TermThread`]. Terms it holds are in its protection set, a
//!   thread-local root set: a [`Term`] handle occupies one slot and releases it when dropped.
//!   A [`TermRef`] borrows a term for as long as something protects it, so a dangling
//!   reference is a compile error. Containers holding many terms register as a [`RootSet`].
//! - Collection is mark-and-sweep from every protection set and registered root set,
//!   triggered when the insertions since the last collection reach the number of live terms
//!   then (constant cost per created term, §5.1.3), or on demand.
//!
//! # Layering
//!
//! The files import one way only, each from those above it in this list (and from `sync`):
//!
//! 1. `symbol`: function symbols, interned by name and arity.
//! 2. `node`: a term's memory layout, [`TermRef`], [`TermId`] and the hash of a term.
//! 3. `table`: the [`TermTable`] (buckets, lookup and insertion, collection, growth), the
//!    per-thread protection sets as the collector sees them, [`RootSet`].
//! 4. `thread`: [`TermThread`] (a thread's membership and protection set, and
//!    `TermTable::register_thread`, which makes one), [`Term`], [`SharedSection`].
//!
//! `table` never names `thread`: what a collection needs from a thread (its protection set,
//! the counters it flushes) lives in `table`, and `thread` drives the table's lock.

mod node;
mod symbol;
mod table;
mod thread;

pub use node::{TermId, TermRef};
pub use symbol::Symbol;
pub use table::{RootRegistration, RootSet, TermStats, TermTable};
pub use thread::{SharedSection, Term, TermThread};

/// The process-wide term table (busy-forbidden protocol), created on first use.
#[cfg(not(loom))]
pub fn global() -> &'static std::sync::Arc<TermTable> {
    static GLOBAL: std::sync::OnceLock<std::sync::Arc<TermTable>> = std::sync::OnceLock::new();
    GLOBAL.get_or_init(TermTable::new)
}
