//! `TransmitBuffer`: bytes waiting for the socket, kept as a gather list so that a large
//! shared payload (a getData buffer) goes from its one place in memory to the kernel without
//! a copy in between. Small pieces (headers, short bodies) are copied into one inline buffer;
//! long shared pieces are referenced. It implements [`bytes::Buf`], so a tokio driver writes it
//! with `write_all_buf`, which uses vectored writes (`writev`) on a TCP stream.
//!
//! [`ChunkSink`] is what chunk writers write into: a `Vec<u8>` (everything copied, for tests
//! and simple callers) or a `TransmitBuffer`.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::ops::Range;

use bytes::{Buf, Bytes};

/// Shared pieces shorter than this are copied into the inline buffer: below it, one more
/// gather element costs more than the copy.
pub const INLINE_COPY_MAX: usize = 4 * 1024;

/// A destination for encoded chunks.
pub trait ChunkSink {
    /// Bytes written so far (not yet taken out).
    fn len(&self) -> usize;

    /// True when nothing is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A hint that about `additional` more bytes are coming.
    fn reserve(&mut self, additional: usize) {
        let _ = additional;
    }

    /// Lets `encode` append bytes (a header, a small body) to a plain byte vector.
    fn encode_with(&mut self, encode: &mut dyn FnMut(&mut Vec<u8>));

    /// Appends a slice (copied).
    fn put_slice(&mut self, bytes: &[u8]) {
        self.encode_with(&mut |buf| buf.extend_from_slice(bytes));
    }

    /// Appends a shared slice: referenced when the sink can and it is long, else copied.
    fn put_shared(&mut self, bytes: Bytes);
}

impl ChunkSink for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }

    fn encode_with(&mut self, encode: &mut dyn FnMut(&mut Vec<u8>)) {
        encode(self);
    }

    fn put_shared(&mut self, bytes: Bytes) {
        self.extend_from_slice(&bytes);
    }
}

#[derive(Clone, Debug)]
enum Part {
    /// A range of the inline buffer.
    Inline(Range<usize>),
    /// A referenced slice.
    Shared(Bytes),
}

impl Part {
    fn len(&self) -> usize {
        match self {
            Self::Inline(range) => range.len(),
            Self::Shared(bytes) => bytes.len(),
        }
    }
}

/// Bytes to write, in order: copied pieces and referenced [`Bytes`].
#[derive(Clone, Debug, Default)]
pub struct TransmitBuffer {
    inline: Vec<u8>,
    parts: VecDeque<Part>,
    remaining: usize,
}

impl TransmitBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of gather elements waiting (inline runs and shared slices).
    pub fn part_count(&self) -> usize {
        self.parts.len()
    }

    /// All waiting bytes in one vector (tests, diagnostics).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.remaining);
        for part in &self.parts {
            out.extend_from_slice(self.part_bytes(part));
        }
        out
    }

    fn part_bytes<'a>(&'a self, part: &'a Part) -> &'a [u8] {
        match part {
            Part::Inline(range) => self.inline.get(range.clone()).unwrap_or_default(),
            Part::Shared(bytes) => bytes,
        }
    }
}

impl ChunkSink for TransmitBuffer {
    fn len(&self) -> usize {
        self.remaining
    }

    fn encode_with(&mut self, encode: &mut dyn FnMut(&mut Vec<u8>)) {
        let start = self.inline.len();
        encode(&mut self.inline);
        let end = self.inline.len();
        if end == start {
            return;
        }
        self.remaining += end - start;
        // Extend the last inline run when it ends where these bytes start.
        if let Some(Part::Inline(range)) = self.parts.back_mut()
            && range.end == start
        {
            range.end = end;
            return;
        }
        self.parts.push_back(Part::Inline(start..end));
    }

    fn put_shared(&mut self, bytes: Bytes) {
        if bytes.len() < INLINE_COPY_MAX {
            self.put_slice(&bytes);
        } else {
            self.remaining += bytes.len();
            self.parts.push_back(Part::Shared(bytes));
        }
    }
}

