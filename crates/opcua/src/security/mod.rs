//! OPC UA security (OPC 10000-6 §6.7, OPC 10000-7 policy profiles), sans-IO but for the PKI
//! store on disk: the [`SecurityPolicy`] table, the crypto primitives of the secured policies
//! ([`crypto`], all from aws-lc-rs and RustCrypto), signing and encryption of whole chunks
//! ([`chunk`]), the per-channel keys ([`ChannelSecurity`]), certificates and the trust
//! decision ([`Certificate`], [`TrustList`]), identity token secrets ([`identity`]) and the
//! certificate store ([`Pki`]).

pub mod certificate;
pub mod channel;
pub mod chunk;
pub mod crypto;
pub mod identity;
pub mod pki;
mod policy;

pub use certificate::{Certificate, CertificateError, TrustList, thumbprint_hex};
pub use channel::{ChannelSecurity, LocalIdentity};
pub use chunk::ChunkSecurityError;
pub use crypto::{CryptoError, PrivateKey, PublicKey, SymmetricKeys};
pub use pki::{Pki, PkiError};
pub use policy::{
    AsymmetricEncryption, AsymmetricSignature, MessageSecurityMode, PolicyAlgorithms,
    SYMMETRIC_BLOCK_SIZE, SYMMETRIC_SIGNATURE_LENGTH, SecurityPolicy,
};
