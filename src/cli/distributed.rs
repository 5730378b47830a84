//! The options of a distributed run (`--processes`, `--process-index`, `--hostfile`,
//! `--workers`) and `weft explore`'s distributed exploration.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;

use weft::dist::{explore_connected, Cluster, DistExploration, DistOptions};
use weft::explore::{StopSignal, Watchdog};
use weft::ts::TransitionSystem;

use super::limits::SearchArgs;
use super::UsageError;

/// Where this process stands in a distributed run (timely dataflow's `-w`, `-n`, `-p`, `-h`;
/// the commands that take them keep `--help` without its short form).
#[derive(Args, Clone, Debug, Default)]
pub struct DistArgs {
    /// Processes of a distributed run, each started with the same model and options and its
    /// own --process-index (default 1: no distribution unless --workers is given).
    #[arg(long, short = 'n', value_name = "N")]
    pub processes: Option<usize>,
    /// This process's index in a distributed run, from 0 to N-1 (default 0); process 0
    /// prints the results.
    #[arg(long, short = 'p', value_name = "I")]
    pub process_index: Option<usize>,
    /// A file of `host:port` lines, one per process in index order (default:
    /// localhost:2101, localhost:2102, ...).
    #[arg(long, short = 'h', value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Worker threads of each process of a distributed run (default 1). With one process,
    /// runs the distributed engine with this many workers in this process.
    #[arg(long, short = 'w', value_name = "W")]
    pub workers: Option<usize>,
    /// How long a process of a distributed run waits for the others to connect before it
    /// gives up with an error (as --timeout takes a time; default 60s).
    #[arg(long, value_name = "TIME", value_parser = super::limits::parse_duration)]
    pub connect_timeout: Option<std::time::Duration>,
    /// For tests: the words of the keys a distributed run (or a check's shared search) of a
    /// model keyed by its structural encoding starts with (a run whose keys are too narrow
    /// starts again with wider ones).
    #[arg(long, value_name = "WORDS", hide = true)]
    pub first_key_words: Option<usize>,
    /// Print help (`-h` is the host file, as in timely dataflow's options).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

impl DistArgs {
    /// The cluster of a distributed run, or `None` for an ordinary (threaded) run: one is
    /// distributed when `--processes` is above 1 or `--workers` is given.
    pub fn cluster(&self, search: &SearchArgs) -> Result<Option<Cluster>, UsageError> {
        let processes = self.processes.unwrap_or(1);
        if processes <= 1 && self.workers.is_none() {
            if self.process_index.is_some_and(|i| i > 0) || self.hostfile.is_some() {
                return Err(UsageError(
                    "--process-index and --hostfile need --processes N with N at least 2".into(),
                ));
            }
            if self.processes == Some(0) {
                return Err(UsageError("--processes must be at least 1".into()));
            }
            return Ok(None);
        }
        if search.threads.is_some() {
            return Err(UsageError(
                "--threads is for a run in one process; a distributed run takes --workers \
                 (threads per process)"
                    .into(),
            ));
        }
        let workers = self.workers.unwrap_or(1);
        let process = self.process_index.unwrap_or(0);
        let cluster = match &self.hostfile {
            Some(file) => Cluster::from_hostfile(workers, processes, process, file),
            None => Cluster::localhost(workers, processes, process),
        };
        cluster.map(Some).map_err(|e| UsageError(e.to_string()))
    }
}

/// Explores `ts` as process `cluster.process` of a distributed run, as `opts` ask, until
/// `stop` is raised (the run's signal, which `watchdog` raises at the run's limits, and which
/// the system polls in its own work); a progress line only in process 0.
pub(crate) fn explore<T: TransitionSystem + Send + 'static>(
    ts: Arc<T>,
    cluster: &Cluster,
    dist: &DistArgs,
    opts: DistOptions,
    stop: &StopSignal,
    watchdog: Option<Watchdog>,
) -> Result<DistExploration> {
    let progress = if cluster.process == 0 {
        super::progress::LevelProgress::start("exploring")
    } else {
        None
    };
    let opts = DistOptions {
        on_level: progress.as_ref().map(|p| p.observer()),
        first_key_words: dist.first_key_words,
        ..opts
    };
    weft::dist::keys::Keying::of(&*ts, opts.first_key_words)?;
    // Timely prints its progress in connecting on standard output, which carries only
    // weft's results: send it to standard error.
    let timeout = dist
        .connect_timeout
        .unwrap_or(std::time::Duration::from_secs(60));
    let connected = crate::with_stdout_on_stderr(|| cluster.connect_within(timeout))?;
    exit_on_lost_connection();
    let result = explore_connected(ts, connected, &opts, stop);
    // Panics are bugs again (the default hook).
    drop(std::panic::take_hook());
    drop(watchdog);
    if let Some(p) = progress {
        p.finish();
    }
    Ok(result?)
}

/// The connector of the distributed searches of `weft check` and `weft refines`: each search
/// connects anew, waiting at most `connect_timeout` (default 60 s) for the other processes,
/// with timely's messages about connecting on standard error; a lost connection then ends
/// this process with exit status 2.
fn connector(
    cluster: Cluster,
    connect_timeout: Option<std::time::Duration>,
) -> weft::dist::Connector {
    let timeout = connect_timeout.unwrap_or(std::time::Duration::from_secs(60));
    exit_on_lost_connection();
    // Once a connection failed, the run has lost a process: later searches fail at once
    // rather than each waiting for the time-out again.
    let failed: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    Arc::new(move || {
        let mut failed = failed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(message) = &*failed {
            return Err(weft::dist::DistError::Start(message.clone()));
        }
        let connected = cluster.connect_within(timeout);
        if let Err(weft::dist::DistError::Start(message)) = &connected {
            *failed = Some(message.clone());
        }
        connected
    })
}

/// The shared searches of `weft check` and `weft refines` in a distributed run, over the
/// connections of [`connector`] (`dist`'s `--connect-timeout`; and its hidden
/// `--first-key-words` for an implementation keyed by its structural encoding).
pub(crate) fn shared_searches(
    cluster: Cluster,
    dist: &DistArgs,
) -> Arc<weft::dist::pairs::ClusterPairSearch> {
    Arc::new(
        weft::dist::pairs::ClusterPairSearch::new(connector(cluster, dist.connect_timeout))
            .with_first_key_words(dist.first_key_words),
    )
}

/// Makes a panic of timely's communication threads (how timely reports a connection to another
/// process that broke: a process killed, a host gone) end this process with a clear error and
/// exit status 2, rather than with a panic's backtrace: a distributed run cannot go on without
/// every process, and gives no result.
fn exit_on_lost_connection() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("");
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if name.starts_with("timely:") || message.contains("timely communication error") {
            eprintln!(
                "weft: error: the distributed run lost its connection to another process \
                 ({}): no result",
                message.trim_start_matches("timely communication error: ")
            );
            std::process::exit(2);
        }
        default(info);
    }));
}
