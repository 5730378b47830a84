//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared test corpus: `$WEFT_CORPUS`, else `<crate>/../shared/corpus`, else
/// `/work/shared/corpus`.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEFT_CORPUS") {
        return PathBuf::from(dir);
    }
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if beside.is_dir() {
        return beside;
    }
    PathBuf::from("/work/shared/corpus")
}
