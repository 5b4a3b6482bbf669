//! Confirmed and unconfirmed service parameters (Clauses 13-16), one file per service.
//!
//! Each service type encodes and decodes only its parameters, i.e. the `payload` of the
//! APDU (see [`crate::apdu::Apdu`]). [`ConfirmedRequest`], [`UnconfirmedRequest`] and
//! [`ComplexAckParameters`] pick the right type from the service choice and check that
//! the parameters fill the payload; their errors tell a server which Reject reason to
//! answer with ([`reject_reason_for`]).
//!
//! ```
//! use buildwire_bacnet::Reader;
//! use buildwire_bacnet::apdu::ConfirmedServiceChoice;
//! use buildwire_bacnet::enums::RejectReason;
//! use buildwire_bacnet::services::{ConfirmedRequest, reject_reason_for};
//!
//! // ReadProperty of analog-input 5, present-value (Annex F.3.5).
//! let payload = [0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55];
//! let request =
//!     ConfirmedRequest::decode(ConfirmedServiceChoice::ReadProperty, &mut Reader::new(&payload))
//!         .unwrap();
//! assert!(matches!(request, ConfirmedRequest::ReadProperty(_)));
//!
//! // The same request cut short: the server rejects it.
//! let err = ConfirmedRequest::decode(
//!     ConfirmedServiceChoice::ReadProperty,
//!     &mut Reader::new(&payload[..5]),
//! )
//! .unwrap_err();
//! assert_eq!(reject_reason_for(&err), RejectReason::MissingRequiredParameter);
//! ```

pub(crate) mod cov_notification;
pub(crate) mod device_communication_control;
pub(crate) mod error;
pub(crate) mod list_element;
mod password;
pub(crate) mod read_property;
pub(crate) mod read_property_multiple;
pub(crate) mod read_range;
pub(crate) mod reinitialize_device;
pub(crate) mod sequence_of;
pub(crate) mod subscribe_cov;
pub(crate) mod subscribe_cov_property;
pub(crate) mod time_synchronization;
pub(crate) mod who_has;
pub mod who_is;
pub(crate) mod write_property;
pub(crate) mod write_property_multiple;

pub use cov_notification::CovNotificationRequest;
pub use device_communication_control::DeviceCommunicationControlRequest;
pub use error::{ServiceDecodeError, ServiceError, reject_reason_for};
pub use list_element::{ChangeListError, ListElementRequest};
pub use password::MAX_PASSWORD_CHARS;
pub use read_property::{ReadPropertyAck, ReadPropertyRequest};
pub use read_property_multiple::{
    PropertyReadResult, PropertyReference, ReadAccessResult, ReadAccessSpecification,
    ReadPropertyMultipleAck, ReadPropertyMultipleRequest, ReadResult,
};
pub use read_range::{RangeSpec, ReadRangeAck, ReadRangeRequest, ResultFlags};
pub use reinitialize_device::ReinitializeDeviceRequest;
pub use sequence_of::{MAX_ACCESS_SPECIFICATIONS, MAX_PROPERTIES_PER_OBJECT};
pub use subscribe_cov::SubscribeCovRequest;
pub use subscribe_cov_property::SubscribeCovPropertyRequest;
pub use time_synchronization::TimeSynchronizationRequest;
pub use who_has::{IHave, WhoHas, WhoHasObject};
pub use who_is::{IAm, InstanceRange, WhoIs};
pub use write_property::{MINIMUM_ON_OFF_PRIORITY, WritePropertyRequest};
pub use write_property_multiple::{
    WriteAccessSpecification, WritePropertyMultipleError, WritePropertyMultipleRequest,
};

use crate::apdu::{ConfirmedServiceChoice, UnconfirmedServiceChoice};
use crate::encoding::Reader;

/// Service choices are one octet on the wire; larger numbers never come from a decoder.
fn choice_octet(choice: u32) -> u8 {
    u8::try_from(choice).unwrap_or(u8::MAX)
}

/// The parameters of a confirmed request this crate decodes.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfirmedRequest {
    /// ReadProperty (12).
    ReadProperty(ReadPropertyRequest),
    /// ReadPropertyMultiple (14).
    ReadPropertyMultiple(ReadPropertyMultipleRequest),
    /// WriteProperty (15).
    WriteProperty(WritePropertyRequest),
    /// WritePropertyMultiple (16).
    WritePropertyMultiple(WritePropertyMultipleRequest),
    /// ConfirmedCOVNotification (1).
    ConfirmedCovNotification(CovNotificationRequest),
    /// SubscribeCOV (5).
    SubscribeCov(SubscribeCovRequest),
    /// AddListElement (8).
    AddListElement(ListElementRequest),
    /// RemoveListElement (9).
    RemoveListElement(ListElementRequest),
    /// DeviceCommunicationControl (17).
    DeviceCommunicationControl(DeviceCommunicationControlRequest),
    /// ReinitializeDevice (20).
    ReinitializeDevice(ReinitializeDeviceRequest),
    /// ReadRange (26).
    ReadRange(ReadRangeRequest),
    /// SubscribeCOVProperty (28).
    SubscribeCovProperty(SubscribeCovPropertyRequest),
}

