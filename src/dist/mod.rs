//! Distributed breadth-first exploration on timely dataflow.
//!
//! A run has `W` workers in each of `N` processes ([`Cluster`]); every process loads the same
//! model. Each state has one owner worker, chosen by a hash of its canonical encoding
//! ([`TransitionSystem::encode_state`]); an owner keeps the states it owns in its own visited
//! set and expands them. A BFS level is a few rounds of timely channels (module [`rounds`]),
//! whose progress tracking is the level barrier:
//!
//! 1. each owner expands its states of the level and sends every successor, with the key of
//!    the step that found it (parent id, index of the step in the parent's enumeration), to
//!    the successor's owner, which keeps the new ones with their least key;
//! 2. each new state's key goes to the worker that ranks the parents of its range of ids;
//! 3. those workers sort their keys and tell every worker how many they hold (an all-gather),
//!    so each knows where its ids start;
//! 4. each id goes back to the new state's owner.
//!
//! A run that reports counts only (no deadlock trace, no ids asked for) of a system whose
//! encodings take at most two words keeps its states compactly instead, with no ids and no
//! parents, in two rounds a level (module `counting`); so does one of any width that writes
//! checkpoints or resumes from one (module [`checkpoint`]: each worker writes its own part
//! at a level boundary all agree on).
//!
//! A check's product search (module [`pairs`]) keeps its pairs compactly in the same way; a
//! check that fails is searched again numbering its pairs, as above (module `witnessed`),
//! and the path to its least violation comes back from the owners' parent records. The
//! numbered exploration and that search run their levels with one driver (module `levels`),
//! each saying only what a step records and when it ends.
//!
//! The ids are so the canonical ids of the threaded explorer ([`crate::explore::engine`]):
//! new states of a level are numbered in the order of their least keys. Counts, levels,
//! deadlocks and the shortest deadlock trace (rebuilt from the owners' parent records, then
//! relabelled by re-expanding each parent) are those of a threaded run.

#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod cluster;
mod counting;
pub mod keys;
mod levels;
pub mod pairs;
mod resume;
pub mod rounds;
mod search;
mod sockets;
mod witnessed;

use std::sync::Arc;

pub use cluster::{Cluster, ClusterError};

use crate::explore::{CanonicalId, ExploreStats, LevelObserver, StopSignal};
use crate::ts::TransitionSystem;

/// Options of a distributed exploration.
#[derive(Clone, Default)]
pub struct DistOptions {
    /// Keep at most this many states: the run stops at the end of the level that reaches it
    /// (the level's first states in canonical order are kept).
    pub max_states: Option<u64>,
    /// Rebuild the labels of a shortest path to the least deadlock.
    pub deadlock_trace: bool,
    /// Told after each level (on the first worker of process 0 only).
    pub on_level: Option<LevelObserver>,
    /// Return the ids and encodings of the states this process's workers own (to compare a
    /// run's numbering with another's).
    pub keep_states: bool,
    /// Write checkpoints at level boundaries, or resume from one (module [`checkpoint`]):
    /// only for a run that reports counts (no deadlock trace, no states kept).
    pub persist: Option<checkpoint::Persistence>,
    /// For a system keyed by its structural encoding (module [`keys`]): the words of the
    /// keys to begin with (default [`keys::FIRST_KEY_WORDS`], or what the initial state
    /// needs); a run whose keys turn out too narrow starts again with keys twice as wide.
    /// Tests set it small to make runs start again.
    pub first_key_words: Option<usize>,
}

