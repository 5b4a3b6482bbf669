//! Dissection of a captured UA TCP byte stream for people and tools (`buildwire opcua
//! decode`): each message chunk with its header and, by type, the Hello / Acknowledge / Error
//! fields or the secure channel headers and the type id of the service message it starts.
//!
//! This is the topmost layer of the crate: it only reads the layers below.

use serde_json::{Value, json};

use crate::encoding::{BinaryEncodable, ByteString, NodeId, Reader};
use crate::secure_channel::{SecureChannelChunk, SecureChannelError, SecurityHeader};
use crate::transport::ConnectionMessage;
use crate::transport::{
    Acknowledge, ErrorMessage, Frame, FrameDecoder, Hello, MessageType, ReverseHello,
    TransportError,
};
use crate::types::StatusCode;

/// Largest chunk the dissector accepts (the biggest the protocol can describe).
const MAX_CHUNK: u32 = u32::MAX;

/// Why a chunk could not be described: its connection message or its secure channel
/// headers do not decode.
#[derive(Debug, thiserror::Error)]
enum ChunkError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    SecureChannel(#[from] SecureChannelError),
}

impl ChunkError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Transport(error) => error.status_code(),
            Self::SecureChannel(error) => error.status_code(),
        }
    }
}

/// The chunks of a stream as far as they decode, and the first failure.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamDissection {
    /// One JSON object per chunk, in stream order.
    pub chunks: Vec<Value>,
    /// The first failure: stream offset, StatusCode name and message.
    pub error: Option<Value>,
}

/// Splits `stream` into UA TCP chunks and describes each.
///
/// ```
/// use buildwire_opcua::inspect::dissect_stream;
/// use buildwire_opcua::transport::{ConnectionMessage, Hello};
/// let hello = Hello { receive_buffer_size: 65536, send_buffer_size: 65536,
///                     endpoint_url: "opc.tcp://localhost:4840".into(), ..Hello::default() };
/// let d = dissect_stream(&hello.to_message_bytes());
/// assert_eq!(d.chunks[0]["type"], "HEL");
/// assert_eq!(d.chunks[0]["endpoint_url"], "opc.tcp://localhost:4840");
/// ```
pub fn dissect_stream(stream: &[u8]) -> StreamDissection {
    let mut decoder = FrameDecoder::new(MAX_CHUNK);
    decoder.push(stream);
    let mut out = StreamDissection {
        chunks: Vec::new(),
        error: None,
    };
    loop {
        let offset = decoder.stream_offset();
        match decoder.next_frame() {
            Ok(Some(frame)) => match describe(&frame) {
                Ok(chunk) => out.chunks.push(chunk),
                Err(error) => {
                    out.error = Some(json!({"offset": offset,
                        "status": error.status_code().to_string(), "message": error.to_string()}));
                    return out;
                }
            },
            Ok(None) => break,
            Err(e) => {
                out.error = Some(json!({"offset": decoder.stream_offset(),
                    "status": e.status_code().to_string(), "message": e.to_string()}));
                return out;
            }
        }
    }
    if decoder.buffered() > 0 {
        out.error = Some(
            json!({"offset": decoder.stream_offset(), "status": "incomplete",
            "message": format!("{} bytes of an incomplete chunk at the end", decoder.buffered())}),
        );
    }
    out
}

