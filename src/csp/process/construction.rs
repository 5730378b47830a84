//! Making a [`CspSystem`]: its process built as a term, a network's positions explored on
//! their own and laid out in a state (or the process explored whole), in one shared section
//! of the term table, tried again after the compressions its positions meet are made or the
//! table has grown (see the module documentation of [`super::system`]).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::explore::StateIndex;
use crate::term::{global, RootRegistration};

use super::growth::GrowthWatch;
use super::layout::Layout;
use super::leaves::{LeafTable, NotExplored, Position};
use super::network::NetNode;
use super::semantics::Semantics;
use super::shared_leaves::merge_compressions;
use super::system::{CspSystem, Shape, Shared, EXPLICIT_COMPRESSED_LEAVES, EXPLICIT_LEAVES, TERMS};
use super::terms::{BuildPath, Op, Section};
use crate::csp::error::{CspError, ErrorKind};
use crate::csp::value::Proc;

static NEXT_SYSTEM: AtomicU64 = AtomicU64::new(1);

/// What one try at making a system gives.
enum Made {
    System(CspSystem),
    /// Compressions to make (outside any section) before the next try.
    Pending(Vec<u32>),
    /// The term table must grow (outside any section), with room for this many insertions,
    /// before the next try.
    Grow(usize),
}

impl CspSystem {
    /// As [`CspSystem::new_until`], on `sem`, which other systems may share (see
    /// [`SystemMaker`](super::shared_leaves::SystemMaker)), and which is a registered root
    /// set (by `sem_roots`, which the system keeps, or by its owner).
    pub(super) fn on_semantics(
        sem: &Arc<Semantics>,
        process: &Proc,
        stop: &crate::explore::StopSignal,
        mut sem_roots: Option<RootRegistration>,
    ) -> Result<CspSystem, CspError> {
        // Ordering: Relaxed; only uniqueness matters.
        let id = NEXT_SYSTEM.fetch_add(1, Ordering::Relaxed);
        *sem.enc.stop.lock() = stop.clone();
        sem.enc.script.set_stop(stop);
        // The semantics' memo being a root set of its own, a compression that a position's
        // process meets is made outside the construction's section (as `for_each_successor`
        // does), and the construction runs again, so the position is explicit too.
        let mut made: Vec<u32> = Vec::new();
        loop {
            match Self::make(id, sem, process, &made, &mut sem_roots)? {
                Made::System(system) => return Ok(system),
                Made::Grow(reserve) => TERMS.with(|tt| tt.collect_reserving(reserve)),
                Made::Pending(pending) => {
                    for k in pending {
                        if made.contains(&k) {
                            // Made, yet pending again: not expected; the position stays lazy
                            // on the next try rather than looping.
                            continue;
                        }
                        made.push(k);
                        // A failure is kept in the compression's slot and met again, and
                        // reported, when the position runs.
                        let _ = sem.make_compression(k);
                    }
                }
            }
        }
    }

    /// Makes the system in one section, or names the compressions its positions' processes
    /// need made first.
    fn make(
        id: u64,
        sem: &Arc<Semantics>,
        process: &Proc,
        made: &[u32],
        sem_roots: &mut Option<RootRegistration>,
    ) -> Result<Made, CspError> {
        TERMS.with(|tt| {
            // The whole construction runs in one section: the terms built stay valid until the
            // system's root set, registered before the section ends, holds them.
            let sec = tt.shared_section();
            let growth = GrowthWatch::start();
            let mut made = Self::make_in(id, sem, process, made, &sec);
            if growth.gave_up() {
                // Room for twice the terms made since the last collection (this try's, at
                // least), counted before the section ends (where a collection may run).
                tt.flush_counts();
                // Ordering: Relaxed; a statistic.
                let made = global().inserted.load(Ordering::Relaxed) as usize;
                return Ok(Made::Grow(made.saturating_mul(2)));
            }
            if let Ok(Made::System(system)) = &mut made {
                system._sem_roots = sem_roots.take();
            }
            made
        })
    }

