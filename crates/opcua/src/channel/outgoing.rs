//! Outgoing secure channel messages: an encoded body made of owned and shared segments, cut
//! into chunks no larger than the peer's receive buffer as the driver asks for bytes
//! (OPC 10000-6 §6.7.2). Shared segments (the benchmark payload) are not copied into a
//! [`TransmitBuffer`](crate::transport::TransmitBuffer): each chunk refers to its slice of
//! them, and the socket write gathers header and slice. Into a `Vec<u8>` they are copied once.

use bytes::Bytes;

use crate::encoding::BinaryEncodable;
use crate::secure_channel::SequenceHeader;
use crate::transport::{ChunkSink, ChunkType, HEADER_LENGTH, MessageHeader, MessageType};

/// A piece of an encoded message body.
#[derive(Clone, Debug)]
pub enum BodySegment {
    /// Bytes owned by the message.
    Owned(Vec<u8>),
    /// Bytes shared with the address space (never copied into a transmit buffer).
    Shared(Bytes),
}

impl BodySegment {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Owned(bytes) => bytes,
            Self::Shared(bytes) => bytes,
        }
    }
}

/// An encoded message body.
#[derive(Clone, Debug, Default)]
pub struct OutgoingBody {
    segments: Vec<BodySegment>,
    len: usize,
}

impl OutgoingBody {
    /// A body of one owned buffer.
    pub fn owned(bytes: Vec<u8>) -> Self {
        let mut body = Self::default();
        body.push(BodySegment::Owned(bytes));
        body
    }

    /// Appends a segment.
    pub fn push(&mut self, segment: BodySegment) {
        self.len += segment.bytes().len();
        self.segments.push(segment);
    }

    /// Total length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// All bytes in one vector (tests and small messages).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for segment in &self.segments {
            out.extend_from_slice(segment.bytes());
        }
        out
    }
}

/// A message being sent chunk by chunk.
#[derive(Debug)]
pub struct OutgoingMessage {
    message_type: MessageType,
    channel_id: u32,
    /// The encoded security header (asymmetric or symmetric).
    security_header: Vec<u8>,
    request_id: u32,
    body: OutgoingBody,
    segment: usize,
    offset: usize,
    remaining: usize,
    /// Most body bytes per chunk when a security policy needs room for padding and signature.
    body_limit: Option<usize>,
}

impl OutgoingMessage {
    /// A message to send on `channel_id` answering `request_id`.
    pub fn new(
        message_type: MessageType,
        channel_id: u32,
        security_header: Vec<u8>,
        request_id: u32,
        body: OutgoingBody,
    ) -> Self {
        let remaining = body.len();
        Self {
            message_type,
            channel_id,
            security_header,
            request_id,
            body,
            segment: 0,
            offset: 0,
            remaining,
            body_limit: None,
        }
    }

    /// Limits the body bytes per chunk (signed or encrypted chunks grow by padding and
    /// signature; see [`crate::security::ChannelSecurity`]).
    pub fn set_body_limit(&mut self, limit: usize) {
        self.body_limit = Some(limit.max(1));
    }

    /// The message type (OPN, MSG, CLO).
    pub fn message_type(&self) -> MessageType {
        self.message_type
    }

    /// Bytes from the message header to the end of the security header.
    pub fn security_header_end(&self) -> usize {
        HEADER_LENGTH + 4 + self.security_header.len()
    }

    fn per_chunk(&self, max_chunk_size: usize) -> usize {
        let plain = max_chunk_size.saturating_sub(self.overhead()).max(1);
        self.body_limit.map_or(plain, |limit| limit.min(plain))
    }

    /// Bytes of chunk overhead (message header, channel id, security and sequence headers).
    pub fn overhead(&self) -> usize {
        HEADER_LENGTH + 4 + self.security_header.len() + 8
    }

    /// Number of chunks needed with chunks of at most `max_chunk_size` bytes.
    pub fn chunk_count(&self, max_chunk_size: usize) -> usize {
        let per_chunk = self.per_chunk(max_chunk_size);
        self.body.len().div_ceil(per_chunk).max(1)
    }

    /// Length of the message body.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// True once the final chunk was written.
    pub fn is_done(&self) -> bool {
        self.remaining == 0 && self.segment > self.body.segments.len()
    }

