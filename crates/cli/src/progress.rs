//! A live progress line on stderr for long-running work (hidden when stderr is not a terminal
//! or when `--json` output is being produced for a machine).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A spinner line showing a phase, a count and a rate.
#[derive(Clone)]
pub struct ProgressLine {
    bar: ProgressBar,
}

impl ProgressLine {
    /// A progress line; `quiet` hides it.
    pub fn new(quiet: bool) -> Self {
        let bar = ProgressBar::new_spinner();
        if quiet {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Self { bar }
    }

    /// Replaces the message.
    pub fn set(&self, message: String) {
        self.bar.set_message(message);
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
