//! The `weft` command.

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

mod cli;

/// `mi_option_purge_delay` of mimalloc v3 (the version `libmimalloc-sys` builds by default).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// `mi_option_allow_thp` of mimalloc v3.
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

fn main() {
    // An exploration frees and reallocates large blocks (tables that grow, per-level vectors);
    // with mimalloc's default 10 ms purge delay their pages went back to the kernel and were
    // faulted in and zeroed again, a fifth of the time of a 930k-state run. weft is a
    // short-lived process whose peak is what counts: never purge.
    // SAFETY: sets a process-wide allocator option; mimalloc allows this at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    // mimalloc asks for transparent huge pages on its regions, so every touch of a table commits
    // and zeroes 2 MiB: the scaling example peaked at 142 MB with them and 118 MB without, in
    // the same time. No huge pages for weft's own memory, whatever the system's setting.
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
    #[cfg(target_os = "linux")]
    // SAFETY: a flag of the calling process; no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    #[cfg(target_os = "linux")]
    {
        on_interrupt_stop_searches();
        end_quietly_on_closed_pipe();
    }
    std::process::exit(cli::run());
}

/// Runs `f` with the process's standard output sent to standard error: timely's connection
/// setup prints its progress on standard output, which must carry only weft's results.
pub(crate) fn with_stdout_on_stderr<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_os = "linux")]
    {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // SAFETY: duplicates the process's own standard output descriptor; no pointers.
        let saved = unsafe { libc::dup(libc::STDOUT_FILENO) };
        if saved >= 0 {
            // SAFETY: points descriptor 1 at what descriptor 2 names; no pointers.
            unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) };
        }
        let result = f();
        let _ = std::io::stdout().flush();
        if saved >= 0 {
            // SAFETY: restores descriptor 1 from the duplicate made above and closes that
            // duplicate, which nothing else uses; no pointers.
            unsafe {
                libc::dup2(saved, libc::STDOUT_FILENO);
                libc::close(saved);
            }
        }
        result
    }
    #[cfg(not(target_os = "linux"))]
    f()
}

/// Ctrl-C (SIGINT) stops the running search cleanly: it ends with its statistics and no
/// verdict (exit code 2). A second Ctrl-C, or one while no search listens, ends the process
/// at once (exit code 130, as a shell reports SIGINT).
#[cfg(target_os = "linux")]
fn on_interrupt_stop_searches() {
    extern "C" fn handler(_: libc::c_int) {
        use weft::explore::limits::{interrupt_listened, interrupt_requested};
        if interrupt_requested() || !interrupt_listened() {
            // SAFETY: `_exit` is async-signal-safe and takes no pointers.
            unsafe { libc::_exit(130) };
        }
        weft::explore::limits::request_interrupt();
    }
    // SAFETY: installs a handler that only touches an atomic and calls `_exit`, both
    // async-signal-safe; the function pointer has the signature `signal` expects.
    unsafe {
        libc::signal(
            libc::SIGINT,
            handler as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Output to a closed pipe (`weft check … | head`) ends the process quietly, as other Unix
/// tools do: Rust ignores SIGPIPE by default, and `println!` would then panic.
#[cfg(target_os = "linux")]
fn end_quietly_on_closed_pipe() {
    // SAFETY: restores the default disposition of SIGPIPE; no handler code runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
