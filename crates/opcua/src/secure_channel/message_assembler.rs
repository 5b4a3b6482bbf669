//! `MessageAssembler`: joins the chunks of a secure channel message (OPC 10000-6 §6.7.2,
//! §6.7.3) into one body, enforcing the negotiated MaxMessageSize and MaxChunkCount, and
//! turns an abort chunk (`A`) into an event that drops the partial message.

use std::collections::HashMap;

use super::chunk::SecureChannelChunk;
use crate::encoding::{BinaryEncodable, DecodeError, Reader, UaString};
use crate::transport::{ChunkType, MessageType};
use crate::types::StatusCode;

/// Most messages that may be partially received at the same time (distinct request ids).
pub const MAX_MESSAGES_IN_PROGRESS: usize = 16;

/// Which side of the connection assembles; it decides which "too large" code is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssemblerRole {
    /// A client receives responses: oversize is Bad_ResponseTooLarge.
    Client,
    /// A server receives requests: oversize is Bad_RequestTooLarge.
    Server,
}

/// A complete message body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledMessage {
    /// OPN, MSG or CLO.
    pub message_type: MessageType,
    /// Channel the chunks arrived on.
    pub secure_channel_id: u32,
    /// Request id shared by the chunks.
    pub request_id: u32,
    /// Number of chunks joined.
    pub chunk_count: u32,
    /// The concatenated chunk bodies: the encoded service message.
    pub body: Vec<u8>,
}

/// What a chunk completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssemblyEvent {
    /// A whole message.
    Message(AssembledMessage),
    /// The sender aborted the message with `request_id`; its chunks were discarded.
    Aborted {
        /// Request id of the abandoned message.
        request_id: u32,
        /// Error code from the abort chunk.
        error: StatusCode,
        /// Reason from the abort chunk.
        reason: UaString,
    },
}

/// Why a chunk could not be accepted. All are fatal for the secure channel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssemblyError {
    /// The joined body would exceed the MaxMessageSize.
    #[error("message of at least {size} bytes exceeds the limit of {limit}")]
    MessageTooLarge {
        /// Size reached.
        size: usize,
        /// Negotiated limit.
        limit: u32,
        /// Code to report.
        status: StatusCode,
    },
    /// The message has more chunks than MaxChunkCount.
    #[error("message of at least {count} chunks exceeds the limit of {limit}")]
    TooManyChunks {
        /// Chunks received.
        count: u32,
        /// Negotiated limit.
        limit: u32,
        /// Code to report.
        status: StatusCode,
    },
    /// More than [`MAX_MESSAGES_IN_PROGRESS`] partial messages.
    #[error("more than {0} messages in progress")]
    TooManyMessagesInProgress(usize),
    /// A chunk's message type or channel differs from the earlier chunks of its request.
    #[error("chunk does not match the earlier chunks of request {0}")]
    InconsistentChunk(u32),
    /// An abort chunk's body is not an error code and reason.
    #[error("abort chunk: {0}")]
    MalformedAbort(DecodeError),
}

impl AssemblyError {
    /// The StatusCode to report.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::MessageTooLarge { status, .. } | Self::TooManyChunks { status, .. } => *status,
            Self::TooManyMessagesInProgress(_) => StatusCode::BAD_TCP_NOT_ENOUGH_RESOURCES,
            Self::InconsistentChunk(_) | Self::MalformedAbort(_) => StatusCode::BAD_DECODING_ERROR,
        }
    }
}

#[derive(Debug)]
struct Partial {
    message_type: MessageType,
    secure_channel_id: u32,
    chunk_count: u32,
    body: Vec<u8>,
}

/// Reassembles chunked messages, keyed by request id.
#[derive(Debug)]
pub struct MessageAssembler {
    role: AssemblerRole,
    max_message_size: u32,
    max_chunk_count: u32,
    partial: HashMap<u32, Partial>,
}

