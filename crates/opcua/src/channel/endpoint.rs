//! `ChannelEndpoint`: one end of a UA TCP connection and its secure channel, the part that
//! [`ServerConnection`](crate::server::ServerConnection) and
//! [`ClientConnection`](crate::client::ClientConnection) share: the frame decoder and its
//! receive buffer, the limits of the Hello / Acknowledge exchange, chunk reassembly, sequence
//! numbers both ways, the send queues and the channel's security. Each connection embeds one
//! and adds its side's protocol (the server's tokens and service dispatch, the client's
//! session and request correlation).
//!
//! The send path is here and only here: [`poll_transmit`](ChannelEndpoint::poll_transmit),
//! [`transmit_into`](ChannelEndpoint::transmit_into) and
//! [`transmit_buffered`](ChannelEndpoint::transmit_buffered) write the connection messages
//! first (Hello or Acknowledge), then the queued messages chunk by chunk, each signed and
//! encrypted under the channel's security, then the ERR message of a failure.
//!
//! A failure ([`fail`](ChannelEndpoint::fail)) closes the endpoint, the way each [`Side`]
//! must: the server still sends the responses queued before it and then an ERR message with
//! the status (OPC 10000-6 §7.1.5); the client drops what it had not sent yet.

use std::collections::VecDeque;

use bytes::BytesMut;

use super::outgoing::OutgoingMessage;
use super::secured::{Rejection, limit_body, open_symmetric, write_secured_chunk};
use super::sequence::{ReceiveSequence, SendSequence};
use crate::encoding::DecodingLimits;
use crate::secure_channel::{
    AssemblerRole, AssemblyError, AssemblyEvent, MessageAssembler, SecureChannelChunk,
};
use crate::security::ChannelSecurity;
use crate::transport::{
    ChunkSink, ConnectionMessage, ErrorMessage, Frame, FrameDecoder, MessageType, NegotiatedLimits,
    TransmitBuffer, TransportError,
};
use crate::types::StatusCode;

/// Which end of the channel an endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The client: opens the channel, sends requests.
    Client,
    /// The server: accepts the channel, answers requests.
    Server,
}

/// Why an endpoint closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The client closed the channel (CloseSecureChannel).
    ClosedByClient,
    /// An error; on the server side an ERR message with `status` was queued.
    Error {
        /// The status (sent in the ERR message by a server).
        status: StatusCode,
        /// Human-readable reason.
        reason: String,
    },
}

/// The security that secures a message of `message_type`: an OPN the pending one (the
/// security its request brought), else the channel's; any other message the channel's.
fn securing<'a>(
    message_type: MessageType,
    pending: &'a Option<ChannelSecurity>,
    security: &'a Option<ChannelSecurity>,
) -> Option<&'a ChannelSecurity> {
    match message_type {
        MessageType::OpenSecureChannel => pending.as_ref().or(security.as_ref()),
        _ => security.as_ref(),
    }
}

/// The state after the Hello / Acknowledge exchange.
#[derive(Debug)]
struct Established {
    limits: NegotiatedLimits,
    assembler: MessageAssembler,
}

/// One end of a connection: framing, limits, sequences, send queues and security.
#[derive(Debug)]
pub struct ChannelEndpoint {
    side: Side,
    decoder: FrameDecoder,
    decoding_limits: DecodingLimits,
    established: Option<Established>,
    receive_sequence: ReceiveSequence,
    send_sequence: SendSequence,
    /// Connection messages (Hello, Acknowledge), sent before any chunk.
    immediate: VecDeque<Vec<u8>>,
    outgoing: VecDeque<OutgoingMessage>,
    /// The ERR message, sent after the messages queued before the failure.
    final_error: Option<Vec<u8>>,
    /// The channel's security (None under SecurityPolicy None).
    security: Option<ChannelSecurity>,
    /// The security an OPN being answered brings, until its response is sent (server).
    pending_security: Option<ChannelSecurity>,
    close_reason: Option<CloseReason>,
}

