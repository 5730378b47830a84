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
//! mCRL2 and CADP do). A gzip stream (detected by its magic bytes) is decompressed as it is
//! read; on one thread, a file of one member of moderate size is inflated whole first, which
//! costs half the time ([`crate::gzip`]).

use std::io::{self, BufRead, Read};
use std::path::Path;

use super::Lts;

mod chunked;
#[cfg(test)]
mod chunked_tests;
mod errors;
mod lines;
mod parser;
mod pipelined;
#[cfg(test)]
mod tests;
mod writer;

pub use errors::AutError;
use parser::Parser;
pub use pipelined::read_aut_file_on;
pub use writer::write_aut;

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
    let result = match open_aut_file(path, true)? {
        AutFile::Text { reader, size } => parse(reader, opts, size),
        AutFile::Inflated(text) => parse(&text[..], opts, Some(text.len() as u64)),
        AutFile::Gzip(reader) => parse(
            flate2::bufread::MultiGzDecoder::new(reader),
            opts,
            // A compressed size says little about the number of lines.
            None,
        ),
    };
    result.map_err(|e| e.with_path(path))
}

/// A compressed file up to this size is read whole, to be inflated at once (see
/// [`crate::gzip`]).
const WHOLE_COMPRESSED: u64 = 64 << 20;

/// A compressed file is inflated at once when it decompresses to at most this many bytes; a
/// larger one is decompressed as it is parsed.
const WHOLE_INFLATED: usize = 256 << 20;

/// An `.aut` file opened for reading.
enum AutFile {
    /// Plain text, with its size when known.
    Text {
        reader: io::BufReader<std::fs::File>,
        size: Option<u64>,
    },
    /// A gzip file small enough to have been inflated at once.
    Inflated(Vec<u8>),
    /// Any other gzip file (several members, damaged, or large): decompressed as it is read,
    /// which reports a damaged stream where it breaks off.
    Gzip(Box<dyn BufRead + Send>),
}

/// Opens `path`, telling text from gzip by the magic bytes; a small gzip file is inflated at
/// once when `whole`.
fn open_aut_file(path: &Path, whole: bool) -> Result<AutFile, AutError> {
    let on_path = |source: io::Error| AutError::Io {
        path: Some(path.to_path_buf()),
        source,
    };
    let file = std::fs::File::open(path).map_err(on_path)?;
    let size = file.metadata().map(|m| m.len()).ok();
    let mut reader = io::BufReader::with_capacity(1 << 16, file);
    if !is_gzip(&mut reader).map_err(on_path)? {
        return Ok(AutFile::Text { reader, size });
    }
    if !whole || size.is_none_or(|size| size > WHOLE_COMPRESSED) {
        return Ok(AutFile::Gzip(Box::new(reader)));
    }
    let mut data = Vec::new();
    reader.read_to_end(&mut data).map_err(on_path)?;
    Ok(
        match crate::gzip::inflate_single_member(&data, WHOLE_INFLATED) {
            Some(text) => AutFile::Inflated(text),
            None => AutFile::Gzip(Box::new(io::Cursor::new(data))),
        },
    )
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

/// The error of an input that breaks off with a read error after `text` (a truncated or
/// damaged gzip stream): positioned where the text read so far ends, after its complete lines
/// are parsed (an error in them comes first).
fn broken_off(parser: &mut Parser, text: &[u8], e: io::Error) -> AutError {
    let consumed = match parser.parse_lines(text) {
        Ok(consumed) => consumed,
        Err(syntax) => return syntax,
    };
    let partial = &text[consumed..];
    let line = parser.line + 1;
    AutError::Syntax {
        path: None,
        line,
        column: partial.len() as u64 + 1,
        expected: "the rest of the input",
        found: format!("an input that cannot be read further ({e})"),
        excerpt: Some(errors::excerpt_of(
            partial,
            partial.len(),
            partial.len(),
            line,
        )),
    }
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
                Err(e) => return Err(broken_off(&mut parser, &buf[..filled], e)),
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
