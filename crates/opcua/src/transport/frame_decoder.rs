//! `FrameDecoder`: sans-IO reassembly of UA TCP frames (chunks) from the byte stream. Feed it
//! whatever the socket returned; take out complete frames. The message type is checked as soon
//! as its three bytes arrive and the size as soon as the header is complete, so oversized or
//! foreign traffic is rejected before it is buffered.
//!
//! Two ways in: [`push`](FrameDecoder::push) copies a slice the caller read elsewhere, and
//! [`read_buffer`](FrameDecoder::read_buffer) lends the decoder's own buffer for the socket to
//! read into, sized for the rest of the frame in progress. Frames come out as [`Bytes`] split
//! off that buffer: a frame's body is never copied on the way out.

use bytes::{Buf, Bytes, BytesMut};

use super::error::TransportError;
use super::message_header::{HEADER_LENGTH, MessageHeader};

/// Room [`FrameDecoder::read_buffer`] offers at least, when the frame in progress needs less
/// or its size is not known yet.
pub const MIN_READ_ROOM: usize = 64 * 1024;

/// One complete UA TCP message chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The parsed header.
    pub header: MessageHeader,
    /// Everything after the 8-byte header (for OPN/MSG/CLO this starts with the channel id):
    /// a slice of the receive buffer, not a copy.
    pub body: Bytes,
}

/// Splits a byte stream into [`Frame`]s, enforcing the receive buffer size.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    /// Received bytes not yet returned in a frame.
    buffer: BytesMut,
    stream_offset: u64,
    max_frame_size: u32,
    failure: Option<TransportError>,
}

