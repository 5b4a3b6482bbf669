//! Signing and encryption of whole secure channel chunks (OPC 10000-6 §6.7.2).
//!
//! The functions here take a chunk as the None layer writes it (message header, channel id,
//! security header, sequence header, body) and give the secured bytes, or take secured bytes
//! and give the plain chunk back with the padding and signature removed and the message size
//! rewritten, so [`SecureChannelChunk::from_frame`](crate::secure_channel::SecureChannelChunk)
//! reads it as before.
//!
//! - MSG / CLO (symmetric): the signature (HMAC-SHA256) covers everything from the message
//!   header to the end of the padding; under SignAndEncrypt the padding makes sequence header,
//!   body, padding and signature a whole number of AES blocks and everything after the
//!   symmetric security header is encrypted with AES-CBC. Under Sign there is no padding.
//! - OPN (asymmetric): always signed with the sender's private key and encrypted with the
//!   receiver's public key once the policy is not None (OPC 10000-6 §6.7.4), in RSA-OAEP
//!   blocks; the padding makes the encrypted part a whole number of plaintext blocks, with an
//!   ExtraPaddingSize byte when the receiver's key is longer than 2048 bits.
//!
//! Every MessageSize written is the size on the wire, and the signature is computed over the
//! header carrying it.

use super::crypto::{CryptoError, PrivateKey, PublicKey, SymmetricKeys};
use super::policy::{
    MessageSecurityMode, PolicyAlgorithms, SYMMETRIC_BLOCK_SIZE, SYMMETRIC_SIGNATURE_LENGTH,
};
use crate::transport::HEADER_LENGTH;
use crate::types::StatusCode;

/// Message header, channel id and token id.
pub const SYMMETRIC_HEADER_END: usize = HEADER_LENGTH + 4 + 4;
/// Sequence number and request id.
const SEQUENCE_HEADER_LENGTH: usize = 8;
/// RSA keys longer than this many bytes need the ExtraPaddingSize byte.
const EXTRA_PADDING_THRESHOLD: usize = 256;

/// Why a received chunk failed the security checks, or a chunk could not be secured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChunkSecurityError {
    /// The chunk is shorter than its headers, signature and padding.
    #[error("the chunk is too short for its security ({0} bytes)")]
    TooShort(usize),
    /// The padding bytes are inconsistent.
    #[error("invalid padding")]
    BadPadding,
    /// A cryptographic operation failed (bad signature, undecryptable).
    #[error(transparent)]
    Crypto(#[from] CryptoError),
}

impl ChunkSecurityError {
    /// The StatusCode: Bad_SecurityChecksFailed for everything a peer can cause.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::Crypto(error) => error.status_code(),
            _ => StatusCode::BAD_SECURITY_CHECKS_FAILED,
        }
    }
}

fn set_message_size(chunk: &mut [u8], size: usize) {
    if let Some(field) = chunk.get_mut(4..8) {
        field.copy_from_slice(&u32::try_from(size).unwrap_or(u32::MAX).to_le_bytes());
    }
}

/// Appends `PaddingSize`, the padding bytes and (for large keys) `ExtraPaddingSize`.
fn push_padding(out: &mut Vec<u8>, padding: usize, extra: bool) {
    let low = (padding & 0xFF) as u8;
    out.push(low);
    out.resize(out.len() + padding, low);
    if extra {
        out.push((padding >> 8) as u8);
    }
}

/// The length of the padding (size bytes included) at the end of `plain`, checked.
fn padding_length(
    plain: &[u8],
    extra: bool,
    minimum_end: usize,
) -> Result<usize, ChunkSecurityError> {
    let end = plain.len();
    let (low, size) = if extra {
        let high = *plain
            .get(end.wrapping_sub(1))
            .ok_or(ChunkSecurityError::BadPadding)?;
        let low = *plain
            .get(end.wrapping_sub(2))
            .ok_or(ChunkSecurityError::BadPadding)?;
        (low, (usize::from(high) << 8) | usize::from(low))
    } else {
        let low = *plain
            .get(end.wrapping_sub(1))
            .ok_or(ChunkSecurityError::BadPadding)?;
        (low, usize::from(low))
    };
    let total = size + 1 + usize::from(extra);
    if end < minimum_end + total {
        return Err(ChunkSecurityError::BadPadding);
    }
    let padding = &plain[end - total..end - usize::from(extra)];
    if padding.iter().any(|byte| *byte != low) {
        return Err(ChunkSecurityError::BadPadding);
    }
    Ok(total)
}

