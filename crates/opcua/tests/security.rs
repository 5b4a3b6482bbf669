//! Secured channels over real TCP on 127.0.0.1: our client against our server under every
//! policy × mode (read, write, encrypted UserName login), token renewal with the shortest
//! lifetime, an untrusted client certificate refused and stored in `rejected/`, a discovery
//! channel limited to GetEndpoints, and a tampered chunk closing the channel with
//! Bad_SecurityChecksFailed.

#[cfg(test)]
mod security_tests {
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use buildwire_opcua::client::{
        ClientConfig, ClientConnection, ClientEvent, ClientIdentity, ClientSecurity,
    };
    use buildwire_opcua::driver::client::nodes;
    use buildwire_opcua::driver::{OpcuaClient, OpcuaServer, OpcuaServerConfig};
    use buildwire_opcua::security::pki::{CertificateList, Pki};
    use buildwire_opcua::security::{
        LocalIdentity, MessageSecurityMode, SecurityPolicy, TrustList,
    };
    use buildwire_opcua::server::{
        Server, ServerConfig, ServerConnection, ServerSecurity, UserAccount, bench_methods,
    };
    use buildwire_opcua::services::{AttributeId, UserTokenType};
    use buildwire_opcua::{DateTime, NodeId, QualifiedName, StatusCode, Variant};

    const MODES: [MessageSecurityMode; 2] = [
        MessageSecurityMode::Sign,
        MessageSecurityMode::SignAndEncrypt,
    ];

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("buildwire-sec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn setpoint() -> NodeId {
        NodeId::string(1, "Setpoint")
    }

