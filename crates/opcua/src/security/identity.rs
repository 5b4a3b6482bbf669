//! Identity token secrets and session signatures (OPC 10000-4 §5.6.2, §5.6.3, §7.41):
//!
//! - the `legacy` encrypted secret of a UserName token: length (UInt32, of password plus
//!   nonce), password, server nonce, encrypted with the server certificate's key under the
//!   asymmetric encryption of the user token policy's security policy;
//! - the client and user token signatures of ActivateSession and the server signature of
//!   CreateSession: the asymmetric signature over a certificate followed by a nonce.

use super::certificate::Certificate;
use super::crypto::{CryptoError, PrivateKey};
use super::policy::SecurityPolicy;
use crate::encoding::{ByteString, UaString};
use crate::services::SignatureData;
use crate::types::StatusCode;

/// Longest password accepted inside an encrypted secret, in bytes.
pub const MAX_SECRET_LENGTH: usize = 64 * 1024;

/// Encrypts `password` for the server: returns the secret and the algorithm URI to put in
/// the UserNameIdentityToken.
pub fn encrypt_user_password(
    policy: SecurityPolicy,
    server_certificate: &Certificate,
    server_nonce: &[u8],
    password: &[u8],
) -> Result<(Vec<u8>, &'static str), CryptoError> {
    let algorithms = policy
        .algorithms()
        .ok_or(CryptoError::Encrypt("SecurityPolicy None does not encrypt"))?;
    let length = u32::try_from(password.len() + server_nonce.len())
        .map_err(|_| CryptoError::Encrypt("password too long"))?;
    let mut plain = Vec::with_capacity(4 + password.len() + server_nonce.len());
    plain.extend_from_slice(&length.to_le_bytes());
    plain.extend_from_slice(password);
    plain.extend_from_slice(server_nonce);
    let secret = server_certificate
        .public_key()
        .encrypt(algorithms.asymmetric_encryption, &plain)?;
    Ok((secret, algorithms.asymmetric_encryption.uri()))
}

