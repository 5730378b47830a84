//! On-the-fly comparison of two systems given by successor functions (as GreASE does, seed
//! 002): the product of the two subset constructions is explored breadth-first from the pair
//! of initial state sets, each side's states, sets and successors built only as the search
//! reaches them, and the search stops at the first pair of sets whose offered events differ.
//!
//! A difference of (weak) traces found this way is a shortest distinguishing trace, and it
//! also separates the two systems modulo every bisimulation finer than the trace equivalence
//! (strong bisimulation refines trace equivalence, the branching ones weak-trace
//! equivalence). When the whole product is explored without a difference, the systems are
//! trace (or weak-trace) equivalent; whether they are bisimilar is then for the caller to
//! decide on the explicit LTSs ([`super::compare`]).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::compare::{Difference, Side};
use crate::explore::StopSignal;
use crate::ts::{Label, TransitionSystem, TAU};

/// The name id of tau (names are shared by the two sides).
const TAU_NAME: u32 = 0;

/// What [`trace_search`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceSearch {
    /// The whole product was explored: the systems have the same (weak) traces.
    SameTraces {
        /// Pairs of state sets explored.
        pairs: u64,
    },
    /// A shortest distinguishing trace.
    Differ {
        /// The difference.
        difference: Difference,
        /// Pairs of state sets explored before it was found.
        pairs: u64,
    },
    /// The stop signal was raised (a resource limit) before a verdict.
    Stopped,
}

/// A pair of state sets, with the pair and the event name it was first reached by.
type PairEntry = ((u32, u32), Option<(u32, u32)>);

/// Label names of both sides, interned (tau is id 0 on both).
struct Names {
    ids: FxHashMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    fn id(&mut self, name: String) -> u32 {
        let next = self.names.len() as u32;
        *self.ids.entry(name.clone()).or_insert_with(|| {
            self.names.push(name);
            next
        })
    }
}

/// One side's states and state sets, built as the search reaches them.
struct Explored<'a, T: TransitionSystem> {
    ts: &'a T,
    state_ids: FxHashMap<T::State, u32>,
    states: Vec<T::State>,
    /// Each state's successors `(name, state)`, sorted, once computed.
    successors: Vec<Option<Vec<(u32, u32)>>>,
    /// The name id of each of the system's labels, once met.
    label_names: FxHashMap<Label, u32>,
    set_ids: FxHashMap<Vec<u32>, u32>,
    sets: Vec<Vec<u32>>,
    weak: bool,
}

impl<'a, T: TransitionSystem> Explored<'a, T> {
    fn new(ts: &'a T, weak: bool) -> Self {
        Explored {
            ts,
            state_ids: FxHashMap::default(),
            states: Vec::new(),
            successors: Vec::new(),
            label_names: FxHashMap::default(),
            set_ids: FxHashMap::default(),
            sets: Vec::new(),
            weak,
        }
    }

    fn state(&mut self, s: T::State) -> u32 {
        let next = self.states.len() as u32;
        *self.state_ids.entry(s.clone()).or_insert_with(|| {
            self.states.push(s);
            self.successors.push(None);
            next
        })
    }

    fn successors(&mut self, x: u32, names: &mut Names) -> &[(u32, u32)] {
        if self.successors[x as usize].is_none() {
            let mut raw: Vec<(Label, T::State)> = Vec::new();
            let state = self.states[x as usize].clone();
            self.ts
                .for_each_successor(&state, &mut |a, t| raw.push((a, t)));
            let mut out = Vec::with_capacity(raw.len());
            for (a, t) in raw {
                let name = if a == TAU {
                    TAU_NAME
                } else {
                    match self.label_names.get(&a) {
                        Some(&n) => n,
                        None => {
                            let n = names.id(self.ts.label_name(a));
                            self.label_names.insert(a, n);
                            n
                        }
                    }
                };
                let t = self.state(t);
                out.push((name, t));
            }
            out.sort_unstable();
            out.dedup();
            self.successors[x as usize] = Some(out);
        }
        self.successors[x as usize].as_deref().unwrap_or(&[])
    }

