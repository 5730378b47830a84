//! The CSPm parser against FDR's reading of scripts: operator precedence, depth, error
//! recovery and error positions (issue 11).
//!
//! Precedence cases are data: each `tests/csp/precedence/NAME.csp` is a script whose
//! assertions have different verdicts under FDR's reading and under the neighbouring
//! reading (both worked out in the file's comments). Every `assert` is preceded by a line
//! `-- expect: holds` or `-- expect: fails` giving FDR's verdict; the n-th expectation
//! belongs to the n-th assertion. The harness loads each script with
//! [`weft::csp::load_script`], runs `weft check FILE --json` and compares the
//! `assertions[].holds` array with the expectations.

use std::path::{Path, PathBuf};
use std::process::Command;

use weft::csp::ast::{DeclKind, ExprKind, ProcOp};
use weft::csp::parser::{parse_expression, parse_str};
use weft::csp::pretty::{decls_to_string, expr_to_string, sexpr};
use weft::csp::{load_script, ErrorKind, SourceMap};

fn precedence_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/csp/precedence")
}

/// The `-- expect:` verdicts of a script, in order.
fn expectations(text: &str) -> Vec<bool> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("-- expect:"))
        .map(|v| match v.trim() {
            "holds" => true,
            "fails" => false,
            other => panic!("bad expectation `{other}` (use `holds` or `fails`)"),
        })
        .collect()
}

