//! The search: Algorithms 4, 5 and 6 of the thesis over the product of the specification's
//! normal form and the implementation, with parent pointers for counterexamples; in the
//! revivals and refusal-testing models, with the tests and successors of [`super::revivals`].

use std::collections::{HashMap, VecDeque};

use super::antichain::Discovered;
use super::normal::{NormalForm, EMPTY_SET};
use super::properties::TICK;
use super::revivals::{admissible_members, admissible_union, revival_evidence, StableGroup};
use super::{CheckOptions, CheckStats, Counterexample, Model, RefineError, Search, Violation};
use crate::explore::StopSignal;
use crate::lts::Lts;
use crate::ts::TAU;

const NONE: u32 = u32::MAX;
/// The search looks at its stop signal once per this many pairs expanded.
const STOP_POLL: u64 = 1024;
const NOT_COMPUTED: usize = usize::MAX;

/// A discovered product pair, with the step that discovered it.
#[derive(Clone, Copy)]
struct Node {
    set: u32,
    state: u32,
    parent: u32,
    /// The event of the step from the parent ([`TAU`] for an implementation tau).
    event: u32,
}

/// Where the search found a witness.
enum Found {
    /// The implementation state of pair `node` can do `event`; the spec set cannot.
    Trace { node: u32, event: u32 },
    /// The pair `node` is a stable implementation state refusing what the spec cannot refuse.
    Refusal { node: u32 },
    /// The pair `node` has a divergent implementation state and a non-divergent spec set.
    Divergence { node: u32 },
    /// The pair `node` is a stable implementation state that performs `event` after refusing
    /// what it does not offer; the spec set cannot.
    Revival { node: u32, event: u32 },
}

/// The common event alphabet: visible labels of both systems matched by name.
struct Alphabet {
    names: Vec<String>,
    spec_events: Vec<u32>,
    impl_events: Vec<u32>,
    /// The event named ✓, if either system has it.
    tick: Option<u32>,
}

impl Alphabet {
    fn new(spec: &Lts, impl_: &Lts) -> Alphabet {
        let mut names = vec![spec.label_names()[0].clone()];
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut map = |lts: &Lts| -> Vec<u32> {
            lts.label_names()
                .iter()
                .enumerate()
                .map(|(l, name)| {
                    if l == TAU as usize {
                        return TAU;
                    }
                    *ids.entry(name.clone()).or_insert_with(|| {
                        names.push(name.clone());
                        (names.len() - 1) as u32
                    })
                })
                .collect()
        };
        let spec_events = map(spec);
        let impl_events = map(impl_);
        Alphabet {
            tick: names.iter().position(|n| n == TICK).map(|e| e as u32),
            names,
            spec_events,
            impl_events,
        }
    }
}

/// The implementation side: its labels as events and a cache of the sorted visible events
/// enabled in each state.
struct ImplSide<'a> {
    lts: &'a Lts,
    events: Vec<u32>,
    /// The event of ✓, if it has one: a state that can perform it is not stable.
    tick: Option<u32>,
    enabled_at: Vec<usize>,
    enabled_len: Vec<u32>,
    enabled_events: Vec<u32>,
}

impl<'a> ImplSide<'a> {
    fn new(lts: &'a Lts, events: Vec<u32>, tick: Option<u32>) -> ImplSide<'a> {
        // States at or above `covered` have no transitions and are never reached.
        let n = lts.covered() as usize;
        ImplSide {
            lts,
            events,
            tick,
            enabled_at: vec![NOT_COMPUTED; n],
            enabled_len: vec![0; n],
            enabled_events: Vec::new(),
        }
    }

    /// The visible events enabled in `state`, sorted.
    fn enabled(&mut self, state: u32) -> &[u32] {
        let s = state as usize;
        if self.enabled_at[s] == NOT_COMPUTED {
            // Distinct labels may share a name, hence an event: sort and deduplicate.
            let at = self.enabled_events.len();
            let events = &self.events;
            self.enabled_events
                .extend(self.lts.enabled(state).iter().map(|&l| events[l as usize]));
            let list = &mut self.enabled_events[at..];
            list.sort_unstable();
            let mut kept = 0;
            for i in 0..list.len() {
                if i == 0 || list[i] != list[kept - 1] {
                    list[kept] = list[i];
                    kept += 1;
                }
            }
            self.enabled_events.truncate(at + kept);
            self.enabled_at[s] = at;
            self.enabled_len[s] = kept as u32;
        }
        let at = self.enabled_at[s];
        &self.enabled_events[at..at + self.enabled_len[s] as usize]
    }
}

impl ImplSide<'_> {
    /// Whether `state` can perform neither tau nor ✓.
    fn is_stable(&mut self, state: u32) -> bool {
        if !self.lts.is_stable(state) {
            return false;
        }
        match self.tick {
            Some(tick) => self.enabled(state).binary_search(&tick).is_err(),
            None => true,
        }
    }
}

