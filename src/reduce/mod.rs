//! Reductions of explicit LTSs: FDR's compression functions.

#![forbid(unsafe_code)]

pub mod compressions;

pub use compressions::Compression;
