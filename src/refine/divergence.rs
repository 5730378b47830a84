//! Divergence of implementation states, found on the fly: a state diverges when it can
//! perform an infinite sequence of taus, that is, when a tau path from it reaches a tau cycle.
//!
//! The answer for a state is computed by Tarjan's algorithm over the tau edges reachable from
//! it, and remembered for every state that search completes (two bits per state number, or,
//! for a system driven by packed encodings, the encoding in one of two compact sets), so
//! each state's tau successors are enumerated about once however many workers ask. Two workers
//! may search overlapping regions at the same time; they find the same answers (divergence is a
//! property of the state), so their writes agree.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use crate::explore::compact::CompactSet;
use crate::explore::index::Segmented;
use crate::explore::{StopReason, StopSignal};
use crate::hash::WordBuildHasher;
use crate::sync::shim::AtomicU64;
use crate::ts::{TransitionSystem, TAU};

// A state not yet known has the bits 0.
const CONVERGES: u64 = 1;
const DIVERGES: u64 = 2;

/// The divergence of the states of a system that numbers its states, or of one whose states
/// are their own keys ([`TransitionSystem::state_key`]), remembered.
pub(crate) struct DivergenceMemo<'a, T: TransitionSystem> {
    ts: &'a T,
    /// The search's stop signal: a long tau path (a counter hidden up to a large bound) is
    /// followed only while the search may go on.
    stop: StopSignal,
    /// The most states one search for a divergence may meet: past it, the search's stop
    /// signal is raised with the state limit (an infinite tau closure, `P = (a -> P) \\ {a}`
    /// growing its terms, would grow until the memory is gone).
    max_states: usize,
    memo: Memo,
}

/// What is known, by state number or by state key.
enum Memo {
    /// Two bits per state number, 32 numbers per word.
    Numbered(Box<Segmented<AtomicU64>>),
    /// The keys of the states known to converge, and of those known to diverge.
    Keyed {
        converges: CompactSet,
        diverges: CompactSet,
    },
}

/// The state of one run of Tarjan's algorithm.
struct Tarjan<S> {
    index: HashMap<u64, usize, WordBuildHasher>,
    numbers: Vec<u64>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    div: Vec<bool>,
    stack: Vec<usize>,
    frames: Vec<Frame<S>>,
}

impl<S> Default for Tarjan<S> {
    fn default() -> Self {
        Tarjan {
            index: HashMap::default(),
            numbers: Vec::new(),
            low: Vec::new(),
            on_stack: Vec::new(),
            div: Vec::new(),
            stack: Vec::new(),
            frames: Vec::new(),
        }
    }
}

impl<S> Tarjan<S> {
    /// Puts the state numbered `number`, with its tau successors, on the stack.
    fn push(&mut self, number: u64, successors: Vec<S>) {
        let node = self.numbers.len();
        self.index.insert(number, node);
        self.numbers.push(number);
        self.low.push(node);
        self.on_stack.push(true);
        self.div.push(false);
        self.stack.push(node);
        self.frames.push(Frame {
            node,
            successors,
            next: 0,
        });
    }
}

/// A state on Tarjan's stack, with its tau successors still to visit.
struct Frame<S> {
    node: usize,
    successors: Vec<S>,
    next: usize,
}

impl<'a, T: TransitionSystem> DivergenceMemo<'a, T> {
    /// Nothing known yet of `ts`'s states.
    pub(crate) fn new(ts: &'a T, stop: StopSignal) -> Self {
        let initial = ts.initial_state();
        let memo = if ts.state_number(&initial).is_none() && ts.state_key(&initial).is_some() {
            Memo::Keyed {
                converges: CompactSet::new(),
                diverges: CompactSet::new(),
            }
        } else {
            Memo::Numbered(Box::new(Segmented::new(1)))
        };
        DivergenceMemo {
            ts,
            stop,
            max_states: usize::MAX,
            memo,
        }
    }

    /// Bounds each search for a divergence to `max` states (the run's state limit, if any).
    pub(crate) fn limited_to(mut self, max: Option<u64>) -> Self {
        self.max_states = max.map_or(usize::MAX, |m| m.min(usize::MAX as u64) as usize);
        self
    }

    /// The state's number, or its key (see [`Memo`]).
    fn number(&self, state: &T::State) -> u64 {
        match self.memo {
            Memo::Numbered(_) => self
                .ts
                .state_number(state)
                .expect("a system that numbers its states")
                .index(),
            Memo::Keyed { .. } => self.ts.state_key(state).expect("a system with state keys"),
        }
    }

    /// A memo table that cannot grow is over the run's memory (an allocation that fails under
    /// an address-space bound, or one larger than the memory left): the search's stop signal
    /// is raised with [`StopReason::MemoryLimit`], and it ends as stopped, with its
    /// statistics, never with an abort. Meanwhile the answers, found without the memo, stay
    /// right.
    #[cold]
    fn note_memory_failure(&self) {
        self.stop.stop(StopReason::MemoryLimit);
    }

    fn known(&self, number: u64) -> u64 {
        match &self.memo {
            Memo::Numbered(memo) => {
                let Ok(group) = memo.try_get_or_alloc(number / 32) else {
                    // Not known: the search goes on without the memo, correct, until the stop.
                    self.note_memory_failure();
                    return 0;
                };
                let word = &group[0];
                // Ordering: Relaxed; the bits are facts about the state, valid whoever wrote
                // them.
                (word.load(Ordering::Relaxed) >> (2 * (number % 32))) & 3
            }
            Memo::Keyed {
                converges,
                diverges,
            } => {
                if diverges.contains(number) {
                    DIVERGES
                } else if converges.contains(number) {
                    CONVERGES
                } else {
                    0
                }
            }
        }
    }

