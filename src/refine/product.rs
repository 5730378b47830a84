//! The product of the specification's normal form and an implementation, as a system the
//! engine of [`crate::explore`] drives.
//!
//! A product state is a pair `(normal-form set, implementation state)`. Expanding it runs the
//! per-pair tests of the model (Algorithms 4–6 of the thesis, seed 004 ch. 2) and emits its
//! successors: an implementation tau keeps the set; a visible event moves the set to its
//! successor, and an event the set cannot perform is a trace violation at that step. In the
//! failures-divergences model a pair whose set diverges is chaos: it is kept (it covers larger
//! sets) but not expanded, and its implementation's divergence is tested before refusals.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::divergence::DivergenceMemo;
use super::normal::EMPTY_SET;
use super::shared_normal::SharedNormalForm;
use super::Model;
use crate::explore::index::Segmented;
use crate::explore::{Driven, Found};
use crate::sync::shim::AtomicU32;
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
    /// Event of each implementation label, plus one (0: not looked up yet).
    event_of: Segmented<AtomicU32>,
    divergence: DivergenceMemo<'a, I>,
}

impl<'a, I: TransitionSystem> Product<'a, I> {
    /// The product of `nf` and `imp`.
    pub(crate) fn new(
        nf: &'a SharedNormalForm<'a>,
        spec_events: &'a SpecEvents,
        imp: &'a I,
        model: Model,
    ) -> Self {
        Product {
            nf,
            imp,
            model,
            spec_events,
            event_of: Segmented::new(1),
            divergence: DivergenceMemo::new(imp),
        }
    }

    /// The specification's event of implementation label `label` ([`FOREIGN`] when the
    /// specification has no event of that name).
    #[inline]
    pub(crate) fn event(&self, label: Label) -> u32 {
        if label == TAU {
            return TAU;
        }
        let cell = &self.event_of.get_or_alloc(label as u64)[0];
        // Ordering: Relaxed; the value is a function of the label, whoever stores it.
        let known = cell.load(Ordering::Relaxed);
        if known != 0 {
            return known.wrapping_sub(1);
        }
        let event = self
            .spec_events
            .by_name
            .get(&self.imp.label_name(label))
            .copied()
            .unwrap_or(FOREIGN);
        cell.store(event.wrapping_add(1), Ordering::Relaxed);
        event
    }

    /// Whether the implementation state diverges.
    pub(crate) fn diverges(&self, state: &I::State) -> bool {
        self.divergence.diverges(state)
    }

    /// The sorted visible events enabled in `state`, and whether it is stable.
    pub(crate) fn enabled(&self, state: &I::State) -> (Vec<u32>, bool) {
        let mut events = Vec::new();
        let mut stable = true;
        self.imp.for_each_successor(state, &mut |label, _| {
            if label == TAU {
                stable = false;
            } else {
                events.push(self.event(label));
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
        let fd = self.model == Model::FailuresDivergences;
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
                let event = self.event(label);
                if event == TAU {
                    stable = false;
                    emit(label, (set, target));
                    return;
                }
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
