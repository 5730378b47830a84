//! Checkpoints of a count-only exploration ([`super::count_states`]): the search at a level
//! boundary, written to a folder, from which a later run (after a crash, a kill, a limit)
//! goes on and ends with the same counts as a run never interrupted.
//!
//! What is written is everything the search needs and nothing that depends on the run: the
//! canonical encodings of the states met ([`crate::ts::TransitionSystem::encoded_width`],
//! packed into `u64` keys), those of the next level, the counts, and a fingerprint of the
//! model so that a checkpoint is never resumed on another one.
//!
//! # Format
//!
//! One file, `DIR/weft.checkpoint`, little-endian: the magic `WEFTCKP1`; the fingerprint,
//! the encoding width, levels, states, transitions (`u64` each); the deadlocks (a count, then
//! `u32` ids); the frontier and the visited keys (a count, then `u64` keys each); a checksum
//! (FNV-1a of everything before it). It is written to a temporary file that then replaces
//! the old one, so a run killed while writing leaves the previous checkpoint whole.

#![forbid(unsafe_code)]

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::ids::CanonicalId;

const MAGIC: &[u8; 8] = b"WEFTCKP1";
/// The checkpoint's file in its folder.
pub const FILE_NAME: &str = "weft.checkpoint";

/// The search at a level boundary. See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Identifies the model (and the process of it) the search explores.
    pub fingerprint: u64,
    /// Words of the model's state encoding.
    pub width: u32,
    /// Levels expanded.
    pub levels: u32,
    /// States met (the frontier's included).
    pub states: u64,
    /// Transitions seen.
    pub transitions: u64,
    /// Deadlocks found (their ids).
    pub deadlocks: Vec<CanonicalId>,
    /// The next level's states.
    pub frontier: Vec<u64>,
    /// Every state met.
    pub visited: Vec<u64>,
}

/// A checkpoint that cannot be read or does not fit the run.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: std::io::Error,
    },
    /// The file is not a whole weft checkpoint.
    #[error("{path}: not a weft checkpoint, or a damaged one ({what})")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The checkpoint is of another model or process.
    #[error(
        "{path}: the checkpoint is of another model or process (or of another version of \
         this one): it cannot be resumed here"
    )]
    OtherModel {
        /// The file.
        path: PathBuf,
    },
}

/// A fingerprint of a model: FNV-1a over `parts` (for example the script's text, the
/// process's name and the encoding's width), each part's length first.
pub fn fingerprint(parts: &[&[u8]]) -> u64 {
    let mut h = Fnv::default();
    for p in parts {
        h.write(&(p.len() as u64).to_le_bytes());
        h.write(p);
    }
    h.0
}

/// FNV-1a, 64 bits: a checksum and fingerprint that is the same on every machine.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A writer that checksums what it writes.
struct Summed<W> {
    inner: W,
    sum: Fnv,
}

impl<W: Write> Summed<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.sum.write(bytes);
        self.inner.write_all(bytes)
    }

    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
}

/// A reader that checksums what it reads.
struct Checked<R> {
    inner: R,
    sum: Fnv,
}

