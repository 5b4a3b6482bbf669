//! The security policies (OPC 10000-7, policy profiles; OPC 10000-6 §6.1) from one table: URIs,
//! algorithms, key and nonce lengths.
//!
//! | policy | asym. signature | asym. encryption | sym. signature | sym. encryption | signing key | encrypting key | nonce | RSA key |
//! |---|---|---|---|---|---|---|---|---|
//! | Basic256Sha256 | RSA-PKCS#1 v1.5 SHA-256 | RSA-OAEP SHA-1 | HMAC-SHA256 | AES-256-CBC | 32 | 32 | 32 | 2048..4096 |
//! | Aes128_Sha256_RsaOaep | RSA-PKCS#1 v1.5 SHA-256 | RSA-OAEP SHA-1 | HMAC-SHA256 | AES-128-CBC | 32 | 16 | 32 | 2048..4096 |
//! | Aes256_Sha256_RsaPss | RSA-PSS SHA-256 | RSA-OAEP SHA-256 | HMAC-SHA256 | AES-256-CBC | 32 | 32 | 32 | 2048..4096 |

use crate::secure_channel::SECURITY_POLICY_NONE_URI;

pub use crate::services::MessageSecurityMode;

/// How OPN chunks and session signatures are signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsymmetricSignature {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RsaPkcs1Sha256,
    /// RSASSA-PSS with SHA-256, MGF1 SHA-256, salt of 32 bytes.
    RsaPssSha256,
}

impl AsymmetricSignature {
    /// The URI of the algorithm, as SignatureData.algorithm carries it.
    pub const fn uri(self) -> &'static str {
        match self {
            Self::RsaPkcs1Sha256 => "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
            Self::RsaPssSha256 => "http://opcfoundation.org/UA/security/rsa-pss-sha2-256",
        }
    }
}

/// How OPN chunks and user token secrets are encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AsymmetricEncryption {
    /// RSAES-OAEP with SHA-1 (and MGF1 SHA-1).
    RsaOaepSha1,
    /// RSAES-OAEP with SHA-256 (and MGF1 SHA-256).
    RsaOaepSha256,
}

impl AsymmetricEncryption {
    /// The URI of the algorithm, as UserNameIdentityToken.encryptionAlgorithm carries it.
    pub const fn uri(self) -> &'static str {
        match self {
            Self::RsaOaepSha1 => "http://www.w3.org/2001/04/xmlenc#rsa-oaep",
            Self::RsaOaepSha256 => "http://opcfoundation.org/UA/security/rsa-oaep-sha2-256",
        }
    }

    /// Bytes of one RSA block taken by the OAEP padding: 2 * hash length + 2.
    pub const fn overhead(self) -> usize {
        match self {
            Self::RsaOaepSha1 => 2 * 20 + 2,
            Self::RsaOaepSha256 => 2 * 32 + 2,
        }
    }
}

/// The algorithms and sizes of a secured policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyAlgorithms {
    /// Signature of OPN chunks and of session signatures.
    pub asymmetric_signature: AsymmetricSignature,
    /// Encryption of OPN chunks and user token secrets.
    pub asymmetric_encryption: AsymmetricEncryption,
    /// Length of the derived HMAC-SHA256 signing key, in bytes.
    pub signing_key_length: usize,
    /// Length of the derived AES key, in bytes (16: AES-128, 32: AES-256).
    pub encrypting_key_length: usize,
    /// Length of the nonces exchanged in OpenSecureChannel, in bytes.
    pub nonce_length: usize,
    /// Smallest RSA key accepted, in bits.
    pub min_key_bits: usize,
    /// Largest RSA key accepted, in bits.
    pub max_key_bits: usize,
}

/// Length of an HMAC-SHA256 signature, in bytes (every secured policy here).
pub const SYMMETRIC_SIGNATURE_LENGTH: usize = 32;
/// AES block size and IV length, in bytes.
pub const SYMMETRIC_BLOCK_SIZE: usize = 16;

/// A security policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecurityPolicy {
    /// No security.
    None,
    /// Basic256Sha256.
    Basic256Sha256,
    /// Aes128_Sha256_RsaOaep.
    Aes128Sha256RsaOaep,
    /// Aes256_Sha256_RsaPss.
    Aes256Sha256RsaPss,
}

