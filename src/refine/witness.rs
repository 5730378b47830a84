//! The counterexample of a failing check, made from the path to the product pair where the
//! violation shows: whether the engine found the path in this process, or the processes of a
//! distributed run rebuilt it from their parent records (`compact::search_witness_shared`).

use super::normal;
use super::product::{Product, ProductWitness, SpecEvents};
use super::shared_normal::SharedNormalForm;
use super::{properties, revivals, Counterexample, Model, Violation};
use crate::lts::Lts;
use crate::ts::{Label, TransitionSystem, TAU};

/// What a failing check searched: the specification, its normal form and events, the
/// product, the model.
pub(crate) struct Found<'a, 'p, I: TransitionSystem> {
    pub(crate) spec: &'a Lts,
    pub(crate) nf: &'a SharedNormalForm<'a>,
    pub(crate) events: &'a SpecEvents,
    pub(crate) product: &'a Product<'p, I>,
    pub(crate) model: Model,
}

/// The counterexample of the violation `witness` at the pair `pair` (canonical id `id`),
/// reached by `path` (`(label, pair reached)` per step from the initial pair), and the
/// implementation's run to it (`(label, state)` per step, taus included).
pub(crate) fn counterexample_of<I: TransitionSystem>(
    found: &Found<'_, '_, I>,
    path: &[(Label, (u32, I::State))],
    pair: &(u32, I::State),
    id: u32,
    witness: &ProductWitness,
) -> (Counterexample, Vec<(Label, I::State)>) {
    let Found {
        spec,
        nf,
        events,
        product,
        model,
    } = *found;
    let imp = product.imp;
    let impl_path: Vec<(Label, I::State)> = path
        .iter()
        .map(|(label, (_, state))| (*label, state.clone()))
        .collect();
    let (set, ref state) = *pair;
    let trace: Vec<String> = path
        .iter()
        .filter(|(l, _)| *l != TAU)
        .map(|&(l, _)| imp.label_name(l))
        .collect();
    let (violation, steps) = match *witness {
        ProductWitness::Trace { label } => (
            Violation::Trace {
                event: imp.label_name(label),
            },
            path.len() + 1,
        ),
        ProductWitness::Divergence => (Violation::Divergence, path.len()),
        ProductWitness::Refusal => {
            let (enabled, _) = product.enabled(state);
            let mut refused: Vec<String> = Vec::new();
            let mut spec_acceptances: Vec<Vec<String>> = Vec::new();
            for acceptance in nf.acceptances(set) {
                let mut named: Vec<String> = Vec::new();
                for &e in acceptance.iter() {
                    named.push(events.names[e as usize].clone());
                    if enabled.binary_search(&e).is_err() {
                        refused.push(events.names[e as usize].clone());
                    }
                }
                named.sort();
                spec_acceptances.push(named);
            }
            // A stable state refuses ✓, which the specification cannot refuse where it can
            // terminate (there it can refuse every other event).
            if nf
                .members(set)
                .iter()
                .any(|&s| normal::can_terminate(spec, s))
            {
                refused.push(properties::TICK.to_string());
            }
            refused.sort();
            refused.dedup();
            spec_acceptances.sort();
            (
                Violation::Refusal {
                    refused,
                    spec_acceptances,
                },
                path.len(),
            )
        }
        ProductWitness::Revival { label } => {
            let (enabled, _) = product.enabled(state);
            let event = product.event(label);
            let (accs, refused) =
                revivals::revival_evidence(nf.stable_groups(set), &enabled, event);
            let names = |list: &[u32]| -> Vec<String> {
                let mut named: Vec<String> = list
                    .iter()
                    .map(|&e| events.names[e as usize].clone())
                    .collect();
                named.sort();
                named
            };
            let mut spec_acceptances: Vec<Vec<String>> = accs.iter().map(|a| names(a)).collect();
            spec_acceptances.sort();
            (
                Violation::Revival {
                    accepted: offered(imp, state).1,
                    event: imp.label_name(label),
                    refused: names(&refused),
                    spec_acceptances,
                },
                path.len(),
            )
        }
    };
    let acceptances = if model.observes_refusal_traces() {
        refusal_trace_acceptances(imp, &impl_path)
    } else {
        Vec::new()
    };
    (
        Counterexample {
            trace,
            impl_state: id,
            steps,
            violation,
            acceptances,
        },
        impl_path,
    )
}

/// Whether `state` is stable (it can perform neither tau nor ✓), and the names of the visible
/// events it offers, sorted.
fn offered<I: TransitionSystem>(imp: &I, state: &I::State) -> (bool, Vec<String>) {
    let mut stable = true;
    let mut names: Vec<String> = Vec::new();
    imp.for_each_successor(state, &mut |label, _| {
        if label == TAU {
            stable = false;
        } else {
            let name = imp.label_name(label);
            stable &= name != properties::TICK;
            names.push(name);
        }
    });
    names.sort();
    names.dedup();
    (stable, names)
}

/// The refusal trace of a run of `imp` (`(label, state)` per step from its initial state): for
/// each visible step, the acceptance of the state it leaves when that state is stable (the
/// largest refusal observed just before the event), else `None`.
fn refusal_trace_acceptances<I: TransitionSystem>(
    imp: &I,
    path: &[(Label, I::State)],
) -> Vec<Option<Vec<String>>> {
    let mut out = Vec::new();
    let mut at = imp.initial_state();
    for (label, next) in path {
        if *label != TAU {
            let (stable, names) = offered(imp, &at);
            out.push(stable.then_some(names));
        }
        at = next.clone();
    }
    out
}
