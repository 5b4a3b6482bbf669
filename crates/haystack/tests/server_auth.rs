//! Haystack authentication over HTTP against a real server: HELLO, SCRAM, BEARER, the 401 and
//! 403 of the Auth chapter, `close`, token expiry, lockout, users files, open servers.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::time::Duration;

use buildwire_haystack::Value;
use buildwire_haystack::auth::{AuthConfig, Role, ScramClient};
use buildwire_haystack::server::{HaystackServer, HaystackServerConfig, user_file_line};
use reqwest::header::AUTHORIZATION;
use server_support::*;

#[tokio::test]
async fn login_use_and_close() {
    let server = start().await;
    assert!(server.auth_enabled());
    let mut http = Http::new(&server.url());
    // Without credentials: 401 with a challenge to start with HELLO.
    let a = http.get("about", "", None).await;
    assert_eq!(a.status, 401);
    assert!(a.header("www-authenticate").is_some());
    let token = http.login("op", PASSWORD).await.unwrap();
    assert!(token.len() >= 32 && token.bytes().all(|b| b.is_ascii_alphanumeric()));
    let about = http.get("about", "", None).await.zinc();
    assert_eq!(about.get(0, "userName"), Some(&Value::Str("op".into())));
    assert_eq!(
        about.get(0, "userRole"),
        Some(&Value::Str("operator".into()))
    );
    // A made-up token is refused.
    let mut forged = http.clone();
    forged.token = Some("x".repeat(40));
    assert_eq!(forged.get("about", "", None).await.status, 401);
    // close has side effects: GET is refused (405, POST allowed); POST ends the session.
    let get_close = http.get("close", "", None).await;
    assert_eq!(get_close.status, 405);
    assert_eq!(get_close.header("allow"), Some("POST"));
    assert_eq!(http.get("about", "", None).await.status, 200);
    assert_eq!(http.post("close", "", None, None).await.status, 200);
    assert_eq!(http.get("about", "", None).await.status, 401);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_login_step_answers_with_the_op_and_the_server_proves_itself() {
    let server = start().await;
    let client = reqwest::Client::new();
    let url = format!("{}/about", server.url());
    let mut scram = ScramClient::new("admin", PASSWORD).unwrap();
    let r = client
        .get(&url)
        .header(AUTHORIZATION, scram.hello_header())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let www = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(
        www.starts_with("SCRAM ")
            && www.contains("hash=SHA-256")
            && www.contains("handshakeToken=")
    );
    let next = scram.on_challenge(&www).unwrap();
    let r = client
        .get(&url)
        .header(AUTHORIZATION, next)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let www = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let last = scram.on_challenge(&www).unwrap();
    let r = client
        .get(&url)
        .header(AUTHORIZATION, last)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let info = r.headers()["authentication-info"]
        .to_str()
        .unwrap()
        .to_owned();
    // on_success checks the server's signature in `data`.
    assert!(info.contains("data="));
    scram.on_success(&info).unwrap();
    let body = r.text().await.unwrap();
    assert!(body.contains("haystackVersion"), "{body}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn wrong_passwords_and_unknown_users_get_403_after_a_challenge() {
    let server = start().await;
    let mut http = Http::new(&server.url());
    assert_eq!(http.login("op", "wrong").await, Err(403));
    // An unknown user gets the same challenges as a real one, then 403.
    assert_eq!(http.login("mallory", PASSWORD).await, Err(403));
    // A garbled SCRAM message is a 400; a stale handshake token a 401 or 403.
    let r = http
        .client
        .get(format!("{}/about", server.url()))
        .header(AUTHORIZATION, "SCRAM handshakeToken=nope, data=%%%")
        .send()
        .await
        .unwrap();
    assert!(
        matches!(r.status().as_u16(), 400 | 401 | 403),
        "{}",
        r.status()
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn failed_logins_lock_the_user_out_for_a_while() {
    let config = AuthConfig {
        max_failures: 3,
        lockout_base: Duration::from_secs(60),
        ..AuthConfig::default()
    };
    let server = HaystackServer::start(server_config().auth_config(config))
        .await
        .unwrap();
    let mut http = Http::new(&server.url());
    for _ in 0..3 {
        assert_eq!(http.login("viewer", "bad").await, Err(403));
    }
    // Locked: even the right password is refused, with Retry-After.
    let r = http
        .client
        .get(format!("{}/about", server.url()))
        .header(
            AUTHORIZATION,
            ScramClient::new("viewer", PASSWORD).unwrap().hello_header(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert!(r.headers().get("retry-after").is_some());
    // Other users are not affected.
    assert!(http.login("op", PASSWORD).await.is_ok());
    server.stop().await.unwrap();
}

#[tokio::test]
async fn idle_tokens_expire() {
    let config = AuthConfig {
        token_idle_timeout: Duration::from_millis(300),
        ..AuthConfig::default()
    };
    let server = HaystackServer::start(server_config().auth_config(config))
        .await
        .unwrap();
    let http = logged_in(&server, "viewer").await;
    assert_eq!(http.get("about", "", None).await.status, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(http.get("about", "", None).await.status, 401);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn users_files_and_name_password_role_triples() {
    let dir = std::env::temp_dir().join(format!("bw-users-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("users.txt");
    let line = user_file_line("carol", "c4rol!", Role::Operator, 4096).unwrap();
    assert!(!line.contains("c4rol!"));
    std::fs::write(&file, format!("# users\n{line}\n")).unwrap();
    let server = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra())
            .users_file(&file)
            .user_spec("dave:pass:with:colons:viewer"),
    )
    .await
    .unwrap();
    let mut http = Http::new(&server.url());
    http.login("carol", "c4rol!").await.unwrap();
    let about = http.get("about", "", None).await.zinc();
    assert_eq!(
        about.get(0, "userRole"),
        Some(&Value::Str("operator".into()))
    );
    http.login("dave", "pass:with:colons").await.unwrap();
    server.stop().await.unwrap();
    let bad = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .user_spec("eve:pw:root"),
    )
    .await;
    assert!(bad.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn servers_without_users_are_open_and_can_be_read_only() {
    let open = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra()),
    )
    .await
    .unwrap();
    assert!(!open.auth_enabled());
    let http = Http::new(&open.url());
    assert_eq!(http.get("about", "", None).await.status, 200);
    let g = http
        .zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@bw-sp,8,70°F\n")
        .await;
    assert!(!is_error(&g), "anonymous admin by default");
    open.stop().await.unwrap();
    let read_only = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra())
            .anonymous(Some(Role::Viewer)),
    )
    .await
    .unwrap();
    let http = Http::new(&read_only.url());
    let a = http
        .post(
            "pointWrite",
            "ver:\"3.0\"\nid,level,val\n@bw-sp,8,70°F\n",
            Some("text/zinc"),
            None,
        )
        .await;
    assert_eq!(a.status, 403);
    read_only.stop().await.unwrap();
}
