//! Transaction state machines (Clause 5.4): client and server, segmentation, sans-IO.
//!
//! [`ClientTsm`] is the requesting BACnet-user side (Clause 5.4.4) and [`ServerTsm`] the
//! responding side (Clause 5.4.5). Both are generic over a peer address `A` and never touch
//! sockets or clocks: feed them datagrams with [`ClientTsm::handle_datagram`] /
//! [`ServerTsm::handle_datagram`] and the current time, call `handle_timeout(now)` when
//! `poll_timeout()` says so, and drain `poll_transmit()` and `poll_event()`.
//!
//! Service parameters are opaque bytes here; the service layer encodes and decodes them.

pub(crate) mod client;
mod segment_reassembler;
mod segment_sender;
pub(crate) mod server;

use std::time::{Duration, Instant};

use crate::apdu::service_choice::ConfirmedServiceChoice;
use crate::apdu::{MaxApdu, MaxSegments};
use crate::enums::{AbortReason, RejectReason, Segmentation};

pub use client::{ClientTsm, RequestTiming, SendError};
pub use server::{RespondError, ServerTsm};

/// Default APDU timeout (Device `APDU_Timeout`, Clause 12.11.27): 3 s.
pub const DEFAULT_APDU_TIMEOUT: Duration = Duration::from_secs(3);
/// Default segment timeout (Device `APDU_Segment_Timeout`): 2 s. A receiver waiting
/// for the next segment gives up after four times this (Clause 5.4, `Tseg` × 4).
pub const DEFAULT_SEGMENT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default number of retries (Device `Number_Of_APDU_Retries`): 3.
pub const DEFAULT_RETRIES: u8 = 3;
/// Default window size proposed when sending and accepted at most when receiving.
pub const DEFAULT_WINDOW_SIZE: u8 = 16;
/// Largest window size the standard allows (Clause 20.1.2.8).
pub const MAX_WINDOW_SIZE: u8 = 127;
/// Default limit on the bytes of one reassembled message.
pub const DEFAULT_MAX_REASSEMBLY_BYTES: usize = 256 * 1024;
/// Default limit on the bytes held by all server reassemblies together.
pub const DEFAULT_MAX_TOTAL_REASSEMBLY_BYTES: usize = 4 * 1024 * 1024;
/// Default limit on transactions in progress (client: outstanding requests; server:
/// requests being reassembled, executed or answered in segments).
pub const DEFAULT_MAX_TRANSACTIONS: usize = 1024;
/// Default limit on server transactions in progress for one peer.
pub const DEFAULT_MAX_TRANSACTIONS_PER_PEER: usize = 64;
/// Default limit on server transactions that reassemble a segmented request or send a
/// segmented answer (a share of the whole table, at most three quarters of it;
/// unsegmented requests keep the rest).
pub const DEFAULT_MAX_SEGMENTED_TRANSACTIONS: usize = 256;
/// Default limit on segmented server transactions for one source host (IP address): a
/// quarter of the segmented share, so that at least four hosts get segmented answers.
pub const DEFAULT_MAX_SEGMENTED_PER_HOST: usize = 64;
/// Default limit on segmented server transactions for one peer address (IP and port):
/// as many as our own client keeps outstanding to one device (16), so that its concurrent
/// reads of long values are not refused.
pub const DEFAULT_MAX_SEGMENTED_PER_PEER: usize = 16;
/// Default limit on cached responses kept for duplicate detection.
pub const DEFAULT_MAX_CACHED_RESPONSES: usize = 1024;
/// Default time a sent response stays cached to answer repeated requests.
pub const DEFAULT_RESPONSE_CACHE_TIME: Duration = Duration::from_secs(10);
/// Default time the server application may take before its transaction is dropped.
pub const DEFAULT_APPLICATION_TIMEOUT: Duration = Duration::from_secs(15);
/// Segment-count limit used when a max-segments field is "unspecified" or "more than 64".
pub const UNSPECIFIED_SEGMENT_LIMIT: u32 = 1024;
/// Number of distinct peers the client remembers the next invoke id for when idle.
pub const MAX_REMEMBERED_PEERS: usize = 4096;

