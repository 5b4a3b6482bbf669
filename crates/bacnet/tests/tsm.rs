//! Client and server transaction state machines driven against each other in memory with a
//! simulated clock and a lossy, duplicating, reordering network.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::{ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::enums::{AbortReason, Segmentation};
use buildwire_bacnet::tsm::{
    ClientEvent, ClientTsm, RequestTiming, Response, SendError, ServerEvent, ServerTsm, TsmConfig,
};
use proptest::prelude::*;

const CLIENT: u32 = 1;
const SERVER: u32 = 2;

/// Network misbehaviour driven by a small deterministic generator.
#[derive(Debug, Clone, Copy)]
struct Chaos {
    state: u64,
    loss_percent: u64,
    duplicate_percent: u64,
    reorder: bool,
}

impl Chaos {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

type Responder = Box<dyn FnMut(ConfirmedServiceChoice, &[u8]) -> Response>;

struct Sim {
    client: ClientTsm<u32>,
    server: ServerTsm<u32>,
    now: Instant,
    in_flight: VecDeque<(u32, Vec<u8>)>,
    sent: usize,
    drop_indices: Vec<usize>,
    chaos: Option<Chaos>,
    responder: Responder,
    executed: Vec<Vec<u8>>,
    client_events: Vec<ClientEvent<u32>>,
    server_events: Vec<ServerEvent<u32>>,
}

impl Sim {
    fn new(client: TsmConfig, server: TsmConfig, responder: Responder) -> Self {
        Self {
            client: ClientTsm::new(client),
            server: ServerTsm::new(server),
            now: Instant::now(),
            in_flight: VecDeque::new(),
            sent: 0,
            drop_indices: Vec::new(),
            chaos: None,
            responder,
            executed: Vec::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
        }
    }

    fn enqueue(&mut self, to: u32, bytes: Vec<u8>) {
        let index = self.sent;
        self.sent += 1;
        if self.drop_indices.contains(&index) {
            return;
        }
        if let Some(chaos) = &mut self.chaos {
            let (loss, duplicate) = (chaos.loss_percent, chaos.duplicate_percent);
            if chaos.next() % 100 < loss {
                return;
            }
            if chaos.next() % 100 < duplicate {
                self.in_flight.push_back((to, bytes.clone()));
            }
        }
        self.in_flight.push_back((to, bytes));
    }

    fn collect(&mut self) {
        while let Some(event) = self.server.poll_event() {
            if let ServerEvent::Request {
                peer,
                invoke_id,
                service,
                payload,
                ..
            } = &event
            {
                let response = (self.responder)(*service, payload);
                self.executed.push(payload.clone());
                self.server
                    .respond(self.now, *peer, *invoke_id, response)
                    .expect("the request awaits a response");
            }
            self.server_events.push(event);
        }
        while let Some((to, bytes)) = self.client.poll_transmit() {
            assert_eq!(to, SERVER);
            self.enqueue(to, bytes);
        }
        while let Some((to, bytes)) = self.server.poll_transmit() {
            assert_eq!(to, CLIENT);
            self.enqueue(to, bytes);
        }
        while let Some(event) = self.client.poll_event() {
            self.client_events.push(event);
        }
    }

    fn deliver_one(&mut self) -> bool {
        let index = match &mut self.chaos {
            Some(chaos) if chaos.reorder && !self.in_flight.is_empty() => {
                (chaos.next() % self.in_flight.len() as u64) as usize
            }
            _ => 0,
        };
        let Some((to, bytes)) = self.in_flight.remove(index) else {
            return false;
        };
        if to == SERVER {
            self.server.handle_datagram(self.now, CLIENT, &bytes);
        } else {
            self.client.handle_datagram(self.now, SERVER, &bytes);
        }
        true
    }

    /// Runs until both sides are idle.
    fn run(&mut self) {
        for _ in 0..1_000_000 {
            self.collect();
            if self.deliver_one() {
                continue;
            }
            if self.client.outstanding() == 0 && self.server.in_progress() == 0 {
                return;
            }
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("a busy side has a deadline");
            self.now = self.now.max(next);
            self.client.handle_timeout(self.now);
            self.server.handle_timeout(self.now);
        }
        panic!("simulation did not settle");
    }

