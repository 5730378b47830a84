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
//!
//! In a distributed run the processes search the pairs together, each pair (the number of
//! events performed as its node, the state's canonical encoding) kept by the owner of its
//! state and numbered as the engine numbers it (module `dist`'s numbered search); the path
//! to the pair that ends the search, or to the deepest pair, comes back from the owners'
//! parent records and is replayed here, so the answer and its figures are those of one
//! process.

use std::time::Instant;

use super::compact;
use super::divergence::DivergenceMemo;
use super::label_names::LabelNames;
use super::properties::{HasTrace, PropertyCounterexample, PropertyViolation, TracePath};
use super::{Model, RefineError, SystemOptions};
use crate::explore::compact::{pack, pair_key, Packed};
use crate::explore::keyed::{split, EncodedKeys, KeyedProduct, PackedKeys, PairSearch};
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
    /// Whether the processes of a distributed run searched together.
    pub shared: bool,
}

/// The key a shared search gives a pair (events performed, state).
type PairKeyOf<'a, S> = dyn Fn(&(u32, S)) -> Vec<u32> + 'a;

/// The pairs (events performed, state) of a system following a wanted trace.
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

impl<'a, T: TransitionSystem> Following<'a, T> {
    /// `ts` following `wanted` in a model with divergences or not.
    fn new(
        ts: &'a T,
        wanted: &'a [String],
        fd: bool,
        opts: &SystemOptions,
        stop: &StopSignal,
    ) -> Self {
        Following {
            ts,
            wanted,
            fd,
            names: LabelNames::new(ts),
            divergence: DivergenceMemo::new(ts, stop.clone()).limited_to(opts.max_pairs),
        }
    }
}

impl<T: TransitionSystem> Driven for Following<'_, T> {
    type State = (u32, T::State);
    type Witness = Reached;

    fn initial_state(&self) -> Self::State {
        (0, self.ts.initial_state())
    }

    fn expand(
        &self,
        (done, state): &Self::State,
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
            emit(label, (performed, target));
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
    let fd = model.has_divergences();
    let following = Following::new(ts, trace, fd, system_opts, stop);
    let opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
        ..Default::default()
    };
    if let Some(mut searched) = search_shared(&following, system_opts, &opts, stop)? {
        searched.seconds = start.elapsed().as_secs_f64();
        return Ok(searched);
    }
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
            for (id, (done, _)) in run.states.iter().enumerate() {
                if *done > run.state(deepest).0 {
                    deepest = CanonicalId(id as u32);
                }
            }
            let done = run.state(deepest).0 as usize;
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
        state: run.state(id).1.clone(),
        states: run.stats.states,
        transitions: run.stats.transitions,
        levels: run.stats.levels,
        seconds: start.elapsed().as_secs_f64(),
        shared: false,
    })
}

/// Searches the pairs of `following` with the processes of the distributed run of
/// `system_opts`, if it has one and the system has a canonical encoding (else `None`): the
/// pairs keyed as one `u64` (the events performed above a packed encoding) where they fit,
/// else as the events performed followed by the encoding.
fn search_shared<T: TransitionSystem>(
    following: &Following<'_, T>,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<TraceSearch<T::State>>, RefineError> {
    if !system_opts.shares() {
        return Ok(None);
    }
    let ts = following.ts;
    let wanted = following.wanted;
    // The wanted trace names the search in the processes' common fingerprint.
    let named: Vec<u32> = wanted
        .iter()
        .flat_map(|name| name.bytes().map(u32::from).chain([u32::MAX]))
        .collect();
    let fingerprint = crate::hash::hash_words(&named);
    let most = wanted.len() as u32;
    // A search for a trace, in a model with divergences or not.
    let kind = 96 + following.fd as u8;
    if let Some(packed) = Packed::new(ts).filter(|p| pair_key(p.bits(), (most, 0)).is_some()) {
        let bits = packed.bits();
        let width = packed.width();
        let alone = Following::new(&packed, wanted, following.fd, system_opts, stop);
        let keys = PackedKeys {
            product: &alone,
            bits,
        };
        let key_of = |(done, state): &(u32, T::State)| {
            let mut words = [0u32; 2];
            ts.encode_state(state, &mut words[..width]);
            pair_key(bits, (*done, pack(&words[..width])))
                .map_or_else(Vec::new, |k| split(k).to_vec())
        };
        let found = search_keys(&keys, kind, bits, fingerprint, system_opts, opts, stop)?;
        return found
            .map(|found| answer(following, found, &key_of))
            .transpose();
    }
    let Some(keys) = EncodedKeys::new(following, ts) else {
        return Ok(None);
    };
    let key_of = |pair: &(u32, T::State)| {
        let mut key = vec![0u32; keys.key_width()];
        keys.write_key(pair, &mut key);
        key
    };
    let found = search_keys(&keys, kind, 0, fingerprint, system_opts, opts, stop)?;
    found
        .map(|found| answer(following, found, &key_of))
        .transpose()
}

