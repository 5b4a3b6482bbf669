//! `Reader`: a bounds-checked cursor over UA Binary input that carries the decoding limits and
//! the current nesting depth. A reader made [`from_shared`](Reader::from_shared) also knows the
//! reference-counted buffer its input lives in, so that large ByteStrings decode as slices of
//! that buffer instead of copies.

use bytes::Bytes;

use super::error::{DecodeError, DecodeErrorKind};
use super::limits::DecodingLimits;

/// Byte runs at least this long are shared with a [`Reader::from_shared`] input instead of
/// copied. Shorter ones are copied so that a small value kept for long (a session nonce, a
/// written ByteString) never keeps a large receive buffer alive: a shared slice pins at most
/// its buffer, which is at most one frame or message plus one socket read.
pub const SHARE_MIN_LENGTH: usize = 64 * 1024;

/// A cursor over an input slice. Every read checks the remaining length first.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    input: &'a [u8],
    /// The buffer `input` is the whole of, when the caller has one.
    shared: Option<&'a Bytes>,
    position: usize,
    limits: DecodingLimits,
    depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader with the default [`DecodingLimits`].
    pub fn new(input: &'a [u8]) -> Self {
        Self::with_limits(input, DecodingLimits::default())
    }

    /// A reader with explicit limits.
    pub fn with_limits(input: &'a [u8], limits: DecodingLimits) -> Self {
        Self {
            input,
            shared: None,
            position: 0,
            limits,
            depth: 0,
        }
    }

    /// A reader over a shared buffer: [`read_shared`](Self::read_shared) hands out slices of
    /// `input` (no copy) for runs of at least [`SHARE_MIN_LENGTH`] bytes.
    pub fn from_shared(input: &'a Bytes, limits: DecodingLimits) -> Self {
        Self {
            input: input.as_ref(),
            shared: Some(input),
            position: 0,
            limits,
            depth: 0,
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &DecodingLimits {
        &self.limits
    }

    /// Offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Number of bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.input.len().saturating_sub(self.position)
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes not yet read (without consuming them).
    pub fn rest(&self) -> &'a [u8] {
        self.input.get(self.position..).unwrap_or_default()
    }

    /// An error of `kind` at the current position.
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError {
            offset: self.position,
            kind,
        }
    }

    /// An error of `kind` at an earlier `offset`.
    pub fn error_at(&self, offset: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { offset, kind }
    }

    /// Fails with [`DecodeErrorKind::TrailingBytes`] unless the whole input was consumed.
    pub fn expect_end(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            left => Err(self.error(DecodeErrorKind::TrailingBytes(left))),
        }
    }

    /// Consumes and returns the next `count` bytes.
    pub fn read_bytes(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if count > available {
            return Err(self.error(DecodeErrorKind::UnexpectedEnd {
                needed: count,
                available,
            }));
        }
        let start = self.position;
        self.position += count;
        self.input.get(start..self.position).ok_or_else(|| {
            self.error_at(
                start,
                DecodeErrorKind::UnexpectedEnd {
                    needed: count,
                    available,
                },
            )
        })
    }

    /// Consumes the next `count` bytes as an owned [`Bytes`]: a slice of the shared input
    /// (reference count only) when there is one and the run is long, else a copy.
    pub fn read_shared(&mut self, count: usize) -> Result<Bytes, DecodeError> {
        let start = self.position;
        let bytes = self.read_bytes(count)?;
        Ok(match self.shared {
            Some(shared) if count >= SHARE_MIN_LENGTH => shared.slice(start..start + count),
            _ => Bytes::copy_from_slice(bytes),
        })
    }

    /// Consumes the next `N` bytes as an array.
    pub fn read_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let start = self.position;
        let bytes = self.read_bytes(N)?;
        bytes.try_into().map_err(|_| {
            self.error_at(
                start,
                DecodeErrorKind::UnexpectedEnd {
                    needed: N,
                    available: bytes.len(),
                },
            )
        })
    }

    /// Consumes one byte.
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        let [byte] = self.read_array::<1>()?;
        Ok(byte)
    }

    /// Reads an Int32 length prefix: `None` for -1 (null), an error for other negative values.
    pub fn read_length(&mut self) -> Result<Option<usize>, DecodeError> {
        let start = self.position;
        let raw = i32::from_le_bytes(self.read_array()?);
        match raw {
            -1 => Ok(None),
            n if n < 0 => Err(self.error_at(start, DecodeErrorKind::NegativeLength(n))),
            n => Ok(Some(n.unsigned_abs() as usize)),
        }
    }

    /// Reads an array length prefix and checks it against the array limit and against the
    /// remaining input (every encoded element takes at least one byte), so that callers may
    /// allocate `length` slots safely.
    pub fn read_array_length(&mut self) -> Result<Option<usize>, DecodeError> {
        let start = self.position;
        let Some(length) = self.read_length()? else {
            return Ok(None);
        };
        let limit = self.limits.max_array_length;
        if length > limit {
            return Err(self.error_at(start, DecodeErrorKind::ArrayTooLong { length, limit }));
        }
        let available = self.remaining();
        if length > available {
            return Err(self.error_at(
                start,
                DecodeErrorKind::UnexpectedEnd {
                    needed: length,
                    available,
                },
            ));
        }
        Ok(Some(length))
    }

    /// Runs `decode` one nesting level deeper, failing with
    /// [`DecodeErrorKind::NestingTooDeep`] past `max_nesting_depth`.
    pub fn nested<T>(
        &mut self,
        decode: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let limit = self.limits.max_nesting_depth;
        if self.depth >= limit {
            return Err(self.error(DecodeErrorKind::NestingTooDeep { limit }));
        }
        self.depth += 1;
        let result = decode(self);
        self.depth -= 1;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounds_checked() {
        let mut reader = Reader::new(&[1, 2, 3]);
        assert_eq!(reader.read_bytes(2).unwrap(), &[1, 2]);
        let error = reader.read_bytes(2).unwrap_err();
        assert_eq!(error.offset, 2);
        assert_eq!(
            error.kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 2,
                available: 1
            }
        );
        assert_eq!(reader.read_u8().unwrap(), 3);
        reader.expect_end().unwrap();
    }

    #[test]
    fn shared_reads_slice_long_runs_and_copy_short_ones() {
        let mut input = vec![7u8; 3];
        input.extend(std::iter::repeat_n(9u8, SHARE_MIN_LENGTH));
        let input = Bytes::from(input);
        let mut reader = Reader::from_shared(&input, DecodingLimits::default());
        let short = reader.read_shared(3).unwrap();
        assert_eq!(short, [7u8; 3].as_slice());
        // A copy: not inside the input buffer.
        let range = input.as_ptr_range();
        assert!(!range.contains(&short.as_ptr()));
        let long = reader.read_shared(SHARE_MIN_LENGTH).unwrap();
        assert_eq!(long.len(), SHARE_MIN_LENGTH);
        assert!(long.iter().all(|b| *b == 9));
        // A slice: the same memory, three bytes in.
        assert_eq!(long.as_ptr(), input[3..].as_ptr());
        assert_eq!(
            reader.read_shared(1).unwrap_err().kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 1,
                available: 0
            }
        );
        // Without a shared input, long runs are copied too.
        let mut plain = Reader::new(&input);
        let copied = plain.read_shared(SHARE_MIN_LENGTH + 3).unwrap();
        assert!(!range.contains(&copied.as_ptr()));
    }

    #[test]
    fn length_prefix_rules() {
        let mut reader = Reader::new(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF]);
        assert_eq!(reader.read_length().unwrap(), None);
        let error = reader.read_length().unwrap_err();
        assert_eq!(error.offset, 4);
        assert_eq!(error.kind, DecodeErrorKind::NegativeLength(-2));
    }

    #[test]
    fn array_length_checked_against_input_before_allocation() {
        // Claims 1000 elements but only 2 bytes follow.
        let mut reader = Reader::new(&[0xE8, 0x03, 0, 0, 1, 2]);
        assert_eq!(
            reader.read_array_length().unwrap_err().kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 1000,
                available: 2
            }
        );
    }

    #[test]
    fn nesting_limit() {
        let limits = DecodingLimits {
            max_nesting_depth: 2,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&[], limits);
        let ok = reader.nested(|r| r.nested(|_| Ok(5)));
        assert_eq!(ok.unwrap(), 5);
        let too_deep = reader.nested(|r| r.nested(|r| r.nested(|_| Ok(5))));
        assert_eq!(
            too_deep.unwrap_err().kind,
            DecodeErrorKind::NestingTooDeep { limit: 2 }
        );
    }
}
