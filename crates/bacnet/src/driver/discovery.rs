//! Whole-device and whole-site discovery over a [`BacnetClient`]: what BAC0 and the
//! bacnet-stack tools do in one command, as a library (the CLI's `bacnet whois`, `points`
//! and `epics`, and the gateway, use it).
//!
//! - [`sweep`]: Who-Is in instance ranges, paced (range size and pause are options), the
//!   I-Ams deduplicated per device instance; routers found with
//!   Who-Is-Router-To-Network, and the networks behind them asked with a Who-Is of their
//!   own (DNET), besides the global broadcast.
//! - [`object_inventory`]: a device's object-list, read whole (segmented when it is
//!   long) or, for devices that cannot segment, element by element (index 0, then 1..N).
//! - [`read_values`]: properties of many objects, in ReadPropertyMultiple batches per
//!   device, falling back to one ReadProperty each when the device refuses or aborts the
//!   service or an answer is too long; every property keeps its own result.
//! - [`read_points`] (the usual columns of a points list) and [`read_all_properties`]
//!   (every property of an object: `all`, else its property-list, else the common ones).
//!
//! Every function takes a progress callback; pass `&|_| {}` when nobody watches.
//!
//! ```no_run
//! use std::net::{Ipv4Addr, SocketAddrV4};
//! use std::time::Duration;
//! use buildwire_bacnet::driver::BacnetClient;
//! use buildwire_bacnet::driver::discovery::{self, Progress, SweepOptions};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let client = BacnetClient::bind(
//!     SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 47808),
//!     Some(Ipv4Addr::BROADCAST),
//! )
//! .await?;
//! // Instances 0..=99999 in Who-Is ranges of 10000, one every 200 ms.
//! let options = SweepOptions {
//!     high: 99_999,
//!     range_size: 10_000,
//!     pause: Duration::from_millis(200),
//!     ..SweepOptions::default()
//! };
//! let site = discovery::sweep(&client, &options, &|p: Progress| eprintln!("{p:?}")).await?;
//! for device in &site.devices {
//!     let inventory = discovery::object_inventory(&client, device.address, None).await?;
//!     let points =
//!         discovery::read_points(&client, device.address, &inventory.objects, &|_| {}).await;
//!     for point in points {
//!         println!("{} {:?} {:?}", point.object, point.name, point.present_value);
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::time::Duration;

use super::client::{BacnetClient, join_all};
use crate::app::ClientError;
use crate::app::Destination;
use crate::app::discovery::{
    COMMON_PROPERTIES, DeviceDirectory, FoundDevice, MAX_DEVICE_INSTANCE, POINT_PROPERTIES, Point,
    Reading, instance_ranges, is_missing_property, objects_of,
};
use crate::app::read_plan::{self, MAX_READS_PER_REQUEST};
use crate::encoding::object_identifier::MAX_INSTANCE;
use crate::encoding::{ApplicationValue, Element, ObjectIdentifier, ObjectPropertyReference};
use crate::enums::{ObjectType, PropertyIdentifier};
use crate::network::{DeviceAddress, LinkAddress};
use crate::services::{PropertyReference, ReadAccessSpecification, ReadResult};

/// How long [`object_inventory`] waits for the I-Am of a device that does not answer
/// reads of the wildcard device instance.
const IDENTIFY_WAIT: Duration = Duration::from_secs(2);
/// References handed to the client per step of [`read_values`] (the progress callback
/// runs after each step).
const READS_PER_STEP: usize = MAX_READS_PER_REQUEST * 4;

/// What a progress callback hears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Who-Is-Router-To-Network sent.
    FindingRouters,
    /// Who-Is number `sent` of `total` sent.
    WhoIs {
        /// Sent so far.
        sent: usize,
        /// In all.
        total: usize,
    },
    /// Properties read so far (values or errors) of `total`.
    Read {
        /// Done so far.
        done: usize,
        /// In all.
        total: usize,
    },
    /// Objects done so far (every property of each) of `total`.
    Objects {
        /// Done so far.
        done: usize,
        /// In all.
        total: usize,
    },
}