/// Decrypts a `legacy` secret with the server key and checks the trailing server nonce:
/// Bad_IdentityTokenInvalid for a malformed secret or a wrong algorithm, Bad_NonceInvalid for
/// a stale nonce. Returns the password.
pub fn decrypt_user_password(
    policy: SecurityPolicy,
    server_key: &PrivateKey,
    algorithm_uri: Option<&str>,
    server_nonce: &[u8],
    secret: &[u8],
) -> Result<Vec<u8>, StatusCode> {
    let algorithms = policy
        .algorithms()
        .ok_or(StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
    if algorithm_uri != Some(algorithms.asymmetric_encryption.uri()) {
        return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
    }
    let plain = server_key
        .decrypt(algorithms.asymmetric_encryption, secret)
        .map_err(|_| StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
    parse_legacy_secret(&plain, server_nonce)
}

/// The password inside a decrypted `legacy` secret: `length ‖ password ‖ serverNonce`,
/// optionally followed by padding. OPC 10000-4 §7.41.2.3: "if a Client adds padding then all
/// bytes shall be zero; a Server shall check for padding added by Clients and ensure that all
/// padding bytes are zeros". Clients of open62541 zero-pad the plaintext to a whole RSA
/// block, so the secret may be longer than `4 + length`: trailing bytes are accepted when
/// every one is zero and refused (Bad_IdentityTokenInvalid) otherwise. A wrong password is
/// not this function's business: it decrypts fine and is refused later with
/// Bad_UserAccessDenied.
pub fn parse_legacy_secret(plain: &[u8], server_nonce: &[u8]) -> Result<Vec<u8>, StatusCode> {
    let (length_bytes, rest) = plain
        .split_first_chunk::<4>()
        .ok_or(StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
    let length = u32::from_le_bytes(*length_bytes) as usize;
    if length > MAX_SECRET_LENGTH || rest.len() < length || length < server_nonce.len() {
        return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
    }
    let (content, padding) = rest.split_at(length);
    if padding.iter().any(|&byte| byte != 0) {
        return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
    }
    let (password, nonce) = content.split_at(length - server_nonce.len());
    if nonce != server_nonce {
        return Err(StatusCode::BAD_NONCE_INVALID);
    }
    Ok(password.to_vec())
}

/// The signature over `certificate` followed by `nonce` with our key under `policy`.
pub fn sign_certificate_and_nonce(
    policy: SecurityPolicy,
    key: &PrivateKey,
    certificate: &[u8],
    nonce: &[u8],
) -> Result<SignatureData, CryptoError> {
    let Some(algorithms) = policy.algorithms() else {
        return Ok(SignatureData::default());
    };
    let mut data = Vec::with_capacity(certificate.len() + nonce.len());
    data.extend_from_slice(certificate);
    data.extend_from_slice(nonce);
    let signature = key.sign(algorithms.asymmetric_signature, &data)?;
    Ok(SignatureData {
        algorithm: UaString::from(algorithms.asymmetric_signature.uri()),
        signature: ByteString::from(signature),
    })
}

/// Checks a signature over `certificate` followed by `nonce` made with `signer`'s key under
/// `policy`; `failure` is the StatusCode for a bad one.
pub fn verify_certificate_and_nonce(
    policy: SecurityPolicy,
    signer: &Certificate,
    certificate: &[u8],
    nonce: &[u8],
    signature: &SignatureData,
    failure: StatusCode,
) -> Result<(), StatusCode> {
    let Some(algorithms) = policy.algorithms() else {
        return Ok(());
    };
    if signature.algorithm.as_str() != Some(algorithms.asymmetric_signature.uri()) {
        return Err(failure);
    }
    let bytes = signature.signature.as_bytes().unwrap_or_default();
    let mut data = Vec::with_capacity(certificate.len() + nonce.len());
    data.extend_from_slice(certificate);
    data.extend_from_slice(nonce);
    signer
        .public_key()
        .verify(algorithms.asymmetric_signature, &data, bytes)
        .map_err(|_| failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `length ‖ password ‖ nonce` as a client builds it, before any padding.
    fn legacy_plain(password: &[u8], nonce: &[u8]) -> Vec<u8> {
        let mut plain = ((password.len() + nonce.len()) as u32)
            .to_le_bytes()
            .to_vec();
        plain.extend_from_slice(password);
        plain.extend_from_slice(nonce);
        plain
    }

    #[test]
    fn zero_padded_secret_is_accepted_and_other_padding_refused() {
        let nonce = [0xA5u8; 32];
        // The exact bytes an open62541 client encrypts for "hunter2" under Basic256Sha256
        // with a 2048-bit key: 4 + 7 + 32 = 43 bytes, zero-padded to one OAEP-SHA1 block
        // of 214 bytes.
        let mut padded = vec![0x27, 0x00, 0x00, 0x00];
        padded.extend_from_slice(b"hunter2");
        padded.extend_from_slice(&nonce);
        padded.resize(214, 0);
        assert_eq!(
            padded[..11],
            [0x27, 0, 0, 0, b'h', b'u', b'n', b't', b'e', b'r', b'2']
        );
        assert_eq!(parse_legacy_secret(&padded, &nonce).unwrap(), b"hunter2");
        // Unpadded, as asyncua and our client send it.
        assert_eq!(
            parse_legacy_secret(&legacy_plain(b"hunter2", &nonce), &nonce).unwrap(),
            b"hunter2"
        );
        // One non-zero padding byte anywhere: refused.
        for at in [43, 100, 213] {
            let mut bad = padded.clone();
            bad[at] = 0x01;
            assert_eq!(
                parse_legacy_secret(&bad, &nonce),
                Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
            );
        }
        // A length past the end, or shorter than the nonce: refused.
        let mut long = padded.clone();
        long[..4].copy_from_slice(&300u32.to_le_bytes());
        assert_eq!(
            parse_legacy_secret(&long, &nonce),
            Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
        );
        let mut short = padded.clone();
        short[..4].copy_from_slice(&31u32.to_le_bytes());
        assert_eq!(
            parse_legacy_secret(&short, &nonce),
            Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
        );
        assert_eq!(
            parse_legacy_secret(&[0x27, 0, 0], &nonce),
            Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
        );
        // The wrong nonce inside a well-formed secret.
        assert_eq!(
            parse_legacy_secret(&padded, &[0x5Au8; 32]),
            Err(StatusCode::BAD_NONCE_INVALID)
        );
    }

    #[cfg(feature = "crypto")]
    #[test]
    fn zero_padded_secret_decrypts_under_every_policy() {
        let key = PrivateKey::generate().unwrap();
        let certificate =
            Certificate::create_self_signed(&key, "urn:s", "s", &[], 1_800_000_000, 30).unwrap();
        let nonce = [7u8; 32];
        for policy in SecurityPolicy::SECURED {
            let algorithm = policy.algorithms().unwrap().asymmetric_encryption;
            let block = certificate.public_key().plain_block_size(algorithm);
            let mut plain = legacy_plain(b"hunter2", &nonce);
            plain.resize(block, 0);
            let secret = certificate.public_key().encrypt(algorithm, &plain).unwrap();
            assert_eq!(
                decrypt_user_password(policy, &key, Some(algorithm.uri()), &nonce, &secret)
                    .unwrap(),
                b"hunter2",
                "{policy}"
            );
            plain[block - 1] = 0xFF;
            let secret = certificate.public_key().encrypt(algorithm, &plain).unwrap();
            assert_eq!(
                decrypt_user_password(policy, &key, Some(algorithm.uri()), &nonce, &secret),
                Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID),
                "{policy}"
            );
        }
    }

    #[cfg(feature = "crypto")]
    #[test]
    fn password_secret_round_trip_and_nonce_check() {
        let key = PrivateKey::generate().unwrap();
        let certificate =
            Certificate::create_self_signed(&key, "urn:s", "s", &[], 1_800_000_000, 30).unwrap();
        for policy in SecurityPolicy::SECURED {
            let nonce = [7u8; 32];
            let (secret, uri) =
                encrypt_user_password(policy, &certificate, &nonce, b"hunter2").unwrap();
            assert_eq!(secret.len(), 256);
            assert_eq!(
                decrypt_user_password(policy, &key, Some(uri), &nonce, &secret).unwrap(),
                b"hunter2"
            );
            assert_eq!(
                decrypt_user_password(policy, &key, Some(uri), &[8u8; 32], &secret),
                Err(StatusCode::BAD_NONCE_INVALID)
            );
            assert_eq!(
                decrypt_user_password(policy, &key, None, &nonce, &secret),
                Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
            );
            assert_eq!(
                decrypt_user_password(policy, &key, Some(uri), &nonce, &secret[1..]),
                Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
            );
            let signature =
                sign_certificate_and_nonce(policy, &key, certificate.der(), &nonce).unwrap();
            let failure = StatusCode::BAD_APPLICATION_SIGNATURE_INVALID;
            assert_eq!(
                verify_certificate_and_nonce(
                    policy,
                    &certificate,
                    certificate.der(),
                    &nonce,
                    &signature,
                    failure
                ),
                Ok(())
            );
            assert_eq!(
                verify_certificate_and_nonce(
                    policy,
                    &certificate,
                    certificate.der(),
                    &[0; 32],
                    &signature,
                    failure
                ),
                Err(failure)
            );
        }
    }
}
