//! Haystack authentication: the whole exchange between AuthServer and ScramClient, and every
//! way it can fail.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::net::IpAddr;
use std::time::{Duration, Instant};

use buildwire_haystack::auth::*;

const ITERATIONS: u32 = 4096;

fn server_with(config: AuthConfig) -> AuthServer {
    let mut server = AuthServer::new(config).unwrap();
    server.add_user(User::with_password("ann", "s3cret", Role::Operator, ITERATIONS).unwrap());
    server.add_user(User::with_password("vic", "v1ew", Role::Viewer, ITERATIONS).unwrap());
    server
}

/// Runs a login and returns the final response (LoggedIn on success) and the client.
fn login(
    server: &mut AuthServer,
    user: &str,
    password: &str,
    now: Instant,
) -> (AuthResponse, ScramClient) {
    let mut client = ScramClient::new(user, password).unwrap();
    let mut header = client.hello_header();
    for _ in 0..3 {
        match server.handle(Some(&header), now) {
            AuthResponse::Challenge { www_authenticate } => {
                header = client.on_challenge(&www_authenticate).unwrap();
            }
            other => return (other, client),
        }
    }
    panic!("login did not finish in three round trips");
}

fn bearer(token: &str) -> String {
    format!("BEARER authToken={token}")
}

#[test]
fn login_then_bearer_requests() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let (response, mut client) = login(&mut server, "ann", "s3cret", now);
    assert_eq!(response.status(), 200);
    let AuthResponse::LoggedIn {
        authentication_info,
        session,
    } = response
    else {
        panic!("{response:?}");
    };
    assert_eq!(
        session,
        Session {
            user: "ann".into(),
            role: Role::Operator
        }
    );
    let token = client.on_success(&authentication_info).unwrap();
    assert!(token.len() >= 32 && token.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(
        server.handle(Some(&bearer(&token)), now),
        AuthResponse::Authorized(Session {
            user: "ann".into(),
            role: Role::Operator
        })
    );
    // Scheme names are case-insensitive.
    assert!(matches!(
        server.handle(Some(&format!("bearer authToken={token}")), now),
        AuthResponse::Authorized(_)
    ));
}

#[test]
fn wire_format_follows_the_spec() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    // HELLO with base64url, no padding: "ann" -> "YW5u".
    let AuthResponse::Challenge { www_authenticate } =
        server.handle(Some("HELLO username=YW5u"), now)
    else {
        panic!()
    };
    let h = AuthHeader::parse(&www_authenticate, true).unwrap();
    assert_eq!(h.scheme, "SCRAM");
    assert_eq!(h.param("hash"), Some("SHA-256"));
    let token = h.param("handshakeToken").unwrap();
    assert!(token.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert!(h.param("data").is_none());
}

#[test]
fn wrong_password_is_forbidden_and_then_throttled() {
    let config = AuthConfig {
        max_failures: 3,
        ..AuthConfig::default()
    };
    let mut server = server_with(config);
    let now = Instant::now();
    for _ in 0..3 {
        let (response, _) = login(&mut server, "ann", "wrong", now);
        assert_eq!(response.status(), 403, "{response:?}");
    }
    let (response, _) = login(&mut server, "ann", "s3cret", now);
    assert_eq!(
        response,
        AuthResponse::Throttled {
            retry_after: Duration::from_secs(1)
        }
    );
    assert_eq!(response.status(), 429);
    // Other users are not affected, and the lockout ends.
    assert_eq!(login(&mut server, "vic", "v1ew", now).0.status(), 200);
    let later = now + Duration::from_secs(2);
    assert_eq!(login(&mut server, "ann", "s3cret", later).0.status(), 200);
}

#[test]
fn unknown_user_gets_a_challenge_then_403() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let mut client = ScramClient::new("mallory", "x").unwrap();
    let AuthResponse::Challenge { www_authenticate } =
        server.handle(Some(&client.hello_header()), now)
    else {
        panic!()
    };
    let next = client.on_challenge(&www_authenticate).unwrap();
    let AuthResponse::Challenge { www_authenticate } = server.handle(Some(&next), now) else {
        panic!()
    };
    // The decoy salt is stable for a name, so probing twice tells nothing.
    let salt_of = |challenge: &str| {
        let h = AuthHeader::parse(challenge, true).unwrap();
        let server_first = h.required_base64("data").unwrap();
        server_first
            .split(",s=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_owned()
    };
    let first_salt = salt_of(&www_authenticate);
    let last = client.on_challenge(&www_authenticate).unwrap();
    assert_eq!(server.handle(Some(&last), now).status(), 403);

    let mut again = ScramClient::new("mallory", "y").unwrap();
    let AuthResponse::Challenge {
        www_authenticate: c1,
    } = server.handle(Some(&again.hello_header()), now)
    else {
        panic!()
    };
    let next = again.on_challenge(&c1).unwrap();
    let AuthResponse::Challenge {
        www_authenticate: c2,
    } = server.handle(Some(&next), now)
    else {
        panic!()
    };
    assert_eq!(salt_of(&c2), first_salt);
}

