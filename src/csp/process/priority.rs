//! The firing rules of the exception operator and of priority.
//!
//! - `[|A|>(k, P, Q)`, FDR's `P [| A |> Q`: `P`'s tau keeps the operator; `P`'s ✓ ends it;
//!   an event of `A` that `P` does is seen and hands over to `Q` (made active); `P`'s other
//!   events keep the operator (Roscoe, *Understanding Concurrent Systems*, the throw
//!   operator `P Θ_A Q`).
//! - `prio(k, P)`: `P`'s moves, except those whose label is beaten by the label of another
//!   move of the same state. A move is never beaten by itself, and a beaten move is removed
//!   whatever the beating move's target. The orders (FDR4's definitions):
//!   - `prioritise(P, <A1, ..., An>)`: an event of `Ai` beats those of `Aj` for `i < j`;
//!     tau and ✓ have the priority of `A1` (so they beat the events of `A2`, ..., `An`, and
//!     nothing beats them or the events of `A1`); an event in no `Ai` is beaten by nothing
//!     and beats nothing. `timed_priority(P)` is `prioritise(P, <{}, {tock}>)`.
//!   - `prioritisepo(P, A, R, M)`: `x` beats `y` when `(x, y)` is in the transitive closure
//!     of `R`; tau and ✓ beat every event of `A` outside `M` (libcspm shows the order of
//!     `prioritisepo(STOP, {a, b, c}, {(a, b), (b, c)}, {a})` as `{(b, c), (τ, b), (τ, c),
//!     (✓, b), (✓, c), (a, b), (a, c)}`).
//!   - `:[tau priority over]: A` of an assertion: tau beats every event of `A`.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::Arc;

use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::labels::{LabelSet, Labels, TICK};
use super::semantics::Semantics;
use super::terms::{int_arg, term, Op, Section};
use crate::csp::error::{CspError, ErrorKind};
use crate::csp::value::PriorityOrder;

/// A priority order over labels.
pub(crate) enum CompiledPriority {
    /// The sets of `prioritise`, highest first.
    Levels(Vec<LabelSet>),
    /// `prioritisepo`: the pairs (beating, beaten) of the closed order, and the labels tau
    /// and ✓ beat.
    Partial {
        beats: HashSet<(Label, Label)>,
        below_tau: HashSet<Label>,
    },
    /// Tau beats the labels of the set.
    TauOver(LabelSet),
}

impl CompiledPriority {
    /// `order` over the labels of `labels`.
    pub(crate) fn new(
        labels: &Arc<Labels>,
        order: &PriorityOrder,
    ) -> Result<CompiledPriority, CspError> {
        Ok(match order {
            PriorityOrder::Levels(sets) => CompiledPriority::Levels(
                sets.iter()
                    .map(|s| LabelSet::of_events(labels, s))
                    .collect::<Result<_, _>>()?,
            ),
            PriorityOrder::Partial {
                events,
                order,
                maximal,
            } => {
                let beats = order
                    .iter()
                    .map(|(x, y)| Ok((labels.label_of(x)?, labels.label_of(y)?)))
                    .collect::<Result<_, CspError>>()?;
                let mut below_tau = HashSet::new();
                for e in events.iter() {
                    if maximal.binary_search(e).is_err() {
                        below_tau.insert(labels.label_of(e)?);
                    }
                }
                CompiledPriority::Partial { beats, below_tau }
            }
            PriorityOrder::TauOver(set) => {
                CompiledPriority::TauOver(LabelSet::of_events(labels, set)?)
            }
        })
    }

    /// The rank of `l` among the levels (0 the highest), if it has one.
    fn rank(levels: &[LabelSet], l: Label) -> Option<usize> {
        if l == TAU || l == TICK {
            return Some(0);
        }
        levels.iter().position(|s| s.contains(l))
    }

    /// True if a move labelled `m` beats one labelled `l` (in the same state).
    pub(crate) fn beats(&self, m: Label, l: Label) -> bool {
        if m == l {
            return false;
        }
        match self {
            CompiledPriority::Levels(levels) => {
                match (Self::rank(levels, m), Self::rank(levels, l)) {
                    (Some(a), Some(b)) => a < b,
                    _ => false,
                }
            }
            CompiledPriority::Partial { beats, below_tau } => {
                if m == TAU || m == TICK {
                    below_tau.contains(&l)
                } else {
                    beats.contains(&(m, l))
                }
            }
            CompiledPriority::TauOver(set) => m == TAU && l != TAU && set.contains(l),
        }
    }
}

impl Semantics {
    /// The transitions of an exception or priority term `t` (operator `op`).
    pub(super) fn fire_priority_ops<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        op: Op,
        depth: u32,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let enc = &self.enc;
        let with = |i: usize, a: TermRef<'_>| -> TermId {
            let mut args: Vec<TermRef<'_>> = t.args().collect();
            args[i] = a;
            sec.create(t.symbol(), &args).0.id()
        };
        match op {
            Op::Exception => {
                let set = enc.sets.get(int_arg(t, 0));
                for &(l, next) in self.transitions(sec, t.arg(1), depth)?.iter() {
                    if l == TICK {
                        out.push((TICK, next));
                    } else if l != TAU && set.1.contains(l) {
                        out.push((l, enc.activate_lazy(sec, t.arg(2))?.id()));
                    } else {
                        out.push((l, with(1, term(sec, next))));
                    }
                }
            }
            Op::Prio => {
                let order = enc.priorities.get(int_arg(t, 0));
                let moves = self.transitions(sec, t.arg(1), depth)?;
                let mut offered: Vec<Label> = moves.iter().map(|m| m.0).collect();
                offered.dedup();
                for &(l, next) in moves.iter() {
                    if offered.iter().any(|&m| order.1.beats(m, l)) {
                        continue;
                    }
                    if l == TICK {
                        out.push((TICK, next));
                    } else {
                        out.push((l, with(1, term(sec, next))));
                    }
                }
            }
            _ => {
                return Err(CspError::unpositioned(
                    ErrorKind::Eval,
                    "internal error: not an exception or priority operator",
                ))
            }
        }
        Ok(())
    }
}
