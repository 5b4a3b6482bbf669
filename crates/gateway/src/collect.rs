//! Collection: COV subscriptions where the device accepts them (the client renews them
//! before their lifetime ends and subscribes again after a device restart), batched
//! ReadPropertyMultiple polling where it refuses, and a health check per device whose
//! timeouts mark its points `down`. Every change goes to one writer task that commits
//! `curVal`/`curStatus` in batches and appends history samples to the backend, so the
//! Haystack server's watches are pushed from the backend's change events (no BACnet
//! traffic per watch).
//!
//! History gets a sample when a point's value changes (a COV notification, or a polled
//! value that differs from the last), so a restart, which starts from the stored
//! `curVal`, writes no duplicate sample. Samples are written before the `curVal` commit,
//! so a `curVal` anyone has seen always has its sample; a crash between the two writes
//! the same value again as a sample of its own time at the restart.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use buildwire_bacnet::app::{ClientError, CovOptions};
use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::encoding::{Element, ObjectIdentifier, ObjectPropertyReference};
use buildwire_bacnet::enums::{ObjectType, PropertyIdentifier as P};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_haystack::backends::Backend;
use buildwire_haystack::ops::datetime_at;
use buildwire_haystack::store::{CommitOp, EntityUpdate, HisSample};
use buildwire_haystack::value::{Dict, Ref, Value};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::config::{CollectConfig, seconds};
use crate::discover::{number, status_flags};
use crate::model::{PointValue, cur_status};

/// A device and its points, as the collector needs them.
#[derive(Debug, Clone)]
pub struct DevicePoints {
    /// The device instance.
    pub instance: u32,
    /// Where it answers.
    pub address: DeviceAddress<SocketAddrV4>,
    /// Its points.
    pub points: Vec<PointValue>,
}

/// A new reading of one point.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    id: String,
    /// The new value; `None` keeps `curVal` as it is (a device that stopped answering).
    value: Option<Value>,
    status: &'static str,
    /// When it arrived (UTC milliseconds), the time of its history sample.
    at_ms: i64,
}

/// Counters of the collector.
#[derive(Debug, Default)]
pub struct CollectStats {
    /// Points with an accepted COV subscription.
    pub cov_points: AtomicUsize,
    /// Points polled.
    pub polled_points: AtomicUsize,
    /// Readings that changed a point (committed).
    pub changes: AtomicU64,
    /// History samples written.
    pub samples: AtomicU64,
    /// Backend writes that failed (retried with the next change).
    pub store_errors: AtomicU64,
}

/// The running collector; dropping it (or [`Collector::stop`]) ends every task and cancels
/// the subscriptions.
#[derive(Debug)]
pub struct Collector {
    tasks: JoinSet<()>,
    stats: Arc<CollectStats>,
}

