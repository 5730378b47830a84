//! Why an `.aut` input could not be read: [`AutError`], positioned on a line and column.

use std::io;
use std::path::{Path, PathBuf};

use crate::excerpt::Excerpt;

/// Why an `.aut` input could not be read.
///
/// Displayed on one line: `file:line:column: message` (without the file when reading from a
/// stream); [`crate::diag::Diagnostic`] renders it with the offending line.
#[derive(Debug, thiserror::Error)]
pub enum AutError {
    /// The text does not follow the format.
    #[error("{}expected {expected}, found {found}", Position(path.as_deref(), *line, *column))]
    Syntax {
        /// The file being read, if the input is a file.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: u64,
        /// 1-based column (in bytes).
        column: u64,
        /// What the reader expected there.
        expected: &'static str,
        /// What it found (a short excerpt, or "end of line" / "end of file").
        found: String,
        /// The offending line, for rendering (none at the end of the file).
        excerpt: Option<Box<Excerpt>>,
    },
    /// The body disagrees with the header (transition count, a state out of range).
    #[error("{}{message}", Position(path.as_deref(), *line, *column))]
    HeaderMismatch {
        /// The file being read, if the input is a file.
        path: Option<PathBuf>,
        /// 1-based line number where the disagreement shows.
        line: u64,
        /// 1-based column (in bytes) of the number that disagrees.
        column: u64,
        /// What disagrees.
        message: String,
        /// The offending line, for rendering.
        excerpt: Option<Box<Excerpt>>,
    },
    /// Reading (or decompressing) the input failed.
    #[error("cannot read {}: {source}", path.as_ref().map_or_else(|| "the input".to_string(), |p| p.display().to_string()))]
    Io {
        /// The file being read, if the input is a file.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// `file:line:column: ` or, without a file, `line L, column C: `.
struct Position<'a>(Option<&'a Path>, u64, u64);

impl std::fmt::Display for Position<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{}:{}:{}: ", path.display(), self.1, self.2),
            None => write!(f, "line {}, column {}: ", self.1, self.2),
        }
    }
}

impl AutError {
    /// The 1-based line number the error refers to, if any.
    pub fn line(&self) -> Option<u64> {
        match self {
            AutError::Syntax { line, .. } | AutError::HeaderMismatch { line, .. } => Some(*line),
            AutError::Io { .. } => None,
        }
    }

    /// The file being read, when the input is a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            AutError::Syntax { path, .. }
            | AutError::HeaderMismatch { path, .. }
            | AutError::Io { path, .. } => path.as_deref(),
        }
    }

    pub(super) fn with_path(mut self, file: &Path) -> AutError {
        match &mut self {
            AutError::Syntax { path, .. }
            | AutError::HeaderMismatch { path, .. }
            | AutError::Io { path, .. } => {
                path.get_or_insert_with(|| file.to_path_buf());
            }
        }
        self
    }
}

/// The excerpt of `line` (raw bytes, shown lossily) with the bytes `lo..hi` marked.
pub(super) fn excerpt_of(line: &[u8], lo: usize, hi: usize, number: u64) -> Box<Excerpt> {
    let mut end_of_line = line.len();
    while end_of_line > 0 && matches!(line[end_of_line - 1], b'\r' | b'\n') {
        end_of_line -= 1;
    }
    let lo = lo.min(end_of_line);
    let hi = hi.clamp(lo, end_of_line);
    let start = lo.saturating_sub(crate::excerpt::CONTEXT_BYTES);
    let end = hi
        .saturating_add(crate::excerpt::CONTEXT_BYTES)
        .min(end_of_line);
    let before = String::from_utf8_lossy(&line[start..lo]);
    let marked = String::from_utf8_lossy(&line[lo..hi]);
    let after = String::from_utf8_lossy(&line[hi..end]);
    Box::new(Excerpt {
        line: u32::try_from(number).unwrap_or(u32::MAX),
        text: format!("{before}{marked}{after}"),
        range: before.len()..before.len() + marked.len(),
        clipped: start > 0,
    })
}
