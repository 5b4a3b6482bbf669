//! The WebSocket API against a real server: ops with request ids, batches, watch changes
//! pushed by the server, logins with a bearer token or SCRAM in messages, and bad input.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::time::Duration;

use buildwire_haystack::auth::{AuthHeader, ScramClient};
use buildwire_haystack::codec::json::hayson;
use buildwire_haystack::server::{HaystackServer, Timeouts};
use buildwire_haystack::{Grid, Value};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use server_support::*;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

async fn connect(url: &str, token: Option<&str>) -> Ws {
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", "haystack".parse().unwrap());
    if let Some(token) = token {
        request.headers_mut().insert(
            "Authorization",
            format!("BEARER authToken={token}").parse().unwrap(),
        );
    }
    let (ws, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response
            .headers()
            .get("sec-websocket-protocol")
            .map(|v| v.to_str().unwrap()),
        Some("haystack")
    );
    ws
}

async fn send(ws: &mut Ws, value: serde_json::Value) {
    ws.send(Message::text(value.to_string())).await.unwrap();
}

/// The next text message as JSON (pings skipped), or None when the connection closed.
async fn next(ws: &mut Ws) -> Option<serde_json::Value> {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s");
        match message {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(_)) => continue,
        }
    }
}

fn grid_of(envelope: &serde_json::Value) -> Grid {
    hayson::decode_grid(&envelope["grid"].to_string()).unwrap()
}

fn grid_json(zinc_text: &str) -> serde_json::Value {
    let grid = buildwire_haystack::codec::zinc::decode_grid(zinc_text).unwrap();
    serde_json::from_str(&hayson::encode_grid(&grid)).unwrap()
}

#[tokio::test]
async fn ops_batches_and_pushed_watch_changes() {
    let server = start().await;
    let http = logged_in(&server, "op").await;
    let mut ws = connect(&server.ws_url(), http.token.as_deref()).await;
    // Our client also sends the token as a first message (haystack-py's server wants it).
    send(&mut ws, json!({"authToken": http.token.clone().unwrap()})).await;
    send(&mut ws, json!({"id": "1", "op": "about"})).await;
    let answer = next(&mut ws).await.unwrap();
    assert_eq!(answer["id"], "1");
    let about = grid_of(&answer);
    assert_eq!(about.get(0, "userName"), Some(&Value::Str("op".into())));
    send(
        &mut ws,
        json!({"id": 2, "op": "read", "grid": grid_json("ver:\"3.0\"\nfilter\n\"point\"\n")}),
    )
    .await;
    let answer = next(&mut ws).await.unwrap();
    assert_eq!(answer["id"], 2, "numeric ids come back as sent");
    assert_eq!(grid_of(&answer).row_count(), 1848);
    // A batch is answered in order; failures are error grids.
    send(
        &mut ws,
        json!([
            {"id": "a", "op": "nav"},
            {"id": "b", "op": "nope"},
            {"id": "c", "op": "read", "grid": {"_kind": "grid"}},
            {"id": "d", "op": "ops", "ch": 5}
        ]),
    )
    .await;
    let batch = next(&mut ws).await.unwrap();
    let items = batch.as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0]["id"], "a");
    assert_eq!(grid_of(&items[0]).row_count(), 1);
    assert!(is_error(&grid_of(&items[1])));
    assert!(is_error(&grid_of(&items[2])));
    assert_eq!(items[3]["ch"], 5);
    // Watch over the WebSocket; a write over HTTP is pushed.
    send(
        &mut ws,
        json!({"id": "w", "op": "watchSub",
               "grid": grid_json("ver:\"3.0\" watchDis:\"ws\"\nid\n@bw-sp\n")}),
    )
    .await;
    let sub = grid_of(&next(&mut ws).await.unwrap());
    let Some(Value::Str(watch_id)) = sub.meta.get("watchId").cloned() else {
        panic!("{sub:?}")
    };
    let g = http
        .zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@bw-sp,9,66°F\n")
        .await;
    assert!(!is_error(&g));
    let push = next(&mut ws).await.unwrap();
    assert_eq!(push["type"], "watch");
    assert_eq!(push["watchId"], watch_id.as_str());
    let changed = grid_of(&push);
    assert_eq!(
        changed.get(0, "writeVal"),
        Some(&Value::number_with_unit(66.0, "°F"))
    );
    // Closing the connection closes its watches.
    assert_eq!(server.engine().watch_count(), 1);
    ws.close(None).await.unwrap();
    for _ in 0..100 {
        if server.engine().watch_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.engine().watch_count(), 0);
    server.stop().await.unwrap();
}

