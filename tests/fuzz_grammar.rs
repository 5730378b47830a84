//! Grammar-aware fuzzing of the `weft` binary: well-formed-looking but hostile inputs (CSPm
//! nested 10,000 deep, recursion without a base case, unguarded recursion, huge ranges and
//! alphabets, integer overflow, empty replicated operators, type errors in every position,
//! lexical oddities, bad includes, broken `.aut` / `.aut.gz` files, absurd options), each run
//! through the real command line under an address-space bound. Whatever the input, weft must
//! answer within the watchdog with exit 0, 1 or 2, no panic or signal; an exit 2 on an input
//! file carries a position (`FILE:LINE:COL`) on stderr; a run stopped by a limit gives no
//! verdict (exit 2).
//!
//! The cases come from a fixed-seed PRNG: every run tries the same inputs. Knobs:
//! - `WEFT_FUZZ_GRAMMAR_RUNS`: how many cases (default [`DEFAULT_CASES`], about a minute on a
//!   busy 2-core machine; raise it for long runs);
//! - `WEFT_FUZZ_GRAMMAR_SEED`: another base seed (decimal or `0x` hex);
//! - `WEFT_FUZZ_GRAMMAR_ONLY`: run only case `i`;
//! - `WEFT_FUZZ_WORKERS`: parallel workers (default 2);
//! - `WEFT_FUZZ_BIN`: another `weft` binary;
//! - `WEFT_FUZZ_GRAMMAR_KEEP=1`: save every case (not only the failing ones).
//!
//! A failing case is saved under `target/tmp/fuzz_grammar_failures/` (every case, with
//! `WEFT_FUZZ_GRAMMAR_KEEP=1`, under `target/tmp/fuzz_grammar_cases/`). The slowest cases of a
//! run are listed on stderr (seen with `--nocapture`): a slow case is a finding too.

#[path = "common/fuzz_run.rs"]
mod fuzz_run;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fuzz_run::{binary, env_number, spawn_drained, DrainedRun};

/// Cases per run of the suite.
const DEFAULT_CASES: usize = 160;
const DEFAULT_SEED: u64 = 0x6A4A_F022_8F00_0001;
/// A run taking longer is a hang (every case runs with `--timeout 3` where it applies).
const WATCHDOG: Duration = Duration::from_secs(25);
/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// One generated input: its files (the first is the one the command reads) and the command.
struct Case {
    what: String,
    files: Vec<(String, Vec<u8>)>,
    /// Arguments; `{F}` stands for the first file.
    args: Vec<String>,
    /// Whether an exit 2 must point into a file (not for refused options).
    positioned: bool,
}

const DEPTHS: &[usize] = &[50, 1000, 5000, 10_000, 10_000, 20_000, 60_000];

