//! The shortest-counterexample oracle, written from the definitions and independent of weft:
//! a plain breadth-first search of the product (set of specification states after the trace,
//! implementation state) with an exact visited set and no antichain.
//!
//! Steps are counted as in `weft::refine::Counterexample::steps`: each product step is one,
//! implementation taus included; a trace violation counts the step with the offending event;
//! a refusal or a divergence counts the steps to the pair where it shows.

use std::collections::{BTreeSet, HashMap, VecDeque};

use weft::refine::Model;

use super::lts_gen::RawLts;

type Set = BTreeSet<u32>;

/// Facts of one system, computed from its transitions.
struct Facts<'a> {
    lts: &'a RawLts,
    /// `divergent[s]`: an infinite tau path starts in `s`.
    divergent: Vec<bool>,
}

impl<'a> Facts<'a> {
    fn new(lts: &'a RawLts) -> Facts<'a> {
        let n = lts.num_states as usize;
        // s is on a tau cycle iff s is in the tau-closure of its own tau successors;
        // s diverges iff its tau-closure holds a state on a tau cycle.
        let mut facts = Facts {
            lts,
            divergent: vec![false; n],
        };
        let on_cycle: Vec<bool> = (0..n as u32)
            .map(|s| {
                let next: Set = facts.tau_successors(s).collect();
                facts.closure(next).contains(&s)
            })
            .collect();
        facts.divergent = (0..n as u32)
            .map(|s| {
                facts
                    .closure(Set::from([s]))
                    .iter()
                    .any(|&t| on_cycle[t as usize])
            })
            .collect();
        facts
    }

    fn tau_successors(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        self.lts
            .outgoing(s)
            .filter(|(l, _)| l.is_none())
            .map(|(_, t)| t)
    }

    /// Stable: no tau and no ✓ (✓ is a signal: a state that can terminate can refuse every
    /// other event, and its own acceptance is not observed).
    fn is_stable(&self, s: u32) -> bool {
        self.lts
            .outgoing(s)
            .all(|(l, _)| l.is_some_and(|name| name != "✓"))
    }

    /// The states reachable from `set` by zero or more taus.
    fn closure(&self, set: Set) -> Set {
        let mut todo: Vec<u32> = set.iter().copied().collect();
        let mut out = set;
        while let Some(s) = todo.pop() {
            for t in self.tau_successors(s) {
                if out.insert(t) {
                    todo.push(t);
                }
            }
        }
        out
    }

    /// The tau-closure of the `event` successors of `set`.
    fn after(&self, set: &Set, event: &str) -> Set {
        let direct: Set = set
            .iter()
            .flat_map(|&s| self.lts.outgoing(s))
            .filter(|(l, _)| *l == Some(event))
            .map(|(_, t)| t)
            .collect();
        self.closure(direct)
    }
}

/// What the oracle found: `None` when the refinement holds, else the least number of steps
/// to a violation.
pub fn shortest_violation(spec: &RawLts, implementation: &RawLts, model: Model) -> Option<usize> {
    let sp = Facts::new(spec);
    let im = Facts::new(implementation);
    let start = (
        sp.closure(Set::from([spec.initial])),
        implementation.initial,
    );
    let mut depth: HashMap<(Set, u32), usize> = HashMap::from([(start.clone(), 0)]);
    let mut queue: VecDeque<(Set, u32)> = VecDeque::from([start]);
    let mut best: Option<usize> = None;
    let found = |steps: usize, best: &mut Option<usize>| {
        *best = Some(best.map_or(steps, |b| b.min(steps)));
    };
    while let Some((set, s)) = queue.pop_front() {
        let d = depth[&(set.clone(), s)];
        if best.is_some_and(|b| d >= b) {
            // Everything from here on is at least as long as what was found.
            break;
        }
        let spec_divergent = set.iter().any(|&u| sp.divergent[u as usize]);
        if model.has_divergences() && spec_divergent {
            // Divergence is chaos: nothing after it is a violation.
            continue;
        }
        if model.has_divergences() && im.divergent[s as usize] {
            found(d, &mut best);
        }
        if model != Model::Traces && im.is_stable(s) {
            let accepted = implementation.enabled(s);
            let allowed = set
                .iter()
                .any(|&u| sp.is_stable(u) && spec.enabled(u).is_subset(&accepted));
            if !allowed {
                found(d, &mut best);
            }
        }
        for (label, t) in implementation.outgoing(s) {
            let next = match label {
                None => set.clone(),
                Some(event) => sp.after(&set, event),
            };
            if next.is_empty() {
                found(d + 1, &mut best);
                continue;
            }
            let key = (next, t);
            if !depth.contains_key(&key) {
                depth.insert(key.clone(), d + 1);
                queue.push_back(key);
            }
        }
    }
    best
}
