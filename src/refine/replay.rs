//! Independent replay of a counterexample on both systems, straight from the definitions
//! (thesis §2.1): weak transitions by explicit tau-closure, divergence by peeling the states
//! whose tau paths all end, refusals of stable states only (a state that can perform ✓ is not
//! stable: ✓ is a signal, and such a state can refuse every event but ✓). In the
//! refusal-testing models the trace is a refusal trace: before an event with an acceptance
//! `A`, the systems' states are only the stable ones that refuse every event outside `A`. It
//! shares no code with the search.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::properties::TICK;
use super::{Counterexample, Model, Violation};
use crate::lts::Lts;
use crate::ts::{Label, TransitionSystem, TAU};

/// Checks that `cex` witnesses that `impl_` does not refine `spec` in `model`:
/// the implementation performs the trace (the refusal trace, in the refusal-testing models)
/// and reaches `cex.impl_state`, where it shows the violation, and the specification cannot
/// match it (no divergence on the trace or a prefix in the models with divergences). Returns a
/// description of the first mismatch.
pub fn replay(spec: &Lts, impl_: &Lts, model: Model, cex: &Counterexample) -> Result<(), String> {
    if cex.impl_state >= impl_.num_states() {
        return Err(format!(
            "implementation state {} out of range",
            cex.impl_state
        ));
    }
    check_model(model, cex)?;
    // The implementation performs the trace and reaches impl_state; where a refusal is
    // observed, from a stable state with exactly that acceptance.
    let impl_sets = weak_trace_sets(impl_, &cex.trace, &cex.acceptances, true);
    let impl_end = impl_sets.last().expect("at least the initial set");
    if !impl_end.contains(&cex.impl_state) {
        return Err(format!(
            "the implementation cannot reach state {} by the trace {:?}",
            cex.impl_state, cex.trace
        ));
    }
    let s = cex.impl_state;
    let end = EndState {
        name: format!("implementation state {s}"),
        stable: is_stable(impl_, s),
        accepts: visible_names(impl_, s),
        diverges: divergent_among(impl_, &BTreeSet::from([s])).contains(&s),
    };
    check_violation(spec, model, cex, &end)
}

/// Checks that `cex` witnesses that `imp` does not refine `spec` in `model`, where `path` is
/// the implementation's run to the state where the violation shows: each step `(label,
/// state)` must be a transition of `imp` from the state before (the first from its initial
/// state), the run's visible labels must be the trace, and its last state must show the
/// violation. The implementation is explored only along the run (and, for a divergence, over
/// the taus from its end).
pub fn replay_run<I: TransitionSystem>(
    spec: &Lts,
    imp: &I,
    model: Model,
    cex: &Counterexample,
    path: &[(Label, I::State)],
) -> Result<(), String> {
    check_model(model, cex)?;
    let mut at = imp.initial_state();
    let mut trace = Vec::new();
    for (i, (label, next)) in path.iter().enumerate() {
        let mut found = false;
        imp.for_each_successor(&at, &mut |l, t| found |= l == *label && t == *next);
        if !found {
            return Err(format!(
                "step {} of the run ({}) is not a transition of the implementation",
                i + 1,
                imp.label_name(*label)
            ));
        }
        if *label != TAU {
            if let Some(Some(acceptance)) = cex.acceptances.get(trace.len()) {
                let (stable, accepts) = offers(imp, &at);
                let acceptance: BTreeSet<String> = acceptance.iter().cloned().collect();
                if !stable || accepts != acceptance {
                    return Err(format!(
                        "before event {} of the trace the implementation is not stable with \
                         acceptance {acceptance:?}",
                        trace.len() + 1
                    ));
                }
            }
            trace.push(imp.label_name(*label));
        }
        at = next.clone();
    }
    if trace != cex.trace {
        return Err(format!(
            "the run performs {trace:?}, not the trace {:?}",
            cex.trace
        ));
    }
    let (stable, accepts) = offers(imp, &at);
    let end = EndState {
        name: "the implementation's state at the end of the run".to_string(),
        stable,
        accepts,
        diverges: matches!(cex.violation, Violation::Divergence) && reaches_tau_cycle(imp, &at),
    };
    check_violation(spec, model, cex, &end)
}

