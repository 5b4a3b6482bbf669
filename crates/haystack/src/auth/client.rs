//! The client side of Haystack authentication: turns the server's challenges into the next
//! `Authorization` header, and checks the server's signature at the end.

use subtle::ConstantTimeEq;

use super::header::{AuthHeader, HeaderError, encode_base64url};
use super::scram::{
    CHANNEL_BINDING_NONE, ClientFinal, ClientFirst, HASH_NAME, MAX_ITERATIONS, MIN_ITERATIONS,
    ScramError, ServerFirst, auth_message, client_proof, expected_server_signature,
    parse_server_final, salted_password,
};
use super::token::{RandomError, random_alphanumeric};

/// Why a client login failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// A header from the server could not be read.
    #[error("server auth header: {0}")]
    Header(#[from] HeaderError),
    /// A SCRAM message was refused.
    #[error(transparent)]
    Scram(#[from] ScramError),
    /// The server offered something other than SCRAM with SHA-256.
    #[error("server offers `{0}`; buildwire supports SCRAM with SHA-256")]
    Unsupported(String),
    /// A challenge arrived out of order.
    #[error("unexpected auth message from the server at this point of the login")]
    OutOfOrder,
    /// The server proved it does not know the password: it may be an impostor.
    #[error("the server's SCRAM signature is wrong: it may not be the server you think")]
    ServerNotVerified,
    /// No randomness for the nonce.
    #[error(transparent)]
    Random(#[from] RandomError),
}

enum State {
    Start,
    SentClientFirst {
        first: ClientFirst,
    },
    SentClientFinal {
        salted: [u8; 32],
        auth_message: String,
    },
    Done,
}

/// One login of a Haystack client.
pub struct ScramClient {
    username: String,
    password: String,
    nonce: String,
    state: State,
}

impl ScramClient {
    /// A login for `username` with `password`.
    pub fn new(username: &str, password: &str) -> Result<Self, ClientError> {
        Ok(Self {
            username: username.to_owned(),
            password: password.to_owned(),
            nonce: random_alphanumeric(24)?,
            state: State::Start,
        })
    }

    /// The first request's `Authorization` value.
    pub fn hello_header(&self) -> String {
        AuthHeader::new(
            "HELLO",
            &[("username", &encode_base64url(self.username.as_bytes()))],
        )
        .to_header_value()
    }

    /// Answers a 401's `WWW-Authenticate` value with the next `Authorization` value.
    pub fn on_challenge(&mut self, www_authenticate: &str) -> Result<String, ClientError> {
        let header = AuthHeader::parse(www_authenticate, true)?;
        if header.scheme != "SCRAM" {
            return Err(ClientError::Unsupported(header.scheme));
        }
        let hash = header.required("hash")?;
        if !hash.eq_ignore_ascii_case(HASH_NAME) {
            return Err(ClientError::Unsupported(format!("SCRAM with {hash}")));
        }
        let token = header.required("handshakeToken")?.to_owned();
        match std::mem::replace(&mut self.state, State::Done) {
            State::Start => {
                let first = ClientFirst {
                    username: self.username.clone(),
                    nonce: self.nonce.clone(),
                };
                let value = scram_header(&token, &first.to_message());
                self.state = State::SentClientFirst { first };
                Ok(value)
            }
            State::SentClientFirst { first } => {
                // The handshake token is the server's opaque state: echo the latest one.
                // The spec's examples keep one token for the whole exchange, but servers
                // may issue a new one per step (haystack-py does), and refusing that would
                // gain nothing: the nonce check below ties the steps together.
                let server_first_text = header.required_base64("data")?;
                let server_first = ServerFirst::parse(&server_first_text)?;
                if !server_first.nonce.starts_with(&first.nonce)
                    || server_first.nonce.len() == first.nonce.len()
                {
                    return Err(ScramError::NonceMismatch.into());
                }
                if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&server_first.iterations) {
                    return Err(ScramError::Iterations(server_first.iterations).into());
                }
                let salted =
                    salted_password(&self.password, &server_first.salt, server_first.iterations);
                let without_proof = format!("c={CHANNEL_BINDING_NONE},r={}", server_first.nonce);
                let auth = auth_message(&first, &server_first_text, &without_proof);
                let final_message = ClientFinal {
                    channel_binding: CHANNEL_BINDING_NONE.into(),
                    nonce: server_first.nonce,
                    proof: client_proof(&salted, &auth).to_vec(),
                };
                self.state = State::SentClientFinal {
                    salted,
                    auth_message: auth,
                };
                Ok(scram_header(&token, &final_message.to_message()))
            }
            _ => Err(ClientError::OutOfOrder),
        }
    }

    /// Reads the final 200's `Authentication-Info` value, verifies the server's signature,
    /// and returns the auth token for `Authorization: BEARER authToken=...`.
    pub fn on_success(&mut self, authentication_info: &str) -> Result<String, ClientError> {
        let State::SentClientFinal {
            salted,
            auth_message,
        } = std::mem::replace(&mut self.state, State::Done)
        else {
            return Err(ClientError::OutOfOrder);
        };
        let header = AuthHeader::parse(authentication_info, false)?;
        let token = header.required("authToken")?.to_owned();
        // The server's proof is optional in the spec's examples; when sent, it must verify.
        if header.param("data").is_some() {
            let verifier = parse_server_final(&header.required_base64("data")?)?;
            let expected = expected_server_signature(&salted, &auth_message);
            if !bool::from(verifier.ct_eq(&expected)) {
                return Err(ClientError::ServerNotVerified);
            }
        }
        Ok(token)
    }
}

fn scram_header(token: &str, message: &str) -> String {
    AuthHeader::new(
        "SCRAM",
        &[
            ("handshakeToken", token),
            ("data", &encode_base64url(message.as_bytes())),
        ],
    )
    .to_header_value()
}
