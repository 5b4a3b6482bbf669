//! The BACnet/SC virtual link control messages (Annex AB.2): the common header (function,
//! control flags, message id, optional originating and destination VMACs, destination and
//! data header options) and the payload of each of the 13 functions.
//!
//! ```text
//! function(1) control(1) message-id(2) [originating VMAC(6)] [destination VMAC(6)]
//! [destination options...] [data options...] [payload...]
//! ```
//!
//! Decoding checks every rule the annex gives for each function (which VMACs and options may
//! be present, which payload is required, fixed payload lengths, value ranges) and reports a
//! failure as an [`ScDecodeError`] carrying the error code a BVLC-Result NAK should give
//! (Annex AB.3.1.5 and the ASHRAE clarification EA-001-4). Decoders never panic and never
//! allocate from a length read off the wire: options and payloads borrow from the input.

use std::fmt;

use super::vmac::{DeviceUuid, Vmac};
use crate::encoding::Reader;
use crate::enums::enum_table::bacnet_enum;
use crate::enums::{ErrorClass, ErrorCode};

bacnet_enum! {
    /// BVLC-SC message function (Annex AB.2, Table AB-1).
    pub enum BvlcFunction {
        BvlcResult = 0 => "bvlc-result",
        EncapsulatedNpdu = 1 => "encapsulated-npdu",
        AddressResolution = 2 => "address-resolution",
        AddressResolutionAck = 3 => "address-resolution-ack",
        Advertisement = 4 => "advertisement",
        AdvertisementSolicitation = 5 => "advertisement-solicitation",
        ConnectRequest = 6 => "connect-request",
        ConnectAccept = 7 => "connect-accept",
        DisconnectRequest = 8 => "disconnect-request",
        DisconnectAck = 9 => "disconnect-ack",
        HeartbeatRequest = 10 => "heartbeat-request",
        HeartbeatAck = 11 => "heartbeat-ack",
        ProprietaryMessage = 12 => "proprietary-message",
    }
    unknown: Unknown;
    aliases: {}
}

impl BvlcFunction {
    /// The function octet.
    pub const fn octet(self) -> u8 {
        // Every listed value is below 13; unknown values came from one octet.
        (self.to_u32() & 0xFF) as u8
    }

    /// True for the answers that never get a BVLC-Result of their own (Annex AB.3.1.4):
    /// BVLC-Result, Connect-Accept, Disconnect-ACK, Heartbeat-ACK, Address-Resolution-ACK.
    pub const fn is_response(self) -> bool {
        matches!(
            self,
            Self::BvlcResult
                | Self::ConnectAccept
                | Self::DisconnectAck
                | Self::HeartbeatAck
                | Self::AddressResolutionAck
        )
    }

    /// True when a unicast message of this function that cannot be processed is answered
    /// with a BVLC-Result NAK (Annex AB.3.1.5): the requests, Encapsulated-NPDU, the
    /// proprietary message and unknown functions. Advertisements and responses never are.
    pub const fn is_nak_answered(self) -> bool {
        matches!(
            self,
            Self::ConnectRequest
                | Self::DisconnectRequest
                | Self::EncapsulatedNpdu
                | Self::AddressResolution
                | Self::AdvertisementSolicitation
                | Self::HeartbeatRequest
                | Self::ProprietaryMessage
                | Self::Unknown(_)
        )
    }
}

bacnet_enum! {
    /// Hub connection status reported in an Advertisement (Annex AB.2.8).
    pub enum HubConnectionStatus {
        NoHubConnection = 0 => "no-hub-connection",
        ConnectedToPrimaryHub = 1 => "connected-to-primary-hub",
        ConnectedToFailoverHub = 2 => "connected-to-failover-hub",
    }
    unknown: Unknown;
    aliases: {}
}

/// Control flag bits (Annex AB.2.2); bits 7..4 are reserved and ignored on receipt.
pub mod control {
    /// An Originating Virtual Address follows the message id.
    pub const ORIGINATING_VMAC: u8 = 0x08;
    /// A Destination Virtual Address follows.
    pub const DESTINATION_VMAC: u8 = 0x04;
    /// Destination header options follow the addresses.
    pub const DESTINATION_OPTIONS: u8 = 0x02;
    /// Data header options follow the destination options.
    pub const DATA_OPTIONS: u8 = 0x01;
}

/// Size of the fixed header: function, control flags, message id.
pub const FIXED_HEADER_LENGTH: usize = 4;
/// Most header options one list may carry here. The annex defines two option types; a
/// longer list is refused with HEADER_ENCODING_ERROR rather than collected without bound.
pub const MAX_HEADER_OPTIONS: usize = 16;
/// Octets of a Connect-Request / Connect-Accept payload: VMAC, UUID, two lengths.
pub const CONNECT_PAYLOAD_LENGTH: usize = Vmac::LENGTH + DeviceUuid::LENGTH + 4;
/// Octets of an Advertisement payload.
pub const ADVERTISEMENT_PAYLOAD_LENGTH: usize = 6;
/// Most WebSocket URIs kept from one Address-Resolution-ACK.
pub const MAX_RESOLVED_URIS: usize = 16;

/// Header option type: Secure Path (Annex AB.2.3.1), data options only, no header data.
pub const OPTION_SECURE_PATH: u8 = 1;
/// Header option type: proprietary (Annex AB.2.3.2), header data starts with the vendor id.
pub const OPTION_PROPRIETARY: u8 = 31;

const MARKER_MORE: u8 = 0x80;
const MARKER_MUST_UNDERSTAND: u8 = 0x40;
const MARKER_HAS_DATA: u8 = 0x20;
const MARKER_TYPE: u8 = 0x1F;

