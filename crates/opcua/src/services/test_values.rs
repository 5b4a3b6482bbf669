//! Test-only generation of arbitrary service structures from a seed.
//!
//! Proptest supplies the seed; `Generate` (implemented for the built-in types here and for every
//! structure and enumeration by the declaring macros) turns it into a value. Values avoid NaN so
//! that round trips compare with `==`; arrays hold 0 to 3 elements to keep cases small.

use crate::encoding::{
    ByteString, DataValue, DateTime, DiagnosticInfo, ExpandedNodeId, ExtensionObject,
    ExtensionObjectBody, Guid, LocalizedText, NodeId, QualifiedName, UaString, Variant,
    VariantType,
};
use crate::types::StatusCode;

/// A deterministic stream of pseudo-random numbers (SplitMix64).
pub(crate) struct ValueSource {
    state: u64,
}

impl ValueSource {
    /// A stream starting from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// A type that can produce an arbitrary value of itself.
pub(crate) trait Generate: Sized {
    /// A value drawn from `source`.
    fn generate(source: &mut ValueSource) -> Self;
}

/// A value of `T` from `seed`.
pub(crate) fn generate_from_seed<T: Generate>(seed: u64) -> T {
    T::generate(&mut ValueSource::new(seed))
}

macro_rules! generate_by_truncation {
    ($($ty:ty),*) => {$(
        impl Generate for $ty {
            fn generate(source: &mut ValueSource) -> Self {
                source.next_u64() as $ty
            }
        }
    )*};
}

generate_by_truncation!(u8, u16, u32, i32, u64, i64);

impl Generate for bool {
    fn generate(source: &mut ValueSource) -> Self {
        source.chance(2)
    }
}

impl Generate for f64 {
    fn generate(source: &mut ValueSource) -> Self {
        // Finite values only (NaN would defeat `==`), including fractions and negatives.
        f64::from(source.next_u64() as i32) / 8.0
    }
}

impl Generate for DateTime {
    fn generate(source: &mut ValueSource) -> Self {
        DateTime(i64::generate(source))
    }
}

impl Generate for StatusCode {
    fn generate(source: &mut ValueSource) -> Self {
        StatusCode::from_u32(u32::generate(source))
    }
}

impl Generate for String {
    fn generate(source: &mut ValueSource) -> Self {
        const PIECES: [&str; 6] = ["", "a", "Pump", "opc.tcp://host:4840", "é", "温度"];
        let count = source.below(3);
        (0..count)
            .filter_map(|_| PIECES.get(source.below(PIECES.len() as u64) as usize))
            .copied()
            .collect()
    }
}

impl Generate for UaString {
    fn generate(source: &mut ValueSource) -> Self {
        if source.chance(4) {
            UaString::NULL
        } else {
            UaString(Some(String::generate(source)))
        }
    }
}

impl Generate for ByteString {
    fn generate(source: &mut ValueSource) -> Self {
        if source.chance(4) {
            ByteString::NULL
        } else {
            let length = source.below(6);
            ByteString::from(
                (0..length)
                    .map(|_| u8::generate(source))
                    .collect::<Vec<u8>>(),
            )
        }
    }
}

impl Generate for NodeId {
    fn generate(source: &mut ValueSource) -> Self {
        let namespace = match source.below(3) {
            0 => 0,
            1 => u16::generate(source) & 0xFF,
            _ => u16::generate(source),
        };
        match source.below(5) {
            0 => NodeId::numeric(namespace, u32::generate(source) & 0xFF),
            1 => NodeId::numeric(namespace, u32::generate(source)),
            2 => NodeId {
                namespace,
                identifier: crate::encoding::Identifier::String(UaString::generate(source)),
            },
            3 => NodeId::guid(
                namespace,
                Guid::from_u128(
                    u128::from(source.next_u64()) << 64 | u128::from(source.next_u64()),
                ),
            ),
            _ => NodeId {
                namespace,
                identifier: crate::encoding::Identifier::Opaque(ByteString::generate(source)),
            },
        }
    }
}

impl Generate for ExpandedNodeId {
    fn generate(source: &mut ValueSource) -> Self {
        ExpandedNodeId {
            node_id: NodeId::generate(source),
            namespace_uri: UaString::generate(source),
            server_index: if source.chance(2) {
                0
            } else {
                u32::generate(source)
            },
        }
    }
}

impl Generate for QualifiedName {
    fn generate(source: &mut ValueSource) -> Self {
        QualifiedName {
            namespace_index: u16::generate(source),
            name: UaString::generate(source),
        }
    }
}

impl Generate for LocalizedText {
    fn generate(source: &mut ValueSource) -> Self {
        LocalizedText {
            locale: UaString::generate(source),
            text: UaString::generate(source),
        }
    }
}

impl Generate for ExtensionObject {
    fn generate(source: &mut ValueSource) -> Self {
        let type_id = NodeId::generate(source);
        let body = match source.below(3) {
            0 => ExtensionObjectBody::None,
            1 => ExtensionObjectBody::Binary(ByteString::generate(source).into_vec()),
            _ => {
                ExtensionObjectBody::Xml(crate::encoding::XmlElement(UaString::generate(source).0))
            }
        };
        ExtensionObject { type_id, body }
    }
}

fn optional<T: Generate>(source: &mut ValueSource) -> Option<T> {
    if source.chance(2) {
        Some(T::generate(source))
    } else {
        None
    }
}

fn diagnostic_info(source: &mut ValueSource, depth: usize) -> DiagnosticInfo {
    DiagnosticInfo {
        symbolic_id: optional(source),
        namespace_uri: optional(source),
        locale: optional(source),
        localized_text: optional(source),
        additional_info: UaString::generate(source),
        inner_status_code: optional(source),
        inner_diagnostic_info: if depth > 0 && source.chance(3) {
            Some(Box::new(diagnostic_info(source, depth - 1)))
        } else {
            None
        },
    }
}

impl Generate for DiagnosticInfo {
    fn generate(source: &mut ValueSource) -> Self {
        diagnostic_info(source, 2)
    }
}

impl Generate for Variant {
    fn generate(source: &mut ValueSource) -> Self {
        match source.below(8) {
            0 => Variant::Empty,
            1 => Variant::Boolean(bool::generate(source)),
            2 => Variant::Int32(i32::generate(source)),
            3 => Variant::Double(f64::generate(source)),
            4 => Variant::String(UaString::generate(source)),
            5 => Variant::from(NodeId::generate(source)),
            6 => Variant::LocalizedText(Box::new(LocalizedText::generate(source))),
            _ => {
                let length = source.below(4);
                let elements = (0..length)
                    .map(|_| Variant::UInt32(u32::generate(source)))
                    .collect();
                Variant::array(VariantType::UInt32, elements).unwrap_or_default()
            }
        }
    }
}

impl Generate for DataValue {
    fn generate(source: &mut ValueSource) -> Self {
        DataValue {
            value: optional(source),
            status: optional(source),
            source_timestamp: optional(source),
            source_picoseconds: optional(source),
            server_timestamp: optional(source),
            server_picoseconds: optional(source),
        }
    }
}

impl<T: Generate> Generate for Vec<T> {
    fn generate(source: &mut ValueSource) -> Self {
        let length = source.below(4);
        (0..length).map(|_| T::generate(source)).collect()
    }
}

impl<T: Generate> Generate for Option<T> {
    fn generate(source: &mut ValueSource) -> Self {
        optional(source)
    }
}

/// Asserts that `value` encodes to `encoded_len()` bytes and decodes back to itself.
pub(crate) fn assert_round_trip<T>(value: &T)
where
    T: crate::encoding::BinaryEncodable + PartialEq + std::fmt::Debug,
{
    let bytes = value.to_bytes();
    assert_eq!(bytes.len(), value.encoded_len(), "encoded_len of {value:?}");
    match T::from_bytes(&bytes) {
        Ok(decoded) => assert_eq!(&decoded, value),
        Err(error) => panic!("{value:?} does not decode from its own bytes: {error}"),
    }
}
