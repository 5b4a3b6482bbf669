//! End-to-end tests of the sans-IO server: a tiny client built from the crate's own types
//! drives a `ServerConnection` with byte streams (OPC 10000-6 §7.1 UA TCP, §6.7 secure
//! conversation with SecurityPolicy None, OPC 10000-4 services).

// Helpers and tests live in one test-only module, where unwrapping is allowed.
#[cfg(test)]
mod server_tests {
    use std::time::{Duration, Instant};

    use buildwire_opcua::encoding::{ExtensionObject, VariantType};
    use buildwire_opcua::secure_channel::{
        AssemblerRole, AssemblyEvent, AsymmetricSecurityHeader, MessageAssembler,
        SecureChannelChunk, SecurityHeader, SequenceHeader, SymmetricSecurityHeader,
    };
    use buildwire_opcua::server::bench_methods::{
        self, GET_DATA_METHOD, SET_SIZE_METHOD, THROUGHPUT_OBJECT,
    };
    use buildwire_opcua::server::config::{DEFAULT_MAX_CHUNK_COUNT, DEFAULT_MAX_MESSAGE_SIZE};
    use buildwire_opcua::server::server_state::SessionEvent;
    use buildwire_opcua::server::{
        CloseReason, Server, ServerConfig, ServerConnection, UserAccount,
    };
    use buildwire_opcua::services::view::{browse_result_mask, node_class_mask};
    use buildwire_opcua::services::well_known_nodes as ids;
    use buildwire_opcua::services::*;
    use buildwire_opcua::transport::{
        Acknowledge, ChunkType, ConnectionLimits, ConnectionMessage, ErrorMessage, FrameDecoder,
        MessageType,
    };
    use buildwire_opcua::{
        ByteString, DataValue, DateTime, DecodingLimits, NodeId, QualifiedName, StatusCode,
        UaString, Variant,
    };

    const START: DateTime = DateTime(133_000_000_000_000_000);

    fn config() -> ServerConfig {
        ServerConfig {
            users: vec![UserAccount {
                user_name: "alice".into(),
                password: "secret".into(),
            }],
            // The raw tokens below carry passwords in clear (no certificate here).
            allow_cleartext_passwords: true,
            start_time: START,
            max_sessions: 3,
            max_sessions_per_connection: 2,
            ..ServerConfig::default()
        }
    }

    /// What the server sent back for one request.
    #[derive(Debug)]
    enum Received {
        Response(Box<ServiceResponse>),
        Error(ErrorMessage),
        Nothing,
    }

    struct Client {
        server: Server,
        connection: ServerConnection,
        now: Instant,
        sequence_number: u32,
        request_id: u32,
        request_handle: u32,
        channel_id: u32,
        token_id: u32,
        authentication_token: NodeId,
        hello: ConnectionLimits,
        chunks_received: usize,
    }

    impl Client {
        fn new() -> Self {
            Self::with_server(config())
        }

        fn with_server(config: ServerConfig) -> Self {
            let now = Instant::now();
            let mut server = Server::new(config, now).unwrap();
            bench_methods::install(&mut server).unwrap();
            let connection = ServerConnection::new(&server);
            Self {
                server,
                connection,
                now,
                sequence_number: 51,
                request_id: 0,
                request_handle: 0,
                channel_id: 0,
                token_id: 0,
                authentication_token: NodeId::default(),
                hello: ConnectionLimits {
                    receive_buffer_size: 65_535,
                    send_buffer_size: 65_535,
                    max_message_size: 0,
                    max_chunk_count: 0,
                    ..ConnectionLimits::default()
                },
                chunks_received: 0,
            }
        }

        /// A second connection to the same server.
        fn reconnect(&mut self) {
            self.connection = ServerConnection::new(&self.server);
            self.sequence_number = 1;
            self.channel_id = 0;
        }

        fn send(&mut self, bytes: &[u8]) {
            self.connection
                .handle_bytes(&mut self.server, self.now, bytes);
        }

        fn drain(&mut self) -> Vec<u8> {
            let mut out = Vec::new();
            while let Some(bytes) = self.connection.poll_transmit() {
                out.extend_from_slice(&bytes);
            }
            out
        }

        /// Reads everything the server sent: an ERR message, or one reassembled response.
        fn receive(&mut self) -> Received {
            let mut decoder = FrameDecoder::new(u32::MAX);
            let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
            let mut result = Received::Nothing;
            // Chunk by chunk, as a socket would deliver them.
            while let Some(bytes) = self.connection.poll_transmit() {
                decoder.push(&bytes);
                while let Some(frame) = decoder.next_frame().unwrap() {
                    // Every frame respects the client's receive buffer.
                    assert!(frame.header.message_size <= self.hello.receive_buffer_size);
                    match frame.header.message_type {
                        MessageType::Error => {
                            return Received::Error(ErrorMessage::from_frame(&frame).unwrap());
                        }
                        MessageType::Acknowledge => continue,
                        _ => {}
                    }
                    let chunk = SecureChannelChunk::from_frame(&frame).unwrap();
                    self.chunks_received += 1;
                    if let Some(AssemblyEvent::Message(message)) = assembler.push(chunk).unwrap() {
                        // The response echoes the request id of the request.
                        assert_eq!(message.request_id, self.request_id);
                        let limits = DecodingLimits {
                            max_byte_string_length: usize::MAX,
                            ..DecodingLimits::default()
                        };
                        let response =
                            ServiceResponse::decode_message_with_limits(&message.body, limits)
                                .unwrap();
                        result = Received::Response(Box::new(response));
                    }
                }
            }
            result
        }

        fn hello(&mut self) -> Acknowledge {
            let hello = self.hello.hello("opc.tcp://localhost:4840/");
            self.send(&hello.to_message_bytes());
            let bytes = self.drain();
            let mut decoder = FrameDecoder::new(65_536);
            decoder.push(&bytes);
            Acknowledge::from_frame(&decoder.next_frame().unwrap().unwrap()).unwrap()
        }

        fn next_sequence(&mut self) -> SequenceHeader {
            self.sequence_number += 1;
            self.request_id += 1;
            SequenceHeader {
                sequence_number: self.sequence_number,
                request_id: self.request_id,
            }
        }

        fn header(&mut self) -> RequestHeader {
            self.request_handle += 1;
            RequestHeader {
                authentication_token: self.authentication_token.clone(),
                request_handle: self.request_handle,
                timeout_hint: 10_000,
                ..RequestHeader::default()
            }
        }

        fn open_bytes(&mut self, request_type: SecurityTokenRequestType) -> Vec<u8> {
            let request = ServiceRequest::from(OpenSecureChannelRequest {
                request_header: self.header(),
                client_protocol_version: 0,
                request_type,
                security_mode: MessageSecurityMode::None,
                client_nonce: ByteString::NULL,
                requested_lifetime: 60_000,
            });
            SecureChannelChunk {
                message_type: MessageType::OpenSecureChannel,
                chunk_type: ChunkType::Final,
                secure_channel_id: self.channel_id,
                security_header: SecurityHeader::Asymmetric(AsymmetricSecurityHeader::none()),
                sequence_header: self.next_sequence(),
                body: request.encode_message().into(),
            }
            .to_bytes()
        }

