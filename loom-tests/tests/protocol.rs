//! Loom models of the busy-forbidden protocol (`weft::sync::BusyForbidden`) against the six
//! properties of §5.2.3 of the thesis (seed 004):
//!
//! 1. never more than one thread in the exclusive section;
//! 2. never a thread exclusive while one or more are in a shared section;
//! 3. a shared entry is granted unless another thread is in the exclusive section;
//! 4. an exclusive entry is granted once no other thread is in a shared or exclusive section;
//! 5. leaving a section always completes;
//! 6. a thread outside every section can start either entry.
//!
//! Safety (1, 2) is checked twice in every section of every model: by one atomic occupancy word
//! updated with relaxed read-modify-writes (they add no happens-before edge, so they cannot
//! mask a missing synchronisation, and as they are totally ordered any two overlapping sections
//! see each other), and by a `loom::cell::UnsafeCell` written in exclusive sections and read in
//! shared ones, so loom's race detector reports any section the protocol fails to order.
//! Liveness (3–6) is a model that terminates in every interleaving: loom reports a deadlock
//! (all threads blocked) or a livelock (a spin loop exceeding its branch bound) as a failure.
//!
//! Run with `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p loom-tests
//! --release --tests`; `LOOM_MAX_PREEMPTIONS` sets the preemption bound (2 when unset).
//! With `--features mutant` the exclusive entry skips its re-check of `busy`, and every model
//! whose name contains `exclusion` must fail.
//!
//! # What these models found (all fixed in `src/sync`)
//!
//! - **A (loom only).** Spin points published nothing under loom: a load may return any store
//!   not yet ordered before it, so the writer's forbid/withdraw loop and a reader's back-off
//!   could miss each other's fresh stores turn after turn (no real machine does: store buffers
//!   drain during the timed lock and the `yield_now` system call). Under `cfg(loom)` the shim's
//!   `spin_wait` and `RawMutex::try_lock_for_a_while` fence (`SeqCst`) before yielding.
//! - **B (loom only).** A spinning loom `RawMutex` let loom's scheduler, not fair to yielding
//!   threads, alternate two spinners for ever; under `cfg(loom)` it blocks on a condition
//!   variable.
//! - **C (a real deadlock).** `enter_exclusive` kept the protocol mutex while it waited for busy
//!   readers, and `register` / `Participant::drop` take that mutex: a reader waiting for a
//!   thread that was registering, the registrant, and the writer waited for ever although none
//!   was exclusive (`shared_entry_granted_to_late_registrant_while_writer_waits`). The protocol
//!   now has a second mutex, `writer`, held from the start of `enter_exclusive` to the end of
//!   `leave_exclusive` (writers queue on it, readers back off on it); the registry mutex is held
//!   for each forbid-and-check pass, released while the writer waits, and kept from the
//!   successful pass to `leave_exclusive`.
//!
//! With `--features mutant` every model whose name contains `exclusion` fails. The loom helper
//! also checked nine hand-made weakenings (each barrier removed or weakened to AcqRel, each
//! Release/Acquire relaxed, no withdrawal, an inner leave that clears `busy`); each is caught by
//! at least two models.
//!
//! A model that fails inside a section unwinds through `Participant::drop`; the models wrap
//! participants in `Member`, which leaks them when unwinding, so the failure is reported rather
//! than turned into a hang on a mutex a spinning thread holds.
#![cfg(loom)]

mod common;

use std::ops::Deref;

use common::check;
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use weft::sync::{BusyForbidden, Participant};

/// Occupancy added by a thread in the exclusive section (a shared section adds 1).
const EXCLUSIVE: usize = 1 << 16;

/// The lock, the data it guards, and the observer of who is inside.
struct Guarded {
    lock: BusyForbidden,
    /// Threads in a shared section plus `EXCLUSIVE` times the threads in the exclusive one.
    occupancy: AtomicUsize,
    /// Written in exclusive sections (counts them), read in shared ones.
    data: UnsafeCell<usize>,
}

