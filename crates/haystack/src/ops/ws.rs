//! The WebSocket envelope: the one wire type of the WebSocket API, used by the server
//! (`server/ws.rs`), the client (`client/ws.rs`) and the load benchmark.
//!
//! There is no WebSocket chapter in the Haystack spec; the format is the one of
//! haystack-py's WebSocket API (JSON text messages, subprotocol `haystack`):
//!
//! - request `{"id": "7", "op": "read", "grid": <Hayson grid>}` → answer
//!   `{"grid": <Hayson grid>, "id": "7"}` (an error grid when the op fails); a JSON array
//!   of requests is a batch, answered by an array in the same order; `ch` is echoed;
//! - push `{"type": "watch", "watchId": "w-1", "grid": <changed entities>}`;
//! - login messages: `{"authToken": ...}`, `{"type": "hello", "username": ...}`,
//!   `{"type": "scram", "handshakeToken": ..., "data": ...}`, answered by `hello`, `scram`,
//!   `authOk` or `authErr`; `{"type": "capabilities"}` negotiation.
//!
//! Decoding is bounded (a message size limit, at most [`MAX_BATCH`] envelopes in a batch)
//! and borrows from the message: `id`, `ch` and `grid` stay raw JSON until asked for, so an
//! answer echoes the request's `id` byte for byte. Errors are [`WsError`]s.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::codec::DecodeError;
use crate::codec::json::{hayson, write_json_string};
use crate::value::Grid;

use super::error_grid;

/// The WebSocket subprotocol.
pub const SUBPROTOCOL: &str = "haystack";
/// Most envelopes of a batch that are answered; the rest are ignored.
pub const MAX_BATCH: usize = 1000;
/// The default message size limit (the server uses its body limit instead).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Why a WebSocket message could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WsError {
    /// The message is larger than the limit.
    #[error("message of {size} bytes exceeds {limit} bytes")]
    TooLarge {
        /// The message's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The message is not a JSON envelope (or a JSON array, for a batch).
    #[error("not a WebSocket envelope: {0}")]
    NotEnvelope(String),
    /// The envelope has no `grid`.
    #[error("the envelope has no grid")]
    NoGrid,
    /// The envelope's grid is not a Hayson grid.
    #[error("cannot read the grid: {0}")]
    Grid(#[from] DecodeError),
}

/// One envelope, borrowed from its message. Every field is optional: which ones are
/// present says what the message is (a request has `op`, an answer `grid` and `id`, a push
/// `type` and `watchId`, a login message `type` or `authToken`).
#[derive(Debug, Default, Deserialize)]
pub struct Envelope<'a> {
    /// The request id (raw JSON, echoed in the answer).
    #[serde(default, borrow)]
    pub id: Option<&'a RawValue>,
    /// The channel (raw JSON, echoed in the answer).
    #[serde(default, borrow)]
    pub ch: Option<&'a RawValue>,
    /// The op of a request.
    #[serde(default)]
    pub op: Option<String>,
    /// The grid (raw Hayson; see [`Envelope::grid`]).
    #[serde(default, borrow)]
    pub grid: Option<&'a RawValue>,
    /// The message type (`watch`, `hello`, `scram`, `capabilities`, ...).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// A bearer token sent as a message.
    #[serde(default, rename = "authToken")]
    pub auth_token: Option<String>,
    /// The user of a `hello` message (base64url).
    #[serde(default)]
    pub username: Option<String>,
    /// The SCRAM handshake token.
    #[serde(default, rename = "handshakeToken")]
    pub handshake_token: Option<String>,
    /// The SCRAM data.
    #[serde(default)]
    pub data: Option<String>,
    /// The watch of a push.
    #[serde(default, rename = "watchId")]
    pub watch_id: Option<String>,
}

fn check_size(text: &str, limit: usize) -> Result<(), WsError> {
    if text.len() > limit {
        return Err(WsError::TooLarge {
            size: text.len(),
            limit,
        });
    }
    Ok(())
}

impl<'a> Envelope<'a> {
    /// Reads one envelope of at most `limit` bytes.
    pub fn decode(text: &'a str, limit: usize) -> Result<Self, WsError> {
        check_size(text, limit)?;
        serde_json::from_str(text).map_err(|e| WsError::NotEnvelope(e.to_string()))
    }

    /// The grid, decoded (`None` when the envelope has none).
    pub fn grid(&self) -> Result<Option<Grid>, WsError> {
        match self.grid {
            None => Ok(None),
            Some(raw) => Ok(Some(hayson::decode_grid(raw.get())?)),
        }
    }

    /// The grid of a request: an empty grid when it has none.
    pub fn request_grid(&self) -> Result<Grid, WsError> {
        Ok(self.grid()?.unwrap_or_default())
    }

    /// The id as text: a JSON string's content, any other JSON value's text (a server may
    /// echo ids as numbers).
    pub fn id_text(&self) -> Option<String> {
        match serde_json::from_str::<serde_json::Value>(self.id?.get()) {
            Ok(serde_json::Value::String(text)) => Some(text),
            Ok(other) => Some(other.to_string()),
            Err(_) => None,
        }
    }
}

