//! A progress line on stderr for long runs, shown only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use weft::explore::{LevelObserver, LevelReport};

/// Progress of a level-by-level search.
#[derive(Clone)]
pub struct LevelProgress {
    bar: ProgressBar,
}

impl LevelProgress {
    /// A spinner with a message, or `None` when stderr is not a terminal.
    pub fn start(what: &str) -> Option<LevelProgress> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(LevelProgress { bar })
    }

    /// Reports a finished level: the level, the states (or product pairs: `noun`) known,
    /// their rate, and the process's resident memory.
    pub fn update(&self, r: &LevelReport, noun: &str) {
        let rate = r.states as f64 / r.seconds.max(1e-9);
        let memory = weft::explore::limits::resident_bytes()
            .map(|b| format!(", {} MB", b >> 20))
            .unwrap_or_default();
        self.bar.set_message(format!(
            "level {}: {} {noun}, {:.0} {noun}/s, {} transitions{memory}",
            r.level, r.states, rate, r.transitions
        ));
    }

    /// An explorer callback that reports each finished level on this line.
    pub fn observer(&self) -> LevelObserver {
        let p = self.clone();
        Arc::new(move |r: &LevelReport| p.update(r, "states"))
    }

    /// Removes the line.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