#[test]
fn tokens_expire_when_idle_and_on_logout() {
    let config = AuthConfig {
        token_idle_timeout: Duration::from_secs(10),
        ..AuthConfig::default()
    };
    let mut server = server_with(config);
    let t0 = Instant::now();
    let (
        AuthResponse::LoggedIn {
            authentication_info,
            ..
        },
        mut client,
    ) = login(&mut server, "vic", "v1ew", t0)
    else {
        panic!()
    };
    let token = client.on_success(&authentication_info).unwrap();
    // Use keeps it alive.
    let t1 = t0 + Duration::from_secs(8);
    assert_eq!(server.handle(Some(&bearer(&token)), t1).status(), 200);
    let t2 = t1 + Duration::from_secs(8);
    assert_eq!(server.handle(Some(&bearer(&token)), t2).status(), 200);
    // Idle too long.
    let t3 = t2 + Duration::from_secs(11);
    assert_eq!(server.handle(Some(&bearer(&token)), t3).status(), 401);

    let (
        AuthResponse::LoggedIn {
            authentication_info,
            ..
        },
        mut client,
    ) = login(&mut server, "vic", "v1ew", t3)
    else {
        panic!()
    };
    let token = client.on_success(&authentication_info).unwrap();
    assert!(server.logout(&token));
    assert_eq!(server.handle(Some(&bearer(&token)), t3).status(), 401);
    assert!(!server.logout(&token));
}

#[test]
fn handshakes_expire_and_cannot_be_replayed() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let mut client = ScramClient::new("ann", "s3cret").unwrap();
    let AuthResponse::Challenge { www_authenticate } =
        server.handle(Some(&client.hello_header()), now)
    else {
        panic!()
    };
    let first = client.on_challenge(&www_authenticate).unwrap();
    let late = now + Duration::from_secs(61);
    assert_eq!(server.handle(Some(&first), late).status(), 403);
    // The handshake is gone after its use, so the same message cannot be sent twice.
    assert_eq!(server.handle(Some(&first), now).status(), 403);
}

#[test]
fn handshake_table_is_bounded() {
    let config = AuthConfig {
        max_handshakes: 3,
        ..AuthConfig::default()
    };
    let mut server = server_with(config);
    let now = Instant::now();
    let mut client = ScramClient::new("ann", "s3cret").unwrap();
    let AuthResponse::Challenge {
        www_authenticate: first_challenge,
    } = server.handle(Some(&client.hello_header()), now)
    else {
        panic!("no challenge")
    };
    for _ in 0..3 {
        assert_eq!(
            server.handle(Some("HELLO username=YW5u"), now).status(),
            401
        );
    }
    // Full: the oldest handshake made room for the newest, so the first login is gone
    // (issue 30: a full table no longer refuses everyone with 503).
    let first = client.on_challenge(&first_challenge).unwrap();
    assert_eq!(server.handle(Some(&first), now).status(), 403);
    // Expired handshakes leave too.
    let later = now + Duration::from_secs(61);
    assert_eq!(
        server.handle(Some("HELLO username=YW5u"), later).status(),
        401
    );
}

/// Logs `user` in from `source`, all at `now`; the final status.
fn login_from(
    server: &mut AuthServer,
    user: &str,
    password: &str,
    source: IpAddr,
    now: Instant,
) -> u16 {
    let mut client = ScramClient::new(user, password).unwrap();
    let mut header = client.hello_header();
    loop {
        match server.handle_from(Some(&header), Some(source), now) {
            AuthResponse::Challenge { www_authenticate } => {
                header = client.on_challenge(&www_authenticate).unwrap();
            }
            other => return other.status(),
        }
    }
}

#[test]
fn a_hello_flood_from_one_address_locks_out_nobody_else() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let flooder = IpAddr::from([127, 0, 0, 66]);
    let mut refused = 0;
    for _ in 0..10_000 {
        let answer = server.handle_from(Some("HELLO username=c3RyYW5nZXI"), Some(flooder), now);
        if answer.status() == 429 {
            refused += 1;
        }
    }
    // The flooding address holds its share (64 by default) and no more.
    assert_eq!(refused, 10_000 - 64);
    assert_eq!(
        login_from(
            &mut server,
            "ann",
            "s3cret",
            IpAddr::from([127, 0, 0, 2]),
            now
        ),
        200
    );
}

#[test]
fn a_hello_flood_from_many_addresses_still_lets_a_quick_login_through() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    for i in 0u32..30_000 {
        let [_, b, c, d] = i.to_be_bytes();
        let source = IpAddr::from([127, b, c, d]);
        let answer = server.handle_from(Some("HELLO username=c3RyYW5nZXI"), Some(source), now);
        assert_eq!(answer.status(), 401, "HELLO {i} refused");
    }
    assert_eq!(
        login_from(
            &mut server,
            "ann",
            "s3cret",
            IpAddr::from([10, 0, 0, 1]),
            now
        ),
        200
    );
}

