//! Every bundled example in `examples/` loads with the CSPm front end, has a header comment
//! that states the expected verdict of each of its assertions, and evaluates every process
//! its assertions name (unfolding their terms up to a bound).

mod common;

use std::path::PathBuf;

use weft::csp::load_script;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csp"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_loads_and_documents_its_verdicts() {
    let files = examples();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().to_string())
        .collect();
    for wanted in [
        "dining_philosophers.csp",
        "bounded_buffer.csp",
        "mutual_exclusion.csp",
        "busy_forbidden.csp",
        "alternating_bit.csp",
        "scaling_philosophers.csp",
        "compression_pipeline.csp",
    ] {
        assert!(names.iter().any(|n| n == wanted), "missing {wanted}");
    }
    for path in &files {
        let script = load_script(path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(path).expect("readable");
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("--")).collect();
        assert!(header.len() >= 5, "{}: no header comment", path.display());
        assert!(
            !script.assertions().is_empty(),
            "{}: no assertions",
            path.display()
        );
        for a in script.assertions() {
            // The header names the assertion (as written) with HOLDS or FAILS after it.
            let documented = header
                .iter()
                .any(|l| l.contains(&a.text) && (l.contains("HOLDS") || l.contains("FAILS")));
            assert!(
                documented,
                "{}:{}: `{}` has no expected verdict in the header",
                path.display(),
                a.location.line,
                a.text
            );
            let check = a
                .check
                .as_ref()
                .unwrap_or_else(|e| panic!("{}: `{}`: {e}", path.display(), a.text));
            for p in check.processes() {
                common::walk(&script, p, 20_000)
                    .unwrap_or_else(|e| panic!("{}: `{}`: {e}", path.display(), a.text));
            }
        }
    }
}

/// The states and transitions of N dining philosophers without a butler, enumerated directly:
/// philosopher i is in local state 0..8 (thinks, sits, picks left, picks right, eats, puts
/// right, puts left, gets up); fork i is held as a left fork in states 3..=6 of philosopher
/// i and as a right fork in states 4..=5 of philosopher i-1.
fn philosophers_by_enumeration(n: u32) -> (u64, u64) {
    let get = |st: u32, i: u32| (st >> (3 * i)) & 7;
    let holds_left = |s: u32| (3..=6).contains(&s);
    let holds_right = |s: u32| (4..=5).contains(&s);
    let mut seen = vec![false; 1usize << (3 * n)];
    let mut stack = vec![0u32];
    seen[0] = true;
    let (mut states, mut transitions) = (1u64, 0u64);
    while let Some(st) = stack.pop() {
        for i in 0..n {
            let s = get(st, i);
            if s == 2 && holds_right(get(st, (i + n - 1) % n)) {
                continue; // the left fork is the right fork of philosopher i-1
            }
            if s == 3 && holds_left(get(st, (i + 1) % n)) {
                continue; // the right fork is the left fork of philosopher i+1
            }
            let next = (st & !(7 << (3 * i))) | (((s + 1) % 8) << (3 * i));
            transitions += 1;
            if !seen[next as usize] {
                seen[next as usize] = true;
                states += 1;
                stack.push(next);
            }
        }
    }
    (states, transitions)
}

/// The state count the scaling model's header derives: a_N - 1 with a_N = 6 a_{N-1} +
/// 8 a_{N-2}, a_0 = 2, a_1 = 6.
fn philosophers_by_reasoning(n: u32) -> u64 {
    let (mut a, mut b) = (2u64, 6u64);
    for _ in 0..n {
        (a, b) = (b, 6 * b + 8 * a);
    }
    a - 1
}