    /// Writes the next chunk (at most `max_chunk_size` bytes) with `sequence_number` into
    /// `out`; returns false when the message was complete already.
    pub fn write_next_chunk<S: ChunkSink + ?Sized>(
        &mut self,
        max_chunk_size: usize,
        sequence_number: u32,
        out: &mut S,
    ) -> bool {
        if self.is_done() {
            return false;
        }
        let per_chunk = self.per_chunk(max_chunk_size);
        let take = self.remaining.min(per_chunk);
        let is_final = take == self.remaining;
        let size = self.overhead() + take;
        let header = MessageHeader {
            message_type: self.message_type,
            chunk_type: if is_final {
                ChunkType::Final
            } else {
                ChunkType::Intermediate
            },
            message_size: u32::try_from(size).unwrap_or(u32::MAX),
        };
        let sequence = SequenceHeader {
            sequence_number,
            request_id: self.request_id,
        };
        out.reserve(size);
        out.encode_with(&mut |buf| {
            header.encode(buf);
            self.channel_id.encode(buf);
            buf.extend_from_slice(&self.security_header);
            sequence.encode(buf);
        });
        let mut left = take;
        while left > 0 {
            let Some(segment) = self.body.segments.get(self.segment) else {
                break;
            };
            let segment_len = segment.bytes().len();
            let n = segment_len.saturating_sub(self.offset).min(left);
            let range = self.offset..self.offset + n;
            match segment {
                BodySegment::Owned(bytes) => {
                    out.put_slice(bytes.get(range).unwrap_or_default());
                }
                BodySegment::Shared(bytes) if range.end <= bytes.len() => {
                    out.put_shared(bytes.slice(range));
                }
                BodySegment::Shared(_) => {}
            }
            left -= n;
            self.offset += n;
            if self.offset >= segment_len {
                self.segment += 1;
                self.offset = 0;
            }
        }
        self.remaining -= take;
        if is_final {
            // Past the last segment: marks the message done even when the body was empty.
            self.segment = self.body.segments.len() + 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secure_channel::{SecureChannelChunk, SecurityHeader, SymmetricSecurityHeader};
    use crate::transport::FrameDecoder;

    #[test]
    fn chunks_split_across_segments() {
        let mut body = OutgoingBody::owned(vec![1, 2, 3]);
        body.push(BodySegment::Shared(Bytes::from(vec![4u8, 5, 6, 7, 8])));
        body.push(BodySegment::Owned(vec![9]));
        assert_eq!(body.len(), 9);
        let mut message = OutgoingMessage::new(MessageType::Message, 7, 3u32.to_bytes(), 42, body);
        // 24 bytes of overhead + 4 body bytes per chunk: 3 chunks.
        assert_eq!(message.chunk_count(28), 3);
        let mut stream = Vec::new();
        let mut sequence = 10;
        while message.write_next_chunk(28, sequence, &mut stream) {
            sequence += 1;
        }
        assert_eq!(sequence, 13);
        let mut decoder = FrameDecoder::new(28);
        decoder.push(&stream);
        let mut joined = Vec::new();
        let mut types = Vec::new();
        while let Some(frame) = decoder.next_frame().unwrap() {
            let chunk = SecureChannelChunk::from_frame(&frame).unwrap();
            assert_eq!(
                chunk.security_header,
                SecurityHeader::Symmetric(SymmetricSecurityHeader { token_id: 3 })
            );
            assert_eq!(chunk.sequence_header.request_id, 42);
            types.push(chunk.chunk_type);
            joined.extend_from_slice(&chunk.body);
        }
        assert_eq!(joined, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(
            types,
            [
                ChunkType::Intermediate,
                ChunkType::Intermediate,
                ChunkType::Final
            ]
        );
    }

    #[test]
    fn empty_body_is_one_final_chunk() {
        let mut message = OutgoingMessage::new(
            MessageType::Message,
            1,
            1u32.to_bytes(),
            1,
            OutgoingBody::default(),
        );
        let mut out = Vec::new();
        assert!(message.write_next_chunk(100, 1, &mut out));
        assert!(!message.write_next_chunk(100, 2, &mut out));
        assert_eq!(out.len(), 24);
        assert_eq!(&out[..4], b"MSGF");
    }
}
