//! OpenSecureChannel and CloseSecureChannel (OPC 10000-4 §5.5.2, §5.5.3): the service messages
//! that issue, renew and drop the security token of a secure channel.

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{ua_enumeration, ua_structure};
use crate::encoding::{ByteString, DateTime};

use super::discovery::MessageSecurityMode;

ua_enumeration! {
    /// Whether OpenSecureChannel asks for a first token or a renewal (OPC 10000-4 §7.43).
    pub enum SecurityTokenRequestType {
        /// Create a new channel and its first token.
        Issue = 0,
        /// Create a new token for an existing channel.
        Renew = 1,
    }
}

ua_structure! {
    /// Asks the server to issue or renew a channel security token (OPC 10000-4 §5.5.2.2).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct OpenSecureChannelRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Version of the UA TCP / secure conversation protocol the client speaks (0).
        pub client_protocol_version: u32,
        /// Issue or Renew.
        pub request_type: SecurityTokenRequestType,
        /// None, Sign or SignAndEncrypt.
        pub security_mode: MessageSecurityMode,
        /// Client random bytes for key derivation (empty or null for SecurityPolicy None).
        pub client_nonce: ByteString,
        /// Requested token lifetime in milliseconds.
        pub requested_lifetime: u32,
    }
}

ua_structure! {
    /// The identity and lifetime of a channel's security token (OPC 10000-4 §5.5.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ChannelSecurityToken {
        /// Identifier of the secure channel.
        pub channel_id: u32,
        /// Identifier of this token within the channel.
        pub token_id: u32,
        /// When the server created the token.
        pub created_at: DateTime,
        /// Lifetime the server granted, in milliseconds.
        pub revised_lifetime: u32,
    }
}

ua_structure! {
    /// The server's answer to OpenSecureChannel (OPC 10000-4 §5.5.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct OpenSecureChannelResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// Protocol version the server speaks (0).
        pub server_protocol_version: u32,
        /// The issued or renewed token.
        pub security_token: ChannelSecurityToken,
        /// Server random bytes for key derivation.
        pub server_nonce: ByteString,
    }
}

ua_structure! {
    /// Closes the secure channel; the server sends no response (OPC 10000-4 §5.5.3.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct CloseSecureChannelRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
    }
}

ua_structure! {
    /// Defined by OPC 10000-4 §5.5.3.2 for completeness; servers close the socket instead.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct CloseSecureChannelResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::BinaryEncodable;
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn open_request_layout() {
        let request = OpenSecureChannelRequest {
            request_header: RequestHeader::default(),
            client_protocol_version: 0,
            request_type: SecurityTokenRequestType::Issue,
            security_mode: MessageSecurityMode::None,
            client_nonce: ByteString::from(Vec::new()),
            requested_lifetime: 3_600_000,
        };
        let bytes = request.to_bytes();
        let header_len = RequestHeader::default().encoded_len();
        // OPC 10000-6 §5.2.4: enumerations are Int32; §5.2.2.7: empty ByteString is length 0.
        let tail = [
            0, 0, 0, 0, // client protocol version
            0, 0, 0, 0, // Issue
            1, 0, 0, 0, // MessageSecurityMode None
            0, 0, 0, 0, // empty nonce
            0x80, 0xEE, 0x36, 0x00, // 3 600 000 ms
        ];
        assert_eq!(&bytes[header_len..], tail);
        assert_round_trip(&request);
    }

    #[test]
    fn unlisted_enumeration_values_are_kept() {
        assert_eq!(
            SecurityTokenRequestType::from_bytes(&[7, 0, 0, 0]).unwrap(),
            SecurityTokenRequestType::Other(7)
        );
        assert_eq!(SecurityTokenRequestType::Other(7).to_bytes(), [7, 0, 0, 0]);
        assert_eq!(SecurityTokenRequestType::Renew.name(), Some("Renew"));
    }

    proptest! {
        #[test]
        fn secure_channel_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<OpenSecureChannelRequest>(seed));
            assert_round_trip(&generate_from_seed::<OpenSecureChannelResponse>(seed));
            assert_round_trip(&generate_from_seed::<CloseSecureChannelRequest>(seed));
            assert_round_trip(&generate_from_seed::<CloseSecureChannelResponse>(seed));
        }
    }
}