/// The result of a distributed exploration, the same in every process.
#[derive(Clone, Debug)]
pub struct DistExploration {
    /// Statistics; `threads` is the number of workers of all processes together.
    pub stats: ExploreStats,
    /// The least deadlock's id (the first deadlock in canonical order), if any.
    pub first_deadlock: Option<CanonicalId>,
    /// The label names of the least path to [`DistExploration::first_deadlock`] (when asked
    /// for and there is a deadlock).
    pub deadlock_trace: Option<Vec<String>>,
    /// With [`DistOptions::keep_states`]: the id and the encoding of every state this
    /// process's workers own, by id (other processes hold the others).
    pub states: Vec<(CanonicalId, Vec<u32>)>,
    /// Processes of the run.
    pub processes: usize,
    /// Workers in each process.
    pub workers: usize,
    /// For a system keyed by its structural encoding (module [`keys`]): the words of the keys
    /// of the search that gave the result.
    pub key_words: Option<usize>,
    /// Times the search started again with wider keys.
    pub key_restarts: u32,
}

/// Failures of a distributed exploration.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// The system cannot send its states to other processes.
    #[error("the model cannot be explored by several processes: {0}")]
    NoEncoding(crate::ts::NoCanonicalEncoding),
    /// Timely could not start (an address in use, a host that cannot be reached).
    #[error("cannot start the distributed run: {0}")]
    Start(String),
    /// A worker failed (a state that does not decode: processes that loaded different
    /// models; a full state index; a lost connection).
    #[error("a worker of the distributed run failed: {0}")]
    Worker(String),
    /// A checkpoint could not be written or read, or does not fit the run.
    #[error("{0}")]
    Checkpoint(String),
    /// The options ask for what a distributed run does not do.
    #[error("{0}")]
    Unsupported(String),
    /// A state's structural encoding needs more words than the run's keys hold (module
    /// [`keys`]): every worker learns it at the same level and searches again with wider
    /// keys; it never ends a run.
    #[error("a state needs wider keys than the search's")]
    KeyTooNarrow,
}

/// This process's connections to the other processes of a cluster, made by
/// [`Cluster::connect`] (or the channels between its workers, for one process).
pub struct Connected {
    builders: Vec<timely::communication::AllocatorBuilder>,
    others: Box<dyn std::any::Any + Send>,
    cluster: Cluster,
}

/// Makes this process's connections for one distributed search (each search of a run
/// connects anew; every process makes the same searches in the same order).
pub type Connector = Arc<dyn Fn() -> Result<Connected, DistError> + Send + Sync>;

impl Connected {
    /// The workers of all processes of the run together.
    pub fn workers(&self) -> usize {
        self.cluster.total_workers()
    }
}

impl Cluster {
    /// Connects this process to the other processes of the cluster (waiting until all have
    /// started).
    pub fn connect(&self) -> Result<Connected, DistError> {
        self.connect_within(std::time::Duration::from_secs(365 * 24 * 3600))
    }

