//! The product of the specification's normal form and an implementation, as a system the
//! engine of [`crate::explore`] drives.
//!
//! A product state is a pair `(normal-form set, implementation state)`. Expanding it runs the
//! per-pair tests of the model (Algorithms 4–6 of the thesis, seed 004 ch. 2) and emits its
//! successors: an implementation tau keeps the set; a visible event moves the set to its
//! successor, and an event the set cannot perform is a trace violation at that step. In the
//! models with divergences a pair whose set diverges is chaos: it is kept (it covers larger
//! sets) but not expanded, and its implementation's divergence is tested before refusals.
//! The revivals and refusal-testing models test a stable implementation state's revivals, and
//! refusal testing follows its visible events from the specification states that can refuse
//! what it refuses (module [`super::revivals`]). An implementation state that can perform ✓
//! is not stable (✓ is a signal, see [`super::Model`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::divergence::DivergenceMemo;
use super::normal::EMPTY_SET;
use super::properties::TICK;
use super::revivals::admissible_union;
use super::shared_normal::SharedNormalForm;
use super::Model;
use crate::explore::index::Segmented;
use crate::explore::{Driven, Found};
use crate::explore::{StopReason, StopSignal};
use crate::sync::shim::AtomicU64;
use crate::ts::{Label, TransitionSystem, TAU};

/// The event of an implementation label the specification never mentions.
pub(crate) const FOREIGN: u32 = u32::MAX;

/// What went wrong at a product pair or step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProductWitness {
    /// The implementation performs `label`; the specification cannot.
    Trace { label: Label },
    /// The implementation state is stable and refuses what the specification cannot.
    Refusal,
    /// The implementation state diverges; the specification does not.
    Divergence,
    /// The implementation state is stable and performs `label` after refusing everything it
    /// does not offer; the specification cannot (revivals and refusal-testing models).
    Revival { label: Label },
}

/// The specification's events by name (event 0 is tau), and the event of each label.
pub(crate) struct SpecEvents {
    /// Event of each specification label.
    pub(crate) of_label: Vec<u32>,
    /// Event ids by name.
    pub(crate) by_name: HashMap<String, u32>,
    /// Name of each event.
    pub(crate) names: Vec<String>,
}

/// The cache bit of an implementation label named ✓.
const TICK_BIT: u64 = 1 << 32;

impl SpecEvents {
    /// Numbers the visible label names of `names` (label 0 is tau): labels with one name
    /// share an event.
    pub(crate) fn new(names: &[String]) -> SpecEvents {
        let mut events = SpecEvents {
            of_label: Vec::with_capacity(names.len()),
            by_name: HashMap::new(),
            names: vec!["tau".to_string()],
        };
        for (l, name) in names.iter().enumerate() {
            if l == TAU as usize {
                events.of_label.push(TAU);
                continue;
            }
            let next = events.names.len() as u32;
            let e = *events.by_name.entry(name.clone()).or_insert(next);
            if e == next {
                events.names.push(name.clone());
            }
            events.of_label.push(e);
        }
        events
    }
}

thread_local! {
    /// Per worker: the sorted visible events enabled in the state being expanded.
    static ENABLED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The product `normal form × implementation`.
pub(crate) struct Product<'a, I: TransitionSystem> {
    pub(crate) nf: &'a SharedNormalForm<'a>,
    pub(crate) imp: &'a I,
    pub(crate) model: Model,
    spec_events: &'a SpecEvents,
    /// Event of each implementation label, plus one, with [`TICK_BIT`] for ✓ (0: not looked
    /// up yet).
    event_of: Segmented<AtomicU64>,
    divergence: DivergenceMemo<'a, I>,
    /// The search's stop signal: raised with [`StopReason::MemoryLimit`] when a table of the
    /// product or of its normal form cannot grow.
    stop: StopSignal,
}

impl<'a, I: TransitionSystem> Product<'a, I> {
    /// The product of `nf` and `imp`.
    pub(crate) fn new(
        nf: &'a SharedNormalForm<'a>,
        spec_events: &'a SpecEvents,
        imp: &'a I,
        model: Model,
        stop: &StopSignal,
    ) -> Self {
        Product {
            nf,
            imp,
            model,
            spec_events,
            event_of: Segmented::new(1),
            divergence: DivergenceMemo::new(imp, stop.clone()),
            stop: stop.clone(),
        }
    }

    /// Bounds each search for a divergence to `max` implementation states (the run's state
    /// limit, if any).
    pub(crate) fn limited_to(mut self, max: Option<u64>) -> Self {
        self.divergence = self.divergence.limited_to(max);
        self
    }

    /// The specification's event of implementation label `label` ([`FOREIGN`] when the
    /// specification has no event of that name).
    #[inline]
    pub(crate) fn event(&self, label: Label) -> u32 {
        self.classify(label).0
    }