/// One header option (Annex AB.2.3): a type, the must-understand flag and optional data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderOption<'a> {
    /// Header option type, 0..=31.
    pub option_type: u8,
    /// The receiver must drop the message (and NAK a unicast) if it does not know the type.
    pub must_understand: bool,
    /// The header data, when the header data flag is set.
    pub data: Option<&'a [u8]>,
}

impl<'a> HeaderOption<'a> {
    /// The Secure Path option: must-understand, no data.
    pub const fn secure_path() -> Self {
        Self {
            option_type: OPTION_SECURE_PATH,
            must_understand: true,
            data: None,
        }
    }

    /// For a proprietary option: (vendor id, proprietary option type, proprietary data).
    pub fn proprietary(&self) -> Option<(u16, u8, &'a [u8])> {
        if self.option_type != OPTION_PROPRIETARY {
            return None;
        }
        let data = self.data?;
        let (head, rest) = data.split_at_checked(3)?;
        Some((u16::from_be_bytes([head[0], head[1]]), head[2], rest))
    }

    /// True for the option types this implementation knows (Secure Path).
    pub const fn is_understood(&self) -> bool {
        self.option_type == OPTION_SECURE_PATH
    }

    fn encode(&self, more: bool, out: &mut Vec<u8>) {
        let mut marker = self.option_type & MARKER_TYPE;
        if more {
            marker |= MARKER_MORE;
        }
        if self.must_understand {
            marker |= MARKER_MUST_UNDERSTAND;
        }
        match self.data {
            Some(data) => {
                out.push(marker | MARKER_HAS_DATA);
                // Header data longer than 65535 octets cannot be sent; callers build
                // options from BVLC-sized data, so truncate rather than panic.
                let length = u16::try_from(data.len()).unwrap_or(u16::MAX);
                out.extend_from_slice(&length.to_be_bytes());
                out.extend_from_slice(data.get(..usize::from(length)).unwrap_or(data));
            }
            None => out.push(marker),
        }
    }
}

/// Which header option list is being read (their rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OptionList {
    Destination,
    Data,
}

/// The options of one list, in order.
pub type HeaderOptions<'a> = Vec<HeaderOption<'a>>;

/// The outcome carried by a BVLC-Result (Annex AB.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultOutcome<'a> {
    /// The request succeeded.
    Ack,
    /// The request failed.
    Nak {
        /// The header marker of the option that caused the failure, or 0.
        header_marker: u8,
        /// Error class (COMMUNICATION for link errors).
        error_class: ErrorClass,
        /// Error code.
        error_code: ErrorCode,
        /// Optional UTF-8 details.
        details: &'a str,
    },
}

/// BVLC-Result payload (Annex AB.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BvlcResult<'a> {
    /// The function of the message this answers.
    pub for_function: BvlcFunction,
    /// ACK or NAK.
    pub outcome: ResultOutcome<'a>,
}

impl<'a> BvlcResult<'a> {
    /// A NAK of `function` with class COMMUNICATION and `code`.
    pub const fn nak(function: BvlcFunction, code: ErrorCode, details: &'a str) -> Self {
        Self {
            for_function: function,
            outcome: ResultOutcome::Nak {
                header_marker: 0,
                error_class: ErrorClass::Communication,
                error_code: code,
                details,
            },
        }
    }
}

/// Connect-Request and Connect-Accept payload (Annex AB.2.10, AB.2.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnectInfo {
    /// The sender's VMAC.
    pub vmac: Vmac,
    /// The sender's device UUID.
    pub uuid: DeviceUuid,
    /// Largest BVLC message the sender accepts.
    pub max_bvlc_length: u16,
    /// Largest NPDU the sender accepts.
    pub max_npdu_length: u16,
}

/// Advertisement payload (Annex AB.2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advertisement {
    /// Whether and to which hub the sender is connected.
    pub hub_status: HubConnectionStatus,
    /// True when the sender accepts direct connections.
    pub accepts_direct_connections: bool,
    /// Largest BVLC message the sender accepts.
    pub max_bvlc_length: u16,
    /// Largest NPDU the sender accepts.
    pub max_npdu_length: u16,
}