// SAFETY: `data` is the protocol's to guard; every access goes through loom's `UnsafeCell`,
// whose race detector fails the model if two accesses (one a write) are not ordered.
unsafe impl Sync for Guarded {}

impl Guarded {
    fn new() -> Arc<Guarded> {
        Arc::new(Guarded {
            lock: BusyForbidden::new(),
            occupancy: AtomicUsize::new(0),
            data: UnsafeCell::new(0),
        })
    }

    /// Makes the calling thread a participant of the lock.
    fn register(&self) -> Member {
        Member(Some(self.lock.register()))
    }

    /// The body of an exclusive section: checks properties 1 and 2, then writes `data`.
    fn exclusive_body(&self) {
        // Ordering: Relaxed throughout the observer, so that it adds no synchronisation.
        let before = self.occupancy.fetch_add(EXCLUSIVE, Ordering::Relaxed);
        assert!(
            before < EXCLUSIVE,
            "property 1 violated: two threads in the exclusive section"
        );
        assert_eq!(
            before, 0,
            "property 2 violated: exclusive section entered while {before} thread(s) are shared"
        );
        // SAFETY: the protocol must make this the only access in progress (loom checks it).
        self.data.with_mut(|data| unsafe { *data += 1 });
        self.occupancy.fetch_sub(EXCLUSIVE, Ordering::Relaxed);
    }

    /// Marks the start of a shared section (at any nesting depth) and checks property 2.
    fn shared_begin(&self) {
        let before = self.occupancy.fetch_add(1, Ordering::Relaxed);
        assert!(
            before < EXCLUSIVE,
            "property 2 violated: shared section entered while a thread is exclusive"
        );
        self.read_data();
    }

    /// Reads `data` inside a shared section: loom reports a race with any unordered writer.
    fn read_data(&self) -> usize {
        // SAFETY: shared sections only read; the protocol must order them after or before
        // every exclusive write (loom checks it).
        self.data.with(|data| unsafe { *data })
    }

    /// Marks the end of a shared section.
    fn shared_end(&self) {
        self.occupancy.fetch_sub(1, Ordering::Relaxed);
    }

    /// One whole shared section of `participant`.
    fn shared_section(&self, participant: &Participant) {
        participant.enter_shared();
        self.shared_begin();
        self.shared_end();
        assert!(participant.leave_shared(), "outermost leave must report 0");
    }

    /// One whole exclusive section of `participant`.
    fn exclusive_section(&self, participant: &Participant) {
        participant.enter_exclusive();
        assert!(participant.is_exclusive());
        self.exclusive_body();
        participant.leave_exclusive();
        assert!(!participant.is_exclusive());
    }

    /// Number of exclusive sections completed; call once every thread has been joined.
    fn exclusive_sections(&self) -> usize {
        // SAFETY: all threads were joined, so this access is ordered after all others.
        self.data.with(|data| unsafe { *data })
    }
}

/// A participant that a thread unwinding from a failed model leaks instead of dropping: its
/// `Drop` takes the protocol mutex, which a spinning writer (or the panicking thread itself) may
/// hold for ever, and the reported failure would turn into a hang.
struct Member(Option<Participant>);

impl Deref for Member {
    type Target = Participant;

    fn deref(&self) -> &Participant {
        self.0
            .as_ref()
            .expect("a member holds its participant until dropped")
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::mem::forget(self.0.take());
        }
    }
}

/// A one-shot gate a model thread blocks on (a loom mutex and condition variable). Blocking,
/// rather than spinning, keeps loom from scheduling only spinning threads for ever while the
/// thread that would open the gate never runs: loom's scheduler is not fair to threads that
/// yield, and two spinners can starve a third.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            open: Mutex::new(false),
            opened: Condvar::new(),
        })
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Exclusion: properties 1 and 2 (the mutant must fail these).
// ---------------------------------------------------------------------------------------------

