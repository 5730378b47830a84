//! The type checker on deep types (issue 13): a chain of functions each nesting its
//! predecessor's result in a tuple, sequences of sequences of tuples, a curried function of
//! thousands of arguments, a long chain of `let`s. Types share their parts, so looking
//! through a bound variable, resolving and instantiating copy no tree; when they copied the
//! type below them, the function chain took 1.7 s at depth 400 and 40 s at depth 800 (now
//! under 0.1 s), and the nest of 3,200 sequences of tuples 3 s (now 0.17 s), on the 2-core
//! machine. The bounds are generous (about 10 times what the checks take now, more on a
//! quiet machine), and below what the copying checker took. The `let` chain's definitions
//! are monomorphic, and the occurs check of each binding walked the whole type below it:
//! quadratic, 3.7 s of user time for 24,000 `let`s (`weft check` of the script this test
//! builds, 2-core machine under load); the checker now remembers the unbound variables
//! below each bound one, and the chain takes 0.23 s (0.04 s for 6,000, 0.09 s for 12,000).

use std::path::Path;
use std::time::{Duration, Instant};

use weft::csp::load_str;

/// Loads `text` (type checking it) and returns how long that took; the script must load.
fn load_time(text: &str) -> Duration {
    let start = Instant::now();
    let script =
        load_str("deep.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"));
    let took = start.elapsed();
    assert!(script.errors().is_empty(), "{:?}", script.errors());
    took
}

fn within(what: &str, text: &str, bound: Duration) {
    let took = load_time(text);
    eprintln!("{what}: {took:?}");
    assert!(
        took < bound,
        "{what}: loading took {took:?}, more than {bound:?} (types copied at each level?)"
    );
}

#[test]
fn a_chain_of_functions_nesting_tuples() {
    // f_i(x) = (f_{i-1}(x), i): the type of f_i is a tuple nest of depth i
    let n = 700;
    let mut text = String::from("f0(x) = x\n");
    for i in 1..=n {
        text += &format!("f{i}(x) = (f{}(x), {i})\n", i - 1);
    }
    text += &format!("X = f{n}(0)\nP = STOP\n");
    within("function chain", &text, Duration::from_secs(5));
}

#[test]
fn sequences_of_sequences_of_tuples() {
    let n = 6000;
    let mut e = String::from("1");
    for i in 0..n {
        e = format!("<({e}, {i})>");
    }
    within(
        "sequence nest",
        &format!("X = {e}\nY = head(X)\nP = STOP\n"),
        Duration::from_secs(4),
    );
}

#[test]
fn a_curried_function_of_many_arguments() {
    let n = 6000;
    let params: String = (0..n).map(|i| format!("(a{i})")).collect();
    let args: String = (0..n).map(|i| format!("({i})")).collect();
    let text = format!("f{params} = a0 + a{}\nX = f{args}\nP = STOP\n", n - 1);
    within("curried function", &text, Duration::from_secs(4));
}

#[test]
fn a_chain_of_lets() {
    // let g_i(x) = <g_{i-1}(x)> within ...: g_i's type is a sequence nest of depth i, and
    // binding g_i's result walked it all when the occurs check was not remembered
    let n = 24_000;
    let mut text = String::from("X = ");
    for i in 0..n {
        let inner = if i == 0 {
            "x".to_string()
        } else {
            format!("g{}(x)", i - 1)
        };
        text += &format!("let g{i}(x) = <{inner}> within ");
    }
    text += &format!("g{}(1)\nP = STOP\n", n - 1);
    within("let chain", &text, Duration::from_secs(3));
}

#[test]
fn a_deep_type_error_is_still_found_and_shown() {
    // the same chain with a Bool where the Int of the innermost level must be
    let n = 300;
    let mut text = String::from("f0(x) = x + 1\n");
    for i in 1..=n {
        text += &format!("f{i}(x) = <f{}(x)>\n", i - 1);
    }
    text += &format!("X = f{n}(true)\nP = STOP\n");
    let start = Instant::now();
    let err = match load_str("deep.csp", &text, Path::new("/nonexistent")) {
        Err(e) => e,
        Ok(_) => panic!("a Bool given to an Int function must be refused"),
    };
    assert!(start.elapsed() < Duration::from_secs(3));
    let shown = err.to_string();
    assert!(
        shown.contains("Couldn't match expected type Int with actual type Bool"),
        "{shown}"
    );
}
