//! Excerpts of source text kept with positioned errors (CSPm and `.aut` alike), so that
//! [`crate::diag`] can render them after the source is gone. Depends on nothing of weft, so
//! every layer's errors can hold one.

#![forbid(unsafe_code)]

use std::ops::Range;

/// How many bytes of a long source line an excerpt keeps on each side of its span (the
/// renderer shortens lines to the terminal's width itself; this bounds what an error holds).
pub const CONTEXT_BYTES: usize = 2048;

/// The source lines around an error's span, kept with the error for rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excerpt {
    /// The line number (from 1) of the first line of `text`.
    pub line: u32,
    /// The whole line (or lines) of source the span lies on, possibly shortened around the
    /// span when very long (then `clipped` is true), without the final newline.
    pub text: String,
    /// The span, as a byte range of `text`.
    pub range: Range<usize>,
    /// True when `text` does not start at the start of its line.
    pub clipped: bool,
}

impl Excerpt {
    /// The excerpt of `source` (a whole file) around the byte range `lo..hi`, whose first line
    /// is line `line` (from 1). A span over several lines is cut at the end of its first line.
    pub fn of(source: &str, lo: usize, hi: usize, line: u32) -> Excerpt {
        let lo = floor_char(source, lo.min(source.len()));
        let hi = floor_char(source, hi.clamp(lo, source.len()));
        let line_start = source[..lo].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[lo..].find('\n').map_or(source.len(), |i| lo + i);
        Excerpt::of_line(
            &source[line_start..line_end],
            lo - line_start,
            hi - line_start,
            line,
        )
    }

    /// The excerpt of one line `text` (no newline) with the span `lo..hi` in bytes of it.
    pub fn of_line(text: &str, lo: usize, hi: usize, line: u32) -> Excerpt {
        let text = text.strip_suffix('\r').unwrap_or(text);
        let lo = floor_char(text, lo.min(text.len()));
        let hi = floor_char(text, hi.clamp(lo, text.len()));
        let start = floor_char(text, lo.saturating_sub(CONTEXT_BYTES));
        let end = floor_char(text, hi.saturating_add(CONTEXT_BYTES).min(text.len()));
        Excerpt {
            line,
            text: text[start..end].to_string(),
            range: lo - start..hi - start,
            clipped: start > 0,
        }
    }
}

/// The largest char boundary of `text` at or below `at` (`at <= text.len()`).
pub(crate) fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
