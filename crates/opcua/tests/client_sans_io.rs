//! The sans-IO `ClientConnection` against the sans-IO `ServerConnection`, bytes moved by hand
//! (no sockets): handshake (OPC 10000-6 §7.1.2), secure channel Issue and Renew (OPC 10000-4
//! §5.5.2), sessions (§5.6), request chunking, correlation, timeouts and failures.

#[cfg(test)]
mod client_sans_io_tests {
    use std::time::{Duration, Instant};

    use buildwire_opcua::client::{
        ClientConfig, ClientConnection, ClientEvent, ClientIdentity, ClientState, SendError,
    };
    use buildwire_opcua::secure_channel::SecureChannelChunk;
    use buildwire_opcua::server::bench_methods::{
        self, GET_DATA_METHOD, SET_SIZE_METHOD, THROUGHPUT_OBJECT,
    };
    use buildwire_opcua::server::{
        CloseReason, Server, ServerConfig, ServerConnection, UserAccount,
    };
    use buildwire_opcua::services::well_known_nodes as ids;
    use buildwire_opcua::services::*;
    use buildwire_opcua::transport::{ChunkType, ConnectionMessage, ErrorMessage, FrameDecoder};
    use buildwire_opcua::{BinaryEncodable, DateTime, NodeId, StatusCode, UaString, Variant};
    use proptest::prelude::*;

    struct Pair {
        server: Server,
        server_side: ServerConnection,
        client: ClientConnection,
        now: Instant,
        events: Vec<ClientEvent>,
    }

    fn server_config() -> ServerConfig {
        ServerConfig {
            users: vec![UserAccount {
                user_name: "alice".into(),
                password: "secret".into(),
            }],
            // No certificate here: UserName in clear, which both sides must ask for by name.
            allow_cleartext_passwords: true,
            ..ServerConfig::default()
        }
    }

    impl Pair {
        fn new(client_config: ClientConfig) -> Self {
            let now = Instant::now();
            let mut server = Server::new(server_config(), now).unwrap();
            bench_methods::install(&mut server).unwrap();
            let server_side = ServerConnection::new(&server);
            let client = ClientConnection::new(client_config, now, DateTime(1));
            Self {
                server,
                server_side,
                client,
                now,
                events: Vec::new(),
            }
        }

        fn connected(client_config: ClientConfig) -> Self {
            let mut pair = Self::new(client_config);
            pair.pump();
            assert_eq!(pair.events, [ClientEvent::SessionActivated]);
            pair.events.clear();
            assert_eq!(pair.client.state(), ClientState::Active);
            pair
        }

        /// Moves bytes both ways until neither side has anything to send.
        fn pump(&mut self) {
            loop {
                let mut moved = false;
                while let Some(bytes) = self.client.poll_transmit() {
                    self.server_side
                        .handle_bytes(&mut self.server, self.now, &bytes);
                    moved = true;
                }
                while let Some(bytes) = self.server_side.poll_transmit() {
                    self.client.handle_bytes(self.now, &bytes);
                    moved = true;
                }
                while let Some(event) = self.client.poll_event() {
                    self.events.push(event);
                }
                if !moved {
                    return;
                }
            }
        }

        fn request(&mut self, request: impl Into<ServiceRequest>) -> ServiceResponse {
            let handle = self.client.send(self.now, request).unwrap();
            self.pump();
            let event = self.events.remove(0);
            match event {
                ClientEvent::Response {
                    handle: answered,
                    response,
                } if answered == handle => *response,
                other => panic!("expected the response to {handle}, got {other:?}"),
            }
        }
    }

    fn read_request(nodes: &[NodeId]) -> ReadRequest {
        ReadRequest {
            request_header: RequestHeader::default(),
            max_age: 0.0,
            timestamps_to_return: TimestampsToReturn::Both,
            nodes_to_read: nodes
                .iter()
                .map(|node| ReadValueId {
                    node_id: node.clone(),
                    attribute_id: AttributeId::Value.id(),
                    index_range: Default::default(),
                    data_encoding: Default::default(),
                })
                .collect(),
        }
    }