    /// [`CspSystem::make`] inside its section.
    fn make_in(
        id: u64,
        sem: &Arc<Semantics>,
        process: &Proc,
        made: &[u32],
        sec: &Section<'_>,
    ) -> Result<Made, CspError> {
        {
            let t = sem.enc.build(sec, process, &mut BuildPath::default())?;
            let omega = sem.enc.omega(sec).id();
            let mut leaf_table = LeafTable::default();
            // The compressions fired exploring its leaves.
            let mut compressions = Vec::new();
            let (initial, shape) = if Op::of(t).is_static() {
                if super::network::count_leaves(t) > super::network::MAX_LEAVES {
                    return Err(super::network::too_many_leaves());
                }
                let mut leaves = Vec::new();
                let node = NetNode::compile(&sem.enc, t, u32::MAX, &mut leaves);
                let mut positions = Vec::with_capacity(leaves.len());
                let mut bits = Vec::with_capacity(leaves.len());
                let mut pending = Vec::new();
                for leaf in &leaves {
                    let limit = if Op::of(*leaf) == Op::Compressed {
                        EXPLICIT_COMPRESSED_LEAVES
                    } else {
                        EXPLICIT_LEAVES
                    };
                    let explored = sem.leaf_cache.explore(sem, sec, leaf.id(), limit);
                    if let Ok(cached) = &explored {
                        merge_compressions(&mut compressions, &cached.compressions);
                    }
                    match explored.as_ref().map(|c| &c.explored) {
                        Ok(Some(lts)) => {
                            // Position 0's field keeps a value above its leaves' numbers for
                            // Ω (see the module documentation); the others need only
                            // 0..count, so 2^k leaves take k bits, not k + 1.
                            let count = lts.terms.len() as u64;
                            bits.push(if positions.is_empty() {
                                Layout::bits_for(count)
                            } else {
                                Layout::bits_for(count.saturating_sub(1))
                            });
                            positions.push(Position::Explicit(lts.clone()));
                        }
                        why => {
                            if let Err(NotExplored::Pending(k)) = why {
                                pending.push(*k);
                            }
                            let table = LeafTable::default();
                            table.number(leaf.id());
                            bits.push(32);
                            positions.push(Position::Lazy(table));
                        }
                    }
                }
                if !pending.is_empty() {
                    return Ok(Made::Pending(pending));
                }
                // Every position's process is number 0 of its table.
                let layout = Layout::new(&bits);
                let index = Box::new(StateIndex::new(layout.words()));
                let mut handle = index.handle();
                let too_many = |e: crate::explore::IndexFull| {
                    CspError::unpositioned(ErrorKind::Limit, e.to_string())
                };
                let initial_key = vec![0; layout.words()];
                let initial = index.insert(&mut handle, &initial_key).map_err(too_many)?.0;
                let omega = index
                    .insert(&mut handle, &layout.omega())
                    .map_err(too_many)?
                    .0;
                drop(handle);
                let all_explicit = positions.iter().all(|p| matches!(p, Position::Explicit(_)));
                let under_parallel = node.leaves_under_parallel();
                let shape = Shape::Network {
                    node,
                    positions,
                    layout,
                    index,
                    omega,
                    all_explicit,
                    under_parallel,
                };
                (initial, shape)
            } else {
                let limit = if Op::of(t) == Op::Compressed {
                    EXPLICIT_COMPRESSED_LEAVES
                } else {
                    EXPLICIT_LEAVES
                };
                let explored = match sem.leaf_cache.explore(sem, sec, t.id(), limit) {
                    Ok(cached) => {
                        merge_compressions(&mut compressions, &cached.compressions);
                        // Else numbered as met (an evaluation error is met again, and
                        // reported, when the system runs).
                        cached.explored.as_ref().map(|lts| {
                            leaf_table = LeafTable::explored(lts);
                            lts.terms.len() as u32
                        })
                    }
                    Err(NotExplored::Pending(k)) if !made.contains(&k) => {
                        return Ok(Made::Pending(vec![k]));
                    }
                    Err(_) => None,
                };
                (leaf_table.number(t.id()), Shape::Term { explored })
            };
            let shared = Arc::new(Shared {
                id,
                sem: sem.clone(),
                shape,
                leaves: leaf_table,
                initial,
                omega,
                compressions,
                failed: AtomicBool::new(false),
                error: Mutex::new(None),
            });
            let roots = global().register_roots(shared.clone());
            Ok(Made::System(CspSystem {
                shared,
                _roots: roots,
                _sem_roots: None,
            }))
        }
    }
}