impl ChannelEndpoint {
    /// An endpoint of `side` whose decoder accepts frames of up to `max_frame_size` bytes
    /// until the Hello / Acknowledge exchange sets the limit, decoding messages with
    /// `decoding_limits`.
    pub fn new(side: Side, max_frame_size: u32, decoding_limits: DecodingLimits) -> Self {
        Self {
            side,
            decoder: FrameDecoder::new(max_frame_size),
            decoding_limits,
            established: None,
            receive_sequence: ReceiveSequence::default(),
            send_sequence: SendSequence::default(),
            immediate: VecDeque::new(),
            outgoing: VecDeque::new(),
            final_error: None,
            security: None,
            pending_security: None,
            close_reason: None,
        }
    }

    /// Which end this is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The limits for decoding received messages.
    pub fn decoding_limits(&self) -> DecodingLimits {
        self.decoding_limits
    }

    /// True once closed (drain [`poll_transmit`](Self::poll_transmit) first).
    pub fn is_closed(&self) -> bool {
        self.close_reason.is_some()
    }

    /// Why the endpoint closed.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.close_reason.as_ref()
    }

    /// Closes in order: what is queued is still sent, no ERR message.
    pub fn close(&mut self) {
        if !self.is_closed() {
            self.close_reason = Some(CloseReason::ClosedByClient);
        }
    }

    /// Closes after an error (the first close wins): a server queues an ERR message after
    /// the messages already queued; a client drops everything not yet sent.
    pub fn fail(&mut self, status: StatusCode, reason: &str) {
        if self.is_closed() {
            return;
        }
        match self.side {
            Side::Server => {
                self.final_error = Some(ErrorMessage::new(status, reason).to_message_bytes());
            }
            Side::Client => {
                self.outgoing.clear();
                self.immediate.clear();
            }
        }
        self.close_reason = Some(CloseReason::Error {
            status,
            reason: reason.to_owned(),
        });
    }

    // --- receiving ---

    /// Appends bytes read from the socket to the receive buffer.
    pub fn push(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
    }

    /// The receive buffer, with room for the rest of the frame in progress: append what the
    /// socket returns (e.g. tokio's `read_buf`). Only append. Once the endpoint is closed the
    /// buffer is emptied each time, so a driver that goes on reading holds nothing.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        let closed = self.is_closed();
        let buffer = self.decoder.read_buffer();
        if closed {
            buffer.clear();
        }
        buffer
    }

    /// The next whole frame of the receive buffer, if any.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, TransportError> {
        self.decoder.next_frame()
    }

    /// Records the limits of the Hello / Acknowledge exchange: frames up to our receive
    /// buffer size are accepted from now on, and messages are reassembled within the limits.
    pub fn establish(&mut self, limits: NegotiatedLimits) {
        self.decoder.set_max_frame_size(limits.receive_buffer_size);
        let role = match self.side {
            Side::Client => AssemblerRole::Client,
            Side::Server => AssemblerRole::Server,
        };
        self.established = Some(Established {
            limits,
            assembler: MessageAssembler::new(
                role,
                limits.max_receive_message_size,
                limits.max_receive_chunk_count,
            ),
        });
    }

    /// The limits agreed in the Hello / Acknowledge exchange.
    pub fn limits(&self) -> Option<&NegotiatedLimits> {
        self.established.as_ref().map(|e| &e.limits)
    }

    /// True once the Hello / Acknowledge exchange is done.
    pub fn is_established(&self) -> bool {
        self.established.is_some()
    }

    /// Checks and decrypts a received MSG / CLO frame under the channel's security; frames
    /// under SecurityPolicy None pass unchanged.
    pub fn open_symmetric(&self, frame: &Frame) -> Result<Frame, Rejection> {
        match &self.security {
            Some(security) => open_symmetric(security, frame),
            None => Ok(frame.clone()),
        }
    }

    /// Checks the sequence number of a received chunk (Bad_SequenceNumberInvalid).
    pub fn accept_sequence(&mut self, number: u32) -> Result<(), StatusCode> {
        self.receive_sequence.accept(number)
    }

    /// Adds a received chunk to the message being reassembled (nothing before the Hello /
    /// Acknowledge exchange).
    pub fn assemble(
        &mut self,
        chunk: SecureChannelChunk,
    ) -> Result<Option<AssemblyEvent>, AssemblyError> {
        match self.established.as_mut() {
            Some(established) => established.assembler.push(chunk),
            None => Ok(None),
        }
    }

    // --- security ---

    /// The channel's security, once it is open under a policy other than None.
    pub fn security(&self) -> Option<&ChannelSecurity> {
        self.security.as_ref()
    }

    /// The channel's security, to install or drop token keys.
    pub fn security_mut(&mut self) -> Option<&mut ChannelSecurity> {
        self.security.as_mut()
    }

    /// Sets the channel's security.
    pub fn set_security(&mut self, security: Option<ChannelSecurity>) {
        self.security = security;
    }

    /// The security of the OPN being answered (server), if it is secured.
    pub fn pending_security(&self) -> Option<&ChannelSecurity> {
        self.pending_security.as_ref()
    }

    /// As [`pending_security`](Self::pending_security), to set its mode and token keys.
    pub fn pending_security_mut(&mut self) -> Option<&mut ChannelSecurity> {
        self.pending_security.as_mut()
    }

    /// Sets the security of the OPN being answered; it becomes the channel's security once
    /// the OPN response is sent (the response is secured with it).
    pub fn set_pending_security(&mut self, security: Option<ChannelSecurity>) {
        self.pending_security = security;
    }

    /// The security that secures an OPN: the pending one, else the channel's.
    pub fn opn_security(&self) -> Option<&ChannelSecurity> {
        self.pending_security.as_ref().or(self.security.as_ref())
    }

    // --- sending ---

    /// The largest chunk we send (the peer's receive buffer size; 0 before the exchange).
    pub fn send_chunk_size(&self) -> usize {
        self.established
            .as_ref()
            .map_or(0, |e| e.limits.send_buffer_size as usize)
    }

    /// Limits the body bytes per chunk of `message` to what fits a chunk once it is signed
    /// and padded under the security that will send it (no limit under None).
    pub fn limit_body(&self, message: &mut OutgoingMessage) {
        let security = securing(
            message.message_type(),
            &self.pending_security,
            &self.security,
        );
        if let Some(security) = security {
            limit_body(security, message, self.send_chunk_size());
        }
    }

    /// Queues a connection message (Hello, Acknowledge), sent before any chunk.
    pub fn queue_immediate(&mut self, bytes: Vec<u8>) {
        self.immediate.push_back(bytes);
    }

    /// Queues a message, sent chunk by chunk after those queued before.
    pub fn queue(&mut self, message: OutgoingMessage) {
        self.outgoing.push_back(message);
    }

    /// The next chunk or connection message to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.write_next(&mut out).then_some(out)
    }

    /// Appends whole chunks to `out` until it grew by at least `max_bytes` or nothing is
    /// pending; returns the number of bytes appended. Avoids one allocation per chunk.
    pub fn transmit_into(&mut self, out: &mut Vec<u8>, max_bytes: usize) -> usize {
        self.transmit_to(out, max_bytes)
    }

    /// As [`transmit_into`](Self::transmit_into), into a gather list: shared payloads (the
    /// getData buffer) are referenced, not copied, and the driver writes them with one
    /// vectored write.
    pub fn transmit_buffered(&mut self, out: &mut TransmitBuffer, max_bytes: usize) -> usize {
        self.transmit_to(out, max_bytes)
    }

    fn transmit_to<S: ChunkSink>(&mut self, out: &mut S, max_bytes: usize) -> usize {
        let start = out.len();
        while out.len() - start < max_bytes && self.write_next(out) {}
        out.len() - start
    }

    /// Writes the next connection message, chunk or final ERR message into `out`; false
    /// when nothing is pending. A chunk that cannot be secured fails the endpoint.
    fn write_next<S: ChunkSink>(&mut self, out: &mut S) -> bool {
        if let Some(bytes) = self.immediate.pop_front() {
            out.put_slice(&bytes);
            return true;
        }
        let chunk_size = self.send_chunk_size();
        let Some(message) = self.outgoing.front_mut() else {
            return match self.final_error.take() {
                Some(bytes) => {
                    out.put_slice(&bytes);
                    true
                }
                None => false,
            };
        };
        let sequence_number = self.send_sequence.next_number();
        let secured = securing(
            message.message_type(),
            &self.pending_security,
            &self.security,
        );
        let written = match secured {
            Some(security) => {
                match write_secured_chunk(security, message, chunk_size, sequence_number, out) {
                    Ok(written) => written,
                    Err(error) => {
                        self.outgoing.clear();
                        self.fail(error.status_code(), &error.to_string());
                        return self.write_next(out);
                    }
                }
            }
            None => message.write_next_chunk(chunk_size, sequence_number, out),
        };
        if message.is_done() {
            if message.message_type() == MessageType::OpenSecureChannel
                && let Some(security) = self.pending_security.take()
            {
                self.security = Some(security);
            }
            self.outgoing.pop_front();
        }
        written || self.write_next(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::OutgoingBody;
    use crate::encoding::BinaryEncodable;

    fn established(side: Side) -> ChannelEndpoint {
        let mut endpoint = ChannelEndpoint::new(side, 8192, DecodingLimits::default());
        endpoint.establish(NegotiatedLimits {
            protocol_version: 0,
            receive_buffer_size: 8192,
            send_buffer_size: 8192,
            max_receive_message_size: 0,
            max_receive_chunk_count: 0,
            max_send_message_size: 0,
            max_send_chunk_count: 0,
        });
        endpoint
    }

    fn message(body: usize) -> OutgoingMessage {
        OutgoingMessage::new(
            MessageType::Message,
            1,
            1u32.to_bytes(),
            7,
            OutgoingBody::owned(vec![0xAB; body]),
        )
    }

    #[test]
    fn a_server_sends_what_was_queued_then_the_error() {
        let mut server = established(Side::Server);
        server.queue_immediate(b"ACKF".to_vec());
        server.queue(message(20_000));
        server.fail(StatusCode::BAD_TCP_INTERNAL_ERROR, "stop");
        server.fail(
            StatusCode::BAD_DECODING_ERROR,
            "ignored: the first close wins",
        );
        assert!(server.is_closed());
        let mut frames = Vec::new();
        while let Some(bytes) = server.poll_transmit() {
            frames.push(bytes[..4].to_vec());
        }
        assert_eq!(frames, [b"ACKF", b"MSGC", b"MSGC", b"MSGF", b"ERRF"]);
        assert_eq!(
            server.close_reason(),
            Some(&CloseReason::Error {
                status: StatusCode::BAD_TCP_INTERNAL_ERROR,
                reason: "stop".into()
            })
        );
    }

    #[test]
    fn a_client_drops_what_it_had_not_sent() {
        let mut client = established(Side::Client);
        client.queue_immediate(b"HELF".to_vec());
        client.queue(message(10));
        client.fail(StatusCode::BAD_TIMEOUT, "gone");
        assert_eq!(client.poll_transmit(), None);
        // An orderly close keeps the queue: CloseSecureChannel still goes out.
        let mut closing = established(Side::Client);
        closing.queue(message(10));
        closing.close();
        assert_eq!(closing.close_reason(), Some(&CloseReason::ClosedByClient));
        assert_eq!(&closing.poll_transmit().unwrap()[..4], b"MSGF");
    }

    #[test]
    fn a_closed_endpoint_empties_its_receive_buffer() {
        let mut endpoint = established(Side::Server);
        endpoint.read_buffer().extend_from_slice(b"HEL");
        assert_eq!(endpoint.read_buffer().len(), 3);
        endpoint.close();
        assert!(endpoint.read_buffer().is_empty());
    }
}
