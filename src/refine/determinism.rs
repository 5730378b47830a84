//! Determinism of any [`TransitionSystem`], on the fly (`P :[deterministic [F]]`, `[FD]`).
//!
//! The definition is that of [`super::properties`]: after no trace `s` can the process both
//! perform an event `a` and refuse it, stably or by terminating (✓ is a signal), and in the
//! divergence models after no trace can it diverge. The search runs breadth first, on all workers of the engine, over the
//! normal form of the process built as it goes: a node is the tau-closed set of states that one
//! trace reaches, identified by the set itself. Expanding a node tests it and emits, one per
//! visible event in the order of event names, the node after that event; so node ids are
//! canonical and the search ends with the first level that holds a nondeterministic node,
//! reporting the least one (a shortest trace, the same at every thread count).
//!
//! Which state of the failing node is named as the refusing (or diverging) one is chosen after
//! the search, by following the trace again from the initial state with every set kept in
//! discovery order (states in the order the system lists successors, which is canonical):
//! the first such state in that order. So is the state that performs the event, which the
//! violation names by its position in that order (a system's own state numbers may depend on
//! the order threads met the states).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use super::compact;
use super::divergence::DivergenceMemo;
use super::label_names::LabelNames;
use super::properties::{PropertyCounterexample, PropertyViolation, TICK};
use super::{Model, PropertySearch, RefineError, SystemOptions};
use crate::explore::keyed::{FoundAt, KeyedProduct};
use crate::explore::{Driven, Engine, Found, HashedVisited, RunOptions, StopSignal};
use crate::ts::{Label, TransitionSystem, TAU};

/// A node of the normal form: a tau-closed set of states, sorted by state number.
type Node<S> = Arc<[S]>;

/// A state's moves: whether it is stable, and its visible steps.
type Moves<S> = (bool, Vec<(Label, S)>);

/// The normal form of a system, searched for nondeterminism.
struct Subsets<'a, T: TransitionSystem> {
    ts: &'a T,
    fd: bool,
    names: LabelNames<'a, T>,
    divergence: DivergenceMemo<'a, T>,
    /// The search's stop signal: a node can hold millions of states (`P = a -> (P ||| P)`),
    /// so building and testing one polls it between states. A node left half built when it
    /// is raised is dropped with its level (a stopped search reports no verdict).
    stop: StopSignal,
}

/// Whether a loop over the states of a node polls the stop signal: during the search it
/// does; when explaining a violation found (the search over) it must not, since a partial
/// set would name the wrong states.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Polled {
    Yes,
    No,
}

/// What makes a node nondeterministic.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Nondeterministic {
    /// A state of the node diverges.
    Divergence,
    /// A stable state of the node refuses this event, which another state can perform.
    Refuses(Label),
}

impl<T: TransitionSystem> Subsets<'_, T> {
    fn number(&self, s: &T::State) -> u32 {
        self.ts
            .state_number(s)
            .expect("checked at the start: the system numbers its states")
            .0
    }

    /// Whether a loop polled `polled` must give up: the search's stop signal was raised.
    #[inline]
    fn stopped(&self, polled: Polled) -> bool {
        polled == Polled::Yes && self.stop.is_raised()
    }

    /// The tau closure of `states` in discovery order (each state once); partial when
    /// `polled` and the search's stop signal is raised meanwhile.
    fn closure_in_order(&self, states: Vec<T::State>, polled: Polled) -> Vec<T::State> {
        let mut seen: HashSet<u32> = HashSet::new();
        let mut order: Vec<T::State> = Vec::with_capacity(states.len());
        for s in states {
            if seen.insert(self.number(&s)) {
                order.push(s);
            }
        }
        let mut i = 0;
        while i < order.len() {
            if self.stopped(polled) {
                break;
            }
            let s = order[i].clone();
            self.ts.for_each_successor(&s, &mut |label, target| {
                if label == TAU && seen.insert(self.number(&target)) {
                    order.push(target);
                }
            });
            i += 1;
        }
        order
    }

    /// The node of a set of states: its tau closure, sorted by state number.
    fn node(&self, states: Vec<T::State>) -> Node<T::State> {
        let mut set = self.closure_in_order(states, Polled::Yes);
        set.sort_unstable_by_key(|s| self.number(s));
        set.into()
    }

    /// The visible successors of each state of `set`, and whether it is stable; partial (a
    /// prefix of `set`) when `polled` and the search's stop signal is raised meanwhile.
    fn moves(&self, set: &[T::State], polled: Polled) -> Vec<Moves<T::State>> {
        set.iter()
            .take_while(|_| !self.stopped(polled))
            .map(|s| {
                let mut stable = true;
                let mut visible = Vec::new();
                self.ts.for_each_successor(s, &mut |label, target| {
                    if label == TAU {
                        stable = false;
                    } else {
                        visible.push((label, target));
                    }
                });
                (stable, visible)
            })
            .collect()
    }

    /// Whether `label` is ✓.
    fn is_tick(&self, label: Label) -> bool {
        *self.names.name(label) == *TICK
    }

    /// Whether a state with these moves can terminate.
    fn terminates(&self, moves: &Moves<T::State>) -> bool {
        moves.1.iter().any(|&(l, _)| self.is_tick(l))
    }

    /// Whether a state with these moves refuses `event`: it is stable and does not offer it,
    /// or it can terminate and `event` is not ✓ (✓ is a signal: such a state can refuse
    /// every other event).
    fn refuses(&self, moves: &Moves<T::State>, event: Label) -> bool {
        if self.terminates(moves) {
            !self.is_tick(event)
        } else {
            moves.0 && !moves.1.iter().any(|&(l, _)| l == event)
        }
    }

    /// The least event by name that a state of the set refuses and some state performs.
    fn refused(&self, moves: &[Moves<T::State>]) -> Option<Label> {
        let mut initials: Vec<Label> = moves
            .iter()
            .flat_map(|(_, m)| m.iter().map(|&(l, _)| l))
            .collect();
        initials.sort_unstable();
        initials.dedup();
        let mut least: Option<Label> = None;
        for m in moves {
            for &a in &initials {
                if self.refuses(m, a) && least.is_none_or(|b| self.names.cmp(a, b).is_lt()) {
                    least = Some(a);
                }
            }
        }
        least
    }
}

