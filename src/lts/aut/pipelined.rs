//! Reading a gzipped `.aut` file on two threads: one decompresses, the other parses.

use std::io::{self, Read};
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};

use super::{is_gzip, parse, read_aut_file, AutError, AutOptions, CHUNK};
use crate::lts::Lts;
use crate::threads::Threads;

/// As [`read_aut_file`]; with more than one thread, a gzipped file is decompressed on a
/// thread of its own while this one parses (the same result: the parser sees the same bytes
/// in the same order).
pub fn read_aut_file_on(path: &Path, opts: &AutOptions, threads: Threads) -> Result<Lts, AutError> {
    if threads.get() == 1 {
        return read_aut_file(path, opts);
    }
    let on_path = |source: io::Error| AutError::Io {
        path: Some(path.to_path_buf()),
        source,
    };
    let file = std::fs::File::open(path).map_err(on_path)?;
    let mut reader = io::BufReader::with_capacity(1 << 16, file);
    if !is_gzip(&mut reader).map_err(on_path)? {
        drop(reader);
        return read_aut_file(path, opts);
    }
    let (full, chunks) = sync_channel::<io::Result<Vec<u8>>>(4);
    let (empty, recycled) = channel::<Vec<u8>>();
    let result = std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut gz = flate2::bufread::MultiGzDecoder::new(reader);
            loop {
                let mut buf = recycled.try_recv().unwrap_or_default();
                buf.resize(CHUNK, 0);
                let mut filled = 0;
                let outcome = loop {
                    if filled == buf.len() {
                        break Ok(false);
                    }
                    match gz.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(true),
                        Ok(k) => filled += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                buf.truncate(filled);
                let done = !matches!(outcome, Ok(false));
                let message = outcome.map(|_| buf);
                // The parser stops listening on a syntax error: stop decompressing too.
                if full.send(message).is_err() || done {
                    return;
                }
            }
        });
        let stream = ChunkStream {
            chunks,
            empty,
            current: Vec::new(),
            at: 0,
        };
        parse(stream, opts, None)
    });
    result.map_err(|e| e.with_path(path))
}

/// The decompressed bytes, as chunks from the decompressing thread (an empty chunk or an
/// error ends them); used chunks go back to it.
struct ChunkStream {
    chunks: Receiver<io::Result<Vec<u8>>>,
    empty: Sender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for ChunkStream {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.current.len() {
            let next = match self.chunks.recv() {
                Ok(next) => next?,
                // The decompressor has finished (after its last chunk).
                Err(_) => return Ok(0),
            };
            if next.is_empty() {
                return Ok(0);
            }
            let used = std::mem::replace(&mut self.current, next);
            let _ = self.empty.send(used);
            self.at = 0;
        }
        let k = out.len().min(self.current.len() - self.at);
        out[..k].copy_from_slice(&self.current[self.at..self.at + k]);
        self.at += k;
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A gzipped file of several decompressed chunks reads the same on one and two threads,
    /// and a syntax error near its end is reported at the same place.
    #[test]
    fn two_threads_read_the_same_lts_and_errors() {
        let n = 60_000u32;
        let mut text = format!("des (0,{},{})\n", 2 * n, n + 1);
        for s in 0..n {
            text.push_str(&format!("({s},\"label_{}\",{})\n", s % 7, s + 1));
            text.push_str(&format!("({},i,{s})\n", s + 1));
        }
        assert!(text.len() > 2 * CHUNK);
        let dir = std::env::temp_dir().join(format!("weft-aut-pipelined-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gz_file = |name: &str, text: &str| {
            let path = dir.join(name);
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text.as_bytes()).unwrap();
            std::fs::write(&path, gz.finish().unwrap()).unwrap();
            path
        };
        let opts = AutOptions::default();
        let two = Threads::new(2).unwrap();
        let good = gz_file("good.aut.gz", &text);
        let one_thread = read_aut_file(&good, &opts).unwrap();
        assert_eq!(read_aut_file_on(&good, &opts, two).unwrap(), one_thread);
        assert_eq!(one_thread.num_transitions(), u64::from(2 * n));
        let bad = gz_file("bad.aut.gz", &format!("{text}(0,\"a\" 1)\n"));
        let (e1, e2) = (
            read_aut_file(&bad, &opts).unwrap_err(),
            read_aut_file_on(&bad, &opts, two).unwrap_err(),
        );
        assert_eq!(e1.to_string(), e2.to_string());
        assert_eq!(e1.line(), Some(u64::from(2 * n) + 2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
