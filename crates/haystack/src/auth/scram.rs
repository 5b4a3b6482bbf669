//! SCRAM-SHA-256 (RFC 5802 with the SHA-256 of RFC 7677): message syntax and key arithmetic.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::header::decode_base64;

type HmacSha256 = Hmac<Sha256>;

/// The hash name sent in the Haystack headers.
pub const HASH_NAME: &str = "SHA-256";
/// Fewest PBKDF2 iterations a client accepts (RFC 7677 asks for at least 4096).
pub const MIN_ITERATIONS: u32 = 4096;
/// Most PBKDF2 iterations a client accepts, so that a hostile server cannot make it spin.
pub const MAX_ITERATIONS: u32 = 2_000_000;
/// Longest SCRAM message accepted.
pub const MAX_MESSAGE_LEN: usize = 2048;

/// Why a SCRAM message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramError {
    /// The message does not follow the RFC 5802 syntax.
    #[error("malformed SCRAM message: {0}")]
    Malformed(&'static str),
    /// Channel binding was requested; Haystack does not use it.
    #[error("SCRAM channel binding is not supported")]
    ChannelBinding,
    /// The server's nonce does not extend the client's.
    #[error("SCRAM nonce mismatch")]
    NonceMismatch,
    /// The iteration count is outside what is accepted.
    #[error("SCRAM iteration count {0} is outside {MIN_ITERATIONS}..={MAX_ITERATIONS}")]
    Iterations(u32),
    /// The client's proof or the server's signature does not verify.
    #[error("SCRAM proof does not verify")]
    BadProof,
    /// The server answered with an error (`e=...`).
    #[error("server refused the login: {0}")]
    ServerError(String),
}

/// What a server stores for a user: never the password, only the salted keys.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredentials {
    /// Random salt.
    pub salt: Vec<u8>,
    /// PBKDF2 iteration count.
    pub iterations: u32,
    /// SHA-256(ClientKey).
    pub stored_key: [u8; 32],
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: [u8; 32],
}

impl std::fmt::Debug for ScramCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramCredentials")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

impl ScramCredentials {
    /// Derives the stored keys from a password.
    pub fn derive(password: &str, salt: &[u8], iterations: u32) -> Self {
        let salted = salted_password(password, salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        Self {
            salt: salt.to_vec(),
            iterations,
            stored_key: sha256(&client_key),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// Checks a client proof against the auth message: recovers ClientKey and compares its
    /// hash with the stored key in constant time.
    pub fn verify_proof(&self, auth_message: &str, proof: &[u8]) -> bool {
        if proof.len() != 32 {
            return false;
        }
        let signature = hmac(&self.stored_key, auth_message.as_bytes());
        let mut client_key = [0u8; 32];
        for (i, byte) in client_key.iter_mut().enumerate() {
            *byte = proof[i] ^ signature[i];
        }
        sha256(&client_key).ct_eq(&self.stored_key).into()
    }

    /// The server signature for an auth message.
    pub fn server_signature(&self, auth_message: &str) -> [u8; 32] {
        hmac(&self.server_key, auth_message.as_bytes())
    }
}

/// PBKDF2-HMAC-SHA-256 of the password (SCRAM's `Hi`).
pub fn salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut out = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut out);
    out
}

/// The client's proof: ClientKey XOR HMAC(StoredKey, AuthMessage).
pub fn client_proof(salted: &[u8; 32], auth_message: &str) -> [u8; 32] {
    let client_key = hmac(salted, b"Client Key");
    let signature = hmac(&sha256(&client_key), auth_message.as_bytes());
    let mut proof = [0u8; 32];
    for (i, byte) in proof.iter_mut().enumerate() {
        *byte = client_key[i] ^ signature[i];
    }
    proof
}

/// The server signature a client expects: HMAC(HMAC(SaltedPassword, "Server Key"), AuthMessage).
pub fn expected_server_signature(salted: &[u8; 32], auth_message: &str) -> [u8; 32] {
    hmac(&hmac(salted, b"Server Key"), auth_message.as_bytes())
}

/// HMAC-SHA-256.
pub(crate) fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so construction cannot fail.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC-SHA-256 takes keys of any length"),
    };
    mac.update(message);
    mac.finalize().into_bytes().into()
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// The `c=` value for "no channel binding" (`n,,` in base64).
pub const CHANNEL_BINDING_NONE: &str = "biws";

/// `client-first-message`: `n,,n=<user>,r=<nonce>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFirst {
    /// The user name, unescaped.
    pub username: String,
    /// The client's nonce.
    pub nonce: String,
}