/// Wrappers of an expression: (before, after), nested `depth` times around a leaf.
#[rustfmt::skip]
const EXPR_WRAPS: &[(&str, &str)] = &[
    ("(", ")"), ("<", ">"), ("{", "}"), ("let y = 1 within ", ""), ("if true then ", " else 0"),
    ("-", ""), ("- ", ""), ("(\\ z @ ", ")(0)"), ("(", ", 1)"), ("head(<", ">)"), ("f(", ")"),
    ("<", "> ^ <>"), ("(", " + 1)"), ("1 + ", ""), ("card({", "})"), ("not ", ""),
];
/// Wrappers of a process.
#[rustfmt::skip]
const PROC_WRAPS: &[(&str, &str)] = &[
    ("a -> ", ""), ("SKIP ; ", ""), ("(", " [] STOP)"), ("(", " ||| STOP)"), ("(", " \\ {a})"),
    ("(", " [[a <- b]])"), ("true & ", ""), ("(", " /\\ STOP)"), ("(", " |~| STOP)"),
    ("(", " [|{a}|] STOP)"), ("(", " [> STOP)"), ("(", ")"), ("let Q = STOP within ", ""),
    ("c?x -> ", ""), ("(", " ; SKIP)"), ("STOP [] ", ""), ("(", " [{a} || {a}] STOP)"),
];
/// Operators chained `n` times: (script with `#` for the chain, the link).
#[rustfmt::skip]
const CHAINS: &[(&str, &str)] = &[
    ("x = 1#\n", " + 1"), ("x = 1#\n", " - 1"), ("x = 1#\n", " * 1"), ("x = <1>#\n", " ^ <1>"),
    ("P = STOP#\n", " [] a -> STOP"), ("P = STOP#\n", " ||| a -> STOP"),
    ("P = SKIP#\n", " ; SKIP"), ("P = STOP#\n", " |~| STOP"), ("x = true#\n", " and true"),
    ("x = (1#)\n", ", 1"), ("x = {1#}\n", ", 1"), ("P = a#-> STOP\n", " -> a "),
];
/// Numbers that overflow, divide by zero and take remainders of negatives.
#[rustfmt::skip]
const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "-7", "3", "9223372036854775807", "(-9223372036854775807 - 1)",
    "4611686018427387904", "2147483648", "4000000000", "4294967296", "-2147483648",
];
/// Ill-typed (or odd) things put into every hole of a template.
#[rustfmt::skip]
const LEAVES: &[&str] = &[
    "1", "true", "STOP", "<>", "{}", "a", "(1, 2)", "\\ x @ x", "Events", "c", "c.1", "{|c|}",
    "Int", "\"s\"", "'c'", "(| 1 => 2 |)", "f", "Q", "SKIP", "<1..>", "{0..}", "Set({1})",
];
/// Templates with a hole `#`.
#[rustfmt::skip]
const TEMPLATES: &[&str] = &[
    "P = # -> STOP", "P = a -> #", "P = # [] STOP", "P = STOP [] #", "P = # ||| #",
    "P = STOP [| # |] STOP", "P = STOP \\ #", "P = # & STOP", "P = c!# -> STOP",
    "P = c?x:# -> STOP", "P = if # then STOP else STOP", "P = [] x : # @ STOP",
    "P = |~| x : # @ STOP", "P = ||| x : # @ STOP", "P = ; x : # @ STOP", "x = # + 1",
    "x = card(#)", "x = #(1)", "x = <#> ^ #", "x = {# | _ <- {1}}", "P = STOP [[ # <- a ]]",
    "x = length(#)", "P = STOP [T= #", "x = let f(#) = 1 within f(1)", "P = # ; STOP",
    "P = # /\\ STOP", "x = head(#)", "x = member(#, #)", "x = mapLookup(#, 1)",
    "P = STOP [# || #] STOP", "x = #.#", "P = prioritise(STOP, #)",
];
const PRELUDE: &str = "channel a, b\nchannel c : {0..3}\nf(x) = x\n";

fn expr_or_proc_use(is_proc: bool) -> &'static str {
    if is_proc {
        "assert P :[deadlock free]\nassert P :[divergence free]\nassert STOP [T= P\n"
    } else {
        "channel out : {0..1}\nP = out!(card({x}) % 2) -> STOP\nassert P :[deadlock free]\n"
    }
}

fn csp(what: String, text: String) -> Case {
    csp_bytes(what, text.into_bytes())
}

fn csp_bytes(what: String, text: Vec<u8>) -> Case {
    Case {
        what,
        files: vec![("case.csp".into(), text)],
        args: vec!["check".into(), "{F}".into()],
        positioned: true,
    }
}

fn nest(wrap: (&str, &str), leaf: &str, depth: usize) -> String {
    let mut s = String::with_capacity((wrap.0.len() + wrap.1.len()) * depth + leaf.len());
    for _ in 0..depth {
        s.push_str(wrap.0);
    }
    s.push_str(leaf);
    for _ in 0..depth {
        s.push_str(wrap.1);
    }
    s
}

