//! `buildwire bench gateway`: the gateway over a simulated site in this process: N devices
//! of M analog values (the `large` profile, device instances 500, 501, ...), each on its
//! own UDP port on 127.0.0.1. Measured: discovery time (and per 1,000 points), the time
//! until every point is subscribed, the end-to-end latency from a value set on a device to
//! the store's change event (what Haystack watches are pushed from), the sustained rate of
//! changes into the store, and the gateway's resident memory per point.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use buildwire_bacnet::PropertyIdentifier as P;
use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig};
use buildwire_bacnet::encoding::{ApplicationValue, ObjectIdentifier};
use buildwire_bacnet::enums::ObjectType;
use buildwire_bacnet::objects::PropertyData;
use buildwire_bench::bacnet::profiles::large_profile;
use buildwire_bench::bacnet::resident_mib;
use buildwire_gateway::rules::Rules;
use buildwire_gateway::{Config, Gateway};
use buildwire_haystack::backends::Backend;
use buildwire_haystack::server::HaystackServerConfig;
use buildwire_haystack::value::{Ref, Value};
use clap::Args;
use serde_json::json;

use crate::commands::common::result::CommandResult;

pub const AFTER_HELP: &str = "The devices run in this process beside the gateway, so the \
    machine's cores are shared by both sides. Latency is from the set on the device to the \
    store's change event; nothing here is a test.\n\n\
    Examples:\n  \
    buildwire bench gateway --devices 4 --points 500\n  \
    buildwire bench gateway --devices 10 --points 5000 --changes 5000 --json\n  \
    buildwire bench gateway --devices 8 --points 1250 --changes 2000 --confirmed\n  \
    buildwire bench gateway --devices 2 --points 1000 \\\n      \
    --store postgres://postgres@127.0.0.1:5432/bench";

#[derive(Debug, Args)]
pub struct GatewayBenchArgs {
    /// Simulated devices.
    #[arg(long, default_value_t = 4)]
    devices: u32,
    /// Analog values per device.
    #[arg(long, default_value_t = 500)]
    points: u32,
    /// Value changes for the latency and throughput phases (each).
    #[arg(long, default_value_t = 1000)]
    changes: u32,
    /// The store: memory, redis://HOST:PORT or postgres://USER@HOST:PORT/DB.
    #[arg(long, default_value = "memory", value_name = "URL")]
    store: String,
    /// Ask for confirmed COV notifications (the device repeats one that is not
    /// acknowledged; unconfirmed ones lost in a burst stay lost).
    #[arg(long)]
    confirmed: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

struct Site {
    devices: Vec<BacnetServer>,
}

impl Site {
    async fn start(devices: u32, points: u32) -> Result<Self, Box<dyn std::error::Error>> {
        let mut started = Vec::new();
        for i in 0..devices {
            let mut profile = large_profile(points);
            profile.device.instance = 500 + i;
            profile.device.name = format!("bench-{}", 500 + i);
            let database = profile.build()?;
            let mut config =
                BacnetServerConfig::new(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), database);
            config.announce = false;
            started.push(BacnetServer::start(config).await?);
        }
        Ok(Self { devices: started })
    }

    /// Sets AV `point` of device `device` to `value`; the point's gateway id.
    fn set(&self, device: usize, point: u32, value: f32) -> Option<String> {
        let server = self.devices.get(device)?;
        let object = ObjectIdentifier::new(ObjectType::AnalogValue, point);
        server
            .with_database(|db| {
                db.set_local(
                    object,
                    P::PresentValue,
                    PropertyData::Single(ApplicationValue::Real(value)),
                )
            })
            .ok()?;
        Some(format!("bacnet.dev{}.av{point}", 500 + device))
    }
}

