//! Clause 6.2 NPDU: protocol version, control octet, optional destination and source
//! network addresses, hop count, and either an APDU or a network-layer message.

use crate::encoding::{DecodeError, DecodeErrorKind, Reader};

use super::message_type::NetworkMessageType;

/// The only defined BACnet protocol version (Clause 6.2.1).
pub const PROTOCOL_VERSION: u8 = 0x01;
/// Longest MAC address accepted in DADR/SADR. The largest data-link address in use is
/// 18 octets (an IPv6 address and port); DLEN/SLEN above this are rejected.
pub const MAX_MAC_LENGTH: usize = 18;
/// Network number meaning "all networks" in DNET (Clause 6.2.2).
pub const GLOBAL_BROADCAST_NETWORK: u16 = 0xFFFF;
/// Hop count a new routed message starts with.
pub const DEFAULT_HOP_COUNT: u8 = 255;

const CONTROL_NETWORK_MESSAGE: u8 = 0x80;
const CONTROL_DESTINATION: u8 = 0x20;
const CONTROL_SOURCE: u8 = 0x08;
const CONTROL_EXPECTING_REPLY: u8 = 0x04;
const CONTROL_RESERVED: u8 = 0x50;

/// Network priority (control bits 1..0, Clause 6.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NetworkPriority {
    /// Normal message.
    #[default]
    Normal = 0,
    /// Urgent message.
    Urgent = 1,
    /// Critical equipment message.
    CriticalEquipment = 2,
    /// Life safety message.
    LifeSafety = 3,
}

impl NetworkPriority {
    const fn from_bits(bits: u8) -> Self {
        match bits & 0x03 {
            0 => Self::Normal,
            1 => Self::Urgent,
            2 => Self::CriticalEquipment,
            _ => Self::LifeSafety,
        }
    }
}

/// A data-link (MAC) address of 0..=[`MAX_MAC_LENGTH`] octets, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddress {
    len: u8,
    bytes: [u8; MAX_MAC_LENGTH],
}

impl MacAddress {
    /// The empty address (in a destination: broadcast on the remote network).
    pub const BROADCAST: Self = Self {
        len: 0,
        bytes: [0; MAX_MAC_LENGTH],
    };

    /// An address from octets, or `None` when longer than [`MAX_MAC_LENGTH`].
    pub fn new(octets: &[u8]) -> Option<Self> {
        let mut bytes = [0; MAX_MAC_LENGTH];
        bytes.get_mut(..octets.len())?.copy_from_slice(octets);
        Some(Self {
            len: octets.len() as u8,
            bytes,
        })
    }

    /// The octets.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// True for the empty (broadcast) address.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for MacAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MacAddress({:02X?})", self.as_bytes())
    }
}

/// A network number and a MAC address on that network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteAddress {
    /// DNET or SNET.
    pub network: u16,
    /// DADR or SADR.
    pub mac: MacAddress,
}

/// What the NPDU carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpduBody<'a> {
    /// An application-layer PDU.
    Apdu(&'a [u8]),
    /// A network-layer message.
    NetworkMessage {
        /// The message type.
        message_type: NetworkMessageType,
        /// Vendor identifier, present exactly for proprietary types X'80'..X'FF'.
        vendor_id: Option<u16>,
        /// The message parameters.
        data: &'a [u8],
    },
}

/// A decoded NPDU borrowing its payload from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Npdu<'a> {
    /// DNET/DLEN/DADR; an empty MAC means broadcast on that network.
    pub destination: Option<RemoteAddress>,
    /// SNET/SLEN/SADR, added by routers.
    pub source: Option<RemoteAddress>,
    /// Hop count; only on the wire when `destination` is present.
    pub hop_count: u8,
    /// The data-expecting-reply bit.
    pub expecting_reply: bool,
    /// Network priority.
    pub priority: NetworkPriority,
    /// APDU or network message.
    pub body: NpduBody<'a>,
}

impl<'a> Npdu<'a> {
    /// A local (unrouted) NPDU carrying `apdu`.
    pub const fn local_apdu(apdu: &'a [u8], expecting_reply: bool) -> Self {
        Self {
            destination: None,
            source: None,
            hop_count: DEFAULT_HOP_COUNT,
            expecting_reply,
            priority: NetworkPriority::Normal,
            body: NpduBody::Apdu(apdu),
        }
    }

