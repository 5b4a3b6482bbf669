//! Clause 20.1 APDU headers for all eight PDU types. Service parameters are left as a
//! borrowed payload for the service layer; the Error PDU's class and code are decoded by
//! [`BacnetError`].

use crate::encoding::context::{expect_closing, next_is_opening};
use crate::encoding::{DecodeError, DecodeErrorKind, PrimitiveValue, Reader};
use crate::enums::{AbortReason, ErrorClass, ErrorCode, RejectReason};

use super::service_choice::{ConfirmedServiceChoice, UnconfirmedServiceChoice};

/// PDU type (high nibble of the first octet, Clause 20.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PduType {
    /// 0: BACnet-Confirmed-Request-PDU
    ConfirmedRequest = 0,
    /// 1: BACnet-Unconfirmed-Request-PDU
    UnconfirmedRequest = 1,
    /// 2: BACnet-SimpleACK-PDU
    SimpleAck = 2,
    /// 3: BACnet-ComplexACK-PDU
    ComplexAck = 3,
    /// 4: BACnet-SegmentACK-PDU
    SegmentAck = 4,
    /// 5: BACnet-Error-PDU
    Error = 5,
    /// 6: BACnet-Reject-PDU
    Reject = 6,
    /// 7: BACnet-Abort-PDU
    Abort = 7,
}

/// Maximum segments accepted (Clause 20.1.2.4, bits 6..4 of octet 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaxSegments {
    /// B'000': unspecified.
    Unspecified = 0,
    /// B'001': 2 segments.
    Two = 1,
    /// B'010': 4 segments.
    Four = 2,
    /// B'011': 8 segments.
    Eight = 3,
    /// B'100': 16 segments.
    Sixteen = 4,
    /// B'101': 32 segments.
    ThirtyTwo = 5,
    /// B'110': 64 segments.
    SixtyFour = 6,
    /// B'111': more than 64 segments.
    MoreThanSixtyFour = 7,
}

impl MaxSegments {
    const fn from_code(code: u8) -> Self {
        match code & 0x07 {
            0 => Self::Unspecified,
            1 => Self::Two,
            2 => Self::Four,
            3 => Self::Eight,
            4 => Self::Sixteen,
            5 => Self::ThirtyTwo,
            6 => Self::SixtyFour,
            _ => Self::MoreThanSixtyFour,
        }
    }

    /// The number of segments, `None` for unspecified or more than 64.
    pub const fn count(self) -> Option<u8> {
        match self {
            Self::Unspecified | Self::MoreThanSixtyFour => None,
            other => Some(1 << (other as u8)),
        }
    }
}

/// Maximum APDU length accepted (Clause 20.1.2.5, bits 3..0 of octet 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaxApdu {
    /// B'0000': 50 octets (MS/TP minimum).
    Up50 = 0,
    /// B'0001': 128 octets.
    Up128 = 1,
    /// B'0010': 206 octets (LonTalk).
    Up206 = 2,
    /// B'0011': 480 octets (ARCNET, MS/TP).
    Up480 = 3,
    /// B'0100': 1024 octets.
    Up1024 = 4,
    /// B'0101': 1476 octets (B/IP, Ethernet).
    Up1476 = 5,
}

impl MaxApdu {
    /// From the 4-bit code; 6..=15 are reserved.
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::Up50,
            1 => Self::Up128,
            2 => Self::Up206,
            3 => Self::Up480,
            4 => Self::Up1024,
            5 => Self::Up1476,
            _ => return None,
        })
    }

    /// The length in octets.
    pub const fn octets(self) -> u16 {
        match self {
            Self::Up50 => 50,
            Self::Up128 => 128,
            Self::Up206 => 206,
            Self::Up480 => 480,
            Self::Up1024 => 1024,
            Self::Up1476 => 1476,
        }
    }

    /// The largest code whose length does not exceed `octets` (at least 50).
    pub const fn for_length(octets: u16) -> Self {
        match octets {
            1476.. => Self::Up1476,
            1024.. => Self::Up1024,
            480.. => Self::Up480,
            206.. => Self::Up206,
            128.. => Self::Up128,
            _ => Self::Up50,
        }
    }
}

