//! The server's request path without sockets: op, method, content type, Accept, role and
//! body from the input, answered by a fresh engine over a small database. The driver
//! (`ops::fuzz::http_request_case`) panics when the answer breaks the HTTP API's promises
//! (an unexpected status, or a 200 Zinc/JSON body that does not decode). The same bytes
//! then go through the WebSocket envelope decoder (`ops::fuzz::ws_message_case`), whose
//! answers and rebuilt requests must read back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = buildwire_haystack::ops::fuzz::http_request_case(data);
    let _ = buildwire_haystack::ops::fuzz::ws_message_case(data);
});
