//! Deadlock freedom and divergence freedom of any [`TransitionSystem`], on the fly.
//!
//! The process is searched breadth first by the engine of [`crate::explore`], with the
//! property's test run on each state as it is expanded: the search ends with the first level
//! that holds a violation, and reports the least one (a shortest counterexample, the same at
//! every thread count). The definitions are those of [`super::properties`]: a state without
//! transitions is a deadlock unless it is reached by ✓ (Ω, successful termination); in the
//! failures-divergences model deadlock freedom also requires divergence freedom, and a
//! divergence is reported before a deadlock of the same state.

use std::time::Instant;

use super::compact;
use super::divergence::DivergenceMemo;
use super::properties::{PropertyCounterexample, PropertyViolation};
use super::{Model, RefineError, SystemOptions};
use crate::explore::compact::AlonePairs;
use crate::explore::keyed::{split, EncodedKeys, KeyedProduct, PackedKeys};
use crate::explore::{Driven, Engine, Found, NumberedVisited, RunOptions, StopSignal};
use crate::ts::{Label, TransitionSystem, TAU};

/// The property searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// `:[deadlock free [F]]`; in a model with divergences (`[FD]`, `[VD]`, `[RD]`) also
    /// divergence free. Deadlock is the same observation in `F`, `V` and `R`.
    DeadlockFree(Model),
    /// `:[divergence free]`.
    DivergenceFree,
}

/// The outcome of a property search.
#[derive(Clone, Debug)]
pub struct PropertySearch<S> {
    /// `None` when the property holds; else a shortest counterexample, whose `state` is the
    /// canonical id of the state where it shows.
    pub counterexample: Option<PropertyCounterexample>,
    /// The state where it shows.
    pub state: Option<S>,
    /// For a nondeterminism, the state that performs the event (the one the violation's
    /// `performer` names by its position).
    pub performer: Option<S>,
    /// States searched.
    pub states: u64,
    /// Transitions seen.
    pub transitions: u64,
    /// Breadth-first levels searched.
    pub levels: u32,
    /// Bytes of the visited set, where the search kept it compactly (a distributed search
    /// that found the property to hold).
    pub visited_bytes: Option<u64>,
    /// Wall-clock time, in seconds.
    pub seconds: f64,
    /// Whether the processes of a distributed run searched together (a violation's
    /// counterexample is then searched for by them together, numbering the states).
    pub shared: bool,
}

/// A system searched for a property violation.
struct Tested<'a, T: TransitionSystem> {
    ts: &'a T,
    property: Property,
    tick: Option<Label>,
    divergence: DivergenceMemo<'a, T>,
}

impl<T: TransitionSystem> Driven for Tested<'_, T> {
    type State = T::State;
    type Witness = PropertyViolation;

    fn initial_state(&self) -> T::State {
        self.ts.initial_state()
    }

    fn expand(
        &self,
        state: &T::State,
        emit: &mut dyn FnMut(Label, T::State),
    ) -> Option<Found<PropertyViolation>> {
        let mut successors: Vec<(Label, T::State)> = Vec::new();
        let mut stable = true;
        self.ts.for_each_successor(state, &mut |label, target| {
            stable &= label != TAU;
            successors.push((label, target));
        });
        let divergence_matters = match self.property {
            Property::DivergenceFree => true,
            Property::DeadlockFree(model) => model.has_divergences(),
        };
        if divergence_matters && !stable && self.divergence.diverges(state) {
            return Some(Found::AtState(PropertyViolation::Divergence));
        }
        if matches!(self.property, Property::DeadlockFree(_)) && successors.is_empty() {
            return Some(Found::AtState(PropertyViolation::Deadlock));
        }
        for (label, target) in successors {
            // A state reached by ✓ is Ω: no transitions, no deadlock, nothing to search.
            if Some(label) != self.tick {
                emit(label, target);
            }
        }
        None
    }
}

