//! A static check FDR's type checker makes on prefixes: a prefix cannot give a channel more
//! fields than the channel's type has (`c?x?y` over `channel c : Int`). It is made only where
//! every field of the channel's type holds single atoms (integers, booleans, characters,
//! tuples, sequences, sets, constructors without fields), so that each field of the prefix
//! takes at least one of the channel's fields; other channels are left to evaluation.

use super::*;

/// How deep `nametype` names are followed.
const MAX_NAMETYPE_DEPTH: u32 = 8;

/// The components of a dotted expression `a.b.c`, in order.
fn dot_parts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Dot(a, b) => {
            let mut parts = dot_parts(a);
            parts.extend(dot_parts(b));
            parts
        }
        _ => vec![e],
    }
}

impl Resolver<'_> {
    /// Fails when the prefix gives its channel more fields than the channel has.
    pub(super) fn check_prefix_field_count(&self, pre: &PrefixExpr, span: Span) -> CResult<()> {
        let parts = dot_parts(&pre.event);
        let ExprKind::Var(name) = &parts[0].kind else {
            return Ok(());
        };
        if self.lookup_local(name).is_some() {
            return Ok(());
        }
        let Some(GlobalKind::Chan(c)) = self.prog.globals.get(name) else {
            return Ok(());
        };
        let given = parts.len() - 1 + pre.fields.len();
        let fields = match &self.prog.channels[*c as usize].ty {
            None => Vec::new(),
            Some(ty) => dot_parts(ty),
        };
        if given <= fields.len() || !fields.iter().all(|f| self.is_atomic_type(f, 0)) {
            return Ok(());
        }
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        Err(RawError::new(
            span,
            ErrorKind::Arity,
            format!(
                "too many fields: the channel `{name}` has {} field{} but this prefix gives it \
                 {given}",
                fields.len(),
                plural(fields.len())
            ),
        ))
    }

    /// Whether every value of the type `e` is one atom (not a dotted value).
    fn is_atomic_type(&self, e: &Expr, depth: u32) -> bool {
        use ExprKind as K;
        let literal = |x: &Expr| match &x.kind {
            K::Int(_) | K::Bool(_) | K::Char(_) => true,
            K::Unary(UnOp::Neg, y) => matches!(y.kind, K::Int(_)),
            _ => false,
        };
        match &e.kind {
            K::SetRange(..) | K::SetFrom(_) | K::Tuple(_) => true,
            K::SetLit(items) => items.iter().all(literal),
            K::App(f, _) => matches!(&f.kind, K::Var(n) if matches!(&**n, "Seq" | "Set")
                && self.lookup_local(n).is_none()
                && matches!(self.prog.globals.get(n), Some(GlobalKind::Builtin(_)))),
            K::Var(n) if self.lookup_local(n).is_none() => match self.prog.globals.get(n) {
                Some(GlobalKind::Int | GlobalKind::Bool | GlobalKind::Char) => true,
                Some(GlobalKind::DataType(d)) => self.prog.datatypes[*d as usize]
                    .ctors
                    .iter()
                    .all(|k| self.prog.ctors[*k as usize].fields.is_none()),
                Some(GlobalKind::NameType(t)) if depth < MAX_NAMETYPE_DEPTH => {
                    self.is_atomic_type(&self.prog.nametypes[*t as usize].expr, depth + 1)
                }
                _ => false,
            },
            _ => false,
        }
    }
}
