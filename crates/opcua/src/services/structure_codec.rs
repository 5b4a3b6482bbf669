//! The two macros every service structure is declared with, so that the field list written
//! once gives the struct, its UA Binary codec and its test-value generator:
//!
//! - `ua_structure!`: a structure is its fields in order (OPC 10000-6 §5.2.6); `encode`,
//!   `decode` and `encoded_len` follow the declaration order, which is the order of the
//!   OPC 10000-4 tables.
//! - `ua_enumeration!`: an enumeration is an Int32 (OPC 10000-6 §5.2.4). Values outside the
//!   table decode to `Other(i32)` so that the service layer, not the decoder, decides which
//!   status code to answer with.

/// Declares a structure whose UA Binary encoding is its fields in declaration order.
macro_rules! ua_structure {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                pub $field:ident : $ty:ty
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[$field_meta])*
                pub $field: $ty,
            )+
        }

        impl $crate::encoding::BinaryEncodable for $name {
            fn encode(&self, buf: &mut Vec<u8>) {
                $( $crate::encoding::BinaryEncodable::encode(&self.$field, buf); )+
            }

            fn decode(
                reader: &mut $crate::encoding::Reader<'_>,
            ) -> Result<Self, $crate::encoding::DecodeError> {
                Ok(Self {
                    $( $field: <$ty as $crate::encoding::BinaryEncodable>::decode(reader)?, )+
                })
            }

            fn encoded_len(&self) -> usize {
                0 $( + $crate::encoding::BinaryEncodable::encoded_len(&self.$field) )+
            }
        }

        #[cfg(test)]
        impl $crate::services::test_values::Generate for $name {
            fn generate(source: &mut $crate::services::test_values::ValueSource) -> Self {
                Self {
                    $( $field: $crate::services::test_values::Generate::generate(source), )+
                }
            }
        }
    };
}

/// Declares an Int32 enumeration from one table of `Name = value` lines, with an
/// `Other(i32)` variant for values the table does not list.
macro_rules! ua_enumeration {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident = $value:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                $(#[$variant_meta])*
                $variant,
            )+
            /// A value this table does not list (kept so that it re-encodes unchanged).
            Other(i32),
        }

        impl $name {
            /// Every named value, in table order.
            pub const ALL: &'static [$name] = &[$( $name::$variant ),+];

            /// The enumeration for an Int32 value (`Other` when the table does not list it).
            pub const fn from_i32(value: i32) -> Self {
                match value {
                    $( $value => Self::$variant, )+
                    other => Self::Other(other),
                }
            }

            /// The Int32 value written on the wire.
            pub const fn to_i32(self) -> i32 {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Other(other) => other,
                }
            }

            /// The specification's name of the value (`None` for `Other`).
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $( Self::$variant => Some(stringify!($variant)), )+
                    Self::Other(_) => None,
                }
            }
        }

        impl $crate::encoding::BinaryEncodable for $name {
            fn encode(&self, buf: &mut Vec<u8>) {
                self.to_i32().encode(buf);
            }

            fn decode(
                reader: &mut $crate::encoding::Reader<'_>,
            ) -> Result<Self, $crate::encoding::DecodeError> {
                Ok(Self::from_i32(i32::decode(reader)?))
            }

            fn encoded_len(&self) -> usize {
                4
            }
        }

        #[cfg(test)]
        impl $crate::services::test_values::Generate for $name {
            fn generate(source: &mut $crate::services::test_values::ValueSource) -> Self {
                // Mostly listed values, sometimes an unlisted one.
                let index = source.below(Self::ALL.len() as u64 + 1) as usize;
                match Self::ALL.get(index) {
                    Some(value) => *value,
                    None => Self::from_i32(source.next_u64() as i32),
                }
            }
        }
    };
}

pub(crate) use {ua_enumeration, ua_structure};

/// A structure with a `DefaultBinary` DataTypeEncoding node in namespace 0: the numeric id that
/// precedes its body in a service message or an ExtensionObject. The numbers are listed once, in
/// the table of `services/mod.rs`.
pub trait BinaryEncodingId {
    /// The numeric identifier (namespace 0) of the `<Type>_Encoding_DefaultBinary` node.
    const BINARY_ENCODING_ID: u32;
}