/// Whether `state` of `imp` is stable (neither tau nor ✓), and the names of the visible
/// events it offers.
fn offers<I: TransitionSystem>(imp: &I, state: &I::State) -> (bool, BTreeSet<String>) {
    let mut accepts = BTreeSet::new();
    let mut stable = true;
    imp.for_each_successor(state, &mut |l, _| {
        if l == TAU {
            stable = false;
        } else {
            let name = imp.label_name(l);
            stable &= name != TICK;
            accepts.insert(name);
        }
    });
    (stable, accepts)
}

/// Whether a violation of this kind can be a counterexample in `model`.
fn check_model(model: Model, cex: &Counterexample) -> Result<(), String> {
    if model.observes_refusal_traces() {
        if cex.acceptances.len() != cex.trace.len() {
            return Err(format!(
                "a refusal trace needs one observation per event: {} for {} events",
                cex.acceptances.len(),
                cex.trace.len()
            ));
        }
    } else if !cex.acceptances.is_empty() {
        return Err(format!(
            "refusals along the trace are no observation of the {} model",
            model.name()
        ));
    }
    match &cex.violation {
        Violation::Refusal { .. } if !model.observes_refusals() => {
            Err("a refusal is no counterexample in the traces model".into())
        }
        Violation::Divergence if !model.has_divergences() => Err(format!(
            "a divergence is no counterexample in the {} model",
            model.name()
        )),
        Violation::Revival { .. } if !model.observes_revivals() => Err(format!(
            "a revival is no counterexample in the {} model",
            model.name()
        )),
        _ => Ok(()),
    }
}

/// What the replay needs to know of the implementation's state at the end of the trace.
struct EndState {
    name: String,
    stable: bool,
    accepts: BTreeSet<String>,
    diverges: bool,
}

