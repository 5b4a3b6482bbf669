//! The cryptographic primitives of the secured policies, all from maintained libraries:
//! RSA (PKCS#1 v1.5 and PSS signatures, OAEP encryption), SHA-1/SHA-256 and HMAC from
//! aws-lc-rs; AES-CBC from RustCrypto (`aes` + `cbc`, without padding: OPC UA pads itself).
//! Also the P_SHA256 key derivation of OPC 10000-6 §6.7.5.

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit, generic_array::GenericArray};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{
    KeySize, OAEP_SHA1_MGF1SHA1, OAEP_SHA256_MGF1SHA256, OaepAlgorithm, OaepPrivateDecryptingKey,
    OaepPublicEncryptingKey, PrivateDecryptingKey, PublicEncryptingKey,
};
use aws_lc_rs::signature::{self, RsaKeyPair, UnparsedPublicKey};
use aws_lc_rs::{digest, hmac, rand};

use super::policy::{
    AsymmetricEncryption, AsymmetricSignature, PolicyAlgorithms, SYMMETRIC_BLOCK_SIZE,
};
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
}

impl CryptoError {
    /// The StatusCode to answer with (Bad_SecurityChecksFailed but for invalid keys).
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::InvalidKey(_) => StatusCode::BAD_CERTIFICATE_INVALID,
            _ => StatusCode::BAD_SECURITY_CHECKS_FAILED,
        }
    }
}

/// `length` random bytes from the system's secure generator.
pub fn random_bytes(length: usize) -> Result<Vec<u8>, CryptoError> {
    let mut out = vec![0u8; length];
    rand::fill(&mut out).map_err(|_| CryptoError::Random)?;
    Ok(out)
}

/// SHA-1 of `data` (certificate thumbprints).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut out = [0u8; 20];
    out.copy_from_slice(digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, data).as_ref());
    out
}

/// HMAC-SHA256 of `data` under `key`.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    let mut out = [0u8; 32];
    out.copy_from_slice(hmac::sign(&key, data).as_ref());
    out
}

/// Checks an HMAC-SHA256 `tag` in constant time.
pub fn hmac_sha256_verify(key: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::verify(&key, data, tag).map_err(|_| CryptoError::BadSignature)
}

/// P_SHA256 (RFC 5246 §5): `length` bytes from `secret` and `seed`.
pub fn p_sha256(secret: &[u8], seed: &[u8], length: usize) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let mut out = Vec::with_capacity(length + 32);
    // A(1) = HMAC(secret, seed); A(i) = HMAC(secret, A(i-1)).
    let mut a = hmac::sign(&key, seed);
    while out.len() < length {
        let mut context = hmac::Context::with_key(&key);
        context.update(a.as_ref());
        context.update(seed);
        out.extend_from_slice(context.sign().as_ref());
        a = hmac::sign(&key, a.as_ref());
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

fn oaep(algorithm: AsymmetricEncryption) -> &'static OaepAlgorithm {
    match algorithm {
        AsymmetricEncryption::RsaOaepSha1 => &OAEP_SHA1_MGF1SHA1,
        AsymmetricEncryption::RsaOaepSha256 => &OAEP_SHA256_MGF1SHA256,
    }
}

/// An RSA private key: signs and decrypts.
pub struct PrivateKey {
    pair: RsaKeyPair,
    decrypting: OaepPrivateDecryptingKey,
    pkcs8: Vec<u8>,
    spki: Vec<u8>,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrivateKey({} bits)", self.size_bytes() * 8)
    }
}

impl PrivateKey {
    /// A new 2048-bit key.
    pub fn generate() -> Result<Self, CryptoError> {
        let key = PrivateDecryptingKey::generate(KeySize::Rsa2048)
            .map_err(|_| CryptoError::InvalidKey("RSA key generation failed"))?;
        let der = key
            .as_der()
            .map_err(|_| CryptoError::InvalidKey("RSA key encoding failed"))?;
        Self::from_pkcs8(der.as_ref())
    }

    /// The key from its PKCS#8 DER encoding.
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, CryptoError> {
        let pair = RsaKeyPair::from_pkcs8(der)
            .map_err(|_| CryptoError::InvalidKey("not an RSA PKCS#8 private key"))?;
        let invalid = |_| CryptoError::InvalidKey("not an RSA PKCS#8 private key");
        let key = PrivateDecryptingKey::from_pkcs8(der).map_err(invalid)?;
        let spki = key
            .public_key()
            .as_der()
            .map_err(|_| CryptoError::InvalidKey("RSA public key encoding failed"))?
            .as_ref()
            .to_vec();
        let decrypting = OaepPrivateDecryptingKey::new(key)
            .map_err(|_| CryptoError::InvalidKey("not an RSA private key"))?;
        Ok(Self {
            pair,
            decrypting,
            pkcs8: der.to_vec(),
            spki,
        })
    }

    /// The PKCS#8 DER encoding.
    pub fn to_pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// The key size (modulus length) in bytes: the length of a signature and of one
    /// ciphertext block.
    pub fn size_bytes(&self) -> usize {
        self.pair.public_modulus_len()
    }

    /// The public half as a SubjectPublicKeyInfo DER.
    pub fn public_key_der(&self) -> &[u8] {
        &self.spki
    }

