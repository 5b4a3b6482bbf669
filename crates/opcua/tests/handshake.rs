//! End-to-end, sans-IO: a client and a server exchange Hello / Acknowledge through
//! `FrameDecoder`s fed in small pieces, then a chunked OpenSecureChannel message under
//! SecurityPolicy None is split, framed and reassembled.

use buildwire_opcua::StatusCode;
use buildwire_opcua::encoding::{BinaryEncodable, NodeId, Variant};
use buildwire_opcua::secure_channel::{
    AssemblerRole, AssemblyEvent, AsymmetricSecurityHeader, MessageAssembler, SecureChannelChunk,
    SecurityHeader, SequenceHeader,
};
use buildwire_opcua::transport::{
    Acknowledge, ChunkType, ConnectionLimits, ConnectionMessage, ErrorMessage, FrameDecoder, Hello,
    MessageType, accept_acknowledge, acknowledge_hello,
};

/// Delivers `bytes` to `decoder` three bytes at a time and collects the frames.
fn deliver(decoder: &mut FrameDecoder, bytes: &[u8]) -> Vec<buildwire_opcua::transport::Frame> {
    let mut frames = Vec::new();
    for piece in bytes.chunks(3) {
        decoder.push(piece);
        while let Some(frame) = decoder.next_frame().expect("well-formed stream") {
            frames.push(frame);
        }
    }
    frames
}

#[test]
fn hello_acknowledge_then_chunked_open_secure_channel() {
    let client_limits = ConnectionLimits {
        receive_buffer_size: 8192,
        send_buffer_size: 8192,
        ..ConnectionLimits::default()
    };
    let server_limits = ConnectionLimits::default();

    // Client -> server: Hello.
    let hello = client_limits.hello("opc.tcp://localhost:4840/buildwire");
    let mut server_decoder = FrameDecoder::new(server_limits.receive_buffer_size);
    let frames = deliver(&mut server_decoder, &hello.to_message_bytes());
    assert_eq!(frames.len(), 1);
    let received_hello = Hello::from_frame(&frames[0]).unwrap();
    assert_eq!(received_hello, hello);

    // Server -> client: Acknowledge.
    let (ack, server_side) = acknowledge_hello(&server_limits, &received_hello).unwrap();
    server_decoder.set_max_frame_size(server_side.receive_buffer_size);
    let mut client_decoder = FrameDecoder::new(client_limits.receive_buffer_size);
    let frames = deliver(&mut client_decoder, &ack.to_message_bytes());
    let received_ack = Acknowledge::from_frame(&frames[0]).unwrap();
    let client_side = accept_acknowledge(&hello, &received_ack).unwrap();
    assert_eq!(client_side.send_buffer_size, 8192);
    assert_eq!(server_side.receive_buffer_size, 8192);

    // Client -> server: an OPN message body split into chunks of at most 10 bytes.
    let mut body = Vec::new();
    NodeId::numeric(0, 446).encode(&mut body);
    Variant::from("a request body long enough to need several chunks").encode(&mut body);
    let pieces: Vec<&[u8]> = body.chunks(10).collect();
    let mut wire = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let chunk = SecureChannelChunk {
            message_type: MessageType::OpenSecureChannel,
            chunk_type: if index + 1 == pieces.len() {
                ChunkType::Final
            } else {
                ChunkType::Intermediate
            },
            secure_channel_id: 0,
            security_header: SecurityHeader::Asymmetric(AsymmetricSecurityHeader::none()),
            sequence_header: SequenceHeader {
                sequence_number: 1 + index as u32,
                request_id: 1,
            },
            body: piece.to_vec().into(),
        };
        wire.extend(chunk.to_bytes());
    }
    let mut assembler = MessageAssembler::new(
        AssemblerRole::Server,
        server_side.max_receive_message_size,
        server_side.max_receive_chunk_count,
    );
    let mut events = Vec::new();
    for frame in deliver(&mut server_decoder, &wire) {
        let chunk = SecureChannelChunk::from_frame(&frame).unwrap();
        if let Some(event) = assembler.push(chunk).unwrap() {
            events.push(event);
        }
    }
    assert_eq!(events.len(), 1);
    let AssemblyEvent::Message(message) = &events[0] else {
        panic!("expected a message, got {events:?}");
    };
    assert_eq!(message.body, body);
    assert_eq!(message.chunk_count as usize, pieces.len());
}

#[test]
fn server_rejects_bad_hello_with_error_message() {
    let mut hello = ConnectionLimits::default().hello("opc.tcp://localhost:4840");
    hello.endpoint_url = "x".repeat(5000).as_str().into();
    let error = acknowledge_hello(&ConnectionLimits::default(), &hello).unwrap_err();
    let bytes = error.to_error_message().to_message_bytes();
    let mut decoder = FrameDecoder::new(8192);
    let frames = deliver(&mut decoder, &bytes);
    let message = ErrorMessage::from_frame(&frames[0]).unwrap();
    assert_eq!(message.error, StatusCode::BAD_TCP_ENDPOINT_URL_INVALID);
    assert_eq!(
        message.error.to_string(),
        "BadTcpEndpointUrlInvalid (0x80830000)"
    );
}