/// Two threads, each starting both kinds of section (also property 6: a free thread starts
/// either entry, whichever it left last).
#[test]
fn exclusion_two_threads_both_sections() {
    check("exclusion_two_threads_both_sections", || {
        let guarded = Guarded::new();
        let other = guarded.clone();
        let handle = thread::spawn(move || {
            let participant = other.register();
            other.exclusive_section(&participant);
            other.shared_section(&participant);
        });
        let participant = guarded.register();
        guarded.shared_section(&participant);
        guarded.exclusive_section(&participant);
        drop(participant);
        handle.join().unwrap();
        assert_eq!(guarded.exclusive_sections(), 2);
        assert_eq!(guarded.lock.participants(), 0);
    });
}

/// Three threads: one reader, two writers (property 1 between the writers, 2 with the reader).
#[test]
fn exclusion_one_reader_two_writers() {
    check("exclusion_one_reader_two_writers", || {
        let guarded = Guarded::new();
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    guarded.exclusive_section(&participant);
                })
            })
            .collect();
        let participant = guarded.register();
        guarded.shared_section(&participant);
        drop(participant);
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(guarded.exclusive_sections(), 2);
    });
}

/// Three threads: two readers, one writer (property 2 with each reader; property 4: the writer
/// gets in once both have left).
#[test]
fn exclusion_two_readers_one_writer() {
    check("exclusion_two_readers_one_writer", || {
        let guarded = Guarded::new();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    guarded.shared_section(&participant);
                })
            })
            .collect();
        let participant = guarded.register();
        guarded.exclusive_section(&participant);
        drop(participant);
        for reader in readers {
            reader.join().unwrap();
        }
        assert_eq!(guarded.exclusive_sections(), 1);
    });
}

/// Three threads, each starting both kinds of section in a different order (properties 1, 2,
/// 4, 5 and 6 together).
#[test]
fn exclusion_three_threads_both_sections() {
    check("exclusion_three_threads_both_sections", || {
        let guarded = Guarded::new();
        let others: Vec<_> = (0..2)
            .map(|index| {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    if index == 0 {
                        guarded.exclusive_section(&participant);
                        guarded.shared_section(&participant);
                    } else {
                        guarded.shared_section(&participant);
                        guarded.exclusive_section(&participant);
                    }
                })
            })
            .collect();
        let participant = guarded.register();
        guarded.shared_section(&participant);
        guarded.exclusive_section(&participant);
        drop(participant);
        for other in others {
            other.join().unwrap();
        }
        assert_eq!(guarded.exclusive_sections(), 3);
    });
}

/// Nested shared sections: the thread stays shared (and the writer out) until the outermost
/// leave; only that leave reports the thread free.
#[test]
fn exclusion_nested_shared() {
    check("exclusion_nested_shared", || {
        let guarded = Guarded::new();
        let other = guarded.clone();
        let writer = thread::spawn(move || {
            let participant = other.register();
            other.exclusive_section(&participant);
        });
        let participant = guarded.register();
        participant.enter_shared();
        guarded.shared_begin();
        participant.enter_shared();
        assert_eq!(participant.shared_depth(), 2);
        guarded.shared_begin();
        guarded.shared_end();
        assert!(!participant.leave_shared(), "inner leave must not free");
        assert_eq!(participant.shared_depth(), 1);
        // Still inside the outer section: a writer must not have got in meanwhile.
        guarded.read_data();
        guarded.shared_end();
        guarded.shared_begin();
        guarded.shared_end();
        assert!(participant.leave_shared());
        assert_eq!(participant.shared_depth(), 0);
        drop(participant);
        writer.join().unwrap();
        assert_eq!(guarded.exclusive_sections(), 1);
    });
}

