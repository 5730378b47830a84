//! [`Threads`]: a number of worker threads, checked once where it is made (a command line's
//! `--threads`, a test, a default), so that the engines take it as it is; and the stack of
//! worker threads, with the budget of it that deep recursions may use on each thread
//! ([`set_stack_budget`]). Imports nothing of weft.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

/// A number of worker threads, from 1 to [`Threads::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Threads(NonZeroUsize);

/// Why a number of threads was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThreadsError {
    /// A whole number outside 1 to [`Threads::MAX`].
    #[error("{0} threads: the number of threads must be from 1 to {max}", max = Threads::MAX)]
    OutOfRange(i128),
    /// Not a whole number.
    #[error("`{0}` is not a number of threads (a whole number from 1 to {max})", max = Threads::MAX)]
    NotANumber(String),
}

impl Threads {
    /// The most worker threads a run may ask for: far more than any machine's cores, few
    /// enough for the system to start.
    pub const MAX: usize = 1024;

    /// One worker.
    pub const ONE: Threads = Threads(NonZeroUsize::MIN);

    /// `n` workers, if `n` is from 1 to [`Threads::MAX`].
    pub fn new(n: usize) -> Result<Threads, ThreadsError> {
        match NonZeroUsize::new(n) {
            Some(n) if n.get() <= Threads::MAX => Ok(Threads(n)),
            _ => Err(ThreadsError::OutOfRange(n as i128)),
        }
    }

    /// One worker per core (at most [`Threads::MAX`]).
    pub fn all_cores() -> Threads {
        let n = num_cpus::get().clamp(1, Threads::MAX);
        Threads(NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN))
    }

    /// The number of workers.
    #[inline]
    pub fn get(self) -> usize {
        self.0.get()
    }
}

impl FromStr for Threads {
    type Err = ThreadsError;

    /// A whole number from 1 to [`Threads::MAX`], spaces around it allowed.
    fn from_str(s: &str) -> Result<Threads, ThreadsError> {
        match s.trim().parse::<i128>() {
            Ok(n) => usize::try_from(n)
                .ok()
                .and_then(|n| Threads::new(n).ok())
                .ok_or(ThreadsError::OutOfRange(n)),
            Err(_) => Err(ThreadsError::NotANumber(s.to_string())),
        }
    }
}

impl fmt::Display for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Threads> for usize {
    fn from(t: Threads) -> usize {
        t.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert_eq!(Threads::new(1), Ok(Threads::ONE));
        assert_eq!(
            Threads::new(Threads::MAX).map(Threads::get),
            Ok(Threads::MAX)
        );
        assert_eq!(Threads::new(0), Err(ThreadsError::OutOfRange(0)));
        assert!(Threads::new(Threads::MAX + 1).is_err());
        assert!((1..=Threads::MAX).contains(&Threads::all_cores().get()));
    }

    #[test]
    fn parsing() {
        assert_eq!(" 4 ".parse::<Threads>().map(Threads::get), Ok(4));
        let negative = "-1".parse::<Threads>().unwrap_err().to_string();
        assert!(negative.starts_with("-1 threads") && negative.contains("from 1 to 1024"));
        assert!("100000"
            .parse::<Threads>()
            .unwrap_err()
            .to_string()
            .contains("1024"));
        assert_eq!(
            "x".parse::<Threads>(),
            Err(ThreadsError::NotANumber("x".into()))
        );
        assert!("99999999999999999999999999999999999999999"
            .parse::<Threads>()
            .is_err());
    }
}

/// Stack a thread's deep recursions (the CSPm evaluator's) may use where the thread did not
/// say otherwise with [`set_stack_budget`]: safe on the 2 MiB stacks of spawned threads.
pub const DEFAULT_STACK_BUDGET: usize = 1 << 20;

/// Stack a worker thread of the engines is given (virtual memory only; pages are touched as
/// used): successor functions may recurse deeply (nested process terms, recursive functions).
pub const WORKER_STACK_BYTES: usize = 64 << 20;

/// Stack left unbudgeted on a worker thread, for what runs below and above the recursions.
const WORKER_STACK_RESERVE: usize = 8 << 20;

thread_local! {
    static STACK_BUDGET: Cell<usize> = const { Cell::new(DEFAULT_STACK_BUDGET) };
}

/// Sets how many bytes of stack deep recursions may use on the calling thread (a few MiB
/// below the thread's stack size): past it they fail with an error instead of overflowing.
pub fn set_stack_budget(bytes: usize) {
    STACK_BUDGET.with(|b| b.set(bytes));
}

/// The calling thread's stack budget (see [`set_stack_budget`]).
pub fn stack_budget() -> usize {
    STACK_BUDGET.with(Cell::get)
}

/// Sets the budget of a thread started with [`WORKER_STACK_BYTES`] of stack: call it first
/// thing on such a thread.
pub fn enter_worker_thread() {
    set_stack_budget(WORKER_STACK_BYTES - WORKER_STACK_RESERVE);
}