    fn request(&mut self, service: ConfirmedServiceChoice, payload: Vec<u8>) -> u8 {
        self.client
            .send_request(self.now, SERVER, service, payload)
            .expect("request accepted")
    }
}

fn big_payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

fn segmenting_config(max_apdu: MaxApdu, window: u8) -> TsmConfig {
    TsmConfig {
        max_apdu,
        window_size: window,
        ..TsmConfig::default()
    }
}

/// The answer of a returns-this-payload server that answers ComplexACK(payload).
fn big_answer(len: usize) -> Responder {
    Box::new(move |_, _| Response::ComplexAck(big_payload(len)))
}

#[test]
fn read_property_request_and_ack_match_clause_f_3_5() {
    // Clause F.3.5: ReadProperty of analog-input,5 present-value, max APDU 206, invoke ID 1.
    let request = [
        0x00, 0x02, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
    ];
    let ack = [
        0x30, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x3E, 0x44, 0x42, 0x90, 0x00,
        0x00, 0x3F,
    ];
    let client_config = TsmConfig {
        max_apdu: MaxApdu::Up206,
        max_segments: MaxSegments::Unspecified,
        segmentation: Segmentation::NoSegmentation,
        ..TsmConfig::default()
    };
    let mut client = ClientTsm::new(client_config);
    let mut server = ServerTsm::new(TsmConfig::default());
    let now = Instant::now();
    let rp = ConfirmedServiceChoice::ReadProperty;
    // Invoke ids start at 0; the clause's example uses the second one.
    assert_eq!(
        client.send_request(now, SERVER, rp, request[4..].to_vec()),
        Ok(0)
    );
    assert_eq!(
        client.send_request(now, SERVER, rp, request[4..].to_vec()),
        Ok(1)
    );
    assert!(client.poll_transmit().is_some());
    let (to, bytes) = client.poll_transmit().unwrap();
    assert_eq!((to, bytes.as_slice()), (SERVER, &request[..]));

    server.handle_datagram(now, CLIENT, &bytes);
    let Some(ServerEvent::Request {
        invoke_id: 1,
        service,
        payload,
        max_apdu: MaxApdu::Up206,
        segmented_response_accepted: false,
        ..
    }) = server.poll_event()
    else {
        panic!("request not delivered");
    };
    assert_eq!(service, rp);
    assert_eq!(payload, &request[4..]);
    server
        .respond(now, CLIENT, 1, Response::ComplexAck(ack[3..].to_vec()))
        .unwrap();
    let (to, reply) = server.poll_transmit().unwrap();
    assert_eq!((to, reply.as_slice()), (CLIENT, &ack[..]));
    client.handle_datagram(now, SERVER, &reply);
    assert_eq!(
        client.poll_event(),
        Some(ClientEvent::ComplexAck {
            peer: SERVER,
            invoke_id: 1,
            service: rp,
            payload: ack[3..].to_vec()
        })
    );
    assert!(client.is_active(&SERVER, 0));
    assert!(!client.is_active(&SERVER, 1));
}

#[test]
fn an_answer_for_another_service_is_not_taken() {
    // A late ReadProperty-ACK with the invoke id of a pending WriteProperty: dropped; the
    // WriteProperty's own SimpleACK then completes the transaction.
    let now = Instant::now();
    let mut client = ClientTsm::new(TsmConfig::default());
    let id = client
        .send_request(now, SERVER, ConfirmedServiceChoice::WriteProperty, vec![1])
        .unwrap();
    while client.poll_transmit().is_some() {}
    client.handle_datagram(now, SERVER, &[0x30, id, 0x0C, 0x3E, 0x3F]);
    assert_eq!(client.poll_event(), None);
    assert_eq!(client.stats().ignored, 1);
    client.handle_datagram(now, SERVER, &[0x20, id, 0x0F]);
    assert_eq!(
        client.poll_event(),
        Some(ClientEvent::SimpleAck {
            peer: SERVER,
            invoke_id: id,
            service: ConfirmedServiceChoice::WriteProperty
        })
    );
}

#[test]
fn simple_request_and_simple_ack() {
    let mut sim = Sim::new(
        TsmConfig::default(),
        TsmConfig::default(),
        Box::new(|_, _| Response::SimpleAck),
    );
    let id = sim.request(ConfirmedServiceChoice::WriteProperty, vec![1, 2, 3]);
    sim.run();
    assert_eq!(
        sim.client_events,
        [ClientEvent::SimpleAck {
            peer: SERVER,
            invoke_id: id,
            service: ConfirmedServiceChoice::WriteProperty
        }]
    );
    assert_eq!(sim.executed, [vec![1, 2, 3]]);
    assert_eq!(sim.client.stats().retries, 0);
}

#[test]
fn segmented_complex_ack_at_480_with_windows_1_4_16() {
    for window in [1, 4, 16] {
        let config = segmenting_config(MaxApdu::Up480, window);
        let mut sim = Sim::new(config.clone(), config, big_answer(10_000));
        let id = sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, vec![0x0C]);
        sim.run();
        let [
            ClientEvent::ComplexAck {
                invoke_id, payload, ..
            },
        ] = sim.client_events.as_slice()
        else {
            panic!("window {window}: {:?}", sim.client_events);
        };
        assert_eq!(*invoke_id, id);
        assert_eq!(*payload, big_payload(10_000), "window {window}");
        // 480 - 5 header bytes = 475 per segment: 22 segments, each sent once.
        assert_eq!(sim.server.stats().segments_sent, 22, "window {window}");
        assert_eq!(sim.client.stats().segments_received, 22);
        assert_eq!(sim.server.stats().retries, 0);
    }
}

#[test]
fn segmented_request_is_reassembled() {
    let config = segmenting_config(MaxApdu::Up480, 4);
    let mut sim = Sim::new(config.clone(), config, Box::new(|_, _| Response::SimpleAck));
    sim.client.set_peer_limits(
        SERVER,
        MaxApdu::Up480,
        Segmentation::SegmentedBoth,
        MaxSegments::SixtyFour,
    );
    let request = big_payload(5_000);
    sim.request(
        ConfirmedServiceChoice::WritePropertyMultiple,
        request.clone(),
    );
    sim.run();
    assert_eq!(sim.executed, [request]);
    assert!(matches!(
        sim.client_events.as_slice(),
        [ClientEvent::SimpleAck { .. }]
    ));
    // 480 - 6 header bytes = 474 per segment: 11 segments.
    assert_eq!(sim.client.stats().segments_sent, 11);
    assert_eq!(
        sim.server.held_request_bytes(),
        sim.server.held_request_bytes().min(6_000)
    );
}

