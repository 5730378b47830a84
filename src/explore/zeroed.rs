//! [`ZeroedWords`]: a fixed array of atomic words, zeroed, taken from the operating system's
//! allocator rather than the process's global one.
//!
//! The tables of visited states are the largest allocations of a run and are replaced by
//! larger ones as they fill. The global allocator (mimalloc, configured never to give pages
//! back, see `main.rs`) would keep every replaced table resident: about twice the final
//! table. The system allocator maps large blocks on their own and unmaps them when freed, and
//! hands out fresh mappings already zeroed, so a table costs its size only while it lives.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

/// `len` atomic words, all 0 when made. See the module documentation.
pub struct ZeroedWords {
    ptr: NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: the words are atomics, safe to share and send; the block is owned by this value.
unsafe impl Send for ZeroedWords {}
// SAFETY: as above; all access through `&AtomicU64`.
unsafe impl Sync for ZeroedWords {}

impl ZeroedWords {
    /// `len` words (at least one), all 0; an allocation failure aborts (as any).
    pub fn new(len: usize) -> ZeroedWords {
        ZeroedWords::try_new(len).unwrap_or_else(|| {
            let layout =
                Layout::array::<AtomicU64>(len.max(1)).unwrap_or(Layout::new::<AtomicU64>());
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// `len` words (at least one), all 0; `None` when they cannot be allocated (a run over
    /// its memory reports a stop, never an abort).
    pub fn try_new(len: usize) -> Option<ZeroedWords> {
        let len = len.max(1);
        let layout = Layout::array::<AtomicU64>(len).ok()?;
        // SAFETY: `layout` has a non-zero size (`len >= 1`).
        let raw = unsafe { System.alloc_zeroed(layout) };
        let ptr = NonNull::new(raw as *mut AtomicU64)?;
        Some(ZeroedWords { ptr, len })
    }

    fn layout(&self) -> Layout {
        Layout::array::<AtomicU64>(self.len).expect("the layout it was made with")
    }
}

impl std::ops::Deref for ZeroedWords {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` points to `len` initialised words (zero bytes are a valid
        // `AtomicU64`), owned by `self` and alive as long as it is.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ZeroedWords {
    fn drop(&mut self) {
        // SAFETY: allocated by `System` with this layout in `new`, freed once.
        unsafe { System.dealloc(self.ptr.as_ptr() as *mut u8, self.layout()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn words_start_at_zero_and_keep_what_is_stored() {
        for len in [0, 1, 7, 1 << 16] {
            let words = ZeroedWords::new(len);
            assert_eq!(words.len(), len.max(1));
            assert!(words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
            words[words.len() - 1].store(42, Ordering::Relaxed);
            assert_eq!(words[words.len() - 1].load(Ordering::Relaxed), 42);
        }
    }
}
