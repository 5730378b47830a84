//! Parsing of modules (`module M(params) ... exports ... endmodule`) and instances
//! (`instance I = M(args)`); the loader flattens them (see [`crate::csp::syntax::modules`]).

use super::decls::push_decl;
use super::*;

impl Parser<'_> {
    /// After `module`: the name, parameters, declarations and `endmodule`.
    pub(super) fn parse_module(&mut self) -> PResult<DeclKind> {
        let name = self.decl_name("a module name after `module`")?;
        let first_annotation = self.ctx.annotations.len();
        let params = if self.peek() == &Tok::LParen && !self.tokens[self.pos].newline_before {
            self.bump();
            // `module M()` is an error in FDR: a module without parameters has no list
            let mut params = vec![self.ident("a module parameter")?];
            while self.eat(&Tok::Comma) {
                params.push(self.ident("a module parameter")?);
            }
            self.expect(&Tok::RParen, "`)` closing the module's parameters")?;
            Some(params)
        } else {
            None
        };
        let private = self.module_decls()?;
        let exported = if self.eat(&Tok::Exports) {
            self.module_decls()?
        } else {
            Vec::new()
        };
        self.expect(
            &Tok::EndModule,
            "`exports` or `endmodule` closing the module",
        )?;
        let extent = name.span.to(self.tokens[self.pos - 1].span);
        // the annotations of this module (not those of modules nested in it, already placed)
        for a in &mut self.ctx.annotations[first_annotation..] {
            if a.scope == AnnotationScope::Module(None) {
                a.scope = AnnotationScope::Module(Some(extent));
            }
        }
        Ok(DeclKind::Module(Arc::new(ModuleDecl {
            name,
            params,
            private,
            exported,
        })))
    }

    /// Declarations up to `exports` or `endmodule`.
    fn module_decls(&mut self) -> PResult<Vec<Decl>> {
        let mut decls = Vec::new();
        while !matches!(self.peek(), Tok::Exports | Tok::EndModule | Tok::Eof) {
            if self.peek() == &Tok::Include {
                let span = self.bump().span;
                let (name, name_span) = match self.peek().clone() {
                    Tok::Str(s) => (s, self.bump().span),
                    _ => return Err(self.unexpected("a quoted file name after `include`")),
                };
                self.end_of_decl()?;
                let included = self.include(&name, span.to(name_span))?;
                decls.extend(included);
                continue;
            }
            if self.at_annotation() {
                self.skip_annotation(AnnotationScope::Module(None))?;
                self.end_of_decl()?;
                continue;
            }
            if matches!(self.peek(), Tok::Assert | Tok::Print) {
                return Err(self.unexpected(
                    "a definition (assertions and `print` are not allowed in a module)",
                ));
            }
            let d = self.parse_decl(true)?;
            if !matches!(self.peek(), Tok::Exports | Tok::EndModule) {
                self.end_of_decl()?;
            }
            push_decl(&mut decls, d);
        }
        Ok(decls)
    }

    /// After `instance`: `I = M(args)` or `I = M`.
    pub(super) fn parse_instance(&mut self) -> PResult<DeclKind> {
        let name = self.decl_name("an instance name after `instance`")?;
        self.expect(&Tok::Define, "`=` after the instance name")?;
        let mut module = self.ident("a module name")?;
        while self.peek() == &Tok::ColonColon {
            self.bump();
            let inner = self.ident("a module name after `::`")?;
            module = Ident {
                name: format!("{}::{}", module.name, inner.name).into(),
                span: module.span.to(inner.span),
            };
        }
        let mut args = Vec::new();
        if self.peek() == &Tok::LParen && !self.tokens[self.pos].newline_before {
            self.bump();
            self.open_bracket();
            if self.peek() == &Tok::RParen {
                return Err(self.unexpected(
                    "an argument (an instance of a module without parameters has no argument list)",
                ));
            }
            args.push(self.parse_expr(0)?);
            while self.eat(&Tok::Comma) {
                args.push(self.parse_expr(0)?);
            }
            self.close_bracket();
            self.expect(&Tok::RParen, "`)` closing the module's arguments")?;
        }
        Ok(DeclKind::Instance(name, module, args))
    }
}
