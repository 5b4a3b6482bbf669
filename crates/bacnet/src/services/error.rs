//! Errors shared by the service codecs: the `Error` parameter pair a service answers with
//! ([`ServiceError`]) and the failure to decode a request ([`ServiceDecodeError`]), which
//! tells a server which Reject reason to send (Clause 18.8).

use crate::encoding::DecodeError;
use crate::enums::RejectReason;

/// `Error ::= SEQUENCE { error-class, error-code }` as carried by service results (the
/// `[5]` access error of ReadPropertyMultiple, the error type of WritePropertyMultiple...).
///
/// This is the Error-PDU pair of the APDU layer under a service-level name: one type, so
/// a result error can be forwarded as an Error PDU without conversion.
pub type ServiceError = crate::apdu::BacnetError;

/// Why a service request payload could not be turned into typed parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceDecodeError {
    /// The service choice names a service this crate does not decode (or no standard
    /// service at all). A server answers with Reject `unrecognized-service` for confirmed
    /// requests and ignores unconfirmed ones.
    #[error("unrecognized service choice {choice}")]
    UnrecognizedService {
        /// The service-choice octet from the APDU header.
        choice: u8,
    },
    /// The parameters do not follow the service's grammar.
    #[error(transparent)]
    Malformed(#[from] DecodeError),
}

impl ServiceDecodeError {
    /// The Reject reason a server sends for this failure; see [`reject_reason_for`].
    pub fn reject_reason(&self) -> RejectReason {
        match self {
            Self::UnrecognizedService { .. } => RejectReason::UnrecognizedService,
            Self::Malformed(error) => error.reject_reason(),
        }
    }

    /// The underlying decoding error, when the service was recognised.
    pub fn decode_error(&self) -> Option<&DecodeError> {
        match self {
            Self::UnrecognizedService { .. } => None,
            Self::Malformed(error) => Some(error),
        }
    }
}

/// The Reject reason (Clause 18.8) a server answers a request with when decoding its
/// parameters fails this way: truncated input is `missing-required-parameter`, a wrong or
/// malformed tag `invalid-tag`, left-over parameters `too-many-arguments`, a value outside
/// its range `parameter-out-of-range`, an unknown service `unrecognized-service`.
///
/// Malformed payloads reuse [`DecodeError::reject_reason`], so the mapping lives in one place.
pub fn reject_reason_for(error: &ServiceDecodeError) -> RejectReason {
    error.reject_reason()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::DecodeErrorKind;

    #[test]
    fn unrecognized_service_maps_to_its_reject_reason() {
        let error = ServiceDecodeError::UnrecognizedService { choice: 99 };
        assert_eq!(reject_reason_for(&error), RejectReason::UnrecognizedService);
        assert_eq!(error.decode_error(), None);
    }

    #[test]
    fn malformed_payload_reuses_the_encoding_mapping() {
        let inner = DecodeError::new(3, DecodeErrorKind::TrailingData { count: 2 });
        let error = ServiceDecodeError::from(inner.clone());
        assert_eq!(reject_reason_for(&error), RejectReason::TooManyArguments);
        assert_eq!(error.decode_error(), Some(&inner));
    }
}
