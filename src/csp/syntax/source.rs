//! Source files, byte spans and their line/column positions.

use std::fmt;
use std::path::{Path, PathBuf};

/// A byte range in one source file of a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// Index of the file in its [`SourceMap`].
    pub file: u32,
    /// Byte offset of the first byte.
    pub lo: u32,
    /// Byte offset one past the last byte.
    pub hi: u32,
}

impl Span {
    /// The span from the start of `self` to the end of `other` (same file assumed).
    pub fn to(self, other: Span) -> Span {
        if other.file != self.file {
            return self;
        }
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One loaded source file.
#[derive(Debug)]
pub struct SourceFile {
    /// The path the file was read from.
    pub path: PathBuf,
    /// The name shown in diagnostics (the path as given or resolved).
    pub name: String,
    /// The text (invalid UTF-8 replaced).
    pub text: String,
    line_starts: Vec<u32>,
}

/// A position in a file, 1-based line and column (columns count characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// File name as shown to users.
    pub file: String,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// All files of a script (the main file and its includes).
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file's text and returns its index.
    pub fn add(&mut self, path: &Path, name: String, text: String) -> u32 {
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        self.files.push(SourceFile {
            path: path.to_path_buf(),
            name,
            text,
            line_starts,
        });
        (self.files.len() - 1) as u32
    }

    /// The file with index `id`.
    pub fn file(&self, id: u32) -> &SourceFile {
        &self.files[id as usize]
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when no file has been added.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The line and column of the start of `span`.
    pub fn location(&self, span: Span) -> Location {
        let Some(file) = self.files.get(span.file as usize) else {
            return Location {
                file: "<unknown>".into(),
                line: 0,
                column: 0,
            };
        };
        let lo = (span.lo as usize).min(file.text.len());
        let line_idx = match file.line_starts.binary_search(&(lo as u32)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = file.line_starts[line_idx] as usize;
        let column = file
            .text
            .get(start..lo)
            .map(|s| s.chars().count())
            .unwrap_or(lo - start)
            + 1;
        Location {
            file: file.name.clone(),
            line: line_idx as u32 + 1,
            column: column as u32,
        }
    }

    /// The source text covered by `span` (empty if out of range).
    pub fn text(&self, span: Span) -> &str {
        self.files
            .get(span.file as usize)
            .and_then(|f| f.text.get(span.lo as usize..span.hi as usize))
            .unwrap_or("")
    }
}
