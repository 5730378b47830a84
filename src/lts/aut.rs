//! The Aldebaran `.aut` format, as mCRL2 and CADP write it: read (streaming, gzip-transparent)
//! and write.
//!
//! ```text
//! des (initial, transitions, states)
//! (from, label, to)
//! (0, "send(1, 2)", 1)
//! (1, i, 0)
//! ```
//!
//! Labels are quoted (`"send(1, 2)"`: anything up to the last `"` that is followed by
//! `, to)` and the end of the line) or bare (anything up to the comma that is followed by
//! `to)` and the end of the line, trimmed); they are stored unquoted. Whitespace (spaces,
//! tabs, carriage returns) may appear between tokens and blank lines anywhere. Labels named in
//! [`AutOptions::tau_labels`] (by default `tau`, mCRL2's, and `i`, CADP's) are internal and get
//! label id 0, named `"tau"`; visible labels are numbered from 1 in order of first appearance.
//! Label names that are not UTF-8 are stored lossily (distinct byte strings stay distinct
//! labels). The header must agree with the body: as many transitions as it declares, every
//! state below the declared number of states (so the initial state too).
//!
//! The reader fills a large buffer from the input, splits it into lines and parses each line
//! by hand, interning labels through a hash map keyed by their bytes; transitions are grouped
//! by source state at the end (without copying when the file lists them by source state, as
//! mCRL2 and CADP do). A gzip stream (detected by its magic bytes) is decompressed on the fly.

use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

use super::Lts;

mod pipelined;
use crate::excerpt::Excerpt;
use crate::hash::WordBuildHasher;
use crate::ts::{Label, TAU};
pub use pipelined::read_aut_file_on;

/// Options of the `.aut` reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutOptions {
    /// Label names read as the internal action tau (compared after unquoting).
    pub tau_labels: Vec<String>,
}

impl Default for AutOptions {
    /// `tau` (mCRL2) and `i` (CADP) are internal.
    fn default() -> AutOptions {
        AutOptions {
            tau_labels: vec!["tau".to_string(), "i".to_string()],
        }
    }
}

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

    fn with_path(mut self, file: &Path) -> AutError {
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
fn excerpt_of(line: &[u8], lo: usize, hi: usize, number: u64) -> Box<Excerpt> {
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

/// Reads an `.aut` LTS from `reader`; a gzip stream is decompressed transparently.
pub fn read_aut<R: BufRead>(mut reader: R, opts: &AutOptions) -> Result<Lts, AutError> {
    let gzipped = is_gzip(&mut reader).map_err(io_error)?;
    if gzipped {
        parse(flate2::bufread::MultiGzDecoder::new(reader), opts, None)
    } else {
        parse(reader, opts, None)
    }
}

/// Reads an `.aut` (or gzipped `.aut.gz`, detected by its magic bytes) file.
pub fn read_aut_file(path: &Path, opts: &AutOptions) -> Result<Lts, AutError> {
    let on_path = |source: io::Error| AutError::Io {
        path: Some(path.to_path_buf()),
        source,
    };
    let file = std::fs::File::open(path).map_err(on_path)?;
    let size = file.metadata().map(|m| m.len()).ok();
    let mut reader = io::BufReader::with_capacity(1 << 16, file);
    let gzipped = is_gzip(&mut reader).map_err(on_path)?;
    let result = if gzipped {
        parse(
            flate2::bufread::MultiGzDecoder::new(reader),
            opts,
            // A compressed size says little about the number of lines.
            None,
        )
    } else {
        parse(reader, opts, size)
    };
    result.map_err(|e| e.with_path(path))
}

/// Writes `lts` in `.aut` format (mCRL2's layout: every label quoted, tau as `"tau"`),
/// transitions grouped by source state. Fails with `InvalidInput` if a label name contains a
/// newline (`\n`: the format cannot express it; labels read by [`read_aut`] never do).
pub fn write_aut<W: Write>(lts: &Lts, mut w: W) -> io::Result<()> {
    let mut quoted: Vec<Vec<u8>> = Vec::with_capacity(lts.label_names().len());
    for (id, name) in lts.label_names().iter().enumerate() {
        let name = if id == TAU as usize { "tau" } else { name };
        if name.contains('\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("label {name:?} contains a newline"),
            ));
        }
        let mut q = Vec::with_capacity(name.len() + 2);
        q.push(b'"');
        q.extend_from_slice(name.as_bytes());
        q.push(b'"');
        quoted.push(q);
    }
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"des (");
    push_decimal(&mut buf, u64::from(lts.initial()));
    buf.push(b',');
    push_decimal(&mut buf, lts.num_transitions());
    buf.push(b',');
    push_decimal(&mut buf, u64::from(lts.num_states()));
    buf.extend_from_slice(b")\n");
    for (s, l, t) in lts.transitions() {
        buf.push(b'(');
        push_decimal(&mut buf, u64::from(s));
        buf.push(b',');
        buf.extend_from_slice(&quoted[l as usize]);
        buf.push(b',');
        push_decimal(&mut buf, u64::from(t));
        buf.extend_from_slice(b")\n");
        if buf.len() >= (1 << 16) - 64 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()
}

fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

fn io_error(source: io::Error) -> AutError {
    AutError::Io { path: None, source }
}

fn is_gzip<R: BufRead>(reader: &mut R) -> io::Result<bool> {
    let head = loop {
        match reader.fill_buf() {
            Ok(head) => break head,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    Ok(head.starts_with(&[0x1f, 0x8b]))
}

/// Bytes read from the input at a time; a longer line grows the buffer.
const CHUNK: usize = 1 << 20;

/// The streaming loop: fill the buffer, parse its complete lines, keep the partial last one.
fn parse<R: Read>(
    mut reader: R,
    opts: &AutOptions,
    size_hint: Option<u64>,
) -> Result<Lts, AutError> {
    let mut parser = Parser::new(opts, size_hint);
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    let mut eof = false;
    loop {
        while filled < buf.len() && !eof {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(e)),
            }
        }
        let consumed = parser.parse_lines(&buf[..filled])?;
        if eof {
            if consumed < filled {
                parser.line += 1;
                parser.parse_line(&buf[consumed..filled])?;
            }
            break;
        }
        if consumed == 0 {
            // One line fills the whole buffer: make room for the rest of it.
            let longer = buf.len() * 2;
            buf.resize(longer, 0);
        } else {
            buf.copy_within(consumed..filled, 0);
            filled -= consumed;
        }
    }
    parser.finish()
}

/// The position of the first `\n` in `bytes`, eight bytes at a time.
#[inline]
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut at = 0;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ NEWLINES;
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| at + i)
}

/// The declared figures of the `des` line.
#[derive(Clone, Copy)]
struct Header {
    initial: u32,
    transitions: u64,
    states: u32,
    /// Byte ranges of the initial state and of the number of transitions in the line.
    initial_at: (usize, usize),
    transitions_at: (usize, usize),
}

/// A parse failure inside one line: the byte position and what was expected there.
struct Fail {
    pos: usize,
    expected: &'static str,
}

/// Line-by-line parser state.
struct Parser {
    /// Number of the line being parsed (1-based; 0 before the first).
    line: u64,
    header: Option<Header>,
    size_hint: Option<u64>,
    labels: HashMap<Box<[u8]>, Label, WordBuildHasher>,
    names: Vec<String>,
    /// Transitions per source state (`counts[s + 1]`), when every declared state gets an
    /// adjacency entry; `None` when the header declares far more states than the input can use.
    counts: Option<Vec<u64>>,
    /// The source of every transition, kept only while it is needed: when `counts` is `None`,
    /// or once the sources are out of order (then the transitions must be regrouped).
    sources: Vec<u32>,
    label_ids: Vec<Label>,
    targets: Vec<u32>,
    sorted_by_source: bool,
    last_source: u32,
    max_state: u32,
    /// Where the header declares the number of transitions (line, column, excerpt), for the
    /// error when the body has fewer.
    transitions_site: Option<(u64, u64, Box<Excerpt>)>,
}

impl Parser {
    fn new(opts: &AutOptions, size_hint: Option<u64>) -> Parser {
        let mut labels: HashMap<Box<[u8]>, Label, WordBuildHasher> = HashMap::default();
        for name in &opts.tau_labels {
            labels.insert(name.as_bytes().into(), TAU);
        }
        Parser {
            line: 0,
            header: None,
            size_hint,
            labels,
            names: vec!["tau".to_string()],
            counts: None,
            sources: Vec::new(),
            label_ids: Vec::new(),
            targets: Vec::new(),
            sorted_by_source: true,
            last_source: 0,
            max_state: 0,
            transitions_site: None,
        }
    }

