//! Security headers (OPC 10000-6 §6.7.2.3, §6.7.2.4): asymmetric for OpenSecureChannel (policy
//! URI, sender certificate, receiver certificate thumbprint), symmetric for the other
//! messages (the security token id).

use crate::encoding::{
    BinaryEncodable, ByteString, DecodeError, DecodeErrorKind, Reader, UaString,
};

/// URI of SecurityPolicy None.
pub const SECURITY_POLICY_NONE_URI: &str = "http://opcfoundation.org/UA/SecurityPolicy#None";
/// Longest SecurityPolicyUri accepted, in bytes (OPC 10000-6 §6.7.2.3).
pub const MAX_SECURITY_POLICY_URI_LENGTH: usize = 255;

/// The security header of an OPN chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsymmetricSecurityHeader {
    /// The security policy of the channel.
    pub security_policy_uri: UaString,
    /// DER certificate (chain) of the sender; null for SecurityPolicy None.
    pub sender_certificate: ByteString,
    /// SHA-1 thumbprint of the receiver's certificate; null for SecurityPolicy None.
    pub receiver_certificate_thumbprint: ByteString,
}

impl AsymmetricSecurityHeader {
    /// The header for SecurityPolicy None: the policy URI and two null byte strings.
    pub fn none() -> Self {
        Self {
            security_policy_uri: UaString::from(SECURITY_POLICY_NONE_URI),
            sender_certificate: ByteString::NULL,
            receiver_certificate_thumbprint: ByteString::NULL,
        }
    }

    /// True when the policy is None.
    pub fn is_policy_none(&self) -> bool {
        self.security_policy_uri.as_str() == Some(SECURITY_POLICY_NONE_URI)
    }
}

impl BinaryEncodable for AsymmetricSecurityHeader {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.security_policy_uri.encode(buf);
        self.sender_certificate.encode(buf);
        self.receiver_certificate_thumbprint.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.position();
        let security_policy_uri = UaString::decode(reader)?;
        let length = security_policy_uri.as_str().map_or(0, str::len);
        if length > MAX_SECURITY_POLICY_URI_LENGTH {
            return Err(reader.error_at(
                offset,
                DecodeErrorKind::StringTooLong {
                    length,
                    limit: MAX_SECURITY_POLICY_URI_LENGTH,
                },
            ));
        }
        Ok(Self {
            security_policy_uri,
            sender_certificate: ByteString::decode(reader)?,
            receiver_certificate_thumbprint: ByteString::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        self.security_policy_uri.encoded_len()
            + self.sender_certificate.encoded_len()
            + self.receiver_certificate_thumbprint.encoded_len()
    }
}

/// The security header of MSG and CLO chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SymmetricSecurityHeader {
    /// Id of the security token (issued by OpenSecureChannel) that secures the chunk.
    pub token_id: u32,
}

impl BinaryEncodable for SymmetricSecurityHeader {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.token_id.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            token_id: u32::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn policy_none_layout() {
        let header = AsymmetricSecurityHeader::none();
        assert!(header.is_policy_none());
        let bytes = header.to_bytes();
        assert_eq!(&bytes[..4], &[47, 0, 0, 0]);
        assert_eq!(&bytes[4..51], SECURITY_POLICY_NONE_URI.as_bytes());
        assert_eq!(&bytes[51..], &[0xFF; 8]);
        assert_eq!(
            AsymmetricSecurityHeader::from_bytes(&bytes).unwrap(),
            header
        );
    }

    #[test]
    fn policy_uri_limit() {
        let header = AsymmetricSecurityHeader {
            security_policy_uri: UaString::from("u".repeat(256)),
            ..AsymmetricSecurityHeader::none()
        };
        let error = AsymmetricSecurityHeader::from_bytes(&header.to_bytes()).unwrap_err();
        assert_eq!(error.offset, 0);
        assert_eq!(
            error.kind,
            DecodeErrorKind::StringTooLong {
                length: 256,
                limit: 255
            }
        );
    }

    proptest! {
        #[test]
        fn round_trip(uri in proptest::option::of("[a-z:/#]{0,64}"), cert: Option<Vec<u8>>, thumb: Option<Vec<u8>>, token_id: u32) {
            let header = AsymmetricSecurityHeader {
                security_policy_uri: UaString(uri),
                sender_certificate: ByteString::from(cert),
                receiver_certificate_thumbprint: ByteString::from(thumb),
            };
            prop_assert_eq!(header.to_bytes().len(), header.encoded_len());
            prop_assert_eq!(AsymmetricSecurityHeader::from_bytes(&header.to_bytes()).unwrap(), header);
            let symmetric = SymmetricSecurityHeader { token_id };
            prop_assert_eq!(SymmetricSecurityHeader::from_bytes(&symmetric.to_bytes()).unwrap(), symmetric);
        }
    }
}
