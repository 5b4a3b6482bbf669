//! The server side of the security layer: which policy × mode endpoints the server offers,
//! with which certificate and trust list ([`ServerSecurity`]), and the checks of a received
//! OpenSecureChannel ([`open_server_opn`]). Opening and securing chunks with a
//! [`ChannelSecurity`] is the channel layer's ([`crate::channel`]), shared with the client.
//!
//! Errors follow OPC 10000-6 §6.7 and 10000-4 §5.5.2: an OPN for a policy not offered gets
//! Bad_SecurityPolicyRejected, an unknown peer certificate Bad_CertificateUntrusted (and is
//! reported as a [`Refusal`] for the log and the `rejected/` folder; the peer gets only the
//! status), a certificate out of its validity period
//! Bad_CertificateTimeInvalid, a key size outside the policy's range
//! Bad_CertificatePolicyCheckFailed, a receiver thumbprint that is not ours and every
//! signature, padding or decryption failure Bad_SecurityChecksFailed.

use crate::channel::{Rejection, asymmetric_header, frame_bytes, header_policy, plain_frame};
use crate::encoding::DateTime;
use crate::security::{
    Certificate, ChannelSecurity, LocalIdentity, MessageSecurityMode, SecurityPolicy, TrustList,
};
use crate::transport::Frame;
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

/// A refused peer certificate, reported for the server's log (and, when untrusted, for the
/// PKI's `rejected/` folder). The peer itself only gets the status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The log line: what was refused, its thumbprint, why, and the command that trusts it.
    pub detail: String,
    /// The certificate (DER) to store in `rejected/`, when it was refused as untrusted.
    pub certificate: Option<Vec<u8>>,
}

/// The log line for a refused certificate of `role` ("client application", "user").
pub fn refused_certificate_detail(
    role: &str,
    certificate: &Certificate,
    status: StatusCode,
) -> String {
    let thumbprint = certificate.thumbprint_hex();
    let hint = if status == StatusCode::BAD_CERTIFICATE_UNTRUSTED {
        format!(
            "stored in rejected/: trust it with `buildwire opcua certs trust {thumbprint}` and restart the server"
        )
    } else {
        "check its validity period and key size, or create a new one with `buildwire opcua certs create`".to_owned()
    };
    format!(
        "{role} certificate {thumbprint} ({}) refused: {status}; {hint}",
        certificate.subject()
    )
}

/// Ticks (100 ns) from 1601-01-01 to 1970-01-01.
const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;

/// Unix seconds of a UA DateTime.
pub fn unix_seconds(time: DateTime) -> i64 {
    time.ticks().saturating_sub(UNIX_EPOCH_TICKS) / 10_000_000
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
                // The unauthenticated peer gets the standard status and a generic reason;
                // the thumbprint and what to do about it go to the server's log only.
                return Err(Rejection {
                    status,
                    reason: "the client certificate was refused".to_owned(),
                    rejected_certificate: (status == StatusCode::BAD_CERTIFICATE_UNTRUSTED)
                        .then(|| certificate.der().to_vec()),
                    detail: Some(refused_certificate_detail(
                        "client application",
                        &certificate,
                        status,
                    )),
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

#[cfg(all(test, feature = "crypto"))]
mod tests {
    use super::*;
    use crate::security::PrivateKey;

    #[test]
    fn the_log_line_of_a_refused_certificate_says_how_to_trust_it() {
        let key = PrivateKey::generate().unwrap();
        let certificate =
            Certificate::create_self_signed(&key, "urn:c", "client", &[], 1_800_000_000, 30)
                .unwrap();
        let thumbprint = certificate.thumbprint_hex();
        let untrusted =
            refused_certificate_detail("user", &certificate, StatusCode::BAD_CERTIFICATE_UNTRUSTED);
        assert!(untrusted.starts_with(&format!("user certificate {thumbprint}")));
        assert!(untrusted.contains(&format!("buildwire opcua certs trust {thumbprint}")));
        let expired = refused_certificate_detail(
            "client application",
            &certificate,
            StatusCode::BAD_CERTIFICATE_TIME_INVALID,
        );
        assert!(expired.contains("BadCertificateTimeInvalid"), "{expired}");
        assert!(expired.contains("certs create"), "{expired}");
    }
}
