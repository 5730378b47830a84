//! Independent replay of a counterexample on both systems, straight from the definitions
//! (thesis §2.1): weak transitions by explicit tau-closure, divergence by peeling the states
//! whose tau paths all end, refusals of stable states only. It shares no code with the search.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Counterexample, Model, Violation};
use crate::lts::Lts;
use crate::ts::{Label, TransitionSystem, TAU};

/// Checks that `cex` witnesses that `impl_` does not refine `spec` in `model`:
/// the implementation performs the trace and reaches `cex.impl_state`, where it shows the
/// violation, and the specification cannot match it (no divergence on the trace or a prefix
/// in the failures-divergences model). Returns a description of the first mismatch.
pub fn replay(spec: &Lts, impl_: &Lts, model: Model, cex: &Counterexample) -> Result<(), String> {
    if cex.impl_state >= impl_.num_states() {
        return Err(format!(
            "implementation state {} out of range",
            cex.impl_state
        ));
    }
    check_model(model, cex)?;
    // The implementation performs the trace and reaches impl_state.
    let impl_sets = weak_trace_sets(impl_, &cex.trace);
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
    let mut accepts = BTreeSet::new();
    let mut stable = true;
    imp.for_each_successor(&at, &mut |l, _| {
        if l == TAU {
            stable = false;
        } else {
            accepts.insert(imp.label_name(l));
        }
    });
    let end = EndState {
        name: "the implementation's state at the end of the run".to_string(),
        stable,
        accepts,
        diverges: matches!(cex.violation, Violation::Divergence) && reaches_tau_cycle(imp, &at),
    };
    check_violation(spec, model, cex, &end)
}

/// Whether a violation of this kind can be a counterexample in `model`.
fn check_model(model: Model, cex: &Counterexample) -> Result<(), String> {
    match (&cex.violation, model) {
        (Violation::Refusal { .. }, Model::Traces) => {
            Err("a refusal is no counterexample in the traces model".into())
        }
        (Violation::Divergence, Model::Traces | Model::Failures) => {
            Err("a divergence is a counterexample only in the FD model".into())
        }
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
    // The specification after every prefix of the trace.
    let spec_sets = weak_trace_sets(spec, &cex.trace);
    let spec_end = spec_sets.last().expect("at least the initial set");
    if model == Model::FailuresDivergences {
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

/// The sets of states reachable by the weak traces ε, t1, t1 t2, …, of `trace`.
fn weak_trace_sets(lts: &Lts, trace: &[String]) -> Vec<BTreeSet<u32>> {
    let mut sets = vec![tau_closure(lts, BTreeSet::from([lts.initial()]))];
    for event in trace {
        let next = weak_step(lts, sets.last().expect("non-empty"), event);
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

fn is_stable(lts: &Lts, s: u32) -> bool {
    lts.successors(s).all(|(l, _)| l != TAU)
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