impl MessageAssembler {
    /// An assembler for the messages we receive; 0 means no limit for either value (use the
    /// `max_receive_*` values of the negotiated limits).
    pub fn new(role: AssemblerRole, max_message_size: u32, max_chunk_count: u32) -> Self {
        Self {
            role,
            max_message_size,
            max_chunk_count,
            partial: HashMap::new(),
        }
    }

    /// Number of messages partially received.
    pub fn in_progress(&self) -> usize {
        self.partial.len()
    }

    fn too_large_status(&self) -> StatusCode {
        match self.role {
            AssemblerRole::Client => StatusCode::BAD_RESPONSE_TOO_LARGE,
            AssemblerRole::Server => StatusCode::BAD_REQUEST_TOO_LARGE,
        }
    }

    /// Adds a chunk; returns an event when it completes or aborts a message.
    pub fn push(
        &mut self,
        chunk: SecureChannelChunk,
    ) -> Result<Option<AssemblyEvent>, AssemblyError> {
        let request_id = chunk.sequence_header.request_id;
        if chunk.chunk_type == ChunkType::Abort {
            self.partial.remove(&request_id);
            let mut reader = Reader::new(&chunk.body);
            let error = StatusCode::decode(&mut reader).map_err(AssemblyError::MalformedAbort)?;
            let reason = UaString::decode(&mut reader).map_err(AssemblyError::MalformedAbort)?;
            return Ok(Some(AssemblyEvent::Aborted {
                request_id,
                error,
                reason,
            }));
        }
        if !self.partial.contains_key(&request_id) && self.partial.len() >= MAX_MESSAGES_IN_PROGRESS
        {
            return Err(AssemblyError::TooManyMessagesInProgress(
                MAX_MESSAGES_IN_PROGRESS,
            ));
        }
        let status = self.too_large_status();
        let (max_size, max_chunks) = (self.max_message_size, self.max_chunk_count);
        let partial = self.partial.entry(request_id).or_insert_with(|| Partial {
            message_type: chunk.message_type,
            secure_channel_id: chunk.secure_channel_id,
            chunk_count: 0,
            body: Vec::new(),
        });
        let result = Self::append(partial, &chunk, request_id, status, max_size, max_chunks);
        if result.is_err() {
            self.partial.remove(&request_id);
        }
        result?;
        if chunk.chunk_type != ChunkType::Final {
            return Ok(None);
        }
        let Some(done) = self.partial.remove(&request_id) else {
            return Ok(None);
        };
        Ok(Some(AssemblyEvent::Message(AssembledMessage {
            message_type: done.message_type,
            secure_channel_id: done.secure_channel_id,
            request_id,
            chunk_count: done.chunk_count,
            body: done.body,
        })))
    }

    fn append(
        partial: &mut Partial,
        chunk: &SecureChannelChunk,
        request_id: u32,
        status: StatusCode,
        max_size: u32,
        max_chunks: u32,
    ) -> Result<(), AssemblyError> {
        if partial.message_type != chunk.message_type
            || partial.secure_channel_id != chunk.secure_channel_id
        {
            return Err(AssemblyError::InconsistentChunk(request_id));
        }
        let count = partial.chunk_count.saturating_add(1);
        if max_chunks != 0 && count > max_chunks {
            return Err(AssemblyError::TooManyChunks {
                count,
                limit: max_chunks,
                status,
            });
        }
        let size = partial.body.len().saturating_add(chunk.body.len());
        if max_size != 0 && size > max_size as usize {
            return Err(AssemblyError::MessageTooLarge {
                size,
                limit: max_size,
                status,
            });
        }
        partial.chunk_count = count;
        partial.body.extend_from_slice(&chunk.body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secure_channel::{SecurityHeader, SequenceHeader, SymmetricSecurityHeader};

    fn chunk(chunk_type: ChunkType, request_id: u32, body: &[u8]) -> SecureChannelChunk {
        SecureChannelChunk {
            message_type: MessageType::Message,
            chunk_type,
            secure_channel_id: 1,
            security_header: SecurityHeader::Symmetric(SymmetricSecurityHeader { token_id: 1 }),
            sequence_header: SequenceHeader {
                sequence_number: 0,
                request_id,
            },
            body: body.to_vec(),
        }
    }

    #[test]
    fn joins_chunks_in_order() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Server, 0, 0);
        assert_eq!(
            assembler
                .push(chunk(ChunkType::Intermediate, 5, &[1, 2]))
                .unwrap(),
            None
        );
        assert_eq!(
            assembler
                .push(chunk(ChunkType::Intermediate, 6, &[9]))
                .unwrap(),
            None
        );
        assert_eq!(assembler.in_progress(), 2);
        let Some(AssemblyEvent::Message(message)) =
            assembler.push(chunk(ChunkType::Final, 5, &[3])).unwrap()
        else {
            panic!("expected a message");
        };
        assert_eq!(message.body, [1, 2, 3]);
        assert_eq!(message.chunk_count, 2);
        assert_eq!(message.request_id, 5);
        assert_eq!(assembler.in_progress(), 1);
    }