    /// Appends the NPDU.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let mut control = self.priority as u8;
        if self.expecting_reply {
            control |= CONTROL_EXPECTING_REPLY;
        }
        if self.destination.is_some() {
            control |= CONTROL_DESTINATION;
        }
        if self.source.is_some() {
            control |= CONTROL_SOURCE;
        }
        if matches!(self.body, NpduBody::NetworkMessage { .. }) {
            control |= CONTROL_NETWORK_MESSAGE;
        }
        buf.push(PROTOCOL_VERSION);
        buf.push(control);
        for address in [self.destination, self.source].into_iter().flatten() {
            buf.extend_from_slice(&address.network.to_be_bytes());
            buf.push(address.mac.len);
            buf.extend_from_slice(address.mac.as_bytes());
        }
        if self.destination.is_some() {
            buf.push(self.hop_count);
        }
        match self.body {
            NpduBody::Apdu(apdu) => buf.extend_from_slice(apdu),
            NpduBody::NetworkMessage {
                message_type,
                vendor_id,
                data,
            } => {
                let raw = message_type.to_u32() as u8;
                buf.push(raw);
                if raw >= 0x80 {
                    buf.extend_from_slice(&vendor_id.unwrap_or(0).to_be_bytes());
                }
                buf.extend_from_slice(data);
            }
        }
    }

    /// Decodes an NPDU; the rest of the input is the APDU or message data.
    pub fn decode(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let version_offset = reader.position();
        if reader.read_u8()? != PROTOCOL_VERSION {
            return Err(DecodeError::new(
                version_offset,
                DecodeErrorKind::InvalidValue("NPDU protocol version must be 1"),
            ));
        }
        let control_offset = reader.position();
        let control = reader.read_u8()?;
        if control & CONTROL_RESERVED != 0 {
            return Err(DecodeError::new(
                control_offset,
                DecodeErrorKind::InvalidValue("NPDU control reserved bits set"),
            ));
        }
        let destination = if control & CONTROL_DESTINATION != 0 {
            Some(decode_address(reader, false)?)
        } else {
            None
        };
        let source = if control & CONTROL_SOURCE != 0 {
            Some(decode_address(reader, true)?)
        } else {
            None
        };
        let hop_count = if destination.is_some() {
            reader.read_u8()?
        } else {
            DEFAULT_HOP_COUNT
        };
        let body = if control & CONTROL_NETWORK_MESSAGE != 0 {
            let message_type = reader.read_u8()?;
            let vendor_id = if message_type >= 0x80 {
                Some(reader.read_u16()?)
            } else {
                None
            };
            NpduBody::NetworkMessage {
                message_type: NetworkMessageType::from_u32(u32::from(message_type)),
                vendor_id,
                data: reader.read_rest(),
            }
        } else {
            NpduBody::Apdu(reader.read_rest())
        };
        Ok(Self {
            destination,
            source,
            hop_count,
            expecting_reply: control & CONTROL_EXPECTING_REPLY != 0,
            priority: NetworkPriority::from_bits(control),
            body,
        })
    }
}

