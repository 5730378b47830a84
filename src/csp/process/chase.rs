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
//! are fired, and only as far as the walk needs. This is what makes `chase` useful on a
//! process whose taus are many but confluent (an intruder deducing facts by hidden
//! inferences, a puzzle's forced moves), where the whole of `P` would not fit. Where a state
//! is a network (the usual case, a hidden parallel), the walk holds it as the network's leaves
//! and asks the network for its first tau only (`chase_net.rs`): no term is built for the
//! states it passes, and none is kept. Other states are fired as terms
//! ([`Semantics::transitions`]).
//!
//! As in FDR, which tau is followed is the system's choice; it is the first in canonical
//! order, so the result is the same in every run and at every thread count. `chase` is valid
//! in every model only when the taus it drops could not change the behaviour (the user's claim
//! in FDR, unchecked there and here).

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::hash::Hash;

use crate::csp::error::{CspError, ErrorKind};
use crate::term::{TermId, TermRef};
use crate::ts::{Label, TAU};

use super::chase_net::{NetStep, NetWalk};
use super::labels::TICK;
use super::semantics::Semantics;
use super::terms::{term, Section, MAX_NESTING};

/// Steps of a walk between two looks at the stop signal.
const STOP_LOOK_STEPS: usize = 256;

/// Longest walk whose states are searched linearly (most walks are a few steps long).
const SHORT_WALK: usize = 32;

/// The most states a walk fires as terms, after a network could not tell its first tau,
/// before it tries a network again (the count doubles from 1 at each such state).
const MOST_TERM_STEPS: u32 = 64;

/// The states a walk has passed: a short list, or a hash set once the walk is long.
struct Passed<K> {
    short: Vec<K>,
    long: Option<HashSet<K>>,
}

impl<K> Default for Passed<K> {
    fn default() -> Self {
        Passed {
            short: Vec::new(),
            long: None,
        }
    }
}

impl<K: Eq + Hash> Passed<K> {
    fn insert(&mut self, key: K) {
        match &mut self.long {
            Some(set) => {
                set.insert(key);
            }
            None if self.short.len() < SHORT_WALK => self.short.push(key),
            None => {
                let mut set: HashSet<K> = self.short.drain(..).collect();
                set.insert(key);
                self.long = Some(set);
            }
        }
    }

    fn contains(&self, key: &K) -> bool {
        match &self.long {
            Some(set) => set.contains(key),
            None => self.short.contains(key),
        }
    }
}

/// Where a walk ends.
enum Walked {
    /// At a state with no tau, with its transitions.
    Stable(Vec<(Label, TermId)>),
    /// Back at a state it had passed: a tau cycle.
    Diverges,
}

/// The bookkeeping of one walk.
#[derive(Default)]
struct Walk {
    /// The states passed as terms. (The states passed as a network's leaves are kept by
    /// their network's part of the walk: a walk that comes back to a state comes back to it
    /// as a term, or within one network, see [`Semantics::chase_walk`].)
    terms: Passed<TermId>,
    steps: usize,
    /// States still to fire as terms before trying a network again.
    term_steps: u32,
    /// The next value of `term_steps` after a network could not tell its first tau.
    backoff: u32,
}

impl Walk {
    /// Counts a step; looks at the stop signal now and then.
    fn step(&mut self, sem: &Semantics) -> Result<(), CspError> {
        self.steps += 1;
        if self.steps.is_multiple_of(STOP_LOOK_STEPS) {
            if let Some(reason) = sem.enc.stop.lock().reason() {
                return Err(CspError::unpositioned(
                    ErrorKind::Stopped,
                    format!(
                        "stopped by {} while following the taus of a `chase`",
                        reason.describe()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Records the term `state` as passed; true if it had been.
    fn came_back(&mut self, state: TermId) -> bool {
        if self.terms.contains(&state) {
            return true;
        }
        self.terms.insert(state);
        false
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
        #[cfg(test)]
        if self.chase_by_terms {
            return super::chase_tests::fire_chase_by_terms(self, sec, t, depth, out);
        }
        let moves = match self.chase_walk(sec, t.arg(0), depth)? {
            Walked::Diverges => {
                out.push((TAU, t.id()));
                return Ok(());
            }
            Walked::Stable(moves) => moves,
        };
        for (l, next) in moves {
            if l == TICK {
                out.push((TICK, next));
            } else {
                out.push((l, sec.create(t.symbol(), &[term(sec, next)]).0.id()));
            }
        }
        Ok(())
    }

    /// Follows the first taus from `state` (fired at `depth`) to a state with none, or round a
    /// cycle.
    ///
    /// A state is a term, or the leaves of a network compiled from a term the walk passed
    /// (that term's state is the first of the network's part). The states of one network's
    /// part are told apart by their leaves; a state where the network cannot tell its first
    /// tau is built as a term and fired so, and the walk goes on from the term it leads to.
    /// A walk round a cycle passes again and again through the same states in the same way
    /// (how each is held depends only on the states before it since the last term): either it
    /// stays in one network's part, whose leaves show it, or it passes a term again.
    fn chase_walk<'s>(
        &self,
        sec: &'s Section<'_>,
        mut state: TermRef<'s>,
        depth: u32,
    ) -> Result<Walked, CspError> {
        let mut walk = Walk {
            backoff: 1,
            ..Walk::default()
        };
        loop {
            if walk.came_back(state.id()) {
                return Ok(Walked::Diverges);
            }
            let by_network = walk.term_steps == 0
                && depth.saturating_add(super::chase_net::NET_DEPTH) < MAX_NESTING
                && !self.is_memoised(state);
            if by_network {
                if let Some(mut net) = NetWalk::new(self, sec, state, depth)? {
                    let mut passed: Passed<Box<[TermId]>> = Passed::default();
                    loop {
                        let here = net.key();
                        match net.step(self, sec, depth)? {
                            NetStep::Tau => {
                                passed.insert(here);
                                if passed.contains(&net.key()) {
                                    return Ok(Walked::Diverges);
                                }
                                walk.step(self)?;
                            }
                            NetStep::Stable => {
                                return Ok(Walked::Stable(net.stable_moves(self, sec)?))
                            }
                            NetStep::Unsure => break,
                        }
                    }
                    let unsure = net.state(self, sec)?;
                    if unsure.id() != state.id() && walk.came_back(unsure.id()) {
                        return Ok(Walked::Diverges);
                    }
                    state = unsure;
                    walk.term_steps = walk.backoff;
                    walk.backoff = (walk.backoff * 2).min(MOST_TERM_STEPS);
                }
            }
            walk.term_steps = walk.term_steps.saturating_sub(1);
            let moves = self.transitions(sec, state, depth)?;
            let Some(&(_, next)) = moves.iter().find(|&&(l, _)| l == TAU) else {
                return Ok(Walked::Stable(moves.to_vec()));
            };
            walk.step(self)?;
            state = term(sec, next);
        }
    }
}
