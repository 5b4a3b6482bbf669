//! NodeId and ExpandedNodeId (OPC 10000-6 §5.2.2.9, §5.2.2.10). Numeric ids are written in the
//! most compact form (two-byte, four-byte, numeric); every form is accepted when decoding.

use std::fmt;

use super::binary_encodable::BinaryEncodable;
use super::error::{DecodeError, DecodeErrorKind};
use super::guid::Guid;
use super::reader::Reader;
use super::string::{ByteString, UaString};

/// NodeId encoding byte values (low six bits) and ExpandedNodeId flags (high two bits).
mod encoding_byte {
    pub const TWO_BYTE: u8 = 0x00;
    pub const FOUR_BYTE: u8 = 0x01;
    pub const NUMERIC: u8 = 0x02;
    pub const STRING: u8 = 0x03;
    pub const GUID: u8 = 0x04;
    pub const BYTE_STRING: u8 = 0x05;
    pub const NAMESPACE_URI_FLAG: u8 = 0x80;
    pub const SERVER_INDEX_FLAG: u8 = 0x40;
    pub const FORM_MASK: u8 = 0x3F;
}

/// The identifier part of a NodeId.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Identifier {
    /// `i=`: a UInt32.
    Numeric(u32),
    /// `s=`: a String.
    String(UaString),
    /// `g=`: a Guid.
    Guid(Guid),
    /// `b=`: an opaque ByteString.
    Opaque(ByteString),
}

/// A node identifier: namespace index plus identifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    /// Index into the server's namespace array.
    pub namespace: u16,
    /// The identifier within that namespace.
    pub identifier: Identifier,
}

impl Default for NodeId {
    /// The null NodeId `ns=0;i=0`.
    fn default() -> Self {
        Self::numeric(0, 0)
    }
}

impl NodeId {
    /// A numeric NodeId.
    pub const fn numeric(namespace: u16, value: u32) -> Self {
        Self {
            namespace,
            identifier: Identifier::Numeric(value),
        }
    }

    /// A string NodeId.
    pub fn string(namespace: u16, value: &str) -> Self {
        Self {
            namespace,
            identifier: Identifier::String(UaString::from(value)),
        }
    }

    /// A Guid NodeId.
    pub const fn guid(namespace: u16, value: Guid) -> Self {
        Self {
            namespace,
            identifier: Identifier::Guid(value),
        }
    }

    /// An opaque (ByteString) NodeId.
    pub fn opaque(namespace: u16, value: Vec<u8>) -> Self {
        Self {
            namespace,
            identifier: Identifier::Opaque(ByteString::from(value)),
        }
    }

    /// True for `ns=0;i=0`.
    pub fn is_null(&self) -> bool {
        self.namespace == 0 && self.identifier == Identifier::Numeric(0)
    }

    /// The encoding form byte (without ExpandedNodeId flags) this NodeId is written with.
    fn form(&self) -> u8 {
        match &self.identifier {
            Identifier::Numeric(value) if self.namespace == 0 && *value <= 0xFF => {
                encoding_byte::TWO_BYTE
            }
            Identifier::Numeric(value) if self.namespace <= 0xFF && *value <= 0xFFFF => {
                encoding_byte::FOUR_BYTE
            }
            Identifier::Numeric(_) => encoding_byte::NUMERIC,
            Identifier::String(_) => encoding_byte::STRING,
            Identifier::Guid(_) => encoding_byte::GUID,
            Identifier::Opaque(_) => encoding_byte::BYTE_STRING,
        }
    }

    /// Writes the NodeId with `flags` or-ed into the encoding byte.
    fn encode_with_flags(&self, flags: u8, buf: &mut Vec<u8>) {
        let form = self.form();
        buf.push(form | flags);
        match (&self.identifier, form) {
            (Identifier::Numeric(value), encoding_byte::TWO_BYTE) => {
                buf.push(*value as u8);
            }
            (Identifier::Numeric(value), encoding_byte::FOUR_BYTE) => {
                buf.push(self.namespace as u8);
                (*value as u16).encode(buf);
            }
            (Identifier::Numeric(value), _) => {
                self.namespace.encode(buf);
                value.encode(buf);
            }
            (Identifier::String(value), _) => {
                self.namespace.encode(buf);
                value.encode(buf);
            }
            (Identifier::Guid(value), _) => {
                self.namespace.encode(buf);
                value.encode(buf);
            }
            (Identifier::Opaque(value), _) => {
                self.namespace.encode(buf);
                value.encode(buf);
            }
        }
    }