impl Collector {
    /// Starts collecting `devices` into `backend`; `stored` are the points' current records
    /// (their `curVal`/`curStatus` are the starting point of change detection).
    pub fn start(
        client: Arc<BacnetClient>,
        backend: Arc<dyn Backend>,
        devices: Vec<DevicePoints>,
        stored: &[Dict],
        config: CollectConfig,
        tz: String,
    ) -> Self {
        let stats = Arc::new(CollectStats::default());
        let (tx, rx) = mpsc::channel::<Reading>(4096);
        let mut last = HashMap::new();
        for record in stored {
            if let Some(Value::Ref(id)) = record.get("id") {
                let value = record.get("curVal").cloned();
                let status = match record.get("curStatus") {
                    Some(Value::Str(s)) => s.clone(),
                    _ => String::new(),
                };
                last.insert(id.id.clone(), (value, status));
            }
        }
        let mut tasks = JoinSet::new();
        tasks.spawn(writer(backend, rx, last, tz, Arc::clone(&stats)));
        for device in devices {
            tasks.spawn(run_device(
                Arc::clone(&client),
                device,
                config.clone(),
                tx.clone(),
                Arc::clone(&stats),
            ));
        }
        Self { tasks, stats }
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<CollectStats> {
        &self.stats
    }

    /// Stops every task (subscriptions are cancelled as their streams drop).
    pub async fn stop(mut self) {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// One device: subscribe what accepts COV, poll the rest, check health.
async fn run_device(
    client: Arc<BacnetClient>,
    device: DevicePoints,
    config: CollectConfig,
    tx: mpsc::Sender<Reading>,
    stats: Arc<CollectStats>,
) {
    // A device that is down at start is marked so, and subscribed to once it answers
    // (subscribing would otherwise time out point after point).
    let health_every = seconds(config.health_interval_seconds);
    let mut marked_down = false;
    while !is_alive(&client, &device).await {
        if !marked_down {
            marked_down = true;
            log::warn!(
                "device {} does not answer: its points are down",
                device.instance
            );
            if mark_down(&device, &tx).await.is_err() {
                return;
            }
        }
        tokio::time::sleep(health_every).await;
    }
    let (mut subscriptions, mut subscribed, mut polled) =
        subscribe_all(&client, &device, &config, &tx, &stats).await;
    let poll_every = seconds(config.poll_interval_seconds);
    let mut poll_timer = tokio::time::interval(poll_every);
    let mut health_timer = tokio::time::interval(health_every);
    poll_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    health_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // COV points are read now and then too: an unconfirmed notification lost on the way
    // (a burst that overflows a socket buffer) is otherwise not seen until the next change.
    let refresh_every = seconds(config.cov_refresh_seconds);
    let mut refresh_timer =
        tokio::time::interval_at(tokio::time::Instant::now() + refresh_every, refresh_every);
    refresh_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut down = false;
    loop {
        tokio::select! {
            _ = poll_timer.tick(), if !polled.is_empty() && !down => {
                // Nothing answered: every point down, subscribed again once it is back.
                if poll_or_mark_down(&client, &device, &polled, &tx, &mut down).await.is_err() {
                    return;
                }
            }
            _ = refresh_timer.tick(), if !subscribed.is_empty() && !down => {
                // Nothing answered: every point down, subscribed again once it is back.
                if poll_or_mark_down(&client, &device, &subscribed, &tx, &mut down).await.is_err() {
                    return;
                }
            }
            _ = health_timer.tick() => {
                let alive = is_alive(&client, &device).await;
                if !alive && !down {
                    down = true;
                    log::warn!("device {} stopped answering: its points are down", device.instance);
                    if mark_down(&device, &tx).await.is_err() {
                        return;
                    }
                } else if alive && down {
                    down = false;
                    log::info!("device {} answers again", device.instance);
                    // It may have restarted and forgotten the subscriptions: subscribe
                    // again (the old ones are cancelled as their streams drop).
                    subscriptions.abort_all();
                    stats.cov_points.fetch_sub(subscribed.len(), Ordering::Relaxed);
                    stats.polled_points.fetch_sub(polled.len(), Ordering::Relaxed);
                    (subscriptions, subscribed, polled) =
                        subscribe_all(&client, &device, &config, &tx, &stats).await;
                    // Every point, COV ones too: their values may have changed meanwhile.
                    // Nothing answered: every point down, subscribed again once it is back.
                    if poll_or_mark_down(&client, &device, &device.points, &tx, &mut down).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// Subscribes to COV for every point that accepts it (`subscribed`); the others are
/// `polled`. The counters count both.
async fn subscribe_all(
    client: &BacnetClient,
    device: &DevicePoints,
    config: &CollectConfig,
    tx: &mpsc::Sender<Reading>,
    stats: &CollectStats,
) -> (JoinSet<()>, Vec<PointValue>, Vec<PointValue>) {
    let mut subscriptions = JoinSet::new();
    let mut polled: Vec<PointValue> = Vec::new();
    let mut subscribed: Vec<PointValue> = Vec::new();
    let mut silent = false;
    for point in &device.points {
        // Without COV, or once the device stopped answering (each subscription would time
        // out in turn): polled, which marks them down until the device is back, and then
        // everything is subscribed again.
        if !config.cov || silent {
            polled.push(point.clone());
            continue;
        }
        let options = CovOptions {
            object: point.object,
            property: None,
            cov_increment: None,
            confirmed: config.cov_confirmed,
            lifetime: config.cov_lifetime_seconds,
        };
        match client.subscribe_cov(device.address, options).await {
            Ok(mut subscription) => {
                stats.cov_points.fetch_add(1, Ordering::Relaxed);
                subscribed.push(point.clone());
                let point = point.clone();
                let tx = tx.clone();
                subscriptions.spawn(async move {
                    while let Some(notification) = subscription.next().await {
                        let mut value = None;
                        let mut flags = None;
                        for v in &notification.request.values {
                            if v.property == P::PresentValue {
                                value = point.haystack(&v.value);
                            } else if v.property == P::StatusFlags {
                                flags = status_flags(&v.value);
                            }
                        }
                        let reading = Reading {
                            id: point.id.clone(),
                            value,
                            status: cur_status(flags, None, false),
                            at_ms: now_ms(),
                        };
                        if tx.send(reading).await.is_err() {
                            break;
                        }
                    }
                    subscription.cancel().await;
                });
            }
            Err(ClientError::Timeout) => {
                silent = true;
                polled.push(point.clone());
            }
            Err(error) => {
                log::info!(
                    "device {}: {} has no COV ({error}); polling it",
                    device.instance,
                    point.object
                );
                polled.push(point.clone());
            }
        }
    }
    stats
        .polled_points
        .fetch_add(polled.len(), Ordering::Relaxed);
    (subscriptions, subscribed, polled)
}

/// [`poll`]s `points`; when nothing answered, marks every point of the device down and
/// sets `down` (the device is subscribed to again once it is back).
async fn poll_or_mark_down(
    client: &BacnetClient,
    device: &DevicePoints,
    points: &[PointValue],
    tx: &mpsc::Sender<Reading>,
    down: &mut bool,
) -> Result<(), ()> {
    if poll(client, device, points, tx).await? {
        *down = true;
        mark_down(device, tx).await?;
    }
    Ok(())
}

/// Marks every point of the device `down` (keeping its `curVal`).
async fn mark_down(device: &DevicePoints, tx: &mpsc::Sender<Reading>) -> Result<(), ()> {
    for point in &device.points {
        let reading = Reading {
            id: point.id.clone(),
            value: None,
            status: "down",
            at_ms: now_ms(),
        };
        tx.send(reading).await.map_err(|_| ())?;
    }
    Ok(())
}

/// Whether the device answers a read of its own object.
async fn is_alive(client: &BacnetClient, device: &DevicePoints) -> bool {
    let object = ObjectIdentifier::new(ObjectType::Device, device.instance);
    // Any answer of the device (a value, an error, a reject, its abort) says it is there;
    // silence, an unreachable port or no route says it is not.
    match client
        .read(device.address, object, P::SystemStatus, None)
        .await
    {
        Ok(_)
        | Err(
            ClientError::Error { .. }
            | ClientError::Reject(_)
            | ClientError::Abort {
                by_server: true, ..
            }
            | ClientError::BadReply(_),
        ) => true,
        Err(_) => false,
    }
}

/// Reads present-value, status-flags and reliability of `points` in batches; true when
/// every read timed out (the device is silent).
async fn poll(
    client: &BacnetClient,
    device: &DevicePoints,
    points: &[PointValue],
    tx: &mpsc::Sender<Reading>,
) -> Result<bool, ()> {
    let properties = [P::PresentValue, P::StatusFlags, P::Reliability];
    let references: Vec<ObjectPropertyReference> = points
        .iter()
        .flat_map(|p| {
            properties.map(|property| ObjectPropertyReference {
                object: p.object,
                property,
                array_index: None,
            })
        })
        .collect();
    let answers = client.read_many(device.address, &references).await;
    let mut timeouts = 0usize;
    for (point, answers) in points.iter().zip(answers.chunks(properties.len())) {
        let reading = match answers {
            [Ok(value), flags, reliability] => Reading {
                id: point.id.clone(),
                value: point.haystack(value),
                status: cur_status(
                    flags.as_ref().ok().and_then(|f| status_flags(f)),
                    reliability.as_ref().ok().and_then(|r| enumerated(r)),
                    false,
                ),
                at_ms: now_ms(),
            },
            [Err(ClientError::Timeout), ..] => {
                timeouts += 1;
                Reading {
                    id: point.id.clone(),
                    value: None,
                    status: "down",
                    at_ms: now_ms(),
                }
            }
            _ => Reading {
                id: point.id.clone(),
                value: None,
                status: "fault",
                at_ms: now_ms(),
            },
        };
        tx.send(reading).await.map_err(|_| ())?;
    }
    Ok(!points.is_empty() && timeouts == points.len())
}

fn enumerated(elements: &[Element]) -> Option<u32> {
    match elements.first()? {
        Element::Application(buildwire_bacnet::encoding::ApplicationValue::Enumerated(v)) => {
            Some(*v)
        }
        _ => number(elements).map(|n| n as u32),
    }
}

/// Most readings committed in one batch.
const BATCH: usize = 1024;

/// History writes in flight at once.
const HISTORY_WRITES: usize = 16;

/// Commits readings that change a point: `curVal`/`curStatus` in one commit per batch,
/// and a history sample per changed value (stamped when the reading arrived).
async fn writer(
    backend: Arc<dyn Backend>,
    mut rx: mpsc::Receiver<Reading>,
    mut last: HashMap<String, (Option<Value>, String)>,
    tz: String,
    stats: Arc<CollectStats>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        let mut diffs: Vec<Dict> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut samples: Vec<(String, HisSample)> = Vec::new();
        for reading in batch.drain(..) {
            let entry = last
                .entry(reading.id.clone())
                .or_insert((None, String::new()));
            let value_changed = reading.value.is_some() && reading.value != entry.0;
            let status_changed = entry.1 != reading.status;
            if !value_changed && !status_changed {
                continue;
            }
            let slot = *index.entry(reading.id.clone()).or_insert_with(|| {
                let mut diff = Dict::new();
                let _ = diff.insert("id", Value::Ref(Ref::new(reading.id.clone())));
                diffs.push(diff);
                diffs.len() - 1
            });
            let Some(diff) = diffs.get_mut(slot) else {
                continue;
            };
            if value_changed && let Some(value) = &reading.value {
                let _ = diff.insert("curVal", value.clone());
                if let Some(ts) = datetime_at(reading.at_ms, &tz) {
                    samples.push((
                        reading.id.clone(),
                        HisSample {
                            ts,
                            value: value.clone(),
                        },
                    ));
                }
                entry.0 = reading.value.clone();
            }
            if status_changed {
                let _ = diff.insert("curStatus", Value::Str(reading.status.to_owned()));
                entry.1 = reading.status.to_owned();
            }
        }
        if diffs.is_empty() {
            continue;
        }
        // History first: a curVal anyone can see has its sample stored.
        let mut by_point: Vec<(String, Vec<HisSample>)> = Vec::new();
        for (id, sample) in samples {
            match by_point.iter_mut().find(|(p, _)| *p == id) {
                Some((_, list)) => list.push(sample),
                None => by_point.push((id, vec![sample])),
            }
        }
        // The points' histories are independent: written concurrently (a remote store
        // serves them on several connections), at most HISTORY_WRITES at a time.
        for chunk in by_point.chunks(HISTORY_WRITES) {
            let writes = chunk.iter().map(|(id, list)| {
                let backend = &backend;
                async move {
                    let count = list.len() as u64;
                    (
                        id,
                        count,
                        backend.his_write(&Ref::new(id.clone()), list.clone()).await,
                    )
                }
            });
            for (id, count, result) in futures_util::future::join_all(writes).await {
                match result {
                    Ok(_) => {
                        stats.samples.fetch_add(count, Ordering::Relaxed);
                    }
                    Err(error) => {
                        stats.store_errors.fetch_add(1, Ordering::Relaxed);
                        log::error!("history of @{id}: {error}");
                    }
                }
            }
        }
        let count = diffs.len() as u64;
        let updates = diffs
            .into_iter()
            .map(|diff| EntityUpdate {
                diff,
                expected_version: None,
            })
            .collect();
        match backend.commit(CommitOp::Update(updates)).await {
            Ok(_) => {
                stats.changes.fetch_add(count, Ordering::Relaxed);
            }
            Err(error) => {
                stats.store_errors.fetch_add(1, Ordering::Relaxed);
                log::error!("curVal commit failed: {error}");
                // Forget what was not stored so the next reading writes it again.
                last.clear();
            }
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