/// The payload of a BVLC-SC message, one variant per function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    /// BVLC-Result (X'00').
    Result(BvlcResult<'a>),
    /// Encapsulated-NPDU (X'01'): the NPDU.
    EncapsulatedNpdu(&'a [u8]),
    /// Address-Resolution (X'02').
    AddressResolution,
    /// Address-Resolution-ACK (X'03'): the WebSocket URIs (space separated) at which the
    /// sender accepts direct connections.
    AddressResolutionAck(&'a str),
    /// Advertisement (X'04').
    Advertisement(Advertisement),
    /// Advertisement-Solicitation (X'05').
    AdvertisementSolicitation,
    /// Connect-Request (X'06').
    ConnectRequest(ConnectInfo),
    /// Connect-Accept (X'07').
    ConnectAccept(ConnectInfo),
    /// Disconnect-Request (X'08').
    DisconnectRequest,
    /// Disconnect-ACK (X'09').
    DisconnectAck,
    /// Heartbeat-Request (X'0A').
    HeartbeatRequest,
    /// Heartbeat-ACK (X'0B').
    HeartbeatAck,
    /// Proprietary-Message (X'0C').
    Proprietary {
        /// Vendor identifier of the organisation defining the message.
        vendor_id: u16,
        /// The vendor's function code.
        function: u8,
        /// The vendor's data.
        data: &'a [u8],
    },
}

impl Payload<'_> {
    /// The function of this payload.
    pub const fn function(&self) -> BvlcFunction {
        match self {
            Self::Result(_) => BvlcFunction::BvlcResult,
            Self::EncapsulatedNpdu(_) => BvlcFunction::EncapsulatedNpdu,
            Self::AddressResolution => BvlcFunction::AddressResolution,
            Self::AddressResolutionAck(_) => BvlcFunction::AddressResolutionAck,
            Self::Advertisement(_) => BvlcFunction::Advertisement,
            Self::AdvertisementSolicitation => BvlcFunction::AdvertisementSolicitation,
            Self::ConnectRequest(_) => BvlcFunction::ConnectRequest,
            Self::ConnectAccept(_) => BvlcFunction::ConnectAccept,
            Self::DisconnectRequest => BvlcFunction::DisconnectRequest,
            Self::DisconnectAck => BvlcFunction::DisconnectAck,
            Self::HeartbeatRequest => BvlcFunction::HeartbeatRequest,
            Self::HeartbeatAck => BvlcFunction::HeartbeatAck,
            Self::Proprietary { .. } => BvlcFunction::ProprietaryMessage,
        }
    }
}

/// A decoded (or to-be-encoded) BVLC-SC message; options and payload borrow the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BvlcMessage<'a> {
    /// Message id: a request's id comes back in its answer.
    pub message_id: u16,
    /// Originating Virtual Address: set by a hub when relaying, absent on the hop from a
    /// node to its hub and on direct connections.
    pub originating: Option<Vmac>,
    /// Destination Virtual Address: the target VMAC (or broadcast) on the hop to a hub,
    /// absent on direct connections and, after relaying, for unicast.
    pub destination: Option<Vmac>,
    /// Destination options: processed by the destination, relayed untouched by hubs.
    pub destination_options: HeaderOptions<'a>,
    /// Data options (Encapsulated-NPDU only): end to end, with the NPDU.
    pub data_options: HeaderOptions<'a>,
    /// The function and its payload.
    pub payload: Payload<'a>,
}

impl<'a> BvlcMessage<'a> {
    /// A message with no VMACs and no options (what connection peers exchange).
    pub const fn new(message_id: u16, payload: Payload<'a>) -> Self {
        Self {
            message_id,
            originating: None,
            destination: None,
            destination_options: Vec::new(),
            data_options: Vec::new(),
            payload,
        }
    }

    /// The function.
    pub const fn function(&self) -> BvlcFunction {
        self.payload.function()
    }

    /// Appends the encoded message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut flags = 0;
        if self.originating.is_some() {
            flags |= control::ORIGINATING_VMAC;
        }
        if self.destination.is_some() {
            flags |= control::DESTINATION_VMAC;
        }
        if !self.destination_options.is_empty() {
            flags |= control::DESTINATION_OPTIONS;
        }
        if !self.data_options.is_empty() {
            flags |= control::DATA_OPTIONS;
        }
        out.push(self.function().octet());
        out.push(flags);
        out.extend_from_slice(&self.message_id.to_be_bytes());
        if let Some(vmac) = self.originating {
            out.extend_from_slice(vmac.as_bytes());
        }
        if let Some(vmac) = self.destination {
            out.extend_from_slice(vmac.as_bytes());
        }
        encode_options(&self.destination_options, out);
        encode_options(&self.data_options, out);
        encode_payload(&self.payload, out);
    }

    /// The encoded message.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len_hint());
        self.encode(&mut out);
        out
    }

    fn encoded_len_hint(&self) -> usize {
        let payload = match &self.payload {
            Payload::EncapsulatedNpdu(npdu) => npdu.len(),
            Payload::Proprietary { data, .. } => data.len() + 3,
            Payload::AddressResolutionAck(uris) => uris.len(),
            _ => CONNECT_PAYLOAD_LENGTH,
        };
        FIXED_HEADER_LENGTH + 2 * Vmac::LENGTH + payload
    }

    /// Decodes one message (a whole WebSocket binary message).
    pub fn decode(bytes: &'a [u8]) -> Result<Self, ScDecodeError> {
        let header = BvlcHeader::peek(bytes)?;
        let BvlcFunction::Unknown(_) = header.function else {
            return decode_known(bytes, &header);
        };
        Err(ScDecodeError::new(
            header.function,
            0,
            ErrorCode::BvlcFunctionUnknown,
            "unknown BVLC function",
        ))
    }
}

