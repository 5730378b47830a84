//! Mutation fuzzing of the `weft` binary: mutants of the bundled examples, of the corpus's CSPm
//! scripts and of its small `.aut` files, each run through the real command line with small
//! limits. Whatever the input, weft must answer: no panic, no abort or other signal, no hang, an
//! exit code of 0, 1 or 2, a message on stderr with every exit 2, and no `error:` line with an
//! exit 0 or 1.
//!
//! The mutants come from a fixed-seed PRNG, so every run of the test tries the same inputs, and
//! mutant `i` depends only on the base seed and `i`. Knobs (environment variables):
//! - `WEFT_FUZZ_RUNS`: how many mutants (default [`DEFAULT_MUTANTS`]; raise it for long local
//!   runs, e.g. `WEFT_FUZZ_RUNS=100000`);
//! - `WEFT_FUZZ_SEED`: another base seed (decimal or `0x` hex), to try other mutants;
//! - `WEFT_FUZZ_ONLY`: run only mutant `i` (with the same seed), to reproduce a failure;
//! - `WEFT_FUZZ_WORKERS`: parallel workers (default 2);
//! - `WEFT_FUZZ_ODD_OPTIONS=0`: leave out the abused options (`--threads 100000` ...), for a
//!   binary known to mishandle them;
//! - `WEFT_FUZZ_BIN`: another `weft` binary to try (default: the one this test was built with).
//!
//! A hang is confirmed by running the command again (a loaded machine can stall one run).
//!
//! A failing mutant is saved under `target/tmp/fuzz_failures/`, and the failure message gives
//! the command that reproduces it.

mod common;

#[path = "common/fuzz_run.rs"]
mod fuzz_run;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fuzz_run::{binary, env_number, spawn_drained, DrainedRun};

use common::corpus_dir;

/// Mutants per run of the suite. Measured on a busy 2-core machine: 1.5 commands per mutant, 10
/// to 20 ms per command, so 4000 mutants (about 5900 runs) take 40 to 70 s on 2 workers.
const DEFAULT_MUTANTS: usize = 4000;
/// The base seed of the PRNG.
const DEFAULT_SEED: u64 = 0x5EED_F00D_2024_0011;
/// A run taking longer than this is killed and counted as a hang (the state limit keeps honest
/// runs of these small inputs well under a second)...
const WATCHDOG: Duration = Duration::from_secs(10);
/// ...plus this per assertion of the script, where the binary stops each assertion after
/// [`ASSERTION_TIMEOUT`] and goes on with the next.
const WATCHDOG_PER_ASSERTION: Duration = Duration::from_secs(3);
/// `--timeout` and `--max-memory` given to each searching command that takes them.
const ASSERTION_TIMEOUT: &str = "2";
const MAX_MEMORY: &str = "1G";
/// The state limit given to every command that takes one.
const MAX_STATES: &str = "2000";
/// Seeds larger than this are left out (larger scripts cost more per run and add little).
const MAX_CSP_SEED_BYTES: u64 = 6 * 1024;
const MAX_AUT_SEED_BYTES: u64 = 4 * 1024;

/// SplitMix64: small, fast, and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Operators, keywords and awkward numbers inserted into CSPm mutants.
#[rustfmt::skip]
const CSP_SNIPPETS: &[&str] = &[
    "\\", "[|", "|]", "|||", "->", "channel", "assert", "{|", "|}", "<", ">", "4000000000", "-1",
    "0", "2147483648", "9223372036854775808", "[]", "|~|", ";", "/\\", "[>", "[[", "]]", "<-",
    "<->", ":", "?x", "!", ".", "..", "{0..4000000000}", "Events", "STOP", "SKIP", "if", "then",
    "else", "let", "within", "@", "&", "=", "(", ")", "{", "}", "datatype", "nametype", "Int",
    "Bool", ":[deadlock free]", ":[divergence free]", ":[deterministic]", ":[has trace]:", "[T=",
    "[F=", "[FD=", "include \"x.csp\"", "--", "{-", "-}", "\"", "\n", "#", "^", "%", "/", "not",
    "true", "false", "|", ",", "_", "\\ x @ x", "f(x) = f(x)", "CHAOS(Events)", "RUN(Events)",
    "seq(Int)", "Set(Events)", "{x | x <- Int}", "<x | x <- <1..>>", "1/0", "[ a <- b ]",
    "[|Events|]", "|||x:{0..9}@", "[]x:Int@", "λ", "\u{0}", "\r",
];