/// Waits until the store reports a change of every id in `wanted` (id and the value set);
/// false on timeout. When the listener lags behind the store's change events, the store
/// is read to see which of the remaining values are there.
async fn wait_for(
    store: &dyn Backend,
    events: &mut tokio::sync::broadcast::Receiver<Arc<buildwire_haystack::backends::ChangeEvent>>,
    wanted: &mut HashMap<String, f32>,
    timeout: Duration,
) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while !wanted.is_empty() {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) => {
                for id in &event.ids {
                    wanted.remove(id);
                }
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                let ids: Vec<Ref> = wanted.keys().map(|id| Ref::new(id.clone())).collect();
                if let Ok(records) = store.read_by_ids(&ids).await {
                    for record in records.into_iter().flatten() {
                        if let (Some(Value::Ref(id)), Some(Value::Number(n))) =
                            (record.get("id"), record.get("curVal"))
                            && wanted.get(&id.id).is_some_and(|v| f64::from(*v) == n.value)
                        {
                            wanted.remove(&id.id);
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

pub fn run(args: GatewayBenchArgs) -> CommandResult {
    if args.devices == 0 || args.points == 0 {
        return Err("--devices and --points must be at least 1".into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let site = Site::start(args.devices, args.points).await?;
        let total = u64::from(args.devices) * u64::from(args.points);
        let mut config = Config::default();
        config.bacnet.bind = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0);
        config.bacnet.devices = site.devices.iter().map(BacnetServer::local_addr).collect();
        config.bacnet.who_is_wait_seconds = 0.5;
        config.haystack.bind = "127.0.0.1:0".parse()?;
        config.store.url = args.store.clone();
        config.collect.cov_confirmed = args.confirmed;
        let rss_before = resident_mib().unwrap_or(0.0);
        let started = Instant::now();
        let gateway =
            Gateway::start(config, Rules::default_set(), HaystackServerConfig::new()).await?;
        let discovery = started.elapsed();
        let stats = Arc::clone(gateway.stats());
        let collected = || {
            (stats.cov_points.load(Ordering::Relaxed) + stats.polled_points.load(Ordering::Relaxed))
                as u64
        };
        while collected() < total && started.elapsed() < Duration::from_secs(600) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let subscribed = started.elapsed();
        // Let the initial notifications settle before measuring.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss_after = resident_mib().unwrap_or(0.0);
        let store = Arc::clone(gateway.backend().inner());
        let mut events = store.subscribe();
        // Latency: one change at a time.
        let mut latencies = Vec::new();
        let mut lost = 0u32;
        for i in 0..args.changes {
            let device = (i % args.devices) as usize;
            let point = 1 + (i / args.devices) % args.points;
            let at = Instant::now();
            let Some(id) = site.set(device, point, 1000.0 + i as f32) else {
                continue;
            };
            let mut wanted = HashMap::from([(id, 1000.0 + i as f32)]);
            if wait_for(&*store, &mut events, &mut wanted, Duration::from_secs(2)).await {
                latencies.push(at.elapsed().as_secs_f64() * 1000.0);
            } else {
                lost += 1;
            }
        }
        latencies.sort_by(f64::total_cmp);
        let pick = |q: f64| {
            latencies
                .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        // Throughput: every change at once, until the store has reported them all.
        let mut wanted = HashMap::new();
        let burst = Instant::now();
        for i in 0..args.changes {
            let device = (i % args.devices) as usize;
            let point = 1 + (i / args.devices) % args.points;
            let value = 5000.0 + i as f32;
            if let Some(id) = site.set(device, point, value) {
                wanted.insert(id, value);
            }
        }
        let distinct = wanted.len();
        let complete = wait_for(&*store, &mut events, &mut wanted, Duration::from_secs(60)).await;
        let burst_seconds = burst.elapsed().as_secs_f64();
        let missing = wanted.len();
        let per_point_kib = (rss_after - rss_before) * 1024.0 / total as f64;
        let doc = json!({
            "devices": args.devices,
            "points": total,
            "store": args.store,
            "discovery_s": discovery.as_secs_f64(),
            "discovery_s_per_1000_points": discovery.as_secs_f64() * 1000.0 / total as f64,
            "all_subscribed_s": subscribed.as_secs_f64(),
            "cov_points": stats.cov_points.load(Ordering::Relaxed),
            "polled_points": stats.polled_points.load(Ordering::Relaxed),
            "latency_ms": {"p50": pick(0.5), "p99": pick(0.99), "max": pick(1.0),
                           "measured": latencies.len(), "lost": lost},
            "burst": {"changes": distinct, "seconds": burst_seconds,
                      "changes_per_s": distinct as f64 / burst_seconds, "complete": complete,
                      "missing": missing, "confirmed_cov": args.confirmed},
            "rss_mib": {"before_gateway": rss_before, "after_gateway": rss_after},
            "gateway_kib_per_point": per_point_kib,
        });
        if args.json {
            crate::say!("{doc}");
        } else {
            crate::say!(
                "{} devices x {} points = {total} points, store {}",
                args.devices,
                args.points,
                args.store
            );
            crate::say!(
                "discovery {:.2} s ({:.3} s per 1,000 points); all collected after {:.2} s \
                 ({} on COV, {} polled)",
                discovery.as_secs_f64(),
                discovery.as_secs_f64() * 1000.0 / total as f64,
                subscribed.as_secs_f64(),
                stats.cov_points.load(Ordering::Relaxed),
                stats.polled_points.load(Ordering::Relaxed)
            );
            crate::say!(
                "device set -> store change event: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms \
                 ({} measured, {lost} lost)",
                pick(0.5),
                pick(0.99),
                pick(1.0),
                latencies.len()
            );
            crate::say!(
                "burst of {distinct} changes: {:.0} changes/s into the store{}",
                distinct as f64 / burst_seconds,
                if complete {
                    String::new()
                } else {
                    format!(" ({missing} values missing after 60 s)")
                }
            );
            crate::say!(
                "gateway memory: {per_point_kib:.2} KiB per point (RSS {rss_before:.1} -> \
                 {rss_after:.1} MiB)"
            );
        }
        gateway.stop().await;
        for device in site.devices {
            device.shutdown().await;
        }
        Ok(())
    })
}
