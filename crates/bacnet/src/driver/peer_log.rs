//! The budget of log lines about peers' errors (malformed datagrams, rejects, aborts): at
//! most [`LINES_PER_WINDOW`] lines every [`WINDOW`] for the whole process, so a peer that
//! sends garbage in a loop cannot fill a disk or a supervisor's pipe with our logs. The next
//! line written after a quiet spell says how many were left out (`suppressed`).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Length of one budget window.
pub(crate) const WINDOW: Duration = Duration::from_secs(10);
/// Lines allowed per window.
pub(crate) const LINES_PER_WINDOW: u32 = 20;

struct Budget {
    window_start: Option<Instant>,
    lines: u32,
    suppressed: u64,
}

static BUDGET: Mutex<Budget> = Mutex::new(Budget {
    window_start: None,
    lines: 0,
    suppressed: 0,
});

impl Budget {
    fn admit(&mut self, now: Instant) -> Option<u64> {
        if self
            .window_start
            .is_none_or(|start| now.saturating_duration_since(start) >= WINDOW)
        {
            self.window_start = Some(now);
            self.lines = 0;
        }
        if self.lines < LINES_PER_WINDOW {
            self.lines += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

/// Whether a line about a peer's error may be written now: `Some(n)` with the number of
/// lines left out since the last one written, `None` when the budget is spent.
pub(crate) fn admit() -> Option<u64> {
    BUDGET
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(Instant::now())
}

#[cfg(test)]
mod tests {
    use super::{Budget, LINES_PER_WINDOW, WINDOW};

    #[test]
    fn the_budget_refills_each_window_and_counts_what_it_left_out() {
        let start = std::time::Instant::now();
        let mut budget = Budget {
            window_start: None,
            lines: 0,
            suppressed: 0,
        };
        for _ in 0..LINES_PER_WINDOW {
            assert_eq!(budget.admit(start), Some(0));
        }
        assert_eq!(budget.admit(start), None);
        assert_eq!(budget.admit(start + WINDOW / 2), None);
        assert_eq!(budget.admit(start + WINDOW), Some(2));
        assert_eq!(budget.admit(start + WINDOW), Some(0));
    }
}
