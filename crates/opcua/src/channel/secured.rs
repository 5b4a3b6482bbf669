//! Opening received chunks and securing sent ones with a [`ChannelSecurity`], the same for
//! both sides: the asymmetric header of an OPN, the symmetric MSG / CLO chunks, the per-chunk
//! body limit of a secured message and the secured chunk writer.
//!
//! Errors follow OPC 10000-6 §6.7: an unknown policy URI is Bad_SecurityPolicyRejected, an
//! unknown token id Bad_SecureChannelTokenUnknown, and every signature, padding or decryption
//! failure Bad_SecurityChecksFailed. The policy checks of an OPN itself belong to each side
//! (`server::security::open_server_opn`, the client's `open_secured`).

use bytes::Bytes;

use super::outgoing::OutgoingMessage;
use crate::encoding::{BinaryEncodable, ByteString, DecodeError, Reader};
use crate::secure_channel::{AsymmetricSecurityHeader, SecureChannelError};
use crate::security::{ChannelSecurity, ChunkSecurityError, SecurityPolicy};
use crate::transport::{ChunkSink, Frame, HEADER_LENGTH, MessageHeader, MessageType};
use crate::types::StatusCode;

/// Why a chunk was refused: the status for the ERR message, a reason, and the peer's
/// certificate when it was refused as untrusted (to be written to `rejected/`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {reason}")]
pub struct Rejection {
    /// The status to send.
    pub status: StatusCode,
    /// Why.
    pub reason: String,
    /// The untrusted certificate, if that was the reason.
    pub rejected_certificate: Option<Vec<u8>>,
    /// What the local log gets beyond `reason` (the peer's certificate thumbprint and what
    /// to do about it); `reason` alone goes on the wire.
    pub detail: Option<String>,
}

impl Rejection {
    /// A rejection for `status` without a certificate to store.
    pub fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
            rejected_certificate: None,
            detail: None,
        }
    }
}

impl From<ChunkSecurityError> for Rejection {
    fn from(error: ChunkSecurityError) -> Self {
        Self::new(error.status_code(), error.to_string())
    }
}

/// The whole frame, message header included.
pub fn frame_bytes(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LENGTH + frame.body.len());
    frame.header.encode(&mut out);
    out.extend_from_slice(&frame.body);
    out
}

/// A frame from whole chunk bytes (as the security functions give them).
pub fn plain_frame(bytes: Vec<u8>) -> Result<Frame, Rejection> {
    let mut header = [0u8; HEADER_LENGTH];
    header.copy_from_slice(
        bytes
            .get(..HEADER_LENGTH)
            .ok_or_else(|| Rejection::new(StatusCode::BAD_SECURITY_CHECKS_FAILED, "short chunk"))?,
    );
    let header = MessageHeader::decode(header)
        .map_err(|error| Rejection::new(error.status_code(), error.to_string()))?;
    let mut body = Bytes::from(bytes);
    Ok(Frame {
        header,
        body: body.split_off(HEADER_LENGTH),
    })
}

/// The asymmetric security header of an OPN frame and where it ends (from the start of the
/// message header).
pub fn asymmetric_header(frame: &Frame) -> Result<(AsymmetricSecurityHeader, usize), Rejection> {
    let mut reader = Reader::new(&frame.body);
    let parse = |error: DecodeError| {
        let error = SecureChannelError::from(error);
        Rejection::new(error.status_code(), error.to_string())
    };
    u32::decode(&mut reader).map_err(parse)?;
    let header = AsymmetricSecurityHeader::decode(&mut reader).map_err(parse)?;
    Ok((header, HEADER_LENGTH + reader.position()))
}

/// The policy of an asymmetric header: Bad_SecurityPolicyRejected for an unknown URI.
pub fn header_policy(header: &AsymmetricSecurityHeader) -> Result<SecurityPolicy, Rejection> {
    let uri = header.security_policy_uri.as_str().unwrap_or_default();
    SecurityPolicy::from_uri(uri).ok_or_else(|| {
        Rejection::new(
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            format!("security policy {uri:?} is not supported"),
        )
    })
}

/// The asymmetric security header our OPN chunks carry: the policy, our certificate and the
/// thumbprint of the peer's, or the SecurityPolicy None header.
pub fn opn_security_header(security: Option<&ChannelSecurity>) -> AsymmetricSecurityHeader {
    match security {
        Some(security) => AsymmetricSecurityHeader {
            security_policy_uri: security.policy().uri().into(),
            sender_certificate: ByteString::from(security.local().certificate.der()),
            receiver_certificate_thumbprint: ByteString::from(
                security.remote().thumbprint().as_slice(),
            ),
        },
        None => AsymmetricSecurityHeader::none(),
    }
}

/// Opens a received MSG / CLO frame on a secured channel.
pub fn open_symmetric(security: &ChannelSecurity, frame: &Frame) -> Result<Frame, Rejection> {
    let token_id = frame
        .body
        .get(4..8)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if token_id.is_some_and(|id| !security.token_ids().contains(&id)) {
        return Err(Rejection::new(
            StatusCode::BAD_SECURE_CHANNEL_TOKEN_UNKNOWN,
            "unknown security token",
        ));
    }
    plain_frame(security.unsecure_symmetric(&frame_bytes(frame))?)
}

/// Sets the per-chunk body limit of `message` for `security` and chunks of `chunk_size`.
pub fn limit_body(security: &ChannelSecurity, message: &mut OutgoingMessage, chunk_size: usize) {
    let limit = if message.message_type() == MessageType::OpenSecureChannel {
        security.max_asymmetric_body(chunk_size, message.security_header_end())
    } else {
        security.max_symmetric_body(chunk_size)
    };
    message.set_body_limit(limit);
}

/// Writes the next chunk of `message`, secured, into `out`; false when the message was done.
pub fn write_secured_chunk<S: ChunkSink>(
    security: &ChannelSecurity,
    message: &mut OutgoingMessage,
    chunk_size: usize,
    sequence_number: u32,
    out: &mut S,
) -> Result<bool, ChunkSecurityError> {
    let mut plain = Vec::new();
    if !message.write_next_chunk(chunk_size, sequence_number, &mut plain) {
        return Ok(false);
    }
    let secured = if message.message_type() == MessageType::OpenSecureChannel {
        security.secure_asymmetric(&plain, message.security_header_end())?
    } else {
        security.secure_symmetric(&plain)?
    };
    out.put_slice(&secured);
    Ok(true)
}