#[test]
fn lost_segments_are_recovered() {
    for lost in [1usize, 3, 5, 12, 20] {
        let config = segmenting_config(MaxApdu::Up480, 4);
        let mut sim = Sim::new(config.clone(), config, big_answer(10_000));
        sim.drop_indices = vec![lost, lost + 7];
        sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, vec![0x0C]);
        sim.run();
        let [ClientEvent::ComplexAck { payload, .. }] = sim.client_events.as_slice() else {
            panic!("lost {lost}: {:?}", sim.client_events);
        };
        assert_eq!(*payload, big_payload(10_000), "lost {lost}");
        assert_eq!(sim.executed.len(), 1, "the service ran once (lost {lost})");
    }
}

#[test]
fn lost_request_segments_are_recovered() {
    // Datagrams: 0 = segment 0, 1 = its SegmentACK, 2..=5 = segments 1..=4, 6 = their
    // SegmentACK. Losing 6 needs a timeout and a resent window; losing 2 is repaired by
    // the server's negative SegmentACK or a timeout.
    for (lost, needs_retry) in [(vec![6], true), (vec![2], false), (vec![2, 6, 9], false)] {
        let config = segmenting_config(MaxApdu::Up480, 4);
        let mut sim = Sim::new(config.clone(), config, Box::new(|_, _| Response::SimpleAck));
        sim.client.set_peer_limits(
            SERVER,
            MaxApdu::Up480,
            Segmentation::SegmentedBoth,
            MaxSegments::SixtyFour,
        );
        sim.drop_indices = lost.clone();
        let request = big_payload(5_000);
        sim.request(
            ConfirmedServiceChoice::WritePropertyMultiple,
            request.clone(),
        );
        sim.run();
        assert_eq!(sim.executed, [request], "lost {lost:?}");
        assert!(matches!(
            sim.client_events.as_slice(),
            [ClientEvent::SimpleAck { .. }]
        ));
        if needs_retry {
            assert_eq!(sim.client.stats().retries, 1);
            assert!(sim.server.stats().duplicates >= 1);
        }
    }
}

#[test]
fn out_of_order_segment_gets_a_negative_segment_ack() {
    let mut client = ClientTsm::new(TsmConfig {
        window_size: 4,
        ..TsmConfig::default()
    });
    let now = Instant::now();
    let id = client
        .send_request(
            now,
            SERVER,
            ConfirmedServiceChoice::ReadPropertyMultiple,
            vec![],
        )
        .unwrap();
    client.poll_transmit().unwrap();
    // ComplexACK segments (Clause 20.1.5): 0x3C = type 3 + SEG + MOR; 0x38 = SEG, last.
    let segment = |seq: u8, more: bool, data: u8| {
        vec![if more { 0x3C } else { 0x38 }, id, seq, 4, 0x0E, data]
    };
    client.handle_datagram(now, SERVER, &segment(0, true, 0xA0));
    // First segment acknowledged at once with the actual window size (4).
    assert_eq!(client.poll_transmit(), Some((SERVER, vec![0x40, id, 0, 4])));
    client.handle_datagram(now, SERVER, &segment(2, true, 0xA2));
    // Out of order: NAK (0x42) naming the last segment received in order.
    assert_eq!(client.poll_transmit(), Some((SERVER, vec![0x42, id, 0, 4])));
    client.handle_datagram(now, SERVER, &segment(1, true, 0xA1));
    client.handle_datagram(now, SERVER, &segment(2, true, 0xA2));
    // A repeat of segment 1 is acknowledged positively.
    client.handle_datagram(now, SERVER, &segment(1, true, 0xA1));
    assert_eq!(client.poll_transmit(), Some((SERVER, vec![0x40, id, 2, 4])));
    client.handle_datagram(now, SERVER, &segment(3, false, 0xA3));
    assert_eq!(client.poll_transmit(), Some((SERVER, vec![0x40, id, 3, 4])));
    assert_eq!(
        client.poll_event(),
        Some(ClientEvent::ComplexAck {
            peer: SERVER,
            invoke_id: id,
            service: ConfirmedServiceChoice::ReadPropertyMultiple,
            payload: vec![0xA0, 0xA1, 0xA2, 0xA3]
        })
    );
    assert_eq!(client.stats().duplicates, 1);
}

#[test]
fn reordering_network_still_delivers() {
    let config = segmenting_config(MaxApdu::Up480, 16);
    let mut sim = Sim::new(config.clone(), config, big_answer(10_000));
    sim.chaos = Some(Chaos {
        state: 0x1234_5678,
        loss_percent: 0,
        duplicate_percent: 0,
        reorder: true,
    });
    sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, vec![]);
    sim.run();
    let [ClientEvent::ComplexAck { payload, .. }] = sim.client_events.as_slice() else {
        panic!("{:?}", sim.client_events);
    };
    assert_eq!(*payload, big_payload(10_000));
}