impl<T: TransitionSystem> Driven for Subsets<'_, T> {
    type State = Node<T::State>;
    type Witness = Nondeterministic;

    fn initial_state(&self) -> Self::State {
        self.node(vec![self.ts.initial_state()])
    }

    fn expand(
        &self,
        node: &Self::State,
        emit: &mut dyn FnMut(Label, Self::State),
    ) -> Option<Found<Nondeterministic>> {
        if self.fd && node.iter().any(|s| self.divergence.diverges(s)) {
            return Some(Found::AtState(Nondeterministic::Divergence));
        }
        let moves = self.moves(node, Polled::Yes);
        if self.stopped(Polled::Yes) {
            return None; // the level is dropped: no verdict from a partial node
        }
        if let Some(a) = self.refused(&moves) {
            return Some(Found::AtState(Nondeterministic::Refuses(a)));
        }
        let mut steps: Vec<(Label, T::State)> = moves.into_iter().flat_map(|(_, m)| m).collect();
        steps.sort_unstable_by_key(|(l, _)| *l);
        let mut groups: Vec<(Label, Vec<T::State>)> = Vec::new();
        for group in steps.chunk_by(|x, y| x.0 == y.0) {
            let targets = group.iter().map(|(_, t)| t.clone()).collect();
            groups.push((group[0].0, targets));
        }
        groups.sort_by(|x, y| self.names.cmp(x.0, y.0));
        for (label, targets) in groups {
            if self.stopped(Polled::Yes) {
                break;
            }
            emit(label, self.node(targets));
        }
        None
    }
}

/// Searches `ts` (which must number its states) for nondeterminism in `model` (traces is
/// treated as failures). The counterexample's `state` is the canonical id of the failing
/// normal-form node; the returned `state` is the refusing (or diverging) state of the
/// system, and `performer` one that performs the event (the violation's `performer` is its
/// position among the states the trace reaches, in discovery order).
pub fn search_determinism<T: TransitionSystem>(
    engine: &Engine,
    ts: &T,
    model: Model,
    system_opts: &SystemOptions,
    stop: &StopSignal,
) -> Result<PropertySearch<T::State>, RefineError> {
    let start = Instant::now();
    if ts.state_number(&ts.initial_state()).is_none() {
        return Err(RefineError::Unnumbered);
    }
    let subsets = Subsets {
        ts,
        fd: model.has_divergences(),
        names: LabelNames::new(ts),
        divergence: DivergenceMemo::new(ts, stop.clone()).limited_to(system_opts.max_pairs),
        stop: stop.clone(),
    };
    let opts = RunOptions {
        record_transitions: false,
        max_states: system_opts.max_pairs,
        on_level: system_opts.on_level.clone(),
        ..Default::default()
    };
    if let Some(mut searched) = search_shared(&subsets, system_opts, &opts, stop)? {
        searched.seconds = start.elapsed().as_secs_f64();
        return Ok(searched);
    }
    let run = engine.run(&subsets, &HashedVisited::new(engine.threads()), &opts, stop);
    if let Some(reason) = run.stats.stopped {
        return Err(RefineError::Stopped(reason));
    }
    let mut state = None;
    let mut performer = None;
    let counterexample = run.witness.as_ref().map(|w| {
        let labels = run.trace_to(w.id);
        let (chosen, performing, violation) = subsets.explain(&labels, &w.witness);
        state = Some(chosen);
        performer = performing;
        PropertyCounterexample {
            trace: labels.iter().map(|&l| ts.label_name(l)).collect(),
            state: w.id.0,
            steps: labels.len(),
            violation,
        }
    });
    Ok(PropertySearch {
        counterexample,
        state,
        performer,
        states: run.stats.states,
        transitions: run.stats.transitions,
        levels: run.stats.levels,
        visited_bytes: None,
        shared: false,
        seconds: start.elapsed().as_secs_f64(),
    })
}

