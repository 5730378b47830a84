//! Checkpoints of a distributed count-only exploration (`weft explore -n N --checkpoint DIR`):
//! at a level boundary that every worker agrees on (through the level's all-gather), each
//! worker writes the states it owns and its share of the next level to its own file,
//! `DIR/process-K/worker-J-words-W-level-L.ckpt` (`K` the process, `J` the worker among all
//! the run's, `W` the words of its keys, `L` the levels expanded). Once every worker has
//! written level `L` (another all-gather), each removes its other files, so a run killed while
//! writing leaves a level that every worker has whole. A run keyed by structural encodings
//! that starts again with wider keys keeps the narrower keys' checkpoint until the wider
//! keys' first is whole (the words in the names keep the two apart).
//!
//! `--resume DIR` makes every worker of every process agree (module `resume`) on the widest
//! keys of which every worker has a whole part, and the latest level of those, read its own
//! part of it and go on from there: the counts are those of a run never interrupted. A part
//! that does not read back whole (a file torn by a crash) counts as missing: the workers then
//! agree on the level before it, or on the narrower keys'. A run resumes with the same
//! processes and workers as the one that wrote the checkpoint (each worker owns the states of
//! its hash range).
//!
//! # Format
//!
//! Little-endian: the magic `WEFTDCK2`; the model's fingerprint, the workers of the run, this
//! worker's index, the keys' width, levels expanded, states kept (all workers), the widest
//! level, transitions (all workers), this worker's transitions and dead ends, the times the
//! run's keys were widened before it (`u64` each); the next level's keys and the owned keys
//! (a count, then `width` `u32` words each); a checksum (FNV-1a of everything before it). A
//! file is written under a temporary name, then renamed.

#![forbid(unsafe_code)]

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::explore::keyed::KeySet;

const MAGIC: &[u8; 8] = b"WEFTDCK2";

/// The widest keys a part holds: the widest structural keys, and a normal-form node's word.
const MOST_PART_WORDS: u64 = crate::explore::keyed::MOST_KEY_WORDS as u64 + 1;

/// Where and how often a distributed exploration writes checkpoints, and where it resumes
/// from.
#[derive(Clone, Debug)]
pub struct Persistence {
    /// Write checkpoints into this folder.
    pub checkpoint: Option<PathBuf>,
    /// Least time between two checkpoints (0: every level).
    pub interval: Duration,
    /// Go on from the checkpoint in this folder.
    pub resume: Option<PathBuf>,
    /// Identifies the model (every file of a checkpoint carries it).
    pub fingerprint: u64,
    /// This process's index in the run.
    pub process: usize,
    /// Processes of the run.
    pub processes: usize,
    /// Times the run's keys were widened before the search that writes (0 when a run is
    /// made; the run sets it): its parts carry it, so that a resumed run reports it.
    pub key_restarts: u32,
}

/// A worker's search at a level boundary: the counts of its checkpoint file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Head {
    pub fingerprint: u64,
    pub workers: u64,
    pub worker: u64,
    pub width: u64,
    pub levels: u64,
    pub states: u64,
    pub widest: u64,
    pub all_transitions: u64,
    pub transitions: u64,
    pub dead_ends: u64,
    pub key_restarts: u64,
}

impl Head {
    fn words(&self) -> [u64; 11] {
        [
            self.fingerprint,
            self.workers,
            self.worker,
            self.width,
            self.levels,
            self.states,
            self.widest,
            self.all_transitions,
            self.transitions,
            self.dead_ends,
            self.key_restarts,
        ]
    }
}