fn deep_case(rng: &mut Rng) -> Case {
    let depth = *rng.pick(DEPTHS);
    if rng.chance(50) {
        let w = *rng.pick(EXPR_WRAPS);
        let body = nest(w, "1", depth);
        csp(
            format!("expression `{}1{}` nested {depth} deep", w.0, w.1),
            format!("{PRELUDE}x = {body}\n{}", expr_or_proc_use(false)),
        )
    } else if rng.chance(70) {
        let w = *rng.pick(PROC_WRAPS);
        let body = nest(w, "STOP", depth);
        csp(
            format!("process `{}STOP{}` nested {depth} deep", w.0, w.1),
            format!("{PRELUDE}P = {body}\n{}", expr_or_proc_use(true)),
        )
    } else {
        let (script, link) = *rng.pick(CHAINS);
        let chain = link.repeat(depth);
        let is_proc = script.starts_with('P');
        csp(
            format!("chain `{}` of {depth} links", link.trim()),
            format!(
                "{PRELUDE}{}{}",
                script.replace('#', &chain),
                expr_or_proc_use(is_proc)
            ),
        )
    }
}

fn definitions_case(rng: &mut Rng) -> Case {
    let n = *rng.pick(&[100, 3000, 10_000]);
    let mut s = String::from(PRELUDE);
    let what = match rng.below(3) {
        0 => {
            for i in 0..n {
                s.push_str(&format!("P{i} = P{}\n", i + 1));
            }
            s.push_str(&format!("P{n} = a -> P0\nP = P0\n"));
            "chain of process definitions"
        }
        1 => {
            for i in 0..n {
                s.push_str(&format!("g{i}(x) = g{}(x) + 1\n", i + 1));
            }
            s.push_str(&format!("g{n}(x) = x\nP = c!(g0(0) % 4) -> STOP\n"));
            "chain of function definitions"
        }
        _ => {
            for i in 0..n {
                s.push_str(&format!("x{i} = x{} + 1\n", i + 1));
            }
            s.push_str(&format!("x{n} = 0\nP = c!(x0 % 4) -> STOP\n"));
            "chain of value definitions"
        }
    };
    s.push_str(expr_or_proc_use(true));
    csp(format!("{what}, {n} long"), s)
}

#[rustfmt::skip]
const RECURSIONS: &[&str] = &[
    "g(x) = g(x + 1)\nP = c!g(0) -> STOP", "g(x) = 1 + g(x)\nP = c!g(0) -> STOP",
    "g(x) = g(x) ^ <1>\nP = c!head(g(0)) -> STOP", "g(x) = h(x)\nh(x) = g(x)\nP = c!g(0) -> STOP",
    "g(x) = {g(x)}\nP = c!card(g(0)) -> STOP", "g = g\nP = c!g -> STOP", "x = x + 1\nP = c!x -> STOP",
    "P = P", "P = P [] a -> P", "P = P ||| P", "P = P ; P", "P = P \\ {a}", "P = a -> P ||| P",
    "P(n) = P(n + 1)\nQ = P(0)", "P(n) = a -> P(n + 1)", "P(n) = c!(n % 4) -> P(n + 1)",
    "P = |~| x : {0..3} @ P", "P = Q\nQ = P", "P = P [| {a} |] P", "P = P /\\ a -> STOP",
    "P = (a -> P) \\ {a}", "P(n) = a -> (P(n + 1) ||| P(n + 1))", "P = a -> (P ||| P)",
    "P = P [[ a <- b ]]", "P = let Q = Q within Q", "P(s) = a -> P(s ^ s ^ <1>)",
    "P(s) = a -> P(union(s, {card(s)}))",
];

