//! The priority built-ins `prioritise(P, <A1, ..., An>)` and `prioritisepo(P, A, R, M)`: they
//! check their arguments and make the process under its order (the firing rule is in
//! `csp::process::priority`).

use super::*;

impl BuiltinCall<'_> {
    /// Argument `i` as a finite set of events (`which` names it in errors).
    fn finite_events(&self, i: usize, which: &str) -> EResult<EventSet> {
        let set = self.script.value_event_set(&self.args[i], self.span)?;
        if matches!(set.last(), Some(Value::Infinite(_))) {
            return Err(self.err(
                ErrorKind::Unsupported,
                format!(
                    "`{}` over events that are not enumerated ({which}) is outside weft's CSPm \
                     subset",
                    self.b.name()
                ),
            ));
        }
        Ok(set)
    }
}

/// `prioritise(P, <A1, ..., An>)`.
pub(super) fn prioritise(c: &BuiltinCall) -> EResult<Value> {
    let what = "a process and a sequence of sets of events";
    let Value::Proc(p) = &c.args[0] else {
        return c.bad(what);
    };
    let Value::Seq(levels) = &c.args[1] else {
        return c.bad(what);
    };
    if levels.is_empty() {
        return Err(c.err(
            ErrorKind::Eval,
            "`prioritise` needs at least one set of events in its sequence",
        ));
    }
    let sets = levels
        .iter()
        .map(|v| c.script.value_event_set(v, c.span))
        .collect::<EResult<Vec<EventSet>>>()?;
    let order = PriorityOrder::Levels(sets);
    Ok(Value::Proc(Proc::new(ProcNode::Prioritise(
        p.clone(),
        Arc::new(order),
    ))))
}

/// `prioritisepo(P, A, R, M)`: `R` a set of pairs `(x, y)` of events of `A` (`x` beats
/// `y`), closed transitively here, which must be a strict partial order; `M` the events of
/// `A` as high as tau and ✓.
pub(super) fn prioritise_po(c: &BuiltinCall) -> EResult<Value> {
    let what = "a process, a set of events, a set of pairs of events and a set of events";
    let Value::Proc(p) = &c.args[0] else {
        return c.bad(what);
    };
    let events = c.finite_events(1, "its second argument")?;
    let maximal = c.finite_events(3, "its fourth argument")?;
    let index = |v: &Value| events.binary_search(v).ok();
    for m in maximal.iter() {
        if index(m).is_none() {
            return Err(c.err(
                ErrorKind::Eval,
                format!(
                    "`prioritisepo`: the maximal event {} is not in the events ordered",
                    c.script.show(m)
                ),
            ));
        }
    }
    let Value::Set(pairs) = &c.args[2] else {
        return c.bad(what);
    };
    let n = events.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for pair in pairs.iter() {
        let (x, y) = match pair {
            Value::Tuple(t) if t.len() == 2 => (&t[0], &t[1]),
            _ => return c.bad(what),
        };
        match (index(x), index(y)) {
            (Some(i), Some(j)) => succ[i].push(j),
            _ => {
                return Err(c.err(
                    ErrorKind::Eval,
                    format!(
                        "`prioritisepo`: the pair {} orders an event that is not in the events \
                         ordered",
                        c.script.show(pair)
                    ),
                ))
            }
        }
    }
    // The transitive closure, by a search from each event.
    let mut order: Vec<(Value, Value)> = Vec::new();
    for start in 0..n {
        let mut seen = vec![false; n];
        let mut stack: Vec<usize> = succ[start].clone();
        while let Some(j) = stack.pop() {
            if seen[j] {
                continue;
            }
            seen[j] = true;
            stack.extend(succ[j].iter().copied());
        }
        if seen[start] {
            return Err(c.err(
                ErrorKind::Eval,
                format!(
                    "`prioritisepo`: the order is not a partial order: {} beats itself \
                     through a cycle",
                    c.script.show(&events[start])
                ),
            ));
        }
        for (j, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
            order.push((events[start].clone(), events[j].clone()));
        }
    }
    if let Some((x, m)) = order.iter().find(|(_, y)| maximal.binary_search(y).is_ok()) {
        return Err(c.err(
            ErrorKind::Eval,
            format!(
                "`prioritisepo`: the event {} is given as maximal, but {} beats it",
                c.script.show(m),
                c.script.show(x)
            ),
        ));
    }
    order.sort_unstable();
    let order = PriorityOrder::Partial {
        events,
        order: order.into(),
        maximal,
    };
    Ok(Value::Proc(Proc::new(ProcNode::Prioritise(
        p.clone(),
        Arc::new(order),
    ))))
}
