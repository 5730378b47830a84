//! The types of dotted values (`c.1.true`, `B.0`, `1.2`, `true.B.0`), as far as they are
//! certain, libcspm's shortest-match rule, and the refusal of `extensions` of a complete
//! event.
//!
//! libcspm types a dotted value by the field types of its head and splits values that fill
//! several fields (a constructor with fields, a dotted value) by their types. The checker
//! follows it only where that split is certain: each value dotted is of a type whose values
//! are single fields (`Int`, `Bool`, a tuple, a set, ...) given to a field of such a type,
//! or of the datatype the field holds, or a constructor waiting for fields given to a field
//! of its datatype (its own fields are then given next). A dotted value whose head is not a
//! channel or constructor gets the dotted type of its parts ([`Ty::Dot`], `Int.Int`) where
//! each is such a single field. A variable followed by more parts after a channel or
//! constructor (`x` in `e.x.y`) takes one field (libcspm's shortest match), settled at the
//! end of its group ([`Checker::check_shortest_matches`]). A datatype's value dotted with
//! more (`A.1.A`) is the dotted type of that value and the fields after it, as libcspm's
//! evaluator splits it. A local variable given to `{| x |}` has fields left, whose first is
//! of one type in every `x.y` ([`Checker::check_first_fields`]). Anything else (more values
//! than fields of an event, a field of a dotted type) leaves the whole value of the type
//! [`Ty::Any`].

