//! The `--report DURATION` tick of long-running commands that print their counters.

use std::time::Duration;

use tokio::time::{Instant, Interval, interval_at};

/// Ticks every `--report` period, or never when it is 0.
pub struct ReportTimer(Option<Interval>);

impl ReportTimer {
    /// A timer for `--report DURATION` (0: no reports); the first tick comes after one period.
    pub fn every(period: Duration) -> Self {
        Self((!period.is_zero()).then(|| interval_at(Instant::now() + period, period)))
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
