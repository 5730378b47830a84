//! Channels, datatypes and sets over infinite types, as FDR has them: declared and used
//! without enumerating them (membership, synchronisation, hiding, renaming), with an error
//! naming the set where something must enumerate one. Verdicts of whole scripts are in
//! `tests/cases/should_pass/infinite_*.csp`; this file checks values, errors and that the
//! events numbered as met leave explorations the same at every thread count.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use weft::threads::Threads;

use weft::csp::{load_str, CspError, CspSystem, ErrorKind, Script, Value};
use weft::explore::{explore, ExploreOptions};
use weft::ts::TransitionSystem;
use weft::verify::{AssertionRun, Verdict, VerifyOptions};

fn load(text: &str) -> Script {
    load_str("t.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"))
}

/// Every `test*` binding of `text` is true.
fn all_true(text: &str) {
    let s = load(text);
    assert!(s.errors().is_empty(), "{:?}", s.errors());
    let mut n = 0;
    for name in s.definition_names() {
        if name.starts_with("test") {
            n += 1;
            match s.value(name) {
                Ok(Value::Bool(true)) => {}
                other => panic!("{name}: {other:?}"),
            }
        }
    }
    assert!(n > 0);
}

/// The error of evaluating constant `name`.
fn value_err(s: &Script, name: &str) -> CspError {
    match s.value(name) {
        Err(e) => e,
        Ok(v) => panic!("{name} = {}", s.show(&v)),
    }
}

#[test]
fn integer_sets_are_exact() {
    // (FDR's answers: libcspm's evaluator test sets.csp and bounded_list_sets.csp)
    all_true(
        "testA = {1} <= {0..}\n\
         testB = not ({1..} <= {0})\n\
         testC = diff({1..}, {1}) == {2..}\n\
         testD = diff({1..}, Int) == {}\n\
         testE = union({0..}, {1..}) == {0..}\n\
         testF = inter({0..}, {(-3)..2}) == {0, 1, 2}\n\
         testG = {x.. | x <- {1, 2, 5}} == {1..}\n\
         testH = member(12515, {0..}) and not member(-1, {0..})\n\
         testI = {0..} != {1..}\n\
         testJ = not empty({5..})\n\
         testK = {0..} < Int\n\
         testL = diff(Int, {0..}) == diff(Int, {0..})\n",
    );
}

#[test]
fn described_sets_answer_membership() {
    all_true(
        "channel c : Int\n\
         channel d : Int.Bool\n\
         datatype T = A.Int | B\n\
         nametype N = Int.{0, 1}\n\
         testA = member(c.3, {| c |}) and not member(d.3.true, {| c |})\n\
         testB = member(d.3.true, {| d |}) and member(d.3.true, {| d.3 |})\n\
         testC = {| d.3 |} == {d.3.false, d.3.true}\n\
         testD = member(A.(-7), T) and member(B, T)\n\
         testE = member(c.1, Events) and member(d.0.false, Events)\n\
         testF = member(c.1, diff(Events, {| d |})) and not member(d.1.true, diff(Events, {| d |}))\n\
         testG = member(<0, 1, 1>, Seq({0, 1})) and not member(<2>, Seq({0, 1}))\n\
         testH = Seq({}) == {<>}\n\
         testI = member(5.1, N) and not member(5.2, N)\n\
         testJ = member({0, 7}, Set(Int)) and not member({7, 8}, Set({0..7}))\n\
         channel p : (Int, Bool)\n\
         testK = member(p.(1, true), {| p |}) and member(p.(-1, false), Events)\n\
         testL = extensions(c) == Int\n\
         testM = productions(d.2) == {d.2.false, d.2.true}\n\
         testN = inter({c.1, c.2, d.1.true}, {| c |}) == {c.1, c.2}\n\
         testO = member(A.3, {| A |})\n",
    );
}

