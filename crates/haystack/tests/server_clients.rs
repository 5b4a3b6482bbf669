//! What real Haystack clients send and read, against a real server, byte for byte on the
//! socket: the exact case and parameter order of the auth headers, HEAD and the 405s with
//! `Allow`, the RFC 6750 `Bearer <token>` form and other schemes, and the login steps as
//! phable and older clients write them (unpadded proof, trailing `\n`, no GS2 header).
#![allow(clippy::unwrap_used)]

mod server_support;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use buildwire_haystack::auth::ScramClient;
use buildwire_haystack::server::HaystackServer;
use server_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One raw HTTP/1.1 exchange: the whole response (head and body) as text.
async fn exchange(server: &buildwire_haystack::server::HaystackServer, request: &str) -> String {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

fn request(method: &str, op: &str, authorization: Option<&str>) -> String {
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    format!("{method} /api/{op} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n")
}

fn status(response: &str) -> &str {
    response.get(9..12).unwrap_or("")
}

/// The value of a header line whose name is spelt exactly `name`.
fn header_exact<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.split("\r\n")
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
}

fn param<'a>(header: &'a str, name: &str) -> &'a str {
    header
        .split([' ', ','])
        .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
        .unwrap()
}

/// A server and a client logged in as `user`, with its token.
async fn logged_in(user: &str) -> (buildwire_haystack::server::HaystackServer, Http, String) {
    let server = start().await;
    let mut http = Http::new(&server.url());
    let token = http.login(user, PASSWORD).await.unwrap();
    (server, http, token)
}

#[tokio::test]
async fn auth_headers_are_title_case_with_data_first() {
    let server = start().await;
    let mut scram = ScramClient::new("admin", PASSWORD).unwrap();
    let hello = exchange(
        &server,
        &request("GET", "about", Some(&scram.hello_header())),
    )
    .await;
    assert_eq!(status(&hello), "401", "{hello}");
    let www = header_exact(&hello, "WWW-Authenticate").unwrap_or_else(|| panic!("{hello}"));
    assert!(www.starts_with("SCRAM handshakeToken="), "{www}");
    assert!(www.ends_with(", hash=SHA-256"), "{www}");
    assert!(header_exact(&hello, "Content-Type").is_some(), "{hello}");
    assert!(header_exact(&hello, "Content-Length").is_some(), "{hello}");

    let first = scram.on_challenge(www).unwrap();
    let second = exchange(&server, &request("GET", "about", Some(&first))).await;
    assert_eq!(status(&second), "401", "{second}");
    let www = header_exact(&second, "WWW-Authenticate").unwrap_or_else(|| panic!("{second}"));
    // An older client takes the first parameter for `data`.
    assert!(www.starts_with("SCRAM data="), "{www}");
    assert!(www.contains(", handshakeToken=") && www.ends_with(", hash=SHA-256"));

    let last = scram.on_challenge(www).unwrap();
    let done = exchange(&server, &request("GET", "about", Some(&last))).await;
    assert_eq!(status(&done), "200", "{done}");
    let info = header_exact(&done, "Authentication-Info").unwrap_or_else(|| panic!("{done}"));
    assert!(info.starts_with("data="), "{info}");
    assert!(info.contains(", authToken=") && info.ends_with(", hash=SHA-256"));
    scram.on_success(info).unwrap();
    server.stop().await.unwrap();
}

