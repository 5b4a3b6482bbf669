//! Fuzzes the sans-IO `ServerConnection`: arbitrary bytes, split into arbitrary pieces, after
//! an optional valid Hello and OpenSecureChannel so the fuzzer reaches the service layer
//! quickly. The server must never panic, must give the same output whatever the split, and
//! everything it writes must be well-formed frames: connection messages that decode, chunks
//! that fit the client's receive buffer and re-encode identically, and reassembled responses
//! that decode and survive an encode/decode round trip.

#![no_main]

use std::time::Instant;

use buildwire_opcua::encoding::{ByteString, DecodingLimits};
use buildwire_opcua::secure_channel::{
    AssemblerRole, AssemblyEvent, AsymmetricSecurityHeader, MessageAssembler, SecureChannelChunk,
    SecurityHeader, SequenceHeader,
};
use buildwire_opcua::server::{Server, ServerConfig, ServerConnection, bench_methods};
use buildwire_opcua::services::{
    MessageSecurityMode, OpenSecureChannelRequest, RequestHeader, SecurityTokenRequestType,
    ServiceRequest, ServiceResponse,
};
use buildwire_opcua::transport::{
    Acknowledge, ChunkType, ConnectionLimits, ConnectionMessage, ErrorMessage, FrameDecoder,
    MessageType,
};
use libfuzzer_sys::fuzz_target;

/// The client's receive buffer: every chunk the server sends must fit.
const CLIENT_BUFFER: u32 = 8192;

fn preamble() -> Vec<u8> {
    let limits = ConnectionLimits {
        receive_buffer_size: CLIENT_BUFFER,
        send_buffer_size: CLIENT_BUFFER,
        max_message_size: 1 << 20,
        max_chunk_count: 0,
        ..ConnectionLimits::default()
    };
    let mut bytes = limits.hello("opc.tcp://localhost:4840/").to_message_bytes();
    let open = ServiceRequest::from(OpenSecureChannelRequest {
        request_header: RequestHeader::default(),
        client_protocol_version: 0,
        request_type: SecurityTokenRequestType::Issue,
        security_mode: MessageSecurityMode::None,
        client_nonce: ByteString::NULL,
        requested_lifetime: 60_000,
    });
    let chunk = SecureChannelChunk {
        message_type: MessageType::OpenSecureChannel,
        chunk_type: ChunkType::Final,
        secure_channel_id: 0,
        security_header: SecurityHeader::Asymmetric(AsymmetricSecurityHeader::none()),
        sequence_header: SequenceHeader {
            sequence_number: 1,
            request_id: 1,
        },
        body: open.encode_message().into(),
    };
    bytes.extend_from_slice(&chunk.to_bytes());
    bytes
}

/// Feeds `stream` in pieces of `piece` bytes and returns everything the server wrote.
fn run(stream: &[u8], piece: usize, now: Instant) -> Vec<u8> {
    let Ok(mut server) = Server::new(ServerConfig::default(), now) else {
        return Vec::new();
    };
    // The benchmark methods too, so the fuzzer reaches Call with a shared payload.
    if bench_methods::install(&mut server).is_err() {
        return Vec::new();
    }
    let mut connection = ServerConnection::new(&server);
    let mut output = Vec::new();
    for part in stream.chunks(piece) {
        connection.handle_bytes(&mut server, now, part);
        while let Some(bytes) = connection.poll_transmit() {
            output.extend_from_slice(&bytes);
        }
    }
    output
}

fn check_output(output: &[u8]) {
    let mut decoder = FrameDecoder::new(CLIENT_BUFFER.max(1 << 16));
    decoder.push(output);
    let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
    let limits = DecodingLimits::default();
    while let Some(frame) = decoder.next_frame().expect("server output is framed") {
        match frame.header.message_type {
            MessageType::Acknowledge => {
                Acknowledge::from_frame(&frame).expect("ACK decodes");
            }
            MessageType::Error => {
                ErrorMessage::from_frame(&frame).expect("ERR decodes");
            }
            _ => {
                assert!(frame.header.message_size <= CLIENT_BUFFER);
                let chunk = SecureChannelChunk::from_frame(&frame).expect("chunk decodes");
                let mut again = Vec::new();
                frame.header.encode(&mut again);
                again.extend_from_slice(&frame.body);
                assert_eq!(chunk.to_bytes(), again);
                if let Some(AssemblyEvent::Message(message)) =
                    assembler.push(chunk).expect("chunks assemble")
                {
                    let response =
                        ServiceResponse::decode_message_with_limits(&message.body, limits)
                            .expect("response decodes");
                    let bytes = response.encode_message();
                    assert_eq!(bytes, message.body);
                    assert_eq!(ServiceResponse::decode_message(&bytes).ok(), Some(response));
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // First byte: bit 7 prepends a valid Hello + OPN; the low bits pick the piece size.
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let mut stream = if control & 0x80 != 0 {
        preamble()
    } else {
        Vec::new()
    };
    stream.extend_from_slice(rest);
    let piece = usize::from(control & 0x7F).max(1);
    let now = Instant::now();
    let whole = run(&stream, stream.len().max(1), now);
    let split = run(&stream, piece, now);
    assert_eq!(whole, split);
    check_output(&whole);
});
