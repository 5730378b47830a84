//! Lazy infinite sequences: a sequence comprehension drawing from an infinite sequence,
//! `<x | x <- <0..>, x % 2 == 1>`, evaluated as FDR does, one element at a time as `head`,
//! `tail` and the patterns `<x>^xs` ask for them.
//!
//! A lazy sequence ([`LazySeq`]) is the comprehension, the environment it was written in,
//! the rest of its infinite source, and the elements already made from the source's last
//! element and not yet taken. Taking its first element ([`Evaluator::uncons`]) draws from the
//! source until a drawn element gives an output. A filter that no element passes would draw
//! forever (FDR does not return either): weft stops after [`MAX_DRAWS`] elements that give
//! nothing, with an error. Two lazy sequences are equal when they are the same comprehension
//! in the same environment at the same point of the same source (equal lists made another
//! way compare unequal: comparing infinite lists does not terminate in FDR).

use super::*;

/// Most elements of an infinite source drawn in a row without an output before
/// [`Evaluator::uncons`] gives up.
pub const MAX_DRAWS: u64 = 10_000_000;

/// A sequence comprehension whose first statement draws from an infinite sequence: the
/// pattern of that generator, the comprehension's items, and its other statements. Its
/// identity is the expression's node id.
#[derive(Clone)]
pub struct LazyComp {
    id: u32,
    pattern: Pattern,
    items: Vec<Expr>,
    rest: Vec<Stmt>,
}

impl std::fmt::Debug for LazyComp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazyComp({})", self.id)
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
        state.write_u32(self.id);
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
    /// `<items | p <- source, rest>` where `source` is infinite: the lazy sequence.
    pub(super) fn lazy_comprehension(
        &self,
        e: &Expr,
        p: &Pattern,
        items: &[Expr],
        rest: &[Stmt],
        source: Value,
        env: &Env,
    ) -> EResult<Value> {
        let source = self.skip_filtered(p, rest, source, env)?;
        Ok(Value::LazySeq(Arc::new(LazySeq {
            comp: Arc::new(LazyComp {
                id: e.id,
                pattern: p.clone(),
                items: items.to_vec(),
                rest: rest.to_vec(),
            }),
            env: env.as_slice().into(),
            source,
            pending: SeqValue::empty(),
        })))
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
                let mut draws = 0u64;
                while pending.is_empty() {
                    if draws >= MAX_DRAWS {
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
                    draws += 1;
                    let Some((x, next)) = self.uncons(&source, span)? else {
                        return Ok(None);
                    };
                    pending = self.outputs(&l.comp, &l.env, &x)?;
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
    fn outputs(&self, comp: &LazyComp, env: &[(Name, Binding)], x: &Value) -> EResult<SeqValue> {
        let mut env: Env = env.to_vec();
        let mut out = Vec::new();
        if self.match_pattern(&comp.pattern, x, &mut env)? {
            self.for_each(&comp.rest, &mut env, &mut |s, env| {
                for it in &comp.items {
                    out.push(s.eval(it, env)?);
                }
                Ok(())
            })?;
        }
        Ok(out.into())
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