fn encode_options(options: &[HeaderOption<'_>], out: &mut Vec<u8>) {
    let last = options.len().saturating_sub(1);
    for (i, option) in options.iter().enumerate() {
        option.encode(i < last, out);
    }
}

fn encode_payload(payload: &Payload<'_>, out: &mut Vec<u8>) {
    match payload {
        Payload::Result(result) => {
            out.push(result.for_function.octet());
            match result.outcome {
                ResultOutcome::Ack => out.push(0),
                ResultOutcome::Nak {
                    header_marker,
                    error_class,
                    error_code,
                    details,
                } => {
                    out.push(1);
                    out.push(header_marker);
                    let class = u16::try_from(error_class.to_u32()).unwrap_or(u16::MAX);
                    let code = u16::try_from(error_code.to_u32()).unwrap_or(u16::MAX);
                    out.extend_from_slice(&class.to_be_bytes());
                    out.extend_from_slice(&code.to_be_bytes());
                    out.extend_from_slice(details.as_bytes());
                }
            }
        }
        Payload::EncapsulatedNpdu(npdu) => out.extend_from_slice(npdu),
        Payload::AddressResolutionAck(uris) => out.extend_from_slice(uris.as_bytes()),
        Payload::Advertisement(advertisement) => {
            let status = u8::try_from(advertisement.hub_status.to_u32()).unwrap_or(0);
            out.push(status);
            out.push(u8::from(advertisement.accepts_direct_connections));
            out.extend_from_slice(&advertisement.max_bvlc_length.to_be_bytes());
            out.extend_from_slice(&advertisement.max_npdu_length.to_be_bytes());
        }
        Payload::ConnectRequest(info) | Payload::ConnectAccept(info) => {
            out.extend_from_slice(info.vmac.as_bytes());
            out.extend_from_slice(info.uuid.as_bytes());
            out.extend_from_slice(&info.max_bvlc_length.to_be_bytes());
            out.extend_from_slice(&info.max_npdu_length.to_be_bytes());
        }
        Payload::Proprietary {
            vendor_id,
            function,
            data,
        } => {
            out.extend_from_slice(&vendor_id.to_be_bytes());
            out.push(*function);
            out.extend_from_slice(data);
        }
        Payload::AddressResolution
        | Payload::AdvertisementSolicitation
        | Payload::DisconnectRequest
        | Payload::DisconnectAck
        | Payload::HeartbeatRequest
        | Payload::HeartbeatAck => {}
    }
}

/// Encodes an Encapsulated-NPDU without building a [`BvlcMessage`] (the hot path).
pub fn encode_encapsulated_npdu(
    out: &mut Vec<u8>,
    message_id: u16,
    originating: Option<Vmac>,
    destination: Option<Vmac>,
    npdu: &[u8],
) {
    let mut flags = 0;
    if originating.is_some() {
        flags |= control::ORIGINATING_VMAC;
    }
    if destination.is_some() {
        flags |= control::DESTINATION_VMAC;
    }
    out.reserve(FIXED_HEADER_LENGTH + 2 * Vmac::LENGTH + npdu.len());
    out.push(BvlcFunction::EncapsulatedNpdu.octet());
    out.push(flags);
    out.extend_from_slice(&message_id.to_be_bytes());
    if let Some(vmac) = originating {
        out.extend_from_slice(vmac.as_bytes());
    }
    if let Some(vmac) = destination {
        out.extend_from_slice(vmac.as_bytes());
    }
    out.extend_from_slice(npdu);
}

/// The fixed part of a message: what is needed to route it, or to address a NAK to its
/// sender, without decoding options or payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BvlcHeader {
    /// The function.
    pub function: BvlcFunction,
    /// The control flags as received (reserved bits included).
    pub flags: u8,
    /// The message id.
    pub message_id: u16,
    /// Originating VMAC, if present.
    pub originating: Option<Vmac>,
    /// Destination VMAC, if present.
    pub destination: Option<Vmac>,
    /// Offset of the first octet after the VMACs (options, then payload).
    pub rest_offset: usize,
}

impl BvlcHeader {
    /// Reads the fixed header and the VMACs. A message shorter than four octets is refused
    /// with an error that must not be answered (EA-001-4); truncated VMACs give
    /// MESSAGE_INCOMPLETE.
    pub fn peek(bytes: &[u8]) -> Result<Self, ScDecodeError> {
        let [function, flags, id_high, id_low, ..] = *bytes else {
            return Err(ScDecodeError {
                function: None,
                offset: 0,
                code: ErrorCode::MessageIncomplete,
                detail: "message shorter than the 4-octet BVLC-SC header",
                answerable: false,
            });
        };
        let function = BvlcFunction::from_u32(u32::from(function));
        let mut offset = FIXED_HEADER_LENGTH;
        let mut vmac = |present: bool, detail| -> Result<Option<Vmac>, ScDecodeError> {
            if !present {
                return Ok(None);
            }
            let found = bytes
                .get(offset..offset + Vmac::LENGTH)
                .and_then(Vmac::from_slice)
                .ok_or_else(|| {
                    ScDecodeError::new(function, offset, ErrorCode::MessageIncomplete, detail)
                })?;
            offset += Vmac::LENGTH;
            Ok(Some(found))
        };
        let originating = vmac(
            flags & control::ORIGINATING_VMAC != 0,
            "the Originating Virtual Address is truncated",
        )?;
        let destination = vmac(
            flags & control::DESTINATION_VMAC != 0,
            "the Destination Virtual Address is truncated",
        )?;
        Ok(Self {
            function,
            flags,
            message_id: u16::from_be_bytes([id_high, id_low]),
            originating,
            destination,
            rest_offset: offset,
        })
    }

    /// True when the message is addressed to the broadcast VMAC.
    pub fn is_broadcast(&self) -> bool {
        self.destination.is_some_and(|d| d.is_broadcast())
    }
}

/// Rewrites a message for relaying by a hub (Annex AB.5.3): the originating VMAC becomes
/// `originating` (whatever the sender put there); a unicast loses its destination VMAC, a
/// broadcast keeps the broadcast destination. Options and payload are copied untouched.
pub fn relay_rewrite(bytes: &[u8], header: &BvlcHeader, originating: Vmac) -> Vec<u8> {
    let keep_destination = header.is_broadcast();
    let rest = bytes.get(header.rest_offset..).unwrap_or_default();
    let mut out = Vec::with_capacity(FIXED_HEADER_LENGTH + 2 * Vmac::LENGTH + rest.len());
    let mut flags = (header.flags & (control::DESTINATION_OPTIONS | control::DATA_OPTIONS))
        | control::ORIGINATING_VMAC;
    if keep_destination {
        flags |= control::DESTINATION_VMAC;
    }
    out.push(header.function.octet());
    out.push(flags);
    out.extend_from_slice(&header.message_id.to_be_bytes());
    out.extend_from_slice(originating.as_bytes());
    if keep_destination {
        out.extend_from_slice(Vmac::BROADCAST.as_bytes());
    }
    out.extend_from_slice(rest);
    out
}

