//! Property tests of the CSPm front end: printing then parsing a generated AST gives the same
//! AST, and no input (random tokens, random bytes) makes the front end panic.

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use weft::csp::ast::*;
use weft::csp::parser::{parse_expression, parse_str};
use weft::csp::pretty::{expr_to_string, sexpr};
use weft::csp::{load_str, Span};

fn mk(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
        id: 0,
    }
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn pvar(n: &str) -> Pattern {
    Pattern {
        kind: PatKind::Var(n.into()),
        span: Span::default(),
    }
}

const NAMES: [&str; 8] = ["a", "b", "c", "x", "y", "P", "Q", "STOP"];

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NAMES.to_vec())
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (0i64..50).prop_map(|i| mk(ExprKind::Int(i))),
        any::<bool>().prop_map(|v| mk(ExprKind::Bool(v))),
        name().prop_map(|n| mk(ExprKind::Var(n.into()))),
    ]
}

fn binop() -> impl Strategy<Value = BinOp> {
    prop::sample::select(vec![
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Gt,
        BinOp::Le,
        BinOp::Ge,
        BinOp::And,
        BinOp::Or,
        BinOp::Concat,
    ])
}

fn procop() -> impl Strategy<Value = ProcOp> {
    prop::sample::select(vec![
        ProcOp::ExtChoice,
        ProcOp::IntChoice,
        ProcOp::Interleave,
        ProcOp::Seq,
        ProcOp::Interrupt,
        ProcOp::Timeout,
    ])
}

fn pattern() -> impl Strategy<Value = Pattern> {
    let p = |kind| Pattern {
        kind,
        span: Span::default(),
    };
    prop_oneof![
        4 => name().prop_map(pvar),
        1 => (0i64..9).prop_map(move |i| p(PatKind::Int(i))),
        1 => (name(), name()).prop_map(move |(x, y)| p(PatKind::Tuple(vec![pvar(x), pvar(y)]))),
        1 => (name(), name()).prop_map(move |(x, y)| p(PatKind::Dot(vec![pvar(x), pvar(y)]))),
        1 => name().prop_map(move |x| p(PatKind::Seq(vec![pvar(x)]))),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 48, 4, |inner| {
        let field = prop_oneof![
            inner.clone().prop_map(Field::Output),
            (pattern(), prop::option::of(inner.clone())).prop_map(|(p, r)| Field::Input(p, r)),
        ];
        let pairs = prop::collection::vec((inner.clone(), inner.clone()), 1..3);
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| mk(ExprKind::Dot(b(x), b(y)))),
            (binop(), inner.clone(), inner.clone()).prop_map(|(op, x, y)| mk(ExprKind::Binary(
                op,
                b(x),
                b(y)
            ))),
            (
                prop::sample::select(vec![UnOp::Neg, UnOp::Not, UnOp::Len]),
                inner.clone()
            )
                .prop_map(|(op, x)| mk(ExprKind::Unary(op, b(x)))),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, t, f)| mk(ExprKind::If(
                b(c),
                b(t),
                b(f)
            ))),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| mk(ExprKind::Tuple(v))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| mk(ExprKind::SeqLit(v))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| mk(ExprKind::SetLit(v))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| mk(ExprKind::SetRange(b(x), b(y)))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| mk(ExprKind::SeqRange(b(x), b(y)))),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| mk(ExprKind::Productions(v))),
            (name(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, args)| mk(ExprKind::App(b(mk(ExprKind::Var(f.into()))), args))),
            (
                inner.clone(),
                prop::collection::vec(field, 0..3),
                inner.clone()
            )
                .prop_map(|(event, fields, body)| mk(ExprKind::Prefix(Arc::new(
                    PrefixExpr {
                        event,
                        fields,
                        body
                    }
                )))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| mk(ExprKind::Guard(b(x), b(y)))),
            (procop(), inner.clone(), inner.clone()).prop_map(|(op, x, y)| mk(ExprKind::Proc(
                op,
                b(x),
                b(y)
            ))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| mk(ExprKind::Hide(b(x), b(y)))),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(p, a, q)| mk(ExprKind::Parallel(b(p), b(a), b(q)))),
            (inner.clone(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(p, x, y, q)| mk(ExprKind::AlphaParallel(b(p), b(x), b(y), b(q)))),
            (
                inner.clone(),
                pairs.clone(),
                prop::option::of((pattern(), inner.clone()))
            )
                .prop_map(|(p, prs, st)| {
                    let stmts = st
                        .map(|(pat, e)| vec![Stmt::Generator(pat, e)])
                        .unwrap_or_default();
                    mk(ExprKind::Rename(b(p), prs, stmts))
                }),
            (inner.clone(), pairs, inner.clone()).prop_map(|(p, prs, q)| mk(ExprKind::Link(
                b(p),
                prs,
                Vec::new(),
                b(q)
            ))),
            (
                0usize..5,
                pattern(),
                inner.clone(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(k, pat, src, body, alpha)| {
                    let op = match k {
                        0 => RepOp::ExtChoice,
                        1 => RepOp::IntChoice,
                        2 => RepOp::Interleave,
                        3 => RepOp::Parallel(b(alpha)),
                        _ => RepOp::AlphaParallel(b(alpha)),
                    };
                    mk(ExprKind::Replicated(
                        op,
                        vec![Stmt::Generator(pat, src)],
                        b(body),
                    ))
                }),
            (inner.clone(), pattern(), inner.clone(), inner.clone()).prop_map(
                |(e, pat, src, q)| {
                    mk(ExprKind::SetComp(
                        vec![e],
                        vec![Stmt::Generator(pat, src), Stmt::Qualifier(q)],
                    ))
                }
            ),
            (prop::collection::vec(pattern(), 1..3), inner.clone()).prop_map(|(params, body)| {
                mk(ExprKind::Lambda(Arc::new(LambdaExpr { params, body })))
            }),
            (name(), inner.clone(), inner.clone()).prop_map(|(v, e, body)| {
                let decl = Decl {
                    kind: DeclKind::PatBind(pvar(v), e),
                    span: Span::default(),
                };
                mk(ExprKind::Let(Arc::new(LetExpr {
                    decls: vec![decl],
                    body,
                })))
            }),
        ]
    })
}

