//! The monitored-items soak: one client session with `items` monitored items sampled every
//! `sampling_ms` on points that all change at that rate (`buildwire opcua serve --simulate`),
//! run for a while, counting the data changes and checking each one (point i carries i + the
//! server's change count, so a value is right when it is above the last one seen for that
//! item and has i's fraction), and sampling the resident memory of the client and the
//! server. It reports the curve and asserts nothing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use buildwire_opcua::NodeId;
use buildwire_opcua::client::ClientConfig;
use buildwire_opcua::client::subscriptions::{
    MonitoredItemSpec, SubscriptionEvent, SubscriptionSettings,
};
use buildwire_opcua::driver::{ClientError, OpcuaClient};
use buildwire_opcua::encoding::Variant;
use serde::Serialize;

use super::soak::rss_kib;

/// Monitored items created per CreateMonitoredItems call.
const ITEMS_PER_CALL: usize = 1_000;

/// What to run.
#[derive(Clone, Debug)]
pub struct ItemSoakConfig {
    /// The server (`opc.tcp://HOST:PORT`).
    pub endpoint: String,
    /// The points to monitor, in order: point i must carry i + a change counter.
    pub nodes: Vec<NodeId>,
    /// Sampling and publishing interval, ms.
    pub sampling_ms: f64,
    /// How long to receive after the items exist.
    pub duration: Duration,
    /// Time between two memory samples.
    pub sample_every: Duration,
    /// The server's process id on this machine, to sample its RSS.
    pub server_pid: Option<u32>,
}

/// One point of the memory curve.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ItemSoakSample {
    /// Seconds since the items were created.
    pub elapsed_s: f64,
    /// Data changes received so far.
    pub changes: u64,
    /// VmRSS of this (client) process, KiB.
    pub client_rss_kib: Option<u64>,
    /// VmRSS of the server process, KiB.
    pub server_rss_kib: Option<u64>,
}

/// The result.
#[derive(Clone, Debug, Serialize)]
pub struct ItemSoakReport {
    /// The server.
    pub endpoint: String,
    /// Monitored items created (all Good).
    pub items: usize,
    /// Sampling and publishing interval, ms.
    pub sampling_ms: f64,
    /// Seconds to create the subscription and the items.
    pub setup_s: f64,
    /// Seconds of receiving.
    pub seconds: f64,
    /// Data changes received and checked.
    pub changes: u64,
    /// Per second.
    pub changes_per_second: f64,
    /// What the server should send if every change of every point reached the client.
    pub expected_per_second: f64,
    /// Changes whose value was wrong (not the item's point, or not newer than the last).
    pub wrong_values: u64,
    /// Publish messages lost for good (Republish could not recover them).
    pub lost_messages: u64,
    /// Items that never reported a change.
    pub silent_items: usize,
    /// The memory curve.
    pub samples: Vec<ItemSoakSample>,
}

impl ItemSoakReport {
    /// Client RSS at the end minus at the first sample, KiB.
    pub fn client_growth_kib(&self) -> Option<i64> {
        growth(&self.samples, |s| s.client_rss_kib)
    }

    /// The same for the server.
    pub fn server_growth_kib(&self) -> Option<i64> {
        growth(&self.samples, |s| s.server_rss_kib)
    }
}

fn growth(samples: &[ItemSoakSample], rss: impl Fn(&ItemSoakSample) -> Option<u64>) -> Option<i64> {
    let first = rss(samples.first()?)?;
    let last = rss(samples.last()?)?;
    Some(i64::try_from(last).ok()? - i64::try_from(first).ok()?)
}

/// Why the subscriptions soak stopped.
#[derive(Debug, thiserror::Error)]
pub enum ItemSoakError {
    /// The client could not connect.
    #[error("connecting to {endpoint}: {source}")]
    Connect {
        /// The server.
        endpoint: String,
        /// Why not.
        source: ClientError,
    },
    /// A service call failed.
    #[error("{service}: {source}")]
    Service {
        /// The service.
        service: &'static str,
        /// Why it failed.
        source: ClientError,
    },
    /// The server refused a monitored item.
    #[error("monitored item {index} refused: {status}")]
    Refused {
        /// The item's index among the points.
        index: usize,
        /// The server's status code.
        status: buildwire_opcua::StatusCode,
    },
    /// The server ended the subscription.
    #[error("the server ended the subscription: {0}")]
    Ended(buildwire_opcua::StatusCode),
}

