//! The `bacnet_enum!` macro: turns one checked-in table of `Variant = number => "name"` rows
//! into a typed enumeration with lossless numeric conversion, standard names and parsing.
//!
//! Every enumeration in this crate is written as such a table so that names, numbers and
//! documentation come from a single place and cannot drift apart.

use std::fmt;

/// Error returned when a string names no value of a BACnet enumeration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {enumeration} name {input:?}")]
pub struct ParseEnumError {
    /// Name of the enumeration that was being parsed (for example `"ObjectType"`).
    pub enumeration: &'static str,
    /// The rejected input.
    pub input: String,
}

/// Normalises a user-supplied enumeration name: lower case, `_` and spaces become `-`.
pub(crate) fn normalise_name(input: &str) -> String {
    input
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            other => other.to_ascii_lowercase(),
        })
        .collect()
}

/// Writes `name` when known, else the bare number.
pub(crate) fn write_name_or_number(
    f: &mut fmt::Formatter<'_>,
    name: Option<&'static str>,
    value: u32,
) -> fmt::Result {
    match name {
        Some(name) => f.write_str(name),
        None => write!(f, "{value}"),
    }
}

/// Defines a BACnet enumeration from a table.
///
/// ```text
/// bacnet_enum! {
///     /// docs
///     pub enum Polarity {
///         Normal = 0 => "normal",
///         Reverse = 1 => "reverse",
///     }
///     unknown: Other;
///     proprietary: 64..=255;      // optional
///     aliases: { "rev" => Reverse }
/// }
/// ```
macro_rules! bacnet_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $variant:ident = $value:literal => $text:literal, )*
        }
        unknown: $unknown:ident;
        $( proprietary: $( $lo:literal ..= $hi:literal )|+ ; )?
        aliases: { $( $alias:literal => $target:ident ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "` (", stringify!($value), ")")]
                $variant,
            )*
            /// A value this table does not list (reserved for ASHRAE or proprietary).
            /// [`Self::from_u32`] never yields this variant for a listed value.
            $unknown(u32),
        }

        impl $name {
            /// Every listed value, in table order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// Converts a wire number; numbers not in the table become the unknown variant.
            pub const fn from_u32(value: u32) -> Self {
                match value {
                    $( $value => Self::$variant, )*
                    other => Self::$unknown(other),
                }
            }

            /// The wire number of this value.
            pub const fn to_u32(self) -> u32 {
                match self {
                    $( Self::$variant => $value, )*
                    Self::$unknown(other) => other,
                }
            }

            /// The standard hyphenated name (`"analog-input"`), or `None` for unlisted values.
            pub const fn name(self) -> Option<&'static str> {
                match Self::from_u32(self.to_u32()) {
                    $( Self::$variant => Some($text), )*
                    Self::$unknown(_) => None,
                }
            }

            /// True when the number lies in the range the standard leaves to vendors.
            #[allow(unused_variables)]
            pub const fn is_proprietary(self) -> bool {
                let value = self.to_u32();
                false $( || matches!(value, $( $lo..=$hi )|+) )?
            }

            /// Looks up a standard name or a short alias (case-insensitive, `_` taken as `-`).
            pub fn from_name(input: &str) -> Option<Self> {
                let wanted = $crate::enums::enum_table::normalise_name(input);
                match wanted.as_str() {
                    $( $text => return Some(Self::$variant), )*
                    _ => {}
                }
                match wanted.as_str() {
                    $( $alias => Some(Self::$target), )*
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                $crate::enums::enum_table::write_name_or_number(f, self.name(), self.to_u32())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::enums::enum_table::ParseEnumError;

            /// Accepts the standard name, an alias, or a decimal number.
            fn from_str(input: &str) -> Result<Self, Self::Err> {
                if let Some(found) = Self::from_name(input) {
                    return Ok(found);
                }
                input
                    .trim()
                    .parse::<u32>()
                    .map(Self::from_u32)
                    .map_err(|_| $crate::enums::enum_table::ParseEnumError {
                        enumeration: stringify!($name),
                        input: input.to_owned(),
                    })
            }
        }

        impl From<u32> for $name {
            fn from(value: u32) -> Self {
                Self::from_u32(value)
            }
        }

        impl From<$name> for u32 {
            fn from(value: $name) -> u32 {
                value.to_u32()
            }
        }
    };
}

pub(crate) use bacnet_enum;
