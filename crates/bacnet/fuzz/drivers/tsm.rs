// The tsm fuzz driver, shared by fuzz/fuzz_targets/tsm.rs (libFuzzer) and
// tests/tsm_fuzz_driver.rs (proptest on stable), so both run the same checks: arbitrary APDU
// byte sequences, requests, answers and time steps into a client and a server TSM; nothing may
// panic, every table stays within its limit, every emitted APDU re-encodes identically.
// Included with include!, so no inner doc comments here.

use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::{Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::enums::{AbortReason, RejectReason, Segmentation};
use buildwire_bacnet::tsm::{ClientTsm, Response, ServerEvent, ServerTsm, TsmConfig};

/// Reads the fuzz input as a stream of small instructions.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.data.split_first()?;
        self.data = rest;
        Some(*first)
    }

    fn bytes(&mut self, len: usize) -> &[u8] {
        let len = len.min(self.data.len());
        let (head, rest) = self.data.split_at(len);
        self.data = rest;
        head
    }
}

fn check_apdu(bytes: &[u8]) {
    let apdu = Apdu::decode(&mut Reader::new(bytes)).expect("emitted APDUs decode");
    let mut again = Vec::new();
    apdu.encode(&mut again);
    assert_eq!(again, bytes, "emitted APDUs re-encode identically");
}

fn config(max_apdu: MaxApdu) -> TsmConfig {
    TsmConfig {
        max_apdu,
        max_segments: MaxSegments::Sixteen,
        window_size: 3,
        retries: 2,
        max_transactions: 8,
        max_transactions_per_peer: 4,
        max_cached_responses: 4,
        max_reassembly_bytes: 4096,
        max_total_reassembly_bytes: 8192,
        ..TsmConfig::default()
    }
}

pub fn drive(data: &[u8]) {
    let mut input = Input { data };
    let client_config = config(MaxApdu::Up206);
    let server_config = config(MaxApdu::Up480);
    let mut client = ClientTsm::<u8>::new(client_config.clone());
    let mut server = ServerTsm::<u8>::new(server_config.clone());
    for peer in 0..4 {
        client.set_peer_limits(
            peer,
            MaxApdu::Up206,
            Segmentation::SegmentedBoth,
            MaxSegments::Eight,
        );
    }
    let mut now = Instant::now();
    let mut pending = Vec::new();
    let mut to_server: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut to_client: Vec<(u8, Vec<u8>)> = Vec::new();

    while let Some(op) = input.byte() {
        match op % 8 {
            0 => {
                now += Duration::from_millis(u64::from(input.byte().unwrap_or(0)) * 100);
                client.handle_timeout(now);
                server.handle_timeout(now);
            }
            1 => {
                let peer = input.byte().unwrap_or(0) % 4;
                let len = usize::from(input.byte().unwrap_or(0));
                client.handle_datagram(now, peer, input.bytes(len));
            }
            2 => {
                let peer = input.byte().unwrap_or(0) % 4;
                let len = usize::from(input.byte().unwrap_or(0));
                server.handle_datagram(now, peer, input.bytes(len));
            }
            3 => {
                let peer = input.byte().unwrap_or(0) % 4;
                let service =
                    ConfirmedServiceChoice::from_u32(u32::from(input.byte().unwrap_or(0)));
                let len = usize::from(input.byte().unwrap_or(0)) * 8;
                let _ = client.send_request(now, peer, service, vec![0xA5; len]);
            }
            4 => {
                let choice = input.byte().unwrap_or(0);
                if let Some((peer, invoke_id)) = pending.pop() {
                    let response = match choice % 5 {
                        0 => Response::SimpleAck,
                        1 => Response::ComplexAck(vec![0x5A; usize::from(choice) * 16]),
                        2 => Response::Error(vec![0x91, 0x01, 0x91, 0x1F]),
                        3 => Response::Reject(RejectReason::from_u32(u32::from(choice))),
                        _ => Response::Abort(AbortReason::from_u32(u32::from(choice))),
                    };
                    let _ = server.respond(now, peer, invoke_id, response);
                }
            }
            5 => {
                let peer = input.byte().unwrap_or(0) % 4;
                let invoke_id = input.byte().unwrap_or(0);
                client.cancel(&peer, invoke_id);
            }
            6 => {
                for (peer, bytes) in to_server.drain(..) {
                    server.handle_datagram(now, peer, &bytes);
                }
            }
            _ => {
                for (peer, bytes) in to_client.drain(..) {
                    client.handle_datagram(now, peer, &bytes);
                }
            }
        }
        // Client transmissions go to the server as if from the peer they were sent to.
        while let Some((peer, bytes)) = client.poll_transmit() {
            check_apdu(&bytes);
            to_server.push((peer, bytes));
        }
        while let Some((peer, bytes)) = server.poll_transmit() {
            check_apdu(&bytes);
            to_client.push((peer, bytes));
        }
        to_server.truncate(256);
        to_client.truncate(256);
        while client.poll_event().is_some() {}
        while let Some(event) = server.poll_event() {
            if let ServerEvent::Request {
                peer, invoke_id, ..
            } = event
            {
                pending.push((peer, invoke_id));
            }
        }
        pending.truncate(64);

        assert!(client.outstanding() <= client_config.max_transactions);
        assert!(server.in_progress() <= server_config.max_transactions);
        assert!(server.cached_responses() <= server_config.max_cached_responses);
        assert!(server.held_request_bytes() <= server_config.max_total_reassembly_bytes);
    }
}