        fn open(&mut self, request_type: SecurityTokenRequestType) -> OpenSecureChannelResponse {
            let bytes = self.open_bytes(request_type);
            self.send(&bytes);
            match self.receive() {
                Received::Response(response)
                    if matches!(*response, ServiceResponse::OpenSecureChannel(_)) =>
                {
                    let ServiceResponse::OpenSecureChannel(response) = *response else {
                        unreachable!()
                    };
                    self.channel_id = response.security_token.channel_id;
                    self.token_id = response.security_token.token_id;
                    response
                }
                other => panic!("expected an OPN response, got {other:?}"),
            }
        }

        fn connect(&mut self) {
            self.hello();
            self.open(SecurityTokenRequestType::Issue);
        }

        /// The request as MSG chunks of at most 65535 bytes, all with one request id.
        fn message_bytes(&mut self, request: &ServiceRequest) -> Vec<u8> {
            let body = request.encode_message();
            let pieces: Vec<&[u8]> = body.chunks(65_535 - 24).collect();
            let mut sequence = self.next_sequence();
            let mut out = Vec::new();
            for (index, piece) in pieces.iter().enumerate() {
                let last = index + 1 == pieces.len();
                out.extend_from_slice(
                    &SecureChannelChunk {
                        message_type: MessageType::Message,
                        chunk_type: if last {
                            ChunkType::Final
                        } else {
                            ChunkType::Intermediate
                        },
                        secure_channel_id: self.channel_id,
                        security_header: SecurityHeader::Symmetric(SymmetricSecurityHeader {
                            token_id: self.token_id,
                        }),
                        sequence_header: sequence,
                        body: piece.to_vec().into(),
                    }
                    .to_bytes(),
                );
                self.sequence_number += 1;
                sequence.sequence_number = self.sequence_number;
            }
            self.sequence_number -= 1;
            out
        }

        fn call(&mut self, request: impl Into<ServiceRequest>) -> Received {
            let bytes = self.message_bytes(&request.into());
            self.send(&bytes);
            self.receive()
        }

        fn response(&mut self, request: impl Into<ServiceRequest>) -> ServiceResponse {
            match self.call(request) {
                Received::Response(response) => *response,
                other => panic!("expected a response, got {other:?}"),
            }
        }

        fn create_session(&mut self) -> CreateSessionResponse {
            let request = CreateSessionRequest {
                request_header: self.header(),
                client_description: ApplicationDescription {
                    application_uri: "urn:test:client".into(),
                    product_uri: UaString::NULL,
                    application_name: Default::default(),
                    application_type: ApplicationType::Client,
                    gateway_server_uri: UaString::NULL,
                    discovery_profile_uri: UaString::NULL,
                    discovery_urls: Vec::new(),
                },
                server_uri: UaString::NULL,
                endpoint_url: "opc.tcp://localhost:4840/".into(),
                session_name: "test".into(),
                client_nonce: ByteString::NULL,
                client_certificate: ByteString::NULL,
                requested_session_timeout: 60_000.0,
                max_response_message_size: 0,
            };
            match self.response(request) {
                ServiceResponse::CreateSession(response) => {
                    self.authentication_token = response.authentication_token.clone();
                    response
                }
                other => panic!("CreateSession failed: {other:?}"),
            }
        }

        fn activate(&mut self, token: UserIdentityToken) -> ServiceResponse {
            let request = ActivateSessionRequest {
                request_header: self.header(),
                user_identity_token: token.to_extension_object(),
                ..ActivateSessionRequest::default()
            };
            self.response(request)
        }

        fn anonymous_session(&mut self) {
            self.create_session();
            let response = self.activate(anonymous());
            assert!(matches!(response, ServiceResponse::ActivateSession(_)));
        }

        fn read(
            &mut self,
            items: Vec<ReadValueId>,
            timestamps: TimestampsToReturn,
        ) -> ServiceResponse {
            let request = ReadRequest {
                request_header: self.header(),
                max_age: 0.0,
                timestamps_to_return: timestamps,
                nodes_to_read: items,
            };
            self.response(request)
        }

        fn read_values(&mut self, nodes: &[NodeId]) -> Vec<DataValue> {
            let items = nodes.iter().map(|n| value_of(n.clone())).collect();
            match self.read(items, TimestampsToReturn::Both) {
                ServiceResponse::Read(response) => response.results,
                other => panic!("Read failed: {other:?}"),
            }
        }

        fn call_methods(&mut self, calls: Vec<CallMethodRequest>) -> ServiceResponse {
            let request = CallRequest {
                request_header: self.header(),
                methods_to_call: calls,
            };
            self.response(request)
        }
    }

    fn anonymous() -> UserIdentityToken {
        UserIdentityToken::Anonymous(AnonymousIdentityToken {
            policy_id: "anonymous".into(),
        })
    }

    fn user(name: &str, password: &str) -> UserIdentityToken {
        UserIdentityToken::UserName(UserNameIdentityToken {
            policy_id: "username".into(),
            user_name: name.into(),
            password: ByteString::from(password.as_bytes()),
            encryption_algorithm: UaString::NULL,
        })
    }

    fn value_of(node_id: NodeId) -> ReadValueId {
        ReadValueId {
            node_id,
            attribute_id: AttributeId::Value.id(),
            ..ReadValueId::default()
        }
    }

    fn fault_status(response: &ServiceResponse) -> StatusCode {
        match response {
            ServiceResponse::ServiceFault(fault) => fault.response_header.service_result,
            other => panic!("expected a ServiceFault, got {other:?}"),
        }
    }

    fn expect_error(received: Received) -> StatusCode {
        match received {
            Received::Error(error) => error.error,
            other => panic!("expected an ERR message, got {other:?}"),
        }
    }

    fn method_call(method_id: NodeId, input_arguments: Vec<Variant>) -> CallMethodRequest {
        CallMethodRequest {
            object_id: THROUGHPUT_OBJECT,
            method_id,
            input_arguments,
        }
    }

    #[test]
    fn hello_is_acknowledged_with_server_limits() {
        let mut client = Client::new();
        let acknowledge = client.hello();
        assert_eq!(
            acknowledge,
            Acknowledge {
                protocol_version: 0,
                receive_buffer_size: 65_535,
                send_buffer_size: 65_535,
                max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
                max_chunk_count: DEFAULT_MAX_CHUNK_COUNT,
            }
        );
        assert!(!client.connection.is_closed());
    }