/// Runs the soak; `progress` sees each memory sample as it is taken.
pub async fn run_item_soak(
    config: &ItemSoakConfig,
    mut progress: impl FnMut(&ItemSoakSample),
) -> Result<ItemSoakReport, ItemSoakError> {
    let setup = Instant::now();
    let mut client = OpcuaClient::connect_with(ClientConfig::new(&config.endpoint))
        .await
        .map_err(|source| ItemSoakError::Connect {
            endpoint: config.endpoint.clone(),
            source,
        })?;
    let settings = SubscriptionSettings {
        publishing_interval_ms: config.sampling_ms,
        max_keep_alive_count: 10,
        lifetime_count: 300,
        ..SubscriptionSettings::default()
    };
    let subscription = client
        .create_subscription(settings)
        .await
        .map_err(|source| ItemSoakError::Service {
            service: "CreateSubscription",
            source,
        })?;
    // Client handle -> index of the point (its integer part offset).
    let mut point_of: HashMap<u32, usize> = HashMap::with_capacity(config.nodes.len());
    for (chunk_index, chunk) in config.nodes.chunks(ITEMS_PER_CALL).enumerate() {
        let specs: Vec<MonitoredItemSpec> = chunk
            .iter()
            .map(|node| MonitoredItemSpec {
                sampling_interval_ms: config.sampling_ms,
                ..MonitoredItemSpec::value(node.clone())
            })
            .collect();
        let created = client
            .create_monitored_items(subscription, &specs)
            .await
            .map_err(|source| ItemSoakError::Service {
                service: "CreateMonitoredItems",
                source,
            })?;
        for (offset, (handle, result)) in created.iter().enumerate() {
            if !result.status_code.is_good() {
                return Err(ItemSoakError::Refused {
                    index: chunk_index * ITEMS_PER_CALL + offset,
                    status: result.status_code,
                });
            }
            point_of.insert(*handle, chunk_index * ITEMS_PER_CALL + offset);
        }
    }
    let setup_s = setup.elapsed().as_secs_f64();

    let start = Instant::now();
    let sample = |changes: u64| ItemSoakSample {
        elapsed_s: start.elapsed().as_secs_f64(),
        changes,
        client_rss_kib: rss_kib(None),
        server_rss_kib: config.server_pid.and_then(|pid| rss_kib(Some(pid))),
    };
    let mut samples = vec![sample(0)];
    progress(&samples[0]);
    let mut next_sample = start + config.sample_every;
    let end = start + config.duration;
    let mut last: HashMap<u32, f64> = HashMap::with_capacity(point_of.len());
    let (mut changes, mut wrong_values, mut lost_messages) = (0u64, 0u64, 0u64);
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let wait = end.min(next_sample).saturating_duration_since(now);
        match tokio::time::timeout(wait, client.next_notification()).await {
            Ok(Ok(SubscriptionEvent::DataChange {
                client_handle,
                value,
                ..
            })) => {
                changes += 1;
                let right = match (point_of.get(&client_handle), &value.value) {
                    (Some(&point), Some(Variant::Double(v))) => {
                        let newer = last.get(&client_handle).is_none_or(|prev| v > prev);
                        last.insert(client_handle, *v);
                        // i + a whole number of changes, at or above i.
                        newer && *v >= point as f64 && (v - point as f64).fract() == 0.0
                    }
                    _ => false,
                };
                if !right {
                    wrong_values += 1;
                }
            }
            Ok(Ok(SubscriptionEvent::Lost { .. })) => lost_messages += 1,
            Ok(Ok(SubscriptionEvent::StatusChange { status, .. })) if status.is_bad() => {
                return Err(ItemSoakError::Ended(status));
            }
            Ok(Ok(_)) => {}
            Ok(Err(source)) => {
                return Err(ItemSoakError::Service {
                    service: "Publish",
                    source,
                });
            }
            Err(_) => {}
        }
        if Instant::now() >= next_sample {
            let point = sample(changes);
            progress(&point);
            samples.push(point);
            next_sample += config.sample_every;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    samples.push(sample(changes));
    let _ = client.delete_subscriptions(&[subscription]).await;
    let _ = client.close().await;
    Ok(ItemSoakReport {
        endpoint: config.endpoint.clone(),
        items: point_of.len(),
        sampling_ms: config.sampling_ms,
        setup_s,
        seconds,
        changes,
        changes_per_second: changes as f64 / seconds.max(f64::EPSILON),
        expected_per_second: point_of.len() as f64 * 1000.0 / config.sampling_ms,
        wrong_values,
        lost_messages,
        silent_items: point_of.len().saturating_sub(last.len()),
        samples,
    })
}