fn recursion_case(rng: &mut Rng) -> Case {
    let body = *rng.pick(RECURSIONS);
    let target = if body.contains("P(n") || body.contains("P(s") {
        if body.contains("P(s)") {
            if body.contains("union") {
                "P({})"
            } else {
                "P(<>)"
            }
        } else {
            "P(0)"
        }
    } else if body.contains("Q = P(0)") {
        "Q"
    } else {
        "P"
    };
    let assertion = rng.pick(&[
        ":[deadlock free]",
        ":[divergence free]",
        ":[deterministic]",
        "[T= STOP",
        "[FD= P",
    ]);
    let assertion = if assertion.starts_with('[') {
        format!("assert STOP {} \n", assertion.replace('P', target))
    } else {
        format!("assert {target} {assertion}\n")
    };
    let mut case = csp(
        format!("recursion `{}`", body.replace('\n', "; ")),
        format!("{PRELUDE}{body}\n{assertion}"),
    );
    case.args.extend(["--max-states".into(), "3000".into()]);
    case
}

fn arithmetic(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.chance(30) {
        return rng.pick(NUMBERS).to_string();
    }
    let op = rng.pick(&["+", "-", "*", "/", "%"]);
    let l = arithmetic(rng, depth - 1);
    let r = arithmetic(rng, depth - 1);
    if rng.chance(15) {
        format!("-({l} {op} {r})")
    } else {
        format!("({l} {op} {r})")
    }
}

#[rustfmt::skip]
const RANGES: &[&str] = &[
    "{0..1000000000}", "{0..2147483648}", "{-9223372036854775807..9223372036854775807}", "{}",
    "{0..0}", "{5..1}", "{0..9999999}", "{0..3000}", "Int", "{0..}", "{1..4000000000}",
];
#[rustfmt::skip]
const RANGE_USES: &[&str] = &[
    "channel d : #\nP = d?x -> STOP", "channel d : #\nP = [] x : # @ d!x -> STOP",
    "P = [] x : # @ a -> STOP", "P = |~| x : # @ a -> STOP", "P = ||| x : # @ a -> STOP",
    "P = [|{a}|] x : # @ a -> STOP", "P = || x : # @ [{a}] a -> STOP", "P = ; x : <> @ a -> STOP",
    "x = card(#)\nP = c!(x % 4) -> STOP", "x = card({y | y <- #})\nP = c!(x % 4) -> STOP",
    "channel d : #.#\nP = d?x?y -> STOP", "channel d : #\nP = RUN({|d|})",
    "channel d : #\nP = STOP\nQ = CHAOS({|d|})", "x = card(Set(#))\nP = c!(x % 4) -> STOP",
    "datatype D = A.#\nx = card({|A|})\nP = c!(x % 4) -> STOP", "nametype N = #\nchannel d : N\nP = d?x -> STOP",
    "channel d : #\nP = (d?x -> STOP) \\ {|d|}", "x = #<y | y <- <0..4000000000>>\nP = c!(x % 4) -> STOP",
    "x = member(3, #)\nP = if x then STOP else a -> STOP", "channel d : #\nP = d$x -> STOP",
];

fn values_case(rng: &mut Rng) -> Case {
    if rng.chance(40) {
        let e = arithmetic(rng, 3);
        return csp(
            format!("arithmetic {e}"),
            format!("{PRELUDE}channel n : Int\nP = n!{e} -> STOP\nassert P :[deadlock free]\nassert STOP [T= P\n"),
        );
    }
    let r = *rng.pick(RANGES);
    let u = *rng.pick(RANGE_USES);
    let text = u.replace('#', r);
    let mut case = csp(
        format!("`{}`", text.replace('\n', "; ")),
        format!("{PRELUDE}{text}\nassert P :[deadlock free]\nassert STOP [T= P\n"),
    );
    case.args.extend(["--max-states".into(), "3000".into()]);
    case
}