#[test]
fn duplicate_request_is_answered_from_the_cache() {
    let mut server = ServerTsm::new(TsmConfig::default());
    let now = Instant::now();
    // An AddListElement (service 8): it has a side effect, so its answer is kept.
    let request = [
        0x00, 0x05, 0x07, 0x08, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
    ];
    server.handle_datagram(now, CLIENT, &request);
    assert!(matches!(
        server.poll_event(),
        Some(ServerEvent::Request { invoke_id: 7, .. })
    ));
    // Repeated while the application works on it: ignored.
    server.handle_datagram(now, CLIENT, &request);
    assert_eq!(server.poll_transmit(), None);
    assert_eq!(server.poll_event(), None);
    server
        .respond(now, CLIENT, 7, Response::ComplexAck(vec![0x3E, 0x3F]))
        .unwrap();
    let first = server.poll_transmit().unwrap();
    assert_eq!(first, (CLIENT, vec![0x30, 0x07, 0x08, 0x3E, 0x3F]));
    // Repeated after the answer: the same answer again, the service is not run again.
    server.handle_datagram(now + Duration::from_secs(3), CLIENT, &request);
    assert_eq!(server.poll_transmit(), Some(first));
    assert_eq!(server.poll_event(), None);
    assert_eq!(server.stats().cache_hits, 1);
    assert_eq!(server.stats().duplicates, 2);
    assert_eq!(server.stats().requests, 1);
    // After the cache time the request is new again.
    server.handle_datagram(now + Duration::from_secs(11), CLIENT, &request);
    assert!(matches!(
        server.poll_event(),
        Some(ServerEvent::Request { invoke_id: 7, .. })
    ));
    assert_eq!(
        server.respond(now, CLIENT, 8, Response::SimpleAck),
        Err(buildwire_bacnet::tsm::RespondError::UnknownTransaction)
    );
}

#[test]
fn repeated_read_after_its_answer_runs_again() {
    // A client that reuses invoke id 7 for the same ReadProperty after the answer must get
    // the current value, not a kept answer.
    let mut server = ServerTsm::new(TsmConfig::default());
    let now = Instant::now();
    let request = [
        0x00, 0x05, 0x07, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
    ];
    for (round, value) in [(0u64, 0x3Eu8), (1, 0x3F)] {
        server.handle_datagram(now + Duration::from_millis(round), CLIENT, &request);
        assert!(matches!(
            server.poll_event(),
            Some(ServerEvent::Request { invoke_id: 7, .. })
        ));
        server
            .respond(now, CLIENT, 7, Response::ComplexAck(vec![value]))
            .unwrap();
        assert_eq!(
            server.poll_transmit(),
            Some((CLIENT, vec![0x30, 0x07, 0x0C, value]))
        );
    }
    assert_eq!(server.stats().requests, 2);
    assert_eq!(server.stats().cache_hits, 0);
}

#[test]
fn reused_invoke_id_with_different_content_is_a_new_request() {
    let mut server = ServerTsm::new(TsmConfig::default());
    let now = Instant::now();
    let first = [
        0x00, 0x05, 0x07, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55,
    ];
    let mut second = first;
    second[8] = 0x06; // analog-input,6
    server.handle_datagram(now, CLIENT, &first);
    assert!(server.poll_event().is_some());
    server.respond(now, CLIENT, 7, Response::SimpleAck).unwrap();
    let answer = server.poll_transmit().unwrap();
    server.handle_datagram(now, CLIENT, &second);
    assert_eq!(server.poll_transmit(), None, "never the cached answer");
    let Some(ServerEvent::Request { payload, .. }) = server.poll_event() else {
        panic!("not delivered as a new request");
    };
    assert_eq!(payload, &second[4..]);
    server
        .respond(
            now,
            CLIENT,
            7,
            Response::Error(vec![0x91, 0x01, 0x91, 0x1F]),
        )
        .unwrap();
    let new_answer = server.poll_transmit().unwrap();
    assert_ne!(new_answer, answer);
    assert_eq!(new_answer.1, [0x50, 0x07, 0x0C, 0x91, 0x01, 0x91, 0x1F]);
    // A different request while the first is still in progress supersedes it.
    server.handle_datagram(now, CLIENT, &[0x00, 0x05, 0x09, 0x0F, 0x01]);
    server.handle_datagram(now, CLIENT, &[0x00, 0x05, 0x09, 0x0F, 0x02]);
    assert!(server.poll_event().is_some());
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::Superseded {
            peer: CLIENT,
            invoke_id: 9
        })
    );
    assert!(matches!(
        server.poll_event(),
        Some(ServerEvent::Request { payload, .. }) if payload == [0x02]
    ));
}

