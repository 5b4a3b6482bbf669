//! A token bucket bounding how many datagrams a BBMD sends on its own initiative (forwards,
//! table answers), so that no input can make it send without bound.

use std::time::Instant;

/// Default sustained forwarding rate, datagrams per second.
pub const DEFAULT_RATE: u32 = 2000;
/// Default burst, datagrams.
pub const DEFAULT_BURST: u32 = 4000;

/// A token bucket: `rate` tokens per second up to `burst`.
#[derive(Debug, Clone)]
pub struct RateLimit {
    rate: u32,
    burst: u32,
    tokens: f64,
    last: Option<Instant>,
    dropped: u64,
}

impl RateLimit {
    /// A full bucket.
    pub fn new(rate: u32, burst: u32) -> Self {
        Self {
            rate,
            burst: burst.max(1),
            tokens: f64::from(burst.max(1)),
            last: None,
            dropped: 0,
        }
    }

    /// Takes one token if there is one; counts a drop otherwise.
    pub fn allow(&mut self, now: Instant) -> bool {
        if let Some(last) = self.last {
            let elapsed = now.saturating_duration_since(last).as_secs_f64();
            self.tokens = (self.tokens + elapsed * f64::from(self.rate)).min(f64::from(self.burst));
        }
        self.last = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            self.dropped += 1;
            false
        }
    }

    /// Datagrams refused so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self::new(DEFAULT_RATE, DEFAULT_BURST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_then_rate() {
        let t0 = Instant::now();
        let mut limit = RateLimit::new(10, 5);
        assert_eq!((0..8).filter(|_| limit.allow(t0)).count(), 5);
        assert_eq!(limit.dropped(), 3);
        let later = t0 + Duration::from_millis(300);
        assert_eq!((0..8).filter(|_| limit.allow(later)).count(), 3);
    }
}