/// Why a message could not be decoded, with what a BVLC-Result NAK should say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScDecodeError {
    /// The function of the message, when its header could be read.
    pub function: Option<BvlcFunction>,
    /// Offset of the problem in the message.
    pub offset: usize,
    /// Error code for the NAK (class is always COMMUNICATION).
    pub code: ErrorCode,
    /// What was wrong, for logs and the NAK's details.
    pub detail: &'static str,
    /// False when no NAK may be sent (a message shorter than the fixed header).
    pub answerable: bool,
}

impl ScDecodeError {
    const fn new(
        function: BvlcFunction,
        offset: usize,
        code: ErrorCode,
        detail: &'static str,
    ) -> Self {
        Self {
            function: Some(function),
            offset,
            code,
            detail,
            answerable: true,
        }
    }
}

impl fmt::Display for ScDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.function {
            Some(function) => write!(f, "{function}: ")?,
            None => f.write_str("BVLC-SC: ")?,
        }
        write!(
            f,
            "{} at offset {} ({})",
            self.detail, self.offset, self.code
        )
    }
}

impl std::error::Error for ScDecodeError {}

fn read_options<'a>(
    reader: &mut Reader<'a>,
    list: OptionList,
    function: BvlcFunction,
) -> Result<HeaderOptions<'a>, ScDecodeError> {
    let incomplete = |offset| {
        ScDecodeError::new(
            function,
            offset,
            ErrorCode::MessageIncomplete,
            "a header option is truncated",
        )
    };
    let mut options = Vec::new();
    loop {
        if options.len() == MAX_HEADER_OPTIONS {
            return Err(ScDecodeError::new(
                function,
                reader.position(),
                ErrorCode::HeaderEncodingError,
                "more header options than this implementation accepts",
            ));
        }
        let offset = reader.position();
        let marker = reader.read_u8().map_err(|e| incomplete(e.offset))?;
        let option_type = marker & MARKER_TYPE;
        let data = if marker & MARKER_HAS_DATA != 0 {
            let length = reader.read_u16().map_err(|e| incomplete(e.offset))?;
            Some(
                reader
                    .read_bytes(usize::from(length))
                    .map_err(|e| incomplete(e.offset))?,
            )
        } else {
            None
        };
        let option = HeaderOption {
            option_type,
            must_understand: marker & MARKER_MUST_UNDERSTAND != 0,
            data,
        };
        match option_type {
            OPTION_SECURE_PATH if list == OptionList::Destination => {
                return Err(ScDecodeError::new(
                    function,
                    offset,
                    ErrorCode::HeaderEncodingError,
                    "the Secure Path option is only allowed among the data options",
                ));
            }
            OPTION_SECURE_PATH if data.is_some() => {
                return Err(ScDecodeError::new(
                    function,
                    offset,
                    ErrorCode::HeaderEncodingError,
                    "the Secure Path option carries no header data",
                ));
            }
            OPTION_PROPRIETARY if data.is_none_or(|d| d.len() < 3) => {
                return Err(ScDecodeError::new(
                    function,
                    offset,
                    ErrorCode::HeaderEncodingError,
                    "a proprietary header option needs a vendor id and an option type",
                ));
            }
            _ => {}
        }
        options.push(option);
        if marker & MARKER_MORE == 0 {
            return Ok(options);
        }
    }
}

/// Which VMACs, options and payload each function allows (Annex AB.2.4 .. AB.2.16).
#[derive(Clone, Copy)]
struct Shape {
    /// VMACs must be absent (connection-control messages between connection peers).
    no_vmacs: bool,
    /// Data options are allowed (Encapsulated-NPDU only).
    data_options: bool,
    /// The payload must not be empty.
    payload_required: bool,
    /// The payload must be empty.
    payload_forbidden: bool,
}

const fn shape(function: BvlcFunction) -> Shape {
    use BvlcFunction as F;
    let mut s = Shape {
        no_vmacs: false,
        data_options: false,
        payload_required: false,
        payload_forbidden: false,
    };
    match function {
        F::EncapsulatedNpdu => {
            s.data_options = true;
            s.payload_required = true;
        }
        F::BvlcResult | F::Advertisement | F::ProprietaryMessage => s.payload_required = true,
        F::AddressResolution | F::AdvertisementSolicitation => s.payload_forbidden = true,
        F::ConnectRequest | F::ConnectAccept => {
            s.no_vmacs = true;
            s.payload_required = true;
        }
        F::DisconnectRequest | F::DisconnectAck | F::HeartbeatRequest | F::HeartbeatAck => {
            s.no_vmacs = true;
            s.payload_forbidden = true;
        }
        F::AddressResolutionAck | F::Unknown(_) => {}
    }
    s
}

