//! The drivers of the `server_request` fuzz target (and of their stable proptests):
//! arbitrary bytes become an HTTP request (method, op, content type, Accept, body or query,
//! role) that a fresh engine answers, and the answer must keep the HTTP API's promises
//! ([`http_request_case`]); the same bytes as a WebSocket message go through the envelope
//! decoder, whose answers must read back ([`ws_message_case`]).

use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::auth::Role;
use crate::codec::zinc;

use super::Op;
use super::engine::{CallContext, Engine, Limits, ServerInfo};
use super::format::WireFormat;
use super::request::{HttpRequest, HttpResponse};
use crate::backends::MemoryBackend;
use crate::backends::WatchLimits;

/// The small database every case starts from.
const DATA: &str = "ver:\"3.0\"\n\
id,dis,site,equip,point,his,writable,kind,unit,tz,siteRef,equipRef,curVal\n\
@s,\"Site\",M,,,,,,,\"New_York\",,,\n\
@e,\"AHU\",,M,,,,,,,@s,,\n\
@t,\"Temp\",,,M,M,M,\"Number\",\"°F\",\"New_York\",@s,@e,72°F\n\
@b,\"Fan\",,,M,M,M,\"Bool\",,\"New_York\",@s,@e,T\n";

const CONTENT_TYPES: [Option<&str>; 7] = [
    None,
    Some("text/zinc"),
    Some("application/json"),
    Some("application/vnd.haystack+json;version=3"),
    Some("text/trio"),
    Some("text/csv"),
    Some("application/x-unknown"),
];

const ACCEPTS: [Option<&str>; 7] = [
    None,
    Some("*/*"),
    Some("application/json"),
    Some("application/vnd.haystack+json;version=3"),
    Some("text/trio"),
    Some("text/csv"),
    Some("image/png"),
];

/// Polls a future that never waits (the in-memory backend's are ready at once).
fn ready_now<F: std::future::Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    }
}

/// Answers the request encoded in `data` and checks the answer: a known status; a 200 body
/// in Zinc or JSON decodes back to a grid; an unreadable request never reaches an op.
/// Panics when a promise is broken (that is the finding).
pub fn http_request_case(data: &[u8]) -> Option<HttpResponse> {
    let (&[selector, formats, role], rest) = data.split_first_chunk::<3>()?;
    let ops = Op::ALL;
    let op = ops.get(usize::from(selector) % (ops.len() + 1)).copied();
    let path = match op {
        Some(op) => format!("/api/{}", op.name()),
        None => "/api/unknownOp".to_owned(),
    };
    let content_type = CONTENT_TYPES[usize::from(formats & 0x0f) % CONTENT_TYPES.len()];
    let accept = ACCEPTS[usize::from(formats >> 4) % ACCEPTS.len()];
    let role = match role % 3 {
        0 => Role::Viewer,
        1 => Role::Operator,
        _ => Role::Admin,
    };
    let get = selector & 0x80 != 0;
    let query = if get {
        std::str::from_utf8(rest).ok()
    } else {
        None
    };
    let request = HttpRequest {
        method: if get { "GET" } else { "POST" },
        path: &path,
        query,
        content_type,
        accept,
        body: if get { b"" } else { rest },
    };
    let backend = Arc::new(MemoryBackend::new());
    let grid = zinc::decode_grid(DATA).ok()?;
    backend.load_grid(&grid).ok()?;
    let limits = Limits {
        max_body_bytes: 64 * 1024,
        max_read_rows: 100,
        max_ids_per_request: 100,
        max_his_rows: 1000,
        max_his_points: 8,
        watches: WatchLimits {
            max_watches: 4,
            max_ids_per_watch: 16,
            ..WatchLimits::default()
        },
    };
    let engine = Engine::new(backend, ServerInfo::default(), limits);
    let ctx = CallContext::user("fuzz", role, 1_719_835_200_000);
    let answer = ready_now(engine.handle_http("/api", &request, &ctx))?;
    assert!(
        matches!(answer.status, 200 | 400 | 403 | 404 | 405 | 406 | 413 | 415),
        "status {}",
        answer.status
    );
    if answer.status == 200 {
        let format = WireFormat::from_mime(answer.content_type);
        if let Some(format @ (WireFormat::Zinc | WireFormat::Json | WireFormat::JsonV3)) = format
            && let Err(e) = format.decode(&answer.body)
        {
            panic!(
                "the server's own {format:?} answer does not decode: {e}\n{}",
                answer.body
            );
        }
    }
    Some(answer)
}