    /// Reads a NodeId body after its encoding byte `form` (flags already removed).
    fn decode_form(form: u8, offset: usize, reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match form {
            encoding_byte::TWO_BYTE => Self::numeric(0, u32::from(reader.read_u8()?)),
            encoding_byte::FOUR_BYTE => {
                let namespace = u16::from(reader.read_u8()?);
                Self::numeric(namespace, u32::from(u16::decode(reader)?))
            }
            encoding_byte::NUMERIC => {
                let namespace = u16::decode(reader)?;
                Self::numeric(namespace, u32::decode(reader)?)
            }
            encoding_byte::STRING => Self {
                namespace: u16::decode(reader)?,
                identifier: Identifier::String(UaString::decode(reader)?),
            },
            encoding_byte::GUID => Self {
                namespace: u16::decode(reader)?,
                identifier: Identifier::Guid(Guid::decode(reader)?),
            },
            encoding_byte::BYTE_STRING => Self {
                namespace: u16::decode(reader)?,
                identifier: Identifier::Opaque(ByteString::decode(reader)?),
            },
            other => {
                return Err(reader.error_at(
                    offset,
                    DecodeErrorKind::InvalidEncodingByte {
                        field: "NodeId encoding",
                        value: other,
                    },
                ));
            }
        })
    }
}

impl BinaryEncodable for NodeId {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.encode_with_flags(0, buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.position();
        let byte = reader.read_u8()?;
        if byte & !encoding_byte::FORM_MASK != 0 {
            return Err(reader.error_at(
                offset,
                DecodeErrorKind::InvalidEncodingByte {
                    field: "NodeId encoding",
                    value: byte,
                },
            ));
        }
        Self::decode_form(byte, offset, reader)
    }

    fn encoded_len(&self) -> usize {
        match (&self.identifier, self.form()) {
            (_, encoding_byte::TWO_BYTE) => 2,
            (_, encoding_byte::FOUR_BYTE) => 4,
            (Identifier::Numeric(_), _) => 7,
            (Identifier::String(value), _) => 3 + value.encoded_len(),
            (Identifier::Guid(_), _) => 19,
            (Identifier::Opaque(value), _) => 3 + value.encoded_len(),
        }
    }
}

impl fmt::Display for NodeId {
    /// The standard string form: `ns=2;s=Pump`, `i=85` (namespace 0 omitted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace != 0 {
            write!(f, "ns={};", self.namespace)?;
        }
        match &self.identifier {
            Identifier::Numeric(value) => write!(f, "i={value}"),
            Identifier::String(value) => write!(f, "s={value}"),
            Identifier::Guid(value) => write!(f, "g={value}"),
            Identifier::Opaque(value) => {
                f.write_str("b=")?;
                for byte in value.as_bytes().unwrap_or_default() {
                    write!(f, "{byte:02x}")?;
                }
                Ok(())
            }
        }
    }
}

/// A NodeId that may point into another namespace (by URI) or another server (by index).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExpandedNodeId {
    /// The NodeId; its namespace index is meaningless when `namespace_uri` is set.
    pub node_id: NodeId,
    /// Namespace URI; written (flag 0x80) only when not null.
    pub namespace_uri: UaString,
    /// Server index; written (flag 0x40) only when not 0 (the local server).
    pub server_index: u32,
}

impl From<NodeId> for ExpandedNodeId {
    fn from(node_id: NodeId) -> Self {
        Self {
            node_id,
            ..Self::default()
        }
    }
}

