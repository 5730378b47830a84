//! The `weft` command.

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

mod cli;

/// `mi_option_purge_delay` of mimalloc v3 (the version `libmimalloc-sys` builds by default).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // An exploration frees and reallocates large blocks (tables that grow, per-level vectors);
    // with mimalloc's default 10 ms purge delay their pages went back to the kernel and were
    // faulted in and zeroed again, a fifth of the time of a 930k-state run. weft is a
    // short-lived process whose peak is what counts: never purge.
    // SAFETY: sets a process-wide allocator option; mimalloc allows this at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    std::process::exit(cli::run());
}
