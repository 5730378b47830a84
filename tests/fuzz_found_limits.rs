//! Inputs the grammar-aware fuzzer found (see `tests/fuzz_found/README.md`), run through the
//! command line under the fuzzers' address-space bound: each ends within seconds with a
//! positioned error or a limit stop (exit 2), never a hang, an abort or a verdict after a stop.

#[path = "common/fuzz_run.rs"]
#[allow(dead_code)] // the numeric knobs are the fuzzers'
mod fuzz_run;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use fuzz_run::{binary, spawn_drained, DrainedRun};

/// What a measured run gave.
struct Measured {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    /// The run's peak resident memory, in bytes (0 where it cannot be read).
    peak: u64,
}

/// Writes the script `text` to `name` in this test binary's scratch folder and runs `weft
/// check` on it with `limits` (and any other options) under the fuzzers' address-space bound,
/// measuring the run's time and peak memory.
fn check_script(name: &str, text: &str, limits: &[&str]) -> Measured {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_found_limits");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    let mut args = vec!["check", path.to_str().expect("utf-8 path")];
    args.extend_from_slice(limits);
    measured(&args)
}

/// Runs `weft ARGS` under the address-space bound and measures its peak resident memory
/// (`wait4` of this child alone: the test binary runs its tests in parallel).
fn measured(args: &[&str]) -> Measured {
    let started = Instant::now();
    let mut command = Command::new(binary());
    command.args(args);
    let DrainedRun {
        mut child,
        stdout: out,
        stderr: err,
    } = spawn_drained(command);
    let (code, peak) = wait_measured(&mut child);
    Measured {
        code,
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
        took: started.elapsed(),
        peak,
    }
}

