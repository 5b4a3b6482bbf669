//! The sans-IO half of whole-site discovery: how a Who-Is sweep is cut into instance
//! ranges, how I-Am answers are deduplicated, which properties make a "point" and how
//! their values become one [`Point`]. The async half, which sends the requests, is
//! [`crate::driver::discovery`].
//!
//! ```
//! use buildwire_bacnet::app::discovery::{DeviceDirectory, instance_ranges};
//!
//! // Instances 0..=2499 asked in ranges of 1000: three Who-Is.
//! let ranges = instance_ranges(0, 2499, 1000);
//! assert_eq!(ranges.len(), 3);
//! assert_eq!((ranges[2].low(), ranges[2].high()), (2000, 2499));
//!
//! let mut directory: DeviceDirectory<&str> = DeviceDirectory::default();
//! # use buildwire_bacnet::services::IAm;
//! # use buildwire_bacnet::{ObjectIdentifier, ObjectType};
//! # use buildwire_bacnet::enums::Segmentation;
//! # let i_am = IAm { device: ObjectIdentifier::new(ObjectType::Device, 7),
//! #     max_apdu_length_accepted: 1476,
//! #     segmentation_supported: Segmentation::SegmentedBoth, vendor_id: 15 };
//! assert!(directory.insert("10.0.0.7:47808", i_am));
//! // The same device answering twice (two Who-Is, two paths) is one device.
//! assert!(!directory.insert("10.0.0.7:47808", i_am));
//! assert_eq!(directory.len(), 1);
//! ```

use std::collections::BTreeMap;

use crate::encoding::object_identifier::MAX_INSTANCE;
use crate::encoding::{ApplicationValue, Element, ObjectIdentifier};
use crate::enums::{ObjectType, PropertyIdentifier};
use crate::services::{IAm, InstanceRange};

use super::client::ClientError;

/// Highest instance a device may have: 4194303 is the "any device" wildcard.
pub const MAX_DEVICE_INSTANCE: u32 = MAX_INSTANCE - 1;

/// The instance ranges of a paced Who-Is sweep: `low..=high` cut into ranges of at most
/// `size` instances (a `size` of 0 is taken as 1). Limits above 4194303 are clamped;
/// `low > high` gives no range.
pub fn instance_ranges(low: u32, high: u32, size: u32) -> Vec<InstanceRange> {
    let high = high.min(MAX_INSTANCE);
    let size = size.max(1);
    let mut out = Vec::new();
    let mut start = low;
    while start <= high {
        let end = start.saturating_add(size - 1).min(high);
        if let Some(range) = InstanceRange::new(start, end) {
            out.push(range);
        }
        match end.checked_add(1) {
            Some(next) => start = next,
            None => break,
        }
    }
    out
}

/// One device found by Who-Is.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundDevice<A> {
    /// Where it answered from first.
    pub address: A,
    /// Its I-Am.
    pub i_am: IAm,
    /// Other addresses the same device instance answered from (two paths to one device,
    /// or two devices configured with one instance: either way worth a look).
    pub also_at: Vec<A>,
}

/// The devices that answered, one entry per device instance.
#[derive(Debug, Clone)]
pub struct DeviceDirectory<A> {
    devices: BTreeMap<u32, FoundDevice<A>>,
    answers: u64,
}

impl<A> Default for DeviceDirectory<A> {
    fn default() -> Self {
        Self {
            devices: BTreeMap::new(),
            answers: 0,
        }
    }
}

impl<A: PartialEq + Clone> DeviceDirectory<A> {
    /// Records an I-Am from `address`; true when the device instance is new.
    pub fn insert(&mut self, address: A, i_am: IAm) -> bool {
        self.answers += 1;
        let instance = i_am.device.instance();
        match self.devices.get_mut(&instance) {
            Some(found) => {
                if found.address != address && !found.also_at.contains(&address) {
                    found.also_at.push(address);
                }
                false
            }
            None => {
                self.devices.insert(
                    instance,
                    FoundDevice {
                        address,
                        i_am,
                        also_at: Vec::new(),
                    },
                );
                true
            }
        }
    }

    /// How many distinct devices answered.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// True when nobody answered.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// How many I-Ams were recorded, duplicates included.
    pub fn answers(&self) -> u64 {
        self.answers
    }