/// (policy, short name, URI, algorithms): the one table everything else reads.
const TABLE: [(SecurityPolicy, &str, &str, Option<PolicyAlgorithms>); 4] = [
    (SecurityPolicy::None, "None", SECURITY_POLICY_NONE_URI, None),
    (
        SecurityPolicy::Basic256Sha256,
        "Basic256Sha256",
        "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256",
        Some(PolicyAlgorithms {
            asymmetric_signature: AsymmetricSignature::RsaPkcs1Sha256,
            asymmetric_encryption: AsymmetricEncryption::RsaOaepSha1,
            signing_key_length: 32,
            encrypting_key_length: 32,
            nonce_length: 32,
            min_key_bits: 2048,
            max_key_bits: 4096,
        }),
    ),
    (
        SecurityPolicy::Aes128Sha256RsaOaep,
        "Aes128_Sha256_RsaOaep",
        "http://opcfoundation.org/UA/SecurityPolicy#Aes128_Sha256_RsaOaep",
        Some(PolicyAlgorithms {
            asymmetric_signature: AsymmetricSignature::RsaPkcs1Sha256,
            asymmetric_encryption: AsymmetricEncryption::RsaOaepSha1,
            signing_key_length: 32,
            encrypting_key_length: 16,
            nonce_length: 32,
            min_key_bits: 2048,
            max_key_bits: 4096,
        }),
    ),
    (
        SecurityPolicy::Aes256Sha256RsaPss,
        "Aes256_Sha256_RsaPss",
        "http://opcfoundation.org/UA/SecurityPolicy#Aes256_Sha256_RsaPss",
        Some(PolicyAlgorithms {
            asymmetric_signature: AsymmetricSignature::RsaPssSha256,
            asymmetric_encryption: AsymmetricEncryption::RsaOaepSha256,
            signing_key_length: 32,
            encrypting_key_length: 32,
            nonce_length: 32,
            min_key_bits: 2048,
            max_key_bits: 4096,
        }),
    ),
];

impl SecurityPolicy {
    /// Every policy, None first.
    pub const ALL: [Self; 4] = [
        Self::None,
        Self::Basic256Sha256,
        Self::Aes128Sha256RsaOaep,
        Self::Aes256Sha256RsaPss,
    ];
    /// The secured policies.
    pub const SECURED: [Self; 3] = [
        Self::Basic256Sha256,
        Self::Aes128Sha256RsaOaep,
        Self::Aes256Sha256RsaPss,
    ];

    const fn row(
        self,
    ) -> &'static (
        SecurityPolicy,
        &'static str,
        &'static str,
        Option<PolicyAlgorithms>,
    ) {
        &TABLE[self as usize]
    }

    /// The policy URI (`http://opcfoundation.org/UA/SecurityPolicy#...`).
    pub const fn uri(self) -> &'static str {
        self.row().2
    }

    /// The name after the `#` of the URI, as the CLI accepts it.
    pub const fn name(self) -> &'static str {
        self.row().1
    }

    /// The algorithms; `None` for SecurityPolicy None.
    pub const fn algorithms(self) -> Option<PolicyAlgorithms> {
        self.row().3
    }

    /// True for every policy but None.
    pub const fn is_secured(self) -> bool {
        self.algorithms().is_some()
    }

    /// The policy with this URI.
    pub fn from_uri(uri: &str) -> Option<Self> {
        TABLE.iter().find(|row| row.2 == uri).map(|row| row.0)
    }

    /// The policy with this name (case-insensitive, with or without underscores) or URI.
    pub fn from_name(name: &str) -> Option<Self> {
        let simplify = |s: &str| s.replace('_', "").to_ascii_lowercase();
        let wanted = simplify(name);
        TABLE
            .iter()
            .find(|row| simplify(row.1) == wanted || row.2 == name)
            .map(|row| row.0)
    }
}

impl std::fmt::Display for SecurityPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_are_in_enum_order() {
        for (index, row) in TABLE.iter().enumerate() {
            assert_eq!(row.0 as usize, index);
            assert!(row.2.ends_with(row.1), "{} / {}", row.1, row.2);
            assert_eq!(SecurityPolicy::from_uri(row.2), Some(row.0));
            assert_eq!(SecurityPolicy::from_name(row.1), Some(row.0));
        }
        assert_eq!(
            SecurityPolicy::from_name("aes256sha256rsapss"),
            Some(SecurityPolicy::Aes256Sha256RsaPss)
        );
        assert_eq!(SecurityPolicy::from_name("Basic128Rsa15"), None);
        let pss = SecurityPolicy::Aes256Sha256RsaPss.algorithms().unwrap();
        assert_eq!(pss.asymmetric_encryption.overhead(), 66);
        assert_eq!(
            SecurityPolicy::Aes128Sha256RsaOaep
                .algorithms()
                .unwrap()
                .encrypting_key_length,
            16
        );
        assert!(!SecurityPolicy::None.is_secured());
    }
}
