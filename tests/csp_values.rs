//! CSPm values FDR has beyond integers, booleans, sets and sequences: characters and strings,
//! `show` and `error`, maps, relations, `loop`, `subtype`, type annotations, `external`
//! declarations, `print`, and modules (flattened to qualified names).

mod common;

use std::path::Path;

use weft::csp::{load_str, CspError, ErrorKind, Script, Value};

fn load(text: &str) -> Script {
    load_str("t.csp", text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"))
}

/// The first error of a script: its load error, else the first error of its definitions,
/// else the first error of an assertion.
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

fn shown(s: &Script, name: &str) -> String {
    let v = s.value(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    s.show(&v)
}

/// Every `t*` binding of the script is `true`.
fn all_true(text: &str) {
    let s = load(text);
    assert!(s.errors().is_empty(), "{:?}", s.errors());
    let mut n = 0;
    for name in s.definition_names() {
        if name.starts_with('t') {
            n += 1;
            match s.value(name) {
                Ok(Value::Bool(true)) => {}
                Ok(v) => panic!("{name} = {}", s.show(&v)),
                Err(e) => panic!("{name}: {e}"),
            }
        }
    }
    assert!(n > 0);
}

#[test]
fn characters_and_strings() {
    all_true(
        "t1 = <'a', 'b'> == \"ab\"\n\
         t2 = \"ab\" ^ \"c\" == \"abc\"\n\
         t3 = #\"hello\" == 5\n\
         t4 = head(\"xy\") == 'x'\n\
         t5 = member('c', Char)\n\
         t6 = member(\"cd\", Seq(Char)) and not member(<1>, Seq(Char))\n\
         t7 = 'a' < 'b' and \"\" == <>\n\
         t8 = let f('c') = 1\n             f(_) = 2\n     within f('c') + f('d') == 3\n\
         t9 = let g(\"ab\" ^ s) = s within g(\"abcd\") == \"cd\"\n\
         t10 = '\\n' != 'n' and \"a\\\"b\" == <'a', '\"', 'b'>\n",
    );
    let s = load("x = \"ab\"\ny = 'q'\nz = <'a'> ^ <>\n");
    assert_eq!(shown(&s, "x"), "\"ab\"");
    assert_eq!(shown(&s, "y"), "'q'");
    assert_eq!(shown(&s, "z"), "\"a\"");
}

#[test]
fn show_and_error() {
    all_true(
        "datatype D = A | B.{0..1}\n\
         t1 = show(1) == \"1\"\n\
         t2 = show({B.1, A}) == \"{A, B.1}\"\n\
         t3 = show(<true>) ^ \"!\" == \"<true>!\"\n\
         t4 = if true then 1 == 1 else error(\"not reached\")\n",
    );
    let s = load("f(x) = if x > 0 then x else error(\"negative\")\ny = f(-1)\n");
    let e = s.value("y").expect_err("error reached");
    assert_eq!(e.kind, ErrorKind::Eval);
    assert!(e.message.contains("negative"), "{e}");
    let at = e.location.clone().expect("a position");
    assert_eq!((at.line, at.column), (1, 29), "{e}");
}

#[test]
fn maps() {
    all_true(
        "m = (| 1 => 10, 2 => 20 |)\n\
         t1 = mapLookup(m, 2) == 20\n\
         t2 = mapMember(m, 1) and not mapMember(m, 3)\n\
         t3 = mapToList(m) == <(1, 10), (2, 20)>\n\
         t4 = mapFromList(<(2, 20), (1, 10)>) == m\n\
         t5 = mapUpdate(m, 1, 11) == (| 1 => 11, 2 => 20 |)\n\
         t6 = mapDelete(m, 1) == (| 2 => 20 |) and mapDelete(m, 5) == m\n\
         t7 = mapUpdateMultiple(emptyMap, <(1, 0), (1, 2)>) == (| 1 => 2 |)\n\
         t8 = (| |) == emptyMap and mapFromList(<(1, 0), (1, 3)>) == (| 1 => 3 |)\n\
         t9 = card(Map({0, 1}, {0, 1})) == 9 and member((| 0 => 1 |), Map({0}, {1}))\n\
         t10 = not member((| 0 => 2 |), Map({0}, {1}))\n\
         t11 = member((| 5 => 'c' |), Map(Int, Char))\n\
         t12 = (| 1 => 0 |) < (| 1 => 1 |) and not (m < m) and m <= m\n",
    );
    let s = load("m = (| 2 => <1>, 1 => <> |)\n");
    assert_eq!(shown(&s, "m"), "(| 1 => <>, 2 => <1> |)");
    let s = load("m = (| 1 => 2 |)\nx = mapLookup(m, 3)\n");
    let e = s.value("x").expect_err("missing key");
    assert_eq!(e.kind, ErrorKind::Eval);
    assert!(e.message.contains("not in the domain"), "{e}");
    assert_eq!(e.location.expect("position").line, 2);
}

#[test]
fn relations() {
    all_true(
        "R = {(0, 1), (0, 2), (3, 1)}\n\
         t1 = transpose(R) == {(1, 0), (2, 0), (1, 3)}\n\
         t2 = relational_image(R)(0) == {1, 2} and relational_image(R)(7) == {}\n\
         t3 = relational_inverse_image(R)(1) == {0, 3}\n\
         t4 = mtransclose({(1, 0), (2, 1)}, {0, 1, 2}) == {(0, 1), (0, 2)}\n\
         t5 = mtransclose({(1, 0), (2, 1)}, {1, 2}) == {}\n\
         t6 = mtransclose({(5, 6), (1, 2)}, {1, 2, 5, 6}) == {(1, 2), (5, 6)}\n",
    );
}

#[test]
fn loop_repeats_a_process() {
    let s = load("channel a, b\nP = loop(a -> b -> SKIP)\n");
    let v = s.value("P").expect("P");
    let Value::Proc(p) = v else {
        panic!("not a process")
    };
    // a, b, tick-as-tau, a, ... : three reachable terms at most
    let n = common::walk(&s, &p, 100).expect("walk");
    assert!(n <= 6, "{n}");
}

#[test]
fn declarations_fdr_reads() {
    all_true(
        "datatype X = A | B.{0..2} | C.Bool\n\
         subtype Y = A | B.{1} | C\n\
         f :: (Int, Int) -> Int\n\
         f(x, y) = x + y\n\
         n, m :: Int\n\
         n = 1\n\
         m = 2\n\
         external relational_image\n\
         transparent normal, sbisim\n\
         t1 = Y == {A, B.1, C.true, C.false}\n\
         t2 = f(n, m) == 3\n\
         t3 = let g :: (Int) -> Int\n          g(x) = x within g(4) == 4\n",
    );
    let s = load("print 1 + 2\nprint {3}\n");
    let notes: Vec<String> = s.notes().iter().map(|n| n.message.clone()).collect();
    assert_eq!(notes, vec!["print 1 + 2: 3", "print {3}: {3}"], "{notes:?}");
    let e = load_err("print error(\"boom\")\n");
    assert!(e.message.contains("boom"), "{e}");
}

#[test]
fn modules_flatten_to_qualified_names() {
    all_true(
        "module M\n\
         \x20 hidden = 3\n\
         exports\n\
         \x20 visible = hidden + 1\n\
         \x20 twice(x) = 2 * x\n\
         endmodule\n\
         module P(k)\n\
         exports\n\
         \x20 get = k * 10\n\
         \x20 plus(x) = x + M::visible + k\n\
         endmodule\n\
         instance I = P(1)\n\
         instance J = P(2)\n\
         t1 = M::visible == 4 and M::twice(5) == 10\n\
         t2 = I::get == 10 and J::get == 20\n\
         t3 = I::plus(0) == 5 and J::plus(1) == 7\n",
    );
    let e = load_err("module M\n  hidden = 3\nexports\n  v = 1\nendmodule\nx = M::hidden\n");
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert!(e.message.contains("private"), "{e}");
    let at = e.location.clone().expect("a position");
    assert_eq!((at.line, at.column), (6, 5), "{e}");
    let e = load_err("module P(a)\nexports\n  v = a\nendmodule\ninstance I = P(1, 2)\nx = I::v\n");
    assert_eq!(e.kind, ErrorKind::Arity, "{e}");
}
