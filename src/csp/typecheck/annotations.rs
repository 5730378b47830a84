//! Type annotations: reading the tokens of `n :: type` into a [`Ty`] whose variables are
//! rigid, with the type classes of its context (`(Eq a, Ord b) => ...`).

use std::collections::HashMap;

use super::types::{Class, Classes, Ty, Vars};
use crate::csp::error::{ErrorKind, RawError};
use crate::csp::syntax::lexer::{Tok, Token};
use crate::csp::syntax::source::Span;

/// What a name written in a type denotes.
pub(super) enum TypeName {
    /// A datatype (index, name).
    Data(u32, std::sync::Arc<str>),
    /// A type the checker does not model exactly (a name type, ...).
    Opaque,
    /// No type of that name.
    Unknown,
}

/// Why an annotation could not be read.
pub(super) enum ReadError {
    /// A definite error in the annotation (FDR rejects it too).
    Error(RawError),
    /// A form the checker does not read: the annotation is not checked.
    Unread,
}

type RResult<T> = Result<T, ReadError>;

/// The reader of one annotation's tokens.
pub(super) struct AnnotationReader<'a> {
    tokens: &'a [Token],
    pos: usize,
    end_span: Span,
    lookup: &'a dyn Fn(&str) -> TypeName,
    vars: &'a mut Vars,
    /// The rigid variables by name (shared by the annotations of one scope).
    names: HashMap<String, Ty>,
    context: HashMap<String, Classes>,
}

fn error(span: Span, message: impl Into<String>) -> ReadError {
    ReadError::Error(RawError::new(span, ErrorKind::Type, message))
}

impl<'a> AnnotationReader<'a> {
    /// A reader of `tokens` (`end_span` is where the annotation ends, for errors there).
    pub(super) fn new(
        tokens: &'a [Token],
        end_span: Span,
        lookup: &'a dyn Fn(&str) -> TypeName,
        vars: &'a mut Vars,
        inherited: HashMap<String, Ty>,
    ) -> Self {
        AnnotationReader {
            tokens,
            pos: 0,
            end_span,
            lookup,
            vars,
            names: inherited,
            context: HashMap::new(),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + k).map(|t| &t.tok)
    }

