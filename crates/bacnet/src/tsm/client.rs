//! `ClientTsm`: the requesting BACnet-user's transaction state machine (Clause 5.4.4).
//!
//! Per transaction the states are AWAIT_CONFIRMATION, SEGMENTED_REQUEST (sending a request
//! in segments) and SEGMENTED_CONF (receiving a segmented ComplexACK). Invoke ids are
//! allocated per peer and never reused while still active for that peer.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;
use std::time::{Duration, Instant};

use crate::apdu::service_choice::ConfirmedServiceChoice;
use crate::apdu::{Apdu, MaxApdu, MaxSegments, SegmentInfo};
use crate::encoding::Reader;
use crate::enums::{AbortReason, Segmentation};

use super::segment_reassembler::{SegmentOutcome, SegmentReassembler};
use super::segment_sender::{AckOutcome, SegmentSender};
use super::{
    ClientEvent, MAX_REMEMBERED_PEERS, MAX_WINDOW_SIZE, TsmConfig, TsmStats, after,
    can_receive_segments, segment_count, segment_limit,
};

/// Header of an unsegmented Confirmed-Request: type, limits, invoke id, service.
const REQUEST_HEADER: usize = 4;
/// Header of a segmented Confirmed-Request: adds sequence number and window size.
const SEGMENTED_REQUEST_HEADER: usize = 6;

/// Why [`ClientTsm::send_request`] refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// All 256 invoke ids for the peer (or the transaction table) are in use.
    #[error("too many outstanding requests")]
    TooManyOutstanding,
    /// The request needs segmentation and this device or the peer cannot do it.
    #[error("request too long and segmentation not supported")]
    SegmentationNotSupported,
    /// The request needs more segments than the peer accepts.
    #[error("request needs {needed} segments, peer accepts {limit}")]
    TooManySegments {
        /// Segments needed.
        needed: usize,
        /// Segments the peer accepts.
        limit: u32,
    },
}

/// What is known about a peer (from its I-Am or configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PeerLimits {
    max_apdu: MaxApdu,
    segmentation: Segmentation,
    max_segments: MaxSegments,
}

impl Default for PeerLimits {
    fn default() -> Self {
        Self {
            max_apdu: MaxApdu::Up1476,
            segmentation: Segmentation::NoSegmentation,
            max_segments: MaxSegments::Unspecified,
        }
    }
}

#[derive(Debug, Default)]
struct PeerIds {
    next_invoke_id: u8,
    active: u16,
}

#[derive(Debug)]
enum ClientState {
    AwaitConfirmation,
    SegmentedRequest {
        sender: SegmentSender,
        segment_retries: u8,
    },
    SegmentedConf(SegmentReassembler),
}

#[derive(Debug)]
struct ClientTransaction {
    service: ConfirmedServiceChoice,
    payload: Vec<u8>,
    /// Segment size when the request is sent in segments.
    segment_size: Option<usize>,
    state: ClientState,
    request_retries: u8,
    deadline: Instant,
    /// This request's reply timeout and retries (the configuration's unless overridden).
    timing: RequestTiming,
}

/// The reply timeout and number of retries of one request, for a caller that wants other
/// values than the client's [`TsmConfig`] for some calls (a quick probe, a patient read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTiming {
    /// Time to wait for the reply before sending the request again.
    pub apdu_timeout: Duration,
    /// Retries before the request ends with a timeout.
    pub retries: u8,
}

impl RequestTiming {
    /// The configuration's timing.
    pub fn of(config: &TsmConfig) -> Self {
        Self {
            apdu_timeout: config.apdu_timeout,
            retries: config.retries,
        }
    }
}

/// Client transaction state machine, generic over the peer address `A`.
#[derive(Debug)]
pub struct ClientTsm<A> {
    config: TsmConfig,
    transactions: HashMap<(A, u8), ClientTransaction>,
    peers: HashMap<A, PeerIds>,
    limits: HashMap<A, PeerLimits>,
    transmits: VecDeque<(A, Vec<u8>)>,
    events: VecDeque<ClientEvent<A>>,
    stats: TsmStats,
}

