//! The BACnet side of discovery, on the BACnet crate's discovery library
//! (`buildwire_bacnet::driver::discovery`): its sweep (Who-Is paced over instance ranges,
//! I-Ams deduplicated, networks behind routers asked too) on the broadcast address, plus a
//! unicast Who-Is to each configured device; per device its object inventory (the
//! object-list whole, or element by element when the answer cannot be segmented) and, for
//! every object that becomes a point, batched reads of the properties the model needs
//! (ReadPropertyMultiple where the device offers it, ReadProperty otherwise).
//!
//! Nothing a device does stops discovery: a device that answers with errors, rejects,
//! aborts or stops answering is reported in [`DiscoveredDevice::problems`] with what could
//! be read, and the other devices go on.

use std::collections::BTreeMap;
use std::net::SocketAddrV4;

use buildwire_bacnet::Reader;
use buildwire_bacnet::app::discovery::MAX_DEVICE_INSTANCE;
use buildwire_bacnet::app::{ClientError, Destination};
use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::driver::discovery::{self, SweepOptions};
use buildwire_bacnet::encoding::{ApplicationValue, Element, ObjectIdentifier};
use buildwire_bacnet::enums::{EngineeringUnits, ObjectType, PropertyIdentifier as P};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::services::PropertyReference;

use crate::config::{BacnetConfig, seconds};
use crate::model::address::point_type;

/// What discovery read of one object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveredObject {
    /// The object.
    pub id: Option<ObjectIdentifier>,
    /// object-name.
    pub name: Option<String>,
    /// description.
    pub description: Option<String>,
    /// units (analog objects).
    pub units: Option<EngineeringUnits>,
    /// present-value as read.
    pub present_value: Option<Vec<Element>>,
    /// status-flags: in-alarm, fault, overridden, out-of-service.
    pub status_flags: Option<[bool; 4]>,
    /// out-of-service.
    pub out_of_service: Option<bool>,
    /// reliability (0 is no-fault-detected).
    pub reliability: Option<u32>,
    /// Whether the object has a priority-array (it is commandable).
    pub commandable: bool,
    /// min-pres-value.
    pub min_pres_value: Option<f64>,
    /// max-pres-value.
    pub max_pres_value: Option<f64>,
    /// cov-increment.
    pub cov_increment: Option<f64>,
    /// state-text (multi-state objects).
    pub state_text: Vec<String>,
    /// inactive-text and active-text (binary objects).
    pub binary_text: Option<(String, String)>,
    /// The trend logs of the device that log this object's present-value.
    pub trend_logs: Vec<ObjectIdentifier>,
}

/// What discovery found of one device.
#[derive(Debug, Clone)]
pub struct DiscoveredDevice {
    /// Device instance.
    pub instance: u32,
    /// Where it answers.
    pub address: DeviceAddress<SocketAddrV4>,
    /// Device object-name.
    pub name: Option<String>,
    /// vendor-name.
    pub vendor_name: Option<String>,
    /// model-name.
    pub model_name: Option<String>,
    /// The objects that become points, in object-list order.
    pub objects: Vec<DiscoveredObject>,
    /// Objects of the object-list that are not points (schedules, calendars...).
    pub other_objects: Vec<ObjectIdentifier>,
    /// What went wrong (the device is still modelled with what was read).
    pub problems: Vec<String>,
}