#[test]
fn retries_then_timeout() {
    let mut client = ClientTsm::new(TsmConfig::default());
    let start = Instant::now();
    let id = client
        .send_request(
            start,
            SERVER,
            ConfirmedServiceChoice::ReadProperty,
            vec![0x0C],
        )
        .unwrap();
    let first = client.poll_transmit().unwrap();
    let mut sends = 1;
    while let Some(deadline) = client.poll_timeout() {
        client.handle_timeout(deadline);
        while let Some(again) = client.poll_transmit() {
            assert_eq!(again, first, "a retry repeats the request exactly");
            sends += 1;
        }
        if let Some(event) = client.poll_event() {
            assert_eq!(
                event,
                ClientEvent::Timeout {
                    peer: SERVER,
                    invoke_id: id
                }
            );
            assert_eq!(deadline - start, Duration::from_secs(12));
            break;
        }
    }
    assert_eq!(sends, 4, "the request and three retries");
    assert_eq!(client.stats().retries, 3);
    assert_eq!(client.stats().timeouts, 1);
    assert_eq!(client.outstanding(), 0);
    // An answer after the timeout is ignored.
    client.handle_datagram(start, SERVER, &[0x20, id, 0x0C]);
    assert_eq!(client.poll_event(), None);
    assert_eq!(client.stats().ignored, 1);
}

#[test]
fn a_request_with_its_own_timing_retries_and_times_out_on_it() {
    let mut client = ClientTsm::new(TsmConfig::default());
    let start = Instant::now();
    let patient = client
        .send_request(
            start,
            SERVER,
            ConfirmedServiceChoice::ReadProperty,
            vec![0x0C],
        )
        .unwrap();
    let quick_timing = RequestTiming {
        apdu_timeout: Duration::from_millis(300),
        retries: 1,
    };
    let quick = client
        .send_request_timed(
            start,
            SERVER,
            ConfirmedServiceChoice::ReadProperty,
            vec![0x0D],
            quick_timing,
        )
        .unwrap();
    assert_eq!(
        client.poll_timeout(),
        Some(start + Duration::from_millis(300))
    );
    let mut quick_sends = 0;
    let mut patient_sends = 0;
    let mut timed_out = None;
    while let Some(deadline) = client.poll_timeout() {
        while let Some((_, apdu)) = client.poll_transmit() {
            if apdu[2] == quick {
                quick_sends += 1;
            } else {
                patient_sends += 1;
            }
        }
        if timed_out.is_some() {
            break;
        }
        client.handle_timeout(deadline);
        if let Some(event) = client.poll_event() {
            assert_eq!(
                event,
                ClientEvent::Timeout {
                    peer: SERVER,
                    invoke_id: quick
                }
            );
            timed_out = Some(deadline - start);
        }
    }
    // 300 ms, one retry: the quick request ends at 600 ms after two sends; the other keeps
    // the configuration's 3 s and three retries.
    assert_eq!(timed_out, Some(Duration::from_millis(600)));
    assert_eq!(quick_sends, 2);
    assert_eq!(patient_sends, 1);
    assert!(client.is_active(&SERVER, patient));
    assert_eq!(client.poll_timeout(), Some(start + Duration::from_secs(3)));
}

#[test]
fn replies_from_other_peers_or_unknown_ids_are_ignored() {
    let mut client = ClientTsm::new(TsmConfig::default());
    let now = Instant::now();
    let id = client
        .send_request(now, SERVER, ConfirmedServiceChoice::ReadProperty, vec![])
        .unwrap();
    client.handle_datagram(now, 99, &[0x20, id, 0x0C]);
    client.handle_datagram(now, SERVER, &[0x20, id.wrapping_add(1), 0x0C]);
    client.handle_datagram(now, SERVER, &[0x20]);
    assert_eq!(client.poll_event(), None);
    assert_eq!(client.stats().ignored, 2);
    assert_eq!(client.stats().malformed, 1);
    client.handle_datagram(now, SERVER, &[0x60, id, 0x09]);
    assert_eq!(
        client.poll_event(),
        Some(ClientEvent::Reject {
            peer: SERVER,
            invoke_id: id,
            reason: buildwire_bacnet::enums::RejectReason::UnrecognizedService
        })
    );
}

#[test]
fn peer_that_cannot_receive_segments_gets_an_abort() {
    let client_config = TsmConfig {
        segmentation: Segmentation::NoSegmentation,
        max_apdu: MaxApdu::Up480,
        ..TsmConfig::default()
    };
    let mut sim = Sim::new(client_config, TsmConfig::default(), big_answer(10_000));
    let id = sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, vec![]);
    sim.run();
    assert_eq!(
        sim.client_events,
        [ClientEvent::Abort {
            peer: SERVER,
            invoke_id: id,
            reason: AbortReason::SegmentationNotSupported,
            by_server: true
        }]
    );

    // Accepts segments, but only two: the answer cannot fit even segmented.
    let client_config = TsmConfig {
        max_segments: MaxSegments::Two,
        max_apdu: MaxApdu::Up480,
        ..TsmConfig::default()
    };
    let mut sim = Sim::new(client_config, TsmConfig::default(), big_answer(10_000));
    sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, vec![]);
    sim.run();
    assert!(matches!(
        sim.client_events.as_slice(),
        [ClientEvent::Abort {
            reason: AbortReason::BufferOverflow,
            by_server: true,
            ..
        }]
    ));

    // The client side refuses to segment for a peer not known to accept segments.
    let mut client: ClientTsm<u32> = ClientTsm::new(TsmConfig::default());
    assert_eq!(
        client.send_request(
            Instant::now(),
            SERVER,
            ConfirmedServiceChoice::WritePropertyMultiple,
            vec![0; 2000]
        ),
        Err(SendError::SegmentationNotSupported)
    );
}

