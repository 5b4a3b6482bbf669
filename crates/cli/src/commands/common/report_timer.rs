//! The `--report SECONDS` tick of long-running commands that print their counters.

use std::time::Duration;

use tokio::time::{Instant, Interval, interval_at};

/// Ticks every `--report` seconds, or never when it is 0.
pub struct ReportTimer(Option<Interval>);

impl ReportTimer {
    /// A timer for `--report SECONDS` (0: no reports); the first tick comes after one period.
    pub fn every(seconds: u64) -> Self {
        Self((seconds > 0).then(|| {
            let period = Duration::from_secs(seconds);
            interval_at(Instant::now() + period, period)
        }))
    }

    /// Waits for the next report (forever without reports).
    pub async fn tick(&mut self) {
        match &mut self.0 {
            Some(interval) => {
                interval.tick().await;
            }
            None => std::future::pending().await,
        }
    }
}