    fn call(object: &NodeId, method: &NodeId, args: Vec<Variant>) -> CallRequest {
        CallRequest {
            request_header: RequestHeader::default(),
            methods_to_call: vec![CallMethodRequest {
                object_id: object.clone(),
                method_id: method.clone(),
                input_arguments: args,
            }],
        }
    }

    #[test]
    fn hello_layout() {
        // OPC 10000-6 §7.1.2.3: "HEL" "F", size, version, receive/send buffer, max message
        // size, max chunk count, EndpointUrl.
        let mut config = ClientConfig::new("opc.tcp://h:1");
        config.connection_limits.max_message_size = 0x0100_0000;
        config.connection_limits.max_chunk_count = 0x20;
        let mut client = ClientConnection::new(config, Instant::now(), DateTime(0));
        let bytes = client.poll_transmit().unwrap();
        let mut expected = b"HELF".to_vec();
        expected.extend_from_slice(&45u32.to_le_bytes());
        expected.extend_from_slice(&[0, 0, 0, 0]);
        expected.extend_from_slice(&[0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0, 0]);
        expected.extend_from_slice(&[0, 0, 0, 1, 0x20, 0, 0, 0]);
        expected.extend_from_slice(&[13, 0, 0, 0]);
        expected.extend_from_slice(b"opc.tcp://h:1");
        assert_eq!(bytes, expected);
        assert_eq!(client.poll_transmit(), None);
    }

    #[test]
    fn read_current_time_and_namespace_array() {
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let response = pair.request(read_request(&[
            ids::SERVER_SERVER_STATUS_CURRENT_TIME,
            ids::SERVER_NAMESPACE_ARRAY,
        ]));
        let ServiceResponse::Read(read) = response else {
            panic!("expected a ReadResponse");
        };
        assert!(matches!(read.results[0].value, Some(Variant::DateTime(_))));
        let Some(Variant::Array(namespaces)) = &read.results[1].value else {
            panic!("NamespaceArray is an array");
        };
        assert_eq!(
            namespaces.elements()[0],
            Variant::from("http://opcfoundation.org/UA/")
        );
    }

    #[test]
    fn call_set_size_then_get_data() {
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let set = pair.request(call(
            &THROUGHPUT_OBJECT,
            &SET_SIZE_METHOD,
            vec![Variant::UInt32(1)],
        ));
        let ServiceResponse::Call(set) = set else {
            panic!("expected a CallResponse");
        };
        assert_eq!(set.results[0].status_code, StatusCode::GOOD);
        let ServiceResponse::Call(got) =
            pair.request(call(&THROUGHPUT_OBJECT, &GET_DATA_METHOD, vec![]))
        else {
            panic!("expected a CallResponse");
        };
        let Variant::ByteString(data) = &got.results[0].output_arguments[0] else {
            panic!("getData returns a ByteString");
        };
        assert_eq!(data.as_bytes().map(<[u8]>::len), Some(1024));
    }