#[tokio::test]
async fn head_works_wherever_get_does_and_other_methods_get_405_with_allow() {
    let (server, http, token) = logged_in("op").await;
    let bearer = format!("BEARER authToken={token}");
    let get = exchange(&server, &request("GET", "about", Some(&bearer))).await;
    let head = exchange(&server, &request("HEAD", "about", Some(&bearer))).await;
    assert_eq!(status(&head), "200", "{head}");
    assert!(head.ends_with("\r\n\r\n"), "HEAD has no body: {head}");
    assert_eq!(
        header_exact(&head, "Content-Type"),
        header_exact(&get, "Content-Type")
    );
    assert!(header_exact(&head, "Content-Length").is_some(), "{head}");
    let head_read = exchange(&server, &request("HEAD", "read?filter=site", Some(&bearer))).await;
    assert_eq!(status(&head_read), "200", "{head_read}");

    for (method, op, allow) in [
        ("PUT", "about", "GET, HEAD, POST"),
        ("DELETE", "read", "GET, HEAD, POST"),
        ("PATCH", "hisWrite", "POST"),
        ("GET", "hisWrite", "POST"),
        ("HEAD", "pointWrite", "POST"),
        ("GET", "close", "POST"),
    ] {
        let r = exchange(&server, &request(method, op, Some(&bearer))).await;
        assert_eq!(status(&r), "405", "{method} {op}: {r}");
        assert_eq!(header_exact(&r, "Allow"), Some(allow), "{method} {op}: {r}");
    }
    // The refused GET close left the session open.
    assert_eq!(http.get("about", "", None).await.status, 200);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn bearer_in_rfc6750_form_and_other_schemes() {
    let (server, _, token) = logged_in("viewer").await;
    // `Authorization: Bearer <token>`, as a popular TypeScript client sends it: a valid
    // token of ours is accepted.
    let ok = exchange(
        &server,
        &request("GET", "about", Some(&format!("Bearer {token}"))),
    )
    .await;
    assert_eq!(status(&ok), "200", "{ok}");
    assert!(ok.contains("\"viewer\""), "{ok}");
    // Any other token, and the Basic scheme: 401 with the HELLO challenge, never 400.
    for authorization in [
        "Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
        "Bearer abc==",
        "Bearer",
        "Basic dmlld2VyOnBlbmNpbC00Mg==",
        "Digest username=\"viewer\"",
    ] {
        let r = exchange(&server, &request("GET", "about", Some(authorization))).await;
        assert_eq!(status(&r), "401", "{authorization}: {r}");
        assert_eq!(header_exact(&r, "WWW-Authenticate"), Some("HELLO"), "{r}");
    }
    server.stop().await.unwrap();
}

/// Runs a login whose client-first and client-final messages are rewritten by `first` and
/// `last`: each is given the SCRAM text our client would send and returns the `data`
/// parameter to send instead. Returns the status of the last step and the
/// `Authentication-Info` of a success (whose server signature our client checks).
async fn quirky_login(
    first: impl Fn(&str) -> String,
    last: impl Fn(&str) -> String,
) -> (u16, Option<String>) {
    let server = start().await;
    let client = reqwest::Client::new();
    let url = format!("{}/about", server.url());
    let mut scram = ScramClient::new("op", PASSWORD).unwrap();
    let rewrite = |header: &str, change: &dyn Fn(&str) -> String| {
        let data = param(header, "data");
        let token = param(header, "handshakeToken");
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(data).unwrap()).unwrap();
        format!("SCRAM data={}, handshakeToken={token}", change(&text))
    };
    let mut authorization = scram.hello_header();
    for step in 0..3 {
        let r = client
            .get(&url)
            .header("Authorization", &authorization)
            .send()
            .await
            .unwrap();
        let code = r.status().as_u16();
        if step == 2 || code != 401 {
            let info = r
                .headers()
                .get("authentication-info")
                .map(|v| v.to_str().unwrap().to_owned());
            if let Some(info) = &info {
                scram.on_success(info).unwrap();
            }
            server.stop().await.unwrap();
            return (code, info);
        }
        let www = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
        let next = scram.on_challenge(&www).unwrap();
        authorization = match step {
            0 => rewrite(&next, &first),
            _ => rewrite(&next, &last),
        };
    }
    unreachable!()
}

/// base64url without padding, as the Auth chapter asks.
fn b64url(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(text)
}

/// `p=<proof>=` becomes `p=<proof>` (the padding of a 32-byte proof is one `=`).
fn unpadded_proof(text: &str) -> String {
    text.strip_suffix('=').unwrap().to_owned()
}

#[tokio::test]
async fn phable_login_unpadded_proof_in_unpadded_standard_base64() {
    // phable: `c=biws,r=<nonce>,p=<proof without =>`, the whole message in standard base64
    // without padding.
    let (code, info) = quirky_login(b64url, |t| STANDARD_NO_PAD.encode(unpadded_proof(t))).await;
    assert_eq!(code, 200);
    assert!(info.is_some());
}