/// Whether a message is a batch (a JSON array of envelopes).
pub fn is_batch(text: &str) -> bool {
    text.trim_start().starts_with('[')
}

/// The envelopes of a batch of at most `limit` bytes, as raw JSON; at most [`MAX_BATCH`]
/// (the rest are dropped).
pub fn decode_batch(text: &str, limit: usize) -> Result<Vec<&RawValue>, WsError> {
    check_size(text, limit)?;
    let mut items: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| WsError::NotEnvelope(e.to_string()))?;
    items.truncate(MAX_BATCH);
    Ok(items)
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_json_string(s, &mut out);
    out
}

/// A request with an already encoded (Hayson) grid.
pub fn encode_request_json(id: &str, op: &str, grid_json: &str) -> String {
    let mut out = String::with_capacity(grid_json.len() + id.len() + op.len() + 24);
    out.push_str("{\"id\":");
    write_json_string(id, &mut out);
    out.push_str(",\"op\":");
    write_json_string(op, &mut out);
    out.push_str(",\"grid\":");
    out.push_str(grid_json);
    out.push('}');
    out
}

/// A request: `{"id": ..., "op": ..., "grid": ...}`.
pub fn encode_request(id: &str, op: &str, grid: &Grid) -> String {
    encode_request_json(id, op, &hayson::encode_grid(grid))
}

/// The answer around an encoded (Hayson) grid, echoing the request's `id` and `ch`.
pub fn encode_answer(id: Option<&RawValue>, ch: Option<&RawValue>, grid_json: &str) -> String {
    let mut out = String::with_capacity(grid_json.len() + 32);
    out.push_str("{\"grid\":");
    out.push_str(grid_json);
    if let Some(id) = id {
        out.push_str(",\"id\":");
        out.push_str(id.get());
    }
    if let Some(ch) = ch {
        out.push_str(",\"ch\":");
        out.push_str(ch.get());
    }
    out.push('}');
    out
}

/// An answer with an error grid.
pub fn encode_error(id: Option<&RawValue>, ch: Option<&RawValue>, dis: &str) -> String {
    encode_answer(id, ch, &hayson::encode_grid(&error_grid(dis, None)))
}

/// A push of a watch's changes.
pub fn encode_push(watch_id: &str, grid: &Grid) -> String {
    format!(
        "{{\"type\":\"watch\",\"watchId\":{},\"grid\":{}}}",
        json_string(watch_id),
        hayson::encode_grid(grid)
    )
}

/// A failed login.
pub fn encode_auth_err(message: &str) -> String {
    format!("{{\"type\":\"authErr\",\"dis\":{}}}", json_string(message))
}

/// The answer to `{"type": "capabilities"}`: version 1, no compression, no chunking.
pub const CAPABILITIES: &str =
    "{\"type\":\"capabilities\",\"compression\":null,\"chunked\":false,\"version\":1}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn requests_round_trip_and_answers_echo_the_id() {
        let mut grid = Grid::default();
        let _ = grid.meta.insert("dis", Value::Str("x".into()));
        let text = encode_request("7", "read", &grid);
        let envelope = Envelope::decode(&text, MAX_MESSAGE_BYTES).unwrap();
        assert_eq!(envelope.op.as_deref(), Some("read"));
        assert_eq!(envelope.id_text().as_deref(), Some("7"));
        assert_eq!(envelope.request_grid().unwrap(), grid);
        let answer = encode_answer(envelope.id, None, "{}");
        assert_eq!(answer, "{\"grid\":{},\"id\":\"7\"}");
        let numeric = Envelope::decode("{\"id\":7}", 100).unwrap();
        assert_eq!(numeric.id_text().as_deref(), Some("7"));
    }

    #[test]
    fn decoding_is_bounded_and_typed() {
        assert!(matches!(
            Envelope::decode("{}", 1),
            Err(WsError::TooLarge { size: 2, limit: 1 })
        ));
        assert!(matches!(
            Envelope::decode("nope", 100),
            Err(WsError::NotEnvelope(_))
        ));
        let bad = Envelope::decode("{\"grid\":{\"_kind\":\"grid\",\"rows\":7}}", 100).unwrap();
        assert!(matches!(bad.grid(), Err(WsError::Grid(_))));
        let many = format!("[{}{{}}]", "{},".repeat(MAX_BATCH + 5));
        assert_eq!(
            decode_batch(&many, MAX_MESSAGE_BYTES).unwrap().len(),
            MAX_BATCH
        );
        assert!(is_batch(" [") && !is_batch("{"));
    }

    #[test]
    fn pushes_and_login_answers() {
        let push = encode_push("w-1", &Grid::default());
        let envelope = Envelope::decode(&push, 1000).unwrap();
        assert_eq!(envelope.kind.as_deref(), Some("watch"));
        assert_eq!(envelope.watch_id.as_deref(), Some("w-1"));
        assert!(envelope.grid().unwrap().is_some());
        assert_eq!(
            encode_auth_err("no \"way\""),
            "{\"type\":\"authErr\",\"dis\":\"no \\\"way\\\"\"}"
        );
    }
}
