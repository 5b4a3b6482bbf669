//! Hello / Acknowledge negotiation (OPC 10000-6 §7.1.2.3, §7.1.2.4): the server revises the
//! client's proposal against its own limits, and the client checks the server's answer.
//!
//! Rules applied: the EndpointUrl must be present and at most 4096 bytes
//! (Bad_TcpEndpointUrlInvalid); the version used is the lower of both sides, and a client
//! below our oldest supported version is refused (Bad_ProtocolVersionUnsupported); buffer
//! sizes below 8192 bytes are refused (Bad_ConnectionRejected; the 1024-byte floor of v1.05
//! applies only to ECC security policies, which are not supported); each buffer size is the
//! smaller of what one side sends and the other receives; for MaxMessageSize and
//! MaxChunkCount, 0 means "no limit".

use super::acknowledge::Acknowledge;
use super::error_message::ErrorMessage;
use super::hello::{Hello, MAX_URL_LENGTH};
use crate::types::StatusCode;

/// The UACP protocol version of this standard.
pub const PROTOCOL_VERSION: u32 = 0;
/// Smallest send / receive buffer size accepted (OPC 10000-6 §7.1.2.3).
pub const MIN_BUFFER_SIZE: u32 = 8192;

/// Our side's connection limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Newest UACP version we speak.
    pub protocol_version: u32,
    /// Oldest UACP version we accept from a peer.
    pub min_protocol_version: u32,
    /// Largest chunk we can receive (raised to [`MIN_BUFFER_SIZE`] if lower).
    pub receive_buffer_size: u32,
    /// Largest chunk we will send (raised to [`MIN_BUFFER_SIZE`] if lower).
    pub send_buffer_size: u32,
    /// Largest message we accept; 0 = no limit.
    pub max_message_size: u32,
    /// Most chunks per message we accept; 0 = no limit.
    pub max_chunk_count: u32,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            protocol_version: PROTOCOL_VERSION,
            min_protocol_version: PROTOCOL_VERSION,
            receive_buffer_size: 65_536,
            send_buffer_size: 65_536,
            max_message_size: 16 * 1024 * 1024,
            max_chunk_count: 256,
        }
    }
}

impl ConnectionLimits {
    /// The Hello a client with these limits sends to `endpoint_url`.
    pub fn hello(&self, endpoint_url: &str) -> Hello {
        Hello {
            protocol_version: self.protocol_version,
            receive_buffer_size: self.receive_buffer_size.max(MIN_BUFFER_SIZE),
            send_buffer_size: self.send_buffer_size.max(MIN_BUFFER_SIZE),
            max_message_size: self.max_message_size,
            max_chunk_count: self.max_chunk_count,
            endpoint_url: endpoint_url.into(),
        }
    }
}

/// The limits both sides agreed on, seen from our side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NegotiatedLimits {
    /// UACP version in use.
    pub protocol_version: u32,
    /// Largest chunk we receive: the [`FrameDecoder`](super::FrameDecoder) limit.
    pub receive_buffer_size: u32,
    /// Largest chunk we may send.
    pub send_buffer_size: u32,
    /// Largest message we accept; 0 = no limit.
    pub max_receive_message_size: u32,
    /// Most chunks per message we accept; 0 = no limit.
    pub max_receive_chunk_count: u32,
    /// Largest message the peer accepts; 0 = no limit.
    pub max_send_message_size: u32,
    /// Most chunks per message the peer accepts; 0 = no limit.
    pub max_send_chunk_count: u32,
}

/// A refused Hello or Acknowledge.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {reason}")]
pub struct NegotiationError {
    /// The StatusCode to report.
    pub status: StatusCode,
    /// What was wrong.
    pub reason: &'static str,
}

impl NegotiationError {
    fn new(status: StatusCode, reason: &'static str) -> Self {
        Self { status, reason }
    }

    /// The Error message a server sends before closing the connection.
    pub fn to_error_message(&self) -> ErrorMessage {
        ErrorMessage::new(self.status, self.reason)
    }
}

