//! Annex U BACnet/IPv6 virtual link layer (BVLL type X'82'): every message names its
//! sender's 3-octet virtual MAC address (VMAC), the BACnet MAC on a B/IPv6 network; address
//! resolution maps VMACs to IPv6 addresses and ports; broadcasts go to a multicast group
//! (X'FF02::BAC0' link-local, X'FF05::BAC0' site-local).

use std::fmt;
use std::net::{Ipv6Addr, SocketAddrV6};
use std::str::FromStr;

use crate::encoding::{DecodeError, DecodeErrorKind, Reader};

/// BVLC type octet of BACnet/IPv6.
pub const BVLC_TYPE_BIP6: u8 = 0x82;
/// The standard B/IPv6 UDP port (X'BAC0').
pub const BIP6_PORT: u16 = 0xBAC0;
/// Link-local BACnet multicast group, X'FF02::BAC0'.
pub const MULTICAST_LINK_LOCAL: Ipv6Addr = Ipv6Addr::new(0xFF02, 0, 0, 0, 0, 0, 0, 0xBAC0);
/// Site-local BACnet multicast group, X'FF05::BAC0'.
pub const MULTICAST_SITE_LOCAL: Ipv6Addr = Ipv6Addr::new(0xFF05, 0, 0, 0, 0, 0, 0, 0xBAC0);
/// Octets of a B/IPv6 address on the wire: 16 of address, 2 of port.
pub const BIP6_ADDRESS_LENGTH: usize = 18;

/// Function codes (Annex U.2).
pub mod function {
    /// BVLC-Result.
    pub const RESULT: u8 = 0x00;
    /// Original-Unicast-NPDU.
    pub const ORIGINAL_UNICAST_NPDU: u8 = 0x01;
    /// Original-Broadcast-NPDU.
    pub const ORIGINAL_BROADCAST_NPDU: u8 = 0x02;
    /// Address-Resolution.
    pub const ADDRESS_RESOLUTION: u8 = 0x03;
    /// Forwarded-Address-Resolution.
    pub const FORWARDED_ADDRESS_RESOLUTION: u8 = 0x04;
    /// Address-Resolution-ACK.
    pub const ADDRESS_RESOLUTION_ACK: u8 = 0x05;
    /// Virtual-Address-Resolution.
    pub const VIRTUAL_ADDRESS_RESOLUTION: u8 = 0x06;
    /// Virtual-Address-Resolution-ACK.
    pub const VIRTUAL_ADDRESS_RESOLUTION_ACK: u8 = 0x07;
    /// Forwarded-NPDU.
    pub const FORWARDED_NPDU: u8 = 0x08;
    /// Register-Foreign-Device.
    pub const REGISTER_FOREIGN_DEVICE: u8 = 0x09;
    /// Delete-Foreign-Device-Table-Entry.
    pub const DELETE_FOREIGN_DEVICE_TABLE_ENTRY: u8 = 0x0A;
    /// Secure-BVLL.
    pub const SECURE_BVLL: u8 = 0x0B;
    /// Distribute-Broadcast-To-Network.
    pub const DISTRIBUTE_BROADCAST_TO_NETWORK: u8 = 0x0C;
}

/// A 3-octet virtual MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Vmac(pub [u8; 3]);

impl Vmac {
    /// The VMAC Annex U suggests for a device: its 22-bit instance number.
    pub const fn from_device_instance(instance: u32) -> Self {
        let bytes = (instance & 0x3F_FFFF).to_be_bytes();
        Self([bytes[1], bytes[2], bytes[3]])
    }

    /// The VMAC of a 3-octet MAC address.
    pub fn from_mac(mac: &[u8]) -> Option<Self> {
        mac.try_into().ok().map(Self)
    }

    /// As a number 0..=0xFFFFFF.
    pub const fn to_u32(self) -> u32 {
        u32::from_be_bytes([0, self.0[0], self.0[1], self.0[2]])
    }
}

