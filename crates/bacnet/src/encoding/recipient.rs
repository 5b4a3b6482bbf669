//! Who receives notifications (Clause 21): `BACnetAddress`, the `BACnetRecipient` choice,
//! `BACnetDestination` (a Notification Class's recipient-list entry),
//! `BACnetRecipientProcess` and `BACnetCOVSubscription` (a Device's
//! active-cov-subscriptions entry).

use super::bit_string::BitString;
use super::calendar::wrong_choice;
use super::context::{
    encode_closing, encode_opening, encode_optional_context, expect_closing, expect_opening,
    next_is_context, next_is_opening,
};
use super::date_time::Time;
use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::object_identifier::ObjectIdentifier;
use super::primitive::PrimitiveValue;
use super::property_reference::ObjectPropertyReference;
use super::reader::Reader;

/// Longest MAC address accepted in a `BACnetAddress` (Clause 6.2.2 allows up to 18 octets
/// for BACnet/SC VMAC-less forms; B/IP uses 6).
pub const MAX_MAC_LENGTH: usize = 18;

/// `BACnetAddress ::= SEQUENCE { network-number Unsigned16, mac-address OCTET STRING }`
/// (network 0 is the local network; an empty MAC is a broadcast on that network).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BacnetAddress {
    /// Network number, 0 for the local network.
    pub network: u16,
    /// MAC address on that network (6 octets for B/IP: IPv4 address and port).
    pub mac: Vec<u8>,
}

impl BacnetAddress {
    /// Appends the application-tagged network number and MAC.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.network.encode_application(buf);
        self.mac.encode_application(buf);
    }

    /// Decodes the sequence; MACs longer than `MAX_MAC_LENGTH` (18 octets) are refused.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let network = u16::decode_application(reader)?;
        let start = reader.position();
        let mac = Vec::<u8>::decode_application(reader)?;
        if mac.len() > MAX_MAC_LENGTH {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::LengthTooLarge {
                    length: mac.len() as u64,
                    limit: MAX_MAC_LENGTH as u64,
                },
            ));
        }
        Ok(Self { network, mac })
    }

    /// The B/IP MAC of an IPv4 socket address on the local network.
    pub fn local_bip(address: std::net::SocketAddrV4) -> Self {
        let mut mac = address.ip().octets().to_vec();
        mac.extend_from_slice(&address.port().to_be_bytes());
        Self { network: 0, mac }
    }
}

/// `BACnetRecipient ::= CHOICE { device [0] BACnetObjectIdentifier, address [1]
/// BACnetAddress }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Recipient {
    /// [0] a device, found by its identifier.
    Device(ObjectIdentifier),
    /// [1] a network address.
    Address(BacnetAddress),
}

impl Recipient {
    /// Appends the choice.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Device(device) => device.encode_context(0, buf),
            Self::Address(address) => {
                encode_opening(1, buf);
                address.encode(buf);
                encode_closing(1, buf);
            }
        }
    }

    /// Decodes the choice.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if next_is_context(reader, 0) {
            return Ok(Self::Device(ObjectIdentifier::decode_context(reader, 0)?));
        }
        if next_is_opening(reader, 1) {
            expect_opening(reader, 1)?;
            let address = BacnetAddress::decode(reader)?;
            expect_closing(reader, 1)?;
            return Ok(Self::Address(address));
        }
        Err(wrong_choice(reader, TagSpec::Context(0)))
    }
}

/// Decodes an application-tagged BIT STRING that must have `bits` bits.
fn decode_bits(
    reader: &mut Reader<'_>,
    bits: usize,
    what: &'static str,
) -> Result<BitString, DecodeError> {
    let start = reader.position();
    let value = BitString::decode_application(reader)?;
    if value.len() != bits {
        return Err(DecodeError::new(start, DecodeErrorKind::InvalidValue(what)));
    }
    Ok(value)
}

/// `BACnetDestination`: one entry of a Notification Class's recipient-list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Destination {
    /// `BACnetDaysOfWeek`: 7 bits, Monday first.
    pub valid_days: BitString,
    /// Start of the daily window.
    pub from_time: Time,
    /// End of the daily window.
    pub to_time: Time,
    /// Who receives the notifications.
    pub recipient: Recipient,
    /// The recipient's process identifier.
    pub process_identifier: u32,
    /// Whether notifications are confirmed.
    pub issue_confirmed_notifications: bool,
    /// `BACnetEventTransitionBits`: to-offnormal, to-fault, to-normal.
    pub transitions: BitString,
}

impl Destination {
    /// Appends the sequence (application-tagged fields, the recipient choice in between).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.valid_days.encode_application(buf);
        self.from_time.encode_application(buf);
        self.to_time.encode_application(buf);
        self.recipient.encode(buf);
        self.process_identifier.encode_application(buf);
        self.issue_confirmed_notifications.encode_application(buf);
        self.transitions.encode_application(buf);
    }

    /// Decodes the sequence; valid-days must have 7 bits and transitions 3.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            valid_days: decode_bits(reader, 7, "valid-days must have 7 bits")?,
            from_time: Time::decode_application(reader)?,
            to_time: Time::decode_application(reader)?,
            recipient: Recipient::decode(reader)?,
            process_identifier: u32::decode_application(reader)?,
            issue_confirmed_notifications: bool::decode_application(reader)?,
            transitions: decode_bits(reader, 3, "transitions must have 3 bits")?,
        })
    }
}