impl ClientFirst {
    /// The message without the GS2 header (`n=...,r=...`), part of the auth message.
    pub fn bare(&self) -> String {
        format!("n={},r={}", escape_saslname(&self.username), self.nonce)
    }

    /// The whole message.
    pub fn to_message(&self) -> String {
        format!("n,,{}", self.bare())
    }

    /// Parses the whole message.
    ///
    /// Decision, beyond the letter of RFC 5802: a message without the GS2 header (`n=...,r=...`
    /// rather than `n,,n=...,r=...`) is read as if it had `n,,`. Older clients omit it, and
    /// the reference server (Haxall) ignores the header. Whitespace around the message is
    /// ignored too. Channel binding (`p=` or `y,`) is still refused.
    pub fn parse(message: &str) -> Result<Self, ScramError> {
        check_len(message)?;
        let message = message.trim_ascii();
        let bare = match message.strip_prefix("n,,") {
            Some(bare) => bare,
            None if message.starts_with("p=") || message.starts_with("y,") => {
                return Err(ScramError::ChannelBinding);
            }
            None if message.starts_with("n=") => message,
            None => return Err(ScramError::Malformed("client-first lacks the `n,,` header")),
        };
        let fields = fields(bare);
        let username = field(&fields, 'n').ok_or(ScramError::Malformed("no n= user name"))?;
        let nonce = field(&fields, 'r').ok_or(ScramError::Malformed("no r= nonce"))?;
        valid_nonce(nonce)?;
        Ok(Self {
            username: unescape_saslname(username)?,
            nonce: nonce.to_owned(),
        })
    }
}

/// `server-first-message`: `r=<client nonce + server nonce>,s=<base64 salt>,i=<iterations>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFirst {
    /// Combined nonce.
    pub nonce: String,
    /// Salt bytes.
    pub salt: Vec<u8>,
    /// Iteration count.
    pub iterations: u32,
}

impl ServerFirst {
    /// The message text.
    pub fn to_message(&self) -> String {
        format!(
            "r={},s={},i={}",
            self.nonce,
            STANDARD.encode(&self.salt),
            self.iterations
        )
    }

    /// Parses the message.
    pub fn parse(message: &str) -> Result<Self, ScramError> {
        check_len(message)?;
        if let Some(err) = message.strip_prefix("e=") {
            return Err(ScramError::ServerError(err.to_owned()));
        }
        let fields = fields(message);
        let nonce = field(&fields, 'r').ok_or(ScramError::Malformed("no r= nonce"))?;
        let salt = field(&fields, 's').ok_or(ScramError::Malformed("no s= salt"))?;
        let iterations = field(&fields, 'i').ok_or(ScramError::Malformed("no i= count"))?;
        valid_nonce(nonce)?;
        Ok(Self {
            nonce: nonce.to_owned(),
            salt: decode_base64(salt).ok_or(ScramError::Malformed("salt is not base64"))?,
            iterations: iterations
                .parse()
                .map_err(|_| ScramError::Malformed("i= is not a number"))?,
        })
    }
}

/// `client-final-message`: `c=biws,r=<nonce>,p=<base64 proof>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFinal {
    /// Channel binding data (`biws` for none).
    pub channel_binding: String,
    /// Combined nonce.
    pub nonce: String,
    /// Client proof.
    pub proof: Vec<u8>,
}

impl ClientFinal {
    /// The message without its proof, part of the auth message.
    pub fn without_proof(&self) -> String {
        format!("c={},r={}", self.channel_binding, self.nonce)
    }

    /// The whole message.
    pub fn to_message(&self) -> String {
        format!(
            "{},p={}",
            self.without_proof(),
            STANDARD.encode(&self.proof)
        )
    }

    /// Parses the message.
    ///
    /// Decision, beyond the letter of RFC 5802: the proof may be base64 of either alphabet,
    /// padded or not, and whitespace around the message or the proof is ignored (see
    /// [`decode_base64`]): phable sends the proof without its `=`, another client ends it
    /// with `\n`, and the reference server (Haxall) accepts both.
    pub fn parse(message: &str) -> Result<Self, ScramError> {
        check_len(message)?;
        let fields = fields(message.trim_ascii());
        let cb = field(&fields, 'c').ok_or(ScramError::Malformed("no c= channel binding"))?;
        let nonce = field(&fields, 'r').ok_or(ScramError::Malformed("no r= nonce"))?;
        let proof = field(&fields, 'p').ok_or(ScramError::Malformed("no p= proof"))?;
        if cb != CHANNEL_BINDING_NONE {
            return Err(ScramError::ChannelBinding);
        }
        Ok(Self {
            channel_binding: cb.to_owned(),
            nonce: nonce.to_owned(),
            proof: decode_base64(proof).ok_or(ScramError::Malformed("proof is not base64"))?,
        })
    }
}

