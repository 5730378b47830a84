//! Patterns: expressions parsed where a pattern is expected, converted to [`Pattern`]s.

use super::*;

/// Converts an expression parsed where a pattern is expected.
pub(crate) fn to_pattern(e: &Expr) -> PResult<Pattern> {
    stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || to_pattern_here(e))
}

pub(super) fn to_pattern_here(e: &Expr) -> PResult<Pattern> {
    let kind = match &e.kind {
        ExprKind::Var(n) => PatKind::Var(n.clone()),
        ExprKind::Wildcard => PatKind::Wildcard,
        ExprKind::Int(v) => PatKind::Int(*v),
        ExprKind::Bool(b) => PatKind::Bool(*b),
        ExprKind::Char(c) => PatKind::Char(*c),
        ExprKind::Str(text) => PatKind::Seq(
            text.chars()
                .map(|c| Pattern {
                    kind: PatKind::Char(c),
                    span: e.span,
                })
                .collect(),
        ),
        ExprKind::Unary(UnOp::Neg, inner) => match inner.kind {
            ExprKind::Int(v) => PatKind::Int(-v),
            _ => {
                return Err(RawError::new(
                    e.span,
                    ErrorKind::Syntax,
                    "only integer literals can be negated in a pattern",
                ))
            }
        },
        ExprKind::Tuple(items) => {
            PatKind::Tuple(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        ExprKind::Dot(a, b) => {
            let mut parts = Vec::new();
            for side in [a, b] {
                let p = to_pattern(side)?;
                match p.kind {
                    PatKind::Dot(ps) => parts.extend(ps),
                    _ => parts.push(p),
                }
            }
            PatKind::Dot(parts)
        }
        ExprKind::SeqLit(items) => {
            PatKind::Seq(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        ExprKind::Binary(BinOp::Concat, a, b) => {
            PatKind::Concat(Box::new(to_pattern(a)?), Box::new(to_pattern(b)?))
        }
        ExprKind::Binary(BinOp::Both, a, b) => {
            PatKind::Both(Box::new(to_pattern(a)?), Box::new(to_pattern(b)?))
        }
        ExprKind::SetLit(items) if items.len() <= 1 => {
            PatKind::Set(items.iter().map(to_pattern).collect::<PResult<_>>()?)
        }
        _ => return Err(RawError::new(
            e.span,
            ErrorKind::Syntax,
            "expected a pattern (a name, `_`, a literal, a tuple, a dotted value or a sequence)",
        )),
    };
    Ok(Pattern { kind, span: e.span })
}