    /// Signs `data`.
    pub fn sign(
        &self,
        algorithm: AsymmetricSignature,
        data: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        let padding: &'static dyn signature::RsaEncoding = match algorithm {
            AsymmetricSignature::RsaPkcs1Sha256 => &signature::RSA_PKCS1_SHA256,
            AsymmetricSignature::RsaPssSha256 => &signature::RSA_PSS_SHA256,
        };
        let mut out = vec![0u8; self.size_bytes()];
        self.pair
            .sign(padding, &rand::SystemRandom::new(), data, &mut out)
            .map_err(|_| CryptoError::Encrypt("RSA signing failed"))?;
        Ok(out)
    }

    /// Decrypts `ciphertext`, a whole number of blocks of [`size_bytes`](Self::size_bytes).
    pub fn decrypt(
        &self,
        algorithm: AsymmetricEncryption,
        ciphertext: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        let block = self.size_bytes();
        if block == 0 || !ciphertext.len().is_multiple_of(block) {
            return Err(CryptoError::Decrypt("not a whole number of RSA blocks"));
        }
        let mut out = Vec::with_capacity(ciphertext.len());
        let mut buffer = vec![0u8; self.decrypting.min_output_size()];
        for chunk in ciphertext.chunks_exact(block) {
            let plain = self
                .decrypting
                .decrypt(oaep(algorithm), chunk, &mut buffer, None)
                .map_err(|_| CryptoError::Decrypt("RSA-OAEP decryption failed"))?;
            out.extend_from_slice(plain);
        }
        Ok(out)
    }
}

/// An RSA public key (of a peer's certificate): verifies and encrypts.
#[derive(Clone)]
pub struct PublicKey {
    /// RSAPublicKey (PKCS#1) or SubjectPublicKeyInfo DER.
    der: Vec<u8>,
    encrypting: std::sync::Arc<OaepPublicEncryptingKey>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({} bits)", self.size_bytes() * 8)
    }
}

impl PublicKey {
    /// The key from its SubjectPublicKeyInfo DER (as in a certificate).
    pub fn from_spki_der(der: &[u8]) -> Result<Self, CryptoError> {
        let key = PublicEncryptingKey::from_der(der)
            .map_err(|_| CryptoError::InvalidKey("not an RSA public key"))?;
        let encrypting = OaepPublicEncryptingKey::new(key)
            .map_err(|_| CryptoError::InvalidKey("not an RSA public key"))?;
        Ok(Self {
            der: der.to_vec(),
            encrypting: std::sync::Arc::new(encrypting),
        })
    }

    /// The key size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.encrypting.key_size_bytes()
    }

    /// Checks `signature` over `data`.
    pub fn verify(
        &self,
        algorithm: AsymmetricSignature,
        data: &[u8],
        signature_bytes: &[u8],
    ) -> Result<(), CryptoError> {
        let parameters: &'static signature::RsaParameters = match algorithm {
            AsymmetricSignature::RsaPkcs1Sha256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            AsymmetricSignature::RsaPssSha256 => &signature::RSA_PSS_2048_8192_SHA256,
        };
        UnparsedPublicKey::new(parameters, &self.der)
            .verify(data, signature_bytes)
            .map_err(|_| CryptoError::BadSignature)
    }

    /// Plaintext bytes per RSA block under `algorithm`.
    pub fn plain_block_size(&self, algorithm: AsymmetricEncryption) -> usize {
        self.size_bytes().saturating_sub(algorithm.overhead())
    }

    /// Encrypts `plaintext` block by block (the last block may be short).
    pub fn encrypt(
        &self,
        algorithm: AsymmetricEncryption,
        plaintext: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        let block = self.plain_block_size(algorithm);
        if block == 0 {
            return Err(CryptoError::Encrypt("the RSA key is too small"));
        }
        let size = self.size_bytes();
        let mut out = Vec::with_capacity(plaintext.len().div_ceil(block) * size);
        let mut buffer = vec![0u8; self.encrypting.ciphertext_size()];
        for chunk in plaintext.chunks(block) {
            let cipher = self
                .encrypting
                .encrypt(oaep(algorithm), chunk, &mut buffer, None)
                .map_err(|_| CryptoError::Encrypt("RSA-OAEP encryption failed"))?;
            out.extend_from_slice(cipher);
        }
        Ok(out)
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

    #[test]
    fn rsa_sign_verify_encrypt_decrypt() {
        let key = PrivateKey::generate().unwrap();
        assert_eq!(key.size_bytes(), 256);
        let again = PrivateKey::from_pkcs8(key.to_pkcs8()).unwrap();
        let public = PublicKey::from_spki_der(key.public_key_der()).unwrap();
        for signature_algorithm in [
            AsymmetricSignature::RsaPkcs1Sha256,
            AsymmetricSignature::RsaPssSha256,
        ] {
            let signature = again.sign(signature_algorithm, b"message").unwrap();
            assert_eq!(signature.len(), 256);
            public
                .verify(signature_algorithm, b"message", &signature)
                .unwrap();
            assert_eq!(
                public.verify(signature_algorithm, b"messagf", &signature),
                Err(CryptoError::BadSignature)
            );
        }
        for encryption in [
            AsymmetricEncryption::RsaOaepSha1,
            AsymmetricEncryption::RsaOaepSha256,
        ] {
            let plain: Vec<u8> = (0..500u32).map(|i| i as u8).collect();
            let cipher = public.encrypt(encryption, &plain).unwrap();
            assert_eq!(cipher.len() % 256, 0);
            assert_eq!(key.decrypt(encryption, &cipher).unwrap(), plain);
            assert!(key.decrypt(encryption, &cipher[1..]).is_err());
        }
        assert!(PrivateKey::from_pkcs8(b"junk").is_err());
        assert!(PublicKey::from_spki_der(b"junk").is_err());
    }
}
