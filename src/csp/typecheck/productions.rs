//! The type of a productions set `{| e |}`: events, or values of one datatype.

use super::types::Ty;
use super::{CResult, Checker};
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
}