/// How [`sweep`] asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepOptions {
    /// Lowest device instance asked for.
    pub low: u32,
    /// Highest device instance asked for (at most 4194302).
    pub high: u32,
    /// Instances per Who-Is; the whole span in one Who-Is when it is at least as large.
    pub range_size: u32,
    /// Pause between two Who-Is, so that a large site does not answer all at once.
    pub pause: Duration,
    /// How long answers are collected after the last Who-Is.
    pub wait: Duration,
    /// Find routers with Who-Is-Router-To-Network and ask each network behind them with
    /// Who-Is of its own (DNET) as well as the global broadcast.
    pub routers: bool,
    /// How long to wait for I-Am-Router-To-Network.
    pub router_wait: Duration,
}

impl Default for SweepOptions {
    /// Every instance in one Who-Is, answers collected for 3 s; routers asked (1 s).
    fn default() -> Self {
        Self {
            low: 0,
            high: MAX_DEVICE_INSTANCE,
            range_size: MAX_INSTANCE + 1,
            pause: Duration::from_millis(100),
            wait: Duration::from_secs(3),
            routers: true,
            router_wait: Duration::from_secs(1),
        }
    }
}

/// What [`sweep`] found.
#[derive(Debug, Clone)]
pub struct Site<A> {
    /// One entry per device instance, by instance.
    pub devices: Vec<FoundDevice<DeviceAddress<A>>>,
    /// Networks reachable through routers, with the router's address.
    pub networks: Vec<(u16, A)>,
    /// Who-Is sent.
    pub who_is_sent: usize,
    /// I-Am answers received, duplicates included.
    pub answers: u64,
}

/// Finds the devices of a site: paced Who-Is over the instance ranges of `options` (to
/// the broadcast address, global unless the client was set up for local broadcasts) and,
/// with `options.routers`, the same ranges asked on every network a router announces.
/// The client needs a broadcast address.
pub async fn sweep<A: LinkAddress>(
    client: &BacnetClient<A>,
    options: &SweepOptions,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Result<Site<A>, ClientError> {
    if options.low > options.high || options.high > MAX_DEVICE_INSTANCE {
        return Err(ClientError::InvalidArgument(format!(
            "device instances {}..{}: need low <= high <= {MAX_DEVICE_INSTANCE}",
            options.low, options.high
        )));
    }
    let mut networks = Vec::new();
    if options.routers {
        progress(Progress::FindingRouters);
        networks = client.find_routers(options.router_wait).await?;
    }
    let whole = options.low == 0 && options.high == MAX_DEVICE_INSTANCE;
    let ranges: Vec<_> = if whole && options.range_size > MAX_DEVICE_INSTANCE {
        vec![None]
    } else {
        instance_ranges(options.low, options.high, options.range_size)
            .into_iter()
            .map(Some)
            .collect()
    };
    // The broadcast first, then each network behind a router.
    let mut plan: Vec<(Option<u16>, _)> = ranges.iter().map(|r| (None, *r)).collect();
    for (network, _) in &networks {
        plan.extend(ranges.iter().map(|r| (Some(*network), *r)));
    }
    let total = plan.len();
    let asks: Vec<_> = plan
        .into_iter()
        .enumerate()
        .map(|(i, (network, range))| async move {
            let start = options
                .pause
                .saturating_mul(u32::try_from(i).unwrap_or(u32::MAX));
            tokio::time::sleep(start).await;
            progress(Progress::WhoIs { sent: i + 1, total });
            match network {
                Some(network) => client.who_is_on_network(network, range, options.wait).await,
                None => client.who_is(range, options.wait).await,
            }
        })
        .collect();
    let mut directory = DeviceDirectory::default();
    for answers in join_all(asks).await {
        for (address, i_am) in answers? {
            directory.insert(address, i_am);
        }
    }
    let answers = directory.answers();
    Ok(Site {
        devices: directory.into_devices(),
        networks,
        who_is_sent: total,
        answers,
    })
}

/// A device's objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// The device object.
    pub device: ObjectIdentifier,
    /// Every object of its object-list, the device object included, in the device's order.
    pub objects: Vec<ObjectIdentifier>,
}