fn describe(frame: &Frame) -> Result<Value, ChunkError> {
    let header = &frame.header;
    let code = header.message_type.code();
    let mut chunk = json!({
        "type": String::from_utf8_lossy(&code),
        "chunk": format!("{:?}", header.chunk_type),
        "size": header.message_size,
    });
    let fields = match header.message_type {
        MessageType::Hello => {
            let m = Hello::from_frame(frame)?;
            json!({"protocol_version": m.protocol_version,
                   "receive_buffer_size": m.receive_buffer_size,
                   "send_buffer_size": m.send_buffer_size,
                   "max_message_size": m.max_message_size,
                   "max_chunk_count": m.max_chunk_count,
                   "endpoint_url": m.endpoint_url.to_string()})
        }
        MessageType::Acknowledge => {
            let m = Acknowledge::from_frame(frame)?;
            json!({"protocol_version": m.protocol_version,
                   "receive_buffer_size": m.receive_buffer_size,
                   "send_buffer_size": m.send_buffer_size,
                   "max_message_size": m.max_message_size,
                   "max_chunk_count": m.max_chunk_count})
        }
        MessageType::Error => {
            let m = ErrorMessage::from_frame(frame)?;
            json!({"error": m.error.to_string(), "reason": m.reason.to_string()})
        }
        MessageType::ReverseHello => {
            let m = ReverseHello::from_frame(frame)?;
            json!({"server_uri": m.server_uri.to_string(), "endpoint_url": m.endpoint_url.to_string()})
        }
        _ => {
            let c = SecureChannelChunk::from_frame(frame)?;
            secure_chunk(&c)
        }
    };
    if let (Some(target), Value::Object(extra)) = (chunk.as_object_mut(), fields) {
        target.extend(extra);
    }
    Ok(chunk)
}

fn secure_chunk(c: &SecureChannelChunk) -> Value {
    let security = match &c.security_header {
        SecurityHeader::Asymmetric(h) => json!({
            "security_policy_uri": h.security_policy_uri.to_string(),
            "sender_certificate_bytes": byte_len(&h.sender_certificate),
            "receiver_thumbprint_bytes": byte_len(&h.receiver_certificate_thumbprint),
        }),
        SecurityHeader::Symmetric(h) => json!({"token_id": h.token_id}),
    };
    // A first (or only) chunk starts with the NodeId of the service message's encoding.
    let type_id = NodeId::decode(&mut Reader::new(&c.body))
        .map(|id| json!(id.to_string()))
        .unwrap_or(Value::Null);
    json!({
        "secure_channel_id": c.secure_channel_id,
        "security": security,
        "sequence_number": c.sequence_header.sequence_number,
        "request_id": c.sequence_header.request_id,
        "body_bytes": c.body.len(),
        "body_type_id": type_id,
    })
}

fn byte_len(bytes: &ByteString) -> Value {
    bytes.as_bytes().map_or(Value::Null, |b| json!(b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ChunkType;
    use crate::transport::ConnectionLimits;

    #[test]
    fn hello_and_acknowledge_in_one_stream() {
        let limits = ConnectionLimits::default();
        let mut stream = limits.hello("opc.tcp://127.0.0.1:4840").to_message_bytes();
        let ack = Acknowledge {
            protocol_version: 0,
            receive_buffer_size: 65_536,
            send_buffer_size: 65_536,
            max_message_size: 0,
            max_chunk_count: 0,
        };
        stream.extend(ack.to_message_bytes());
        let d = dissect_stream(&stream);
        assert_eq!(d.error, None);
        assert_eq!(d.chunks.len(), 2);
        assert_eq!(d.chunks[0]["endpoint_url"], "opc.tcp://127.0.0.1:4840");
        assert_eq!(d.chunks[1]["type"], "ACK");
        assert_eq!(d.chunks[1]["receive_buffer_size"], 65_536);
        assert_eq!(d.chunks[1]["chunk"], format!("{:?}", ChunkType::Final));
    }

    #[test]
    fn garbage_names_the_status_code_and_offset() {
        let limits = ConnectionLimits::default();
        let mut stream = limits.hello("opc.tcp://x").to_message_bytes();
        let first_len = stream.len() as u64;
        stream.extend_from_slice(b"XYZF\x10\x00\x00\x00");
        let d = dissect_stream(&stream);
        assert_eq!(d.chunks.len(), 1);
        let error = d.error.unwrap();
        assert_eq!(error["offset"], first_len);
        assert_eq!(error["status"], "BadTcpMessageTypeInvalid (0x807E0000)");
    }

    #[test]
    fn truncated_stream_is_reported() {
        let limits = ConnectionLimits::default();
        let stream = limits.hello("opc.tcp://x").to_message_bytes();
        let d = dissect_stream(&stream[..stream.len() - 3]);
        assert!(d.chunks.is_empty());
        assert_eq!(d.error.unwrap()["status"], "incomplete");
    }
}