impl FrameDecoder {
    /// A decoder accepting frames of at most `max_frame_size` bytes (header included): the
    /// local ReceiveBufferSize.
    pub fn new(max_frame_size: u32) -> Self {
        Self {
            buffer: BytesMut::new(),
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
        self.buffer.len()
    }

    /// Appends received bytes (a copy). Call [`next_frame`](Self::next_frame) until it returns
    /// `Ok(None)` before pushing more, so the buffer stays bounded by one frame.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failure.is_none() {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// The receive buffer, with room for at least the rest of the frame in progress (when its
    /// header has arrived and its size is within the limit) or [`MIN_READ_ROOM`] bytes: read
    /// from the socket straight into it (e.g. tokio's `read_buf`), then call
    /// [`next_frame`](Self::next_frame) until it returns `Ok(None)`. Only append to it: the
    /// bytes already in it are the start of the next frame.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        let frame_rest = match self.pending_frame_size() {
            Some(size) if size <= self.max_frame_size as usize => {
                size.saturating_sub(self.buffer.len())
            }
            _ => 0,
        };
        if self.failure.is_none() {
            self.buffer.reserve(frame_rest.max(MIN_READ_ROOM));
        }
        &mut self.buffer
    }

    /// The size the buffered header announces, once its eight bytes are in.
    fn pending_frame_size(&self) -> Option<usize> {
        let size = self.buffer.get(4..HEADER_LENGTH)?;
        let size = u32::from_le_bytes(size.try_into().ok()?);
        Some(size as usize)
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
                self.buffer = BytesMut::new();
                Err(error)
            }
        }
    }

    fn try_next_frame(&mut self) -> Result<Option<Frame>, TransportError> {
        MessageHeader::check_prefix(&self.buffer)?;
        let Some(header_bytes) = self.buffer.get(..HEADER_LENGTH) else {
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
        // MessageHeader::decode refuses sizes below the header length.
        if self.buffer.len() < size || size < HEADER_LENGTH {
            return Ok(None);
        }
        let mut frame = self.buffer.split_to(size);
        frame.advance(HEADER_LENGTH);
        self.stream_offset += size as u64;
        Ok(Some(Frame {
            header,
            body: frame.freeze(),
        }))
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
            decoder.next_frame().unwrap().unwrap().body[..],
            [2, 0, 0, 0, 1, 2]
        );
        assert_eq!(
            decoder.next_frame().unwrap().unwrap().body[..],
            [1, 0, 0, 0, 3]
        );
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

    /// Feeds `stream` through `read_buffer` in pieces of the given sizes (cycled), draining
    /// frames after each piece, as a socket driver does.
    fn read_through_buffer(
        decoder: &mut FrameDecoder,
        stream: &[u8],
        pieces: &[usize],
    ) -> (Vec<Frame>, Option<TransportError>) {
        let mut frames = Vec::new();
        let mut rest = stream;
        let mut piece = pieces.iter().cycle();
        while !rest.is_empty() {
            let buffer = decoder.read_buffer();
            let room = buffer.capacity() - buffer.len();
            assert!(room >= MIN_READ_ROOM);
            let take = (*piece.next().unwrap()).min(rest.len()).min(room);
            buffer.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            let (more, error) = drain(decoder);
            frames.extend(more);
            if error.is_some() {
                return (frames, error);
            }
        }
        (frames, None)
    }

    #[test]
    fn read_buffer_at_every_split_offset() {
        let bodies: [&[u8]; 3] = [&[1, 2, 3], &[], &[9; 300]];
        let mut stream = Vec::new();
        for body in bodies {
            stream.extend(message_frame(body));
        }
        for first in 1..=stream.len() {
            let mut decoder = FrameDecoder::new(8192);
            let (frames, error) =
                read_through_buffer(&mut decoder, &stream, &[first, stream.len()]);
            assert_eq!(error, None, "split at {first}");
            assert_eq!(frames.len(), 3, "split at {first}");
            for (frame, body) in frames.iter().zip(bodies) {
                assert_eq!(&frame.body[4..], body, "split at {first}");
            }
            assert_eq!(decoder.buffered(), 0);
            assert_eq!(decoder.stream_offset(), stream.len() as u64);
        }
    }

    #[test]
    fn read_buffer_has_room_for_the_whole_frame_and_bodies_are_not_copied() {
        let body = vec![0xA5u8; 200_000];
        let bytes = message_frame(&body);
        let mut decoder = FrameDecoder::new(1 << 20);
        // Header only: the room then covers the rest of the announced frame.
        decoder.read_buffer().extend_from_slice(&bytes[..8]);
        assert_eq!(decoder.next_frame().unwrap(), None);
        let buffer = decoder.read_buffer();
        assert!(buffer.capacity() - buffer.len() >= bytes.len() - 8);
        let start = buffer.as_ptr();
        buffer.extend_from_slice(&bytes[8..]);
        let frame = decoder.next_frame().unwrap().unwrap();
        assert_eq!(frame.body.len(), bytes.len() - 8);
        // The body is the receive buffer itself, eight bytes in: no copy was made.
        assert_eq!(frame.body.as_ptr(), start.wrapping_add(8));
        assert_eq!(&frame.body[4..], body.as_slice());
    }

    #[test]
    fn read_buffer_does_not_reserve_for_an_oversized_frame() {
        let mut decoder = FrameDecoder::new(8192);
        decoder
            .read_buffer()
            .extend_from_slice(b"MSGF\x00\x00\x00\x40");
        // 1 GiB announced: the buffer offers only the usual room before the error is seen.
        let buffer = decoder.read_buffer();
        assert!(buffer.capacity() < 4 * MIN_READ_ROOM);
        let error = decoder.next_frame().unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_TCP_MESSAGE_TOO_LARGE);
        // After an error the buffer is emptied and what is appended is ignored.
        decoder
            .read_buffer()
            .extend_from_slice(&message_frame(&[1]));
        assert_eq!(decoder.next_frame().unwrap_err(), error);
        assert_eq!(decoder.stream_offset(), 0);
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
            prop_assert_eq!(&split_frames, &whole_frames);
            prop_assert_eq!(&split_error, &whole_error);
            let mut direct = FrameDecoder::new(64);
            let (direct_frames, direct_error) = read_through_buffer(&mut direct, &stream, &[piece]);
            prop_assert_eq!(direct_frames, whole_frames);
            prop_assert_eq!(direct_error, whole_error);
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