/// Timeouts, retries, window sizes and table limits shared by both state machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsmConfig {
    /// Time to wait for a reply before retrying a request.
    pub apdu_timeout: Duration,
    /// Time to wait for a SegmentACK before resending a window.
    pub segment_timeout: Duration,
    /// Retries of a request or of a window before giving up.
    pub retries: u8,
    /// Window size proposed when sending segments; largest accepted when receiving.
    pub window_size: u8,
    /// Largest APDU this device accepts (and sends).
    pub max_apdu: MaxApdu,
    /// Number of segments this device accepts in one message.
    pub max_segments: MaxSegments,
    /// Which directions of segmentation this device supports.
    pub segmentation: Segmentation,
    /// Limit on the bytes of one reassembled message.
    pub max_reassembly_bytes: usize,
    /// Limit on the bytes of all server reassemblies together.
    pub max_total_reassembly_bytes: usize,
    /// Limit on transactions in progress.
    pub max_transactions: usize,
    /// Limit on server transactions in progress for one peer.
    pub max_transactions_per_peer: usize,
    /// Limit on server transactions in a segmented state (reassembling a request or
    /// sending an answer in segments). They count against `max_transactions` too and take
    /// at most three quarters of it, so unsegmented requests always find room (see
    /// `ServerTsm`).
    pub max_segmented_transactions: usize,
    /// Limit on segmented server transactions for one source host (the host a
    /// `ServerTsm::set_host_of` function names; without one, this limit is not applied).
    pub max_segmented_per_host: usize,
    /// Limit on segmented server transactions for one peer address.
    pub max_segmented_per_peer: usize,
    /// Limit on cached responses (the oldest are dropped first).
    pub max_cached_responses: usize,
    /// How long a sent response answers repeated requests.
    pub response_cache_time: Duration,
    /// How long the server application may take to respond.
    pub application_timeout: Duration,
}

impl Default for TsmConfig {
    fn default() -> Self {
        Self {
            apdu_timeout: DEFAULT_APDU_TIMEOUT,
            segment_timeout: DEFAULT_SEGMENT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            window_size: DEFAULT_WINDOW_SIZE,
            max_apdu: MaxApdu::Up1476,
            max_segments: MaxSegments::SixtyFour,
            segmentation: Segmentation::SegmentedBoth,
            max_reassembly_bytes: DEFAULT_MAX_REASSEMBLY_BYTES,
            max_total_reassembly_bytes: DEFAULT_MAX_TOTAL_REASSEMBLY_BYTES,
            max_transactions: DEFAULT_MAX_TRANSACTIONS,
            max_transactions_per_peer: DEFAULT_MAX_TRANSACTIONS_PER_PEER,
            max_segmented_transactions: DEFAULT_MAX_SEGMENTED_TRANSACTIONS,
            max_segmented_per_host: DEFAULT_MAX_SEGMENTED_PER_HOST,
            max_segmented_per_peer: DEFAULT_MAX_SEGMENTED_PER_PEER,
            max_cached_responses: DEFAULT_MAX_CACHED_RESPONSES,
            response_cache_time: DEFAULT_RESPONSE_CACHE_TIME,
            application_timeout: DEFAULT_APPLICATION_TIMEOUT,
        }
    }
}

impl TsmConfig {
    /// The window size actually used: `window_size` clamped to 1..=127.
    pub(crate) fn window(&self) -> u8 {
        self.window_size.clamp(1, MAX_WINDOW_SIZE)
    }

    /// How long a receiver waits for the next segment: four segment timeouts.
    pub(crate) fn segment_wait(&self) -> Duration {
        self.segment_timeout.saturating_mul(4)
    }

    /// Segments this device accepts in one message.
    pub(crate) fn segment_limit(&self) -> u32 {
        segment_limit(self.max_segments)
    }

    /// Whether this device can send segmented messages.
    pub(crate) fn can_transmit_segments(&self) -> bool {
        can_transmit_segments(self.segmentation)
    }

    /// Whether this device can receive segmented messages.
    pub(crate) fn can_receive_segments(&self) -> bool {
        can_receive_segments(self.segmentation)
    }
}

/// `now + duration`, saturating far in the future instead of overflowing.
pub(crate) fn after(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration)
        .or_else(|| now.checked_add(Duration::from_secs(u64::from(u32::MAX))))
        .unwrap_or(now)
}

/// Segment count allowed by a max-segments field.
pub(crate) fn segment_limit(max_segments: MaxSegments) -> u32 {
    max_segments
        .count()
        .map_or(UNSPECIFIED_SEGMENT_LIMIT, u32::from)
}

/// `segmented-both` or `segmented-transmit`.
pub(crate) fn can_transmit_segments(segmentation: Segmentation) -> bool {
    matches!(
        segmentation,
        Segmentation::SegmentedBoth | Segmentation::SegmentedTransmit
    )
}

/// `segmented-both` or `segmented-receive`.
pub(crate) fn can_receive_segments(segmentation: Segmentation) -> bool {
    matches!(
        segmentation,
        Segmentation::SegmentedBoth | Segmentation::SegmentedReceive
    )
}