    /// The specification's event of implementation label `label` (as [`Product::event`]), and
    /// whether the label is ✓.
    #[inline]
    pub(crate) fn classify(&self, label: Label) -> (u32, bool) {
        if label == TAU {
            return (TAU, false);
        }
        let Ok(group) = self.event_of.try_get_or_alloc(label as u64) else {
            // The table cannot grow: the run is over its memory (an allocation that fails
            // under an address-space bound, or one larger than the memory left). It stops by
            // the memory limit, with its statistics, never with an abort; meanwhile the label
            // is looked up without the table.
            self.stop.stop(StopReason::MemoryLimit);
            return self.look_up(label);
        };
        let cell = &group[0];
        // Ordering: Relaxed; the value is a function of the label, whoever stores it.
        let known = cell.load(Ordering::Relaxed);
        if known != 0 {
            return ((known as u32).wrapping_sub(1), known & TICK_BIT != 0);
        }
        let (event, tick) = self.look_up(label);
        let bits = event.wrapping_add(1) as u64 | if tick { TICK_BIT } else { 0 };
        cell.store(bits, Ordering::Relaxed);
        (event, tick)
    }

    /// [`Product::classify`] by the label's name, without the table.
    fn look_up(&self, label: Label) -> (u32, bool) {
        let name = self.imp.label_name(label);
        let tick = name == TICK;
        let event = self
            .spec_events
            .by_name
            .get(&name)
            .copied()
            .unwrap_or(FOREIGN);
        (event, tick)
    }

    /// Whether the implementation state diverges.
    pub(crate) fn diverges(&self, state: &I::State) -> bool {
        self.divergence.diverges(state)
    }

    /// The sorted visible events enabled in `state`, and whether it is stable (it can perform
    /// neither tau nor ✓).
    pub(crate) fn enabled(&self, state: &I::State) -> (Vec<u32>, bool) {
        let mut events = Vec::new();
        let mut stable = true;
        self.imp.for_each_successor(state, &mut |label, _| {
            let (event, tick) = self.classify(label);
            if event == TAU {
                stable = false;
            } else {
                stable &= !tick;
                events.push(event);
            }
        });
        events.sort_unstable();
        events.dedup();
        (events, stable)
    }
}

impl<I: TransitionSystem> Driven for Product<'_, I> {
    type State = (u32, I::State);
    type Witness = ProductWitness;

    fn initial_state(&self) -> Self::State {
        (self.nf.initial_set(), self.imp.initial_state())
    }

    fn expand(
        &self,
        pair: &Self::State,
        emit: &mut dyn FnMut(Label, Self::State),
    ) -> Option<Found<ProductWitness>> {
        let (set, ref state) = *pair;
        if self.nf.short_of_memory() {
            // See `SharedNormalForm::short_of_memory`: the answers stay right until the
            // search sees the stop.
            self.stop.stop(StopReason::MemoryLimit);
        }
        if self.model.observes_revivals() {
            return self.expand_revivals(set, state, emit);
        }
        let fd = self.model.has_divergences();
        if fd && self.nf.is_divergent(set) {
            // Chaos: nothing after it is a violation.
            return None;
        }
        // One pass over the implementation's transitions: successors are emitted as they
        // come (if the state itself turns out to be a violation, the engine ends the search
        // with this level and keeps none of them).
        let refusals = self.model != Model::Traces;
        let mut stable = true;
        let mut violation = None;
        let refuses_too_much = ENABLED.with(|enabled| {
            let mut enabled = enabled.borrow_mut();
            enabled.clear();
            self.imp.for_each_successor(state, &mut |label, target| {
                let (event, tick) = self.classify(label);
                if event == TAU {
                    stable = false;
                    emit(label, (set, target));
                    return;
                }
                stable &= !tick;
                if refusals {
                    enabled.push(event);
                }
                let next = if event == FOREIGN {
                    EMPTY_SET
                } else {
                    self.nf.successor(set, event)
                };
                if next == EMPTY_SET {
                    violation.get_or_insert(ProductWitness::Trace { label });
                } else {
                    emit(label, (next, target));
                }
            });
            if !refusals || !stable {
                return false;
            }
            enabled.sort_unstable();
            enabled.dedup();
            !self.nf.can_refuse_all_but(set, &enabled)
        });
        if fd && !stable && self.diverges(state) {
            return Some(Found::AtState(ProductWitness::Divergence));
        }
        if refuses_too_much {
            return Some(Found::AtState(ProductWitness::Refusal));
        }
        violation.map(Found::AtStep)
    }
}

