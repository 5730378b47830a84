//! The types of dotted values the checker knows: a productions set `{| e |}` (events, or
//! values of one datatype), and dot patterns whose first part is a variable.

use super::toplevel::flatten_dots;
use super::types::{Class, Classes, Ty};
use super::{CResult, Checker};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::resolve::GlobalKind;
use crate::csp::syntax::ast::*;
use crate::csp::syntax::parser;
use crate::csp::syntax::source::Span;

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
            if let Some(i) = self.scope.iter().rposition(|(m, _)| m == n) {
                let s = &self.scope[i].1;
                if std::ptr::eq(head, x) && s.generic.is_empty() && s.rigid.is_empty() {
                    self.extendable_locals.push(s.ty.clone());
                }
                return Ok(Ty::Any);
            }
            let t = match self.prog.globals.get(n) {
                Some(GlobalKind::Chan(_)) => Ty::Event,
                Some(GlobalKind::Ctor(k)) => {
                    self.check_subtype_clause_fields(*k, x)?;
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

    /// Requires class `c` of the datatype of each of `operands` written as a dotted value
    /// headed by a constructor (`Yes.Leaf`): such a value is given no type here (dotted
    /// values are checked as they are computed), but whether complete or not, it has
    /// equality only if its datatype has.
    pub(super) fn require_of_dotted(
        &mut self,
        c: Class,
        operands: [&Expr; 2],
        span: Span,
    ) -> CResult<()> {
        for x in operands {
            let mut head = x;
            while let ExprKind::Dot(h, _) = &head.kind {
                head = h;
            }
            if std::ptr::eq(head, x) {
                continue;
            }
            let ExprKind::Var(n) = &head.kind else {
                continue;
            };
            if self.scope.iter().any(|(m, _)| m == n) {
                continue;
            }
            if let Some(GlobalKind::Ctor(k)) = self.prog.globals.get(n) {
                let d = self.prog.ctors[*k as usize].datatype;
                let t = Ty::Data(d, self.prog.datatypes[d as usize].name.clone());
                self.require(c, &t, span)?;
            }
        }
        Ok(())
    }

    /// Refuses a `subtype` clause that gives constructor `k` more fields than it has
    /// (`subtype Z = Y.{0}.{1}` with `datatype X = Y.Int`), as libcspm does. The parser
    /// lowers a clause to `{| Y.v0.v1 |}` with one generator variable per field written
    /// (see [`parser::SUBTYPE_VAR`]); `x` is that production.
    fn check_subtype_clause_fields(&self, k: u32, x: &Expr) -> CResult<()> {
        let mut parts = Vec::new();
        flatten_dots(x, &mut parts);
        let written = parts.len() - 1;
        let from_subtype = written > 0
            && parts[1..]
                .iter()
                .all(|p| matches!(&p.kind, ExprKind::Var(v) if v.starts_with(parser::SUBTYPE_VAR)));
        let ctor = &self.prog.ctors[k as usize];
        let has = ctor.fields.as_ref().map_or(0, |f| {
            let mut fs = Vec::new();
            flatten_dots(f, &mut fs);
            fs.len()
        });
        if from_subtype && written > has {
            return Err(RawError::new(
                x.span,
                ErrorKind::Type,
                format!(
                    "this subtype clause gives the constructor `{}` {written} fields, but it \
                     has {has}",
                    ctor.name
                ),
            ));
        }
        Ok(())
    }

    /// The type of the dot pattern `p` (parts `ps`): unknown, but recorded when its first
    /// part is a variable or `_`, which cannot take the constructor of a datatype's value or
    /// the channel of an event ([`Checker::check_dot_heads`]).
    ///
    /// Where every part is a variable or `_` (`x.y.z`), each takes at least one field in
    /// libcspm: the type stands for a dotted value of at least as many fields as parts
    /// ([`Classes::with_dot_parts`]).
    pub(super) fn dot_pattern_type(&mut self, p: &Pattern, ps: &[Pattern]) -> Ty {
        if !ps.first().is_some_and(|q| self.binds_any_value(q)) {
            return Ty::Any;
        }
        let t = self.vars.fresh();
        self.dot_heads.push((p.span, t.clone()));
        if ps.iter().all(|q| self.binds_any_value(q)) {
            self.vars
                .add_classes(&t, Classes::default().with_dot_parts(ps.len()));
        }
        t
    }

    /// Whether the pattern `q` is a variable (not a channel, constructor or boolean) or `_`.
    fn binds_any_value(&self, q: &Pattern) -> bool {
        match &q.kind {
            PatKind::Wildcard => true,
            PatKind::Var(n) => !matches!(
                self.prog.globals.get(n),
                Some(
                    GlobalKind::Chan(_)
                        | GlobalKind::Ctor(_)
                        | GlobalKind::True
                        | GlobalKind::False
                )
            ),
            _ => false,
        }
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
