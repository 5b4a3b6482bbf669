//! The Device object (Clause 12.11): its configuration (the `BACnetServicesSupported`
//! bits are [`crate::enums::ServiceSupported`]), and the protocol-services/object-types-supported bit strings.
//!
//! Protocol revision: 24, the revision that brought the object-type list up to
//! color-temperature (64) and the services list up to you-are (48), matching the
//! [`ObjectType`] table of this crate; the two bit strings therefore carry 65 and 49 bits.
//! Object-list, database-revision, local-date and local-time are answered by the
//! [`super::database::ObjectDatabase`] that holds the device.

use super::object::Object;
use super::value::PropertyData;
use crate::encoding::{ApplicationValue, BitString, Date, ObjectIdentifier, Time};
use crate::enums::{ObjectType, PropertyIdentifier, Segmentation};

/// Protocol-version property value (always 1).
pub const PROTOCOL_VERSION: u64 = 1;
/// Protocol-revision this implementation claims (see the module doc).
pub const PROTOCOL_REVISION: u64 = 24;
/// Bits in protocol-object-types-supported at [`PROTOCOL_REVISION`] (types 0..=64).
pub const OBJECT_TYPES_SUPPORTED_BITS: usize = 65;
/// Bits in protocol-services-supported at [`PROTOCOL_REVISION`] (services 0..=48).
pub const SERVICES_SUPPORTED_BITS: usize = 49;
/// Largest APDU a BACnet/IP device can accept (Clause 20.1.2.5).
pub const MAX_APDU_LENGTH: u32 = 1476;

/// Object types this crate can build and serve (the true bits of
/// protocol-object-types-supported).
pub const SUPPORTED_OBJECT_TYPES: &[ObjectType] = &[
    ObjectType::AnalogInput,
    ObjectType::AnalogOutput,
    ObjectType::AnalogValue,
    ObjectType::BinaryInput,
    ObjectType::BinaryOutput,
    ObjectType::BinaryValue,
    ObjectType::Calendar,
    ObjectType::Device,
    ObjectType::MultiStateInput,
    ObjectType::NotificationClass,
    ObjectType::Schedule,
    ObjectType::MultiStateValue,
    ObjectType::TrendLog,
];

pub use crate::enums::ServiceSupported;

/// Services the device server answers: property access, lists, ReadRange, COV
/// subscriptions, device management and discovery.
/// The application sets [`DeviceConfig::services`] to what its dispatcher really answers.
pub const DEFAULT_SERVICES: &[ServiceSupported] = &[
    ServiceSupported::SubscribeCov,
    ServiceSupported::AddListElement,
    ServiceSupported::RemoveListElement,
    ServiceSupported::ReadProperty,
    ServiceSupported::ReadPropertyMultiple,
    ServiceSupported::WriteProperty,
    ServiceSupported::WritePropertyMultiple,
    ServiceSupported::IAm,
    ServiceSupported::IHave,
    ServiceSupported::WhoHas,
    ServiceSupported::WhoIs,
    ServiceSupported::DeviceCommunicationControl,
    ServiceSupported::ReinitializeDevice,
    ServiceSupported::TimeSynchronization,
    ServiceSupported::ReadRange,
    ServiceSupported::UtcTimeSynchronization,
    ServiceSupported::SubscribeCovProperty,
];

