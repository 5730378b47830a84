//! The process operators FDR4 has beyond the classic ones: the exception `P [| A |> Q`, the
//! synchronising external choice `P [+ A +] Q` and interrupt `P /+ A +\ Q`, projection
//! `P |\ A`, the replicated link parallel, and the event set `Events` they use.

use super::*;

impl Evaluator {
    /// `Events`: every event of the script (a description where a channel's events are not
    /// enumerated). Made once and shared: every use of `Events` is then the same set, so
    /// process terms holding it compare in one step (two equal sets made apart compare
    /// element by element, and a term met once per event of a large alphabet made exploring
    /// quadratic in it).
    pub(super) fn events_value(&self) -> EResult<Value> {
        if let Some(e) = &self.tables.events_error {
            return Err(e.clone());
        }
        if let Some(v) = self.memo.events.get() {
            return Ok(v.clone());
        }
        let v = self.make_events_value()?;
        Ok(self.memo.events.get_or_init(|| v).clone())
    }

    fn make_events_value(&self) -> EResult<Value> {
        let t = self.events()?;
        let mut parts = vec![Value::set_from(t.events.clone())];
        parts.extend(
            t.lazy_channels
                .iter()
                .map(|&c| InfSet::Productions(Value::Chan(c)).value()),
        );
        self.set_union(parts)
    }

    /// The relation of a link parallel `[a <-> b, ... | stmts]`: each event linked to one
    /// event only.
    pub(super) fn link_relation(
        &self,
        pairs: &[(Expr, Expr)],
        stmts: &[Stmt],
        env: &mut Env,
        span: Span,
    ) -> EResult<EventRelation> {
        let rel = self.relation(pairs, stmts, env, span)?;
        for side in 0..2 {
            let mut seen: Vec<&Value> = rel
                .iter()
                .map(|(x, y)| if side == 0 { x } else { y })
                .collect();
            seen.sort_unstable();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(self.err(
                    span,
                    ErrorKind::Eval,
                    format!(
                        "the link parallel links {} to more than one event",
                        self.show(w[0])
                    ),
                ));
            }
        }
        Ok(rel)
    }

    /// `P |\ A`: `P` with every event outside `A` hidden (FDR's projection,
    /// `P \ diff(Events, A)`).
    pub(super) fn project(&self, p: &Expr, a: &Expr, env: &mut Env) -> EResult<Value> {
        let pp = self.eval_proc(p, env)?;
        let kept = self.eval(a, env)?;
        // Checks that `A` is a set of events.
        self.value_event_set(&kept, a.span)?;
        let hidden = self.set_diff(&self.events_value()?, &kept)?;
        let hidden = self.value_event_set(&hidden, a.span)?;
        Ok(Value::Proc(Proc::new(ProcNode::Hide(pp, hidden))))
    }

    /// `P [| A |> Q`, `P [+ A +] Q` and `P /+ A +\ Q`.
    pub(super) fn set_proc(
        &self,
        op: SetProcOp,
        p: &Expr,
        a: &Expr,
        q: &Expr,
        env: &mut Env,
    ) -> EResult<Value> {
        let pp = self.eval_proc(p, env)?;
        let set = self.event_set(a, env)?;
        let pq = self.eval_proc(q, env)?;
        let node = match op {
            SetProcOp::Exception => ProcNode::Exception(pp, set, pq),
            SetProcOp::SyncExtChoice => {
                ProcNode::Timed(Arc::new(TimedProc::SyncChoice(set, vec![pp, pq])))
            }
            SetProcOp::SyncInterrupt => {
                ProcNode::Timed(Arc::new(TimedProc::SyncInterrupt(pp, set, pq)))
            }
        };
        Ok(Value::Proc(Proc::new(node)))
    }

    /// `[a <-> b | tie_stmts] x : <x1, ..., xn> @ P(x)`: `P(x1) [l(x1)] (P(x2) [l(x2)] (...
    /// P(xn)))`, where `l(xi)` is the link relation evaluated with the binding of `xi` (it
    /// links `P(xi)` to the process after it); the replicated statements must draw from a
    /// sequence (the order of the chain).
    pub(super) fn replicated_link(
        &self,
        pairs: &[(Expr, Expr)],
        tie_stmts: &[Stmt],
        stmts: &[Stmt],
        body: &Expr,
        env: &mut Env,
        span: Span,
    ) -> EResult<Value> {
        if let Some(Stmt::Generator(_, src)) = stmts.first() {
            if let Value::Set(_) = self.eval(src, &mut env.clone())? {
                return Err(self.err(
                    src.span,
                    ErrorKind::Type,
                    "a replicated link parallel draws from a sequence, not a set",
                ));
            }
        }
        // The relation of the last process links it to nothing, and is never used (nor its
        // errors reported: it may name events past the end of a channel's type).
        let mut chain: Vec<(Proc, EResult<EventRelation>)> = Vec::new();
        self.for_each(stmts, env, &mut |s, env| {
            let p = s.eval_proc(body, env)?;
            let rel = s.link_relation(pairs, tie_stmts, env, span);
            chain.push((p, rel));
            Ok(())
        })?;
        let Some((last, _)) = chain.pop() else {
            return Err(self.err(
                span,
                ErrorKind::Eval,
                "replicated link parallel over an empty sequence",
            ));
        };
        let mut acc = last;
        while let Some((p, rel)) = chain.pop() {
            acc = Proc::new(ProcNode::Link(p, rel?, acc));
        }
        Ok(Value::Proc(acc))
    }
}
