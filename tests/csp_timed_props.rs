//! Random timed processes (a small CSPm grammar inside a `Timed` section, over every operator
//! a section changes and those it keeps, with durations that depend on the event, and calls
//! of untimed processes): `CspSystem` and the oracle interpreter give the same numbers of
//! states and transitions and bisimilar LTSs.

mod common;

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use common::csp_oracle::compare_within;
use weft::csp::load_str;

fn event() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("a"), Just("b"), Just("c"), Just("d.0"), Just("d.1")]
}

fn process() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("STOP".to_string()),
        Just("SKIP".to_string()),
        (0..3i64).prop_map(|n| format!("WAIT({n})")),
        event().prop_map(|e| format!("{e} -> SKIP")),
        (event(), 0..2usize).prop_map(|(e, n)| format!("{e} -> P{n}")),
        Just("d?x -> c -> SKIP".to_string()),
        Just("U".to_string()),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let two = || (inner.clone(), inner.clone());
        prop_oneof![
            (event(), inner.clone()).prop_map(|(e, p)| format!("{e} -> ({p})")),
            two().prop_map(|(p, q)| format!("({p}) [] ({q})")),
            two().prop_map(|(p, q)| format!("({p}) |~| ({q})")),
            two().prop_map(|(p, q)| format!("({p}) ; ({q})")),
            two().prop_map(|(p, q)| format!("({p}) ||| ({q})")),
            (two(), event()).prop_map(|((p, q), e)| format!("({p}) [| {{{e}}} |] ({q})")),
            (two(), event(), event(), event()).prop_map(|((p, q), e, f, g)| format!(
                "({p}) [{{{e}, {f}}} || {{{f}, {g}}}] ({q})"
            )),
            (inner.clone(), event()).prop_map(|(p, e)| format!("({p}) \\ {{{e}}}")),
            (inner.clone(), event()).prop_map(|(p, e)| format!("timed_priority(({p}) \\ {{{e}}})")),
            (inner.clone(), event(), event())
                .prop_map(|(p, e, f)| format!("({p}) [[{e} <- {f}, {e} <- c]]")),
            two().prop_map(|(p, q)| format!("({p}) /\\ ({q})")),
            two().prop_map(|(p, q)| format!("({p}) [> ({q})")),
            (any::<bool>(), inner.clone()).prop_map(|(b, p)| format!("{b} & ({p})")),
            inner
                .clone()
                .prop_map(|p| format!("[] x : {{0, 1}} @ d.x -> ({p})")),
            inner
                .clone()
                .prop_map(|p| format!("||| x : {{0, 1}} @ d.x -> ({p})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn random_timed_processes_match_the_oracle(p0 in process(), p1 in process()) {
        let text = format!(
            "channel tock, a, b, c\nchannel d : {{0..1}}\n\
             Dur(a) = 0\nDur(b) = 1\nDur(c) = 2\nDur(d.x) = x + 1\n\
             U = a -> STOP [] tock -> U\n\
             Timed(Dur) {{\nP0 = {p0}\nP1 = {p1}\n}}\n"
        );
        // Scripts the front end rejects (an unguarded definition) are not this test's concern.
        // On a big stack: the oracle recurses over deep process values.
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                if let Ok(script) = load_str("random.csp", &text, Path::new(".")) {
                    let script = Arc::new(script);
                    if let Ok(p) = script.process("P0", &[]) {
                        compare_within(&script, &p, &text, 400);
                    }
                }
            })
            .unwrap()
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
    }
}
