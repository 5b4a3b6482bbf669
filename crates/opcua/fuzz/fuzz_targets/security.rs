//! Fuzzes the decrypt / verify path of the security layer: arbitrary bytes as a received
//! MSG / CLO chunk (under Sign and SignAndEncrypt, for every secured policy) and as an OPN
//! chunk (RSA decryption and signature check with fixed keys). Nothing may panic, and
//! nothing the fuzzer makes up may pass the checks. The first byte picks policy, mode and
//! how much of the input is kept as a plain header. A valid secured chunk is also mutated at
//! one fuzzer-chosen bit and must then be refused.

#![no_main]

use std::sync::OnceLock;

use buildwire_opcua::security::chunk::{
    secure_symmetric, unsecure_asymmetric, unsecure_symmetric,
};
use buildwire_opcua::security::{MessageSecurityMode, PrivateKey, PublicKey, SecurityPolicy, SymmetricKeys};
use libfuzzer_sys::fuzz_target;

fn keys() -> &'static (PrivateKey, PublicKey) {
    static KEYS: OnceLock<(PrivateKey, PublicKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let ours = PrivateKey::generate().expect("key generation");
        let theirs = PrivateKey::generate().expect("key generation");
        let public = PublicKey::from_spki_der(theirs.public_key_der()).expect("public key");
        (ours, public)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let policy = SecurityPolicy::SECURED[usize::from(control % 3)];
    let mode = if control & 4 == 0 {
        MessageSecurityMode::Sign
    } else {
        MessageSecurityMode::SignAndEncrypt
    };
    let Some(algorithms) = policy.algorithms() else {
        return;
    };
    let symmetric = SymmetricKeys::derive(&algorithms, &[1; 32], &[2; 32]);
    assert!(unsecure_symmetric(rest, mode, &symmetric).is_err());
    let (ours, theirs) = keys();
    let header_end = usize::from(control >> 3) * 4;
    assert!(unsecure_asymmetric(rest, header_end, &algorithms, ours, theirs).is_err());

    // A genuine chunk with one flipped bit is refused.
    if rest.len() >= 2 {
        let mut plain = b"MSGF\0\0\0\0\x07\0\0\0\x05\0\0\0\x01\0\0\0\x02\0\0\0".to_vec();
        plain.extend_from_slice(&rest[2..]);
        let size = plain.len() as u32;
        plain[4..8].copy_from_slice(&size.to_le_bytes());
        let secured = secure_symmetric(&plain, mode, &symmetric).expect("secure");
        assert_eq!(unsecure_symmetric(&secured, mode, &symmetric).expect("valid"), plain);
        let index = usize::from(u16::from_le_bytes([rest[0], rest[1]])) % secured.len();
        let mut tampered = secured;
        tampered[index] ^= 0x80;
        assert!(unsecure_symmetric(&tampered, mode, &symmetric).is_err());
    }
});