    /// [`Cluster::connect`], giving up after `timeout` if some process of the run has not
    /// connected by then. The connections are made here (module `sockets`: a few
    /// milliseconds where timely's own set-up takes up to a second) and handed to timely.
    pub fn connect_within(&self, timeout: std::time::Duration) -> Result<Connected, DistError> {
        if self.processes <= 1 {
            let (builders, others) = self
                .timely_config()
                .communication
                .try_build()
                .map_err(DistError::Start)?;
            return Ok(Connected {
                builders,
                others,
                cluster: self.clone(),
            });
        }
        let deadline = std::time::Instant::now() + timeout;
        let sockets =
            sockets::connect_all(&self.addresses, self.process, deadline).map_err(|e| {
                DistError::Start(format!(
                    "not every process of the run connected within {:.0} s (this is process {} of \
                 {}, at {}; the others: {}): {e}; start each process with its own \
                 --process-index and the same --processes and host file, or wait longer with \
                 --connect-timeout",
                    timeout.as_secs_f64(),
                    self.process,
                    self.processes,
                    self.addresses.get(self.process).map_or("?", String::as_str),
                    self.addresses
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != self.process)
                        .map(|(_, a)| a.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        let hooks = timely::communication::Hooks::default();
        let process_allocators = timely::communication::allocator::ProcessBuilder::new_typed_vector(
            self.workers,
            hooks.refill.clone(),
            hooks.spill.clone(),
        );
        let (builders, guard) =
            timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets(
                process_allocators,
                sockets,
                self.process,
                self.workers,
                hooks,
            )
            .map_err(|e| DistError::Start(format!("cannot start the connections: {e}")))?;
        Ok(Connected {
            builders: builders
                .into_iter()
                .map(timely::communication::AllocatorBuilder::Tcp)
                .collect(),
            others: Box::new(guard),
            cluster: self.clone(),
        })
    }
}

/// Runs `work` on a worker of every one of this process's shares of `connected`, each on a
/// thread of its own, and returns what each returned, by worker. Unlike timely's own
/// `execute_from`, `work` may borrow from the caller (the threads are scoped): a product search
/// borrows its normal form and its implementation.
pub(crate) fn execute_scoped<R, F>(connected: Connected, work: F) -> Result<Vec<R>, DistError>
where
    R: Send,
    F: Fn(&mut timely::worker::Worker) -> R + Sync,
{
    let Connected {
        builders, others, ..
    } = connected;
    let work = &work;
    let results = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (i, builder) in builders.into_iter().enumerate() {
            let handle = std::thread::Builder::new()
                .name(format!("weft-worker-{i}"))
                .stack_size(crate::threads::WORKER_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    crate::threads::enter_worker_thread();
                    let mut worker = timely::worker::Worker::new(
                        timely::WorkerConfig::default(),
                        build_allocator(builder),
                        Some(std::time::Instant::now()),
                    );
                    let result = work(&mut worker);
                    // Let the dataflows (the channels) finish, as timely's own workers do.
                    while worker.has_dataflows() {
                        worker.step_or_park(None);
                    }
                    result
                })
                .map_err(|e| DistError::Start(format!("cannot start a worker thread: {e}")))?;
            handles.push(handle);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| DistError::Worker("a worker thread panicked".into()))
            })
            .collect::<Result<Vec<R>, DistError>>()
    });
    // The connections to the other processes close once every worker is done.
    drop(others);
    results
}

/// The allocator of one worker, built on the worker's thread (as timely's `execute_from` does;
/// its builder trait is private to timely, the variants' own `build`s are not).
fn build_allocator(
    builder: timely::communication::AllocatorBuilder,
) -> timely::communication::Allocator {
    use timely::communication::{Allocator, AllocatorBuilder};
    match builder {
        AllocatorBuilder::Thread(_) => Allocator::Thread(Default::default()),
        AllocatorBuilder::Process(p) => Allocator::Process(p.build()),
        AllocatorBuilder::Tcp(t) => Allocator::Tcp(t.build()),
    }
}

/// Explores `ts` breadth first with the workers of `cluster` (this process's share of them:
/// every process of the cluster calls this with the same model and options). Returns when
/// the whole run has ended; every process gets the same result.
pub fn explore_distributed<T>(
    ts: Arc<T>,
    cluster: &Cluster,
    opts: &DistOptions,
    stop: &StopSignal,
) -> Result<DistExploration, DistError>
where
    T: TransitionSystem + Send + 'static,
{
    keys::Keying::of(&*ts, opts.first_key_words)?;
    explore_connected(ts, cluster.connect()?, opts, stop)
}

