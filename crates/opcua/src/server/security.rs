//! The server side of the security layer: which policy × mode endpoints the server offers,
//! with which certificate and trust list ([`ServerSecurity`]), and the helpers the
//! connections (server and client alike) use to open received chunks and secure sent ones
//! with a [`ChannelSecurity`].
//!
//! Errors follow OPC 10000-6 §6.7 and 10000-4 §5.5.2: an OPN for a policy not offered gets
//! Bad_SecurityPolicyRejected, an unknown peer certificate Bad_CertificateUntrusted (and is
//! reported for the `rejected/` folder), a certificate out of its validity period
//! Bad_CertificateTimeInvalid, a key size outside the policy's range
//! Bad_CertificatePolicyCheckFailed, a receiver thumbprint that is not ours and every
//! signature, padding or decryption failure Bad_SecurityChecksFailed.

use bytes::Bytes;

use crate::encoding::{BinaryEncodable, DateTime, Reader};
use crate::secure_channel::{AsymmetricSecurityHeader, SecureChannelError};
use crate::security::{
    Certificate, ChannelSecurity, ChunkSecurityError, LocalIdentity, MessageSecurityMode,
    SecurityPolicy, TrustList,
};
use crate::server::outgoing::OutgoingMessage;
use crate::transport::{ChunkSink, Frame, HEADER_LENGTH, MessageHeader, MessageType};
use crate::types::StatusCode;

/// What security the server offers.
#[derive(Clone, Debug)]
pub struct ServerSecurity {
    /// Our certificate and key; required for any secured endpoint.
    pub identity: Option<LocalIdentity>,
    /// The endpoints offered, one per policy × mode (None × None for an open endpoint).
    pub endpoints: Vec<(SecurityPolicy, MessageSecurityMode)>,
    /// Which client certificates are trusted.
    pub trust: TrustList,
    /// Where the driver stores refused client certificates (`rejected/`); the core never
    /// touches it.
    pub pki: Option<crate::security::Pki>,
}

impl Default for ServerSecurity {
    fn default() -> Self {
        Self {
            identity: None,
            endpoints: vec![(SecurityPolicy::None, MessageSecurityMode::None)],
            trust: TrustList::default(),
            pki: None,
        }
    }
}

impl ServerSecurity {
    /// True when the endpoint `policy` × `mode` is offered.
    pub fn offers(&self, policy: SecurityPolicy, mode: MessageSecurityMode) -> bool {
        self.endpoints.contains(&(policy, mode))
    }

    /// True when some endpoint uses `policy`.
    pub fn offers_policy(&self, policy: SecurityPolicy) -> bool {
        self.endpoints.iter().any(|(p, _)| *p == policy)
    }
}

/// Why a chunk was refused: the status for the ERR message, a reason, and the peer's
/// certificate when it was refused as untrusted (to be written to `rejected/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The status to send.
    pub status: StatusCode,
    /// Why.
    pub reason: String,
    /// The untrusted certificate, if that was the reason.
    pub rejected_certificate: Option<Vec<u8>>,
}

impl Rejection {
    fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
            rejected_certificate: None,
        }
    }
}

impl From<ChunkSecurityError> for Rejection {
    fn from(error: ChunkSecurityError) -> Self {
        Self::new(error.status_code(), error.to_string())
    }
}

/// Ticks (100 ns) from 1601-01-01 to 1970-01-01.
const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;

/// Unix seconds of a UA DateTime.
pub fn unix_seconds(time: DateTime) -> i64 {
    time.ticks().saturating_sub(UNIX_EPOCH_TICKS) / 10_000_000
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
    let parse = |error: crate::encoding::DecodeError| {
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

/// Server side: checks and opens a received OPN frame. `existing` is the channel's security
/// when this is a renewal. Gives the plain frame and, for a secured policy, the channel
/// security to use (its mode is set from the request by the caller).
pub fn open_server_opn(
    config: &ServerSecurity,
    existing: Option<&ChannelSecurity>,
    frame: &Frame,
    now_unix: i64,
) -> Result<(Frame, Option<ChannelSecurity>), Rejection> {
    let (header, header_end) = asymmetric_header(frame)?;
    let policy = header_policy(&header)?;
    // SecurityPolicy None is always accepted for the discovery services (OPC 10000-4 §5.4):
    // the connection limits such a channel to them when no None endpoint is offered.
    if policy != SecurityPolicy::None && !config.offers_policy(policy) {
        return Err(Rejection::new(
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            format!("this server offers no {policy} endpoint"),
        ));
    }
    if existing.is_some_and(|security| security.policy() != policy) {
        return Err(Rejection::new(
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            "a renewal must keep the channel's security policy",
        ));
    }
    if policy == SecurityPolicy::None {
        return Ok((frame.clone(), None));
    }
    let Some(identity) = config.identity.clone() else {
        return Err(Rejection::new(
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            "the server has no certificate",
        ));
    };
    let sender_der = header.sender_certificate.as_bytes().unwrap_or_default();
    let certificate = Certificate::from_der(sender_der)
        .map_err(|error| Rejection::new(StatusCode::BAD_CERTIFICATE_INVALID, error.to_string()))?;
    if header.receiver_certificate_thumbprint.as_bytes()
        != Some(identity.certificate.thumbprint().as_slice())
    {
        return Err(Rejection::new(
            StatusCode::BAD_SECURITY_CHECKS_FAILED,
            "the receiver thumbprint is not this server's certificate",
        ));
    }
    let security = match existing {
        Some(security) => {
            if security.remote() != &certificate {
                return Err(Rejection::new(
                    StatusCode::BAD_SECURITY_CHECKS_FAILED,
                    "a renewal must come from the same client certificate",
                ));
            }
            security.clone()
        }
        None => {
            if let Err(status) = config.trust.validate(&certificate, policy, now_unix, None) {
                let hint = if status == StatusCode::BAD_CERTIFICATE_UNTRUSTED {
                    format!(
                        "; the server stored it in rejected/: trust it there with `buildwire opcua certs trust {}`",
                        certificate.thumbprint_hex()
                    )
                } else {
                    "; check its validity period and key size, or create a new one with `buildwire opcua certs create`".to_owned()
                };
                return Err(Rejection {
                    status,
                    reason: format!(
                        "client certificate {} ({}) refused: {status}{hint}",
                        certificate.thumbprint_hex(),
                        certificate.subject(),
                    ),
                    rejected_certificate: (status == StatusCode::BAD_CERTIFICATE_UNTRUSTED)
                        .then(|| certificate.der().to_vec()),
                });
            }
            ChannelSecurity::new(
                policy,
                MessageSecurityMode::SignAndEncrypt,
                identity,
                certificate,
            )
            .map_err(|status| Rejection::new(status, "unusable security policy"))?
        }
    };
    let plain = security.unsecure_asymmetric(&frame_bytes(frame), header_end)?;
    Ok((plain_frame(plain)?, Some(security)))
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