fn typing_case(rng: &mut Rng) -> Case {
    let t = *rng.pick(TEMPLATES);
    let mut text = String::new();
    for part in t.split('#').enumerate() {
        if part.0 > 0 {
            let leaf: &&str = rng.pick(LEAVES);
            text.push_str(leaf);
        }
        text.push_str(part.1);
    }
    let tail = if text.starts_with('P') {
        "assert P :[deadlock free]\nassert Q :[deadlock free]\n"
    } else {
        "P = c!(x % 4) -> STOP\nassert P :[deadlock free]\n"
    };
    let dup = if rng.chance(15) { "P = STOP\n" } else { "" };
    let fixes = match rng.below(5) {
        0 => "f(0) = 1\nx = f(1)\n",
        1 => "g(<y>) = y\nx = g(<>)\n",
        2 => "g((y, z)) = y\nx = g(1)\n",
        _ => "",
    };
    csp(
        format!("`{text}`"),
        format!("{PRELUDE}{dup}{text}\n{fixes}{tail}"),
    )
}

const VALID: &str = "channel a, b\nchannel c : {0..3}\nP = a -> c?x -> P\n\
                     Q = P [] b -> STOP\nassert Q :[deadlock free]\nassert P [T= Q\n";

fn lexical_case(rng: &mut Rng) -> Case {
    let mut text = VALID.as_bytes().to_vec();
    let at = rng.below(text.len() + 1);
    let (what, insert): (&str, Vec<u8>) = match rng.below(12) {
        0 => ("NUL byte", vec![0]),
        1 => ("non-UTF-8 bytes", vec![0xff, 0xfe, 0xc3]),
        2 => ("tab", b"\t".to_vec()),
        3 => ("unterminated comment", b"{- ".to_vec()),
        4 => ("nested comments", b"{- {- -} -}".repeat(rng.below(3) + 1)),
        5 => (
            "deeply nested comment",
            [b"{-".repeat(20_000), b"-}".repeat(20_000)].concat(),
        ),
        6 => (
            "long identifier",
            format!("\nZ{} = STOP\n", "z".repeat(300_000)).into_bytes(),
        ),
        7 => (
            "long string",
            format!("\ns = \"{}\"\n", "s".repeat(300_000)).into_bytes(),
        ),
        8 => (
            "long line",
            format!("\ny = 1{}\n", " ".repeat(1_000_000)).into_bytes(),
        ),
        9 => ("unterminated string", b"\ns = \"abc\n".to_vec()),
        10 => ("BOM", vec![0xef, 0xbb, 0xbf]),
        _ => ("a lone `-}`", b"-}".to_vec()),
    };
    text.splice(at..at, insert);
    if rng.chance(30) {
        text = String::from_utf8_lossy(&text)
            .replace('\n', "\r\n")
            .into_bytes();
    }
    csp_bytes(format!("{what} at byte {at}"), text)
}

fn include_case(rng: &mut Rng) -> Case {
    let (what, files): (&str, Vec<(String, Vec<u8>)>) = match rng.below(6) {
        0 => (
            "missing include",
            vec![("case.csp".into(), b"include \"nothere.csp\"\n".to_vec())],
        ),
        1 => (
            "self include",
            vec![(
                "case.csp".into(),
                b"include \"case.csp\"\nchannel a\n".to_vec(),
            )],
        ),
        2 => (
            "mutual include",
            vec![
                ("case.csp".into(), b"include \"other.csp\"\n".to_vec()),
                ("other.csp".into(), b"include \"case.csp\"\n".to_vec()),
            ],
        ),
        3 => (
            "include of a directory",
            vec![("case.csp".into(), b"include \".\"\n".to_vec())],
        ),
        4 => (
            "include of an empty name",
            vec![("case.csp".into(), b"include \"\"\n".to_vec())],
        ),
        _ => (
            "include of a broken file",
            vec![
                (
                    "case.csp".into(),
                    format!("{VALID}include \"other.csp\"\n").into_bytes(),
                ),
                ("other.csp".into(), b"P = = (\n".to_vec()),
            ],
        ),
    };
    Case {
        what: what.into(),
        files,
        args: vec!["check".into(), "{F}".into()],
        positioned: true,
    }
}