impl fmt::Debug for Vmac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Vmac({self})")
    }
}

impl fmt::Display for Vmac {
    /// Six hex digits, as in `NETWORK:HEXMAC`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02x}{:02x}{:02x}", self.0[0], self.0[1], self.0[2])
    }
}

impl FromStr for Vmac {
    type Err = String;

    /// Six hex digits (optionally `0x`-prefixed).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let hex = text.trim().trim_start_matches("0x");
        let value = u32::from_str_radix(hex, 16)
            .ok()
            .filter(|v| hex.len() == 6 && *v <= 0xFF_FFFF)
            .ok_or_else(|| format!("{text:?} is not a VMAC (six hex digits)"))?;
        let bytes = value.to_be_bytes();
        Ok(Self([bytes[1], bytes[2], bytes[3]]))
    }
}

/// BVLC-Result codes of Annex U.2.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bvlc6ResultCode {
    /// X'0000'.
    SuccessfulCompletion,
    /// X'0030'.
    AddressResolutionNak,
    /// X'0060'.
    VirtualAddressResolutionNak,
    /// X'0090'.
    RegisterForeignDeviceNak,
    /// X'00A0'.
    DeleteForeignDeviceTableEntryNak,
    /// X'00C0'.
    DistributeBroadcastToNetworkNak,
    /// Any other value.
    Other(u16),
}

impl Bvlc6ResultCode {
    /// From the wire value.
    pub const fn from_u16(value: u16) -> Self {
        match value {
            0x0000 => Self::SuccessfulCompletion,
            0x0030 => Self::AddressResolutionNak,
            0x0060 => Self::VirtualAddressResolutionNak,
            0x0090 => Self::RegisterForeignDeviceNak,
            0x00A0 => Self::DeleteForeignDeviceTableEntryNak,
            0x00C0 => Self::DistributeBroadcastToNetworkNak,
            other => Self::Other(other),
        }
    }

    /// The wire value.
    pub const fn to_u16(self) -> u16 {
        match self {
            Self::SuccessfulCompletion => 0x0000,
            Self::AddressResolutionNak => 0x0030,
            Self::VirtualAddressResolutionNak => 0x0060,
            Self::RegisterForeignDeviceNak => 0x0090,
            Self::DeleteForeignDeviceTableEntryNak => 0x00A0,
            Self::DistributeBroadcastToNetworkNak => 0x00C0,
            Self::Other(other) => other,
        }
    }
}

