//! The server side of Haystack authentication: a state machine fed with `Authorization`
//! header values and the current time.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::handshakes::{HandshakeTable, Refusal};
use super::header::{AuthHeader, bearer_token, encode_base64url};
use super::scram::{
    ClientFinal, ClientFirst, HASH_NAME, ServerFirst, auth_message, hmac, server_final_message,
};
use super::token::{random_alphanumeric, random_bytes};
use super::users::{Role, User};

/// Limits and timings of an [`AuthServer`].
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// How long a client has between HELLO and its final SCRAM message.
    pub handshake_timeout: Duration,
    /// Most handshakes in progress from one source address (see [`AuthServer::handle_from`]).
    pub max_handshakes_per_source: usize,
    /// A bearer token unused for this long expires.
    pub token_idle_timeout: Duration,
    /// Most handshakes in progress at once; when full, the oldest makes room.
    pub max_handshakes: usize,
    /// Most logged-in sessions at once.
    pub max_sessions: usize,
    /// Failed logins of one user name before it is locked out for a while.
    pub max_failures: u32,
    /// First lockout; each further failure doubles it, up to `lockout_max`.
    pub lockout_base: Duration,
    /// Longest lockout.
    pub lockout_max: Duration,
    /// Iteration count shown to unknown users, so that they cannot be told from real ones.
    pub decoy_iterations: u32,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(15),
            max_handshakes_per_source: 64,
            token_idle_timeout: Duration::from_secs(3600),
            max_handshakes: 10_000,
            max_sessions: 100_000,
            max_failures: 5,
            lockout_base: Duration::from_secs(1),
            lockout_max: Duration::from_secs(300),
            decoy_iterations: 10_000,
        }
    }
}

/// A logged-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// User name.
    pub user: String,
    /// The user's role.
    pub role: Role,
}

/// What the HTTP layer answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthResponse {
    /// The request carries a valid bearer token: serve it.
    Authorized(Session),
    /// 401 with this `WWW-Authenticate` value: the handshake goes on.
    Challenge {
        /// The header value.
        www_authenticate: String,
    },
    /// 200 with this `Authentication-Info` value: the login succeeded.
    LoggedIn {
        /// The header value, carrying the auth token.
        authentication_info: String,
        /// Who logged in.
        session: Session,
    },
    /// 401: no credentials, or an unknown or expired token.
    Unauthorized(String),
    /// 400: the header could not be read.
    BadRequest(String),
    /// 403: the login failed.
    Forbidden(String),
    /// 429: too many failed logins for this user; try again after the delay.
    Throttled {
        /// How long to wait.
        retry_after: Duration,
    },
    /// 429: this address has too many logins in progress; try again after the delay.
    TooManyLogins {
        /// How long to wait.
        retry_after: Duration,
    },
    /// 503: too many sessions at once.
    Busy,
}

impl AuthResponse {
    /// The HTTP status code of this response.
    pub fn status(&self) -> u16 {
        match self {
            AuthResponse::Authorized(_) | AuthResponse::LoggedIn { .. } => 200,
            AuthResponse::Challenge { .. } | AuthResponse::Unauthorized(_) => 401,
            AuthResponse::BadRequest(_) => 400,
            AuthResponse::Forbidden(_) => 403,
            AuthResponse::Throttled { .. } | AuthResponse::TooManyLogins { .. } => 429,
            AuthResponse::Busy => 503,
        }
    }
}

enum Stage {
    /// HELLO answered; waiting for client-first.
    Hello { username: String },
    /// server-first sent; waiting for client-final.
    ServerFirstSent {
        client_first: ClientFirst,
        server_first: String,
    },
}

struct SessionEntry {
    session: Session,
    last_used: Instant,
}

#[derive(Default)]
struct Failures {
    count: u32,
    locked_until: Option<Instant>,
}