/// Everything configurable about the Device object.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceConfig {
    /// Device instance (0..=4194302).
    pub instance: u32,
    /// object-name (unique in the internetwork).
    pub name: String,
    /// description.
    pub description: String,
    /// location.
    pub location: String,
    /// vendor-name.
    pub vendor_name: String,
    /// vendor-identifier (ASHRAE-assigned).
    pub vendor_identifier: u16,
    /// model-name.
    pub model_name: String,
    /// firmware-revision.
    pub firmware_revision: String,
    /// application-software-version.
    pub application_software_version: String,
    /// max-apdu-length-accepted.
    pub max_apdu_length_accepted: u32,
    /// segmentation-supported.
    pub segmentation: Segmentation,
    /// max-segments-accepted (present when segmentation is supported).
    pub max_segments_accepted: u32,
    /// apdu-timeout in milliseconds.
    pub apdu_timeout: u32,
    /// number-of-apdu-retries.
    pub number_of_apdu_retries: u32,
    /// The services whose bits are set in protocol-services-supported.
    pub services: Vec<ServiceSupported>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        Self {
            instance: 1,
            name: "buildwire".to_owned(),
            description: String::new(),
            location: String::new(),
            vendor_name: "buildwire".to_owned(),
            vendor_identifier: 0,
            model_name: "buildwire".to_owned(),
            firmware_revision: env!("CARGO_PKG_VERSION").to_owned(),
            application_software_version: env!("CARGO_PKG_VERSION").to_owned(),
            max_apdu_length_accepted: MAX_APDU_LENGTH,
            segmentation: Segmentation::NoSegmentation,
            max_segments_accepted: 16,
            apdu_timeout: 3000,
            number_of_apdu_retries: 3,
            services: DEFAULT_SERVICES.to_vec(),
        }
    }
}

/// Required properties of the Device object (Clause 12.11, 135-2020 table 12-13).
pub const DEVICE_REQUIRED: &[PropertyIdentifier] = &[
    PropertyIdentifier::SystemStatus,
    PropertyIdentifier::VendorName,
    PropertyIdentifier::VendorIdentifier,
    PropertyIdentifier::ModelName,
    PropertyIdentifier::FirmwareRevision,
    PropertyIdentifier::ApplicationSoftwareVersion,
    PropertyIdentifier::ProtocolVersion,
    PropertyIdentifier::ProtocolRevision,
    PropertyIdentifier::ProtocolServicesSupported,
    PropertyIdentifier::ProtocolObjectTypesSupported,
    PropertyIdentifier::ObjectList,
    PropertyIdentifier::MaxApduLengthAccepted,
    PropertyIdentifier::SegmentationSupported,
    PropertyIdentifier::ApduTimeout,
    PropertyIdentifier::NumberOfApduRetries,
    PropertyIdentifier::DeviceAddressBinding,
    PropertyIdentifier::DatabaseRevision,
];

/// protocol-services-supported for `services`.
pub fn services_supported_bits(services: &[ServiceSupported]) -> BitString {
    let mut bits = BitString::with_len(SERVICES_SUPPORTED_BITS);
    for service in services {
        if let Ok(bit) = usize::try_from(service.to_u32())
            && bit < SERVICES_SUPPORTED_BITS
        {
            bits.set(bit, true);
        }
    }
    bits
}

/// protocol-object-types-supported: the bits of [`SUPPORTED_OBJECT_TYPES`].
pub fn object_types_supported_bits() -> BitString {
    let mut bits = BitString::with_len(OBJECT_TYPES_SUPPORTED_BITS);
    for object_type in SUPPORTED_OBJECT_TYPES {
        if let Ok(bit) = usize::try_from(object_type.to_u32()) {
            bits.set(bit, true);
        }
    }
    bits
}

impl DeviceConfig {
    /// The device's object identifier.
    pub const fn identifier(&self) -> ObjectIdentifier {
        ObjectIdentifier::new(ObjectType::Device, self.instance)
    }

