//! Issue 30: connections that never send their Hello (or send it a byte at a time) used to
//! stay open indefinitely; with the connection limit filled by them, a real client got
//! Bad_MaxConnectionsReached on 290 of 291 reads. Now a connection must open its secure
//! channel within `opening_timeout`, and those still opening take at most half of the
//! slots (a new one closes the oldest): a real client connects and reads during the flood.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use buildwire_opcua::Variant;
use buildwire_opcua::client::ClientIdentity;
use buildwire_opcua::driver::client::nodes;
use buildwire_opcua::driver::{OpcuaClient, OpcuaServer, OpcuaServerConfig};
use buildwire_opcua::server::ServerConfig;
use buildwire_opcua::services::AttributeId;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_trickling_connections_keep_no_real_client_out() {
    let config = ServerConfig {
        endpoint_url: String::new(),
        max_connections: 16,
        opening_timeout: Duration::from_secs(2),
        ..ServerConfig::default()
    };
    let server = OpcuaServer::start(OpcuaServerConfig::new("127.0.0.1:0", config))
        .await
        .unwrap();
    let address = server.local_addr();
    // 40 connections: most silent, some trickling the start of a Hello.
    let mut flood = Vec::new();
    for i in 0..40 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        if i % 4 == 0 {
            stream.write_all(b"HE").await.unwrap();
        }
        flood.push(stream);
    }
    // A real client connects and reads while they are there.
    for _ in 0..3 {
        let mut client = OpcuaClient::connect(server.endpoint_url(), ClientIdentity::Anonymous)
            .await
            .unwrap();
        let values = client
            .read(&[nodes::CURRENT_TIME], AttributeId::Value)
            .await
            .unwrap();
        assert!(matches!(values[0].value, Some(Variant::DateTime(_))));
        client.close().await.unwrap();
    }
    // Every flooding connection is closed by the server within the opening timeout (an
    // Error message, then the end of the stream).
    for mut stream in flood {
        let mut buffer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut buffer))
            .await
            .expect("the server closed the connection in time");
        assert!(read.is_ok(), "{read:?}");
    }
    server.shutdown().await;
}
