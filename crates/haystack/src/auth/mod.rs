//! Project Haystack HTTP authentication (the Haystack "Auth" chapter), sans-IO.
//!
//! The exchange, as HTTP headers on any request (usually `GET /api/about`):
//!
//! 1. `Authorization: HELLO username=<base64url(user)>` → 401 with
//!    `WWW-Authenticate: SCRAM handshakeToken=<t>, hash=SHA-256`.
//! 2. `Authorization: SCRAM handshakeToken=<t>, data=<base64url(client-first)>` → 401 with
//!    `WWW-Authenticate: SCRAM handshakeToken=<t>, hash=SHA-256, data=<base64url(server-first)>`.
//! 3. `Authorization: SCRAM handshakeToken=<t>, data=<base64url(client-final)>` → 200 with
//!    `Authentication-Info: authToken=<token>, hash=SHA-256, data=<base64url(server-final)>`.
//! 4. Every later request: `Authorization: BEARER authToken=<token>`.
//!
//! The SCRAM messages inside `data` are those of RFC 5802 with SHA-256 (RFC 7677).
//! [`AuthServer`] is the server's state machine and [`ScramClient`] the client's; neither does
//! I/O or reads the clock: callers pass header values and the current time in, and get header
//! values and HTTP status codes out.

mod client;
mod header;
mod scram;
mod server;
mod token;
mod users;

pub use client::{ClientError, ScramClient};
pub use header::{AuthHeader, HeaderError, MAX_HEADER_LEN, MAX_PARAMS};
pub use scram::{ScramCredentials, ScramError};
pub use server::{AuthConfig, AuthResponse, AuthServer, Session, session_key_hex};
pub use users::{Role, User, UserFileError, parse_user_file};
