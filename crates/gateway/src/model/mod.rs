//! BACnet devices and objects as Haystack 4 entities.
//!
//! - one `site` from the configuration (`@site` by default);
//! - per device a connector record `@bacnet.devN.conn` (`conn`, `bacnetConn`, `siteRef`,
//!   `uri` `` `bacnet://HOST:PORT/N` ``, `?dnet=&dadr=` for routed devices) and an `equip`
//!   `@bacnet.devN`;
//! - per point object a `point` `@bacnet.devN.ai3` with `kind`, `unit`, `sensor`/`cmd`/`sp`,
//!   `writable` (commandable objects), `cur`, `his`, `tz`, `curVal`, `curStatus`, and the
//!   connector tags `bacnetConnRef`, `bacnetCur`, `bacnetWrite` (writable points) and
//!   `bacnetHis` (when a trend log of the device logs the object).
//!
//! Ids depend only on the device instance and the object identifier, so a restart or a
//! re-discovery finds the same records ([`merge`] keeps hand edits).

pub mod address;
pub mod units;
mod values;

use std::net::SocketAddrV4;

use buildwire_bacnet::network::{DeviceAddress, MacAddress, RoutedAddress};
use buildwire_haystack::codec::Format;
use buildwire_haystack::value::{Dict, Grid, Number, Ref, Value};

use crate::GatewayError;
use crate::config::SiteConfig;
use crate::discover::{DiscoveredDevice, DiscoveredObject};
use crate::rules::Rules;

pub use values::{PointValue, cur_status, to_bacnet, to_haystack};

/// Tags the gateway owns: on a re-discovery they take the discovered value, whatever a
/// person wrote. Every other tag of an existing record (markers, `dis`, hand edits) is kept.
pub const OWNED_TAGS: &[&str] = &[
    "id",
    "point",
    "equip",
    "site",
    "conn",
    "bacnetConn",
    "uri",
    "siteRef",
    "equipRef",
    "bacnetConnRef",
    "bacnetCur",
    "bacnetWrite",
    "bacnetHis",
    "kind",
    "unit",
    "enum",
    "writable",
    "cur",
    "his",
    "tz",
    "minVal",
    "maxVal",
];

/// Tags the collector keeps up to date; a re-discovery keeps the stored ones.
pub const LIVE_TAGS: &[&str] = &["curVal", "curStatus", "writeVal", "writeLevel"];

/// The gateway's model: every record, site first, then per device its conn, equip and
/// points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    /// The records.
    pub records: Vec<Dict>,
}

fn put(dict: &mut Dict, name: &str, value: Value) {
    // Tag names here are literals and checked names: insert cannot fail on them.
    let _ = dict.insert(name, value);
}

fn marker(dict: &mut Dict, name: &str) {
    put(dict, name, Value::Marker);
}

fn str_value(text: impl Into<String>) -> Value {
    Value::Str(text.into())
}