/// Haystack authentication for one server: users, handshakes in progress, bearer tokens, and
/// failed-login throttling, all bounded.
///
/// ```
/// # use buildwire_haystack::auth::*;
/// # use std::time::Instant;
/// let mut server = AuthServer::new(AuthConfig::default())?;
/// server.add_user(User::with_password("ann", "s3cret", Role::Operator, 4096)?);
/// let mut client = ScramClient::new("ann", "s3cret")?;
/// let now = Instant::now();
/// let mut header = client.hello_header();
/// let token = loop {
///     match server.handle(Some(&header), now) {
///         AuthResponse::Challenge { www_authenticate } => {
///             header = client.on_challenge(&www_authenticate)?;
///         }
///         AuthResponse::LoggedIn { authentication_info, .. } => {
///             break client.on_success(&authentication_info)?;
///         }
///         other => panic!("login failed: {other:?}"),
///     }
/// };
/// let bearer = format!("BEARER authToken={token}");
/// assert!(matches!(server.handle(Some(&bearer), now), AuthResponse::Authorized(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AuthServer {
    config: AuthConfig,
    users: HashMap<String, User>,
    /// Key for decoy salts of unknown users (stable per user name within this server).
    decoy_key: [u8; 32],
    handshakes: HandshakeTable<Stage>,
    /// Keyed by SHA-256 of the token, so a lookup's timing says nothing about token bytes.
    sessions: HashMap<[u8; 32], SessionEntry>,
    failures: HashMap<String, Failures>,
}

impl AuthServer {
    /// A server with no users.
    pub fn new(config: AuthConfig) -> Result<Self, super::token::RandomError> {
        let handshakes: HandshakeTable<Stage> =
            HandshakeTable::new(config.max_handshakes, config.max_handshakes_per_source);
        Ok(Self {
            config,
            users: HashMap::new(),
            decoy_key: random_bytes()?,
            handshakes,
            sessions: HashMap::new(),
            failures: HashMap::new(),
        })
    }

    /// Adds or replaces a user.
    pub fn add_user(&mut self, user: User) {
        self.users.insert(user.name.clone(), user);
    }

    /// Number of sessions currently held (expired ones may still be counted until purged).
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How long an unused bearer token stays valid.
    pub fn token_idle_timeout(&self) -> Duration {
        self.config.token_idle_timeout
    }

    /// Accepts a bearer token that another server process on a shared store issued (its
    /// session was looked up there). Returns false when the session table is full.
    pub fn adopt_session(&mut self, token: &str, session: Session, now: Instant) -> bool {
        self.purge_sessions(now);
        if self.sessions.len() >= self.config.max_sessions {
            return false;
        }
        self.sessions.insert(
            token_key(token),
            SessionEntry {
                session,
                last_used: now,
            },
        );
        true
    }

    /// Ends the session of a bearer token (the `close` op). Returns whether it existed.
    pub fn logout(&mut self, token: &str) -> bool {
        self.sessions.remove(&token_key(token)).is_some()
    }

    /// Answers one request's `Authorization` header (`None` when it has none), from a
    /// source whose address is unknown: [`AuthServer::handle_from`] with no address, so
    /// only the table's overall bound applies.
    pub fn handle(&mut self, authorization: Option<&str>, now: Instant) -> AuthResponse {
        self.handle_from(authorization, None, now)
    }