/// Segmentation fields present when the SEG bit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SegmentInfo {
    /// MOR: more segments follow.
    pub more_follows: bool,
    /// Sequence number of this segment.
    pub sequence_number: u8,
    /// Proposed window size (1..=127).
    pub proposed_window_size: u8,
}

/// An APDU header with its service payload borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apdu<'a> {
    /// Confirmed-Request.
    ConfirmedRequest {
        /// SA: the client accepts a segmented response.
        segmented_response_accepted: bool,
        /// Maximum segments the client accepts.
        max_segments: MaxSegments,
        /// Maximum APDU length the client accepts.
        max_apdu: MaxApdu,
        /// Invoke ID.
        invoke_id: u8,
        /// Present when this is a segment.
        segment: Option<SegmentInfo>,
        /// The service.
        service: ConfirmedServiceChoice,
        /// Service request parameters (or this segment of them).
        payload: &'a [u8],
    },
    /// Unconfirmed-Request.
    UnconfirmedRequest {
        /// The service.
        service: UnconfirmedServiceChoice,
        /// Service request parameters.
        payload: &'a [u8],
    },
    /// SimpleACK.
    SimpleAck {
        /// Invoke ID of the request.
        invoke_id: u8,
        /// The acknowledged service.
        service: ConfirmedServiceChoice,
    },
    /// ComplexACK.
    ComplexAck {
        /// Invoke ID of the request.
        invoke_id: u8,
        /// Present when this is a segment.
        segment: Option<SegmentInfo>,
        /// The acknowledged service.
        service: ConfirmedServiceChoice,
        /// Service ACK parameters (or this segment of them).
        payload: &'a [u8],
    },
    /// SegmentACK.
    SegmentAck {
        /// NAK: a segment was received out of order.
        negative: bool,
        /// SRV: sent by the server.
        server: bool,
        /// Invoke ID.
        invoke_id: u8,
        /// Sequence number being acknowledged.
        sequence_number: u8,
        /// Actual window size.
        actual_window_size: u8,
    },
    /// Error.
    Error {
        /// Invoke ID of the request.
        invoke_id: u8,
        /// The failed service.
        service: ConfirmedServiceChoice,
        /// Error parameters; see [`BacnetError::decode_payload`].
        payload: &'a [u8],
    },
    /// Reject.
    Reject {
        /// Invoke ID of the request.
        invoke_id: u8,
        /// Why the request was rejected.
        reason: RejectReason,
    },
    /// Abort.
    Abort {
        /// SRV: sent by the server.
        server: bool,
        /// Invoke ID of the transaction.
        invoke_id: u8,
        /// Why the transaction was aborted.
        reason: AbortReason,
    },
}

const SEG: u8 = 0x08;
const MOR: u8 = 0x04;
const SA: u8 = 0x02;
const NAK: u8 = 0x02;
const SRV: u8 = 0x01;

/// Reasons and service choices are one octet on the wire; values above 255 cannot be
/// sent and are clamped (they never come out of a decoder).
fn octet(value: u32) -> u8 {
    u8::try_from(value).unwrap_or(u8::MAX)
}

fn encode_segment(first: &mut u8, segment: Option<&SegmentInfo>) {
    if let Some(segment) = segment {
        *first |= SEG;
        if segment.more_follows {
            *first |= MOR;
        }
    }
}

fn decode_segment(first: u8, reader: &mut Reader<'_>) -> Result<Option<SegmentInfo>, DecodeError> {
    if first & SEG == 0 {
        return Ok(None);
    }
    Ok(Some(SegmentInfo {
        more_follows: first & MOR != 0,
        sequence_number: reader.read_u8()?,
        proposed_window_size: reader.read_u8()?,
    }))
}

impl<'a> Apdu<'a> {
    /// The PDU type.
    pub const fn pdu_type(&self) -> PduType {
        match self {
            Self::ConfirmedRequest { .. } => PduType::ConfirmedRequest,
            Self::UnconfirmedRequest { .. } => PduType::UnconfirmedRequest,
            Self::SimpleAck { .. } => PduType::SimpleAck,
            Self::ComplexAck { .. } => PduType::ComplexAck,
            Self::SegmentAck { .. } => PduType::SegmentAck,
            Self::Error { .. } => PduType::Error,
            Self::Reject { .. } => PduType::Reject,
            Self::Abort { .. } => PduType::Abort,
        }
    }

