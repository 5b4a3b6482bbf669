//! `FrameDecoder`: sans-IO reassembly of UA TCP frames (chunks) from the byte stream. Feed it
//! whatever the socket returned; take out complete frames. The message type is checked as soon
//! as its three bytes arrive and the size as soon as the header is complete, so oversized or
//! foreign traffic is rejected before it is buffered.

use super::error::TransportError;
use super::message_header::{HEADER_LENGTH, MessageHeader};

/// Buffered bytes already handed out are dropped once at least this many accumulate.
const COMPACT_THRESHOLD: usize = 64 * 1024;

/// One complete UA TCP message chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The parsed header.
    pub header: MessageHeader,
    /// Everything after the 8-byte header (for OPN/MSG/CLO this starts with the channel id).
    pub body: Vec<u8>,
}

/// Splits a byte stream into [`Frame`]s, enforcing the receive buffer size.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    buffer: Vec<u8>,
    start: usize,
    stream_offset: u64,
    max_frame_size: u32,
    failure: Option<TransportError>,
}

impl FrameDecoder {
    /// A decoder accepting frames of at most `max_frame_size` bytes (header included): the
    /// local ReceiveBufferSize.
    pub fn new(max_frame_size: u32) -> Self {
        Self {
            buffer: Vec::new(),
            start: 0,
            stream_offset: 0,
            max_frame_size,
            failure: None,
        }
    }

    /// Changes the frame size limit, e.g. to the negotiated ReceiveBufferSize after the ACK.
    pub fn set_max_frame_size(&mut self, max_frame_size: u32) {
        self.max_frame_size = max_frame_size;
    }

    /// The frame size limit in force.
    pub fn max_frame_size(&self) -> u32 {
        self.max_frame_size
    }

    /// Offset in the stream of the first byte not yet returned in a frame; after an error,
    /// the offset of the offending frame's header.
    pub fn stream_offset(&self) -> u64 {
        self.stream_offset
    }

    /// Number of bytes received but not yet returned.
    pub fn buffered(&self) -> usize {
        self.buffer.len().saturating_sub(self.start)
    }

