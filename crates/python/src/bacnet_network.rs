//! BACnet networks for Python: a router between B/IP and B/IPv6 ports, a BBMD, reading a
//! BBMD's tables, a client registered as a foreign device, and device addresses behind
//! routers (`NETWORK:HEXMAC`, `NETWORK:HOST:PORT`). Results cross as JSON text.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use buildwire_bacnet::driver::bip::bbmd::{parse_bdt, read_bdt, read_fdt};
use buildwire_bacnet::driver::{BacnetBbmd, BacnetClient, BacnetRouter, BipConfig, ClientConfig};
use buildwire_bacnet::link::{BbmdConfig, BipRole, ForeignConfig};
use buildwire_bacnet::link::{BdtEntry, FdtEntry};
use buildwire_bacnet::network::{DeviceAddress, RoutedAddress};
use buildwire_bacnet::objects::device::DeviceConfig;
use buildwire_bacnet::objects::profile::DeviceProfile;
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bench::bacnet::profiles::stress_profile;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3_async_runtimes::tokio::future_into_py;
use serde_json::{Value, json};

use crate::bacnet::BacnetClientHandle;

fn socket_address(text: &str) -> PyResult<SocketAddrV4> {
    let text = text.trim();
    text.parse()
        .or_else(|_| {
            text.parse::<Ipv4Addr>()
                .map(|ip| SocketAddrV4::new(ip, 47808))
        })
        .map_err(|_| {
            PyValueError::new_err(format!(
                "`{text}` is not an IPv4 address with port, e.g. 10.0.1.1:47808"
            ))
        })
}

/// A device as the client methods take it: `HOST:PORT` on this network, or
/// `NETWORK:HEXMAC` / `NETWORK:HOST:PORT` behind a router (found by
/// Who-Is-Router-To-Network), optionally followed by `@ROUTER_HOST:PORT` to name the router.
pub fn target(text: &str) -> PyResult<DeviceAddress> {
    let text = text.trim();
    let (device, router) = match text.split_once('@') {
        Some((device, router)) => (device, Some(socket_address(router)?)),
        None => (text, None),
    };
    let routed_form = device
        .split_once(':')
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !routed_form {
        if router.is_some() {
            return Err(PyValueError::new_err(
                "@ROUTER is for devices written NETWORK:HEXMAC",
            ));
        }
        return socket_address(device).map(DeviceAddress::Local);
    }
    let remote: RoutedAddress =
        device
            .parse()
            .map_err(|e: buildwire_bacnet::network::address::AddressParseError| {
                PyValueError::new_err(e.to_string())
            })?;
    Ok(match router {
        Some(router) => DeviceAddress::Via { router, remote },
        None => DeviceAddress::Remote(remote),
    })
}

fn bdt_json(entries: &[BdtEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| json!({"address": e.address.to_string(), "mask": e.mask.to_string()}))
            .collect(),
    )
}

fn fdt_json(entries: &[FdtEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| {
                json!({"address": e.address.to_string(), "ttl": e.time_to_live,
                       "remaining": e.remaining})
            })
            .collect(),
    )
}

/// A running router.
#[pyclass(module = "buildwire._native")]
pub struct BacnetRouterHandle {
    inner: Arc<BacnetRouter>,
}

#[pymethods]
impl BacnetRouterHandle {
    /// The ports: JSON list of {network, link, address, vmac}.
    fn ports(&self) -> String {
        let ports: Vec<Value> = self
            .inner
            .describe_ports()
            .iter()
            .map(|port| port.to_json())
            .collect();
        Value::Array(ports).to_string()
    }

    /// The routing table: JSON list of {network, port, next_hop, static}.
    fn routes(&self) -> String {
        let routes: Vec<Value> = self
            .inner
            .routes()
            .into_iter()
            .map(|(network, route)| {
                json!({
                    "network": network,
                    "port": route.port + 1,
                    "next_hop": route.next_hop.map(|m| m.as_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>()),
                    "static": route.origin == buildwire_bacnet::router::RouteOrigin::Static,
                })
            })
            .collect();
        Value::Array(routes).to_string()
    }

    /// Counters: JSON object.
    fn stats(&self) -> String {
        let s = self.inner.stats();
        json!({"routed": s.routed, "local": s.local, "rejects_sent": s.rejects_sent,
               "rejects_suppressed": s.rejects_suppressed, "loops": s.loops,
               "hop_count_exhausted": s.hop_count_exhausted, "malformed": s.malformed,
               "network_messages": s.network_messages, "dropped": s.dropped})
        .to_string()
    }

    /// Declares the router busy (Router-Busy-To-Network) or available again.
    fn set_busy(&self, busy: bool) {
        self.inner.set_busy(busy);
    }

    /// Stops routing.
    fn close(&self) {
        self.inner.stop();
    }
}

/// Starts a router. `ports`: `NETWORK=bip:HOST:PORT[,broadcast=IP][,bdt=FILE]` or
/// `NETWORK=bip6:[ADDRESS]:PORT[,vmac=HEX6][,interface=NAME][,group=ADDRESS]`; `routes`:
/// `NETWORK=PORT_NETWORK[:NEXT_HOP_HEXMAC]`; `device_id` hosts a device (`objects`: "none"
/// or "stress").
#[pyfunction]
#[pyo3(signature = (ports, routes=Vec::new(), device_id=None, objects="none".to_owned(), accept_routing_table_updates=false))]
pub fn bacnet_router(
    py: Python<'_>,
    ports: Vec<String>,
    routes: Vec<String>,
    device_id: Option<u32>,
    objects: String,
    accept_routing_table_updates: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let device = match device_id {
        None => None,
        Some(instance) => {
            let mut profile = match objects.as_str() {
                "stress" => stress_profile(),
                "none" => DeviceProfile {
                    device: DeviceConfig {
                        name: format!("Router-{instance}"),
                        ..DeviceConfig::default()
                    },
                    objects: Vec::new(),
                },
                other => {
                    return Err(PyValueError::new_err(format!(
                        "objects={other:?}: use \"none\" or \"stress\""
                    )));
                }
            };
            profile.device.instance = instance;
            let database = profile
                .build()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Some((database, TsmConfig::default()))
        }
    };
    future_into_py(py, async move {
        let router =
            BacnetRouter::start_from_text(&ports, &routes, accept_routing_table_updates, device)
                .await
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(BacnetRouterHandle {
            inner: Arc::new(router),
        })
    })
}