/// Reads the object-list of the device at `to`: whole (segmented when the device can),
/// else element by element. `device` is its device object when known (from its I-Am);
/// otherwise it is read as the wildcard instance 4194303, or asked with a Who-Is.
pub async fn object_inventory<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    device: Option<ObjectIdentifier>,
) -> Result<Inventory, ClientError> {
    let to = to.into();
    let device = match device {
        Some(device) => device,
        None => device_identifier(client, to).await?,
    };
    let list = client
        .read(to, device, PropertyIdentifier::ObjectList, None)
        .await?;
    Ok(Inventory {
        device,
        objects: objects_of(&list, false),
    })
}

/// The device object of the device at `to`: its object-identifier read through the
/// wildcard instance, or, when the device does not take the wildcard, its I-Am.
pub async fn device_identifier<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
) -> Result<ObjectIdentifier, ClientError> {
    let to = to.into();
    let wildcard = ObjectIdentifier::new(ObjectType::Device, MAX_INSTANCE);
    let read = client
        .read(to, wildcard, PropertyIdentifier::ObjectIdentifier, None)
        .await;
    let error = match read.as_deref() {
        Ok([Element::Application(ApplicationValue::ObjectIdentifier(id))]) => return Ok(*id),
        Ok(other) => ClientError::BadReply(format!(
            "the device's object-identifier is not an object identifier: {other:?}"
        )),
        Err(error @ (ClientError::Error { .. } | ClientError::Reject(_))) => error.clone(),
        Err(other) => return Err(other.clone()),
    };
    // Ask the device itself: a unicast Who-Is on the local network, or a Who-Is on its
    // network behind a router (every device there answers; the one at `to` is kept).
    let found = match to {
        DeviceAddress::Local(link) => {
            client
                .who_is_at(Destination::Unicast(link), None, IDENTIFY_WAIT)
                .await?
        }
        DeviceAddress::Remote(remote) | DeviceAddress::Via { remote, .. } => {
            client
                .who_is_on_network(remote.network, None, IDENTIFY_WAIT)
                .await?
        }
    };
    found
        .into_iter()
        .find(|(address, _)| {
            address == &to || (address.remote().is_some() && address.remote() == to.remote())
        })
        .map(|(_, i_am)| i_am.device)
        .ok_or(error)
}

/// One property of one object and what reading it gave.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyReading {
    /// The property.
    pub property: PropertyIdentifier,
    /// The array index read, if any.
    pub array_index: Option<u32>,
    /// The value, or why it could not be read.
    pub result: Reading,
}

/// The readings of one object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectReadings {
    /// The object.
    pub object: ObjectIdentifier,
    /// Its properties, in the order asked (for `all`: the device's order).
    pub readings: Vec<PropertyReading>,
}

/// Reads `properties` of every object of `objects` on the device at `to`: in
/// ReadPropertyMultiple batches when the device offers it, else (or for what a batch
/// cannot carry, or what a batch's abort refuses) one ReadProperty each. A property that
/// fails keeps its error; nothing else fails with it. The results are in the order of
/// `objects`, then `properties`.
pub async fn read_values<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    objects: &[ObjectIdentifier],
    properties: &[PropertyReference],
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Vec<ObjectReadings> {
    let to = to.into();
    let references: Vec<ObjectPropertyReference> = objects
        .iter()
        .flat_map(|object| {
            properties.iter().map(|p| ObjectPropertyReference {
                object: *object,
                property: p.property,
                array_index: p.array_index,
            })
        })
        .collect();
    let results = read_references(client, to, &references, progress).await;
    let mut out: Vec<ObjectReadings> = objects
        .iter()
        .map(|object| ObjectReadings {
            object: *object,
            readings: Vec::with_capacity(properties.len()),
        })
        .collect();
    for (i, (reference, result)) in references.iter().zip(results).enumerate() {
        if let Some(entry) = out.get_mut(i / properties.len().max(1)) {
            entry.readings.push(PropertyReading {
                property: reference.property,
                array_index: reference.array_index,
                result,
            });
        }
    }
    out
}

