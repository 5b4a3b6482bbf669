//! The run of every BACnet scenario: workers that each do one operation after the other,
//! a warm-up that is not counted, a measured phase with a throughput sample every 250 ms,
//! and the tallies per operation when they stop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::workload::WireSize;
use super::{BacnetProgress, OpTally};

/// Why one operation of a worker did not count.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The request failed: timeout, reject, abort, an error answer or the socket.
    #[error("{0}")]
    Client(#[from] buildwire_bacnet::app::ClientError),
    /// The answer was not what the stress objects (or the echo) hold.
    #[error("{0}")]
    Wrong(String),
    /// Sending or a BVLL exchange failed (`what` says which).
    #[error("{what}: {source}")]
    Io {
        /// The operation.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The worker has nothing to talk to (no BBMD, no router).
    #[error("{0}")]
    NoPeer(&'static str),
    /// The router health check failed.
    #[error(transparent)]
    RouteCheck(#[from] super::route_check::RouteCheckError),
}

/// A worker of a scenario: one operation, done again and again.
pub(crate) trait StepWorker: Send + 'static {
    /// What it does, the key of its line in the report.
    type Kind: Copy + Ord + Send + 'static;

    /// Its operation.
    fn kind(&self) -> Self::Kind;

    /// One operation, checked; its wire size when it was right, what was wrong otherwise.
    fn step(&mut self) -> impl Future<Output = Result<WireSize, StepError>> + Send;

    /// A pause after each operation (periodic workers), during which a stop is noticed.
    fn pause_after(&self) -> Option<Duration> {
        None
    }
}

/// Tallies of one worker: its kind, the warm-up's and the measured phase's.
type Tallies<K> = (K, OpTally, OpTally);

/// Workers running on the runtime, counted in the warm-up until [`Self::sustain`].
pub(crate) struct RunningWorkers<K> {
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    answered_now: Arc<AtomicU64>,
    tasks: Vec<JoinHandle<Tallies<K>>>,
}

const TICK: Duration = Duration::from_millis(250);

impl<K: Copy + Ord + Send + 'static> RunningWorkers<K> {
    /// Starts every worker; one pauses for `backoff` after each error.
    pub(crate) fn spawn<W: StepWorker<Kind = K>>(workers: Vec<W>, backoff: Duration) -> Self {
        let measuring = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let answered_now = Arc::new(AtomicU64::new(0));
        let tasks = workers
            .into_iter()
            .map(|worker| {
                tokio::spawn(run_worker(
                    worker,
                    backoff,
                    Arc::clone(&measuring),
                    Arc::clone(&stop),
                    Arc::clone(&answered_now),
                ))
            })
            .collect();
        Self {
            measuring,
            stop,
            answered_now,
            tasks,
        }
    }

    /// Lets the workers run for `warmup`; returns the seconds it took.
    pub(crate) async fn warm_up(&self, warmup: Duration, progress: BacnetProgress<'_>) -> f64 {
        let start = Instant::now();
        while start.elapsed() < warmup {
            tokio::time::sleep(TICK.min(warmup.saturating_sub(start.elapsed()))).await;
            progress(
                "warmup",
                start.elapsed().as_secs_f64(),
                self.answered_now.load(Ordering::Relaxed),
            );
        }
        start.elapsed().as_secs_f64()
    }

    /// Counts from now for `sustain`; returns the seconds measured and answered per second
    /// every 250 ms.
    pub(crate) async fn sustain(
        &self,
        sustain: Duration,
        progress: BacnetProgress<'_>,
    ) -> (f64, Vec<(f64, f64)>) {
        self.answered_now.store(0, Ordering::Relaxed);
        self.measuring.store(true, Ordering::Relaxed);
        let start = Instant::now();
        let mut timeline = Vec::new();
        let mut last = (0.0f64, 0u64);
        while start.elapsed() < sustain {
            tokio::time::sleep(TICK.min(sustain.saturating_sub(start.elapsed()))).await;
            let at = start.elapsed().as_secs_f64();
            let answered = self.answered_now.load(Ordering::Relaxed);
            if at > last.0 {
                timeline.push((at, (answered - last.1) as f64 / (at - last.0)));
            }
            last = (at, answered);
            progress("sustain", at, answered);
        }
        (start.elapsed().as_secs_f64(), timeline)
    }

    /// Stops the workers and merges their tallies per kind: warm-up and measured.
    pub(crate) async fn stop(self) -> (BTreeMap<K, OpTally>, BTreeMap<K, OpTally>) {
        self.stop.store(true, Ordering::Relaxed);
        let mut warm_ops: BTreeMap<K, OpTally> = BTreeMap::new();
        let mut hot_ops: BTreeMap<K, OpTally> = BTreeMap::new();
        for task in self.tasks {
            // A worker stuck on a request past the end is cut off (its request is not counted).
            let joined = tokio::time::timeout(Duration::from_secs(10), task).await;
            if let Ok(Ok((kind, warm, hot))) = joined {
                warm_ops.entry(kind).or_default().merge(&warm);
                hot_ops.entry(kind).or_default().merge(&hot);
            }
        }
        (warm_ops, hot_ops)
    }
}

async fn run_worker<W: StepWorker>(
    mut worker: W,
    backoff: Duration,
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    answered_now: Arc<AtomicU64>,
) -> Tallies<W::Kind> {
    let mut warm = OpTally::default();
    let mut hot = OpTally::default();
    let pause = worker.pause_after();
    while !stop.load(Ordering::Relaxed) {
        let counted = measuring.load(Ordering::Relaxed);
        let started = Instant::now();
        let result = worker.step().await;
        if stop.load(Ordering::Relaxed) && !counted {
            break;
        }
        let tally = if counted { &mut hot } else { &mut warm };
        tally.sent += 1;
        match result {
            Ok(size) => {
                tally.answered += 1;
                tally.histogram.record(started.elapsed());
                tally.request_bytes += size.request as u64;
                tally.response_bytes += size.response as u64;
                answered_now.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                tally.errors += 1;
                if tally.first_error.is_none() {
                    tally.first_error = Some(error.to_string());
                }
                tokio::time::sleep(backoff).await;
            }
        }
        if let Some(pause) = pause {
            let until = tokio::time::Instant::now() + pause;
            while tokio::time::Instant::now() < until && !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50).min(pause)).await;
            }
        }
    }
    (worker.kind(), warm, hot)
}
