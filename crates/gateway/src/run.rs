//! The driver: bind the BACnet client, discover, merge the model into the backend, start
//! the collector and the Haystack server.
//!
//! A restart resumes from the backend: the stored records keep their ids (they derive from
//! device instance and object identifier), hand edits are kept ([`crate::model::merge`]),
//! devices that do not answer this time are still collected from the address in their
//! connector record, and change detection starts from the stored `curVal`.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::Arc;

use buildwire_bacnet::driver::{BacnetClient, ClientConfig};
use buildwire_bacnet::link::{BipRole, ForeignConfig};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_haystack::backends::{self, Backend};
use buildwire_haystack::server::{HaystackServer, HaystackServerConfig};
use buildwire_haystack::store::{CommitOp, EntityUpdate};
use buildwire_haystack::value::{Dict, Value};

use crate::GatewayError;
use crate::collect::{CollectStats, Collector, DevicePoints};
use crate::config::{Config, seconds};
use crate::discover::{self, DiscoveredDevice};
use crate::model::{self, Model, PointValue};
use crate::rules::{self, Rules};
use crate::serve::{GatewayBackend, WriteTarget};

/// How many devices are read at once during discovery.
const PARALLEL_DEVICES: usize = 16;

/// What a discovery found, for people and for `--json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryReport {
    /// Devices found.
    pub devices: usize,
    /// Points modelled.
    pub points: usize,
    /// Objects that are not points (schedules, calendars, notification classes...).
    pub other_objects: usize,
    /// Problems of single devices (discovery went on).
    pub problems: Vec<String>,
    /// The validation against the standard defs.
    pub validation: rules::Report,
}

/// Binds the BACnet client the configuration describes.
pub async fn bind_client(config: &Config) -> Result<BacnetClient, GatewayError> {
    let mut client_config = ClientConfig::new(config.bacnet.bind, config.bacnet.broadcast);
    client_config.tsm.apdu_timeout = seconds(config.bacnet.apdu_timeout_seconds);
    client_config.tsm.retries = config.bacnet.retries;
    client_config.max_concurrent_per_device = config.bacnet.max_concurrent_per_device;
    if let Some(bbmd) = config.bacnet.bbmd {
        client_config.role = BipRole::Foreign(ForeignConfig {
            bbmd,
            time_to_live: config.bacnet.foreign_ttl_seconds,
        });
    }
    BacnetClient::start(client_config)
        .await
        .map_err(|e| GatewayError::Bacnet(format!("cannot bind {}: {e}", config.bacnet.bind)))
}

/// Discovers the site and builds its model (nothing is stored): `gateway discover`.
pub async fn discover_model(
    client: &BacnetClient,
    config: &Config,
    rules: &Rules,
) -> Result<(Model, Vec<DiscoveredDevice>, DiscoveryReport), GatewayError> {
    let devices = discover::discover(client, &config.bacnet, PARALLEL_DEVICES)
        .await
        .map_err(|e| GatewayError::Bacnet(e.to_string()))?;
    let model = model::build(&config.site, &devices, rules);
    let report = report_of(&devices, &model);
    Ok((model, devices, report))
}

fn report_of(devices: &[DiscoveredDevice], model: &Model) -> DiscoveryReport {
    DiscoveryReport {
        devices: devices.len(),
        points: model.points().count(),
        other_objects: devices.iter().map(|d| d.other_objects.len()).sum(),
        problems: devices.iter().flat_map(|d| d.problems.clone()).collect(),
        validation: rules::validate(&model.records),
    }
}