impl<T: TransitionSystem> Subsets<'_, T> {
    /// The state named by a witness found after the visible `trace`: the first, in discovery
    /// order, that diverges or stably refuses the event; for a refusal, the first that
    /// performs the event; and the violation as reported.
    fn explain(
        &self,
        trace: &[Label],
        found: &Nondeterministic,
    ) -> (T::State, Option<T::State>, PropertyViolation) {
        let mut set = self.closure_in_order(vec![self.ts.initial_state()], Polled::No);
        for &label in trace {
            let mut next = Vec::new();
            for s in &set {
                self.ts.for_each_successor(s, &mut |l, t| {
                    if l == label {
                        next.push(t);
                    }
                });
            }
            set = self.closure_in_order(next, Polled::No);
        }
        match *found {
            Nondeterministic::Divergence => {
                let s = set
                    .iter()
                    .find(|s| self.divergence.diverges(s))
                    .expect("the node diverges")
                    .clone();
                (s, None, PropertyViolation::Divergence)
            }
            Nondeterministic::Refuses(event) => {
                let moves = self.moves(&set, Polled::No);
                let offers = |m: &[(Label, T::State)]| m.iter().any(|&(l, _)| l == event);
                let at = moves
                    .iter()
                    .position(|m| self.refuses(m, event))
                    .expect("a state refuses the event");
                let performer = moves
                    .iter()
                    .position(|(_, m)| offers(m))
                    .expect("a state performs the event");
                let mut accepted: Vec<Label> = moves[at].1.iter().map(|&(l, _)| l).collect();
                if self.terminates(&moves[at]) {
                    // It refuses by terminating: what it accepts is ✓ alone.
                    accepted.retain(|&l| self.is_tick(l));
                }
                accepted.sort_unstable();
                accepted.dedup();
                accepted.sort_by(|&x, &y| self.names.cmp(x, y));
                let violation = PropertyViolation::Nondeterminism {
                    event: self.ts.label_name(event),
                    accepted: accepted.iter().map(|&l| self.ts.label_name(l)).collect(),
                    performer: performer as u32,
                };
                (set[at].clone(), Some(set[performer].clone()), violation)
            }
        }
    }
}

/// Words of a node's key at most, in a search shared by the processes of a distributed run (a
/// search whose nodes take more is run by each process alone).
const MOST_KEY_WORDS: usize = 1 << 12;

/// The nodes of `subsets` keyed for a search shared by the processes of a distributed run:
/// the number of states, then their canonical encodings in the order of the encodings, then
/// zeros up to `most` states. A node of more states than `most` has no key: a step to one is
/// reported as a violation at a step ([`FoundAt::Step`], after every true violation, which
/// shows at a node), and the search runs again with room for twice as many.
struct SubsetKeys<'s, 'a, T: TransitionSystem> {
    subsets: &'s Subsets<'a, T>,
    /// Words of a state's encoding.
    width: usize,
    /// States a key holds at most.
    most: usize,
}

impl<T: TransitionSystem> SubsetKeys<'_, '_, T> {
    /// Writes the key of `node` into `key`; false (and a key that no node has) when the node
    /// has more than `most` states.
    fn write_key(&self, node: &[T::State], key: &mut [u32]) -> bool {
        key.fill(0);
        if node.len() > self.most {
            key[0] = self.most as u32 + 1;
            return false;
        }
        let w = self.width;
        let mut encoded = vec![0u32; node.len() * w];
        for (state, words) in node.iter().zip(encoded.chunks_exact_mut(w)) {
            self.subsets.ts.encode_state(state, words);
        }
        let mut sorted: Vec<&[u32]> = encoded.chunks_exact(w).collect();
        sorted.sort_unstable();
        key[0] = node.len() as u32;
        for (i, words) in sorted.into_iter().enumerate() {
            key[1 + i * w..1 + (i + 1) * w].copy_from_slice(words);
        }
        true
    }

