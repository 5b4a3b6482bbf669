//! Subscriptions over real TCP on 127.0.0.1:0, our tokio client against our tokio server:
//! data changes after writes, keep-alives and their sequence numbers, lifetime expiry
//! (StatusChangeNotification Bad_Timeout), Republish of a message whose Publish response the
//! client pretends it lost, queue overflow with both discard policies and the overflow bit,
//! absolute and percent deadbands, the limits' Bad_ codes, TransferSubscriptions and
//! re-creating subscriptions on a new session.
//!
//! Nothing here asserts on durations: waits only give the server time to run its cycles.

#[cfg(test)]
mod subscription_tests {
    use std::time::Duration;

    use buildwire_opcua::client::ClientIdentity;
    use buildwire_opcua::client::subscriptions::{
        MonitoredItemSpec, SubscriptionEvent, SubscriptionSettings,
    };
    use buildwire_opcua::driver::client::nodes;
    use buildwire_opcua::driver::{OpcuaClient, OpcuaServer, OpcuaServerConfig};
    use buildwire_opcua::server::subscriptions::services::add_eu_range;
    use buildwire_opcua::server::subscriptions::{OVERFLOW_INFO_BITS, SubscriptionLimits};
    use buildwire_opcua::server::{ServerConfig, bench_methods};
    use buildwire_opcua::services::{
        DataChangeFilter, DataChangeTrigger, NotificationData, PublishRequest, RepublishRequest,
        RequestHeader, ServiceResponse, SubscriptionAcknowledgement, TransferSubscriptionsRequest,
        deadband_type,
    };
    use buildwire_opcua::{DataValue, NodeId, QualifiedName, StatusCode, Variant};

    fn analog() -> NodeId {
        NodeId::string(1, "Analog")
    }

    fn plain() -> NodeId {
        NodeId::string(1, "Plain")
    }

