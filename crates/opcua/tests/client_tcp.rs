//! Our tokio client against our tokio server over real TCP on 127.0.0.1:0: browse, read,
//! write, call (the throughput methods, up to a 100 MiB getData), translate, GetEndpoints,
//! user name login accepted and denied, and timeouts.

#[cfg(test)]
mod client_tcp_tests {
    use std::time::{Duration, Instant};

    use buildwire_opcua::client::{ClientConfig, ClientIdentity};
    use buildwire_opcua::driver::client::nodes;
    use buildwire_opcua::driver::{OpcuaClient, OpcuaServer, OpcuaServerConfig};
    use buildwire_opcua::server::bench_methods::{
        self, GET_DATA_METHOD, SET_SIZE_METHOD, THROUGHPUT_OBJECT,
    };
    use buildwire_opcua::server::{ServerConfig, UserAccount};
    use buildwire_opcua::services::AttributeId;
    use buildwire_opcua::{NodeId, QualifiedName, StatusCode, Variant};

    fn setpoint() -> NodeId {
        NodeId::string(1, "Setpoint")
    }

    async fn start() -> OpcuaServer {
        let config = ServerConfig {
            endpoint_url: String::new(),
            users: vec![UserAccount {
                user_name: "alice".into(),
                password: "secret".into(),
            }],
            // No certificate: passwords in clear, asked for by name on both sides.
            allow_cleartext_passwords: true,
            ..ServerConfig::default()
        };
        OpcuaServer::start(
            OpcuaServerConfig::new("127.0.0.1:0", config)
                .with_setup(bench_methods::install)
                .with_setup(|server| {
                    server.address_space.add_variable(
                        &nodes::OBJECTS,
                        setpoint(),
                        QualifiedName::new(1, "Setpoint"),
                        Variant::Double(1.5),
                        NodeId::numeric(0, 11),
                        true,
                    )
                }),
        )
        .await
        .unwrap()
    }

