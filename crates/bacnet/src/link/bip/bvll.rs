//! Annex J BACnet Virtual Link Layer for BACnet/IP (BVLC type X'81'): every function
//! X'00'..X'0C', broadcast-distribution and foreign-device tables, with the length field
//! checked against the datagram.

use std::net::{Ipv4Addr, SocketAddrV4};

use crate::encoding::{DecodeError, DecodeErrorKind, Reader};

/// BVLC type octet for BACnet/IP (Annex J.2).
pub const BVLC_TYPE_BIP: u8 = 0x81;
/// Size of the BVLC header: type, function, 2-octet length.
pub const HEADER_LENGTH: usize = 4;
/// Size of a B/IP address on the wire: 4-octet IPv4 address and 2-octet UDP port.
pub const BIP_ADDRESS_LENGTH: usize = 6;
/// Size of one broadcast-distribution-table entry.
pub const BDT_ENTRY_LENGTH: usize = 10;
/// Size of one foreign-device-table entry in Read-FDT-Ack.
pub const FDT_ENTRY_LENGTH: usize = 10;

/// Function codes (Annex J.2).
mod function {
    pub const RESULT: u8 = 0x00;
    pub const WRITE_BDT: u8 = 0x01;
    pub const READ_BDT: u8 = 0x02;
    pub const READ_BDT_ACK: u8 = 0x03;
    pub const FORWARDED_NPDU: u8 = 0x04;
    pub const REGISTER_FOREIGN_DEVICE: u8 = 0x05;
    pub const READ_FDT: u8 = 0x06;
    pub const READ_FDT_ACK: u8 = 0x07;
    pub const DELETE_FDT_ENTRY: u8 = 0x08;
    pub const DISTRIBUTE_BROADCAST_TO_NETWORK: u8 = 0x09;
    pub const ORIGINAL_UNICAST_NPDU: u8 = 0x0A;
    pub const ORIGINAL_BROADCAST_NPDU: u8 = 0x0B;
    pub const SECURE_BVLL: u8 = 0x0C;
}

/// Result codes of BVLC-Result (Annex J.2.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BvlcResultCode {
    /// X'0000'
    SuccessfulCompletion,
    /// X'0010'
    WriteBdtNak,
    /// X'0020'
    ReadBdtNak,
    /// X'0030'
    RegisterForeignDeviceNak,
    /// X'0040'
    ReadFdtNak,
    /// X'0050'
    DeleteFdtEntryNak,
    /// X'0060'
    DistributeBroadcastToNetworkNak,
    /// Any other code.
    Other(u16),
}

impl BvlcResultCode {
    /// From the wire value.
    pub const fn from_u16(value: u16) -> Self {
        match value {
            0x0000 => Self::SuccessfulCompletion,
            0x0010 => Self::WriteBdtNak,
            0x0020 => Self::ReadBdtNak,
            0x0030 => Self::RegisterForeignDeviceNak,
            0x0040 => Self::ReadFdtNak,
            0x0050 => Self::DeleteFdtEntryNak,
            0x0060 => Self::DistributeBroadcastToNetworkNak,
            other => Self::Other(other),
        }
    }

    /// The wire value.
    pub const fn to_u16(self) -> u16 {
        match self {
            Self::SuccessfulCompletion => 0x0000,
            Self::WriteBdtNak => 0x0010,
            Self::ReadBdtNak => 0x0020,
            Self::RegisterForeignDeviceNak => 0x0030,
            Self::ReadFdtNak => 0x0040,
            Self::DeleteFdtEntryNak => 0x0050,
            Self::DistributeBroadcastToNetworkNak => 0x0060,
            Self::Other(other) => other,
        }
    }
}

/// One broadcast-distribution-table entry: a BBMD address and its broadcast mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BdtEntry {
    /// B/IP address of the BBMD.
    pub address: SocketAddrV4,
    /// Broadcast distribution mask.
    pub mask: Ipv4Addr,
}

/// One foreign-device-table entry as reported by Read-FDT-Ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FdtEntry {
    /// B/IP address of the foreign device.
    pub address: SocketAddrV4,
    /// Time-to-live the device registered with, in seconds.
    pub time_to_live: u16,
    /// Seconds left before the entry is purged.
    pub remaining: u16,
}