#[test]
fn recursive_datatypes_are_infinite() {
    all_true(
        "datatype Tree = Leaf.Int | Node.Seq(Tree)\n\
         datatype Nat = Z | S.Nat\n\
         testA = member(Node.<Leaf.0, Node.<>>, Tree)\n\
         testB = not member(Node.<>, {| Leaf |}) and member(Leaf.4, {| Leaf |})\n\
         testC = member(S.S.S.Z, Nat)\n\
         testD = (S.Z) != Z and (S.S.Z) == (S.S.Z)\n",
    );
}

#[test]
fn enumerating_an_infinite_set_is_a_positioned_error() {
    let s = load(
        "channel c : Int\n\
         a = card({| c |})\n\
         b = {x | x <- Int}\n\
         c1 = card(Events)\n\
         d = #<0..>\n\
         e = {| c |} == {| c2 |}\n\
         channel c2 : Int\n",
    );
    for (name, line, words) in [
        ("a", 2, "`card` needs to enumerate {|c|}"),
        ("b", 3, "enumerate Int"),
        ("c1", 4, "`card` needs to enumerate"),
        ("d", 5, "infinite sequence"),
        ("e", 6, "cannot compare"),
    ] {
        let e = value_err(&s, name);
        assert!(e.message.contains(words), "{name}: {e}");
        assert_eq!(
            e.location.as_ref().map(|l| l.line),
            Some(line),
            "{name}: {e:?}"
        );
    }
}

#[test]
fn events_of_channels_of_infinite_types_are_not_in_the_table() {
    let s = load("channel a : {0..2}\nchannel c : Int\nchannel d\nev = Events\n");
    let t = s.events().expect("the event table");
    assert_eq!(t.events.len(), 4);
    assert_eq!(t.lazy_channels, vec![1]);
    // `Events` is the table's events and all of c's.
    let events = s.value("ev").expect("Events");
    assert!(matches!(events, Value::Infinite(_)));
    let c = s.value("c").expect("the channel");
    let c40 = Value::Dot(Arc::from([c.clone(), Value::Int(-40)]));
    assert!(s.member(&events, &c40).expect("membership"));
    assert!(s.is_event(&c40));
    assert!(!s.is_event(&c));
    assert!(s.member(&events, &t.events[0]).expect("membership"));
}

const LAZY: &str = "\
channel c, d : Int
channel e : {0..3}
GEN(n) = n < 40 & c!(n * 7 % 13) -> GEN(n + 1) [] n < 40 & d!(n * n) -> GEN(n + 2)
COPY = c?x:{0..12} -> d!(x + 100) -> COPY [] e?y -> COPY
SYS = (GEN(0) [| {| c |} |] COPY) [[ d <- c ]]
HID = SYS \\ {| e |}
-- a sequential process with wide levels: its events are met by the workers in any order
G(n, m) = n < 150 and m < 150 & (c!(n * m) -> G(n + 1, m) [] d!(n - m) -> G(n, m + 1))
";

/// The explored LTS of `name` at `threads` threads, with label names.
fn explored(script: &Arc<Script>, name: &str, threads: usize) -> BTreeSet<(u32, String, u32)> {
    let p = match name.split_once('(') {
        Some((f, _)) => script
            .process(f, &[Value::Int(0), Value::Int(0)])
            .expect("process"),
        None => script.process(name, &[]).expect("process"),
    };
    let sys = CspSystem::new(script, &p).expect("system");
    let opts = ExploreOptions {
        threads: Threads::new(threads).expect("a thread count"),
        record_transitions: true,
        ..Default::default()
    };
    let r = explore(&sys, &opts);
    assert!(sys.take_error().is_none());
    assert!(r.stats.complete);
    r.transitions
        .iter()
        .map(|&(s, l, t)| (s.0, sys.label_name(l), t.0))
        .collect()
}