    /// The devices, by instance.
    pub fn into_devices(self) -> Vec<FoundDevice<A>> {
        self.devices.into_values().collect()
    }
}

/// The properties read for every point: [`Point`] has one field for each.
pub const POINT_PROPERTIES: [PropertyIdentifier; 7] = [
    PropertyIdentifier::ObjectName,
    PropertyIdentifier::Description,
    PropertyIdentifier::PresentValue,
    PropertyIdentifier::Units,
    PropertyIdentifier::StatusFlags,
    PropertyIdentifier::OutOfService,
    PropertyIdentifier::PriorityArray,
];

/// The properties read one by one when a device answers neither ReadPropertyMultiple
/// with `all` nor a property-list: the ones most objects have (Clause 12).
pub const COMMON_PROPERTIES: [PropertyIdentifier; 14] = [
    PropertyIdentifier::ObjectIdentifier,
    PropertyIdentifier::ObjectName,
    PropertyIdentifier::ObjectType,
    PropertyIdentifier::Description,
    PropertyIdentifier::PresentValue,
    PropertyIdentifier::StatusFlags,
    PropertyIdentifier::EventState,
    PropertyIdentifier::Reliability,
    PropertyIdentifier::OutOfService,
    PropertyIdentifier::Units,
    PropertyIdentifier::PriorityArray,
    PropertyIdentifier::RelinquishDefault,
    PropertyIdentifier::CovIncrement,
    PropertyIdentifier::PropertyList,
];

/// One property read: its value or why it could not be read.
pub type Reading = Result<Vec<Element>, ClientError>;

/// One object of a device as a points list shows it. A property the object does not
/// have (or that could not be read) is `None` here; its error is kept in `errors`.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The object.
    pub object: ObjectIdentifier,
    /// object-name.
    pub name: Option<String>,
    /// description.
    pub description: Option<String>,
    /// present-value, as read.
    pub present_value: Option<Vec<Element>>,
    /// units, as read (an engineering-units enumeration).
    pub units: Option<Vec<Element>>,
    /// status-flags, as read (in-alarm, fault, overridden, out-of-service).
    pub status_flags: Option<Vec<Element>>,
    /// out-of-service.
    pub out_of_service: Option<bool>,
    /// True when the object has a priority-array (it is commandable).
    pub commandable: bool,
    /// The properties that failed, with their errors, except the "unknown-property"
    /// answers of properties the object simply does not have.
    pub errors: Vec<(PropertyIdentifier, ClientError)>,
}

impl Point {
    /// Builds a point from the readings of [`POINT_PROPERTIES`], in that order (the
    /// priority-array is read as its length, index 0).
    pub fn from_readings(object: ObjectIdentifier, readings: &[Reading]) -> Self {
        let mut point = Self {
            object,
            name: None,
            description: None,
            present_value: None,
            units: None,
            status_flags: None,
            out_of_service: None,
            commandable: false,
            errors: Vec::new(),
        };
        for (property, reading) in POINT_PROPERTIES.iter().zip(readings) {
            let value = match reading {
                Ok(value) => value,
                Err(error) => {
                    if !is_missing_property(error) {
                        point.errors.push((*property, error.clone()));
                    }
                    continue;
                }
            };
            match property {
                PropertyIdentifier::ObjectName => point.name = text_of(value),
                PropertyIdentifier::Description => point.description = text_of(value),
                PropertyIdentifier::PresentValue => point.present_value = Some(value.clone()),
                PropertyIdentifier::Units => point.units = Some(value.clone()),
                PropertyIdentifier::StatusFlags => point.status_flags = Some(value.clone()),
                PropertyIdentifier::OutOfService => {
                    point.out_of_service = match value.as_slice() {
                        [Element::Application(ApplicationValue::Boolean(b))] => Some(*b),
                        _ => None,
                    }
                }
                PropertyIdentifier::PriorityArray => point.commandable = true,
                _ => {}
            }
        }
        point
    }
}

/// True when `error` only says the object has no such property (or the device does not
/// know it): a gap, not a failure.
pub fn is_missing_property(error: &ClientError) -> bool {
    use crate::enums::ErrorCode;
    matches!(error, ClientError::Error { error, .. }
        if matches!(error.code, ErrorCode::UnknownProperty | ErrorCode::PropertyIsNotAnArray))
}

