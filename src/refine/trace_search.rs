//! "Has trace" of any [`TransitionSystem`], on the fly (`P :[has trace [M]]: <e1, …, en>`).
//!
//! The definition is that of [`super::properties`]: the process can perform the visible
//! events in order (matched by name); in the failures-divergences model, reaching a divergence
//! after a prefix of the trace also makes it a trace. The search runs breadth first, on all
//! workers of the engine, over pairs (state, number of events of the trace performed), with a
//! state's steps emitted in the order of label names (tau first): it ends with the first level
//! where the whole trace is performed (or a divergence reached), and otherwise reports the pair
//! with the most events performed and the least canonical id, so the answer is the same at
//! every thread count.

use std::time::Instant;

use super::divergence::DivergenceMemo;
use super::label_names::LabelNames;
use super::properties::{HasTrace, PropertyCounterexample, PropertyViolation, TracePath};
use super::{Model, RefineError, SystemOptions};
use crate::explore::{CanonicalId, Driven, Engine, Found, HashedVisited, RunOptions, StopSignal};
use crate::ts::{Label, TransitionSystem, TAU};

/// The outcome of a "has trace" search.
#[derive(Clone, Debug)]
pub struct TraceSearch<S> {
    /// Whether the process has the trace, with the path or the counterexample; their `state`
    /// is the canonical id of the pair (state, events performed) where they end.
    pub outcome: HasTrace,
    /// The system's state where the path or the counterexample ends.
    pub state: S,
    /// Pairs searched.
    pub states: u64,
    /// Transitions seen.
    pub transitions: u64,
    /// Breadth-first levels searched.
    pub levels: u32,
    /// Wall-clock time, in seconds.
    pub seconds: f64,
}

/// The pairs (state, events performed) of a system following a wanted trace.
struct Following<'a, T: TransitionSystem> {
    ts: &'a T,
    wanted: &'a [String],
    fd: bool,
    names: LabelNames<'a, T>,
    divergence: DivergenceMemo<'a, T>,
}

/// How a pair ends the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reached {
    /// The whole trace is performed.
    Whole,
    /// A divergence after a prefix (failures-divergences model).
    Divergence,
}

impl<T: TransitionSystem> Driven for Following<'_, T> {
    type State = (T::State, u32);
    type Witness = Reached;

    fn initial_state(&self) -> Self::State {
        (self.ts.initial_state(), 0)
    }

    fn expand(
        &self,
        (state, done): &Self::State,
        emit: &mut dyn FnMut(Label, Self::State),
    ) -> Option<Found<Reached>> {
        let done = *done;
        if done as usize == self.wanted.len() {
            if self.wanted.is_empty() {
                // The initial state is expanded all the same, as FDR compiles it: a process
                // whose first step cannot be evaluated is an error, not a holding `<>`.
                self.ts.for_each_successor(state, &mut |_, _| {});
            }
            return Some(Found::AtState(Reached::Whole));
        }
        let mut steps: Vec<(Label, T::State)> = Vec::new();
        let mut stable = true;
        self.ts.for_each_successor(state, &mut |label, target| {
            stable &= label != TAU;
            steps.push((label, target));
        });
        if self.fd && !stable && self.divergence.diverges(state) {
            return Some(Found::AtState(Reached::Divergence));
        }
        let next = self.wanted[done as usize].as_str();
        steps.retain(|&(label, _)| label == TAU || *self.names.name(label) == *next);
        // Tau first, then the wanted event: the order of label names, as in the search on an
        // explicit LTS (the system's own order within one label).
        steps.sort_by_key(|&(label, _)| label != TAU);
        for (label, target) in steps {
            let performed = if label == TAU { done } else { done + 1 };
            emit(label, (target, performed));
        }
        None
    }
}

/// Searches `ts` (which must number its states) for the visible `trace` in `model`.
pub fn search_trace<T: TransitionSystem>(
    engine: &Engine,
    ts: &T,
    trace: &[String],
    model: Model,
    system_opts: &SystemOptions,
    stop: &StopSignal,
) -> Result<TraceSearch<T::State>, RefineError> {
    let start = Instant::now();
    if ts.state_number(&ts.initial_state()).is_none() {
        return Err(RefineError::Unnumbered);
    }
    let following = Following {
        ts,
        wanted: trace,
        fd: model.has_divergences(),
        names: LabelNames::new(ts),
        divergence: DivergenceMemo::new(ts, stop.clone()).limited_to(system_opts.max_pairs),
    };
    let opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
        ..Default::default()
    };
    let run = engine.run(
        &following,
        &HashedVisited::new(engine.threads()),
        &opts,
        stop,
    );
    if let Some(reason) = run.stats.stopped {
        return Err(RefineError::Stopped(reason));
    }
    let visible = |id: CanonicalId| -> Vec<String> {
        run.trace_to(id)
            .into_iter()
            .filter(|&l| l != TAU)
            .map(|l| ts.label_name(l))
            .collect()
    };
    let (outcome, id) = match &run.witness {
        Some(w) => {
            let path = TracePath {
                trace: visible(w.id),
                state: w.id.0,
                steps: run.depth(w.id) as usize,
                diverges: w.witness == Reached::Divergence,
            };
            (HasTrace::Performs(path), w.id)
        }
        None => {
            // The pair with the most events performed, the least id among them.
            let mut deepest = CanonicalId::INITIAL;
            for (id, (_, done)) in run.states.iter().enumerate() {
                if *done > run.state(deepest).1 {
                    deepest = CanonicalId(id as u32);
                }
            }
            let done = run.state(deepest).1 as usize;
            let cex = PropertyCounterexample {
                trace: visible(deepest),
                state: deepest.0,
                steps: run.depth(deepest) as usize,
                violation: PropertyViolation::NotATrace {
                    event: trace[done].clone(),
                },
            };
            (HasTrace::Cannot(cex), deepest)
        }
    };
    Ok(TraceSearch {
        outcome,
        state: run.state(id).0.clone(),
        states: run.stats.states,
        transitions: run.stats.transitions,
        levels: run.stats.levels,
        seconds: start.elapsed().as_secs_f64(),
    })
}
