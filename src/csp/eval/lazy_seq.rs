//! Lazy infinite sequences: a sequence comprehension drawing from an infinite sequence,
//! `<x | x <- <0..>, x % 2 == 1>`, evaluated as FDR does (as Haskell's lists), one element
//! at a time as `head`, `tail`, `elem` and the patterns `<x>^xs` ask for them.
//!
//! Any generator of a comprehension may draw from an infinite sequence: the comprehension is
//! evaluated in order until the first such generator is reached; what was made before it is
//! the sequence's beginning, and the rest is the lazy sequence of that generator and the
//! statements after it, in the environment reached. Nothing after it is ever reached (in
//! `<(x, y) | x <- <1..3>, y <- <x..>>`, `x` stays 1), as in FDR.
//!
//! A lazy sequence ([`LazySeq`]) is the comprehension from its infinite generator on, the
//! environment it was reached in, the rest of its infinite source, and the elements already
//! made and not yet taken. Taking its first element ([`Evaluator::uncons`]) draws from the
//! source until a drawn element gives an output. A filter that no element passes would draw
//! forever (FDR does not return either): weft stops after [`MAX_DRAWS`] elements that give
//! nothing, with an error. Two lazy sequences are equal when they are the same comprehension
//! in the same environment at the same point of the same source (equal lists made another
//! way compare unequal: comparing infinite lists does not terminate in FDR).

use super::*;

/// Most elements of an infinite source drawn in a row without an output before
/// [`Evaluator::uncons`] gives up.
pub const MAX_DRAWS: u64 = 10_000_000;

/// A sequence comprehension from a generator that draws from an infinite sequence on: the
/// pattern of that generator, the comprehension's items and statements, and the place of
/// the generator among them. Its identity is the expression's node id and that place.
#[derive(Clone)]
pub struct LazyComp {
    id: (u32, u32),
    /// Where the comprehension is written.
    span: Span,
    pattern: Pattern,
    items: Vec<Expr>,
    stmts: Vec<Stmt>,
}

impl std::fmt::Debug for LazyComp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazyComp({}, {})", self.id.0, self.id.1)
    }
}

impl PartialEq for LazyComp {
    fn eq(&self, other: &LazyComp) -> bool {
        self.id == other.id
    }
}

impl Eq for LazyComp {}

impl PartialOrd for LazyComp {
    fn partial_cmp(&self, other: &LazyComp) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LazyComp {
    fn cmp(&self, other: &LazyComp) -> std::cmp::Ordering {
        self.id.cmp(&other.id)
    }
}

impl std::hash::Hash for LazyComp {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u32(self.id.0);
        state.write_u32(self.id.1);
    }
}

/// An infinite sequence computed on demand: `pending`, then the outputs of `comp` for each
/// element of `source` in turn.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LazySeq {
    comp: Arc<LazyComp>,
    /// The environment of the comprehension.
    env: Arc<[(Name, Binding)]>,
    /// The rest of the source (a [`Value::InfSeq`] or [`Value::LazySeq`]).
    source: Value,
    /// Outputs made and not yet taken.
    pending: SeqValue,
}

impl LazySeq {
    /// The outputs already made, which come first.
    pub fn pending(&self) -> &[Value] {
        &self.pending
    }
}

/// True for the infinite sequences (`<m..>` and lazy comprehensions).
pub(super) fn is_infinite_seq(v: &Value) -> bool {
    matches!(v, Value::InfSeq(..) | Value::LazySeq(_))
}

impl Evaluator {
    /// The value of the sequence comprehension `e`, `<items | stmts>`: a finite sequence,
    /// or, where a generator draws from an infinite sequence, what came before it followed
    /// by the lazy sequence from it on.
    pub(super) fn seq_comprehension(
        &self,
        e: &Expr,
        items: &[Expr],
        stmts: &[Stmt],
        env: &mut Env,
    ) -> EResult<Value> {
        let mut out = Vec::new();
        Ok(
            match self.comprehension_from((e.id, e.span), items, stmts, 0, env, &mut out)? {
                None => Value::Seq(out.into()),
                Some(lazy) => prefixed(out, lazy),
            },
        )
    }

