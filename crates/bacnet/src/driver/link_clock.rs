//! The monotonic clock a data link's sans-IO core is driven with: the host's clock, or that
//! clock plus an offset a test moves forward ([`LinkClock::adjustable`]) so that table
//! timeouts measured in minutes (a foreign device's time-to-live plus the 30-second grace
//! period) can be shown through real sockets in milliseconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Monotonic time for a link driver. Cloning shares the offset.
#[derive(Clone, Debug, Default)]
pub struct LinkClock {
    /// Nanoseconds this clock runs ahead of the host's; `None` for the host's clock.
    ahead: Option<Arc<AtomicU64>>,
}

impl LinkClock {
    /// The host's monotonic clock.
    pub fn system() -> Self {
        Self::default()
    }

    /// The host's clock plus an offset that [`LinkClock::advance`] moves forward.
    pub fn adjustable() -> Self {
        Self {
            ahead: Some(Arc::new(AtomicU64::new(0))),
        }
    }

    fn offset(&self) -> Duration {
        self.ahead.as_ref().map_or(Duration::ZERO, |ahead| {
            Duration::from_nanos(ahead.load(Ordering::Relaxed))
        })
    }

    /// Now, as the link's core sees it.
    pub fn now(&self) -> Instant {
        Instant::now() + self.offset()
    }

    /// Moves an adjustable clock forward by `by` (a system clock ignores it); deadlines
    /// already due then fire at the link's next event, or at once through [`Self::to_host`].
    pub fn advance(&self, by: Duration) {
        if let Some(ahead) = &self.ahead {
            let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
            ahead.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// The host instant at which this clock shows `instant` (for the driver's timers).
    pub fn to_host(&self, instant: Instant) -> Instant {
        let offset = self.offset();
        instant.checked_sub(offset).unwrap_or_else(Instant::now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adjustable_clock_moves_ahead_and_maps_deadlines_back() {
        let clock = LinkClock::adjustable();
        let shared = clock.clone();
        let before = Instant::now();
        shared.advance(Duration::from_secs(90));
        let now = clock.now();
        assert!(now >= before + Duration::from_secs(90));
        let deadline = now + Duration::from_secs(1);
        let host = clock.to_host(deadline);
        assert!(host <= Instant::now() + Duration::from_secs(1));
        let system = LinkClock::system();
        system.advance(Duration::from_secs(90));
        assert!(system.now() < Instant::now() + Duration::from_secs(1));
    }
}
