//! The canonical order of process terms ([`Encoding::cmp_terms`]), with a per-thread memo of
//! the order of the pairs of nested terms it compares.
//!
//! Comparing two terms costs the depth of their first difference: two chains of operators
//! that differ only at their bottom (`(STOP [> STOP) [> STOP` and `((STOP [> STOP) [> STOP)
//! [> STOP`, 10,000 deep) cost the chain's length, and sorting the successors of each term of
//! such a chain cost its cube. The memo keeps the order of the nested pairs compared, so a
//! comparison stops at the first pair met before: sorting a term's successors after those of
//! its operands costs about their number.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

use crate::hash::WordBuildHasher;
use crate::term::{global, TermId, TermRef};

use super::terms::{Encoding, Op, STACK_RED_ZONE, STACK_SEGMENT};

/// Pairs the memo of a thread holds at most (it is emptied when full).
const MEMO_PAIRS: usize = 1 << 17;

/// The order of pairs of nested terms, on one thread, valid while no garbage collection has
/// run since it was filled (until then an address stands for one term). A pair is kept with
/// the [`Encoding::number`] of the encoding that ordered it: in another encoding, the same
/// terms may stand for other processes.
struct PairMemo {
    /// The term table's collection count when the memo was filled.
    collections: u64,
    order: HashMap<(u64, TermId, TermId), Ordering, WordBuildHasher>,
}

thread_local! {
    static MEMO: RefCell<PairMemo> = RefCell::new(PairMemo {
        collections: 0,
        order: HashMap::default(),
    });
}

impl Encoding {
    /// The canonical order of process terms: a total order, equal only for the same term, that
    /// depends only on the processes the terms stand for, never on term addresses or on the
    /// numbers of the intern tables (both given in the order terms and values are met, which
    /// varies with the timing of threads). Terms compare by operator, arity, then arguments
    /// left to right: a process argument recursively, a numbered one by its table's key (a
    /// prefix closure, a lazy process, an event set, ...). Must be called inside a shared
    /// section of the global term table (as every term operation of the semantics is).
    pub(crate) fn cmp_terms(&self, a: TermRef<'_>, b: TermRef<'_>) -> Ordering {
        if a.id() == b.id() {
            return Ordering::Equal;
        }
        // The memo's addresses stand for the same terms as long as no collection has run.
        let collections = global().collections();
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.collections != collections {
                m.order.clear();
                m.collections = collections;
            }
        });
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.cmp_distinct(a, b))
    }

    fn cmp_distinct(&self, a: TermRef<'_>, b: TermRef<'_>) -> Ordering {
        if let (Some(x), Some(y)) = (a.int_value(), b.int_value()) {
            return x.cmp(&y);
        }
        let (op_a, op_b) = (Op::of(a), Op::of(b));
        // The same symbol: the same operator, name, arity and kind.
        if a.symbol() != b.symbol() {
            let order = op_a
                .rank()
                .cmp(&op_b.rank())
                .then_with(|| a.symbol().name().cmp(b.symbol().name()))
                .then_with(|| a.arity().cmp(&b.arity()))
                .then_with(|| a.symbol().is_int().cmp(&b.symbol().is_int()));
            if order != Ordering::Equal {
                return order;
            }
        }
        for (i, (x, y)) in a.args().zip(b.args()).enumerate() {
            let order = match (op_a.table_of(i), x.int_value(), y.int_value()) {
                (Some(table), Some(x), Some(y)) => self.cmp_numbered(table, x as u32, y as u32),
                _ => self.cmp_nested(x, y),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        Ordering::Equal
    }

    /// [`Encoding::cmp_terms`] of two arguments, through the memo when both have arguments of
    /// their own.
    fn cmp_nested(&self, x: TermRef<'_>, y: TermRef<'_>) -> Ordering {
        if x.id() == y.id() {
            return Ordering::Equal;
        }
        if x.arity() == 0 || y.arity() == 0 {
            return self.cmp_distinct(x, y);
        }
        let key = (self.number, x.id(), y.id());
        if let Some(order) = MEMO.with(|m| m.borrow().order.get(&key).copied()) {
            return order;
        }
        let order = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.cmp_distinct(x, y));
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.order.len() >= MEMO_PAIRS {
                m.order.clear();
            }
            m.order.insert(key, order);
        });
        order
    }
}
