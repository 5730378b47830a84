//! The types of dotted values headed by a channel or constructor (`c.1.true`, `B.0`), as far
//! as they are certain, and the refusal of `extensions` of a complete event.
//!
//! libcspm types a dotted value by the field types of its head and splits values that fill
//! several fields (a constructor with fields, a dotted value) by their types. The checker
//! follows it only where that split is certain: each value dotted is of a type whose values
//! are single fields (`Int`, `Bool`, a tuple, a set, ...) given to a field of such a type,
//! or of the datatype the field holds. Anything else (a variable of a type not yet known, a
//! constructor still waiting for its fields, more values than fields) leaves the whole
//! value of the type [`Ty::Any`], as before.

use super::toplevel::flatten_dots;
use super::types::Ty;
use super::{CResult, Checker};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::resolve::GlobalKind;
use crate::csp::syntax::ast::*;
use crate::csp::syntax::source::Span;
use crate::csp::value::Builtin;

impl Checker<'_> {
    /// The type of the dotted value `e` (an `ExprKind::Dot`); every part is typed.
    pub(super) fn dot_type(&mut self, e: &Expr) -> CResult<Ty> {
        let mut parts = Vec::new();
        flatten_dots(e, &mut parts);
        let mut types = Vec::with_capacity(parts.len());
        for p in &parts {
            types.push(self.expr(p)?);
        }
        if !self.names_channel_or_constructor(parts[0]) {
            return Ok(Ty::Any);
        }
        let mut t = types[0].clone();
        for (p, arg) in parts[1..].iter().zip(&types[1..]) {
            let Ty::Dotable(field, rest) = self.vars.resolve(&t) else {
                // more values than fields (an event dotted further is a value, unchecked)
                return Ok(Ty::Any);
            };
            let (f, a) = (self.vars.resolve(&field), self.vars.resolve(arg));
            match (&f, &a) {
                _ if self.single_field(&f) && self.single_field(&a) => {
                    self.expect(&field, arg, p.span)?
                }
                (Ty::Data(x, _), Ty::Data(y, _)) if x == y => {}
                _ => return Ok(Ty::Any),
            }
            t = (*rest).clone();
        }
        Ok(t)
    }

    /// Whether `e` is the name of a channel or constructor (not a local variable).
    fn names_channel_or_constructor(&self, e: &Expr) -> bool {
        let ExprKind::Var(n) = &e.kind else {
            return false;
        };
        // the table first: the scan of the local names is for the rare shadowing name
        matches!(
            self.prog.globals.get(n),
            Some(GlobalKind::Chan(_) | GlobalKind::Ctor(_))
        ) && !self.scope.iter().any(|(m, _)| m == n)
    }

    /// Refuses the event `ev -> P` of a prefix without fields when its type `t` is, as far as
    /// typed now, certainly not `Event` (`c.1 -> P` with `channel c : Int.Int`, or `x -> P`
    /// where `x` draws from `{c.1}`). A type not yet known is left as it is, not required to
    /// be `Event`: cspmf's t1.csp (which must load) gives `{enter.GateSeg}`, a set of
    /// partial events, to a parameter `C` used as `[] c : C @ c -> ...`, which FDR refuses
    /// and weft reports where that process runs.
    pub(super) fn check_certainly_event(&mut self, t: &Ty, span: Span) -> CResult<()> {
        match self.vars.resolve(t) {
            Ty::Var(_) | Ty::Rigid(_) | Ty::Any | Ty::Event => Ok(()),
            _ => self.expect(&Ty::Event, t, span).map_err(|mut e| {
                e.message = format!("not a complete event: {}", e.message);
                e
            }),
        }
    }

    /// Refuses `extensions(e)` where `e` is certainly a complete event (a channel without
    /// fields, or one given all of them): it has no fields left to extend it, which libcspm
    /// refuses statically (`extensions :: a =>* b -> {a}` needs at least one field in `a`).
    pub(super) fn check_extensions(&self, f: &Expr, args: &[Expr], targs: &[Ty]) -> CResult<()> {
        let ExprKind::Var(n) = &f.kind else {
            return Ok(());
        };
        // the table first: every application comes here, and the local names may be many
        let is_extensions = matches!(
            self.prog.globals.get(n),
            Some(GlobalKind::Builtin(Builtin::Extensions))
        ) && !self.scope.iter().any(|(m, _)| m == n);
        if !is_extensions || args.len() != 1 || targs.len() != 1 {
            return Ok(());
        }
        if self.vars.resolve(&targs[0]) == Ty::Event {
            return Err(RawError::new(
                args[0].span,
                ErrorKind::Type,
                "`extensions` of a complete event: an event has no fields left to extend it \
                 (`extensions` takes a channel or a prefix of an event that has fields left)",
            ));
        }
        Ok(())
    }
}
