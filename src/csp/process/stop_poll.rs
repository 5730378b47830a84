//! Polling the run's stop signal from the work a search's own loop does not see: building a
//! process's terms (a replicated operator over millions of values) and firing one term whose
//! transitions take long to compute (a chain of operators thousands deep). The time and
//! memory limits of a run raise the signal (see [`crate::explore::Watchdog`]); this work
//! then ends with an error of kind [`ErrorKind::Stopped`], which the run reports as a stop.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::thread::LocalKey;

use super::terms::Encoding;
use crate::csp::error::{CspError, ErrorKind};
use crate::explore::{IndexFull, StopReason};

/// Units of work (terms built, moves computed, values listed) between two looks at the
/// signal on a thread: a look takes a lock, and the watchdog raises the signal every few
/// milliseconds at most.
pub(crate) const POLL_WORK: usize = 4096;

/// Words of successor keys a network writes between two looks at the signal (a look per
/// state would cost more than a small network's expansion).
pub(super) const POLL_WORDS: usize = 1 << 16;

thread_local! {
    /// Work done on this thread since its last look at the signal, by the process's terms.
    static WORK: Cell<usize> = const { Cell::new(0) };
}

/// Counts `work` units of work in `counter` (a thread's count since its last look at a stop
/// signal) and says whether a look is due: once per [`POLL_WORK`] units, the count starting
/// again from 0 after each look. Shared by the process's terms ([`Encoding::poll_stop`]) and
/// the evaluator's long evaluations (`csp::eval::stop_poll`), each with its own counter.
#[inline]
pub(crate) fn look_due(counter: &'static LocalKey<Cell<usize>>, work: usize) -> bool {
    counter.with(|w| {
        let done = w.get().saturating_add(work);
        w.set(if done >= POLL_WORK { 0 } else { done });
        done >= POLL_WORK
    })
}

impl Encoding {
    /// Counts `work` units of work on this thread; an error of kind [`ErrorKind::Stopped`] if
    /// the run's stop signal is raised when it is looked at (once per [`POLL_WORK`] units).
    #[inline]
    pub(crate) fn poll_stop(&self, work: usize) -> Result<(), CspError> {
        if !look_due(&WORK, work) {
            return Ok(());
        }
        match self.stop.lock().reason() {
            None => Ok(()),
            Some(reason) => Err(CspError::unpositioned(
                ErrorKind::Stopped,
                format!(
                    "stopped by {} while building the process",
                    reason.describe()
                ),
            )),
        }
    }

    /// The error for a state index that cannot number more states. One that cannot allocate
    /// room for more keys is over the run's memory (an allocation that fails under an
    /// address-space bound, or one larger than the memory left): the run's stop signal is
    /// raised with [`StopReason::MemoryLimit`], and the search ends as stopped, with its
    /// statistics, never with an abort or a verdict.
    pub(crate) fn index_error(&self, e: IndexFull) -> CspError {
        match e {
            IndexFull::Memory(_) => {
                let stop = self.stop.lock();
                stop.stop(StopReason::MemoryLimit);
                let reason = stop.reason().unwrap_or(StopReason::MemoryLimit);
                CspError::unpositioned(
                    ErrorKind::Stopped,
                    format!("stopped by {} ({e})", reason.describe()),
                )
            }
            IndexFull::Numbers => CspError::unpositioned(ErrorKind::Limit, e.to_string()),
        }
    }
}
