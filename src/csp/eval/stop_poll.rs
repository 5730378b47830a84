//! Polling the run's stop signal from long evaluations: listing a set of millions of values
//! (`{0..9999999}`, `diff({0..10000000}, {3})`, a datatype `B.{0..1}.{0..1499999}`),
//! drawing from one in a comprehension. The time and memory limits of a run raise the signal
//! (see [`crate::explore::Watchdog`]), at load as well as while an assertion is checked; the
//! evaluation then ends with an error of kind [`ErrorKind::Stopped`], which the run reports as
//! a stop (and a load as a stopped load), never as an error of the script.

use std::cell::Cell;

use super::*;
use crate::csp::process::stop_poll::{look_due, POLL_WORK};
use crate::explore::StopSignal;

/// Values a set or sequence being built is extended by between two looks at the signal.
pub(super) const POLL_CHUNK: usize = 1 << 16;

thread_local! {
    /// Work done on this thread since its last look at the signal, by evaluations (units of
    /// values listed, generator items drawn; counted by [`look_due`]).
    static WORK: Cell<usize> = const { Cell::new(0) };
}

/// The error of an evaluation stopped by `signal`'s reason.
fn stopped(reason: crate::explore::StopReason, what: &str) -> CspError {
    CspError::unpositioned(
        ErrorKind::Stopped,
        format!("stopped by {} while {what}", reason.describe()),
    )
}

impl Evaluator {
    /// Makes `stop` the signal that stops this evaluator's long evaluations from now on (the
    /// run checking an assertion sets its own; the load sets the load's).
    pub fn set_stop(&self, stop: &StopSignal) {
        *self.stop.lock() = stop.clone();
    }

    /// The reason the evaluator's current stop signal was raised, if it was.
    pub(super) fn stop_reason(&self) -> Option<crate::explore::StopReason> {
        self.stop.lock().reason()
    }

    /// Counts `work` units of work on this thread; an error of kind [`ErrorKind::Stopped`]
    /// if the stop signal is raised when it is looked at (once per [`POLL_WORK`] units).
    #[inline]
    pub(super) fn poll_stop(&self, work: usize) -> EResult<()> {
        if !look_due(&WORK, work) {
            return Ok(());
        }
        match self.stop_reason() {
            None => Ok(()),
            Some(reason) => {
                self.note_cut_short();
                Err(stopped(reason, "evaluating"))
            }
        }
    }

    /// Records that an evaluation was cut short by the stop signal (see
    /// [`Evaluator::load_stopped`]).
    fn note_cut_short(&self) {
        // Ordering: Relaxed; read by the loading thread after its evaluation, on the same
        // thread or after the joins of the threads that evaluated.
        self.cut_short
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The values `items` yields, collected with a look at the stop signal every
    /// [`POLL_CHUNK`] values (a set of millions of values takes seconds and gigabytes to
    /// list: the memory limit must be able to stop it before it is whole).
    pub(super) fn collect_polled(
        &self,
        items: impl Iterator<Item = Value>,
        len_hint: usize,
    ) -> EResult<Vec<Value>> {
        let mut out = Vec::new();
        if out.try_reserve_exact(len_hint).is_err() {
            // More than the memory left (or than the address space allows): the run is over
            // its memory, whatever its budget says; a stop, not an abort.
            self.note_cut_short();
            let stop = self.stop.lock();
            stop.stop(crate::explore::StopReason::MemoryLimit);
            let reason = stop
                .reason()
                .unwrap_or(crate::explore::StopReason::MemoryLimit);
            return Err(stopped(
                reason,
                &format!("evaluating (no room for a set of {len_hint} values)"),
            ));
        }
        for v in items {
            out.push(v);
            if out.len() % POLL_CHUNK == 0 {
                self.poll_stop(POLL_WORK)?;
            }
        }
        Ok(out)
    }

    /// The error for a load, begun at `started`, that its stop signal cut short (none if it
    /// did not: a load that ended its work while or after the signal was raised is whole),
    /// with the load's figures: its time and the process's peak memory.
    pub(super) fn load_stopped(&self, started: std::time::Instant) -> Option<CspError> {
        // Ordering: Relaxed; see `note_cut_short`.
        if !self.cut_short.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let reason = self.stop_reason()?;
        let mut figures = format!("after {:.2} s", started.elapsed().as_secs_f64());
        if let Some(peak) = crate::explore::limits::peak_resident_bytes() {
            figures.push_str(&format!(", {} MB peak memory", peak >> 20));
        }
        Some(stopped(
            reason,
            &format!("loading the script ({figures}): no verdict"),
        ))
    }
}