/// A BACnet/IPv6 BVLL message, borrowing NPDUs from the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bvll6<'a> {
    /// X'00' BVLC-Result.
    Result {
        /// The sender's VMAC.
        source: Vmac,
        /// The result.
        code: Bvlc6ResultCode,
    },
    /// X'01' Original-Unicast-NPDU.
    OriginalUnicastNpdu {
        /// The sender's VMAC.
        source: Vmac,
        /// The addressee's VMAC.
        destination: Vmac,
        /// The NPDU.
        npdu: &'a [u8],
    },
    /// X'02' Original-Broadcast-NPDU (sent to the multicast group).
    OriginalBroadcastNpdu {
        /// The sender's VMAC.
        source: Vmac,
        /// The NPDU.
        npdu: &'a [u8],
    },
    /// X'03' Address-Resolution: who has `target`?
    AddressResolution {
        /// The asker's VMAC.
        source: Vmac,
        /// The VMAC looked for.
        target: Vmac,
    },
    /// X'04' Forwarded-Address-Resolution (from a BBMD).
    ForwardedAddressResolution {
        /// The original asker's VMAC.
        source: Vmac,
        /// The VMAC looked for.
        target: Vmac,
        /// The original asker's B/IPv6 address.
        original: SocketAddrV6,
    },
    /// X'05' Address-Resolution-ACK.
    AddressResolutionAck {
        /// The answering node's VMAC (the one looked for).
        source: Vmac,
        /// The asker's VMAC.
        destination: Vmac,
    },
    /// X'06' Virtual-Address-Resolution: what is your VMAC?
    VirtualAddressResolution {
        /// The asker's VMAC.
        source: Vmac,
    },
    /// X'07' Virtual-Address-Resolution-ACK.
    VirtualAddressResolutionAck {
        /// The answering node's VMAC.
        source: Vmac,
        /// The asker's VMAC.
        destination: Vmac,
    },
    /// X'08' Forwarded-NPDU with the original source.
    ForwardedNpdu {
        /// The original sender's VMAC.
        source: Vmac,
        /// The original sender's B/IPv6 address.
        original: SocketAddrV6,
        /// The NPDU.
        npdu: &'a [u8],
    },
    /// X'09' Register-Foreign-Device.
    RegisterForeignDevice {
        /// The registering device's VMAC.
        source: Vmac,
        /// Time-to-live in seconds.
        time_to_live: u16,
    },
    /// X'0A' Delete-Foreign-Device-Table-Entry.
    DeleteForeignDeviceTableEntry {
        /// The asker's VMAC.
        source: Vmac,
        /// The entry to delete.
        entry: SocketAddrV6,
    },
    /// X'0B' Secure-BVLL, not interpreted.
    SecureBvll(&'a [u8]),
    /// X'0C' Distribute-Broadcast-To-Network (from a foreign device).
    DistributeBroadcastToNetwork {
        /// The foreign device's VMAC.
        source: Vmac,
        /// The NPDU.
        npdu: &'a [u8],
    },
}

/// Appends a B/IPv6 address: 16 octets of address, 2 of port.
pub fn encode_bip6_address(address: &SocketAddrV6, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&address.ip().octets());
    buf.extend_from_slice(&address.port().to_be_bytes());
}

fn decode_bip6_address(reader: &mut Reader<'_>) -> Result<SocketAddrV6, DecodeError> {
    let ip = Ipv6Addr::from(reader.read_array::<16>()?);
    Ok(SocketAddrV6::new(ip, reader.read_u16()?, 0, 0))
}

fn vmac(reader: &mut Reader<'_>) -> Result<Vmac, DecodeError> {
    Ok(Vmac(reader.read_array::<3>()?))
}

impl<'a> Bvll6<'a> {
    /// The function code.
    pub const fn function(&self) -> u8 {
        match self {
            Self::Result { .. } => function::RESULT,
            Self::OriginalUnicastNpdu { .. } => function::ORIGINAL_UNICAST_NPDU,
            Self::OriginalBroadcastNpdu { .. } => function::ORIGINAL_BROADCAST_NPDU,
            Self::AddressResolution { .. } => function::ADDRESS_RESOLUTION,
            Self::ForwardedAddressResolution { .. } => function::FORWARDED_ADDRESS_RESOLUTION,
            Self::AddressResolutionAck { .. } => function::ADDRESS_RESOLUTION_ACK,
            Self::VirtualAddressResolution { .. } => function::VIRTUAL_ADDRESS_RESOLUTION,
            Self::VirtualAddressResolutionAck { .. } => function::VIRTUAL_ADDRESS_RESOLUTION_ACK,
            Self::ForwardedNpdu { .. } => function::FORWARDED_NPDU,
            Self::RegisterForeignDevice { .. } => function::REGISTER_FOREIGN_DEVICE,
            Self::DeleteForeignDeviceTableEntry { .. } => {
                function::DELETE_FOREIGN_DEVICE_TABLE_ENTRY
            }
            Self::SecureBvll(_) => function::SECURE_BVLL,
            Self::DistributeBroadcastToNetwork { .. } => function::DISTRIBUTE_BROADCAST_TO_NETWORK,
        }
    }

