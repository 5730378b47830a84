//! Growing the term table around a large construction. The table grows only in its exclusive
//! section, which waits for every shared section to end, and a system is made in one shared
//! section: a process of hundreds of thousands of terms built there (a replicated choice over
//! a large set) would go into a table sized for a few thousand, its buckets' chains hundreds
//! long. So while a system is made ([`GrowthWatch`]), building a term gives up as soon as the
//! table asks for a collection; the construction leaves its section, the table collects and
//! grows with room for twice what the construction had made
//! ([`TermThread::collect_reserving`](crate::term::TermThread::collect_reserving)), and the
//! construction runs again: each try makes at least twice as many terms as the last, so the
//! tries cost at most about twice the last one, and the table's chains stay short.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::Ordering;

use crate::csp::error::{CspError, ErrorKind};
use crate::term::global;

thread_local! {
    /// A system is being made on this thread: a build gives up when the table must grow.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// A build gave up on this thread for the table to grow.
    static GAVE_UP: Cell<bool> = const { Cell::new(false) };
}

/// While it lives, builds on this thread give up when the table asks to grow.
pub(super) struct GrowthWatch {
    was: bool,
}

impl GrowthWatch {
    pub(super) fn start() -> GrowthWatch {
        GAVE_UP.with(|g| g.set(false));
        GrowthWatch {
            was: WATCHING.with(|w| w.replace(true)),
        }
    }

    /// Whether a build gave up since the watch started (the construction must run again,
    /// whatever it made meanwhile: a caller may have taken the error for another).
    pub(super) fn gave_up(&self) -> bool {
        GAVE_UP.with(Cell::get)
    }
}

impl Drop for GrowthWatch {
    fn drop(&mut self) {
        WATCHING.with(|w| w.set(self.was));
        GAVE_UP.with(|g| g.set(false));
    }
}

/// Whether a build gave up on this thread for the table to grow (a leaf's exploration that
/// failed for it is not a failure of the leaf).
pub(super) fn gave_up() -> bool {
    GAVE_UP.with(Cell::get)
}

/// An error if a build must give up now: a system is being made on this thread and the table
/// asks for a collection (then every build gives up until the construction has left).
#[inline]
pub(super) fn check() -> Result<(), CspError> {
    if !WATCHING.with(Cell::get) {
        return Ok(());
    }
    // Ordering: Relaxed; a hint, as the table reads it.
    if GAVE_UP.with(Cell::get) || global().collection_requested.load(Ordering::Relaxed) {
        GAVE_UP.with(|g| g.set(true));
        return Err(CspError::unpositioned(
            ErrorKind::Limit,
            "internal: the term table must grow before the system is made".to_string(),
        ));
    }
    Ok(())
}
