//! QualifiedName (OPC 10000-6 §5.2.2.13): a UInt16 namespace index and a String name.

use std::fmt;

use super::binary_encodable::BinaryEncodable;
use super::error::DecodeError;
use super::reader::Reader;
use super::string::UaString;

/// A name qualified by a namespace index (used for BrowseNames).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedName {
    /// Index into the server's namespace array.
    pub namespace_index: u16,
    /// The name (may be null).
    pub name: UaString,
}

impl QualifiedName {
    /// A qualified name from its parts.
    pub fn new(namespace_index: u16, name: &str) -> Self {
        Self {
            namespace_index,
            name: UaString::from(name),
        }
    }
}

impl fmt::Display for QualifiedName {
    /// `2:Pump`, or just `Pump` in namespace 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace_index != 0 {
            write!(f, "{}:", self.namespace_index)?;
        }
        write!(f, "{}", self.name)
    }
}

impl BinaryEncodable for QualifiedName {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.namespace_index.encode(buf);
        self.name.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            namespace_index: u16::decode(reader)?,
            name: UaString::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        2 + self.name.encoded_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout() {
        assert_eq!(
            QualifiedName::new(2, "Pu").to_bytes(),
            [2, 0, 2, 0, 0, 0, b'P', b'u']
        );
        assert_eq!(QualifiedName::new(2, "Pump").to_string(), "2:Pump");
    }

    proptest! {
        #[test]
        fn round_trip(namespace_index: u16, name: Option<String>) {
            let value = QualifiedName { namespace_index, name: UaString(name) };
            prop_assert_eq!(value.to_bytes().len(), value.encoded_len());
            prop_assert_eq!(QualifiedName::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
