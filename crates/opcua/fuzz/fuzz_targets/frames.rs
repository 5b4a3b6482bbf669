//! Fuzzes the UA TCP `FrameDecoder` over arbitrary splits of arbitrary input: fed in pieces or
//! in one go, copied in with `push` or appended to its own `read_buffer`, it must yield the
//! same frames and the same error, and every frame that decodes as
//! a connection message or secure channel chunk must re-encode to the identical frame.

#![no_main]

use buildwire_opcua::secure_channel::SecureChannelChunk;
use buildwire_opcua::transport::{
    Acknowledge, ConnectionMessage, ErrorMessage, Frame, FrameDecoder, Hello, MessageType,
    ReverseHello, TransportError,
};
use libfuzzer_sys::fuzz_target;

const MAX_FRAME_SIZE: u32 = 16 * 1024;

/// Drains every available frame; stops at the first error.
fn drain(decoder: &mut FrameDecoder, frames: &mut Vec<Frame>) -> Option<TransportError> {
    loop {
        match decoder.next_frame() {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return None,
            Err(error) => return Some(error),
        }
    }
}

fn frame_bytes(frame: &Frame) -> Vec<u8> {
    let mut bytes = Vec::new();
    frame.header.encode(&mut bytes);
    bytes.extend_from_slice(&frame.body);
    bytes
}

fn check_message<M: ConnectionMessage + PartialEq + std::fmt::Debug>(frame: &Frame) {
    if let Ok(message) = M::from_frame(frame) {
        let bytes = message.to_message_bytes();
        assert_eq!(bytes, frame_bytes(frame));
    }
}

fn check_frame(frame: &Frame) {
    assert!(frame.body.len() + 8 <= MAX_FRAME_SIZE as usize);
    match frame.header.message_type {
        MessageType::Hello => check_message::<Hello>(frame),
        MessageType::Acknowledge => check_message::<Acknowledge>(frame),
        MessageType::Error => check_message::<ErrorMessage>(frame),
        MessageType::ReverseHello => check_message::<ReverseHello>(frame),
        _ => {
            if let Ok(chunk) = SecureChannelChunk::from_frame(frame) {
                assert_eq!(chunk.to_bytes(), frame_bytes(frame));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the piece size, the rest is the stream.
    let Some((&piece, stream)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece).max(1);

    let mut whole = FrameDecoder::new(MAX_FRAME_SIZE);
    whole.push(stream);
    let mut whole_frames = Vec::new();
    let whole_error = drain(&mut whole, &mut whole_frames);

    let mut split = FrameDecoder::new(MAX_FRAME_SIZE);
    let mut split_frames = Vec::new();
    let mut split_error = None;
    for part in stream.chunks(piece) {
        split.push(part);
        split_error = drain(&mut split, &mut split_frames);
        if split_error.is_some() {
            break;
        }
    }

    // As a socket driver does: append to the decoder's own buffer, never past its room.
    let mut direct = FrameDecoder::new(MAX_FRAME_SIZE);
    let mut direct_frames = Vec::new();
    let mut direct_error = None;
    let mut rest = stream;
    while !rest.is_empty() {
        let buffer = direct.read_buffer();
        let room = buffer.capacity() - buffer.len();
        let take = piece.min(rest.len()).min(room);
        assert!(take > 0, "read_buffer offered no room");
        buffer.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        direct_error = drain(&mut direct, &mut direct_frames);
        if direct_error.is_some() {
            break;
        }
    }

    assert_eq!(split_frames, whole_frames);
    assert_eq!(split_error, whole_error);
    assert_eq!(direct_frames, whole_frames);
    assert_eq!(direct_error, whole_error);
    for frame in &whole_frames {
        check_frame(frame);
    }
});