#[cfg(unix)]
fn wait_measured(child: &mut std::process::Child) -> (Option<i32>, u64) {
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child.id()` is this process's child, not yet waited for; both out-pointers
    // point to live locals.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // Linux reports `ru_maxrss` in KiB.
    (code, usage.ru_maxrss.max(0) as u64 * 1024)
}

#[cfg(not(unix))]
fn wait_measured(child: &mut std::process::Child) -> (Option<i32>, u64) {
    (child.wait().expect("wait").code(), 0)
}

const GIB: u64 = 1 << 30;

/// The first assertion of a `--json` run's output.
fn first_assertion(r: &Measured) -> serde_json::Value {
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    json["assertions"][0].clone()
}

/// Cases 206, 310, 311: a chain of sliding choices 20,000 deep. Firing its top term fires
/// every level below it, in one step of the search that the search's own limit checks do
/// not see: the time limit must stop it there.
#[test]
fn a_deep_chain_of_sliding_choices_stops_at_the_time_limit() {
    let depth = 20_000;
    let body = format!("{}STOP{}", "(".repeat(depth), " [> STOP)".repeat(depth));
    let r = check_script(
        "deep_timeout_chain.csp",
        &format!("P = {body}\nassert STOP [T= P\n"),
        &["--timeout", "2", "--max-memory", "1G"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("stopped by the time limit"),
        "{}",
        r.stderr
    );
    assert!(r.took < Duration::from_secs(20), "took {:?}", r.took);
}

/// Case 224: a replicated parallel over 10^7 values is refused where it is written, before
/// its components are built. (Its set of 10^7 integers is listed at load, in 3 s and 0.8 GB
/// alone; since fuzz13 the load counts against `--timeout` and `--max-memory`, so the limits
/// here leave it room: the refusal is what is tested.)
#[test]
fn a_ten_million_way_replicated_parallel_is_refused_with_a_position() {
    let r = check_script(
        "replicated_parallel.csp",
        "channel a\nP = || x : {0..9999999} @ [{a}] a -> STOP\nassert P :[deadlock free]\n",
        &["--timeout", "30", "--max-memory", "3G"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("replicated_parallel.csp:2:5"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("too large to explore"), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(20), "took {:?}", r.took);
}

/// fuzz10's open case 239: `d$x` over a channel of 10^7 values. Before: 2.9 GB (the channel's
/// 10^7 events listed at load although the channel is numbered as met, and the message
/// printing all 10^7 values: 88 MB of stderr). Now a positioned one-line message in about
/// 0.8 GB (the channel's type, a set of 10^7 values, is built).
#[test]
fn a_nondeterministic_input_over_ten_million_values_is_refused_in_one_line() {
    let r = check_script(
        "nondeterministic_input.csp",
        "channel d : {0..9999999}\nP = d$x -> STOP\nassert P :[deadlock free]\n",
        &["--timeout", "20", "--max-memory", "3G"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("nondeterministic_input.csp:2:7"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("… (10000000 elements)} (restrict it"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.len() < 4000, "{} bytes of stderr", r.stderr.len());
    assert!(r.peak < 3 * GIB / 2, "peak {} MB", r.peak >> 20);
    assert!(r.took < Duration::from_secs(30), "took {:?}", r.took);
}

/// `STOP ||| a -> STOP ||| …` 10,000 links (fuzz10's open case 108, seed 0x5EED10): its
/// states have 10,001 components and 10,000 successors. Before: an abort under the 4 GiB
/// bound (a 2.6 GB allocation of key segments for numbers the state index took and never
/// used), or 1.8 GB and 9 s. Now every assertion ends by a verdict found at once or a stop,
/// each within seconds of `--timeout 3` (the first by the time or the memory limit).
#[test]
fn a_ten_thousand_way_interleaving_ends_at_its_limits() {
    let body = format!("P = STOP{}", " ||| a -> STOP".repeat(10_000));
    let r = check_script(
        "interleaving_chain.csp",
        &format!(
            "channel a\n{body}\nassert P :[deadlock free]\nassert P :[divergence free]\n\
             assert STOP [T= P\n"
        ),
        &[
            "--json",
            "--threads",
            "2",
            "--timeout",
            "3",
            "--max-memory",
            "1G",
            "--max-states",
            "20000",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    let assertions = json["assertions"].as_array().expect("assertions");
    assert_eq!(assertions.len(), 3);
    for a in assertions {
        let seconds = a["seconds"].as_f64().expect("seconds");
        assert!(seconds < 10.0, "{a}");
        // A stop is never a verdict.
        if a["verdict"] == "stopped" {
            assert_eq!(a["holds"], serde_json::Value::Null, "{a}");
        }
    }
    // The first assertion cannot finish within its limits: it stops by the time or by the
    // memory limit, whichever the machine's speed reaches first.
    let first = &assertions[0];
    assert_eq!(first["verdict"], "stopped", "{first}");
    assert!(
        first["stopped"] == "time-limit" || first["stopped"] == "memory-limit",
        "{first}"
    );
    assert!(r.peak < 2 * GIB, "peak {} MB", r.peak >> 20);
    assert!(r.took < Duration::from_secs(60), "took {:?}", r.took);
}

/// `(a -> STOP [|{b}|] a -> STOP) [|{b}|] …` 10,000 deep: as the interleaving, with a sync
/// set. Before: stopped 65 s after `--timeout 3` (the engine looked at the stop signal only
/// between chunks of 64 states, each state 0.2 s to expand).
#[test]
fn a_ten_thousand_deep_parallel_chain_stops_at_the_time_limit() {
    let depth = 10_000;
    let body = format!(
        "{}a -> STOP{}",
        "(".repeat(depth),
        " [|{b}|] a -> STOP)".repeat(depth)
    );
    let r = check_script(
        "parallel_chain.csp",
        &format!("channel a, b\nP = {body}\nassert P :[deadlock free]\n"),
        &[
            "--json",
            "--threads",
            "2",
            "--timeout",
            "3",
            "--max-memory",
            "2G",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let a = &first_assertion(&r);
    assert_eq!(a["stopped"], "time-limit", "{a}");
    assert!(a["seconds"].as_f64().expect("seconds") < 10.0, "{a}");
    assert!(r.took < Duration::from_secs(40), "took {:?}", r.took);
}

/// Chains of 10,000 of each operator end within seconds, by a verdict or a stop (exit 0, 1
/// or 2), never by a signal: measured before fuzz11 at 0.01-4 s each (one assertion).
#[test]
fn ten_thousand_long_chains_of_each_operator_end_within_their_limits() {
    let n = 10_000;
    let left = |first: &str, op: &str, item: &str| {
        format!(
            "{}{first}{}",
            "(".repeat(n),
            format!(" {op} {item})").repeat(n)
        )
    };
    let chains = [
        (
            "external_choice",
            format!("STOP{}", " [] a -> STOP".repeat(n)),
        ),
        (
            "internal_choice",
            format!("STOP{}", " |~| a -> STOP".repeat(n)),
        ),
        ("sequence", format!("SKIP{}", " ; a -> SKIP".repeat(n))),
        ("generalised_parallel", left("STOP", "[|{a}|]", "a -> STOP")),
        (
            "alphabetised_parallel",
            left("a -> STOP", "[{a} || {a}]", "a -> STOP"),
        ),
        ("interrupt", format!("STOP{}", " /\\ a -> STOP".repeat(n))),
        (
            "sliding_choice",
            format!("STOP{}", " [> a -> STOP".repeat(n)),
        ),
        ("hiding", format!("a -> STOP{}", " \\ {a}".repeat(n))),
        ("renaming", format!("a -> STOP{}", " [[a <- b]]".repeat(n))),
        ("exception", left("STOP", "[|{a}|>", "a -> STOP")),
        ("let", format!("{}Q", "let Q = a -> STOP within ".repeat(n))),
        (
            "if",
            format!(
                "{}STOP{}",
                "if true then a -> ".repeat(n),
                " else STOP".repeat(n)
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (name, body) in chains {
        let r = check_script(
            &format!("chain_{name}.csp"),
            &format!("channel a, b\nP = {body}\nassert P :[deadlock free]\n"),
            &[
                "--threads",
                "2",
                "--timeout",
                "2",
                "--max-memory",
                "1G",
                "--max-states",
                "20000",
            ],
        );
        if !matches!(r.code, Some(0..=2)) || r.stderr.contains("panicked") {
            failures.push(format!("{name}: exit {:?}: {}", r.code, r.stderr));
        } else if r.took > Duration::from_secs(20) {
            failures.push(format!("{name}: took {:?}", r.took));
        } else if r.peak > GIB {
            // fuzz13: the parallel chains peaked at 0.8-1.3 GB (their joined moves' updates
            // copied at every level); 80-90 MB now.
            failures.push(format!("{name}: peak {} MB", r.peak >> 20));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// fuzz12, grammar case 33 (seed 0x5EED12): `(STOP [|{a}|] STOP)` nested 20,000 deep to the
/// left. Its deadlock is found at once, but the counterexample listed the state's 20,001
/// components each with its path in the network (2·10^8 words in all, then their text):
/// 34-48 s and 2.9-14.5 GB after the check, outside every limit. Now a state whose paths
/// are that long is shown whole: 0.9 s, 141 MB.
#[test]
fn a_twenty_thousand_deep_parallel_chain_is_explained_in_little_memory() {
    let depth = 20_000;
    let body = format!(
        "{}STOP{}",
        "(".repeat(depth),
        " [|{a}|] STOP)".repeat(depth)
    );
    let r = check_script(
        "explained_parallel_chain.csp",
        &format!("channel a\nP = {body}\nassert P :[deadlock free]\n"),
        &[
            "--max-states",
            "20000",
            "--timeout",
            "3",
            "--max-memory",
            "1G",
        ],
    );
    // The deadlock is real: a verdict, with the state shown whole.
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stdout.contains("then deadlock"), "{}", r.stdout);
    assert!(r.stdout.contains("  state: ((("), "{}", r.stdout);
    assert!(r.peak < GIB / 2, "peak {} MB", r.peak >> 20);
    assert!(r.took < Duration::from_secs(20), "took {:?}", r.took);
}

/// fuzz11's open case 149: `P = a -> (P ||| P)` under `:[deterministic]` and `--timeout 3`
/// stopped 6-14 s after the start: a node of the normal form (every state one trace
/// reaches, here thousands of growing interleavings) was built and tested whole, without a
/// look at the stop signal. Building it now polls the signal between states: measured
/// 3.05-3.07 s (6.4-7.8 s before, runs alternated on the same machine).
#[test]
fn a_doubling_interleaving_stops_at_the_time_limit_under_determinism() {
    let r = check_script(
        "doubling_interleaving.csp",
        "channel a\nP = a -> (P ||| P)\nassert P :[deterministic]\n",
        &["--json", "--timeout", "3", "--max-memory", "2G"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let a = &first_assertion(&r);
    assert_eq!(a["verdict"], "stopped", "{a}");
    assert_eq!(a["holds"], serde_json::Value::Null, "{a}");
    assert!(
        a["stopped"] == "time-limit" || a["stopped"] == "memory-limit",
        "{a}"
    );
    assert!(a["seconds"].as_f64().expect("seconds") < 4.5, "{a}");
    assert!(r.took < Duration::from_secs(30), "took {:?}", r.took);
}

/// fuzz12's open mutant 1492 (seed 0x5EED12): a datatype of 3·10^6 values, never used, was
/// listed at load (775 MB, 3.5 s) before any limit was watched. The load is now watched by
/// the run's limits and its listing polls the stop signal: it stops by the memory limit
/// (measured: 0.6 s, 310 MB peak), a stop, not an error of the script.
#[test]
fn a_three_million_value_datatype_stops_the_load_at_the_memory_limit() {
    let r = check_script(
        "large_datatype.csp",
        "datatype D = B.{0..1}.{0..1499999} | C\nchannel a\nP = a -> STOP\n\
         assert P :[deadlock free]\n",
        &["--timeout", "20", "--max-memory", "300M"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("stopped by the memory limit while loading the script"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "no verdict: {}", r.stdout);
    assert!(r.peak < GIB / 2, "peak {} MB", r.peak >> 20);
    assert!(r.took < Duration::from_secs(15), "took {:?}", r.took);
}

/// As above, stopped by the time limit: the load of the datatype takes seconds.
#[test]
fn a_three_million_value_datatype_stops_the_load_at_the_time_limit() {
    let r = check_script(
        "large_datatype_timed.csp",
        "datatype D = B.{0..1}.{0..1499999} | C\nchannel a\nP = a -> STOP\n\
         assert P :[deadlock free]\n",
        &["--timeout", "0.05", "--max-memory", "3G", "--json"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(json["error"]["kind"], "stopped", "{json}");
    let message = json["error"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("stopped by the time limit while loading the script (after "),
        "{message}"
    );
    assert!(r.took < Duration::from_secs(15), "took {:?}", r.took);
}

/// `diff({0..10000000}, {3})`: ten million integers listed (0.8 GB) before `--max-memory
/// 300M` stopped the run. The listing now polls the stop signal: a stop at about 310 MB.
#[test]
fn a_ten_million_integer_difference_stops_at_the_memory_limit() {
    let r = check_script(
        "large_difference.csp",
        "channel a\nS = diff({0..10000000}, {3})\nP = if member(5, S) then a -> STOP else STOP\n\
         assert P :[deadlock free]\n",
        &["--timeout", "20", "--max-memory", "300M"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("stopped by the memory limit"),
        "{}",
        r.stderr
    );
    assert!(r.peak < GIB / 2, "peak {} MB", r.peak >> 20);
    assert!(r.took < Duration::from_secs(15), "took {:?}", r.took);
}

/// fuzz11/12's open case: parallel chains 10,000 deep (`[{a} || {a}]`, `[|{a}|]`) peaked at
/// 0.97-0.99 GB on their first state: each level copied the updates of the joined move of
/// every level below it (quadratic). A joined move whose parts lie end to end now shares
/// them: 80-91 MB, the same verdict (the chain deadlocks after its `a`).
#[test]
fn ten_thousand_deep_synchronised_chains_take_little_memory() {
    let n = 10_000;
    for (name, op) in [("alphabetised", "[{a} || {a}]"), ("generalised", "[|{a}|]")] {
        let body = format!(
            "{}a -> STOP{}",
            "(".repeat(n),
            format!(" {op} a -> STOP)").repeat(n)
        );
        let r = check_script(
            &format!("synchronised_chain_{name}.csp"),
            &format!("channel a, b\nP = {body}\nassert P :[deadlock free]\n"),
            &["--threads", "2", "--timeout", "20", "--max-memory", "2G"],
        );
        assert_eq!(r.code, Some(1), "{name}: {}", r.stderr);
        assert!(r.stdout.contains("then deadlock"), "{name}: {}", r.stdout);
        assert!(r.peak < GIB / 4, "{name}: peak {} MB", r.peak >> 20);
    }
}

/// fuzz14, grammar case 73 (seed 0x5EED14): `(STOP /\ STOP)` nested 20,000 deep to the left;
/// also `[|{a}|>` and `[{a} || {a}]`. Each deadlocks at once, but the counterexample's
/// state was turned back into a process (to be shown) by a recursion as deep as its term
/// (`Encoding::to_proc`, `NetNode::to_proc`), on the main thread's stack: a stack overflow,
/// signal 6. It now recurses on a stack grown as needed: the verdict, in little time.
#[test]
fn twenty_thousand_deep_chains_are_explained_without_a_stack_overflow() {
    let depth = 20_000;
    let mut failures = Vec::new();
    for (name, op) in [
        ("interrupt", "/\\"),
        ("exception", "[|{a}|>"),
        ("alphabetised", "[{a} || {a}]"),
    ] {
        let body = format!(
            "{}STOP{}",
            "(".repeat(depth),
            format!(" {op} STOP)").repeat(depth)
        );
        let r = check_script(
            &format!("explained_{name}_chain.csp"),
            &format!("channel a, b\nP = {body}\nassert P :[deadlock free]\n"),
            &[
                "--max-states",
                "20000",
                "--timeout",
                "5",
                "--max-memory",
                "1G",
            ],
        );
        // The deadlock is real (every operand is STOP): a verdict, with its state.
        if r.code != Some(1) || !r.stdout.contains("then deadlock") {
            failures.push(format!(
                "{name}: exit {:?}: {}{}",
                r.code, r.stdout, r.stderr
            ));
        } else if r.took > Duration::from_secs(20) {
            failures.push(format!("{name}: took {:?}", r.took));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// fuzz11-14's open case: `/\` and `[>` chains 10,000 long (`STOP /\ a -> STOP /\ …`, left
/// nested). Their first state has 10,000 successors, each a new chain as long as the part
/// of the chain above the event fired; every nested term's moves are sorted and memoised, so
/// the first state alone costs about 5·10^7 term creations and the next level about 1.7·10^11
/// memoised moves (counted from the firing rules; measured before fuzz14, `--timeout 20`: 200 links 0.1 s user, 400 links 1.2 s user
/// and 213 MB, 1,000 links past the time limit). Not made linear yet: each run must end by
/// its time limit (or its memory limit, or a verdict) within a second or so of it.
#[test]
fn interrupt_and_sliding_choice_chains_end_at_their_time_limit() {
    let n = 10_000;
    for (name, op) in [("interrupt", "/\\"), ("sliding_choice", "[>")] {
        let r = check_script(
            &format!("limited_{name}_chain.csp"),
            &format!(
                "channel a\nP = STOP{}\nassert P :[deadlock free]\n",
                format!(" {op} a -> STOP").repeat(n)
            ),
            &["--json", "--timeout", "2", "--max-memory", "1G"],
        );
        assert!(matches!(r.code, Some(1 | 2)), "{name}: {}", r.stderr);
        let a = &first_assertion(&r);
        if a["verdict"] == "stopped" {
            assert_eq!(a["holds"], serde_json::Value::Null, "{name}: {a}");
            assert!(
                a["stopped"] == "time-limit" || a["stopped"] == "memory-limit",
                "{name}: {a}"
            );
        }
        let seconds = a["seconds"].as_f64().expect("seconds");
        assert!(seconds < 4.0, "{name}: {a}");
        assert!(
            r.took < Duration::from_secs(20),
            "{name}: took {:?}",
            r.took
        );
    }
}

/// fuzz14's open mutant 3582: a filter that no element of `<1..>` passes, drawn from three
/// times. Each draw of the 10^7 allowed evaluates the comprehension, and none looked at the
/// limits: 7.9 s (23.5 s on a loaded machine) under `--timeout 2`. The draws now look at the
/// stop signal as they go.
#[test]
fn drawing_from_an_empty_lazy_sequence_stops_at_the_time_limit() {
    let r = check_script(
        "empty_lazy_sequence.csp",
        "channel out : {0..9}\n\
         odds = <x | x <- <1..>, x % 2 == 2147483647>\n\
         take(_, 0) = <>\n\
         take(<x>^xs, n) = <x>^take(xs, n - 1)\n\
         OUT(s) = if null(s) then STOP else out.(head(s) % 10) -> OUT(tail(s))\n\
         assert OUT(take(odds, 3)) [T= STOP\n\
         assert STOP [T= OUT(take(odds, 2))\n\
         assert OUT(take(odds, 1)) :[deadlock free]\n",
        &["--timeout", "2", "--max-memory", "1G", "--threads", "1"],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("stopped by the time limit"),
        "{}",
        r.stderr
    );
    assert!(r.took < Duration::from_secs(6), "took {:?}", r.took);
}

/// fuzz14's open grammar cases 153 and 160: a sequence doubled at each step. A concatenation
/// of millions of values was built in one go, between two looks at the limits: 1.7 GB under
/// `--max-memory 1G`. It is now built in chunks that look at the stop signal.
#[test]
fn a_doubling_sequence_stops_near_the_memory_limit() {
    let r = check_script(
        "doubling_sequence.csp",
        "channel a\nP(s) = a -> P(s ^ s ^ <1>)\nassert P(<>) :[deadlock free]\n",
        &[
            "--max-states",
            "3000",
            "--timeout",
            "10",
            "--max-memory",
            "1G",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stdout.contains("stopped by the"), "{}", r.stdout);
    assert!(r.peak < 3 * GIB / 2, "peak {} MB", r.peak >> 20);
}