#[rustfmt::skip]
const AUT_NUMBERS: &[&str] = &[
    "0", "1", "2", "-1", "4000000000", "4294967295", "4294967296", "18446744073709551616", "x", "",
];

fn aut_case(rng: &mut Rng) -> Case {
    let mut text = String::new();
    let n = |rng: &mut Rng| {
        if rng.chance(60) {
            rng.below(4).to_string()
        } else {
            rng.pick(AUT_NUMBERS).to_string()
        }
    };
    text.push_str(&format!("des ({}, {}, {})\n", n(rng), n(rng), n(rng)));
    for _ in 0..rng.below(6) {
        let label = *rng.pick(&["\"a\"", "\"tau\"", "i", "\"a", "\"a\\\"b\"", "\"\"", "a(1)"]);
        text.push_str(&format!("({}, {label}, {})\n", n(rng), n(rng)));
    }
    let command = *rng.pick(&["info", "explore", "reduce", "refines"]);
    let mut args = vec![command.to_string(), "{F}".into()];
    match command {
        "reduce" => args.extend(["--equivalence".into(), "branching".into()]),
        "refines" => args.push("{F}".into()),
        _ => {}
    }
    let gz = rng.chance(35);
    let mut bytes = text.into_bytes();
    let mut what = "aut".to_string();
    if gz {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&bytes).expect("gzip");
        let mut z = enc.finish().expect("gzip");
        match rng.below(3) {
            0 => {
                z.truncate(rng.below(z.len()));
                what.push_str(".gz truncated");
            }
            1 => {
                let at = rng.below(z.len());
                z[at] ^= 0x55;
                what.push_str(".gz corrupted");
            }
            _ => what.push_str(".gz"),
        }
        bytes = z;
    }
    let name = if gz { "case.aut.gz" } else { "case.aut" };
    let what = format!(
        "{what}: {}",
        String::from_utf8_lossy(&bytes).lines().next().unwrap_or("")
    );
    Case {
        what,
        files: vec![(name.into(), bytes)],
        args,
        positioned: true,
    }
}

#[rustfmt::skip]
const ODD_OPTIONS: &[&[&str]] = &[
    &["--threads", "0"], &["--threads", "100000"], &["--threads", "-1"], &["--max-states", "0"],
    &["--max-states", "18446744073709551616"], &["--max-states", "1e30"], &["--max-memory", "0"],
    &["--max-memory", "1"], &["--max-memory", "99999999999999T"], &["--timeout", "0"],
    &["--timeout", "-5"], &["--timeout", "99999999999999999999"], &["--max-states", "1"],
];

fn options_case(rng: &mut Rng) -> Case {
    let (file, text) = if rng.chance(60) {
        ("case.csp", VALID.as_bytes().to_vec())
    } else {
        (
            "case.aut",
            b"des (0, 2, 2)\n(0, \"a\", 1)\n(1, \"b\", 0)\n".to_vec(),
        )
    };
    let command = if file.ends_with(".csp") {
        "check"
    } else {
        "explore"
    };
    let mut args = vec![command.to_string(), "{F}".into()];
    for o in *rng.pick(ODD_OPTIONS) {
        args.push(o.to_string());
    }
    Case {
        what: format!("options {}", args[2..].join(" ")),
        files: vec![(file.into(), text)],
        args,
        positioned: false,
    }
}

