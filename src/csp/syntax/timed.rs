//! The lowering of timed sections (`Timed(et) { ... }`): a syntax-to-syntax pass the loader
//! runs between parsing and resolution.
//!
//! weft gives timed sections their meaning in two steps: this source-to-source lowering
//! marks, at load, each construct whose meaning a section changes (an explicit node that
//! names its section), and the evaluator turns the marked constructs into timed process
//! values (`TimedProc`) with their own firing rules (`csp::process::timed`). So the timed
//! meaning is lexical, as in FDR: it belongs to where a construct is written, and a process
//! defined outside a section keeps its untimed meaning when a section uses it.
//!
//! FDR reads the declarations inside a timed section as discretely timed CSP (tock-CSP:
//! Armstrong, Lowe, Ouaknine and Roscoe, "Model checking Timed CSP"; libcspm's desugarer and
//! evaluator are the reference for what changes). The lowering does what libcspm's desugarer
//! does, with explicit nodes instead of libcspm's renamed built-ins:
//!
//! - the declarations inside a section become ordinary declarations of the scope the section
//!   is in (its names are top-level names, or names of its `let`);
//! - each section gets a hidden definition `#timedK = ` [`ExprKind::TimedHeader`], holding
//!   `tock` and the section's function `et` as written in the section's enclosing scope (so
//!   a local name inside the section never captures them); the name cannot be written in a
//!   script, so it cannot clash or be shadowed;
//! - inside the section, the constructs whose meaning changes become [`ExprKind::Timed`]
//!   nodes referring to their section's header: prefixes, `STOP`, `SKIP`, `WAIT(n)`,
//!   `timed_priority(P)`, and the operators that synchronise on `tock` (`[]`, `|||`,
//!   `[|A|]`, `[A||B]`, `/\`, guards and the replicated forms); everything else (`|~|`, `;`,
//!   `\`, renaming, `[>`, functions and values) is unchanged, as in FDR;
//! - the linked parallel is not allowed in a timed section (FDR: "The linked parallel
//!   operator is not allowed in a timed section").
//!
//! The innermost section containing a construct gives it its meaning (`et`), as in FDR. The
//! semantics of the nodes is in `csp::eval::timed` (values) and `csp::process::timed`
//! (firing rules).

use std::collections::HashSet;
use std::sync::Arc;

use super::ast::*;
use super::source::Span;
use crate::csp::error::{ErrorKind, RawError};

type LResult<T> = Result<T, RawError>;

/// Lowers the timed sections of `decls` (and of the `let` expressions in them), giving the
/// nodes it makes ids from `next_id` on.
pub(crate) fn lower(decls: Vec<Decl>, next_id: &mut u32) -> Vec<Decl> {
    // FDR's names `TSTOP` and `TSKIP` are the timed `STOP` and `SKIP` in a section, unless
    // the script defines them itself (as scripts written for FDR2 do).
    let defined: HashSet<Name> = decls
        .iter()
        .flat_map(super::modules::defined_names)
        .collect();
    let mut l = Lowering {
        next_id,
        tstop: !defined.contains("TSTOP"),
        tskip: !defined.contains("TSKIP"),
    };
    l.top_decls(decls, None)
}

/// The hidden name of the header of the section whose `Timed` keyword has node id `id`.
fn header_name(id: u32) -> Name {
    format!("#timed{id}").into()
}

struct Lowering<'a> {
    next_id: &'a mut u32,
    /// `TSTOP` names the timed `STOP` (the script does not define it).
    tstop: bool,
    /// `TSKIP` names the timed `SKIP`.
    tskip: bool,
}

/// The section a construct is in: the hidden name of its header.
struct Section {
    header: Name,
}

