//! Fuzzes the server side of Haystack authentication: any sequence of `Authorization` header
//! values must get an answer without panicking, and never a login without the password.
#![no_main]

use std::time::{Duration, Instant};

use buildwire_haystack::auth::{AuthConfig, AuthResponse, AuthServer, Role, User};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = AuthConfig {
        max_handshakes: 8,
        max_sessions: 8,
        ..AuthConfig::default()
    };
    let mut server = AuthServer::new(config).expect("randomness");
    let user = User::with_password("ann", "s3cret", Role::Viewer, 4096).expect("randomness");
    server.add_user(user);
    let mut now = Instant::now();
    // Each line is one request's header; a line "+" advances the clock by a minute.
    for line in text.lines().take(64) {
        if line == "+" {
            now += Duration::from_secs(60);
            continue;
        }
        let response = server.handle(Some(line), now);
        // Without the password nobody logs in.
        assert!(!matches!(response, AuthResponse::LoggedIn { .. }));
        assert!(server.session_count() <= 8);
    }
});