    #[test]
    fn large_response_is_reassembled_and_large_request_is_chunked() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        // Small buffers on our side: the request goes out in many 8 KiB chunks.
        config.connection_limits.send_buffer_size = 8192;
        config.connection_limits.receive_buffer_size = 8192;
        let mut pair = Pair::connected(config);
        let nodes = vec![ids::SERVER_SERVER_STATUS_CURRENT_TIME; 2000];
        let ServiceResponse::Read(read) = pair.request(read_request(&nodes)) else {
            panic!("expected a ReadResponse");
        };
        assert_eq!(read.results.len(), 2000);
        pair.request(call(
            &THROUGHPUT_OBJECT,
            &SET_SIZE_METHOD,
            vec![Variant::UInt32(64)],
        ));
        let ServiceResponse::Call(got) =
            pair.request(call(&THROUGHPUT_OBJECT, &GET_DATA_METHOD, vec![]))
        else {
            panic!("expected a CallResponse");
        };
        let Variant::ByteString(data) = &got.results[0].output_arguments[0] else {
            panic!("getData returns a ByteString");
        };
        assert_eq!(data.as_bytes().map(<[u8]>::len), Some(64 * 1024));
    }

    #[test]
    fn token_is_renewed_at_three_quarters_of_its_lifetime() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.token_lifetime_ms = 10_000;
        let mut pair = Pair::connected(config);
        let (channel, first_token) = pair.client.channel_token().unwrap();
        let renew_at = pair.now + Duration::from_millis(7_500);
        assert_eq!(pair.client.poll_timeout(), Some(renew_at));
        pair.now = renew_at;
        pair.client.handle_timeout(pair.now);
        let opn = pair.client.poll_transmit().unwrap();
        assert_eq!(&opn[..4], b"OPNF");
        pair.server_side
            .handle_bytes(&mut pair.server, pair.now, &opn);
        pair.pump();
        let (same_channel, second_token) = pair.client.channel_token().unwrap();
        assert_eq!(same_channel, channel);
        assert_ne!(second_token, first_token);
        // Well past the first token's expiry, the channel still works with the new token.
        pair.now += Duration::from_millis(6_000);
        pair.server_side.handle_timeout(pair.now);
        assert!(!pair.server_side.is_closed());
        assert!(matches!(
            pair.request(read_request(&[ids::SERVER_SERVER_STATUS_CURRENT_TIME])),
            ServiceResponse::Read(_)
        ));
    }

    #[test]
    fn request_times_out_and_late_response_is_dropped() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.request_timeout = Duration::from_millis(500);
        let mut pair = Pair::connected(config);
        let handle = pair
            .client
            .send(pair.now, read_request(&[ids::SERVER_NAMESPACE_ARRAY]))
            .unwrap();
        let request = pair.client.poll_transmit().unwrap();
        assert_eq!(
            pair.client.poll_timeout(),
            Some(pair.now + Duration::from_millis(500))
        );
        pair.now += Duration::from_millis(500);
        pair.client.handle_timeout(pair.now);
        assert_eq!(
            pair.client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_TIMEOUT
            })
        );
        // The server answers after all: the response no longer belongs to anything.
        pair.server_side
            .handle_bytes(&mut pair.server, pair.now, &request);
        pair.pump();
        assert!(pair.events.is_empty());
        assert_eq!(pair.client.state(), ClientState::Active);
    }

    #[test]
    fn connect_timeout_closes() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.connect_timeout = Duration::from_secs(2);
        let now = Instant::now();
        let mut client = ClientConnection::new(config, now, DateTime(0));
        let handle = client
            .send(now, read_request(&[ids::SERVER_NAMESPACE_ARRAY]))
            .unwrap();
        assert_eq!(client.poll_timeout(), Some(now + Duration::from_secs(2)));
        client.handle_timeout(now + Duration::from_secs(2));
        assert!(client.is_closed());
        assert_eq!(
            client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_TIMEOUT
            })
        );
        assert!(matches!(
            client.poll_event(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_TIMEOUT,
                ..
            })
        ));
        assert_eq!(
            client.send(now, read_request(&[])).unwrap_err(),
            SendError::Closed(StatusCode::BAD_SESSION_CLOSED)
        );
    }

    #[test]
    fn user_name_login_accepted_and_denied() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "secret".into(),
        };
        // Without asking for it, the client does not send the password in clear: it fails
        // before ActivateSession leaves.
        let mut pair = Pair::new(config.clone());
        pair.pump();
        assert!(
            matches!(
                pair.events.as_slice(),
                [ClientEvent::Closed {
                    status: StatusCode::BAD_SECURITY_MODE_INSUFFICIENT,
                    ..
                }]
            ),
            "{:?}",
            pair.events
        );
        config.allow_cleartext_password = true;
        Pair::connected(config.clone());
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "wrong".into(),
        };
        let mut pair = Pair::new(config);
        pair.pump();
        assert!(matches!(
            pair.events.as_slice(),
            [ClientEvent::Closed {
                status: StatusCode::BAD_USER_ACCESS_DENIED,
                ..
            }]
        ));
    }

    #[test]
    fn graceful_close_sends_close_session_then_close_secure_channel() {
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        pair.client.close(pair.now);
        assert_eq!(pair.client.state(), ClientState::Closing);
        pair.pump();
        assert!(pair.client.is_closed());
        assert_eq!(
            pair.server_side.close_reason(),
            Some(&CloseReason::ClosedByClient)
        );
        assert!(pair.server.sessions.is_empty());
        assert!(matches!(
            pair.events.as_slice(),
            [ClientEvent::Closed {
                status: StatusCode::GOOD,
                ..
            }]
        ));
    }

    #[test]
    fn server_error_message_and_garbage_close_with_their_status() {
        let mut pair = Pair::new(ClientConfig::new("opc.tcp://localhost:4840/"));
        let _hello = pair.client.poll_transmit();
        let error = ErrorMessage::new(StatusCode::BAD_TCP_ENDPOINT_URL_INVALID, "no such path");
        pair.client
            .handle_bytes(pair.now, &error.to_message_bytes());
        assert!(matches!(
            pair.client.poll_event(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_TCP_ENDPOINT_URL_INVALID,
                ..
            })
        ));
        let mut pair = Pair::new(ClientConfig::new("opc.tcp://localhost:4840/"));
        pair.client
            .handle_bytes(pair.now, b"HTTP/1.1 400 Bad Request\r\n");
        assert!(matches!(
            pair.client.poll_event(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
                ..
            })
        ));
        assert_eq!(pair.client.poll_transmit(), None);
    }

    #[test]
    fn end_of_stream_fails_outstanding_requests() {
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let handle = pair
            .client
            .send(pair.now, read_request(&[ids::SERVER_NAMESPACE_ARRAY]))
            .unwrap();
        pair.client.handle_end_of_stream();
        assert_eq!(
            pair.client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_CONNECTION_CLOSED
            })
        );
    }

    /// Sends a Read through the server and returns the client's handle and the server's
    /// response chunk, not yet delivered to the client.
    fn undelivered_response(pair: &mut Pair) -> (u32, SecureChannelChunk) {
        let handle = pair
            .client
            .send(pair.now, read_request(&[ids::SERVER_NAMESPACE_ARRAY]))
            .unwrap();
        while let Some(bytes) = pair.client.poll_transmit() {
            pair.server_side
                .handle_bytes(&mut pair.server, pair.now, &bytes);
        }
        let mut decoder = FrameDecoder::new(u32::MAX);
        while let Some(bytes) = pair.server_side.poll_transmit() {
            decoder.push(&bytes);
        }
        let frame = decoder.next_frame().unwrap().unwrap();
        assert!(
            decoder.next_frame().unwrap().is_none(),
            "one chunk expected"
        );
        (handle, SecureChannelChunk::from_frame(&frame).unwrap())
    }

    #[test]
    fn abort_chunk_fails_its_request() {
        // OPC 10000-6 §6.7.3: an abort chunk carries an error code and a reason.
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let (handle, mut chunk) = undelivered_response(&mut pair);
        chunk.chunk_type = ChunkType::Abort;
        let mut body = StatusCode::BAD_ENCODING_LIMITS_EXCEEDED.to_bytes();
        UaString::from("too big").encode(&mut body);
        chunk.body = body.into();
        pair.client.handle_bytes(pair.now, &chunk.to_bytes());
        assert_eq!(
            pair.client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_ENCODING_LIMITS_EXCEEDED
            })
        );
        assert_eq!(pair.client.state(), ClientState::Active);
    }

    #[test]
    fn response_with_another_handle_is_unknown() {
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let (handle, mut chunk) = undelivered_response(&mut pair);
        let ServiceResponse::Read(mut read) = ServiceResponse::decode_message(&chunk.body).unwrap()
        else {
            panic!("expected a ReadResponse");
        };
        read.response_header.request_handle = handle + 100;
        chunk.body = ServiceResponse::from(read).encode_message().into();
        pair.client.handle_bytes(pair.now, &chunk.to_bytes());
        assert_eq!(
            pair.client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_UNKNOWN_RESPONSE
            })
        );
    }

    #[test]
    fn malformed_chunks_close_with_their_status() {
        // A skipped sequence number (OPC 10000-6 §6.7.2.4).
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let (_, mut chunk) = undelivered_response(&mut pair);
        chunk.sequence_header.sequence_number += 5;
        pair.client.handle_bytes(pair.now, &chunk.to_bytes());
        let events: Vec<_> = std::iter::from_fn(|| pair.client.poll_event()).collect();
        assert!(matches!(
            events.last(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_SEQUENCE_NUMBER_INVALID,
                ..
            })
        ));
        // Another channel id.
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let (_, mut chunk) = undelivered_response(&mut pair);
        chunk.secure_channel_id += 1;
        pair.client.handle_bytes(pair.now, &chunk.to_bytes());
        let events: Vec<_> = std::iter::from_fn(|| pair.client.poll_event()).collect();
        assert!(matches!(
            events.last(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                ..
            })
        ));
        // A truncated body: the request fails with Bad_DecodingError, the channel stays.
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let (handle, mut chunk) = undelivered_response(&mut pair);
        chunk.body.truncate(chunk.body.len() - 3);
        pair.client.handle_bytes(pair.now, &chunk.to_bytes());
        assert_eq!(
            pair.client.poll_event(),
            Some(ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_DECODING_ERROR
            })
        );
        // A chunk larger than our receive buffer (OPC 10000-6 §7.1.2.4).
        let mut pair = Pair::connected(ClientConfig::new("opc.tcp://localhost:4840/"));
        let mut oversized = b"MSGF".to_vec();
        oversized.extend_from_slice(&70_000u32.to_le_bytes());
        pair.client.handle_bytes(pair.now, &oversized);
        assert!(matches!(
            pair.client.poll_event(),
            Some(ClientEvent::Closed {
                status: StatusCode::BAD_TCP_MESSAGE_TOO_LARGE,
                ..
            })
        ));
    }

    #[test]
    fn response_larger_than_we_accept() {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.connection_limits.max_message_size = 200_000;
        let mut pair = Pair::connected(config);
        pair.request(call(
            &THROUGHPUT_OBJECT,
            &SET_SIZE_METHOD,
            vec![Variant::UInt32(1024)],
        ));
        let handle = pair
            .client
            .send(pair.now, call(&THROUGHPUT_OBJECT, &GET_DATA_METHOD, vec![]))
            .unwrap();
        pair.pump();
        assert_eq!(
            pair.events,
            [ClientEvent::RequestFailed {
                handle,
                status: StatusCode::BAD_RESPONSE_TOO_LARGE
            }]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// However the server's bytes are split, the client sees the same events.
        #[test]
        fn any_split_of_the_server_stream(cuts in proptest::collection::vec(1usize..400, 1..20)) {
            let now = Instant::now();
            let mut server = Server::new(server_config(), now).unwrap();
            bench_methods::install(&mut server).unwrap();
            let mut server_side = ServerConnection::new(&server);
            let mut client = ClientConnection::new(
                ClientConfig::new("opc.tcp://localhost:4840/"), now, DateTime(0));
            let handle = client.send(now, read_request(&[ids::SERVER_NAMESPACE_ARRAY])).unwrap();
            let mut events = Vec::new();
            for _round in 0..6 {
                while let Some(bytes) = client.poll_transmit() {
                    server_side.handle_bytes(&mut server, now, &bytes);
                }
                let mut stream = Vec::new();
                while let Some(bytes) = server_side.poll_transmit() {
                    stream.extend_from_slice(&bytes);
                }
                let mut rest = stream.as_slice();
                for cut in cuts.iter().cycle() {
                    if rest.is_empty() {
                        break;
                    }
                    let (piece, tail) = rest.split_at((*cut).min(rest.len()));
                    client.handle_bytes(now, piece);
                    rest = tail;
                }
                while let Some(event) = client.poll_event() {
                    events.push(event);
                }
            }
            prop_assert_eq!(events.len(), 2);
            prop_assert_eq!(&events[0], &ClientEvent::SessionActivated);
            let answered = matches!(&events[1], ClientEvent::Response { handle: h, .. } if *h == handle);
            prop_assert!(answered);
        }
    }
}