impl Lowering<'_> {
    fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = *self.next_id;
        *self.next_id += 1;
        Expr { kind, span, id }
    }

    /// The node `form` of `sec` at `span`.
    fn timed(&mut self, sec: &Section, form: TimedForm, span: Span) -> Expr {
        let section = self.mk(ExprKind::Var(sec.header.clone()), span);
        self.mk(ExprKind::Timed(Arc::new(TimedExpr { section, form })), span)
    }

    /// The hidden header definition of the section with keyword at `keyword` and function
    /// `et` (declaration span `span`), and the section its declarations are in; `outer` is
    /// the section it is in (which gives `et` its meaning, as it is written outside).
    fn header(
        &mut self,
        keyword: Span,
        et: Option<Expr>,
        span: Span,
        outer: Option<&Section>,
    ) -> LResult<(Decl, Section)> {
        let id = *self.next_id;
        *self.next_id += 1;
        let header = header_name(id);
        let tock = self.mk(ExprKind::Var("tock".into()), keyword);
        let et = match et {
            Some(e) => Some(self.bx(e, outer)?),
            None => None,
        };
        let body = self.mk(ExprKind::TimedHeader(Box::new(tock), et), keyword);
        let decl = Decl {
            kind: DeclKind::PatBind(
                Pattern {
                    kind: PatKind::Var(header.clone()),
                    span: keyword,
                },
                body,
            ),
            span,
        };
        Ok((decl, Section { header }))
    }

    /// Lowers top-level declarations: an error in one (a construct a timed section does not
    /// allow) makes it [`DeclKind::Invalid`], as a parse error would.
    fn top_decls(&mut self, decls: Vec<Decl>, sec: Option<&Section>) -> Vec<Decl> {
        let mut out = Vec::new();
        for d in decls {
            match d.kind {
                DeclKind::Timed(t) => match self.header(t.keyword, t.et, d.span, sec) {
                    Ok((header, inner)) => {
                        out.push(header);
                        out.extend(self.top_decls(t.decls, Some(&inner)));
                    }
                    Err(e) => out.push(invalid(section_names(&t.decls), false, e, d.span)),
                },
                kind => {
                    let names = decl_names(&kind);
                    let assertion = matches!(kind, DeclKind::Assert(_));
                    match self.decl(kind, sec) {
                        Ok(kind) => out.push(Decl { kind, span: d.span }),
                        Err(e) => out.push(invalid(names, assertion, e, d.span)),
                    }
                }
            }
        }
        out
    }

    /// Lowers the declarations of a `let` (an error fails the `let`).
    fn let_decls(&mut self, decls: Vec<Decl>, sec: Option<&Section>) -> LResult<Vec<Decl>> {
        let mut out = Vec::new();
        for d in decls {
            match d.kind {
                DeclKind::Timed(t) => {
                    let (header, inner) = self.header(t.keyword, t.et, d.span, sec)?;
                    out.push(header);
                    out.extend(self.let_decls(t.decls, Some(&inner))?);
                }
                kind => out.push(Decl {
                    kind: self.decl(kind, sec)?,
                    span: d.span,
                }),
            }
        }
        Ok(out)
    }

    fn decl(&mut self, kind: DeclKind, sec: Option<&Section>) -> LResult<DeclKind> {
        Ok(match kind {
            DeclKind::Channel(names, ty) => DeclKind::Channel(names, self.opt(ty, sec)?),
            DeclKind::DataType(name, clauses) => DeclKind::DataType(
                name,
                clauses
                    .into_iter()
                    .map(|c| {
                        Ok(CtorClause {
                            name: c.name,
                            fields: self.opt(c.fields, sec)?,
                        })
                    })
                    .collect::<LResult<_>>()?,
            ),
            DeclKind::NameType(name, e) => DeclKind::NameType(name, self.expr(e, sec)?),
            DeclKind::Function(name, clauses) => DeclKind::Function(
                name,
                clauses
                    .into_iter()
                    .map(|c| {
                        Ok(Clause {
                            groups: c.groups,
                            body: self.expr(c.body, sec)?,
                            span: c.span,
                        })
                    })
                    .collect::<LResult<_>>()?,
            ),
            DeclKind::PatBind(p, e) => DeclKind::PatBind(p, self.expr(e, sec)?),
            DeclKind::Assert(a) => DeclKind::Assert(AssertDecl {
                negated: a.negated,
                tau_priority: self.opt(a.tau_priority, sec)?,
                kind: match a.kind {
                    AssertionKind::Refinement { spec, model, imp } => AssertionKind::Refinement {
                        spec: self.expr(spec, sec)?,
                        model,
                        imp: self.expr(imp, sec)?,
                    },
                    AssertionKind::Property { process, property } => AssertionKind::Property {
                        process: self.expr(process, sec)?,
                        property: match property {
                            Property::HasTrace(m, t) => Property::HasTrace(m, self.expr(t, sec)?),
                            other => other,
                        },
                    },
                },
            }),
            // handled by the callers
            DeclKind::Timed(t) => DeclKind::Timed(t),
            other @ (DeclKind::Transparent(_)
            | DeclKind::External(_)
            | DeclKind::Invalid(_)
            | DeclKind::Module(_)
            | DeclKind::Instance(..)) => other,
        })
    }

    fn opt(&mut self, e: Option<Expr>, sec: Option<&Section>) -> LResult<Option<Expr>> {
        e.map(|e| self.expr(e, sec)).transpose()
    }

    fn bx(&mut self, e: Expr, sec: Option<&Section>) -> LResult<Box<Expr>> {
        Ok(Box::new(self.expr(e, sec)?))
    }

    fn all(&mut self, es: Vec<Expr>, sec: Option<&Section>) -> LResult<Vec<Expr>> {
        es.into_iter().map(|e| self.expr(e, sec)).collect()
    }

    fn stmts(&mut self, stmts: Vec<Stmt>, sec: Option<&Section>) -> LResult<Vec<Stmt>> {
        stmts
            .into_iter()
            .map(|s| {
                Ok(match s {
                    Stmt::Generator(p, e) => Stmt::Generator(p, self.expr(e, sec)?),
                    Stmt::Qualifier(e) => Stmt::Qualifier(self.expr(e, sec)?),
                })
            })
            .collect()
    }

    fn pairs(
        &mut self,
        pairs: Vec<(Expr, Expr)>,
        sec: Option<&Section>,
    ) -> LResult<Vec<(Expr, Expr)>> {
        pairs
            .into_iter()
            .map(|(a, b)| Ok((self.expr(a, sec)?, self.expr(b, sec)?)))
            .collect()
    }

    /// Lowers `e`, inside section `sec` if there is one.
    fn expr(&mut self, e: Expr, sec: Option<&Section>) -> LResult<Expr> {
        stacker::maybe_grow(
            super::parser::RED_ZONE,
            super::parser::STACK_PER_RECURSION,
            || self.expr_here(e, sec),
        )
    }

    fn expr_here(&mut self, e: Expr, sec: Option<&Section>) -> LResult<Expr> {
        use ExprKind as K;
        let Expr { kind, span, id } = e;
        let plain = |kind| Expr { kind, span, id };
        // The constructs a section changes.
        if let Some(s) = sec {
            match kind {
                K::Var(ref n) if &**n == "STOP" || (self.tstop && &**n == "TSTOP") => {
                    return Ok(self.timed(s, TimedForm::Stop, span))
                }
                K::Var(ref n) if &**n == "SKIP" || (self.tskip && &**n == "TSKIP") => {
                    return Ok(self.timed(s, TimedForm::Skip, span))
                }
                K::App(f, mut args)
                    if args.len() == 1 && is_var(&f, &["WAIT", "timed_priority"]) =>
                {
                    let arg = self.expr(args.remove(0), sec)?;
                    let form = if is_var(&f, &["WAIT"]) {
                        TimedForm::Wait(arg)
                    } else {
                        TimedForm::Priority(arg)
                    };
                    return Ok(self.timed(s, form, span));
                }
                K::Var(ref n) if matches!(&**n, "WAIT" | "timed_priority") => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Unsupported,
                        format!(
                            "`{n}` other than applied to one argument (`{n}(...)`) is outside \
                             weft's CSPm subset"
                        ),
                    ))
                }
                K::Link(..) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Eval,
                        "the linked parallel operator is not allowed in a timed section",
                    ))
                }
                K::Replicated(RepOp::Link(..), ..) => {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Eval,
                        "the replicated linked parallel operator is not allowed in a timed section",
                    ))
                }
                K::Prefix(ref p)
                    if p.fields.iter().any(|f| matches!(f, Field::NondetInput(..))) =>
                {
                    return Err(RawError::new(
                        span,
                        ErrorKind::Eval,
                        "a nondeterministic input `$` is not allowed in a timed section",
                    ))
                }
                kind => {
                    let lowered = plain(self.kind(kind, sec)?);
                    // The operators that synchronise on tock in a section (libcspm's
                    // `timedCSPSyncSet` and `maybeTimed`). Any new process operator must be
                    // placed here or in the untimed rest: the synchronising external choice
                    // `[+A+]` and interrupt `/+A+\` add tock to `A` (and are `TSTOP` when
                    // replicated over nothing); the exception `[|A|>`, `[>`, `;`, `|~|`, `\`
                    // and renaming are unchanged; a nondeterministic input `$` and the
                    // replicated linked parallel are errors in a section, as `[a <-> b]` is.
                    return Ok(match &lowered.kind {
                        K::Prefix(_) => self.timed(s, TimedForm::Prefix(lowered), span),
                        K::Proc(ProcOp::ExtChoice | ProcOp::Interleave | ProcOp::Interrupt, ..)
                        | K::Parallel(..)
                        | K::AlphaParallel(..)
                        | K::SetProc(SetProcOp::SyncExtChoice | SetProcOp::SyncInterrupt, ..)
                        | K::Guard(..) => self.timed(s, TimedForm::Operator(lowered), span),
                        K::Replicated(op, ..) if !matches!(op, RepOp::IntChoice) => {
                            self.timed(s, TimedForm::Operator(lowered), span)
                        }
                        _ => lowered,
                    });
                }
            }
        }
        Ok(plain(self.kind(kind, sec)?))
    }

    /// Lowers the parts of an expression of kind `kind`.
    fn kind(&mut self, kind: ExprKind, sec: Option<&Section>) -> LResult<ExprKind> {
        use ExprKind as K;
        Ok(match kind {
            k @ (K::Int(_) | K::Bool(_) | K::Char(_) | K::Str(_) | K::Var(_) | K::Wildcard) => k,
            K::Map(pairs) => K::Map(self.pairs(pairs, sec)?),
            K::Tuple(es) => K::Tuple(self.all(es, sec)?),
            K::Dot(a, b) => K::Dot(self.bx(*a, sec)?, self.bx(*b, sec)?),
            K::App(f, args) => K::App(self.bx(*f, sec)?, self.all(args, sec)?),
            K::Binary(op, a, b) => K::Binary(op, self.bx(*a, sec)?, self.bx(*b, sec)?),
            K::Unary(op, a) => K::Unary(op, self.bx(*a, sec)?),
            K::If(c, t, f) => K::If(self.bx(*c, sec)?, self.bx(*t, sec)?, self.bx(*f, sec)?),
            K::Let(l) => {
                let l = Arc::unwrap_or_clone(l);
                K::Let(Arc::new(LetExpr {
                    decls: self.let_decls(l.decls, sec)?,
                    body: self.expr(l.body, sec)?,
                }))
            }
            K::Lambda(l) => {
                let l = Arc::unwrap_or_clone(l);
                K::Lambda(Arc::new(LambdaExpr {
                    params: l.params,
                    body: self.expr(l.body, sec)?,
                }))
            }
            K::SeqLit(es) => K::SeqLit(self.all(es, sec)?),
            K::SeqComp(es, stmts) => K::SeqComp(self.all(es, sec)?, self.stmts(stmts, sec)?),
            K::SeqRange(a, b) => K::SeqRange(self.bx(*a, sec)?, self.bx(*b, sec)?),
            K::SetLit(es) => K::SetLit(self.all(es, sec)?),
            K::SetComp(es, stmts) => K::SetComp(self.all(es, sec)?, self.stmts(stmts, sec)?),
            K::SetRange(a, b) => K::SetRange(self.bx(*a, sec)?, self.bx(*b, sec)?),
            K::SetFrom(a) => K::SetFrom(self.bx(*a, sec)?),
            K::SeqFrom(a) => K::SeqFrom(self.bx(*a, sec)?),
            K::RangeComp(r, stmts) => K::RangeComp(self.bx(*r, sec)?, self.stmts(stmts, sec)?),
            K::Productions(es) => K::Productions(self.all(es, sec)?),
            K::ProductionsComp(es, stmts) => {
                K::ProductionsComp(self.all(es, sec)?, self.stmts(stmts, sec)?)
            }
            K::Prefix(p) => {
                let p = Arc::unwrap_or_clone(p);
                let fields = p
                    .fields
                    .into_iter()
                    .map(|f| {
                        Ok(match f {
                            Field::Output(e) => Field::Output(self.expr(e, sec)?),
                            Field::Input(pat, set) => Field::Input(pat, self.opt(set, sec)?),
                            Field::NondetInput(pat, set) => {
                                Field::NondetInput(pat, self.opt(set, sec)?)
                            }
                        })
                    })
                    .collect::<LResult<_>>()?;
                K::Prefix(Arc::new(PrefixExpr {
                    event: self.expr(p.event, sec)?,
                    fields,
                    body: self.expr(p.body, sec)?,
                }))
            }
            K::Guard(b, p) => K::Guard(self.bx(*b, sec)?, self.bx(*p, sec)?),
            K::Proc(op, a, b) => K::Proc(op, self.bx(*a, sec)?, self.bx(*b, sec)?),
            K::Hide(p, a) => K::Hide(self.bx(*p, sec)?, self.bx(*a, sec)?),
            K::Project(p, a) => K::Project(self.bx(*p, sec)?, self.bx(*a, sec)?),
            K::SetProc(op, p, a, q) => {
                K::SetProc(op, self.bx(*p, sec)?, self.bx(*a, sec)?, self.bx(*q, sec)?)
            }
            K::Parallel(p, a, q) => {
                K::Parallel(self.bx(*p, sec)?, self.bx(*a, sec)?, self.bx(*q, sec)?)
            }
            K::AlphaParallel(p, a, b, q) => K::AlphaParallel(
                self.bx(*p, sec)?,
                self.bx(*a, sec)?,
                self.bx(*b, sec)?,
                self.bx(*q, sec)?,
            ),
            K::Link(p, pairs, stmts, q) => K::Link(
                self.bx(*p, sec)?,
                self.pairs(pairs, sec)?,
                self.stmts(stmts, sec)?,
                self.bx(*q, sec)?,
            ),
            K::Rename(p, pairs, stmts) => K::Rename(
                self.bx(*p, sec)?,
                self.pairs(pairs, sec)?,
                self.stmts(stmts, sec)?,
            ),
            K::Replicated(op, stmts, body) => {
                let op = match op {
                    RepOp::Parallel(a) => RepOp::Parallel(self.bx(*a, sec)?),
                    RepOp::AlphaParallel(a) => RepOp::AlphaParallel(self.bx(*a, sec)?),
                    RepOp::SyncExtChoice(a) => RepOp::SyncExtChoice(self.bx(*a, sec)?),
                    RepOp::Link(pairs, stmts) => {
                        RepOp::Link(self.pairs(pairs, sec)?, self.stmts(stmts, sec)?)
                    }
                    other => other,
                };
                K::Replicated(op, self.stmts(stmts, sec)?, self.bx(*body, sec)?)
            }
            // made by this pass only
            k @ (K::TimedHeader(..) | K::Timed(_)) => k,
        })
    }
}