/// A running gateway.
pub struct Gateway {
    client: Arc<BacnetClient>,
    collector: Collector,
    server: HaystackServer,
    backend: Arc<GatewayBackend>,
    report: DiscoveryReport,
    model: Model,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("haystack", &self.server.url())
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// Starts the gateway: opens the backend of `config.store.url`, discovers, merges the
    /// model into the backend, collects, and serves Haystack on `config.haystack.bind`
    /// with `server` (users, TLS...; its bind address and backend are set here).
    pub async fn start(
        config: Config,
        rules: Rules,
        server: HaystackServerConfig,
    ) -> Result<Self, GatewayError> {
        let store = backends::open(&config.store.url)
            .await
            .map_err(|e| GatewayError::Store(e.to_string()))?;
        let client = Arc::new(bind_client(&config).await?);
        Self::start_with(config, rules, server, store, client, None).await
    }

    /// [`Self::start`] on a backend and client of the caller's; `imported` is a model a
    /// person edited (its records replace the stored ones before the merge).
    pub async fn start_with(
        config: Config,
        rules: Rules,
        server: HaystackServerConfig,
        store: Arc<dyn Backend>,
        client: Arc<BacnetClient>,
        imported: Option<Model>,
    ) -> Result<Self, GatewayError> {
        let devices = discover::discover(&client, &config.bacnet, PARALLEL_DEVICES)
            .await
            .map_err(|e| GatewayError::Bacnet(e.to_string()))?;
        let discovered = model::build(&config.site, &devices, &rules);
        let stored = read_site(&*store, &config.site.id).await?;
        let base = match imported {
            Some(model) => model::merge(&stored, &model.records),
            None => stored.clone(),
        };
        let merged = model::merge(&base, &discovered.records);
        store_records(&*store, &stored, &merged).await?;
        let model = Model { records: merged };
        // The report of what is served: the merged records (hand edits included).
        let report = report_of(&devices, &model);
        drop(devices);
        let collected = collect_plan(&model.records);
        let writable: std::collections::HashSet<&str> = model
            .records
            .iter()
            .filter(|r| r.contains("writable"))
            .filter_map(|r| match r.get("id") {
                Some(Value::Ref(id)) => Some(id.id.as_str()),
                _ => None,
            })
            .collect();
        let mut targets = HashMap::new();
        for device in &collected {
            for point in &device.points {
                if writable.contains(point.id.as_str()) {
                    targets.insert(
                        point.id.clone(),
                        WriteTarget {
                            address: device.address,
                            instance: device.instance,
                            point: point.clone(),
                        },
                    );
                }
            }
        }
        drop(writable);
        let collector = Collector::start(
            Arc::clone(&client),
            Arc::clone(&store),
            collected,
            &model.records,
            config.collect.clone(),
            config.site.tz.clone(),
        );
        let backend = Arc::new(GatewayBackend::new(store, Arc::clone(&client), targets));
        let server = HaystackServer::start(
            server
                .bind(config.haystack.bind)
                .backend(Arc::clone(&backend) as Arc<dyn Backend>),
        )
        .await
        .map_err(|e| GatewayError::Server(e.to_string()))?;
        Ok(Self {
            client,
            collector,
            server,
            backend,
            report,
            model,
        })
    }

    /// The Haystack API's URL (`http://127.0.0.1:8080/api`).
    pub fn haystack_url(&self) -> String {
        self.server.url()
    }

    /// The Haystack WebSocket URL.
    pub fn haystack_ws_url(&self) -> String {
        self.server.ws_url()
    }

    /// What the discovery found.
    pub fn report(&self) -> &DiscoveryReport {
        &self.report
    }

    /// The model as stored at start.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The collector's counters.
    pub fn stats(&self) -> &Arc<CollectStats> {
        self.collector.stats()
    }

    /// The backend the server runs on.
    pub fn backend(&self) -> &Arc<GatewayBackend> {
        &self.backend
    }

    /// Stops the server, the collector (cancelling the subscriptions) and the client.
    pub async fn stop(self) {
        let _ = self.server.stop().await;
        self.collector.stop().await;
        self.client.shutdown();
    }
}

