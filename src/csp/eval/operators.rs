//! Operators: binary operators on values, and the order of values.

use super::*;

impl Evaluator {
    pub(super) fn binary(
        &self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        env: &mut Env,
        span: Span,
    ) -> EResult<Value> {
        match op {
            BinOp::And => {
                return Ok(Value::Bool(
                    self.eval_bool(a, env)? && self.eval_bool(b, env)?,
                ))
            }
            BinOp::Or => {
                return Ok(Value::Bool(
                    self.eval_bool(a, env)? || self.eval_bool(b, env)?,
                ))
            }
            _ => {}
        }
        let va = self.eval(a, env)?;
        let vb = self.eval(b, env)?;
        let overflow = || self.err(span, ErrorKind::Eval, "integer overflow");
        let ints = |x: &Value, y: &Value| -> EResult<(i64, i64)> {
            match (x, y) {
                (Value::Int(p), Value::Int(q)) => Ok((*p, *q)),
                _ => Err(self.err(
                    span,
                    ErrorKind::Type,
                    format!(
                        "`{}` needs integers, found {} and {}",
                        op.text(),
                        self.show(x),
                        self.show(y)
                    ),
                )),
            }
        };
        Ok(match op {
            BinOp::Add => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_add(y).ok_or_else(overflow)?)
            }
            BinOp::Sub => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_sub(y).ok_or_else(overflow)?)
            }
            BinOp::Mul => {
                let (x, y) = ints(&va, &vb)?;
                Value::Int(x.checked_mul(y).ok_or_else(overflow)?)
            }
            BinOp::Div | BinOp::Mod => {
                let (x, y) = ints(&va, &vb)?;
                if y == 0 {
                    return Err(self.err(span, ErrorKind::Eval, "division by zero"));
                }
                // Haskell's `div` and `mod` (as libcspm): round towards negative infinity.
                let q = x.checked_div(y).ok_or_else(overflow)?;
                let r = x - q * y;
                let (q, r) = if r != 0 && ((r < 0) != (y < 0)) {
                    (q - 1, r + y)
                } else {
                    (q, r)
                };
                Value::Int(if op == BinOp::Div { q } else { r })
            }
            BinOp::Eq | BinOp::Ne => {
                self.require_complete(&va, a.span)?;
                self.require_complete(&vb, b.span)?;
                if self.kind_of(&va) != self.kind_of(&vb) {
                    return Err(self.err(
                        span,
                        ErrorKind::Type,
                        format!(
                            "cannot compare {} with {}: they have different types",
                            self.show(&va),
                            self.show(&vb)
                        ),
                    ));
                }
                for v in [&va, &vb] {
                    if !v.is_comparable() {
                        return Err(self.err(
                            span,
                            ErrorKind::Type,
                            format!(
                                "{} cannot be compared (processes and functions have no equality)",
                                self.show(v)
                            ),
                        ));
                    }
                }
                let equal = if matches!(va, Value::Infinite(_)) || matches!(vb, Value::Infinite(_))
                {
                    self.infinite_sets_equal(&va, &vb, span)?
                } else {
                    va == vb
                };
                Value::Bool(equal == (op == BinOp::Eq))
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                let (x, y) = if matches!(op, BinOp::Gt | BinOp::Ge) {
                    (&vb, &va)
                } else {
                    (&va, &vb)
                };
                let strict = matches!(op, BinOp::Lt | BinOp::Gt);
                Value::Bool(self.less(x, y, strict, span)?)
            }
            BinOp::Both => {
                return Err(self.err(
                    span,
                    ErrorKind::Syntax,
                    "`@@` joins two patterns; it is not an operator on values",
                ))
            }
            BinOp::Concat => match (&va, &vb) {
                (Value::Seq(x), Value::Seq(y)) if x.len() + y.len() > MAX_COLLECTION => {
                    return Err(self.err(span, ErrorKind::Limit, "sequence too long"))
                }
                (Value::Seq(x), Value::Seq(y)) => {
                    // Built with looks at the run's limits: a sequence doubled at each step
                    // (`P(s) = a -> P(s ^ s)`) reaches 10^8 values in one concatenation.
                    let v =
                        self.collect_polled(x.iter().chain(y.iter()).cloned(), x.len() + y.len())?;
                    Value::Seq(v.into())
                }
                (Value::Seq(x), Value::InfSeq(y, from)) => {
                    let mut v = x.to_vec();
                    v.extend_from_slice(y);
                    Value::inf_seq(v, *from)
                }
                (Value::Seq(x), Value::LazySeq(l)) => self.lazy_after(x, l),
                // nothing comes after an infinite sequence
                (
                    Value::InfSeq(..) | Value::LazySeq(_),
                    Value::Seq(_) | Value::InfSeq(..) | Value::LazySeq(_),
                ) => va.clone(),
                _ => {
                    return Err(self.err(
                        span,
                        ErrorKind::Type,
                        format!(
                            "`^` needs sequences, found {} and {}",
                            self.show(&va),
                            self.show(&vb)
                        ),
                    ))
                }
            },
            BinOp::And | BinOp::Or => return Err(self.internal("and/or evaluated twice")),
        })
    }

    /// CSPm's ordering: integers and characters numerically, sets by inclusion, sequences by
    /// prefix, maps by their pairs.
    pub(super) fn less(&self, x: &Value, y: &Value, strict: bool, span: Span) -> EResult<bool> {
        Ok(match (x, y) {
            (Value::Int(a), Value::Int(b)) => {
                if strict {
                    a < b
                } else {
                    a <= b
                }
            }
            (Value::Set(a), Value::Set(b)) => {
                let sub = a.iter().all(|v| b.binary_search(v).is_ok());
                sub && (!strict || a.len() < b.len())
            }
            (Value::Set(_) | Value::Infinite(_), Value::Set(_) | Value::Infinite(_)) => {
                self.infinite_subset(x, y, strict, span)?
            }
            (Value::Seq(a), Value::Seq(b)) => {
                let prefix = a.len() <= b.len() && a[..] == b[..a.len()];
                prefix && (!strict || a.len() < b.len())
            }
            (Value::Char(a), Value::Char(b)) => {
                if strict {
                    a < b
                } else {
                    a <= b
                }
            }
            // maps as libcspm orders them: by their pairs in key order, lexicographically
            (Value::Map(a), Value::Map(b)) => {
                if strict {
                    a < b
                } else {
                    a <= b
                }
            }
            (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
                for (p, q) in a.iter().zip(b.iter()) {
                    if p != q {
                        return self.less(p, q, true, span);
                    }
                }
                !strict
            }
            _ => {
                return Err(self.err(
                    span,
                    ErrorKind::Type,
                    format!("{} and {} cannot be ordered", self.show(x), self.show(y)),
                ))
            }
        })
    }
}
