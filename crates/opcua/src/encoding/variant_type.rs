//! The built-in type ids (OPC 10000-6 §5.1.2, Table 1) that a Variant's encoding mask names,
//! generated from the one table below.

macro_rules! built_in_types {
    ($( $variant:ident = $id:literal, )*) => {
        /// A built-in type id, 1..=25.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum VariantType {
            $(
                #[doc = concat!("Built-in type ", stringify!($id), ": `", stringify!($variant), "`.")]
                $variant = $id,
            )*
        }

        impl VariantType {
            /// Every built-in type, in id order.
            pub const ALL: &'static [VariantType] = &[$(VariantType::$variant),*];

            /// The type for an id, `None` outside 1..=25.
            pub const fn from_id(id: u8) -> Option<Self> {
                match id {
                    $( $id => Some(Self::$variant), )*
                    _ => None,
                }
            }

            /// The numeric id.
            pub const fn id(self) -> u8 {
                self as u8
            }

            /// The standard name, e.g. `"LocalizedText"`.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => stringify!($variant), )*
                }
            }
        }
    };
}

built_in_types! {
    Boolean = 1,
    SByte = 2,
    Byte = 3,
    Int16 = 4,
    UInt16 = 5,
    Int32 = 6,
    UInt32 = 7,
    Int64 = 8,
    UInt64 = 9,
    Float = 10,
    Double = 11,
    String = 12,
    DateTime = 13,
    Guid = 14,
    ByteString = 15,
    XmlElement = 16,
    NodeId = 17,
    ExpandedNodeId = 18,
    StatusCode = 19,
    QualifiedName = 20,
    LocalizedText = 21,
    ExtensionObject = 22,
    DataValue = 23,
    Variant = 24,
    DiagnosticInfo = 25,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_round_trip() {
        assert_eq!(VariantType::ALL.len(), 25);
        for (index, kind) in VariantType::ALL.iter().enumerate() {
            assert_eq!(usize::from(kind.id()), index + 1);
            assert_eq!(VariantType::from_id(kind.id()), Some(*kind));
        }
        assert_eq!(VariantType::from_id(0), None);
        assert_eq!(VariantType::from_id(26), None);
        assert_eq!(VariantType::LocalizedText.name(), "LocalizedText");
    }
}