/// The largest body a MSG / CLO chunk of at most `chunk_size` bytes can carry.
pub fn max_symmetric_body(chunk_size: usize, mode: MessageSecurityMode) -> usize {
    let room = chunk_size.saturating_sub(SYMMETRIC_HEADER_END);
    match mode {
        MessageSecurityMode::SignAndEncrypt => {
            let encrypted = room - room % SYMMETRIC_BLOCK_SIZE;
            encrypted.saturating_sub(SEQUENCE_HEADER_LENGTH + SYMMETRIC_SIGNATURE_LENGTH + 1)
        }
        MessageSecurityMode::Sign => {
            room.saturating_sub(SEQUENCE_HEADER_LENGTH + SYMMETRIC_SIGNATURE_LENGTH)
        }
        _ => room.saturating_sub(SEQUENCE_HEADER_LENGTH),
    }
}

/// Signs (and under SignAndEncrypt pads and encrypts) a plain MSG / CLO chunk.
pub fn secure_symmetric(
    plain: &[u8],
    mode: MessageSecurityMode,
    keys: &SymmetricKeys,
) -> Result<Vec<u8>, ChunkSecurityError> {
    if plain.len() < SYMMETRIC_HEADER_END + SEQUENCE_HEADER_LENGTH {
        return Err(ChunkSecurityError::TooShort(plain.len()));
    }
    let encrypt = mode == MessageSecurityMode::SignAndEncrypt;
    let mut out =
        Vec::with_capacity(plain.len() + SYMMETRIC_SIGNATURE_LENGTH + SYMMETRIC_BLOCK_SIZE + 1);
    out.extend_from_slice(plain);
    if encrypt {
        let content = plain.len() - SYMMETRIC_HEADER_END + SYMMETRIC_SIGNATURE_LENGTH + 1;
        let padding =
            (SYMMETRIC_BLOCK_SIZE - content % SYMMETRIC_BLOCK_SIZE) % SYMMETRIC_BLOCK_SIZE;
        push_padding(&mut out, padding, false);
    }
    let total = out.len() + SYMMETRIC_SIGNATURE_LENGTH;
    set_message_size(&mut out, total);
    let signature = keys.sign(&out);
    out.extend_from_slice(&signature);
    if encrypt {
        keys.encrypt(&mut out[SYMMETRIC_HEADER_END..])?;
    }
    Ok(out)
}

/// Decrypts (under SignAndEncrypt) and verifies a received MSG / CLO chunk; gives the plain
/// chunk without padding and signature.
pub fn unsecure_symmetric(
    secured: &[u8],
    mode: MessageSecurityMode,
    keys: &SymmetricKeys,
) -> Result<Vec<u8>, ChunkSecurityError> {
    let minimum = SYMMETRIC_HEADER_END + SEQUENCE_HEADER_LENGTH + SYMMETRIC_SIGNATURE_LENGTH;
    if secured.len() < minimum {
        return Err(ChunkSecurityError::TooShort(secured.len()));
    }
    let encrypt = mode == MessageSecurityMode::SignAndEncrypt;
    let mut plain = secured.to_vec();
    if encrypt {
        keys.decrypt(&mut plain[SYMMETRIC_HEADER_END..])?;
    }
    let signed_end = plain.len() - SYMMETRIC_SIGNATURE_LENGTH;
    keys.verify(&plain[..signed_end], &plain[signed_end..])?;
    plain.truncate(signed_end);
    if encrypt {
        let padding = padding_length(&plain, false, SYMMETRIC_HEADER_END + SEQUENCE_HEADER_LENGTH)?;
        plain.truncate(plain.len() - padding);
    }
    let size = plain.len();
    set_message_size(&mut plain, size);
    Ok(plain)
}

/// The sizes of an OPN chunk between a sender and a receiver key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AsymmetricSizes {
    plain_block: usize,
    cipher_block: usize,
    signature: usize,
    extra_padding: bool,
}

