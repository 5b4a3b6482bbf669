//! `Reader`: a bounds-checked byte cursor that reports absolute offsets in its errors.

use super::error::{DecodeError, DecodeErrorKind};

/// A cursor over input bytes. Every read is bounds-checked and fails with
/// [`DecodeErrorKind::Truncated`] at the current offset instead of panicking.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data[0]` in the outermost buffer, so sub-readers report absolute offsets.
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `data`.
    pub const fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            base: 0,
        }
    }

    /// Absolute offset of the next byte to be read.
    pub const fn position(&self) -> usize {
        self.base + self.pos
    }

    /// Number of bytes not yet read.
    pub const fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been read.
    pub const fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// An error of `kind` at the current position.
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.position(), kind)
    }

    fn truncated(&self, needed: usize) -> DecodeError {
        self.error(DecodeErrorKind::Truncated {
            needed,
            remaining: self.remaining(),
        })
    }

    /// The next byte without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Reads one byte.
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        let byte = self.peek_u8().ok_or_else(|| self.truncated(1))?;
        self.pos += 1;
        Ok(byte)
    }

    /// Reads a big-endian `u16`.
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.read_array()?))
    }

    /// Reads a big-endian `u32`.
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.read_array()?))
    }

    /// Reads exactly `N` bytes.
    pub fn read_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.read_bytes(N)?);
        Ok(out)
    }

    /// Reads `len` bytes, failing if fewer remain. Never allocates.
    pub fn read_bytes(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        if len > self.remaining() {
            return Err(self.truncated(len));
        }
        let start = self.pos;
        self.pos += len;
        Ok(&self.data[start..start + len])
    }

    /// Reads every remaining byte.
    pub fn read_rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos..];
        self.pos = self.data.len();
        rest
    }

    /// Splits off the next `len` bytes as a separate reader (offsets stay absolute)
    /// and advances past them.
    pub fn sub_reader(&mut self, len: usize) -> Result<Reader<'a>, DecodeError> {
        let base = self.position();
        let data = self.read_bytes(len)?;
        Ok(Reader { data, pos: 0, base })
    }

    /// Fails with [`DecodeErrorKind::TrailingData`] unless every byte has been read.
    pub fn expect_end(&self) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.error(DecodeErrorKind::TrailingData {
                count: self.remaining(),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_tracks_position() {
        let mut r = Reader::new(&[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(r.read_u8().unwrap(), 1);
        assert_eq!(r.read_u16().unwrap(), 0x0203);
        assert_eq!(r.read_u32().unwrap(), 0x0405_0607);
        assert_eq!(r.position(), 7);
        assert!(r.is_empty());
    }

    #[test]
    fn truncated_read_reports_offset() {
        let mut r = Reader::new(&[1, 2, 3]);
        r.read_u8().unwrap();
        let err = r.read_u32().unwrap_err();
        assert_eq!(err.offset, 1);
        assert_eq!(
            err.kind,
            DecodeErrorKind::Truncated {
                needed: 4,
                remaining: 2
            }
        );
    }

    #[test]
    fn sub_reader_keeps_absolute_offsets() {
        let mut r = Reader::new(&[9, 9, 1]);
        r.read_u8().unwrap();
        let mut sub = r.sub_reader(2).unwrap();
        sub.read_u16().unwrap();
        let err = sub.read_u8().unwrap_err();
        assert_eq!(err.offset, 3);
        assert!(r.is_empty());
    }

    #[test]
    fn expect_end_reports_trailing_bytes() {
        let r = Reader::new(&[1, 2]);
        assert_eq!(
            r.expect_end().unwrap_err().kind,
            DecodeErrorKind::TrailingData { count: 2 }
        );
    }
}