/// Reads `data` as a WebSocket message (one envelope or a batch) with the server's decoder
/// and checks its promises: an answer echoing an envelope's `id` and `ch` reads back with
/// the same `id` and `ch`, and a request rebuilt from a decoded grid reads back with a
/// grid. Returns how many envelopes were read. Panics when a promise is broken.
pub fn ws_message_case(data: &[u8]) -> usize {
    let Ok(text) = std::str::from_utf8(data) else {
        return 0;
    };
    let limit = Limits::default().max_body_bytes;
    if !super::ws::is_batch(text) {
        return usize::from(ws_envelope_case(text, limit));
    }
    let Ok(items) = super::ws::decode_batch(text, limit) else {
        return 0;
    };
    assert!(items.len() <= super::ws::MAX_BATCH, "batch not bounded");
    items
        .iter()
        .filter(|item| ws_envelope_case(item.get(), limit))
        .count()
}

fn ws_envelope_case(text: &str, limit: usize) -> bool {
    use super::ws::{Envelope, encode_answer, encode_request};
    let Ok(envelope) = Envelope::decode(text, limit) else {
        return false;
    };
    let raw = |v: Option<&serde_json::value::RawValue>| v.map(|v| v.get().to_owned());
    let answer = encode_answer(envelope.id, envelope.ch, "{}");
    let back = Envelope::decode(&answer, usize::MAX)
        .unwrap_or_else(|e| panic!("an answer does not read back: {e}\n{answer}"));
    assert_eq!(raw(back.id), raw(envelope.id), "id not echoed: {answer}");
    assert_eq!(raw(back.ch), raw(envelope.ch), "ch not echoed: {answer}");
    if let Ok(grid) = envelope.request_grid() {
        let op = envelope.op.as_deref().unwrap_or("read");
        let id = envelope.id_text().unwrap_or_default();
        let request = encode_request(&id, op, &grid);
        let back = Envelope::decode(&request, usize::MAX)
            .unwrap_or_else(|e| panic!("a request does not read back: {e}\n{request}"));
        assert_eq!(back.op.as_deref(), Some(op));
        assert_eq!(back.id_text().as_deref(), Some(id.as_str()));
        if let Err(e) = back.grid() {
            panic!("a request's grid does not read back: {e}\n{request}");
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_cases() {
        // POST read (op index 7) by filter, Zinc in, Zinc out, viewer.
        let mut data = vec![7, 0x01, 0];
        data.extend_from_slice(b"ver:\"3.0\"\nfilter\n\"point\"\n");
        let answer = http_request_case(&data).unwrap();
        assert_eq!(answer.status, 200);
        assert!(answer.body.contains("@t"), "{}", answer.body);
        // GET hisWrite: 405.
        let answer = http_request_case(&[0x80 | 14, 0, 2]).unwrap();
        assert_eq!(answer.status, 405);
        // An unknown op: 404.
        assert_eq!(http_request_case(&[17, 0, 0]).unwrap().status, 404);
        assert!(http_request_case(&[1, 2]).is_none());
    }

    #[test]
    fn known_ws_messages() {
        let request = br#"{"id":"7","ch":3,"op":"read","grid":{"_kind":"grid","meta":{"ver":"3.0"},"cols":[{"name":"filter"}],"rows":[{"filter":"point"}]}}"#;
        assert_eq!(ws_message_case(request), 1);
        assert_eq!(ws_message_case(br#"[{"id":1},{"authToken":"t"},7]"#), 2);
        assert_eq!(ws_message_case(b"not json"), 0);
        assert_eq!(ws_message_case(&[0xff, 0xfe]), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_requests_keep_the_promises(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = http_request_case(&data);
            let _ = ws_message_case(&data);
        }

        #[test]
        fn envelope_shaped_messages_keep_the_promises(
            id in "[ -~]{0,8}",
            op in "[a-zA-Z]{0,10}",
            filter in "[ -~]{0,16}",
        ) {
            let message = format!(
                r#"{{"id":{},"op":{},"grid":{{"_kind":"grid","meta":{{"ver":"3.0"}},"cols":[{{"name":"filter"}}],"rows":[{{"filter":{}}}]}}}}"#,
                super::super::ws::json_string(&id),
                super::super::ws::json_string(&op),
                super::super::ws::json_string(&filter),
            );
            prop_assert_eq!(ws_message_case(message.as_bytes()), 1);
        }

        #[test]
        fn zinc_shaped_requests_keep_the_promises(
            selector in any::<u8>(),
            role in any::<u8>(),
            cells in proptest::collection::vec("[ -~]{0,12}", 0..6),
        ) {
            let mut data = vec![selector & 0x7f, 0x01, role];
            data.extend_from_slice(b"ver:\"3.0\" id:@t\nid,filter,ts,val,level,range\n");
            data.extend_from_slice(cells.join(",").as_bytes());
            data.push(b'\n');
            let _ = http_request_case(&data);
        }
    }
}
