//! How the workers of a distributed run agree on the checkpoint part they resume from (module
//! [`super::checkpoint`] writes and reads the parts).
//!
//! Each worker lists its parts by their names, as `(keys' width, level)`. The part to resume
//! from is the greatest, widest keys first and then latest level, that every worker of every
//! process has whole. The workers find it in rounds of an all-gather, without sending their
//! lists: each proposes its greatest part not above the bound (none at first); if every
//! worker proposed the same, that is the part; otherwise no part above the least proposal is
//! every worker's (the worker that proposed it has none above it), and the bound comes down
//! to that least proposal. The agreed part is then read by every worker; if some worker's does
//! not read back whole (a file torn by a crash, or gone), no worker reads it, and the bound
//! comes down below it. So a run killed at any point of writing a checkpoint, of removing the
//! last one, or of starting again with wider keys resumes from the last checkpoint every
//! worker finished, never from a part of one that some worker had not.

#![forbid(unsafe_code)]

use std::path::Path;

use timely::worker::Worker;

use super::checkpoint::{layout, parts_of, read_part, Head, Part, PartFailure, Persistence};
use super::rounds::Rounds;
use super::search::all_gather;
use super::DistError;

/// How a worker's reading of the agreed part went, as it travels in the all-gather.
const READ: u32 = 0;
const DAMAGED: u32 = 1;
const REFUSED: u32 = 2;

/// Reads this worker's part of the checkpoint in `dir` that every worker of the run agrees on
/// (see the module documentation), with keys of `width` words if given (a search whose keys
/// are fixed), else of the widest keys every worker has whole (a search keyed by structural
/// encodings, which then takes the part's keys). `expected` says the model and the run: its
/// fingerprint, workers and worker. Every worker of every process calls this at the same
/// point of its search, with its own `channel` (made in the same order in every worker).
pub(super) fn agree_and_read(
    worker: &mut Worker,
    channel: &mut Rounds,
    dir: &Path,
    persist: &Persistence,
    expected: &Head,
    width: Option<u64>,
) -> Result<Part, DistError> {
    check_layout(worker, channel, dir, persist)?;
    let me = worker.index() as u32;
    // This worker's parts that a search may resume from, greatest first.
    let mut mine: Vec<(u32, u32)> = parts_of(dir, persist.process, expected.worker)
        .into_iter()
        .filter(|&(w, level)| width.is_none_or(|width| w == width) && w >= 1 && level >= 1)
        .filter_map(|(w, level)| Some((u32::try_from(w).ok()?, u32::try_from(level).ok()?)))
        .collect();
    // The damage this worker met in its parts (said if no part is left to resume from).
    let mut damage: Option<String> = None;
    loop {
        let proposal = mine.first().copied();
        let (w, l) = proposal.unwrap_or((0, 0));
        let gathered = all_gather(channel, worker, &[me, proposal.is_some() as u32, w, l]);
        if gathered.iter().any(|r| r[1] == 0) {
            return Err(DistError::Checkpoint(format!(
                "{}: no checkpoint of a level that every worker of the run wrote whole (each \
                 process reads its part in {}/process-K; resume with the same --processes and \
                 --workers as the run that wrote it){}",
                dir.display(),
                dir.display(),
                damage.map_or(String::new(), |d| format!("; {d}"))
            )));
        }
        let least = gathered
            .iter()
            .map(|r| (r[2], r[3]))
            .min()
            .expect("every worker proposed");
        if gathered.iter().any(|r| (r[2], r[3]) != least) {
            // No part above the least proposal is every worker's.
            mine.retain(|&part| part <= least);
            continue;
        }
        let this = Head {
            width: least.0 as u64,
            ..*expected
        };
        let part = read_part(dir, persist.process, &this, least.1 as u64);
        let status = match &part {
            Ok(_) => READ,
            Err(PartFailure::Damaged(_)) => DAMAGED,
            Err(PartFailure::Refused(_)) => REFUSED,
        };
        let gathered = all_gather(channel, worker, &[me, status]);
        match part {
            Err(PartFailure::Refused(m)) => return Err(DistError::Checkpoint(m)),
            _ if gathered.iter().any(|r| r[1] == REFUSED) => {
                return Err(DistError::Checkpoint(
                    "another process refuses its part of the checkpoint (see its error)".into(),
                ))
            }
            Ok(part) if gathered.iter().all(|r| r[1] == READ) => return Ok(part),
            Err(PartFailure::Damaged(m)) => damage = Some(m),
            Ok(_) => {}
        }
        // Some worker's part does not read back whole: no worker resumes from it.
        mine.retain(|&part| part < least);
    }
}

/// Checks, in every worker, that the run has the processes and workers of the one that wrote
/// the checkpoint in `dir` (each worker reads the part of its own hash range).
fn check_layout(
    worker: &mut Worker,
    channel: &mut Rounds,
    dir: &Path,
    persist: &Persistence,
) -> Result<(), DistError> {
    let process = persist.process;
    let me = worker.index() as u32;
    let peers = worker.peers() as u64;
    let processes = persist.processes.max(1) as u64;
    let mismatch = match layout(dir, process) {
        None => Some(format!(
            "{}: no part of the checkpoint for process {process} (was it written by a run of \
             fewer processes, or on another host?); resume with the --processes and \
             --workers of the run that wrote it (this run has {processes} processes of {} \
             workers)",
            dir.display(),
            peers / processes
        )),
        Some((total, here)) if total != peers || here != peers / processes => Some(format!(
            "{}: the checkpoint was written by a run of {} processes of {here} workers; this \
             run has {processes} processes of {} workers: resume with the same --processes \
             and --workers",
            dir.display(),
            total / here.max(1),
            peers / processes
        )),
        Some(_) => None,
    };
    let gathered = all_gather(channel, worker, &[me, mismatch.is_none() as u32]);
    if let Some(message) = mismatch {
        return Err(DistError::Checkpoint(message));
    }
    if gathered.iter().any(|r| r[1] == 0) {
        return Err(DistError::Checkpoint(
            "another process cannot resume from its part of the checkpoint (see its error): \
             resume with the same --processes and --workers as the run that wrote it"
                .into(),
        ));
    }
    Ok(())
}
