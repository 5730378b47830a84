//! The line-by-line parser of `.aut` text: labels interned, transitions grouped by source
//! state at the end.

use std::collections::HashMap;

use super::chunked::ParsedChunk;
use super::errors::excerpt_of;
use super::lines::{
    first_number, last_number, parse_header, parse_transition, skip_ws, Fail, Header,
};
use super::{AutError, AutOptions};
use crate::excerpt::Excerpt;
use crate::hash::WordBuildHasher;
use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// The position of the first `\n` in `bytes`, eight bytes at a time.
#[inline]
pub(super) fn find_newline(bytes: &[u8]) -> Option<usize> {
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

/// Line-by-line parser state.
pub(super) struct Parser {
    /// Number of the line being parsed (1-based; 0 before the first).
    pub(super) line: u64,
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
    pub(super) fn new(opts: &AutOptions, size_hint: Option<u64>) -> Parser {
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
    pub(super) fn parse_lines(&mut self, bytes: &[u8]) -> Result<usize, AutError> {
        let mut start = 0;
        while let Some(len) = find_newline(&bytes[start..]) {
            self.line += 1;
            self.parse_line(&bytes[start..start + len])?;
            start += len + 1;
        }
        Ok(start)
    }

    #[inline]
    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<(), AutError> {
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
        self.push_transition(from, label, to);
        Ok(())
    }

    /// Records the transition `(from, label, to)`, already checked against the header.
    #[inline]
    fn push_transition(&mut self, from: u32, label: Label, to: u32) {
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
    }

    /// Whether the lines parsed into `chunk` can be recorded as they are: each would pass the
    /// checks of [`Parser::parse_line`] (every line a transition, its states in range, no
    /// transition beyond the declared number). When not, the caller parses the chunk's text
    /// line by line instead, which finds the same first error as a sequential reading.
    pub(super) fn accepts(&self, chunk: &ParsedChunk) -> bool {
        match self.header {
            Some(header) => {
                chunk.complete
                    && (chunk.sources.is_empty() || chunk.max_state < header.states)
                    && self.label_ids.len() as u64 + chunk.sources.len() as u64
                        <= header.transitions
            }
            None => false,
        }
    }

    /// Records the lines parsed into `chunk` (which [`Parser::accepts`]), as if each had
    /// been parsed here in turn: labels new to the input are numbered in the order in which
    /// the chunk met them, after every label seen before it.
    pub(super) fn absorb(&mut self, chunk: &ParsedChunk) {
        debug_assert!(self.accepts(chunk));
        let ids: Vec<Label> = chunk
            .names
            .iter()
            .map(|name| match self.labels.get(&name[..]) {
                Some(&id) => id,
                None => self.new_label(name),
            })
            .collect();
        for ((&from, &local), &to) in chunk.sources.iter().zip(&chunk.labels).zip(&chunk.targets) {
            let label = if local == TAU {
                TAU
            } else {
                ids[local as usize - 1]
            };
            self.push_transition(from, label, to);
        }
        self.line += chunk.lines;
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

    pub(super) fn finish(mut self) -> Result<Lts, AutError> {
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