    /// The sender's VMAC (every message but Secure-BVLL names one).
    pub const fn source(&self) -> Option<Vmac> {
        match self {
            Self::Result { source, .. }
            | Self::OriginalUnicastNpdu { source, .. }
            | Self::OriginalBroadcastNpdu { source, .. }
            | Self::AddressResolution { source, .. }
            | Self::ForwardedAddressResolution { source, .. }
            | Self::AddressResolutionAck { source, .. }
            | Self::VirtualAddressResolution { source }
            | Self::VirtualAddressResolutionAck { source, .. }
            | Self::ForwardedNpdu { source, .. }
            | Self::RegisterForeignDevice { source, .. }
            | Self::DeleteForeignDeviceTableEntry { source, .. }
            | Self::DistributeBroadcastToNetwork { source, .. } => Some(*source),
            Self::SecureBvll(_) => None,
        }
    }

    /// The NPDU this message carries, if any.
    pub const fn npdu(&self) -> Option<&'a [u8]> {
        match self {
            Self::OriginalUnicastNpdu { npdu, .. }
            | Self::OriginalBroadcastNpdu { npdu, .. }
            | Self::ForwardedNpdu { npdu, .. }
            | Self::DistributeBroadcastToNetwork { npdu, .. } => Some(npdu),
            _ => None,
        }
    }

    /// Appends the datagram (header with its length field, then the payload).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let start = buf.len();
        buf.extend_from_slice(&[BVLC_TYPE_BIP6, self.function(), 0, 0]);
        match self {
            Self::Result { source, code } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&code.to_u16().to_be_bytes());
            }
            Self::OriginalUnicastNpdu {
                source,
                destination,
                npdu,
            } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&destination.0);
                buf.extend_from_slice(npdu);
            }
            Self::OriginalBroadcastNpdu { source, npdu }
            | Self::DistributeBroadcastToNetwork { source, npdu } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(npdu);
            }
            Self::AddressResolution { source, target } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&target.0);
            }
            Self::ForwardedAddressResolution {
                source,
                target,
                original,
            } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&target.0);
                encode_bip6_address(original, buf);
            }
            Self::AddressResolutionAck {
                source,
                destination,
            }
            | Self::VirtualAddressResolutionAck {
                source,
                destination,
            } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&destination.0);
            }
            Self::VirtualAddressResolution { source } => buf.extend_from_slice(&source.0),
            Self::ForwardedNpdu {
                source,
                original,
                npdu,
            } => {
                buf.extend_from_slice(&source.0);
                encode_bip6_address(original, buf);
                buf.extend_from_slice(npdu);
            }
            Self::RegisterForeignDevice {
                source,
                time_to_live,
            } => {
                buf.extend_from_slice(&source.0);
                buf.extend_from_slice(&time_to_live.to_be_bytes());
            }
            Self::DeleteForeignDeviceTableEntry { source, entry } => {
                buf.extend_from_slice(&source.0);
                encode_bip6_address(entry, buf);
            }
            Self::SecureBvll(payload) => buf.extend_from_slice(payload),
        }
        let length = u16::try_from(buf.len() - start).unwrap_or(u16::MAX);
        buf[start + 2..start + 4].copy_from_slice(&length.to_be_bytes());
    }

    /// The encoded datagram.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf);
        buf
    }

    /// Decodes one whole datagram; the BVLC length field must equal its length.
    pub fn decode_datagram(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(datagram);
        let reader = &mut reader;
        let bvlc_type = reader.read_u8()?;
        if bvlc_type != BVLC_TYPE_BIP6 {
            return Err(DecodeError::new(
                0,
                DecodeErrorKind::InvalidValue("BVLC type must be X'82'"),
            ));
        }
        let function = reader.read_u8()?;
        let length = reader.read_u16()?;
        if usize::from(length) != datagram.len() {
            return Err(DecodeError::new(
                2,
                DecodeErrorKind::InvalidValue("BVLC length does not match the datagram"),
            ));
        }
        let message = match function {
            function::RESULT => Self::Result {
                source: vmac(reader)?,
                code: Bvlc6ResultCode::from_u16(reader.read_u16()?),
            },
            function::ORIGINAL_UNICAST_NPDU => Self::OriginalUnicastNpdu {
                source: vmac(reader)?,
                destination: vmac(reader)?,
                npdu: reader.read_rest(),
            },
            function::ORIGINAL_BROADCAST_NPDU => Self::OriginalBroadcastNpdu {
                source: vmac(reader)?,
                npdu: reader.read_rest(),
            },
            function::ADDRESS_RESOLUTION => Self::AddressResolution {
                source: vmac(reader)?,
                target: vmac(reader)?,
            },
            function::FORWARDED_ADDRESS_RESOLUTION => Self::ForwardedAddressResolution {
                source: vmac(reader)?,
                target: vmac(reader)?,
                original: decode_bip6_address(reader)?,
            },
            function::ADDRESS_RESOLUTION_ACK => Self::AddressResolutionAck {
                source: vmac(reader)?,
                destination: vmac(reader)?,
            },
            function::VIRTUAL_ADDRESS_RESOLUTION => Self::VirtualAddressResolution {
                source: vmac(reader)?,
            },
            function::VIRTUAL_ADDRESS_RESOLUTION_ACK => Self::VirtualAddressResolutionAck {
                source: vmac(reader)?,
                destination: vmac(reader)?,
            },
            function::FORWARDED_NPDU => Self::ForwardedNpdu {
                source: vmac(reader)?,
                original: decode_bip6_address(reader)?,
                npdu: reader.read_rest(),
            },
            function::REGISTER_FOREIGN_DEVICE => Self::RegisterForeignDevice {
                source: vmac(reader)?,
                time_to_live: reader.read_u16()?,
            },
            function::DELETE_FOREIGN_DEVICE_TABLE_ENTRY => Self::DeleteForeignDeviceTableEntry {
                source: vmac(reader)?,
                entry: decode_bip6_address(reader)?,
            },
            function::SECURE_BVLL => Self::SecureBvll(reader.read_rest()),
            function::DISTRIBUTE_BROADCAST_TO_NETWORK => Self::DistributeBroadcastToNetwork {
                source: vmac(reader)?,
                npdu: reader.read_rest(),
            },
            _ => {
                return Err(DecodeError::new(
                    1,
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

    const A: Vmac = Vmac([0x00, 0x00, 0x7B]);
    const B: Vmac = Vmac([0x12, 0x34, 0x56]);

    fn round_trip(message: Bvll6<'_>, bytes: &[u8]) {
        assert_eq!(message.to_vec(), bytes, "encoding {message:?}");
        assert_eq!(Bvll6::decode_datagram(bytes).unwrap(), message);
    }

    fn peer() -> (SocketAddrV6, [u8; 18]) {
        let address = SocketAddrV6::new("fd00::5".parse().unwrap(), 0xBAC0, 0, 0);
        let mut bytes = [0u8; 18];
        bytes[0] = 0xFD;
        bytes[15] = 5;
        bytes[16] = 0xBA;
        bytes[17] = 0xC0;
        (address, bytes)
    }

    #[test]
    fn every_function() {
        round_trip(
            Bvll6::Result {
                source: A,
                code: Bvlc6ResultCode::RegisterForeignDeviceNak,
            },
            &[0x82, 0x00, 0x00, 0x09, 0x00, 0x00, 0x7B, 0x00, 0x90],
        );
        round_trip(
            Bvll6::OriginalUnicastNpdu {
                source: A,
                destination: B,
                npdu: &[0x01, 0x04],
            },
            &[
                0x82, 0x01, 0x00, 0x0C, 0, 0, 0x7B, 0x12, 0x34, 0x56, 0x01, 0x04,
            ],
        );
        round_trip(
            Bvll6::OriginalBroadcastNpdu {
                source: A,
                npdu: &[0x01, 0x00, 0x10, 0x08],
            },
            &[0x82, 0x02, 0x00, 0x0B, 0, 0, 0x7B, 0x01, 0x00, 0x10, 0x08],
        );
        round_trip(
            Bvll6::AddressResolution {
                source: A,
                target: B,
            },
            &[0x82, 0x03, 0x00, 0x0A, 0, 0, 0x7B, 0x12, 0x34, 0x56],
        );
        let (original, original_bytes) = peer();
        let forwarded_resolution = [
            [0x82, 0x04, 0x00, 0x1C, 0, 0, 0x7B, 0x12, 0x34, 0x56].as_slice(),
            &original_bytes,
        ]
        .concat();
        round_trip(
            Bvll6::ForwardedAddressResolution {
                source: A,
                target: B,
                original,
            },
            &forwarded_resolution,
        );
        round_trip(
            Bvll6::AddressResolutionAck {
                source: B,
                destination: A,
            },
            &[0x82, 0x05, 0x00, 0x0A, 0x12, 0x34, 0x56, 0, 0, 0x7B],
        );
        round_trip(
            Bvll6::VirtualAddressResolution { source: A },
            &[0x82, 0x06, 0x00, 0x07, 0, 0, 0x7B],
        );
        round_trip(
            Bvll6::VirtualAddressResolutionAck {
                source: B,
                destination: A,
            },
            &[0x82, 0x07, 0x00, 0x0A, 0x12, 0x34, 0x56, 0, 0, 0x7B],
        );
        let forwarded = [
            [0x82, 0x08, 0x00, 0x1B, 0, 0, 0x7B].as_slice(),
            &original_bytes,
            &[0x01, 0x00],
        ]
        .concat();
        round_trip(
            Bvll6::ForwardedNpdu {
                source: A,
                original,
                npdu: &[0x01, 0x00],
            },
            &forwarded,
        );
        round_trip(
            Bvll6::RegisterForeignDevice {
                source: A,
                time_to_live: 300,
            },
            &[0x82, 0x09, 0x00, 0x09, 0, 0, 0x7B, 0x01, 0x2C],
        );
        let delete = [
            [0x82, 0x0A, 0x00, 0x19, 0, 0, 0x7B].as_slice(),
            &original_bytes,
        ]
        .concat();
        round_trip(
            Bvll6::DeleteForeignDeviceTableEntry {
                source: A,
                entry: original,
            },
            &delete,
        );
        round_trip(Bvll6::SecureBvll(&[0xAA]), &[0x82, 0x0B, 0x00, 0x05, 0xAA]);
        round_trip(
            Bvll6::DistributeBroadcastToNetwork {
                source: A,
                npdu: &[0x01, 0x00],
            },
            &[0x82, 0x0C, 0x00, 0x09, 0, 0, 0x7B, 0x01, 0x00],
        );
    }

    #[test]
    fn malformed() {
        let cases: &[&[u8]] = &[
            &[],
            &[0x81, 0x01, 0x00, 0x04],
            &[0x82, 0x01, 0x00, 0x05],
            &[0x82, 0x0D, 0x00, 0x04],
            &[0x82, 0x01, 0x00, 0x08, 0, 0, 1, 2],
            &[0x82, 0x00, 0x00, 0x0A, 0, 0, 1, 0, 0, 9],
            &[0x82, 0x04, 0x00, 0x0A, 0, 0, 1, 0, 0, 2],
        ];
        for bytes in cases {
            assert!(Bvll6::decode_datagram(bytes).is_err(), "{bytes:02X?}");
        }
    }

    #[test]
    fn vmac_forms() {
        assert_eq!(Vmac::from_device_instance(123), A);
        assert_eq!(Vmac::from_device_instance(0xFFFF_FFFF).to_u32(), 0x3F_FFFF);
        assert_eq!("12345a".parse::<Vmac>().unwrap(), Vmac([0x12, 0x34, 0x5A]));
        assert_eq!(B.to_string(), "123456");
        assert!("1234".parse::<Vmac>().is_err());
        assert!("12345g".parse::<Vmac>().is_err());
    }
}
