//! Decoding errors shared by every layer: what went wrong and at which byte offset.

use crate::enums::RejectReason;

/// Which tag a decoder wanted or found, for [`DecodeErrorKind::UnexpectedTag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSpec {
    /// An application tag with this number (Clause 20.2.1.4).
    Application(u8),
    /// Any application tag.
    AnyApplication,
    /// A context-specific primitive tag with this number.
    Context(u8),
    /// An opening tag with this number.
    Opening(u8),
    /// A closing tag with this number.
    Closing(u8),
}

impl std::fmt::Display for TagSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TagSpec::Application(n) => write!(f, "application tag {n}"),
            TagSpec::AnyApplication => f.write_str("an application tag"),
            TagSpec::Context(n) => write!(f, "context tag {n}"),
            TagSpec::Opening(n) => write!(f, "opening tag {n}"),
            TagSpec::Closing(n) => write!(f, "closing tag {n}"),
        }
    }
}

/// What made the input undecodable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended before `needed` more bytes could be read.
    #[error("truncated: needed {needed} bytes, {remaining} left")]
    Truncated {
        /// Bytes the decoder wanted.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A malformed tag header (reserved tag number 255, application tag with L/V/T 6 or 7, ...).
    #[error("invalid tag")]
    InvalidTag,
    /// A declared length exceeds an explicit limit of this crate or of the frame.
    #[error("length {length} exceeds limit {limit}")]
    LengthTooLarge {
        /// Declared length.
        length: u64,
        /// The limit it broke.
        limit: u64,
    },
    /// A length that the data type does not allow (e.g. a 3-byte REAL or an empty Unsigned).
    #[error("length {length} is not valid for this data type")]
    InvalidLength {
        /// The rejected length.
        length: u32,
    },
    /// The tag is well formed but not the one the grammar requires here.
    #[error("expected {expected}, found {found}")]
    UnexpectedTag {
        /// What the grammar asks for.
        expected: TagSpec,
        /// What the input holds.
        found: TagSpec,
    },
    /// A character string uses a character set this crate does not decode (DBCS, JIS, unknown).
    #[error("unsupported character set {set:#04x}")]
    InvalidCharacterSet {
        /// The character-set octet.
        set: u8,
    },
    /// A field holds a value outside its allowed range; the text names the field.
    #[error("invalid value: {0}")]
    InvalidValue(&'static str),
    /// Constructed data nests deeper than the explicit limit.
    #[error("nesting deeper than {limit}")]
    NestingTooDeep {
        /// The depth limit.
        limit: usize,
    },
    /// More elements than the explicit limit for a list.
    #[error("more than {limit} elements")]
    TooManyElements {
        /// The count limit.
        limit: usize,
    },
    /// Bytes were left after a message that must fill its frame.
    #[error("{count} unexpected trailing bytes")]
    TrailingData {
        /// Number of bytes left over.
        count: usize,
    },
}

/// A decoding failure: its kind and the byte offset (from the start of the decoded buffer)
/// where the offending item starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte offset {offset}")]
pub struct DecodeError {
    /// Byte offset in the input where the problem was detected.
    pub offset: usize,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// Builds an error at `offset`.
    pub const fn new(offset: usize, kind: DecodeErrorKind) -> Self {
        Self { offset, kind }
    }

    /// The BACnet Reject reason a server should answer with when a request fails this way
    /// (Clause 18.8).
    pub fn reject_reason(&self) -> RejectReason {
        match self.kind {
            DecodeErrorKind::Truncated { .. } => RejectReason::MissingRequiredParameter,
            DecodeErrorKind::InvalidTag | DecodeErrorKind::InvalidLength { .. } => {
                RejectReason::InvalidTag
            }
            DecodeErrorKind::UnexpectedTag { .. } => RejectReason::InvalidTag,
            DecodeErrorKind::LengthTooLarge { .. } | DecodeErrorKind::TooManyElements { .. } => {
                RejectReason::BufferOverflow
            }
            DecodeErrorKind::InvalidCharacterSet { .. } => RejectReason::InvalidParameterDataType,
            DecodeErrorKind::InvalidValue(_) => RejectReason::ParameterOutOfRange,
            DecodeErrorKind::TrailingData { .. } => RejectReason::TooManyArguments,
            DecodeErrorKind::NestingTooDeep { .. } => RejectReason::Other,
        }
    }
}