    /// Parses every complete line of `bytes`; returns the number of bytes consumed (up to and
    /// including the last newline).
    fn parse_lines(&mut self, bytes: &[u8]) -> Result<usize, AutError> {
        let mut start = 0;
        while let Some(len) = find_newline(&bytes[start..]) {
            self.line += 1;
            self.parse_line(&bytes[start..start + len])?;
            start += len + 1;
        }
        Ok(start)
    }

    #[inline]
    fn parse_line(&mut self, line: &[u8]) -> Result<(), AutError> {
        let first = skip_ws(line, 0);
        if first == line.len() {
            return Ok(());
        }
        let Some(header) = self.header else {
            return self.parse_header(line);
        };
        let (from, label, to) = parse_transition(line, first).map_err(|f| self.syntax(line, f))?;
        if from >= header.states || to >= header.states {
            let (state, (lo, hi)) = if from >= header.states {
                (from, first_number(line, first))
            } else {
                (to, last_number(line))
            };
            return Err(self.mismatch(
                line,
                lo,
                hi,
                format!(
                    "state {state} is out of range: the header declares {} states (0 to {})",
                    header.states,
                    u64::from(header.states).saturating_sub(1)
                ),
            ));
        }
        if self.label_ids.len() as u64 == header.transitions {
            let end = line.len()
                - line
                    .iter()
                    .rev()
                    .take_while(|b| b.is_ascii_whitespace())
                    .count();
            return Err(self.mismatch(
                line,
                first,
                end,
                format!(
                    "one transition more than the {} the header declares",
                    header.transitions
                ),
            ));
        }
        let label = match self.labels.get(label) {
            Some(&id) => id,
            None => self.new_label(label),
        };
        match &mut self.counts {
            Some(counts) => {
                if self.sorted_by_source && from < self.last_source {
                    self.sorted_by_source = false;
                    self.sources = sources_from_counts(counts, self.label_ids.len());
                }
                // `from < header.states == counts.len() - 1`.
                counts[from as usize + 1] += 1;
                if !self.sorted_by_source {
                    self.sources.push(from);
                }
            }
            None => {
                self.sorted_by_source &= self.last_source <= from;
                self.sources.push(from);
            }
        }
        self.last_source = from;
        self.max_state = self.max_state.max(from).max(to);
        self.label_ids.push(label);
        self.targets.push(to);
        Ok(())
    }

    #[cold]
    fn new_label(&mut self, label: &[u8]) -> Label {
        let id = self.names.len() as Label;
        self.names.push(String::from_utf8_lossy(label).into_owned());
        self.labels.insert(label.into(), id);
        id
    }

    #[cold]
    fn parse_header(&mut self, line: &[u8]) -> Result<(), AutError> {
        let header = parse_header(line).map_err(|f| self.syntax(line, f))?;
        if header.initial >= header.states {
            let (lo, hi) = header.initial_at;
            return Err(self.mismatch(
                line,
                lo,
                hi,
                format!(
                    "the initial state {} is out of range: the header declares {} states",
                    header.initial, header.states
                ),
            ));
        }
        let (lo, hi) = header.transitions_at;
        self.transitions_site = Some((
            self.line,
            lo as u64 + 1,
            excerpt_of(line, lo, hi, self.line),
        ));
        // Reserve for the declared transitions, but never more than the input can hold (the
        // shortest transition line, `(0,a,0)` and a newline, has 8 bytes) or 2^24 up front.
        let plausible = self.size_hint.map_or(1 << 24, |size| size / 8 + 1);
        let expected = header.transitions.min(plausible);
        let reserve = expected.min(1 << 24) as usize;
        self.label_ids.reserve_exact(reserve);
        self.targets.reserve_exact(reserve);
        // Every declared state gets an adjacency entry unless the header declares far more
        // states than the transitions can use (the extra states have no transitions); the
        // counts are zeroed lazily by the allocator, so unused entries cost no memory.
        if u64::from(header.states) <= 4 * expected + (1 << 24) {
            self.counts = Some(vec![0u64; header.states as usize + 1]);
        } else {
            self.sources.reserve_exact(reserve);
        }
        self.max_state = header.initial;
        self.header = Some(header);
        Ok(())
    }

