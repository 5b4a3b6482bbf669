//! The OPC UA `StatusCode` (OPC 10000-4 §7.39, OPC 10000-6 §5.2.2.11): a 32-bit value whose top
//! two bits give the severity, whose next 14 bits name the condition and whose low 16 bits carry
//! flags. Named codes come from the single table in `status_code_table.rs`.

use std::fmt;

/// A 32-bit OPC UA status code. Unknown and vendor codes are kept as they are.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StatusCode(u32);

/// The severity encoded in the top two bits of a [`StatusCode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// `00`: the operation succeeded.
    Good,
    /// `01`: the operation succeeded partially or the value is of doubtful quality.
    Uncertain,
    /// `10` (and the reserved `11`): the operation failed.
    Bad,
}

/// Mask of the bits that identify the condition (severity and sub-code), without the flag bits.
const CODE_MASK: u32 = 0xFFFF_0000;

impl StatusCode {
    /// Wraps a raw 32-bit value.
    pub const fn from_u32(bits: u32) -> Self {
        Self(bits)
    }

    /// The raw 32-bit value, flags included.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The value with the 16 low flag bits cleared.
    pub const fn code(self) -> StatusCode {
        StatusCode(self.0 & CODE_MASK)
    }

    /// The severity from the top two bits (the reserved pattern `11` is reported as bad).
    pub const fn severity(self) -> Severity {
        match self.0 >> 30 {
            0 => Severity::Good,
            1 => Severity::Uncertain,
            _ => Severity::Bad,
        }
    }

    /// True for severity Good.
    pub const fn is_good(self) -> bool {
        matches!(self.severity(), Severity::Good)
    }

    /// True for severity Uncertain.
    pub const fn is_uncertain(self) -> bool {
        matches!(self.severity(), Severity::Uncertain)
    }

    /// True for severity Bad.
    pub const fn is_bad(self) -> bool {
        matches!(self.severity(), Severity::Bad)
    }

    /// The standard name of the condition (flag bits ignored), e.g. `"BadDecodingError"`.
    pub const fn name(self) -> Option<&'static str> {
        Self::standard_name(self.0 & CODE_MASK)
    }

    /// Looks a code up by its standard name, e.g. `"BadDecodingError"`.
    pub fn from_name(name: &str) -> Option<StatusCode> {
        Self::standard_from_name(name)
    }
}

impl From<u32> for StatusCode {
    fn from(bits: u32) -> Self {
        Self(bits)
    }
}

impl From<StatusCode> for u32 {
    fn from(code: StatusCode) -> Self {
        code.0
    }
}

impl fmt::Display for StatusCode {
    /// `BadDecodingError (0x80070000)`, or just the hexadecimal value for unknown codes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} (0x{:08X})", self.0),
            None => write!(f, "0x{:08X}", self.0),
        }
    }
}

impl fmt::Debug for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Expands the rows of `status_code_table.rs` into constants, `ALL` and the name lookups.
macro_rules! status_code_table {
    ($( $constant:ident = $value:literal => $name:literal, )*) => {
        impl StatusCode {
            $(
                #[doc = concat!("`", $name, "` (`", stringify!($value), "`).")]
                pub const $constant: StatusCode = StatusCode::from_u32($value);
            )*

            /// Every standard code, in table order.
            pub const ALL: &'static [StatusCode] = &[$(StatusCode::$constant),*];

            /// Name of an exact standard code value (flag bits already cleared).
            pub(crate) const fn standard_name(code: u32) -> Option<&'static str> {
                match code {
                    $( $value => Some($name), )*
                    _ => None,
                }
            }

            /// Standard code for an exact name.
            pub(crate) fn standard_from_name(name: &str) -> Option<StatusCode> {
                match name {
                    $( $name => Some(StatusCode::$constant), )*
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use status_code_table;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn table_values_from_status_code_csv() {
        assert_eq!(StatusCode::GOOD.bits(), 0);
        assert_eq!(StatusCode::BAD_DECODING_ERROR.bits(), 0x8007_0000);
        assert_eq!(StatusCode::BAD_ENCODING_LIMITS_EXCEEDED.bits(), 0x8008_0000);
        assert_eq!(StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID.bits(), 0x807E_0000);
        assert_eq!(StatusCode::BAD_TCP_MESSAGE_TOO_LARGE.bits(), 0x8080_0000);
        assert_eq!(StatusCode::BAD_TCP_ENDPOINT_URL_INVALID.bits(), 0x8083_0000);
        assert_eq!(
            StatusCode::BAD_PROTOCOL_VERSION_UNSUPPORTED.bits(),
            0x80BE_0000
        );
        assert_eq!(StatusCode::UNCERTAIN_SIMULATED_VALUE.bits(), 0x4209_0000);
        assert_eq!(StatusCode::GOOD_CASCADE.bits(), 0x0409_0000);
        assert_eq!(StatusCode::ALL.len(), 271);
    }

    #[test]
    fn names_and_values_are_unique() {
        let values: HashSet<u32> = StatusCode::ALL.iter().map(|c| c.bits()).collect();
        assert_eq!(values.len(), StatusCode::ALL.len());
        for code in StatusCode::ALL {
            let name = code.name().unwrap();
            assert_eq!(StatusCode::from_name(name), Some(*code));
        }
    }

    #[test]
    fn severity_helpers() {
        assert!(StatusCode::GOOD.is_good());
        assert!(StatusCode::UNCERTAIN_LAST_USABLE_VALUE.is_uncertain());
        assert!(StatusCode::BAD_TIMEOUT.is_bad());
        assert!(StatusCode::from_u32(0xC000_0000).is_bad());
        assert_eq!(StatusCode::GOOD_MORE_DATA.severity(), Severity::Good);
    }

    #[test]
    fn display_and_flag_bits() {
        assert_eq!(
            StatusCode::BAD_DECODING_ERROR.to_string(),
            "BadDecodingError (0x80070000)"
        );
        // Flag bits (here: InfoType DataValue + Overflow) do not hide the name.
        let flagged = StatusCode::from_u32(0x0000_0480);
        assert_eq!(flagged.name(), Some("Good"));
        assert_eq!(flagged.to_string(), "Good (0x00000480)");
        assert_eq!(StatusCode::from_u32(0x8FFF_0000).to_string(), "0x8FFF0000");
        assert_eq!(StatusCode::from_name("NoSuchCode"), None);
        assert_eq!(
            StatusCode::from_name("GoodEdited_DependentValueChanged"),
            Some(StatusCode::GOOD_EDITED_DEPENDENT_VALUE_CHANGED)
        );
    }
}