/// Number of segments needed for `len` payload bytes at `segment_size` bytes each.
pub(crate) fn segment_count(len: usize, segment_size: usize) -> usize {
    len.div_ceil(segment_size.max(1)).max(1)
}

/// Completion of a client transaction, as drained from [`ClientTsm::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent<A> {
    /// The server acknowledged with a SimpleACK.
    SimpleAck {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Acknowledged service.
        service: ConfirmedServiceChoice,
    },
    /// The server answered with a ComplexACK (reassembled when it was segmented).
    ComplexAck {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Acknowledged service.
        service: ConfirmedServiceChoice,
        /// Service ACK parameters.
        payload: Vec<u8>,
    },
    /// The server answered with an Error PDU.
    Error {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Failed service.
        service: ConfirmedServiceChoice,
        /// Error parameters (see [`crate::apdu::BacnetError::decode_payload`]).
        payload: Vec<u8>,
    },
    /// The server rejected the request.
    Reject {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Why.
        reason: RejectReason,
    },
    /// The transaction was aborted, by the server or by this client.
    Abort {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Why.
        reason: AbortReason,
        /// True when the server sent the Abort, false when this client aborted.
        by_server: bool,
    },
    /// No answer after the last retry.
    Timeout {
        /// The server.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
    },
}

impl<A> ClientEvent<A> {
    /// The invoke id the event completes.
    pub fn invoke_id(&self) -> u8 {
        match self {
            Self::SimpleAck { invoke_id, .. }
            | Self::ComplexAck { invoke_id, .. }
            | Self::Error { invoke_id, .. }
            | Self::Reject { invoke_id, .. }
            | Self::Abort { invoke_id, .. }
            | Self::Timeout { invoke_id, .. } => *invoke_id,
        }
    }
}

/// What the server tells its application, drained from [`ServerTsm::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent<A> {
    /// A complete (reassembled if segmented) confirmed request to answer with
    /// [`ServerTsm::respond`].
    Request {
        /// The client.
        peer: A,
        /// Invoke id to answer.
        invoke_id: u8,
        /// Requested service.
        service: ConfirmedServiceChoice,
        /// Service request parameters.
        payload: Vec<u8>,
        /// Largest APDU the client accepts.
        max_apdu: MaxApdu,
        /// Segments the client accepts.
        max_segments: MaxSegments,
        /// Whether the client accepts a segmented response.
        segmented_response_accepted: bool,
    },
    /// A delivered request ended without the application's answer being sent: the client
    /// aborted it, the application took too long, or segments of the answer went
    /// unacknowledged. A later [`ServerTsm::respond`] for it fails.
    Aborted {
        /// The client.
        peer: A,
        /// Invoke id of the request.
        invoke_id: u8,
        /// Why.
        reason: AbortReason,
        /// True when the client sent the Abort.
        by_client: bool,
    },
    /// A delivered request was replaced by a different request reusing its invoke id;
    /// the next [`ServerTsm::respond`] for that id answers the new request.
    Superseded {
        /// The client.
        peer: A,
        /// Invoke id reused.
        invoke_id: u8,
    },
}

/// The application's answer to a [`ServerEvent::Request`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// SimpleACK.
    SimpleAck,
    /// ComplexACK with these service ACK parameters (segmented when needed).
    ComplexAck(Vec<u8>),
    /// Error PDU with these error parameters.
    Error(Vec<u8>),
    /// Reject PDU.
    Reject(RejectReason),
    /// Abort PDU (sent by the server).
    Abort(AbortReason),
}

/// Counters kept by each state machine; fields that do not apply to a side stay 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TsmStats {
    /// Confirmed requests sent (client) or delivered to the application (server).
    pub requests: u64,
    /// Completed transactions (client: any completion event; server: responses sent).
    pub completed: u64,
    /// Retransmissions of requests or windows after a timeout.
    pub retries: u64,
    /// Repeated requests or segments recognised as duplicates.
    pub duplicates: u64,
    /// Responses resent from the response cache.
    pub cache_hits: u64,
    /// Cached responses dropped early because the cache was full.
    pub cache_evictions: u64,
    /// Abort PDUs sent.
    pub aborts_sent: u64,
    /// Abort PDUs received for a known transaction.
    pub aborts_received: u64,
    /// Transactions that ended by timeout.
    pub timeouts: u64,
    /// Segments sent.
    pub segments_sent: u64,
    /// Segments received (in order or not).
    pub segments_received: u64,
    /// Requests refused because a table was full.
    pub refused_for_resources: u64,
    /// Datagrams for an unknown transaction, from the wrong peer or of a PDU type this
    /// side does not handle.
    pub ignored: u64,
    /// Datagrams that did not decode as an APDU.
    pub malformed: u64,
}