/// Pieces inserted into `.aut` mutants.
#[rustfmt::skip]
const AUT_SNIPPETS: &[&str] = &[
    "des", "(", ")", ",", "\"", "\"tau\"", "\"i\"", "i", "tau", "-1", "0", "4000000000",
    "4294967295", "4294967296", "18446744073709551616", "\n", "\r\n", " ", "des (0, 1, 1)\n",
    "(0, \"a\", 4000000000)\n", "(4000000000, a, 0)\n", "\"a\\\"b\"", "\u{0}", "λ", "*",
];

/// Numbers that replace a number of the seed.
const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "4000000000",
    "4294967295",
    "4294967296",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "99999999999999999999999999",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Csp,
    Aut,
}

struct Seed {
    path: PathBuf,
    text: Vec<u8>,
    kind: Kind,
    /// A CSPm script with at least one `assert`.
    has_assertions: bool,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The seeds, in a fixed order: the examples, the data-driven cases and every small CSPm script
/// and `.aut` file of the in-repo corpus.
fn seeds() -> Vec<Seed> {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(&crate_dir.join("examples"), &mut files);
    collect(&crate_dir.join("tests/csp"), &mut files);
    collect(&crate_dir.join("tests/cases"), &mut files);
    collect(&corpus_dir(), &mut files);
    files.sort();
    let mut seeds = Vec::new();
    for path in files {
        let name = path.to_string_lossy();
        let (kind, limit) = if [".csp", ".cspm", ".fdr2"].iter().any(|e| name.ends_with(e)) {
            (Kind::Csp, MAX_CSP_SEED_BYTES)
        } else if name.ends_with(".aut") {
            (Kind::Aut, MAX_AUT_SEED_BYTES)
        } else {
            continue;
        };
        let in_examples = path.starts_with(crate_dir.join("examples"));
        let size = std::fs::metadata(&path).expect("metadata").len();
        if size > limit && !in_examples {
            continue;
        }
        let text = std::fs::read(&path).expect("read seed");
        let has_assertions = kind == Kind::Csp && text.windows(7).any(|w| w == b"assert ");
        seeds.push(Seed {
            path,
            text,
            kind,
            has_assertions,
        });
    }
    seeds
}

/// Splits text into runs of word bytes, of blanks, and single other bytes (so that `[|` is two
/// tokens and `->` too: token edits then make new operators as well as break old ones).
fn tokens(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let class = |b: u8| {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'\'' || b >= 0x80 {
            0
        } else if b.is_ascii_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=text.len() {
        if i == text.len() || class(text[i]) != class(text[start]) || class(text[start]) == 2 {
            if start < i {
                out.push(start..i);
            }
            start = i;
        }
    }
    out
}

/// Line ranges, each with its newline.
fn lines(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// Replaces `range` of `text` with `with`.
fn splice(text: &mut Vec<u8>, range: std::ops::Range<usize>, with: &[u8]) {
    text.splice(range, with.iter().copied());
}

/// Swaps two disjoint ranges (`a` before `b`).
fn swap_ranges(text: &mut Vec<u8>, a: std::ops::Range<usize>, b: std::ops::Range<usize>) {
    let (first, second) = if a.start <= b.start { (a, b) } else { (b, a) };
    if first.end > second.start {
        return;
    }
    let mut out = Vec::with_capacity(text.len());
    out.extend_from_slice(&text[..first.start]);
    out.extend_from_slice(&text[second.clone()]);
    out.extend_from_slice(&text[first.end..second.start]);
    out.extend_from_slice(&text[first]);
    out.extend_from_slice(&text[second.end..]);
    *text = out;
}

/// Applies one random mutation; returns its name (for the failure report).
fn mutate_once(rng: &mut Rng, text: &mut Vec<u8>, kind: Kind) -> &'static str {
    let snippets = match kind {
        Kind::Csp => CSP_SNIPPETS,
        Kind::Aut => AUT_SNIPPETS,
    };
    if text.is_empty() {
        text.extend_from_slice(rng.pick(snippets).as_bytes());
        return "insert into empty";
    }
    let toks = tokens(text);
    let ls = lines(text);
    // Edits that keep most of the script readable weigh more than the ones that break a byte.
    const WEIGHTS: [usize; 14] = [1, 1, 2, 2, 1, 2, 2, 1, 2, 2, 3, 3, 1, 1];
    let mut pick = rng.below(WEIGHTS.iter().sum());
    let mut op = 0;
    while pick >= WEIGHTS[op] {
        pick -= WEIGHTS[op];
        op += 1;
    }
    match op {
        0 => {
            let at = rng.below(text.len());
            text[at] ^= 1 << rng.below(8);
            "flip a bit"
        }
        1 => {
            let at = rng.below(text.len());
            text[at] = *rng.pick(b"\0\xff\n\r\t\"'(){}[]<>|\\-=:.,;@?!#0123456789aZ");
            "set a byte"
        }
        2 => {
            let t = rng.pick(&toks).clone();
            splice(text, t, b"");
            "delete a token"
        }
        3 => {
            let t = rng.pick(&toks).clone();
            let copy = text[t.clone()].to_vec();
            splice(text, t.start..t.start, &copy);
            "duplicate a token"
        }
        4 => {
            let a = rng.pick(&toks).clone();
            let b = rng.pick(&toks).clone();
            swap_ranges(text, a, b);
            "swap two tokens"
        }
        5 => {
            let l = rng.pick(&ls).clone();
            splice(text, l, b"");
            "delete a line"
        }
        6 => {
            let l = rng.pick(&ls).clone();
            let copy = text[l.clone()].to_vec();
            splice(text, l.start..l.start, &copy);
            "duplicate a line"
        }
        7 => {
            let a = rng.pick(&ls).clone();
            let b = rng.pick(&ls).clone();
            swap_ranges(text, a, b);
            "swap two lines"
        }
        8 | 9 => {
            let at = rng.pick(&toks).start;
            let snippet = rng.pick(snippets);
            let padded = if rng.chance(50) {
                format!(" {snippet} ")
            } else {
                snippet.to_string()
            };
            splice(text, at..at, padded.as_bytes());
            "insert a snippet"
        }
        10 => {
            let numbers: Vec<_> = toks
                .iter()
                .filter(|t| text[(*t).clone()].iter().all(u8::is_ascii_digit))
                .cloned()
                .collect();
            let number = rng.pick(EXTREME_NUMBERS).as_bytes();
            if numbers.is_empty() {
                let at = rng.pick(&toks).start;
                splice(text, at..at, number);
            } else {
                let t = rng.pick(&numbers).clone();
                splice(text, t, number);
            }
            "replace a number"
        }
        11 => {
            // A word of the script in the place of another: a name used out of place, a
            // definition made recursive, a channel typed by itself.
            let words: Vec<_> = toks
                .iter()
                .filter(|t| text[t.start].is_ascii_alphabetic())
                .cloned()
                .collect();
            if words.is_empty() {
                return "replace a word (none)";
            }
            let from = text[rng.pick(&words).clone()].to_vec();
            let t = rng.pick(&words).clone();
            splice(text, t, &from);
            "replace a word with another"
        }
        12 => {
            let at = rng.below(text.len());
            text.truncate(at);
            "truncate"
        }
        _ => {
            // One number replaced everywhere (in an `.aut`, a state renumbered throughout).
            let numbers: Vec<Vec<u8>> = toks
                .iter()
                .map(|t| text[t.clone()].to_vec())
                .filter(|t| t.iter().all(u8::is_ascii_digit))
                .collect();
            if numbers.is_empty() {
                return "replace a number everywhere (none)";
            }
            let old = rng.pick(&numbers).clone();
            let new = rng.pick(EXTREME_NUMBERS).as_bytes();
            let mut out = Vec::with_capacity(text.len());
            let mut last = 0;
            for t in &toks {
                if text[t.clone()] == old[..] {
                    out.extend_from_slice(&text[last..t.start]);
                    out.extend_from_slice(new);
                    last = t.end;
                }
            }
            out.extend_from_slice(&text[last..]);
            *text = out;
            "replace a number everywhere"
        }
    }
}

/// Process names defined without parameters at the start of a line (for `refines FILE:P`).
fn process_names(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once('=')?;
            let name = name.trim_end();
            let ok = name.starts_with(|c: char| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !rest.starts_with('=');
            ok.then(|| name.to_string())
        })
        .collect()
}

/// One mutant and the commands run on it.
struct Mutant {
    index: usize,
    seed_path: PathBuf,
    kind: Kind,
    mutations: Vec<&'static str>,
    text: Vec<u8>,
    /// Argument lists; `{M}` stands for the mutant's file.
    commands: Vec<Vec<String>>,
    /// How long a command may take before it counts as a hang.
    watchdog: Duration,
}

/// Options tried now and then in place of the usual ones (bad values must be refused cleanly).
const ODD_THREADS: &[&str] = &["0", "1", "3", "64", "100000", "4000000000", "-1", "x"];
const ODD_MAX_STATES: &[&str] = &[
    "0",
    "1",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
];

fn make_mutant(base: u64, index: usize, seeds: &[Seed], caps: &Caps) -> Mutant {
    let mut rng = Rng::new(base ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F));
    rng.next();
    // Seven CSPm mutants in ten: CSPm has more to get wrong.
    let want = if rng.chance(70) { Kind::Csp } else { Kind::Aut };
    // Scripts with assertions get three picks in four: their mutants reach the checker.
    let asserts = want == Kind::Csp && rng.chance(75);
    let pool: Vec<&Seed> = seeds
        .iter()
        .filter(|s| s.kind == want && (!asserts || s.has_assertions))
        .collect();
    let seed = *rng.pick(&pool);
    let mut text = seed.text.clone();
    let count = match rng.below(20) {
        0..=10 => 1,
        11..=16 => 2,
        _ => 3,
    };
    let mutations = (0..count)
        .map(|_| mutate_once(&mut rng, &mut text, seed.kind))
        .collect();
    let m = "{M}".to_string();
    let odd = caps.odd_options;
    let threads = if rng.chance(3) && odd {
        rng.pick(ODD_THREADS).to_string()
    } else if rng.chance(20) {
        "2".to_string()
    } else {
        "1".to_string()
    };
    let max_states = if rng.chance(3) && odd {
        rng.pick(ODD_MAX_STATES).to_string()
    } else {
        MAX_STATES.to_string()
    };
    let s = |x: &str| x.to_string();
    let mut commands = Vec::new();
    match seed.kind {
        Kind::Csp => {
            commands.push(vec![
                s("check"),
                m.clone(),
                s("--max-states"),
                max_states.clone(),
                s("--threads"),
                threads.clone(),
            ]);
            if rng.chance(15) {
                commands.push(vec![
                    s("explore"),
                    m.clone(),
                    s("--max-states"),
                    max_states.clone(),
                    s("--threads"),
                    threads,
                ]);
            }
            // `refines` on CSPm only where it takes a state limit (unbounded, an infinite
            // process would be a false hang).
            let names = process_names(&text);
            if caps.takes("refines", "--max-states") && !names.is_empty() && rng.chance(10) {
                let spec = format!("{m}:{}", rng.pick(&names));
                let imp = format!("{m}:{}", rng.pick(&names));
                let model = rng.pick(&["traces", "failures", "failures-divergences"]);
                commands.push(vec![
                    s("refines"),
                    spec,
                    imp,
                    s("--model"),
                    s(model),
                    s("--max-states"),
                    max_states,
                ]);
            }
        }
        Kind::Aut => {
            commands.push(vec![s("info"), m.clone()]);
            commands.push(vec![
                s("explore"),
                m.clone(),
                s("--max-states"),
                max_states,
                s("--threads"),
                threads,
            ]);
            if rng.chance(20) {
                let other = seed.path.to_string_lossy().to_string();
                let (spec, imp) = if rng.chance(50) {
                    (other, m)
                } else {
                    (m, other)
                };
                let model = rng.pick(&["traces", "failures", "failures-divergences"]);
                commands.push(vec![s("refines"), spec, imp, s("--model"), s(model)]);
            }
        }
    }
    // The time and memory budgets, where the binary has them.
    for command in &mut commands {
        for (flag, value) in [
            ("--timeout", ASSERTION_TIMEOUT),
            ("--max-memory", MAX_MEMORY),
        ] {
            if caps.takes(&command[0], flag) {
                command.extend([s(flag), s(value)]);
            }
        }
    }
    let assertions = text.windows(6).filter(|w| w == b"assert").count() as u32;
    let watchdog = WATCHDOG + WATCHDOG_PER_ASSERTION * assertions;
    Mutant {
        index,
        watchdog,
        seed_path: seed.path.clone(),
        kind: seed.kind,
        mutations,
        text,
        commands,
    }
}

