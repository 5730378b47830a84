//! The types of dotted values the checker knows: a productions set `{| e |}` (events, or
//! values of one datatype), and dot patterns whose first part is a variable.

use super::types::Ty;
use super::{CResult, Checker};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::resolve::GlobalKind;
use crate::csp::syntax::ast::*;

impl Checker<'_> {
    /// The type of the elements of `{| e1, e2, ... |}`: events where an `ei` starts with a
    /// channel, values of a datatype where it starts with one of its constructors (all the
    /// same, or a type error at the first that differs); otherwise unknown.
    pub(super) fn productions_type(&mut self, es: &[Expr]) -> CResult<Ty> {
        let mut elem: Option<Ty> = None;
        for x in es {
            let mut head = x;
            while let ExprKind::Dot(a, _) = &head.kind {
                head = a;
            }
            let ExprKind::Var(n) = &head.kind else {
                return Ok(Ty::Any);
            };
            if self.scope.iter().any(|(m, _)| m == n) {
                return Ok(Ty::Any);
            }
            let t = match self.prog.globals.get(n) {
                Some(GlobalKind::Chan(_)) => Ty::Event,
                Some(GlobalKind::Ctor(k)) => {
                    let d = self.prog.ctors[*k as usize].datatype;
                    Ty::Data(d, self.prog.datatypes[d as usize].name.clone())
                }
                _ => return Ok(Ty::Any),
            };
            match &elem {
                Some(e) => self.expect(e, &t, x.span)?,
                None => elem = Some(t),
            }
        }
        Ok(elem.unwrap_or(Ty::Any))
    }

    /// The type of the dot pattern `p` (parts `ps`): unknown, but recorded when its first
    /// part is a variable or `_`, which cannot take the constructor of a datatype's value or
    /// the channel of an event ([`Checker::check_dot_heads`]).
    pub(super) fn dot_pattern_type(&mut self, p: &Pattern, ps: &[Pattern]) -> Ty {
        let head_binds = match ps.first().map(|q| &q.kind) {
            Some(PatKind::Wildcard) => true,
            Some(PatKind::Var(n)) => !matches!(
                self.prog.globals.get(n),
                Some(
                    GlobalKind::Chan(_)
                        | GlobalKind::Ctor(_)
                        | GlobalKind::True
                        | GlobalKind::False
                )
            ),
            _ => false,
        };
        if !head_binds {
            return Ty::Any;
        }
        let t = self.vars.fresh();
        self.dot_heads.push((p.span, t.clone()));
        t
    }

    /// A dot pattern `x.y` or `_.y` matched against values of a datatype or events: FDR's
    /// type checker cannot split such a value with a variable in the place of its
    /// constructor or channel, and rejects the pattern.
    pub(super) fn check_dot_heads(&mut self) -> CResult<()> {
        for (span, t) in std::mem::take(&mut self.dot_heads) {
            let what = match self.vars.resolve(&t) {
                Ty::Data(_, name) => format!("values of the datatype `{name}`"),
                Ty::Event => "events".to_string(),
                _ => continue,
            };
            return Err(RawError::new(
                span,
                ErrorKind::Type,
                format!(
                    "this dot pattern matches {what}, whose first part is a constructor or \
                     channel: it must be named, not matched by a variable or `_`"
                ),
            ));
        }
        Ok(())
    }
}