#[tokio::test]
async fn proof_ending_with_newline_and_padded_data() {
    // `...,p=<proof>=\n`, the message in padded standard base64.
    let (code, _) = quirky_login(b64url, |t| STANDARD.encode(format!("{t}\n"))).await;
    assert_eq!(code, 200);
    // `...,p=<proof>\n` (no padding), and a tab after the base64 (a header value cannot
    // hold a line break).
    let (code, _) = quirky_login(b64url, |t| {
        format!("{}\t", b64url(&format!("{}\n", unpadded_proof(t))))
    })
    .await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn client_first_without_the_gs2_header() {
    // `n=op,r=<nonce>` instead of `n,,n=op,r=<nonce>`.
    let (code, _) = quirky_login(|t| b64url(t.strip_prefix("n,,").unwrap()), b64url).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn every_failure_of_the_final_message_is_403() {
    let changes: [fn(&str) -> String; 6] = [
        |_| b64url("garbage"),
        |t| b64url(&t.replace(",p=", ",p=*")),
        |t| b64url(&t.replace("c=biws", "c=eSws")),
        |t| b64url(t.split(",p=").next().unwrap()),
        |t| b64url(&format!("{}AAAA", unpadded_proof(t))),
        |_| "%%%".to_owned(),
    ];
    for change in changes {
        let (code, info) = quirky_login(b64url, change).await;
        assert_eq!(code, 403);
        assert!(info.is_none());
    }
}

/// Issue 30: about 10,000 unauthenticated HELLOs used to fill the table of logins in
/// progress for 60 s, and every login got 503. Now one address holds at most 64 (then 429
/// with Retry-After for that address only) and a user elsewhere logs in at once.
#[tokio::test]
async fn a_hello_flood_from_one_address_leaves_other_logins_alone() {
    let server = start().await;
    let flooder: std::net::SocketAddr = "127.0.0.2:0".parse().unwrap();
    let hello = request("GET", "about", Some("HELLO username=c3RyYW5nZXI"));
    let mut statuses = Vec::new();
    for _ in 0..100 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(flooder).unwrap();
        let mut stream = socket.connect(server.local_addr()).await.unwrap();
        stream.write_all(hello.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        stream.read_to_end(&mut out).await.unwrap();
        let response = String::from_utf8(out).unwrap();
        if status(&response) == "429" {
            assert!(
                header_exact(&response, "Retry-After").is_some(),
                "{response}"
            );
        }
        statuses.push(status(&response).to_owned());
    }
    assert_eq!(statuses.iter().filter(|s| *s == "401").count(), 64);
    assert_eq!(statuses.iter().filter(|s| *s == "429").count(), 36);
    // A user on another address (127.0.0.1) is not held up.
    let mut http = Http::new(&server.url());
    http.login("admin", PASSWORD).await.unwrap();
    server.stop().await.unwrap();
}

/// Issue 30: one user's unfinished uploads held up to 16 MiB each with no overall cap. Now
/// a body reserves its declared length from the user's share and the server's budget:
/// past the user's share the next upload gets 429 at once, other users go on, and the
/// share comes back when the uploads end.
#[tokio::test]
async fn unfinished_uploads_take_only_their_users_share() {
    const KIB: usize = 1024;
    let server = HaystackServer::start(server_config().body_budget(4096 * KIB, 1024 * KIB))
        .await
        .unwrap();
    let mut op = Http::new(&server.url());
    let op_token = op.login("op", PASSWORD).await.unwrap();
    let mut admin = Http::new(&server.url());
    let admin_token = admin.login("admin", PASSWORD).await.unwrap();
    let upload_head = |token: &str, length: usize| {
        format!(
            "POST /api/hisWrite HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: BEARER \
             authToken={token}\r\nContent-Type: text/zinc\r\nContent-Length: {length}\r\n\r\n\
             ver:\"3.0\"\n"
        )
    };
    // Two unfinished 400 KiB uploads of op's fit its 1 MiB share...
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
        stream
            .write_all(upload_head(&op_token, 400 * KIB).as_bytes())
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // ...a third does not: 429 before its body is sent.
    let mut third = TcpStream::connect(server.local_addr()).await.unwrap();
    third
        .write_all(upload_head(&op_token, 400 * KIB).as_bytes())
        .await
        .unwrap();
    let mut answer = vec![0u8; 512];
    let n = third.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_string();
    assert_eq!(status(&answer), "429", "{answer}");
    assert!(header_exact(&answer, "Retry-After").is_some(), "{answer}");
    // Another user is served meanwhile.
    let about = exchange(
        &server,
        &request(
            "GET",
            "about",
            Some(&format!("BEARER authToken={admin_token}")),
        ),
    )
    .await;
    assert_eq!(status(&about), "200", "{about}");
    // The unfinished uploads end (the client goes away): op's share comes back.
    drop(held);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut again = TcpStream::connect(server.local_addr()).await.unwrap();
    again
        .write_all(upload_head(&op_token, 400 * KIB).as_bytes())
        .await
        .unwrap();
    let mut answer = vec![0u8; 512];
    let got = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        again.read(&mut answer),
    )
    .await;
    assert!(
        got.is_err(),
        "the upload is taken (it waits for its body), not refused"
    );
    drop(again);
    server.stop().await.unwrap();
}
