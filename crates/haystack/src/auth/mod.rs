//! Project Haystack HTTP authentication (the Haystack "Auth" chapter), sans-IO.
//!
//! The exchange, as HTTP headers on any request (usually `GET /api/about`):
//!
//! 1. `Authorization: HELLO username=<base64url(user)>` → 401 with
//!    `WWW-Authenticate: SCRAM handshakeToken=<t>, hash=SHA-256`.
//! 2. `Authorization: SCRAM handshakeToken=<t>, data=<base64url(client-first)>` → 401 with
//!    `WWW-Authenticate: SCRAM data=<base64url(server-first)>, handshakeToken=<t>, hash=SHA-256`.
//! 3. `Authorization: SCRAM handshakeToken=<t>, data=<base64url(client-final)>` → 200 with
//!    `Authentication-Info: data=<base64url(server-final)>, authToken=<token>, hash=SHA-256`.
//! 4. Every later request: `Authorization: BEARER authToken=<token>` (or RFC 6750's
//!    `Bearer <token>`).
//!
//! What the server accepts beyond the letter of the spec, because the reference server
//! (Haxall) does and real clients rely on it, is written at the code: base64 of either
//! alphabet, padded or not, with whitespace around it (`decode_base64` in `header.rs`); a
//! client-first message without the `n,,` GS2 header (`ClientFirst::parse` in `scram.rs`);
//! the RFC 6750 bearer form, and other schemes answered with 401 ([`bearer_token`],
//! [`AuthServer::handle`]); and any failure of the client-final message is 403, never 400.
//!
//! The SCRAM messages inside `data` are those of RFC 5802 with SHA-256 (RFC 7677).
//! [`AuthServer`] is the server's state machine and [`ScramClient`] the client's; neither does
//! I/O or reads the clock: callers pass header values and the current time in, and get header
//! values and HTTP status codes out.

mod client;
mod handshakes;
mod header;
mod scram;
mod server;
mod token;
mod users;

pub use client::{ClientError, ScramClient};
pub use header::{AuthHeader, HeaderError, MAX_HEADER_LEN, MAX_PARAMS, bearer_token};
pub use scram::{ScramCredentials, ScramError};
pub use server::{AuthConfig, AuthResponse, AuthServer, Session, session_key_hex};
pub use users::{Role, User, UserFileError, parse_user_file};
