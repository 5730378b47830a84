//! Reading an `.aut` file on several threads: one reads (and decompresses, for a gzipped
//! file) while the others parse whole lines in pieces (see `chunked`).

use std::path::Path;

use super::chunked::{parse_chunked, PIECE};
use super::{open_aut_file, read_aut_file, AutError, AutFile, AutOptions};
use crate::lts::Lts;
use crate::threads::Threads;

/// As [`read_aut_file`]; with more than one thread, the file is read (and decompressed) on a
/// thread of its own while `threads` workers parse it in pieces: the same LTS (labels
/// numbered alike) or the same error (line, column and message) as on one thread.
pub fn read_aut_file_on(path: &Path, opts: &AutOptions, threads: Threads) -> Result<Lts, AutError> {
    if threads.get() == 1 {
        return read_aut_file(path, opts);
    }
    // A gzipped file is decompressed as it is read, even one small enough to inflate whole
    // (as `read_aut_file` does): the workers parse while the reader inflates, where a whole
    // inflation would leave them idle. On two cores, treiberStack_impl.aut.gz loaded in 27 ms
    // so against 33-40 ms inflated whole first.
    let result = match open_aut_file(path, false)? {
        AutFile::Text { reader, size } => parse_chunked(reader, opts, size, threads.get(), PIECE),
        AutFile::Inflated(text) => {
            let size = Some(text.len() as u64);
            parse_chunked(&text[..], opts, size, threads.get(), PIECE)
        }
        // A compressed size says little about the number of lines.
        AutFile::Gzip(reader) => parse_chunked(
            flate2::bufread::MultiGzDecoder::new(reader),
            opts,
            None,
            threads.get(),
            PIECE,
        ),
    };
    result.map_err(|e| e.with_path(path))
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
        assert!(text.len() > 2 * super::super::CHUNK);
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
