//! A brute-force oracle for the assertion checks of `weft::refine::properties`, written from
//! the definitions: it enumerates every visible trace up to a depth, with the set of states
//! each one reaches (taus included), and reads deadlocks, divergences, stable failures and
//! determinism off those sets. Slow (exponential in the depth); for small LTSs only.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, VecDeque};

use weft::lts::Lts;
use weft::ts::TAU;

/// The name of the tick label, as `weft::refine::properties::TICK` (repeated here so that the
/// oracle does not lean on the module it checks).
pub const TICK: &str = "✓";

/// One LTS seen through its traces.
pub struct Oracle<'a> {
    lts: &'a Lts,
    /// The visible label names, sorted.
    pub sigma: Vec<String>,
    /// Divergence of the states asked about so far.
    divergent: RefCell<HashMap<u32, bool>>,
}

/// A failing trace found by the oracle: its length and, for determinism, the event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The trace.
    pub trace: Vec<String>,
    /// For determinism: the event both possible and refusable (None for a divergence).
    pub event: Option<String>,
}

impl<'a> Oracle<'a> {
    /// Prepares the oracle.
    pub fn new(lts: &'a Lts) -> Self {
        let sigma: BTreeSet<String> = lts
            .transitions()
            .filter(|&(_, l, _)| l != TAU)
            .map(|(_, l, _)| lts.label_names()[l as usize].clone())
            .collect();
        Oracle {
            lts,
            sigma: sigma.into_iter().collect(),
            divergent: RefCell::new(HashMap::new()),
        }
    }

    fn name(&self, label: u32) -> &str {
        &self.lts.label_names()[label as usize]
    }