/// `BACnetRecipientProcess ::= SEQUENCE { recipient [0] BACnetRecipient,
/// process-identifier [1] Unsigned32 }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecipientProcess {
    /// [0] the recipient.
    pub recipient: Recipient,
    /// [1] its process.
    pub process_identifier: u32,
}

impl RecipientProcess {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_opening(0, buf);
        self.recipient.encode(buf);
        encode_closing(0, buf);
        self.process_identifier.encode_context(1, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        expect_opening(reader, 0)?;
        let recipient = Recipient::decode(reader)?;
        expect_closing(reader, 0)?;
        Ok(Self {
            recipient,
            process_identifier: u32::decode_context(reader, 1)?,
        })
    }
}

/// `BACnetCOVSubscription`: one entry of a Device's active-cov-subscriptions.
#[derive(Debug, Clone, PartialEq)]
pub struct CovSubscription {
    /// [0] the subscriber.
    pub recipient: RecipientProcess,
    /// [1] the monitored object and property.
    pub monitored: ObjectPropertyReference,
    /// [2] whether notifications are confirmed.
    pub issue_confirmed_notifications: bool,
    /// [3] seconds left (0 for an indefinite subscription).
    pub time_remaining: u32,
    /// [4] the COV increment in use, when one applies.
    pub cov_increment: Option<f32>,
}

impl CovSubscription {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_opening(0, buf);
        self.recipient.encode(buf);
        encode_closing(0, buf);
        encode_opening(1, buf);
        self.monitored.encode(buf);
        encode_closing(1, buf);
        self.issue_confirmed_notifications.encode_context(2, buf);
        self.time_remaining.encode_context(3, buf);
        encode_optional_context(self.cov_increment.as_ref(), 4, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        expect_opening(reader, 0)?;
        let recipient = RecipientProcess::decode(reader)?;
        expect_closing(reader, 0)?;
        expect_opening(reader, 1)?;
        let monitored = ObjectPropertyReference::decode(reader)?;
        expect_closing(reader, 1)?;
        Ok(Self {
            recipient,
            monitored,
            issue_confirmed_notifications: bool::decode_context(reader, 2)?,
            time_remaining: u32::decode_context(reader, 3)?,
            cov_increment: super::context::decode_optional_context(reader, 4)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::{ObjectType, PropertyIdentifier};
    use std::net::{Ipv4Addr, SocketAddrV4};

    #[test]
    fn destination_round_trip_and_bytes() {
        let destination = Destination {
            valid_days: BitString::from_bits(&[true; 7]),
            from_time: Time::new(0, 0, 0, 0),
            to_time: Time::new(23, 59, 59, 99),
            recipient: Recipient::Device(ObjectIdentifier::new(ObjectType::Device, 9)),
            process_identifier: 7,
            issue_confirmed_notifications: true,
            transitions: BitString::from_bits(&[true, true, false]),
        };
        let mut buf = Vec::new();
        destination.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x82, 0x01, 0xFE, // 7 days
                0xB4, 0, 0, 0, 0, 0xB4, 23, 59, 59, 99, // from, to
                0x0C, 0x02, 0x00, 0x00, 0x09, // [0] device,9
                0x21, 0x07, 0x11, // process 7, TRUE
                0x82, 0x05, 0xC0, // to-offnormal, to-fault
            ]
        );
        let mut reader = Reader::new(&buf);
        assert_eq!(Destination::decode(&mut reader).unwrap(), destination);
        assert!(reader.is_empty());

        let by_address = Destination {
            recipient: Recipient::Address(BacnetAddress::local_bip(SocketAddrV4::new(
                Ipv4Addr::new(192, 168, 1, 20),
                47808,
            ))),
            ..destination
        };
        let mut buf = Vec::new();
        by_address.encode(&mut buf);
        assert_eq!(
            Destination::decode(&mut Reader::new(&buf)).unwrap(),
            by_address
        );
    }

    #[test]
    fn wrong_bit_counts_are_rejected() {
        let mut buf = Vec::new();
        BitString::from_bits(&[true; 6]).encode_application(&mut buf);
        let err = Destination::decode(&mut Reader::new(&buf)).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("valid-days must have 7 bits")
        );
    }

    #[test]
    fn cov_subscription_round_trip() {
        let subscription = CovSubscription {
            recipient: RecipientProcess {
                recipient: Recipient::Address(BacnetAddress {
                    network: 0,
                    mac: vec![127, 0, 0, 1, 0xBA, 0xC0],
                }),
                process_identifier: 42,
            },
            monitored: ObjectPropertyReference {
                object: ObjectIdentifier::new(ObjectType::AnalogValue, 1),
                property: PropertyIdentifier::PresentValue,
                array_index: None,
            },
            issue_confirmed_notifications: false,
            time_remaining: 300,
            cov_increment: Some(0.5),
        };
        let mut buf = Vec::new();
        subscription.encode(&mut buf);
        let mut reader = Reader::new(&buf);
        assert_eq!(CovSubscription::decode(&mut reader).unwrap(), subscription);
        assert!(reader.is_empty());
    }
}