    #[test]
    fn byte_by_byte_input_is_reassembled() {
        let mut client = Client::new();
        let hello = client
            .hello
            .hello("opc.tcp://localhost:4840/")
            .to_message_bytes();
        for byte in &hello {
            client.send(std::slice::from_ref(byte));
        }
        let bytes = client.open_bytes(SecurityTokenRequestType::Issue);
        for piece in bytes.chunks(3) {
            client.send(piece);
        }
        let received = client.drain();
        assert_eq!(&received[..4], b"ACKF");
        assert_eq!(&received[28..32], b"OPNF");
    }

    #[test]
    fn open_secure_channel_issue_and_renew() {
        let mut client = Client::new();
        client.hello();
        let issued = client.open(SecurityTokenRequestType::Issue);
        assert_eq!(issued.response_header.service_result, StatusCode::GOOD);
        assert_eq!(issued.response_header.request_handle, 1);
        assert_eq!(issued.security_token.token_id, 1);
        assert_eq!(issued.security_token.revised_lifetime, 60_000);
        assert_eq!(issued.security_token.created_at, START);
        assert_ne!(issued.security_token.channel_id, 0);
        assert_eq!(
            client.connection.channel_id(),
            Some(issued.security_token.channel_id)
        );
        // The token must be renewed before 125 % of its lifetime.
        assert_eq!(
            client.connection.poll_timeout(),
            Some(client.now + Duration::from_millis(75_000))
        );

        client.now += Duration::from_secs(45);
        let renewed = client.open(SecurityTokenRequestType::Renew);
        assert_eq!(renewed.security_token.token_id, 2);
        assert_eq!(
            renewed.security_token.channel_id,
            issued.security_token.channel_id
        );
        // The old token is still accepted until the new one is used.
        client.token_id = 1;
        let endpoints = GetEndpointsRequest {
            request_header: client.header(),
            ..GetEndpointsRequest::default()
        };
        assert!(matches!(
            client.call(endpoints.clone()),
            Received::Response(_)
        ));
        client.token_id = 2;
        assert!(matches!(
            client.call(endpoints.clone()),
            Received::Response(_)
        ));
        client.token_id = 1;
        assert_eq!(
            expect_error(client.call(endpoints)),
            StatusCode::BAD_SECURE_CHANNEL_TOKEN_UNKNOWN
        );
        assert!(client.connection.is_closed());
    }