    /// Appends the header and payload.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let mut first = (self.pdu_type() as u8) << 4;
        match self {
            Self::ConfirmedRequest {
                segmented_response_accepted,
                max_segments,
                max_apdu,
                invoke_id,
                segment,
                service,
                payload,
            } => {
                encode_segment(&mut first, segment.as_ref());
                if *segmented_response_accepted {
                    first |= SA;
                }
                buf.push(first);
                buf.push(((*max_segments as u8) << 4) | *max_apdu as u8);
                buf.push(*invoke_id);
                if let Some(segment) = segment {
                    buf.push(segment.sequence_number);
                    buf.push(segment.proposed_window_size);
                }
                buf.push(octet(service.to_u32()));
                buf.extend_from_slice(payload);
            }
            Self::UnconfirmedRequest { service, payload } => {
                buf.push(first);
                buf.push(octet(service.to_u32()));
                buf.extend_from_slice(payload);
            }
            Self::SimpleAck { invoke_id, service } => {
                buf.extend_from_slice(&[first, *invoke_id, octet(service.to_u32())]);
            }
            Self::ComplexAck {
                invoke_id,
                segment,
                service,
                payload,
            } => {
                encode_segment(&mut first, segment.as_ref());
                buf.push(first);
                buf.push(*invoke_id);
                if let Some(segment) = segment {
                    buf.push(segment.sequence_number);
                    buf.push(segment.proposed_window_size);
                }
                buf.push(octet(service.to_u32()));
                buf.extend_from_slice(payload);
            }
            Self::SegmentAck {
                negative,
                server,
                invoke_id,
                sequence_number,
                actual_window_size,
            } => {
                if *negative {
                    first |= NAK;
                }
                if *server {
                    first |= SRV;
                }
                buf.extend_from_slice(&[first, *invoke_id, *sequence_number, *actual_window_size]);
            }
            Self::Error {
                invoke_id,
                service,
                payload,
            } => {
                buf.extend_from_slice(&[first, *invoke_id, octet(service.to_u32())]);
                buf.extend_from_slice(payload);
            }
            Self::Reject { invoke_id, reason } => {
                buf.extend_from_slice(&[first, *invoke_id, octet(reason.to_u32())]);
            }
            Self::Abort {
                server,
                invoke_id,
                reason,
            } => {
                if *server {
                    first |= SRV;
                }
                buf.extend_from_slice(&[first, *invoke_id, octet(reason.to_u32())]);
            }
        }
    }

    /// Decodes an APDU that fills the rest of `reader`. Reserved header bits are ignored
    /// as Clause 20.1 asks of receivers; PDU types 8..=15 and reserved max-APDU codes are
    /// rejected.
    pub fn decode(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = reader.position();
        let first = reader.read_u8()?;
        let apdu = match first >> 4 {
            0 => {
                let limits_offset = reader.position();
                let limits = reader.read_u8()?;
                let max_apdu = MaxApdu::from_code(limits & 0x0F).ok_or_else(|| {
                    DecodeError::new(
                        limits_offset,
                        DecodeErrorKind::InvalidValue("reserved max-APDU-length code"),
                    )
                })?;
                let invoke_id = reader.read_u8()?;
                let segment = decode_segment(first, reader)?;
                Self::ConfirmedRequest {
                    segmented_response_accepted: first & SA != 0,
                    max_segments: MaxSegments::from_code(limits >> 4),
                    max_apdu,
                    invoke_id,
                    segment,
                    service: ConfirmedServiceChoice::from_u32(u32::from(reader.read_u8()?)),
                    payload: reader.read_rest(),
                }
            }
            1 => Self::UnconfirmedRequest {
                service: UnconfirmedServiceChoice::from_u32(u32::from(reader.read_u8()?)),
                payload: reader.read_rest(),
            },
            2 => Self::SimpleAck {
                invoke_id: reader.read_u8()?,
                service: ConfirmedServiceChoice::from_u32(u32::from(reader.read_u8()?)),
            },
            3 => {
                let invoke_id = reader.read_u8()?;
                let segment = decode_segment(first, reader)?;
                Self::ComplexAck {
                    invoke_id,
                    segment,
                    service: ConfirmedServiceChoice::from_u32(u32::from(reader.read_u8()?)),
                    payload: reader.read_rest(),
                }
            }
            4 => Self::SegmentAck {
                negative: first & NAK != 0,
                server: first & SRV != 0,
                invoke_id: reader.read_u8()?,
                sequence_number: reader.read_u8()?,
                actual_window_size: reader.read_u8()?,
            },
            5 => Self::Error {
                invoke_id: reader.read_u8()?,
                service: ConfirmedServiceChoice::from_u32(u32::from(reader.read_u8()?)),
                payload: reader.read_rest(),
            },
            6 => Self::Reject {
                invoke_id: reader.read_u8()?,
                reason: RejectReason::from_u32(u32::from(reader.read_u8()?)),
            },
            7 => Self::Abort {
                server: first & SRV != 0,
                invoke_id: reader.read_u8()?,
                reason: AbortReason::from_u32(u32::from(reader.read_u8()?)),
            },
            _ => {
                return Err(DecodeError::new(
                    start,
                    DecodeErrorKind::InvalidValue("reserved PDU type"),
                ));
            }
        };
        reader.expect_end()?;
        Ok(apdu)
    }
}