/// The RAII guards: nested shared guards, the exclusive guard, and a participant dropped while
/// exclusive (its `Drop` leaves the section, so the other thread still gets in).
#[test]
fn exclusion_guards() {
    check("exclusion_guards", || {
        let guarded = Guarded::new();
        let other = guarded.clone();
        let writer = thread::spawn(move || {
            let participant = other.register();
            {
                let _exclusive = participant.exclusive();
                assert!(participant.is_exclusive());
                other.exclusive_body();
            }
            assert!(!participant.is_exclusive());
            participant.enter_exclusive();
            other.exclusive_body();
            // Dropped while exclusive: leaves the section and the protocol.
            drop(participant);
        });
        let participant = guarded.register();
        {
            let _outer = participant.shared();
            guarded.shared_begin();
            {
                let _inner = participant.shared();
                assert_eq!(participant.shared_depth(), 2);
                guarded.read_data();
            }
            assert_eq!(participant.shared_depth(), 1);
            guarded.read_data();
            guarded.shared_end();
        }
        assert_eq!(participant.shared_depth(), 0);
        {
            let _shared = participant.shared();
            guarded.shared_begin();
            guarded.shared_end();
        }
        drop(participant);
        writer.join().unwrap();
        assert_eq!(guarded.exclusive_sections(), 2);
        assert_eq!(guarded.lock.participants(), 0);
    });
}

// ---------------------------------------------------------------------------------------------
// Liveness: properties 3 to 6 (each model also checks 1 and 2 in all its sections).
// ---------------------------------------------------------------------------------------------

/// Registers with `guarded`'s lock; the third thread to do so opens `all_registered`.
fn register_counted(guarded: &Guarded, registered: &AtomicUsize, all_registered: &Gate) -> Member {
    let participant = guarded.register();
    // Ordering: Relaxed; the gate's mutex orders the opening for the waiter.
    if registered.fetch_add(1, Ordering::Relaxed) == 2 {
        all_registered.open();
    }
    participant
}

/// Property 3, the scenario of §5.2.2: thread A stays in its shared section until thread B has
/// entered its own, while thread C is trying to enter the exclusive section. C's prohibition
/// must not keep B out (C withdraws it on seeing A busy), or all three wait for ever.
/// All three register before C asks for the exclusive section (the next model lets one register late).
#[test]
fn shared_entry_granted_while_writer_waits() {
    check("shared_entry_granted_while_writer_waits", || {
        let guarded = Guarded::new();
        let all_registered = Gate::new();
        let registered = Arc::new(AtomicUsize::new(0));
        let b_inside = Gate::new();
        let reader_b = {
            let (guarded, registered, all_registered, b_inside) = (
                guarded.clone(),
                registered.clone(),
                all_registered.clone(),
                b_inside.clone(),
            );
            thread::spawn(move || {
                let participant = register_counted(&guarded, &registered, &all_registered);
                participant.enter_shared();
                guarded.shared_begin();
                b_inside.open();
                guarded.shared_end();
                assert!(participant.leave_shared());
            })
        };
        let writer_c = {
            let (guarded, registered, all_registered) =
                (guarded.clone(), registered.clone(), all_registered.clone());
            thread::spawn(move || {
                let participant = register_counted(&guarded, &registered, &all_registered);
                all_registered.wait();
                guarded.exclusive_section(&participant);
            })
        };
        // Thread A.
        let participant = register_counted(&guarded, &registered, &all_registered);
        participant.enter_shared();
        guarded.shared_begin();
        b_inside.wait();
        guarded.shared_end();
        assert!(participant.leave_shared());
        drop(participant);
        reader_b.join().unwrap();
        writer_c.join().unwrap();
        assert_eq!(guarded.exclusive_sections(), 1);
    });
}