/// Explores the scaling model with `n` philosophers: (states, transitions, seconds).
fn explore_scaling_model(n: u32, threads: usize) -> (u64, u64, f64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/scaling_philosophers.csp");
    let text = std::fs::read_to_string(&path).expect("readable");
    assert!(text.contains("\nN = 8\n"), "the model sets N = 8");
    let text = text.replace("\nN = 8\n", &format!("\nN = {n}\n"));
    let script = std::sync::Arc::new(
        weft::csp::load_str("scaling.csp", &text, path.parent().expect("folder"))
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let process = script.process("SYSTEM", &[]).expect("SYSTEM");
    let system = weft::csp::CspSystem::new(&script, &process).expect("system");
    let opts = weft::explore::ExploreOptions {
        threads: weft::threads::Threads::new(threads).expect("a thread count from 1 to 1024"),
        ..Default::default()
    };
    let result = weft::explore::explore(&system, &opts);
    assert!(system.take_error().is_none());
    (
        result.stats.states,
        result.stats.transitions,
        result.stats.seconds,
    )
}

#[test]
fn scaling_model_has_the_state_count_its_header_derives_small_n() {
    for n in 2..=5 {
        let (states, transitions) = philosophers_by_enumeration(n);
        assert_eq!(states, philosophers_by_reasoning(n), "N = {n}");
        let (s, t, _) = explore_scaling_model(n, 2);
        assert_eq!((s, t), (states, transitions), "N = {n}");
    }
}

/// The bundled size (N = 8, 6.6 million states); run with `cargo test --release -- --ignored`.
#[test]
#[ignore = "explores 6.6 million states; run in release"]
fn scaling_model_has_the_state_count_its_header_derives() {
    let (states, transitions) = philosophers_by_enumeration(8);
    assert_eq!(states, philosophers_by_reasoning(8));
    assert!(states >= 5_000_000);
    // `WEFT_SCALING_THREADS=1,2,4` chooses the thread counts (default: 1 and all cores).
    let counts: Vec<usize> = match std::env::var("WEFT_SCALING_THREADS") {
        Ok(list) => list
            .split(',')
            .map(|t| t.trim().parse().expect("a thread count"))
            .collect(),
        Err(_) => vec![1, num_cpus_or_two()],
    };
    for threads in counts {
        let (s, t, seconds) = explore_scaling_model(8, threads);
        assert_eq!((s, t), (states, transitions));
        println!(
            "scaling model: {states} states, {transitions} transitions; {threads} threads: \
             {seconds:.2} s, {:.0} states/s",
            states as f64 / seconds
        );
    }
}

fn num_cpus_or_two() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The verdicts of `examples/compression_pipeline.csp` are those its header derives, and its
/// 32-cell pipeline (2^32 states uncompressed) is checked in a few seconds thanks to the
/// compressions.
#[test]
fn compression_pipeline_has_the_verdicts_its_header_derives() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/compression_pipeline.csp");
    let text = std::fs::read_to_string(&path).expect("readable");
    let script = std::sync::Arc::new(load_script(&path).unwrap_or_else(|e| panic!("{e}")));
    let expected: Vec<&str> = script
        .assertions()
        .iter()
        .map(|a| {
            let line = text
                .lines()
                .take_while(|l| l.starts_with("--"))
                .find(|l| l.contains(&format!("assert {} ", a.text)))
                .unwrap_or_else(|| panic!("`{}` is not in the header", a.text));
            if line.contains("HOLDS") {
                "holds"
            } else {
                "fails"
            }
        })
        .collect();
    assert_eq!(expected.iter().filter(|v| **v == "fails").count(), 1);
    let start = std::time::Instant::now();
    let mut run =
        weft::verify::AssertionRun::new(script.clone(), weft::verify::VerifyOptions::default());
    let got: Vec<&str> = run
        .run_all(|_| {})
        .iter()
        .map(|r| r.verdict.name())
        .collect();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(got, expected);
    assert!(seconds < 5.0, "{seconds:.2} s");
}

/// Explores `process` of the pipeline example with `n` cells: (states, transitions).
fn explore_pipeline(n: u32, process: &str) -> (u64, u64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/compression_pipeline.csp");
    let text = std::fs::read_to_string(&path).expect("readable");
    assert!(text.contains("\nN = 32\n"), "the model sets N = 32");
    let text = text.replace("\nN = 32\n", &format!("\nN = {n}\n"));
    let script = std::sync::Arc::new(
        weft::csp::load_str("pipeline.csp", &text, path.parent().expect("folder"))
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let process = script.process(process, &[]).expect("the process");
    let system = weft::csp::CspSystem::new(&script, &process).expect("system");
    let result = weft::explore::explore(&system, &weft::explore::ExploreOptions::default());
    assert!(system.take_error().is_none());
    (result.stats.states, result.stats.transitions)
}

/// The state counts the pipeline example's header derives: 2^N states and 2^N + (N - 1)
/// 2^(N - 2) transitions uncompressed, N + 1 states and 2N transitions compressed (either
/// way), (N/2 + 1)^2 states for the two compressed halves side by side.
#[test]
fn compression_pipeline_has_the_state_counts_its_header_derives() {
    for n in [2u32, 5, 10] {
        let big = 1u64 << n;
        assert_eq!(
            explore_pipeline(n, "SYSTEM"),
            (big, big + u64::from(n - 1) * (big / 4)),
            "N = {n}"
        );
        let small = (u64::from(n) + 1, 2 * u64::from(n));
        assert_eq!(explore_pipeline(n, "COMPRESSED"), small, "N = {n}");
        assert_eq!(explore_pipeline(n, "DIAMOND"), small, "N = {n}");
    }
    assert_eq!(explore_pipeline(32, "COMPRESSED"), (33, 64));
    assert_eq!(explore_pipeline(32, "HALVES").0, 17 * 17);
}