    async fn start(limits: SubscriptionLimits) -> OpcuaServer {
        let config = ServerConfig {
            endpoint_url: String::new(),
            subscription_limits: limits,
            ..ServerConfig::default()
        };
        OpcuaServer::start(
            OpcuaServerConfig::new("127.0.0.1:0", config)
                .with_setup(bench_methods::install)
                .with_setup(|server| {
                    for node in [analog(), plain()] {
                        let name = node.to_string();
                        server.address_space.add_variable(
                            &nodes::OBJECTS,
                            node,
                            QualifiedName::new(1, &name),
                            Variant::Double(0.0),
                            NodeId::numeric(0, 11),
                            true,
                        )?;
                    }
                    add_eu_range(&mut server.address_space, &analog(), 0.0, 200.0)
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

    fn fast(interval_ms: f64) -> SubscriptionSettings {
        SubscriptionSettings {
            publishing_interval_ms: interval_ms,
            lifetime_count: 300,
            max_keep_alive_count: 3,
            ..SubscriptionSettings::default()
        }
    }

    fn number(value: &DataValue) -> f64 {
        match value.value {
            Some(Variant::Double(x)) => x,
            ref other => panic!("not a Double: {other:?}"),
        }
    }

    /// Data changes until `count` values arrived (keep-alives skipped).
    async fn data_changes(client: &mut OpcuaClient, count: usize) -> Vec<(u32, DataValue)> {
        let mut out = Vec::new();
        while out.len() < count {
            let event = tokio::time::timeout(Duration::from_secs(10), client.next_notification())
                .await
                .expect("a notification within 10 s")
                .unwrap();
            if let SubscriptionEvent::DataChange {
                client_handle,
                value,
                ..
            } = event
            {
                out.push((client_handle, value));
            }
        }
        out
    }

    async fn write(client: &mut OpcuaClient, node: &NodeId, value: f64) {
        client.write(node, Variant::Double(value)).await.unwrap();
    }

    #[tokio::test]
    async fn writes_arrive_in_order_then_keep_alives_announce_the_next_number() {
        let server = start(SubscriptionLimits::default()).await;
        let mut client = connect(&server).await;
        let id = client.create_subscription(fast(20.0)).await.unwrap();
        let granted = &client.subscription_set().subscriptions[&id];
        assert_eq!(granted.revised_max_keep_alive_count, 3);
        // The lifetime is at least three keep-alive periods.
        assert!(granted.revised_lifetime_count >= 9);
        let spec = MonitoredItemSpec {
            queue_size: 10,
            ..MonitoredItemSpec::value(plain())
        };
        let created = client.create_monitored_items(id, &[spec]).await.unwrap();
        assert_eq!(created[0].1.status_code, StatusCode::GOOD);
        assert_eq!(created[0].1.revised_queue_size, 10);
        let handle = created[0].0;
        for value in [1.0, 2.0, 3.0] {
            write(&mut client, &plain(), value).await;
        }
        let changes = data_changes(&mut client, 4).await;
        assert!(changes.iter().all(|(h, _)| *h == handle));
        let values: Vec<f64> = changes.iter().map(|(_, v)| number(v)).collect();
        assert_eq!(values, [0.0, 1.0, 2.0, 3.0]);
        assert!(
            changes
                .iter()
                .all(|(_, v)| v.source_timestamp.is_some() && v.server_timestamp.is_some())
        );
        // Nothing changes any more: keep-alives carry the number the next message will use.
        let last = client.subscription_set().subscriptions[&id].last_sequence_number;
        let mut keep_alives = 0;
        while keep_alives < 3 {
            match client.next_notification().await.unwrap() {
                SubscriptionEvent::KeepAlive {
                    subscription_id,
                    next_sequence_number,
                } => {
                    assert_eq!(subscription_id, id);
                    assert_eq!(next_sequence_number, last + 1);
                    keep_alives += 1;
                }
                other => panic!("only keep-alives expected, got {other:?}"),
            }
        }
        assert_eq!(
            client.delete_subscriptions(&[id]).await.unwrap(),
            [StatusCode::GOOD]
        );
        assert_eq!(
            client.delete_subscriptions(&[id]).await.unwrap(),
            [StatusCode::BAD_SUBSCRIPTION_ID_INVALID]
        );
        client.close().await.unwrap();
        server.shutdown().await;
    }

    async fn raw_publish(
        client: &mut OpcuaClient,
        acks: Vec<SubscriptionAcknowledgement>,
    ) -> Result<ServiceResponse, StatusCode> {
        let request = PublishRequest {
            request_header: RequestHeader::default(),
            subscription_acknowledgements: acks,
        };
        let handle = client.send(request).await.unwrap();
        let (answered, result) = client.next_response().await.unwrap();
        assert_eq!(answered, handle);
        result
    }

    #[tokio::test]
    async fn republish_returns_a_lost_message_until_it_is_acknowledged() {
        let server = start(SubscriptionLimits::default()).await;
        let mut client = connect(&server).await;
        let id = client.create_subscription(fast(20.0)).await.unwrap();
        client
            .create_monitored_items(id, &[MonitoredItemSpec::value(plain())])
            .await
            .unwrap();
        write(&mut client, &plain(), 7.0).await;
        // The first message: data (the initial value or 7.0). The client "loses" it.
        let ServiceResponse::Publish(first) = raw_publish(&mut client, vec![]).await.unwrap()
        else {
            panic!("a PublishResponse");
        };
        assert_eq!(first.subscription_id, id);
        let lost = first.notification_message.clone();
        assert!(!lost.is_keep_alive());
        assert!(
            first
                .available_sequence_numbers
                .contains(&lost.sequence_number)
        );
        let republish = |number| RepublishRequest {
            request_header: RequestHeader::default(),
            subscription_id: id,
            retransmit_sequence_number: number,
        };
        let ServiceResponse::Republish(again) = client
            .request(republish(lost.sequence_number))
            .await
            .unwrap()
        else {
            panic!("a RepublishResponse");
        };
        assert_eq!(again.notification_message, lost);
        // Acknowledged: gone from the retransmission queue.
        let ack = SubscriptionAcknowledgement {
            subscription_id: id,
            sequence_number: lost.sequence_number,
        };
        let ServiceResponse::Publish(next) = raw_publish(&mut client, vec![ack]).await.unwrap()
        else {
            panic!("a PublishResponse");
        };
        assert_eq!(next.results, [StatusCode::GOOD]);
        let error = client
            .request(republish(lost.sequence_number))
            .await
            .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_MESSAGE_NOT_AVAILABLE);
        // Acknowledging it twice is an unknown sequence number.
        let ServiceResponse::Publish(twice) = raw_publish(&mut client, vec![ack]).await.unwrap()
        else {
            panic!("a PublishResponse");
        };
        assert_eq!(twice.results, [StatusCode::BAD_SEQUENCE_NUMBER_UNKNOWN]);
        let error = client.request(RepublishRequest {
            subscription_id: id + 1000,
            ..republish(1)
        });
        assert_eq!(
            error.await.unwrap_err().status_code(),
            StatusCode::BAD_SUBSCRIPTION_ID_INVALID
        );
        server.shutdown().await;
    }

    #[tokio::test]
    async fn lifetime_expiry_sends_bad_timeout_and_deletes() {
        let server = start(SubscriptionLimits::default()).await;
        let mut client = connect(&server).await;
        // 10 ms, keep-alive 1, lifetime 3: gone after three cycles without Publish requests.
        let settings = SubscriptionSettings {
            publishing_interval_ms: 10.0,
            lifetime_count: 1,
            max_keep_alive_count: 1,
            ..SubscriptionSettings::default()
        };
        let id = client.create_subscription(settings).await.unwrap();
        assert_eq!(
            client.subscription_set().subscriptions[&id].revised_lifetime_count,
            3
        );
        // No Publish request: the server counts the cycles down on its own.
        while server.with_server(|s| s.subscriptions.subscriptions.contains_key(&id)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let ServiceResponse::Publish(response) = raw_publish(&mut client, vec![]).await.unwrap()
        else {
            panic!("a PublishResponse");
        };
        assert_eq!(response.subscription_id, id);
        let notifications = response.notification_message.notifications();
        let [NotificationData::StatusChange(status)] = notifications.as_slice() else {
            panic!("one StatusChangeNotification: {notifications:?}");
        };
        assert_eq!(status.status, StatusCode::BAD_TIMEOUT);
        // Nothing left to publish for.
        assert_eq!(
            raw_publish(&mut client, vec![]).await.unwrap_err(),
            StatusCode::BAD_NO_SUBSCRIPTION
        );
        server.shutdown().await;
    }

    async fn overflow(discard_oldest: bool) -> Vec<(f64, bool)> {
        let server = start(SubscriptionLimits::default()).await;
        let mut client = connect(&server).await;
        // Published once a second: the writes below all land in one queue first.
        let id = client.create_subscription(fast(1000.0)).await.unwrap();
        let spec = MonitoredItemSpec {
            queue_size: 3,
            discard_oldest,
            ..MonitoredItemSpec::value(plain())
        };
        client.create_monitored_items(id, &[spec]).await.unwrap();
        for value in [1.0, 2.0, 3.0, 4.0, 5.0] {
            write(&mut client, &plain(), value).await;
        }
        let changes = data_changes(&mut client, 3).await;
        server.shutdown().await;
        changes
            .iter()
            .map(|(_, v)| {
                let bits = v.status.unwrap_or(StatusCode::GOOD).bits();
                (number(v), bits & OVERFLOW_INFO_BITS == OVERFLOW_INFO_BITS)
            })
            .collect()
    }

    #[tokio::test]
    async fn queue_overflow_discard_oldest() {
        // 0 (initial), 1..5 written into a queue of 3: the oldest go, the new oldest says so.
        assert_eq!(
            overflow(true).await,
            [(3.0, true), (4.0, false), (5.0, false)]
        );
    }

    #[tokio::test]
    async fn queue_overflow_discard_newest() {
        // The last slot is overwritten by each new value, which carries the overflow bit.
        assert_eq!(
            overflow(false).await,
            [(0.0, false), (1.0, false), (5.0, true)]
        );
    }

    fn deadband(kind: u32, value: f64) -> Option<DataChangeFilter> {
        Some(DataChangeFilter {
            trigger: DataChangeTrigger::StatusValue,
            deadband_type: kind,
            deadband_value: value,
        })
    }

    #[tokio::test]
    async fn absolute_and_percent_deadbands() {
        let server = start(SubscriptionLimits::default()).await;
        let mut client = connect(&server).await;
        let id = client.create_subscription(fast(20.0)).await.unwrap();
        let specs = [
            MonitoredItemSpec {
                queue_size: 10,
                filter: deadband(deadband_type::ABSOLUTE, 1.0),
                ..MonitoredItemSpec::value(analog())
            },
            // 10 % of the EURange 0..200: 20 units.
            MonitoredItemSpec {
                queue_size: 10,
                filter: deadband(deadband_type::PERCENT, 10.0),
                ..MonitoredItemSpec::value(analog())
            },
            // No EURange on Plain: a percent deadband is refused.
            MonitoredItemSpec {
                filter: deadband(deadband_type::PERCENT, 10.0),
                ..MonitoredItemSpec::value(plain())
            },
            MonitoredItemSpec {
                filter: deadband(7, 1.0),
                ..MonitoredItemSpec::value(analog())
            },
            MonitoredItemSpec {
                filter: deadband(deadband_type::ABSOLUTE, -1.0),
                ..MonitoredItemSpec::value(analog())
            },
        ];
        let created = client.create_monitored_items(id, &specs).await.unwrap();
        let statuses: Vec<StatusCode> = created.iter().map(|(_, r)| r.status_code).collect();
        assert_eq!(
            statuses,
            [
                StatusCode::GOOD,
                StatusCode::GOOD,
                StatusCode::BAD_DEADBAND_FILTER_INVALID,
                StatusCode::BAD_DEADBAND_FILTER_INVALID,
                StatusCode::BAD_DEADBAND_FILTER_INVALID,
            ]
        );
        let (absolute, percent) = (created[0].0, created[1].0);
        for value in [0.5, 1.5, 2.0, 3.0, 20.0, 25.0] {
            write(&mut client, &analog(), value).await;
        }
        // Absolute 1: 0, 1.5, 3.0, 20.0, 25.0 (0.5 and 2.0 are within 1 of the last report);
        // percent (20 units): 0, 25.0 (20.0 is exactly 20 away: not beyond).
        let changes = data_changes(&mut client, 7).await;
        let of = |handle| -> Vec<f64> {
            changes
                .iter()
                .filter(|(h, _)| *h == handle)
                .map(|(_, v)| number(v))
                .collect()
        };
        assert_eq!(of(absolute), [0.0, 1.5, 3.0, 20.0, 25.0]);
        assert_eq!(of(percent), [0.0, 25.0]);
        server.shutdown().await;
    }

    #[tokio::test]
    async fn limits_answer_with_their_bad_codes() {
        let limits = SubscriptionLimits {
            max_subscriptions_per_session: 2,
            max_monitored_items_per_subscription: 3,
            max_publish_requests_per_session: 2,
            ..SubscriptionLimits::default()
        };
        let server = start(limits).await;
        let mut client = connect(&server).await;
        // Slow publishing and keep-alives, so queued Publish requests stay queued.
        let slow = SubscriptionSettings {
            publishing_interval_ms: 60_000.0,
            max_keep_alive_count: 100,
            ..SubscriptionSettings::default()
        };
        let id = client.create_subscription(slow.clone()).await.unwrap();
        client.create_subscription(slow.clone()).await.unwrap();
        let error = client.create_subscription(slow).await.unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_TOO_MANY_SUBSCRIPTIONS);
        let specs = vec![MonitoredItemSpec::value(plain()); 4];
        let created = client.create_monitored_items(id, &specs).await.unwrap();
        let statuses: Vec<StatusCode> = created.iter().map(|(_, r)| r.status_code).collect();
        assert_eq!(
            statuses,
            [
                StatusCode::GOOD,
                StatusCode::GOOD,
                StatusCode::GOOD,
                StatusCode::BAD_TOO_MANY_MONITORED_ITEMS
            ]
        );
        // Unknown nodes and items.
        let missing = client
            .create_monitored_items(id + 1, &[MonitoredItemSpec::value(NodeId::string(1, "X"))])
            .await
            .unwrap();
        assert_eq!(missing[0].1.status_code, StatusCode::BAD_NODE_ID_UNKNOWN);
        assert_eq!(
            client.delete_monitored_items(id, &[9999]).await.unwrap(),
            [StatusCode::BAD_MONITORED_ITEM_ID_INVALID]
        );
        // The first message of each subscription may answer two Publish requests at once;
        // drain those, then two queued requests fill the queue and a third is refused.
        let mut handles = Vec::new();
        for _ in 0..4 {
            let request = PublishRequest {
                request_header: RequestHeader::default(),
                subscription_acknowledgements: vec![],
            };
            handles.push(client.send(request).await.unwrap());
        }
        let mut refused = 0;
        let mut answered = 0;
        while refused + answered < 2 {
            let (_, result) = client.next_response().await.unwrap();
            match result {
                Ok(ServiceResponse::Publish(_)) => answered += 1,
                Err(status) => {
                    assert_eq!(status, StatusCode::BAD_TOO_MANY_PUBLISH_REQUESTS);
                    refused += 1;
                }
                Ok(other) => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(refused, 2, "four requests, a queue of two");
        server.shutdown().await;
    }

    #[tokio::test]
    async fn transfer_and_recreate_keep_the_subscription_going() {
        let server = start(SubscriptionLimits::default()).await;
        let mut first = connect(&server).await;
        let id = first.create_subscription(fast(20.0)).await.unwrap();
        let created = first
            .create_monitored_items(id, &[MonitoredItemSpec::value(plain())])
            .await
            .unwrap();
        let handle = created[0].0;
        assert_eq!(data_changes(&mut first, 1).await[0].0, handle);

        // Another session of the same (anonymous) user takes the subscription over.
        let mut second = connect(&server).await;
        let request = TransferSubscriptionsRequest {
            request_header: RequestHeader::default(),
            subscription_ids: vec![id, id + 1000],
            send_initial_values: true,
        };
        let ServiceResponse::TransferSubscriptions(transferred) =
            second.request(request).await.unwrap()
        else {
            panic!("a TransferSubscriptionsResponse");
        };
        assert_eq!(transferred.results[0].status_code, StatusCode::GOOD);
        assert_eq!(
            transferred.results[1].status_code,
            StatusCode::BAD_SUBSCRIPTION_ID_INVALID
        );
        // The old session learns it lost the subscription.
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(10), first.next_notification())
                .await
                .unwrap_or_else(|_| panic!("no status change within 10 s after {seen:?}"))
                .unwrap();
            seen.push(event.clone());
            match event {
                SubscriptionEvent::StatusChange {
                    subscription_id,
                    status,
                } => {
                    assert_eq!(subscription_id, id);
                    assert_eq!(status, StatusCode::GOOD_SUBSCRIPTION_TRANSFERRED);
                    break;
                }
                SubscriptionEvent::KeepAlive { .. } | SubscriptionEvent::DataChange { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(first.subscription_set().is_empty());

        // Re-creating on a third session keeps the client handles.
        let mut set = first.take_subscription_set();
        set.created(
            fast(20.0),
            &buildwire_opcua::services::CreateSubscriptionResponse {
                subscription_id: 4242,
                ..Default::default()
            },
        );
        let specs = [MonitoredItemSpec::value(plain())];
        let (_, handles) = set.create_items_request(4242, &specs);
        set.items_created(
            4242,
            &specs,
            &handles,
            &[buildwire_opcua::services::MonitoredItemCreateResult::default()],
        );
        let mut third = connect(&server).await;
        third.recreate_subscriptions(set).await.unwrap();
        let recreated = third.subscription_set();
        assert_eq!(recreated.subscriptions.len(), 1);
        let (new_id, subscription) = recreated.subscriptions.iter().next().unwrap();
        assert_ne!(*new_id, 4242);
        assert!(subscription.items.contains_key(&handles[0]));
        // The initial value first (queue size 1: a write before the first publish would
        // replace it), then the written one, both under the old client handle.
        let initial = data_changes(&mut third, 1).await;
        assert_eq!(initial[0].0, handles[0]);
        assert_eq!(number(&initial[0].1), 0.0);
        write(&mut third, &plain(), 9.5).await;
        let changes = data_changes(&mut third, 1).await;
        assert_eq!(changes[0].0, handles[0]);
        assert_eq!(number(&changes[0].1), 9.5);
        server.shutdown().await;
    }
}