/// Runs worker `worker.index()` of an exploration of `ts` keyed by its structural encoding
/// (module [`keys`]), from keys of `width` words: searches again from the start, with keys
/// twice as wide, as long as every worker learns at the same level that they are too narrow.
fn explore_structural<T: TransitionSystem>(
    worker: &mut timely::worker::Worker,
    ts: &T,
    mut width: usize,
    opts: &DistOptions,
    stop: &StopSignal,
) -> Result<DistExploration, DistError> {
    let counts_only = !opts.deadlock_trace && !opts.keep_states;
    let mut opts = opts.clone();
    let mut restarts = 0;
    // A run resumed goes on with the keys of the checkpoint's part that every worker agrees
    // on (the widest every worker has whole), and counts the restarts of the run that wrote
    // it.
    let mut resumed = match &opts.persist {
        Some(p) if counts_only => match &p.resume {
            Some(dir) => {
                let mut channel = rounds::Rounds::new(worker);
                let expected = checkpoint::Head {
                    fingerprint: p.fingerprint,
                    workers: worker.peers() as u64,
                    worker: worker.index() as u64,
                    ..Default::default()
                };
                let part = resume::agree_and_read(worker, &mut channel, dir, p, &expected, None)?;
                // The part's keys: the node's word, then the state's.
                width = (part.head.width as usize).saturating_sub(1).max(3);
                restarts = u32::try_from(part.head.key_restarts).unwrap_or(u32::MAX);
                Some(part)
            }
            None => None,
        },
        _ => None,
    };
    loop {
        let keys = keys::StructuralKeys::new(ts, width);
        let trouble = Some(keys.trouble());
        if let Some(p) = &mut opts.persist {
            p.key_restarts = restarts;
        }
        let result = if counts_only && opts.persist.is_some() {
            counting::run_worker(worker, &keys, &opts, stop, trouble, resumed.take())
        } else {
            search::run_worker(worker, &keys, width, &opts, stop, trouble)
        };
        match result {
            Err(DistError::KeyTooNarrow) => {
                width = keys::wider(width)?;
                restarts += 1;
                // The search starts from scratch, not from a checkpoint. The checkpoint of
                // the narrower keys stays until the wider keys' first one is written whole
                // (which removes it): a run killed meanwhile resumes from it, meets the
                // state too wide for its keys again, and starts again alike.
                if let Some(p) = &mut opts.persist {
                    p.resume = None;
                }
            }
            Ok(mut explored) => {
                explored.key_words = Some(width);
                explored.key_restarts = restarts;
                return Ok(explored);
            }
            Err(e) => return Err(e),
        }
    }
}

/// [`explore_distributed`] over connections already made.
pub fn explore_connected<T>(
    ts: Arc<T>,
    connected: Connected,
    opts: &DistOptions,
    stop: &StopSignal,
) -> Result<DistExploration, DistError>
where
    T: TransitionSystem + Send + 'static,
{
    let keying = keys::Keying::of(&*ts, opts.first_key_words)?;
    if opts.persist.is_some() && (opts.deadlock_trace || opts.keep_states) {
        return Err(DistError::Unsupported(
            "checkpoints of a distributed exploration are for runs that report counts only \
             (no --trace)"
                .into(),
        ));
    }
    let cluster = connected.cluster;
    let opts = opts.clone();
    let stop = stop.clone();
    let guards = timely::execute::execute_from(
        connected.builders,
        connected.others,
        timely::WorkerConfig::default(),
        move |worker| {
            let counts_only = !opts.deadlock_trace && !opts.keep_states;
            match keying {
                keys::Keying::Fixed(width) => {
                    if counts_only && (width <= 2 || opts.persist.is_some()) {
                        counting::run_worker(worker, &*ts, &opts, &stop, None, None)
                    } else {
                        search::run_worker(worker, &*ts, width, &opts, &stop, None)
                    }
                }
                keys::Keying::Structural(first) => {
                    explore_structural(worker, &*ts, first, &opts, &stop)
                }
            }
        },
    )
    .map_err(DistError::Start)?;
    let mut outcome: Option<DistExploration> = None;
    for result in guards.join() {
        let mut this = result.map_err(DistError::Worker)??;
        match &mut outcome {
            None => outcome = Some(this),
            Some(first) => first.states.append(&mut this.states),
        }
    }
    let mut outcome =
        outcome.ok_or_else(|| DistError::Worker("no worker ran in this process".into()))?;
    outcome.states.sort_unstable();
    outcome.processes = cluster.processes;
    outcome.workers = cluster.workers;
    Ok(outcome)
}