/// What one run of the binary did.
struct RunResult {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs weft with `args`, killing it after `watchdog` (then `status` is `None`).
fn run_weft(args: &[String], watchdog: Duration) -> RunResult {
    let started = Instant::now();
    let mut command = Command::new(binary());
    command.args(args);
    let DrainedRun {
        mut child,
        stdout: out,
        stderr: err,
    } = spawn_drained(command);
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for weft") {
            break Some(status);
        }
        if started.elapsed() > watchdog {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    RunResult {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        elapsed: started.elapsed(),
    }
}

/// The rule a run broke, or `None`: (a short class for grouping, the details).
fn judge(r: &RunResult) -> Option<(String, String)> {
    let Some(status) = r.status else {
        return Some((
            "hang".into(),
            format!("no answer after {:.0} s", r.elapsed.as_secs_f64()),
        ));
    };
    let code = match status.code() {
        Some(code) => code,
        None => {
            #[cfg(unix)]
            let what = {
                use std::os::unix::process::ExitStatusExt;
                format!("killed by signal {:?}", status.signal())
            };
            #[cfg(not(unix))]
            let what = "killed".to_string();
            return Some(("signal".into(), what));
        }
    };
    if code == 101 || r.stderr.contains("panicked") {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains("panicked"))
            .unwrap_or("")
            .to_string();
        return Some(("panic".into(), line));
    }
    if !(0..=2).contains(&code) {
        return Some(("exit code".into(), format!("exit code {code}")));
    }
    if code == 2 && r.stderr.trim().is_empty() {
        return Some((
            "silent exit 2".into(),
            "exit 2 with nothing on stderr".into(),
        ));
    }
    if code != 2 {
        let error_line = r.stderr.lines().find(|l| {
            let t = l.trim_start();
            t.starts_with("error:") || t.starts_with("error[") || l.contains(": error:")
        });
        if let Some(line) = error_line {
            return Some((
                format!("error with exit {code}"),
                format!("exit {code} with the error line {line:?}"),
            ));
        }
    }
    None
}