/// `Error ::= SEQUENCE { error-class ENUMERATED, error-code ENUMERATED }` (Clause 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BacnetError {
    /// Error class.
    pub class: ErrorClass,
    /// Error code.
    pub code: ErrorCode,
}

impl BacnetError {
    /// Appends class and code as application-tagged ENUMERATED values.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.class.encode_application(buf);
        self.code.encode_application(buf);
    }

    /// Decodes class and code (application-tagged ENUMERATED values).
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            class: ErrorClass::decode_application(reader)?,
            code: ErrorCode::decode_application(reader)?,
        })
    }

    /// Reads the error from an Error-PDU payload: either the plain pair or, for services
    /// whose error type wraps it (CreateObject, WritePropertyMultiple...), the pair inside
    /// opening/closing tag 0. Any further service-specific parameters are left unread.
    pub fn decode_payload(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if next_is_opening(reader, 0) {
            crate::encoding::context::expect_opening(reader, 0)?;
            let error = Self::decode(reader)?;
            expect_closing(reader, 0)?;
            Ok(error)
        } else {
            Self::decode(reader)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(apdu: Apdu<'_>, bytes: &[u8]) {
        let mut buf = Vec::new();
        apdu.encode(&mut buf);
        assert_eq!(buf, bytes, "encoding {apdu:?}");
        assert_eq!(Apdu::decode(&mut Reader::new(bytes)).unwrap(), apdu);
    }

    #[test]
    fn read_property_request_and_ack() {
        // Clause F.3.5 example: ReadProperty of analog-input,5 present-value, invoke ID 1.
        let request = [
            0x00, 0x02, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
        ];
        round_trip(
            Apdu::ConfirmedRequest {
                segmented_response_accepted: false,
                max_segments: MaxSegments::Unspecified,
                max_apdu: MaxApdu::Up206,
                invoke_id: 1,
                segment: None,
                service: ConfirmedServiceChoice::ReadProperty,
                payload: &request[4..],
            },
            &request,
        );
        let ack = [
            0x30, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x3E, 0x44, 0x42, 0x90,
            0x00, 0x00, 0x3F,
        ];
        round_trip(
            Apdu::ComplexAck {
                invoke_id: 1,
                segment: None,
                service: ConfirmedServiceChoice::ReadProperty,
                payload: &ack[3..],
            },
            &ack,
        );
    }

    #[test]
    fn segmented_headers() {
        round_trip(
            Apdu::ConfirmedRequest {
                segmented_response_accepted: true,
                max_segments: MaxSegments::MoreThanSixtyFour,
                max_apdu: MaxApdu::Up1476,
                invoke_id: 9,
                segment: Some(SegmentInfo {
                    more_follows: true,
                    sequence_number: 3,
                    proposed_window_size: 16,
                }),
                service: ConfirmedServiceChoice::WritePropertyMultiple,
                payload: &[0xAA],
            },
            &[0x0E, 0x75, 0x09, 0x03, 0x10, 0x10, 0xAA],
        );
        round_trip(
            Apdu::ComplexAck {
                invoke_id: 7,
                segment: Some(SegmentInfo {
                    more_follows: false,
                    sequence_number: 2,
                    proposed_window_size: 4,
                }),
                service: ConfirmedServiceChoice::ReadPropertyMultiple,
                payload: &[],
            },
            &[0x38, 0x07, 0x02, 0x04, 0x0E],
        );
        round_trip(
            Apdu::SegmentAck {
                negative: true,
                server: true,
                invoke_id: 7,
                sequence_number: 2,
                actual_window_size: 4,
            },
            &[0x43, 0x07, 0x02, 0x04],
        );
    }

    #[test]
    fn short_pdus() {
        // Who-Is with no range: X'10 08'.
        round_trip(
            Apdu::UnconfirmedRequest {
                service: UnconfirmedServiceChoice::WhoIs,
                payload: &[],
            },
            &[0x10, 0x08],
        );
        round_trip(
            Apdu::SimpleAck {
                invoke_id: 3,
                service: ConfirmedServiceChoice::WriteProperty,
            },
            &[0x20, 0x03, 0x0F],
        );
        round_trip(
            Apdu::Reject {
                invoke_id: 3,
                reason: RejectReason::UnrecognizedService,
            },
            &[0x60, 0x03, 0x09],
        );
        round_trip(
            Apdu::Abort {
                server: true,
                invoke_id: 3,
                reason: AbortReason::SegmentationNotSupported,
            },
            &[0x71, 0x03, 0x04],
        );
        round_trip(
            Apdu::Reject {
                invoke_id: 0,
                reason: RejectReason::Unknown(200),
            },
            &[0x60, 0x00, 0xC8],
        );
    }

    #[test]
    fn error_pdu_and_its_class_code() {
        // ReadProperty error: object / unknown-object (X'91 01 91 1F').
        let bytes = [0x50, 0x01, 0x0C, 0x91, 0x01, 0x91, 0x1F];
        let apdu = Apdu::decode(&mut Reader::new(&bytes)).unwrap();
        let Apdu::Error {
            invoke_id: 1,
            service: ConfirmedServiceChoice::ReadProperty,
            payload,
        } = apdu
        else {
            panic!("not an error PDU: {apdu:?}");
        };
        let error = BacnetError::decode_payload(&mut Reader::new(payload)).unwrap();
        assert_eq!(
            error,
            BacnetError {
                class: ErrorClass::Object,
                code: ErrorCode::UnknownObject
            }
        );
        let mut again = Vec::new();
        error.encode(&mut again);
        assert_eq!(again, payload);
        // Wrapped form used by WritePropertyMultiple-Error.
        let wrapped = [0x0E, 0x91, 0x02, 0x91, 0x28, 0x0F, 0x1C, 0, 0, 0, 1];
        let mut r = Reader::new(&wrapped);
        let error = BacnetError::decode_payload(&mut r).unwrap();
        assert_eq!(error.code, ErrorCode::WriteAccessDenied);
        assert_eq!(r.position(), 6);
    }

    #[test]
    fn malformed_headers() {
        assert_eq!(
            Apdu::decode(&mut Reader::new(&[0x80, 0x00])).unwrap_err(),
            DecodeError::new(0, DecodeErrorKind::InvalidValue("reserved PDU type"))
        );
        assert_eq!(
            Apdu::decode(&mut Reader::new(&[0x00, 0x06, 0x01, 0x0C])).unwrap_err(),
            DecodeError::new(
                1,
                DecodeErrorKind::InvalidValue("reserved max-APDU-length code")
            )
        );
        assert_eq!(
            Apdu::decode(&mut Reader::new(&[0x08, 0x05, 0x01, 0x00])).unwrap_err(),
            DecodeError::new(
                4,
                DecodeErrorKind::Truncated {
                    needed: 1,
                    remaining: 0
                }
            )
        );
        assert_eq!(
            Apdu::decode(&mut Reader::new(&[0x20, 0x01, 0x0C, 0x00])).unwrap_err(),
            DecodeError::new(3, DecodeErrorKind::TrailingData { count: 1 })
        );
    }

    #[test]
    fn max_apdu_and_segments() {
        assert_eq!(MaxApdu::for_length(1500), MaxApdu::Up1476);
        assert_eq!(MaxApdu::for_length(500).octets(), 480);
        assert_eq!(MaxApdu::for_length(10), MaxApdu::Up50);
        assert_eq!(MaxSegments::Sixteen.count(), Some(16));
        assert_eq!(MaxSegments::MoreThanSixtyFour.count(), None);
    }
}
