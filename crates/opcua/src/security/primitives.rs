//! The primitives every build has, all pure Rust (RustCrypto and getrandom): the error type,
//! random bytes, SHA-1 (certificate thumbprints), HMAC-SHA256, the P_SHA256 key derivation
//! of OPC 10000-6 §6.7.5 and the symmetric keys of a channel (HMAC-SHA256 + AES-CBC, without
//! padding: OPC UA pads itself). Re-exported by [`crypto`](super::crypto), which adds RSA
//! when the `crypto` feature is on.

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit, generic_array::GenericArray};

use super::policy::{PolicyAlgorithms, SYMMETRIC_BLOCK_SIZE};
use crate::types::StatusCode;

/// Why a cryptographic operation failed. Every variant maps to a StatusCode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    /// A key could not be parsed or generated.
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    /// A signature did not verify.
    #[error("the signature does not verify")]
    BadSignature,
    /// Ciphertext could not be decrypted (wrong length, wrong key, corrupt).
    #[error("decryption failed: {0}")]
    Decrypt(&'static str),
    /// Encryption failed (wrong plaintext length for the key).
    #[error("encryption failed: {0}")]
    Encrypt(&'static str),
    /// The randomness source failed.
    #[error("no random bytes")]
    Random,
    /// This build has no public-key cryptography: buildwire-opcua without its `crypto`
    /// feature offers SecurityPolicy None only.
    #[error("this build has no crypto (buildwire-opcua without the `crypto` feature)")]
    Unavailable,
}

impl CryptoError {
    /// The StatusCode to answer with (Bad_SecurityChecksFailed but for invalid keys).
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::InvalidKey(_) => StatusCode::BAD_CERTIFICATE_INVALID,
            Self::Unavailable => StatusCode::BAD_SECURITY_POLICY_REJECTED,
            _ => StatusCode::BAD_SECURITY_CHECKS_FAILED,
        }
    }
}

/// `length` random bytes from the system's secure generator (getrandom).
pub fn random_bytes(length: usize) -> Result<Vec<u8>, CryptoError> {
    let mut out = vec![0u8; length];
    getrandom::fill(&mut out).map_err(|_| CryptoError::Random)?;
    Ok(out)
}

/// SHA-1 of `data` (certificate thumbprints).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    sha1::Sha1::digest(data).into()
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn hmac_key(key: &[u8]) -> HmacSha256 {
    use hmac::Mac;
    // HMAC takes a key of any length (a long one is hashed first): this never fails.
    HmacSha256::new_from_slice(key).expect("HMAC accepts any key length")
}

/// HMAC-SHA256 of `data` under `key`.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    use hmac::Mac;
    let mut mac = hmac_key(key);
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Checks an HMAC-SHA256 `tag` in constant time.
pub fn hmac_sha256_verify(key: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
    use hmac::Mac;
    let mut mac = hmac_key(key);
    mac.update(data);
    mac.verify_slice(tag).map_err(|_| CryptoError::BadSignature)
}

/// P_SHA256 (RFC 5246 §5): `length` bytes from `secret` and `seed`.
pub fn p_sha256(secret: &[u8], seed: &[u8], length: usize) -> Vec<u8> {
    use hmac::Mac;
    let key = hmac_key(secret);
    let mut out = Vec::with_capacity(length + 32);
    // A(1) = HMAC(secret, seed); A(i) = HMAC(secret, A(i-1)).
    let mut a = {
        let mut mac = key.clone();
        mac.update(seed);
        mac.finalize().into_bytes()
    };
    while out.len() < length {
        let mut mac = key.clone();
        mac.update(&a);
        mac.update(seed);
        out.extend_from_slice(&mac.finalize().into_bytes());
        let mut next = key.clone();
        next.update(&a);
        a = next.finalize().into_bytes();
    }
    out.truncate(length);
    out
}

/// The keys that secure the messages one side sends (OPC 10000-6 §6.7.5).
#[derive(Clone, PartialEq, Eq)]
pub struct SymmetricKeys {
    /// HMAC-SHA256 key.
    pub signing_key: Vec<u8>,
    /// AES key (16 or 32 bytes).
    pub encrypting_key: Vec<u8>,
    /// AES-CBC initialization vector.
    pub iv: [u8; SYMMETRIC_BLOCK_SIZE],
}

impl std::fmt::Debug for SymmetricKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SymmetricKeys(..)")
    }
}

