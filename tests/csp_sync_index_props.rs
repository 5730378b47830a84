//! Networks whose components offer many events at once (as a sudoku square offers a symbol
//! for each of its neighbours): the network's successors, combined with each component's
//! moves indexed by label, give the same LTS as the oracle interpreter (bisimilar, the same
//! numbers of states and transitions), in alphabetised and generalised parallel.

mod common;

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use common::csp_oracle::compare_within;
use weft::csp::load_str;

/// A set of values of `e` as CSPm (`{}` allowed).
fn values() -> impl Strategy<Value = String> {
    proptest::collection::btree_set(0..16u32, 0..16).prop_map(|s| {
        let items: Vec<String> = s.iter().map(u32::to_string).collect();
        format!("{{{}}}", items.join(", "))
    })
}

/// Component `i`: two states, each offering `e.x` for a large set of `x` (the second also
/// `f`), the value chosen deciding where it goes.
fn component(i: usize) -> impl Strategy<Value = String> {
    (values(), values(), 0..16u32).prop_map(move |(a, b, k)| {
        format!(
            "L{i} = [] x : {a} @ e.x -> (if x < {k} then M{i} else L{i})\n\
             M{i} = ([] x : {b} @ e.x -> L{i}) [] f -> L{i}\n"
        )
    })
}

/// A network of 2 to 4 components: alphabetised (`alpha`) or generalised parallel.
fn network() -> impl Strategy<Value = String> {
    (2..5usize).prop_flat_map(|n| {
        (
            (0..n).map(component).collect::<Vec<_>>(),
            proptest::collection::vec(values(), n),
            values(),
            any::<bool>(),
        )
            .prop_map(move |(defs, alphas, sync, alpha)| {
                let mut text = String::from("channel e : {0..15}\nchannel f\n");
                for d in &defs {
                    text.push_str(d);
                }
                // A function's clauses are written together.
                for (i, a) in alphas.iter().enumerate() {
                    text.push_str(&format!(
                        "Alpha({i}) = union({{| e.x | x <- {a} |}}, {{f}})\n"
                    ));
                }
                for i in 0..n {
                    text.push_str(&format!("Comp({i}) = L{i}\n"));
                }
                let body = if alpha {
                    format!("|| i : {{0..{}}} @ [Alpha(i)] Comp(i)", n - 1)
                } else {
                    let mut body = String::from("L0");
                    for i in 1..n {
                        body = format!("({body}) [| {{| e.x | x <- {sync} |}} |] L{i}");
                    }
                    body
                };
                text.push_str(&format!("P0 = {body}\n"));
                text
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn wide_networks_match_the_oracle(text in network()) {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                let script = Arc::new(
                    load_str("wide.csp", &text, Path::new("."))
                        .unwrap_or_else(|e| panic!("{e}\n{text}")),
                );
                let p = script.process("P0", &[]).unwrap();
                assert!(compare_within(&script, &p, &text, 2000), "{text}");
            })
            .unwrap()
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
    }
}