/// `read_many` in steps, with progress after each.
async fn read_references<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: DeviceAddress<A>,
    references: &[ObjectPropertyReference],
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Vec<Reading> {
    let total = references.len();
    let mut results = Vec::with_capacity(total);
    progress(Progress::Read { done: 0, total });
    for step in references.chunks(READS_PER_STEP) {
        results.extend(client.read_many(to, step).await);
        progress(Progress::Read {
            done: results.len(),
            total,
        });
    }
    results
}

/// The points of `objects` on the device at `to`: object-name, description,
/// present-value, units, status-flags, out-of-service and whether a priority-array
/// exists (read as its length, index 0), for each object.
pub async fn read_points<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    objects: &[ObjectIdentifier],
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Vec<Point> {
    let to = to.into();
    let properties: Vec<PropertyReference> = POINT_PROPERTIES
        .iter()
        .map(|property| PropertyReference {
            property: *property,
            array_index: (*property == PropertyIdentifier::PriorityArray).then_some(0),
        })
        .collect();
    read_values(client, to, objects, &properties, progress)
        .await
        .into_iter()
        .map(|object| {
            let readings: Vec<Reading> = object.readings.into_iter().map(|r| r.result).collect();
            Point::from_readings(object.object, &readings)
        })
        .collect()
}

/// Every property of `object`: ReadPropertyMultiple of `all`; when the device refuses
/// or aborts that (no ReadPropertyMultiple, an answer too long to send), its
/// property-list and then each property read (whole arrays element by element when
/// needed); when it has no property-list either, the [`COMMON_PROPERTIES`] it answers.
/// Fails only when the object cannot be read at all (unknown object, no answer).
pub async fn read_all_properties<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    object: ObjectIdentifier,
) -> Result<ObjectReadings, ClientError> {
    let to = to.into();
    let all = ReadAccessSpecification {
        object,
        properties: vec![PropertyReference {
            property: PropertyIdentifier::All,
            array_index: None,
        }],
    };
    let error = match client.read_multiple(to, vec![all]).await {
        Ok(results) => {
            let mut readings = readings_of(results);
            match readings.pop() {
                // `all` answered with one error (unknown-object...): the object failed.
                Some(only)
                    if only.readings.len() == 1
                        && only.readings[0].property == PropertyIdentifier::All =>
                {
                    let reading = only.readings.into_iter().next();
                    match reading.map(|r| r.result) {
                        Some(Err(error)) if is_unknown_object(&error) => return Err(error),
                        // Another error for `all` (a device that does not take it): the
                        // property-list way may still work.
                        Some(Err(error)) => error,
                        _ => ClientError::BadReply(format!(
                            "no properties of {object} in the answer"
                        )),
                    }
                }
                Some(first) => return Ok(first),
                None => ClientError::BadReply(format!("no results for {object} in the answer")),
            }
        }
        Err(error) if falls_back(&error) => error,
        Err(error) => return Err(error),
    };
    let mut from_list = true;
    let names = match client
        .read(to, object, PropertyIdentifier::PropertyList, None)
        .await
    {
        Ok(list) => {
            // The property-list leaves out these four (Clause 12.1.1.4.1).
            let mut names = vec![
                PropertyIdentifier::ObjectIdentifier,
                PropertyIdentifier::ObjectName,
                PropertyIdentifier::ObjectType,
            ];
            names.extend(list.iter().filter_map(|element| match element {
                Element::Application(ApplicationValue::Enumerated(e)) => {
                    Some(PropertyIdentifier::from_u32(*e))
                }
                _ => None,
            }));
            names.push(PropertyIdentifier::PropertyList);
            names
        }
        Err(missing) if is_unknown_object(&missing) => return Err(missing),
        Err(ClientError::Error { .. } | ClientError::Reject(_)) => {
            from_list = false;
            COMMON_PROPERTIES.to_vec()
        }
        Err(other) => return Err(other),
    };
    let references: Vec<PropertyReference> = names
        .iter()
        .map(|property| PropertyReference {
            property: *property,
            array_index: None,
        })
        .collect();
    let mut readings = read_values(client, to, &[object], &references, &|_| {}).await;
    let mut found = readings.pop().unwrap_or(ObjectReadings {
        object,
        readings: Vec::new(),
    });
    // Without a property-list, the common properties the object lacks are left out.
    found
        .readings
        .retain(|r| from_list || !r.result.as_ref().is_err_and(is_missing_property));
    if found.readings.iter().all(|r| r.result.is_err()) {
        return Err(error);
    }
    Ok(found)
}

