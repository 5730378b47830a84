//! Reading `.aut` text on several threads: one thread reads (and decompresses) the input and
//! cuts it into pieces of whole lines, workers parse the pieces, and the calling thread
//! records them in input order.
//!
//! A worker parses its piece on its own: its transitions with labels numbered locally, in
//! order of first appearance within the piece, and whether every line was a transition. The
//! calling thread records the pieces in order through the sequential [`Parser`], giving the
//! labels new to the input their ids in the order in which the pieces met them: the same
//! numbering as a sequential reading. A piece that the sequential parser would not accept as
//! it is (a line that is not a transition, a state out of the declared range, one transition
//! more than declared; or a piece before the header is known) is parsed again, line by line,
//! by that parser, from the state that the earlier pieces left: so an error is the one a
//! sequential reading reports, with the same line, column and message. The first piece's
//! header line is always parsed that way.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use super::lines::{parse_transition, skip_ws};
use super::parser::{find_newline, Parser};
use super::{broken_off, AutError, AutOptions};
use crate::hash::WordBuildHasher;
use crate::lts::Lts;
use crate::ts::{Label, TAU};

/// The bytes a piece holds at least (a longer line makes it longer).
pub(super) const PIECE: usize = 1 << 18;

/// The lines of one piece, parsed without the header's figures.
#[derive(Default)]
pub(super) struct ParsedChunk {
    /// The number of lines parsed, counted as the sequential parser counts them.
    pub(super) lines: u64,
    /// The transitions: sources, local label ids (0 for tau, `i + 1` for `names[i]`), targets.
    pub(super) sources: Vec<u32>,
    pub(super) labels: Vec<Label>,
    pub(super) targets: Vec<u32>,
    /// The visible labels of the piece, in order of first appearance.
    pub(super) names: Vec<Box<[u8]>>,
    /// The largest state number among the sources and targets.
    pub(super) max_state: u32,
    /// Whether every non-blank line is a well-formed transition.
    pub(super) complete: bool,
}

/// Labels met in a piece so far, by their bytes: tau's names give [`TAU`], the others their
/// local id.
type LocalLabels<'a> = HashMap<&'a [u8], Label, WordBuildHasher>;

/// Parses `body` (whole lines; a last line without newline when `last`) as transitions; stops
/// at the first line that is not one (then `complete` is false).
pub(super) fn parse_body(body: &[u8], last: bool, opts: &AutOptions) -> ParsedChunk {
    let mut chunk = ParsedChunk {
        complete: true,
        ..ParsedChunk::default()
    };
    let mut local: LocalLabels<'_> = HashMap::default();
    for name in &opts.tau_labels {
        local.insert(name.as_bytes(), TAU);
    }
    let mut start = 0;
    while let Some(len) = find_newline(&body[start..]) {
        if !parse_into(&body[start..start + len], &mut local, &mut chunk) {
            chunk.complete = false;
            return chunk;
        }
        start += len + 1;
    }
    if start < body.len() && !(last && parse_into(&body[start..], &mut local, &mut chunk)) {
        chunk.complete = false;
    }
    chunk
}

/// Parses one line into `chunk`; false when it is neither blank nor a transition.
#[inline]
fn parse_into<'a>(line: &'a [u8], local: &mut LocalLabels<'a>, chunk: &mut ParsedChunk) -> bool {
    chunk.lines += 1;
    let first = skip_ws(line, 0);
    if first == line.len() {
        return true;
    }
    let Ok((from, label, to)) = parse_transition(line, first) else {
        return false;
    };
    let label = match local.get(label) {
        Some(&id) => id,
        None => new_local_label(label, local, chunk),
    };
    chunk.sources.push(from);
    chunk.labels.push(label);
    chunk.targets.push(to);
    chunk.max_state = chunk.max_state.max(from).max(to);
    true
}

#[cold]
fn new_local_label<'a>(
    label: &'a [u8],
    local: &mut LocalLabels<'a>,
    chunk: &mut ParsedChunk,
) -> Label {
    chunk.names.push(label.into());
    let id = chunk.names.len() as Label;
    local.insert(label, id);
    id
}

/// The end of the first piece's header part: the first non-blank line with its newline
/// (the whole text when that line has none, or when there is no such line).
fn header_end(text: &[u8]) -> usize {
    let mut start = 0;
    while let Some(len) = find_newline(&text[start..]) {
        let line = &text[start..start + len];
        start += len + 1;
        if skip_ws(line, 0) < line.len() {
            return start;
        }
    }
    text.len()
}

/// Parses `text` line by line with `parser`; with `last`, a final line without newline too.
fn parse_sequentially(parser: &mut Parser, text: &[u8], last: bool) -> Result<(), AutError> {
    let consumed = parser.parse_lines(text)?;
    if last && consumed < text.len() {
        parser.line += 1;
        parser.parse_line(&text[consumed..])?;
    }
    Ok(())
}

/// A piece of the input on its way to a worker.
struct Piece {
    seq: u64,
    text: Vec<u8>,
    last: bool,
}

/// What the calling thread receives, by sequence number.
enum Outcome {
    /// A parsed piece: its text, the end of its header part (first piece only), its body.
    Parsed {
        text: Vec<u8>,
        head: usize,
        body: ParsedChunk,
        last: bool,
    },
    /// The input broke off after `text` (the bytes read since the last whole piece).
    Broken { text: Vec<u8>, error: io::Error },
}