    /// The states reachable from `set` by zero or more taus.
    pub fn closure(&self, set: BTreeSet<u32>) -> BTreeSet<u32> {
        let mut seen = set.clone();
        let mut queue: VecDeque<u32> = set.into_iter().collect();
        while let Some(s) = queue.pop_front() {
            for (l, t) in self.lts.successors(s) {
                if l == TAU && seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
        seen
    }

    /// The states reached from `set` by one `event` and then any taus.
    pub fn step(&self, set: &BTreeSet<u32>, event: &str) -> BTreeSet<u32> {
        let direct: BTreeSet<u32> = set
            .iter()
            .flat_map(|&s| self.lts.successors(s))
            .filter(|&(l, _)| l != TAU && self.name(l) == event)
            .map(|(_, t)| t)
            .collect();
        self.closure(direct)
    }

    /// The states reached by `trace` from the initial state (empty if it is not a trace).
    pub fn after(&self, trace: &[String]) -> BTreeSet<u32> {
        let mut set = self.closure(BTreeSet::from([self.lts.initial()]));
        for e in trace {
            set = self.step(&set, e);
        }
        set
    }

    /// Every trace of length at most `depth`, with the states it reaches, shortest first.
    pub fn traces(&self, depth: usize) -> Vec<(Vec<String>, BTreeSet<u32>)> {
        let mut out = vec![(Vec::new(), self.after(&[]))];
        let mut i = 0;
        while i < out.len() {
            if out[i].0.len() < depth {
                for e in &self.sigma {
                    let next = self.step(&out[i].1, e);
                    if !next.is_empty() {
                        let mut trace = out[i].0.clone();
                        trace.push(e.clone());
                        out.push((trace, next));
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// Whether `s` is divergent: some state it reaches by taus reaches itself again by one
    /// or more taus (searched with `super::naive::tau_reach`, remembered per state).
    pub fn is_divergent(&self, s: u32) -> bool {
        if let Some(&known) = self.divergent.borrow().get(&s) {
            return known;
        }
        let answer = super::naive::tau_reach(self.lts, s, 0)
            .into_iter()
            .any(|t| super::naive::tau_reach(self.lts, t, 1).contains(&t));
        self.divergent.borrow_mut().insert(s, answer);
        answer
    }

    /// Whether `s` is stable (no tau).
    pub fn is_stable(&self, s: u32) -> bool {
        self.lts.successors(s).all(|(l, _)| l != TAU)
    }

    /// The names of the events `s` offers.
    pub fn offers(&self, s: u32) -> BTreeSet<String> {
        self.lts
            .successors(s)
            .filter(|&(l, _)| l != TAU)
            .map(|(l, _)| self.name(l).to_string())
            .collect()
    }

    /// Whether state `s` can refuse `event`: stable and not offering it, or able to terminate
    /// and `event` is not ✓.
    pub fn refuses(&self, s: u32, event: &str) -> bool {
        let offers = self.offers(s);
        if offers.contains(TICK) {
            event != TICK
        } else {
            self.is_stable(s) && !offers.contains(event)
        }
    }

    /// What a refusing state accepts: its offers when stable, `{✓}` when it can terminate.
    pub fn acceptance(&self, s: u32) -> BTreeSet<String> {
        let offers = self.offers(s);
        if offers.contains(TICK) {
            BTreeSet::from([TICK.to_string()])
        } else {
            offers
        }
    }

    /// Whether `(trace, refusal)` is a stable failure: some stable state reached by the
    /// trace offers no event of `refusal`, or (✓ being a signal: `s^<✓>` a trace makes
    /// `(s, Σ)` a failure) some state reached by it can terminate and `refusal` leaves ✓ out.
    pub fn is_failure(&self, trace: &[String], refusal: &BTreeSet<String>) -> bool {
        self.after(trace).into_iter().any(|s| {
            let offers = self.offers(s);
            if offers.contains(TICK) {
                !refusal.contains(TICK)
            } else {
                self.is_stable(s) && offers.is_disjoint(refusal)
            }
        })
    }

    /// Whether `s` is a deadlock in the failures sense: stable and refusing every event.
    pub fn refuses_everything(&self, s: u32) -> bool {
        let all: BTreeSet<String> = self.sigma.iter().cloned().collect();
        self.is_stable(s) && self.offers(s).is_disjoint(&all)
    }

    /// The shortest trace (up to `depth`) after which the process deadlocks, i.e. `(s, Σ∪{✓})`
    /// is a stable failure with `s` not ending in ✓; in FD (`fd`) also one that diverges.
    pub fn deadlock(&self, depth: usize, fd: bool) -> Option<Found> {
        self.traces(depth)
            .into_iter()
            .find(|(trace, set)| {
                trace.last().is_none_or(|e| e != TICK)
                    && set
                        .iter()
                        .any(|&s| self.refuses_everything(s) || (fd && self.is_divergent(s)))
            })
            .map(|(trace, _)| Found { trace, event: None })
    }

    /// The shortest trace (up to `depth`) after which the process can diverge.
    pub fn divergence(&self, depth: usize) -> Option<Found> {
        self.traces(depth)
            .into_iter()
            .find(|(_, set)| set.iter().any(|&s| self.is_divergent(s)))
            .map(|(trace, _)| Found { trace, event: None })
    }

    /// The shortest trace `s` (up to `depth`) with an event `a` such that `s^<a>` is a trace
    /// and `(s, {a})` a stable failure; in FD also a divergent `s` (reported with no event).
    pub fn nondeterminism(&self, depth: usize, fd: bool) -> Option<Found> {
        for (trace, set) in self.traces(depth) {
            if fd && set.iter().any(|&s| self.is_divergent(s)) {
                return Some(Found { trace, event: None });
            }
            for a in &self.sigma {
                let mut longer = trace.clone();
                longer.push(a.clone());
                if !self.after(&longer).is_empty()
                    && self.is_failure(&trace, &BTreeSet::from([a.clone()]))
                {
                    return Some(Found {
                        trace,
                        event: Some(a.clone()),
                    });
                }
            }
        }
        None
    }

    /// The length of the longest prefix of `trace` that is a trace.
    pub fn longest_prefix(&self, trace: &[String]) -> usize {
        (0..=trace.len())
            .rev()
            .find(|&k| !self.after(&trace[..k]).is_empty())
            .expect("the empty trace is a trace")
    }

    /// Whether `trace` is a trace in the traces model, or (`fd`) in the failures-divergences
    /// model, where a divergent prefix makes every extension a trace.
    pub fn has_trace(&self, trace: &[String], fd: bool) -> bool {
        let k = self.longest_prefix(trace);
        k == trace.len()
            || (fd
                && (0..=k).any(|j| {
                    self.after(&trace[..j])
                        .iter()
                        .any(|&s| self.is_divergent(s))
                }))
    }

    /// The fewest transitions (taus included) on a path from the initial state to a state
    /// satisfying `bad`, by plain breadth-first search.
    pub fn min_steps_to(&self, bad: impl Fn(u32) -> bool) -> Option<usize> {
        let mut dist = vec![usize::MAX; self.lts.num_states() as usize];
        let mut queue = VecDeque::from([self.lts.initial()]);
        dist[self.lts.initial() as usize] = 0;
        while let Some(s) = queue.pop_front() {
            if bad(s) {
                return Some(dist[s as usize]);
            }
            for (_, t) in self.lts.successors(s) {
                if dist[t as usize] == usize::MAX {
                    dist[t as usize] = dist[s as usize] + 1;
                    queue.push_back(t);
                }
            }
        }
        None
    }

    /// The visible trace of the least path (label sequences compared by name, tau first)
    /// among the paths of exactly `steps` transitions from the initial state to a state
    /// satisfying `bad`, by enumerating all such paths.
    pub fn least_path_trace(&self, steps: usize, bad: impl Fn(u32) -> bool) -> Option<Vec<String>> {
        let mut best: Option<Vec<String>> = None;
        let mut stack: Vec<(u32, Vec<String>)> = vec![(self.lts.initial(), Vec::new())];
        while let Some((s, path)) = stack.pop() {
            if path.len() == steps {
                if bad(s) && best.as_ref().is_none_or(|b| path < *b) {
                    best = Some(path);
                }
                continue;
            }
            for (l, t) in self.lts.successors(s) {
                let mut longer = path.clone();
                // The empty name sorts tau before every visible label.
                longer.push(if l == TAU {
                    String::new()
                } else {
                    self.name(l).to_string()
                });
                stack.push((t, longer));
            }
        }
        best.map(|p| p.into_iter().filter(|e| !e.is_empty()).collect())
    }
}

/// A random LTS of 1 to `max_states` states over tau, `a`, `b`, the kind the oracle reads;
/// when ✓ occurs, its transitions all lead to one extra state Ω without transitions, which
/// nothing else enters (as in CSP).
pub fn arb_process_lts(max_states: u32) -> impl proptest::strategy::Strategy<Value = Lts> {
    use proptest::prelude::*;
    use weft::ts::Label;
    (1..=max_states, any::<bool>()).prop_flat_map(|(n, with_tick)| {
        let transition = (
            0..n,
            prop_oneof![2 => Just(0 as Label), 3 => 1..3 as Label],
            0..n,
        );
        let ticks = proptest::collection::vec(0..n, 0..if with_tick { 3 } else { 1 });
        (
            0..n,
            proptest::collection::vec(transition, 0..(2 * n as usize + 4)),
            ticks,
        )
            .prop_map(move |(initial, mut transitions, ticks)| {
                let mut names: Vec<String> = ["tau", "a", "b"].map(String::from).to_vec();
                let mut states = n;
                if !ticks.is_empty() {
                    names.push(TICK.to_string());
                    transitions.extend(ticks.iter().map(|&s| (s, 3, n)));
                    states = n + 1;
                }
                Lts::from_transitions(initial, states, names, &transitions)
            })
    })
}
