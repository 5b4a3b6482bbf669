//! Fuzzes the Hello decoder and the server-side negotiation: a decoded Hello must round-trip,
//! and any Acknowledge computed for it must respect both sides' limits and be accepted by the
//! client-side check.

#![no_main]

use buildwire_opcua::encoding::BinaryEncodable;
use buildwire_opcua::transport::{
    ConnectionLimits, Hello, MAX_URL_LENGTH, MIN_BUFFER_SIZE, accept_acknowledge, acknowledge_hello,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(hello) = Hello::from_bytes(data) else {
        return;
    };
    let encoded = hello.to_bytes();
    assert_eq!(encoded.len(), hello.encoded_len());
    assert_eq!(
        Hello::from_bytes(&encoded).expect("re-encoded Hello decodes"),
        hello
    );

    let ours = ConnectionLimits::default();
    match acknowledge_hello(&ours, &hello) {
        Ok((ack, limits)) => {
            assert!(
                hello
                    .endpoint_url
                    .as_str()
                    .is_some_and(|url| url.len() <= MAX_URL_LENGTH)
            );
            assert!(ack.receive_buffer_size >= MIN_BUFFER_SIZE);
            assert!(ack.receive_buffer_size <= hello.send_buffer_size);
            assert!(ack.send_buffer_size <= hello.receive_buffer_size);
            assert!(ack.protocol_version <= hello.protocol_version);
            assert_eq!(limits.receive_buffer_size, ack.receive_buffer_size);
            let client = accept_acknowledge(&hello, &ack).expect("our own ACK is acceptable");
            assert_eq!(client.send_buffer_size, ack.receive_buffer_size);
        }
        Err(error) => assert!(error.status.is_bad()),
    }
});
