//! Client resilience over real sockets on 127.0.0.1: the `ReconnectingClient` against our
//! tokio server that is shut down and started again on the same port, or whose TCP
//! connections are cut by a test-owned TCP relay while the server (and its sessions) lives
//! on; batched reads against the server's MaxNodesPerRead; a response over the client's
//! maximum message size.

#[cfg(test)]
mod reconnect_tests {
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use buildwire_opcua::client::ClientConfig;
    use buildwire_opcua::client::reconnect::BackoffConfig;
    use buildwire_opcua::client::subscriptions::{
        MonitoredItemSpec, SubscriptionEvent, SubscriptionSettings,
    };
    use buildwire_opcua::driver::batch::value_of;
    use buildwire_opcua::driver::reconnect::HookFuture;
    use buildwire_opcua::driver::{
        ClientError, ConnectionEvent, OpcuaClient, OpcuaServer, OpcuaServerConfig, ReconnectHook,
        ReconnectPolicy, ReconnectingClient,
    };
    use buildwire_opcua::encoding::Identifier;
    use buildwire_opcua::server::{OperationLimits, ServerConfig, bench_methods};
    use buildwire_opcua::services::AttributeId;
    use buildwire_opcua::{ByteString, DateTime, NodeId, QualifiedName, StatusCode, Variant};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::broadcast;
    use tokio::task::JoinHandle;

    const OBJECTS: NodeId = NodeId::numeric(0, 85);
    const DOUBLE: NodeId = NodeId::numeric(0, 11);

    fn counter() -> NodeId {
        NodeId::string(1, "Counter")
    }

    fn policy() -> ReconnectPolicy {
        ReconnectPolicy {
            backoff: BackoffConfig {
                initial_delay: Duration::from_millis(20),
                max_delay: Duration::from_millis(200),
                multiplier: 2,
                jitter_percent: 20,
            },
            reconnect_timeout: Duration::from_secs(20),
        }
    }

    async fn start_on(bind: &str, value: f64, limits: OperationLimits) -> OpcuaServer {
        let config = ServerConfig {
            endpoint_url: String::new(),
            operation_limits: limits,
            ..ServerConfig::default()
        };
        OpcuaServer::start(
            OpcuaServerConfig::new(bind, config)
                .with_setup(bench_methods::install)
                .with_setup(move |server| {
                    server.address_space.add_variable(
                        &OBJECTS,
                        counter(),
                        QualifiedName::new(1, "Counter"),
                        Variant::Double(value),
                        DOUBLE,
                        true,
                    )
                }),
        )
        .await
        .unwrap()
    }

    /// Sessions the server created so far (ids are allocated in sequence from 1; asking for
    /// one more id tells how many were handed out).
    fn sessions_created(server: &OpcuaServer) -> u32 {
        server.with_server(|s| match s.allocate_session_id().identifier {
            Identifier::Numeric(next) => next - 1,
            other => panic!("numeric session ids, not {other:?}"),
        })
    }

    /// Our server on a free port with Counter = `value`, its bind address (to restart it on
    /// the same port), and a reconnecting client with its event listener.
    async fn server_and_client(
        value: f64,
    ) -> (
        OpcuaServer,
        String,
        ReconnectingClient,
        broadcast::Receiver<ConnectionEvent>,
    ) {
        let server = start_on("127.0.0.1:0", value, OperationLimits::default()).await;
        let bind = server.local_addr().to_string();
        let client =
            ReconnectingClient::connect(ClientConfig::new(server.endpoint_url()), policy())
                .await
                .unwrap();
        let events = client.subscribe_events();
        (server, bind, client, events)
    }

    fn open_sessions(server: &OpcuaServer) -> usize {
        server.with_server(|s| s.sessions.len())
    }

    async fn read_counter(client: &mut ReconnectingClient) -> Result<f64, ClientError> {
        let values = client.read(&[counter()], AttributeId::Value).await?;
        match values[0].value {
            Some(Variant::Double(value)) => Ok(value),
            ref other => panic!("unexpected value {other:?}"),
        }
    }

    fn drain(events: &mut broadcast::Receiver<ConnectionEvent>) -> Vec<ConnectionEvent> {
        let mut out = Vec::new();
        while let Ok(event) = events.try_recv() {
            out.push(event);
        }
        out
    }

    /// A TCP relay that owns both ends of every connection through it, so a test can cut
    /// them all while the server behind it keeps running.
    struct Relay {
        address: SocketAddr,
        connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
        accept: JoinHandle<()>,
    }