struct Engine<'a> {
    model: Model,
    search: Search,
    nf: NormalForm<'a>,
    imp: ImplSide<'a>,
    seen: Discovered,
    nodes: Vec<Node>,
    working: VecDeque<u32>,
    stats: CheckStats,
    /// Successor spec set per event of the set `scattered` (else [`EMPTY_SET`]): replaces a
    /// binary search per transition when a set has few successors compared to the
    /// implementation state's transitions.
    dense_successor: Vec<u32>,
    scattered: u32,
    /// The stable members of each spec set grouped by acceptance, once computed (revivals and
    /// refusal testing).
    groups: Vec<Option<Box<[StableGroup]>>>,
    stop: &'a StopSignal,
}

impl Engine<'_> {
    /// Handles a pair found by a step from `parent` by `event`: a trace witness if the spec set
    /// is empty; otherwise, unless covered, it enters the antichain, is tested for the
    /// model's other witness conditions, and is scheduled for expansion.
    #[inline]
    fn discover(
        &mut self,
        set: u32,
        state: u32,
        parent: u32,
        event: u32,
    ) -> Result<Option<Found>, RefineError> {
        if set == EMPTY_SET {
            return Ok(Some(Found::Trace {
                node: parent,
                event,
            }));
        }
        if !self.seen.insert_if_new(&self.nf, set, state) {
            self.stats.antichain_hits += 1;
            return Ok(None);
        }
        self.stats.antichain_misses += 1;
        let held = self.seen.len();
        if held > self.stats.max_antichain {
            self.stats.max_antichain = held;
        }
        if self.nodes.len() >= NONE as usize {
            return Err(RefineError::TooManyPairs(NONE as u64));
        }
        let node = self.nodes.len() as u32;
        self.nodes.push(Node {
            set,
            state,
            parent,
            event,
        });
        match self.model {
            Model::Traces => {}
            Model::Failures => {
                if self.refuses_too_much(set, state) {
                    return Ok(Some(Found::Refusal { node }));
                }
            }
            Model::FailuresDivergences => {
                // A divergent spec set is chaos: nothing after it is a witness; not explored.
                if self.nf.is_divergent(set) {
                    return Ok(None);
                }
                if self.imp.lts.is_divergent(state) {
                    return Ok(Some(Found::Divergence { node }));
                }
                if self.refuses_too_much(set, state) {
                    return Ok(Some(Found::Refusal { node }));
                }
            }
            Model::Revivals
            | Model::RevivalsDivergences
            | Model::RefusalTesting
            | Model::RefusalTestingDivergences => {
                if self.model.has_divergences() {
                    if self.nf.is_divergent(set) {
                        return Ok(None);
                    }
                    if self.imp.lts.is_divergent(state) {
                        return Ok(Some(Found::Divergence { node }));
                    }
                }
                if let Some(found) = self.revival_test(node, set, state) {
                    return Ok(Some(found));
                }
            }
        }
        self.working.push_back(node);
        let len = self.working.len() as u64;
        if len > self.stats.max_working {
            self.stats.max_working = len;
        }
        Ok(None)
    }

    /// `stable(state) ∧ refusals(state) ⊈ refusals([[set]])`.
    #[inline]
    fn refuses_too_much(&mut self, set: u32, state: u32) -> bool {
        if !self.imp.is_stable(state) {
            return false;
        }
        let enabled = self.imp.enabled(state);
        !self.nf.can_refuse_all_but(set, enabled)
    }

    /// The stable members of `set` grouped by acceptance.
    fn groups(&mut self, set: u32) -> &[StableGroup] {
        let i = set as usize;
        if self.groups.len() <= i {
            self.groups.resize_with(i + 1, || None);
        }
        if self.groups[i].is_none() {
            self.groups[i] = Some(self.nf.stable_groups(set).into());
        }
        self.groups[i].as_deref().expect("just computed")
    }

    /// The revival test of pair `node` (`set`, `state`): at a stable implementation state, a
    /// refusal the spec set cannot make, or an event (one the set can perform) it cannot
    /// perform after making it; the first such event in the state's transition order.
    fn revival_test(&mut self, node: u32, set: u32, state: u32) -> Option<Found> {
        if !self.imp.is_stable(state) {
            return None;
        }
        let enabled = self.imp.enabled(state).to_vec();
        let Some(covered) = admissible_union(self.groups(set), &enabled) else {
            return Some(Found::Refusal { node });
        };
        self.nf.ensure_successors(set);
        let lts: &Lts = self.imp.lts;
        lts.outgoing(state)
            .0
            .iter()
            .map(|&l| self.imp.events[l as usize])
            .find(|&e| covered.binary_search(&e).is_err() && self.nf.successor(set, e) != EMPTY_SET)
            .map(|event| Found::Revival { node, event })
    }

    /// The spec set a refusal-testing step leaves from at pair (`set`, `state`): the members
    /// of `set` that can refuse what `state` refuses when it is stable, else `set`.
    fn leaving_set(&mut self, set: u32, state: u32) -> u32 {
        if !self.model.observes_refusal_traces() || !self.imp.is_stable(state) {
            return set;
        }
        let enabled = self.imp.enabled(state).to_vec();
        let members = admissible_members(self.groups(set), &enabled);
        if members.len() == self.nf.len(set) {
            set
        } else {
            self.nf.intern_states(&members)
        }
    }

    fn search(&mut self) -> Result<Option<Found>, RefineError> {
        let init = self.nf.initial_set();
        let impl_init = self.imp.lts.initial();
        if let Some(found) = self.discover(init, impl_init, NONE, NONE)? {
            return Ok(Some(found));
        }
        let impl_lts: &Lts = self.imp.lts;
        loop {
            let next = match self.search {
                Search::Bfs => self.working.pop_front(),
                Search::Dfs => self.working.pop_back(),
            };
            let Some(node) = next else {
                return Ok(None);
            };
            self.stats.pairs_explored += 1;
            if self.stats.pairs_explored.is_multiple_of(STOP_POLL) {
                if let Some(reason) = self.stop.reason() {
                    return Err(RefineError::Stopped(reason));
                }
            }
            let Node { set, state, .. } = self.nodes[node as usize];
            let tau_set = set;
            let set = self.leaving_set(set, state);
            self.nf.ensure_successors(set);
            let (labels, targets) = impl_lts.outgoing(state);
            let dense = self.nf.successors(set).len() <= 4 * labels.len();
            if dense {
                self.scatter(set);
            }
            for (&label, &target) in labels.iter().zip(targets) {
                let event = self.imp.events[label as usize];
                let next_set = if event == TAU {
                    tau_set
                } else if dense {
                    let next = self.dense_successor[event as usize];
                    debug_assert_eq!(next, self.nf.successor(set, event));
                    next
                } else {
                    self.nf.successor(set, event)
                };
                if let Some(found) = self.discover(next_set, target, node, event)? {
                    return Ok(Some(found));
                }
            }
        }
    }

    /// Makes `dense_successor` hold the successors of `set`.
    fn scatter(&mut self, set: u32) {
        if self.scattered == set {
            return;
        }
        if self.scattered != NONE {
            for &(event, _) in self.nf.successors(self.scattered) {
                self.dense_successor[event as usize] = EMPTY_SET;
            }
        }
        for &(event, next) in self.nf.successors(set) {
            self.dense_successor[event as usize] = next;
        }
        self.scattered = set;
    }

    /// The events of the steps from the initial pair to `node`.
    fn path_events(&self, node: u32) -> Vec<u32> {
        let mut events = Vec::new();
        let mut at = node;
        while self.nodes[at as usize].parent != NONE {
            events.push(self.nodes[at as usize].event);
            at = self.nodes[at as usize].parent;
        }
        events.reverse();
        events
    }

    fn counterexample(&mut self, found: Found, names: &[String]) -> Counterexample {
        let visible = |events: &[u32]| -> Vec<String> {
            events
                .iter()
                .filter(|&&e| e != TAU)
                .map(|&e| names[e as usize].clone())
                .collect()
        };
        match found {
            Found::Trace { node, event } => {
                let events = self.path_events(node);
                Counterexample {
                    trace: visible(&events),
                    impl_state: self.nodes[node as usize].state,
                    steps: events.len() + 1,
                    violation: Violation::Trace {
                        event: names[event as usize].clone(),
                    },
                    acceptances: self.refusal_trace(node, names),
                }
            }
            Found::Refusal { node } => {
                let events = self.path_events(node);
                let Node { set, state, .. } = self.nodes[node as usize];
                let enabled = self.imp.enabled(state).to_vec();
                self.nf.ensure_acceptances(set);
                let mut refused: Vec<String> = Vec::new();
                let mut spec_acceptances: Vec<Vec<String>> = Vec::new();
                for acceptance in self.nf.acceptances(set) {
                    let mut named: Vec<String> = Vec::new();
                    for &e in acceptance {
                        named.push(names[e as usize].clone());
                        if enabled.binary_search(&e).is_err() {
                            refused.push(names[e as usize].clone());
                        }
                    }
                    named.sort();
                    spec_acceptances.push(named);
                }
                // A stable state refuses ✓, which the spec cannot refuse where it can
                // terminate (there it can refuse every other event).
                if self.nf.can_terminate(set) {
                    refused.push(TICK.to_string());
                }
                refused.sort();
                refused.dedup();
                spec_acceptances.sort();
                Counterexample {
                    trace: visible(&events),
                    impl_state: state,
                    steps: events.len(),
                    violation: Violation::Refusal {
                        refused,
                        spec_acceptances,
                    },
                    acceptances: self.refusal_trace(node, names),
                }
            }
            Found::Divergence { node } => {
                let events = self.path_events(node);
                Counterexample {
                    trace: visible(&events),
                    impl_state: self.nodes[node as usize].state,
                    steps: events.len(),
                    violation: Violation::Divergence,
                    acceptances: self.refusal_trace(node, names),
                }
            }
            Found::Revival { node, event } => {
                let events = self.path_events(node);
                let Node { set, state, .. } = self.nodes[node as usize];
                let enabled = self.imp.enabled(state).to_vec();
                let (accs, refused) = revival_evidence(self.groups(set), &enabled, event);
                let named = |list: &[u32]| -> Vec<String> {
                    let mut out: Vec<String> =
                        list.iter().map(|&e| names[e as usize].clone()).collect();
                    out.sort();
                    out
                };
                let mut spec_acceptances: Vec<Vec<String>> =
                    accs.iter().map(|a| named(a)).collect();
                spec_acceptances.sort();
                Counterexample {
                    trace: visible(&events),
                    impl_state: state,
                    steps: events.len(),
                    violation: Violation::Revival {
                        accepted: named(&enabled),
                        event: names[event as usize].clone(),
                        refused: named(&refused),
                        spec_acceptances,
                    },
                    acceptances: self.refusal_trace(node, names),
                }
            }
        }
    }

    /// In the refusal-testing models, the acceptance before each visible step of the path to
    /// `node` (`None` where the state it leaves is unstable); else empty.
    fn refusal_trace(&mut self, node: u32, names: &[String]) -> Vec<Option<Vec<String>>> {
        if !self.model.observes_refusal_traces() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut at = node;
        while self.nodes[at as usize].parent != NONE {
            let Node { parent, event, .. } = self.nodes[at as usize];
            if event != TAU {
                let from = self.nodes[parent as usize].state;
                out.push(self.imp.is_stable(from).then(|| {
                    let mut accepted: Vec<String> = self
                        .imp
                        .enabled(from)
                        .iter()
                        .map(|&e| names[e as usize].clone())
                        .collect();
                    accepted.sort();
                    accepted
                }));
            }
            at = parent;
        }
        out.reverse();
        out
    }
}

/// Runs the check; returns the counterexample (not yet replayed) and the statistics (time not
/// filled in).
pub(crate) fn run(
    spec: &Lts,
    impl_: &Lts,
    opts: &CheckOptions,
    stop: &StopSignal,
) -> Result<(Option<Counterexample>, CheckStats), RefineError> {
    let alphabet = Alphabet::new(spec, impl_);
    let num_events = alphabet.names.len();
    let mut engine = Engine {
        model: opts.model,
        search: opts.search,
        nf: NormalForm::new(spec, alphabet.spec_events),
        imp: ImplSide::new(impl_, alphabet.impl_events, alphabet.tick),
        seen: Discovered::new(opts.no_antichain, impl_.covered()),
        nodes: Vec::new(),
        working: VecDeque::new(),
        stats: CheckStats::default(),
        dense_successor: vec![EMPTY_SET; num_events],
        scattered: NONE,
        groups: Vec::new(),
        stop,
    };
    let found = engine.search()?;
    engine.stats.pairs_discovered = engine.nodes.len() as u64;
    engine.stats.spec_sets = engine.nf.num_sets() as u64;
    let cex = found.map(|f| engine.counterexample(f, &alphabet.names));
    Ok((cex, engine.stats))
}