/// Runs `weft check FILE --json` and returns its `assertions[].holds`.
fn verdicts(path: &Path) -> Vec<bool> {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["check", &path.display().to_string(), "--json"])
        .output()
        .expect("run weft");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{}: no JSON ({e}): {stdout}{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    v["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .map(|a| a["holds"].as_bool().expect("holds"))
        .collect()
}

#[test]
fn precedence_cases_get_fdrs_verdicts() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(precedence_dir())
        .expect("tests/csp/precedence")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csp"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "only {} cases", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read case");
        let expected = expectations(&text);
        assert!(
            !expected.is_empty(),
            "{}: no `-- expect:` line",
            path.display()
        );
        if let Err(e) = load_script(path) {
            failures.push(format!("{}: does not load: {e}", path.display()));
            continue;
        }
        let got = verdicts(path);
        if got != expected {
            failures.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn shape(text: &str) -> String {
    sexpr(&parse_expression(text).expect(text).1)
}

#[test]
fn hiding_binds_loosest_and_associates_left() {
    for (text, same_as) in [
        ("P [| A |] Q \\ B", "(P [| A |] Q) \\ B"),
        ("P ||| Q \\ B", "(P ||| Q) \\ B"),
        ("P [] Q ; R \\ B", "(P [] (Q ; R)) \\ B"),
        ("P \\ A \\ B", "(P \\ A) \\ B"),
        ("P \\ A ||| Q", "(P \\ A) ||| Q"),
        ("P \\ A [] Q \\ B", "((P \\ A) [] Q) \\ B"),
        ("a -> P \\ A", "(a -> P) \\ A"),
        ("if b then P else Q \\ A", "if b then P else (Q \\ A)"),
        ("\\ x @ P \\ x", "\\ x @ (P \\ x)"),
        ("[] x : A @ P \\ B", "[] x : A @ (P \\ B)"),
        ("P |~| Q [] R", "P |~| (Q [] R)"),
        ("P [] Q /\\ R", "P [] (Q /\\ R)"),
        ("P /\\ Q [> R", "P /\\ (Q [> R)"),
        ("P [> Q ; R", "P [> (Q ; R)"),
        ("P ||| Q [| A |] R", "P ||| (Q [| A |] R)"),
        ("P [| A |] Q ||| R", "(P [| A |] Q) ||| R"),
    ] {
        assert_eq!(shape(text), shape(same_as), "{text}");
    }
    // The printer puts back exactly the parentheses the table needs.
    let e = parse_expression("P [| A |] (Q \\ B)").expect("parse").1;
    assert_eq!(expr_to_string(&e), "P [| A |] (Q \\ B)");
    let e = parse_expression("(P [| A |] Q) \\ B").expect("parse").1;
    assert_eq!(expr_to_string(&e), "P [| A |] Q \\ B");
    assert!(matches!(e.kind, ExprKind::Hide(..)));
}

// ------------------------------------------------------------------ depth

/// Parses `text` as a script on the test's own thread size (the parser grows its stack).
fn parse(text: &str) -> (SourceMap, Vec<weft::csp::ast::Decl>) {
    parse_str("t.csp", text, Path::new(".")).expect("parses")
}

#[test]
fn deep_structures_parse_and_print() {
    // Dropping a deep AST recurses (ast.rs has no iterative `Drop`), so the trees are dropped
    // on a thread with room for that; parsing and printing grow their own stacks.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(deep_structures)
        .expect("thread")
        .join()
        .expect("deep structures");
}

fn deep_structures() {
    // Within the parser's depth bound (40,000 levels: an event of a prefix chain counts two,
    // a bracket one; deeper scripts are refused, see csp_errors.rs).
    let n = 19_000;
    let chain = format!("channel a\nP = {}STOP\n", "a -> ".repeat(n));
    let (_, decls) = parse(&chain);
    assert_eq!(decls.len(), 2);
    let printed = decls_to_string(&decls);
    assert_eq!(printed.matches("->").count(), n);
    let (_, again) = parse(&printed);
    assert_eq!(decls_to_string(&again), printed);

    let branches = 20_000;
    let choice = format!(
        "channel a\nP = {}\n",
        vec!["a -> STOP"; branches].join(" [] ")
    );
    let (_, decls) = parse(&choice);
    let DeclKind::PatBind(_, body) = &decls[1].kind else {
        panic!("P is a pattern binding")
    };
    assert!(matches!(body.kind, ExprKind::Proc(ProcOp::ExtChoice, ..)));
    assert_eq!(decls_to_string(&decls).matches("[]").count(), branches - 1);

    let depth = 39_000;
    let parens = format!("{}STOP{}", "(".repeat(depth), ")".repeat(depth));
    let e = parse_expression(&parens).expect("parens").1;
    assert_eq!(expr_to_string(&e), "STOP");
    let sets = format!("{}{}", "{".repeat(depth), "}".repeat(depth));
    let e = parse_expression(&sets).expect("sets").1;
    assert_eq!(expr_to_string(&e).len(), 2 * depth + 2 * (depth - 1));
}

#[test]
fn deep_scripts_get_a_verdict() {
    let dir = std::env::temp_dir().join(format!("weft-prec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("chain.csp");
    std::fs::write(
        &path,
        format!(
            "channel a\nP = {}STOP\nassert P :[has trace [T]]: <{}>\nassert P :[deadlock free [F]]\n",
            "a -> ".repeat(200),
            vec!["a"; 200].join(", ")
        ),
    )
    .expect("write");
    assert_eq!(verdicts(&path), vec![true, false]);
    // A 2000-branch choice parses; its check is the evaluator's business (see the report).
    let choice = format!(
        "channel a\nP = {}\nassert P :[deadlock free [F]]\n",
        vec!["a -> STOP"; 2000].join(" [] ")
    );
    let (_, decls) = parse(&choice);
    assert_eq!(decls.len(), 3);
    std::fs::remove_dir_all(&dir).ok();
}

// ------------------------------------------------------------------ recovery

fn invalid(d: &weft::csp::ast::Decl) -> &weft::csp::ast::InvalidDecl {
    match &d.kind {
        DeclKind::Invalid(inv) => inv,
        other => panic!("expected an invalid declaration, got {other:?}"),
    }
}

fn names(d: &weft::csp::ast::Decl) -> Vec<String> {
    invalid(d)
        .names
        .iter()
        .map(|n| n.name.to_string())
        .collect()
}

#[test]
fn a_bad_declaration_loses_only_itself() {
    let text = "\
channel a, b
P = a -> (b -> STOP
Q = a -> STOP
f(x) = x + * y
datatype T = A | B.{0..$} | C
channel c, d : {0..3} :: X
assert Q :[deadlock free [F]] :[tau priority]
R = Q
nametype N = {0..3
S = Q ` R
(u, v) = (1, 2 $ 3)
W = STOP
";
    let (sources, decls) = parse(text);
    let kinds: Vec<&str> = decls
        .iter()
        .map(|d| match &d.kind {
            DeclKind::Invalid(_) => "invalid",
            DeclKind::Channel(..) => "channel",
            DeclKind::PatBind(..) => "bind",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "channel", "invalid", "bind", "invalid", "invalid", "invalid", "invalid", "bind",
            "invalid", "invalid", "invalid", "bind"
        ]
    );
    assert_eq!(names(&decls[1]), ["P"]);
    assert_eq!(names(&decls[3]), ["f"]);
    assert_eq!(invalid(&decls[3]).kind, ErrorKind::Syntax);
    assert_eq!(names(&decls[4]), ["T", "A", "B", "C"]);
    assert_eq!(names(&decls[5]), ["c", "d"]);
    assert!(invalid(&decls[6]).assertion && names(&decls[6]).is_empty());
    assert_eq!(names(&decls[8]), ["N"]);
    assert_eq!(names(&decls[9]), ["S"]);
    assert_eq!(invalid(&decls[9]).message, "unexpected character ```");
    assert_eq!(names(&decls[10]), ["u", "v"]);
    // positions of the errors
    let at = |i: usize| {
        let l = sources.location(invalid(&decls[i]).error_span);
        (l.line, l.column)
    };
    assert_eq!(at(1), (2, 20), "{}", invalid(&decls[1]).message);
    assert!(invalid(&decls[1]).message.contains("expected `)`"));
    assert_eq!(at(3), (4, 12));
    assert_eq!(at(9), (10, 7));
}

#[test]
fn sections_that_cannot_be_read_are_skipped_whole_with_their_names() {
    // A timed section with a syntax error inside, and a module (read whole).
    let text = "\
channel a
Timed(et) {
P = a -> STOP
Q(x) = P )
}
module M
X = 1
exports
Y = X
endmodule
R = a -> STOP
";
    let (_, decls) = parse(text);
    assert_eq!(decls.len(), 4, "{decls:?}");
    assert_eq!(names(&decls[1]), ["P", "Q"]);
    assert_eq!(invalid(&decls[1]).kind, ErrorKind::Syntax);
    assert!(
        matches!(decls[2].kind, DeclKind::Module(..)),
        "{:?}",
        decls[2]
    );
    assert!(matches!(decls[3].kind, DeclKind::PatBind(..)));
    // Read, the section keeps its declarations.
    let (_, decls) = parse("channel a\nTimed(et) {\nP = a -> STOP\nQ(x) = P\n}\nR = P\n");
    assert_eq!(decls.len(), 3, "{decls:?}");
    let DeclKind::Timed(t) = &decls[1].kind else {
        panic!("not a timed section: {:?}", decls[1]);
    };
    assert!(t.et.is_some());
    assert_eq!(t.decls.len(), 2);
}

#[test]
fn a_declaration_that_spans_lines_is_skipped_to_the_next_line_start() {
    // The bad `if` swallows `Q` on the next line; Q is read again on its own.
    let (_, decls) = parse("channel a\nP = if true then\nQ = a -> STOP\nR = Q\n");
    assert_eq!(names(&decls[1]), ["P"]);
    assert!(matches!(decls[2].kind, DeclKind::PatBind(..)));
    assert!(matches!(decls[3].kind, DeclKind::PatBind(..)));
    // An indented continuation line is not a new declaration.
    let (_, decls) = parse("P = (STOP\n  Q = STOP\nR = STOP\n");
    assert_eq!(decls.len(), 2);
    assert_eq!(names(&decls[0]), ["P"]);
}

// ------------------------------------------------------------------ positions

fn first_error(text: &str) -> (u32, u32, String) {
    let (sources, decls) = parse(text);
    let inv = decls
        .iter()
        .find_map(|d| match &d.kind {
            DeclKind::Invalid(inv) => Some(inv),
            _ => None,
        })
        .expect("an invalid declaration");
    let l = sources.location(inv.error_span);
    (l.line, l.column, inv.message.clone())
}

#[test]
fn errors_point_at_the_real_place() {
    for (text, line, column, says) in [
        (
            "channel\nP = STOP\n",
            1,
            8,
            "expected a channel name after `channel`",
        ),
        ("datatype\nP = STOP\n", 1, 9, "expected a datatype name"),
        ("nametype\nP = STOP\n", 1, 9, "expected a type name"),
        ("P = a ->\n", 1, 9, "found the end of the file"),
        ("P = (a -> STOP\nQ = STOP\n", 1, 15, "expected `)`"),
        ("assert P\nQ = STOP\n", 1, 9, "expected `[T=`"),
        ("P = a STOP\n", 1, 7, "found name `STOP`"),
        (
            "channel a\nP = {a\n  Q = STOP\n",
            2,
            7,
            "`}` in a set after name `a`, found the end of the line",
        ),
        ("P = f(x,\n  ]\n", 2, 3, "expected an expression, found `]`"),
    ] {
        let (l, c, m) = first_error(text);
        assert_eq!((l, c), (line, column), "{text:?}: {m}");
        assert!(m.contains(says), "{text:?}: {m}");
    }
    // The declaration after the bad `channel` line is read.
    let (_, decls) = parse("channel\nP = STOP\n");
    assert!(matches!(decls[1].kind, DeclKind::PatBind(..)));
}