fn make_case(base: u64, index: usize) -> Case {
    let mut rng = Rng(base ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F));
    rng.next();
    let mut case = match rng.below(20) {
        0..=4 => deep_case(&mut rng),
        5 => definitions_case(&mut rng),
        6..=8 => recursion_case(&mut rng),
        9..=11 => values_case(&mut rng),
        12..=14 => typing_case(&mut rng),
        15 | 16 => lexical_case(&mut rng),
        17 => include_case(&mut rng),
        18 => aut_case(&mut rng),
        _ => options_case(&mut rng),
    };
    // Limits, so that an honest run of these inputs ends well within the watchdog.
    let command = case.args[0].clone();
    if command != "info" && command != "reduce" && !case.args.iter().any(|a| a == "--max-states") {
        case.args.extend(["--max-states".into(), "20000".into()]);
    }
    if command == "check" || command == "explore" || command == "refines" {
        if !case.args.iter().any(|a| a == "--timeout") {
            case.args.extend(["--timeout".into(), "3".into()]);
        }
        if !case.args.iter().any(|a| a == "--max-memory") {
            case.args.extend(["--max-memory".into(), "1G".into()]);
        }
    }
    if rng.chance(25) {
        case.args.push("--json".into());
    }
    case
}

struct RunResult {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn run_weft(args: &[String], dir: &Path) -> RunResult {
    let started = Instant::now();
    let mut command = Command::new(binary());
    command.args(args).current_dir(dir);
    let DrainedRun {
        mut child,
        stdout: out,
        stderr: err,
    } = spawn_drained(command);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for weft") {
            break Some(status);
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    RunResult {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        elapsed: started.elapsed(),
    }
}

/// Whether `text` holds `NAME:LINE:COL` with `NAME` one of the case's files.
fn has_position(text: &str, files: &[(String, Vec<u8>)]) -> bool {
    files.iter().any(|(name, _)| {
        text.match_indices(&format!("{name}:")).any(|(i, m)| {
            let rest = &text[i + m.len()..];
            let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
            let line = digits(rest);
            line > 0 && rest[line..].starts_with(':') && digits(&rest[line + 1..]) > 0
        })
    })
}

/// The rule a run broke, or `None`.
fn judge(case: &Case, r: &RunResult) -> Option<String> {
    let Some(status) = r.status else {
        return Some(format!(
            "hang: no answer after {:.0} s",
            r.elapsed.as_secs_f64()
        ));
    };
    let Some(code) = status.code() else {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            return Some(format!("killed by signal {:?}", status.signal()));
        }
        #[cfg(not(unix))]
        return Some("killed".into());
    };
    if code == 101 || r.stderr.contains("panicked") {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains("panicked"))
            .unwrap_or("");
        return Some(format!("panic: {line}"));
    }
    if !(0..=2).contains(&code) {
        return Some(format!("exit code {code}"));
    }
    let json = case.args.iter().any(|a| a == "--json");
    if code == 2 {
        let all = format!("{}{}", r.stderr, r.stdout);
        if all.trim().is_empty() {
            return Some("exit 2 with no message".into());
        }
        // The JSON form carries `"file"`, `"line"` and `"column"` instead.
        let positioned = has_position(&all, &case.files)
            || (json && all.contains("\"line\"") && all.contains("\"column\""));
        // A load the run's limits cut short (a script of millions of values, or a slow
        // machine) is a stop, not an error: it has no position to give.
        let stopped_load =
            all.contains("stopped by the") && all.contains("while loading the script");
        if case.positioned && !positioned && !stopped_load {
            return Some(format!(
                "exit 2 without a position: {}",
                r.stderr.lines().next().unwrap_or("")
            ));
        }
    } else if r.stderr.contains("stopped by") || r.stdout.contains("stopped by") {
        return Some(format!("a run stopped by a limit exits with {code}, not 2"));
    }
    None
}

