//! A canonical, fully parenthesised form of an expression's shape (no spans or ids), used by
//! the tests to compare what the parser builds (`parse(print(e))` has `e`'s shape).

use std::fmt::Write;

use super::ast::*;
use super::parser::{RED_ZONE, STACK_PER_RECURSION};
use super::pretty::{decls_to_string, write_bare, write_pattern, write_patterns};

/// A canonical, fully parenthesised form of an expression's shape (no spans or ids): two
/// expressions have the same shape iff their forms are equal.
pub fn sexpr(e: &Expr) -> String {
    let mut s = String::new();
    sx(&mut s, e);
    s
}

fn sx_all(s: &mut String, es: &[Expr]) {
    for e in es {
        s.push(' ');
        sx(s, e);
    }
}

fn sx_stmts(s: &mut String, stmts: &[Stmt]) {
    for st in stmts {
        match st {
            Stmt::Generator(p, e) => {
                s.push_str(" (gen ");
                write_pattern(s, p);
                s.push(' ');
                sx(s, e);
                s.push(')');
            }
            Stmt::Qualifier(e) => {
                s.push_str(" (if ");
                sx(s, e);
                s.push(')');
            }
        }
    }
}

fn sx(s: &mut String, e: &Expr) {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || sx_here(s, e))
}