impl ConfirmedRequest {
    /// The service choice that goes in the APDU header.
    pub fn service_choice(&self) -> ConfirmedServiceChoice {
        match self {
            Self::ReadProperty(_) => ConfirmedServiceChoice::ReadProperty,
            Self::ReadPropertyMultiple(_) => ConfirmedServiceChoice::ReadPropertyMultiple,
            Self::WriteProperty(_) => ConfirmedServiceChoice::WriteProperty,
            Self::WritePropertyMultiple(_) => ConfirmedServiceChoice::WritePropertyMultiple,
            Self::ConfirmedCovNotification(_) => ConfirmedServiceChoice::ConfirmedCovNotification,
            Self::SubscribeCov(_) => ConfirmedServiceChoice::SubscribeCov,
            Self::AddListElement(_) => ConfirmedServiceChoice::AddListElement,
            Self::RemoveListElement(_) => ConfirmedServiceChoice::RemoveListElement,
            Self::DeviceCommunicationControl(_) => {
                ConfirmedServiceChoice::DeviceCommunicationControl
            }
            Self::ReinitializeDevice(_) => ConfirmedServiceChoice::ReinitializeDevice,
            Self::ReadRange(_) => ConfirmedServiceChoice::ReadRange,
            Self::SubscribeCovProperty(_) => ConfirmedServiceChoice::SubscribeCovProperty,
        }
    }

    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::ReadProperty(request) => request.encode(buf),
            Self::ReadPropertyMultiple(request) => request.encode(buf),
            Self::WriteProperty(request) => request.encode(buf),
            Self::WritePropertyMultiple(request) => request.encode(buf),
            Self::ConfirmedCovNotification(request) => request.encode(buf),
            Self::SubscribeCov(request) => request.encode(buf),
            Self::AddListElement(request) | Self::RemoveListElement(request) => {
                request.encode(buf);
            }
            Self::DeviceCommunicationControl(request) => request.encode(buf),
            Self::ReinitializeDevice(request) => request.encode(buf),
            Self::ReadRange(request) => request.encode(buf),
            Self::SubscribeCovProperty(request) => request.encode(buf),
        }
    }

    /// Decodes the parameters of `service`; they must fill the rest of `reader`
    /// (left-over bytes are `TrailingData`, i.e. too-many-arguments). Services this crate
    /// does not decode give [`ServiceDecodeError::UnrecognizedService`].
    pub fn decode(
        service: ConfirmedServiceChoice,
        reader: &mut Reader<'_>,
    ) -> Result<Self, ServiceDecodeError> {
        let request = match service {
            ConfirmedServiceChoice::ReadProperty => {
                Self::ReadProperty(ReadPropertyRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::ReadPropertyMultiple => {
                Self::ReadPropertyMultiple(ReadPropertyMultipleRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::WriteProperty => {
                Self::WriteProperty(WritePropertyRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::WritePropertyMultiple => {
                Self::WritePropertyMultiple(WritePropertyMultipleRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::ConfirmedCovNotification => {
                Self::ConfirmedCovNotification(CovNotificationRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::SubscribeCov => {
                Self::SubscribeCov(SubscribeCovRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::AddListElement => {
                Self::AddListElement(ListElementRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::RemoveListElement => {
                Self::RemoveListElement(ListElementRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::DeviceCommunicationControl => {
                Self::DeviceCommunicationControl(DeviceCommunicationControlRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::ReinitializeDevice => {
                Self::ReinitializeDevice(ReinitializeDeviceRequest::decode(reader)?)
            }
            ConfirmedServiceChoice::ReadRange => Self::ReadRange(ReadRangeRequest::decode(reader)?),
            ConfirmedServiceChoice::SubscribeCovProperty => {
                Self::SubscribeCovProperty(SubscribeCovPropertyRequest::decode(reader)?)
            }
            other => {
                return Err(ServiceDecodeError::UnrecognizedService {
                    choice: choice_octet(other.to_u32()),
                });
            }
        };
        reader.expect_end()?;
        Ok(request)
    }
}

/// The parameters of an unconfirmed request this crate decodes.
#[derive(Debug, Clone, PartialEq)]
pub enum UnconfirmedRequest {
    /// I-Am (0).
    IAm(IAm),
    /// I-Have (1).
    IHave(IHave),
    /// Who-Has (7).
    WhoHas(WhoHas),
    /// Who-Is (8).
    WhoIs(WhoIs),
    /// UnconfirmedCOVNotification (2).
    UnconfirmedCovNotification(CovNotificationRequest),
    /// TimeSynchronization (6).
    TimeSynchronization(TimeSynchronizationRequest),
    /// UTCTimeSynchronization (9).
    UtcTimeSynchronization(TimeSynchronizationRequest),
}

impl UnconfirmedRequest {
    /// The service choice that goes in the APDU header.
    pub fn service_choice(&self) -> UnconfirmedServiceChoice {
        match self {
            Self::IAm(_) => UnconfirmedServiceChoice::IAm,
            Self::IHave(_) => UnconfirmedServiceChoice::IHave,
            Self::WhoHas(_) => UnconfirmedServiceChoice::WhoHas,
            Self::WhoIs(_) => UnconfirmedServiceChoice::WhoIs,
            Self::UnconfirmedCovNotification(_) => {
                UnconfirmedServiceChoice::UnconfirmedCovNotification
            }
            Self::TimeSynchronization(_) => UnconfirmedServiceChoice::TimeSynchronization,
            Self::UtcTimeSynchronization(_) => UnconfirmedServiceChoice::UtcTimeSynchronization,
        }
    }

    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::IAm(request) => request.encode(buf),
            Self::IHave(request) => request.encode(buf),
            Self::WhoHas(request) => request.encode(buf),
            Self::WhoIs(request) => request.encode(buf),
            Self::UnconfirmedCovNotification(request) => request.encode(buf),
            Self::TimeSynchronization(request) | Self::UtcTimeSynchronization(request) => {
                request.encode(buf);
            }
        }
    }

    /// Decodes the parameters of `service`; they must fill the rest of `reader`.
    /// Unconfirmed requests are never rejected on the wire: a receiver drops the ones
    /// that fail here.
    pub fn decode(
        service: UnconfirmedServiceChoice,
        reader: &mut Reader<'_>,
    ) -> Result<Self, ServiceDecodeError> {
        let request = match service {
            UnconfirmedServiceChoice::IAm => Self::IAm(IAm::decode(reader)?),
            UnconfirmedServiceChoice::IHave => Self::IHave(IHave::decode(reader)?),
            UnconfirmedServiceChoice::WhoHas => Self::WhoHas(WhoHas::decode(reader)?),
            UnconfirmedServiceChoice::WhoIs => Self::WhoIs(WhoIs::decode(reader)?),
            UnconfirmedServiceChoice::UnconfirmedCovNotification => {
                Self::UnconfirmedCovNotification(CovNotificationRequest::decode(reader)?)
            }
            UnconfirmedServiceChoice::TimeSynchronization => {
                Self::TimeSynchronization(TimeSynchronizationRequest::decode(reader)?)
            }
            UnconfirmedServiceChoice::UtcTimeSynchronization => {
                Self::UtcTimeSynchronization(TimeSynchronizationRequest::decode(reader)?)
            }
            other => {
                return Err(ServiceDecodeError::UnrecognizedService {
                    choice: choice_octet(other.to_u32()),
                });
            }
        };
        reader.expect_end()?;
        Ok(request)
    }
}

/// The parameters of a ComplexACK this crate decodes (services answered with SimpleACK
/// have none).
#[derive(Debug, Clone, PartialEq)]
pub enum ComplexAckParameters {
    /// ReadProperty-ACK.
    ReadProperty(ReadPropertyAck),
    /// ReadPropertyMultiple-ACK.
    ReadPropertyMultiple(ReadPropertyMultipleAck),
    /// ReadRange-ACK.
    ReadRange(ReadRangeAck),
}

impl ComplexAckParameters {
    /// The service choice that goes in the ComplexACK header.
    pub fn service_choice(&self) -> ConfirmedServiceChoice {
        match self {
            Self::ReadProperty(_) => ConfirmedServiceChoice::ReadProperty,
            Self::ReadPropertyMultiple(_) => ConfirmedServiceChoice::ReadPropertyMultiple,
            Self::ReadRange(_) => ConfirmedServiceChoice::ReadRange,
        }
    }

    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::ReadProperty(ack) => ack.encode(buf),
            Self::ReadPropertyMultiple(ack) => ack.encode(buf),
            Self::ReadRange(ack) => ack.encode(buf),
        }
    }

    /// Decodes the ACK parameters of `service`; they must fill the rest of `reader`.
    pub fn decode(
        service: ConfirmedServiceChoice,
        reader: &mut Reader<'_>,
    ) -> Result<Self, ServiceDecodeError> {
        let ack = match service {
            ConfirmedServiceChoice::ReadProperty => {
                Self::ReadProperty(ReadPropertyAck::decode(reader)?)
            }
            ConfirmedServiceChoice::ReadPropertyMultiple => {
                Self::ReadPropertyMultiple(ReadPropertyMultipleAck::decode(reader)?)
            }
            ConfirmedServiceChoice::ReadRange => Self::ReadRange(ReadRangeAck::decode(reader)?),
            other => {
                return Err(ServiceDecodeError::UnrecognizedService {
                    choice: choice_octet(other.to_u32()),
                });
            }
        };
        reader.expect_end()?;
        Ok(ack)
    }
}