/// Finds the devices: Who-Is over each configured range, `range_size` instances at a
/// time, on the broadcast address (when configured) and to each configured device.
/// Devices are sorted by instance; one device answering twice is kept once.
pub async fn find_devices(
    client: &BacnetClient,
    config: &BacnetConfig,
) -> Result<Vec<(u32, DeviceAddress<SocketAddrV4>)>, ClientError> {
    let wait = seconds(config.who_is_wait_seconds);
    let mut found: BTreeMap<u32, DeviceAddress<SocketAddrV4>> = BTreeMap::new();
    let in_ranges = |instance: u32| {
        config
            .instance_ranges
            .iter()
            .any(|[low, high]| (*low..=*high).contains(&instance))
    };
    if config.broadcast.is_some() || config.bbmd.is_some() {
        // The library's sweep: paced Who-Is ranges, I-Ams deduplicated, and the networks
        // behind routers asked as well.
        for [low, high] in &config.instance_ranges {
            let options = SweepOptions {
                low: *low,
                high: (*high).min(MAX_DEVICE_INSTANCE),
                range_size: config.range_size,
                wait,
                ..SweepOptions::default()
            };
            let site = discovery::sweep(client, &options, &|_| {}).await?;
            for device in site.devices {
                found
                    .entry(device.i_am.device.instance())
                    .or_insert(device.address);
            }
        }
    }
    // Unicast Who-Is to every configured device at once: each waits the same `wait`.
    let asks = config
        .devices
        .iter()
        .map(|device| client.who_is_at(Destination::Unicast(*device), None, wait));
    for answers in futures_util::future::join_all(asks).await {
        for (address, i_am) in answers? {
            if in_ranges(i_am.device.instance()) {
                found.entry(i_am.device.instance()).or_insert(address);
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// Reads one device: its name, vendor and model, its object-list, then the properties of
/// every point object in batches. Never fails: problems are recorded in the result.
pub async fn read_device(
    client: &BacnetClient,
    instance: u32,
    address: DeviceAddress<SocketAddrV4>,
) -> DiscoveredDevice {
    let device_id = ObjectIdentifier::new(ObjectType::Device, instance);
    let mut device = DiscoveredDevice {
        instance,
        address,
        name: None,
        vendor_name: None,
        model_name: None,
        objects: Vec::new(),
        other_objects: Vec::new(),
        problems: Vec::new(),
    };
    let heads = [P::ObjectName, P::VendorName, P::ModelName].map(|property| PropertyReference {
        property,
        array_index: None,
    });
    let head = discovery::read_values(client, address, &[device_id], &heads, &|_| {}).await;
    let mut answers = head.into_iter().flat_map(|o| o.readings).map(|r| r.result);
    device.name = text(answers.next());
    device.vendor_name = text(answers.next());
    device.model_name = text(answers.next());
    let inventory = match discovery::object_inventory(client, address, Some(device_id)).await {
        Ok(inventory) => inventory,
        Err(error) => {
            device
                .problems
                .push(format!("object-list of device {instance}: {error}"));
            return device;
        }
    };
    let mut points = Vec::new();
    let mut trend_logs = Vec::new();
    for id in inventory.objects {
        if point_type(id.object_type()).is_some() {
            points.push(id);
        } else {
            if id.object_type() == ObjectType::TrendLog {
                trend_logs.push(id);
            }
            if id.object_type() != ObjectType::Device {
                device.other_objects.push(id);
            }
        }
    }
    // Objects that need the same properties are read together (the library batches them
    // in ReadPropertyMultiple, or ReadProperty where the device refuses it).
    let mut groups: Vec<(Vec<PropertyReference>, Vec<ObjectIdentifier>)> = Vec::new();
    for id in &points {
        let properties = wanted(*id);
        match groups.iter_mut().find(|(p, _)| *p == properties) {
            Some((_, objects)) => objects.push(*id),
            None => groups.push((properties, vec![*id])),
        }
    }
    let mut by_object: BTreeMap<u32, DiscoveredObject> = BTreeMap::new();
    let mut timeouts = 0usize;
    for (properties, objects) in &groups {
        for readings in discovery::read_values(client, address, objects, properties, &|_| {}).await
        {
            let object = by_object
                .entry(readings.object.to_u32())
                .or_insert_with(|| DiscoveredObject {
                    id: Some(readings.object),
                    ..DiscoveredObject::default()
                });
            for reading in readings.readings {
                match reading.result {
                    Ok(elements) => apply(object, reading.property, elements),
                    Err(ClientError::Timeout) => timeouts += 1,
                    // An optional property the object lacks: nothing to record.
                    Err(_) => {}
                }
            }
        }
    }
    if timeouts > 0 {
        device.problems.push(format!(
            "device {instance}: {timeouts} property reads timed out (stopped answering?)"
        ));
    }
    // Trend logs: which object each one logs (bacnetHis).
    let log_property = [PropertyReference {
        property: P::LogDeviceObjectProperty,
        array_index: None,
    }];
    for readings in
        discovery::read_values(client, address, &trend_logs, &log_property, &|_| {}).await
    {
        for reading in readings.readings {
            if let Ok(elements) = reading.result
                && let Some(logged) = logged_object(&elements, instance)
                && let Some(object) = by_object.get_mut(&logged.to_u32())
            {
                object.trend_logs.push(readings.object);
            }
        }
    }
    device.objects = points
        .iter()
        .filter_map(|id| by_object.remove(&id.to_u32()))
        .collect();
    device
}

/// Discovers every device [`find_devices`] finds, `parallel` devices at a time.
pub async fn discover(
    client: &BacnetClient,
    config: &BacnetConfig,
    parallel: usize,
) -> Result<Vec<DiscoveredDevice>, ClientError> {
    let devices = find_devices(client, config).await?;
    let mut out = Vec::with_capacity(devices.len());
    for chunk in devices.chunks(parallel.max(1)) {
        let reads = chunk
            .iter()
            .map(|(instance, address)| read_device(client, *instance, *address));
        out.extend(futures_util::future::join_all(reads).await);
    }
    Ok(out)
}

/// The properties read of a point object.
fn wanted(id: ObjectIdentifier) -> Vec<PropertyReference> {
    let kind = point_type(id.object_type());
    let mut properties = vec![
        P::ObjectName,
        P::Description,
        P::PresentValue,
        P::StatusFlags,
        P::OutOfService,
        P::Reliability,
    ];
    if let Some(kind) = kind {
        if kind.analog {
            properties.extend([P::Units, P::MinPresValue, P::MaxPresValue, P::CovIncrement]);
        }
        if kind.multistate {
            properties.push(P::StateText);
        }
        if kind.binary {
            properties.extend([P::InactiveText, P::ActiveText]);
        }
    }
    let mut out: Vec<PropertyReference> = properties
        .into_iter()
        .map(|property| PropertyReference {
            property,
            array_index: None,
        })
        .collect();
    if kind.is_some_and(|k| k.may_command) {
        // The array's length (index 0) says whether there is one, at a fraction of the bytes.
        out.push(PropertyReference {
            property: P::PriorityArray,
            array_index: Some(0),
        });
    }
    out
}

fn apply(object: &mut DiscoveredObject, property: P, elements: Vec<Element>) {
    let first = elements.first().cloned();
    match property {
        P::ObjectName => object.name = text(Some(Ok(elements))),
        P::Description => object.description = text(Some(Ok(elements))).filter(|d| !d.is_empty()),
        P::PresentValue => object.present_value = Some(elements),
        P::StatusFlags => object.status_flags = status_flags(&elements),
        P::OutOfService => {
            if let Some(Element::Application(ApplicationValue::Boolean(b))) = first {
                object.out_of_service = Some(b);
            }
        }
        P::Reliability => {
            if let Some(Element::Application(ApplicationValue::Enumerated(r))) = first {
                object.reliability = Some(r);
            }
        }
        P::Units => {
            if let Some(Element::Application(ApplicationValue::Enumerated(u))) = first {
                object.units = Some(EngineeringUnits::from_u32(u));
            }
        }
        P::MinPresValue => object.min_pres_value = number(&elements),
        P::MaxPresValue => object.max_pres_value = number(&elements),
        P::CovIncrement => object.cov_increment = number(&elements),
        P::StateText => {
            object.state_text = elements
                .into_iter()
                .filter_map(|e| match e {
                    Element::Application(ApplicationValue::CharacterString(s)) => Some(s),
                    _ => None,
                })
                .collect();
        }
        P::InactiveText => {
            let inactive = text(Some(Ok(elements))).unwrap_or_default();
            let active = object
                .binary_text
                .take()
                .map(|(_, a)| a)
                .unwrap_or_default();
            object.binary_text = Some((inactive, active));
        }
        P::ActiveText => {
            let active = text(Some(Ok(elements))).unwrap_or_default();
            let inactive = object
                .binary_text
                .take()
                .map(|(i, _)| i)
                .unwrap_or_default();
            object.binary_text = Some((inactive, active));
        }
        P::PriorityArray => object.commandable = true,
        _ => {}
    }
}

/// The text of a CharacterString answer.
fn text(answer: Option<Result<Vec<Element>, ClientError>>) -> Option<String> {
    match answer?.ok()?.first()? {
        Element::Application(ApplicationValue::CharacterString(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A numeric answer as f64.
pub(crate) fn number(elements: &[Element]) -> Option<f64> {
    match elements.first()? {
        Element::Application(ApplicationValue::Real(v)) => Some(f64::from(*v)),
        Element::Application(ApplicationValue::Double(v)) => Some(*v),
        Element::Application(ApplicationValue::Unsigned(v)) => Some(*v as f64),
        Element::Application(ApplicationValue::Signed(v)) => Some(*v as f64),
        _ => None,
    }
}

/// status-flags as its four bits.
pub(crate) fn status_flags(elements: &[Element]) -> Option<[bool; 4]> {
    match elements.first()? {
        Element::Application(ApplicationValue::BitString(bits)) => {
            Some([bits.get(0), bits.get(1), bits.get(2), bits.get(3)])
        }
        _ => None,
    }
}

/// The object a trend log's log-device-object-property names, when it is the present
/// value of an object of this device (BACnetDeviceObjectPropertyReference: [0] object,
/// [1] property, [2] index, [3] device).
fn logged_object(elements: &[Element], instance: u32) -> Option<ObjectIdentifier> {
    let mut object = None;
    let mut property = None;
    let mut device = None;
    for element in elements {
        if let Element::Context { tag, data } = element {
            let mut reader = Reader::new(data);
            match (tag, data.len()) {
                (0, 4) => object = reader.read_u32().ok().map(ObjectIdentifier::from_u32),
                (1, 1..=4) => {
                    let mut value = 0u32;
                    for byte in data {
                        value = (value << 8) | u32::from(*byte);
                    }
                    property = Some(value);
                }
                (3, 4) => device = reader.read_u32().ok().map(ObjectIdentifier::from_u32),
                _ => {}
            }
        }
    }
    let same_device = device.is_none_or(|d| d.instance() == instance);
    (same_device && property == Some(P::PresentValue.to_u32()))
        .then_some(object)
        .flatten()
}
