//! Pretty-printing of the AST back to CSPm text (the canonical S-expression form of an
//! expression's shape is in [`shape`](super::shape), re-exported here).
//!
//! The printer inserts the parentheses the precedence rules of [`parser`](super::parser)
//! require and no others, so `parse(print(e))` has the same shape as `e` (checked by the
//! property tests in `tests/csp_props.rs`).
//!
//! The recursive walks grow the stack on demand ([`stacker`]), so any tree the parser builds
//! prints, however deep.

use std::fmt::Write;

use super::ast::*;
use super::parser::{RED_ZONE, STACK_PER_RECURSION};
use super::precedence::{
    expr_level, L_ADD, L_AND, L_APP, L_BOTH, L_CAT, L_CMP, L_DOT, L_FIELD, L_HIDE, L_INTCHOICE,
    L_INTERLEAVE, L_MUL, L_OR, L_PAR, L_PREFIX,
};
pub use super::shape::sexpr;

/// CSPm text of an expression.
pub fn expr_to_string(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, 0);
    s
}

/// CSPm text of declarations, one per line.
pub fn decls_to_string(decls: &[Decl]) -> String {
    let mut s = String::new();
    for d in decls {
        write_decl(&mut s, d);
        s.push('\n');
    }
    s
}

fn write_list(s: &mut String, es: &[Expr]) {
    write_list_above(s, es, 0);
}

/// Writes the elements of a sequence literal: a comparison `>` at the top of an element would
/// close the sequence, so elements binding more loosely than the operators are parenthesised.
fn write_seq_items(s: &mut String, es: &[Expr]) {
    write_list_above(s, es, 1);
}

fn write_list_above(s: &mut String, es: &[Expr], min: u8) {
    for (i, e) in es.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_expr(s, e, min);
    }
}

fn write_stmts(s: &mut String, stmts: &[Stmt]) {
    for (i, st) in stmts.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match st {
            Stmt::Generator(p, e) => {
                write_pattern(s, p);
                s.push_str(" <- ");
                write_expr(s, e, 1);
            }
            Stmt::Qualifier(e) => write_expr(s, e, 1),
        }
    }
}

fn write_pairs(s: &mut String, pairs: &[(Expr, Expr)], sep: &str, stmts: &[Stmt]) {
    for (i, (a, b)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_expr(s, a, 1);
        s.push_str(sep);
        write_expr(s, b, 1);
    }
    if !stmts.is_empty() {
        s.push_str(" | ");
        write_stmts(s, stmts);
    }
}

/// Writes `e`, parenthesised if its top operator binds more loosely than `min`.
fn write_expr(s: &mut String, e: &Expr, min: u8) {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || write_expr_here(s, e, min))
}

fn write_expr_here(s: &mut String, e: &Expr, min: u8) {
    let level = match &e.kind {
        // `>` would close an enclosing sequence: always parenthesise it
        ExprKind::Binary(BinOp::Gt, ..) => 0,
        _ => expr_level(e),
    };
    if level < min {
        s.push('(');
        write_bare(s, e);
        s.push(')');
    } else {
        write_bare(s, e);
    }
}