impl Buf for TransmitBuffer {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.parts.front().map_or(&[], |part| self.part_bytes(part))
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut count = 0;
        for (slot, part) in dst.iter_mut().zip(&self.parts) {
            *slot = IoSlice::new(self.part_bytes(part));
            count += 1;
        }
        count
    }

    /// Consumes `count` bytes from the front (at most what remains).
    fn advance(&mut self, count: usize) {
        let mut left = count.min(self.remaining);
        self.remaining -= left;
        while left > 0 {
            let Some(front) = self.parts.front_mut() else {
                break;
            };
            let len = front.len();
            if left < len {
                match front {
                    Part::Inline(range) => range.start += left,
                    Part::Shared(bytes) => bytes.advance(left),
                }
                break;
            }
            left -= len;
            self.parts.pop_front();
        }
        if self.parts.is_empty() {
            // Everything went out: the inline buffer starts over (its capacity stays).
            self.inline.clear();
            self.remaining = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (TransmitBuffer, Vec<u8>) {
        let long = Bytes::from((0..10_000u32).map(|i| i as u8).collect::<Vec<u8>>());
        let mut buffer = TransmitBuffer::new();
        buffer.put_slice(b"head");
        buffer.put_shared(Bytes::from_static(b"short"));
        buffer.put_shared(long.clone());
        buffer.encode_with(&mut |buf| buf.extend_from_slice(b"tail"));
        buffer.put_shared(long.slice(..INLINE_COPY_MAX));
        let mut expected = b"headshort".to_vec();
        expected.extend_from_slice(&long);
        expected.extend_from_slice(b"tail");
        expected.extend_from_slice(&long[..INLINE_COPY_MAX]);
        (buffer, expected)
    }

    #[test]
    fn short_pieces_are_joined_and_long_ones_referenced() {
        let (buffer, expected) = sample();
        // "headshort", the long slice, "tail", the 4 KiB slice.
        assert_eq!(buffer.part_count(), 4);
        assert_eq!(buffer.remaining(), expected.len());
        assert_eq!(buffer.to_vec(), expected);
        let mut slices = [IoSlice::new(&[]); 8];
        assert_eq!(buffer.chunks_vectored(&mut slices), 4);
        assert_eq!(&*slices[0], b"headshort");
        assert_eq!(slices[1].len(), 10_000);
        let mut few = [IoSlice::new(&[]); 2];
        assert_eq!(buffer.chunks_vectored(&mut few), 2);
    }

    #[test]
    fn advance_at_every_offset_and_in_every_step_size() {
        let (whole, expected) = sample();
        for step in [1, 3, 7, 4096, 9_999, 10_013, usize::MAX] {
            let mut buffer = whole.clone();
            let mut written = Vec::new();
            while buffer.has_remaining() {
                // What a short write would take: part of the gather list.
                let mut slices = [IoSlice::new(&[]); 3];
                let count = buffer.chunks_vectored(&mut slices);
                let mut take = step;
                for slice in &slices[..count] {
                    let n = slice.len().min(take);
                    written.extend_from_slice(&slice[..n]);
                    take -= n;
                    if take == 0 {
                        break;
                    }
                }
                let n = step.min(slices[..count].iter().map(|s| s.len()).sum());
                buffer.advance(n);
            }
            assert_eq!(written, expected, "step {step}");
            assert_eq!(buffer.part_count(), 0);
        }
        // Advancing past the end is clamped, and the buffer is reusable afterwards.
        let mut buffer = whole;
        buffer.advance(usize::MAX);
        assert_eq!(buffer.remaining(), 0);
        assert!(buffer.chunk().is_empty());
        buffer.put_slice(b"again");
        assert_eq!(buffer.to_vec(), b"again");
        assert_eq!(buffer.chunk(), b"again");
    }

    #[test]
    fn vec_sink_copies_everything() {
        let mut out = Vec::new();
        ChunkSink::put_slice(&mut out, b"ab");
        out.put_shared(Bytes::from(vec![7u8; 5000]));
        assert_eq!(ChunkSink::len(&out), 5002);
        assert_eq!(&out[..2], b"ab");
    }
}