    #[test]
    fn abort_discards_partial_message() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
        assembler
            .push(chunk(ChunkType::Intermediate, 5, &[1]))
            .unwrap();
        let mut abort_body = Vec::new();
        StatusCode::BAD_RESPONSE_TOO_LARGE.encode(&mut abort_body);
        UaString::from("too big").encode(&mut abort_body);
        let event = assembler
            .push(chunk(ChunkType::Abort, 5, &abort_body))
            .unwrap();
        assert_eq!(
            event,
            Some(AssemblyEvent::Aborted {
                request_id: 5,
                error: StatusCode::BAD_RESPONSE_TOO_LARGE,
                reason: UaString::from("too big"),
            })
        );
        assert_eq!(assembler.in_progress(), 0);
        assert!(matches!(
            assembler
                .push(chunk(ChunkType::Abort, 5, &[1, 2]))
                .unwrap_err(),
            AssemblyError::MalformedAbort(_)
        ));
    }

    #[test]
    fn limits() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Server, 4, 2);
        assembler
            .push(chunk(ChunkType::Intermediate, 1, &[1, 2]))
            .unwrap();
        let error = assembler
            .push(chunk(ChunkType::Final, 1, &[3, 4, 5]))
            .unwrap_err();
        assert_eq!(
            error,
            AssemblyError::MessageTooLarge {
                size: 5,
                limit: 4,
                status: StatusCode::BAD_REQUEST_TOO_LARGE
            }
        );
        assert_eq!(assembler.in_progress(), 0);

        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 2);
        assembler
            .push(chunk(ChunkType::Intermediate, 1, &[]))
            .unwrap();
        assembler
            .push(chunk(ChunkType::Intermediate, 1, &[]))
            .unwrap();
        let error = assembler.push(chunk(ChunkType::Final, 1, &[])).unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_RESPONSE_TOO_LARGE);
        assert!(matches!(
            error,
            AssemblyError::TooManyChunks {
                count: 3,
                limit: 2,
                ..
            }
        ));
    }

    #[test]
    fn bounded_messages_in_progress_and_consistency() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Server, 0, 0);
        for request_id in 0..MAX_MESSAGES_IN_PROGRESS as u32 {
            assembler
                .push(chunk(ChunkType::Intermediate, request_id, &[0]))
                .unwrap();
        }
        assert_eq!(
            assembler
                .push(chunk(ChunkType::Intermediate, 99, &[0]))
                .unwrap_err(),
            AssemblyError::TooManyMessagesInProgress(MAX_MESSAGES_IN_PROGRESS)
        );
        let mut other = chunk(ChunkType::Final, 0, &[0]);
        other.message_type = MessageType::CloseSecureChannel;
        assert_eq!(
            assembler.push(other).unwrap_err(),
            AssemblyError::InconsistentChunk(0)
        );
    }
}
