//! `ChannelSecurity`: what one secure channel needs to secure and check its chunks: the policy
//! and mode, our certificate and key, the peer's certificate, and the symmetric keys of each
//! live security token (OPC 10000-6 §6.7.5, §6.7.6).
//!
//! Token renewal: each OpenSecureChannel (Issue or Renew) brings new nonces and so new keys
//! for a new token id. The keys of the previous token stay until the caller drops them (the
//! server does when the client first uses the new token, the client when the server does),
//! so that chunks already in flight still verify (OPC 10000-4 §5.5.2.1).

use std::sync::Arc;

use super::certificate::Certificate;
use super::chunk::{
    ChunkSecurityError, SYMMETRIC_HEADER_END, max_asymmetric_body, max_symmetric_body,
    secure_asymmetric, secure_symmetric, unsecure_asymmetric, unsecure_symmetric,
};
use super::crypto::{PrivateKey, SymmetricKeys};
use super::policy::{MessageSecurityMode, PolicyAlgorithms, SecurityPolicy};
use crate::types::StatusCode;

/// Our application instance certificate and its private key (or a user's certificate and
/// key for an X509 identity token). Two are equal when their certificates are.
#[derive(Clone, Debug)]
pub struct LocalIdentity {
    /// The certificate sent to peers.
    pub certificate: Certificate,
    /// Its private key.
    pub private_key: Arc<PrivateKey>,
}

impl PartialEq for LocalIdentity {
    fn eq(&self, other: &Self) -> bool {
        self.certificate == other.certificate
    }
}

impl Eq for LocalIdentity {}

#[derive(Clone, Debug)]
struct TokenKeys {
    token_id: u32,
    /// Keys of the chunks we send.
    send: SymmetricKeys,
    /// Keys of the chunks we receive.
    receive: SymmetricKeys,
}

/// The security state of one secured channel (any policy but None).
#[derive(Clone, Debug)]
pub struct ChannelSecurity {
    policy: SecurityPolicy,
    algorithms: PolicyAlgorithms,
    mode: MessageSecurityMode,
    local: LocalIdentity,
    remote: Certificate,
    /// At most two: the newest last.
    tokens: Vec<TokenKeys>,
}

/// A missing key for a received token id, or a chunk that failed the checks.
fn unknown_token() -> ChunkSecurityError {
    ChunkSecurityError::Crypto(super::crypto::CryptoError::Decrypt(
        "unknown security token",
    ))
}

impl ChannelSecurity {
    /// The state for a channel under `policy` (not None) and `mode` (Sign or
    /// SignAndEncrypt) between `local` and the peer's certificate.
    pub fn new(
        policy: SecurityPolicy,
        mode: MessageSecurityMode,
        local: LocalIdentity,
        remote: Certificate,
    ) -> Result<Self, StatusCode> {
        let algorithms = policy
            .algorithms()
            .ok_or(StatusCode::BAD_SECURITY_POLICY_REJECTED)?;
        if !matches!(
            mode,
            MessageSecurityMode::Sign | MessageSecurityMode::SignAndEncrypt
        ) {
            return Err(StatusCode::BAD_SECURITY_MODE_REJECTED);
        }
        Ok(Self {
            policy,
            algorithms,
            mode,
            local,
            remote,
            tokens: Vec::new(),
        })
    }

    /// The policy.
    pub fn policy(&self) -> SecurityPolicy {
        self.policy
    }

    /// The mode.
    pub fn mode(&self) -> MessageSecurityMode {
        self.mode
    }

    /// Sets the mode (the server learns it from the OpenSecureChannel request it decrypted).
    pub fn set_mode(&mut self, mode: MessageSecurityMode) {
        if matches!(
            mode,
            MessageSecurityMode::Sign | MessageSecurityMode::SignAndEncrypt
        ) {
            self.mode = mode;
        }
    }

    /// The policy's algorithms.
    pub fn algorithms(&self) -> &PolicyAlgorithms {
        &self.algorithms
    }

    /// Our identity.
    pub fn local(&self) -> &LocalIdentity {
        &self.local
    }

    /// The peer's certificate.
    pub fn remote(&self) -> &Certificate {
        &self.remote
    }

