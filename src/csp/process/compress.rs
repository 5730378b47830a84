//! Compressed processes as explicit leaves: `normal(P)`, `sbisim(P)`, ... As FDR does, the
//! argument is explored on its own, compressed ([`crate::reduce::Compression`]), and then runs
//! as an explicit LTS: its state `s` is the term `compress(k, s)`, whose transitions are read
//! from the table, so a network over compressed components is the product of the small LTSs.
//!
//! The compression is made the first time one of its states fires (by whichever worker gets
//! there; the others wait for it). Its states are numbered canonically: the argument is
//! explored breadth first in the canonical order of transitions, its labels renumbered by the
//! canonical order of events before the compression runs, and the compression numbers its
//! result breadth first; so the terms, and the explorer's ids, are the same in every run.

#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::csp::error::{CspError, ErrorKind};
use crate::csp::value::Proc;
use crate::lts::Lts;
use crate::reduce::Compression;
use crate::term::TermId;
use crate::ts::{Label, TAU};

use super::labels::TICK;
use super::semantics::Semantics;
use super::system::in_section;
use super::terms::{int_arg, term, BuildPath, Op, Section};

/// Most states the argument of a compression may have.
pub const MAX_COMPRESSED_STATES: usize = 5_000_000;

/// States a compression's exploration fires between two looks at the stop signal.
const STOP_LOOK_STATES: usize = 256;

/// A compressed process: per state, its transitions (system labels, target states).
pub(crate) struct CompressedLeaf {
    moves: Vec<Box<[(Label, u32)]>>,
    /// The compressions its argument's exploration fired directly (sorted): firing it applies
    /// them too, and those nested in them.
    nested: Vec<u32>,
}

/// The compressed LTS of one `compress(k, _)`, made once.
#[derive(Default)]
pub(crate) struct CompressedSlot(OnceLock<Result<Arc<CompressedLeaf>, CspError>>);

thread_local! {
    /// The compressions this thread is making (system, entry): a compression whose argument
    /// reaches itself is reported instead of waiting for itself.
    static MAKING: RefCell<Vec<(usize, u32)>> = const { RefCell::new(Vec::new()) };
    /// The compression a firing on this thread found not made yet (see [`pending`]).
    static PENDING: Cell<Option<u32>> = const { Cell::new(None) };
}

/// The compression that the firing which just failed on this thread needs made first, if
/// that is why it failed. A compression explores a whole process: it is made outside the
/// term library's shared sections ([`Semantics::make_compression`]), one section per state,
/// so that the table can grow and be collected meanwhile; the firing then runs again.
pub(crate) fn pending() -> Option<u32> {
    PENDING.with(Cell::take)
}