/// A worker's part of a checkpoint, read back.
#[derive(Debug)]
pub(super) struct Part {
    pub head: Head,
    pub frontier: Vec<u32>,
    pub owned: Vec<u32>,
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The folder of process `process`'s parts.
fn process_dir(dir: &Path, process: usize) -> PathBuf {
    dir.join(format!("process-{process}"))
}

/// The name of worker `worker`'s part of the checkpoint of level `level` with keys of `width`
/// words.
fn file_name(worker: u64, width: u64, level: u64) -> String {
    format!("worker-{worker}-words-{width}-level-{level}.ckpt")
}

/// The worker, keys' width and level a part's file name says, if it is a part's.
fn parse_name(name: &str) -> Option<(u64, u64, u64)> {
    let rest = name.strip_prefix("worker-")?.strip_suffix(".ckpt")?;
    let (worker, rest) = rest.split_once("-words-")?;
    let (width, level) = rest.split_once("-level-")?;
    Some((
        worker.parse().ok()?,
        width.parse().ok()?,
        level.parse().ok()?,
    ))
}

/// The workers, widths and levels of the parts in process `process`'s folder of `dir`.
fn parts_in(dir: &Path, process: usize) -> Vec<(u64, u64, u64)> {
    std::fs::read_dir(process_dir(dir, process))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| parse_name(entry.file_name().to_str()?))
        .collect()
}

/// Writes worker `head.worker`'s part of the checkpoint of level `head.levels`.
pub(super) fn write_part(
    dir: &Path,
    process: usize,
    head: &Head,
    frontier: &[u32],
    owned: &KeySet,
) -> Result<(), String> {
    let folder = process_dir(dir, process);
    let path = folder.join(file_name(head.worker, head.width, head.levels));
    let failed = |e: std::io::Error| format!("cannot write the checkpoint {}: {e}", path.display());
    std::fs::create_dir_all(&folder).map_err(failed)?;
    let temporary = path.with_extension("partial");
    let file = std::fs::File::create(&temporary).map_err(failed)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut sum = Fnv::new();
    let width = head.width as usize;
    (|| -> std::io::Result<()> {
        let mut put = |bytes: &[u8]| -> std::io::Result<()> {
            sum.write(bytes);
            out.write_all(bytes)
        };
        put(MAGIC)?;
        for w in head.words() {
            put(&w.to_le_bytes())?;
        }
        put(&((frontier.len() / width) as u64).to_le_bytes())?;
        for w in frontier {
            put(&w.to_le_bytes())?;
        }
        put(&owned.len().to_le_bytes())?;
        let mut result = Ok(());
        owned.for_each(width, &mut |key| {
            for w in key {
                if result.is_ok() {
                    result = put(&w.to_le_bytes());
                }
            }
        });
        result?;
        let total = sum.0;
        out.write_all(&total.to_le_bytes())?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    })()
    .map_err(failed)?;
    std::fs::rename(&temporary, &path).map_err(failed)
}

/// The parts worker `worker` has in `dir` (as their names say: whether they read back whole
/// is known only once read), as `(keys' width, level)`, widest keys first, then latest level
/// first.
pub(super) fn parts_of(dir: &Path, process: usize, worker: u64) -> Vec<(u64, u64)> {
    let mut parts: Vec<(u64, u64)> = parts_in(dir, process)
        .into_iter()
        .filter(|&(w, _, _)| w == worker)
        .map(|(_, width, level)| (width, level))
        .collect();
    parts.sort_unstable_by(|a, b| b.cmp(a));
    parts
}

/// How the run that wrote the checkpoint in `dir` was made, as process `process` sees it: its
/// workers in all (the first part's header that reads says), and its workers in each process
/// (the workers of this process's parts). `None` when this process has no part there that
/// begins with a header.
pub(super) fn layout(dir: &Path, process: usize) -> Option<(u64, u64)> {
    let parts = parts_in(dir, process);
    let mut workers: Vec<u64> = parts.iter().map(|&(worker, _, _)| worker).collect();
    workers.sort_unstable();
    workers.dedup();
    let total = parts.iter().find_map(|&(worker, width, level)| {
        let path = process_dir(dir, process).join(file_name(worker, width, level));
        let mut head = [0u8; 8 + 16];
        let mut file = std::fs::File::open(path).ok()?;
        file.read_exact(&mut head).ok()?;
        (&head[..8] == MAGIC).then(|| u64::from_le_bytes(head[16..24].try_into().unwrap()))
    })?;
    Some((total, workers.len() as u64))
}