    /// Appends received bytes. Call [`next_frame`](Self::next_frame) until it returns
    /// `Ok(None)` before pushing more, so the buffer stays bounded by one frame.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failure.is_none() {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// The next complete frame, `Ok(None)` when more bytes are needed. Errors are final: the
    /// connection must be closed (after sending an Error message with the status code).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, TransportError> {
        if let Some(error) = &self.failure {
            return Err(error.clone());
        }
        match self.try_next_frame() {
            Ok(frame) => Ok(frame),
            Err(error) => {
                self.failure = Some(error.clone());
                self.buffer = Vec::new();
                self.start = 0;
                Err(error)
            }
        }
    }

    fn try_next_frame(&mut self) -> Result<Option<Frame>, TransportError> {
        let pending = self.buffer.get(self.start..).unwrap_or_default();
        MessageHeader::check_prefix(pending)?;
        let Some(header_bytes) = pending.get(..HEADER_LENGTH) else {
            return Ok(None);
        };
        let mut raw = [0u8; HEADER_LENGTH];
        raw.copy_from_slice(header_bytes);
        let header = MessageHeader::decode(raw)?;
        if header.message_size > self.max_frame_size {
            return Err(TransportError::MessageTooLarge {
                size: header.message_size,
                limit: self.max_frame_size,
            });
        }
        let size = header.message_size as usize;
        let Some(body) = pending.get(HEADER_LENGTH..size) else {
            return Ok(None);
        };
        let frame = Frame {
            header,
            body: body.to_vec(),
        };
        self.start += size;
        self.stream_offset += size as u64;
        self.compact();
        Ok(Some(frame))
    }

    fn compact(&mut self) {
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        } else if self.start >= COMPACT_THRESHOLD {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{
        Acknowledge, ChunkType, ConnectionMessage, MessageType, encode_message,
    };
    use crate::types::StatusCode;
    use proptest::prelude::*;

    fn message_frame(body: &[u8]) -> Vec<u8> {
        encode_message(MessageType::Message, ChunkType::Final, &body.to_vec())
    }

    #[test]
    fn byte_by_byte() {
        let bytes = Acknowledge::default().to_message_bytes();
        let mut decoder = FrameDecoder::new(8192);
        for (index, byte) in bytes.iter().enumerate() {
            assert_eq!(decoder.next_frame().unwrap(), None);
            decoder.push(&[*byte]);
            assert_eq!(decoder.buffered(), index + 1);
        }
        let frame = decoder.next_frame().unwrap().unwrap();
        assert_eq!(frame.header.message_type, MessageType::Acknowledge);
        assert_eq!(frame.body.len(), 20);
        assert_eq!(decoder.buffered(), 0);
        assert_eq!(decoder.stream_offset(), 28);
    }

    #[test]
    fn several_frames_in_one_push() {
        let mut stream = message_frame(&[1, 2]);
        stream.extend(message_frame(&[3]));
        stream.extend_from_slice(b"MSG");
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&stream);
        // The body of a Vec<u8> frame is its Int32 length then the bytes.
        assert_eq!(
            decoder.next_frame().unwrap().unwrap().body,
            [2, 0, 0, 0, 1, 2]
        );
        assert_eq!(decoder.next_frame().unwrap().unwrap().body, [1, 0, 0, 0, 3]);
        assert_eq!(decoder.next_frame().unwrap(), None);
        assert_eq!(decoder.buffered(), 3);
    }

    #[test]
    fn rejects_unknown_type_early() {
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(b"GET");
        let error = decoder.next_frame().unwrap_err();
        assert_eq!(error, TransportError::MessageTypeInvalid(*b"GET"));
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID
        );
        // Errors are final.
        decoder.push(&Acknowledge::default().to_message_bytes());
        assert_eq!(decoder.next_frame().unwrap_err(), error);
    }

    #[test]
    fn rejects_oversized_frame_from_header_alone() {
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&message_frame(&[]));
        decoder.next_frame().unwrap().unwrap();
        decoder.push(b"MSGF\x01\x20\x00\x00");
        let error = decoder.next_frame().unwrap_err();
        assert_eq!(
            error,
            TransportError::MessageTooLarge {
                size: 8193,
                limit: 8192
            }
        );
        assert_eq!(error.status_code(), StatusCode::BAD_TCP_MESSAGE_TOO_LARGE);
        assert_eq!(decoder.stream_offset(), 12);
    }

    #[test]
    fn exact_limit_is_accepted() {
        let mut decoder = FrameDecoder::new(8192);
        let body = vec![0u8; 8192 - 8 - 4];
        let bytes = message_frame(&body);
        assert_eq!(bytes.len(), 8192);
        decoder.push(&bytes);
        assert!(decoder.next_frame().unwrap().is_some());
    }

    /// Every frame until `Ok(None)` or the first error.
    fn drain(decoder: &mut FrameDecoder) -> (Vec<Frame>, Option<TransportError>) {
        let mut frames = Vec::new();
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => return (frames, None),
                Err(error) => return (frames, Some(error)),
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_input_split_or_whole_agrees(
            stream in proptest::collection::vec(any::<u8>(), 0..200),
            piece in 1usize..9,
        ) {
            let mut whole = FrameDecoder::new(64);
            whole.push(&stream);
            let (whole_frames, whole_error) = drain(&mut whole);
            let mut split = FrameDecoder::new(64);
            let mut split_frames = Vec::new();
            let mut split_error = None;
            for part in stream.chunks(piece) {
                split.push(part);
                let (frames, error) = drain(&mut split);
                split_frames.extend(frames);
                if error.is_some() {
                    split_error = error;
                    break;
                }
            }
            prop_assert_eq!(split_frames, whole_frames);
            prop_assert_eq!(split_error, whole_error);
        }

        #[test]
        fn any_split_yields_the_same_frames(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..5),
            cuts in proptest::collection::vec(1usize..17, 1..40),
        ) {
            let mut stream = Vec::new();
            for body in &bodies {
                stream.extend(message_frame(body));
            }
            let mut decoder = FrameDecoder::new(8192);
            let mut frames = Vec::new();
            let mut rest = stream.as_slice();
            let mut cut = cuts.iter().cycle();
            while !rest.is_empty() {
                let take = (*cut.next().unwrap()).min(rest.len());
                decoder.push(&rest[..take]);
                rest = &rest[take..];
                while let Some(frame) = decoder.next_frame().unwrap() {
                    frames.push(frame);
                }
            }
            prop_assert_eq!(frames.len(), bodies.len());
            for (frame, body) in frames.iter().zip(&bodies) {
                prop_assert_eq!(&frame.body[4..], body.as_slice());
            }
        }
    }
}