#[test]
fn server_without_segmentation_aborts_segmented_requests() {
    let mut server = ServerTsm::new(TsmConfig {
        segmentation: Segmentation::NoSegmentation,
        ..TsmConfig::default()
    });
    // Segment 0 of a segmented WritePropertyMultiple, invoke id 5.
    server.handle_datagram(
        Instant::now(),
        CLIENT,
        &[0x0C, 0x05, 0x05, 0x00, 0x04, 0x10, 0xAA],
    );
    assert_eq!(
        server.poll_transmit(),
        Some((CLIENT, vec![0x71, 0x05, 0x04]))
    );
    assert_eq!(server.in_progress(), 0);
}

#[test]
fn invoke_ids_are_per_peer_and_never_reused_while_active() {
    let mut client = ClientTsm::new(TsmConfig::default());
    let now = Instant::now();
    let rp = ConfirmedServiceChoice::ReadProperty;
    for expected in 0..=255u8 {
        assert_eq!(client.send_request(now, SERVER, rp, vec![]), Ok(expected));
    }
    assert_eq!(
        client.send_request(now, SERVER, rp, vec![]),
        Err(SendError::TooManyOutstanding)
    );
    // Another peer has its own ids.
    assert_eq!(client.send_request(now, 3, rp, vec![]), Ok(0));
    assert!(client.cancel(&SERVER, 17));
    assert!(!client.cancel(&SERVER, 17));
    while client.poll_transmit().is_some() {}
    assert_eq!(client.send_request(now, SERVER, rp, vec![]), Ok(17));
}

#[test]
fn server_tables_hold_under_a_flood() {
    let config = TsmConfig::default();
    let mut server = ServerTsm::new(config.clone());
    let now = Instant::now();
    // 100,000 distinct (peer, invoke id) pairs, never answered.
    for n in 0..100_000u32 {
        let peer = n / 256;
        let request = [0x00, 0x05, (n % 256) as u8, 0x0C, 0x19, 0x55];
        server.handle_datagram(now, peer, &request);
        assert!(server.in_progress() <= config.max_transactions);
        while server.poll_event().is_some() {}
        while server.poll_transmit().is_some() {}
    }
    assert_eq!(server.in_progress(), config.max_transactions);
    assert!(server.stats().refused_for_resources >= 100_000 - config.max_transactions as u64);

    // The same flood answered at once: the cache stays bounded (WriteProperty, whose answers
    // are kept; answers to reads are not).
    let mut server = ServerTsm::new(config.clone());
    for n in 0..100_000u32 {
        let peer = n % 5_000;
        let id = (n / 5_000) as u8;
        server.handle_datagram(now, peer, &[0x00, 0x05, id, 0x0F, 0x19, 0x55]);
        while let Some(event) = server.poll_event() {
            if let ServerEvent::Request {
                peer, invoke_id, ..
            } = event
            {
                server
                    .respond(now, peer, invoke_id, Response::SimpleAck)
                    .unwrap();
            }
        }
        while server.poll_transmit().is_some() {}
        assert!(server.cached_responses() <= config.max_cached_responses);
    }
    assert_eq!(server.in_progress(), 0);
    assert!(server.stats().cache_evictions > 0);

    // A flood of first segments of large segmented requests from one peer per request.
    let small = TsmConfig {
        max_total_reassembly_bytes: 64 * 1024,
        ..config
    };
    let mut server = ServerTsm::new(small.clone());
    let chunk = vec![0x55; 1400];
    for n in 0..100_000u32 {
        let mut segment = vec![0x0E, 0x05, (n % 256) as u8, 0x00, 0x10, 0x10];
        segment.extend_from_slice(&chunk);
        server.handle_datagram(now, n, &segment);
        while server.poll_transmit().is_some() {}
        assert!(server.held_request_bytes() <= small.max_total_reassembly_bytes);
        assert!(server.in_progress() <= small.max_transactions);
    }
    assert!(server.stats().refused_for_resources > 90_000);
    // All abandoned reassemblies time out.
    server.handle_timeout(now + Duration::from_secs(60));
    assert_eq!(server.in_progress(), 0);
    assert_eq!(server.held_request_bytes(), 0);
}