    /// Answers one request's `Authorization` header (`None` when it has none) from the
    /// client at `source`, which holds at most `max_handshakes_per_source` logins in
    /// progress at once.
    pub fn handle_from(
        &mut self,
        authorization: Option<&str>,
        source: Option<IpAddr>,
        now: Instant,
    ) -> AuthResponse {
        let Some(value) = authorization else {
            return AuthResponse::Unauthorized(
                "authentication required: start with `Authorization: HELLO username=...`".into(),
            );
        };
        // The bearer scheme in either form (see `bearer_token`): checked before the
        // parameters are read, since RFC 6750's `Bearer <token>` has none.
        if let Some(token) = bearer_token(value) {
            return self.bearer(&token, now);
        }
        let scheme = value.trim().split(' ').next().unwrap_or_default();
        if !["HELLO", "SCRAM", "BEARER"]
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scheme))
        {
            // Decision: another scheme (`Basic ...`, `Digest ...`) is not a malformed
            // request but credentials we do not take: 401 with the HELLO challenge, so that
            // a client learns how to log in, as for a request without credentials.
            return AuthResponse::Unauthorized(format!(
                "auth scheme `{scheme}` is not supported: start with `Authorization: HELLO \
                 username=...`"
            ));
        }
        let header = match AuthHeader::parse(value, true) {
            Ok(h) => h,
            Err(e) => return AuthResponse::BadRequest(e.to_string()),
        };
        match header.scheme.as_str() {
            "HELLO" => self.hello(&header, source, now),
            "SCRAM" => self.scram(&header, now),
            _ => AuthResponse::Unauthorized("the BEARER header has no authToken".into()),
        }
    }

    fn hello(&mut self, header: &AuthHeader, source: Option<IpAddr>, now: Instant) -> AuthResponse {
        let username = match header.required_base64("username") {
            Ok(u) if !u.is_empty() => u,
            Ok(_) => return AuthResponse::BadRequest("empty user name".into()),
            Err(e) => return AuthResponse::BadRequest(e.to_string()),
        };
        if let Some(wait) = self.lockout(&username, now) {
            return AuthResponse::Throttled { retry_after: wait };
        }
        // Unknown users get the same challenge as real ones and fail only at the end.
        self.start_handshake(Stage::Hello { username }, source, now, None)
    }

    fn scram(&mut self, header: &AuthHeader, now: Instant) -> AuthResponse {
        let token = match header.required("handshakeToken") {
            Ok(t) => t.to_owned(),
            Err(e) => return AuthResponse::BadRequest(e.to_string()),
        };
        let Some((stage, expires, source)) = self.handshakes.take(&token) else {
            return AuthResponse::Forbidden("unknown or finished handshake: start again".into());
        };
        if now >= expires {
            return AuthResponse::Forbidden("handshake expired: start again with HELLO".into());
        }
        let data = header.required_base64("data");
        match stage {
            Stage::Hello { username } => match data {
                Ok(data) => self.server_first(token, &username, &data, source, now),
                Err(e) => AuthResponse::BadRequest(e.to_string()),
            },
            Stage::ServerFirstSent {
                client_first,
                server_first,
            } => match data {
                Ok(data) => self.server_final(&client_first, &server_first, &data, now),
                Err(_) => self.final_failed(&client_first.username, now),
            },
        }
    }

    /// Any failure of the client-final message: 403, which clients report as a failed
    /// login (phable raises its `AuthError` on 403 only; a 400 there reads as a broken
    /// server). It counts towards the user's lockout like a wrong password, and says no
    /// more than a wrong password does.
    fn final_failed(&mut self, username: &str, now: Instant) -> AuthResponse {
        self.record_failure(username, now);
        AuthResponse::Forbidden("invalid user name or password".into())
    }

    fn server_first(
        &mut self,
        token: String,
        hello_user: &str,
        data: &str,
        source: Option<IpAddr>,
        now: Instant,
    ) -> AuthResponse {
        let client_first = match ClientFirst::parse(data) {
            Ok(m) => m,
            Err(e) => return AuthResponse::BadRequest(e.to_string()),
        };
        if client_first.username != hello_user {
            return AuthResponse::Forbidden("the SCRAM user name differs from HELLO's".into());
        }
        let (salt, iterations) = match self.users.get(hello_user) {
            Some(user) => (user.credentials.salt.clone(), user.credentials.iterations),
            None => (self.decoy_salt(hello_user), self.config.decoy_iterations),
        };
        let server_nonce = match random_alphanumeric(24) {
            Ok(n) => n,
            Err(_) => return AuthResponse::Busy,
        };
        let server_first = ServerFirst {
            nonce: format!("{}{server_nonce}", client_first.nonce),
            salt,
            iterations,
        }
        .to_message();
        let data = encode_base64url(server_first.as_bytes());
        let stage = Stage::ServerFirstSent {
            client_first,
            server_first,
        };
        self.start_handshake(stage, source, now, Some((token, data)))
    }

    fn server_final(
        &mut self,
        client_first: &ClientFirst,
        server_first: &str,
        data: &str,
        now: Instant,
    ) -> AuthResponse {
        let username = &client_first.username;
        // A lockout holds for handshakes that began before it, too: otherwise a guesser
        // opens many handshakes while unlocked and sends their final messages later.
        if let Some(wait) = self.lockout(username, now) {
            return AuthResponse::Throttled { retry_after: wait };
        }
        let Ok(client_final) = ClientFinal::parse(data) else {
            return self.final_failed(username, now);
        };
        let expected_nonce = ServerFirst::parse(server_first).map(|s| s.nonce);
        if expected_nonce.as_deref() != Ok(client_final.nonce.as_str()) {
            self.record_failure(username, now);
            return AuthResponse::Forbidden("SCRAM nonce mismatch".into());
        }
        let auth = auth_message(client_first, server_first, &client_final.without_proof());
        let verified = self
            .users
            .get(username)
            .filter(|u| u.credentials.verify_proof(&auth, &client_final.proof))
            .map(|u| (u.role, u.credentials.server_signature(&auth)));
        let Some((role, signature)) = verified else {
            return self.final_failed(username, now);
        };
        self.failures.remove(username);
        self.purge_sessions(now);
        if self.sessions.len() >= self.config.max_sessions {
            return AuthResponse::Busy;
        }
        let Ok(auth_token) = random_alphanumeric(40) else {
            return AuthResponse::Busy;
        };
        let session = Session {
            user: username.clone(),
            role,
        };
        self.sessions.insert(
            token_key(&auth_token),
            SessionEntry {
                session: session.clone(),
                last_used: now,
            },
        );
        // `data` first: an older client takes the first parameter for `data`.
        let info = AuthHeader::new(
            "",
            &[
                (
                    "data",
                    &encode_base64url(server_final_message(&signature).as_bytes()),
                ),
                ("authToken", auth_token.as_str()),
                ("hash", HASH_NAME),
            ],
        );
        AuthResponse::LoggedIn {
            authentication_info: info.to_header_value(),
            session,
        }
    }

    fn bearer(&mut self, token: &str, now: Instant) -> AuthResponse {
        let key = token_key(token);
        let idle = self.config.token_idle_timeout;
        match self.sessions.get_mut(&key) {
            Some(entry) if now.saturating_duration_since(entry.last_used) < idle => {
                entry.last_used = now;
                AuthResponse::Authorized(entry.session.clone())
            }
            Some(_) => {
                self.sessions.remove(&key);
                AuthResponse::Unauthorized("auth token expired: log in again".into())
            }
            None => AuthResponse::Unauthorized("unknown auth token: log in again".into()),
        }
    }

    /// Stores a handshake under `token` (a new one when `None`) and builds the challenge.
    fn start_handshake(
        &mut self,
        stage: Stage,
        source: Option<IpAddr>,
        now: Instant,
        existing: Option<(String, String)>,
    ) -> AuthResponse {
        let (token, data) = match existing {
            Some((token, data)) => (token, Some(data)),
            None => match random_alphanumeric(32) {
                Ok(token) => (token, None),
                Err(_) => return AuthResponse::Busy,
            },
        };
        // The order `data`, `handshakeToken`, `hash`: an older client reads the headers
        // by position and takes the first parameter for `data`.
        let mut params = Vec::with_capacity(3);
        if let Some(data) = &data {
            params.push(("data", data.as_str()));
        }
        params.extend([("handshakeToken", token.as_str()), ("hash", HASH_NAME)]);
        let www_authenticate = AuthHeader::new("SCRAM", &params).to_header_value();
        let expires = now + self.config.handshake_timeout;
        match self.handshakes.insert(token, stage, source, expires, now) {
            Ok(()) => AuthResponse::Challenge { www_authenticate },
            Err(Refusal::SourceFull) => AuthResponse::TooManyLogins {
                retry_after: self.config.handshake_timeout,
            },
        }
    }

    fn lockout(&self, username: &str, now: Instant) -> Option<Duration> {
        let until = self.failures.get(username)?.locked_until?;
        (until > now).then(|| until - now)
    }

    fn record_failure(&mut self, username: &str, now: Instant) {
        if self.failures.len() >= self.config.max_handshakes
            && !self.failures.contains_key(username)
        {
            self.failures
                .retain(|_, f| f.locked_until.is_some_and(|until| until > now));
        }
        let entry = self.failures.entry(username.to_owned()).or_default();
        entry.count = entry.count.saturating_add(1);
        if entry.count >= self.config.max_failures {
            let doublings = (entry.count - self.config.max_failures).min(16);
            let wait = self
                .config
                .lockout_base
                .saturating_mul(1 << doublings)
                .min(self.config.lockout_max);
            entry.locked_until = Some(now + wait);
        }
    }

    fn purge_sessions(&mut self, now: Instant) {
        if self.sessions.len() >= self.config.max_sessions {
            let idle = self.config.token_idle_timeout;
            self.sessions
                .retain(|_, s| now.saturating_duration_since(s.last_used) < idle);
        }
    }

    fn decoy_salt(&self, username: &str) -> Vec<u8> {
        hmac(&self.decoy_key, username.as_bytes())[..16].to_vec()
    }
}

fn token_key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The SHA-256 of a bearer token in hex: how a shared store keys its session (the token
/// itself is never stored).
pub fn session_key_hex(token: &str) -> String {
    token_key(token)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