fn check_buffer_sizes(receive: u32, send: u32) -> Result<(), NegotiationError> {
    if receive < MIN_BUFFER_SIZE || send < MIN_BUFFER_SIZE {
        return Err(NegotiationError::new(
            StatusCode::BAD_CONNECTION_REJECTED,
            "buffer sizes below 8192 bytes are not supported",
        ));
    }
    Ok(())
}

/// Server side: checks a client's Hello and computes the Acknowledge to send back.
pub fn acknowledge_hello(
    ours: &ConnectionLimits,
    hello: &Hello,
) -> Result<(Acknowledge, NegotiatedLimits), NegotiationError> {
    match hello.endpoint_url.as_str() {
        Some(url) if !url.is_empty() && url.len() <= MAX_URL_LENGTH => {}
        _ => {
            return Err(NegotiationError::new(
                StatusCode::BAD_TCP_ENDPOINT_URL_INVALID,
                "the EndpointUrl is missing or longer than 4096 bytes",
            ));
        }
    }
    if hello.protocol_version < ours.min_protocol_version {
        return Err(NegotiationError::new(
            StatusCode::BAD_PROTOCOL_VERSION_UNSUPPORTED,
            "the requested protocol version is older than any supported",
        ));
    }
    check_buffer_sizes(hello.receive_buffer_size, hello.send_buffer_size)?;
    let receive_buffer_size = ours
        .receive_buffer_size
        .max(MIN_BUFFER_SIZE)
        .min(hello.send_buffer_size);
    let send_buffer_size = ours
        .send_buffer_size
        .max(MIN_BUFFER_SIZE)
        .min(hello.receive_buffer_size);
    let protocol_version = ours.protocol_version.min(hello.protocol_version);
    let acknowledge = Acknowledge {
        protocol_version,
        receive_buffer_size,
        send_buffer_size,
        max_message_size: ours.max_message_size,
        max_chunk_count: ours.max_chunk_count,
    };
    let limits = NegotiatedLimits {
        protocol_version,
        receive_buffer_size,
        send_buffer_size,
        max_receive_message_size: ours.max_message_size,
        max_receive_chunk_count: ours.max_chunk_count,
        max_send_message_size: hello.max_message_size,
        max_send_chunk_count: hello.max_chunk_count,
    };
    Ok((acknowledge, limits))
}