/// The records of this gateway's site in the backend: the site and what refers to it.
/// Several gateways (one per site) can share one store; each manages its own site only.
async fn read_site(store: &dyn Backend, site: &str) -> Result<Vec<Dict>, GatewayError> {
    let filter = buildwire_haystack::filter::parse(&format!("id==@{site} or siteRef==@{site}"))
        .map_err(|e| GatewayError::Store(e.to_string()))?;
    store
        .read(&filter, None)
        .await
        .map_err(|e| GatewayError::Store(e.to_string()))
}

/// Tags the store maintains itself; never part of a diff.
const STORE_TAGS: &[&str] = &["mod", "writeVal", "writeLevel"];

/// Adds the new records and updates the changed ones (tags that went away are removed),
/// in two all-or-nothing commits.
async fn store_records(
    store: &dyn Backend,
    stored: &[Dict],
    merged: &[Dict],
) -> Result<(), GatewayError> {
    let id_of = |d: &Dict| match d.get("id") {
        Some(Value::Ref(r)) => Some(r.id.clone()),
        _ => None,
    };
    let stored_by_id: HashMap<String, &Dict> = stored
        .iter()
        .filter_map(|d| id_of(d).map(|id| (id, d)))
        .collect();
    let mut adds = Vec::new();
    let mut updates = Vec::new();
    for record in merged {
        let Some(id) = id_of(record) else { continue };
        match stored_by_id.get(&id) {
            None => adds.push(record.clone()),
            Some(old) => {
                let mut diff = Dict::new();
                let _ = diff.insert("id", Value::Ref(buildwire_haystack::value::Ref::new(id)));
                for (name, value) in record.iter() {
                    if name != "id" && !STORE_TAGS.contains(&name) && old.get(name) != Some(value) {
                        let _ = diff.insert(name, value.clone());
                    }
                }
                for (name, _) in old.iter() {
                    if !STORE_TAGS.contains(&name) && !record.contains(name) {
                        let _ = diff.insert(name, Value::Remove);
                    }
                }
                if diff.len() > 1 {
                    updates.push(EntityUpdate {
                        diff,
                        expected_version: None,
                    });
                }
            }
        }
    }
    if !adds.is_empty() {
        store
            .commit(CommitOp::Add(adds))
            .await
            .map_err(|e| GatewayError::Store(e.to_string()))?;
    }
    if !updates.is_empty() {
        store
            .commit(CommitOp::Update(updates))
            .await
            .map_err(|e| GatewayError::Store(e.to_string()))?;
    }
    Ok(())
}

/// The devices to collect and their points, from the records (connector `uri`s and the
/// points' `bacnetConnRef`/`bacnetCur`).
pub fn collect_plan(records: &[Dict]) -> Vec<DevicePoints> {
    let mut devices: Vec<DevicePoints> = Vec::new();
    let mut by_conn: HashMap<String, usize> = HashMap::new();
    for record in records.iter().filter(|r| r.contains("bacnetConn")) {
        let (Some(Value::Ref(id)), Some(Value::Uri(uri))) = (record.get("id"), record.get("uri"))
        else {
            continue;
        };
        let Some((instance, address)) = model::parse_device_uri(uri) else {
            log::warn!("@{}: cannot read the uri {uri}", id.id);
            continue;
        };
        by_conn.insert(id.id.clone(), devices.len());
        devices.push(DevicePoints {
            instance,
            address,
            points: Vec::new(),
        });
    }
    for record in records.iter().filter(|r| r.contains("point")) {
        let Some(Value::Ref(conn)) = record.get("bacnetConnRef") else {
            continue;
        };
        if let (Some(index), Some(point)) = (by_conn.get(&conn.id), PointValue::from_record(record))
            && let Some(device) = devices.get_mut(*index)
        {
            device.points.push(point);
        }
    }
    devices
}

/// The address of a device as the connector records it (for tools).
pub fn device_address(uri: &str) -> Option<DeviceAddress<SocketAddrV4>> {
    model::parse_device_uri(uri).map(|(_, address)| address)
}