    #[cold]
    fn syntax(&self, line: &[u8], fail: Fail) -> AutError {
        let found = if fail.pos >= line.len() {
            "end of line".to_string()
        } else {
            let rest = &line[fail.pos..];
            let excerpt = &rest[..rest.len().min(24)];
            let more = if rest.len() > excerpt.len() {
                "…"
            } else {
                ""
            };
            format!("'{}{more}'", String::from_utf8_lossy(excerpt))
        };
        AutError::Syntax {
            path: None,
            line: self.line,
            column: fail.pos as u64 + 1,
            expected: fail.expected,
            found,
            excerpt: Some(excerpt_of(line, fail.pos, fail.pos + 1, self.line)),
        }
    }

    /// A disagreement with the header shown at bytes `lo..hi` of `line`.
    #[cold]
    fn mismatch(&self, line: &[u8], lo: usize, hi: usize, message: String) -> AutError {
        AutError::HeaderMismatch {
            path: None,
            line: self.line,
            column: lo as u64 + 1,
            message,
            excerpt: Some(excerpt_of(line, lo, hi, self.line)),
        }
    }

    fn finish(mut self) -> Result<Lts, AutError> {
        let Some(header) = self.header else {
            return Err(AutError::Syntax {
                path: None,
                line: self.line.max(1),
                column: 1,
                expected: "the header 'des (initial, transitions, states)'",
                found: if self.line == 0 {
                    "an empty file".to_string()
                } else {
                    "end of file".to_string()
                },
                excerpt: None,
            });
        };
        let count = self.label_ids.len() as u64;
        if count != header.transitions {
            let (line, column, excerpt) = match self.transitions_site {
                Some((line, column, excerpt)) => (line, column, Some(excerpt)),
                None => (1, 1, None),
            };
            return Err(AutError::HeaderMismatch {
                path: None,
                line,
                column,
                message: format!(
                    "the header declares {} transitions, but the file ends after {count}",
                    header.transitions
                ),
                excerpt,
            });
        }
        // States above the largest one used have no transitions: no entry for them.
        let used = self.max_state as usize + 2;
        let mut numbers = None;
        let mut offsets = match self.counts.take() {
            Some(mut counts) => {
                counts.truncate(used);
                counts
            }
            // A few scattered state numbers up to 2^32 (the header's count is no bound on
            // memory): number the states used densely, remembering their numbers.
            None if u64::from(self.max_state) >= 4 * count + (1 << 20) => {
                let dense = self.renumber();
                let mut counts = vec![0u64; dense.len() + 1];
                for &s in &self.sources {
                    counts[s as usize + 1] += 1;
                }
                numbers = Some(dense);
                counts
            }
            None => {
                let mut counts = vec![0u64; used];
                for &s in &self.sources {
                    counts[s as usize + 1] += 1;
                }
                counts
            }
        };
        let covered = offsets.len() - 1;
        for i in 0..covered {
            offsets[i + 1] += offsets[i];
        }
        let (labels, targets) = if self.sorted_by_source {
            (self.label_ids, self.targets)
        } else {
            let mut fill: Vec<u64> = offsets[..covered].to_vec();
            let mut labels = vec![0; self.label_ids.len()];
            let mut targets = vec![0; self.targets.len()];
            for ((&s, &l), &t) in self.sources.iter().zip(&self.label_ids).zip(&self.targets) {
                let at = fill[s as usize] as usize;
                labels[at] = l;
                targets[at] = t;
                fill[s as usize] += 1;
            }
            (labels, targets)
        };
        drop(self.sources);
        let initial = match &numbers {
            Some(numbers) => numbers.partition_point(|&n| n < header.initial) as u32,
            None => header.initial,
        };
        let lts = Lts::from_parts(initial, header.states, self.names, offsets, labels, targets);
        Ok(match numbers {
            Some(numbers) => lts.with_numbers(numbers),
            None => lts,
        })
    }

    /// Renumbers the states used (the initial state, every source and target) densely in
    /// increasing order, in place; returns the original number of each dense state.
    #[cold]
    fn renumber(&mut self) -> Vec<u32> {
        let initial = self.header.map_or(0, |h| h.initial);
        let mut numbers: Vec<u32> = Vec::with_capacity(2 * self.targets.len() + 1);
        numbers.push(initial);
        numbers.extend_from_slice(&self.sources);
        numbers.extend_from_slice(&self.targets);
        numbers.sort_unstable();
        numbers.dedup();
        let dense = |n: u32| numbers.partition_point(|&m| m < n) as u32;
        for s in self.sources.iter_mut().chain(self.targets.iter_mut()) {
            *s = dense(*s);
        }
        numbers
    }
}

