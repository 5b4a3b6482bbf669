//! [`DecodeError`]: what went wrong in an input and where (line/column for the text
//! formats, a JSON path for JSON content errors).

use std::fmt;

/// What a decoder did not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended early.
    #[error("unexpected end of input, expected {0}")]
    UnexpectedEnd(&'static str),
    /// A character that does not fit here.
    #[error("unexpected {found:?}, expected {expected}")]
    Unexpected {
        /// The character found.
        found: char,
        /// What the grammar wanted.
        expected: &'static str,
    },
    /// An invalid escape sequence in a string or URI.
    #[error("invalid escape sequence")]
    InvalidEscape,
    /// A malformed number.
    #[error("invalid number {0:?}")]
    InvalidNumber(String),
    /// A malformed or out of range date, time or timestamp.
    #[error("invalid date or time: {0}")]
    InvalidTemporal(String),
    /// A coordinate out of range.
    #[error("coordinate out of range")]
    InvalidCoord,
    /// A name that is not a valid tag name.
    #[error("invalid tag name {0:?}")]
    InvalidTagName(String),
    /// A tag name given twice in one dict, or a column name twice in one grid.
    #[error("duplicate name {0:?}")]
    DuplicateName(String),
    /// A grid row with more cells than columns.
    #[error("row has more cells than the {0} columns")]
    RowTooWide(usize),
    /// A grid that cannot be built (e.g. a bad column).
    #[error("invalid grid: {0}")]
    InvalidGrid(String),
    /// Unsupported grid version.
    #[error("unsupported grid version {0:?}")]
    UnsupportedVersion(String),
    /// Lists, dicts and grids nested deeper than the limit.
    #[error("nesting deeper than {0}")]
    TooDeep(usize),
    /// Input larger than the limit.
    #[error("input of {size} bytes exceeds the limit of {limit}")]
    InputTooLarge {
        /// Input size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Too many grid columns.
    #[error("more than {0} columns")]
    TooManyColumns(usize),
    /// The bytes are not UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// Input left after a complete value.
    #[error("trailing input after the value")]
    TrailingInput,
    /// JSON syntax error reported by the JSON parser.
    #[error("JSON syntax: {0}")]
    JsonSyntax(String),
    /// JSON that is well formed but not a valid Haystack encoding.
    #[error("{0}")]
    JsonContent(String),
}

/// Where an input went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A position in a text input; line and column start at 1, column counts characters.
    Text {
        /// Line number.
        line: usize,
        /// Column (in characters).
        column: usize,
        /// Byte offset from the start of the input.
        offset: usize,
    },
    /// A path into a JSON document, such as `rows[3].curVal`.
    Path(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Text { line, column, .. } => write!(f, "line {line}, column {column}"),
            Location::Path(path) if path.is_empty() => f.write_str("document root"),
            Location::Path(path) => write!(f, "{path}"),
        }
    }
}

/// A decode failure with its location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {kind}")]
pub struct DecodeError {
    /// Where.
    pub location: Location,
    /// What.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// An error at byte `offset` of `input`; line and column are computed from the input.
    pub fn at_offset(input: &str, offset: usize, kind: DecodeErrorKind) -> Self {
        let offset = offset.min(input.len());
        // Offsets always fall on char boundaries in the decoders; guard anyway.
        let before = input.get(..offset).unwrap_or(input);
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        DecodeError {
            location: Location::Text {
                line,
                column,
                offset,
            },
            kind,
        }
    }

    /// An error at a JSON path.
    pub fn at_path(path: impl Into<String>, kind: DecodeErrorKind) -> Self {
        DecodeError {
            location: Location::Path(path.into()),
            kind,
        }
    }

    /// Line and column, for text locations.
    pub fn line_column(&self) -> Option<(usize, usize)> {
        match self.location {
            Location::Text { line, column, .. } => Some((line, column)),
            Location::Path(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_from_offset() {
        let e = DecodeError::at_offset("ab\n°cd", 5, DecodeErrorKind::InvalidEscape);
        assert_eq!(e.line_column(), Some((2, 2)));
        assert_eq!(e.to_string(), "line 2, column 2: invalid escape sequence");
    }
}