impl SymmetricKeys {
    /// Derives signing key, encrypting key and IV, in this order, with P_SHA256(secret, seed).
    /// The client's keys use the server nonce as secret and the client nonce as seed; the
    /// server's keys the other way round.
    pub fn derive(algorithms: &PolicyAlgorithms, secret: &[u8], seed: &[u8]) -> Self {
        let signing = algorithms.signing_key_length;
        let encrypting = algorithms.encrypting_key_length;
        let bytes = p_sha256(secret, seed, signing + encrypting + SYMMETRIC_BLOCK_SIZE);
        let mut iv = [0u8; SYMMETRIC_BLOCK_SIZE];
        iv.copy_from_slice(&bytes[signing + encrypting..]);
        Self {
            signing_key: bytes[..signing].to_vec(),
            encrypting_key: bytes[signing..signing + encrypting].to_vec(),
            iv,
        }
    }

    /// AES-CBC encryption in place; `data` is a whole number of blocks.
    pub fn encrypt(&self, data: &mut [u8]) -> Result<(), CryptoError> {
        if !data.len().is_multiple_of(SYMMETRIC_BLOCK_SIZE) {
            return Err(CryptoError::Encrypt("not a whole number of AES blocks"));
        }
        macro_rules! run {
            ($cipher:ty) => {{
                let mut cipher =
                    cbc::Encryptor::<$cipher>::new_from_slices(&self.encrypting_key, &self.iv)
                        .map_err(|_| CryptoError::InvalidKey("AES key length"))?;
                for block in data.chunks_exact_mut(SYMMETRIC_BLOCK_SIZE) {
                    cipher.encrypt_block_mut(GenericArray::from_mut_slice(block));
                }
            }};
        }
        match self.encrypting_key.len() {
            16 => run!(aes::Aes128),
            _ => run!(aes::Aes256),
        }
        Ok(())
    }

    /// AES-CBC decryption in place; `data` is a whole number of blocks.
    pub fn decrypt(&self, data: &mut [u8]) -> Result<(), CryptoError> {
        if !data.len().is_multiple_of(SYMMETRIC_BLOCK_SIZE) {
            return Err(CryptoError::Decrypt("not a whole number of AES blocks"));
        }
        macro_rules! run {
            ($cipher:ty) => {{
                let mut cipher =
                    cbc::Decryptor::<$cipher>::new_from_slices(&self.encrypting_key, &self.iv)
                        .map_err(|_| CryptoError::InvalidKey("AES key length"))?;
                for block in data.chunks_exact_mut(SYMMETRIC_BLOCK_SIZE) {
                    cipher.decrypt_block_mut(GenericArray::from_mut_slice(block));
                }
            }};
        }
        match self.encrypting_key.len() {
            16 => run!(aes::Aes128),
            _ => run!(aes::Aes256),
        }
        Ok(())
    }

    /// The HMAC-SHA256 of `data`.
    pub fn sign(&self, data: &[u8]) -> [u8; 32] {
        hmac_sha256(&self.signing_key, data)
    }

    /// Checks the HMAC-SHA256 `tag` of `data` in constant time.
    pub fn verify(&self, data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        hmac_sha256_verify(&self.signing_key, data, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::SecurityPolicy;

    #[test]
    fn p_sha256_matches_the_tls12_test_vector() {
        // The P_SHA256 vector published for the TLS 1.2 PRF (secret, "test label" + seed).
        let secret = hex("9bbe436ba940f017b17652849a71db35");
        let mut seed = b"test label".to_vec();
        seed.extend(hex("a0ba9f936cda311827a6f796ffd5198c"));
        let out = p_sha256(&secret, &seed, 100);
        assert_eq!(
            out,
            hex(
                "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff70187347b66"
            )
        );
    }

    pub(crate) fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn derived_key_lengths_follow_the_policy() {
        for policy in SecurityPolicy::SECURED {
            let algorithms = policy.algorithms().unwrap();
            let keys = SymmetricKeys::derive(&algorithms, &[1; 32], &[2; 32]);
            assert_eq!(keys.signing_key.len(), 32);
            assert_eq!(keys.encrypting_key.len(), algorithms.encrypting_key_length);
            let mut data = b"0123456789abcdef0123456789abcdef".to_vec();
            keys.encrypt(&mut data).unwrap();
            assert_ne!(&data[..], b"0123456789abcdef0123456789abcdef");
            keys.decrypt(&mut data).unwrap();
            assert_eq!(&data[..], b"0123456789abcdef0123456789abcdef");
            assert!(keys.encrypt(&mut [0u8; 15]).is_err());
            // The two directions get different keys.
            let other = SymmetricKeys::derive(&algorithms, &[2; 32], &[1; 32]);
            assert_ne!(keys, other);
        }
    }
}