impl<I: TransitionSystem> Product<'_, I> {
    /// [`Driven::expand`] in the revivals and refusal-testing models: chaos and divergence as
    /// in the failures-divergences model; at a stable implementation state the revival test
    /// (a refusal the specification cannot make, or an event it cannot perform after making
    /// it); then the successors, which in refusal testing leave a stable state from the
    /// specification states that can refuse what it refuses.
    fn expand_revivals(
        &self,
        set: u32,
        state: &I::State,
        emit: &mut dyn FnMut(Label, (u32, I::State)),
    ) -> Option<Found<ProductWitness>> {
        let divergences = self.model.has_divergences();
        if divergences && self.nf.is_divergent(set) {
            return None;
        }
        let mut moves: Vec<(Label, u32, I::State)> = Vec::new();
        let mut stable = true;
        self.imp.for_each_successor(state, &mut |label, target| {
            let (event, tick) = self.classify(label);
            stable &= event != TAU && !tick;
            moves.push((label, event, target));
        });
        if divergences && !stable && self.diverges(state) {
            return Some(Found::AtState(ProductWitness::Divergence));
        }
        let mut from = set;
        if stable {
            let mut enabled: Vec<u32> = moves.iter().map(|m| m.1).collect();
            enabled.sort_unstable();
            enabled.dedup();
            let groups = self.nf.stable_groups(set);
            let Some(covered) = admissible_union(groups, &enabled) else {
                return Some(Found::AtState(ProductWitness::Refusal));
            };
            // An event the specification cannot perform at all is a trace violation, at the
            // step.
            let revival = moves.iter().find(|&&(_, event, _)| {
                event != FOREIGN
                    && covered.binary_search(&event).is_err()
                    && self.nf.successor(set, event) != EMPTY_SET
            });
            if let Some(&(label, _, _)) = revival {
                return Some(Found::AtState(ProductWitness::Revival { label }));
            }
            if self.model.observes_refusal_traces() {
                from = self.nf.admissible_node(set, &enabled);
            }
        }
        let mut violation = None;
        for (label, event, target) in moves {
            if event == TAU {
                emit(label, (set, target));
                continue;
            }
            let next = if event == FOREIGN {
                EMPTY_SET
            } else {
                self.nf.successor(from, event)
            };
            if next == EMPTY_SET {
                violation.get_or_insert(ProductWitness::Trace { label });
            } else {
                emit(label, (next, target));
            }
        }
        violation.map(Found::AtStep)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::lts::Lts;

    #[test]
    fn a_label_table_that_cannot_grow_stops_by_the_memory_limit_with_right_events() {
        let spec = Lts::from_transitions(0, 2, vec!["tau".into(), "a".into()], &[(0, 1, 1)]);
        // The implementation's labels: b (not the specification's), then a.
        let imp_names = vec!["tau".into(), "b".into(), "a".into()];
        let imp = Lts::from_transitions(0, 2, imp_names, &[(0, 2, 1), (0, 1, 1)]);
        let events = SpecEvents::new(spec.label_names());
        let nf = SharedNormalForm::new(&spec, events.of_label.clone());
        let (growing_stop, failing_stop) = (StopSignal::new(), StopSignal::new());
        let growing = Product::new(&nf, &events, &imp, Model::Traces, &growing_stop);
        let mut failing = Product::new(&nf, &events, &imp, Model::Traces, &failing_stop);
        // Groups of 2^50 words: the first segment is 2^64 bytes, more than any address space.
        failing.event_of = Segmented::new(1 << 50);
        let expected = [(TAU, false), (FOREIGN, false), (1, false)];
        for (label, want) in expected.into_iter().enumerate() {
            assert_eq!(growing.classify(label as Label), want);
            assert_eq!(failing.classify(label as Label), want);
        }
        assert_eq!(growing_stop.reason(), None);
        assert_eq!(failing_stop.reason(), Some(StopReason::MemoryLimit));
    }

    #[test]
    fn a_normal_form_short_of_memory_stops_the_product_by_the_memory_limit() {
        let spec = Lts::from_transitions(0, 2, vec!["tau".into(), "a".into()], &[(0, 1, 1)]);
        let events = SpecEvents::new(spec.label_names());
        let nf = SharedNormalForm::new(&spec, events.of_label.clone());
        let stop = StopSignal::new();
        let product = Product::new(&nf, &events, &spec, Model::Traces, &stop);
        let mut emitted = 0;
        let initial = product.initial_state();
        assert!(product.expand(&initial, &mut |_, _| emitted += 1).is_none());
        assert_eq!((emitted, stop.reason()), (1, None));
        nf.note_memory_failure();
        assert!(product.expand(&initial, &mut |_, _| emitted += 1).is_none());
        assert_eq!((emitted, stop.reason()), (2, Some(StopReason::MemoryLimit)));
    }
}