    async fn connect(server: &OpcuaServer) -> OpcuaClient {
        OpcuaClient::connect(server.endpoint_url(), ClientIdentity::Anonymous)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn browse_read_write_translate_endpoints() {
        let server = start().await;
        assert!(server.endpoint_url().starts_with("opc.tcp://127.0.0.1:"));
        let mut client = connect(&server).await;

        let references = client.browse(&nodes::OBJECTS).await.unwrap();
        let targets: Vec<_> = references
            .iter()
            .map(|r| r.node_id.node_id.clone())
            .collect();
        assert!(targets.contains(&NodeId::numeric(0, 2253)), "{targets:?}");
        assert!(targets.contains(&THROUGHPUT_OBJECT));
        assert!(targets.contains(&setpoint()));

        let values = client
            .read(
                &[nodes::CURRENT_TIME, nodes::NAMESPACE_ARRAY],
                AttributeId::Value,
            )
            .await
            .unwrap();
        assert!(matches!(values[0].value, Some(Variant::DateTime(_))));
        let Some(Variant::Array(namespaces)) = &values[1].value else {
            panic!("NamespaceArray is an array: {:?}", values[1]);
        };
        assert_eq!(
            namespaces.elements()[0],
            Variant::from("http://opcfoundation.org/UA/")
        );

        client
            .write(&setpoint(), Variant::Double(42.25))
            .await
            .unwrap();
        let values = client
            .read(&[setpoint()], AttributeId::Value)
            .await
            .unwrap();
        assert_eq!(values[0].value, Some(Variant::Double(42.25)));
        let error = client
            .write(&NodeId::numeric(7, 1), Variant::Double(1.0))
            .await
            .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_NODE_ID_UNKNOWN);

        let found = client
            .translate(&nodes::OBJECTS, &[QualifiedName::new(1, "Throughput")])
            .await
            .unwrap();
        assert_eq!(found[0].node_id, THROUGHPUT_OBJECT);

        let endpoints = client.get_endpoints().await.unwrap();
        assert_eq!(
            endpoints[0].endpoint_url.as_str(),
            Some(server.endpoint_url())
        );
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn set_size_and_get_data_1_kib_and_100_mib() {
        let server = start().await;
        let mut client = connect(&server).await;
        for kib in [1u32, 100 * 1024] {
            let out = client
                .call(
                    &THROUGHPUT_OBJECT,
                    &SET_SIZE_METHOD,
                    vec![Variant::UInt32(kib)],
                )
                .await
                .unwrap();
            assert!(out.is_empty());
            let out = client
                .call(&THROUGHPUT_OBJECT, &GET_DATA_METHOD, vec![])
                .await
                .unwrap();
            let Some(Variant::ByteString(data)) = out.first() else {
                panic!("getData returns a ByteString");
            };
            assert_eq!(data.as_bytes().map(<[u8]>::len), Some(kib as usize * 1024));
        }
        let error = client
            .call(
                &THROUGHPUT_OBJECT,
                &SET_SIZE_METHOD,
                vec![Variant::from("x")],
            )
            .await
            .unwrap_err();
        assert!(error.status_code().is_bad());
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn one_chunk_responses_with_a_large_receive_buffer() {
        // The client offers 4 MiB chunks; the server (16 MiB send buffer) sends each 1 MiB
        // getData response as one chunk, read straight into the client's receive buffer.
        let server = start().await;
        let mut config = ClientConfig::new(server.endpoint_url());
        config.connection_limits.receive_buffer_size = 4 * 1024 * 1024;
        let mut client = OpcuaClient::connect_with(config).await.unwrap();
        let limits = *client.connection().negotiated_limits().unwrap();
        assert_eq!(limits.receive_buffer_size, 4 * 1024 * 1024);
        client
            .call(
                &THROUGHPUT_OBJECT,
                &SET_SIZE_METHOD,
                vec![Variant::UInt32(1024)],
            )
            .await
            .unwrap();
        let expected = server.with_server(|s| s.throughput.data());
        for _ in 0..3 {
            let out = client
                .call(&THROUGHPUT_OBJECT, &GET_DATA_METHOD, vec![])
                .await
                .unwrap();
            let Some(Variant::ByteString(data)) = out.first() else {
                panic!("getData returns a ByteString");
            };
            assert!(data.as_bytes() == Some(&expected[..]));
        }
        // Smaller requests keep working on the same buffer.
        let values = client
            .read(&[setpoint()], AttributeId::Value)
            .await
            .unwrap();
        assert_eq!(values[0].value, Some(Variant::Double(1.5)));
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn user_name_login_ok_and_denied() {
        let server = start().await;
        let alice = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "secret".into(),
        };
        let mut config = ClientConfig::new(server.endpoint_url());
        config.identity = alice.clone();
        config.allow_cleartext_password = true;
        let client = OpcuaClient::connect_with(config).await.unwrap();
        client.close().await.unwrap();
        let mallory = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "guess".into(),
        };
        let mut config = ClientConfig::new(server.endpoint_url());
        config.identity = mallory;
        config.allow_cleartext_password = true;
        let error = OpcuaClient::connect_with(config).await.unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_USER_ACCESS_DENIED);
        // Not asked for: the password is not sent in clear.
        let error = OpcuaClient::connect(server.endpoint_url(), alice)
            .await
            .unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_SECURITY_MODE_INSUFFICIENT
        );
        server.shutdown().await;
    }

    #[tokio::test]
    async fn silent_server_times_out() {
        // Accepts and reads, never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let silent = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut socket, &mut sink).await;
        });
        let mut config = ClientConfig::new(&format!("opc.tcp://{address}/"));
        config.connect_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let error = OpcuaClient::connect_with(config).await.unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_TIMEOUT);
        assert!(started.elapsed() < Duration::from_secs(5));
        silent.abort();
        // Nobody listening at all: a socket error, reported as Bad_CommunicationError.
        let error =
            OpcuaClient::connect(&format!("opc.tcp://{address}/"), ClientIdentity::Anonymous)
                .await
                .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_COMMUNICATION_ERROR);
    }

    #[tokio::test]
    async fn requests_in_flight_are_correlated() {
        let server = start().await;
        let mut client = connect(&server).await;
        let mut handles = Vec::new();
        for _ in 0..8 {
            let request = buildwire_opcua::driver::client::call_request(
                &THROUGHPUT_OBJECT,
                &GET_DATA_METHOD,
                vec![],
            );
            handles.push(client.send(request).await.unwrap());
        }
        let mut answered = Vec::new();
        for _ in 0..8 {
            let (handle, result) = client.next_response().await.unwrap();
            assert!(result.is_ok());
            answered.push(handle);
        }
        answered.sort_unstable();
        assert_eq!(answered, handles);
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn connections_over_the_limit_get_an_error_message() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let config = ServerConfig {
            endpoint_url: String::new(),
            max_connections: 2,
            ..ServerConfig::default()
        };
        let server = OpcuaServer::start(OpcuaServerConfig::new("127.0.0.1:0", config))
            .await
            .unwrap();
        let first = connect(&server).await;
        let second = connect(&server).await;
        let mut third = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .unwrap();
        let mut reply = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), third.read_to_end(&mut reply))
            .await
            .expect("the refusal arrives")
            .unwrap();
        assert_eq!(&reply[..4], b"ERRF");
        let status = u32::from_le_bytes(reply[8..12].try_into().unwrap());
        assert_eq!(
            StatusCode::from_u32(status),
            StatusCode::BAD_MAX_CONNECTIONS_REACHED
        );
        let _ = third.shutdown().await;
        first.close().await.unwrap();
        second.close().await.unwrap();
        server.shutdown().await;
    }
}
