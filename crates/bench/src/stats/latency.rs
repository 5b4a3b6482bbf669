//! Latency recording in an HDR histogram (constant memory, no per-sample storage).

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histogram can hold; longer samples are clamped to it (and still counted).
const MAX_TRACKABLE: Duration = Duration::from_secs(120);
/// Three significant figures: 0.1 % resolution at any magnitude.
const SIGNIFICANT_FIGURES: u8 = 3;

/// A latency histogram in nanoseconds.
///
/// ```
/// use buildwire_bench::stats::LatencyHistogram;
/// use std::time::Duration;
/// let mut h = LatencyHistogram::new();
/// h.record(Duration::from_micros(150));
/// h.record(Duration::from_micros(250));
/// let s = h.summary();
/// assert_eq!(s.count, 2);
/// assert!(s.p50_ms > 0.14 && s.p50_ms < 0.16);
/// ```
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns to two minutes.
    pub fn new() -> Self {
        let high = u64::try_from(MAX_TRACKABLE.as_nanos()).unwrap_or(u64::MAX);
        // Constant bounds that hdrhistogram accepts (low >= 1, high >= 2 * low, sigfig <= 5).
        let histogram = Histogram::new_with_bounds(1, high, SIGNIFICANT_FIGURES)
            .expect("constant histogram bounds are valid");
        Self { histogram }
    }

    /// Records one sample; samples beyond two minutes are clamped.
    pub fn record(&mut self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.histogram.saturating_record(nanos);
    }

    /// Adds every sample of `other` (histograms from several workers are merged at the end).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Both histograms have the same bounds, so `add` only fails on overflow of a count,
        // which needs 2^64 samples.
        let _ = self.histogram.add(&other.histogram);
    }

    /// Number of samples recorded.
    pub fn len(&self) -> u64 {
        self.histogram.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }

    /// Value at quantile `q` (0.0 to 1.0).
    pub fn quantile(&self, q: f64) -> Duration {
        Duration::from_nanos(self.histogram.value_at_quantile(q))
    }

    /// Points of the cumulative distribution: (latency in ms, fraction of samples at or below),
    /// one per distinct bucket, for plotting.
    pub fn cdf_points(&self) -> Vec<(f64, f64)> {
        let total = self.histogram.len();
        if total == 0 {
            return Vec::new();
        }
        let mut seen = 0u64;
        self.histogram
            .iter_recorded()
            .map(|v| {
                seen += v.count_since_last_iteration();
                (
                    v.value_iterated_to() as f64 / 1e6,
                    seen as f64 / total as f64,
                )
            })
            .collect()
    }

    /// Mean, percentiles and maximum in milliseconds.
    pub fn summary(&self) -> LatencySummary {
        let ms = |nanos: u64| nanos as f64 / 1e6;
        LatencySummary {
            count: self.histogram.len(),
            mean_ms: self.histogram.mean() / 1e6,
            p50_ms: ms(self.histogram.value_at_quantile(0.50)),
            p95_ms: ms(self.histogram.value_at_quantile(0.95)),
            p99_ms: ms(self.histogram.value_at_quantile(0.99)),
            max_ms: ms(self.histogram.max()),
        }
    }
}

/// Summary of a latency histogram, in milliseconds (the unit of bac-py's published reports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Arithmetic mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest sample.
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_uniform_spread() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 0.5).abs() < 0.001, "{s:?}");
        assert!((s.p99_ms - 0.99).abs() < 0.002, "{s:?}");
        assert!((s.max_ms - 1.0).abs() < 0.002, "{s:?}");
        assert!((s.mean_ms - 0.5005).abs() < 0.001, "{s:?}");
    }

    #[test]
    fn merge_adds_counts_and_keeps_extremes() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        a.record(Duration::from_millis(1));
        b.record(Duration::from_millis(9));
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 2);
        assert!((s.max_ms - 9.0).abs() < 0.01);
    }

    #[test]
    fn huge_samples_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record(Duration::from_secs(3600));
        assert_eq!(h.len(), 1);
        assert!(h.summary().max_ms >= 119_000.0);
    }

    #[test]
    fn cdf_ends_at_one() {
        let mut h = LatencyHistogram::new();
        for us in [10u64, 20, 20, 40] {
            h.record(Duration::from_micros(us));
        }
        let points = h.cdf_points();
        assert_eq!(points.last().map(|p| p.1), Some(1.0));
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
    }
}
