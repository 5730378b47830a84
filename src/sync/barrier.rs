//! The store-then-load handshake's barriers.
//!
//! The busy-forbidden handshake is Dekker's: a reader stores its `busy` flag and then loads its
//! `forbidden` flag; the writer stores `forbidden` and then loads `busy`. With only
//! release/acquire orderings both loads may read the old values (each store still sitting in its
//! core's store buffer), both sides miss each other and a reader runs inside the writer's
//! exclusive section. A sequentially consistent fence between the store and the load on *both*
//! sides forbids that outcome: the two fences are totally ordered, and the side whose fence comes
//! second is guaranteed to see the other side's store.
//!
//! The reader pays for its fence on every shared section, the writer only on rare exclusive
//! sections. On Linux the costs can be moved to the writer: [`Barriers::light`] is then only a
//! compiler fence, and [`Barriers::heavy`] is the `membarrier(PRIVATE_EXPEDITED)` system call,
//! which makes every running thread of this process execute a full memory barrier before it
//! returns (the kernel interrupts them), so the pair is as strong as two SeqCst fences. Where the
//! call is unavailable (or `WEFT_BARRIER=fence` asks for it) both are `fence(SeqCst)`. Under loom
//! both are `fence(SeqCst)`: that is the pairing loom checks.

use super::shim::{fence, Ordering};

/// The pair of barriers used by the handshake: `light` on the reader's side, `heavy` on the
/// writer's. Copy it into per-thread state so the hot path reads no shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Barriers {
    asymmetric: bool,
}

impl Barriers {
    /// The barriers this process can use: asymmetric where `membarrier` works, fences otherwise.
    pub fn detect() -> Barriers {
        Barriers {
            asymmetric: asymmetric_available(),
        }
    }

    /// Two `fence(SeqCst)`s, on every platform.
    pub fn symmetric() -> Barriers {
        Barriers { asymmetric: false }
    }

    /// True when the reader's barrier is only a compiler fence.
    pub fn is_asymmetric(&self) -> bool {
        self.asymmetric
    }

    /// The reader's barrier, between its store of `busy` and its load of `forbidden`.
    #[inline(always)]
    pub fn light(&self) {
        #[cfg(not(loom))]
        if self.asymmetric {
            // Ordering: SeqCst. Keeps the compiler from swapping the store and the load; the
            // hardware reordering is undone by the writer's membarrier (see the module docs).
            super::shim::compiler_fence(Ordering::SeqCst);
            return;
        }
        // Ordering: SeqCst, the fence half of the store-fence-load handshake.
        fence(Ordering::SeqCst);
    }

    /// The writer's barrier, between its stores of `forbidden` and its loads of `busy`.
    pub fn heavy(&self) {
        #[cfg(not(loom))]
        if self.asymmetric {
            membarrier::expedited();
            return;
        }
        // Ordering: SeqCst, pairs with the reader's fence in `light`.
        fence(Ordering::SeqCst);
    }
}

#[cfg(loom)]
fn asymmetric_available() -> bool {
    false
}

#[cfg(not(loom))]
fn asymmetric_available() -> bool {
    use std::sync::OnceLock;
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if std::env::var("WEFT_BARRIER").is_ok_and(|v| v == "fence") {
            return false;
        }
        membarrier::register()
    })
}

#[cfg(all(not(loom), target_os = "linux"))]
mod membarrier {
    // From <linux/membarrier.h>.
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// Registers the process for expedited private membarriers; false if the kernel refuses.
    pub(super) fn register() -> bool {
        // SAFETY: membarrier takes three integer arguments and touches no memory of ours.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                CMD_REGISTER_PRIVATE_EXPEDITED,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        };
        rc == 0 && {
            // Check that the command itself works before relying on it.
            // SAFETY: as above.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    CMD_PRIVATE_EXPEDITED,
                    0 as libc::c_long,
                    0 as libc::c_long,
                )
            };
            rc == 0
        }
    }

    /// A full memory barrier on every running thread of this process.
    pub(super) fn expedited() {
        // SAFETY: as in `register`; registration succeeded before any caller gets here.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                CMD_PRIVATE_EXPEDITED,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        };
        // The command worked at registration and cannot start failing: if it did, the
        // handshake would be unsound, so stop rather than continue unsynchronised.
        assert_eq!(
            rc, 0,
            "membarrier(PRIVATE_EXPEDITED) failed after registration"
        );
    }
}

#[cfg(all(not(loom), not(target_os = "linux")))]
mod membarrier {
    pub(super) fn register() -> bool {
        false
    }
    pub(super) fn expedited() {
        unreachable!("asymmetric barriers are only enabled on Linux")
    }
}