    /// Installs the keys of `token_id` from the two nonces of its OpenSecureChannel exchange;
    /// `is_client` tells which side we are. Keeps the previous token's keys, drops older ones.
    pub fn install_token(
        &mut self,
        token_id: u32,
        client_nonce: &[u8],
        server_nonce: &[u8],
        is_client: bool,
    ) {
        // OPC 10000-6 §6.7.5: client keys = P_SHA256(serverNonce, clientNonce), server keys =
        // P_SHA256(clientNonce, serverNonce).
        let client = SymmetricKeys::derive(&self.algorithms, server_nonce, client_nonce);
        let server = SymmetricKeys::derive(&self.algorithms, client_nonce, server_nonce);
        let (send, receive) = if is_client {
            (client, server)
        } else {
            (server, client)
        };
        self.tokens.retain(|token| token.token_id != token_id);
        self.tokens.push(TokenKeys {
            token_id,
            send,
            receive,
        });
        while self.tokens.len() > 2 {
            self.tokens.remove(0);
        }
    }

    /// Forgets every token but `token_id`.
    pub fn drop_tokens_except(&mut self, token_id: u32) {
        self.tokens.retain(|token| token.token_id == token_id);
    }

    /// The token ids with keys, oldest first.
    pub fn token_ids(&self) -> Vec<u32> {
        self.tokens.iter().map(|token| token.token_id).collect()
    }

    /// The largest body of a MSG / CLO chunk of `chunk_size` bytes.
    pub fn max_symmetric_body(&self, chunk_size: usize) -> usize {
        max_symmetric_body(chunk_size, self.mode)
    }

    /// The largest body of an OPN chunk of `chunk_size` bytes with `header_end` bytes of
    /// headers before the sequence header.
    pub fn max_asymmetric_body(&self, chunk_size: usize, header_end: usize) -> usize {
        max_asymmetric_body(
            &self.algorithms,
            chunk_size,
            header_end,
            self.remote.public_key().size_bytes(),
            self.local.private_key.size_bytes(),
        )
    }

    fn token_id_of(chunk: &[u8]) -> Option<u32> {
        let bytes = chunk.get(SYMMETRIC_HEADER_END - 4..SYMMETRIC_HEADER_END)?;
        Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// Secures a plain MSG / CLO chunk with the keys of the token id it names.
    pub fn secure_symmetric(&self, plain: &[u8]) -> Result<Vec<u8>, ChunkSecurityError> {
        let token_id = Self::token_id_of(plain).ok_or(ChunkSecurityError::TooShort(plain.len()))?;
        let keys = self
            .tokens
            .iter()
            .find(|token| token.token_id == token_id)
            .ok_or_else(unknown_token)?;
        secure_symmetric(plain, self.mode, &keys.send)
    }

    /// Checks a received MSG / CLO chunk with the keys of the token id it names; gives the
    /// plain chunk.
    pub fn unsecure_symmetric(&self, secured: &[u8]) -> Result<Vec<u8>, ChunkSecurityError> {
        let token_id =
            Self::token_id_of(secured).ok_or(ChunkSecurityError::TooShort(secured.len()))?;
        let keys = self
            .tokens
            .iter()
            .find(|token| token.token_id == token_id)
            .ok_or_else(unknown_token)?;
        unsecure_symmetric(secured, self.mode, &keys.receive)
    }

    /// Signs with our key and encrypts for the peer a plain OPN chunk.
    pub fn secure_asymmetric(
        &self,
        plain: &[u8],
        header_end: usize,
    ) -> Result<Vec<u8>, ChunkSecurityError> {
        secure_asymmetric(
            plain,
            header_end,
            &self.algorithms,
            &self.local.private_key,
            self.remote.public_key(),
        )
    }

    /// Decrypts with our key and verifies with the peer's a received OPN chunk.
    pub fn unsecure_asymmetric(
        &self,
        secured: &[u8],
        header_end: usize,
    ) -> Result<Vec<u8>, ChunkSecurityError> {
        unsecure_asymmetric(
            secured,
            header_end,
            &self.algorithms,
            &self.local.private_key,
            self.remote.public_key(),
        )
    }
}