impl<R: Read> Checked<R> {
    fn take(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_exact(buf)?;
        self.sum.write(buf);
        Ok(())
    }

    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        self.take(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

impl Checkpoint {
    /// The checkpoint's file in `dir`.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(FILE_NAME)
    }

    /// Writes the checkpoint into `dir` (created if missing), replacing the one there.
    pub fn write(&self, dir: &Path) -> Result<(), CheckpointError> {
        let head = Head {
            fingerprint: self.fingerprint,
            width: self.width,
            levels: self.levels,
            states: self.states,
            transitions: self.transitions,
        };
        write_streaming(dir, &head, &self.deadlocks, &self.frontier, &mut |visit| {
            self.visited.iter().for_each(|&k| visit(k))
        })
    }
}

/// The counts of a checkpoint, for [`write_streaming`].
#[derive(Clone, Copy, Debug)]
pub struct Head {
    /// See [`Checkpoint::fingerprint`].
    pub fingerprint: u64,
    /// See [`Checkpoint::width`].
    pub width: u32,
    /// See [`Checkpoint::levels`].
    pub levels: u32,
    /// States met: also the number of keys `visited` gives.
    pub states: u64,
    /// See [`Checkpoint::transitions`].
    pub transitions: u64,
}

/// Calls its argument with every visited key (see [`write_streaming`]).
pub type VisitKeys<'a> = dyn FnMut(&mut dyn FnMut(u64)) + 'a;

/// Writes a checkpoint into `dir` without gathering the visited keys first: `visited` calls
/// its argument with each of them (exactly `head.states` keys).
pub fn write_streaming(
    dir: &Path,
    head: &Head,
    deadlocks: &[CanonicalId],
    frontier: &[u64],
    visited: &mut VisitKeys<'_>,
) -> Result<(), CheckpointError> {
    {
        let path = Checkpoint::path_in(dir);
        let io = |reason| CheckpointError::Io {
            path: path.clone(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let temporary = dir.join(format!("{FILE_NAME}.partial"));
        let file = std::fs::File::create(&temporary).map_err(io)?;
        let mut w = Summed {
            inner: BufWriter::with_capacity(1 << 20, file),
            sum: Fnv::default(),
        };
        (|| -> std::io::Result<()> {
            w.put(MAGIC)?;
            w.u64(head.fingerprint)?;
            w.u64(head.width as u64)?;
            w.u64(head.levels as u64)?;
            w.u64(head.states)?;
            w.u64(head.transitions)?;
            w.u64(deadlocks.len() as u64)?;
            for d in deadlocks {
                w.put(&d.0.to_le_bytes())?;
            }
            w.u64(frontier.len() as u64)?;
            for k in frontier {
                w.put(&k.to_le_bytes())?;
            }
            w.u64(head.states)?;
            let mut written = 0u64;
            let mut failed = None;
            visited(&mut |k| {
                if failed.is_none() {
                    written += 1;
                    if let Err(e) = w.put(&k.to_le_bytes()) {
                        failed = Some(e);
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            if written != head.states {
                return Err(std::io::Error::other(format!(
                    "{written} visited states given for {} counted",
                    head.states
                )));
            }
            let sum = w.sum.0;
            w.inner.write_all(&sum.to_le_bytes())?;
            let file = w.inner.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()
        })()
        .map_err(io)?;
        std::fs::rename(&temporary, &path).map_err(io)
    }
}

impl Checkpoint {
    /// Reads the checkpoint in `dir`, checking that it is whole and of the model whose
    /// fingerprint and encoding width are given.
    pub fn read(dir: &Path, fingerprint: u64, width: u32) -> Result<Checkpoint, CheckpointError> {
        let path = Self::path_in(dir);
        let file = std::fs::File::open(&path).map_err(|reason| CheckpointError::Io {
            path: path.clone(),
            reason,
        })?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        let damaged = |what: &str| CheckpointError::Damaged {
            path: path.clone(),
            what: what.to_string(),
        };
        let mut r = Checked {
            inner: BufReader::with_capacity(1 << 20, file),
            sum: Fnv::default(),
        };
        let truncated = |_| damaged("it ends early");
        let mut magic = [0u8; 8];
        r.take(&mut magic).map_err(truncated)?;
        if &magic != MAGIC {
            return Err(damaged("no checkpoint header"));
        }
        let stored_fingerprint = r.u64().map_err(truncated)?;
        let stored_width = r.u64().map_err(truncated)?;
        let levels = r.u64().map_err(truncated)?;
        let states = r.u64().map_err(truncated)?;
        let transitions = r.u64().map_err(truncated)?;
        // Counts are checked against the file's size before anything is allocated for them.
        let count = |r: &mut Checked<_>, each: u64| -> Result<usize, CheckpointError> {
            let n = r.u64().map_err(truncated)?;
            if n.checked_mul(each).is_none_or(|bytes| bytes > size) {
                return Err(damaged("a count larger than the file"));
            }
            Ok(n as usize)
        };
        let n = count(&mut r, 4)?;
        let mut deadlocks = Vec::with_capacity(n);
        for _ in 0..n {
            let mut b = [0u8; 4];
            r.take(&mut b).map_err(truncated)?;
            deadlocks.push(CanonicalId(u32::from_le_bytes(b)));
        }
        let keys = |r: &mut Checked<_>| -> Result<Vec<u64>, CheckpointError> {
            let n = count(r, 8)?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(r.u64().map_err(truncated)?);
            }
            Ok(out)
        };
        let frontier = keys(&mut r)?;
        let visited = keys(&mut r)?;
        let expected = r.sum.0;
        let mut b = [0u8; 8];
        r.inner.read_exact(&mut b).map_err(truncated)?;
        if u64::from_le_bytes(b) != expected {
            return Err(damaged("its checksum does not match"));
        }
        if stored_fingerprint != fingerprint || stored_width != width as u64 {
            return Err(CheckpointError::OtherModel { path });
        }
        if levels > u32::MAX as u64 || visited.len() as u64 != states {
            return Err(damaged("inconsistent counts"));
        }
        Ok(Checkpoint {
            fingerprint,
            width,
            levels: levels as u32,
            states,
            transitions,
            deadlocks,
            frontier,
            visited,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        Checkpoint {
            fingerprint: fingerprint(&[b"model", b"P"]),
            width: 2,
            levels: 3,
            states: 4,
            transitions: 9,
            deadlocks: vec![CanonicalId(2)],
            frontier: vec![7, 8],
            visited: vec![0, 5, 7, 8],
        }
    }

    #[test]
    fn a_checkpoint_reads_back_as_written() {
        let dir = std::env::temp_dir().join(format!("weft-ckp-{}", std::process::id()));
        let c = sample();
        c.write(&dir).expect("writes");
        assert_eq!(Checkpoint::read(&dir, c.fingerprint, 2).expect("reads"), c);
        assert!(matches!(
            Checkpoint::read(&dir, c.fingerprint ^ 1, 2),
            Err(CheckpointError::OtherModel { .. })
        ));
        // Every truncation and every flipped byte is refused.
        let path = Checkpoint::path_in(&dir);
        let bytes = std::fs::read(&path).expect("the file");
        for cut in 0..bytes.len() {
            std::fs::write(&path, &bytes[..cut]).expect("writes");
            assert!(
                Checkpoint::read(&dir, c.fingerprint, 2).is_err(),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            std::fs::write(&path, &flipped).expect("writes");
            assert!(
                Checkpoint::read(&dir, c.fingerprint, 2).is_err(),
                "flip at {at}"
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