/// The sources of the first `len` transitions, all given in order of source state, from the
/// per-state counts.
#[cold]
fn sources_from_counts(counts: &[u64], len: usize) -> Vec<u32> {
    let mut sources = Vec::with_capacity(len + len / 2 + 16);
    for (state, window) in counts.windows(2).enumerate() {
        let n = window[1] as usize;
        sources.extend(std::iter::repeat_n(state as u32, n));
    }
    debug_assert_eq!(sources.len(), len);
    sources
}

/// The byte range of the first number of a transition line (its source state), `first`
/// being the position of its `(`.
#[cold]
fn first_number(line: &[u8], first: usize) -> (usize, usize) {
    let lo = skip_ws(line, first + 1);
    let hi = lo + line[lo..].iter().take_while(|b| b.is_ascii_digit()).count();
    (lo, hi)
}

/// The byte range of the last number of a well-formed transition line (its target state).
#[cold]
fn last_number(line: &[u8]) -> (usize, usize) {
    let close = line.iter().rposition(|&b| b == b')').unwrap_or(line.len());
    let mut hi = close;
    while hi > 0 && matches!(line[hi - 1], b' ' | b'\t' | b'\r') {
        hi -= 1;
    }
    let lo = hi
        - line[..hi]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
    (lo, hi)
}

#[inline]
fn skip_ws(line: &[u8], mut pos: usize) -> usize {
    while pos < line.len() && matches!(line[pos], b' ' | b'\t' | b'\r') {
        pos += 1;
    }
    pos
}

#[inline]
fn expect(line: &[u8], pos: usize, byte: u8, expected: &'static str) -> Result<usize, Fail> {
    if line.get(pos) == Some(&byte) {
        Ok(pos + 1)
    } else {
        Err(Fail { pos, expected })
    }
}

/// Parses a decimal number of at most `u32::MAX`; returns it and the position after it.
#[inline]
fn parse_u32(line: &[u8], pos: usize, expected: &'static str) -> Result<(u32, usize), Fail> {
    let (n, end) = parse_u64(line, pos, expected)?;
    match u32::try_from(n) {
        Ok(n) => Ok((n, end)),
        Err(_) => Err(Fail {
            pos,
            expected: "a number below 2^32",
        }),
    }
}

#[inline]
fn parse_u64(line: &[u8], pos: usize, expected: &'static str) -> Result<(u64, usize), Fail> {
    let mut at = pos;
    let mut n: u64 = 0;
    while let Some(&b) = line.get(at) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(digit)))
        {
            Some(n) => n,
            None => {
                return Err(Fail {
                    pos,
                    expected: "a number below 2^64",
                })
            }
        };
        at += 1;
    }
    if at == pos {
        return Err(Fail { pos, expected });
    }
    Ok((n, at))
}

fn parse_header(line: &[u8]) -> Result<Header, Fail> {
    let pos = skip_ws(line, 0);
    if !line[pos..].starts_with(b"des") {
        return Err(Fail {
            pos,
            expected: "the header 'des (initial, transitions, states)'",
        });
    }
    let pos = skip_ws(line, pos + 3);
    let pos = skip_ws(line, expect(line, pos, b'(', "'(' after 'des'")?);
    let initial_start = pos;
    let (initial, pos) = parse_u32(line, pos, "the initial state")?;
    let initial_at = (initial_start, pos);
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b',', "',' after the initial state")?,
    );
    let transitions_start = pos;
    let (transitions, pos) = parse_u64(line, pos, "the number of transitions")?;
    let transitions_at = (transitions_start, pos);
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b',', "',' after the number of transitions")?,
    );
    let (states, pos) = parse_u32(line, pos, "the number of states")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(
        line,
        expect(line, pos, b')', "')' after the number of states")?,
    );
    if pos != line.len() {
        return Err(Fail {
            pos,
            expected: "the end of the header line",
        });
    }
    Ok(Header {
        initial,
        transitions,
        states,
        initial_at,
        transitions_at,
    })
}