pub(super) fn write_bare(s: &mut String, e: &Expr) {
    use ExprKind::*;
    match &e.kind {
        Int(i) => {
            let _ = write!(s, "{i}");
        }
        Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Char(c) => {
            let _ = write!(s, "'{}'", c.escape_default());
        }
        Str(text) => {
            let _ = write!(s, "\"{}\"", text.escape_default());
        }
        Map(pairs) => {
            s.push_str("(|");
            for (i, (k, v)) in pairs.iter().enumerate() {
                s.push_str(if i > 0 { ", " } else { " " });
                write_expr(s, k, 0);
                s.push_str(" => ");
                write_expr(s, v, 0);
            }
            s.push_str(" |)");
        }
        Var(n) => s.push_str(n),
        Wildcard => s.push('_'),
        Tuple(es) => {
            s.push('(');
            write_list(s, es);
            s.push(')');
        }
        Dot(a, b) => {
            write_expr(s, a, L_DOT + 1);
            s.push('.');
            write_expr(s, b, L_DOT);
        }
        App(f, args) => {
            write_expr(s, f, L_APP + 1);
            s.push('(');
            write_list(s, args);
            s.push(')');
        }
        // the lowering's nodes, as written
        TimedHeader(_, et) => {
            s.push_str("Timed(");
            if let Some(et) = et {
                write_expr(s, et, 0);
            }
            s.push(')');
        }
        Timed(t) => match &t.form {
            TimedForm::Stop => s.push_str("STOP"),
            TimedForm::Skip => s.push_str("SKIP"),
            TimedForm::Wait(n) | TimedForm::Priority(n) => {
                let f = if matches!(t.form, TimedForm::Wait(_)) {
                    "WAIT"
                } else {
                    "timed_priority"
                };
                let _ = write!(s, "{f}(");
                write_expr(s, n, 0);
                s.push(')');
            }
            TimedForm::Prefix(x) | TimedForm::Operator(x) => write_bare(s, x),
        },
        Binary(op, a, b) => {
            let l = match op {
                BinOp::Or => L_OR,
                BinOp::And => L_AND,
                BinOp::Add | BinOp::Sub => L_ADD,
                BinOp::Mul | BinOp::Div | BinOp::Mod => L_MUL,
                BinOp::Concat => L_CAT,
                BinOp::Both => L_BOTH,
                _ => L_CMP,
            };
            let left_min = if l == L_CMP { l + 1 } else { l };
            write_expr(s, a, left_min);
            let _ = write!(s, " {} ", op.text());
            write_expr(s, b, l + 1);
        }
        Unary(op, a) => match op {
            UnOp::Neg => {
                s.push('-');
                write_expr(s, a, L_MUL);
            }
            UnOp::Not => {
                s.push_str("not ");
                write_expr(s, a, L_CMP);
            }
            UnOp::Len => {
                s.push('#');
                write_expr(s, a, L_CAT);
            }
        },
        If(c, t, f) => {
            s.push_str("if ");
            write_expr(s, c, 0);
            s.push_str(" then ");
            write_expr(s, t, 0);
            s.push_str(" else ");
            write_expr(s, f, 0);
        }
        Let(l) => {
            s.push_str("let\n");
            for d in &l.decls {
                s.push_str("  ");
                write_decl(s, d);
                s.push('\n');
            }
            s.push_str("within ");
            write_expr(s, &l.body, 0);
        }
        Lambda(l) => {
            s.push_str("\\ ");
            for (i, p) in l.params.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_pattern(s, p);
            }
            s.push_str(" @ ");
            write_expr(s, &l.body, 0);
        }
        SeqLit(es) if es.is_empty() => s.push_str("<>"),
        SeqLit(es) => {
            s.push_str("< ");
            write_seq_items(s, es);
            s.push_str(" >");
        }
        SeqComp(es, stmts) => {
            s.push_str("< ");
            write_seq_items(s, es);
            s.push_str(" | ");
            write_stmts(s, stmts);
            s.push_str(" >");
        }
        SeqRange(a, b) => {
            s.push_str("< ");
            write_expr(s, a, 1);
            s.push_str("..");
            write_expr(s, b, 1);
            s.push_str(" >");
        }
        SetFrom(a) => {
            s.push_str("{ ");
            write_expr(s, a, 1);
            s.push_str(".. }");
        }
        SeqFrom(a) => {
            s.push_str("< ");
            write_expr(s, a, 1);
            s.push_str(".. >");
        }
        RangeComp(r, stmts) => {
            let set = matches!(r.kind, SetRange(..) | SetFrom(_));
            s.push_str(if set { "{ " } else { "< " });
            match &r.kind {
                SetRange(a, b) | SeqRange(a, b) => {
                    write_expr(s, a, 1);
                    s.push_str("..");
                    write_expr(s, b, 1);
                }
                SetFrom(a) | SeqFrom(a) => {
                    write_expr(s, a, 1);
                    s.push_str("..");
                }
                _ => write_expr(s, r, 0),
            }
            s.push_str(" | ");
            write_stmts(s, stmts);
            s.push_str(if set { " }" } else { " >" });
        }
        SetLit(es) if es.is_empty() => s.push_str("{}"),
        SetLit(es) => {
            s.push_str("{ ");
            write_list(s, es);
            s.push_str(" }");
        }
        SetComp(es, stmts) => {
            s.push_str("{ ");
            write_list(s, es);
            s.push_str(" | ");
            write_stmts(s, stmts);
            s.push_str(" }");
        }
        SetRange(a, b) => {
            s.push_str("{ ");
            write_expr(s, a, 1);
            s.push_str("..");
            write_expr(s, b, 1);
            s.push_str(" }");
        }
        Productions(es) => {
            s.push_str("{| ");
            write_list(s, es);
            s.push_str(" |}");
        }
        ProductionsComp(es, stmts) => {
            s.push_str("{| ");
            write_list(s, es);
            s.push_str(" | ");
            write_stmts(s, stmts);
            s.push_str(" |}");
        }
        Prefix(p) => {
            write_expr(s, &p.event, L_DOT);
            for f in &p.fields {
                match f {
                    Field::Output(x) => {
                        s.push('!');
                        write_expr(s, x, L_DOT);
                    }
                    Field::Input(pat, r) | Field::NondetInput(pat, r) => {
                        s.push(if matches!(f, Field::Input(..)) {
                            '?'
                        } else {
                            '$'
                        });
                        write_pattern(s, pat);
                        if let Some(r) = r {
                            s.push(':');
                            write_expr(s, r, L_OR);
                        }
                    }
                }
            }
            s.push_str(" -> ");
            write_expr(s, &p.body, L_PREFIX);
        }
        Guard(b, p) => {
            write_expr(s, b, L_FIELD);
            s.push_str(" & ");
            write_expr(s, p, L_PREFIX);
        }
        Proc(op, a, b) => {
            let l = expr_level(e);
            write_expr(s, a, l);
            let _ = write!(s, " {} ", op.text());
            write_expr(s, b, l + 1);
        }
        Hide(p, a) => {
            write_expr(s, p, L_HIDE);
            s.push_str(" \\ ");
            // The set operand ends at the next process operator (see the parser).
            write_expr(s, a, L_FIELD);
        }
        Project(p, a) => {
            write_expr(s, p, L_HIDE);
            s.push_str(" |\\ ");
            write_expr(s, a, L_FIELD);
        }
        SetProc(op, p, a, q) => {
            let l = expr_level(e);
            let (open, close) = op.brackets();
            // The exception does not associate (as the parallels).
            let left = if *op == SetProcOp::Exception {
                l + 1
            } else {
                l
            };
            write_expr(s, p, left);
            let _ = write!(s, " {open} ");
            write_expr(s, a, 0);
            let _ = write!(s, " {close} ");
            write_expr(s, q, l + 1);
        }
        Parallel(p, a, q) => {
            write_expr(s, p, L_PAR + 1);
            s.push_str(" [| ");
            write_expr(s, a, 0);
            s.push_str(" |] ");
            write_expr(s, q, L_PAR + 1);
        }
        AlphaParallel(p, a, b, q) => {
            write_expr(s, p, L_PAR + 1);
            // The space keeps a set that starts with `[` from lexing as `[[`.
            s.push_str(" [ ");
            write_expr(s, a, 0);
            s.push_str(" || ");
            write_expr(s, b, 0);
            s.push_str("] ");
            write_expr(s, q, L_PAR + 1);
        }
        Link(p, pairs, stmts, q) => {
            write_expr(s, p, L_PAR + 1);
            s.push_str(" [");
            write_pairs(s, pairs, " <-> ", stmts);
            s.push_str("] ");
            write_expr(s, q, L_PAR + 1);
        }
        Rename(p, pairs, stmts) => {
            write_expr(s, p, L_APP);
            s.push_str(" [[");
            write_pairs(s, pairs, " <- ", stmts);
            s.push_str("]]");
        }
        Replicated(op, stmts, body) => {
            match op {
                RepOp::ExtChoice => s.push_str("[] "),
                RepOp::IntChoice => s.push_str("|~| "),
                RepOp::Interleave => s.push_str("||| "),
                RepOp::Seq => s.push_str("; "),
                RepOp::Parallel(a) => {
                    s.push_str("[| ");
                    write_expr(s, a, 0);
                    s.push_str(" |] ");
                }
                RepOp::AlphaParallel(_) => s.push_str("|| "),
                RepOp::SyncExtChoice(a) => {
                    s.push_str("[+ ");
                    write_expr(s, a, 0);
                    s.push_str(" +] ");
                }
                RepOp::Link(pairs, stmts) => {
                    s.push('[');
                    write_pairs(s, pairs, " <-> ", stmts);
                    s.push_str("] ");
                }
            }
            write_stmts(s, stmts);
            s.push_str(" @ ");
            if let RepOp::AlphaParallel(a) = op {
                s.push_str("[ ");
                write_expr(s, a, 0);
                s.push_str("] ");
            }
            write_expr(s, body, 0);
        }
    }
    let _ = (L_INTERLEAVE, L_INTCHOICE);
}

