//! `MessageAssembler`: joins the chunks of a secure channel message (OPC 10000-6 §6.7.2,
//! §6.7.3) into one body, enforcing the negotiated MaxMessageSize and MaxChunkCount, and
//! turns an abort chunk (`A`) into an event that drops the partial message.
//!
//! Copies: a message of one chunk is passed on as it is (its body is a slice of the receive
//! buffer); the chunks of a longer message are copied once, into one buffer. That buffer is
//! reused for the next long message once the previous message has been dropped, so a
//! connection that keeps receiving large responses neither regrows nor faults in fresh memory
//! for each: it keeps its last multi-chunk message, which is within the MaxMessageSize it
//! already accepts.

use std::collections::HashMap;

use bytes::{Bytes, BytesMut};

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
    pub body: Bytes,
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
    body: BytesMut,
}

/// Reassembles chunked messages, keyed by request id.
#[derive(Debug)]
pub struct MessageAssembler {
    role: AssemblerRole,
    max_message_size: u32,
    max_chunk_count: u32,
    partial: HashMap<u32, Partial>,
    /// The last joined message: once every other reference to it is dropped, its memory
    /// holds the next long message.
    last_joined: Option<Bytes>,
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
            last_joined: None,
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
        let result = self.append(chunk, request_id);
        if result.is_err() {
            self.partial.remove(&request_id);
        }
        result
    }

    /// An empty buffer for a long message: the last joined message's memory when nothing else
    /// refers to it any more, else a new buffer sized like that message (a size this
    /// connection really received, within MaxMessageSize), so the copy does not regrow.
    fn join_buffer(&mut self) -> BytesMut {
        let Some(last) = self.last_joined.take() else {
            return BytesMut::new();
        };
        let size = last.len();
        match last.try_into_mut() {
            Ok(mut reused) => {
                reused.clear();
                reused
            }
            Err(_) => BytesMut::with_capacity(size),
        }
    }

    fn append(
        &mut self,
        chunk: SecureChannelChunk,
        request_id: u32,
    ) -> Result<Option<AssemblyEvent>, AssemblyError> {
        let status = self.too_large_status();
        let (count, size) = match self.partial.get(&request_id) {
            Some(partial) => {
                if partial.message_type != chunk.message_type
                    || partial.secure_channel_id != chunk.secure_channel_id
                {
                    return Err(AssemblyError::InconsistentChunk(request_id));
                }
                (partial.chunk_count, partial.body.len())
            }
            None => (0, 0),
        };
        let count = count.saturating_add(1);
        if self.max_chunk_count != 0 && count > self.max_chunk_count {
            return Err(AssemblyError::TooManyChunks {
                count,
                limit: self.max_chunk_count,
                status,
            });
        }
        let size = size.saturating_add(chunk.body.len());
        if self.max_message_size != 0 && size > self.max_message_size as usize {
            return Err(AssemblyError::MessageTooLarge {
                size,
                limit: self.max_message_size,
                status,
            });
        }
        let is_final = chunk.chunk_type == ChunkType::Final;
        let Some(mut partial) = self.partial.remove(&request_id) else {
            if is_final {
                // A whole message in one chunk: no copy.
                return Ok(Some(AssemblyEvent::Message(AssembledMessage {
                    message_type: chunk.message_type,
                    secure_channel_id: chunk.secure_channel_id,
                    request_id,
                    chunk_count: 1,
                    body: chunk.body,
                })));
            }
            let mut body = self.join_buffer();
            body.extend_from_slice(&chunk.body);
            self.partial.insert(
                request_id,
                Partial {
                    message_type: chunk.message_type,
                    secure_channel_id: chunk.secure_channel_id,
                    chunk_count: 1,
                    body,
                },
            );
            return Ok(None);
        };
        partial.chunk_count = count;
        partial.body.extend_from_slice(&chunk.body);
        if !is_final {
            self.partial.insert(request_id, partial);
            return Ok(None);
        }
        let body = partial.body.freeze();
        self.last_joined = Some(body.clone());
        Ok(Some(AssemblyEvent::Message(AssembledMessage {
            message_type: partial.message_type,
            secure_channel_id: partial.secure_channel_id,
            request_id,
            chunk_count: count,
            body,
        })))
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
            body: Bytes::copy_from_slice(body),
        }
    }

    proptest::proptest! {
        #[test]
        fn any_chunking_gives_back_the_body(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(body.len())).collect();
            cuts.push(body.len());
            cuts.sort_unstable();
            let mut assembler = MessageAssembler::new(AssemblerRole::Server, 0, 0);
            let mut start = 0;
            let mut events = Vec::new();
            for (index, end) in cuts.iter().enumerate() {
                let kind = if index + 1 == cuts.len() {
                    ChunkType::Final
                } else {
                    ChunkType::Intermediate
                };
                events.push(assembler.push(chunk(kind, 7, &body[start..*end])).unwrap());
                start = *end;
            }
            let last = events.pop().flatten();
            proptest::prop_assert!(events.iter().all(Option::is_none));
            let Some(AssemblyEvent::Message(message)) = last else {
                panic!("expected a message");
            };
            proptest::prop_assert_eq!(&message.body[..], body.as_slice());
            proptest::prop_assert_eq!(message.chunk_count as usize, cuts.len());
            proptest::prop_assert_eq!(assembler.in_progress(), 0);
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
        assert_eq!(message.body[..], [1, 2, 3]);
        assert_eq!(message.chunk_count, 2);
        assert_eq!(message.request_id, 5);
        assert_eq!(assembler.in_progress(), 1);
    }

    #[test]
    fn one_chunk_message_is_not_copied() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
        let body = Bytes::from(vec![5u8; 1000]);
        let mut single = chunk(ChunkType::Final, 9, &[]);
        single.body = body.clone();
        let Some(AssemblyEvent::Message(message)) = assembler.push(single).unwrap() else {
            panic!("expected a message");
        };
        assert_eq!(message.chunk_count, 1);
        assert_eq!(message.body.as_ptr(), body.as_ptr());
        assert_eq!(message.body.len(), 1000);
    }

    #[test]
    fn joined_buffer_is_reused_once_the_message_is_dropped() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 0, 0);
        let pieces = [vec![1u8; 40_000], vec![2u8; 40_000], vec![3u8; 10]];
        let join = |assembler: &mut MessageAssembler, request_id| {
            let mut result = None;
            for (index, piece) in pieces.iter().enumerate() {
                let kind = if index + 1 == pieces.len() {
                    ChunkType::Final
                } else {
                    ChunkType::Intermediate
                };
                result = assembler.push(chunk(kind, request_id, piece)).unwrap();
            }
            let Some(AssemblyEvent::Message(message)) = result else {
                panic!("expected a message");
            };
            message
        };
        let first = join(&mut assembler, 1);
        assert_eq!(first.body.len(), 80_010);
        assert_eq!(first.chunk_count, 3);
        assert_eq!(first.body[..], pieces.concat()[..]);
        let first_address = first.body.as_ptr();
        // While the first message is alive, the next one gets its own buffer...
        let second = join(&mut assembler, 2);
        assert_ne!(second.body.as_ptr(), first_address);
        assert_eq!(second.body, first.body);
        // ...and once the last one is dropped, its memory is used again.
        let second_address = second.body.as_ptr();
        drop(first);
        drop(second);
        let third = join(&mut assembler, 3);
        assert_eq!(third.body.as_ptr(), second_address);
        assert_eq!(third.body[..], pieces.concat()[..]);
    }

    #[test]
    fn limits_apply_to_one_chunk_messages_too() {
        let mut assembler = MessageAssembler::new(AssemblerRole::Client, 4, 1);
        assert!(matches!(
            assembler.push(chunk(ChunkType::Final, 1, &[1, 2, 3, 4])),
            Ok(Some(AssemblyEvent::Message(_)))
        ));
        let error = assembler
            .push(chunk(ChunkType::Final, 2, &[1, 2, 3, 4, 5]))
            .unwrap_err();
        assert_eq!(
            error,
            AssemblyError::MessageTooLarge {
                size: 5,
                limit: 4,
                status: StatusCode::BAD_RESPONSE_TOO_LARGE
            }
        );
        assembler
            .push(chunk(ChunkType::Intermediate, 3, &[1]))
            .unwrap();
        let error = assembler
            .push(chunk(ChunkType::Final, 3, &[2]))
            .unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_RESPONSE_TOO_LARGE);
        assert!(matches!(
            error,
            AssemblyError::TooManyChunks {
                count: 2,
                limit: 1,
                ..
            }
        ));
        assert_eq!(assembler.in_progress(), 0);
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