    fn span(&self) -> Span {
        self.tokens
            .get(self.pos)
            .map(|t| t.span)
            .unwrap_or(self.end_span)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> RResult<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(error(
                self.span(),
                format!("expected {what} in the type annotation"),
            ))
        }
    }

    /// Reads the whole annotation: its type, whose variables are rigid, and the rigid
    /// variables by name (those inherited from an enclosing annotation included).
    pub(super) fn read(mut self) -> RResult<(Ty, HashMap<String, Ty>)> {
        self.read_context()?;
        let ty = self.read_type()?;
        if self.pos < self.tokens.len() {
            return Err(error(
                self.span(),
                format!(
                    "unexpected {} in the type annotation",
                    self.tokens[self.pos].tok.describe()
                ),
            ));
        }
        for (name, span) in self.context_spans() {
            if !self.names.contains_key(&name) {
                return Err(error(
                    span,
                    format!(
                        "the constraint on `{name}` names a type variable the type does not use"
                    ),
                ));
            }
        }
        Ok((ty, self.names))
    }

    fn context_spans(&self) -> Vec<(String, Span)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i + 1 < self.tokens.len() {
            if let (Tok::Ident(c), Tok::Ident(v)) = (&self.tokens[i].tok, &self.tokens[i + 1].tok) {
                if Class::from_name(c).is_some() && self.context.contains_key(v.as_str()) {
                    out.push((v.clone(), self.tokens[i + 1].span));
                }
            }
            i += 1;
        }
        out
    }

    /// A context `C a =>` or `(C a, D b) =>`, if there is one.
    fn read_context(&mut self) -> RResult<()> {
        let paren = self.peek() == Some(&Tok::LParen);
        let k = usize::from(paren);
        let starts = matches!(
            (self.peek_at(k), self.peek_at(k + 1)),
            (Some(Tok::Ident(_)), Some(Tok::Ident(_)))
        );
        if !starts {
            return Ok(());
        }
        if paren {
            self.pos += 1;
        }
        loop {
            let class_span = self.span();
            let class = match self.peek() {
                Some(Tok::Ident(c)) => c.clone(),
                _ => return Err(error(class_span, "expected a type class in the context")),
            };
            self.pos += 1;
            let Some(c) = Class::from_name(&class) else {
                return Err(error(class_span, format!("unknown type class `{class}`")));
            };
            let var_span = self.span();
            let var = match self.peek() {
                Some(Tok::Ident(v))
                    if is_var_name(v) && matches!((self.lookup)(v), TypeName::Unknown) =>
                {
                    v.clone()
                }
                _ => {
                    return Err(error(
                        var_span,
                        format!("a constraint `{class} ...` must be on a type variable"),
                    ))
                }
            };
            if let Some(Ty::Rigid(r)) = self.names.get(&var) {
                let have = self.vars.rigid_classes(*r);
                let mut with = have;
                with.insert(c);
                if with != have {
                    return Err(error(
                        var_span,
                        format!(
                            "`{var}` is a type variable of an enclosing annotation, which has \
                             no constraint `{class} {var}`"
                        ),
                    ));
                }
            }
            self.pos += 1;
            self.context.entry(var).or_default().insert(c);
            if !paren || !self.eat(&Tok::Comma) {
                break;
            }
        }
        if paren {
            self.expect(&Tok::RParen, "`)` after the context")?;
        }
        self.expect(&Tok::FatArrow, "`=>` after the context")
    }

    fn read_type(&mut self) -> RResult<Ty> {
        let start = self.pos;
        let first = self.read_dotted()?;
        if self.eat(&Tok::FatArrow) {
            let star = self.eat(&Tok::Star);
            if star {
                self.check_extension_variable(start)?;
            }
            let rest = self.read_type()?;
            if star {
                // extension types are not modelled
                return Ok(Ty::Any);
            }
            return Ok(Ty::dotable(first, rest));
        }
        Ok(first)
    }

    /// In an extension type `a =>* b` (a value that, dotted with the fields `a` stands for,
    /// gives a `b`), `a` is a type variable: it stands for the fields still to come, which
    /// no other type can (libcspm refuses `Event =>* b`). The left side is the tokens from
    /// `start` to the `=>*` just read.
    fn check_extension_variable(&self, start: usize) -> RResult<()> {
        let left = &self.tokens[start..self.pos - 2];
        let is_var = match left {
            [t] => match &t.tok {
                Tok::Ident(v) => is_var_name(v) && matches!((self.lookup)(v), TypeName::Unknown),
                _ => false,
            },
            _ => false,
        };
        if is_var {
            return Ok(());
        }
        let span = match (left.first(), left.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => self.span(),
        };
        Err(error(
            span,
            "the left side of `=>*` must be a type variable: in `a =>* b`, `a` stands for \
             the fields that extend a value to a `b`",
        ))
    }

    fn read_dotted(&mut self) -> RResult<Ty> {
        let first = self.read_atom()?;
        let mut dotted = false;
        while self.eat(&Tok::Dot) {
            self.read_atom()?;
            dotted = true;
        }
        // dot types are not modelled
        Ok(if dotted { Ty::Any } else { first })
    }

    fn read_atom(&mut self) -> RResult<Ty> {
        let span = self.span();
        match self.peek().cloned() {
            Some(Tok::Ident(name)) => {
                self.pos += 1;
                let mut full = name.clone();
                while self.peek() == Some(&Tok::ColonColon) {
                    self.pos += 1;
                    match self.peek().cloned() {
                        Some(Tok::Ident(n)) => {
                            self.pos += 1;
                            full = format!("{full}::{n}");
                        }
                        _ => return Err(error(self.span(), "expected a name after `::`")),
                    }
                }
                if self.peek() == Some(&Tok::Arrow) {
                    return Err(error(
                        self.span(),
                        "the arguments of a function type are written in parentheses: `(a) -> b`",
                    ));
                }
                self.named(&full, span)
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                if self.eat(&Tok::Pipe) {
                    let k = self.read_dotted()?;
                    self.expect(&Tok::FatArrow, "`=>` in a map type")?;
                    let v = self.read_type()?;
                    self.expect(&Tok::Pipe, "`|)` after a map type")?;
                    self.expect(&Tok::RParen, "`|)` after a map type")?;
                    return Ok(Ty::map(k, v));
                }
                let mut parts = Vec::new();
                if !self.eat(&Tok::RParen) {
                    loop {
                        parts.push(self.read_type()?);
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    self.expect(&Tok::RParen, "`)`")?;
                }
                if self.eat(&Tok::Arrow) {
                    let ret = self.read_type()?;
                    return Ok(Ty::fun(parts, ret));
                }
                match parts.len() {
                    0 => Err(error(span, "`()` is not a type")),
                    1 => Ok(parts.pop().unwrap_or(Ty::Any)),
                    _ => Ok(Ty::tuple(parts)),
                }
            }
            Some(Tok::Lt) => {
                self.pos += 1;
                let t = self.read_type()?;
                self.expect(&Tok::Gt, "`>` after a sequence type")?;
                Ok(Ty::seq(t))
            }
            Some(Tok::LBrace) => {
                self.pos += 1;
                let t = self.read_type()?;
                self.expect(&Tok::RBrace, "`}` after a set type")?;
                Ok(Ty::set(t))
            }
            Some(_) => Err(ReadError::Unread),
            None => Err(error(span, "expected a type")),
        }
    }

    fn named(&mut self, name: &str, span: Span) -> RResult<Ty> {
        Ok(match name {
            "Int" => Ty::Int,
            "Bool" => Ty::Bool,
            "Char" => Ty::Char,
            "Proc" => Ty::Proc,
            "Event" => Ty::Event,
            _ => match (self.lookup)(name) {
                TypeName::Data(id, n) => Ty::Data(id, n),
                TypeName::Opaque => Ty::Any,
                TypeName::Unknown if is_var_name(name) => {
                    if let Some(t) = self.names.get(name) {
                        return Ok(t.clone());
                    }
                    let classes = self.context.get(name).copied().unwrap_or_default();
                    let t = self.vars.rigid(name, classes);
                    self.names.insert(name.to_string(), t.clone());
                    t
                }
                TypeName::Unknown => {
                    return Err(error(
                        span,
                        format!("unknown type `{name}` in the type annotation"),
                    ))
                }
            },
        })
    }
}

/// A name that can be a type variable: it starts with a lower-case letter.
fn is_var_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_lowercase()) && !name.contains("::")
}