/// The auth message both sides sign.
pub fn auth_message(
    client_first: &ClientFirst,
    server_first: &str,
    final_no_proof: &str,
) -> String {
    format!("{},{server_first},{final_no_proof}", client_first.bare())
}

/// `server-final-message` with the verifier: `v=<base64 signature>`.
pub fn server_final_message(signature: &[u8; 32]) -> String {
    format!("v={}", STANDARD.encode(signature))
}

/// Reads the verifier of a `server-final-message`.
pub fn parse_server_final(message: &str) -> Result<Vec<u8>, ScramError> {
    check_len(message)?;
    if let Some(err) = message.strip_prefix("e=") {
        return Err(ScramError::ServerError(err.to_owned()));
    }
    let fields = fields(message.trim_ascii());
    let v = field(&fields, 'v').ok_or(ScramError::Malformed("no v= verifier"))?;
    decode_base64(v).ok_or(ScramError::Malformed("verifier is not base64"))
}

fn check_len(message: &str) -> Result<(), ScramError> {
    if message.len() > MAX_MESSAGE_LEN {
        Err(ScramError::Malformed("message too long"))
    } else {
        Ok(())
    }
}

fn fields(message: &str) -> Vec<(char, &str)> {
    message
        .split(',')
        .filter_map(|part| {
            let mut chars = part.chars();
            let name = chars.next()?;
            let rest = chars.as_str().strip_prefix('=')?;
            Some((name, rest.trim_ascii()))
        })
        .collect()
}

fn field<'a>(fields: &[(char, &'a str)], name: char) -> Option<&'a str> {
    fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn valid_nonce(nonce: &str) -> Result<(), ScramError> {
    // RFC 5802: printable ASCII except ','.
    if !nonce.is_empty()
        && nonce
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
    {
        Ok(())
    } else {
        Err(ScramError::Malformed(
            "nonce is empty or has characters outside printable ASCII",
        ))
    }
}

