//! ExtensionObject (OPC 10000-6 §5.2.2.15): a type NodeId, an encoding byte (0x00 no body,
//! 0x01 ByteString body, 0x02 XmlElement body) and the body. The body is kept undecoded, as
//! bytes, for the layer that knows the type.

use super::binary_encodable::BinaryEncodable;
use super::error::{DecodeError, DecodeErrorKind};
use super::node_id::NodeId;
use super::reader::Reader;
use super::string::{ByteString, XmlElement};

const NO_BODY: u8 = 0x00;
const BINARY_BODY: u8 = 0x01;
const XML_BODY: u8 = 0x02;

/// The body of an ExtensionObject.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExtensionObjectBody {
    /// No body.
    #[default]
    None,
    /// A UA Binary encoded structure (a null ByteString decodes as empty).
    Binary(Vec<u8>),
    /// An XML encoded structure.
    Xml(XmlElement),
}

/// A structure of a type identified by `type_id`, carried opaquely.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExtensionObject {
    /// NodeId of the DataTypeEncoding (e.g. the `_Encoding_DefaultBinary` node).
    pub type_id: NodeId,
    /// The encoded body.
    pub body: ExtensionObjectBody,
}

impl BinaryEncodable for ExtensionObject {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.type_id.encode(buf);
        match &self.body {
            ExtensionObjectBody::None => buf.push(NO_BODY),
            ExtensionObjectBody::Binary(bytes) => {
                buf.push(BINARY_BODY);
                super::binary_encodable::encode_length(bytes.len(), buf);
                buf.extend_from_slice(bytes);
            }
            ExtensionObjectBody::Xml(xml) => {
                buf.push(XML_BODY);
                xml.encode(buf);
            }
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        reader.nested(|reader| {
            let type_id = NodeId::decode(reader)?;
            let offset = reader.position();
            let body = match reader.read_u8()? {
                NO_BODY => ExtensionObjectBody::None,
                BINARY_BODY => ExtensionObjectBody::Binary(ByteString::decode(reader)?.into_vec()),
                XML_BODY => ExtensionObjectBody::Xml(XmlElement::decode(reader)?),
                other => {
                    return Err(reader.error_at(
                        offset,
                        DecodeErrorKind::InvalidEncodingByte {
                            field: "ExtensionObject encoding",
                            value: other,
                        },
                    ));
                }
            };
            Ok(Self { type_id, body })
        })
    }

    fn encoded_len(&self) -> usize {
        self.type_id.encoded_len()
            + 1
            + match &self.body {
                ExtensionObjectBody::None => 0,
                ExtensionObjectBody::Binary(bytes) => 4 + bytes.len(),
                ExtensionObjectBody::Xml(xml) => xml.encoded_len(),
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::node_id::tests::any_node_id;
    use proptest::prelude::*;

    #[test]
    fn layouts() {
        let empty = ExtensionObject::default();
        assert_eq!(empty.to_bytes(), [0x00, 0x00, 0x00]);
        let binary = ExtensionObject {
            type_id: NodeId::numeric(0, 0x1C),
            body: ExtensionObjectBody::Binary(vec![0xAA, 0xBB]),
        };
        assert_eq!(
            binary.to_bytes(),
            [0x00, 0x1C, 0x01, 2, 0, 0, 0, 0xAA, 0xBB]
        );
    }

    #[test]
    fn unknown_body_encoding() {
        let error = ExtensionObject::from_bytes(&[0x00, 0x01, 0x03]).unwrap_err();
        assert_eq!(error.offset, 2);
        assert_eq!(
            error.kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "ExtensionObject encoding",
                value: 0x03
            }
        );
    }

    proptest! {
        #[test]
        fn round_trip(type_id in any_node_id(), kind in 0u8..3, bytes: Vec<u8>, xml: Option<String>) {
            let body = match kind {
                0 => ExtensionObjectBody::None,
                1 => ExtensionObjectBody::Binary(bytes),
                _ => ExtensionObjectBody::Xml(XmlElement(xml)),
            };
            let value = ExtensionObject { type_id, body };
            prop_assert_eq!(value.to_bytes().len(), value.encoded_len());
            prop_assert_eq!(ExtensionObject::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