/// The `uri` of a device: `bacnet://127.0.0.1:47808/1001`, with `?dnet=5&dadr=0a` when it
/// is reached through a router.
pub fn device_uri(instance: u32, address: &DeviceAddress<SocketAddrV4>) -> String {
    match address {
        DeviceAddress::Local(link) => format!("bacnet://{link}/{instance}"),
        DeviceAddress::Via { router, remote } => format!(
            "bacnet://{router}/{instance}?dnet={}&dadr={}",
            remote.network,
            hex(remote.mac.as_bytes())
        ),
        DeviceAddress::Remote(remote) => format!(
            "bacnet://*/{instance}?dnet={}&dadr={}",
            remote.network,
            hex(remote.mac.as_bytes())
        ),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses a [`device_uri`] back: the instance and the address.
pub fn parse_device_uri(uri: &str) -> Option<(u32, DeviceAddress<SocketAddrV4>)> {
    let rest = uri.strip_prefix("bacnet://")?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (host, instance) = path.split_once('/')?;
    let instance: u32 = instance.parse().ok()?;
    let mut dnet = None;
    let mut dadr = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=')? {
            ("dnet", n) => dnet = n.parse::<u16>().ok(),
            ("dadr", a) => {
                let bytes: Option<Vec<u8>> = (0..a.len())
                    .step_by(2)
                    .map(|i| a.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
                    .collect();
                dadr = MacAddress::new(&bytes?);
            }
            _ => return None,
        }
    }
    let remote = match (dnet, dadr) {
        (Some(network), Some(mac)) => Some(RoutedAddress { network, mac }),
        (None, None) => None,
        _ => return None,
    };
    let address = match (host, remote) {
        ("*", Some(remote)) => DeviceAddress::Remote(remote),
        (host, None) => DeviceAddress::Local(host.parse().ok()?),
        (host, Some(remote)) => DeviceAddress::Via {
            router: host.parse().ok()?,
            remote,
        },
    };
    Some((instance, address))
}

/// Builds the model of the discovered devices: the records without hand edits (see
/// [`merge`]), tagged by `rules`.
pub fn build(site: &SiteConfig, devices: &[DiscoveredDevice], rules: &Rules) -> Model {
    let site_ref = Ref::with_dis(site.id.clone(), site.dis.clone());
    let mut records = Vec::new();
    let mut site_record = Dict::new();
    put(&mut site_record, "id", Value::Ref(site_ref.clone()));
    put(&mut site_record, "dis", str_value(&site.dis));
    marker(&mut site_record, "site");
    put(&mut site_record, "tz", str_value(&site.tz));
    records.push(site_record);
    for device in devices {
        let device_name = device
            .name
            .clone()
            .unwrap_or_else(|| format!("Device {}", device.instance));
        let conn_ref = Ref::with_dis(
            address::conn_id(device.instance),
            format!("{device_name} conn"),
        );
        let equip_ref = Ref::with_dis(address::equip_id(device.instance), device_name.clone());
        let mut conn = Dict::new();
        put(&mut conn, "id", Value::Ref(conn_ref.clone()));
        put(&mut conn, "dis", str_value(format!("{device_name} conn")));
        marker(&mut conn, "conn");
        marker(&mut conn, "bacnetConn");
        put(&mut conn, "siteRef", Value::Ref(site_ref.clone()));
        put(
            &mut conn,
            "uri",
            Value::Uri(device_uri(device.instance, &device.address)),
        );
        if let Some(vendor) = &device.vendor_name {
            put(&mut conn, "vendor", str_value(vendor));
        }
        if let Some(model) = &device.model_name {
            put(&mut conn, "model", str_value(model));
        }
        records.push(conn);
        let mut equip = Dict::new();
        put(&mut equip, "id", Value::Ref(equip_ref.clone()));
        put(&mut equip, "dis", str_value(&device_name));
        put(&mut equip, "navName", str_value(&device_name));
        marker(&mut equip, "equip");
        put(&mut equip, "siteRef", Value::Ref(site_ref.clone()));
        put(&mut equip, "bacnetConnRef", Value::Ref(conn_ref.clone()));
        records.push(equip);
        for object in &device.objects {
            if let Some(point) = point_record(site, device.instance, object, rules) {
                let mut point = point;
                put(&mut point, "siteRef", Value::Ref(site_ref.clone()));
                put(&mut point, "equipRef", Value::Ref(equip_ref.clone()));
                put(&mut point, "bacnetConnRef", Value::Ref(conn_ref.clone()));
                records.push(point);
            }
        }
    }
    Model { records }
}

fn point_record(
    site: &SiteConfig,
    device: u32,
    object: &DiscoveredObject,
    rules: &Rules,
) -> Option<Dict> {
    let id = object.id?;
    let kind = address::point_type(id.object_type())?;
    let code = address::connector_address(id);
    let name = object.name.clone().unwrap_or_else(|| code.clone());
    let mut point = Dict::new();
    put(
        &mut point,
        "id",
        Value::Ref(Ref::with_dis(address::point_id(device, id), name.clone())),
    );
    put(&mut point, "dis", str_value(&name));
    put(&mut point, "navName", str_value(&name));
    marker(&mut point, "point");
    marker(&mut point, kind.function);
    let unit = object.units.and_then(units::haystack_unit);
    let value_kind = if kind.analog {
        "Number"
    } else if kind.binary {
        "Bool"
    } else {
        "Str"
    };
    put(&mut point, "kind", str_value(value_kind));
    if let Some(unit) = unit {
        put(&mut point, "unit", str_value(unit));
    }
    if kind.multistate && !object.state_text.is_empty() {
        put(&mut point, "enum", str_value(object.state_text.join(",")));
    }
    if kind.binary
        && let Some((inactive, active)) = &object.binary_text
        && !inactive.is_empty()
        && !active.is_empty()
    {
        put(
            &mut point,
            "enum",
            str_value(format!("{inactive},{active}")),
        );
    }
    if let Some(min) = object.min_pres_value {
        put(&mut point, "minVal", Value::Number(with_unit(min, unit)));
    }
    if let Some(max) = object.max_pres_value {
        put(&mut point, "maxVal", Value::Number(with_unit(max, unit)));
    }
    marker(&mut point, "cur");
    marker(&mut point, "his");
    put(&mut point, "tz", str_value(&site.tz));
    put(&mut point, "bacnetCur", str_value(&code));
    if object.commandable {
        marker(&mut point, "writable");
        put(&mut point, "bacnetWrite", str_value(&code));
    }
    if let Some(log) = object.trend_logs.first() {
        put(
            &mut point,
            "bacnetHis",
            str_value(address::connector_address(*log)),
        );
    }
    let states = object.state_text.clone();
    if let Some(elements) = &object.present_value {
        let value = to_haystack(&kind, unit, &states, elements);
        if let Some(value) = value {
            put(&mut point, "curVal", value);
        }
    }
    let status = cur_status(object.status_flags, object.reliability, false);
    put(&mut point, "curStatus", str_value(status));
    for tag in rules.tags_for(&name, object.description.as_deref(), unit, &code) {
        if !point.contains(&tag) {
            marker(&mut point, &tag);
        }
    }
    Some(point)
}

fn with_unit(value: f64, unit: Option<&str>) -> Number {
    match unit {
        Some(unit) => Number::with_unit(value, unit),
        None => Number::new(value),
    }
}

/// Merges a new discovery into the stored records: a record of both keeps its stored tags
/// except the [`OWNED_TAGS`], which take the discovered values (a tag owned but no longer
/// discovered is removed); other discovered tags (rule markers, `dis`) are not added back
/// to a stored record, so a person's edits and removals stay; the [`LIVE_TAGS`] keep the
/// stored value when there is one.
/// Records only discovered are added; records only stored are kept (a device that did not
/// answer this time is not deleted). Returns the merged records in discovery order, then
/// the stored-only ones.
pub fn merge(stored: &[Dict], discovered: &[Dict]) -> Vec<Dict> {
    let id_of = |d: &Dict| match d.get("id") {
        Some(Value::Ref(r)) => Some(r.id.clone()),
        _ => None,
    };
    let stored_by_id: std::collections::HashMap<String, &Dict> = stored
        .iter()
        .filter_map(|d| id_of(d).map(|id| (id, d)))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for new in discovered {
        let Some(id) = id_of(new) else { continue };
        seen.insert(id.clone());
        match stored_by_id.get(&id) {
            None => out.push(new.clone()),
            Some(old) => {
                let mut merged = Dict::new();
                for (name, value) in old.iter() {
                    if !OWNED_TAGS.contains(&name) {
                        put(&mut merged, name, value.clone());
                    }
                }
                for (name, value) in new.iter() {
                    let owned = OWNED_TAGS.contains(&name);
                    let live_missing = LIVE_TAGS.contains(&name) && !old.contains(name);
                    if owned || live_missing {
                        put(&mut merged, name, value.clone());
                    }
                }
                out.push(merged);
            }
        }
    }
    for old in stored {
        if let Some(id) = id_of(old)
            && !seen.contains(&id)
        {
            out.push(old.clone());
        }
    }
    out
}

impl Model {
    /// The records as one grid.
    pub fn to_grid(&self) -> Result<Grid, GatewayError> {
        Grid::from_dicts(&self.records).map_err(|e| GatewayError::Model(e.to_string()))
    }

    /// Encodes the model (`.trio`, `.zinc` or `.json`).
    pub fn encode(&self, format: Format) -> Result<String, GatewayError> {
        Ok(format.encode_grid(&self.to_grid()?))
    }

    /// Reads a model written by [`Self::encode`] (and maybe edited by a person).
    pub fn decode(text: &str, format: Format) -> Result<Self, GatewayError> {
        let grid = format
            .decode_grid(text)
            .map_err(|e| GatewayError::Model(e.to_string()))?;
        let records = (0..grid.row_count())
            .filter_map(|i| grid.row_dict(i))
            .collect();
        Ok(Self { records })
    }

    /// Reads a model file by its extension.
    pub fn read_file(path: &std::path::Path) -> Result<Self, GatewayError> {
        let format = model_format(path)?;
        let text = std::fs::read_to_string(path).map_err(|e| GatewayError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::decode(&text, format).map_err(|e| GatewayError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Writes a model file in the format of its extension.
    pub fn write_file(&self, path: &std::path::Path) -> Result<(), GatewayError> {
        let format = model_format(path)?;
        std::fs::write(path, self.encode(format)?).map_err(|e| GatewayError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// The point records.
    pub fn points(&self) -> impl Iterator<Item = &Dict> {
        self.records.iter().filter(|r| r.contains("point"))
    }
}

/// The format of a model file: `.trio`, `.zinc` or `.json`.
pub fn model_format(path: &std::path::Path) -> Result<Format, GatewayError> {
    Format::from_path(&path.to_string_lossy()).ok_or_else(|| GatewayError::Io {
        path: path.display().to_string(),
        message: "name the model file .trio, .zinc or .json".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tags: &[(&str, Value)]) -> Dict {
        let mut dict = Dict::new();
        for (name, value) in tags {
            put(&mut dict, name, value.clone());
        }
        dict
    }

    #[test]
    fn merge_keeps_hand_edits_and_takes_owned_tags() {
        let id = Value::Ref(Ref::new("bacnet.dev1.ai1"));
        let stored = record(&[
            ("id", id.clone()),
            ("point", Value::Marker),
            ("dis", Value::Str("Lobby".into())),
            ("zone", Value::Marker),
            ("unit", Value::Str("°C".into())),
            ("curVal", Value::Number(Number::new(20.0))),
            ("bacnetWrite", Value::Str("AI1".into())),
        ]);
        let discovered = record(&[
            ("id", id.clone()),
            ("point", Value::Marker),
            ("dis", Value::Str("ZN-T".into())),
            ("temp", Value::Marker),
            ("unit", Value::Str("°F".into())),
            ("curVal", Value::Number(Number::new(70.0))),
        ]);
        let new_point = record(&[("id", Value::Ref(Ref::new("bacnet.dev1.ai2")))]);
        let gone = record(&[("id", Value::Ref(Ref::new("bacnet.dev2.ai1")))]);
        let merged = merge(&[stored, gone.clone()], &[discovered, new_point.clone()]);
        assert_eq!(merged.len(), 3);
        let first = &merged[0];
        // The person's dis and zone stay; the rule's temp is not added back.
        assert_eq!(first.get("dis"), Some(&Value::Str("Lobby".into())));
        assert_eq!(first.get("zone"), Some(&Value::Marker));
        assert!(!first.contains("temp"));
        // Owned tags follow the device; an owned tag no longer discovered goes.
        assert_eq!(first.get("unit"), Some(&Value::Str("°F".into())));
        assert!(!first.contains("bacnetWrite"));
        // The live value stays the stored one until the collector has a new one.
        assert_eq!(first.get("curVal"), Some(&Value::Number(Number::new(20.0))));
        assert_eq!(merged[1], new_point);
        assert_eq!(merged[2], gone);
    }

    #[test]
    fn device_uris_round_trip() {
        let local: DeviceAddress<SocketAddrV4> = DeviceAddress::Local(
            "192.168.1.20:47808"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        let uri = device_uri(1001, &local);
        assert_eq!(uri, "bacnet://192.168.1.20:47808/1001");
        assert_eq!(parse_device_uri(&uri), Some((1001, local)));
        let routed = DeviceAddress::Via {
            router: "10.0.0.1:47808".parse().unwrap_or_else(|_| unreachable!()),
            remote: RoutedAddress {
                network: 5,
                mac: MacAddress::new(&[0x0a]).unwrap_or_else(|| unreachable!()),
            },
        };
        let uri = device_uri(7, &routed);
        assert_eq!(uri, "bacnet://10.0.0.1:47808/7?dnet=5&dadr=0a");
        assert_eq!(parse_device_uri(&uri), Some((7, routed)));
        assert_eq!(parse_device_uri("bacnet://10.0.0.1:47808/7?dnet=5"), None);
        assert_eq!(parse_device_uri("http://x/7"), None);
    }
}