#[test]
fn a_lockout_holds_for_handshakes_opened_before_it() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let source = IpAddr::from([127, 0, 0, 9]);
    // A guesser opens handshakes while the user is not locked out...
    let mut pending = Vec::new();
    for _ in 0..20 {
        let mut client = ScramClient::new("ann", "guess").unwrap();
        let AuthResponse::Challenge { www_authenticate } =
            server.handle_from(Some(&client.hello_header()), Some(source), now)
        else {
            panic!("no challenge")
        };
        let first = client.on_challenge(&www_authenticate).unwrap();
        let AuthResponse::Challenge { www_authenticate } =
            server.handle_from(Some(&first), Some(source), now)
        else {
            panic!("no server-first")
        };
        pending.push(client.on_challenge(&www_authenticate).unwrap());
    }
    // ...then sends every final message at once: after the fifth failure, the rest are
    // refused without being checked.
    let statuses: Vec<u16> = pending
        .iter()
        .map(|last| server.handle_from(Some(last), Some(source), now).status())
        .collect();
    assert_eq!(statuses[..5], [403; 5]);
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    // And the lockout grows while the guessing goes on.
    let later = now + Duration::from_secs(2);
    assert_eq!(login_from(&mut server, "ann", "guess", source, later), 403);
    assert_eq!(login_from(&mut server, "ann", "s3cret", source, later), 429);
}

#[test]
fn malformed_headers_are_bad_requests() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    assert_eq!(server.handle(None, now).status(), 401);
    assert_eq!(server.handle(Some("HELLO"), now).status(), 400);
    assert_eq!(server.handle(Some("HELLO username=%%%"), now).status(), 400);
    assert_eq!(server.handle(Some("HELLO username="), now).status(), 400);
    // Another scheme is credentials we do not take: 401 with the HELLO challenge.
    assert_eq!(server.handle(Some("BASIC dXNlcjpwYXNz"), now).status(), 401);
    assert_eq!(server.handle(Some("SCRAM data=abc"), now).status(), 400);
    assert_eq!(
        server
            .handle(Some("SCRAM handshakeToken=x, data=bm8"), now)
            .status(),
        403
    );
    assert_eq!(
        server.handle(Some("BEARER authToken=nope"), now).status(),
        401
    );
    let AuthResponse::Challenge { www_authenticate } =
        server.handle(Some("HELLO username=YW5u"), now)
    else {
        panic!()
    };
    let token = AuthHeader::parse(&www_authenticate, true).unwrap();
    let token = token.param("handshakeToken").unwrap();
    // client-first for another user than HELLO's.
    let data = base64url("n,,n=vic,r=abc");
    let response = server.handle(
        Some(&format!("SCRAM handshakeToken={token}, data={data}")),
        now,
    );
    assert_eq!(response.status(), 403);
}

#[test]
fn client_refuses_weak_or_hostile_servers() {
    let mut client = ScramClient::new("ann", "s3cret").unwrap();
    assert!(matches!(
        client.on_challenge("SCRAM handshakeToken=t, hash=SHA-1"),
        Err(ClientError::Unsupported(_))
    ));
    assert!(matches!(
        client.on_challenge("PLAINTEXT handshakeToken=t"),
        Err(ClientError::Unsupported(_))
    ));
    let mut client = ScramClient::new("ann", "s3cret").unwrap();
    client
        .on_challenge("SCRAM handshakeToken=t, hash=SHA-256")
        .unwrap();
    // A nonce that does not extend ours.
    let server_first = base64url("r=other,s=c2FsdA==,i=4096");
    assert_eq!(
        client.on_challenge(&format!(
            "SCRAM handshakeToken=t, hash=SHA-256, data={server_first}"
        )),
        Err(ClientError::Scram(ScramError::NonceMismatch))
    );
}

#[test]
fn client_rejects_a_server_that_cannot_prove_the_password() {
    let mut server = server_with(AuthConfig::default());
    let now = Instant::now();
    let (
        AuthResponse::LoggedIn {
            authentication_info,
            ..
        },
        mut client,
    ) = login(&mut server, "ann", "s3cret", now)
    else {
        panic!()
    };
    let forged = AuthHeader::parse(&authentication_info, false).unwrap();
    let token = forged.param("authToken").unwrap();
    let fake = format!(
        "authToken={token}, hash=SHA-256, data={}",
        base64url("v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    );
    assert_eq!(
        client.on_success(&fake),
        Err(ClientError::ServerNotVerified)
    );
}

fn base64url(text: &str) -> String {
    use std::fmt::Write;
    // Tests use a tiny local encoder so the crate's own encoder is not testing itself.
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            let _ = write!(
                out,
                "{}",
                char::from(T[((n >> (18 - 6 * i)) & 63) as usize])
            );
        }
    }
    out
}
