//! The CSPm front end on small scripts: precedence and layout, checks, values, and the process
//! terms the semantics is built on.

mod common;

use std::path::Path;

use weft::csp::parser::parse_expression;
use weft::csp::pretty::sexpr;
use weft::csp::{load_str, CspError, ErrorKind, Proc, ProcNode, Script, Value};

fn load(text: &str) -> Script {
    load_str("t.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"))
}

/// The first error of a script: its load error, else the first error of its definitions
/// (`Script::errors`), else the first error of an assertion.
fn load_err(text: &str) -> CspError {
    let s = match load_str("t.csp", text, Path::new("/nonexistent")) {
        Err(e) => return e,
        Ok(s) => s,
    };
    if let Some(e) = s.errors().first() {
        return e.clone();
    }
    s.assertions()
        .iter()
        .find_map(|a| a.check.as_ref().err().cloned())
        .expect("the script must report an error")
}

fn shape(text: &str) -> String {
    sexpr(&parse_expression(text).unwrap_or_else(|e| panic!("{e}")).1)
}

fn shown(s: &Script, name: &str) -> String {
    let v = s.value(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    s.show(&v)
}

// ---------------------------------------------------------------- parsing

#[test]
fn precedence_follows_libcspm() {
    // hiding binds more loosely than every binary process operator (FDR's table), and its
    // set operand ends at the next process operator (libcspm's hide_parsing tests)
    assert_eq!(shape(r"P \ A ||| Q"), shape(r"(P \ A) ||| Q"));
    assert_eq!(shape(r"P \ A ; Q"), shape(r"(P \ A) ; Q"));
    assert_eq!(shape(r"P [| A |] Q \ B"), shape(r"(P [| A |] Q) \ B"));
    assert_eq!(shape(r"P ; Q \ A"), shape(r"(P ; Q) \ A"));
    assert_eq!(shape(r"P [] Q \ A ||| R"), shape(r"((P [] Q) \ A) ||| R"));
    // prefix binds tighter than choice, and is right associative
    assert_eq!(
        shape("a -> b -> P [] c -> Q"),
        shape("(a -> (b -> P)) [] (c -> Q)")
    );
    // `;` binds tighter than `[]`, `[]` tighter than `|~|`, `|~|` tighter than parallel
    assert_eq!(shape("P ; Q [] R |~| S"), shape("((P ; Q) [] R) |~| S"));
    assert_eq!(shape("P |~| Q [| A |] R"), shape("(P |~| Q) [| A |] R"));
    assert_eq!(shape("P [| A |] Q ||| R"), shape("(P [| A |] Q) ||| R"));
    // guards and prefixes
    assert_eq!(shape("x > 0 & a -> P"), shape("(x > 0) & (a -> P)"));
    // `.` binds looser than arithmetic and comparisons
    assert_eq!(shape("c.x+1"), shape("c.(x+1)"));
    assert_eq!(shape("a.b == c"), shape("a.(b == c)"));
    // fields
    assert_eq!(shape("c.1?x:S!y+1 -> P"), shape("(c.1)?x:S!(y+1) -> P"));
    // arithmetic and booleans
    assert_eq!(shape("1 + 2 * 3 - 4"), shape("(1 + (2 * 3)) - 4"));
    assert_eq!(shape("not a and b or c"), shape("((not a) and b) or c"));
    assert_eq!(shape("-x * y"), shape("-(x * y)"));
    assert_eq!(shape("#s ^ t"), shape("#(s ^ t)"));
    // `if` extends as far as possible
    assert_eq!(
        shape("if b then P else Q [] R"),
        shape("if b then P else (Q [] R)")
    );
    // renaming is postfix and binds tightest
    assert_eq!(shape("a -> P [[a <- b]]"), shape("a -> (P [[a <- b]])"));
}

#[test]
fn sequences_and_less_than() {
    assert_eq!(
        shape("<x | x <- <0..1>, x<2>"),
        shape("<x | x <- <0..1>, (x < 2)>")
    );
    assert_eq!(shape("<2,1> < <1,2>"), shape("(<2, 1>) < (<1, 2>)"));
    assert_eq!(shape("< > > <>"), shape("<> > <>"));
    assert_eq!(shape("<(a > b)>"), "(seq (> a b))");
}

#[test]
fn non_associative_operators_are_rejected() {
    for text in [
        "a == b == c",
        "P [| A |] Q [| B |] R",
        "P [A || B] Q [| C |] R",
    ] {
        let e = parse_expression(text).expect_err(text);
        assert!(e.message.contains("do not associate"), "{e}");
    }
}

#[test]
fn line_breaks_end_declarations_only_where_an_expression_can_end() {
    let s = load(
        "channel a, b\nP = a ->\n    b -> STOP\n  [] b -> STOP\nQ = P\n\nx = 1 +\n  2\ny = (1,\n 2)\n",
    );
    assert_eq!(shown(&s, "x"), "3");
    assert_eq!(shown(&s, "y"), "(1, 2)");
    let e = load_err("channel a\nP = a -> STOP\n  b -> STOP\n");
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.location.expect("position").line, 3);
}