impl AsymmetricSizes {
    fn new(
        algorithms: &PolicyAlgorithms,
        receiver_key_bytes: usize,
        sender_key_bytes: usize,
    ) -> Self {
        Self {
            plain_block: receiver_key_bytes
                .saturating_sub(algorithms.asymmetric_encryption.overhead()),
            cipher_block: receiver_key_bytes,
            signature: sender_key_bytes,
            extra_padding: receiver_key_bytes > EXTRA_PADDING_THRESHOLD,
        }
    }
}

/// The largest body an OPN chunk of at most `chunk_size` bytes can carry, with `header_end`
/// bytes of headers before the sequence header.
pub fn max_asymmetric_body(
    algorithms: &PolicyAlgorithms,
    chunk_size: usize,
    header_end: usize,
    receiver_key_bytes: usize,
    sender_key_bytes: usize,
) -> usize {
    let sizes = AsymmetricSizes::new(algorithms, receiver_key_bytes, sender_key_bytes);
    if sizes.cipher_block == 0 {
        return 0;
    }
    let blocks = chunk_size.saturating_sub(header_end) / sizes.cipher_block;
    (blocks * sizes.plain_block).saturating_sub(
        SEQUENCE_HEADER_LENGTH + sizes.signature + 1 + usize::from(sizes.extra_padding),
    )
}

/// Pads, signs with `sender` and encrypts for `receiver` a plain OPN chunk whose asymmetric
/// security header ends at `header_end`.
pub fn secure_asymmetric(
    plain: &[u8],
    header_end: usize,
    algorithms: &PolicyAlgorithms,
    sender: &PrivateKey,
    receiver: &PublicKey,
) -> Result<Vec<u8>, ChunkSecurityError> {
    if plain.len() < header_end + SEQUENCE_HEADER_LENGTH {
        return Err(ChunkSecurityError::TooShort(plain.len()));
    }
    let sizes = AsymmetricSizes::new(algorithms, receiver.size_bytes(), sender.size_bytes());
    if sizes.plain_block == 0 {
        return Err(CryptoError::Encrypt("the receiver's RSA key is too small").into());
    }
    let content = plain.len() - header_end + 1 + usize::from(sizes.extra_padding) + sizes.signature;
    let padding = (sizes.plain_block - content % sizes.plain_block) % sizes.plain_block;
    let mut out = Vec::with_capacity(plain.len() + padding + 2 + sizes.signature);
    out.extend_from_slice(plain);
    push_padding(&mut out, padding, sizes.extra_padding);
    let blocks = (out.len() - header_end + sizes.signature) / sizes.plain_block;
    set_message_size(&mut out, header_end + blocks * sizes.cipher_block);
    let signature = sender.sign(algorithms.asymmetric_signature, &out)?;
    out.extend_from_slice(&signature);
    let encrypted = receiver.encrypt(algorithms.asymmetric_encryption, &out[header_end..])?;
    out.truncate(header_end);
    out.extend_from_slice(&encrypted);
    Ok(out)
}