/// SCRAM in messages, as haystack-py's WebSocket client does it; returns the socket.
async fn scram_login(url: &str, user: &str, password: &str) -> (Ws, Result<String, String>) {
    let mut ws = connect(url, None).await;
    let mut scram = ScramClient::new(user, password).unwrap();
    let hello = AuthHeader::parse(&scram.hello_header(), true).unwrap();
    send(
        &mut ws,
        json!({"type": "hello", "username": hello.param("username").unwrap()}),
    )
    .await;
    let mut reply = next(&mut ws).await.unwrap();
    for _ in 0..2 {
        if reply["type"] == "authErr" {
            return (ws, Err(reply["dis"].as_str().unwrap_or("").to_owned()));
        }
        let mut challenge = format!(
            "SCRAM handshakeToken={}, hash={}",
            reply["handshakeToken"].as_str().unwrap(),
            reply["hash"].as_str().unwrap()
        );
        if let Some(data) = reply["data"].as_str() {
            challenge.push_str(&format!(", data={data}"));
        }
        let answer = AuthHeader::parse(&scram.on_challenge(&challenge).unwrap(), true).unwrap();
        send(
            &mut ws,
            json!({"type": "scram",
                   "handshakeToken": answer.param("handshakeToken").unwrap(),
                   "data": answer.param("data").unwrap()}),
        )
        .await;
        reply = next(&mut ws).await.unwrap();
    }
    if reply["type"] != "authOk" {
        return (ws, Err(reply.to_string()));
    }
    let info = format!(
        "authToken={}, data={}",
        reply["authToken"].as_str().unwrap(),
        reply["data"].as_str().unwrap()
    );
    let token = scram.on_success(&info).unwrap();
    (ws, Ok(token))
}

#[tokio::test]
async fn scram_in_messages_logs_in_and_wrong_passwords_are_refused() {
    let server = start().await;
    let (mut ws, token) = scram_login(&server.ws_url(), "viewer", PASSWORD).await;
    let token = token.unwrap();
    send(
        &mut ws,
        json!({"id": "1", "op": "read", "grid": grid_json("ver:\"3.0\"\nfilter\n\"site\"\n")}),
    )
    .await;
    assert_eq!(grid_of(&next(&mut ws).await.unwrap()).row_count(), 1);
    // The viewer may not write.
    send(
        &mut ws,
        json!({"id": "2", "op": "pointWrite",
               "grid": grid_json("ver:\"3.0\"\nid,level,val\n@bw-sp,8,70°F\n")}),
    )
    .await;
    assert!(is_error(&grid_of(&next(&mut ws).await.unwrap())));
    // The token works over HTTP too; `close` over the WebSocket ends it.
    let mut http = Http::new(&server.url());
    http.token = Some(token);
    assert_eq!(http.get("about", "", None).await.status, 200);
    send(&mut ws, json!({"id": "3", "op": "close"})).await;
    assert_eq!(next(&mut ws).await.unwrap()["id"], "3");
    assert!(next(&mut ws).await.is_none(), "closed after close");
    assert_eq!(http.get("about", "", None).await.status, 401);

    let (mut ws, refused) = scram_login(&server.ws_url(), "viewer", "wrong").await;
    assert!(refused.is_err());
    assert!(next(&mut ws).await.is_none(), "closed after authErr");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn unauthenticated_connections_get_errors_then_are_closed() {
    let timeouts = Timeouts {
        ws_auth: Duration::from_millis(500),
        ..Timeouts::default()
    };
    let server = HaystackServer::start(server_config().timeouts(timeouts))
        .await
        .unwrap();
    // A bad token in the upgrade request is refused before upgrading.
    let mut request = server.ws_url().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Authorization", "BEARER authToken=nope".parse().unwrap());
    assert!(tokio_tungstenite::connect_async(request).await.is_err());
    let mut ws = connect(&server.ws_url(), None).await;
    send(&mut ws, json!({"id": "1", "op": "about"})).await;
    let answer = next(&mut ws).await.unwrap();
    assert!(is_error(&grid_of(&answer)));
    ws.send(Message::text("not json")).await.unwrap();
    send(
        &mut ws,
        json!({"type": "capabilities", "compression": ["zlib"], "version": 2}),
    )
    .await;
    let caps = next(&mut ws).await.unwrap();
    assert_eq!(caps["version"], 1);
    // No login in time: authErr, then closed.
    let last = next(&mut ws).await.unwrap();
    assert_eq!(last["type"], "authErr");
    assert!(next(&mut ws).await.is_none());
    // A bad token as a first message is refused too.
    let mut ws = connect(&server.ws_url(), None).await;
    send(&mut ws, json!({"authToken": "nope"})).await;
    assert_eq!(next(&mut ws).await.unwrap()["type"], "authErr");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn oversized_messages_close_the_connection() {
    let limits = buildwire_haystack::ops::Limits {
        max_body_bytes: 64 * 1024,
        ..Default::default()
    };
    let server = HaystackServer::start(server_config().limits(limits))
        .await
        .unwrap();
    let http = logged_in(&server, "viewer").await;
    let mut ws = connect(&server.ws_url(), http.token.as_deref()).await;
    let big = "x".repeat(100 * 1024);
    let _ = ws
        .send(Message::text(
            json!({"id": "1", "op": "about", "pad": big}).to_string(),
        ))
        .await;
    assert!(next(&mut ws).await.is_none());
    // The server still serves others.
    let mut ws = connect(&server.ws_url(), http.token.as_deref()).await;
    send(&mut ws, json!({"id": "1", "op": "about"})).await;
    assert_eq!(next(&mut ws).await.unwrap()["id"], "1");
    server.stop().await.unwrap();
}