    fn remember(&self, number: u64, diverges: bool) {
        match &self.memo {
            Memo::Numbered(memo) => {
                let Ok(group) = memo.try_get_or_alloc(number / 32) else {
                    // Not remembered: asked again, it is found again.
                    self.note_memory_failure();
                    return;
                };
                let word = &group[0];
                let bits = if diverges { DIVERGES } else { CONVERGES };
                // Ordering: Relaxed; see `known`.
                word.fetch_or(bits << (2 * (number % 32)), Ordering::Relaxed);
            }
            Memo::Keyed {
                converges,
                diverges: diverging,
            } => {
                if diverges {
                    diverging.insert(number);
                } else {
                    converges.insert(number);
                }
            }
        }
    }

    fn tau_successors(&self, state: &T::State) -> Vec<T::State> {
        let mut out = Vec::new();
        self.ts.for_each_successor(state, &mut |label, target| {
            if label == TAU {
                out.push(target);
            }
        });
        out
    }

    /// Whether `state` can perform infinitely many taus. When the search's stop signal is
    /// raised meanwhile, gives up and answers `false` without remembering anything: a stopped
    /// search gives no verdict, so the answer is never used.
    pub(crate) fn diverges(&self, state: &T::State) -> bool {
        let number = self.number(state);
        match self.known(number) {
            CONVERGES => return false,
            DIVERGES => return true,
            _ => {}
        }
        let successors = self.tau_successors(state);
        // Most states are decided by their tau successors alone (none, or all already known):
        // no search, no tables. A successor that is the state itself is unknown here.
        let mut some_diverges = false;
        let mut all_known = true;
        for w in &successors {
            match self.known(self.number(w)) {
                DIVERGES => some_diverges = true,
                CONVERGES => {}
                _ => all_known = false,
            }
        }
        if some_diverges || all_known {
            self.remember(number, some_diverges);
            return some_diverges;
        }
        // Tarjan's algorithm over the tau edges, iterative; `div` of a node: it has a tau
        // successor known to diverge, or a tau edge inside its component.
        let mut t = Tarjan::default();
        t.push(number, successors);
        while let Some(frame) = t.frames.last_mut() {
            let v = frame.node;
            if t.numbers.len() % 4096 == 4095 && self.stop.is_raised() {
                return false;
            }
            if t.numbers.len() > self.max_states {
                self.stop.stop(StopReason::StateLimit);
                return false;
            }
            if frame.next < frame.successors.len() {
                let w_state = frame.successors[frame.next].clone();
                frame.next += 1;
                let w_number = self.number(&w_state);
                match t.index.get(&w_number) {
                    Some(&w) => {
                        if t.on_stack[w] {
                            // A tau edge inside the component: a cycle.
                            t.div[v] = true;
                            t.low[v] = t.low[v].min(w);
                        } else if t.div[w] {
                            t.div[v] = true;
                        }
                    }
                    None => match self.known(w_number) {
                        DIVERGES => t.div[v] = true,
                        CONVERGES => {}
                        _ => t.push(w_number, self.tau_successors(&w_state)),
                    },
                }
                continue;
            }
            t.frames.pop();
            if let Some(parent) = t.frames.last() {
                let p = parent.node;
                t.low[p] = t.low[p].min(t.low[v]);
                // A successor in the same component shares its cycle; one below it passes
                // its divergence up.
                t.div[p] |= t.div[v];
            }
            if t.low[v] == v {
                // `v` roots a component: it diverges if any member does.
                let at = t.stack.iter().rposition(|&x| x == v).expect("on the stack");
                let members: Vec<usize> = t.stack.drain(at..).collect();
                let diverges = members.iter().any(|&m| t.div[m]);
                for m in members {
                    t.on_stack[m] = false;
                    t.div[m] = diverges;
                    self.remember(t.numbers[m], diverges);
                }
            }
        }
        t.div[0]
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::lts::Lts;

    /// 0 -tau-> 1 -tau-> 2 -tau-> 1 (a cycle), 3 -tau-> 4 (no cycle).
    fn taus() -> Lts {
        let names = vec!["tau".into(), "a".into()];
        let edges = [(0, 0, 1), (1, 0, 2), (2, 0, 1), (3, 0, 4), (0, 1, 3)];
        Lts::from_transitions(0, 5, names, &edges)
    }

    #[test]
    fn a_memo_that_cannot_grow_stops_the_search_by_the_memory_limit_with_right_answers() {
        let lts = taus();
        let stop = StopSignal::new();
        let mut memo = DivergenceMemo::new(&lts, stop.clone());
        // Groups of 2^50 words: the first segment is 2^64 bytes, more than any address space.
        memo.memo = Memo::Numbered(Box::new(Segmented::new(1 << 50)));
        let answers: Vec<bool> = (0..5).map(|s| memo.diverges(&s)).collect();
        assert_eq!(stop.reason(), Some(StopReason::MemoryLimit));
        // The answers asked before the stop was seen are those of a memo that grows.
        let growing_stop = StopSignal::new();
        let growing = DivergenceMemo::new(&lts, growing_stop.clone());
        let expected: Vec<bool> = (0..5).map(|s| growing.diverges(&s)).collect();
        assert_eq!(expected, [true, true, true, false, false]);
        assert_eq!(answers, expected);
        assert!(!growing_stop.is_raised());
    }
}