/// Parses `(from, label, to)` starting at `pos` (the first non-blank byte); returns the label
/// unquoted (or trimmed, if bare).
#[inline]
fn parse_transition(line: &[u8], pos: usize) -> Result<(u32, &[u8], u32), Fail> {
    let pos = skip_ws(line, expect(line, pos, b'(', "'(' starting a transition")?);
    let (from, pos) = parse_u32(line, pos, "the source state")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b',', "',' after the source state")?);
    let mut first_fail: Option<Fail> = None;
    if line.get(pos) == Some(&b'"') {
        // The label ends at the first '"' after which the rest of the line parses.
        let mut search = pos + 1;
        while let Some(close) = line[search..].iter().position(|&b| b == b'"') {
            let close = search + close;
            match parse_tail(line, close + 1) {
                Ok(to) => return Ok((from, &line[pos + 1..close], to)),
                Err(fail) => {
                    first_fail.get_or_insert(fail);
                }
            }
            search = close + 1;
        }
        Err(first_fail.unwrap_or(Fail {
            pos: line.len(),
            expected: "'\"' closing the label",
        }))
    } else {
        // A bare label ends at the first ',' after which the rest of the line parses.
        let mut search = pos;
        while let Some(comma) = line[search..].iter().position(|&b| b == b',') {
            let comma = search + comma;
            let mut end = comma;
            while end > pos && matches!(line[end - 1], b' ' | b'\t' | b'\r') {
                end -= 1;
            }
            if end == pos {
                return Err(Fail {
                    pos,
                    expected: "a label",
                });
            }
            match parse_tail(line, comma) {
                Ok(to) => return Ok((from, &line[pos..end], to)),
                Err(fail) => {
                    first_fail.get_or_insert(fail);
                }
            }
            search = comma + 1;
        }
        Err(first_fail.unwrap_or(Fail {
            pos: line.len(),
            expected: if pos == line.len() {
                "a label"
            } else {
                "',' after the label"
            },
        }))
    }
}