/// Decrypts with `receiver` and verifies with `sender` a received OPN chunk whose asymmetric
/// security header ends at `header_end`; gives the plain chunk.
pub fn unsecure_asymmetric(
    secured: &[u8],
    header_end: usize,
    algorithms: &PolicyAlgorithms,
    receiver: &PrivateKey,
    sender: &PublicKey,
) -> Result<Vec<u8>, ChunkSecurityError> {
    let Some(encrypted) = secured.get(header_end..) else {
        return Err(ChunkSecurityError::TooShort(secured.len()));
    };
    let sizes = AsymmetricSizes::new(algorithms, receiver.size_bytes(), sender.size_bytes());
    let decrypted = receiver.decrypt(algorithms.asymmetric_encryption, encrypted)?;
    let mut plain = Vec::with_capacity(header_end + decrypted.len());
    plain.extend_from_slice(&secured[..header_end]);
    plain.extend_from_slice(&decrypted);
    let minimum = header_end + SEQUENCE_HEADER_LENGTH + sizes.signature + 1;
    if plain.len() < minimum {
        return Err(ChunkSecurityError::TooShort(plain.len()));
    }
    let signed_end = plain.len() - sizes.signature;
    sender.verify(
        algorithms.asymmetric_signature,
        &plain[..signed_end],
        &plain[signed_end..],
    )?;
    plain.truncate(signed_end);
    let padding = padding_length(
        &plain,
        sizes.extra_padding,
        header_end + SEQUENCE_HEADER_LENGTH,
    )?;
    plain.truncate(plain.len() - padding);
    let size = plain.len();
    set_message_size(&mut plain, size);
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::SecurityPolicy;
    use proptest::prelude::*;
    #[cfg(feature = "crypto")]
    use std::sync::OnceLock;

    #[cfg(feature = "crypto")]
    fn key_pairs() -> &'static (PrivateKey, PrivateKey) {
        static KEYS: OnceLock<(PrivateKey, PrivateKey)> = OnceLock::new();
        KEYS.get_or_init(|| {
            (
                PrivateKey::generate().unwrap(),
                PrivateKey::generate().unwrap(),
            )
        })
    }

    fn plain_chunk(message_type: &[u8; 4], header: &[u8], body: &[u8]) -> Vec<u8> {
        let mut out = message_type.to_vec();
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&7u32.to_le_bytes());
        out.extend_from_slice(header);
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(body);
        let size = out.len();
        set_message_size(&mut out, size);
        out
    }

    #[test]
    fn symmetric_layout_and_tamper_detection() {
        let algorithms = SecurityPolicy::Basic256Sha256.algorithms().unwrap();
        let keys = SymmetricKeys::derive(&algorithms, &[3; 32], &[4; 32]);
        let plain = plain_chunk(b"MSGF", &5u32.to_le_bytes(), b"hello");
        // Sign: no padding, 32 signature bytes, the rest readable.
        let signed = secure_symmetric(&plain, MessageSecurityMode::Sign, &keys).unwrap();
        assert_eq!(signed.len(), plain.len() + 32);
        assert_eq!(&signed[8..plain.len()], &plain[8..]);
        assert_eq!(
            u32::from_le_bytes(signed[4..8].try_into().unwrap()) as usize,
            signed.len()
        );
        assert_eq!(
            unsecure_symmetric(&signed, MessageSecurityMode::Sign, &keys).unwrap(),
            plain
        );
        // SignAndEncrypt: 8 + 5 + padding + 32 is a multiple of 16.
        let sealed = secure_symmetric(&plain, MessageSecurityMode::SignAndEncrypt, &keys).unwrap();
        assert_eq!((sealed.len() - 16) % 16, 0);
        assert_eq!(
            &sealed[..16],
            {
                let mut head = plain[..16].to_vec();
                set_message_size(&mut head, sealed.len());
                head
            }
            .as_slice()
        );
        assert_eq!(
            unsecure_symmetric(&sealed, MessageSecurityMode::SignAndEncrypt, &keys).unwrap(),
            plain
        );
        for index in [4, 12, 20, sealed.len() - 1] {
            let mut bad = sealed.clone();
            bad[index] ^= 1;
            assert_eq!(
                unsecure_symmetric(&bad, MessageSecurityMode::SignAndEncrypt, &keys)
                    .unwrap_err()
                    .status_code(),
                StatusCode::BAD_SECURITY_CHECKS_FAILED
            );
        }
        let other = SymmetricKeys::derive(&algorithms, &[4; 32], &[3; 32]);
        assert!(unsecure_symmetric(&sealed, MessageSecurityMode::SignAndEncrypt, &other).is_err());
        assert!(
            unsecure_symmetric(&sealed[..40], MessageSecurityMode::SignAndEncrypt, &keys).is_err()
        );
    }

    #[cfg(feature = "crypto")]
    #[test]
    fn asymmetric_round_trip_for_every_policy() {
        let (client, server) = key_pairs();
        let server_public = PublicKey::from_spki_der(server.public_key_der()).unwrap();
        let client_public = PublicKey::from_spki_der(client.public_key_der()).unwrap();
        for policy in SecurityPolicy::SECURED {
            let algorithms = policy.algorithms().unwrap();
            let header = vec![0xAB; 40];
            for body_len in [0usize, 1, 150, 1000] {
                let body: Vec<u8> = (0..body_len).map(|i| i as u8).collect();
                let plain = plain_chunk(b"OPNF", &header, &body);
                let header_end = 12 + header.len();
                let sealed =
                    secure_asymmetric(&plain, header_end, &algorithms, client, &server_public)
                        .unwrap();
                assert_eq!((sealed.len() - header_end) % 256, 0);
                assert_eq!(
                    u32::from_le_bytes(sealed[4..8].try_into().unwrap()) as usize,
                    sealed.len()
                );
                let opened =
                    unsecure_asymmetric(&sealed, header_end, &algorithms, server, &client_public)
                        .unwrap();
                assert_eq!(opened, plain, "{policy} {body_len}");
                let mut bad = sealed.clone();
                bad[header_end + 3] ^= 0x40;
                assert!(
                    unsecure_asymmetric(&bad, header_end, &algorithms, server, &client_public)
                        .is_err()
                );
                // Signed by someone else.
                assert!(
                    unsecure_asymmetric(&sealed, header_end, &algorithms, server, &server_public)
                        .is_err()
                );
            }
            let max = max_asymmetric_body(&algorithms, 8192, 52, 256, 256);
            let plain = plain_chunk(b"OPNF", &[0; 40], &vec![1; max]);
            let sealed =
                secure_asymmetric(&plain, 52, &algorithms, client, &server_public).unwrap();
            assert!(sealed.len() <= 8192, "{policy}: {}", sealed.len());
            let plain = plain_chunk(b"OPNF", &[0; 40], &vec![1; max + 1]);
            let sealed =
                secure_asymmetric(&plain, 52, &algorithms, client, &server_public).unwrap();
            assert!(
                sealed.len() > 8192,
                "{policy}: one byte more needs another block"
            );
        }
    }

    #[test]
    fn extra_padding_byte_parsing() {
        let mut plain = vec![9u8; 20];
        push_padding(&mut plain, 300, true);
        assert_eq!(plain.len(), 20 + 302);
        assert_eq!(padding_length(&plain, true, 10).unwrap(), 302);
        let mut zero = vec![9u8; 20];
        push_padding(&mut zero, 0, true);
        assert_eq!(padding_length(&zero, true, 10).unwrap(), 2);
        assert!(padding_length(&zero, true, 21).is_err());
        zero[20] = 1;
        assert!(padding_length(&zero, true, 10).is_err());
    }

    proptest! {
        #[test]
        fn symmetric_round_trip_and_max_body(body in proptest::collection::vec(any::<u8>(), 0..600), chunk_size in 64usize..700, encrypt: bool, policy_index in 0usize..3) {
            let algorithms = SecurityPolicy::SECURED[policy_index].algorithms().unwrap();
            let keys = SymmetricKeys::derive(&algorithms, &[5; 32], &[6; 32]);
            let mode = if encrypt { MessageSecurityMode::SignAndEncrypt } else { MessageSecurityMode::Sign };
            let plain = plain_chunk(b"MSGC", &9u32.to_le_bytes(), &body);
            let secured = secure_symmetric(&plain, mode, &keys).unwrap();
            prop_assert_eq!(unsecure_symmetric(&secured, mode, &keys).unwrap(), plain);
            let max = max_symmetric_body(chunk_size, mode);
            let fits = secure_symmetric(&plain_chunk(b"MSGC", &9u32.to_le_bytes(), &vec![0; max]), mode, &keys).unwrap();
            prop_assert!(fits.len() <= chunk_size);
        }

        #[cfg(feature = "crypto")]
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..700), encrypt: bool) {
            let algorithms = SecurityPolicy::Aes128Sha256RsaOaep.algorithms().unwrap();
            let keys = SymmetricKeys::derive(&algorithms, &[5; 32], &[6; 32]);
            let mode = if encrypt { MessageSecurityMode::SignAndEncrypt } else { MessageSecurityMode::Sign };
            prop_assert!(unsecure_symmetric(&bytes, mode, &keys).is_err());
            let (client, server) = key_pairs();
            let client_public = PublicKey::from_spki_der(client.public_key_der()).unwrap();
            prop_assert!(unsecure_asymmetric(&bytes, 12, &algorithms, server, &client_public).is_err());
        }
    }
}
