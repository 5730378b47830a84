//! Loom models of the term table (`weft::term`) against the properties of §5.1.2 of the thesis
//! (seed 004) that concurrency can break:
//!
//! - a protected term keeps its address and its contents while garbage collection runs
//!   concurrently with creation in other threads;
//! - two live equal terms have one address, even when two threads create them at once (the
//!   compare-and-swap race on a bucket) and a collection runs meanwhile.
//!
//! Every access to the bucket array and to the protection sets goes through loom's
//! `UnsafeCell`, so a creation that overlaps a collection is also reported as a race. After the
//! threads are joined, a final collection must leave exactly the terms still protected: a
//! collection that freed a protected term, or kept garbage, changes that count.
//!
//! Run as `protocol.rs` (same command, same `LOOM_MAX_PREEMPTIONS`).
//!
//! # Making the table checkable (fix D, under `cfg(loom)` only)
//!
//! Loom explores a model by running it again and again, replaying a schedule up to a point, so
//! every run must perform the same operations on the same objects. The real `hash_of` mixes in
//! the addresses of the symbol and of the arguments, which differ from run to run, and every one
//! of the 4096 buckets is a modelled atomic (a collection would be over 8000 loom operations).
//! Under `cfg(loom)` the table has 2 buckets (`MIN_BUCKETS` in `table.rs`) and `hash_of` in
//! `node.rs` hashes the symbol's name and arity and an integer's value, not addresses (more
//! collisions, which also exercises the chains and the compare-and-swap retry). The loom helper
//! checked five hand-made bugs in `term/`, each caught by at least one model: protection after
//! leaving the shared section, marking without the arguments, no re-check after a failed
//! compare-and-swap, a relaxed compare-and-swap, and root sets left unmarked.
#![cfg(loom)]

mod common;

use std::ops::Deref;
use std::sync::Arc;

use common::check;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Condvar, Mutex};
use loom::thread;
use weft::term::{RootSet, Symbol, Term, TermId, TermRef, TermTable, TermThread};

/// A thread's use of the table that a thread unwinding from a failed model leaks instead of
/// dropping: its `Drop` takes the lock's mutex, which a spinning collector (or the panicking
/// thread itself) may hold for ever, and the reported failure would turn into a hang.
struct Worker(Option<TermThread>);

impl Worker {
    fn join(table: &Arc<TermTable>) -> Worker {
        Worker(Some(table.register_thread()))
    }
}

impl Deref for Worker {
    type Target = TermThread;

    fn deref(&self) -> &TermThread {
        self.0
            .as_ref()
            .expect("a worker holds its thread until dropped")
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::mem::forget(self.0.take());
        }
    }
}

/// The symbols of the models: a constant `c`, a binary `f` and a unary `g`.
struct Symbols {
    c: Symbol,
    f: Symbol,
    g: Symbol,
}

fn symbols() -> Symbols {
    Symbols {
        c: Symbol::new("loom_c", 0),
        f: Symbol::new("loom_f", 2),
        g: Symbol::new("loom_g", 1),
    }
}

/// `f(c, c)`, built by `thread` (the handle protects it; `c` is kept alive through it).
fn make_fcc<'t>(thread: &'t TermThread, s: &Symbols) -> Term<'t> {
    let c = thread.constant(s.c);
    thread.create(s.f, &[c.as_ref(), c.as_ref()])
}

/// Checks that `t` is `f(c, c)`: its symbol and its arguments' (one shared `c`).
fn assert_is_fcc(t: TermRef<'_>, s: &Symbols) {
    assert_eq!(t.symbol(), s.f, "a protected term lost its symbol");
    assert_eq!(t.arity(), 2);
    assert_eq!(t.arg(0), t.arg(1), "the two arguments c are one term");
    assert_eq!(t.arg(0).symbol(), s.c, "a protected term lost an argument");
    assert_eq!(t.arg(0).arity(), 0);
}

/// A one-shot meeting point for `parties` model threads; blocking (loom's scheduler would let spinning
/// threads starve the one they wait for).
struct Rendezvous {
    arrived: Mutex<usize>,
    all_arrived: Condvar,
    parties: usize,
}

impl Rendezvous {
    fn new(parties: usize) -> Arc<Rendezvous> {
        Arc::new(Rendezvous {
            arrived: Mutex::new(0),
            all_arrived: Condvar::new(),
            parties,
        })
    }

    fn meet(&self) {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.all_arrived.notify_all();
        while *arrived < self.parties {
            arrived = self.all_arrived.wait(arrived).unwrap();
        }
    }
}

/// Number of terms a collection by `thread` leaves in the table.
fn live_after_collection(thread: &TermThread) -> u64 {
    thread.collect_garbage();
    thread.table().stats().live_terms
}

