//! Parsing of expressions and processes: operators by precedence, prefixes and their fields,
//! brackets, sequences, comprehensions and replicated operators.

use super::decls::push_decl;
use super::*;

impl Parser<'_> {
    pub(super) fn parse_expr(&mut self, min: u8) -> PResult<Expr> {
        let outer = self.nesting;
        self.nest()?;
        let e = stacker::maybe_grow(RED_ZONE, STACK_PER_RECURSION, || self.parse_expr_inner(min));
        self.nesting = outer;
        e
    }

    /// One level deeper (an operand, or an operator folded into the operand before it).
    fn nest(&mut self) -> PResult<()> {
        self.nesting += 1;
        if self.nesting > MAX_EXPR_DEPTH {
            return Err(RawError::new(
                self.span(),
                ErrorKind::Limit,
                format!("expression nested more than {MAX_EXPR_DEPTH} levels deep"),
            ));
        }
        Ok(())
    }

    pub(super) fn parse_expr_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.parse_unary()?;
        loop {
            if self.at_boundary() {
                break;
            }
            let tok = self.peek().clone();
            let (level, right_min): (u8, u8) = match &tok {
                Tok::Interleave => (L_INTERLEAVE, L_INTERLEAVE + 1),
                Tok::LPar | Tok::LBrack => (L_PAR, L_PAR + 1),
                Tok::IntChoice => (L_INTCHOICE, L_INTCHOICE + 1),
                Tok::ExtChoice => (L_EXTCHOICE, L_EXTCHOICE + 1),
                Tok::Interrupt => (L_INTERRUPT, L_INTERRUPT + 1),
                Tok::Timeout => (L_TIMEOUT, L_TIMEOUT + 1),
                Tok::Semi => (L_SEQ, L_SEQ + 1),
                // Hiding binds loosest on its left (`P [| A |] Q \ B` hides in the whole
                // parallel, FDR's table, issue 11), while its set operand ends at the next
                // process operator (`STOP \ {c} ||| STOP` is `(STOP \ {c}) ||| STOP`, as
                // libcspm's `hide_parsing` tests read it): a set is never a process.
                Tok::Backslash | Tok::Project => (L_HIDE, L_FIELD),
                Tok::LSyncExt => (L_EXTCHOICE, L_EXTCHOICE + 1),
                Tok::LSyncInt => (L_INTERRUPT, L_INTERRUPT + 1),
                Tok::Arrow | Tok::Amp => (L_PREFIX, L_PREFIX),
                Tok::Question | Tok::Bang | Tok::Dollar => (L_FIELD, L_PREFIX),
                Tok::Dot => (L_DOT, L_DOT),
                Tok::Or => (L_OR, L_OR + 1),
                Tok::And => (L_AND, L_AND + 1),
                Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::LtEq | Tok::GtEq => (L_CMP, L_CMP + 1),
                Tok::Gt if !self.in_sequence() => (L_CMP, L_CMP + 1),
                Tok::Plus | Tok::Minus => (L_ADD, L_ADD + 1),
                Tok::Star | Tok::Slash | Tok::Percent => (L_MUL, L_MUL + 1),
                Tok::Caret => (L_CAT, L_CAT + 1),
                Tok::LParen | Tok::LRename => (L_APP, L_APP),
                Tok::AtAt => (L_BOTH, L_BOTH + 1),
                Tok::ColonColon => {
                    return Err(unsupported(
                        self.span(),
                        "a qualified name or type annotation `::`",
                    ))
                }
                Tok::Unsupported(what) => {
                    return Err(unsupported(self.span(), &format!("the operator {what}")))
                }
                _ => break,
            };
            if level < min {
                break;
            }
            // The operator makes the expression read so far one level deeper.
            self.nest()?;
            let op_span = self.span();
            lhs = match tok {
                Tok::Interleave
                | Tok::IntChoice
                | Tok::ExtChoice
                | Tok::Interrupt
                | Tok::Timeout
                | Tok::Semi => {
                    self.bump();
                    let op = match tok {
                        Tok::Interleave => ProcOp::Interleave,
                        Tok::IntChoice => ProcOp::IntChoice,
                        Tok::ExtChoice => ProcOp::ExtChoice,
                        Tok::Interrupt => ProcOp::Interrupt,
                        Tok::Timeout => ProcOp::Timeout,
                        _ => ProcOp::Seq,
                    };
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Proc(op, Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::LPar => {
                    self.bump();
                    self.open_bracket();
                    let a = self.parse_expr(0)?;
                    self.close_bracket();
                    let exception = self.eat(&Tok::RException);
                    if !exception {
                        self.expect(&Tok::RPar, "`|]` or `|>` closing `[|`")?;
                    }
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    let (lhs, a, rhs) = (Box::new(lhs), Box::new(a), Box::new(rhs));
                    let kind = if exception {
                        ExprKind::SetProc(SetProcOp::Exception, lhs, a, rhs)
                    } else {
                        ExprKind::Parallel(lhs, a, rhs)
                    };
                    let e = self.mk(kind, span);
                    self.check_nonassoc_parallel(op_span)?;
                    e
                }
                Tok::LSyncExt | Tok::LSyncInt => {
                    self.bump();
                    self.open_bracket();
                    let a = self.parse_expr(0)?;
                    self.close_bracket();
                    let op = if tok == Tok::LSyncExt {
                        self.expect(&Tok::RSyncExt, "`+]` closing `[+`")?;
                        SetProcOp::SyncExtChoice
                    } else {
                        self.expect(&Tok::RSyncInt, "`+\\` closing `/+`")?;
                        SetProcOp::SyncInterrupt
                    };
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    let kind = ExprKind::SetProc(op, Box::new(lhs), Box::new(a), Box::new(rhs));
                    self.mk(kind, span)
                }
                Tok::Project => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Project(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::LBrack => {
                    self.bump();
                    self.open_bracket();
                    let first = self.parse_expr(0)?;
                    let e = if self.eat(&Tok::Parallel) {
                        let b = self.parse_expr(0)?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing `[A || B]`")?;
                        let rhs = self.parse_expr(right_min)?;
                        let span = lhs.span.to(rhs.span);
                        self.mk(
                            ExprKind::AlphaParallel(
                                Box::new(lhs),
                                Box::new(first),
                                Box::new(b),
                                Box::new(rhs),
                            ),
                            span,
                        )
                    } else if self.peek() == &Tok::Tie {
                        let (ties, stmts) = self.parse_pairs(first, &Tok::Tie, "`<->`")?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing a link parallel `[a <-> b]`")?;
                        let rhs = self.parse_expr(right_min)?;
                        let span = lhs.span.to(rhs.span);
                        self.mk(
                            ExprKind::Link(Box::new(lhs), ties, stmts, Box::new(rhs)),
                            span,
                        )
                    } else {
                        return Err(self.unexpected("`||` or `<->` in a parallel operator"));
                    };
                    self.check_nonassoc_parallel(op_span)?;
                    e
                }
                Tok::Backslash => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Hide(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::Arrow => {
                    self.bump();
                    let body = self.parse_expr(L_PREFIX)?;
                    let span = lhs.span.to(body.span);
                    self.mk(
                        ExprKind::Prefix(Arc::new(PrefixExpr {
                            event: lhs,
                            fields: Vec::new(),
                            body,
                        })),
                        span,
                    )
                }
                Tok::Question | Tok::Bang | Tok::Dollar => {
                    let mut fields = Vec::new();
                    loop {
                        match self.peek() {
                            Tok::Bang => {
                                self.bump();
                                fields.push(Field::Output(self.parse_field_expr(L_DOT)?));
                            }
                            Tok::Question | Tok::Dollar => {
                                let at = self.span();
                                let nondet = self.bump().tok == Tok::Dollar;
                                if nondet && fields.iter().any(|f| matches!(f, Field::Input(..))) {
                                    return Err(RawError::new(
                                        at,
                                        ErrorKind::Syntax,
                                        "a nondeterministic input `$` cannot follow an input `?` \
                                         (FDR chooses every `$` field before the `?` fields)",
                                    ));
                                }
                                let p = self.parse_field_expr(L_DOT)?;
                                let pat = to_pattern(&p)?;
                                let restriction = if self.eat(&Tok::Colon) {
                                    Some(self.parse_field_expr(L_OR)?)
                                } else {
                                    None
                                };
                                fields.push(if nondet {
                                    Field::NondetInput(pat, restriction)
                                } else {
                                    Field::Input(pat, restriction)
                                });
                            }
                            _ => break,
                        }
                    }
                    self.expect(&Tok::Arrow, "`->` after the prefix's fields")?;
                    let body = self.parse_expr(L_PREFIX)?;
                    let span = lhs.span.to(body.span);
                    self.mk(
                        ExprKind::Prefix(Arc::new(PrefixExpr {
                            event: lhs,
                            fields,
                            body,
                        })),
                        span,
                    )
                }
                Tok::Amp => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Guard(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::Dot => {
                    self.bump();
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    self.mk(ExprKind::Dot(Box::new(lhs), Box::new(rhs)), span)
                }
                Tok::LParen => {
                    self.bump();
                    self.open_bracket();
                    let mut args = Vec::new();
                    if self.peek() != &Tok::RParen {
                        loop {
                            args.push(self.parse_expr(0)?);
                            if !self.eat(&Tok::Comma) {
                                break;
                            }
                        }
                    }
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`,` or `)` in an argument list")?;
                    let span = lhs.span.to(end);
                    self.mk(ExprKind::App(Box::new(lhs), args), span)
                }
                Tok::LRename => {
                    self.bump();
                    self.open_bracket();
                    let (pairs, stmts) = if self.peek() == &Tok::RRename {
                        (Vec::new(), Vec::new())
                    } else {
                        let first = self.parse_expr(0)?;
                        self.parse_pairs(first, &Tok::DrawFrom, "`<-`")?
                    };
                    self.close_bracket();
                    let end = self.expect(&Tok::RRename, "`]]` closing a renaming")?;
                    let span = lhs.span.to(end);
                    self.mk(ExprKind::Rename(Box::new(lhs), pairs, stmts), span)
                }
                _ => {
                    // binary value operators
                    self.bump();
                    let op = match tok {
                        Tok::Or => BinOp::Or,
                        Tok::And => BinOp::And,
                        Tok::EqEq => BinOp::Eq,
                        Tok::NotEq => BinOp::Ne,
                        Tok::Lt => BinOp::Lt,
                        Tok::Gt => BinOp::Gt,
                        Tok::LtEq => BinOp::Le,
                        Tok::GtEq => BinOp::Ge,
                        Tok::Plus => BinOp::Add,
                        Tok::Minus => BinOp::Sub,
                        Tok::Star => BinOp::Mul,
                        Tok::Slash => BinOp::Div,
                        Tok::Percent => BinOp::Mod,
                        Tok::AtAt => BinOp::Both,
                        _ => BinOp::Concat,
                    };
                    let rhs = self.parse_expr(right_min)?;
                    let span = lhs.span.to(rhs.span);
                    let e = self.mk(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
                    if level == L_CMP && !self.at_boundary() {
                        let next_cmp = match self.peek() {
                            Tok::EqEq | Tok::NotEq | Tok::Lt | Tok::LtEq | Tok::GtEq => true,
                            Tok::Gt => !self.in_sequence(),
                            _ => false,
                        };
                        if next_cmp {
                            return Err(RawError::new(
                                self.span(),
                                ErrorKind::Syntax,
                                "comparison operators do not associate: add parentheses",
                            ));
                        }
                    }
                    e
                }
            };
        }
        Ok(lhs)
    }

    pub(super) fn check_nonassoc_parallel(&self, first_op: Span) -> PResult<()> {
        if !self.at_boundary() && matches!(self.peek(), Tok::LPar | Tok::LBrack) {
            let loc = self.span();
            let _ = first_op;
            return Err(RawError::new(
                loc,
                ErrorKind::Syntax,
                "parallel operators `[| |]`, `[ || ]` and `[ <-> ]` do not associate: add parentheses",
            ));
        }
        Ok(())
    }

    /// `a op b, c op d | stmts` after the first expression `a` (renaming and linking).
    pub(super) fn parse_pairs(
        &mut self,
        first: Expr,
        sep: &Tok,
        sep_text: &str,
    ) -> PResult<PairsAndStmts> {
        let mut pairs = Vec::new();
        let mut left = first;
        loop {
            self.expect(sep, sep_text)?;
            let right = self.parse_expr(0)?;
            pairs.push((left, right));
            if self.eat(&Tok::Comma) {
                left = self.parse_expr(0)?;
            } else {
                break;
            }
        }
        let stmts = if self.eat(&Tok::Pipe) {
            self.parse_stmts()?
        } else {
            Vec::new()
        };
        Ok((pairs, stmts))
    }

    pub(super) fn parse_stmts(&mut self) -> PResult<Vec<Stmt>> {
        let mut stmts = Vec::new();
        loop {
            let e = self.parse_expr(0)?;
            if self.eat(&Tok::DrawFrom) || self.eat(&Tok::Colon) {
                let pat = to_pattern(&e)?;
                let src = self.parse_expr(0)?;
                stmts.push(Stmt::Generator(pat, src));
            } else {
                stmts.push(Stmt::Qualifier(e));
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(stmts)
    }

    pub(super) fn parse_unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let tok = self.peek().clone();
        match tok {
            Tok::Int(v) => {
                self.bump();
                Ok(self.mk(ExprKind::Int(v), start))
            }
            Tok::True | Tok::False => {
                self.bump();
                Ok(self.mk(ExprKind::Bool(tok == Tok::True), start))
            }
            Tok::Ident(name) => {
                self.bump();
                // a qualified name `M::x` (a module member)
                let mut name = name;
                let mut span = start;
                while self.peek() == &Tok::ColonColon {
                    let Tok::Ident(member) = self.tokens[self.pos + 1].tok.clone() else {
                        break;
                    };
                    self.bump();
                    span = span.to(self.bump().span);
                    name = format!("{name}::{member}");
                }
                Ok(self.mk(ExprKind::Var(name.into()), span))
            }
            Tok::Underscore => {
                self.bump();
                Ok(self.mk(ExprKind::Wildcard, start))
            }
            Tok::Minus => {
                self.bump();
                let e = self.parse_expr(L_MUL)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Neg, Box::new(e)), span))
            }
            Tok::Not => {
                self.bump();
                let e = self.parse_expr(L_CMP)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Not, Box::new(e)), span))
            }
            Tok::Hash => {
                self.bump();
                let e = self.parse_expr(L_CAT)?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Len, Box::new(e)), span))
            }
            Tok::If => {
                self.bump();
                let c = self.parse_expr(0)?;
                self.expect(&Tok::Then, "`then`")?;
                let t = self.parse_expr(0)?;
                self.expect(&Tok::Else, "`else`")?;
                let e = self.parse_expr(self.body_min())?;
                let span = start.to(e.span);
                Ok(self.mk(ExprKind::If(Box::new(c), Box::new(t), Box::new(e)), span))
            }
            Tok::Let => {
                self.bump();
                let mut decls: Vec<Decl> = Vec::new();
                loop {
                    if self.at_annotation() {
                        self.skip_annotation(AnnotationScope::Let(start))?;
                    } else {
                        let d = self.parse_decl(false)?;
                        push_decl(&mut decls, d);
                    }
                    if self.peek() == &Tok::Within {
                        break;
                    }
                    if !self.at_boundary() {
                        return Err(self.unexpected("a new line or `within`"));
                    }
                }
                self.expect(&Tok::Within, "`within`")?;
                let body = self.parse_expr(self.body_min())?;
                let span = start.to(body.span);
                Ok(self.mk(ExprKind::Let(Arc::new(LetExpr { decls, body })), span))
            }
            Tok::Backslash => {
                self.bump();
                let mut params = Vec::new();
                loop {
                    let p = self.parse_expr(0)?;
                    params.push(to_pattern(&p)?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::At, "`@` in a lambda `\\ x @ e`")?;
                let body = self.parse_expr(self.body_min())?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Lambda(Arc::new(LambdaExpr { params, body })),
                    span,
                ))
            }
            Tok::LParen => {
                self.bump();
                if self.peek() == &Tok::Pipe && self.tokens[self.pos].span.lo == start.hi {
                    return self.parse_map(start);
                }
                self.open_bracket();
                let first = self.parse_expr(0)?;
                let e = if self.eat(&Tok::Comma) {
                    let mut items = vec![first];
                    loop {
                        items.push(self.parse_expr(0)?);
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`,` or `)` in a tuple")?;
                    self.mk(ExprKind::Tuple(items), start.to(end))
                } else {
                    self.close_bracket();
                    let end = self.expect(&Tok::RParen, "`)`")?;
                    let mut e = first;
                    e.span = start.to(end);
                    e
                };
                Ok(e)
            }
            Tok::LBrace => {
                self.bump();
                self.open_bracket();
                if self.peek() == &Tok::RBrace {
                    self.close_bracket();
                    let end = self.bump().span;
                    return Ok(self.mk(ExprKind::SetLit(Vec::new()), start.to(end)));
                }
                let first = self.parse_expr(0)?;
                let kind = if self.peek() == &Tok::DotDot {
                    let dots = self.bump().span;
                    let from = first.span;
                    let (range, end) = if matches!(self.peek(), Tok::RBrace | Tok::Pipe) {
                        (ExprKind::SetFrom(Box::new(first)), dots)
                    } else {
                        let hi = self.parse_expr(0)?;
                        let end = hi.span;
                        (ExprKind::SetRange(Box::new(first), Box::new(hi)), end)
                    };
                    self.range_comp(range, from.to(end))?
                } else {
                    let items = self.comma_list(first)?;
                    if self.eat(&Tok::Pipe) {
                        ExprKind::SetComp(items, self.parse_stmts()?)
                    } else {
                        ExprKind::SetLit(items)
                    }
                };
                self.close_bracket();
                let end = self.expect(&Tok::RBrace, "`,`, `|` or `}` in a set")?;
                Ok(self.mk(kind, start.to(end)))
            }
            Tok::LPipeBrace => {
                self.bump();
                // `{||}`: the empty set of events (RoboChart's generator writes it for an
                // empty synchronisation set, and FDR reads it).
                if self.peek() == &Tok::RPipeBrace {
                    let end = self.bump().span;
                    return Ok(self.mk(ExprKind::Productions(Vec::new()), start.to(end)));
                }
                self.open_bracket();
                let first = self.parse_expr(0)?;
                let items = self.comma_list(first)?;
                let kind = if self.eat(&Tok::Pipe) {
                    ExprKind::ProductionsComp(items, self.parse_stmts()?)
                } else {
                    ExprKind::Productions(items)
                };
                self.close_bracket();
                let end = self.expect(&Tok::RPipeBrace, "`,`, `|` or `|}` in `{| ... |}`")?;
                Ok(self.mk(kind, start.to(end)))
            }
            Tok::EmptySeq => {
                self.bump();
                Ok(self.mk(ExprKind::SeqLit(Vec::new()), start))
            }
            Tok::Lt => {
                self.bump();
                if let Some(top) = self.seq_stack.last_mut() {
                    top.0 += 1;
                }
                let r = self.parse_seq_body(start);
                if let Some(top) = self.seq_stack.last_mut() {
                    top.0 = top.0.saturating_sub(1);
                }
                r
            }
            Tok::ExtChoice | Tok::IntChoice | Tok::Interleave | Tok::Semi | Tok::Parallel => {
                self.bump();
                let stmts = self.parse_stmts()?;
                self.expect(&Tok::At, "`@` in a replicated operator")?;
                let op = match tok {
                    Tok::ExtChoice => RepOp::ExtChoice,
                    Tok::IntChoice => RepOp::IntChoice,
                    Tok::Interleave => RepOp::Interleave,
                    Tok::Semi => RepOp::Seq,
                    _ => {
                        self.open_bracket();
                        self.expect(&Tok::LBrack, "`[` (the alphabet in `|| x:S @ [A] P`)")?;
                        let a = self.parse_expr(0)?;
                        self.close_bracket();
                        self.expect(&Tok::RBrack, "`]` closing the alphabet")?;
                        RepOp::AlphaParallel(Box::new(a))
                    }
                };
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(ExprKind::Replicated(op, stmts, Box::new(body)), span))
            }
            Tok::LPar => {
                self.bump();
                self.open_bracket();
                let a = self.parse_expr(0)?;
                self.close_bracket();
                self.expect(&Tok::RPar, "`|]` closing `[|`")?;
                let stmts = self.parse_stmts()?;
                self.expect(&Tok::At, "`@` in a replicated parallel")?;
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Replicated(RepOp::Parallel(Box::new(a)), stmts, Box::new(body)),
                    span,
                ))
            }
            Tok::LSyncExt => {
                self.bump();
                self.open_bracket();
                let a = self.parse_expr(0)?;
                self.close_bracket();
                self.expect(&Tok::RSyncExt, "`+]` closing `[+`")?;
                let stmts = self.parse_stmts()?;
                self.expect(
                    &Tok::At,
                    "`@` in a replicated synchronising external choice",
                )?;
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Replicated(RepOp::SyncExtChoice(Box::new(a)), stmts, Box::new(body)),
                    span,
                ))
            }
            Tok::LBrack => {
                self.bump();
                self.open_bracket();
                let first = self.parse_expr(0)?;
                let (ties, tie_stmts) = self.parse_pairs(first, &Tok::Tie, "`<->`")?;
                self.close_bracket();
                self.expect(&Tok::RBrack, "`]` closing a link parallel `[a <-> b]`")?;
                let stmts = self.parse_stmts()?;
                self.expect(&Tok::At, "`@` in a replicated link parallel")?;
                let body = self.parse_expr(0)?;
                let span = start.to(body.span);
                Ok(self.mk(
                    ExprKind::Replicated(RepOp::Link(ties, tie_stmts), stmts, Box::new(body)),
                    span,
                ))
            }
            Tok::Str(text) => {
                self.bump();
                Ok(self.mk(ExprKind::Str(text.as_str().into()), start))
            }
            Tok::Char(c) => {
                self.bump();
                Ok(self.mk(ExprKind::Char(c), start))
            }
            Tok::Unsupported(what) => Err(unsupported(start, &format!("the operator {what}"))),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// After a range `m..n` or `m..` in a set or sequence: the range itself, or, before `|`,
    /// a comprehension of ranges (`{x..y | (x, y) <- S}`).
    fn range_comp(&mut self, range: ExprKind, span: Span) -> PResult<ExprKind> {
        if !self.eat(&Tok::Pipe) {
            return Ok(range);
        }
        let range = self.mk(range, span);
        Ok(ExprKind::RangeComp(Box::new(range), self.parse_stmts()?))
    }

    pub(super) fn comma_list(&mut self, first: Expr) -> PResult<Vec<Expr>> {
        let mut items = vec![first];
        while self.eat(&Tok::Comma) {
            items.push(self.parse_expr(0)?);
        }
        Ok(items)
    }

    /// After `<`: elements, a comprehension or a range, and the closing `>`.
    pub(super) fn parse_seq_body(&mut self, start: Span) -> PResult<Expr> {
        let first = self.parse_expr(0)?;
        let kind = if self.peek() == &Tok::DotDot {
            let dots = self.bump().span;
            let from = first.span;
            let (range, end) = if matches!(self.peek(), Tok::Gt | Tok::Pipe) {
                (ExprKind::SeqFrom(Box::new(first)), dots)
            } else {
                let hi = self.parse_expr(0)?;
                let end = hi.span;
                (ExprKind::SeqRange(Box::new(first), Box::new(hi)), end)
            };
            self.range_comp(range, from.to(end))?
        } else {
            let items = self.comma_list(first)?;
            if self.eat(&Tok::Pipe) {
                ExprKind::SeqComp(items, self.parse_stmts()?)
            } else {
                ExprKind::SeqLit(items)
            }
        };
        if self.peek() != &Tok::Gt {
            return Err(self.unexpected("`,`, `|` or `>` in a sequence"));
        }
        let end = self.bump().span;
        Ok(self.mk(kind, start.to(end)))
    }

    /// After `(` and an adjacent `|`: the pairs `k => v` of a map literal and the closing
    /// `|)`.
    fn parse_map(&mut self, start: Span) -> PResult<Expr> {
        self.bump();
        self.open_bracket();
        let mut pairs = Vec::new();
        if self.peek() != &Tok::Pipe {
            loop {
                let k = self.parse_expr(0)?;
                self.expect(&Tok::FatArrow, "`=>` between a key and its value in a map")?;
                let v = self.parse_expr(0)?;
                pairs.push((k, v));
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.close_bracket();
        self.expect(&Tok::Pipe, "`,` or `|)` in a map `(| k => v, ... |)`")?;
        let end = self.span();
        self.expect(&Tok::RParen, "`)` closing a map `(| ... |)`")?;
        Ok(self.mk(ExprKind::Map(pairs), start.to(end)))
    }
}
