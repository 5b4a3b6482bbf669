//! The `crypto` module of a build without the `crypto` feature: no aws-lc-rs,
//! no rcgen, so no RSA. The pure-Rust primitives (random bytes, SHA-1 thumbprints, HMAC,
//! AES-CBC) are the same as with the feature; [`PrivateKey`] and [`PublicKey`] have no values,
//! so every constructor fails with [`CryptoError::Unavailable`] and everything that needs a
//! key (a secured channel, a certificate, an encrypted or X509 user token) is refused by the
//! code that would use it: only SecurityPolicy None can be offered or opened.

use super::certificate::CertificateError;
use super::policy::{AsymmetricEncryption, AsymmetricSignature};
pub use super::primitives::{
    CryptoError, SymmetricKeys, hmac_sha256, hmac_sha256_verify, p_sha256, random_bytes, sha1,
};

/// An RSA private key; none can exist in this build.
#[derive(Debug)]
pub enum PrivateKey {}

impl PrivateKey {
    /// Always [`CryptoError::Unavailable`]: this build has no RSA.
    pub fn generate() -> Result<Self, CryptoError> {
        Err(CryptoError::Unavailable)
    }

    /// Always [`CryptoError::Unavailable`]: this build has no RSA.
    pub fn from_pkcs8(_der: &[u8]) -> Result<Self, CryptoError> {
        Err(CryptoError::Unavailable)
    }

    /// The PKCS#8 DER encoding.
    pub fn to_pkcs8(&self) -> &[u8] {
        match *self {}
    }

    /// The key size in bytes.
    pub fn size_bytes(&self) -> usize {
        match *self {}
    }

    /// The public half as a SubjectPublicKeyInfo DER.
    pub fn public_key_der(&self) -> &[u8] {
        match *self {}
    }

    /// Signs `data`.
    pub fn sign(
        &self,
        _algorithm: AsymmetricSignature,
        _data: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        match *self {}
    }

    /// Decrypts `ciphertext`.
    pub fn decrypt(
        &self,
        _algorithm: AsymmetricEncryption,
        _ciphertext: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        match *self {}
    }
}

/// An RSA public key; none can exist in this build, so no certificate parses.
#[derive(Clone, Debug)]
pub enum PublicKey {}

impl PublicKey {
    /// Always [`CryptoError::Unavailable`]: this build has no RSA.
    pub fn from_spki_der(_der: &[u8]) -> Result<Self, CryptoError> {
        Err(CryptoError::Unavailable)
    }

    /// The key size in bytes.
    pub fn size_bytes(&self) -> usize {
        match *self {}
    }

    /// Checks `signature` over `data`.
    pub fn verify(
        &self,
        _algorithm: AsymmetricSignature,
        _data: &[u8],
        _signature_bytes: &[u8],
    ) -> Result<(), CryptoError> {
        match *self {}
    }

    /// Plaintext bytes per RSA block under `algorithm`.
    pub fn plain_block_size(&self, _algorithm: AsymmetricEncryption) -> usize {
        match *self {}
    }

    /// Encrypts `plaintext`.
    pub fn encrypt(
        &self,
        _algorithm: AsymmetricEncryption,
        _plaintext: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        match *self {}
    }
}

/// Creating a certificate needs a key, which this build cannot have.
pub(crate) fn self_signed_der(
    key: &PrivateKey,
    _application_uri: &str,
    _name: &str,
    _hosts: &[String],
    _serial: &[u8],
    _not_before: (i32, u8, u8),
    _not_after: (i32, u8, u8),
) -> Result<Vec<u8>, CertificateError> {
    match *key {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::{Certificate, Pki};
    use crate::types::StatusCode;

    #[test]
    fn no_key_and_no_certificate_can_exist() {
        assert_eq!(PrivateKey::generate().err(), Some(CryptoError::Unavailable));
        assert_eq!(
            PrivateKey::from_pkcs8(b"any").err(),
            Some(CryptoError::Unavailable)
        );
        assert_eq!(
            CryptoError::Unavailable.status_code(),
            StatusCode::BAD_SECURITY_POLICY_REJECTED
        );
        assert!(Certificate::from_der(&[0x30, 0x03, 1, 2, 3]).is_err());
        // Creating a certificate store's own identity says why it cannot.
        let dir = std::env::temp_dir().join(format!("buildwire-nocrypto-{}", std::process::id()));
        let error = Pki::open(&dir)
            .and_then(|pki| pki.create_own("urn:x", "x", &[], 30).map(|_| ()))
            .unwrap_err();
        assert!(error.to_string().contains("no crypto"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