pub(super) fn write_pattern(s: &mut String, p: &Pattern) {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || write_pattern_here(s, p))
}

fn write_pattern_here(s: &mut String, p: &Pattern) {
    match &p.kind {
        PatKind::Var(n) => s.push_str(n),
        PatKind::Wildcard => s.push('_'),
        PatKind::Int(i) => {
            let _ = write!(s, "{i}");
        }
        PatKind::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        PatKind::Char(c) => {
            let _ = write!(s, "'{}'", c.escape_default());
        }
        PatKind::Tuple(ps) => {
            s.push('(');
            write_patterns(s, ps);
            s.push(')');
        }
        PatKind::Dot(ps) => {
            for (i, q) in ps.iter().enumerate() {
                if i > 0 {
                    s.push('.');
                }
                let wrap = matches!(
                    q.kind,
                    PatKind::Dot(_) | PatKind::Concat(..) | PatKind::Both(..)
                );
                if wrap {
                    s.push('(');
                }
                write_pattern(s, q);
                if wrap {
                    s.push(')');
                }
            }
        }
        PatKind::Seq(ps) if ps.is_empty() => s.push_str("<>"),
        PatKind::Seq(ps) => {
            s.push_str("< ");
            write_patterns(s, ps);
            s.push_str(" >");
        }
        PatKind::Concat(a, b) => {
            write_pattern(s, a);
            s.push_str(" ^ ");
            write_pattern(s, b);
        }
        PatKind::Both(a, b) => {
            for (q, sep) in [(a, ""), (b, " @@ ")] {
                s.push_str(sep);
                let wrap = matches!(
                    q.kind,
                    PatKind::Dot(_) | PatKind::Concat(..) | PatKind::Both(..)
                );
                if wrap {
                    s.push('(');
                }
                write_pattern(s, q);
                if wrap {
                    s.push(')');
                }
            }
        }
        PatKind::Set(ps) => {
            s.push_str("{ ");
            write_patterns(s, ps);
            s.push_str(" }");
        }
    }
}

