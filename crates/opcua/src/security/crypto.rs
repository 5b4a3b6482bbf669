//! The cryptographic primitives of the secured policies (feature `crypto`): RSA (PKCS#1 v1.5
//! and PSS signatures, OAEP encryption) from aws-lc-rs, and self-signed certificate creation
//! with rcgen; with the pure-Rust primitives of `primitives.rs` (HMAC, P_SHA256, AES-CBC,
//! SHA-1, random bytes) re-exported. A build without the feature has
//! `no_crypto.rs` here instead: the same API, whose keys cannot exist.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand;
use aws_lc_rs::rsa::{
    KeySize, OAEP_SHA1_MGF1SHA1, OAEP_SHA256_MGF1SHA256, OaepAlgorithm, OaepPrivateDecryptingKey,
    OaepPublicEncryptingKey, PrivateDecryptingKey, PublicEncryptingKey,
};
use aws_lc_rs::signature::{self, RsaKeyPair, UnparsedPublicKey};

use super::certificate::CertificateError;
use super::policy::{AsymmetricEncryption, AsymmetricSignature};
pub use super::primitives::{
    CryptoError, SymmetricKeys, hmac_sha256, hmac_sha256_verify, p_sha256, random_bytes, sha1,
};

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

/// The DER of a self-signed certificate for `key` (rcgen, signing through aws-lc-rs): subject
/// CN `name`, subjectAltName with the application URI and every host (DNS name or IP address),
/// valid from `not_before` to `not_after` (civil dates), with the key usages OPC UA asks for.
pub(crate) fn self_signed_der(
    key: &PrivateKey,
    application_uri: &str,
    name: &str,
    hosts: &[String],
    serial: &[u8],
    not_before: (i32, u8, u8),
    not_after: (i32, u8, u8),
) -> Result<Vec<u8>, CertificateError> {
    use rcgen::{
        CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyUsagePurpose,
        SanType, SerialNumber,
    };
    let create = |error: rcgen::Error| CertificateError::Create(error.to_string());
    let signing = rcgen::KeyPair::try_from(key.to_pkcs8()).map_err(create)?;
    let mut params = CertificateParams::default();
    let mut subject = DistinguishedName::new();
    subject.push(DnType::CommonName, name);
    subject.push(DnType::OrganizationName, "buildwire");
    params.distinguished_name = subject;
    let mut sans = vec![SanType::URI(application_uri.try_into().map_err(create)?)];
    for host in hosts {
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) => sans.push(SanType::IpAddress(ip)),
            Err(_) => sans.push(SanType::DnsName(host.as_str().try_into().map_err(create)?)),
        }
    }
    params.subject_alt_names = sans;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::ContentCommitment,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DataEncipherment,
        KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    params.serial_number = Some(SerialNumber::from_slice(serial));
    let (y, m, d) = not_before;
    params.not_before = rcgen::date_time_ymd(y, m, d);
    let (y, m, d) = not_after;
    params.not_after = rcgen::date_time_ymd(y, m, d);
    let certificate = params.self_signed(&signing).map_err(create)?;
    Ok(certificate.der().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

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