    impl Relay {
        async fn start(upstream: SocketAddr) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
            let tasks = Arc::clone(&connections);
            let accept = tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let task = tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    tasks.lock().unwrap().push(task);
                }
            });
            Self {
                address,
                connections,
                accept,
            }
        }

        fn endpoint(&self) -> String {
            format!("opc.tcp://{}/", self.address)
        }

        /// Cuts every connection through the relay (both sockets are dropped).
        fn cut(&self) -> usize {
            let tasks: Vec<_> = self.connections.lock().unwrap().drain(..).collect();
            let live = tasks.iter().filter(|t| !t.is_finished()).count();
            for task in tasks {
                task.abort();
            }
            live
        }
    }

    impl Drop for Relay {
        fn drop(&mut self) {
            self.cut();
            self.accept.abort();
        }
    }

    /// A server whose counter holds `value`, a relay in front of it and a client through
    /// the relay.
    async fn through_relay(value: f64) -> (OpcuaServer, Relay, ReconnectingClient) {
        let server = start_on("127.0.0.1:0", value, OperationLimits::default()).await;
        let relay = Relay::start(server.local_addr()).await;
        let client = ReconnectingClient::connect(ClientConfig::new(&relay.endpoint()), policy())
            .await
            .unwrap();
        (server, relay, client)
    }

    #[tokio::test]
    async fn a_cut_connection_reactivates_the_same_session() {
        let (server, relay, mut client) = through_relay(1.5).await;
        let mut events = client.subscribe_events();
        let session = client.session_id().cloned().unwrap();
        assert_eq!(read_counter(&mut client).await.unwrap(), 1.5);

        assert_eq!(relay.cut(), 1);
        server.with_server(|s| {
            s.address_space
                .set_value(&counter(), Variant::Double(2.5), DateTime(0))
                .unwrap()
        });
        // The next call finds the connection gone, reconnects and re-activates the session.
        assert_eq!(read_counter(&mut client).await.unwrap(), 2.5);
        assert_eq!(client.session_id(), Some(&session));
        assert_eq!(client.reconnects(), 1);
        assert_eq!(sessions_created(&server), 1, "exactly one CreateSession");
        assert_eq!(open_sessions(&server), 1);
        let events = drain(&mut events);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ConnectionEvent::Lost { .. })),
            "{events:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ConnectionEvent::Reconnecting { attempt: 1, .. })),
            "{events:?}"
        );
        assert!(
            events.contains(&ConnectionEvent::Reconnected {
                session_reactivated: true,
                session_id: session.clone(),
            }),
            "{events:?}"
        );
        client.close().await.unwrap();
        assert_eq!(open_sessions(&server), 0);
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_restarted_server_gets_one_new_session_and_the_client_resumes() {
        let (server, bind, mut client, mut events) = server_and_client(1.0).await;
        assert_eq!(read_counter(&mut client).await.unwrap(), 1.0);
        server.shutdown().await;

        let restarted = start_on(&bind, 2.0, OperationLimits::default()).await;
        assert_eq!(read_counter(&mut client).await.unwrap(), 2.0);
        assert_eq!(sessions_created(&restarted), 1, "exactly one CreateSession");
        assert_eq!(open_sessions(&restarted), 1);
        let events = drain(&mut events);
        assert!(
            events.iter().any(|e| matches!(
                e,
                ConnectionEvent::Reconnected {
                    session_reactivated: false,
                    ..
                }
            )),
            "{events:?}"
        );
        client.close().await.unwrap();
        restarted.shutdown().await;
    }

    #[tokio::test]
    async fn many_waiting_callers_cause_one_reconnect_and_one_session() {
        let server = start_on("127.0.0.1:0", 1.0, OperationLimits::default()).await;
        let bind = server.local_addr().to_string();
        let endpoint = server.endpoint_url().to_owned();
        let client = ReconnectingClient::connect(ClientConfig::new(&endpoint), policy())
            .await
            .unwrap();
        let client = Arc::new(tokio::sync::Mutex::new(client));
        server.shutdown().await;

        // 32 tasks call while the server is down; it comes back a little later.
        let callers: Vec<_> = (0..32)
            .map(|_| {
                let client = Arc::clone(&client);
                tokio::spawn(async move { read_counter(&mut *client.lock().await).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let restarted = start_on(&bind, 7.0, OperationLimits::default()).await;
        for caller in callers {
            assert_eq!(caller.await.unwrap().unwrap(), 7.0);
        }
        assert_eq!(client.lock().await.reconnects(), 1);
        assert_eq!(sessions_created(&restarted), 1, "no storm of sessions");
        assert_eq!(open_sessions(&restarted), 1);
        restarted.shutdown().await;
    }

    #[tokio::test]
    async fn a_call_fails_clearly_when_the_server_stays_away() {
        let server = start_on("127.0.0.1:0", 1.0, OperationLimits::default()).await;
        let endpoint = server.endpoint_url().to_owned();
        let mut impatient = policy();
        impatient.reconnect_timeout = Duration::from_millis(100);
        let mut client = ReconnectingClient::connect(ClientConfig::new(&endpoint), impatient)
            .await
            .unwrap();
        server.shutdown().await;
        let error = read_counter(&mut client).await.unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_NOT_CONNECTED,
            "{error}"
        );
        assert!(error.to_string().contains("keeps trying"), "{error}");
        // A write is never sent twice: with no server it fails the same clear way.
        let error = client
            .write(&counter(), Variant::Double(3.0))
            .await
            .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_NOT_CONNECTED);
    }

    /// What a subscription layer does in its hook: here, re-read a value and remember it.
    struct RereadHook {
        seen: Arc<Mutex<Vec<(bool, f64)>>>,
    }

    impl ReconnectHook for RereadHook {
        fn after_reconnect<'a>(
            &'a mut self,
            client: &'a mut OpcuaClient,
            session_reactivated: bool,
        ) -> HookFuture<'a> {
            Box::pin(async move {
                let values = client.read(&[counter()], AttributeId::Value).await?;
                let Some(Variant::Double(value)) = values[0].value else {
                    return Err(ClientError::Status {
                        status: StatusCode::BAD_TYPE_MISMATCH,
                        context: "Counter is not a Double".into(),
                    });
                };
                self.seen.lock().unwrap().push((session_reactivated, value));
                Ok(())
            })
        }
    }

    #[tokio::test]
    async fn hooks_run_after_each_reconnect_before_calls_go_on() {
        let (server, relay, mut client) = through_relay(1.0).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        client.add_hook(Box::new(RereadHook {
            seen: Arc::clone(&seen),
        }));
        relay.cut();
        server.with_server(|s| {
            s.address_space
                .set_value(&counter(), Variant::Double(4.0), DateTime(0))
                .unwrap()
        });
        client.browse(&OBJECTS).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), [(true, 4.0)]);

        // Restart the server behind the relay: the hook sees a new session.
        let bind = server.local_addr().to_string();
        server.shutdown().await;
        relay.cut();
        let restarted = start_on(&bind, 5.0, OperationLimits::default()).await;
        assert_eq!(read_counter(&mut client).await.unwrap(), 5.0);
        assert_eq!(*seen.lock().unwrap(), [(true, 4.0), (false, 5.0)]);
        client.close().await.unwrap();
        restarted.shutdown().await;
    }

    #[tokio::test]
    async fn ten_thousand_reads_are_batched_to_max_nodes_per_read() {
        let limits = OperationLimits {
            max_nodes_per_read: 1000,
            max_nodes_per_write: 700,
            ..OperationLimits::default()
        };
        let config = ServerConfig {
            endpoint_url: String::new(),
            operation_limits: limits,
            ..ServerConfig::default()
        };
        let server = OpcuaServer::start(
            OpcuaServerConfig::new("127.0.0.1:0", config)
                .with_setup(bench_methods::install)
                .with_setup(|server| {
                    for i in 0..10_000_u32 {
                        server.address_space.add_variable(
                            &OBJECTS,
                            NodeId::numeric(1, 100_000 + i),
                            QualifiedName::new(1, &format!("V{i}")),
                            Variant::UInt32(i),
                            NodeId::numeric(0, 7),
                            true,
                        )?;
                    }
                    Ok(())
                }),
        )
        .await
        .unwrap();
        let mut client = OpcuaClient::connect_with(ClientConfig::new(server.endpoint_url()))
            .await
            .unwrap();
        let published = client.operation_limits().await.unwrap();
        assert_eq!(published.max_nodes_per_read, 1000);
        assert_eq!(published.max_nodes_per_write, 700);

        let nodes: Vec<NodeId> = (0..10_000)
            .map(|i| NodeId::numeric(1, 100_000 + i))
            .collect();
        // One Read of all of them is over the limit ...
        let error = client.read(&nodes, AttributeId::Value).await.unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_TOO_MANY_OPERATIONS);
        // ... batched, every result comes back in order.
        let values = client.read_values(&nodes).await.unwrap();
        assert_eq!(values.len(), 10_000);
        for (i, value) in values.iter().enumerate() {
            assert_eq!(value.value, Some(Variant::UInt32(i as u32)), "node {i}");
        }

        // Writes are batched to MaxNodesPerWrite (700: 15 batches, the last one short).
        let writes: Vec<_> = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| buildwire_opcua::services::WriteValue {
                node_id: node.clone(),
                attribute_id: AttributeId::Value.id(),
                index_range: Default::default(),
                value: buildwire_opcua::DataValue {
                    value: Some(Variant::UInt32(20_000 + i as u32)),
                    ..Default::default()
                },
            })
            .collect();
        let statuses = client.write_many(&writes).await.unwrap();
        assert_eq!(statuses.len(), 10_000);
        assert!(statuses.iter().all(|s| s.is_good()));
        let reads: Vec<_> = nodes.iter().rev().map(value_of).collect();
        let values = client.read_many(&reads).await.unwrap();
        for (i, value) in values.iter().enumerate() {
            assert_eq!(value.value, Some(Variant::UInt32(29_999 - i as u32)));
        }
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_response_over_the_clients_max_message_size_is_a_clear_error() {
        let config = ServerConfig {
            endpoint_url: String::new(),
            ..ServerConfig::default()
        };
        let big = NodeId::string(1, "Big");
        let node = big.clone();
        let server = OpcuaServer::start(
            OpcuaServerConfig::new("127.0.0.1:0", config)
                .with_setup(bench_methods::install)
                .with_setup(move |server| {
                    server.address_space.add_variable(
                        &OBJECTS,
                        node,
                        QualifiedName::new(1, "Big"),
                        Variant::ByteString(ByteString::from(vec![7_u8; 300_000])),
                        NodeId::numeric(0, 15),
                        false,
                    )
                }),
        )
        .await
        .unwrap();
        let mut config = ClientConfig::new(server.endpoint_url());
        config.connection_limits.max_message_size = 128 * 1024;
        let mut client = OpcuaClient::connect_with(config).await.unwrap();
        let error = client.read(&[big], AttributeId::Value).await.unwrap_err();
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_RESPONSE_TOO_LARGE,
            "{error}"
        );
        // The connection stays usable.
        let values = client
            .read(&[counter_free_node()], AttributeId::Value)
            .await
            .unwrap();
        assert!(matches!(values[0].value, Some(Variant::DateTime(_))));
        client.close().await.unwrap();
        server.shutdown().await;
    }

    /// Server_ServerStatus_CurrentTime.
    fn counter_free_node() -> NodeId {
        NodeId::numeric(0, 2258)
    }

    /// Waits (at most 10 s) for a data change of `handle` with `value`, skipping keep-alives
    /// and older values.
    async fn wait_for_value(client: &mut ReconnectingClient, handle: u32, value: f64) {
        let wait = async {
            loop {
                match client.next_notification().await.unwrap() {
                    SubscriptionEvent::DataChange {
                        client_handle,
                        value: data,
                        ..
                    } if client_handle == handle && data.value == Some(Variant::Double(value)) => {
                        return;
                    }
                    _ => {}
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no data change to {value} for handle {handle}"));
    }

    async fn subscribe_counter(client: &mut ReconnectingClient) -> (u32, u32) {
        subscribe_counter_queued(client, 1).await
    }

    /// Publishing every 50 ms, sampling every 25 ms, `queue_size` values per item.
    async fn subscribe_counter_queued(
        client: &mut ReconnectingClient,
        queue_size: u32,
    ) -> (u32, u32) {
        let settings = SubscriptionSettings {
            publishing_interval_ms: 50.0,
            ..SubscriptionSettings::default()
        };
        let subscription = client.create_subscription(settings).await.unwrap();
        let mut spec = MonitoredItemSpec::value(counter());
        spec.sampling_interval_ms = 25.0;
        spec.queue_size = queue_size;
        let created = client
            .create_monitored_items(subscription, &[spec])
            .await
            .unwrap();
        assert!(created[0].1.status_code.is_good(), "{created:?}");
        (subscription, created[0].0)
    }

    fn set_counter(server: &OpcuaServer, value: f64) {
        server.with_server(|s| {
            s.address_space
                .set_value(&counter(), Variant::Double(value), DateTime(0))
                .unwrap()
        });
    }

    #[tokio::test]
    async fn subscriptions_survive_a_cut_connection_in_the_same_session() {
        let (server, relay, mut client) = through_relay(1.0).await;
        let mut events = client.subscribe_events();
        let (subscription, handle) = subscribe_counter(&mut client).await;
        wait_for_value(&mut client, handle, 1.0).await;

        assert_eq!(relay.cut(), 1);
        set_counter(&server, 2.0);
        // next_notification finds the connection gone, reconnects, keeps the subscription
        // (the session was re-activated) and goes on with the change made meanwhile.
        wait_for_value(&mut client, handle, 2.0).await;
        assert_eq!(client.reconnects(), 1);
        assert_eq!(sessions_created(&server), 1, "the session was re-activated");
        assert!(
            client
                .subscription_set()
                .subscriptions
                .contains_key(&subscription),
            "same subscription id"
        );
        let events = drain(&mut events);
        assert!(
            events.contains(&ConnectionEvent::SubscriptionsRestored {
                kept: 1,
                transferred: 0,
                recreated: 0
            }),
            "{events:?}"
        );
        set_counter(&server, 3.0);
        wait_for_value(&mut client, handle, 3.0).await;
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn samples_taken_while_no_channel_is_attached_all_arrive() {
        let (server, relay, mut client) = through_relay(1.0).await;
        let (_, handle) = subscribe_counter_queued(&mut client, 100).await;
        wait_for_value(&mut client, handle, 1.0).await;

        assert_eq!(relay.cut(), 1);
        // No channel now (the client reconnects only when called): the server samples on.
        // Each value holds for four sampling intervals and is not written through a
        // service, so only sampling can see it.
        for value in 2..=9 {
            set_counter(&server, f64::from(value));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut seen = Vec::new();
        let wait = async {
            while seen.last() != Some(&9.0) {
                if let SubscriptionEvent::DataChange {
                    client_handle,
                    value,
                    ..
                } = client.next_notification().await.unwrap()
                    && client_handle == handle
                    && let Some(Variant::Double(value)) = value.value
                {
                    seen.push(value);
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("not every sample arrived: {seen:?}"));
        assert_eq!(seen, [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(sessions_created(&server), 1, "the session was re-activated");
        client.close().await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn subscriptions_are_recreated_after_a_server_restart() {
        let (server, bind, mut client, mut events) = server_and_client(1.0).await;
        let (_, handle) = subscribe_counter(&mut client).await;
        wait_for_value(&mut client, handle, 1.0).await;
        server.shutdown().await;

        // The server comes back empty: no session, no subscription. The client waiting on
        // notifications reconnects by itself, finds TransferSubscriptions refused, re-creates
        // the subscription and its item with the same client handle, and sees the value.
        let restarted = start_on(&bind, 5.0, OperationLimits::default()).await;
        wait_for_value(&mut client, handle, 5.0).await;
        assert_eq!(sessions_created(&restarted), 1, "exactly one new session");
        let events = drain(&mut events);
        assert!(
            events.contains(&ConnectionEvent::SubscriptionsRestored {
                kept: 0,
                transferred: 0,
                recreated: 1
            }),
            "{events:?}"
        );
        let count = restarted.with_server(|s| s.subscriptions.len());
        assert_eq!(count, 1, "one subscription on the restarted server");
        set_counter(&restarted, 6.0);
        wait_for_value(&mut client, handle, 6.0).await;
        client.close().await.unwrap();
        restarted.shutdown().await;
    }

    /// A caller that polls with windows far shorter than one reconnect attempt (the Python
    /// binding polls every 100 ms so other calls can run between polls) still gets the client
    /// back: an attempt that has started runs to its end, it is not cut off by the window.
    #[tokio::test]
    async fn short_polls_do_not_cut_off_a_reconnect() {
        let (server, bind, mut client, mut events) = server_and_client(1.0).await;
        let (_, handle) = subscribe_counter(&mut client).await;
        wait_for_value(&mut client, handle, 1.0).await;
        server.shutdown().await;
        // Down for a while: several attempts fail and the backoff grows past the window.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let restarted = start_on(&bind, 7.0, OperationLimits::default()).await;
        let mut polls = 0_u32;
        let seen = tokio::time::timeout(Duration::from_secs(15), async {
            loop {
                polls += 1;
                match client
                    .next_notification_within(Duration::from_millis(1))
                    .await
                    .unwrap()
                {
                    Some(SubscriptionEvent::DataChange {
                        client_handle,
                        value,
                        ..
                    }) if client_handle == handle && value.value == Some(Variant::Double(7.0)) => {
                        return;
                    }
                    _ => tokio::task::yield_now().await,
                }
            }
        })
        .await;
        assert!(
            seen.is_ok(),
            "no change to 7.0 after {polls} polls: {:?}",
            drain(&mut events)
        );
        assert!(polls > 1, "the window was honoured while connected");
        assert_eq!(client.reconnects(), 1);
        assert_eq!(sessions_created(&restarted), 1, "exactly one new session");
        client.close().await.unwrap();
        restarted.shutdown().await;
    }
}
