//! OPC UA security (OPC 10000-6 §6.7, OPC 10000-7 policy profiles), sans-IO but for the PKI
//! store on disk: the [`SecurityPolicy`] table, the crypto primitives of the secured policies
//! ([`crypto`]: RSA from aws-lc-rs, the rest from RustCrypto), signing and encryption of
//! whole chunks ([`chunk`]), the per-channel keys ([`ChannelSecurity`]), certificates and
//! the trust decision ([`Certificate`], [`TrustList`]), identity token secrets
//! ([`identity`]) and the certificate store ([`Pki`]).
//!
//! Without the `crypto` feature (no aws-lc-rs, no rcgen), [`crypto`] is `no_crypto.rs`: the
//! same API, but [`PrivateKey`] and [`PublicKey`] have no values, so no certificate parses,
//! no key loads or is created (the error says the build has no crypto), and only
//! SecurityPolicy None can be used. That is the one place the feature is decided.

pub mod certificate;
pub mod channel;
pub mod chunk;
#[cfg(feature = "crypto")]
pub mod crypto;
#[cfg(not(feature = "crypto"))]
#[path = "no_crypto.rs"]
pub mod crypto;
pub mod identity;
pub mod pki;
mod policy;
mod primitives;

pub use certificate::{Certificate, CertificateError, TrustList, thumbprint_hex};
pub use channel::{ChannelSecurity, LocalIdentity};
pub use chunk::ChunkSecurityError;
pub use crypto::{CryptoError, PrivateKey, PublicKey, SymmetricKeys};
pub use pki::{Pki, PkiError};
pub use policy::{
    AsymmetricEncryption, AsymmetricSignature, MessageSecurityMode, PolicyAlgorithms,
    SYMMETRIC_BLOCK_SIZE, SYMMETRIC_SIGNATURE_LENGTH, SecurityPolicy,
};