fn decode_known<'a>(
    bytes: &'a [u8],
    header: &BvlcHeader,
) -> Result<BvlcMessage<'a>, ScDecodeError> {
    let function = header.function;
    let rules = shape(function);
    let fail = |offset, code, detail| Err(ScDecodeError::new(function, offset, code, detail));
    if rules.no_vmacs && header.originating.is_some() {
        return fail(
            FIXED_HEADER_LENGTH,
            ErrorCode::HeaderEncodingError,
            "the Originating Virtual Address must be absent in this message",
        );
    }
    if rules.no_vmacs && header.destination.is_some() {
        return fail(
            FIXED_HEADER_LENGTH,
            ErrorCode::HeaderEncodingError,
            "the Destination Virtual Address must be absent in this message",
        );
    }
    let mut reader = Reader::new(bytes);
    // The header was read by `peek`; skip it.
    let _ = reader.read_bytes(header.rest_offset);
    let destination_options = if header.flags & control::DESTINATION_OPTIONS != 0 {
        read_options(&mut reader, OptionList::Destination, function)?
    } else {
        Vec::new()
    };
    let data_options = if header.flags & control::DATA_OPTIONS != 0 {
        if !rules.data_options {
            return fail(
                reader.position(),
                ErrorCode::InconsistentParameters,
                "only Encapsulated-NPDU may carry data options",
            );
        }
        read_options(&mut reader, OptionList::Data, function)?
    } else {
        Vec::new()
    };
    let payload_offset = reader.position();
    let body = reader.read_rest();
    if rules.payload_required && body.is_empty() {
        return fail(
            payload_offset,
            ErrorCode::PayloadExpected,
            "this message needs a payload",
        );
    }
    if rules.payload_forbidden && !body.is_empty() {
        return fail(
            payload_offset,
            ErrorCode::UnexpectedData,
            "this message carries no payload",
        );
    }
    let payload = decode_payload(function, body, payload_offset)?;
    Ok(BvlcMessage {
        message_id: header.message_id,
        originating: header.originating,
        destination: header.destination,
        destination_options,
        data_options,
        payload,
    })
}

fn fixed_length(
    function: BvlcFunction,
    body: &[u8],
    offset: usize,
    length: usize,
) -> Result<(), ScDecodeError> {
    if body.len() < length {
        return Err(ScDecodeError::new(
            function,
            offset + body.len(),
            ErrorCode::MessageIncomplete,
            "the payload is shorter than this message requires",
        ));
    }
    if body.len() > length {
        return Err(ScDecodeError::new(
            function,
            offset + length,
            ErrorCode::UnexpectedData,
            "the payload is longer than this message allows",
        ));
    }
    Ok(())
}

fn decode_payload(
    function: BvlcFunction,
    body: &[u8],
    offset: usize,
) -> Result<Payload<'_>, ScDecodeError> {
    use BvlcFunction as F;
    let fail =
        |at: usize, code, detail| Err(ScDecodeError::new(function, offset + at, code, detail));
    Ok(match function {
        F::BvlcResult => return decode_result(body, offset),
        F::EncapsulatedNpdu => Payload::EncapsulatedNpdu(body),
        F::AddressResolution => Payload::AddressResolution,
        F::AddressResolutionAck => match std::str::from_utf8(body) {
            Ok(text) => Payload::AddressResolutionAck(text),
            Err(e) => {
                return fail(
                    e.valid_up_to(),
                    ErrorCode::InconsistentParameters,
                    "the WebSocket URI list is not UTF-8",
                );
            }
        },
        F::Advertisement => {
            fixed_length(function, body, offset, ADVERTISEMENT_PAYLOAD_LENGTH)?;
            let status = HubConnectionStatus::from_u32(u32::from(body[0]));
            if let HubConnectionStatus::Unknown(_) = status {
                return fail(
                    0,
                    ErrorCode::ParameterOutOfRange,
                    "the hub connection status is not 0, 1 or 2",
                );
            }
            if body[1] > 1 {
                return fail(
                    1,
                    ErrorCode::ParameterOutOfRange,
                    "accept-direct-connections is not 0 or 1",
                );
            }
            Payload::Advertisement(Advertisement {
                hub_status: status,
                accepts_direct_connections: body[1] == 1,
                max_bvlc_length: u16::from_be_bytes([body[2], body[3]]),
                max_npdu_length: u16::from_be_bytes([body[4], body[5]]),
            })
        }
        F::AdvertisementSolicitation => Payload::AdvertisementSolicitation,
        F::ConnectRequest | F::ConnectAccept => {
            fixed_length(function, body, offset, CONNECT_PAYLOAD_LENGTH)?;
            let mut vmac = [0u8; 6];
            vmac.copy_from_slice(&body[..6]);
            let mut uuid = [0u8; 16];
            uuid.copy_from_slice(&body[6..22]);
            let info = ConnectInfo {
                vmac: Vmac::new(vmac),
                uuid: DeviceUuid::new(uuid),
                max_bvlc_length: u16::from_be_bytes([body[22], body[23]]),
                max_npdu_length: u16::from_be_bytes([body[24], body[25]]),
            };
            if function == F::ConnectRequest {
                Payload::ConnectRequest(info)
            } else {
                Payload::ConnectAccept(info)
            }
        }
        F::DisconnectRequest => Payload::DisconnectRequest,
        F::DisconnectAck => Payload::DisconnectAck,
        F::HeartbeatRequest => Payload::HeartbeatRequest,
        F::HeartbeatAck => Payload::HeartbeatAck,
        F::ProprietaryMessage => match body {
            [vendor_high, vendor_low, function, data @ ..] => Payload::Proprietary {
                vendor_id: u16::from_be_bytes([*vendor_high, *vendor_low]),
                function: *function,
                data,
            },
            _ => {
                return fail(
                    body.len(),
                    ErrorCode::MessageIncomplete,
                    "a proprietary message needs a vendor id and a function",
                );
            }
        },
        F::Unknown(_) => {
            return fail(0, ErrorCode::BvlcFunctionUnknown, "unknown BVLC function");
        }
    })
}

