//! Addresses of BACnet/SC (Annex AB.1.5): the 6-octet virtual MAC address (VMAC) a node
//! uses on its SC network, and the 16-octet device UUID that identifies the device across
//! restarts and VMAC changes.

use std::fmt;
use std::str::FromStr;

/// A BACnet/SC virtual MAC address (Annex AB.1.5.2): six octets in EUI-48 form.
///
/// `ff:ff:ff:ff:ff:ff` is the local broadcast address; all zeros means "unknown". A node
/// picks a random VMAC with the locally-administered bit set and the group bit clear (a
/// "random-48" address).
///
/// ```
/// use buildwire_bacnet::link::sc::Vmac;
///
/// let vmac: Vmac = "02:bb:00:00:00:01".parse().unwrap();
/// assert_eq!(vmac.octets(), [0x02, 0xBB, 0, 0, 0, 1]);
/// assert_eq!(vmac.to_string(), "02:bb:00:00:00:01");
/// assert_eq!("02bb00000001".parse::<Vmac>().unwrap(), vmac);
/// assert!(Vmac::BROADCAST.is_broadcast());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Vmac([u8; 6]);

impl Vmac {
    /// Number of octets of a VMAC.
    pub const LENGTH: usize = 6;
    /// The local broadcast VMAC, X'FFFFFFFFFFFF'.
    pub const BROADCAST: Self = Self([0xFF; 6]);
    /// The reserved "unknown" VMAC, X'000000000000'.
    pub const UNKNOWN: Self = Self([0; 6]);

    /// A VMAC from its octets.
    pub const fn new(octets: [u8; 6]) -> Self {
        Self(octets)
    }

    /// A random-48 VMAC made from `random` octets: the locally-administered bit (bit 1 of
    /// the first octet) is set and the group bit (bit 0) cleared, so the result is never the
    /// broadcast or the unknown address.
    pub const fn random_48(random: [u8; 6]) -> Self {
        let mut octets = random;
        octets[0] = (octets[0] | 0x02) & 0xFE;
        Self(octets)
    }

    /// The octets.
    pub const fn octets(&self) -> [u8; 6] {
        self.0
    }

    /// The octets as a slice.
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }

    /// True for the local broadcast VMAC.
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// True for the reserved all-zeros VMAC.
    pub fn is_unknown(&self) -> bool {
        *self == Self::UNKNOWN
    }

    /// A VMAC from a slice of exactly six octets.
    pub fn from_slice(octets: &[u8]) -> Option<Self> {
        octets.try_into().ok().map(Self)
    }
}

impl fmt::Display for Vmac {
    /// Lower-case hexadecimal octets separated by colons: `02:bb:00:00:00:01`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl fmt::Debug for Vmac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Vmac({self})")
    }
}

/// Why a VMAC or UUID did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AddressParseError(String);

/// Parses `count` hexadecimal octets, ignoring `:` and `-` separators.
fn parse_hex_octets<const N: usize>(text: &str, what: &str) -> Result<[u8; N], AddressParseError> {
    let digits: Vec<u8> = text
        .trim()
        .bytes()
        .filter(|b| *b != b':' && *b != b'-')
        .collect();
    let error = || {
        AddressParseError(format!(
            "`{text}` is not a {what}: write {N} hexadecimal octets (separators `:` or `-` optional)"
        ))
    };
    if digits.len() != N * 2 {
        return Err(error());
    }
    let mut out = [0u8; N];
    for (slot, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| error())?;
        *slot = u8::from_str_radix(pair, 16).map_err(|_| error())?;
    }
    Ok(out)
}

impl FromStr for Vmac {
    type Err = AddressParseError;

    /// Twelve hexadecimal digits, with or without `:` or `-` between octets.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_hex_octets::<6>(text, "VMAC").map(Self)
    }
}

/// A BACnet/SC device UUID (Annex AB.1.5.3): 16 octets (RFC 4122), fixed for the life of
/// the device so that a hub recognises a node that reconnects with a new VMAC.
///
/// ```
/// use buildwire_bacnet::link::sc::DeviceUuid;
///
/// let uuid = DeviceUuid::random_v4([7; 16]);
/// let text = uuid.to_string();
/// assert_eq!(text.len(), 36);
/// assert_eq!(text.parse::<DeviceUuid>().unwrap(), uuid);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DeviceUuid([u8; 16]);

impl DeviceUuid {
    /// Number of octets of a device UUID.
    pub const LENGTH: usize = 16;

    /// A UUID from its octets.
    pub const fn new(octets: [u8; 16]) -> Self {
        Self(octets)
    }

    /// A version-4 (random) UUID made from `random` octets: the version and variant bits
    /// are set as RFC 4122 requires.
    pub const fn random_v4(random: [u8; 16]) -> Self {
        let mut octets = random;
        octets[6] = (octets[6] & 0x0F) | 0x40;
        octets[8] = (octets[8] & 0x3F) | 0x80;
        Self(octets)
    }

    /// The octets.
    pub const fn octets(&self) -> [u8; 16] {
        self.0
    }

    /// The octets as a slice.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for DeviceUuid {
    /// The RFC 4122 text form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, octet) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{octet:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DeviceUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceUuid({self})")
    }
}

impl FromStr for DeviceUuid {
    type Err = AddressParseError;

    /// 32 hexadecimal digits, with or without the RFC 4122 dashes.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_hex_octets::<16>(text, "device UUID").map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_vmacs_are_local_unicast() {
        for seed in [[0u8; 6], [0xFF; 6], [0x01, 2, 3, 4, 5, 6]] {
            let vmac = Vmac::random_48(seed);
            assert_eq!(vmac.octets()[0] & 0x03, 0x02, "{vmac}");
            assert!(!vmac.is_broadcast() && !vmac.is_unknown());
        }
    }

    #[test]
    fn text_forms_round_trip_and_bad_text_is_refused() {
        let vmac = Vmac::new([0xAB, 0, 1, 2, 3, 0xFF]);
        assert_eq!(vmac.to_string().parse::<Vmac>().unwrap(), vmac);
        assert_eq!("ab-00-01-02-03-ff".parse::<Vmac>().unwrap(), vmac);
        for bad in [
            "",
            "ab",
            "ab:00:01:02:03",
            "zz:00:01:02:03:04",
            "ab:00:01:02:03:04:05",
        ] {
            assert!(bad.parse::<Vmac>().is_err(), "{bad}");
        }
        let uuid = DeviceUuid::random_v4([0xAA; 16]);
        assert_eq!(uuid.to_string(), "aaaaaaaa-aaaa-4aaa-aaaa-aaaaaaaaaaaa");
        assert_eq!(
            "aaaaaaaaaaaa4aaaaaaaaaaaaaaaaaaa"
                .parse::<DeviceUuid>()
                .unwrap(),
            uuid
        );
        assert!("aaaa".parse::<DeviceUuid>().is_err());
    }
}
