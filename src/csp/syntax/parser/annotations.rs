//! Declarations that weft reads and lowers to the ones it has: type annotations
//! (`f :: (Int) -> Int`, accepted and not checked), `subtype` (a set of values of a datatype)
//! and `print e` (a hidden definition whose value the loader reports).

use super::*;

/// The prefix of the hidden definition a `print` declaration becomes (the expression's
/// node id follows); the loader reports the value of every definition named so.
pub const PRINT_PREFIX: &str = "print ";

/// The generator variable of a lowered `subtype` (not a name a script can write): the
/// `i`-th field of a clause draws `SUBTYPE_VAR i`.
pub(crate) const SUBTYPE_VAR: &str = "subtype value";

impl Parser<'_> {
    /// True when a type annotation `n1, n2 :: type` starts here.
    pub(super) fn at_annotation(&self) -> bool {
        let mut i = self.pos;
        loop {
            if !matches!(self.tokens.get(i).map(|t| &t.tok), Some(Tok::Ident(_))) {
                return false;
            }
            match self.tokens.get(i + 1).map(|t| &t.tok) {
                Some(Tok::ColonColon) => return true,
                Some(Tok::Comma) => i += 2,
                _ => return false,
            }
        }
    }

    /// Reads a type annotation `n1, n2 :: type` (its tokens are kept for the type checker),
    /// returning the annotated names. A `=` in it makes it a definition of a qualified name
    /// (`M::f = ...`), which no script can write: that is an error, at the name.
    pub(super) fn skip_annotation(&mut self, scope: AnnotationScope) -> PResult<Vec<Ident>> {
        let mut names = Vec::new();
        while let Tok::Ident(n) = self.peek().clone() {
            let span = self.bump().span;
            names.push(Ident {
                name: n.as_str().into(),
                span,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.eat(&Tok::ColonColon);
        let first = self.pos;
        let mut depth = 0usize;
        loop {
            let t = self.peek();
            if t == &Tok::Eof || (depth == 0 && (t == &Tok::Within || self.at_boundary())) {
                break;
            }
            if depth == 0 && t == &Tok::Define {
                return Err(self.qualified_definition(&names, first));
            }
            match t {
                Tok::LParen | Tok::LBrace | Tok::LBrack | Tok::LPipeBrace => depth += 1,
                Tok::RParen | Tok::RBrace | Tok::RBrack | Tok::RPipeBrace => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
        let tokens = self.tokens[first..self.pos].to_vec();
        self.ctx.annotations.push(RawAnnotation {
            names: names.clone(),
            tokens,
            scope,
        });
        Ok(names)
    }

    /// The error for `M::f ... = ...` read as an annotation of `M` whose type starts at
    /// token `first`: a definition of the qualified name `M::f`.
    fn qualified_definition(&self, names: &[Ident], first: usize) -> RawError {
        let Some(module) = names.last() else {
            return self.unexpected("a definition");
        };
        let (name, span) = match self.tokens.get(first) {
            Some(Token {
                tok: Tok::Ident(member),
                span,
                ..
            }) => (format!("{}::{member}", module.name), module.span.to(*span)),
            _ => (format!("{}::...", module.name), module.span),
        };
        RawError::new(
            span,
            ErrorKind::Syntax,
            format!(
                "`{name}` is a qualified name, which a definition cannot define: a module's \
                 members are defined by the module's own declarations"
            ),
        )
    }

    /// After `subtype`: `T = C1.F1 | C2 | ...`, lowered to the definition
    /// `T = Union({Union({ {| C1.v |} | v <- F1 }), {| C2 |}, ...})` (the values of the datatype
    /// whose constructor and first fields a clause names).
    pub(super) fn parse_subtype(&mut self) -> PResult<DeclKind> {
        let name = self.decl_name("a type name after `subtype`")?;
        self.expect(&Tok::Define, "`=` after the subtype name")?;
        let mut parts = Vec::new();
        loop {
            let ctor = self.ident("a constructor name")?;
            let c = self.mk(ExprKind::Var(ctor.name.clone()), ctor.span);
            let part = if self.eat(&Tok::Dot) {
                // one generator per field: `C.F1.F2` gives `{| C.v1.v2 |}`, v_i <- F_i
                let mut fields = vec![self.parse_expr(L_DOT + 1)?];
                while self.eat(&Tok::Dot) {
                    fields.push(self.parse_expr(L_DOT + 1)?);
                }
                let span = ctor.span.to(self.prev_span());
                let mut event = c;
                let mut stmts = Vec::new();
                for (i, f) in fields.into_iter().enumerate() {
                    let var: Name = format!("{SUBTYPE_VAR} {i}").into();
                    let v = self.mk(ExprKind::Var(var.clone()), f.span);
                    event = self.mk(ExprKind::Dot(Box::new(event), Box::new(v)), span);
                    let pat = Pattern {
                        kind: PatKind::Var(var),
                        span: f.span,
                    };
                    stmts.push(Stmt::Generator(pat, f));
                }
                let prods = self.mk(ExprKind::Productions(vec![event]), span);
                let sets = self.mk(ExprKind::SetComp(vec![prods], stmts), span);
                let union = self.mk(ExprKind::Var("Union".into()), span);
                self.mk(ExprKind::App(Box::new(union), vec![sets]), span)
            } else {
                self.mk(ExprKind::Productions(vec![c]), ctor.span)
            };
            parts.push(part);
            if !self.eat(&Tok::Pipe) {
                break;
            }
        }
        let span = name.span.to(self.prev_span());
        let all = self.mk(ExprKind::SetLit(parts), span);
        let union = self.mk(ExprKind::Var("Union".into()), span);
        let value = self.mk(ExprKind::App(Box::new(union), vec![all]), span);
        let pat = Pattern {
            kind: PatKind::Var(name.name.clone()),
            span: name.span,
        };
        Ok(DeclKind::PatBind(pat, value))
    }

    /// After `print`: the expression, as a hidden definition (see [`PRINT_PREFIX`]).
    pub(super) fn parse_print(&mut self) -> PResult<DeclKind> {
        let e = self.parse_expr(0)?;
        let pat = Pattern {
            kind: PatKind::Var(format!("{PRINT_PREFIX}{}", e.id).into()),
            span: e.span,
        };
        Ok(DeclKind::PatBind(pat, e))
    }
}