fn decode_address(reader: &mut Reader<'_>, is_source: bool) -> Result<RemoteAddress, DecodeError> {
    let network_offset = reader.position();
    let network = reader.read_u16()?;
    if is_source && network == GLOBAL_BROADCAST_NETWORK {
        return Err(DecodeError::new(
            network_offset,
            DecodeErrorKind::InvalidValue("SNET must not be X'FFFF'"),
        ));
    }
    let length_offset = reader.position();
    let length = reader.read_u8()?;
    if is_source && length == 0 {
        return Err(DecodeError::new(
            length_offset,
            DecodeErrorKind::InvalidValue("SLEN must not be 0"),
        ));
    }
    if usize::from(length) > MAX_MAC_LENGTH {
        return Err(DecodeError::new(
            length_offset,
            DecodeErrorKind::LengthTooLarge {
                length: u64::from(length),
                limit: MAX_MAC_LENGTH as u64,
            },
        ));
    }
    let octets = reader.read_bytes(usize::from(length))?;
    let mac = MacAddress::new(octets).ok_or_else(|| {
        DecodeError::new(
            length_offset,
            DecodeErrorKind::InvalidValue("MAC address too long"),
        )
    })?;
    Ok(RemoteAddress { network, mac })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(npdu: &Npdu<'_>) -> Vec<u8> {
        let mut buf = Vec::new();
        npdu.encode(&mut buf);
        buf
    }

    #[test]
    fn local_who_is() {
        // Who-Is broadcast, as captured on any B/IP network: X'01 00' then APDU X'10 08'.
        let bytes = [0x01, 0x00, 0x10, 0x08];
        let npdu = Npdu::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(npdu, Npdu::local_apdu(&[0x10, 0x08], false));
        assert_eq!(encode(&npdu), bytes);
    }

    #[test]
    fn routed_with_destination_and_source() {
        let npdu = Npdu {
            destination: Some(RemoteAddress {
                network: 0xFFFF,
                mac: MacAddress::BROADCAST,
            }),
            source: Some(RemoteAddress {
                network: 5,
                mac: MacAddress::new(&[0x21]).unwrap(),
            }),
            hop_count: 254,
            expecting_reply: true,
            priority: NetworkPriority::Urgent,
            body: NpduBody::Apdu(&[0x10, 0x08]),
        };
        let bytes = encode(&npdu);
        assert_eq!(
            bytes,
            [
                0x01, 0x2D, 0xFF, 0xFF, 0x00, 0x00, 0x05, 0x01, 0x21, 0xFE, 0x10, 0x08
            ]
        );
        assert_eq!(Npdu::decode(&mut Reader::new(&bytes)).unwrap(), npdu);
    }

    #[test]
    fn network_messages_with_and_without_vendor() {
        // Who-Is-Router-To-Network for network 3 (Clause 6.4.1).
        let bytes = [0x01, 0x80, 0x00, 0x00, 0x03];
        let npdu = Npdu::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            npdu.body,
            NpduBody::NetworkMessage {
                message_type: NetworkMessageType::WhoIsRouterToNetwork,
                vendor_id: None,
                data: &[0x00, 0x03],
            }
        );
        assert_eq!(encode(&npdu), bytes);
        let proprietary = [0x01, 0x80, 0x85, 0x01, 0x04, 0xAA];
        let npdu = Npdu::decode(&mut Reader::new(&proprietary)).unwrap();
        assert_eq!(
            npdu.body,
            NpduBody::NetworkMessage {
                message_type: NetworkMessageType::Other(0x85),
                vendor_id: Some(260),
                data: &[0xAA],
            }
        );
        assert_eq!(encode(&npdu), proprietary);
    }

    #[test]
    fn malformed_headers() {
        let cases: [(&[u8], DecodeError); 6] = [
            (
                &[0x02, 0x00],
                DecodeError::new(
                    0,
                    DecodeErrorKind::InvalidValue("NPDU protocol version must be 1"),
                ),
            ),
            (
                &[0x01, 0x40],
                DecodeError::new(
                    1,
                    DecodeErrorKind::InvalidValue("NPDU control reserved bits set"),
                ),
            ),
            (
                &[0x01, 0x08, 0x00, 0x05, 0x00],
                DecodeError::new(4, DecodeErrorKind::InvalidValue("SLEN must not be 0")),
            ),
            (
                &[0x01, 0x08, 0xFF, 0xFF, 0x01, 0x01],
                DecodeError::new(2, DecodeErrorKind::InvalidValue("SNET must not be X'FFFF'")),
            ),
            (
                &[0x01, 0x20, 0x00, 0x05, 0x13],
                DecodeError::new(
                    4,
                    DecodeErrorKind::LengthTooLarge {
                        length: 19,
                        limit: 18,
                    },
                ),
            ),
            (
                &[0x01, 0x20, 0x00, 0x05, 0x06, 0x01],
                DecodeError::new(
                    5,
                    DecodeErrorKind::Truncated {
                        needed: 6,
                        remaining: 1,
                    },
                ),
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(Npdu::decode(&mut Reader::new(bytes)).unwrap_err(), expected);
        }
    }

    #[test]
    fn missing_hop_count_and_vendor_id() {
        let err = Npdu::decode(&mut Reader::new(&[0x01, 0x20, 0xFF, 0xFF, 0x00])).unwrap_err();
        assert_eq!(err.offset, 5);
        let err = Npdu::decode(&mut Reader::new(&[0x01, 0x80, 0x90, 0x01])).unwrap_err();
        assert_eq!(err.offset, 3);
    }
}
