//! Limits of a search and the signal that stops it cleanly.
//!
//! A search (an exploration, a refinement check) polls a [`StopSignal`] between chunks of
//! work; whoever decides that it must end (the state limit, a [`Watchdog`] watching memory and
//! time, an interrupt) raises the signal with a [`StopReason`]. A stopped search returns the
//! statistics it has so far and is marked incomplete: a stop is never a verdict.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a search stopped before it was finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The state limit (`--max-states`) was reached.
    StateLimit,
    /// The process's resident memory reached the memory budget (`--max-memory`).
    MemoryLimit,
    /// The time limit (`--timeout`) passed.
    TimeLimit,
    /// The user interrupted the run.
    Interrupted,
    /// The depth limit (`--max-depth`) was reached: the levels up to it are complete.
    DepthLimit,
}

impl StopReason {
    fn code(self) -> u8 {
        match self {
            StopReason::StateLimit => 1,
            StopReason::MemoryLimit => 2,
            StopReason::TimeLimit => 3,
            StopReason::Interrupted => 4,
            StopReason::DepthLimit => 5,
        }
    }

    fn from_code(code: u8) -> Option<StopReason> {
        match code {
            1 => Some(StopReason::StateLimit),
            2 => Some(StopReason::MemoryLimit),
            3 => Some(StopReason::TimeLimit),
            4 => Some(StopReason::Interrupted),
            5 => Some(StopReason::DepthLimit),
            _ => None,
        }
    }

    /// What the limit was, in words (`the state limit`, ...).
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::StateLimit => "the state limit",
            StopReason::MemoryLimit => "the memory limit",
            StopReason::TimeLimit => "the time limit",
            StopReason::Interrupted => "an interrupt (Ctrl-C)",
            StopReason::DepthLimit => "the depth limit",
        }
    }
}

/// A flag, shared by clones, that tells a search to stop; the first reason raised wins.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicU8>);

impl StopSignal {
    /// A signal not raised.
    pub fn new() -> Self {
        StopSignal::default()
    }

