//! Assertions: the evaluated form of each `assert` of the script.

use super::*;

impl Evaluator {
    /// Evaluates the processes (and trace) of an assertion.
    pub(super) fn assertion_check(&self, a: &AssertDecl) -> EResult<AssertionCheck> {
        let mut env = Env::new();
        let proc_of = |e: &Expr, env: &mut Env| self.eval_proc(e, env);
        // `:[tau priority over]: A`: the checked process with tau beating the events of `A`.
        let tau_priority = match &a.tau_priority {
            Some(set) => Some(self.event_set(set, &mut env)?),
            None => None,
        };
        let checked = |p: Proc| match &tau_priority {
            Some(set) => Proc::new(ProcNode::Prioritise(
                p,
                Arc::new(PriorityOrder::TauOver(set.clone())),
            )),
            None => p,
        };
        Ok(match &a.kind {
            AssertionKind::Refinement { spec, model, imp } => AssertionCheck::Refinement {
                spec: proc_of(spec, &mut env)?,
                model: *model,
                imp: checked(proc_of(imp, &mut env)?),
            },
            AssertionKind::Property { process, property } => {
                let process = checked(proc_of(process, &mut env)?);
                match property {
                    Property::DeadlockFree(model) => AssertionCheck::DeadlockFree {
                        process,
                        model: *model,
                    },
                    Property::DivergenceFree => AssertionCheck::DivergenceFree { process },
                    Property::Deterministic(model) => AssertionCheck::Deterministic {
                        process,
                        model: *model,
                    },
                    Property::HasTrace(model, t) => {
                        let tv = self.eval(t, &mut env)?;
                        let Value::Seq(items) = &tv else {
                            return Err(self.err(
                                t.span,
                                ErrorKind::Type,
                                format!(
                                    "`:[has trace]` needs a sequence of events, found {}",
                                    self.show(&tv)
                                ),
                            ));
                        };
                        for ev in items.iter() {
                            if !self.validate_event(ev.atoms(), t.span)? {
                                return Err(self.err(
                                    t.span,
                                    ErrorKind::Type,
                                    format!("{} is not an event", self.show(ev)),
                                ));
                            }
                        }
                        AssertionCheck::HasTrace {
                            process,
                            model: *model,
                            trace: items.to_vec(),
                        }
                    }
                }
            }
        })
    }
}