/// Checks the violation of `cex` at the implementation's `end` against the specification.
fn check_violation(
    spec: &Lts,
    model: Model,
    cex: &Counterexample,
    end: &EndState,
) -> Result<(), String> {
    let name = &end.name;
    // The specification after every prefix of the (refusal) trace.
    let spec_sets = weak_trace_sets(spec, &cex.trace, &cex.acceptances, false);
    let spec_end = spec_sets.last().expect("at least the initial set");
    if model.has_divergences() {
        let mut all: BTreeSet<u32> = BTreeSet::new();
        for set in &spec_sets {
            all.extend(set.iter().copied());
        }
        let divergent = divergent_among(spec, &all);
        if let Some(s) = all.iter().find(|s| divergent.contains(s)) {
            return Err(format!(
                "the specification diverges (state {s}) on a prefix of the trace"
            ));
        }
    }

    match &cex.violation {
        Violation::Trace { event } => {
            if !end.accepts.contains(event) {
                return Err(format!("{name} cannot perform {event}"));
            }
            let after = weak_step(spec, spec_end, event);
            if !after.is_empty() {
                return Err(format!(
                    "the specification can perform the trace followed by {event}"
                ));
            }
        }
        Violation::Refusal {
            refused,
            spec_acceptances,
        } => {
            if !end.stable {
                return Err(format!("{name} is not stable"));
            }
            if let Some(e) = refused.iter().find(|e| end.accepts.contains(*e)) {
                return Err(format!("{name} does not refuse {e}"));
            }
            let refused: BTreeSet<&String> = refused.iter().collect();
            // A state that can perform ✓ can refuse any set without ✓.
            if !refused.contains(&TICK.to_string()) {
                if let Some(t) = spec_end.iter().find(|&&t| can_terminate(spec, t)) {
                    return Err(format!(
                        "specification state {t} reachable by the trace can terminate, so it \
                         refuses {refused:?}"
                    ));
                }
            }
            let mut stable_acceptances: Vec<BTreeSet<String>> = Vec::new();
            for &t in spec_end {
                if is_stable(spec, t) {
                    let accepts = visible_names(spec, t);
                    if accepts.iter().all(|e| !refused.contains(e)) {
                        return Err(format!(
                            "specification state {t} reachable by the trace refuses {refused:?}"
                        ));
                    }
                    stable_acceptances.push(accepts);
                }
            }
            for acceptance in spec_acceptances {
                let acceptance: BTreeSet<String> = acceptance.iter().cloned().collect();
                if !stable_acceptances.contains(&acceptance) {
                    return Err(format!(
                        "{acceptance:?} is not the acceptance of a stable specification state"
                    ));
                }
            }
        }
        Violation::Revival {
            accepted,
            event,
            refused,
            spec_acceptances,
        } => {
            let accepted: BTreeSet<String> = accepted.iter().cloned().collect();
            if !end.stable || end.accepts != accepted {
                return Err(format!("{name} is not stable with acceptance {accepted:?}"));
            }
            if !accepted.contains(event) {
                return Err(format!("{name} cannot perform {event}"));
            }
            if weak_step(spec, spec_end, event).is_empty() {
                return Err(format!(
                    "the specification cannot perform {event} after the trace at all: a \
                     trace violation"
                ));
            }
            let mut can_refuse = false;
            let mut reviving: Vec<BTreeSet<String>> = Vec::new();
            for &t in spec_end {
                if !is_stable(spec, t) {
                    continue;
                }
                let accepts = visible_names(spec, t);
                if accepts.is_subset(&accepted) {
                    can_refuse = true;
                    if accepts.contains(event) {
                        return Err(format!(
                            "specification state {t} reachable by the trace refuses what {name} \
                             refuses and then performs {event}"
                        ));
                    }
                }
                if accepts.contains(event) {
                    reviving.push(accepts);
                }
            }
            if !can_refuse {
                return Err(format!(
                    "the specification cannot refuse what {name} refuses: a refusal violation"
                ));
            }
            if let Some(e) = refused.iter().find(|e| accepted.contains(*e)) {
                return Err(format!("{name} does not refuse {e}"));
            }
            for acceptance in &reviving {
                if acceptance.iter().all(|e| !refused.contains(e)) {
                    return Err(format!(
                        "the stable specification acceptance {acceptance:?} has none of the \
                         refused events {refused:?}"
                    ));
                }
            }
            let listed: Vec<BTreeSet<String>> = spec_acceptances
                .iter()
                .map(|a| a.iter().cloned().collect())
                .collect();
            for acceptance in &listed {
                if !reviving.contains(acceptance) {
                    return Err(format!(
                        "{acceptance:?} is not the acceptance of a stable specification state \
                         that can perform {event}"
                    ));
                }
            }
        }
        Violation::Divergence => {
            if !end.diverges {
                return Err(format!("{name} does not diverge"));
            }
        }
    }
    Ok(())
}

/// Whether a tau path from `start` reaches a tau cycle: a depth-first search over the taus
/// that finds an edge back to a state on its stack, or to a state known to reach a cycle.
fn reaches_tau_cycle<I: TransitionSystem>(imp: &I, start: &I::State) -> bool {
    // 1: on the stack; 2: done, no cycle below.
    let mut mark: HashMap<I::State, u8> = HashMap::new();
    let tau_targets = |s: &I::State| {
        let mut out = Vec::new();
        imp.for_each_successor(s, &mut |l, t| {
            if l == TAU {
                out.push(t);
            }
        });
        out
    };
    let mut stack: Vec<(I::State, Vec<I::State>)> = vec![(start.clone(), tau_targets(start))];
    mark.insert(start.clone(), 1);
    while let Some((_, todo)) = stack.last_mut() {
        match todo.pop() {
            Some(t) => match mark.get(&t) {
                Some(1) => return true,
                Some(_) => {}
                None => {
                    mark.insert(t.clone(), 1);
                    let next = tau_targets(&t);
                    stack.push((t, next));
                }
            },
            None => {
                let (s, _) = stack.pop().expect("non-empty");
                mark.insert(s, 2);
            }
        }
    }
    false
}