    /// Raises the signal (a second reason does not replace the first).
    pub fn stop(&self, reason: StopReason) {
        // Ordering: Relaxed; the flag carries no data (a stopped search reports only what its
        // own threads hold, published by their joins).
        let _ = self
            .0
            .compare_exchange(0, reason.code(), Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Lowers the signal if `reason` raised it (a search that stopped itself for a reason of
    /// its own and goes on another way); another reason stays.
    pub fn withdraw(&self, reason: StopReason) {
        // Ordering: Relaxed; see `stop`.
        let _ = self
            .0
            .compare_exchange(reason.code(), 0, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Why the signal was raised, if it was.
    #[inline]
    pub fn reason(&self) -> Option<StopReason> {
        // Ordering: Relaxed; see `stop`.
        StopReason::from_code(self.0.load(Ordering::Relaxed))
    }

    /// Whether the signal was raised.
    #[inline]
    pub fn is_raised(&self) -> bool {
        // Ordering: Relaxed; see `stop`.
        self.0.load(Ordering::Relaxed) != 0
    }
}

/// Set by [`request_interrupt`] (from a signal handler), read by every [`Watchdog`].
static INTERRUPT_REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every watched search to stop with [`StopReason::Interrupted`]. Only stores to an
/// atomic, so a signal handler may call it.
pub fn request_interrupt() {
    // Ordering: Relaxed; watchdogs poll it, and it publishes nothing else.
    INTERRUPT_REQUESTED.store(true, Ordering::Relaxed);
}

/// Interruptible watchdogs running now.
static LISTENING: AtomicUsize = AtomicUsize::new(0);

/// Whether some running search stops on [`request_interrupt`] (an interrupt handler ends the
/// process at once when none does).
pub fn interrupt_listened() -> bool {
    // Ordering: Relaxed; a handler racing with a watchdog's start or end may exit or not,
    // both correct.
    LISTENING.load(Ordering::Relaxed) > 0
}

/// Whether [`request_interrupt`] was called.
pub fn interrupt_requested() -> bool {
    // Ordering: Relaxed; see `request_interrupt`.
    INTERRUPT_REQUESTED.load(Ordering::Relaxed)
}

/// Memory and time limits watched by a [`Watchdog`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Stop when the process's resident memory exceeds this many bytes.
    pub max_memory: Option<u64>,
    /// Stop when this instant has passed.
    pub deadline: Option<Instant>,
    /// Stop when [`request_interrupt`] is called.
    pub interruptible: bool,
}

/// How often the watchdog looks at the clock and at the resident memory.
const WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// A thread that raises a [`StopSignal`] when the process's resident memory or the time
/// exceeds its limits; it ends when dropped.
pub struct Watchdog {
    interruptible: bool,
    finished: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching `limits` for `signal`; `None` when there is nothing to watch.
    pub fn start(limits: ResourceLimits, signal: &StopSignal) -> Option<Watchdog> {
        if limits.max_memory.is_none() && limits.deadline.is_none() && !limits.interruptible {
            return None;
        }
        let finished = Arc::new((Mutex::new(false), Condvar::new()));
        let (done, signal) = (finished.clone(), signal.clone());
        let thread = std::thread::Builder::new()
            .name("weft-watchdog".into())
            .spawn(move || {
                let (lock, wake) = &*done;
                let mut finished = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !*finished && !signal.is_raised() {
                    if limits.interruptible && interrupt_requested() {
                        signal.stop(StopReason::Interrupted);
                    } else if limits.deadline.is_some_and(|d| Instant::now() >= d) {
                        signal.stop(StopReason::TimeLimit);
                    } else if let (Some(max), Some(used)) = (limits.max_memory, resident_bytes()) {
                        if used > max {
                            signal.stop(StopReason::MemoryLimit);
                        }
                    }
                    finished = wake
                        .wait_timeout(finished, WATCH_INTERVAL)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            })
            .ok()?;
        if limits.interruptible {
            // Ordering: Relaxed; see `interrupt_listened`.
            LISTENING.fetch_add(1, Ordering::Relaxed);
        }
        Some(Watchdog {
            interruptible: limits.interruptible,
            finished,
            thread: Some(thread),
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, wake) = &*self.finished;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if self.interruptible {
            // Ordering: Relaxed; see `interrupt_listened`.
            LISTENING.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The process's resident memory in bytes (Linux: `/proc/self/statm`), `None` elsewhere.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

/// The process's peak resident memory so far in bytes (Linux: `VmHWM` of
/// `/proc/self/status`), `None` elsewhere.
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn page_size() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads a constant of the system; it has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if size > 0 {
            return size as u64;
        }
    }
    4096
}

/// The memory available to this process: the least of the machine's physical memory and the
/// limits of its control groups (v2 `memory.max`, v1 `memory.limit_in_bytes`); `None` when
/// none can be read.
pub fn available_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    let cgroup = cgroup_limit();
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

fn cgroup_limit() -> Option<u64> {
    // The cgroup of this process (v2: one line `0::/path`), else the root's files.
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_string))
        })
        .unwrap_or_default();
    let candidates = [
        format!("/sys/fs/cgroup{own}/memory.max"),
        "/sys/fs/cgroup/memory.max".to_string(),
        "/sys/fs/cgroup/memory/memory.limit_in_bytes".to_string(),
    ];
    candidates.iter().find_map(|p| {
        let text = std::fs::read_to_string(p).ok()?;
        let limit: u64 = text.trim().parse().ok()?; // "max" (no limit) does not parse
                                                    // cgroup v1 reports "no limit" as a huge number.
        (limit < (1 << 60)).then_some(limit)
    })
}

/// The default memory budget: 85% of [`available_memory`] (the rest is left to the system and
/// to the allocations a search makes between two looks of the watchdog).
pub fn default_memory_budget() -> Option<u64> {
    available_memory().map(|m| m / 100 * 85)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins() {
        let s = StopSignal::new();
        assert_eq!(s.reason(), None);
        s.clone().stop(StopReason::TimeLimit);
        s.stop(StopReason::MemoryLimit);
        assert_eq!(s.reason(), Some(StopReason::TimeLimit));
    }

    #[test]
    fn the_watchdog_raises_the_signal_at_the_deadline() {
        let s = StopSignal::new();
        let limits = ResourceLimits {
            max_memory: None,
            deadline: Some(Instant::now() + Duration::from_millis(30)),
            interruptible: false,
        };
        let _w = Watchdog::start(limits, &s).expect("a watchdog");
        let t = Instant::now();
        while !s.is_raised() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(s.reason(), Some(StopReason::TimeLimit));
    }

    #[test]
    fn the_watchdog_raises_the_signal_over_the_memory_budget() {
        let s = StopSignal::new();
        let limits = ResourceLimits {
            max_memory: Some(1), // any process uses more than one byte
            deadline: None,
            interruptible: false,
        };
        let _w = Watchdog::start(limits, &s).expect("a watchdog");
        let t = Instant::now();
        while !s.is_raised() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        if resident_bytes().is_some() {
            assert_eq!(s.reason(), Some(StopReason::MemoryLimit));
        }
    }

    #[test]
    fn a_dropped_watchdog_raises_nothing() {
        let s = StopSignal::new();
        let limits = ResourceLimits {
            max_memory: Some(u64::MAX),
            deadline: Some(Instant::now() + Duration::from_secs(3600)),
            interruptible: true,
        };
        drop(Watchdog::start(limits, &s));
        assert!(!s.is_raised());
    }

    #[test]
    fn memory_figures_are_plausible_on_linux() {
        if let (Some(rss), Some(avail)) = (resident_bytes(), available_memory()) {
            assert!(rss > 0 && rss < avail, "{rss} {avail}");
            assert!(default_memory_budget().unwrap() < avail);
        }
    }
}
