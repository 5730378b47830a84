//! The harness shared by the loom models.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Preemption bound used when `LOOM_MAX_PREEMPTIONS` is not set.
const DEFAULT_PREEMPTIONS: usize = 2;

/// Runs `model` in every interleaving loom explores and prints how many there were.
pub fn check(name: &str, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(DEFAULT_PREEMPTIONS);
    }
    let bound = builder.preemption_bound;
    let iterations = Arc::new(AtomicUsize::new(0));
    let counter = iterations.clone();
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        model();
    });
    eprintln!(
        "{name}: {} interleavings, preemption bound {bound:?}, {:.2?}",
        iterations.load(Ordering::Relaxed),
        start.elapsed()
    );
}