    #[test]
    fn token_expiry_closes_the_channel() {
        let mut client = Client::new();
        client.connect();
        let deadline = client.connection.poll_timeout().unwrap();
        client
            .connection
            .handle_timeout(deadline - Duration::from_millis(1));
        assert!(!client.connection.is_closed());
        client.connection.handle_timeout(deadline);
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_SECURE_CHANNEL_CLOSED
        );
    }

    #[test]
    fn close_secure_channel_closes_quietly() {
        let mut client = Client::new();
        client.connect();
        let close = ServiceRequest::from(CloseSecureChannelRequest::default());
        let mut bytes = client.message_bytes(&close);
        bytes[..3].copy_from_slice(b"CLO");
        client.send(&bytes);
        assert!(client.drain().is_empty());
        assert_eq!(
            client.connection.close_reason(),
            Some(&CloseReason::ClosedByClient)
        );
    }

    #[test]
    fn get_endpoints_and_find_servers() {
        let mut client = Client::new();
        client.connect();
        let request = GetEndpointsRequest {
            request_header: client.header(),
            endpoint_url: "opc.tcp://localhost:4840/".into(),
            ..GetEndpointsRequest::default()
        };
        let ServiceResponse::GetEndpoints(response) = client.response(request) else {
            panic!("GetEndpoints failed");
        };
        assert_eq!(response.endpoints.len(), 1);
        let endpoint = &response.endpoints[0];
        assert_eq!(endpoint.security_mode, MessageSecurityMode::None);
        assert_eq!(
            endpoint.security_policy_uri.as_str(),
            Some("http://opcfoundation.org/UA/SecurityPolicy#None")
        );
        let kinds: Vec<_> = endpoint
            .user_identity_tokens
            .iter()
            .map(|p| p.token_type)
            .collect();
        assert_eq!(kinds, [UserTokenType::Anonymous, UserTokenType::UserName]);
        assert_eq!(
            endpoint.server.application_uri.as_str(),
            Some("urn:buildwire:opcua:server")
        );

        let request = FindServersRequest {
            request_header: client.header(),
            ..FindServersRequest::default()
        };
        let ServiceResponse::FindServers(response) = client.response(request) else {
            panic!("FindServers failed");
        };
        assert_eq!(response.servers.len(), 1);
        assert_eq!(
            response.servers[0].application_type,
            ApplicationType::Server
        );
    }

    #[test]
    fn no_cleartext_user_name_without_the_option() {
        // No certificate and no `allow_cleartext_passwords`: the None endpoint offers no
        // UserName policy, and a password sent in clear anyway is refused.
        let mut client = Client::with_server(ServerConfig {
            allow_cleartext_passwords: false,
            ..config()
        });
        client.connect();
        let created = client.create_session();
        let kinds: Vec<_> = created.server_endpoints[0]
            .user_identity_tokens
            .iter()
            .map(|p| p.token_type)
            .collect();
        assert_eq!(kinds, [UserTokenType::Anonymous]);
        let response = client.activate(user("alice", "secret"));
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_IDENTITY_TOKEN_REJECTED
        );
    }

    #[test]
    fn sessions_anonymous_username_and_wrong_password() {
        let mut client = Client::new();
        client.connect();
        let created = client.create_session();
        assert_eq!(created.revised_session_timeout, 60_000.0);
        assert_eq!(created.server_nonce.as_bytes().map(<[u8]>::len), Some(32));
        assert_eq!(created.server_endpoints.len(), 1);
        // Not activated yet.
        let response = client.read(
            vec![value_of(ids::SERVER_SERVER_STATUS_STATE)],
            TimestampsToReturn::Neither,
        );
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_SESSION_NOT_ACTIVATED
        );
        // Wrong password, unknown user, wrong policy.
        let response = client.activate(user("alice", "wrong"));
        assert_eq!(fault_status(&response), StatusCode::BAD_USER_ACCESS_DENIED);
        let response = client.activate(user("bob", "secret"));
        assert_eq!(fault_status(&response), StatusCode::BAD_USER_ACCESS_DENIED);
        let response = client.activate(UserIdentityToken::Anonymous(AnonymousIdentityToken {
            policy_id: "username".into(),
        }));
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_IDENTITY_TOKEN_INVALID
        );
        // Right password.
        let response = client.activate(user("alice", "secret"));
        let ServiceResponse::ActivateSession(activated) = response else {
            panic!("ActivateSession failed: {response:?}");
        };
        assert_eq!(activated.response_header.service_result, StatusCode::GOOD);
        let values = client.read_values(&[ids::SERVER_SERVER_STATUS_STATE]);
        assert_eq!(values[0].value, Some(Variant::Int32(0)));

        // Anonymous on a second session.
        client.create_session();
        assert!(matches!(
            client.activate(anonymous()),
            ServiceResponse::ActivateSession(_)
        ));

        // A wrong authentication token.
        client.authentication_token = NodeId::numeric(1, 424_242);
        let response = client.read(
            vec![value_of(ids::SERVER_SERVER_STATUS_STATE)],
            TimestampsToReturn::Neither,
        );
        assert_eq!(fault_status(&response), StatusCode::BAD_SESSION_ID_INVALID);
    }

    #[test]
    fn session_events_for_the_log_name_the_user_and_never_the_password() {
        let mut client = Client::new();
        client.connect();
        let created = client.create_session();
        let refused = client.activate(user("alice", "wrong"));
        assert_eq!(fault_status(&refused), StatusCode::BAD_USER_ACCESS_DENIED);
        client.activate(user("alice", "secret"));
        let request = CloseSessionRequest {
            request_header: client.header(),
            delete_subscriptions: true,
        };
        client.response(request);
        let channel_id = client.channel_id;
        let events = client.server.take_session_events();
        assert_eq!(
            events,
            [
                SessionEvent::Created {
                    session_id: created.session_id.clone(),
                    name: "test".into(),
                    channel_id,
                },
                SessionEvent::Refused {
                    service: "ActivateSession",
                    channel_id,
                    status: StatusCode::BAD_USER_ACCESS_DENIED,
                },
                SessionEvent::Activated {
                    session_id: created.session_id.clone(),
                    user: Some("alice".into()),
                    channel_id,
                },
                SessionEvent::Closed {
                    session_id: created.session_id,
                    channel_id,
                },
            ]
        );
        assert!(!format!("{events:?}").contains("secret"));
        assert!(client.server.take_session_events().is_empty());
    }

    #[test]
    fn close_session_and_session_timeout() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        let request = CloseSessionRequest {
            request_header: client.header(),
            delete_subscriptions: true,
        };
        assert!(matches!(
            client.response(request),
            ServiceResponse::CloseSession(_)
        ));
        let response = client.read(vec![value_of(ids::SERVER)], TimestampsToReturn::Neither);
        assert_eq!(fault_status(&response), StatusCode::BAD_SESSION_ID_INVALID);

        client.anonymous_session();
        assert_eq!(
            client.server.poll_timeout(),
            Some(client.now + Duration::from_secs(60))
        );
        client.now += Duration::from_secs(61);
        client.server.handle_timeout(client.now);
        assert!(client.server.sessions.is_empty());
        let response = client.read(vec![value_of(ids::SERVER)], TimestampsToReturn::Neither);
        assert_eq!(fault_status(&response), StatusCode::BAD_SESSION_ID_INVALID);
    }

    #[test]
    fn activated_session_moves_to_a_new_channel() {
        let mut client = Client::new();
        client.connect();
        client.create_session();
        let unactivated = client.authentication_token.clone();
        client.create_session();
        client.activate(user("alice", "secret"));
        let first_channel = client.channel_id;
        client.reconnect();
        client.connect();
        assert_ne!(client.channel_id, first_channel);
        // Requests on the new channel need a reactivation first.
        let response = client.read(
            vec![value_of(ids::SERVER_SERVER_STATUS_STATE)],
            TimestampsToReturn::Neither,
        );
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_SECURE_CHANNEL_ID_INVALID
        );
        assert!(matches!(
            client.activate(user("alice", "secret")),
            ServiceResponse::ActivateSession(_)
        ));
        let values = client.read_values(&[ids::SERVER_SERVER_STATUS_STATE]);
        assert_eq!(values[0].value, Some(Variant::Int32(0)));
        // A session never activated stays bound to the channel that created it.
        client.authentication_token = unactivated;
        let response = client.activate(anonymous());
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_SECURE_CHANNEL_ID_INVALID
        );
    }

    #[test]
    fn session_limits_per_connection_and_per_server() {
        let mut client = Client::new();
        client.connect();
        client.create_session();
        client.create_session();
        let request = CreateSessionRequest {
            request_header: client.header(),
            client_description: ApplicationDescription {
                application_uri: UaString::NULL,
                product_uri: UaString::NULL,
                application_name: Default::default(),
                application_type: ApplicationType::Client,
                gateway_server_uri: UaString::NULL,
                discovery_profile_uri: UaString::NULL,
                discovery_urls: Vec::new(),
            },
            server_uri: UaString::NULL,
            endpoint_url: UaString::NULL,
            session_name: UaString::NULL,
            client_nonce: ByteString::NULL,
            client_certificate: ByteString::NULL,
            requested_session_timeout: 0.0,
            max_response_message_size: 0,
        };
        // Per connection: 2.
        let response = client.response(request.clone());
        assert_eq!(fault_status(&response), StatusCode::BAD_TOO_MANY_SESSIONS);
        // Per server: 3. The second session is activated (it survives the reconnect); the
        // first never is.
        client.activate(anonymous());
        client.reconnect();
        client.connect();
        client.create_session();
        client.activate(anonymous());
        // At the cap the oldest never-activated session makes room (OPC 10000-4 §5.6.2.1) ...
        let first = client.server.sessions.oldest_unactivated().unwrap();
        client.create_session();
        assert_eq!(client.server.sessions.len(), 3);
        assert_eq!(
            client.server.sessions.find_any(&first, client.now).err(),
            Some(StatusCode::BAD_SESSION_ID_INVALID)
        );
        client.activate(anonymous());
        // ... and once every session is activated, the cap holds.
        client.reconnect();
        client.connect();
        let request = CreateSessionRequest {
            request_header: client.header(),
            ..request
        };
        let response = client.response(request);
        assert_eq!(fault_status(&response), StatusCode::BAD_TOO_MANY_SESSIONS);
    }

    fn browse(
        client: &mut Client,
        node_id: NodeId,
        max: u32,
    ) -> (Vec<ReferenceDescription>, ByteString) {
        let request = BrowseRequest {
            request_header: client.header(),
            view: ViewDescription::default(),
            requested_max_references_per_node: max,
            nodes_to_browse: vec![BrowseDescription {
                node_id,
                browse_direction: BrowseDirection::Forward,
                reference_type_id: ids::HIERARCHICAL_REFERENCES,
                include_subtypes: true,
                node_class_mask: node_class_mask::ALL,
                result_mask: browse_result_mask::ALL,
            }],
        };
        let ServiceResponse::Browse(mut response) = client.response(request) else {
            panic!("Browse failed");
        };
        let result = response.results.remove(0);
        assert_eq!(result.status_code, StatusCode::GOOD);
        (result.references, result.continuation_point)
    }

    fn browse_all(client: &mut Client, node_id: NodeId) -> Vec<String> {
        let (mut references, mut point) = browse(client, node_id, 2);
        assert!(references.len() <= 2);
        while !point.is_null() {
            let request = BrowseNextRequest {
                request_header: client.header(),
                release_continuation_points: false,
                continuation_points: vec![point],
            };
            let ServiceResponse::BrowseNext(mut response) = client.response(request) else {
                panic!("BrowseNext failed");
            };
            let result = response.results.remove(0);
            assert_eq!(result.status_code, StatusCode::GOOD);
            assert!(result.references.len() <= 2);
            references.extend(result.references);
            point = result.continuation_point;
        }
        references
            .iter()
            .map(|r| r.browse_name.name.as_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn browse_objects_and_server_with_continuation_points() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        let objects = browse_all(&mut client, ids::OBJECTS_FOLDER);
        assert_eq!(objects, ["Server", "Throughput"]);
        let server = browse_all(&mut client, ids::SERVER);
        assert_eq!(
            server,
            [
                "ServerArray",
                "NamespaceArray",
                "ServiceLevel",
                "Auditing",
                "ServerStatus",
                "ServerCapabilities",
                "ServerDiagnostics",
                "VendorServerInfo",
                "ServerRedundancy"
            ]
        );
        // Field contents for the Server object reference.
        let (references, point) = browse(&mut client, ids::OBJECTS_FOLDER, 1);
        let reference = &references[0];
        assert_eq!(reference.reference_type_id, ids::ORGANIZES);
        assert!(reference.is_forward);
        assert_eq!(reference.node_class, NodeClass::Object);
        assert_eq!(reference.type_definition.node_id, ids::SERVER_TYPE);
        assert_eq!(reference.display_name.text.as_str(), Some("Server"));
        // Release the continuation point; using it again is invalid.
        let release = BrowseNextRequest {
            request_header: client.header(),
            release_continuation_points: true,
            continuation_points: vec![point.clone()],
        };
        let ServiceResponse::BrowseNext(response) = client.response(release) else {
            panic!("BrowseNext failed");
        };
        assert_eq!(response.results[0].status_code, StatusCode::GOOD);
        assert!(response.results[0].references.is_empty());
        let again = BrowseNextRequest {
            request_header: client.header(),
            release_continuation_points: false,
            continuation_points: vec![point],
        };
        let ServiceResponse::BrowseNext(response) = client.response(again) else {
            panic!("BrowseNext failed");
        };
        assert_eq!(
            response.results[0].status_code,
            StatusCode::BAD_CONTINUATION_POINT_INVALID
        );
    }

    #[test]
    fn browse_filters_and_continuation_point_limit() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        // Inverse HasComponent from ServerStatus leads to Server; Organizes (no subtypes) from
        // Root gives the three folders; HasProperty only from Server gives its four mandatory
        // properties (ServerType, OPC 10000-5 §6.3.1).
        let cases = [
            (
                ids::SERVER_SERVER_STATUS,
                BrowseDirection::Inverse,
                ids::HAS_COMPONENT,
                false,
                0,
                vec!["Server"],
            ),
            (
                ids::ROOT_FOLDER,
                BrowseDirection::Forward,
                ids::ORGANIZES,
                false,
                0,
                vec!["Objects", "Types", "Views"],
            ),
            (
                ids::SERVER,
                BrowseDirection::Forward,
                ids::HAS_PROPERTY,
                false,
                0,
                vec!["ServerArray", "NamespaceArray", "ServiceLevel", "Auditing"],
            ),
            (
                ids::SERVER,
                BrowseDirection::Forward,
                ids::AGGREGATES,
                true,
                node_class_mask::OBJECT,
                vec![
                    "ServerCapabilities",
                    "ServerDiagnostics",
                    "VendorServerInfo",
                    "ServerRedundancy",
                ],
            ),
        ];
        for (
            node_id,
            browse_direction,
            reference_type_id,
            include_subtypes,
            node_class_mask,
            expected,
        ) in cases
        {
            let request = BrowseRequest {
                request_header: client.header(),
                view: ViewDescription::default(),
                requested_max_references_per_node: 0,
                nodes_to_browse: vec![BrowseDescription {
                    node_id,
                    browse_direction,
                    reference_type_id,
                    include_subtypes,
                    node_class_mask,
                    result_mask: browse_result_mask::BROWSE_NAME,
                }],
            };
            let ServiceResponse::Browse(response) = client.response(request) else {
                panic!("Browse failed");
            };
            let names: Vec<_> = response.results[0]
                .references
                .iter()
                .map(|r| r.browse_name.name.as_str().unwrap_or_default().to_owned())
                .collect();
            assert_eq!(names, expected);
        }
        // Bad node and bad reference type.
        let request = BrowseRequest {
            request_header: client.header(),
            view: ViewDescription::default(),
            requested_max_references_per_node: 0,
            nodes_to_browse: vec![
                BrowseDescription {
                    node_id: NodeId::numeric(0, 999_999),
                    browse_direction: BrowseDirection::Forward,
                    reference_type_id: NodeId::default(),
                    include_subtypes: true,
                    node_class_mask: 0,
                    result_mask: 0,
                },
                BrowseDescription {
                    node_id: ids::SERVER,
                    browse_direction: BrowseDirection::Forward,
                    reference_type_id: ids::SERVER,
                    include_subtypes: true,
                    node_class_mask: 0,
                    result_mask: 0,
                },
            ],
        };
        let ServiceResponse::Browse(response) = client.response(request) else {
            panic!("Browse failed");
        };
        assert_eq!(
            response.results[0].status_code,
            StatusCode::BAD_NODE_ID_UNKNOWN
        );
        assert_eq!(
            response.results[1].status_code,
            StatusCode::BAD_REFERENCE_TYPE_ID_INVALID
        );
        // At most 16 continuation points per session (the default).
        for _ in 0..16 {
            let (_, point) = browse(&mut client, ids::SERVER, 1);
            assert!(!point.is_null());
        }
        let request = BrowseRequest {
            request_header: client.header(),
            view: ViewDescription::default(),
            requested_max_references_per_node: 1,
            nodes_to_browse: vec![BrowseDescription {
                node_id: ids::SERVER,
                browse_direction: BrowseDirection::Forward,
                reference_type_id: NodeId::default(),
                include_subtypes: true,
                node_class_mask: 0,
                result_mask: 0,
            }],
        };
        let ServiceResponse::Browse(response) = client.response(request) else {
            panic!("Browse failed");
        };
        assert_eq!(
            response.results[0].status_code,
            StatusCode::BAD_NO_CONTINUATION_POINTS
        );
    }

    #[test]
    fn translate_path_to_current_time() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        let step = |name: &str| RelativePathElement {
            reference_type_id: ids::HIERARCHICAL_REFERENCES,
            is_inverse: false,
            include_subtypes: true,
            target_name: QualifiedName::new(0, name),
        };
        let path = |elements| BrowsePath {
            starting_node: ids::OBJECTS_FOLDER,
            relative_path: RelativePath { elements },
        };
        let request = TranslateBrowsePathsToNodeIdsRequest {
            request_header: client.header(),
            browse_paths: vec![
                path(vec![
                    step("Server"),
                    step("ServerStatus"),
                    step("CurrentTime"),
                ]),
                path(vec![step("Server"), step("Nowhere")]),
                path(vec![]),
            ],
        };
        let ServiceResponse::TranslateBrowsePathsToNodeIds(response) = client.response(request)
        else {
            panic!("Translate failed");
        };
        assert_eq!(response.results[0].status_code, StatusCode::GOOD);
        assert_eq!(
            response.results[0].targets,
            [BrowsePathTarget {
                target_id: ids::SERVER_SERVER_STATUS_CURRENT_TIME.into(),
                remaining_path_index: u32::MAX
            }]
        );
        assert_eq!(response.results[1].status_code, StatusCode::BAD_NO_MATCH);
        assert_eq!(
            response.results[2].status_code,
            StatusCode::BAD_NOTHING_TO_DO
        );
    }

    #[test]
    fn read_current_time_namespace_array_and_errors() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        client.now += Duration::from_millis(1500);
        let values = client.read_values(&[
            ids::SERVER_SERVER_STATUS_CURRENT_TIME,
            ids::SERVER_NAMESPACE_ARRAY,
            NodeId::numeric(0, 11705),
        ]);
        let expected_now = DateTime(START.0 + 15_000_000);
        assert_eq!(values[0].value, Some(Variant::DateTime(expected_now)));
        assert_eq!(values[0].server_timestamp, Some(expected_now));
        assert_eq!(values[0].source_timestamp, Some(expected_now));
        let namespaces = Variant::array(
            VariantType::String,
            vec![
                Variant::from("http://opcfoundation.org/UA/"),
                Variant::from("urn:buildwire:opcua:throughput"),
            ],
        )
        .unwrap();
        assert_eq!(values[1].value, Some(namespaces));
        assert_eq!(values[2].value, Some(Variant::UInt32(10_000)));

        // ServerStatus is a ServerStatusDataType structure.
        let values = client.read_values(&[ids::SERVER_SERVER_STATUS]);
        let Some(Variant::ExtensionObject(status)) = &values[0].value else {
            panic!("ServerStatus is not an ExtensionObject");
        };
        let status: &ExtensionObject = status;
        assert_eq!(status.type_id, NodeId::numeric(0, 864));

        // Other attributes and errors.
        let items = vec![
            ReadValueId {
                attribute_id: AttributeId::BrowseName.id(),
                ..value_of(ids::SERVER)
            },
            ReadValueId {
                attribute_id: AttributeId::NodeClass.id(),
                ..value_of(ids::SERVER)
            },
            ReadValueId {
                attribute_id: AttributeId::DataType.id(),
                ..value_of(ids::SERVER_SERVER_STATUS_CURRENT_TIME)
            },
            ReadValueId {
                attribute_id: 99,
                ..value_of(ids::SERVER)
            },
            value_of(ids::SERVER),
            value_of(NodeId::numeric(0, 999_999)),
            ReadValueId {
                index_range: "1".into(),
                ..value_of(ids::SERVER_NAMESPACE_ARRAY)
            },
        ];
        let ServiceResponse::Read(response) = client.read(items, TimestampsToReturn::Neither)
        else {
            panic!("Read failed");
        };
        let results = response.results;
        assert_eq!(
            results[0].value,
            Some(Variant::QualifiedName(Box::new(QualifiedName::new(
                0, "Server"
            ))))
        );
        assert_eq!(results[1].value, Some(Variant::Int32(1)));
        assert_eq!(results[2].value, Some(Variant::from(ids::UTC_TIME)));
        assert_eq!(
            results[3].status,
            Some(StatusCode::BAD_ATTRIBUTE_ID_INVALID)
        );
        assert_eq!(
            results[4].status,
            Some(StatusCode::BAD_ATTRIBUTE_ID_INVALID)
        );
        assert_eq!(results[5].status, Some(StatusCode::BAD_NODE_ID_UNKNOWN));
        assert_eq!(
            results[6].value,
            Some(
                Variant::array(
                    VariantType::String,
                    vec![Variant::from("urn:buildwire:opcua:throughput")]
                )
                .unwrap()
            )
        );
        assert_eq!(results[6].server_timestamp, None);

        let response = client.read(Vec::new(), TimestampsToReturn::Both);
        assert_eq!(fault_status(&response), StatusCode::BAD_NOTHING_TO_DO);
        let response = client.read(vec![value_of(ids::SERVER)], TimestampsToReturn::Invalid);
        assert_eq!(
            fault_status(&response),
            StatusCode::BAD_TIMESTAMPS_TO_RETURN_INVALID
        );
        let too_many = vec![value_of(ids::SERVER); 10_001];
        let response = client.read(too_many, TimestampsToReturn::Both);
        assert_eq!(fault_status(&response), StatusCode::BAD_TOO_MANY_OPERATIONS);
    }

    #[test]
    fn write_writable_and_read_only_variables() {
        let mut client = Client::new();
        let namespace = client.server.add_namespace("urn:test:plant");
        let setpoint = NodeId::string(namespace, "Setpoint");
        let serial = NodeId::string(namespace, "Serial");
        let space = &mut client.server.address_space;
        let boiler = NodeId::string(namespace, "Boiler");
        space
            .add_object(
                &ids::OBJECTS_FOLDER,
                boiler.clone(),
                QualifiedName::new(namespace, "Boiler"),
            )
            .unwrap();
        space
            .add_variable(
                &boiler,
                setpoint.clone(),
                QualifiedName::new(namespace, "Setpoint"),
                Variant::Double(20.0),
                ids::DOUBLE,
                true,
            )
            .unwrap();
        space
            .add_variable(
                &boiler,
                serial.clone(),
                QualifiedName::new(namespace, "Serial"),
                Variant::from("A-1"),
                ids::STRING,
                false,
            )
            .unwrap();
        client.connect();
        client.anonymous_session();
        let write = |node_id: &NodeId, value: Variant| WriteValue {
            node_id: node_id.clone(),
            attribute_id: AttributeId::Value.id(),
            index_range: UaString::NULL,
            value: DataValue {
                value: Some(value),
                ..DataValue::default()
            },
        };
        let request = WriteRequest {
            request_header: client.header(),
            nodes_to_write: vec![
                write(&setpoint, Variant::Double(21.5)),
                write(&serial, Variant::from("B-2")),
                write(&setpoint, Variant::Int32(3)),
                write(&NodeId::numeric(namespace, 1), Variant::Double(1.0)),
                WriteValue {
                    attribute_id: AttributeId::DisplayName.id(),
                    ..write(&setpoint, Variant::Double(1.0))
                },
            ],
        };
        let ServiceResponse::Write(response) = client.response(request) else {
            panic!("Write failed");
        };
        assert_eq!(
            response.results,
            [
                StatusCode::GOOD,
                StatusCode::BAD_NOT_WRITABLE,
                StatusCode::BAD_TYPE_MISMATCH,
                StatusCode::BAD_NODE_ID_UNKNOWN,
                StatusCode::BAD_NOT_WRITABLE,
            ]
        );
        let values = client.read_values(&[setpoint, serial]);
        assert_eq!(values[0].value, Some(Variant::Double(21.5)));
        assert_eq!(values[1].value, Some(Variant::from("A-1")));
        // The namespace shows up in the NamespaceArray.
        let values = client.read_values(&[ids::SERVER_NAMESPACE_ARRAY]);
        let Some(Variant::Array(array)) = &values[0].value else {
            panic!("NamespaceArray is not an array");
        };
        assert_eq!(array.elements().len(), 3);
    }

    #[test]
    fn call_set_size_then_get_data() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        let ServiceResponse::Call(response) =
            client.call_methods(vec![method_call(SET_SIZE_METHOD, vec![Variant::UInt32(4)])])
        else {
            panic!("Call failed");
        };
        assert_eq!(response.results[0].status_code, StatusCode::GOOD);
        let ServiceResponse::Call(response) =
            client.call_methods(vec![method_call(GET_DATA_METHOD, vec![])])
        else {
            panic!("Call failed");
        };
        let result = &response.results[0];
        assert_eq!(result.status_code, StatusCode::GOOD);
        let [Variant::ByteString(data)] = result.output_arguments.as_slice() else {
            panic!("getData returned {:?}", result.output_arguments);
        };
        let data = data.as_bytes().unwrap();
        assert_eq!(data.len(), 4096);
        assert_eq!(data, &client.server.throughput.data()[..]);
    }

    #[test]
    fn call_argument_errors() {
        let mut client = Client::new();
        let callback_node = NodeId::numeric(1, 7000);
        client
            .server
            .address_space
            .add_method(
                &THROUGHPUT_OBJECT,
                callback_node.clone(),
                QualifiedName::new(1, "double"),
                vec![buildwire_opcua::server::MethodArgument::new(
                    "x",
                    VariantType::Int32,
                    "",
                )],
                vec![buildwire_opcua::server::MethodArgument::new(
                    "y",
                    VariantType::Int32,
                    "",
                )],
                buildwire_opcua::server::MethodHandler::Callback(Box::new(|inputs| match inputs {
                    [Variant::Int32(x)] => Ok(vec![Variant::Int32(x * 2)]),
                    _ => Err(StatusCode::BAD_INVALID_ARGUMENT),
                })),
            )
            .unwrap();
        client.connect();
        client.anonymous_session();
        let ServiceResponse::Call(response) = client.call_methods(vec![
            method_call(callback_node.clone(), vec![Variant::Int32(21)]),
            method_call(SET_SIZE_METHOD, vec![]),
            method_call(
                SET_SIZE_METHOD,
                vec![Variant::UInt32(1), Variant::UInt32(2)],
            ),
            method_call(SET_SIZE_METHOD, vec![Variant::Double(1.0)]),
            method_call(ids::SERVER, vec![]),
            method_call(NodeId::numeric(1, 6999), vec![]),
        ]) else {
            panic!("Call failed");
        };
        let statuses: Vec<_> = response.results.iter().map(|r| r.status_code).collect();
        assert_eq!(
            statuses,
            [
                StatusCode::GOOD,
                StatusCode::BAD_ARGUMENTS_MISSING,
                StatusCode::BAD_TOO_MANY_ARGUMENTS,
                StatusCode::BAD_INVALID_ARGUMENT,
                StatusCode::BAD_METHOD_INVALID,
                StatusCode::BAD_METHOD_INVALID,
            ]
        );
        assert_eq!(response.results[0].output_arguments, [Variant::Int32(42)]);
        assert_eq!(
            response.results[3].input_argument_results,
            [StatusCode::BAD_TYPE_MISMATCH]
        );
    }

    #[test]
    fn get_data_of_100_mib_is_chunked_and_reassembled() {
        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        let ServiceResponse::Call(response) = client.call_methods(vec![method_call(
            SET_SIZE_METHOD,
            vec![Variant::UInt32(100 * 1024)],
        )]) else {
            panic!("Call failed");
        };
        assert_eq!(response.results[0].status_code, StatusCode::GOOD);
        let before = client.chunks_received;
        let ServiceResponse::Call(response) =
            client.call_methods(vec![method_call(GET_DATA_METHOD, vec![])])
        else {
            panic!("Call failed");
        };
        let [Variant::ByteString(data)] = response.results[0].output_arguments.as_slice() else {
            panic!("getData returned no ByteString");
        };
        let data = data.as_bytes().unwrap();
        assert_eq!(data.len(), 100 * 1024 * 1024);
        assert!(data == &client.server.throughput.data()[..]);
        // 65535-byte chunks with 24 bytes of headers each.
        let expected_chunks = (data.len() + 50).div_ceil(65_535 - 24);
        assert_eq!(client.chunks_received - before, expected_chunks);
    }

    #[test]
    fn get_data_goes_out_as_payload_slices_not_copies() {
        use buildwire_opcua::transport::TransmitBuffer;
        use bytes::Buf;

        let mut client = Client::new();
        client.connect();
        client.anonymous_session();
        client.call_methods(vec![method_call(
            SET_SIZE_METHOD,
            vec![Variant::UInt32(1024)],
        )]);
        let request = ServiceRequest::from(CallRequest {
            request_header: client.header(),
            methods_to_call: vec![method_call(GET_DATA_METHOD, vec![])],
        });
        let bytes = client.message_bytes(&request);
        client.send(&bytes);
        let mut gathered = TransmitBuffer::new();
        let total = client
            .connection
            .transmit_buffered(&mut gathered, usize::MAX);
        assert_eq!(total, gathered.remaining());
        // The payload is referenced in the shared buffer, not copied.
        let payload = client.server.throughput.data();
        let inside = payload.as_ptr_range();
        let mut slices = vec![std::io::IoSlice::new(&[]); gathered.part_count()];
        assert_eq!(gathered.chunks_vectored(&mut slices), slices.len());
        let referenced: usize = slices
            .iter()
            .filter(|slice| inside.contains(&slice.as_ptr()))
            .map(|slice| slice.len())
            .sum();
        // (A piece shorter than INLINE_COPY_MAX, here the tail in the last chunk, is copied.)
        assert!(payload.len() - referenced < buildwire_opcua::transport::INLINE_COPY_MAX);
        assert!(referenced > payload.len() - 65_535);
        // 1 MiB in 65535-byte chunks: 17 chunks, each a header run and a payload slice.
        let chunks = (payload.len() + 50).div_ceil(65_535 - 24);
        assert_eq!(chunks, 17);
        assert!(gathered.part_count() >= 2 * chunks - 1);
        // The gathered bytes are a valid response carrying the payload.
        let stream = gathered.to_vec();
        let mut decoder = FrameDecoder::new(65_535);
        decoder.push(&stream);
        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
        let mut message = None;
        while let Some(frame) = decoder.next_frame().unwrap() {
            let chunk = SecureChannelChunk::from_frame(&frame).unwrap();
            if let Some(AssemblyEvent::Message(done)) = assembler.push(chunk).unwrap() {
                message = Some(done);
            }
        }
        let message = message.unwrap();
        assert_eq!(message.chunk_count as usize, chunks);
        let ServiceResponse::Call(response) =
            ServiceResponse::decode_message_shared(&message.body, DecodingLimits::default())
                .unwrap()
        else {
            panic!("expected a CallResponse");
        };
        let [Variant::ByteString(data)] = response.results[0].output_arguments.as_slice() else {
            panic!("getData returned no ByteString");
        };
        assert!(data.as_bytes().unwrap() == &payload[..]);
        // What a socket write of part of it leaves is the rest, in order.
        gathered.advance(total / 3);
        assert_eq!(gathered.to_vec(), stream[total / 3..]);
    }

    #[test]
    fn response_too_large_for_the_client_is_a_fault() {
        let mut client = Client::new();
        client.hello.max_message_size = 16 * 1024;
        client.connect();
        client.anonymous_session();
        client.call_methods(vec![method_call(
            SET_SIZE_METHOD,
            vec![Variant::UInt32(64)],
        )]);
        let response = client.call_methods(vec![method_call(GET_DATA_METHOD, vec![])]);
        assert_eq!(fault_status(&response), StatusCode::BAD_RESPONSE_TOO_LARGE);
        // Chunk count limit: 64 KiB in 8 KiB chunks needs 9 chunks.
        let mut client = Client::new();
        client.hello.receive_buffer_size = 8192;
        client.hello.max_chunk_count = 4;
        client.connect();
        client.anonymous_session();
        client.call_methods(vec![method_call(
            SET_SIZE_METHOD,
            vec![Variant::UInt32(64)],
        )]);
        let response = client.call_methods(vec![method_call(GET_DATA_METHOD, vec![])]);
        assert_eq!(fault_status(&response), StatusCode::BAD_RESPONSE_TOO_LARGE);
    }

    #[test]
    fn unknown_service_is_a_fault() {
        let mut client = Client::new();
        client.connect();
        let header = RequestHeader {
            request_handle: 77,
            ..RequestHeader::default()
        };
        // QueryFirstRequest (i=615): the Query service set is not implemented.
        let mut body = vec![0x01, 0x00, 0x67, 0x02];
        buildwire_opcua::BinaryEncodable::encode(&header, &mut body);
        let chunk = SecureChannelChunk {
            message_type: MessageType::Message,
            chunk_type: ChunkType::Final,
            secure_channel_id: client.channel_id,
            security_header: SecurityHeader::Symmetric(SymmetricSecurityHeader {
                token_id: client.token_id,
            }),
            sequence_header: client.next_sequence(),
            body: body.into(),
        };
        client.send(&chunk.to_bytes());
        let Received::Response(response) = client.receive() else {
            panic!("expected a response");
        };
        let ServiceResponse::ServiceFault(fault) = *response else {
            panic!("expected a ServiceFault");
        };
        assert_eq!(
            fault.response_header.service_result,
            StatusCode::BAD_SERVICE_UNSUPPORTED
        );
        assert_eq!(fault.response_header.request_handle, 77);
        assert!(!client.connection.is_closed());
    }

    #[test]
    fn malformed_input_closes_with_the_right_status() {
        // Not a Hello first.
        let mut client = Client::new();
        client.send(b"MSGF\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00");
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID
        );
        // Unknown message type.
        let mut client = Client::new();
        client.send(b"XYZF\x08\x00\x00\x00");
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID
        );
        // MSG before OPN.
        let mut client = Client::new();
        client.hello();
        let request = ServiceRequest::from(GetEndpointsRequest::default());
        let bytes = client.message_bytes(&request);
        client.send(&bytes);
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN
        );
        assert!(client.connection.is_closed());
        // Truncated chunk: a CLO frame that stops inside the sequence header.
        let mut client = Client::new();
        client.connect();
        let mut bytes = b"CLOF\x12\x00\x00\x00".to_vec();
        bytes.extend_from_slice(&client.channel_id.to_le_bytes());
        bytes.extend_from_slice(&[1, 0, 0, 0, 9, 0]);
        client.send(&bytes);
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_DECODING_ERROR
        );
        // Wrong sequence number.
        let mut client = Client::new();
        client.connect();
        client.sequence_number += 5;
        let bytes = client.message_bytes(&request);
        client.send(&bytes);
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_SEQUENCE_NUMBER_INVALID
        );
        // Oversized chunk: more than the 65535-byte receive buffer.
        let mut client = Client::new();
        client.connect();
        client.send(b"MSGF\x00\x00\x01\x00");
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_TCP_MESSAGE_TOO_LARGE
        );
        // Oversized message: more chunks than MaxChunkCount.
        let mut config = config();
        config.connection_limits.max_chunk_count = 2;
        let mut client = Client::with_server(config);
        client.connect();
        for _ in 0..3 {
            let mut chunk = SecureChannelChunk::from_frame(&{
                let bytes = client.message_bytes(&request);
                let mut decoder = FrameDecoder::new(65_535);
                decoder.push(&bytes);
                decoder.next_frame().unwrap().unwrap()
            })
            .unwrap();
            chunk.chunk_type = ChunkType::Intermediate;
            chunk.sequence_header.request_id = 1000;
            client.send(&chunk.to_bytes());
        }
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_REQUEST_TOO_LARGE
        );
        // Nothing is processed after closing.
        let bytes = client.message_bytes(&request);
        client.send(&bytes);
        assert!(client.drain().is_empty());
    }

    #[test]
    fn security_policy_other_than_none_is_rejected() {
        let mut client = Client::new();
        client.hello();
        let bytes = client.open_bytes(SecurityTokenRequestType::Issue);
        let mut frame_decoder = FrameDecoder::new(65_535);
        frame_decoder.push(&bytes);
        let mut chunk =
            SecureChannelChunk::from_frame(&frame_decoder.next_frame().unwrap().unwrap()).unwrap();
        chunk.security_header = SecurityHeader::Asymmetric(AsymmetricSecurityHeader {
            security_policy_uri: "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256".into(),
            ..AsymmetricSecurityHeader::none()
        });
        client.send(&chunk.to_bytes());
        assert_eq!(
            expect_error(client.receive()),
            StatusCode::BAD_SECURITY_POLICY_REJECTED
        );
    }
}