/// [`read_all_properties`] of each of `objects`, a few at a time, with progress.
pub async fn read_objects<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    objects: &[ObjectIdentifier],
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> Vec<Result<ObjectReadings, ClientError>> {
    let to = to.into();
    let total = objects.len();
    let mut out = Vec::with_capacity(total);
    progress(Progress::Objects { done: 0, total });
    for step in objects.chunks(8) {
        let reads: Vec<_> = step
            .iter()
            .map(|object| read_all_properties(client, to, *object))
            .collect();
        out.extend(join_all(reads).await);
        progress(Progress::Objects {
            done: out.len(),
            total,
        });
    }
    out
}

/// ReadPropertyMultiple of `specifications` as asked; when the device refuses or aborts
/// it, the same reads another way: `all`, `required` and `optional` with
/// [`read_all_properties`] (every property), the others with [`read_values`].
pub async fn read_multiple_or_fallback<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: impl Into<DeviceAddress<A>>,
    specifications: Vec<ReadAccessSpecification>,
) -> Result<Vec<ObjectReadings>, ClientError> {
    let to = to.into();
    match client.read_multiple(to, specifications.clone()).await {
        Ok(results) => return Ok(readings_of(results)),
        Err(error) if falls_back(&error) => {}
        Err(error) => return Err(error),
    }
    let mut out = Vec::new();
    for specification in specifications {
        let (groups, single): (Vec<&PropertyReference>, Vec<&PropertyReference>) =
            specification.properties.iter().partition(|p| {
                matches!(
                    p.property,
                    PropertyIdentifier::All
                        | PropertyIdentifier::Required
                        | PropertyIdentifier::Optional
                )
            });
        let mut readings = Vec::new();
        if !groups.is_empty() {
            match read_all_properties(client, to, specification.object).await {
                Ok(all) => readings.extend(all.readings),
                Err(error) => readings.push(PropertyReading {
                    property: groups[0].property,
                    array_index: None,
                    result: Err(error),
                }),
            }
        }
        if !single.is_empty() {
            let single: Vec<PropertyReference> = single.into_iter().copied().collect();
            let mut values =
                read_values(client, to, &[specification.object], &single, &|_| {}).await;
            if let Some(values) = values.pop() {
                readings.extend(values.readings);
            }
        }
        out.push(ObjectReadings {
            object: specification.object,
            readings,
        });
    }
    Ok(out)
}

/// True when `error` says the object does not exist.
fn is_unknown_object(error: &ClientError) -> bool {
    matches!(error, ClientError::Error { error, .. }
        if error.code == crate::enums::ErrorCode::UnknownObject)
}

/// True when a ReadPropertyMultiple failed in a way another kind of read may avoid.
fn falls_back(error: &ClientError) -> bool {
    read_plan::is_unsupported_service(error)
        || read_plan::is_segmentation_failure(error)
        || matches!(error, ClientError::Abort { .. } | ClientError::Reject(_))
}

/// ReadPropertyMultiple results as [`ObjectReadings`].
fn readings_of(results: Vec<crate::services::ReadAccessResult>) -> Vec<ObjectReadings> {
    results
        .into_iter()
        .map(|object| ObjectReadings {
            object: object.object,
            readings: object
                .results
                .into_iter()
                .map(|r| PropertyReading {
                    property: r.property,
                    array_index: r.array_index,
                    result: match r.result {
                        ReadResult::Value(value) => Ok(value),
                        ReadResult::Error(error) => Err(ClientError::Error {
                            service: crate::apdu::ConfirmedServiceChoice::ReadPropertyMultiple,
                            error,
                        }),
                    },
                })
                .collect(),
        })
        .collect()
}