pub(super) fn write_patterns(s: &mut String, ps: &[Pattern]) {
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_pattern(s, p);
    }
}

fn write_names(s: &mut String, names: &[Ident]) {
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&n.name);
    }
}

fn write_decl(s: &mut String, d: &Decl) {
    match &d.kind {
        DeclKind::Channel(names, ty) => {
            s.push_str("channel ");
            write_names(s, names);
            if let Some(t) = ty {
                s.push_str(" : ");
                write_expr(s, t, 0);
            }
        }
        DeclKind::DataType(name, clauses) => {
            let _ = write!(s, "datatype {} = ", name.name);
            for (i, c) in clauses.iter().enumerate() {
                if i > 0 {
                    s.push_str(" | ");
                }
                s.push_str(&c.name.name);
                if let Some(f) = &c.fields {
                    s.push('.');
                    write_expr(s, f, L_DOT);
                }
            }
        }
        DeclKind::NameType(name, e) => {
            let _ = write!(s, "nametype {} = ", name.name);
            write_expr(s, e, 0);
        }
        DeclKind::Function(name, clauses) => {
            for (i, c) in clauses.iter().enumerate() {
                if i > 0 {
                    s.push('\n');
                }
                s.push_str(&name.name);
                for g in &c.groups {
                    s.push('(');
                    write_patterns(s, g);
                    s.push(')');
                }
                s.push_str(" = ");
                write_expr(s, &c.body, 0);
            }
        }
        DeclKind::PatBind(p, e) => {
            write_pattern(s, p);
            s.push_str(" = ");
            write_expr(s, e, 0);
        }
        DeclKind::Assert(a) => {
            s.push_str("assert ");
            if a.negated {
                s.push_str("not ");
            }
            match &a.kind {
                AssertionKind::Refinement { spec, model, imp } => {
                    write_expr(s, spec, 0);
                    let _ = write!(s, " [{}= ", model.letters());
                    write_expr(s, imp, 0);
                }
                AssertionKind::Property { process, property } => {
                    write_expr(s, process, 0);
                    match property {
                        Property::DeadlockFree(m) => {
                            let _ = write!(s, " :[deadlock free [{}]]", m.letters());
                        }
                        Property::DivergenceFree => s.push_str(" :[divergence free]"),
                        Property::Deterministic(m) => {
                            let _ = write!(s, " :[deterministic [{}]]", m.letters());
                        }
                        Property::HasTrace(m, t) => {
                            let _ = write!(s, " :[has trace [{}]]: ", m.letters());
                            write_expr(s, t, 0);
                        }
                    }
                }
            }
            if let Some(set) = &a.tau_priority {
                s.push_str(" :[tau priority over]: ");
                write_expr(s, set, 0);
            }
        }
        DeclKind::Transparent(names) => {
            s.push_str("transparent ");
            write_names(s, names);
        }
        DeclKind::External(names) => {
            s.push_str("external ");
            write_names(s, names);
        }
        DeclKind::Timed(t) => {
            s.push_str("Timed");
            if let Some(et) = &t.et {
                s.push('(');
                write_expr(s, et, 0);
                s.push(')');
            }
            s.push_str(" {\n");
            for d in &t.decls {
                let text = decls_to_string(std::slice::from_ref(d));
                for line in text.lines() {
                    let _ = writeln!(s, "    {line}");
                }
            }
            s.push('}');
        }
        DeclKind::Module(m) => {
            let _ = write!(s, "module {}", m.name.name);
            if let Some(params) = &m.params {
                s.push('(');
                write_names(s, params);
                s.push(')');
            }
            s.push('\n');
            for (part, decls) in [("", &m.private), ("exports\n", &m.exported)] {
                s.push_str(part);
                for line in decls_to_string(decls).lines() {
                    let _ = writeln!(s, "    {line}");
                }
            }
            s.push_str("endmodule");
        }
        DeclKind::Instance(name, module, args) => {
            let _ = write!(s, "instance {} = {}", name.name, module.name);
            if !args.is_empty() {
                s.push('(');
                write_list(s, args);
                s.push(')');
            }
        }
        DeclKind::Invalid(inv) => {
            s.push_str("-- not read: ");
            s.push_str(&inv.message.replace('\n', " "));
        }
    }
}