/// A BVLL message, borrowing NPDUs from the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bvll<'a> {
    /// X'00' BVLC-Result.
    Result(BvlcResultCode),
    /// X'01' Write-Broadcast-Distribution-Table.
    WriteBdt(Vec<BdtEntry>),
    /// X'02' Read-Broadcast-Distribution-Table.
    ReadBdt,
    /// X'03' Read-Broadcast-Distribution-Table-Ack.
    ReadBdtAck(Vec<BdtEntry>),
    /// X'04' Forwarded-NPDU with the original source address.
    ForwardedNpdu {
        /// B/IP address of the device that sent the original broadcast.
        source: SocketAddrV4,
        /// The NPDU.
        npdu: &'a [u8],
    },
    /// X'05' Register-Foreign-Device with its time-to-live in seconds.
    RegisterForeignDevice {
        /// Time-to-live in seconds.
        time_to_live: u16,
    },
    /// X'06' Read-Foreign-Device-Table.
    ReadFdt,
    /// X'07' Read-Foreign-Device-Table-Ack.
    ReadFdtAck(Vec<FdtEntry>),
    /// X'08' Delete-Foreign-Device-Table-Entry.
    DeleteFdtEntry(SocketAddrV4),
    /// X'09' Distribute-Broadcast-To-Network.
    DistributeBroadcastToNetwork(&'a [u8]),
    /// X'0A' Original-Unicast-NPDU.
    OriginalUnicastNpdu(&'a [u8]),
    /// X'0B' Original-Broadcast-NPDU.
    OriginalBroadcastNpdu(&'a [u8]),
    /// X'0C' Secure-BVLL: the security wrapper, not interpreted here.
    SecureBvll(&'a [u8]),
}

fn encode_address(address: &SocketAddrV4, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&address.ip().octets());
    buf.extend_from_slice(&address.port().to_be_bytes());
}

fn decode_address(reader: &mut Reader<'_>) -> Result<SocketAddrV4, DecodeError> {
    let ip = Ipv4Addr::from(reader.read_array::<4>()?);
    Ok(SocketAddrV4::new(ip, reader.read_u16()?))
}

fn entry_count(reader: &Reader<'_>, entry_length: usize) -> Result<usize, DecodeError> {
    let remaining = reader.remaining();
    if !remaining.is_multiple_of(entry_length) {
        return Err(reader.error(DecodeErrorKind::InvalidLength {
            length: remaining as u32,
        }));
    }
    Ok(remaining / entry_length)
}

fn decode_bdt(reader: &mut Reader<'_>) -> Result<Vec<BdtEntry>, DecodeError> {
    // The count is bounded by the datagram (checked above), so the allocation is too.
    let count = entry_count(reader, BDT_ENTRY_LENGTH)?;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let address = decode_address(reader)?;
        let mask = Ipv4Addr::from(reader.read_array::<4>()?);
        entries.push(BdtEntry { address, mask });
    }
    Ok(entries)
}

fn encode_bdt(entries: &[BdtEntry], buf: &mut Vec<u8>) {
    for entry in entries {
        encode_address(&entry.address, buf);
        buf.extend_from_slice(&entry.mask.octets());
    }
}

impl<'a> Bvll<'a> {
    /// The function code.
    pub const fn function(&self) -> u8 {
        match self {
            Self::Result(_) => function::RESULT,
            Self::WriteBdt(_) => function::WRITE_BDT,
            Self::ReadBdt => function::READ_BDT,
            Self::ReadBdtAck(_) => function::READ_BDT_ACK,
            Self::ForwardedNpdu { .. } => function::FORWARDED_NPDU,
            Self::RegisterForeignDevice { .. } => function::REGISTER_FOREIGN_DEVICE,
            Self::ReadFdt => function::READ_FDT,
            Self::ReadFdtAck(_) => function::READ_FDT_ACK,
            Self::DeleteFdtEntry(_) => function::DELETE_FDT_ENTRY,
            Self::DistributeBroadcastToNetwork(_) => function::DISTRIBUTE_BROADCAST_TO_NETWORK,
            Self::OriginalUnicastNpdu(_) => function::ORIGINAL_UNICAST_NPDU,
            Self::OriginalBroadcastNpdu(_) => function::ORIGINAL_BROADCAST_NPDU,
            Self::SecureBvll(_) => function::SECURE_BVLL,
        }
    }

    /// The NPDU this message carries, if any.
    pub const fn npdu(&self) -> Option<&'a [u8]> {
        match self {
            Self::ForwardedNpdu { npdu, .. }
            | Self::DistributeBroadcastToNetwork(npdu)
            | Self::OriginalUnicastNpdu(npdu)
            | Self::OriginalBroadcastNpdu(npdu) => Some(npdu),
            _ => None,
        }
    }

    /// Appends the datagram (header with its length field, then the payload).
    /// Payloads that would overflow the 16-bit length field are truncated in the length
    /// field only; callers keep datagrams within the 1497-octet B/IP limit.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let start = buf.len();
        buf.extend_from_slice(&[BVLC_TYPE_BIP, self.function(), 0, 0]);
        match self {
            Self::Result(code) => buf.extend_from_slice(&code.to_u16().to_be_bytes()),
            Self::WriteBdt(entries) | Self::ReadBdtAck(entries) => encode_bdt(entries, buf),
            Self::ReadBdt | Self::ReadFdt => {}
            Self::ForwardedNpdu { source, npdu } => {
                encode_address(source, buf);
                buf.extend_from_slice(npdu);
            }
            Self::RegisterForeignDevice { time_to_live } => {
                buf.extend_from_slice(&time_to_live.to_be_bytes());
            }
            Self::ReadFdtAck(entries) => {
                for entry in entries {
                    encode_address(&entry.address, buf);
                    buf.extend_from_slice(&entry.time_to_live.to_be_bytes());
                    buf.extend_from_slice(&entry.remaining.to_be_bytes());
                }
            }
            Self::DeleteFdtEntry(address) => encode_address(address, buf),
            Self::DistributeBroadcastToNetwork(npdu)
            | Self::OriginalUnicastNpdu(npdu)
            | Self::OriginalBroadcastNpdu(npdu)
            | Self::SecureBvll(npdu) => buf.extend_from_slice(npdu),
        }
        let length = u16::try_from(buf.len() - start).unwrap_or(u16::MAX);
        buf[start + 2..start + 4].copy_from_slice(&length.to_be_bytes());
    }

    /// Decodes one datagram: the whole of `datagram`, whose length the BVLC length field
    /// must equal.
    pub fn decode_datagram(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode(&mut Reader::new(datagram))
    }

    /// Decodes a message that fills the rest of `reader` (one UDP datagram).
    pub fn decode(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = reader.position();
        let datagram_length = reader.remaining();
        let bvlc_type = reader.read_u8()?;
        if bvlc_type != BVLC_TYPE_BIP {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue("BVLC type must be X'81'"),
            ));
        }
        let function = reader.read_u8()?;
        let length = reader.read_u16()?;
        if usize::from(length) != datagram_length {
            return Err(DecodeError::new(
                start + 2,
                DecodeErrorKind::InvalidValue("BVLC length does not match the datagram"),
            ));
        }
        let message = match function {
            function::RESULT => Self::Result(BvlcResultCode::from_u16(reader.read_u16()?)),
            function::WRITE_BDT => Self::WriteBdt(decode_bdt(reader)?),
            function::READ_BDT => Self::ReadBdt,
            function::READ_BDT_ACK => Self::ReadBdtAck(decode_bdt(reader)?),
            function::FORWARDED_NPDU => Self::ForwardedNpdu {
                source: decode_address(reader)?,
                npdu: reader.read_rest(),
            },
            function::REGISTER_FOREIGN_DEVICE => Self::RegisterForeignDevice {
                time_to_live: reader.read_u16()?,
            },
            function::READ_FDT => Self::ReadFdt,
            function::READ_FDT_ACK => {
                let count = entry_count(reader, FDT_ENTRY_LENGTH)?;
                let mut entries = Vec::with_capacity(count);
                for _ in 0..count {
                    entries.push(FdtEntry {
                        address: decode_address(reader)?,
                        time_to_live: reader.read_u16()?,
                        remaining: reader.read_u16()?,
                    });
                }
                Self::ReadFdtAck(entries)
            }
            function::DELETE_FDT_ENTRY => Self::DeleteFdtEntry(decode_address(reader)?),
            function::DISTRIBUTE_BROADCAST_TO_NETWORK => {
                Self::DistributeBroadcastToNetwork(reader.read_rest())
            }
            function::ORIGINAL_UNICAST_NPDU => Self::OriginalUnicastNpdu(reader.read_rest()),
            function::ORIGINAL_BROADCAST_NPDU => Self::OriginalBroadcastNpdu(reader.read_rest()),
            function::SECURE_BVLL => Self::SecureBvll(reader.read_rest()),
            _ => {
                return Err(DecodeError::new(
                    start + 1,
                    DecodeErrorKind::InvalidValue("unknown BVLC function"),
                ));
            }
        };
        reader.expect_end()?;
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(message: &Bvll<'_>, bytes: &[u8]) {
        let mut buf = Vec::new();
        message.encode(&mut buf);
        assert_eq!(buf, bytes, "encoding {message:?}");
        assert_eq!(&Bvll::decode_datagram(bytes).unwrap(), message);
    }

    fn addr(a: u8, b: u8, c: u8, d: u8, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(a, b, c, d), port)
    }

    #[test]
    fn every_function() {
        round_trip(
            &Bvll::Result(BvlcResultCode::RegisterForeignDeviceNak),
            &[0x81, 0x00, 0x00, 0x06, 0x00, 0x30],
        );
        let bdt = vec![BdtEntry {
            address: addr(192, 168, 1, 1, 0xBAC0),
            mask: Ipv4Addr::new(255, 255, 255, 255),
        }];
        let bdt_bytes = [192, 168, 1, 1, 0xBA, 0xC0, 255, 255, 255, 255];
        round_trip(
            &Bvll::WriteBdt(bdt.clone()),
            &[[0x81, 0x01, 0x00, 0x0E].as_slice(), &bdt_bytes].concat(),
        );
        round_trip(&Bvll::ReadBdt, &[0x81, 0x02, 0x00, 0x04]);
        round_trip(
            &Bvll::ReadBdtAck(bdt),
            &[[0x81, 0x03, 0x00, 0x0E].as_slice(), &bdt_bytes].concat(),
        );
        round_trip(
            &Bvll::ForwardedNpdu {
                source: addr(10, 0, 0, 7, 47808),
                npdu: &[0x01, 0x00, 0x10, 0x08],
            },
            &[
                0x81, 0x04, 0x00, 0x0E, 10, 0, 0, 7, 0xBA, 0xC0, 0x01, 0x00, 0x10, 0x08,
            ],
        );
        round_trip(
            &Bvll::RegisterForeignDevice { time_to_live: 60 },
            &[0x81, 0x05, 0x00, 0x06, 0x00, 0x3C],
        );
        round_trip(&Bvll::ReadFdt, &[0x81, 0x06, 0x00, 0x04]);
        round_trip(
            &Bvll::ReadFdtAck(vec![FdtEntry {
                address: addr(10, 0, 0, 9, 47809),
                time_to_live: 60,
                remaining: 90,
            }]),
            &[
                0x81, 0x07, 0x00, 0x0E, 10, 0, 0, 9, 0xBA, 0xC1, 0x00, 0x3C, 0x00, 0x5A,
            ],
        );
        round_trip(
            &Bvll::DeleteFdtEntry(addr(10, 0, 0, 9, 47809)),
            &[0x81, 0x08, 0x00, 0x0A, 10, 0, 0, 9, 0xBA, 0xC1],
        );
        round_trip(
            &Bvll::DistributeBroadcastToNetwork(&[0x01, 0x00]),
            &[0x81, 0x09, 0x00, 0x06, 0x01, 0x00],
        );
        round_trip(
            &Bvll::OriginalUnicastNpdu(&[0x01, 0x04]),
            &[0x81, 0x0A, 0x00, 0x06, 0x01, 0x04],
        );
        // Who-Is broadcast as sent by most B/IP tools.
        round_trip(
            &Bvll::OriginalBroadcastNpdu(&[0x01, 0x20, 0xFF, 0xFF, 0x00, 0xFF, 0x10, 0x08]),
            &[
                0x81, 0x0B, 0x00, 0x0C, 0x01, 0x20, 0xFF, 0xFF, 0x00, 0xFF, 0x10, 0x08,
            ],
        );
        round_trip(&Bvll::SecureBvll(&[0xAB]), &[0x81, 0x0C, 0x00, 0x05, 0xAB]);
    }

    #[test]
    fn malformed_datagrams() {
        let cases: [(&[u8], DecodeError); 6] = [
            (
                &[0x82, 0x0A, 0x00, 0x04],
                DecodeError::new(0, DecodeErrorKind::InvalidValue("BVLC type must be X'81'")),
            ),
            (
                &[0x81, 0x0A, 0x00, 0x05],
                DecodeError::new(
                    2,
                    DecodeErrorKind::InvalidValue("BVLC length does not match the datagram"),
                ),
            ),
            (
                &[0x81, 0x0D, 0x00, 0x04],
                DecodeError::new(1, DecodeErrorKind::InvalidValue("unknown BVLC function")),
            ),
            (
                &[0x81, 0x01, 0x00, 0x07, 1, 2, 3],
                DecodeError::new(4, DecodeErrorKind::InvalidLength { length: 3 }),
            ),
            (
                &[0x81, 0x00, 0x00, 0x05, 0x00],
                DecodeError::new(
                    4,
                    DecodeErrorKind::Truncated {
                        needed: 2,
                        remaining: 1,
                    },
                ),
            ),
            (
                &[0x81, 0x02, 0x00, 0x05, 0x00],
                DecodeError::new(4, DecodeErrorKind::TrailingData { count: 1 }),
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(Bvll::decode_datagram(bytes).unwrap_err(), expected);
        }
        assert!(matches!(
            Bvll::decode_datagram(&[0x81]).unwrap_err().kind,
            DecodeErrorKind::Truncated { .. }
        ));
    }
}
