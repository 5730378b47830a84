//! The firing rule of `chase(P)`, applied on the fly as FDR applies it.
//!
//! Wherever `P` can perform a tau, `chase` makes it perform one: from the state `P`, it follows
//! the first tau (in the canonical order of moves) again and again until it reaches a state
//! with no tau, whose visible moves and ✓ are the moves of `chase(P)`; the target of a
//! visible move is chased in turn. A walk that comes back to a state it has passed is a tau
//! cycle: `chase(P)` then diverges (a tau to itself), as the explicit `chase` of
//! `reduce::compressions` makes such a state.
//!
//! Unlike the other compressions, `P` is never explored whole: only the states on the walks
//! are fired. This is what makes `chase` useful on a process whose taus are many but
//! confluent (an intruder deducing facts by hidden inferences, a puzzle's forced moves),
//! where the whole of `P` would not fit. As in FDR, which tau is followed is the system's
//! choice; it is the first in canonical order, so the result is the same in every run and at
//! every thread count. `chase` is valid in every model only when the taus it drops could not
//! change the behaviour (the user's claim in FDR, unchecked there and here).

#![forbid(unsafe_code)]

use std::collections::HashSet;

use crate::csp::error::{CspError, ErrorKind};
use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::labels::TICK;
use super::semantics::Semantics;
use super::terms::{term, Section};

/// Steps of a walk between two looks at the stop signal.
const STOP_LOOK_STEPS: usize = 256;

/// Longest walk whose states are searched linearly (most walks are a few steps long).
const SHORT_WALK: usize = 32;

/// The states a walk has passed: a short list, or a hash set once the walk is long.
#[derive(Default)]
struct Passed {
    short: Vec<TermId>,
    long: Option<HashSet<TermId>>,
}

impl Passed {
    fn insert(&mut self, id: TermId) {
        match &mut self.long {
            Some(set) => {
                set.insert(id);
            }
            None if self.short.len() < SHORT_WALK => self.short.push(id),
            None => {
                let mut set: HashSet<TermId> = self.short.drain(..).collect();
                set.insert(id);
                self.long = Some(set);
            }
        }
    }

    fn contains(&self, id: TermId) -> bool {
        match &self.long {
            Some(set) => set.contains(&id),
            None => self.short.contains(&id),
        }
    }

    fn len(&self) -> usize {
        self.long.as_ref().map_or(self.short.len(), HashSet::len)
    }
}

impl Semantics {
    /// The transitions of `chase(P)` (term `t`, `P` its argument).
    pub(super) fn fire_chase<'s>(
        &self,
        sec: &'s Section<'_>,
        t: TermRef<'s>,
        depth: u32,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let mut passed = Passed::default();
        let mut state = t.arg(0);
        let moves = loop {
            let moves = self.transitions(sec, state, depth)?;
            let Some(&(_, next)) = moves.iter().find(|&&(l, _)| l == TAU) else {
                break moves;
            };
            passed.insert(state.id());
            if passed.contains(next) {
                out.push((TAU, t.id()));
                return Ok(());
            }
            if passed.len().is_multiple_of(STOP_LOOK_STEPS) {
                if let Some(reason) = self.enc.stop.lock().reason() {
                    return Err(CspError::unpositioned(
                        ErrorKind::Stopped,
                        format!(
                            "stopped by {} while following the taus of a `chase`",
                            reason.describe()
                        ),
                    ));
                }
            }
            state = term(sec, next);
        };
        for &(l, next) in moves.iter() {
            if l == TICK {
                out.push((TICK, next));
            } else {
                out.push((l, sec.create(t.symbol(), &[term(sec, next)]).0.id()));
            }
        }
        Ok(())
    }
}