    /// The key of `node` (empty when it has none).
    fn key(&self, node: &[T::State]) -> Vec<u32> {
        let mut key = vec![0u32; self.key_width()];
        if self.write_key(node, &mut key) {
            key
        } else {
            Vec::new()
        }
    }

    /// The node of `key`, or `None` for a key this process did not make from this model.
    fn node_of_key(&self, key: &[u32]) -> Option<Node<T::State>> {
        let n = key[0] as usize;
        if n > self.most {
            return None;
        }
        let w = self.width;
        let mut states = key[1..1 + n * w]
            .chunks_exact(w)
            .map(|words| self.subsets.ts.decode_state(words))
            .collect::<Option<Vec<_>>>()?;
        states.sort_unstable_by_key(|s| self.subsets.number(s));
        Some(states.into())
    }
}

impl<T: TransitionSystem> KeyedProduct for SubsetKeys<'_, '_, T> {
    fn key_width(&self) -> usize {
        1 + self.most * self.width
    }

    fn initial_key(&self, key: &mut [u32]) {
        self.write_key(&self.subsets.initial_state(), key);
    }

    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt> {
        let node = self.node_of_key(key)?;
        let mut next = vec![0u32; key.len()];
        let mut too_wide = false;
        let found = self.subsets.expand(&node, &mut |_, target| {
            // A node too wide for a key is still a step (the level's steps are counted).
            too_wide |= !self.write_key(&target, &mut next);
            emit(&next);
        });
        match found {
            Some(found) => Some(FoundAt::from(&found)),
            None if too_wide => Some(FoundAt::Step),
            None => None,
        }
    }

    fn node_of(&self, _key: &[u32]) -> u32 {
        0
    }

    fn state_part(&self, key: &[u32], state: &mut [u32]) {
        state.copy_from_slice(key);
    }
}

/// Searches the normal form of `subsets` with the processes of the distributed run of
/// `system_opts`, if it has one and the system has a canonical encoding (else `None`):
/// nodes numbered as the engine numbers them, owned by the hash of their keys
/// ([`SubsetKeys`]), the path to the least nondeterministic node rebuilt from the owners'
/// parent records and replayed here. Where a node is too wide for the keys, the search runs
/// again with keys twice as wide (up to [`MOST_KEY_WORDS`]; past that, `None`).
fn search_shared<T: TransitionSystem>(
    subsets: &Subsets<'_, T>,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PropertySearch<T::State>>, RefineError> {
    if !system_opts.shares() {
        return Ok(None);
    }
    let Ok(width) = subsets.ts.encoded_width() else {
        return Ok(None);
    };
    // A search for determinism, in a model with divergences or not.
    let kind = 128 + subsets.fd as u8;
    let mut most = subsets.initial_state().len().next_power_of_two().max(4);
    loop {
        if 1 + most * width > MOST_KEY_WORDS {
            return Ok(None);
        }
        let keys = SubsetKeys {
            subsets,
            width,
            most,
        };
        let Some(found) = compact::search_witness_shared(
            &compact::WitnessSearch {
                product: &keys,
                kind,
                spec_sets: most as u64,
                bits: 0,
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
        let Some(witness) = &found.witness else {
            return Ok(Some(PropertySearch {
                counterexample: None,
                state: None,
                performer: None,
                states: found.pairs,
                transitions: found.transitions,
                levels: found.levels,
                visited_bytes: None,
                shared: true,
                seconds: 0.0,
            }));
        };
        if witness.at == FoundAt::Step {
            // A node too wide for the keys, at a level without a violation.
            most *= 2;
            continue;
        }
        let (path, nondeterministic) =
            compact::replay_witness(subsets, witness, &|node| keys.key(node))?;
        let labels: Vec<Label> = path.iter().map(|&(label, _)| label).collect();
        let (chosen, performer, violation) = subsets.explain(&labels, &nondeterministic);
        return Ok(Some(PropertySearch {
            counterexample: Some(PropertyCounterexample {
                trace: labels.iter().map(|&l| subsets.ts.label_name(l)).collect(),
                state: witness.id,
                steps: labels.len(),
                violation,
            }),
            state: Some(chosen),
            performer,
            states: found.pairs,
            transitions: found.transitions,
            levels: found.levels,
            visited_bytes: None,
            shared: true,
            seconds: 0.0,
        }));
    }
}
