//! The requests of a [`ClientConnection`]: handles and request ids, the RequestHeader each
//! request gets (handle, authentication token, timestamp, timeout hint), the server's
//! message and chunk limits checked before a request is queued on the channel endpoint, and
//! the requests that waited for the session.

use std::time::{Duration, Instant};

use super::{ClientConnection, ClientEvent, SendError};
use crate::channel::{OutgoingBody, OutgoingMessage, opn_security_header};
use crate::client::request_table::{PendingRequest, RequestPurpose};
use crate::encoding::BinaryEncodable;
use crate::services::{RequestHeader, ServiceRequest};
use crate::transport::MessageType;
use crate::types::StatusCode;

/// The RequestHeader inside any request.
pub(super) fn request_header_mut(request: &mut ServiceRequest) -> &mut RequestHeader {
    request.header_mut()
}

pub(super) fn millis(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

impl ClientConnection {
    pub(super) fn allocate_handle(&mut self) -> u32 {
        let handle = self.next_handle;
        self.next_handle = self.next_handle.wrapping_add(1).max(1);
        handle
    }

    pub(super) fn allocate_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        id
    }

    pub(super) fn fill_header(
        &self,
        now: Instant,
        request: &mut ServiceRequest,
        handle: u32,
        timeout: Duration,
    ) {
        let timestamp = self.wall_clock(now);
        let token = self.authentication_token.clone();
        let header = request_header_mut(request);
        header.authentication_token = token;
        header.request_handle = handle;
        header.timestamp = timestamp;
        if header.timeout_hint == 0 {
            header.timeout_hint = millis(timeout);
        }
    }

    /// Encodes, checks the server's limits and queues a request; records it as pending.
    pub(super) fn transmit_request(
        &mut self,
        now: Instant,
        handle: u32,
        mut request: ServiceRequest,
        purpose: RequestPurpose,
        deadline: Instant,
    ) -> Result<(), SendError> {
        self.fill_header(now, &mut request, handle, self.config.request_timeout);
        let message_type = match request {
            ServiceRequest::OpenSecureChannel(_) => MessageType::OpenSecureChannel,
            ServiceRequest::CloseSecureChannel(_) => MessageType::CloseSecureChannel,
            _ => MessageType::Message,
        };
        let request_id = self.allocate_request_id();
        self.queue_message(message_type, request_id, &request)?;
        self.requests.insert(
            request_id,
            PendingRequest {
                handle,
                purpose,
                deadline,
            },
        );
        Ok(())
    }

    pub(super) fn queue_message(
        &mut self,
        message_type: MessageType,
        request_id: u32,
        request: &ServiceRequest,
    ) -> Result<(), SendError> {
        let (Some(&limits), channel) = (self.endpoint.limits(), self.channel) else {
            return Err(SendError::Closed(StatusCode::BAD_NOT_CONNECTED));
        };
        let body = request.encode_message();
        let (channel_id, security_header) = match (message_type, channel) {
            (MessageType::OpenSecureChannel, channel) => (
                channel.map_or(0, |c| c.id),
                opn_security_header(self.endpoint.security()).to_bytes(),
            ),
            (_, Some(channel)) => (channel.id, channel.token_id.to_bytes()),
            (_, None) => return Err(SendError::Closed(StatusCode::BAD_SECURE_CHANNEL_CLOSED)),
        };
        let limit = [
            limits.max_send_message_size as usize,
            self.max_request_message_size,
        ]
        .into_iter()
        .filter(|limit| *limit != 0)
        .min();
        if let Some(limit) = limit
            && body.len() > limit
        {
            return Err(SendError::RequestTooLarge {
                size: body.len(),
                limit,
            });
        }
        let mut message = OutgoingMessage::new(
            message_type,
            channel_id,
            security_header,
            request_id,
            OutgoingBody::owned(body),
        );
        self.endpoint.limit_body(&mut message);
        let chunks = message.chunk_count(limits.send_buffer_size as usize);
        if limits.max_send_chunk_count != 0 && chunks > limits.max_send_chunk_count as usize {
            return Err(SendError::RequestTooLarge {
                size: message.body_len(),
                limit: limits.max_send_chunk_count as usize
                    * (limits.send_buffer_size as usize).saturating_sub(message.overhead()),
            });
        }
        self.endpoint.queue(message);
        Ok(())
    }

    pub(super) fn internal_request(
        &mut self,
        now: Instant,
        request: ServiceRequest,
        purpose: RequestPurpose,
    ) {
        let handle = self.allocate_handle();
        let deadline = now + self.config.request_timeout;
        if let Err(error) = self.transmit_request(now, handle, request, purpose, deadline) {
            self.fail(error.status_code(), "a session request could not be sent");
        }
    }

    pub(super) fn flush_waiting(&mut self, now: Instant) {
        while let Some(waiting) = self.waiting.pop_front() {
            let handle = waiting.handle;
            let sent = self.transmit_request(
                now,
                handle,
                waiting.request,
                RequestPurpose::Application,
                waiting.deadline,
            );
            if let Err(error) = sent {
                self.events.push_back(ClientEvent::RequestFailed {
                    handle,
                    status: error.status_code(),
                });
            }
        }
    }
}