/// Searches `ts` (which must number its states, as LTSs and CSPm processes do) for a
/// violation of `property`; `tick` is its ✓ label, if it has one.
pub fn search_property<T: TransitionSystem>(
    engine: &Engine,
    ts: &T,
    property: Property,
    tick: Option<Label>,
    system_opts: &SystemOptions,
    stop: &StopSignal,
) -> Result<PropertySearch<T::State>, RefineError> {
    let start = Instant::now();
    let tested = Tested {
        ts,
        property,
        tick,
        divergence: DivergenceMemo::new(ts, stop.clone()).limited_to(system_opts.max_pairs),
    };
    let opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
        ..Default::default()
    };
    if ts.state_number(&ts.initial_state()).is_none() {
        return Err(RefineError::Unnumbered);
    }
    // With the processes of a distributed run: the states, packed, shared among them. A
    // property that holds ends there; a violation is searched for again by the processes
    // together, numbering the states (as the search below numbers them), and its canonical
    // shortest counterexample is rebuilt from their parent records, then replayed here.
    let kind = match property {
        Property::DeadlockFree(model) => 32 + model as u8,
        Property::DivergenceFree => 64,
    };
    let shared = match crate::explore::compact::Packed::new(ts) {
        _ if !system_opts.shares() => None,
        Some(encoded) => {
            let alone = Tested {
                ts: &encoded,
                property,
                tick,
                divergence: DivergenceMemo::new(&encoded, stop.clone())
                    .limited_to(system_opts.max_pairs),
            };
            let bits = encoded.bits();
            let keys = PackedKeys {
                product: &AlonePairs(&alone),
                bits,
            };
            let key_of = |state: &T::State| {
                let mut words = [0u32; 2];
                ts.encode_state(state, &mut words[..encoded.width()]);
                let packed = crate::explore::compact::pack(&words[..encoded.width()]);
                crate::explore::compact::pair_key(bits, (0, packed))
                    .map_or_else(Vec::new, |k| split(k).to_vec())
            };
            let searched = Shared {
                keys: &keys,
                kind,
                bits,
            };
            searched.search(&tested, &key_of, system_opts, &opts, stop)?
        }
        None => {
            let alone = AlonePairs(&tested);
            match EncodedKeys::new(&alone, ts) {
                Some(keys) => {
                    let key_of = |state: &T::State| {
                        let mut key = vec![0u32; keys.key_width()];
                        keys.write_key(&(0, state.clone()), &mut key);
                        key
                    };
                    let searched = Shared {
                        keys: &keys,
                        kind,
                        bits: 0,
                    };
                    searched.search(&tested, &key_of, system_opts, &opts, stop)?
                }
                None => None,
            }
        }
    };
    if let Some(mut searched) = shared {
        searched.seconds = start.elapsed().as_secs_f64();
        return Ok(searched);
    }
    let run = engine.run(&tested, &NumberedVisited::new(ts), &opts, stop);
    if let Some(reason) = run.stats.stopped {
        return Err(RefineError::Stopped(reason));
    }
    let mut state = None;
    let counterexample = run.witness.as_ref().map(|w| {
        let path = run.path_to(w.id);
        state = Some(run.state(w.id).clone());
        PropertyCounterexample {
            trace: path
                .iter()
                .filter(|(l, _)| *l != TAU)
                .map(|&(l, _)| ts.label_name(l))
                .collect(),
            state: w.id.0,
            steps: path.len(),
            violation: w.witness.clone(),
        }
    });
    Ok(PropertySearch {
        counterexample,
        state,
        performer: None,
        states: run.stats.states,
        transitions: run.stats.transitions,
        levels: run.stats.levels,
        visited_bytes: None,
        seconds: start.elapsed().as_secs_f64(),
        shared: false,
    })
}

/// A property search shared by the processes of a distributed run: the system's states keyed
/// by `keys`, the search named by `kind` and `bits` in the processes' fingerprint.
struct Shared<'a> {
    keys: &'a dyn KeyedProduct,
    kind: u8,
    bits: u32,
}

impl Shared<'_> {
    /// Searches compactly; where the property fails, searches again numbering the states and
    /// replays the path to the least violation on `tested` (whose states `key_of` keys as
    /// `keys` does). `None` without a distributed run.
    fn search<T: TransitionSystem>(
        &self,
        tested: &Tested<'_, T>,
        key_of: &dyn Fn(&T::State) -> Vec<u32>,
        system_opts: &SystemOptions,
        opts: &RunOptions,
        stop: &StopSignal,
    ) -> Result<Option<PropertySearch<T::State>>, RefineError> {
        let Some(searched) =
            compact::search_shared(self.keys, self.kind, 0, self.bits, system_opts, opts, stop)?
        else {
            return Ok(None);
        };
        if let Some(reason) = searched.stopped {
            return Err(RefineError::Stopped(reason));
        }
        if !searched.violated {
            return Ok(Some(PropertySearch {
                counterexample: None,
                state: None,
                performer: None,
                states: searched.stats.pairs_discovered,
                transitions: searched.stats.transitions,
                levels: searched.stats.levels,
                visited_bytes: searched.stats.pair_bytes,
                seconds: 0.0,
                shared: true,
            }));
        }
        let Some(found) = compact::search_witness_shared(
            &compact::WitnessSearch {
                product: self.keys,
                kind: self.kind,
                spec_sets: 0,
                bits: self.bits,
                deepest: false,
            },
            system_opts,
            opts,
            stop,
        )?
        else {
            return Ok(None);
        };
        if let Some(reason) = found.stopped {
            return Err(RefineError::Stopped(reason));
        }
        let witness = found.witness.as_ref().ok_or_else(|| {
            RefineError::Distributed(
                "the processes found a violation, then none when they numbered the states".into(),
            )
        })?;
        let (path, violation) = compact::replay_witness(tested, witness, key_of)?;
        let state = path
            .last()
            .map_or_else(|| tested.initial_state(), |(_, s)| s.clone());
        Ok(Some(PropertySearch {
            counterexample: Some(PropertyCounterexample {
                trace: path
                    .iter()
                    .filter(|(l, _)| *l != TAU)
                    .map(|&(l, _)| tested.ts.label_name(l))
                    .collect(),
                state: witness.id,
                steps: path.len(),
                violation,
            }),
            state: Some(state),
            performer: None,
            states: found.pairs,
            transitions: found.transitions,
            levels: found.levels,
            visited_bytes: None,
            seconds: 0.0,
            shared: true,
        }))
    }
}