/// Property 3 with a thread that joins the protocol late: as above, but B registers only once
/// A is in its shared section, and C may already be waiting for the exclusive section.
///
/// Fails with the current `src/sync` even with fixes A and B (loom: "Model exceeded maximum
/// number of branches", C spinning alone): A registers and enters its shared section; C takes
/// the protocol mutex in `enter_exclusive`, finds A busy and spins holding it; B waits in
/// `register` for that mutex; A waits for B; C waits for A. No thread is exclusive, yet B never
/// gets its shared section (defect C of the header).
#[test]
fn shared_entry_granted_to_late_registrant_while_writer_waits() {
    check(
        "shared_entry_granted_to_late_registrant_while_writer_waits",
        || {
            let guarded = Guarded::new();
            let a_inside = Gate::new();
            let b_inside = Gate::new();
            let writer_c = {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    guarded.exclusive_section(&participant);
                })
            };
            let reader_b = {
                let (guarded, a_inside, b_inside) =
                    (guarded.clone(), a_inside.clone(), b_inside.clone());
                thread::spawn(move || {
                    a_inside.wait();
                    let participant = guarded.register();
                    participant.enter_shared();
                    guarded.shared_begin();
                    b_inside.open();
                    guarded.shared_end();
                    assert!(participant.leave_shared());
                })
            };
            // Thread A.
            let participant = guarded.register();
            participant.enter_shared();
            guarded.shared_begin();
            a_inside.open();
            b_inside.wait();
            guarded.shared_end();
            assert!(participant.leave_shared());
            drop(participant);
            reader_b.join().unwrap();
            writer_c.join().unwrap();
            assert_eq!(guarded.exclusive_sections(), 1);
        },
    );
}

/// Properties 4 and 5: a reader that keeps re-entering (and so keeps getting forbidden and
/// backing off) does not keep the writer out for ever, and every leave completes while the
/// other thread is spinning in its entry.
#[test]
fn exclusive_entry_granted_after_repeated_readers() {
    check("exclusive_entry_granted_after_repeated_readers", || {
        let guarded = Guarded::new();
        let other = guarded.clone();
        let reader = thread::spawn(move || {
            let participant = other.register();
            for _ in 0..3 {
                other.shared_section(&participant);
            }
        });
        let participant = guarded.register();
        guarded.exclusive_section(&participant);
        drop(participant);
        reader.join().unwrap();
        assert_eq!(guarded.exclusive_sections(), 1);
    });
}

/// Property 6 with registration: a thread that registered, used the lock and dropped its
/// participant does not block a later exclusive section; a thread registering while another is
/// exclusive joins safely (it is either forbidden, or registers after the section).
#[test]
fn departed_and_new_participants_do_not_block_exclusive() {
    check(
        "departed_and_new_participants_do_not_block_exclusive",
        || {
            let guarded = Guarded::new();
            let departed = {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    guarded.shared_section(&participant);
                    // Dropped without a join: its flags leave the registry now.
                })
            };
            let newcomer = {
                let guarded = guarded.clone();
                thread::spawn(move || {
                    let participant = guarded.register();
                    guarded.shared_section(&participant);
                    guarded.exclusive_section(&participant);
                })
            };
            let participant = guarded.register();
            guarded.exclusive_section(&participant);
            drop(participant);
            departed.join().unwrap();
            newcomer.join().unwrap();
            assert_eq!(guarded.exclusive_sections(), 2);
            assert_eq!(guarded.lock.participants(), 0);
        },
    );
}

/// Property 6 in its plainest form: after a thread has left the protocol for good, a thread
/// that is alone starts an exclusive and a shared entry without waiting for anyone.
#[test]
fn free_thread_enters_after_departure() {
    check("free_thread_enters_after_departure", || {
        let guarded = Guarded::new();
        let other = guarded.clone();
        let departed = thread::spawn(move || {
            let participant = other.register();
            participant.enter_shared();
            other.shared_begin();
            other.shared_end();
            participant.leave_shared();
        });
        departed.join().unwrap();
        assert_eq!(guarded.lock.participants(), 0);
        let participant = guarded.register();
        guarded.exclusive_section(&participant);
        guarded.shared_section(&participant);
        drop(participant);
        assert_eq!(guarded.exclusive_sections(), 1);
    });
}
