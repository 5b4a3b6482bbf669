//! Fuzzes the sans-IO `ClientConnection` with arbitrary server bytes, split into arbitrary
//! pieces, optionally after a valid Acknowledge so the fuzzer reaches the secure channel
//! layer quickly. The client must never panic; every response it hands out must re-encode
//! and decode to the same value; once closed it sends nothing more but a CloseSecureChannel.

#![no_main]

use std::time::{Duration, Instant};

use buildwire_opcua::DateTime;
use buildwire_opcua::client::{ClientConfig, ClientConnection, ClientEvent};
use buildwire_opcua::services::ServiceResponse;
use buildwire_opcua::transport::{Acknowledge, ConnectionMessage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let now = Instant::now();
    let config = ClientConfig::new("opc.tcp://localhost:4840/");
    let limits = config.decoding_limits;
    let mut client = ClientConnection::new(config, now, DateTime(0));
    while client.poll_transmit().is_some() {}
    if control & 1 == 1 {
        let ack = Acknowledge {
            protocol_version: 0,
            receive_buffer_size: 65_535,
            send_buffer_size: 65_535,
            max_message_size: 0,
            max_chunk_count: 0,
        };
        client.handle_bytes(now, &ack.to_message_bytes());
    }
    let piece = usize::from(control >> 1).max(1);
    for bytes in rest.chunks(piece) {
        client.handle_bytes(now, bytes);
        while client.poll_transmit().is_some() {}
    }
    client.handle_timeout(now + Duration::from_secs(3600));
    while let Some(event) = client.poll_event() {
        if let ClientEvent::Response { response, .. } = event {
            let bytes = response.encode_message();
            let again = ServiceResponse::decode_message_with_limits(&bytes, limits)
                .expect("a decoded response re-encodes to a decodable message");
            assert_eq!(again, *response);
        }
    }
    assert!(client.is_closed() || client.poll_timeout().is_some());
});
