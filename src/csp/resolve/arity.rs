//! Arity: calls of named functions and processes must match their argument groups.

use super::*;

impl Resolver<'_> {
    pub(super) fn check_arity(&self, f: &Expr, nargs: usize, span: Span) -> CResult<()> {
        let ExprKind::Var(name) = &f.kind else {
            return Ok(());
        };
        let expected = if let Some(l) = self.lookup_local(name) {
            l.arity
        } else {
            match self.prog.globals.get(name) {
                Some(GlobalKind::Def(i)) => match &self.prog.top.defs[*i as usize].kind {
                    DefKind::Function { groups, .. } => Some(groups[0]),
                    _ => None,
                },
                Some(GlobalKind::Builtin(b)) => Some(b.arity()),
                Some(GlobalKind::Compression(_)) => Some(1),
                Some(GlobalKind::Chan(_)) | Some(GlobalKind::Ctor(_)) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Type,
                        format!("`{name}` is a channel or constructor: write `{name}.x`, not `{name}(x)`"),
                    ))
                }
                Some(GlobalKind::Stop) | Some(GlobalKind::Skip) | Some(GlobalKind::Div) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Arity,
                        format!("`{name}` takes no arguments"),
                    ))
                }
                _ => None,
            }
        };
        match expected {
            Some(k) if k != nargs => Err(RawError::new(
                span,
                ErrorKind::Arity,
                format!(
                    "`{name}` takes {k} argument{} but is given {nargs}",
                    if k == 1 { "" } else { "s" }
                ),
            )),
            _ => Ok(()),
        }
    }
}