/// A broken rule, with what is needed to reproduce it.
struct Failure {
    class: String,
    details: String,
    mutant: usize,
    seed: PathBuf,
    mutations: Vec<&'static str>,
    args: Vec<String>,
    saved: PathBuf,
    stderr: String,
}

fn failures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_failures")
}

/// Writes the mutant, runs its commands, and returns the rules broken.
fn try_mutant(m: &Mutant, work: &Path, stats: &Stats) -> Vec<Failure> {
    let ext = match m.kind {
        Kind::Csp => "csp",
        Kind::Aut => "aut",
    };
    let file = work.join(format!("mutant.{ext}"));
    std::fs::write(&file, &m.text).expect("write mutant");
    let mut found = Vec::new();
    for template in &m.commands {
        let args: Vec<String> = template
            .iter()
            .map(|a| a.replace("{M}", &file.to_string_lossy()))
            .collect();
        let mut r = run_weft(&args, m.watchdog);
        if r.status.is_none() {
            r = run_weft(&args, m.watchdog);
        }
        stats.runs.fetch_add(1, Ordering::Relaxed);
        stats
            .micros
            .fetch_add(r.elapsed.as_micros() as usize, Ordering::Relaxed);
        if let Some(code) = r.status.and_then(|s| s.code()) {
            stats.by_code.lock().unwrap()[code.clamp(0, 3) as usize] += 1;
        }
        let Some((class, details)) = judge(&r) else {
            continue;
        };
        std::fs::create_dir_all(failures_dir()).expect("failures dir");
        let saved = failures_dir().join(format!("mutant-{}.{ext}", m.index));
        std::fs::write(&saved, &m.text).expect("save mutant");
        let args = template
            .iter()
            .map(|a| a.replace("{M}", &saved.to_string_lossy()))
            .collect();
        let stderr = r.stderr.chars().take(600).collect::<String>();
        found.push(Failure {
            class,
            details,
            mutant: m.index,
            seed: m.seed_path.clone(),
            mutations: m.mutations.clone(),
            args,
            saved,
            stderr,
        });
    }
    found
}