/// Tokens of the language (and some outside the subset) for random token soup.
const TOKENS: &[&str] = &[
    "channel",
    "datatype",
    "nametype",
    "assert",
    "let",
    "within",
    "if",
    "then",
    "else",
    "not",
    "and",
    "or",
    "true",
    "false",
    "STOP",
    "SKIP",
    "P",
    "Q",
    "c",
    "x",
    "0",
    "1",
    "2",
    "(",
    ")",
    "{",
    "}",
    "{|",
    "|}",
    "<",
    ">",
    "<>",
    "[",
    "]",
    "[[",
    "]]",
    "[|",
    "|]",
    "[]",
    "|~|",
    "|||",
    "||",
    "->",
    "?",
    "!",
    ".",
    "..",
    ",",
    ":",
    "=",
    "==",
    "@",
    "\\",
    "&",
    ";",
    "/\\",
    "[>",
    "<-",
    "<->",
    "|",
    "#",
    "^",
    "+",
    "-",
    "*",
    "/",
    "%",
    "[T=",
    "[FD=",
    ":[deadlock free]",
    ":[divergence free]",
    "_",
    "\n",
    "\n",
    "--c\n",
    "{- x -}",
    "$",
    "::",
    "include",
    "\"f\"",
    "Events",
    "union",
    "card",
    "RUN",
    "CHAOS",
    "transparent",
    "normal",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_gives_the_same_ast(e in expr()) {
        let text = expr_to_string(&e);
        match parse_expression(&text) {
            Ok((_, parsed)) => prop_assert_eq!(sexpr(&parsed), sexpr(&e), "text: {}", text),
            Err(err) => prop_assert!(false, "printed text does not parse: {}\n{}", text, err),
        }
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..40)) {
        let text = toks.join(" ");
        let _ = parse_str("soup.csp", &text, Path::new("/nonexistent"));
        let _ = load_str("soup.csp", &text, Path::new("/nonexistent"));
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = parse_str("bytes.csp", &text, Path::new("/nonexistent"));
        let _ = load_str("bytes.csp", &text, Path::new("/nonexistent"));
    }
}

// Definitions that parse: random expressions as right-hand sides evaluate without panics.
proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn evaluating_random_definitions_never_panics(e in expr()) {
        let text = format!(
            "channel c : {{0..2}}\nchannel a, b\nx = 1\ny = 2\nP = STOP\nQ = SKIP\nT = {}\nassert STOP [T= T\n",
            expr_to_string(&e)
        );
        let _ = load_str("eval.csp", &text, Path::new("/nonexistent"));
    }
}

#[test]
fn deeply_nested_input_parses_or_is_an_error_not_a_crash() {
    // No depth limit: only memory bounds nesting (issue 11).
    let deep = format!("x = {}1{}", "(".repeat(5000), ")".repeat(5000));
    let (_, decls) = parse_str("deep.csp", &deep, Path::new("/")).expect("deep brackets");
    assert!(matches!(decls[0].kind, DeclKind::PatBind(..)));
    // An unclosed deep sequence is a recorded error, not a crash.
    let deep_seq = format!("x = {}", "<".repeat(3000));
    let (_, decls) = parse_str("deep.csp", &deep_seq, Path::new("/")).expect("recovers");
    assert!(matches!(decls[0].kind, DeclKind::Invalid(_)));
    let deep_prefix = format!("channel a\nP = {}STOP", "a -> ".repeat(3000));
    let _ = load_str("deep.csp", &deep_prefix, Path::new("/"));
}