fn text_of(value: &[Element]) -> Option<String> {
    match value {
        [Element::Application(ApplicationValue::CharacterString(s))] => Some(s.clone()),
        _ => None,
    }
}

/// The objects of an object-list reading, without the device itself first when
/// `skip_device` (a points list shows the device's objects, not the device).
pub fn objects_of(list: &[Element], skip_device: bool) -> Vec<ObjectIdentifier> {
    list.iter()
        .filter_map(|element| match element {
            Element::Application(ApplicationValue::ObjectIdentifier(id)) => Some(*id),
            _ => None,
        })
        .filter(|id| !(skip_device && id.object_type() == ObjectType::Device))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apdu::{BacnetError, ConfirmedServiceChoice};
    use crate::enums::{ErrorClass, ErrorCode, Segmentation};

    fn i_am(instance: u32) -> IAm {
        IAm {
            device: ObjectIdentifier::new(ObjectType::Device, instance),
            max_apdu_length_accepted: 480,
            segmentation_supported: Segmentation::NoSegmentation,
            vendor_id: 260,
        }
    }

    #[test]
    fn ranges_cover_every_instance_once() {
        let ranges = instance_ranges(10, 35, 10);
        let limits: Vec<_> = ranges.iter().map(|r| (r.low(), r.high())).collect();
        assert_eq!(limits, vec![(10, 19), (20, 29), (30, 35)]);
        assert!(instance_ranges(5, 4, 10).is_empty());
        let all = instance_ranges(0, u32::MAX, 1 << 20);
        assert_eq!(all.len(), 4);
        assert_eq!(all[3].high(), MAX_INSTANCE);
        assert_eq!(instance_ranges(7, 7, 0).len(), 1);
    }

    #[test]
    fn directory_keeps_one_entry_per_instance() {
        let mut directory = DeviceDirectory::default();
        assert!(directory.insert(1u8, i_am(100)));
        assert!(!directory.insert(1u8, i_am(100)));
        assert!(!directory.insert(2u8, i_am(100)));
        assert!(directory.insert(3u8, i_am(5)));
        assert_eq!(directory.answers(), 4);
        let devices = directory.into_devices();
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[0].i_am.device.instance(), 5);
        assert_eq!(devices[1].also_at, vec![2u8]);
    }

    #[test]
    fn points_keep_real_errors_and_drop_missing_properties() {
        let missing = Err(ClientError::Error {
            service: ConfirmedServiceChoice::ReadPropertyMultiple,
            error: BacnetError {
                class: ErrorClass::Property,
                code: ErrorCode::UnknownProperty,
            },
        });
        let object = ObjectIdentifier::new(ObjectType::AnalogInput, 1);
        let name = Element::Application(ApplicationValue::CharacterString("OAT".into()));
        let readings = vec![
            Ok(vec![name]),
            missing.clone(),
            Ok(vec![Element::Application(ApplicationValue::Real(12.5))]),
            Err(ClientError::Timeout),
            missing.clone(),
            Ok(vec![Element::Application(ApplicationValue::Boolean(false))]),
            missing,
        ];
        let point = Point::from_readings(object, &readings);
        assert_eq!(point.name.as_deref(), Some("OAT"));
        assert_eq!(point.description, None);
        assert_eq!(point.out_of_service, Some(false));
        assert!(!point.commandable);
        assert_eq!(
            point.errors,
            vec![(PropertyIdentifier::Units, ClientError::Timeout)]
        );
    }

    #[test]
    fn object_lists_skip_the_device_on_request() {
        let list = vec![
            Element::Application(ApplicationValue::ObjectIdentifier(ObjectIdentifier::new(
                ObjectType::Device,
                1,
            ))),
            Element::Application(ApplicationValue::ObjectIdentifier(ObjectIdentifier::new(
                ObjectType::AnalogValue,
                2,
            ))),
        ];
        assert_eq!(objects_of(&list, false).len(), 2);
        assert_eq!(
            objects_of(&list, true),
            vec![ObjectIdentifier::new(ObjectType::AnalogValue, 2)]
        );
    }
}