use super::toplevel::flatten_dots;
use super::types::{Classes, Ty};
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
        let mut shortest = vec![false; parts.len()];
        if let ExprKind::Var(n) = &parts[0].kind {
            if let Some(i) = self.scope.iter().rposition(|(m, _)| m == n) {
                let s = &self.scope[i].1;
                if s.generic.is_empty() && s.rigid.is_empty() {
                    self.dotted_locals
                        .push((s.ty.clone(), types[1].clone(), parts[1].span));
                }
            }
        }
        let t = if self.names_channel_or_constructor(parts[0]) {
            self.headed_dot_type(&parts, &types, &mut shortest)?
        } else {
            self.value_dot_type(&parts, &types)?
        };
        // a variable part not given to one field may stand for several in libcspm
        for (ty, given) in types.iter().zip(shortest) {
            if !given && matches!(self.vars.shallow(ty), Ty::Var(_)) {
                self.vars.mark_maybe_dotted(ty);
            }
        }
        Ok(t)
    }

    /// The type of the dotted value `parts` headed by a channel or constructor (of types
    /// `types`): what is left of its fields, or [`Ty::Any`]. A part that is a variable of a
    /// type not yet known and not the last takes one field (libcspm's shortest match): it
    /// is recorded for [`Checker::check_shortest_matches`] and marked in `shortest`, and
    /// the value's type is [`Ty::Any`] (the parts after it are not given fields).
    fn headed_dot_type(
        &mut self,
        parts: &[&Expr],
        types: &[Ty],
        shortest: &mut [bool],
    ) -> CResult<Ty> {
        let mut t = types[0].clone();
        for (i, (p, arg)) in parts.iter().zip(types).enumerate().skip(1) {
            let Ty::Dotable(field, rest) = self.vars.resolve(&t) else {
                // more values than fields: a datatype's value dotted further is a dotted
                // value of fields (an event dotted further is a value, unchecked)
                return match self.vars.resolve(&t) {
                    d @ Ty::Data(..) => self.completed_dot_type(d, &parts[i..], &types[i..]),
                    _ => Ok(Ty::Any),
                };
            };
            t = match self.vars.resolve(arg) {
                Ty::Var(_) if i + 1 < parts.len() => {
                    self.shortest_matches
                        .push((p.span, (*field).clone(), arg.clone()));
                    shortest[i] = true;
                    // whether it takes one field is settled at the end of the group: what
                    // is left of the fields is not known before
                    return Ok(Ty::Any);
                }
                a @ Ty::Dotable(..) => match self.absorbed(&field, &a, &rest) {
                    Some(t) => t,
                    None => return Ok(Ty::Any),
                },
                a => {
                    if !self.give_field(&field, &a, arg, p.span)? {
                        return Ok(Ty::Any);
                    }
                    (*rest).clone()
                }
            };
        }
        Ok(t)
    }

    /// Gives the value of type `a` (resolved; `arg` as typed) at `span` to a field of type
    /// `field` where that is certain (both single fields, or both the same datatype);
    /// false where it is not.
    fn give_field(&mut self, field: &Ty, a: &Ty, arg: &Ty, span: Span) -> CResult<bool> {
        let f = self.vars.resolve(field);
        match (&f, a) {
            _ if self.single_field(&f) && self.single_field(a) => {
                self.expect(field, arg, span)?;
                Ok(true)
            }
            (Ty::Data(x, _), Ty::Data(y, _)) if x == y => Ok(true),
            _ => Ok(false),
        }
    }

    /// A constructor or channel still waiting for fields (of type `a`) given to a field of
    /// type `field`, followed by fields of types `rest`: its own fields come first (as in
    /// libcspm), so the fields still wanted are its fields, then `rest`. `None` unless the
    /// field is of the datatype (or events) it makes.
    fn absorbed(&self, field: &Ty, a: &Ty, rest: &Ty) -> Option<Ty> {
        let mut own = Vec::new();
        let mut made = a.clone();
        while let Ty::Dotable(x, r) = made {
            own.push((*x).clone());
            made = self.vars.resolve(&r);
        }
        match (self.vars.resolve(field), made) {
            (Ty::Data(x, _), Ty::Data(y, _)) if x == y => {}
            (Ty::Event, Ty::Event) => {}
            _ => return None,
        }
        Some(
            own.into_iter()
                .rev()
                .fold(rest.clone(), |r, x| Ty::dotable(x, r)),
        )
    }

    /// The type of the datatype's value of type `first` (a constructor given all its
    /// fields) dotted with `parts` (of types `types`): as libcspm's evaluator dots a
    /// complete value with more (`A.1.A` with `datatype T = A.Int` is the two fields `A.1`
    /// and `A`), the dotted type of `first` and the fields of `parts` (see
    /// [`Checker::value_dot_items`]), where these end with a bare constructor still waiting
    /// for its fields, that too; otherwise [`Ty::Any`].
    fn completed_dot_type(&mut self, first: Ty, parts: &[&Expr], types: &[Ty]) -> CResult<Ty> {
        let Some((mut items, waiting)) = self.value_dot_items(parts, types)? else {
            return Ok(Ty::Any);
        };
        if let Some(w) = waiting {
            // only a bare constructor, the last part
            let last = parts.len() - 1;
            let bare = self.names_channel_or_constructor(parts[last])
                && self.vars.resolve(&types[last]) == w;
            let mut made = w.clone();
            while let Ty::Dotable(_, r) = made {
                made = self.vars.resolve(&r);
            }
            if !bare || !matches!(made, Ty::Data(..)) {
                return Ok(Ty::Any);
            }
            items.push(w);
        }
        items.insert(0, first);
        Ok(Ty::Dot(items.into()))
    }

    /// The type of the dotted value `parts` (of types `types`) whose head is not a channel
    /// or constructor (`1.2`, `true.B.0`, `x.y`): the dotted type of its parts when each
    /// is certainly a single field or a constructor given all its fields (as libcspm
    /// splits it); otherwise [`Ty::Any`].
    fn value_dot_type(&mut self, parts: &[&Expr], types: &[Ty]) -> CResult<Ty> {
        match self.value_dot_items(parts, types)? {
            Some((items, None)) if items.len() >= 2 => Ok(Ty::Dot(items.into())),
            _ => Ok(Ty::Any),
        }
    }

    /// The types of the fields of the dotted value `parts` (of types `types`) when each
    /// part is certainly a single field or a constructor given all its fields, with the
    /// type of the constructor left waiting for fields at the end, if one is; `None` where
    /// that is not certain.
    fn value_dot_items(
        &mut self,
        parts: &[&Expr],
        types: &[Ty],
    ) -> CResult<Option<(Vec<Ty>, Option<Ty>)>> {
        let mut items = Vec::new();
        // a constructor waiting for the fields that follow
        let mut waiting: Option<Ty> = None;
        for (p, arg) in parts.iter().zip(types) {
            let a = self.vars.resolve(arg);
            let Some(w) = waiting.take() else {
                match a {
                    Ty::Dotable(..) => waiting = Some(a),
                    Ty::Data(..) => items.push(a),
                    _ if self.single_field(&a) => items.push(a),
                    _ => return Ok(None),
                }
                continue;
            };
            let Ty::Dotable(field, rest) = w else {
                return Ok(None);
            };
            let next = match a {
                Ty::Dotable(..) => match self.absorbed(&field, &a, &rest) {
                    Some(t) => t,
                    None => return Ok(None),
                },
                _ => {
                    if !self.give_field(&field, &a, arg, p.span)? {
                        return Ok(None);
                    }
                    (*rest).clone()
                }
            };
            match self.vars.resolve(&next) {
                t @ Ty::Dotable(..) => waiting = Some(t),
                t @ Ty::Data(..) => items.push(t),
                _ => return Ok(None),
            }
        }
        Ok(Some((items, waiting)))
    }

    /// libcspm's shortest-match rule, applied at the end of a group: a variable dotted
    /// after a channel or constructor and followed by more parts (`x` in `e.x.y`) takes
    /// exactly one field, so its type is that field's. Applied only where libcspm's answer
    /// does not depend on what weft types loosely: the variable is still of a type not
    /// known and never met anything that may make it dotted (it is then given the field's
    /// type), or it is now a single field (then of the field's type).
    pub(super) fn check_shortest_matches(&mut self) -> CResult<()> {
        for (span, field, var) in std::mem::take(&mut self.shortest_matches) {
            let f = self.vars.resolve(&field);
            if !(self.single_field(&f) || matches!(f, Ty::Data(..))) {
                continue;
            }
            match self.vars.resolve(&var) {
                Ty::Var(_) if self.vars.is_maybe_dotted(&var) => continue,
                Ty::Var(_) => {}
                a if self.single_field(&a) && self.single_field(&f) => {}
                Ty::Data(..) if matches!(f, Ty::Data(..)) => {}
                _ => continue,
            }
            self.expect(&field, &var, span)?;
        }
        Ok(())
    }

    /// libcspm's extendable types, in part: a local variable `x` given to a productions set
    /// as it is (`{| x |}`) is a value with fields left, whose first field has one type, so
    /// the parts dotted after it (`y` and `z` in `x.y`, `x.z`) are of one type where they
    /// are single fields. Applied at the end of a group to the variables still of a type
    /// not known (those of a known type are checked as any dotted value); the type the
    /// parts share gives up ([`Ty::Any`]) where it meets anything but a single field.
    pub(super) fn check_first_fields(&mut self) -> CResult<()> {
        let dotted = std::mem::take(&mut self.dotted_locals);
        let extendable = std::mem::take(&mut self.extendable_locals);
        if extendable.is_empty() {
            return Ok(());
        }
        let roots: Vec<u32> = extendable
            .iter()
            .filter_map(|t| match self.vars.shallow(t) {
                Ty::Var(v) => Some(v),
                _ => None,
            })
            .collect();
        let mut shared: Vec<(u32, Ty)> = Vec::new();
        for (x, first, span) in dotted {
            let Ty::Var(r) = self.vars.shallow(&x) else {
                continue;
            };
            if !roots.contains(&r) {
                continue;
            }
            let s = match shared.iter().find(|(v, _)| *v == r) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = self.vars.fresh_with(Classes::default().with_first_field());
                    shared.push((r, s.clone()));
                    s
                }
            };
            self.expect(&s, &first, span)?;
        }
        Ok(())
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