/// Reads `.aut` text from `reader` on `workers` parsing threads and one reading thread, in
/// pieces of at least `piece` bytes: the same LTS, or the same error, as [`super::parse`].
pub(super) fn parse_chunked<R: Read + Send>(
    reader: R,
    opts: &AutOptions,
    size_hint: Option<u64>,
    workers: usize,
    piece: usize,
) -> Result<Lts, AutError> {
    let workers = workers.max(1);
    let piece = piece.max(1);
    // Bounded: the reader stays a few pieces ahead of the workers.
    let (work_in, work_out) = sync_channel::<Piece>(2 * workers);
    let (done_in, done_out) = channel::<(u64, Outcome)>();
    let (spare_in, spare_out) = channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let read_done = done_in.clone();
        scope.spawn(move || cut_pieces(reader, piece, &work_in, &read_done, &spare_out));
        // Shared by the workers; dropped with the last of them, which ends the reader.
        let work_out = Arc::new(Mutex::new(work_out));
        for _ in 0..workers {
            let work_out = Arc::clone(&work_out);
            let done_in = done_in.clone();
            scope.spawn(move || parse_pieces(&work_out, &done_in, opts));
        }
        drop(work_out);
        drop(done_in);
        record_in_order(done_out, &spare_in, opts, size_hint)
    })
}

/// The reading thread: pieces of whole lines of at least `piece` bytes, in order; the last
/// one (possibly empty) is marked. A read error sends the unsent bytes with it.
fn cut_pieces<R: Read>(
    mut reader: R,
    piece: usize,
    work: &std::sync::mpsc::SyncSender<Piece>,
    done: &Sender<(u64, Outcome)>,
    spare: &Receiver<Vec<u8>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    for seq in 0.. {
        let mut buf = spare.try_recv().unwrap_or_default();
        buf.clear();
        buf.append(&mut carry);
        let mut filled = buf.len();
        let mut target = piece.max(2 * filled);
        let mut searched = 0;
        loop {
            buf.resize(target, 0);
            let eof = loop {
                if filled == target {
                    break false;
                }
                match reader.read(&mut buf[filled..]) {
                    Ok(0) => break true,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        buf.truncate(filled);
                        let _ = done.send((seq, Outcome::Broken { text: buf, error }));
                        return;
                    }
                }
            };
            if eof {
                buf.truncate(filled);
                let _ = work.send(Piece {
                    seq,
                    text: buf,
                    last: true,
                });
                return;
            }
            // Cut after the last newline; without one, read on into a longer buffer.
            match buf[searched..filled].iter().rposition(|&b| b == b'\n') {
                Some(at) => {
                    let cut = searched + at + 1;
                    carry.extend_from_slice(&buf[cut..filled]);
                    buf.truncate(cut);
                    break;
                }
                None => {
                    searched = filled;
                    target *= 2;
                }
            }
        }
        if work
            .send(Piece {
                seq,
                text: buf,
                last: false,
            })
            .is_err()
        {
            // The workers have stopped (an error was found): stop reading.
            return;
        }
    }
}

/// A worker: parses pieces until there are no more or nobody listens.
fn parse_pieces(work: &Mutex<Receiver<Piece>>, done: &Sender<(u64, Outcome)>, opts: &AutOptions) {
    loop {
        let next = {
            // A panic elsewhere while holding the lock leaves the receiver usable.
            let work = work.lock().unwrap_or_else(PoisonError::into_inner);
            work.recv()
        };
        let Ok(Piece { seq, text, last }) = next else {
            return;
        };
        let head = if seq == 0 { header_end(&text) } else { 0 };
        let body = parse_body(&text[head..], last, opts);
        let outcome = Outcome::Parsed {
            text,
            head,
            body,
            last,
        };
        if done.send((seq, outcome)).is_err() {
            return;
        }
    }
}

/// The calling thread: records the pieces in input order; returns the LTS or the first error.
fn record_in_order(
    done: Receiver<(u64, Outcome)>,
    spare: &Sender<Vec<u8>>,
    opts: &AutOptions,
    size_hint: Option<u64>,
) -> Result<Lts, AutError> {
    let mut parser = Parser::new(opts, size_hint);
    let mut waiting: BTreeMap<u64, Outcome> = BTreeMap::new();
    let mut next = 0u64;
    loop {
        let Some(outcome) = waiting.remove(&next) else {
            match done.recv() {
                Ok((seq, outcome)) => {
                    waiting.insert(seq, outcome);
                    continue;
                }
                // Every thread has ended without the last piece: cannot happen (the reader
                // sends the last piece or an error), but ends the reading as the input would.
                Err(_) => return parser.finish(),
            }
        };
        next += 1;
        match outcome {
            Outcome::Broken { text, error } => return Err(broken_off(&mut parser, &text, error)),
            Outcome::Parsed {
                text,
                head,
                body,
                last,
            } => {
                if head > 0 {
                    parse_sequentially(&mut parser, &text[..head], last && head == text.len())?;
                }
                if parser.accepts(&body) {
                    parser.absorb(&body);
                } else {
                    parse_sequentially(&mut parser, &text[head..], last)?;
                }
                let _ = spare.send(text);
                if last {
                    return parser.finish();
                }
            }
        }
    }
}
