//! [`Enumeration`]: the enumerations whose values are printed by name (command line, JSON,
//! Python), as one list, so that every edge names the same tables the same way.

use super::{
    AbortReason, BinaryPv, DeviceStatus, EngineeringUnits, ErrorClass, ErrorCode, EventState,
    LoggingType, ObjectType, Polarity, PropertyIdentifier, RejectReason, Reliability, Segmentation,
    ServiceSupported,
};

/// One of the typed enumerations of this crate, chosen at run time (for example from the
/// property a value belongs to).
///
/// ```
/// use buildwire_bacnet::enums::Enumeration;
/// assert_eq!(Enumeration::EngineeringUnits.name(), "engineering-units");
/// assert_eq!(Enumeration::EngineeringUnits.value_name(64), Some("degrees-fahrenheit"));
/// assert_eq!(Enumeration::from_name("binary-pv"), Some(Enumeration::BinaryPv));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enumeration {
    /// `BACnetEngineeringUnits`.
    EngineeringUnits,
    /// `BACnetObjectType`.
    ObjectType,
    /// `BACnetPropertyIdentifier`.
    PropertyIdentifier,
    /// `BACnetEventState`.
    EventState,
    /// `BACnetReliability`.
    Reliability,
    /// `BACnetBinaryPV`.
    BinaryPv,
    /// `BACnetPolarity`.
    Polarity,
    /// `BACnetSegmentation`.
    Segmentation,
    /// `BACnetDeviceStatus`.
    DeviceStatus,
    /// `BACnetLoggingType`.
    LoggingType,
    /// Error class of an Error PDU.
    ErrorClass,
    /// Error code of an Error PDU.
    ErrorCode,
    /// Reason of a Reject PDU.
    RejectReason,
    /// Reason of an Abort PDU.
    AbortReason,
    /// Bit positions of `BACnetServicesSupported`.
    ServicesSupported,
}

/// Expands `$body` once per enumeration with `$t` bound to its Rust type.
macro_rules! each {
    ($value:expr, |$t:ident| $body:expr) => {
        match $value {
            Enumeration::EngineeringUnits => {
                type $t = EngineeringUnits;
                $body
            }
            Enumeration::ObjectType => {
                type $t = ObjectType;
                $body
            }
            Enumeration::PropertyIdentifier => {
                type $t = PropertyIdentifier;
                $body
            }
            Enumeration::EventState => {
                type $t = EventState;
                $body
            }
            Enumeration::Reliability => {
                type $t = Reliability;
                $body
            }
            Enumeration::BinaryPv => {
                type $t = BinaryPv;
                $body
            }
            Enumeration::Polarity => {
                type $t = Polarity;
                $body
            }
            Enumeration::Segmentation => {
                type $t = Segmentation;
                $body
            }
            Enumeration::DeviceStatus => {
                type $t = DeviceStatus;
                $body
            }
            Enumeration::LoggingType => {
                type $t = LoggingType;
                $body
            }
            Enumeration::ErrorClass => {
                type $t = ErrorClass;
                $body
            }
            Enumeration::ErrorCode => {
                type $t = ErrorCode;
                $body
            }
            Enumeration::RejectReason => {
                type $t = RejectReason;
                $body
            }
            Enumeration::AbortReason => {
                type $t = AbortReason;
                $body
            }
            Enumeration::ServicesSupported => {
                type $t = ServiceSupported;
                $body
            }
        }
    };
}

impl Enumeration {
    /// Every enumeration, in the order above.
    pub const ALL: [Self; 15] = [
        Self::EngineeringUnits,
        Self::ObjectType,
        Self::PropertyIdentifier,
        Self::EventState,
        Self::Reliability,
        Self::BinaryPv,
        Self::Polarity,
        Self::Segmentation,
        Self::DeviceStatus,
        Self::LoggingType,
        Self::ErrorClass,
        Self::ErrorCode,
        Self::RejectReason,
        Self::AbortReason,
        Self::ServicesSupported,
    ];

    /// The enumeration's hyphenated name (`"engineering-units"`), as JSON writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::EngineeringUnits => "engineering-units",
            Self::ObjectType => "object-type",
            Self::PropertyIdentifier => "property-identifier",
            Self::EventState => "event-state",
            Self::Reliability => "reliability",
            Self::BinaryPv => "binary-pv",
            Self::Polarity => "polarity",
            Self::Segmentation => "segmentation",
            Self::DeviceStatus => "device-status",
            Self::LoggingType => "logging-type",
            Self::ErrorClass => "error-class",
            Self::ErrorCode => "error-code",
            Self::RejectReason => "reject-reason",
            Self::AbortReason => "abort-reason",
            Self::ServicesSupported => "services-supported",
        }
    }

    /// The enumeration named `name` (as [`Self::name`] writes it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The standard name of `value`, or `None` when the table does not list it.
    pub fn value_name(self, value: u32) -> Option<&'static str> {
        each!(self, |T| T::from_u32(value).name())
    }

    /// Every listed value of the enumeration: its name and number, in table order.
    pub fn members(self) -> Vec<(&'static str, u32)> {
        each!(self, |T| T::ALL
            .iter()
            .filter_map(|v| v.name().map(|name| (name, v.to_u32())))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_enumeration_names_its_values_both_ways() {
        for enumeration in Enumeration::ALL {
            assert_eq!(
                Enumeration::from_name(enumeration.name()),
                Some(enumeration)
            );
            let members = enumeration.members();
            assert!(!members.is_empty(), "{enumeration:?}");
            for (name, number) in members {
                assert_eq!(enumeration.value_name(number), Some(name));
            }
        }
        assert_eq!(
            Enumeration::EngineeringUnits.value_name(62),
            Some("degrees-celsius")
        );
        assert_eq!(Enumeration::ObjectType.value_name(0), Some("analog-input"));
        assert_eq!(Enumeration::BinaryPv.value_name(1), Some("active"));
        assert_eq!(
            Enumeration::DeviceStatus.value_name(1),
            Some("operational-read-only")
        );
        assert_eq!(
            Enumeration::ServicesSupported.value_name(35),
            Some("read-range")
        );
        assert_eq!(
            Enumeration::ErrorCode.value_name(31),
            Some("unknown-object")
        );
        assert_eq!(Enumeration::EngineeringUnits.value_name(50_000), None);
    }
}