    /// The id of the set `members` (sorted), tau-closed first when weak.
    fn set(&mut self, mut members: Vec<u32>, names: &mut Names) -> u32 {
        if self.weak {
            let mut seen: rustc_hash::FxHashSet<u32> = members.iter().copied().collect();
            let mut at = 0;
            while at < members.len() {
                let x = members[at];
                at += 1;
                let taus: Vec<u32> = self
                    .successors(x, names)
                    .iter()
                    .filter(|&&(n, _)| n == TAU_NAME)
                    .map(|&(_, t)| t)
                    .collect();
                for t in taus {
                    if seen.insert(t) {
                        members.push(t);
                    }
                }
            }
        }
        members.sort_unstable();
        members.dedup();
        let next = self.sets.len() as u32;
        *self.set_ids.entry(members.clone()).or_insert_with(|| {
            self.sets.push(members);
            next
        })
    }

    /// The `(name, successor set)` of set `x`, by name (taus left out when weak).
    fn set_successors(&mut self, x: u32, names: &mut Names) -> Vec<(u32, u32)> {
        let mut steps: Vec<(u32, u32)> = Vec::new();
        for i in 0..self.sets[x as usize].len() {
            let s = self.sets[x as usize][i];
            let weak = self.weak;
            steps.extend(
                self.successors(s, names)
                    .iter()
                    .filter(|&&(n, _)| !(weak && n == TAU_NAME)),
            );
        }
        steps.sort_unstable();
        steps.dedup();
        let mut out = Vec::new();
        let mut at = 0;
        while at < steps.len() {
            let name = steps[at].0;
            let mut upto = at;
            while upto < steps.len() && steps[upto].0 == name {
                upto += 1;
            }
            let members: Vec<u32> = steps[at..upto].iter().map(|&(_, t)| t).collect();
            at = upto;
            out.push((name, self.set(members, names)));
        }
        out
    }
}

/// Searches the product of the subset constructions of `first` and `second` breadth-first
/// for a shortest trace one has and the other lacks (`weak`: traces of visible events, taus
/// unobservable; else tau is an ordinary event). Labels are matched by name.
pub fn trace_search<A: TransitionSystem, B: TransitionSystem>(
    first: &A,
    second: &B,
    weak: bool,
    stop: &StopSignal,
) -> TraceSearch {
    let mut names = Names {
        ids: FxHashMap::from_iter([("tau".to_string(), TAU_NAME)]),
        names: vec!["tau".to_string()],
    };
    let mut a = Explored::new(first, weak);
    let mut b = Explored::new(second, weak);
    let ia = a.state(first.initial_state());
    let ib = b.state(second.initial_state());
    let sa = a.set(vec![ia], &mut names);
    let sb = b.set(vec![ib], &mut names);
    // Pairs, with the pair and name they were first reached by.
    let mut pair_ids: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut pairs: Vec<PairEntry> = vec![((sa, sb), None)];
    pair_ids.insert((sa, sb), 0);
    let mut queue = VecDeque::from([0u32]);
    while let Some(p) = queue.pop_front() {
        if stop.reason().is_some() {
            return TraceSearch::Stopped;
        }
        let (x, y) = pairs[p as usize].0;
        let left = a.set_successors(x, &mut names);
        let right = b.set_successors(y, &mut names);
        // The smallest event name (as text) one side offers and the other does not.
        let missing = |from: &[(u32, u32)], to: &[(u32, u32)]| {
            from.iter()
                .filter(|(n, _)| to.binary_search_by_key(n, |&(m, _)| m).is_err())
                .map(|&(n, _)| names.names[n as usize].clone())
                .min()
        };
        let found = match (missing(&left, &right), missing(&right, &left)) {
            (Some(e), Some(f)) if f < e => Some((Side::Second, f)),
            (Some(e), _) => Some((Side::First, e)),
            (None, Some(f)) => Some((Side::Second, f)),
            (None, None) => None,
        };
        if let Some((side, event)) = found {
            let mut trace = Vec::new();
            let mut at = p;
            while let Some((before, name)) = pairs[at as usize].1 {
                trace.push(names.names[name as usize].clone());
                at = before;
            }
            trace.reverse();
            return TraceSearch::Differ {
                difference: Difference {
                    trace,
                    side,
                    event: Some(event),
                },
                pairs: pairs.len() as u64,
            };
        }
        for (&(name, u), &(_, v)) in left.iter().zip(&right) {
            let next = pairs.len() as u32;
            if let std::collections::hash_map::Entry::Vacant(e) = pair_ids.entry((u, v)) {
                e.insert(next);
                pairs.push(((u, v), Some((p, name))));
                queue.push_back(next);
            }
        }
    }
    TraceSearch::SameTraces {
        pairs: pairs.len() as u64,
    }
}