#[derive(Default)]
struct Stats {
    runs: AtomicUsize,
    micros: AtomicUsize,
    /// Exit codes 0, 1, 2, and other.
    by_code: Mutex<[usize; 4]>,
}

/// The options each subcommand of this binary takes (from its `--help`): the limits are used
/// where they exist (`refines --max-states` lets CSPm processes be compared without the risk
/// of an endless search; `--timeout` lets the next assertion run after an endless one).
struct Caps {
    help: BTreeMap<String, String>,
    /// Whether to try abused option values.
    odd_options: bool,
}

impl Caps {
    fn probe() -> Self {
        let help = ["check", "explore", "refines", "info"]
            .iter()
            .map(|c| {
                let r = run_weft(&[c.to_string(), "--help".to_string()], WATCHDOG);
                (c.to_string(), r.stdout)
            })
            .collect();
        let odd_options = env_number("WEFT_FUZZ_ODD_OPTIONS") != Some(0);
        Caps { help, odd_options }
    }

    fn takes(&self, command: &str, flag: &str) -> bool {
        self.help
            .get(command)
            .is_some_and(|h| h.contains(&format!("{flag} ")))
    }
}

#[test]
fn mutants_never_crash_hang_or_exit_wrongly() {
    let seeds = seeds();
    let csp = seeds.iter().filter(|s| s.kind == Kind::Csp).count();
    let aut = seeds.len() - csp;
    assert!(
        csp >= 100 && aut >= 30,
        "only {csp} CSPm and {aut} .aut seeds"
    );
    let base = env_number("WEFT_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let count = env_number("WEFT_FUZZ_RUNS").map_or(DEFAULT_MUTANTS, |n| n as usize);
    let workers = env_number("WEFT_FUZZ_WORKERS").map_or(2, |n| n.max(1) as usize);
    let indices: Vec<usize> = match env_number("WEFT_FUZZ_ONLY") {
        Some(i) => vec![i as usize],
        None => (0..count).collect(),
    };
    let caps = Caps::probe();
    let stats = Stats::default();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (seeds, indices, stats, next, failures, caps) =
                (&seeds, &indices, &stats, &next, &failures, &caps);
            scope.spawn(move || {
                let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                    .join("fuzz_mutants")
                    .join(format!("worker-{w}"));
                std::fs::create_dir_all(&work).expect("work dir");
                loop {
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = indices.get(at) else {
                        break;
                    };
                    let m = make_mutant(base, index, seeds, caps);
                    let found = try_mutant(&m, &work, stats);
                    failures.lock().unwrap().extend(found);
                }
            });
        }
    });
    let runs = stats.runs.load(Ordering::Relaxed);
    let codes = *stats.by_code.lock().unwrap();
    eprintln!(
        "{} mutants ({csp} CSPm and {aut} .aut seeds, base seed {base:#x}), {runs} runs in \
         {:.1} s on {workers} workers, {:.1} ms per run; exit 0: {}, 1: {}, 2: {}",
        indices.len(),
        started.elapsed().as_secs_f64(),
        stats.micros.load(Ordering::Relaxed) as f64 / 1000.0 / runs.max(1) as f64,
        codes[0],
        codes[1],
        codes[2],
    );
    let mut failures = failures.into_inner().unwrap();
    if failures.is_empty() {
        return;
    }
    failures.sort_by_key(|f| f.mutant);
    // One example per class and command, with the count.
    let mut groups: BTreeMap<(String, String), (usize, &Failure)> = BTreeMap::new();
    for f in &failures {
        let key = (f.class.clone(), f.args[0].clone());
        groups.entry(key).or_insert((0, f)).0 += 1;
    }
    let mut report = format!(
        "{} of {runs} runs broke a rule ({} kinds); first mutant of each kind:\n",
        failures.len(),
        groups.len()
    );
    for ((class, command), (n, f)) in &groups {
        report.push_str(&format!(
            "\n[{class}] `{command}`, {n} runs: {}\n  mutant {} of seed {} ({})\n  saved: {}\n  \
             reproduce: {} {}\n  or: WEFT_FUZZ_SEED={base:#x} WEFT_FUZZ_ONLY={} cargo test \
             --release --test fuzz_mutants\n  stderr: {}\n",
            f.details,
            f.mutant,
            f.seed.display(),
            f.mutations.join(", "),
            f.saved.display(),
            binary().display(),
            f.args.join(" "),
            f.mutant,
            f.stderr.trim().replace('\n', "\n          "),
        ));
    }
    panic!("{report}");
}