/// Parses `, to)` and the end of the line, starting right after the label.
#[inline]
fn parse_tail(line: &[u8], pos: usize) -> Result<u32, Fail> {
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b',', "',' after the label")?);
    let (to, pos) = parse_u32(line, pos, "the target state")?;
    let pos = skip_ws(line, pos);
    let pos = skip_ws(line, expect(line, pos, b')', "')' closing the transition")?);
    if pos == line.len() {
        Ok(to)
    } else {
        Err(Fail {
            pos,
            expected: "the end of the line after ')'",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Lts, AutError> {
        read_aut(text.as_bytes(), &AutOptions::default())
    }

    fn triples(lts: &Lts) -> Vec<(u32, String, u32)> {
        lts.transitions()
            .map(|(s, l, t)| (s, lts.label_names()[l as usize].clone(), t))
            .collect()
    }

    #[test]
    fn reads_quoted_bare_and_internal_labels() {
        let lts = read(
            "des (0, 5, 3)\n(0, \"send(1, 2)\", 1)\n(1,i,2)\n  ( 2 ,  b c , 0 )  \r\n\n(0,\"tau\",2)\n(2,\"i\",1)",
        )
        .unwrap();
        assert_eq!(lts.initial(), 0);
        assert_eq!(lts.num_states(), 3);
        assert_eq!(lts.label_names(), &["tau", "send(1, 2)", "b c"]);
        assert_eq!(
            triples(&lts),
            vec![
                (0, "send(1, 2)".to_string(), 1),
                (0, "tau".to_string(), 2),
                (1, "tau".to_string(), 2),
                (2, "b c".to_string(), 0),
                (2, "tau".to_string(), 1),
            ]
        );
    }

    #[test]
    fn tau_option_overrides_internal_names() {
        let opts = AutOptions {
            tau_labels: vec!["internal".to_string()],
        };
        let lts = read_aut(&b"des(0,2,2)\n(0,i,1)\n(1,\"internal\",0)\n"[..], &opts).unwrap();
        assert_eq!(lts.label_names(), &["tau", "i"]);
        assert_eq!(triples(&lts)[1], (1, "tau".to_string(), 0));
    }

    #[test]
    fn labels_with_quotes_commas_and_parentheses() {
        let lts = read("des (0,3,2)\n(0,\"a\"b\",1)\n(1,f(x, y),0)\n(1,\"),(\",1)\n").unwrap();
        assert_eq!(lts.label_names(), &["tau", "a\"b", "f(x, y)", "),("]);
    }

    fn error_of(text: &str) -> AutError {
        match read(text) {
            Ok(_) => panic!("{text:?} should not read"),
            Err(e) => e,
        }
    }

    #[test]
    fn malformed_lines_name_their_line_and_column() {
        let cases: &[(&str, u64, u64, &str)] = &[
            ("", 1, 1, "the header"),
            ("\n\n", 2, 1, "the header"),
            ("dex (0,1,1)\n", 1, 1, "the header"),
            ("des 0,1,1)\n", 1, 5, "'('"),
            ("des (0,1)\n", 1, 9, "','"),
            ("des (0,1,2) x\n", 1, 13, "the end of the header line"),
            ("des (0,1,2)\n(0,a,1\n", 2, 7, "')'"),
            ("des (0,1,2)\n\n0,a,1)\n", 3, 1, "'('"),
            ("des (0,1,2)\n(x,a,1)\n", 2, 2, "the source state"),
            ("des (0,1,2)\n(0,,1)\n", 2, 4, "a label"),
            ("des (0,1,2)\n(0,\"a,1)\n", 2, 9, "'\"' closing"),
            ("des (0,1,2)\n(0,\"a\" 1)\n", 2, 8, "','"),
            ("des (0,1,2)\n(0,a,-1)\n", 2, 6, "the target state"),
            ("des (0,1,2)\n(0,a,1) x\n", 2, 9, "the end of the line"),
            ("des (0,1,2)\n(0,a,99999999999)\n", 2, 6, "below 2^32"),
            ("des (0,1,2)\n(0\n", 2, 3, "','"),
        ];
        for &(text, line, column, expected) in cases {
            match error_of(text) {
                AutError::Syntax {
                    line: l,
                    column: c,
                    expected: e,
                    ..
                } => {
                    assert_eq!((l, c), (line, column), "{text:?}: {e}");
                    assert!(e.contains(expected), "{text:?}: {e}");
                }
                other => panic!("{text:?}: unexpected {other}"),
            }
        }
    }

    #[test]
    fn header_disagreements_are_errors() {
        let cases: &[(&str, u64, u64, &str)] = &[
            ("des (2,0,2)\n", 1, 6, "initial state 2"),
            ("des (0,0,0)\n", 1, 6, "initial state 0"),
            ("des (0,1,2)\n(0,a,2)\n", 2, 6, "state 2 is out of range"),
            ("des (0,1,2)\n( 5 ,a,1)\n", 2, 3, "state 5"),
            (
                "des (0,1,2)\n(0,a,1)\n (1,a,0)\n",
                3,
                2,
                "one transition more",
            ),
            ("des (0, 3 ,2)\n(0,a,1)\n(1,a,0)\n", 1, 9, "ends after 2"),
            (
                "des (0,1,4000000000)\n(0,\"a\",4000000000)\n",
                2,
                8,
                "state 4000000000",
            ),
        ];
        for &(text, line, column, message) in cases {
            match error_of(text) {
                AutError::HeaderMismatch {
                    line: l,
                    column: c,
                    message: m,
                    excerpt,
                    ..
                } => {
                    assert_eq!((l, c), (line, column), "{text:?}: {m}");
                    assert!(m.contains(message), "{text:?}: {m}");
                    assert!(excerpt.is_some(), "{text:?}");
                }
                other => panic!("{text:?}: unexpected {other}"),
            }
        }
    }

    #[test]
    fn sparse_state_numbers_are_renumbered_densely() {
        let lts = read("des (7,3,4000000001)\n(7,\"a\",4000000000)\n(4000000000,b,9)\n(9,i,7)\n")
            .unwrap();
        assert_eq!(lts.num_states(), 4_000_000_001);
        assert_eq!(lts.num_transitions(), 3);
        assert_eq!(lts.covered(), 3);
        assert_eq!(lts.state_number(lts.initial()), 7);
        let numbered: Vec<(u32, u32)> = lts
            .transitions()
            .map(|(s, _, t)| (lts.state_number(s), lts.state_number(t)))
            .collect();
        assert_eq!(
            numbered,
            vec![(7, 4_000_000_000), (9, 7), (4_000_000_000, 9)]
        );
        let summary = lts.summary();
        assert_eq!(summary.initial, 7);
        assert_eq!(summary.reachable_states, 3);
        assert_eq!(summary.deadlock_states, 4_000_000_001 - 3);
        // Unsorted sources and a state used only as the initial one.
        let lts =
            read("des (3000000000,2,4000000001)\n(4000000000,a,5)\n(5,b,4000000000)\n").unwrap();
        assert_eq!(lts.state_number(lts.initial()), 3_000_000_000);
        assert_eq!(lts.out_degree(lts.initial()), 0);
        assert_eq!(lts.summary().reachable_states, 1);
    }

    #[test]
    fn display_names_the_position() {
        let e = error_of("des (0,1,2)\n(0,a,-1)\n");
        assert_eq!(
            e.to_string(),
            "line 2, column 6: expected the target state, found '-1)'"
        );
        let e = e.with_path(Path::new("x.aut"));
        assert!(e.to_string().starts_with("x.aut:2:6: expected"), "{e}");
        assert!(error_of("").to_string().contains("found an empty file"));
        let garbage = read_aut(&b"\x00\xff\xfe\x01binary\n"[..], &AutOptions::default());
        match garbage {
            Err(AutError::Syntax {
                line: 1,
                column: 1,
                excerpt: Some(x),
                ..
            }) => {
                assert_eq!(x.range, 0..1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unsorted_sources_are_grouped_in_file_order() {
        let lts = read("des (1,4,3)\n(2,a,0)\n(0,b,1)\n(2,c,1)\n(0,a,2)\n").unwrap();
        assert_eq!(lts.label_names(), &["tau", "a", "b", "c"]);
        assert_eq!(
            lts.transitions().collect::<Vec<_>>(),
            vec![(0, 2, 1), (0, 1, 2), (2, 1, 0), (2, 3, 1)]
        );
    }

    #[test]
    fn long_lines_cross_buffer_boundaries() {
        let long = "x".repeat(3 * CHUNK);
        let mut text = String::from("des (0,3,2)\n");
        for _ in 0..3 {
            text.push_str(&format!("(0,\"{long}\",1)\n"));
        }
        let lts = read(&text).unwrap();
        assert_eq!(lts.num_transitions(), 3);
        assert_eq!(lts.label_names()[1].len(), long.len());
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes() {
        let text = "des (0,1,2)\n(0,\"a\",1)\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let bytes = gz.finish().unwrap();
        let lts = read_aut(&bytes[..], &AutOptions::default()).unwrap();
        assert_eq!(lts, read(text).unwrap());
        let truncated = read_aut(&bytes[..bytes.len() - 4], &AutOptions::default());
        assert!(matches!(truncated, Err(AutError::Io { .. })));
    }

    #[test]
    fn huge_declared_state_count_costs_no_memory() {
        let lts = read("des (0,1,4000000001)\n(0,\"a\",4000000000)\n").unwrap();
        assert_eq!(lts.num_states(), 4_000_000_001);
        assert!(lts.covered() <= 2);
        assert_eq!(lts.summary().reachable_states, 2);
        let lts = read("des (0,1,4000000000)\n(0,a,1)\n").unwrap();
        assert_eq!(lts.num_states(), 4_000_000_000);
        assert!(lts.covered() <= 2);
        assert!(lts.is_deadlock(3_999_999_999));
        assert_eq!(lts.num_reachable(), 2);
    }

    #[test]
    fn carriage_returns_inside_quotes_survive_a_round_trip() {
        let lts = read("des (0,1,1)\n(0,\"\rtau\r\",0)\r\n").unwrap();
        assert_eq!(lts.label_names(), &["tau", "\rtau\r"]);
        let mut out = Vec::new();
        write_aut(&lts, &mut out).unwrap();
        assert_eq!(read_aut(&out[..], &AutOptions::default()).unwrap(), lts);
        let names = vec!["tau".to_string(), "a\nb".to_string()];
        let bad = Lts::from_transitions(0, 1, names, &[(0, 1, 0)]);
        let err = write_aut(&bad, Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn write_then_read_gives_the_same_lts() {
        let text = "des (1,4,3)\n(0,\"send(1, 2)\",1)\n(1,tau,2)\n(2,\"a\"\"b\",0)\n(2,x,2)\n";
        let lts = read(text).unwrap();
        let mut out = Vec::new();
        write_aut(&lts, &mut out).unwrap();
        assert!(out.starts_with(b"des (1,4,3)\n(0,\"send(1, 2)\",1)\n(1,\"tau\",2)\n"));
        assert_eq!(read_aut(&out[..], &AutOptions::default()).unwrap(), lts);
    }

    #[test]
    fn newline_search_finds_every_position() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = b'\n';
                if at + 1 < len {
                    bytes[len - 1] = b'\n';
                }
                assert_eq!(find_newline(&bytes), Some(at));
            }
            assert_eq!(find_newline(&vec![0x8a; len]), None);
        }
    }
}