impl BinaryEncodable for ExpandedNodeId {
    fn encode(&self, buf: &mut Vec<u8>) {
        let mut flags = 0;
        if !self.namespace_uri.is_null() {
            flags |= encoding_byte::NAMESPACE_URI_FLAG;
        }
        if self.server_index != 0 {
            flags |= encoding_byte::SERVER_INDEX_FLAG;
        }
        self.node_id.encode_with_flags(flags, buf);
        if !self.namespace_uri.is_null() {
            self.namespace_uri.encode(buf);
        }
        if self.server_index != 0 {
            self.server_index.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.position();
        let byte = reader.read_u8()?;
        let node_id = NodeId::decode_form(byte & encoding_byte::FORM_MASK, offset, reader)?;
        let namespace_uri = if byte & encoding_byte::NAMESPACE_URI_FLAG != 0 {
            UaString::decode(reader)?
        } else {
            UaString::NULL
        };
        let server_index = if byte & encoding_byte::SERVER_INDEX_FLAG != 0 {
            u32::decode(reader)?
        } else {
            0
        };
        Ok(Self {
            node_id,
            namespace_uri,
            server_index,
        })
    }

    fn encoded_len(&self) -> usize {
        let uri = if self.namespace_uri.is_null() {
            0
        } else {
            self.namespace_uri.encoded_len()
        };
        let server = if self.server_index != 0 { 4 } else { 0 };
        self.node_id.encoded_len() + uri + server
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Any NodeId, for property tests elsewhere in the crate.
    pub(crate) fn any_node_id() -> impl Strategy<Value = NodeId> {
        let identifier = prop_oneof![
            any::<u32>().prop_map(Identifier::Numeric),
            (0u32..300).prop_map(Identifier::Numeric),
            any::<Option<String>>().prop_map(|s| Identifier::String(UaString(s))),
            any::<u128>().prop_map(|g| Identifier::Guid(Guid::from_u128(g))),
            any::<Option<Vec<u8>>>().prop_map(|b| Identifier::Opaque(ByteString::from(b))),
        ];
        (prop_oneof![Just(0u16), 0u16..300, any::<u16>()], identifier).prop_map(
            |(namespace, identifier)| NodeId {
                namespace,
                identifier,
            },
        )
    }

    #[test]
    fn spec_examples() {
        // OPC 10000-6 §5.2.2.9 examples: two-byte NodeId i=72.
        assert_eq!(NodeId::numeric(0, 72).to_bytes(), [0x00, 0x48]);
        // Four-byte NodeId ns=5;i=1025.
        assert_eq!(
            NodeId::numeric(5, 1025).to_bytes(),
            [0x01, 0x05, 0x01, 0x04]
        );
        // String NodeId ns=1;s=Hot水.
        let string = [
            0x03, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x48, 0x6F, 0x74, 0xE6, 0xB0, 0xB4,
        ];
        assert_eq!(NodeId::string(1, "Hot水").to_bytes(), string);
        assert_eq!(
            NodeId::from_bytes(&string).unwrap(),
            NodeId::string(1, "Hot水")
        );
    }

    #[test]
    fn all_numeric_forms_decode() {
        let full = [0x02, 0x00, 0x00, 0x48, 0x00, 0x00, 0x00];
        assert_eq!(NodeId::from_bytes(&full).unwrap(), NodeId::numeric(0, 72));
        assert_eq!(
            NodeId::numeric(2, 70_000).to_bytes(),
            [0x02, 0x02, 0x00, 0x70, 0x11, 0x01, 0x00]
        );
        let guid = NodeId::guid(3, Guid::from_u128(0x72962B91_FA75_4AE6_8D28_B404DC7DAF63));
        let bytes = guid.to_bytes();
        assert_eq!(&bytes[..3], &[0x04, 0x03, 0x00]);
        assert_eq!(
            NodeId::opaque(1, vec![0xAB]).to_bytes(),
            [0x05, 1, 0, 1, 0, 0, 0, 0xAB]
        );
    }

    #[test]
    fn invalid_encoding_bytes() {
        let error = NodeId::from_bytes(&[0x06, 0x00]).unwrap_err();
        assert_eq!(error.offset, 0);
        assert_eq!(
            error.kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "NodeId encoding",
                value: 0x06
            }
        );
        // The ExpandedNodeId flags are not allowed in a plain NodeId.
        assert!(matches!(
            NodeId::from_bytes(&[0x80, 0x01]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte { value: 0x80, .. }
        ));
        assert!(matches!(
            NodeId::from_bytes(&[0x01, 0x05, 0x01]).unwrap_err().kind,
            DecodeErrorKind::UnexpectedEnd { .. }
        ));
    }

    #[test]
    fn expanded_node_id_flags() {
        let value = ExpandedNodeId {
            node_id: NodeId::numeric(0, 72),
            namespace_uri: UaString::from("urn:a"),
            server_index: 2,
        };
        assert_eq!(
            value.to_bytes(),
            [
                0xC0, 0x48, 5, 0, 0, 0, b'u', b'r', b'n', b':', b'a', 2, 0, 0, 0
            ]
        );
        assert_eq!(
            ExpandedNodeId::from_bytes(&value.to_bytes()).unwrap(),
            value
        );
        assert_eq!(
            ExpandedNodeId::from(NodeId::numeric(0, 1)).to_bytes(),
            [0x00, 0x01]
        );
    }

    #[test]
    fn display() {
        assert_eq!(NodeId::numeric(0, 85).to_string(), "i=85");
        assert_eq!(NodeId::string(2, "Pump").to_string(), "ns=2;s=Pump");
        assert_eq!(
            NodeId::opaque(1, vec![0xAB, 0x01]).to_string(),
            "ns=1;b=ab01"
        );
    }

    proptest! {
        #[test]
        fn node_id_round_trip(node_id in any_node_id()) {
            let bytes = node_id.to_bytes();
            prop_assert_eq!(bytes.len(), node_id.encoded_len());
            prop_assert_eq!(NodeId::from_bytes(&bytes).unwrap(), node_id);
        }

        #[test]
        fn expanded_round_trip(node_id in any_node_id(), uri: Option<String>, server_index: u32) {
            let value = ExpandedNodeId { node_id, namespace_uri: UaString(uri), server_index };
            let bytes = value.to_bytes();
            prop_assert_eq!(bytes.len(), value.encoded_len());
            prop_assert_eq!(ExpandedNodeId::from_bytes(&bytes).unwrap(), value);
        }
    }
}