fn is_var(e: &Expr, names: &[&str]) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if names.contains(&&**n))
}

/// The names a declaration defines, as written (for the invalid declaration an error makes).
fn decl_names(kind: &DeclKind) -> Vec<Ident> {
    match kind {
        DeclKind::Function(name, _) => vec![name.clone()],
        DeclKind::PatBind(p, _) => {
            fn vars(p: &Pattern, out: &mut Vec<Ident>) {
                match &p.kind {
                    PatKind::Var(n) => out.push(Ident {
                        name: n.clone(),
                        span: p.span,
                    }),
                    PatKind::Tuple(ps) | PatKind::Dot(ps) | PatKind::Seq(ps) | PatKind::Set(ps) => {
                        ps.iter().for_each(|q| vars(q, out))
                    }
                    PatKind::Concat(a, b) | PatKind::Both(a, b) => {
                        vars(a, out);
                        vars(b, out);
                    }
                    PatKind::Wildcard | PatKind::Int(_) | PatKind::Bool(_) | PatKind::Char(_) => {}
                }
            }
            let mut out = Vec::new();
            vars(p, &mut out);
            out
        }
        DeclKind::Channel(names, _) => names.clone(),
        DeclKind::DataType(name, clauses) => std::iter::once(name.clone())
            .chain(clauses.iter().map(|c| c.name.clone()))
            .collect(),
        DeclKind::NameType(name, _) => vec![name.clone()],
        DeclKind::Timed(t) => section_names(&t.decls),
        DeclKind::Assert(_)
        | DeclKind::Transparent(_)
        | DeclKind::External(_)
        | DeclKind::Invalid(_)
        | DeclKind::Module(_)
        | DeclKind::Instance(..) => Vec::new(),
    }
}

/// The names the declarations of a section define.
fn section_names(decls: &[Decl]) -> Vec<Ident> {
    decls.iter().flat_map(|d| decl_names(&d.kind)).collect()
}

fn invalid(names: Vec<Ident>, assertion: bool, e: RawError, span: Span) -> Decl {
    Decl {
        kind: DeclKind::Invalid(InvalidDecl {
            names,
            assertion,
            kind: e.kind,
            error_span: e.span,
            message: e.message,
        }),
        span,
    }
}