    /// Adds to `out` the outputs of `<items | stmts[k..]>` in `env`, until a generator
    /// draws from an infinite sequence: then the lazy sequence from that generator on
    /// (what follows it is never reached).
    fn comprehension_from(
        &self,
        (id, span): (u32, Span),
        items: &[Expr],
        stmts: &[Stmt],
        k: usize,
        env: &mut Env,
        out: &mut Vec<Value>,
    ) -> EResult<Option<LazySeq>> {
        let Some(stmt) = stmts.get(k) else {
            for it in items {
                out.push(self.eval(it, env)?);
                if out.len() > MAX_COLLECTION {
                    return Err(self.err(span, ErrorKind::Limit, "sequence too long"));
                }
            }
            return Ok(None);
        };
        match stmt {
            Stmt::Qualifier(q) => {
                if self.eval_bool(q, env)? {
                    return self.comprehension_from((id, span), items, stmts, k + 1, env, out);
                }
            }
            Stmt::Generator(p, src) => {
                let source = self.eval(src, env)?;
                if is_infinite_seq(&source) {
                    let source = self.skip_filtered(p, &stmts[k + 1..], source, env)?;
                    return Ok(Some(LazySeq {
                        comp: Arc::new(LazyComp {
                            id: (id, k as u32),
                            span,
                            pattern: p.clone(),
                            items: items.to_vec(),
                            stmts: stmts.to_vec(),
                        }),
                        env: env.as_slice().into(),
                        source,
                        pending: SeqValue::empty(),
                    }));
                }
                let from = self.elements_of(source, src.span)?;
                for it in from.iter() {
                    let mark = env.len();
                    let lazy = if self.match_pattern(p, it, env)? {
                        self.comprehension_from((id, span), items, stmts, k + 1, env, out)?
                    } else {
                        None
                    };
                    env.truncate(mark);
                    if lazy.is_some() {
                        return Ok(lazy);
                    }
                }
            }
        }
        Ok(None)
    }