#[test]
fn events_numbered_as_met_give_the_same_exploration_at_every_thread_count() {
    let script = Arc::new(load(LAZY));
    for name in ["SYS", "HID", "G(0, 0)"] {
        let one = explored(&script, name, 1);
        assert!(one.len() > 50, "{name}: {} transitions", one.len());
        let wanted = if name == "G(0, 0)" { "d.-149" } else { "c.107" };
        assert!(one.iter().any(|(_, l, _)| l == wanted), "{name}");
        for threads in [2, 4] {
            for _ in 0..3 {
                assert_eq!(explored(&script, name, threads), one, "{name}, {threads}");
            }
        }
    }
}

#[test]
fn counterexamples_over_events_numbered_as_met_are_the_same_at_every_thread_count() {
    let text = format!(
        "{LAZY}SPEC = c?x:{{0..2000}} -> SPEC [] e?y -> SPEC\n\
         assert SPEC [T= SYS\n\
         assert SPEC [FD= SYS\n\
         assert SYS :[deadlock free]\n"
    );
    let script = Arc::new(load(&text));
    let mut first: Option<Vec<(String, String)>> = None;
    for threads in [1, 2, 4] {
        let mut run = AssertionRun::new(
            script.clone(),
            VerifyOptions {
                threads: Threads::new(threads).expect("a thread count"),
                ..VerifyOptions::default()
            },
        );
        let got: Vec<(String, String)> = run
            .run_all(|_| {})
            .iter()
            .map(|r| {
                assert!(!matches!(r.verdict, Verdict::Error(_)), "{:?}", r.verdict);
                (r.verdict.name().to_string(), format!("{:?}", r.witness))
            })
            .collect();
        assert_eq!(got[0].0, "holds");
        assert_eq!(got[1].0, "fails");
        match &first {
            None => first = Some(got),
            Some(f) => assert_eq!(&got, f, "{threads} threads"),
        }
    }
}

#[test]
fn an_unrestricted_input_over_int_stops_the_check_with_its_position() {
    let s = Arc::new(load(
        "channel c : Int\nP = c?x -> P\nassert P :[deadlock free]\n",
    ));
    let mut run = AssertionRun::new(s.clone(), VerifyOptions::default());
    let results = run.run_all(|_| {});
    let Verdict::Error(e) = &results[0].verdict else {
        panic!("{:?}", results[0].verdict)
    };
    let msg = e.to_string();
    assert!(msg.contains("infinite type Int"), "{msg}");
    assert!(msg.contains("2:7"), "{msg}");
    match e {
        weft::verify::VerifyError::Script(e) => assert_eq!(e.kind, ErrorKind::Eval),
        other => panic!("{other}"),
    }
}

/// `c.-3` as (`c`, -3).
fn parse_event(name: &str) -> (String, i64) {
    let (chan, value) = name.split_once('.').expect("a dotted event");
    (chan.to_string(), value.parse().expect("an integer field"))
}

#[test]
fn successors_come_in_the_order_of_their_events_not_of_their_numbers() {
    // Events numbered as met get numbers in the order the workers meet them; a state's
    // successors must still come out in the order of the events (the explorer's canonical
    // ids rest on it).
    let script = Arc::new(load(LAZY));
    let p = script
        .process("G", &[Value::Int(0), Value::Int(0)])
        .expect("process");
    let sys = CspSystem::new(&script, &p).expect("system");
    let opts = ExploreOptions {
        threads: Threads::new(4).expect("a thread count"),
        ..Default::default()
    };
    let r = explore(&sys, &opts);
    assert!(r.stats.complete);
    let mut out_of_number_order = 0;
    for state in &r.states {
        let mut labels = Vec::new();
        sys.for_each_successor(state, &mut |l, _| labels.push(l));
        let events: Vec<(String, i64)> = labels
            .iter()
            .map(|&l| parse_event(&sys.label_name(l)))
            .collect();
        assert!(events.windows(2).all(|w| w[0] <= w[1]), "{events:?}");
        out_of_number_order += usize::from(labels.windows(2).any(|w| w[0] > w[1]));
    }
    // (the case the order guards against does happen: numbers disagree with the events)
    assert!(out_of_number_order > 0);
}