#[test]
fn client_flood_of_peers_stays_bounded() {
    let config = TsmConfig::default();
    let mut client = ClientTsm::new(config.clone());
    let now = Instant::now();
    let mut refused = 0;
    for peer in 0..100_000u32 {
        match client.send_request(now, peer, ConfirmedServiceChoice::ReadProperty, vec![]) {
            Ok(_) => {}
            Err(SendError::TooManyOutstanding) => refused += 1,
            Err(other) => panic!("{other:?}"),
        }
        while client.poll_transmit().is_some() {}
    }
    assert_eq!(client.outstanding(), config.max_transactions);
    assert_eq!(refused, 100_000 - config.max_transactions);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Loss, duplication and reordering either deliver the exact payload or end cleanly
    /// in a timeout or abort; both sides always end idle.
    #[test]
    fn chaos_delivers_exact_payload_or_fails_cleanly(
        seed in 1u64..u64::MAX,
        loss in 0u64..25,
        duplicate in 0u64..25,
        reorder in any::<bool>(),
        window in 1u8..20,
        len in 0usize..6_000,
        segmented_request in any::<bool>(),
    ) {
        let config = segmenting_config(MaxApdu::Up480, window);
        let answer = big_payload(len);
        let expected = answer.clone();
        let mut sim = Sim::new(
            config.clone(),
            config,
            Box::new(move |_, _| Response::ComplexAck(answer.clone())),
        );
        sim.client.set_peer_limits(
            SERVER,
            MaxApdu::Up480,
            Segmentation::SegmentedBoth,
            MaxSegments::SixtyFour,
        );
        sim.chaos = Some(Chaos { state: seed, loss_percent: loss, duplicate_percent: duplicate, reorder });
        let request = if segmented_request { big_payload(2_000) } else { vec![1, 2] };
        sim.request(ConfirmedServiceChoice::ReadPropertyMultiple, request.clone());
        sim.run();
        prop_assert_eq!(sim.client_events.len(), 1);
        match &sim.client_events[0] {
            ClientEvent::ComplexAck { payload, .. } => prop_assert_eq!(payload, &expected),
            ClientEvent::Timeout { .. } | ClientEvent::Abort { .. } => {
                prop_assert!(loss > 0 || reorder, "a reliable network must deliver");
            }
            other => prop_assert!(false, "unexpected {:?}", other),
        }
        for executed in &sim.executed {
            prop_assert_eq!(executed, &request);
        }
        prop_assert_eq!(sim.client.outstanding(), 0);
        prop_assert_eq!(sim.server.in_progress(), 0);
    }
}

#[test]
fn segmented_request_headers_and_window_flow() {
    let mut client = ClientTsm::new(TsmConfig {
        max_apdu: MaxApdu::Up480,
        window_size: 2,
        ..TsmConfig::default()
    });
    client.set_peer_limits(
        SERVER,
        MaxApdu::Up128,
        Segmentation::SegmentedBoth,
        MaxSegments::Four,
    );
    let now = Instant::now();
    let wpm = ConfirmedServiceChoice::WritePropertyMultiple;
    // 128 - 6 = 122 bytes per segment: 500 bytes need 5 segments, the peer takes 4.
    assert_eq!(
        client.send_request(now, SERVER, wpm, vec![0; 500]),
        Err(SendError::TooManySegments {
            needed: 5,
            limit: 4
        })
    );
    let id = client
        .send_request(now, SERVER, wpm, vec![0xEE; 300])
        .unwrap();
    // Only the first segment goes out before the server's first SegmentACK (Clause 5.4.4.1).
    // 0x0E = Confirmed-Request, SEG, MOR, SA; 0x63 = 64 segments accepted,
    // max APDU 480; sequence 0, proposed window 2, service 16 (Clause 20.1.2).
    let (_, first) = client.poll_transmit().unwrap();
    assert_eq!(first[..6], [0x0E, 0x63, id, 0x00, 0x02, 0x10]);
    assert_eq!(first.len(), 128);
    assert_eq!(client.poll_transmit(), None);
    // SegmentACK from the server (0x41: SRV) for segment 0, actual window 2.
    client.handle_datagram(now, SERVER, &[0x41, id, 0, 2]);
    let (_, second) = client.poll_transmit().unwrap();
    let (_, third) = client.poll_transmit().unwrap();
    assert_eq!(second[..5], [0x0E, 0x63, id, 0x01, 0x02]);
    // The last segment clears MOR: 0x0A.
    assert_eq!(third[..5], [0x0A, 0x63, id, 0x02, 0x02]);
    assert_eq!(third.len(), 6 + 300 - 2 * 122);
    // A SegmentACK without SRV is not from a server: ignored.
    client.handle_datagram(now, SERVER, &[0x40, id, 2, 2]);
    assert_eq!(client.stats().ignored, 1);
    client.handle_datagram(now, SERVER, &[0x41, id, 2, 2]);
    // Now awaiting confirmation: the APDU timeout applies.
    assert_eq!(
        client.poll_timeout(),
        Some(now + buildwire_bacnet::tsm::DEFAULT_APDU_TIMEOUT)
    );
    client.handle_datagram(now, SERVER, &[0x20, id, 0x10]);
    assert!(matches!(
        client.poll_event(),
        Some(ClientEvent::SimpleAck { .. })
    ));
}

#[test]
fn server_resends_unacknowledged_windows_then_gives_up() {
    let mut server = ServerTsm::new(TsmConfig {
        window_size: 4,
        ..TsmConfig::default()
    });
    let now = Instant::now();
    // Client accepts segmented responses (SA), 16 segments of at most 206 octets.
    server.handle_datagram(now, CLIENT, &[0x02, 0x42, 0x03, 0x0E, 0x01]);
    assert!(server.poll_event().is_some());
    server
        .respond(now, CLIENT, 3, Response::ComplexAck(vec![0x77; 1000]))
        .unwrap();
    let (_, first) = server.poll_transmit().unwrap();
    // 0x3C: ComplexACK, SEG, MOR; sequence 0, proposed window 4, service 14.
    assert_eq!(first[..5], [0x3C, 0x03, 0x00, 0x04, 0x0E]);
    assert_eq!(first.len(), 206);
    assert_eq!(server.poll_transmit(), None);
    let mut deadline = server.poll_timeout().unwrap();
    assert_eq!(
        deadline,
        now + buildwire_bacnet::tsm::DEFAULT_SEGMENT_TIMEOUT
    );
    for _ in 0..3 {
        server.handle_timeout(deadline);
        assert_eq!(server.poll_transmit(), Some((CLIENT, first.clone())));
        deadline = server.poll_timeout().unwrap();
    }
    server.handle_timeout(deadline);
    assert_eq!(server.poll_transmit(), None);
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::Aborted {
            peer: CLIENT,
            invoke_id: 3,
            reason: AbortReason::TsmTimeout,
            by_client: false
        })
    );
    assert_eq!(server.stats().retries, 3);
    assert_eq!(server.in_progress(), 0);
}