fn decode_result(body: &[u8], offset: usize) -> Result<Payload<'_>, ScDecodeError> {
    let function = BvlcFunction::BvlcResult;
    let fail =
        |at: usize, code, detail| Err(ScDecodeError::new(function, offset + at, code, detail));
    let (for_function, code, rest) = match body {
        [for_function, code, rest @ ..] => (*for_function, *code, rest),
        _ => {
            return fail(
                body.len(),
                ErrorCode::MessageIncomplete,
                "a BVLC-Result needs the function and the result code",
            );
        }
    };
    // Any function value is accepted: the NAK that answers an unknown function names it.
    let for_function = BvlcFunction::from_u32(u32::from(for_function));
    let outcome = match (code, rest) {
        (0, []) => ResultOutcome::Ack,
        (0, _) => {
            return fail(
                2,
                ErrorCode::UnexpectedData,
                "an ACK result carries no more data",
            );
        }
        (
            1,
            [
                marker,
                class_high,
                class_low,
                code_high,
                code_low,
                details @ ..,
            ],
        ) => {
            let Ok(details) = std::str::from_utf8(details) else {
                return fail(
                    7,
                    ErrorCode::InconsistentParameters,
                    "the error details are not UTF-8",
                );
            };
            ResultOutcome::Nak {
                header_marker: *marker,
                error_class: ErrorClass::from_u32(u32::from(u16::from_be_bytes([
                    *class_high,
                    *class_low,
                ]))),
                error_code: ErrorCode::from_u32(u32::from(u16::from_be_bytes([
                    *code_high, *code_low,
                ]))),
                details,
            }
        }
        (1, _) => {
            return fail(
                body.len(),
                ErrorCode::MessageIncomplete,
                "a NAK result needs the header marker, error class and error code",
            );
        }
        _ => {
            return fail(
                1,
                ErrorCode::ParameterOutOfRange,
                "the result code is not 0 (ACK) or 1 (NAK)",
            );
        }
    };
    Ok(Payload::Result(BvlcResult {
        for_function,
        outcome,
    }))
}

/// The first header option with must-understand set whose type this implementation does
/// not know, for the HEADER_NOT_UNDERSTOOD NAK (its marker goes in the NAK).
pub fn first_not_understood<'a>(options: &[HeaderOption<'a>]) -> Option<HeaderOption<'a>> {
    options
        .iter()
        .find(|o| o.must_understand && !o.is_understood())
        .copied()
}

/// The header marker octet of an option (as a NAK reports it).
pub fn header_marker(option: &HeaderOption<'_>) -> u8 {
    let mut marker = option.option_type & MARKER_TYPE;
    if option.must_understand {
        marker |= MARKER_MUST_UNDERSTAND;
    }
    if option.data.is_some() {
        marker |= MARKER_HAS_DATA;
    }
    marker
}