/// A running BBMD.
#[pyclass(module = "buildwire._native")]
pub struct BacnetBbmdHandle {
    inner: Arc<BacnetBbmd>,
}

#[pymethods]
impl BacnetBbmdHandle {
    /// The address it listens on.
    #[getter]
    fn local_address(&self) -> String {
        self.inner.local_addr().to_string()
    }

    /// The broadcast distribution table: JSON list of {address, mask}.
    fn bdt(&self) -> String {
        bdt_json(&self.inner.bdt()).to_string()
    }

    /// The foreign device table: JSON list of {address, ttl, remaining}.
    fn fdt(&self) -> String {
        fdt_json(&self.inner.fdt()).to_string()
    }

    /// Counters: JSON object.
    fn stats(&self) -> String {
        let s = self.inner.stats();
        json!({"forwarded": s.forwarded, "registrations": s.registrations, "naks": s.naks,
               "rate_limited": s.rate_limited, "malformed": s.malformed,
               "own_echoes": s.own_echoes})
        .to_string()
    }

    /// Stops the BBMD.
    fn close(&self) {
        self.inner.shutdown();
    }
}

/// Starts a BBMD on `bind` (its own IP address). `bdt`: entries `ADDRESS:PORT[/MASK]`
/// (this BBMD is added when missing).
#[pyfunction]
#[pyo3(signature = (bind, bdt=Vec::new(), broadcast=None, allow_write_bdt=false, max_foreign_devices=512))]
pub fn bacnet_bbmd(
    py: Python<'_>,
    bind: String,
    bdt: Vec<String>,
    broadcast: Option<String>,
    allow_write_bdt: bool,
    max_foreign_devices: usize,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = socket_address(&bind)?;
    let mut entries =
        parse_bdt(&bdt.join("\n")).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if !entries.iter().any(|e| e.address == bind) {
        entries.insert(
            0,
            BdtEntry {
                address: bind,
                mask: Ipv4Addr::BROADCAST,
            },
        );
    }
    let broadcast = match broadcast {
        Some(text) => Some(
            text.parse::<Ipv4Addr>()
                .map_err(|e| PyValueError::new_err(format!("invalid broadcast address: {e}")))?,
        ),
        None => BipConfig::with_default_broadcast(bind).broadcast,
    };
    let config = BbmdConfig {
        bdt: entries,
        allow_write_bdt,
        max_foreign_devices,
        ..BbmdConfig::default()
    };
    future_into_py(py, async move {
        let bbmd = BacnetBbmd::start(&BipConfig { bind, broadcast }, config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start a BBMD on {bind}: {e}")))?;
        Ok(BacnetBbmdHandle {
            inner: Arc::new(bbmd),
        })
    })
}

fn wait(timeout: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(timeout)
        .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))
}

/// Read-BDT from the BBMD at `address`: JSON list of {address, mask}.
#[pyfunction]
#[pyo3(signature = (address, timeout=3.0))]
pub fn bacnet_read_bdt(
    py: Python<'_>,
    address: String,
    timeout: f64,
) -> PyResult<Bound<'_, PyAny>> {
    let (address, wait) = (socket_address(&address)?, wait(timeout)?);
    future_into_py(py, async move {
        let entries = read_bdt(address, wait)
            .await
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(bdt_json(&entries).to_string())
    })
}

/// Read-FDT from the BBMD at `address`: JSON list of {address, ttl, remaining}.
#[pyfunction]
#[pyo3(signature = (address, timeout=3.0))]
pub fn bacnet_read_fdt(
    py: Python<'_>,
    address: String,
    timeout: f64,
) -> PyResult<Bound<'_, PyAny>> {
    let (address, wait) = (socket_address(&address)?, wait(timeout)?);
    future_into_py(py, async move {
        let entries = read_fdt(address, wait)
            .await
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(fdt_json(&entries).to_string())
    })
}

/// A client on `bind` registered as a foreign device with the BBMD at `bbmd` (the
/// registration is renewed before `ttl` runs out); its Who-Is goes through the BBMD.
#[pyfunction]
#[pyo3(signature = (bind, bbmd, ttl=60, broadcast=None))]
pub fn bacnet_foreign_client(
    py: Python<'_>,
    bind: String,
    bbmd: String,
    ttl: u16,
    broadcast: Option<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = socket_address(&bind)?;
    let broadcast = broadcast
        .map(|b| b.parse::<Ipv4Addr>())
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("invalid broadcast address: {e}")))?;
    let bbmd = socket_address(&bbmd)?;
    let mut config = ClientConfig::new(bind, broadcast);
    config.role = BipRole::Foreign(ForeignConfig {
        bbmd,
        time_to_live: ttl,
    });
    future_into_py(py, async move {
        let client = BacnetClient::start(config).await.map_err(|e| {
            PyRuntimeError::new_err(format!("cannot register with the BBMD from {bind}: {e}"))
        })?;
        Ok(BacnetClientHandle::from_client(client, Some(bbmd)))
    })
}