#[test]
fn comments_are_skipped() {
    let s = load("x = 1 -- one\n{- a {- nested -} comment\n spanning lines -} y = 2\nz = x + {- inline -} y\n");
    assert_eq!(shown(&s, "z"), "3");
}

#[test]
fn errors_name_the_file_line_and_column() {
    let e = load_err("channel a\nP = a -> STOP\nQ = a -> R\n");
    assert_eq!(e.to_string(), "t.csp:3:10: error: unknown name `R`");
    let e = load_err("P = (1, 2\n");
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(e.message.contains("expected"), "{e}");
}

#[test]
fn includes_resolve_relative_to_the_including_file() {
    let dir = std::env::temp_dir().join(format!("weft-csp-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).expect("temp dir");
    std::fs::write(dir.join("main.csp"), "include \"sub/a.csp\"\nx = y + 1\n").expect("write");
    std::fs::write(dir.join("sub/a.csp"), "include \"b.csp\"\ny = z * 2\n").expect("write");
    std::fs::write(dir.join("sub/b.csp"), "z = 20\n").expect("write");
    let s = weft::csp::load_script(&dir.join("main.csp")).expect("loads");
    assert_eq!(shown(&s, "x"), "41");
    std::fs::write(dir.join("sub/b.csp"), "z = 20\nw = )\n").expect("write");
    // The syntax error is kept with its declaration; the script loads and reports it.
    let e = match weft::csp::load_script(&dir.join("main.csp")) {
        Err(e) => e,
        Ok(s) => s
            .errors()
            .first()
            .cloned()
            .expect("syntax error in include"),
    };
    let loc = e.location.clone().expect("position");
    assert!(loc.file.ends_with("b.csp") && loc.line == 2, "{e}");
    std::fs::write(dir.join("sub/b.csp"), "include \"a.csp\"\n").expect("write");
    let e = weft::csp::load_script(&dir.join("main.csp")).expect_err("include cycle");
    assert!(e.message.contains("includes itself"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn constructs_outside_the_subset_are_named() {
    for (text, word) in [
        ("external foo\n", "external function"),
        ("P = WEAK_BUFFER(3, STOP, {})\n", "WEAK_BUFFER"),
    ] {
        let e = load_err(text);
        assert_eq!(e.kind, ErrorKind::Unsupported, "{text}: {e}");
        assert!(e.message.contains(word), "{text}: {e}");
        assert!(e.location.is_some(), "{text}: {e}");
    }
}

/// FDR4's further process operators parse at their levels: the exception with the
/// parallels (not associating), `[+ A +]` with `[]`, `/+ A +\` with `/\`, `|\` with `\`.
#[test]
fn further_process_operators_parse_at_their_levels() {
    assert_eq!(shape("P [| A |> Q ||| R"), shape("(P [| A |> Q) ||| R"));
    assert_eq!(shape("P |~| Q [| A |> R"), shape("(P |~| Q) [| A |> R"));
    assert_eq!(shape("P [+ A +] Q |~| R"), shape("(P [+ A +] Q) |~| R"));
    assert_eq!(shape("P [+ A +] Q [] R"), shape("(P [+ A +] Q) [] R"));
    assert_eq!(shape("P /+ A +\\ Q [] R"), shape("(P /+ A +\\ Q) [] R"));
    assert_eq!(shape("P ; Q /+ A +\\ R"), shape("(P ; Q) /+ A +\\ R"));
    assert_eq!(shape("P |\\ A ||| Q"), shape("(P |\\ A) ||| Q"));
    assert_eq!(shape("c$x?y -> P"), shape("c$x?y -> (P)"));
    assert!(parse_expression("P [| A |> Q [| B |> R").is_err());
    // a `$` after a `?`, as FDR's type checker
    let e = load_err("channel c : {0..1}.{0..1}\nP = c?x$y -> STOP\n");
    assert_eq!(e.location.as_ref().expect("position").column, 8, "{e}");
    assert!(e.message.contains("cannot follow an input"), "{e}");
    // `prioritise` must be declared `external`, as in FDR
    let e = load_err("P = prioritise(STOP, <{}>)\n");
    assert!(e.message.contains("external prioritise"), "{e}");
    let s = load("external prioritise\nchannel a\nP = prioritise(a -> STOP, <{a}>)\n");
    assert!(s.errors().is_empty());
}

// ---------------------------------------------------------------- checks

#[test]
fn static_checks() {
    let e = load_err("P = 1\nQ = 2\nP = 3\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    assert_eq!(e.location.expect("position").line, 3);
    let e = load_err("f(x, y) = x\nz = f(1)\n");
    assert_eq!(e.kind, ErrorKind::Arity);
    assert!(
        e.message.contains("takes 2 arguments but is given 1"),
        "{e}"
    );
    let e = load_err("channel c : {0..1}\nP = c?x?x -> STOP\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let e = load_err("f(x, x) = 0\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let e = load_err("x = {y | y <- {0}, y <- {1}}\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let e = load_err("P = let Q = 1\n  Q = 2\n within Q\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let e = load_err("channel c : {0}\nP = c(1)\n");
    assert!(e.message.contains("channel or constructor"), "{e}");
}

#[test]
fn channel_fields_are_checked_against_their_types() {
    let e = load_err("channel c : {0..1}\nP = c!2 -> STOP\n");
    assert_eq!(e.kind, ErrorKind::Type);
    assert!(
        e.message
            .contains("the value 2 is outside the type of field 1"),
        "{e}"
    );
    let e = load_err("channel c : {0..1}\nP = c.0.1 -> STOP\n");
    assert_eq!(e.kind, ErrorKind::Arity, "{e}");
    assert!(e.message.contains("too many fields"), "{e}");
    let e = load_err("channel c : {0..1}.Bool\nP = c.0 -> STOP\n");
    assert!(e.message.contains("not a complete event"), "{e}");
    // dynamic: the value depends on a parameter, found when the prefix is unfolded
    let s = load("channel c : {0..1}\nP(n) = c!n -> STOP\n");
    let p = s.process("P", &[Value::Int(5)]).expect("P(5) evaluates");
    let ProcNode::Call(call) = p.node() else {
        panic!("a call")
    };
    let ProcNode::Prefix(pre) = s.unfold(call).expect("unfolds").node().clone() else {
        panic!("a prefix")
    };
    let e = s.prefix_transitions(&pre).expect_err("5 is outside {0..1}");
    assert_eq!(e.location.expect("position").line, 2);
}

// ---------------------------------------------------------------- values

#[test]
fn values_and_builtins() {
    let s = load(
        "\
datatype Colour = Red | Green | Blue
channel c : {0..2}.Bool
N = 3
xs = <x * x | x <- <1..N>>
s = {x % 2 | x <- {0..9}}
u = union({1, 2}, {2, 3})
d = diff({1, 2, 3}, {2})
i = inter({1, 2}, Int)
m = member(Green, Colour)
k = card({| c.1 |})
e = {| c.0.true, c.2 |}
n = #(xs ^ <7>)
h = head(tail(xs))
cc = concat(<<1>, <>, <2, 3>>)
q = (-7) / 2
r = (-7) % 2
lt = {1} < {1, 2} and <1> <= <1, 2> and not (2 < 1) and (1, 2) < (2, 1)
ps = Set({1, 2})
ev = card(Events)
f(0) = 1
f(n) = n * f(n - 1)
fact = f(10)
g = \\ x, y @ x + y
gs = g(1, 2)
curry(x)(y) = x - y
cu = curry(10)(3)
lets = let a = b + 1\n        b = 2\n    within a * 10
pairs = {(x, y) | x <- {0, 1}, y <- {x..1}}
",
    );
    for (name, expected) in [
        ("xs", "<1, 4, 9>"),
        ("s", "{0, 1}"),
        ("u", "{1, 2, 3}"),
        ("d", "{1, 3}"),
        ("i", "{1, 2}"),
        ("m", "true"),
        ("k", "2"),
        ("e", "{c.0.true, c.2.false, c.2.true}"),
        ("n", "4"),
        ("h", "4"),
        ("cc", "<1, 2, 3>"),
        ("q", "-4"),
        ("r", "1"),
        ("lt", "true"),
        ("ps", "{{}, {1}, {1, 2}, {2}}"),
        ("ev", "6"),
        ("fact", "3628800"),
        ("gs", "3"),
        ("cu", "7"),
        ("lets", "30"),
        ("pairs", "{(0, 0), (0, 1), (1, 1)}"),
    ] {
        assert_eq!(shown(&s, name), expected, "{name}");
    }
    for (text, word) in [
        ("x = 1 / 0\n", "division by zero"),
        ("x = head(<>)\n", "empty sequence"),
        ("x = card(Int)\n", "infinite"),
    ] {
        let s = load(text);
        let e = s.value("x").expect_err(text);
        assert!(e.message.contains(word), "{text}: {e}");
        assert!(e.location.is_some());
    }
    // values of different types are not compared: the type checker rejects the script
    let e = load_str("t.csp", "x = 1 == true\n", Path::new("/nonexistent")).expect_err("1 == true");
    assert!(e.message.contains("Couldn't match"), "{e}");
    assert!(e.location.is_some());
}

#[test]
fn dotted_values_are_flat_and_grouped_by_type() {
    let s = load(
        "\
datatype A = B.{0..1} | X.{0..1}.{0..1}
channel e : Bool.A.Bool
LinkData = {0.0, 0.1}
channel link : LinkData
same = (e.true.B.0.false) == (e.true.(B.0).false)
fst(x.y) = x
f1 = fst(B.1)
g(e.x.y.z) = y
g1 = g(e.true.X.1.0.false)
evs = card({| e.false.X |})
l = {| link |}
",
    );
    assert_eq!(shown(&s, "same"), "true");
    assert_eq!(shown(&s, "f1"), "B");
    assert_eq!(shown(&s, "g1"), "X.1.0");
    assert_eq!(shown(&s, "evs"), "8");
    assert_eq!(shown(&s, "l"), "{link.0.0, link.0.1}");
    let e = load("datatype A = B.{0..1}\nx = B.2\n")
        .value("x")
        .expect_err("B.2");
    assert!(
        e.message
            .contains("outside the type of field 1 of constructor `B`"),
        "{e}"
    );
}

// ---------------------------------------------------------------- process terms

fn transitions(s: &Script, p: &Proc) -> Vec<(String, Proc)> {
    let ProcNode::Prefix(pre) = p.node() else {
        panic!("not a prefix: {}", s.show_proc(p))
    };
    s.prefix_transitions(pre)
        .expect("transitions")
        .into_iter()
        .map(|(e, q)| (s.show(&e), q))
        .collect()
}

fn unfold(s: &Script, p: &Proc) -> Proc {
    match p.node() {
        ProcNode::Call(c) => s.unfold(c).expect("unfolds"),
        _ => p.clone(),
    }
}

#[test]
fn named_processes_are_calls_with_evaluated_arguments() {
    let s = load(
        "\
channel a : {0..3}
COUNT(n) = n < 3 & a!n -> COUNT(n + 1)
P = COUNT(0)
Q = COUNT(1 - 1)
",
    );
    let p = s.process("P", &[]).expect("P");
    let q = s.process("Q", &[]).expect("Q");
    // P and Q are different names, but both unfold to the same call COUNT(0)
    assert_ne!(p, q);
    assert_eq!(unfold(&s, &p), unfold(&s, &q));
    assert_eq!(s.show_proc(&unfold(&s, &p)), "COUNT(0)");
    let count0 = unfold(&s, &p);
    let body = unfold(&s, &count0);
    let t = transitions(&s, &body);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].0, "a.0");
    assert_eq!(s.show_proc(&t[0].1), "COUNT(1)");
    assert_eq!(
        t[0].1,
        s.process("COUNT", &[Value::Int(1)]).expect("COUNT(1)")
    );
    // COUNT(3): the guard is false, so STOP
    let c3 = s.process("COUNT", &[Value::Int(3)]).expect("COUNT(3)");
    assert!(matches!(unfold(&s, &c3).node(), ProcNode::Stop));
}

#[test]
fn inputs_enumerate_the_channel_type_and_bind_variables() {
    let s = load(
        "\
channel c : {0..2}.Bool
channel d : {0..2}
P = c?x?b:{true} -> d!x -> STOP
R = c.1?y -> STOP
T = c?z -> STOP
",
    );
    let p = unfold(&s, &s.process("P", &[]).expect("P"));
    let t = transitions(&s, &p);
    let names: Vec<&str> = t.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["c.0.true", "c.1.true", "c.2.true"]);
    let next = transitions(&s, &t[2].1);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].0, "d.2");
    let r = unfold(&s, &s.process("R", &[]).expect("R"));
    assert_eq!(transitions(&s, &r).len(), 2);
    // the last input takes all remaining fields
    let t = unfold(&s, &s.process("T", &[]).expect("T"));
    assert_eq!(transitions(&s, &t).len(), 6);
}

#[test]
fn operators_evaluate_their_sets_and_relations() {
    let s = load(
        "\
channel a, b : {0..1}
channel tick
P = a?x -> P
Q = P [[a <- b]]
H = P \\ {| a |}
L = P [a <-> b] (b?y -> STOP)
Par = P [| {| a |} |] P
Rep = ||| i : {0..2} @ tick -> STOP
E = [] i : {} @ tick -> STOP
Alpha = || i : {0, 1} @ [{a.i}] a.i -> STOP
",
    );
    let show = |n: &str| s.show_proc(&unfold(&s, &s.process(n, &[]).expect(n)));
    assert_eq!(show("Q"), "P [[a.0 <- b.0, a.1 <- b.1]]");
    assert_eq!(show("H"), "P \\ {a.0, a.1}");
    assert!(
        show("L").starts_with("P [a.0 <-> b.0, a.1 <-> b.1] "),
        "{}",
        show("L")
    );
    assert_eq!(show("Par"), "P [| {a.0, a.1} |] P");
    let rep = unfold(&s, &s.process("Rep", &[]).expect("Rep"));
    let ProcNode::Interleave(parts) = rep.node() else {
        panic!("interleave")
    };
    assert_eq!(parts.len(), 3);
    assert!(matches!(
        unfold(&s, &s.process("E", &[]).expect("E")).node(),
        ProcNode::Stop
    ));
    let alpha = unfold(&s, &s.process("Alpha", &[]).expect("Alpha"));
    let ProcNode::AlphaParallel(parts) = alpha.node() else {
        panic!("alpha parallel")
    };
    assert_eq!(parts.len(), 2);
    assert_eq!(s.show(&Value::Set(parts[1].0.clone().into())), "{a.1}");
    let e = load("channel a\nS = {a}\nP = |~| x : {} @ STOP\n");
    assert!(e.process("P", &[]).is_err());
    let e = load("channel a : {0}\nP = STOP \\ {a}\n")
        .process("P", &[])
        .expect_err("{a}");
    assert!(e.message.contains("{| a |}"), "{e}");
}

#[test]
fn let_processes_are_closures_over_their_free_variables() {
    let s = load(
        "\
channel c : {0..1}
P(x) = let Q = c!x -> Q within Q
",
    );
    let p0 = unfold(&s, &s.process("P", &[Value::Int(0)]).expect("P(0)"));
    let p1 = unfold(&s, &s.process("P", &[Value::Int(1)]).expect("P(1)"));
    assert_ne!(p0, p1);
    // Q(x=0) after c.0 is Q(x=0) again: a finite, canonical state
    let q0 = unfold(&s, &p0);
    let t = transitions(&s, &q0);
    assert_eq!(t[0].0, "c.0");
    assert_eq!(t[0].1, p0);
    assert_eq!(common::walk(&s, &p0, 100).expect("walk"), 2);
}

#[test]
fn prelude_run_and_chaos() {
    let s = load("channel a : {0..1}\nP = RUN({| a |})\nQ = CHAOS({a.0})\n");
    let p = unfold(&s, &unfold(&s, &s.process("P", &[]).expect("P")));
    let ProcNode::ExtChoice(branches) = p.node() else {
        panic!("RUN is a choice")
    };
    assert_eq!(branches.len(), 2);
    let q = unfold(&s, &unfold(&s, &s.process("Q", &[]).expect("Q")));
    assert!(matches!(q.node(), ProcNode::IntChoice(_)));
}

#[test]
fn compressions_make_compressed_processes_declared_or_not() {
    let s = load("transparent normal, sbisim\nchannel a\nP = a -> P\nQ = normal(sbisim(P))\nR = diamond(P)\n");
    assert!(s.notes().is_empty());
    let q = unfold(&s, &s.process("Q", &[]).expect("Q"));
    match q.node() {
        ProcNode::Compressed(c, inner) => {
            assert_eq!(c.name(), "normal");
            assert!(matches!(inner.node(), ProcNode::Compressed(..)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.show_proc(&q), "normal(sbisim(P))");
    let r = unfold(&s, &s.process("R", &[]).expect("R"));
    assert!(matches!(r.node(), ProcNode::Compressed(..)));
}

#[test]
fn assertions_keep_their_text_and_line() {
    let s = load(
        "channel a\nP = a -> P\n\nassert P [T= a -> STOP\nassert not P :[deadlock free]\nassert P :[has trace]: <a, a>\n",
    );
    let a = s.assertions();
    assert_eq!(a.len(), 3);
    assert_eq!(a[0].text, "P [T= a -> STOP");
    assert_eq!(a[0].location.line, 4);
    assert!(a[1].negated);
    assert_eq!(a[1].text, "not P :[deadlock free]");
    match a[2].check.as_ref().expect("assertion 2") {
        weft::csp::AssertionCheck::HasTrace { trace, .. } => assert_eq!(trace.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn events_are_numbered_with_printed_names() {
    let s = load("datatype D = X | Y.{0..1}\nchannel a\nchannel b : D.Bool\n");
    let t = s.events().expect("events");
    assert_eq!(
        t.names,
        [
            "a",
            "b.X.false",
            "b.X.true",
            "b.Y.0.false",
            "b.Y.0.true",
            "b.Y.1.false",
            "b.Y.1.true"
        ]
    );
    for (i, e) in t.events.iter().enumerate() {
        assert_eq!(t.id(e), Some(i as u32));
    }
}

#[test]
fn unguarded_recursion_is_an_error() {
    // A process named in its own body is a call of it (`P = (a -> SKIP) ; P` is fine), so
    // `P = P [] STOP` loads; the semantics rejects it (tests/csp_semantics.rs). A value that
    // is not a process cannot depend on itself: its evaluation does not terminate.
    let s = load("P = P [] STOP\nassert P :[deadlock free]\n");
    assert!(s.process("P", &[]).is_ok());
    let e = load("x = x + 1\n")
        .value("x")
        .expect_err("x depends on itself");
    assert!(e.message.contains("`x` does not terminate"), "{e}");
    assert!(e.to_string().contains(":1:"), "positioned: {e}");
    let s = load("channel a\nP = (a -> SKIP) ; P\nQ(n) = (a -> SKIP) ; Q(n)\n");
    assert!(s.process("P", &[]).is_ok());
    assert!(s.process("Q", &[Value::Int(1)]).is_ok());
    let s = load("f(n) = f(n + 1)\n");
    let e = s
        .process("f", &[Value::Int(0)])
        .expect_err("runaway recursion");
    assert_eq!(e.kind, ErrorKind::Limit);
}

/// Throughput of the evaluator on a dining-philosophers leaf (run with
/// `cargo test --release --test csp_eval -- --ignored --nocapture`).
#[test]
#[ignore]
fn measure_prefix_transitions() {
    let s = load(
        "\
N = 5
channel pickup, putdown : {0..N-1}.{0..N-1}
channel sit, getup : {0..N-1}
PHIL(i) = sit!i -> pickup!i!i -> pickup!i!((i+1)%N) -> putdown!i!((i+1)%N) -> putdown!i!i -> getup!i -> PHIL(i)
FORK(i) = pickup?x:{i, (i-1+N)%N}!i -> putdown!x!i -> FORK(i)
",
    );
    let mut leaves = Vec::new();
    for i in 0..5 {
        leaves.push(s.process("PHIL", &[Value::Int(i)]).expect("PHIL"));
        leaves.push(s.process("FORK", &[Value::Int(i)]).expect("FORK"));
    }
    let start = std::time::Instant::now();
    let mut calls = 0u64;
    let mut terms = 0usize;
    while start.elapsed().as_secs_f64() < 1.0 {
        for leaf in &leaves {
            let mut p = leaf.clone();
            for _ in 0..8 {
                p = match p.node() {
                    ProcNode::Call(c) => s.unfold(c).expect("unfold"),
                    ProcNode::Prefix(pre) => {
                        calls += 1;
                        let t = s.prefix_transitions(pre).expect("transitions");
                        terms += t.len();
                        t.into_iter().next().expect("a transition").1
                    }
                    _ => break,
                };
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "prefix_transitions: {calls} calls in {secs:.2} s = {:.0} calls/s ({terms} successor terms)",
        calls as f64 / secs
    );
}

#[test]
fn scripts_and_terms_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Script>();
    shared::<Proc>();
    shared::<Value>();
    let s = load("channel a : {0..3}\nP(n) = a!n -> P((n + 1) % 4)\n");
    let p = s.process("P", &[Value::Int(0)]).expect("P(0)");
    let names: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| common::walk(&s, &p, 100).expect("walk")))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread").to_string())
            .collect()
    });
    assert_eq!(
        names,
        ["8", "8", "8", "8"],
        "4 calls P(n) and their 4 prefixes"
    );
}

#[test]
fn print_of_a_process_shows_the_process_not_the_print_entry() {
    let s = load(
        "channel a\nP = a -> P\nmodule M\n  Q(x) = a -> Q(x)\nexports\n  R = Q(0)\nendmodule\n\
         print P\nprint M::R\nprint a -> STOP\n",
    );
    let messages: Vec<&str> = s.notes().iter().map(|n| n.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "print P: P",
            "print M::R: M::R",
            "print a -> STOP: a -> STOP"
        ]
    );
}

#[test]
fn maps_may_hold_processes_as_values() {
    let s = load(
        "channel a : {0..1}\nm = mapFromList(<(i, a!i -> STOP) | i <- <0, 1>>)\n\
         P = mapLookup(m, 1)\nl = (| 0 => STOP |)\n",
    );
    let p = unfold(&s, &s.process("P", &[]).expect("P"));
    assert!(matches!(p.node(), ProcNode::Prefix(_)));
    assert!(s.errors().is_empty());
}