/// Removes worker `worker`'s parts but that of `keep` (`(keys' width, level)`): its earlier
/// levels, and the parts of a search with other keys (one that started again with wider keys,
/// or a part left by a run killed while writing).
pub(super) fn remove_others(dir: &Path, process: usize, worker: u64, keep: (u64, u64)) {
    for (width, level) in parts_of(dir, process, worker) {
        if (width, level) != keep {
            // A file left behind is only space: a resume agrees on the part to read.
            let _ = std::fs::remove_file(
                process_dir(dir, process).join(file_name(worker, width, level)),
            );
        }
    }
}

/// Why a part could not be read.
#[derive(Debug)]
pub(super) enum PartFailure {
    /// The file is missing, torn or damaged: a resume counts it as not there.
    Damaged(String),
    /// The part is whole, but of another model or run: a resume refuses the checkpoint.
    Refused(String),
}

/// Reads worker `expected.worker`'s part of the checkpoint of level `level` with keys of
/// `expected.width` words, checking that it is whole ([`PartFailure::Damaged`] else) and of
/// the run `expected` describes: fingerprint, workers, worker ([`PartFailure::Refused`]).
pub(super) fn read_part(
    dir: &Path,
    process: usize,
    expected: &Head,
    level: u64,
) -> Result<Part, PartFailure> {
    let path = process_dir(dir, process).join(file_name(expected.worker, expected.width, level));
    let damaged = |what: &str| {
        PartFailure::Damaged(format!(
            "{}: not a weft checkpoint of a distributed exploration, or a damaged one ({what})",
            path.display()
        ))
    };
    let file = std::fs::File::open(&path).map_err(|e| {
        PartFailure::Damaged(format!(
            "cannot read the checkpoint {}: {e}",
            path.display()
        ))
    })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut sum = Fnv::new();
    let mut take = |buf: &mut [u8]| -> Result<(), PartFailure> {
        input
            .read_exact(buf)
            .map_err(|_| damaged("it ends early"))?;
        sum.write(buf);
        Ok(())
    };
    let mut magic = [0u8; 8];
    take(&mut magic)?;
    if &magic != MAGIC {
        return Err(damaged("no checkpoint header"));
    }
    let u64_of = |take: &mut dyn FnMut(&mut [u8]) -> Result<(), PartFailure>| {
        let mut b = [0u8; 8];
        take(&mut b).map(|()| u64::from_le_bytes(b))
    };
    let mut words = [0u64; 11];
    for w in &mut words {
        *w = u64_of(&mut take)?;
    }
    let head = Head {
        fingerprint: words[0],
        workers: words[1],
        worker: words[2],
        width: words[3],
        levels: words[4],
        states: words[5],
        widest: words[6],
        all_transitions: words[7],
        transitions: words[8],
        dead_ends: words[9],
        key_restarts: words[10],
    };
    if head.width == 0 || head.width > MOST_PART_WORDS {
        return Err(damaged("a key width out of range"));
    }
    let keys = |take: &mut dyn FnMut(&mut [u8]) -> Result<(), PartFailure>| {
        let n = u64_of(take)?;
        let words = n
            .checked_mul(head.width)
            .filter(|&w| w.saturating_mul(4) <= size)
            .ok_or_else(|| damaged("a count larger than the file"))?;
        let mut out = Vec::with_capacity(words as usize);
        let mut b = [0u8; 4];
        for _ in 0..words {
            take(&mut b)?;
            out.push(u32::from_le_bytes(b));
        }
        Ok::<Vec<u32>, PartFailure>(out)
    };
    let frontier = keys(&mut take)?;
    let owned = keys(&mut take)?;
    let computed = sum.0;
    let mut b = [0u8; 8];
    input
        .read_exact(&mut b)
        .map_err(|_| damaged("it ends early"))?;
    if u64::from_le_bytes(b) != computed {
        return Err(damaged("its checksum does not match"));
    }
    if head.levels != level || head.width != expected.width {
        return Err(damaged("its level or keys are not its name's"));
    }
    if head.fingerprint != expected.fingerprint {
        return Err(PartFailure::Refused(format!(
            "{}: the checkpoint is of another model or process (or of another version of this \
             one): it cannot be resumed here",
            path.display()
        )));
    }
    if head.workers != expected.workers || head.worker != expected.worker {
        return Err(PartFailure::Refused(format!(
            "{}: the checkpoint was written by a run of {} workers in all; resume it with the \
             same --processes and --workers (this run has {})",
            path.display(),
            head.workers,
            expected.workers
        )));
    }
    Ok(Part {
        head,
        frontier,
        owned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<Part, PartFailure>) -> PartFailure {
        r.expect_err("refused")
    }

    #[test]
    fn a_part_reads_back_as_written_and_damage_is_refused() {
        let dir = std::env::temp_dir().join(format!("weft-dck-{}", std::process::id()));
        let owned = KeySet::new(3);
        for k in [[1, 2, 3], [4, 5, 6], [7, 8, 9]] {
            owned.insert(&k);
        }
        let head = Head {
            fingerprint: 42,
            workers: 4,
            worker: 2,
            width: 3,
            levels: 5,
            states: 17,
            widest: 6,
            all_transitions: 30,
            transitions: 8,
            dead_ends: 1,
            key_restarts: 2,
        };
        write_part(&dir, 1, &head, &[4, 5, 6], &owned).expect("writes");
        assert_eq!(parts_of(&dir, 1, 2), vec![(3, 5)]);
        assert_eq!(parts_of(&dir, 1, 1), vec![]);
        assert_eq!(layout(&dir, 1), Some((4, 1)));
        assert_eq!(layout(&dir, 0), None);
        let part = read_part(&dir, 1, &head, 5).expect("reads");
        assert_eq!(part.head, head);
        assert_eq!(part.frontier, vec![4, 5, 6]);
        let mut keys: Vec<&[u32]> = part.owned.chunks_exact(3).collect();
        keys.sort();
        assert_eq!(keys, vec![&[1, 2, 3][..], &[4, 5, 6], &[7, 8, 9]]);
        let other_run = Head { workers: 2, ..head };
        assert!(matches!(
            message(read_part(&dir, 1, &other_run, 5)),
            PartFailure::Refused(m) if m.contains("same --processes")
        ));
        let other_model = Head {
            fingerprint: 7,
            ..head
        };
        assert!(matches!(
            message(read_part(&dir, 1, &other_model, 5)),
            PartFailure::Refused(m) if m.contains("another model")
        ));
        // Parts of other keys or levels are other files: not there.
        let wider = Head { width: 4, ..head };
        assert!(matches!(
            message(read_part(&dir, 1, &wider, 5)),
            PartFailure::Damaged(_)
        ));
        let path = process_dir(&dir, 1).join(file_name(2, 3, 5));
        let bytes = std::fs::read(&path).expect("the file");
        for at in (0..bytes.len()).step_by(3) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            std::fs::write(&path, &flipped).expect("writes");
            assert!(read_part(&dir, 1, &head, 5).is_err(), "flip at {at}");
            std::fs::write(&path, &bytes[..at]).expect("writes");
            assert!(
                matches!(read_part(&dir, 1, &head, 5), Err(PartFailure::Damaged(_))),
                "cut at {at}"
            );
        }
        std::fs::write(&path, &bytes).expect("writes");
        // A wider keys' part beside: both listed, widest first; keeping one removes the other.
        let wide = KeySet::new(6);
        wide.insert(&[1, 2, 3, 4, 5, 6]);
        write_part(
            &dir,
            1,
            &Head {
                width: 6,
                levels: 1,
                ..head
            },
            &[],
            &wide,
        )
        .expect("writes");
        write_part(&dir, 1, &Head { levels: 6, ..head }, &[], &owned).expect("writes");
        assert_eq!(parts_of(&dir, 1, 2), vec![(6, 1), (3, 6), (3, 5)]);
        remove_others(&dir, 1, 2, (3, 6));
        assert_eq!(parts_of(&dir, 1, 2), vec![(3, 6)]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
