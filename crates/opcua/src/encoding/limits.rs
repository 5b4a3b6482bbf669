//! Decoding limits: the largest strings and arrays and the deepest nesting a decoder accepts.

/// Default maximum String/XmlElement length in bytes (16 MiB).
pub const DEFAULT_MAX_STRING_LENGTH: usize = 16 * 1024 * 1024;
/// Default maximum ByteString length in bytes (16 MiB).
pub const DEFAULT_MAX_BYTE_STRING_LENGTH: usize = 16 * 1024 * 1024;
/// Default maximum number of elements in one array.
pub const DEFAULT_MAX_ARRAY_LENGTH: usize = 1_000_000;
/// Default maximum nesting of Variant / DataValue / ExtensionObject values inside each other.
pub const DEFAULT_MAX_NESTING_DEPTH: usize = 64;
/// Default maximum DiagnosticInfo recursion: OPC 10000-6 v1.05 §5.2.2.12 asks decoders for at
/// least 4 levels and does not expect more than 10.
pub const DEFAULT_MAX_DIAGNOSTIC_DEPTH: usize = 10;

/// Limits a [`Reader`](super::Reader) enforces while decoding untrusted input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodingLimits {
    /// Maximum String and XmlElement length in bytes.
    pub max_string_length: usize,
    /// Maximum ByteString length in bytes.
    pub max_byte_string_length: usize,
    /// Maximum element count of any array.
    pub max_array_length: usize,
    /// Maximum nesting of structured values (Variant, DataValue, ExtensionObject).
    pub max_nesting_depth: usize,
    /// Maximum number of nested inner DiagnosticInfos.
    pub max_diagnostic_depth: usize,
}

impl Default for DecodingLimits {
    fn default() -> Self {
        Self {
            max_string_length: DEFAULT_MAX_STRING_LENGTH,
            max_byte_string_length: DEFAULT_MAX_BYTE_STRING_LENGTH,
            max_array_length: DEFAULT_MAX_ARRAY_LENGTH,
            max_nesting_depth: DEFAULT_MAX_NESTING_DEPTH,
            max_diagnostic_depth: DEFAULT_MAX_DIAGNOSTIC_DEPTH,
        }
    }
}