#[test]
fn hostile_inputs_never_crash_hang_or_exit_wrongly() {
    let base = env_number("WEFT_FUZZ_GRAMMAR_SEED").unwrap_or(DEFAULT_SEED);
    let count = env_number("WEFT_FUZZ_GRAMMAR_RUNS").map_or(DEFAULT_CASES, |n| n as usize);
    let workers = env_number("WEFT_FUZZ_WORKERS").map_or(2, |n| n.max(1) as usize);
    let indices: Vec<usize> = match env_number("WEFT_FUZZ_GRAMMAR_ONLY") {
        Some(i) => vec![i as usize],
        None => (0..count).collect(),
    };
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let codes = Mutex::new([0usize; 3]);
    let keep = env_number("WEFT_FUZZ_GRAMMAR_KEEP").is_some_and(|k| k != 0);
    let timings = Mutex::new(Vec::new());
    let started = Instant::now();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (indices, next, failures, codes, tmp, timings) =
                (&indices, &next, &failures, &codes, &tmp, &timings);
            scope.spawn(move || {
                let work = tmp.join("fuzz_grammar").join(format!("worker-{w}"));
                loop {
                    let at = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = indices.get(at) else {
                        break;
                    };
                    let case = make_case(base, index);
                    let _ = std::fs::remove_dir_all(&work);
                    std::fs::create_dir_all(&work).expect("work dir");
                    for (name, bytes) in &case.files {
                        std::fs::write(work.join(name), bytes).expect("write case");
                    }
                    let args: Vec<String> = case
                        .args
                        .iter()
                        .map(|a| a.replace("{F}", &case.files[0].0))
                        .collect();
                    let r = run_weft(&args, &work);
                    timings
                        .lock()
                        .unwrap()
                        .push((r.elapsed, index, case.what.clone()));
                    if keep {
                        let saved = tmp.join("fuzz_grammar_cases").join(format!("case-{index}"));
                        let _ = std::fs::remove_dir_all(&saved);
                        std::fs::create_dir_all(&saved).expect("cases dir");
                        for (name, bytes) in &case.files {
                            std::fs::write(saved.join(name), bytes).expect("save case");
                        }
                        std::fs::write(saved.join("args"), args.join(" ")).expect("save args");
                    }
                    if let Some(code) = r.status.and_then(|s| s.code()) {
                        if let Some(n) = codes.lock().unwrap().get_mut(code as usize) {
                            *n += 1;
                        }
                    }
                    if let Some(why) = judge(&case, &r) {
                        let saved = tmp
                            .join("fuzz_grammar_failures")
                            .join(format!("case-{index}"));
                        let _ = std::fs::remove_dir_all(&saved);
                        std::fs::create_dir_all(&saved).expect("failures dir");
                        for (name, bytes) in &case.files {
                            std::fs::write(saved.join(name), bytes).expect("save case");
                        }
                        let stderr: String = r.stderr.chars().take(400).collect();
                        failures.lock().unwrap().push(format!(
                            "case {index} ({}): {why}\n  in {}: weft {}\n  or: \
                             WEFT_FUZZ_GRAMMAR_SEED={base:#x} WEFT_FUZZ_GRAMMAR_ONLY={index} cargo \
                             test --release --test fuzz_grammar\n  stderr: {}",
                            case.what.chars().take(160).collect::<String>(),
                            saved.display(),
                            args.join(" "),
                            stderr.trim().replace('\n', "\n          ")
                        ));
                    }
                }
            });
        }
    });
    let codes = codes.into_inner().unwrap();
    eprintln!(
        "{} hostile cases (base seed {base:#x}) in {:.1} s on {workers} workers; exit 0: {}, \
         1: {}, 2: {}",
        indices.len(),
        started.elapsed().as_secs_f64(),
        codes[0],
        codes[1],
        codes[2]
    );
    let mut timings = timings.into_inner().unwrap();
    timings.sort_by_key(|t| std::cmp::Reverse(t.0));
    for (took, index, what) in timings.iter().take(8) {
        eprintln!(
            "  slow: case {index} in {:.2} s: {}",
            took.as_secs_f64(),
            what.chars().take(100).collect::<String>()
        );
    }
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} cases broke a rule:\n{}",
        failures.len(),
        indices.len(),
        failures.join("\n")
    );
}
