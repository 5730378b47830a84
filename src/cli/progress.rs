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

    /// Reports a finished level.
    pub fn update(&self, levels: u32, states: u64, transitions: u64) {
        self.bar.set_message(format!(
            "level {levels}: {states} states, {transitions} transitions"
        ));
    }

    /// An explorer callback that reports each finished level on this line.
    pub fn observer(&self) -> LevelObserver {
        let p = self.clone();
        Arc::new(move |r: &LevelReport| p.update(r.level, r.states, r.transitions))
    }

    /// Removes the line.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