fn sx_here(s: &mut String, e: &Expr) {
    use ExprKind::*;
    match &e.kind {
        Int(i) => {
            let _ = write!(s, "{i}");
        }
        Bool(b) => {
            let _ = write!(s, "{b}");
        }
        Var(n) => s.push_str(n),
        Wildcard => s.push('_'),
        _ => {
            s.push('(');
            match &e.kind {
                Tuple(es) => {
                    s.push_str("tuple");
                    sx_all(s, es);
                }
                Dot(a, b) => {
                    s.push_str("dot");
                    sx_all(s, &[(**a).clone(), (**b).clone()]);
                }
                App(f, args) => {
                    s.push_str("app ");
                    sx(s, f);
                    sx_all(s, args);
                }
                Binary(op, a, b) => {
                    s.push_str(op.text());
                    sx_all(s, &[(**a).clone(), (**b).clone()]);
                }
                Unary(op, a) => {
                    let _ = write!(s, "{op:?} ");
                    sx(s, a);
                }
                If(c, t, f) => {
                    s.push_str("if");
                    sx_all(s, &[(**c).clone(), (**t).clone(), (**f).clone()]);
                }
                Let(l) => {
                    s.push_str("let [");
                    s.push_str(&decls_to_string(&l.decls));
                    s.push(']');
                    s.push(' ');
                    sx(s, &l.body);
                }
                Lambda(l) => {
                    s.push_str("lambda [");
                    write_patterns(s, &l.params);
                    s.push_str("] ");
                    sx(s, &l.body);
                }
                SeqLit(es) => {
                    s.push_str("seq");
                    sx_all(s, es);
                }
                SeqComp(es, st) => {
                    s.push_str("seqcomp");
                    sx_all(s, es);
                    sx_stmts(s, st);
                }
                SeqRange(a, b) => {
                    s.push_str("seqrange");
                    sx_all(s, &[(**a).clone(), (**b).clone()]);
                }
                SetLit(es) => {
                    s.push_str("set");
                    sx_all(s, es);
                }
                Char(_) | Str(_) => write_bare(s, e),
                Map(pairs) => {
                    s.push_str("map");
                    let flat: Vec<Expr> = pairs
                        .iter()
                        .flat_map(|(k, v)| [k.clone(), v.clone()])
                        .collect();
                    sx_all(s, &flat);
                }
                SetFrom(a) => {
                    s.push_str("setfrom");
                    sx_all(s, &[(**a).clone()]);
                }
                SeqFrom(a) => {
                    s.push_str("seqfrom");
                    sx_all(s, &[(**a).clone()]);
                }
                RangeComp(r, st) => {
                    s.push_str("rangecomp");
                    sx_all(s, &[(**r).clone()]);
                    sx_stmts(s, st);
                }
                SetComp(es, st) => {
                    s.push_str("setcomp");
                    sx_all(s, es);
                    sx_stmts(s, st);
                }
                SetRange(a, b) => {
                    s.push_str("setrange");
                    sx_all(s, &[(**a).clone(), (**b).clone()]);
                }
                Productions(es) => {
                    s.push_str("prods");
                    sx_all(s, es);
                }
                ProductionsComp(es, st) => {
                    s.push_str("prodscomp");
                    sx_all(s, es);
                    sx_stmts(s, st);
                }
                Prefix(p) => {
                    s.push_str("prefix ");
                    sx(s, &p.event);
                    for f in &p.fields {
                        match f {
                            Field::Output(x) => {
                                s.push_str(" (! ");
                                sx(s, x);
                                s.push(')');
                            }
                            Field::Input(pat, r) | Field::NondetInput(pat, r) => {
                                s.push_str(if matches!(f, Field::Input(..)) {
                                    " (? "
                                } else {
                                    " ($ "
                                });
                                write_pattern(s, pat);
                                if let Some(r) = r {
                                    s.push(' ');
                                    sx(s, r);
                                }
                                s.push(')');
                            }
                        }
                    }
                    s.push(' ');
                    sx(s, &p.body);
                }
                Guard(b, p) => {
                    s.push('&');
                    sx_all(s, &[(**b).clone(), (**p).clone()]);
                }
                Proc(op, a, b) => {
                    s.push_str(op.text());
                    sx_all(s, &[(**a).clone(), (**b).clone()]);
                }
                Hide(p, a) => {
                    s.push('\\');
                    sx_all(s, &[(**p).clone(), (**a).clone()]);
                }
                Project(p, a) => {
                    s.push_str("project");
                    sx_all(s, &[(**p).clone(), (**a).clone()]);
                }
                SetProc(op, p, a, q) => {
                    let (open, close) = op.brackets();
                    let _ = write!(s, "{open}{close}");
                    sx_all(s, &[(**p).clone(), (**a).clone(), (**q).clone()]);
                }
                Parallel(p, a, q) => {
                    s.push_str("par");
                    sx_all(s, &[(**p).clone(), (**a).clone(), (**q).clone()]);
                }
                AlphaParallel(p, a, b, q) => {
                    s.push_str("apar");
                    sx_all(
                        s,
                        &[(**p).clone(), (**a).clone(), (**b).clone(), (**q).clone()],
                    );
                }
                Link(p, pairs, st, q) => {
                    s.push_str("link ");
                    sx(s, p);
                    for (a, b) in pairs {
                        s.push_str(" (");
                        sx(s, a);
                        s.push(' ');
                        sx(s, b);
                        s.push(')');
                    }
                    sx_stmts(s, st);
                    s.push(' ');
                    sx(s, q);
                }
                Rename(p, pairs, st) => {
                    s.push_str("rename ");
                    sx(s, p);
                    for (a, b) in pairs {
                        s.push_str(" (");
                        sx(s, a);
                        s.push(' ');
                        sx(s, b);
                        s.push(')');
                    }
                    sx_stmts(s, st);
                }
                Replicated(op, st, body) => {
                    match op {
                        RepOp::ExtChoice => s.push_str("rep[]"),
                        RepOp::IntChoice => s.push_str("rep|~|"),
                        RepOp::Interleave => s.push_str("rep|||"),
                        RepOp::Seq => s.push_str("rep;"),
                        RepOp::Parallel(a) => {
                            s.push_str("rep[||] ");
                            sx(s, a);
                        }
                        RepOp::AlphaParallel(a) => {
                            s.push_str("rep|| ");
                            sx(s, a);
                        }
                        RepOp::SyncExtChoice(a) => {
                            s.push_str("rep[++] ");
                            sx(s, a);
                        }
                        RepOp::Link(pairs, st) => {
                            s.push_str("replink");
                            for (a, b) in pairs {
                                s.push_str(" (");
                                sx(s, a);
                                s.push(' ');
                                sx(s, b);
                                s.push(')');
                            }
                            sx_stmts(s, st);
                        }
                    }
                    sx_stmts(s, st);
                    s.push(' ');
                    sx(s, body);
                }
                TimedHeader(tock, et) => {
                    s.push_str("timed-header ");
                    sx(s, tock);
                    if let Some(et) = et {
                        s.push(' ');
                        sx(s, et);
                    }
                }
                Timed(t) => {
                    s.push_str("timed ");
                    sx(s, &t.section);
                    match &t.form {
                        TimedForm::Stop => s.push_str(" STOP"),
                        TimedForm::Skip => s.push_str(" SKIP"),
                        TimedForm::Wait(x) => {
                            s.push_str(" WAIT ");
                            sx(s, x);
                        }
                        TimedForm::Priority(x) => {
                            s.push_str(" timed_priority ");
                            sx(s, x);
                        }
                        TimedForm::Prefix(x) | TimedForm::Operator(x) => {
                            s.push(' ');
                            sx(s, x);
                        }
                    }
                }
                Int(_) | Bool(_) | Var(_) | Wildcard => {}
            }
            s.push(')');
        }
    }
}