#[test]
fn client_abort_and_slow_application_end_server_transactions() {
    let mut server = ServerTsm::new(TsmConfig::default());
    let now = Instant::now();
    server.handle_datagram(now, CLIENT, &[0x00, 0x05, 0x01, 0x0C, 0x01]);
    server.handle_datagram(now, CLIENT, &[0x00, 0x05, 0x02, 0x0C, 0x02]);
    assert!(server.poll_event().is_some());
    assert!(server.poll_event().is_some());
    // Abort from the client (0x70: no SRV bit), reason other.
    server.handle_datagram(now, CLIENT, &[0x70, 0x01, 0x00]);
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::Aborted {
            peer: CLIENT,
            invoke_id: 1,
            reason: AbortReason::Other,
            by_client: true
        })
    );
    assert_eq!(
        server.respond(now, CLIENT, 1, Response::SimpleAck),
        Err(buildwire_bacnet::tsm::RespondError::UnknownTransaction)
    );
    server.handle_timeout(now + buildwire_bacnet::tsm::DEFAULT_APPLICATION_TIMEOUT);
    assert_eq!(
        server.poll_event(),
        Some(ServerEvent::Aborted {
            peer: CLIENT,
            invoke_id: 2,
            reason: AbortReason::ApplicationExceededReplyTime,
            by_client: false
        })
    );
    assert_eq!(server.in_progress(), 0);
    assert_eq!(server.held_request_bytes(), 0);
}

#[test]
fn duplicate_segmented_request_is_answered_from_the_cache() {
    let config = segmenting_config(MaxApdu::Up480, 4);
    let mut client = ClientTsm::new(config.clone());
    let mut server = ServerTsm::new(config);
    client.set_peer_limits(
        SERVER,
        MaxApdu::Up480,
        Segmentation::SegmentedBoth,
        MaxSegments::SixtyFour,
    );
    let now = Instant::now();
    let request = big_payload(3_000);
    client
        .send_request(
            now,
            SERVER,
            ConfirmedServiceChoice::AtomicWriteFile,
            request.clone(),
        )
        .unwrap();
    // Record everything the client sends, and run the exchange once.
    let mut recorded = Vec::new();
    let mut executed = 0;
    loop {
        let mut moved = false;
        while let Some((_, bytes)) = client.poll_transmit() {
            recorded.push(bytes.clone());
            server.handle_datagram(now, CLIENT, &bytes);
            moved = true;
        }
        while let Some(event) = server.poll_event() {
            if let ServerEvent::Request {
                payload, invoke_id, ..
            } = event
            {
                assert_eq!(payload, request);
                executed += 1;
                server
                    .respond(now, CLIENT, invoke_id, Response::SimpleAck)
                    .unwrap();
            }
        }
        while let Some((_, bytes)) = server.poll_transmit() {
            client.handle_datagram(now, SERVER, &bytes);
            moved = true;
        }
        if !moved {
            break;
        }
    }
    assert!(matches!(
        client.poll_event(),
        Some(ClientEvent::SimpleAck { .. })
    ));
    // The client's whole exchange replayed (as a retry would): answered from the cache.
    let mut answers = Vec::new();
    for bytes in &recorded {
        server.handle_datagram(now, CLIENT, bytes);
        while let Some((_, answer)) = server.poll_transmit() {
            answers.push(answer);
        }
    }
    assert_eq!(executed, 1);
    assert_eq!(server.poll_event(), None);
    assert_eq!(server.stats().cache_hits, 1);
    assert_eq!(answers.last().map(|a| a[0]), Some(0x20));
}

#[test]
fn huge_timeouts_do_not_overflow_the_clock() {
    let config = TsmConfig {
        apdu_timeout: Duration::MAX,
        segment_timeout: Duration::MAX,
        response_cache_time: Duration::MAX,
        application_timeout: Duration::MAX,
        ..TsmConfig::default()
    };
    let now = Instant::now();
    let mut client = ClientTsm::new(config.clone());
    client
        .send_request(now, SERVER, ConfirmedServiceChoice::ReadProperty, vec![])
        .unwrap();
    let deadline = client.poll_timeout().unwrap();
    assert!(deadline > now + Duration::from_secs(3600));
    client.handle_timeout(now + Duration::from_secs(3600));
    assert_eq!(client.poll_event(), None);

    let mut server = ServerTsm::new(config);
    // A WriteProperty, whose answer is kept (with a huge cache time).
    server.handle_datagram(now, CLIENT, &[0x00, 0x05, 0x01, 0x0F]);
    server.respond(now, CLIENT, 1, Response::SimpleAck).unwrap();
    assert!(server.poll_timeout().unwrap() > now + Duration::from_secs(3600));
}