/// One thread creates and keeps the integer term 7 and the constant `c` while the other
/// collects garbage (after making some: the integer 8, dropped). The kept terms must stay at
/// their addresses with their contents through the collection, and re-creating them must find
/// them there.
#[test]
fn protected_leaves_survive_concurrent_collection() {
    check("protected_leaves_survive_concurrent_collection", || {
        let table = TermTable::new();
        let collected = Rendezvous::new(2);
        let creator = {
            let (table, collected) = (table.clone(), collected.clone());
            thread::spawn(move || {
                let s = symbols();
                let me = Worker::join(&table);
                let seven = me.int(7);
                let c = me.constant(s.c);
                let (seven_addr, c_addr) = (seven.as_ref().id().addr(), c.as_ref().id().addr());
                collected.meet();
                assert_eq!(
                    seven.int_value(),
                    Some(7),
                    "a protected term lost its value"
                );
                assert_eq!(c.symbol(), s.c, "a protected term lost its symbol");
                assert_eq!(seven.as_ref().id().addr(), seven_addr);
                assert_eq!(c.as_ref().id().addr(), c_addr);
                assert_eq!(
                    me.int(7),
                    seven,
                    "re-creating a protected term gave a new address"
                );
                assert_eq!(
                    me.constant(s.c),
                    c,
                    "re-creating a protected term gave a new address"
                );
            })
        };
        let me = Worker::join(&table);
        drop(me.int(8));
        me.collect_garbage();
        collected.meet();
        creator.join().unwrap();
        // Only the creator protected terms, and it has dropped them.
        assert_eq!(live_after_collection(&me), 0);
    });
}