/// The sets of states reachable by the weak traces ε, t1, t1 t2, …, of `trace`. Where
/// `acceptances` holds `Some(A)` for an event (a refusal observed before it), the event is
/// taken only from the stable states that refuse every event outside `A`: those whose
/// acceptance is exactly `A` when `exact` (the implementation, which showed that acceptance),
/// else a subset of it (the specification, matching the refusal).
fn weak_trace_sets(
    lts: &Lts,
    trace: &[String],
    acceptances: &[Option<Vec<String>>],
    exact: bool,
) -> Vec<BTreeSet<u32>> {
    let mut sets = vec![tau_closure(lts, BTreeSet::from([lts.initial()]))];
    for (i, event) in trace.iter().enumerate() {
        let mut from = sets.last().expect("non-empty").clone();
        if let Some(Some(acceptance)) = acceptances.get(i) {
            let acceptance: BTreeSet<String> = acceptance.iter().cloned().collect();
            from.retain(|&s| {
                let accepts = visible_names(lts, s);
                is_stable(lts, s)
                    && if exact {
                        accepts == acceptance
                    } else {
                        accepts.is_subset(&acceptance)
                    }
            });
        }
        let next = weak_step(lts, &from, event);
        sets.push(next);
    }
    sets
}

/// `{t | ∃s ∈ from: s =event=> t}`.
fn weak_step(lts: &Lts, from: &BTreeSet<u32>, event: &str) -> BTreeSet<u32> {
    let names = lts.label_names();
    let mut direct = BTreeSet::new();
    for &s in from {
        for (l, t) in lts.successors(s) {
            if l != TAU && names[l as usize] == event {
                direct.insert(t);
            }
        }
    }
    tau_closure(lts, direct)
}

fn tau_closure(lts: &Lts, mut set: BTreeSet<u32>) -> BTreeSet<u32> {
    let mut todo: Vec<u32> = set.iter().copied().collect();
    while let Some(s) = todo.pop() {
        for (l, t) in lts.successors(s) {
            if l == TAU && set.insert(t) {
                todo.push(t);
            }
        }
    }
    set
}

/// No tau and no ✓ out of `s`.
fn is_stable(lts: &Lts, s: u32) -> bool {
    lts.successors(s)
        .all(|(l, _)| l != TAU && lts.label_names()[l as usize] != TICK)
}

fn can_terminate(lts: &Lts, s: u32) -> bool {
    lts.successors(s)
        .any(|(l, _)| l != TAU && lts.label_names()[l as usize] == TICK)
}

fn visible_names(lts: &Lts, s: u32) -> BTreeSet<String> {
    lts.successors(s)
        .filter(|&(l, _)| l != TAU)
        .map(|(l, _)| lts.label_names()[l as usize].clone())
        .collect()
}

/// The divergent states among `of`: those with an infinite tau path. Over the tau-reachable
/// part of `of`, repeatedly remove states all of whose tau-successors are removed (their tau
/// paths end); what remains has an infinite tau path.
fn divergent_among(lts: &Lts, of: &BTreeSet<u32>) -> BTreeSet<u32> {
    let region = tau_closure(lts, of.clone());
    let mut remaining: BTreeMap<u32, usize> = BTreeMap::new();
    let mut preds: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &s in &region {
        let mut out = 0;
        for (l, t) in lts.successors(s) {
            if l == TAU {
                out += 1;
                preds.entry(t).or_default().push(s);
            }
        }
        remaining.insert(s, out);
    }
    let mut ended: Vec<u32> = remaining
        .iter()
        .filter(|&(_, &n)| n == 0)
        .map(|(&s, _)| s)
        .collect();
    let mut finite: BTreeSet<u32> = ended.iter().copied().collect();
    while let Some(t) = ended.pop() {
        for &p in preds.get(&t).map(Vec::as_slice).unwrap_or(&[]) {
            let n = remaining.get_mut(&p).expect("predecessor in region");
            *n -= 1;
            if *n == 0 && finite.insert(p) {
                ended.push(p);
            }
        }
    }
    of.iter().copied().filter(|s| !finite.contains(s)).collect()
}
