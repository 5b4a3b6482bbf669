//! Tests of `ServerConnection`: split-independence, the Hello / OPN handshake bytes and
//! protocol violations.

use std::time::Instant;

use proptest::prelude::*;

use super::ServerConnection;
use crate::encoding::ByteString;
use crate::secure_channel::{
    AsymmetricSecurityHeader, SecureChannelChunk, SecurityHeader, SequenceHeader,
};
use crate::server::config::DEFAULT_MAX_MESSAGE_SIZE;
use crate::server::{Server, ServerConfig};
use crate::services::{
    MessageSecurityMode, OpenSecureChannelRequest, RequestHeader, SecurityTokenRequestType,
    ServiceRequest, ServiceResponse,
};
use crate::transport::{
    Acknowledge, ChunkType, ConnectionLimits, ConnectionMessage, ErrorMessage, FrameDecoder,
    MessageType, TransmitBuffer,
};
use crate::types::StatusCode;

fn preamble() -> Vec<u8> {
    let limits = ConnectionLimits {
        receive_buffer_size: 8192,
        send_buffer_size: 8192,
        ..ConnectionLimits::default()
    };
    let mut bytes = limits.hello("opc.tcp://x/").to_message_bytes();
    let open = ServiceRequest::from(OpenSecureChannelRequest {
        request_header: RequestHeader::default(),
        client_protocol_version: 0,
        request_type: SecurityTokenRequestType::Issue,
        security_mode: MessageSecurityMode::None,
        client_nonce: ByteString::NULL,
        requested_lifetime: 1,
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

fn run(stream: &[u8], piece: usize, now: Instant) -> (Vec<u8>, bool) {
    let mut server = Server::new(ServerConfig::default(), now).unwrap();
    let mut connection = ServerConnection::new(&server);
    let mut output = Vec::new();
    for part in stream.chunks(piece.max(1)) {
        connection.handle_bytes(&mut server, now, part);
        connection.transmit_into(&mut output, usize::MAX);
    }
    (output, connection.is_closed())
}

/// As `run`, appending to the connection's own receive buffer, with `first` bytes in the
/// first read and the rest in one more; output gathered in a TransmitBuffer.
fn run_direct(stream: &[u8], first: usize, now: Instant) -> (Vec<u8>, bool) {
    let mut server = Server::new(ServerConfig::default(), now).unwrap();
    let mut connection = ServerConnection::new(&server);
    let mut gathered = TransmitBuffer::new();
    let (head, tail) = stream.split_at(first.min(stream.len()));
    for part in [head, tail] {
        connection.read_buffer().extend_from_slice(part);
        connection.handle_received(&mut server, now);
        connection.transmit_buffered(&mut gathered, usize::MAX);
    }
    (gathered.to_vec(), connection.is_closed())
}

/// The ErrorMessage the server sent last in `output`.
fn last_error_message(output: &[u8]) -> ErrorMessage {
    let mut decoder = FrameDecoder::new(8192);
    decoder.push(output);
    let mut last = None;
    while let Some(frame) = decoder.next_frame().unwrap() {
        last = Some(frame);
    }
    ErrorMessage::from_frame(&last.unwrap()).unwrap()
}

#[test]
fn read_buffer_at_every_split_offset_matches_handle_bytes() {
    let now = Instant::now();
    let stream = preamble();
    let expected = run(&stream, stream.len(), now);
    assert!(!expected.1);
    for first in 0..=stream.len() {
        assert_eq!(
            run_direct(&stream, first, now),
            expected,
            "split at {first}"
        );
    }
    // A violation found in the receive buffer closes with the same ERR as handle_bytes.
    let mut bad = stream.clone();
    bad.extend_from_slice(b"GETF\x10\x00\x00\x00");
    let expected = run(&bad, bad.len(), now);
    assert!(expected.1);
    assert_eq!(run_direct(&bad, stream.len() + 2, now), expected);
}

#[test]
fn hello_then_open_gives_ack_then_opn() {
    let now = Instant::now();
    let (output, closed) = run(&preamble(), 5, now);
    assert!(!closed);
    let mut decoder = FrameDecoder::new(8192);
    decoder.push(&output);
    let ack = Acknowledge::from_frame(&decoder.next_frame().unwrap().unwrap()).unwrap();
    assert_eq!(ack.receive_buffer_size, 8192);
    let opn = SecureChannelChunk::from_frame(&decoder.next_frame().unwrap().unwrap()).unwrap();
    assert_eq!(
        opn.sequence_header,
        SequenceHeader {
            sequence_number: 1,
            request_id: 1
        }
    );
    let ServiceResponse::OpenSecureChannel(response) =
        ServiceResponse::decode_message(&opn.body).unwrap()
    else {
        panic!("not an OPN response");
    };
    // The lifetime is raised to the 10 s minimum.
    assert_eq!(response.security_token.revised_lifetime, 10_000);
    assert_eq!(response.security_token.channel_id, opn.secure_channel_id);
    assert_eq!(decoder.next_frame().unwrap(), None);
}

/// A server without a certificate (every server of a build without the `crypto` feature,
/// which cannot hold a key) answers a secured OPN with Bad_SecurityPolicyRejected, even when
/// its configuration lists the policy.
#[test]
fn secured_open_without_a_certificate_is_rejected() {
    let now = Instant::now();
    let policy = crate::security::SecurityPolicy::Basic256Sha256;
    let stream = preamble();
    let hello_len = u32::from_le_bytes([stream[4], stream[5], stream[6], stream[7]]) as usize;
    let mut frames = FrameDecoder::new(8192);
    frames.push(&stream[hello_len..]);
    let mut opn = SecureChannelChunk::from_frame(&frames.next_frame().unwrap().unwrap()).unwrap();
    opn.security_header = SecurityHeader::Asymmetric(AsymmetricSecurityHeader {
        security_policy_uri: policy.uri().into(),
        sender_certificate: ByteString::from(vec![0x30, 0x03, 1, 2, 3]),
        receiver_certificate_thumbprint: ByteString::from(vec![0; 20]),
    });
    let mut config = ServerConfig::default();
    config
        .security
        .endpoints
        .push((policy, MessageSecurityMode::SignAndEncrypt));
    let mut server = Server::new(config, now).unwrap();
    let mut connection = ServerConnection::new(&server);
    let mut output = Vec::new();
    connection.handle_bytes(&mut server, now, &stream[..hello_len]);
    connection.handle_bytes(&mut server, now, &opn.to_bytes());
    connection.transmit_into(&mut output, usize::MAX);
    assert!(connection.is_closed());
    let error = last_error_message(&output);
    assert_eq!(error.error, StatusCode::BAD_SECURITY_POLICY_REJECTED);
}

#[test]
fn acknowledge_and_error_bytes() {
    // OPC 10000-6 §7.1.2.4: "ACK" "F", MessageSize, then ProtocolVersion,
    // ReceiveBufferSize, SendBufferSize, MaxMessageSize, MaxChunkCount (all UInt32).
    let now = Instant::now();
    let stream = preamble();
    let hello_len = u32::from_le_bytes([stream[4], stream[5], stream[6], stream[7]]) as usize;
    let (output, _) = run(&stream[..hello_len], hello_len, now);
    let mut expected = b"ACKF".to_vec();
    for value in [28u32, 0, 8192, 8192, DEFAULT_MAX_MESSAGE_SIZE, 4096] {
        expected.extend_from_slice(&value.to_le_bytes());
    }
    assert_eq!(output, expected);
    // §7.1.2.5: "ERR" "F", MessageSize, Error (UInt32), Reason (String).
    let (output, closed) = run(b"HELF\x07\x00\x00\x00", 8, now);
    assert!(closed);
    let reason = "message size 7 is smaller than the 8-byte header";
    let mut expected = b"ERRF".to_vec();
    expected.extend_from_slice(&(16 + reason.len() as u32).to_le_bytes());
    expected.extend_from_slice(&StatusCode::BAD_DECODING_ERROR.bits().to_le_bytes());
    expected.extend_from_slice(&(reason.len() as u32).to_le_bytes());
    expected.extend_from_slice(reason.as_bytes());
    assert_eq!(output, expected);
}

#[test]
fn second_hello_is_rejected() {
    let now = Instant::now();
    let mut stream = preamble();
    stream.extend_from_slice(
        &ConnectionLimits::default()
            .hello("opc.tcp://x/")
            .to_message_bytes(),
    );
    let (output, closed) = run(&stream, stream.len(), now);
    assert!(closed);
    let error = last_error_message(&output);
    assert_eq!(error.error, StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID);
}

proptest! {
    #[test]
    fn arbitrary_input_never_panics_and_is_split_independent(
        tail in proptest::collection::vec(any::<u8>(), 0..512),
        with_preamble: bool,
        piece in 1usize..64,
    ) {
        let now = Instant::now();
        let mut stream = if with_preamble { preamble() } else { Vec::new() };
        stream.extend_from_slice(&tail);
        let whole = run(&stream, stream.len(), now);
        let split = run(&stream, piece, now);
        prop_assert_eq!(&whole, &split);
        let mut decoder = FrameDecoder::new(u32::MAX);
        decoder.push(&whole.0);
        while let Some(frame) = decoder.next_frame().unwrap() {
            prop_assert!(frame.header.message_size <= 8192 || !with_preamble);
            match frame.header.message_type {
                MessageType::Acknowledge => { Acknowledge::from_frame(&frame).unwrap(); }
                MessageType::Error => { ErrorMessage::from_frame(&frame).unwrap(); }
                _ => { SecureChannelChunk::from_frame(&frame).unwrap(); }
            }
        }
    }
}

/// Issue 30: a connection that never sends its Hello (or trickles it) is closed with
/// Bad_Timeout once `opening_timeout` has passed; one that opened its channel is not.
#[test]
fn a_connection_that_does_not_open_in_time_is_closed() {
    let now = Instant::now();
    let config = ServerConfig {
        opening_timeout: std::time::Duration::from_secs(5),
        ..ServerConfig::default()
    };
    let mut server = Server::new(config, now).unwrap();

    let mut silent = ServerConnection::accepted(&server, now);
    let deadline = silent.poll_timeout().expect("an opening deadline");
    assert_eq!(deadline, now + std::time::Duration::from_secs(5));
    silent.handle_timeout_with(&mut server, deadline - std::time::Duration::from_millis(1));
    assert!(!silent.is_closed());
    // Half a Hello does not count.
    let hello = preamble();
    silent.handle_bytes(&mut server, now, &hello[..10]);
    silent.handle_timeout_with(&mut server, deadline);
    assert!(silent.is_closed());
    let mut output = Vec::new();
    silent.transmit_into(&mut output, usize::MAX);
    assert_eq!(last_error_message(&output).error, StatusCode::BAD_TIMEOUT);

    let mut opened = ServerConnection::accepted(&server, now);
    opened.handle_bytes(&mut server, now, &preamble());
    assert!(opened.is_open());
    opened.handle_timeout_with(&mut server, deadline + std::time::Duration::from_secs(1));
    assert!(!opened.is_closed());
    assert!(opened.poll_timeout().is_none_or(|next| next > deadline));
}