/// Two threads create the integer term 7 at once (racing on its bucket's compare-and-swap)
/// while one of them also collects garbage; while both hold it, they must hold one address.
#[test]
fn equal_leaves_created_concurrently_share_one_address() {
    check(
        "equal_leaves_created_concurrently_share_one_address",
        || {
            let table = TermTable::new();
            let both_hold = Rendezvous::new(2);
            let both_compared = Rendezvous::new(2);
            let addresses = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
            let threads: Vec<_> = (0..2)
                .map(|index| {
                    let (table, both_hold, both_compared, addresses) = (
                        table.clone(),
                        both_hold.clone(),
                        both_compared.clone(),
                        addresses.clone(),
                    );
                    thread::spawn(move || {
                        let me = Worker::join(&table);
                        let t = me.int(7);
                        if index == 1 {
                            me.collect_garbage();
                        }
                        // Ordering: Relaxed; the rendezvous orders it before the other's load.
                        addresses[index].store(t.as_ref().id().addr(), Ordering::Relaxed);
                        both_hold.meet();
                        let other = addresses[1 - index].load(Ordering::Relaxed);
                        assert_eq!(
                            t.as_ref().id().addr(),
                            other,
                            "two live equal terms have two addresses"
                        );
                        assert_eq!(t.int_value(), Some(7));
                        // Both keep `t` until both have compared.
                        both_compared.meet();
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            let me = Worker::join(&table);
            assert_eq!(live_after_collection(&me), 0);
        },
    );
}

/// One thread creates and keeps `f(c, c)` while the other collects garbage (after making some:
/// `g(c)`, dropped). The kept term must stay at its address with its contents through the
/// collection, and a re-creation must find it there.
#[test]
fn protected_term_survives_concurrent_collection() {
    check("protected_term_survives_concurrent_collection", || {
        let s = symbols();
        let table = TermTable::new();
        let collected = Rendezvous::new(2);
        let creator = {
            let (table, collected) = (table.clone(), collected.clone());
            thread::spawn(move || {
                let s = symbols();
                let me = Worker::join(&table);
                let t = make_fcc(&me, &s);
                let addr = t.as_ref().id().addr();
                collected.meet();
                assert_is_fcc(t.as_ref(), &s);
                assert_eq!(t.as_ref().id().addr(), addr);
                let again = make_fcc(&me, &s);
                assert_eq!(
                    again, t,
                    "re-creating a protected term gave a second address"
                );
            })
        };
        let me = Worker::join(&table);
        {
            let c = me.constant(s.c);
            let _garbage = me.create(s.g, &[c.as_ref()]);
        }
        me.collect_garbage();
        collected.meet();
        creator.join().unwrap();
        // Only the creator's terms were protected, and it has dropped them.
        assert_eq!(live_after_collection(&me), 0);
    });
}

/// Two threads create the same term `f(c, c)` at once (both may race on the same bucket's
/// compare-and-swap) while one of them also collects garbage; while both hold it, they must
/// hold one address.
#[test]
fn equal_terms_created_concurrently_share_one_address() {
    check("equal_terms_created_concurrently_share_one_address", || {
        let table = TermTable::new();
        let both_hold = Rendezvous::new(2);
        let both_compared = Rendezvous::new(2);
        let addresses = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let threads: Vec<_> = (0..2)
            .map(|index| {
                let (table, both_hold, both_compared, addresses) = (
                    table.clone(),
                    both_hold.clone(),
                    both_compared.clone(),
                    addresses.clone(),
                );
                thread::spawn(move || {
                    let s = symbols();
                    let me = Worker::join(&table);
                    let t = make_fcc(&me, &s);
                    if index == 1 {
                        me.collect_garbage();
                    }
                    // Ordering: Relaxed; the rendezvous orders it before the other's load.
                    addresses[index].store(t.as_ref().id().addr(), Ordering::Relaxed);
                    both_hold.meet();
                    let other = addresses[1 - index].load(Ordering::Relaxed);
                    assert_eq!(
                        t.as_ref().id().addr(),
                        other,
                        "two live equal terms have two addresses"
                    );
                    assert_is_fcc(t.as_ref(), &s);
                    // Both keep `t` until both have compared.
                    both_compared.meet();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let me = Worker::join(&table);
        assert_eq!(live_after_collection(&me), 0);
    });
}

/// Three threads: two create `f(c, c)` (the first also garbage, `g(c)`, dropped) while the third
/// collects; when all three meet, the two creators hold one address with the right contents.
#[test]
fn creation_by_two_threads_and_collection_by_a_third() {
    check("creation_by_two_threads_and_collection_by_a_third", || {
        let table = TermTable::new();
        let all_done = Rendezvous::new(3);
        let all_compared = Rendezvous::new(3);
        let addresses = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let creators: Vec<_> = (0..2)
            .map(|index| {
                let (table, all_done, all_compared, addresses) = (
                    table.clone(),
                    all_done.clone(),
                    all_compared.clone(),
                    addresses.clone(),
                );
                thread::spawn(move || {
                    let s = symbols();
                    let me = Worker::join(&table);
                    let t = make_fcc(&me, &s);
                    if index == 0 {
                        drop(me.create(s.g, &[t.arg(0)]));
                    }
                    // Ordering: Relaxed; the rendezvous orders it before the other's load.
                    addresses[index].store(t.as_ref().id().addr(), Ordering::Relaxed);
                    all_done.meet();
                    let other = addresses[1 - index].load(Ordering::Relaxed);
                    assert_eq!(
                        t.as_ref().id().addr(),
                        other,
                        "two live equal terms have two addresses"
                    );
                    assert_is_fcc(t.as_ref(), &s);
                    all_compared.meet();
                })
            })
            .collect();
        let me = Worker::join(&table);
        me.collect_garbage();
        all_done.meet();
        all_compared.meet();
        for creator in creators {
            creator.join().unwrap();
        }
        assert_eq!(live_after_collection(&me), 0);
    });
}

/// A container of terms registered as a root set (the explorer's state index, in miniature).
struct Container(Mutex<Vec<TermId>>);

impl RootSet for Container {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        self.0.lock().unwrap().iter().for_each(|&id| visit(id));
    }
}

/// A term kept only by a registered root set (its handle dropped, inside the shared section in
/// which it was stored) survives a concurrent collection with its argument, and re-creating it
/// finds it at the stored address.
#[test]
fn root_set_keeps_terms_through_concurrent_collection() {
    check("root_set_keeps_terms_through_concurrent_collection", || {
        let table = TermTable::new();
        let container = Arc::new(Container(Mutex::new(Vec::new())));
        let registration = table.register_roots(container.clone());
        let collected = Rendezvous::new(2);
        let creator = {
            let (table, container, collected) =
                (table.clone(), container.clone(), collected.clone());
            thread::spawn(move || {
                let s = symbols();
                let me = Worker::join(&table);
                {
                    let _section = me.shared_section();
                    let t = make_fcc(&me, &s);
                    container.0.lock().unwrap().push(t.as_ref().id());
                }
                collected.meet();
                let stored = container.0.lock().unwrap()[0];
                let again = make_fcc(&me, &s);
                assert_eq!(
                    again.as_ref().id(),
                    stored,
                    "a rooted term moved or was freed"
                );
                assert_is_fcc(again.as_ref(), &s);
            })
        };
        let me = Worker::join(&table);
        me.collect_garbage();
        collected.meet();
        creator.join().unwrap();
        // The root set still holds f(c, c), and through it c.
        assert_eq!(live_after_collection(&me), 2);
        drop(registration);
        assert_eq!(live_after_collection(&me), 0);
    });
}
