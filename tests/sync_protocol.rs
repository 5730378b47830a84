//! The busy-forbidden protocol under real threads (the loom models in `loom-tests/` check all
//! interleavings of small instances; this checks larger, real runs): exclusion between
//! sections, nesting, and threads joining and leaving at any time.

use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Arc;

use weft::sync::{Barriers, BusyForbidden};

/// Occupancy: positive = readers inside, -1 = a writer inside.
fn run_mixed(lock: BusyForbidden, threads: usize, rounds: usize) {
    let occupancy = Arc::new(AtomicIsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let exclusive_entries = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let lock = lock.clone();
            let occupancy = occupancy.clone();
            let violations = violations.clone();
            let exclusive_entries = exclusive_entries.clone();
            std::thread::spawn(move || {
                let me = lock.register();
                for r in 0..rounds {
                    if (r + i) % 97 == 0 {
                        let _g = me.exclusive();
                        if occupancy
                            .compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst)
                            .is_err()
                        {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        std::hint::spin_loop();
                        occupancy.store(0, Ordering::SeqCst);
                        exclusive_entries.fetch_add(1, Ordering::SeqCst);
                    } else {
                        let _outer = me.shared();
                        let _inner = me.shared(); // nesting
                        assert_eq!(me.shared_depth(), 2);
                        if occupancy.fetch_add(1, Ordering::SeqCst) < 0 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                        occupancy.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                assert_eq!(me.shared_depth(), 0);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    assert!(exclusive_entries.load(Ordering::SeqCst) > 0);
    assert_eq!(lock.participants(), 0, "every thread left the protocol");
}

#[test]
fn sections_exclude_each_other_with_detected_barriers() {
    run_mixed(BusyForbidden::new(), 4, 20_000);
}

#[test]
fn sections_exclude_each_other_with_fences() {
    run_mixed(
        BusyForbidden::with_barriers(Barriers::symmetric()),
        4,
        20_000,
    );
}

#[test]
fn exited_threads_do_not_block_exclusive_sections() {
    let lock = BusyForbidden::new();
    for _ in 0..8 {
        let l = lock.clone();
        std::thread::spawn(move || {
            let me = l.register();
            let _s = me.shared();
        })
        .join()
        .unwrap();
    }
    let me = lock.register();
    let _g = me.exclusive();
    assert!(me.is_exclusive());
}

#[test]
fn a_registered_reader_waits_for_the_writer_and_then_enters() {
    let lock = BusyForbidden::new();
    let writer = lock.register();
    let inside = Arc::new(AtomicBool::new(false));
    let (registered_tx, registered_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let reader = {
        let lock = lock.clone();
        let inside = inside.clone();
        std::thread::spawn(move || {
            let me = lock.register();
            registered_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            let _s = me.shared();
            inside.store(true, Ordering::SeqCst);
        })
    };
    registered_rx.recv().unwrap();
    writer.enter_exclusive();
    go_tx.send(()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        !inside.load(Ordering::SeqCst),
        "reader entered during the exclusive section"
    );
    writer.leave_exclusive();
    reader.join().unwrap();
    assert!(inside.load(Ordering::SeqCst));
}

/// Property 3 with a thread that joins late (the deadlock the loom model
/// `shared_entry_granted_to_late_registrant_while_writer_waits` found): A is in a shared
/// section and waits for B's shared section before it leaves; C asks for the exclusive
/// section meanwhile; B registers only then. B must get in (C waits for A without keeping B
/// from registering), then A leaves, then C gets in.
#[test]
fn a_thread_registering_while_a_writer_waits_gets_its_shared_section() {
    use std::sync::mpsc;
    use std::time::Duration;
    let lock = BusyForbidden::new();
    let (a_inside_tx, a_inside) = mpsc::channel::<()>();
    let (b_inside_tx, b_inside) = mpsc::channel::<()>();
    let (done_tx, done) = mpsc::channel::<&'static str>();
    let writer_started = Arc::new(AtomicBool::new(false));

    let a = {
        let lock = lock.clone();
        let done_tx = done_tx.clone();
        std::thread::spawn(move || {
            let me = lock.register();
            let _s = me.shared();
            a_inside_tx.send(()).unwrap();
            // A deadlocked protocol never lets B in: fail instead of hanging.
            let got = b_inside.recv_timeout(Duration::from_secs(20)).is_ok();
            done_tx.send(if got { "a" } else { "a timed out" }).unwrap();
        })
    };
    a_inside.recv().unwrap();
    let c = {
        let lock = lock.clone();
        let done_tx = done_tx.clone();
        let writer_started = writer_started.clone();
        std::thread::spawn(move || {
            let me = lock.register();
            writer_started.store(true, Ordering::SeqCst);
            let _x = me.exclusive();
            done_tx.send("c").unwrap();
        })
    };
    while !writer_started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    // Give C time to start waiting for A inside `enter_exclusive`.
    std::thread::sleep(Duration::from_millis(50));
    let b = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            let me = lock.register();
            let _s = me.shared();
            b_inside_tx.send(()).unwrap();
        })
    };
    let first = done.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(
        first, "a",
        "A must see B enter before C gets the exclusive section"
    );
    assert_eq!(done.recv_timeout(Duration::from_secs(30)).unwrap(), "c");
    for h in [a, b, c] {
        h.join().unwrap();
    }
}