    /// Where the source is `<m..>` and the first statement after the generator `x <- <m..>`
    /// bounds `x` from below by a constant (`c < x`, `x > c`, `x >= c`, `c <= x`), starts the
    /// source at the bound: the integers before it would give nothing.
    fn skip_filtered(
        &self,
        p: &Pattern,
        rest: &[Stmt],
        source: Value,
        env: &Env,
    ) -> EResult<Value> {
        let (PatKind::Var(x), Value::InfSeq(prefix, from), Some(Stmt::Qualifier(q))) =
            (&p.kind, &source, rest.first())
        else {
            return Ok(source);
        };
        if !prefix.is_empty() || self.prog.globals.contains_key(x) {
            return Ok(source);
        }
        let ExprKind::Binary(op, a, b) = &q.kind else {
            return Ok(source);
        };
        let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if n == x);
        let constant = |e: &Expr| match &e.kind {
            ExprKind::Int(_) => true,
            ExprKind::Var(n) => n != x,
            _ => false,
        };
        // the bound `lo` with `x >= lo` (strict: `x > lo`)
        let (bound, strict) = match op {
            BinOp::Lt if constant(a) && is_x(b) => (a, true),
            BinOp::Le if constant(a) && is_x(b) => (a, false),
            BinOp::Gt if is_x(a) && constant(b) => (b, true),
            BinOp::Ge if is_x(a) && constant(b) => (b, false),
            _ => return Ok(source),
        };
        let Value::Int(lo) = self.eval(bound, &mut env.clone())? else {
            return Ok(source);
        };
        let lo = if strict { lo.saturating_add(1) } else { lo };
        Ok(Value::InfSeq(SeqValue::empty(), (*from).max(lo)))
    }

    /// The first element of a sequence and the rest, `None` for the empty sequence; for a
    /// lazy sequence, draws from its source until an element is made.
    pub(super) fn uncons(&self, v: &Value, span: Span) -> EResult<Option<(Value, Value)>> {
        self.uncons_within(v, span, &mut 0)
    }

    /// [`Evaluator::uncons`], counting the elements drawn from infinite sources in `draws`
    /// (an error once [`MAX_DRAWS`] have been drawn).
    pub(super) fn uncons_within(
        &self,
        v: &Value,
        span: Span,
        draws: &mut u64,
    ) -> EResult<Option<(Value, Value)>> {
        Ok(match v {
            Value::Seq(s) => s.first().map(|x| (x.clone(), Value::Seq(s.skip(1)))),
            Value::InfSeq(s, from) => Some(match s.first() {
                Some(x) => (x.clone(), Value::InfSeq(s.skip(1), *from)),
                None => (
                    Value::Int(*from),
                    Value::InfSeq(s.clone(), from.saturating_add(1)),
                ),
            }),
            Value::LazySeq(l) => {
                let mut source = l.source.clone();
                let mut pending = l.pending.clone();
                while pending.is_empty() {
                    if *draws >= MAX_DRAWS {
                        return Err(self.err(
                            span,
                            ErrorKind::Limit,
                            format!(
                                "no element of the lazy sequence in the first {MAX_DRAWS} \
                                 elements drawn from {}",
                                self.show(&l.source)
                            ),
                        ));
                    }
                    *draws += 1;
                    // up to MAX_DRAWS draws, each evaluating the comprehension: the run's
                    // limits are looked at as they go (fuzz14: 23 s under `--timeout 2`)
                    self.poll_stop(1)?;
                    let Some((x, next)) = self.uncons_within(&source, span, draws)? else {
                        return Ok(None);
                    };
                    match self.outputs(&l.comp, &l.env, &x)? {
                        Outputs::Finite(made) => pending = made,
                        // a later generator is infinite: the rest of this source is never
                        // reached
                        Outputs::Infinite(lazy) => return self.uncons_within(&lazy, span, draws),
                    }
                    source = next;
                }
                let rest = LazySeq {
                    comp: l.comp.clone(),
                    env: l.env.clone(),
                    source,
                    pending: pending.skip(1),
                };
                Some((pending[0].clone(), Value::LazySeq(Arc::new(rest))))
            }
            _ => None,
        })
    }

    /// The outputs of the comprehension for one element `x` of its source.
    fn outputs(&self, comp: &LazyComp, env: &[(Name, Binding)], x: &Value) -> EResult<Outputs> {
        let mut env: Env = env.to_vec();
        let mut out = Vec::new();
        if self.match_pattern(&comp.pattern, x, &mut env)? {
            let (at, next) = ((comp.id.0, comp.span), comp.id.1 as usize + 1);
            if let Some(lazy) =
                self.comprehension_from(at, &comp.items, &comp.stmts, next, &mut env, &mut out)?
            {
                return Ok(Outputs::Infinite(prefixed(out, lazy)));
            }
        }
        Ok(Outputs::Finite(out.into()))
    }

    /// Whether `x` is an element of the sequence `s`: for an infinite one, its elements are
    /// drawn until `x` is found (FDR does not return where it is not; weft gives up with an
    /// error after [`MAX_DRAWS`] elements).
    pub(super) fn seq_contains(&self, x: &Value, s: &Value, span: Span) -> EResult<Option<bool>> {
        Ok(Some(match s {
            Value::Seq(s) => s.contains(x),
            Value::InfSeq(s, from) => s.contains(x) || matches!(x, Value::Int(i) if *i >= *from),
            Value::LazySeq(l) => {
                if l.pending.contains(x) {
                    return Ok(Some(true));
                }
                let mut rest = s.clone();
                let mut draws = 0u64;
                loop {
                    draws += 1;
                    if draws > MAX_DRAWS {
                        return Err(self.err(
                            span,
                            ErrorKind::Limit,
                            format!(
                                "{} is not among the first {MAX_DRAWS} elements of the \
                                 infinite sequence {}",
                                self.show(x),
                                self.show(s)
                            ),
                        ));
                    }
                    match self.uncons_within(&rest, span, &mut draws)? {
                        None => break false,
                        Some((y, _)) if &y == x => break true,
                        Some((_, next)) => rest = next,
                    }
                }
            }
            _ => return Ok(None),
        }))
    }

    /// `s ^ l` of a finite sequence and a lazy one.
    pub(super) fn lazy_after(&self, s: &SeqValue, l: &LazySeq) -> Value {
        let mut pending = s.to_vec();
        pending.extend_from_slice(&l.pending);
        Value::LazySeq(Arc::new(LazySeq {
            comp: l.comp.clone(),
            env: l.env.clone(),
            source: l.source.clone(),
            pending: pending.into(),
        }))
    }
}

/// The outputs of a lazy comprehension for one element of its source.
enum Outputs {
    /// Finitely many.
    Finite(SeqValue),
    /// An infinite sequence (a later generator draws from one).
    Infinite(Value),
}

/// `out ^ lazy`.
fn prefixed(out: Vec<Value>, mut lazy: LazySeq) -> Value {
    if !out.is_empty() {
        let mut pending = out;
        pending.extend_from_slice(&lazy.pending);
        lazy.pending = pending.into();
    }
    Value::LazySeq(Arc::new(lazy))
}
