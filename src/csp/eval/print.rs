//! Printing of values and process terms as CSPm text.

use super::*;

impl Evaluator {
    pub(super) fn write_value(&self, s: &mut String, v: &Value) {
        use std::fmt::Write;
        match v {
            Value::Int(i) => {
                let _ = write!(s, "{i}");
            }
            Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            Value::Char(c) => {
                let _ = write!(s, "'{}'", c.escape_default());
            }
            Value::Seq(items)
                if !items.is_empty() && items.iter().all(|c| matches!(c, Value::Char(_))) =>
            {
                s.push('"');
                for c in items.iter() {
                    if let Value::Char(c) = c {
                        let _ = write!(s, "{}", c.escape_default());
                    }
                }
                s.push('"');
            }
            Value::Map(pairs) => {
                s.push_str("(|");
                for (i, (k, v)) in pairs.iter().enumerate() {
                    s.push_str(if i > 0 { ", " } else { " " });
                    self.write_value(s, k);
                    s.push_str(" => ");
                    self.write_value(s, v);
                }
                s.push_str(if pairs.is_empty() { "|)" } else { " |)" });
            }
            Value::Tuple(items) => {
                s.push('(');
                self.write_list(s, items);
                s.push(')');
            }
            Value::Set(items) => {
                s.push('{');
                self.write_list(s, items);
                s.push('}');
            }
            Value::Seq(items) => {
                s.push('<');
                self.write_list(s, items);
                s.push('>');
            }
            Value::InfSeq(items, from) => {
                s.push('<');
                for x in items.iter() {
                    self.write_value(s, x);
                    s.push_str(", ");
                }
                let _ = write!(s, "{from}..>");
            }
            Value::LazySeq(l) => {
                s.push('<');
                for x in l.pending() {
                    self.write_value(s, x);
                    s.push_str(", ");
                }
                s.push_str("...>");
            }
            Value::Chan(c) => s.push_str(
                self.prog
                    .channels
                    .get(*c as usize)
                    .map_or("?", |d| &*d.name),
            ),
            Value::Ctor(k) => {
                s.push_str(self.prog.ctors.get(*k as usize).map_or("?", |d| &*d.name))
            }
            Value::Dot(atoms) => {
                for (i, a) in atoms.iter().enumerate() {
                    if i > 0 {
                        s.push('.');
                    }
                    let nested = matches!(a, Value::Dot(_));
                    if nested {
                        s.push('(');
                    }
                    self.write_value(s, a);
                    if nested {
                        s.push(')');
                    }
                }
            }
            Value::Infinite(set) => self.write_infinite(s, set),
            Value::Func(f) => {
                s.push_str(&self.target_name(&f.target));
                for g in &f.applied {
                    s.push('(');
                    self.write_list(s, g);
                    s.push(')');
                }
            }
            Value::Proc(p) => self.write_proc(s, p, 0),
        }
    }

