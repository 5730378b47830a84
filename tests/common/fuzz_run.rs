//! What the fuzzing tests (`fuzz_mutants`, `fuzz_grammar`, `fuzz_found_limits`) share: the
//! binary they run, how a run is started, the address-space bound of each run, and their
//! numeric knobs.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// The address-space bound of every run: an input that makes weft allocate without bound must
/// meet a clean refusal or its memory budget, and must not take the test machine's memory; past
/// the bound an allocation fails, which weft must not turn into an abort.
pub const ADDRESS_SPACE: u64 = 4 << 30;

/// Bounds the address space of the process `command` starts to [`ADDRESS_SPACE`].
#[cfg(unix)]
pub fn limit_address_space(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE as libc::rlim_t,
                rlim_max: ADDRESS_SPACE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Bounds nothing where there is no `setrlimit`.
#[cfg(not(unix))]
pub fn limit_address_space(_: &mut Command) {}

/// The binary under test: `$WEFT_FUZZ_BIN`, or the one this test was built with.
pub fn binary() -> PathBuf {
    std::env::var_os("WEFT_FUZZ_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_weft")), PathBuf::from)
}

/// The number in environment variable `name` (decimal or `0x` hex), if set.
pub fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={text:?}: {e}")))
}

/// A started run of weft with its output being read: `stdout` and `stderr` give the whole
/// text once the run has ended (read on threads of their own, so that a full pipe never
/// blocks the run).
pub struct DrainedRun {
    pub child: Child,
    pub stdout: JoinHandle<String>,
    pub stderr: JoinHandle<String>,
}

/// Starts `command` (weft with its arguments) under the address-space bound, with no input
/// and both outputs read as they come.
pub fn spawn_drained(mut command: Command) -> DrainedRun {
    limit_address_space(&mut command);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start weft");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    DrainedRun {
        child,
        stdout,
        stderr,
    }
}