/// Client side: checks the server's Acknowledge to the `hello` we sent. Sizes larger than we
/// proposed are clamped to our proposal; a protocol version newer than ours is accepted and we
/// keep speaking ours (as OPC 10000-6 v1.04 asked of clients).
pub fn accept_acknowledge(
    hello: &Hello,
    acknowledge: &Acknowledge,
) -> Result<NegotiatedLimits, NegotiationError> {
    check_buffer_sizes(
        acknowledge.receive_buffer_size,
        acknowledge.send_buffer_size,
    )?;
    Ok(NegotiatedLimits {
        protocol_version: hello.protocol_version.min(acknowledge.protocol_version),
        receive_buffer_size: hello.receive_buffer_size.min(acknowledge.send_buffer_size),
        send_buffer_size: hello.send_buffer_size.min(acknowledge.receive_buffer_size),
        max_receive_message_size: hello.max_message_size,
        max_receive_chunk_count: hello.max_chunk_count,
        max_send_message_size: acknowledge.max_message_size,
        max_send_chunk_count: acknowledge.max_chunk_count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::UaString;
    use proptest::prelude::*;

    fn server() -> ConnectionLimits {
        ConnectionLimits {
            receive_buffer_size: 65_536,
            send_buffer_size: 32_768,
            max_message_size: 1_000_000,
            max_chunk_count: 10,
            ..ConnectionLimits::default()
        }
    }

    #[test]
    fn smaller_of_each_side() {
        let client = ConnectionLimits {
            receive_buffer_size: 16_384,
            send_buffer_size: 131_072,
            max_message_size: 0,
            max_chunk_count: 0,
            ..ConnectionLimits::default()
        };
        let hello = client.hello("opc.tcp://server:4840");
        let (ack, server_side) = acknowledge_hello(&server(), &hello).unwrap();
        assert_eq!(
            ack,
            Acknowledge {
                protocol_version: 0,
                receive_buffer_size: 65_536,
                send_buffer_size: 16_384,
                max_message_size: 1_000_000,
                max_chunk_count: 10,
            }
        );
        assert_eq!(
            server_side.max_send_message_size, 0,
            "0 = client has no limit"
        );
        let client_side = accept_acknowledge(&hello, &ack).unwrap();
        assert_eq!(
            client_side.receive_buffer_size,
            server_side.send_buffer_size
        );
        assert_eq!(
            client_side.send_buffer_size,
            server_side.receive_buffer_size
        );
        assert_eq!(client_side.max_send_message_size, 1_000_000);
        assert_eq!(client_side.max_send_chunk_count, 10);
    }

    #[test]
    fn endpoint_url_rules() {
        let mut hello = ConnectionLimits::default().hello("");
        let error = acknowledge_hello(&server(), &hello).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_TCP_ENDPOINT_URL_INVALID);
        hello.endpoint_url = UaString::NULL;
        assert_eq!(
            acknowledge_hello(&server(), &hello).unwrap_err().status,
            StatusCode::BAD_TCP_ENDPOINT_URL_INVALID
        );
        hello.endpoint_url = UaString::from("x".repeat(4097));
        assert_eq!(
            acknowledge_hello(&server(), &hello).unwrap_err().status,
            StatusCode::BAD_TCP_ENDPOINT_URL_INVALID
        );
        hello.endpoint_url = UaString::from("x".repeat(4096));
        assert!(acknowledge_hello(&server(), &hello).is_ok());
    }

    #[test]
    fn protocol_version_rules() {
        let ours = ConnectionLimits {
            protocol_version: 2,
            min_protocol_version: 1,
            ..server()
        };
        let mut hello = ConnectionLimits::default().hello("opc.tcp://a");
        hello.protocol_version = 0;
        let error = acknowledge_hello(&ours, &hello).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_PROTOCOL_VERSION_UNSUPPORTED);
        assert_eq!(
            error.to_error_message().error,
            StatusCode::BAD_PROTOCOL_VERSION_UNSUPPORTED
        );
        hello.protocol_version = 7;
        assert_eq!(
            acknowledge_hello(&ours, &hello).unwrap().0.protocol_version,
            2
        );
        hello.protocol_version = 1;
        assert_eq!(
            acknowledge_hello(&ours, &hello).unwrap().0.protocol_version,
            1
        );
    }

    #[test]
    fn small_buffers_rejected() {
        let mut hello = ConnectionLimits::default().hello("opc.tcp://a");
        hello.send_buffer_size = 8191;
        assert_eq!(
            acknowledge_hello(&server(), &hello).unwrap_err().status,
            StatusCode::BAD_CONNECTION_REJECTED
        );
        let ack = Acknowledge {
            receive_buffer_size: 1024,
            send_buffer_size: 8192,
            ..Acknowledge::default()
        };
        assert!(
            accept_acknowledge(&ConnectionLimits::default().hello("opc.tcp://a"), &ack).is_err()
        );
    }

    proptest! {
        #[test]
        fn acknowledge_never_exceeds_either_side(
            ours_rx in 0u32..200_000, ours_tx in 0u32..200_000,
            hello_rx in 8192u32..200_000, hello_tx in 8192u32..200_000,
        ) {
            let ours = ConnectionLimits {
                receive_buffer_size: ours_rx,
                send_buffer_size: ours_tx,
                ..ConnectionLimits::default()
            };
            let hello = Hello {
                receive_buffer_size: hello_rx,
                send_buffer_size: hello_tx,
                endpoint_url: UaString::from("opc.tcp://a"),
                ..Hello::default()
            };
            let (ack, _) = acknowledge_hello(&ours, &hello).unwrap();
            prop_assert!(ack.receive_buffer_size <= hello_tx);
            prop_assert!(ack.send_buffer_size <= hello_rx);
            prop_assert!(ack.receive_buffer_size >= MIN_BUFFER_SIZE);
            prop_assert!(ack.send_buffer_size >= MIN_BUFFER_SIZE);
            prop_assert!(ack.receive_buffer_size <= ours_rx.max(MIN_BUFFER_SIZE));
        }
    }
}