/// RFC 5802 `saslname`: `,` is sent as `=2C` and `=` as `=3D`.
fn escape_saslname(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

fn unescape_saslname(name: &str) -> Result<String, ScramError> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        match rest.get(i..i + 3) {
            Some("=2C") => out.push(','),
            Some("=3D") => out.push('='),
            _ => return Err(ScramError::Malformed("bad `=` escape in user name")),
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The worked example of RFC 7677 section 3 (user "user", password "pencil").
    const C_FIRST: &str = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    const S_FIRST: &str =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    const C_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    const S_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    #[test]
    fn rfc7677_client_side() {
        let first = ClientFirst::parse(C_FIRST).unwrap();
        assert_eq!(first.to_message(), C_FIRST);
        let server_first = ServerFirst::parse(S_FIRST).unwrap();
        assert_eq!(server_first.iterations, 4096);
        assert_eq!(server_first.to_message(), S_FIRST);
        let salted = salted_password("pencil", &server_first.salt, server_first.iterations);
        let final_no_proof = format!("c=biws,r={}", server_first.nonce);
        let auth = auth_message(&first, S_FIRST, &final_no_proof);
        let client_final = ClientFinal {
            channel_binding: CHANNEL_BINDING_NONE.into(),
            nonce: server_first.nonce.clone(),
            proof: client_proof(&salted, &auth).to_vec(),
        };
        assert_eq!(client_final.to_message(), C_FINAL);
        assert_eq!(
            server_final_message(&expected_server_signature(&salted, &auth)),
            S_FINAL
        );
    }

    #[test]
    fn rfc7677_server_side() {
        let first = ClientFirst::parse(C_FIRST).unwrap();
        let server_first = ServerFirst::parse(S_FIRST).unwrap();
        let creds = ScramCredentials::derive("pencil", &server_first.salt, 4096);
        let client_final = ClientFinal::parse(C_FINAL).unwrap();
        let auth = auth_message(&first, S_FIRST, &client_final.without_proof());
        assert!(creds.verify_proof(&auth, &client_final.proof));
        assert_eq!(
            server_final_message(&creds.server_signature(&auth)),
            S_FINAL
        );
        assert_eq!(parse_server_final(S_FINAL).unwrap().len(), 32);

        let wrong = ScramCredentials::derive("pencil!", &server_first.salt, 4096);
        assert!(!wrong.verify_proof(&auth, &client_final.proof));
        assert!(!creds.verify_proof(&auth, &client_final.proof[..31]));
    }

    /// The proof of [`C_FINAL`] as clients really send it: without the `=` padding
    /// (phable), ending with `\n`, in the URL-safe alphabet; all verify like the RFC's.
    #[test]
    fn lenient_proofs_verify() {
        let first = ClientFirst::parse(C_FIRST).unwrap();
        let creds =
            ScramCredentials::derive("pencil", &ServerFirst::parse(S_FIRST).unwrap().salt, 4096);
        let strict = ClientFinal::parse(C_FINAL).unwrap();
        let nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        for message in [
            format!("c=biws,r={nonce},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ"),
            format!("c=biws,r={nonce},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=\n"),
            format!("c=biws,r={nonce},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ\n"),
            format!(" c=biws,r={nonce},p=dHzbZapWIk4jUhN-Ute9ytag9zjfMHgsqmmiz7AndVQ\r\n"),
        ] {
            let lenient = ClientFinal::parse(&message).unwrap();
            assert_eq!(lenient, strict, "{message:?}");
            let auth = auth_message(&first, S_FIRST, &lenient.without_proof());
            assert!(creds.verify_proof(&auth, &lenient.proof), "{message:?}");
        }
        assert_eq!(
            ClientFinal::parse(&format!("c=biws,r={nonce},p=dHzb*apW")),
            Err(ScramError::Malformed("proof is not base64"))
        );
    }

    /// A client-first message without the `n,,` GS2 header reads as the RFC's with it.
    #[test]
    fn client_first_without_gs2_header() {
        let strict = ClientFirst::parse(C_FIRST).unwrap();
        assert_eq!(
            ClientFirst::parse("n=user,r=rOprNGfwEbeRWgbNEkqO").unwrap(),
            strict
        );
        assert_eq!(
            ClientFirst::parse("n,,n=user,r=rOprNGfwEbeRWgbNEkqO\n").unwrap(),
            strict
        );
        assert_eq!(
            ClientFirst::parse("r=rOprNGfwEbeRWgbNEkqO,n=user"),
            Err(ScramError::Malformed("client-first lacks the `n,,` header"))
        );
    }

    /// The salt and the verifier are read the same lenient way on the client side.
    #[test]
    fn unpadded_salt_and_verifier() {
        let server_first = ServerFirst::parse(
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ,i=4096",
        )
        .unwrap();
        assert_eq!(server_first, ServerFirst::parse(S_FIRST).unwrap());
        assert_eq!(
            parse_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4\n").unwrap(),
            parse_server_final(S_FINAL).unwrap()
        );
    }

    #[test]
    fn user_names_are_escaped() {
        let first = ClientFirst {
            username: "a,b=c".into(),
            nonce: "xyz".into(),
        };
        assert_eq!(first.to_message(), "n,,n=a=2Cb=3Dc,r=xyz");
        assert_eq!(ClientFirst::parse(&first.to_message()).unwrap(), first);
        assert_eq!(
            ClientFirst::parse("n,,n=a=2Xb,r=x"),
            Err(ScramError::Malformed("bad `=` escape in user name"))
        );
    }

    #[test]
    fn refuses_bad_messages() {
        assert_eq!(
            ClientFirst::parse("y,,n=user,r=abc"),
            Err(ScramError::ChannelBinding)
        );
        assert!(matches!(
            ClientFirst::parse("n,,n=user"),
            Err(ScramError::Malformed(_))
        ));
        assert!(matches!(
            ClientFirst::parse("n,,n=user,r=a b"),
            Err(ScramError::Malformed(_))
        ));
        assert_eq!(
            ServerFirst::parse("e=unknown-user"),
            Err(ScramError::ServerError("unknown-user".into()))
        );
        assert!(matches!(
            ServerFirst::parse("r=abc,s=!!,i=4096"),
            Err(ScramError::Malformed(_))
        ));
        assert_eq!(
            ClientFinal::parse("c=eSws,r=abc,p=AAAA"),
            Err(ScramError::ChannelBinding)
        );
        assert!(matches!(
            ClientFirst::parse(&"n,,n=u,r=".repeat(500)),
            Err(ScramError::Malformed("message too long"))
        ));
    }
}