impl<A: Clone + Eq + Hash + Debug> ClientTsm<A> {
    /// A client with this configuration.
    pub fn new(config: TsmConfig) -> Self {
        Self {
            config,
            transactions: HashMap::new(),
            peers: HashMap::new(),
            limits: HashMap::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: TsmStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TsmConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> TsmStats {
        self.stats
    }

    /// Number of outstanding transactions.
    pub fn outstanding(&self) -> usize {
        self.transactions.len()
    }

    /// Whether `invoke_id` is active for `peer`.
    pub fn is_active(&self, peer: &A, invoke_id: u8) -> bool {
        self.transactions.contains_key(&(peer.clone(), invoke_id))
    }

    /// Records a peer's limits, typically from its I-Am. Unknown peers are assumed to
    /// accept 1476 octets and no segmentation.
    pub fn set_peer_limits(
        &mut self,
        peer: A,
        max_apdu: MaxApdu,
        segmentation_supported: Segmentation,
        max_segments: MaxSegments,
    ) {
        self.limits.insert(
            peer,
            PeerLimits {
                max_apdu,
                segmentation: segmentation_supported,
                max_segments,
            },
        );
    }

    /// Sends a confirmed request; returns its invoke id. The request is segmented when it
    /// does not fit in the peer's max APDU.
    pub fn send_request(
        &mut self,
        now: Instant,
        to: A,
        service: ConfirmedServiceChoice,
        payload: Vec<u8>,
    ) -> Result<u8, SendError> {
        let timing = RequestTiming::of(&self.config);
        self.send_request_timed(now, to, service, payload, timing)
    }

    /// [`Self::send_request`] with this request's own reply timeout and retries (segment
    /// windows keep the configuration's).
    pub fn send_request_timed(
        &mut self,
        now: Instant,
        to: A,
        service: ConfirmedServiceChoice,
        payload: Vec<u8>,
        timing: RequestTiming,
    ) -> Result<u8, SendError> {
        if self.transactions.len() >= self.config.max_transactions {
            return Err(SendError::TooManyOutstanding);
        }
        let limits = self.limits.get(&to).copied().unwrap_or_default();
        let max_len = usize::from(limits.max_apdu.octets().min(self.config.max_apdu.octets()));
        let segment_size = if REQUEST_HEADER + payload.len() <= max_len {
            None
        } else {
            if !self.config.can_transmit_segments() || !can_receive_segments(limits.segmentation) {
                return Err(SendError::SegmentationNotSupported);
            }
            let size = max_len - SEGMENTED_REQUEST_HEADER;
            let needed = segment_count(payload.len(), size);
            let limit = segment_limit(limits.max_segments);
            if needed > limit as usize {
                return Err(SendError::TooManySegments { needed, limit });
            }
            Some(size)
        };
        let invoke_id = self.allocate_invoke_id(&to)?;
        let mut transaction = ClientTransaction {
            service,
            payload,
            segment_size,
            state: ClientState::AwaitConfirmation,
            request_retries: 0,
            deadline: now,
            timing,
        };
        self.start_request(now, &to, invoke_id, &mut transaction);
        self.transactions.insert((to, invoke_id), transaction);
        self.stats.requests += 1;
        Ok(invoke_id)
    }

    fn allocate_invoke_id(&mut self, to: &A) -> Result<u8, SendError> {
        if self.peers.len() >= MAX_REMEMBERED_PEERS && !self.peers.contains_key(to) {
            self.peers.retain(|_, ids| ids.active > 0);
        }
        let ids = self.peers.entry(to.clone()).or_default();
        if ids.active >= 256 {
            return Err(SendError::TooManyOutstanding);
        }
        let start = ids.next_invoke_id;
        for step in 0..=255u8 {
            let candidate = start.wrapping_add(step);
            if !self.transactions.contains_key(&(to.clone(), candidate)) {
                ids.next_invoke_id = candidate.wrapping_add(1);
                ids.active += 1;
                return Ok(candidate);
            }
        }
        Err(SendError::TooManyOutstanding)
    }

    /// Sends the request from the start (first transmission or a retry).
    fn start_request(
        &mut self,
        now: Instant,
        to: &A,
        invoke_id: u8,
        transaction: &mut ClientTransaction,
    ) {
        match transaction.segment_size {
            None => {
                let bytes = self.request_bytes(invoke_id, transaction, None, &transaction.payload);
                self.transmits.push_back((to.clone(), bytes));
                transaction.state = ClientState::AwaitConfirmation;
                transaction.deadline = after(now, transaction.timing.apdu_timeout);
            }
            Some(size) => {
                let sender =
                    SegmentSender::new(transaction.payload.clone(), size, self.config.window());
                self.send_window(to, invoke_id, transaction.service, &sender);
                transaction.state = ClientState::SegmentedRequest {
                    sender,
                    segment_retries: 0,
                };
                transaction.deadline = after(now, self.config.segment_timeout);
            }
        }
    }

    fn request_bytes(
        &self,
        invoke_id: u8,
        transaction: &ClientTransaction,
        segment: Option<SegmentInfo>,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(SEGMENTED_REQUEST_HEADER + payload.len());
        Apdu::ConfirmedRequest {
            segmented_response_accepted: self.config.can_receive_segments(),
            max_segments: self.config.max_segments,
            max_apdu: self.config.max_apdu,
            invoke_id,
            segment,
            service: transaction.service,
            payload,
        }
        .encode(&mut bytes);
        bytes
    }

    fn send_window(
        &mut self,
        to: &A,
        invoke_id: u8,
        service: ConfirmedServiceChoice,
        sender: &SegmentSender,
    ) {
        for (segment, data) in sender.window() {
            let mut bytes = Vec::with_capacity(SEGMENTED_REQUEST_HEADER + data.len());
            Apdu::ConfirmedRequest {
                segmented_response_accepted: self.config.can_receive_segments(),
                max_segments: self.config.max_segments,
                max_apdu: self.config.max_apdu,
                invoke_id,
                segment: Some(segment),
                service,
                payload: data,
            }
            .encode(&mut bytes);
            self.transmits.push_back((to.clone(), bytes));
            self.stats.segments_sent += 1;
        }
    }

    fn send_abort(&mut self, to: &A, invoke_id: u8, reason: AbortReason) {
        let mut bytes = Vec::with_capacity(3);
        Apdu::Abort {
            server: false,
            invoke_id,
            reason,
        }
        .encode(&mut bytes);
        self.transmits.push_back((to.clone(), bytes));
        self.stats.aborts_sent += 1;
    }

    fn send_segment_ack(
        &mut self,
        to: &A,
        invoke_id: u8,
        sequence_number: u8,
        window: u8,
        negative: bool,
    ) {
        let mut bytes = Vec::with_capacity(4);
        Apdu::SegmentAck {
            negative,
            server: false,
            invoke_id,
            sequence_number,
            actual_window_size: window,
        }
        .encode(&mut bytes);
        self.transmits.push_back((to.clone(), bytes));
    }

    fn release_invoke_id(&mut self, peer: &A) {
        if let Some(ids) = self.peers.get_mut(peer) {
            ids.active = ids.active.saturating_sub(1);
        }
    }

    /// Ends a transaction with `event`.
    fn complete(&mut self, key: &(A, u8), event: ClientEvent<A>) {
        if self.transactions.remove(key).is_some() {
            self.release_invoke_id(&key.0);
            self.stats.completed += 1;
            self.events.push_back(event);
        }
    }

    /// Cancels an outstanding request: it is forgotten and an Abort (reason `other`) is
    /// sent so that the server can free its resources. Returns whether it was active.
    pub fn cancel(&mut self, peer: &A, invoke_id: u8) -> bool {
        let key = (peer.clone(), invoke_id);
        if self.transactions.remove(&key).is_none() {
            return false;
        }
        self.release_invoke_id(peer);
        self.send_abort(peer, invoke_id, AbortReason::Other);
        true
    }

    /// Handles one APDU received from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: A, apdu_bytes: &[u8]) {
        let apdu = match Apdu::decode(&mut Reader::new(apdu_bytes)) {
            Ok(apdu) => apdu,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let invoke_id = match apdu {
            Apdu::SimpleAck { invoke_id, .. }
            | Apdu::ComplexAck { invoke_id, .. }
            | Apdu::Error { invoke_id, .. }
            | Apdu::Reject { invoke_id, .. }
            | Apdu::SegmentAck {
                server: true,
                invoke_id,
                ..
            }
            | Apdu::Abort {
                server: true,
                invoke_id,
                ..
            } => invoke_id,
            _ => {
                self.stats.ignored += 1;
                return;
            }
        };
        let key = (from, invoke_id);
        let Some(transaction) = self.transactions.get(&key) else {
            self.stats.ignored += 1;
            return;
        };
        // An answer for another service (a late answer to an earlier request that used the
        // same invoke id) is not this transaction's: drop it and keep waiting.
        let answered_service = match &apdu {
            Apdu::SimpleAck { service, .. }
            | Apdu::ComplexAck { service, .. }
            | Apdu::Error { service, .. } => Some(*service),
            _ => None,
        };
        if answered_service.is_some_and(|service| service != transaction.service) {
            self.stats.ignored += 1;
            return;
        }
        let peer = key.0.clone();
        match apdu {
            Apdu::SimpleAck { service, .. } => self.complete(
                &key,
                ClientEvent::SimpleAck {
                    peer,
                    invoke_id,
                    service,
                },
            ),
            Apdu::ComplexAck {
                segment: None,
                service,
                payload,
                ..
            } => self.complete(
                &key,
                ClientEvent::ComplexAck {
                    peer,
                    invoke_id,
                    service,
                    payload: payload.to_vec(),
                },
            ),
            Apdu::ComplexAck {
                segment: Some(segment),
                service,
                payload,
                ..
            } => self.handle_ack_segment(now, &key, segment, service, payload),
            Apdu::Error {
                service, payload, ..
            } => self.complete(
                &key,
                ClientEvent::Error {
                    peer,
                    invoke_id,
                    service,
                    payload: payload.to_vec(),
                },
            ),
            Apdu::Reject { reason, .. } => self.complete(
                &key,
                ClientEvent::Reject {
                    peer,
                    invoke_id,
                    reason,
                },
            ),
            Apdu::Abort { reason, .. } => {
                self.stats.aborts_received += 1;
                self.complete(
                    &key,
                    ClientEvent::Abort {
                        peer,
                        invoke_id,
                        reason,
                        by_server: true,
                    },
                );
            }
            Apdu::SegmentAck {
                negative,
                sequence_number,
                actual_window_size,
                ..
            } => self.handle_segment_ack(now, &key, sequence_number, actual_window_size, negative),
            _ => self.stats.ignored += 1,
        }
    }

    fn abort_locally(&mut self, key: &(A, u8), reason: AbortReason) {
        self.send_abort(&key.0, key.1, reason);
        self.complete(
            key,
            ClientEvent::Abort {
                peer: key.0.clone(),
                invoke_id: key.1,
                reason,
                by_server: false,
            },
        );
    }

    fn handle_ack_segment(
        &mut self,
        now: Instant,
        key: &(A, u8),
        segment: SegmentInfo,
        service: ConfirmedServiceChoice,
        data: &[u8],
    ) {
        self.stats.segments_received += 1;
        let Some(mut transaction) = self.transactions.remove(key) else {
            return;
        };
        if !matches!(transaction.state, ClientState::SegmentedConf(_)) {
            let refusal = if segment.sequence_number != 0 {
                // Not the start of a response: a stray segment.
                self.stats.ignored += 1;
                self.transactions.insert(key.clone(), transaction);
                return;
            } else if !self.config.can_receive_segments() {
                Some(AbortReason::SegmentationNotSupported)
            } else if !(1..=MAX_WINDOW_SIZE).contains(&segment.proposed_window_size) {
                Some(AbortReason::WindowSizeOutOfRange)
            } else {
                None
            };
            if let Some(reason) = refusal {
                self.transactions.insert(key.clone(), transaction);
                self.abort_locally(key, reason);
                return;
            }
            transaction.state = ClientState::SegmentedConf(SegmentReassembler::new(
                segment.proposed_window_size,
                self.config.window(),
                self.config.segment_limit(),
                self.config.max_reassembly_bytes,
            ));
        }
        let ClientState::SegmentedConf(reassembler) = &mut transaction.state else {
            self.transactions.insert(key.clone(), transaction);
            return;
        };
        let outcome = reassembler.accept(&segment, data);
        let window = reassembler.window();
        match outcome {
            SegmentOutcome::Wait => {
                transaction.deadline = after(now, self.config.segment_wait());
                self.transactions.insert(key.clone(), transaction);
            }
            SegmentOutcome::Ack {
                sequence_number,
                negative,
            } => {
                if !negative && sequence_number != segment.sequence_number {
                    self.stats.duplicates += 1;
                }
                transaction.deadline = after(now, self.config.segment_wait());
                self.transactions.insert(key.clone(), transaction);
                self.send_segment_ack(&key.0, key.1, sequence_number, window, negative);
            }
            SegmentOutcome::Complete { sequence_number } => {
                self.send_segment_ack(&key.0, key.1, sequence_number, window, false);
                if let ClientState::SegmentedConf(reassembler) = transaction.state {
                    self.release_invoke_id(&key.0);
                    self.stats.completed += 1;
                    self.events.push_back(ClientEvent::ComplexAck {
                        peer: key.0.clone(),
                        invoke_id: key.1,
                        service,
                        payload: reassembler.into_payload(),
                    });
                }
            }
            SegmentOutcome::Overflow => {
                self.transactions.insert(key.clone(), transaction);
                self.abort_locally(key, AbortReason::BufferOverflow);
            }
        }
    }

    fn handle_segment_ack(
        &mut self,
        now: Instant,
        key: &(A, u8),
        sequence_number: u8,
        actual_window_size: u8,
        negative: bool,
    ) {
        let Some(mut transaction) = self.transactions.remove(key) else {
            return;
        };
        if let ClientState::SegmentedRequest {
            sender,
            segment_retries,
        } = &mut transaction.state
        {
            match sender.handle_ack(sequence_number, actual_window_size, negative) {
                AckOutcome::Progress => {
                    *segment_retries = 0;
                    transaction.deadline = after(now, self.config.segment_timeout);
                    let sender = sender.clone();
                    self.send_window(&key.0, key.1, transaction.service, &sender);
                }
                AckOutcome::ResendWindow => {
                    let sender = sender.clone();
                    self.send_window(&key.0, key.1, transaction.service, &sender);
                }
                AckOutcome::Finished => {
                    transaction.state = ClientState::AwaitConfirmation;
                    transaction.deadline = after(now, transaction.timing.apdu_timeout);
                }
                AckOutcome::Ignored => self.stats.duplicates += 1,
            }
        } else {
            self.stats.ignored += 1;
        }
        self.transactions.insert(key.clone(), transaction);
    }

    /// Handles every deadline at or before `now`: retries, then `Timeout` events.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<(A, u8)> = self
            .transactions
            .iter()
            .filter(|(_, t)| t.deadline <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            let Some(mut transaction) = self.transactions.remove(&key) else {
                continue;
            };
            let retry_segments = match &mut transaction.state {
                ClientState::SegmentedRequest {
                    sender,
                    segment_retries,
                } if *segment_retries < self.config.retries => {
                    *segment_retries += 1;
                    sender.note_timeout_resend();
                    Some(sender.clone())
                }
                _ => None,
            };
            if let Some(sender) = retry_segments {
                self.stats.retries += 1;
                self.send_window(&key.0, key.1, transaction.service, &sender);
                transaction.deadline = after(now, self.config.segment_timeout);
                self.transactions.insert(key, transaction);
                continue;
            }
            let can_retry = matches!(transaction.state, ClientState::AwaitConfirmation)
                && transaction.request_retries < transaction.timing.retries;
            if can_retry {
                transaction.request_retries += 1;
                self.stats.retries += 1;
                self.start_request(now, &key.0, key.1, &mut transaction);
                self.transactions.insert(key, transaction);
                continue;
            }
            self.transactions.insert(key.clone(), transaction);
            self.stats.timeouts += 1;
            self.complete(
                &key,
                ClientEvent::Timeout {
                    peer: key.0.clone(),
                    invoke_id: key.1,
                },
            );
        }
    }

    /// The next deadline, if any transaction is outstanding.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.transactions.values().map(|t| t.deadline).min()
    }

    /// The next APDU to send and its destination.
    pub fn poll_transmit(&mut self) -> Option<(A, Vec<u8>)> {
        self.transmits.pop_front()
    }

    /// The next completion event.
    pub fn poll_event(&mut self) -> Option<ClientEvent<A>> {
        self.events.pop_front()
    }
}