/// The numbered search of `keys` by the processes, with the path to the pair that ends it or
/// to the deepest pair; `kind` and `bits` name it in the processes' fingerprint.
fn search_keys(
    keys: &dyn KeyedProduct,
    kind: u8,
    bits: u32,
    fingerprint: u64,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PairSearch>, RefineError> {
    let found = compact::search_witness_shared(
        &compact::WitnessSearch {
            product: keys,
            kind,
            spec_sets: fingerprint,
            bits,
            deepest: true,
        },
        system_opts,
        opts,
        stop,
    )?;
    match found {
        Some(PairSearch {
            stopped: Some(reason),
            ..
        }) => Err(RefineError::Stopped(reason)),
        other => Ok(other),
    }
}

/// The answer of a search by the processes, its path replayed on `following` (whose pairs
/// `key_of` keys as the search did).
fn answer<T: TransitionSystem>(
    following: &Following<'_, T>,
    found: PairSearch,
    key_of: &PairKeyOf<'_, T::State>,
) -> Result<TraceSearch<T::State>, RefineError> {
    let ts = following.ts;
    let visible = |path: &[(Label, (u32, T::State))]| -> Vec<String> {
        path.iter()
            .filter(|(l, _)| *l != TAU)
            .map(|&(l, _)| ts.label_name(l))
            .collect()
    };
    let end = |path: &[(Label, (u32, T::State))]| {
        path.last()
            .map_or_else(|| following.initial_state(), |(_, p)| p.clone())
    };
    let (outcome, (_, state)) = match (&found.witness, &found.deepest) {
        (Some(witness), _) => {
            let (path, reached) = compact::replay_witness(following, witness, key_of)?;
            let performed = TracePath {
                trace: visible(&path),
                state: witness.id,
                steps: path.len(),
                diverges: reached == Reached::Divergence,
            };
            (HasTrace::Performs(performed), end(&path))
        }
        (None, Some(deepest)) => {
            let path = compact::replay_path(following, &deepest.keys, &deepest.steps, key_of)?;
            let (done, state) = end(&path);
            let next = following.wanted.get(done as usize).ok_or_else(|| {
                RefineError::Distributed(
                    "the processes found no end of the search, then the whole trace".into(),
                )
            })?;
            let cannot = PropertyCounterexample {
                trace: visible(&path),
                state: deepest.id,
                steps: path.len(),
                violation: PropertyViolation::NotATrace {
                    event: next.clone(),
                },
            };
            (HasTrace::Cannot(cannot), (done, state))
        }
        (None, None) => {
            return Err(RefineError::Distributed(
                "the processes gave no path to the deepest pair".into(),
            ))
        }
    };
    Ok(TraceSearch {
        outcome,
        state,
        states: found.pairs,
        transitions: found.transitions,
        levels: found.levels,
        seconds: 0.0,
        shared: true,
    })
}
