//! Random small LTS pairs: shared event names, taus, tau cycles, nondeterminism, events the
//! specification never mentions, and implementations made by mutating the specification (so
//! that counterexamples are not all one step long).

use std::collections::BTreeSet;

use weft::lts::Lts;

use super::rng::Rng;

/// An LTS as plain data, independent of weft: `None` labels are taus.
#[derive(Clone, Debug)]
pub struct RawLts {
    pub initial: u32,
    pub num_states: u32,
    pub transitions: Vec<(u32, Option<String>, u32)>,
}

impl RawLts {
    /// The weft [`Lts`]: label 0 is `tau`, visible labels numbered in order of first use.
    pub fn to_lts(&self) -> Lts {
        let mut names = vec!["tau".to_string()];
        let triples: Vec<(u32, u32, u32)> = self
            .transitions
            .iter()
            .map(|(s, l, t)| {
                let id = match l {
                    None => 0,
                    Some(name) => match names.iter().position(|n| n == name) {
                        Some(id) => id,
                        None => {
                            names.push(name.clone());
                            names.len() - 1
                        }
                    },
                };
                (*s, id as u32, *t)
            })
            .collect();
        Lts::from_transitions(self.initial, self.num_states, names, &triples)
    }

    /// The transitions of `state`.
    pub fn outgoing(&self, state: u32) -> impl Iterator<Item = (Option<&str>, u32)> + '_ {
        self.transitions
            .iter()
            .filter(move |(s, _, _)| *s == state)
            .map(|(_, l, t)| (l.as_deref(), *t))
    }

    /// The names of the visible events enabled in `state`.
    pub fn enabled(&self, state: u32) -> BTreeSet<&str> {
        self.outgoing(state).filter_map(|(l, _)| l).collect()
    }
}

fn random_label(rng: &mut Rng, names: &[&str]) -> Option<String> {
    if rng.chance(25) {
        None
    } else {
        Some(rng.pick(names).to_string())
    }
}

/// A random LTS with 1 to `max_states` states over `names` (and tau).
pub fn random_lts(rng: &mut Rng, max_states: usize, names: &[&str]) -> RawLts {
    let n = rng.range(1, max_states);
    let m = rng.range(0, 2 * n + 2);
    let mut transitions = Vec::with_capacity(m + 2);
    for _ in 0..m {
        let s = rng.below(n) as u32;
        let t = rng.below(n) as u32;
        transitions.push((s, random_label(rng, names), t));
    }
    if rng.chance(25) {
        // A tau cycle (a self-loop when the two states coincide).
        let s = rng.below(n) as u32;
        let t = rng.below(n) as u32;
        transitions.push((s, None, t));
        transitions.push((t, None, s));
    }
    RawLts {
        initial: if rng.chance(70) {
            0
        } else {
            rng.below(n) as u32
        },
        num_states: n as u32,
        transitions,
    }
}

/// A random layered LTS: states `0..n` (n from 4 to `max_states`), each with one to three
/// transitions mostly to the next two states and sometimes back; its states lie at many
/// distances from the initial state 0, so that a mutation deep in it gives a long
/// counterexample.
pub fn layered_lts(rng: &mut Rng, max_states: usize, names: &[&str]) -> RawLts {
    let n = rng.range(4, max_states);
    let mut transitions = Vec::new();
    for s in 0..n {
        for _ in 0..rng.range(1, 3) {
            let t = if rng.chance(15) {
                rng.below(s + 1)
            } else {
                (s + rng.range(1, 2)).min(n - 1)
            };
            transitions.push((s as u32, random_label(rng, names), t as u32));
        }
    }
    RawLts {
        initial: 0,
        num_states: n as u32,
        transitions,
    }
}

/// `spec` changed by one to three mutations: a transition added, removed, retargeted or
/// relabelled, or a state added with transitions into and out of it.
pub fn mutate(rng: &mut Rng, spec: &RawLts, names: &[&str]) -> RawLts {
    let mut l = spec.clone();
    for _ in 0..rng.range(1, 3) {
        let n = l.num_states as usize;
        match rng.below(5) {
            0 | 1 => {
                let (s, t) = (rng.below(n) as u32, rng.below(n) as u32);
                l.transitions.push((s, random_label(rng, names), t));
            }
            2 if !l.transitions.is_empty() => {
                let i = rng.below(l.transitions.len());
                l.transitions.remove(i);
            }
            3 if !l.transitions.is_empty() => {
                let i = rng.below(l.transitions.len());
                if rng.chance(50) {
                    l.transitions[i].2 = rng.below(n) as u32;
                } else {
                    l.transitions[i].1 = random_label(rng, names);
                }
            }
            _ => {
                let new = l.num_states;
                l.num_states += 1;
                let (s, t) = (rng.below(n) as u32, rng.below(n + 1) as u32);
                l.transitions.push((s, random_label(rng, names), new));
                l.transitions.push((new, random_label(rng, names), t));
            }
        }
    }
    l
}

/// A random (specification, implementation) pair.
pub fn random_pair(rng: &mut Rng) -> (RawLts, RawLts) {
    const SHARED: [&str; 3] = ["a", "b", "c"];
    let mut spec_names: Vec<&str> = SHARED.iter().copied().filter(|_| rng.chance(75)).collect();
    if spec_names.is_empty() {
        spec_names.push(SHARED[rng.below(SHARED.len())]);
    }
    let mut impl_names = spec_names.clone();
    if rng.chance(30) {
        // An event the specification never mentions.
        impl_names.push("d");
    }
    if rng.chance(50) && !impl_names.contains(&"c") {
        impl_names.push("c");
    }
    if rng.chance(30) {
        let spec = layered_lts(rng, 14, &spec_names);
        let implementation = mutate(rng, &spec, &impl_names);
        return (spec, implementation);
    }
    let big = rng.chance(15);
    let spec = random_lts(rng, if big { 10 } else { 5 }, &spec_names);
    let implementation = if rng.chance(50) {
        mutate(rng, &spec, &impl_names)
    } else {
        random_lts(rng, if big { 12 } else { 7 }, &impl_names)
    };
    (spec, implementation)
}