impl Semantics {
    /// The transitions of `compress(k, s)`: those of state `s` of the compressed LTS (an
    /// error, with [`pending`] set, if it is not made yet).
    pub(super) fn fire_compressed<'s>(
        &self,
        sec: &'s Section<'_>,
        t: crate::term::TermRef<'s>,
        out: &mut Vec<(Label, TermId)>,
    ) -> Result<(), CspError> {
        let k = int_arg(t, 0);
        let state = int_arg(t, 1);
        let entry = self.enc.compressed.get(k);
        let leaf = match entry.1 .0.get() {
            Some(made) => made.clone()?,
            None => {
                PENDING.with(|p| p.set(Some(k)));
                return Err(CspError::unpositioned(
                    ErrorKind::Eval,
                    format!(
                        "internal error: `{}` was not made before it ran",
                        entry.0 .0.name()
                    ),
                ));
            }
        };
        // Only `k`: the compressions nested in it are found through it when they are asked
        // for ([`Semantics::with_nested`]). Recording them all at every firing made a
        // compression nested `n` deep record `n` entries per transition.
        super::shared_leaves::record_compression(&[k]);
        let k_term = t.arg(0);
        for &(label, next) in leaf.moves[state as usize].iter() {
            let target = if label == TICK {
                self.enc.omega(sec)
            } else {
                let s = sec.int(next as i64);
                sec.create(Op::Compressed.symbol(2), &[k_term, s]).0
            };
            out.push((label, target.id()));
        }
        Ok(())
    }

    /// Makes the compressed LTS of entry `k` (once; other threads that need it wait). Must run
    /// outside any shared section of the term library.
    pub(crate) fn make_compression(&self, k: u32) -> Result<(), CspError> {
        let entry = self.enc.compressed.get(k);
        let key = (self as *const Semantics as usize, k);
        let (kind, process) = &entry.0;
        if MAKING.with(|m| m.borrow().contains(&key)) {
            return Err(CspError::unpositioned(
                ErrorKind::Eval,
                format!(
                    "`{}({})` is needed to compute itself: a compression cannot be applied \
                     to a process that runs it",
                    kind.name(),
                    self.enc.script.show_proc(process)
                ),
            ));
        }
        MAKING.with(|m| m.borrow_mut().push(key));
        let made = entry
            .1
             .0
            .get_or_init(|| self.compress(*kind, process).map(Arc::new))
            .clone();
        MAKING.with(|m| m.borrow_mut().retain(|&x| x != key));
        made.map(|_| ())
    }

    /// Runs `f` in a shared section of its own, first making any compression it needs.
    fn in_own_section<R>(
        &self,
        f: impl Fn(&Section<'_>) -> Result<R, CspError>,
    ) -> Result<R, CspError> {
        loop {
            match in_section(&f) {
                Err(e) => match pending() {
                    Some(k) => self.make_compression(k)?,
                    None => return Err(e),
                },
                done => return done,
            }
        }
    }

    /// The compressions `fired` (sorted, without duplicates) with every compression nested in
    /// them, however deep: sorted, without duplicates. A compression is nested in `k` if the
    /// exploration of `k`'s argument fired it, or one nested in it.
    pub(super) fn with_nested(&self, fired: &[u32]) -> Vec<u32> {
        let mut seen: std::collections::HashSet<u32, crate::hash::WordBuildHasher> =
            fired.iter().copied().collect();
        let mut todo = fired.to_vec();
        while let Some(k) = todo.pop() {
            // A compression fired was made (firing waits for it); one whose making failed
            // stopped the run, and has nothing nested to add.
            if let Some(Ok(leaf)) = self.enc.compressed.get(k).1 .0.get() {
                for &n in &leaf.nested {
                    if seen.insert(n) {
                        todo.push(n);
                    }
                }
            }
        }
        let mut all: Vec<u32> = seen.into_iter().collect();
        all.sort_unstable();
        all
    }

    /// Explores `process`, compresses it with `kind`, and tabulates the result. Each state is
    /// fired in a section of its own; the terms stay alive as keys and targets of the memo.
    fn compress(&self, kind: Compression, process: &Proc) -> Result<CompressedLeaf, CspError> {
        let (explored, nested) = self.recording(|| self.explore_to_compress(kind, process));
        let (states, transitions) = explored?;
        let mut leaf = self.compress_explored(kind, states.len() as u32, &transitions);
        leaf.nested = nested;
        Ok(leaf)
    }

    /// The states of `process` and their transitions (source, label, target), numbered
    /// breadth first in the canonical order of transitions.
    #[allow(clippy::type_complexity)]
    fn explore_to_compress(
        &self,
        kind: Compression,
        process: &Proc,
    ) -> Result<(Vec<TermId>, Vec<(u32, Label, u32)>), CspError> {
        let start = self.in_own_section(|sec| {
            let t = self.enc.build(sec, process, &mut BuildPath::default())?;
            // Fired at once: the memo keeps the term from now on.
            self.transitions(sec, t, 0)?;
            Ok(t.id())
        })?;
        let mut number: HashMap<TermId, u32> = HashMap::from([(start, 0)]);
        let mut states: Vec<TermId> = vec![start];
        let mut transitions: Vec<(u32, Label, u32)> = Vec::new();
        let mut next = 0;
        while next < states.len() {
            let source = next as u32;
            let id = states[next];
            let moves = self.in_own_section(|sec| self.transitions(sec, term(sec, id), 0))?;
            next += 1;
            if next % STOP_LOOK_STATES == 0 {
                if let Some(reason) = self.enc.stop.lock().reason() {
                    return Err(CspError::unpositioned(
                        ErrorKind::Stopped,
                        format!(
                            "stopped by {} while exploring `{}({})` to compress it",
                            reason.describe(),
                            kind.name(),
                            self.enc.script.show_proc(process)
                        ),
                    ));
                }
            }
            for &(label, target) in moves.iter() {
                let t = *number.entry(target).or_insert_with(|| {
                    states.push(target);
                    states.len() as u32 - 1
                });
                transitions.push((source, label, t));
            }
            if states.len() > MAX_COMPRESSED_STATES {
                return Err(CspError::unpositioned(
                    ErrorKind::Limit,
                    format!(
                        "`{}({})`: the process has more than {MAX_COMPRESSED_STATES} states, \
                         too many to compress",
                        kind.name(),
                        self.enc.script.show_proc(process)
                    ),
                ));
            }
        }
        Ok((states, transitions))
    }

    /// The compression with `kind` of the LTS of `states` states and `transitions`.
    fn compress_explored(
        &self,
        kind: Compression,
        states: u32,
        transitions: &[(u32, Label, u32)],
    ) -> CompressedLeaf {
        // Local labels: tau, ✓, then the events met in the canonical order of events (the
        // system numbers events in the order its workers meet them).
        let labels = &self.enc.labels;
        let mut events: Vec<Label> = transitions
            .iter()
            .map(|&(_, l, _)| l)
            .filter(|&l| l != TAU && l != TICK)
            .collect();
        events.sort_unstable_by(|&a, &b| labels.cmp(a, b));
        events.dedup();
        let mut system_label: Vec<Label> = vec![TAU, TICK];
        system_label.extend_from_slice(&events);
        let local: HashMap<Label, Label> = system_label
            .iter()
            .enumerate()
            .map(|(i, &l)| (l, i as Label))
            .collect();
        let names: Vec<String> = system_label
            .iter()
            .map(|&l| match l {
                TAU => "tau".to_string(),
                TICK => crate::refine::properties::TICK.to_string(),
                _ => labels.name(l),
            })
            .collect();
        let local_transitions: Vec<(u32, Label, u32)> = transitions
            .iter()
            .map(|&(s, l, t)| (s, local[&l], t))
            .collect();
        let lts = Lts::from_transitions(0, states, names, &local_transitions);
        let compressed = kind.apply(&lts);
        let moves = (0..compressed.num_states())
            .map(|s| {
                compressed
                    .successors(s)
                    .map(|(l, t)| (system_label[l as usize], t))
                    .collect()
            })
            .collect();
        CompressedLeaf {
            moves,
            nested: Vec::new(),
        }
    }
}