/// Builds the BVLC-Result NAK answering a message with `header` that failed with `code`.
/// It goes back to where the message came from: through a hub to the originating VMAC
/// (when the message had one), or to the connection peer.
pub fn nak_for(
    header: &BvlcHeader,
    code: ErrorCode,
    header_marker: u8,
    details: &str,
    out: &mut Vec<u8>,
) {
    let result = BvlcResult {
        for_function: header.function,
        outcome: ResultOutcome::Nak {
            header_marker,
            error_class: ErrorClass::Communication,
            error_code: code,
            details,
        },
    };
    let mut message = BvlcMessage::new(header.message_id, Payload::Result(result));
    message.destination = header.originating;
    message.encode(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(message: &BvlcMessage<'_>) -> Vec<u8> {
        let bytes = message.to_bytes();
        let decoded = BvlcMessage::decode(&bytes).unwrap();
        assert_eq!(&decoded, message);
        bytes
    }

    #[test]
    fn encapsulated_npdu_layout_matches_the_annex() {
        let npdu = [0x01, 0x00, 0x10, 0x08];
        let mut message = BvlcMessage::new(0x1234, Payload::EncapsulatedNpdu(&npdu));
        message.destination = Some(Vmac::BROADCAST);
        let bytes = round_trip(&message);
        assert_eq!(
            bytes,
            [
                0x01, 0x04, 0x12, 0x34, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x10, 0x08
            ]
        );
        let mut fast = Vec::new();
        encode_encapsulated_npdu(&mut fast, 0x1234, None, Some(Vmac::BROADCAST), &npdu);
        assert_eq!(fast, bytes);
    }

    #[test]
    fn every_function_round_trips() {
        let info = ConnectInfo {
            vmac: Vmac::new([2, 0, 0, 0, 0, 1]),
            uuid: DeviceUuid::random_v4([9; 16]),
            max_bvlc_length: 1600,
            max_npdu_length: 1497,
        };
        let payloads = [
            Payload::Result(BvlcResult {
                for_function: BvlcFunction::EncapsulatedNpdu,
                outcome: ResultOutcome::Ack,
            }),
            Payload::Result(BvlcResult::nak(
                BvlcFunction::ConnectRequest,
                ErrorCode::NodeDuplicateVmac,
                "taken",
            )),
            Payload::EncapsulatedNpdu(&[1, 0, 0x10, 8]),
            Payload::AddressResolution,
            Payload::AddressResolutionAck("wss://10.0.0.1:4443 wss://node.example:4443"),
            Payload::Advertisement(Advertisement {
                hub_status: HubConnectionStatus::ConnectedToFailoverHub,
                accepts_direct_connections: true,
                max_bvlc_length: 1600,
                max_npdu_length: 1497,
            }),
            Payload::AdvertisementSolicitation,
            Payload::ConnectRequest(info),
            Payload::ConnectAccept(info),
            Payload::DisconnectRequest,
            Payload::DisconnectAck,
            Payload::HeartbeatRequest,
            Payload::HeartbeatAck,
            Payload::Proprietary {
                vendor_id: 555,
                function: 7,
                data: &[1, 2, 3],
            },
        ];
        assert_eq!(payloads.len(), 14);
        for payload in payloads {
            let no_vmacs = shape(payload.function()).no_vmacs;
            let mut message = BvlcMessage::new(7, payload);
            if !no_vmacs {
                message.originating = Some(Vmac::new([2, 1, 1, 1, 1, 1]));
                message.destination = Some(Vmac::new([2, 2, 2, 2, 2, 2]));
                message.destination_options = vec![HeaderOption {
                    option_type: OPTION_PROPRIETARY,
                    must_understand: false,
                    data: Some(&[0, 9, 1, 0xAA]),
                }];
            }
            if message.function() == BvlcFunction::EncapsulatedNpdu {
                message.data_options = vec![HeaderOption::secure_path()];
            }
            round_trip(&message);
        }
    }

    #[test]
    fn rules_of_the_annex_are_enforced_with_the_right_codes() {
        let code = |bytes: &[u8]| BvlcMessage::decode(bytes).unwrap_err().code;
        // Fewer than four octets: not answerable.
        let short = BvlcMessage::decode(&[1, 0, 0]).unwrap_err();
        assert!(!short.answerable);
        assert_eq!(code(&[0x0D, 0, 0, 1]), ErrorCode::BvlcFunctionUnknown);
        assert_eq!(
            code(&[0x01, 0x08, 0, 1, 2, 2]),
            ErrorCode::MessageIncomplete
        );
        assert_eq!(code(&[0x01, 0x00, 0, 1]), ErrorCode::PayloadExpected);
        assert_eq!(code(&[0x0A, 0x00, 0, 1, 5]), ErrorCode::UnexpectedData);
        assert_eq!(
            code(&[0x0A, 0x08, 0, 1, 2, 2, 2, 2, 2, 2]),
            ErrorCode::HeaderEncodingError
        );
        assert_eq!(
            code(&[0x06, 0x00, 0, 1, 2, 2]),
            ErrorCode::MessageIncomplete
        );
        let mut long_connect = vec![0x06, 0x00, 0, 1];
        long_connect.extend_from_slice(&[0; 27]);
        assert_eq!(code(&long_connect), ErrorCode::UnexpectedData);
        // Data options on a heartbeat.
        assert_eq!(
            code(&[0x0A, 0x01, 0, 1, 0x41]),
            ErrorCode::InconsistentParameters
        );
        // Secure Path among destination options.
        assert_eq!(
            code(&[0x01, 0x02, 0, 1, 0x41, 0x01]),
            ErrorCode::HeaderEncodingError
        );
        // An option whose data runs past the end.
        assert_eq!(
            code(&[0x01, 0x01, 0, 1, 0x3F, 0x00, 0x09, 1]),
            ErrorCode::MessageIncomplete
        );
        // Result code 2, advertisement status 3.
        assert_eq!(code(&[0x00, 0, 0, 1, 1, 2]), ErrorCode::ParameterOutOfRange);
        assert_eq!(
            code(&[0x04, 0, 0, 1, 3, 0, 6, 0x40, 5, 0xD9]),
            ErrorCode::ParameterOutOfRange
        );
        // Too many options.
        let mut many = vec![0x01, 0x01, 0, 1];
        many.extend(std::iter::repeat_n(0x81u8, MAX_HEADER_OPTIONS + 1));
        many.push(1);
        assert_eq!(code(&many), ErrorCode::HeaderEncodingError);
    }

    #[test]
    fn relaying_sets_the_originator_and_keeps_options() {
        let npdu = [1, 0, 0x10, 8];
        let mut message = BvlcMessage::new(9, Payload::EncapsulatedNpdu(&npdu));
        // A non-conforming node claims an originating VMAC; the hub replaces it.
        message.originating = Some(Vmac::new([6; 6]));
        message.destination = Some(Vmac::new([2, 2, 2, 2, 2, 2]));
        message.data_options = vec![HeaderOption::secure_path()];
        let bytes = message.to_bytes();
        let header = BvlcHeader::peek(&bytes).unwrap();
        let sender = Vmac::new([2, 9, 9, 9, 9, 9]);
        let unicast = relay_rewrite(&bytes, &header, sender);
        let relayed = BvlcMessage::decode(&unicast).unwrap();
        assert_eq!(relayed.originating, Some(sender));
        assert_eq!(relayed.destination, None);
        assert_eq!(relayed.data_options, vec![HeaderOption::secure_path()]);
        assert_eq!(relayed.payload, Payload::EncapsulatedNpdu(&npdu));

        message.originating = None;
        message.destination = Some(Vmac::BROADCAST);
        let bytes = message.to_bytes();
        let header = BvlcHeader::peek(&bytes).unwrap();
        let broadcast = BvlcMessage::decode(&relay_rewrite(&bytes, &header, sender))
            .unwrap()
            .to_bytes();
        let relayed = BvlcMessage::decode(&broadcast).unwrap();
        assert_eq!(relayed.originating, Some(sender));
        assert_eq!(relayed.destination, Some(Vmac::BROADCAST));
    }
}