    /// Builds the Device object. Object-list, database-revision, local-date and
    /// local-time hold placeholders that the database answers for.
    pub fn build(&self) -> Object {
        use ApplicationValue as V;
        use PropertyIdentifier as P;
        let text = PropertyData::text;
        let unsigned = |n: u32| PropertyData::Single(V::Unsigned(u64::from(n)));
        let mut device = Object::new(self.identifier(), &self.name)
            // system-status: operational (0).
            .with(P::SystemStatus, PropertyData::Single(V::Enumerated(0)))
            .with(P::VendorName, text(&self.vendor_name))
            .with(
                P::VendorIdentifier,
                unsigned(u32::from(self.vendor_identifier)),
            )
            .with(P::ModelName, text(&self.model_name))
            .with(P::FirmwareRevision, text(&self.firmware_revision))
            .with(
                P::ApplicationSoftwareVersion,
                text(&self.application_software_version),
            )
            .with(P::Description, text(&self.description))
            .with(P::Location, text(&self.location))
            .with(
                P::ProtocolVersion,
                PropertyData::Single(V::Unsigned(PROTOCOL_VERSION)),
            )
            .with(
                P::ProtocolRevision,
                PropertyData::Single(V::Unsigned(PROTOCOL_REVISION)),
            )
            .with(
                P::ProtocolServicesSupported,
                PropertyData::Single(V::BitString(services_supported_bits(&self.services))),
            )
            .with(
                P::ProtocolObjectTypesSupported,
                PropertyData::Single(V::BitString(object_types_supported_bits())),
            )
            .with(P::ObjectList, PropertyData::Array(Vec::new()))
            .with(
                P::MaxApduLengthAccepted,
                unsigned(self.max_apdu_length_accepted),
            )
            .with(
                P::SegmentationSupported,
                PropertyData::Single(V::Enumerated(self.segmentation.to_u32())),
            );
        if self.segmentation != Segmentation::NoSegmentation {
            device = device
                .with(P::MaxSegmentsAccepted, unsigned(self.max_segments_accepted))
                .require(&[P::MaxSegmentsAccepted]);
        }
        device
            .with(P::ApduTimeout, unsigned(self.apdu_timeout))
            .with(
                P::NumberOfApduRetries,
                unsigned(self.number_of_apdu_retries),
            )
            .with(P::DeviceAddressBinding, PropertyData::List(Vec::new()))
            .with(P::DatabaseRevision, unsigned(0))
            .with(P::LocalDate, PropertyData::Single(V::Date(Date::ANY)))
            .with(P::LocalTime, PropertyData::Single(V::Time(Time::ANY)))
            .require(DEVICE_REQUIRED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::PrimitiveValue;

    #[test]
    fn default_services_bit_string_bytes() {
        // Bits 5 (SubscribeCOV), 8, 9 (Add/RemoveListElement), 12, 14, 15, 16 (RP, RPM,
        // WP, WPM), 17 (DCC), 20 (ReinitializeDevice), 26, 27 (I-Am, I-Have), 32
        // (TimeSynchronization), 33, 34 (Who-Has, Who-Is), 35 (ReadRange), 36
        // (UTCTimeSynchronization), 38 (SubscribeCOVProperty) of 49; bit 0 is the first
        // octet's most significant bit (Clause 20.2.10), 7 unused bits in the last octet.
        let mut buf = Vec::new();
        services_supported_bits(DEFAULT_SERVICES).encode_application(&mut buf);
        assert_eq!(
            buf,
            [0x85, 0x08, 0x07, 0x04, 0xCB, 0xC8, 0x30, 0xFA, 0x00, 0x00]
        );
    }

    #[test]
    fn object_types_bit_string() {
        let bits = object_types_supported_bits();
        assert_eq!(bits.len(), OBJECT_TYPES_SUPPORTED_BITS);
        let set: Vec<usize> = (0..bits.len()).filter(|i| bits.get(*i)).collect();
        assert_eq!(set, [0, 1, 2, 3, 4, 5, 6, 8, 13, 15, 17, 19, 20]);
    }

    #[test]
    fn segmentation_adds_max_segments_accepted() {
        let plain = DeviceConfig::default().build();
        assert!(!plain.has(PropertyIdentifier::MaxSegmentsAccepted));
        let segmented = DeviceConfig {
            segmentation: Segmentation::SegmentedBoth,
            ..DeviceConfig::default()
        }
        .build();
        assert!(segmented.has(PropertyIdentifier::MaxSegmentsAccepted));
        assert!(
            segmented
                .select(super::super::object::PropertySelection::Required)
                .contains(&PropertyIdentifier::MaxSegmentsAccepted)
        );
    }
}