    pub(super) fn write_list(&self, s: &mut String, items: &[Value]) {
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            self.write_value(s, v);
        }
    }

    pub(super) fn write_set(&self, s: &mut String, set: &[Value]) {
        if matches!(set.last(), Some(Value::Infinite(_))) {
            return self.write_described_events(s, set);
        }
        s.push('{');
        self.write_list(s, set);
        s.push('}');
    }

    pub(super) fn write_proc(&self, s: &mut String, p: &Proc, depth: usize) {
        if depth > 50 {
            s.push('…');
            return;
        }
        let sub = |s: &mut String, q: &Proc| {
            // An operand of a timed parallel is printed as written (`csp::eval::timed`).
            let q = match q.node() {
                ProcNode::Timed(t) => match &**t {
                    TimedProc::Operand(_, inner) => inner,
                    _ => q,
                },
                _ => q,
            };
            let simple = matches!(
                q.node(),
                ProcNode::Stop | ProcNode::Skip | ProcNode::Call(_)
            );
            if !simple {
                s.push('(');
            }
            self.write_proc(s, q, depth + 1);
            if !simple {
                s.push(')');
            }
        };
        let join = |s: &mut String, ps: &[Proc], op: &str| {
            for (i, q) in ps.iter().enumerate() {
                if i > 0 {
                    s.push_str(op);
                }
                sub(s, q);
            }
        };
        match p.node() {
            ProcNode::Stop => s.push_str("STOP"),
            ProcNode::Skip => s.push_str("SKIP"),
            ProcNode::Div => s.push_str("DIV"),
            ProcNode::Call(c) => {
                s.push_str(&self.target_name(&c.target));
                if !c.args.is_empty() {
                    s.push('(');
                    self.write_list(s, &c.args);
                    s.push(')');
                }
            }
            ProcNode::Prefix(pc) => {
                let text = self
                    .prog
                    .prefixes
                    .get(&pc.expr)
                    .map(|(_, _, span)| collapse_ws(self.sources.text(*span)))
                    .unwrap_or_default();
                s.push_str(&text);
                let free = self.prog.prefixes.get(&pc.expr).map(|p| p.1.clone());
                if let Some(free) = free {
                    let vals: Vec<String> = free
                        .iter()
                        .zip(pc.captured.iter())
                        .filter_map(|(n, b)| match b {
                            Binding::Value(v) => Some(format!("{n}={}", self.show(v))),
                            Binding::Let(_) => None,
                        })
                        .collect();
                    if !vals.is_empty() {
                        s.push_str(" with ");
                        s.push_str(&vals.join(", "));
                    }
                }
                if let Some(choice) = &pc.choice {
                    let vals: Vec<String> = choice.iter().map(|v| self.show(v)).collect();
                    s.push_str(" choosing $ ");
                    s.push_str(&vals.join(", "));
                }
            }
            ProcNode::ExtChoice(ps) => join(s, ps, " [] "),
            ProcNode::IntChoice(ps) => join(s, ps, " |~| "),
            ProcNode::Interleave(ps) => join(s, ps, " ||| "),
            ProcNode::Parallel(a, ps) => {
                let mut op = String::from(" [| ");
                self.write_set(&mut op, a);
                op.push_str(" |] ");
                join(s, ps, &op);
            }
            ProcNode::AlphaParallel(parts) => {
                s.push_str("|| ");
                for (i, (a, q)) in parts.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push('[');
                    self.write_set(s, a);
                    s.push_str("] ");
                    sub(s, q);
                }
            }
            ProcNode::Seq(a, b) => {
                sub(s, a);
                s.push_str(" ; ");
                sub(s, b);
            }
            ProcNode::Hide(a, set) => {
                sub(s, a);
                s.push_str(" \\ ");
                self.write_set(s, set);
            }
            ProcNode::Rename(a, rel) | ProcNode::Link(a, rel, _) => {
                let link = matches!(p.node(), ProcNode::Link(..));
                sub(s, a);
                s.push_str(if link { " [" } else { " [[" });
                for (i, (x, y)) in rel.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.write_value(s, x);
                    s.push_str(if link { " <-> " } else { " <- " });
                    self.write_value(s, y);
                }
                s.push_str(if link { "] " } else { "]]" });
                if let ProcNode::Link(_, _, b) = p.node() {
                    sub(s, b);
                }
            }
            ProcNode::Interrupt(a, b) => {
                sub(s, a);
                s.push_str(" /\\ ");
                sub(s, b);
            }
            ProcNode::Timeout(a, b) => {
                sub(s, a);
                s.push_str(" [> ");
                sub(s, b);
            }
            ProcNode::Timed(t) => self.write_timed(s, t, depth),
            ProcNode::Compressed(c, q) => {
                s.push_str(c.name());
                s.push('(');
                self.write_proc(s, q, depth + 1);
                s.push(')');
            }
            ProcNode::Exception(a, set, b) => {
                sub(s, a);
                s.push_str(" [| ");
                self.write_set(s, set);
                s.push_str(" |> ");
                sub(s, b);
            }
            ProcNode::Prioritise(a, order) => self.write_priority(s, a, order, depth),
        }
    }
}

impl Evaluator {
    /// Writes `P` under a priority order as the call that made it (`prioritise(P, <...>)`,
    /// `prioritisepo(P, A, R, M)`), or, for an assertion's `:[tau priority over]: A`, as
    /// `P` with that option.
    fn write_priority(&self, s: &mut String, p: &Proc, order: &PriorityOrder, depth: usize) {
        match order {
            PriorityOrder::Levels(sets) => {
                s.push_str("prioritise(");
                self.write_proc(s, p, depth + 1);
                s.push_str(", <");
                for (i, set) in sets.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    self.write_set(s, set);
                }
                s.push_str(">)");
            }
            PriorityOrder::Partial {
                events,
                order,
                maximal,
            } => {
                s.push_str("prioritisepo(");
                self.write_proc(s, p, depth + 1);
                s.push_str(", ");
                self.write_set(s, events);
                s.push_str(", {");
                for (i, (x, y)) in order.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push('(');
                    self.write_value(s, x);
                    s.push_str(", ");
                    self.write_value(s, y);
                    s.push(')');
                }
                s.push_str("}, ");
                self.write_set(s, maximal);
                s.push(')');
            }
            PriorityOrder::TauOver(set) => {
                s.push('(');
                self.write_proc(s, p, depth + 1);
                s.push_str(") :[tau priority over]: ");
                self.write_set(s, set);
            }
        }
    }
}