    fn identity(pki: &Pki, uri: &str) -> LocalIdentity {
        pki.own_or_create(uri, uri, &["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap()
    }

    fn server_config(server_pki: &Pki, trust: TrustList) -> ServerConfig {
        let mut endpoints = vec![(SecurityPolicy::None, MessageSecurityMode::None)];
        for policy in SecurityPolicy::SECURED {
            for mode in MODES {
                endpoints.push((policy, mode));
            }
        }
        ServerConfig {
            endpoint_url: String::new(),
            application_uri: "urn:buildwire:test:server".into(),
            users: vec![UserAccount {
                user_name: "alice".into(),
                password: "secret".into(),
            }],
            security: ServerSecurity {
                identity: Some(identity(server_pki, "urn:buildwire:test:server")),
                endpoints,
                trust,
                pki: Some(server_pki.clone()),
            },
            ..ServerConfig::default()
        }
    }

    /// `rejected/` holds exactly the certificate of `refused`.
    fn assert_rejected(pki: &Pki, refused: &LocalIdentity) {
        let rejected = pki.certificates(CertificateList::Rejected).unwrap();
        assert_eq!(rejected, std::slice::from_ref(&refused.certificate));
    }

    async fn start(config: ServerConfig) -> OpcuaServer {
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

    fn client_config(
        server: &OpcuaServer,
        client: &LocalIdentity,
        policy: SecurityPolicy,
        mode: MessageSecurityMode,
        certificate: buildwire_opcua::security::Certificate,
    ) -> ClientConfig {
        let mut config = ClientConfig::new(server.endpoint_url());
        config.application_uri = "urn:buildwire:test:client".into();
        config.security = ClientSecurity {
            policy,
            mode,
            identity: Some(client.clone()),
            server_certificate: Some(certificate),
        };
        config
    }

    #[tokio::test]
    async fn every_policy_and_mode_reads_writes_and_logs_in() {
        let dir = temp_dir("all");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let client_pki = Pki::open(dir.join("client")).unwrap();
        let client = identity(&client_pki, "urn:buildwire:test:client");
        // The server trusts the client's certificate.
        server_pki
            .store(CertificateList::Trusted, &client.certificate)
            .unwrap();
        let server = start(server_config(
            &server_pki,
            server_pki.trust_list(false).unwrap(),
        ))
        .await;
        let endpoints = OpcuaClient::discover_endpoints(server.endpoint_url())
            .await
            .unwrap();
        assert_eq!(endpoints.len(), 7);
        for policy in SecurityPolicy::SECURED {
            for mode in MODES {
                let certificate =
                    OpcuaClient::server_certificate(server.endpoint_url(), policy, mode)
                        .await
                        .unwrap();
                assert_eq!(
                    certificate.application_uri(),
                    Some("urn:buildwire:test:server")
                );
                let mut config = client_config(&server, &client, policy, mode, certificate);
                config.identity = ClientIdentity::UserName {
                    user_name: "alice".into(),
                    password: "secret".into(),
                };
                let mut session = OpcuaClient::connect_with(config).await.unwrap();
                let security = session.connection().security().unwrap();
                assert_eq!((security.policy(), security.mode()), (policy, mode));
                let step = if mode == MessageSecurityMode::Sign {
                    1.0
                } else {
                    2.0
                };
                let value = Variant::Double(f64::from(policy as u8) * 10.0 + step);
                session.write(&setpoint(), value.clone()).await.unwrap();
                let read = session
                    .read(&[setpoint()], AttributeId::Value)
                    .await
                    .unwrap();
                assert_eq!(read[0].value, Some(value), "{policy} {mode:?}");
                session.close().await.unwrap();

                // A wrong password is refused over the encrypted token too.
                let certificate =
                    OpcuaClient::server_certificate(server.endpoint_url(), policy, mode)
                        .await
                        .unwrap();
                let mut config = client_config(&server, &client, policy, mode, certificate);
                config.identity = ClientIdentity::UserName {
                    user_name: "alice".into(),
                    password: "wrong".into(),
                };
                let error = OpcuaClient::connect_with(config).await.unwrap_err();
                assert_eq!(
                    error.status_code(),
                    StatusCode::BAD_USER_ACCESS_DENIED,
                    "{error}"
                );
            }
        }
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn x509_user_tokens_are_signed_and_checked_against_the_trust_list() {
        let dir = temp_dir("x509");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let client_pki = Pki::open(dir.join("client")).unwrap();
        let client = identity(&client_pki, "urn:buildwire:test:client");
        let trusted_user = identity(&Pki::open(dir.join("alice")).unwrap(), "urn:user:alice");
        let unknown_user = identity(&Pki::open(dir.join("mallory")).unwrap(), "urn:user:mallory");
        for certificate in [&client.certificate, &trusted_user.certificate] {
            server_pki
                .store(CertificateList::Trusted, certificate)
                .unwrap();
        }
        let server = start(server_config(
            &server_pki,
            server_pki.trust_list(false).unwrap(),
        ))
        .await;
        for policy in SecurityPolicy::SECURED {
            let mode = MessageSecurityMode::SignAndEncrypt;
            let certificate = OpcuaClient::server_certificate(server.endpoint_url(), policy, mode)
                .await
                .unwrap();
            let mut config = client_config(&server, &client, policy, mode, certificate.clone());
            config.identity = ClientIdentity::X509(trusted_user.clone());
            let mut session = OpcuaClient::connect_with(config).await.unwrap();
            let read = session
                .read(&[setpoint()], AttributeId::Value)
                .await
                .unwrap();
            assert!(read[0].value.is_some());
            session.close().await.unwrap();
            let mut config = client_config(&server, &client, policy, mode, certificate);
            config.identity = ClientIdentity::X509(unknown_user.clone());
            let error = OpcuaClient::connect_with(config).await.unwrap_err();
            assert_eq!(
                error.status_code(),
                StatusCode::BAD_IDENTITY_TOKEN_REJECTED,
                "{error}"
            );
        }
        // The refused user certificate is in rejected/, like an application certificate,
        // ready for `buildwire opcua certs trust`.
        assert_rejected(&server_pki, &unknown_user);
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn user_name_over_a_none_channel_is_encrypted_for_the_token_policy() {
        let dir = temp_dir("none-username");
        // Trusting every client: this test is about the password, not the channel.
        let pki = Pki::open(dir.join("server")).unwrap();
        let server = start(server_config(&pki, TrustList::trust_all())).await;
        // Every endpoint offers UserName with a security policy: the None endpoint names
        // Basic256Sha256 and carries the certificate to encrypt with.
        let endpoints = OpcuaClient::discover_endpoints(server.endpoint_url())
            .await
            .unwrap();
        for endpoint in &endpoints {
            let user_name = endpoint
                .user_identity_tokens
                .iter()
                .find(|p| p.token_type == UserTokenType::UserName)
                .unwrap();
            let expected = if endpoint.security_mode == MessageSecurityMode::None {
                SecurityPolicy::Basic256Sha256.uri()
            } else {
                endpoint.security_policy_uri.as_str().unwrap()
            };
            assert_eq!(user_name.security_policy_uri.as_str(), Some(expected));
            assert!(!endpoint.server_certificate.is_null());
        }
        // Our client over a None channel follows the token policy: the password goes
        // encrypted (the server refuses a clear one), a wrong one is Bad_UserAccessDenied.
        let mut config = ClientConfig::new(server.endpoint_url());
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "secret".into(),
        };
        let mut session = OpcuaClient::connect_with(config.clone()).await.unwrap();
        let read = session
            .read(&[setpoint()], AttributeId::Value)
            .await
            .unwrap();
        assert!(read[0].value.is_some());
        session.close().await.unwrap();
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "guess".into(),
        };
        let error = OpcuaClient::connect_with(config).await.unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_USER_ACCESS_DENIED);
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn untrusted_client_certificate_is_rejected_and_stored() {
        let dir = temp_dir("untrusted");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let client_pki = Pki::open(dir.join("client")).unwrap();
        let client = identity(&client_pki, "urn:buildwire:test:client");
        let server = start(server_config(
            &server_pki,
            server_pki.trust_list(false).unwrap(),
        ))
        .await;
        let policy = SecurityPolicy::Aes256Sha256RsaPss;
        let mode = MessageSecurityMode::SignAndEncrypt;
        let certificate = OpcuaClient::server_certificate(server.endpoint_url(), policy, mode)
            .await
            .unwrap();
        let config = client_config(&server, &client, policy, mode, certificate);
        let error = OpcuaClient::connect_with(config).await.unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_CERTIFICATE_UNTRUSTED,
            "{error}"
        );
        // The unauthenticated peer gets the status only: the thumbprint and the
        // `certs trust` hint are for the server's log. Our client adds its own hint, from
        // its own certificate, after the server's reason.
        let text = error.to_string();
        let (from_server, ours) = text
            .split_once("; the server does not trust our certificate")
            .unwrap_or_else(|| panic!("no hint of our own: {error}"));
        let thumbprint = client.certificate.thumbprint_hex();
        assert!(!from_server.contains("certs trust"), "{error}");
        assert!(!from_server.contains(&thumbprint), "{error}");
        assert!(
            ours.contains(&format!("buildwire opcua certs trust {thumbprint}")),
            "{error}"
        );
        assert_rejected(&server_pki, &client);
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn discovery_channel_serves_only_discovery_without_a_none_endpoint() {
        let dir = temp_dir("discovery");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let mut config = server_config(&server_pki, TrustList::trust_all());
        config
            .security
            .endpoints
            .retain(|(p, _)| *p == SecurityPolicy::Basic256Sha256);
        let server = start(config).await;
        let endpoints = OpcuaClient::discover_endpoints(server.endpoint_url())
            .await
            .unwrap();
        assert_eq!(endpoints.len(), 2);
        assert!(
            endpoints
                .iter()
                .all(|e| e.server_certificate.as_bytes().is_some())
        );
        // A session over SecurityPolicy None is refused.
        let error = OpcuaClient::connect(server.endpoint_url(), ClientIdentity::Anonymous)
            .await
            .unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            "{error}"
        );
        // So is a policy the server does not offer.
        let client_pki = Pki::open(dir.join("client")).unwrap();
        let client = identity(&client_pki, "urn:buildwire:test:client");
        let server_certificate = endpoints[0].server_certificate.as_bytes().unwrap();
        let certificate =
            buildwire_opcua::security::Certificate::from_der(server_certificate).unwrap();
        let config = client_config(
            &server,
            &client,
            SecurityPolicy::Aes128Sha256RsaOaep,
            MessageSecurityMode::Sign,
            certificate,
        );
        let error = OpcuaClient::connect_with(config).await.unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_SECURITY_POLICY_REJECTED,
            "{error}"
        );
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Moves bytes between a sans-IO client and server until neither has anything to send.
    fn pump(
        client: &mut ClientConnection,
        server: &mut Server,
        connection: &mut ServerConnection,
        now: Instant,
    ) {
        loop {
            let mut moved = false;
            while let Some(bytes) = client.poll_transmit() {
                connection.handle_bytes(server, now, &bytes);
                moved = true;
            }
            while let Some(bytes) = connection.poll_transmit() {
                client.handle_bytes(now, &bytes);
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    #[test]
    fn token_renewal_and_tampered_chunks() {
        let dir = temp_dir("renew");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let client_pki = Pki::open(dir.join("client")).unwrap();
        let client_identity = identity(&client_pki, "urn:buildwire:test:client");
        for policy in SecurityPolicy::SECURED {
            for mode in MODES {
                let start = Instant::now();
                let unix = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs() as i64;
                let config = ServerConfig {
                    endpoint_url: "opc.tcp://127.0.0.1:4840/".into(),
                    start_time: DateTime(116_444_736_000_000_000 + unix * 10_000_000),
                    ..server_config(&server_pki, TrustList::trust_all())
                };
                let server_certificate = config
                    .security
                    .identity
                    .as_ref()
                    .unwrap()
                    .certificate
                    .clone();
                let mut server = Server::new(config, start).unwrap();
                bench_methods::install(&mut server).unwrap();
                server
                    .address_space
                    .add_variable(
                        &nodes::OBJECTS,
                        setpoint(),
                        QualifiedName::new(1, "Setpoint"),
                        Variant::Int32(7),
                        NodeId::numeric(0, 6),
                        true,
                    )
                    .unwrap();
                let mut connection = ServerConnection::new(&server);
                let mut config = ClientConfig::new("opc.tcp://127.0.0.1:4840/");
                config.application_uri = "urn:buildwire:test:client".into();
                config.token_lifetime_ms = 1; // revised to the 10 s minimum
                config.security = ClientSecurity {
                    policy,
                    mode,
                    identity: Some(client_identity.clone()),
                    server_certificate: Some(server_certificate),
                };
                let mut client = ClientConnection::new(
                    config,
                    start,
                    DateTime(116_444_736_000_000_000 + unix * 10_000_000),
                );
                pump(&mut client, &mut server, &mut connection, start);
                assert_eq!(client.poll_event(), Some(ClientEvent::SessionActivated));
                let (_, first_token) = client.channel_token().unwrap();
                // Renewal at 75 % of 10 s; both sides keep working under the new token.
                let later = start + Duration::from_millis(7_600);
                assert!(client.poll_timeout().unwrap() <= later);
                client.handle_timeout(later);
                pump(&mut client, &mut server, &mut connection, later);
                let (_, second_token) = client.channel_token().unwrap();
                assert_eq!(second_token, first_token + 1, "{policy} {mode:?}");
                let read = buildwire_opcua::services::ReadRequest {
                    request_header: Default::default(),
                    max_age: 0.0,
                    timestamps_to_return: buildwire_opcua::services::TimestampsToReturn::Neither,
                    nodes_to_read: vec![buildwire_opcua::services::ReadValueId {
                        node_id: setpoint(),
                        attribute_id: AttributeId::Value as u32,
                        ..Default::default()
                    }],
                };
                let handle = client.send(later, read.clone()).unwrap();
                pump(&mut client, &mut server, &mut connection, later);
                let Some(ClientEvent::Response {
                    handle: answered,
                    response,
                }) = client.poll_event()
                else {
                    panic!("no response under the renewed token");
                };
                assert_eq!(answered, handle);
                let buildwire_opcua::services::ServiceResponse::Read(read_response) = *response
                else {
                    panic!("not a read response");
                };
                assert_eq!(read_response.results[0].value, Some(Variant::Int32(7)));
                assert_eq!(connection.security().unwrap().token_ids(), [second_token]);

                // A chunk with one flipped bit: Bad_SecurityChecksFailed, the channel closes.
                client.send(later, read).unwrap();
                let mut bytes = client.poll_transmit().unwrap();
                let last = bytes.len() - 1;
                bytes[last] ^= 0x01;
                connection.handle_bytes(&mut server, later, &bytes);
                assert!(connection.is_closed());
                match connection.close_reason() {
                    Some(buildwire_opcua::server::CloseReason::Error { status, .. }) => {
                        assert_eq!(*status, StatusCode::BAD_SECURITY_CHECKS_FAILED)
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A secured session lost with its channel is re-activated on a new one: the client signs
    /// the last server nonce (from ActivateSession) with its certificate, and the server
    /// takes it only from the certificate that created the session.
    #[tokio::test]
    async fn a_secured_session_is_reactivated_only_by_its_own_certificate() {
        use buildwire_opcua::client::reconnect::SessionOutcome;
        let dir = temp_dir("resume");
        let server_pki = Pki::open(dir.join("server")).unwrap();
        let client = identity(
            &Pki::open(dir.join("client")).unwrap(),
            "urn:buildwire:test:client",
        );
        let other = identity(
            &Pki::open(dir.join("other")).unwrap(),
            "urn:buildwire:test:client",
        );
        for certificate in [&client.certificate, &other.certificate] {
            server_pki
                .store(CertificateList::Trusted, certificate)
                .unwrap();
        }
        let server = start(server_config(
            &server_pki,
            server_pki.trust_list(false).unwrap(),
        ))
        .await;
        let (policy, mode) = (
            SecurityPolicy::Aes256Sha256RsaPss,
            MessageSecurityMode::SignAndEncrypt,
        );
        let certificate = OpcuaClient::server_certificate(server.endpoint_url(), policy, mode)
            .await
            .unwrap();
        let mut config = client_config(&server, &client, policy, mode, certificate.clone());
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "secret".into(),
        };
        let first = OpcuaClient::connect_with(config.clone()).await.unwrap();
        let resume = first.connection().resume_session();
        let session_id = first.connection().session_id().clone();
        drop(first); // the channel is lost; the session stays on the server

        // Another application (trusted, same URI, its own certificate) holding the stolen
        // token cannot take the session over: it gets a session of its own.
        let mut intruder_config = client_config(&server, &other, policy, mode, certificate);
        intruder_config.identity = config.identity.clone();
        let intruder = OpcuaClient::connect_resuming(intruder_config, resume.clone())
            .await
            .unwrap();
        assert_ne!(
            intruder.connection().session_outcome(),
            Some(SessionOutcome::Reactivated)
        );
        assert_ne!(intruder.connection().session_id(), &session_id);
        drop(intruder);

        // The owner re-activates it on a new channel.
        let mut again = OpcuaClient::connect_resuming(config, resume).await.unwrap();
        assert_eq!(
            again.connection().session_outcome(),
            Some(SessionOutcome::Reactivated)
        );
        assert_eq!(again.connection().session_id(), &session_id);
        let read = again.read(&[setpoint()], AttributeId::Value).await.unwrap();
        assert_eq!(read[0].value, Some(Variant::Double(1.5)));
        again.close().await.unwrap();
        server.shutdown().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
