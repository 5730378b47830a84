//! [`Cluster`]: the processes and workers of a distributed run, and the timely configuration
//! made from them.

#![forbid(unsafe_code)]

use std::path::Path;

/// The first port of the default addresses (`localhost:2101`, `localhost:2102`, ...), as in
/// timely's own option parsing.
pub const DEFAULT_FIRST_PORT: u16 = 2101;

/// The processes of a distributed run and this process's place among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Worker threads in each process (at least 1).
    pub workers: usize,
    /// Processes of the run (at least 1).
    pub processes: usize,
    /// This process's index, from 0 to `processes - 1`.
    pub process: usize,
    /// The address (`host:port`) of each process, in process order (empty for one process).
    pub addresses: Vec<String>,
}

/// A cluster that cannot be formed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// No workers or no processes.
    #[error("{what} must be at least 1")]
    Zero {
        /// `workers` or `processes`.
        what: &'static str,
    },
    /// This process's index is not below the number of processes.
    #[error("process index {process} is out of range: with {processes} processes it must be from 0 to {}", processes - 1)]
    ProcessOutOfRange {
        /// The index given.
        process: usize,
        /// The processes of the run.
        processes: usize,
    },
    /// The host file cannot be read.
    #[error("cannot read the host file {file}: {reason}")]
    HostFile {
        /// The file.
        file: String,
        /// What the system said.
        reason: String,
    },
    /// The host file names fewer processes than the run has, or a line is not `host:port`.
    #[error("host file {file}: {reason}")]
    BadHostFile {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
}

impl Cluster {
    /// One process of `workers` workers.
    pub fn single(workers: usize) -> Result<Cluster, ClusterError> {
        Cluster::new(workers, 1, 0, Vec::new())
    }

    /// Process `process` of `processes` on this host, at `localhost:2101`, `localhost:2102`, ...
    pub fn localhost(
        workers: usize,
        processes: usize,
        process: usize,
    ) -> Result<Cluster, ClusterError> {
        let addresses = (0..processes)
            .map(|i| format!("localhost:{}", DEFAULT_FIRST_PORT as usize + i))
            .collect();
        Cluster::new(workers, processes, process, addresses)
    }

    /// Process `process` of `processes`, at the addresses of `hostfile`'s first `processes`
    /// lines (one `host:port` a line, in process order; blank lines and lines starting with
    /// `#` are skipped).
    pub fn from_hostfile(
        workers: usize,
        processes: usize,
        process: usize,
        hostfile: &Path,
    ) -> Result<Cluster, ClusterError> {
        let file = hostfile.display().to_string();
        let text = std::fs::read_to_string(hostfile).map_err(|e| ClusterError::HostFile {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        let addresses: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .take(processes)
            .map(str::to_string)
            .collect();
        if addresses.len() < processes {
            return Err(ClusterError::BadHostFile {
                file,
                reason: format!(
                    "it names {} process address(es), but the run has {processes} processes",
                    addresses.len()
                ),
            });
        }
        for (i, a) in addresses.iter().enumerate() {
            let port_ok = a
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if !port_ok {
                return Err(ClusterError::BadHostFile {
                    file,
                    reason: format!("address {i} `{a}` is not `host:port`"),
                });
            }
        }
        Cluster::new(workers, processes, process, addresses)
    }

    fn new(
        workers: usize,
        processes: usize,
        process: usize,
        addresses: Vec<String>,
    ) -> Result<Cluster, ClusterError> {
        if workers == 0 {
            return Err(ClusterError::Zero { what: "workers" });
        }
        if processes == 0 {
            return Err(ClusterError::Zero { what: "processes" });
        }
        if process >= processes {
            return Err(ClusterError::ProcessOutOfRange { process, processes });
        }
        Ok(Cluster {
            workers,
            processes,
            process,
            addresses: if processes == 1 {
                Vec::new()
            } else {
                addresses
            },
        })
    }

    /// Workers of all processes together.
    pub fn total_workers(&self) -> usize {
        self.workers * self.processes
    }

    /// The timely configuration of this process.
    pub fn timely_config(&self) -> timely::Config {
        let communication = if self.processes > 1 {
            timely::CommunicationConfig::Cluster {
                threads: self.workers,
                process: self.process,
                addresses: self.addresses.clone(),
                report: false,
                zerocopy: false,
            }
        } else if self.workers > 1 {
            timely::CommunicationConfig::Process(self.workers)
        } else {
            timely::CommunicationConfig::Thread
        };
        timely::Config {
            communication,
            worker: timely::WorkerConfig::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_clusters_are_refused() {
        assert_eq!(
            Cluster::localhost(1, 2, 2),
            Err(ClusterError::ProcessOutOfRange {
                process: 2,
                processes: 2
            })
        );
        assert!(Cluster::single(0).is_err());
        assert!(Cluster::localhost(1, 0, 0).is_err());
    }

    #[test]
    fn host_files_are_read_in_order() {
        let dir = std::env::temp_dir().join(format!("weft-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hosts");
        std::fs::write(&file, "# the run\nalpha:3000\n\nbeta:3001\ngamma:3002\n").unwrap();
        let c = Cluster::from_hostfile(2, 2, 1, &file).unwrap();
        assert_eq!(c.addresses, vec!["alpha:3000", "beta:3001"]);
        assert!(Cluster::from_hostfile(2, 4, 1, &file).is_err());
        std::fs::write(&file, "alpha\nbeta:1\n").unwrap();
        assert!(Cluster::from_hostfile(1, 2, 0, &file).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
