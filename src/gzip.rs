//! Whole-buffer gzip inflation with libdeflate, for compressed inputs small enough to hold
//! decompressed in memory at once.
//!
//! libdeflate inflates about twice as fast as a streaming inflater (zlib-rs through flate2:
//! 8.6 ms against 16 ms for the corpus's `treiberStack_impl.aut.gz`, 13.8 MB of text), but only
//! a whole stream into a buffer of known size. A gzip file records its decompressed size
//! (modulo 2^32) in its last four bytes; [`inflate_single_member`] trusts it only as far as
//! libdeflate confirms it: the file must be exactly one gzip member, whose length and CRC-32
//! libdeflate checks, decompressing to exactly that size. Anything else (several members, a
//! damaged stream, a size beyond the bound) answers `None`, and the caller reads the file with
//! its streaming reader, which reports errors with their positions.

use std::ffi::c_void;
use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// A libdeflate decompressor, freed on drop.
struct Decompressor(NonNull<libdeflate_decompressor>);

impl Decompressor {
    fn new() -> Option<Decompressor> {
        // SAFETY: allocates a fresh decompressor; no arguments. A null result (out of memory)
        // is answered by `None`.
        NonNull::new(unsafe { libdeflate_alloc_decompressor() }).map(Decompressor)
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `libdeflate_alloc_decompressor` and is freed once, here.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

/// The decompressed size a gzip file `data` declares in its trailer (the last member's size
/// modulo 2^32), or `None` when it is too short to have one.
fn declared_size(data: &[u8]) -> Option<usize> {
    let tail: [u8; 4] = data.get(data.len().checked_sub(4)?..)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(tail)).ok()
}

/// The decompressed contents of the gzip file `data`, when it is exactly one member that
/// decompresses, with a correct CRC-32, to the size its trailer declares, and that size is at
/// most `max_size` bytes; else `None` (see the module documentation).
pub(crate) fn inflate_single_member(data: &[u8], max_size: usize) -> Option<Vec<u8>> {
    let size = declared_size(data)?;
    if size > max_size {
        return None;
    }
    let decompressor = Decompressor::new()?;
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(size).ok()?;
    let (mut read, mut written) = (0usize, 0usize);
    // SAFETY: `data` is readable for `data.len()` bytes and `out`'s spare capacity writable for
    // `size` bytes (reserved above); libdeflate writes at most `size` bytes there and reports
    // how many in `written`, and how many input bytes it consumed in `read`. The decompressor
    // is live and used by this thread only.
    let result = unsafe {
        libdeflate_gzip_decompress_ex(
            decompressor.0.as_ptr(),
            data.as_ptr().cast::<c_void>(),
            data.len(),
            out.as_mut_ptr().cast::<c_void>(),
            size,
            &mut read,
            &mut written,
        )
    };
    if result != libdeflate_result_LIBDEFLATE_SUCCESS || read != data.len() || written != size {
        return None;
    }
    // SAFETY: libdeflate succeeded and initialised the first `written` (== `size`) bytes, within
    // the capacity reserved above.
    unsafe { out.set_len(written) };
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use proptest::prelude::*;

    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        gz.finish().unwrap()
    }

    /// The oracle: flate2's streaming multi-member reader.
    fn streamed(data: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(data).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn a_single_member_inflates_as_the_streaming_reader_does() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("({i},\"a{}\",{})\n", i % 13, i + 1).into_bytes())
            .collect();
        let data = gzip(&text);
        assert_eq!(inflate_single_member(&data, usize::MAX).unwrap(), text);
        // Beyond the bound: left to the streaming reader.
        assert_eq!(inflate_single_member(&data, text.len() - 1), None);
    }

    #[test]
    fn several_members_damage_and_short_inputs_are_left_to_the_streaming_reader() {
        let (a, b) = (gzip(b"first member\n"), gzip(b"second member\n"));
        // Two members, the last one's declared size big enough for the first: the first alone
        // must not be taken for the whole file.
        let (long, short) = (gzip(b"0123456789abcdef\n"), gzip(b"0123456789abcdef\n"));
        let two = [long.clone(), short].concat();
        assert_eq!(inflate_single_member(&two, usize::MAX), None);
        assert_eq!(streamed(&two).unwrap().len(), 34);
        assert_eq!(inflate_single_member(&[a, b].concat(), usize::MAX), None);
        let mut damaged = long.clone();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0x55;
        assert_eq!(inflate_single_member(&damaged, usize::MAX), None);
        assert_eq!(
            inflate_single_member(&long[..long.len() - 1], usize::MAX),
            None
        );
        assert_eq!(inflate_single_member(&[0x1f, 0x8b], usize::MAX), None);
        assert_eq!(inflate_single_member(&[], usize::MAX), None);
    }

    proptest! {
        /// Whatever the bytes (a gzip of random text, possibly cut, flipped or followed by
        /// more), the answer is either `None` or exactly what the streaming reader reads.
        #[test]
        fn never_differs_from_the_streaming_reader(
            text in proptest::collection::vec(any::<u8>(), 0..3000),
            cut in 0usize..64,
            flip in proptest::option::of((0usize..4096, 1u8..=255)),
            more in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
        ) {
            let mut data = gzip(&text);
            data.truncate(data.len().saturating_sub(cut % 3 * cut));
            if let Some((at, bits)) = flip {
                let n = data.len();
                if n > 0 {
                    data[at % n] ^= bits;
                }
            }
            if let Some(more) = &more {
                data.extend_from_slice(&gzip(more));
            }
            if let Some(inflated) = inflate_single_member(&data, usize::MAX) {
                prop_assert_eq!(Some(inflated), streamed(&data).ok());
            }
            if cut == 0 && flip.is_none() && more.is_none() {
                prop_assert_eq!(inflate_single_member(&data, usize::MAX), Some(text));
            }
        }
    }
}
