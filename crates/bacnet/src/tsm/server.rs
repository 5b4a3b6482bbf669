//! `ServerTsm`: the responding BACnet-user's transaction state machine (Clause 5.4.5).
//!
//! Per transaction the states are SEGMENTED_REQUEST (reassembling a request), AWAIT_RESPONSE
//! (the application is working on it) and SEGMENTED_RESPONSE (sending a ComplexACK window by
//! window). Sent responses are cached for a while so that a repeated request (same peer,
//! same invoke id and the very same request bytes) gets the same answer without running the
//! service twice; a request that reuses an invoke id with different content is new.
//!
//! Every table is bounded: transactions in progress (in total and per peer), cached
//! responses, and the request bytes held for reassembly and duplicate detection. When the
//! byte budget runs out, the oldest cached responses go first; when that is not enough, or
//! the transaction table is full, new requests are aborted with `out-of-resources`.
//!
//! Segmented work has its own, smaller share (issue 30: reads whose answers need segments,
//! from hundreds of source ports and never acknowledged, used to fill the whole table, so
//! that even one-packet requests of other clients were refused). A transaction that
//! reassembles a request or sends an answer in segments counts against
//! `max_segmented_transactions` in total (and at most three quarters of
//! `max_transactions`), `max_segmented_per_host` per source host (IP address, see
//! [`ServerTsm::set_host_of`]) and `max_segmented_per_peer` per peer address (IP and
//! port), and may hold at most three quarters of the request-byte budget. The rest of the
//! table and of the budget stays for unsegmented requests, so a full segmented share never
//! refuses them. Decision: new segmented work that finds
//! its share full gets an Abort `out-of-resources` (the abort reason of a device that
//! lacks the resources for a transaction, Clause 18.9); `buffer-overflow` stays the answer
//! to a message too long for our buffers or the client's max-segments. Segmented
//! transactions end
//! as Clause 5.4.5 has them: a reassembly nobody continues after Tseg × 4
//! (SEGMENTED_REQUEST, Timeout), an answer nobody acknowledges after Tseg ×
//! (Number_Of_APDU_Retries + 1) (SEGMENTED_RESPONSE, FinalTimeout), both silently.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;
use std::net::IpAddr;
use std::time::Instant;

use crate::apdu::service_choice::ConfirmedServiceChoice;
use crate::apdu::{Apdu, MaxApdu, MaxSegments, SegmentInfo};
use crate::encoding::Reader;
use crate::enums::AbortReason;

use super::segment_reassembler::{SegmentOutcome, SegmentReassembler};
use super::segment_sender::{AckOutcome, SegmentSender};
use super::{
    MAX_WINDOW_SIZE, Response, ServerEvent, TsmConfig, TsmStats, after, segment_count,
    segment_limit,
};

/// Header of an unsegmented ComplexACK: type, invoke id, service.
const COMPLEX_ACK_HEADER: usize = 3;
/// Header of a segmented ComplexACK: adds sequence number and window size.
const SEGMENTED_COMPLEX_ACK_HEADER: usize = 5;

/// Why [`ServerTsm::respond`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RespondError {
    /// No request with this peer and invoke id is waiting for an answer (it was never
    /// delivered, was already answered, or was aborted).
    #[error("no request awaiting a response for this peer and invoke id")]
    UnknownTransaction,
}

/// The client's header fields of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RequestInfo {
    service: ConfirmedServiceChoice,
    max_apdu: MaxApdu,
    max_segments: MaxSegments,
    segmented_response_accepted: bool,
}

#[derive(Debug)]
enum ServerState {
    Reassembling(SegmentReassembler),
    AwaitingResponse,
    SendingSegments { sender: SegmentSender, retries: u8 },
}

#[derive(Debug)]
struct ServerTransaction {
    request: RequestInfo,
    /// The whole request APDU (for a segmented one: re-encoded unsegmented once complete).
    fingerprint: Vec<u8>,
    /// Raw first segment of a segmented request, to recognise its repeats.
    first_segment: Option<Vec<u8>>,
    /// Sequence number of the last request segment and the actual window size, to
    /// re-acknowledge repeats of the final window.
    last_segment: Option<(u8, u8)>,
    state: ServerState,
    deadline: Instant,
}

impl ServerTransaction {
    /// Whether it is in a segmented state, counted against the segmented share.
    fn is_segmented(&self) -> bool {
        matches!(
            self.state,
            ServerState::Reassembling(_) | ServerState::SendingSegments { .. }
        )
    }

    /// Request bytes this transaction holds, counted against the byte budget.
    fn held_bytes(&self) -> usize {
        let reassembled = match &self.state {
            ServerState::Reassembling(reassembler) => reassembler.len(),
            _ => 0,
        };
        self.fingerprint.len() + self.first_segment.as_ref().map_or(0, Vec::len) + reassembled
    }
}

#[derive(Debug, Clone)]
enum CachedReply {
    /// An unsegmented response APDU.
    Encoded(Vec<u8>),
    /// A ComplexACK that was sent in segments of this size.
    Segmented {
        payload: Vec<u8>,
        segment_size: usize,
    },
}

#[derive(Debug)]
struct CachedResponse {
    request: RequestInfo,
    fingerprint: Vec<u8>,
    reply: CachedReply,
    expires: Instant,
    generation: u64,
}

/// Server transaction state machine, generic over the peer address `A`.
#[derive(Debug)]
pub struct ServerTsm<A> {
    config: TsmConfig,
    in_progress: HashMap<(A, u8), ServerTransaction>,
    per_peer: HashMap<A, usize>,
    /// Transactions in a segmented state, in total, per peer and per host.
    segmented: usize,
    segmented_per_peer: HashMap<A, usize>,
    segmented_per_host: HashMap<IpAddr, usize>,
    /// The host (IP address) of a peer, for the per-host share; `None`: no host limit.
    host_of: fn(&A) -> Option<IpAddr>,
    cache: HashMap<(A, u8), CachedResponse>,
    /// Cache keys in insertion (= expiry) order, with the generation they were stored at.
    cache_order: VecDeque<((A, u8), u64)>,
    next_generation: u64,
    held_bytes: usize,
    transmits: VecDeque<(A, Vec<u8>)>,
    events: VecDeque<ServerEvent<A>>,
    stats: TsmStats,
}

impl<A: Clone + Eq + Hash + Debug> ServerTsm<A> {
    /// A server with this configuration.
    pub fn new(config: TsmConfig) -> Self {
        Self {
            config,
            in_progress: HashMap::new(),
            per_peer: HashMap::new(),
            segmented: 0,
            segmented_per_peer: HashMap::new(),
            segmented_per_host: HashMap::new(),
            host_of: |_| None,
            cache: HashMap::new(),
            cache_order: VecDeque::new(),
            next_generation: 0,
            held_bytes: 0,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: TsmStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TsmConfig {
        &self.config
    }

    /// Sets how a peer's host (IP address) is found, for `max_segmented_per_host`. Call
    /// it before the first datagram; without it the per-host limit is not applied.
    pub fn set_host_of(&mut self, host_of: fn(&A) -> Option<IpAddr>) {
        self.host_of = host_of;
    }

    /// Transactions in a segmented state (reassembling a request, sending an answer in
    /// segments).
    pub fn segmented_in_progress(&self) -> usize {
        self.segmented
    }

    /// Counters.
    pub fn stats(&self) -> TsmStats {
        self.stats
    }

    /// Transactions in progress (reassembling, awaiting a response, sending segments).
    pub fn in_progress(&self) -> usize {
        self.in_progress.len()
    }

    /// Cached responses.
    pub fn cached_responses(&self) -> usize {
        self.cache.len()
    }

    /// Request bytes held for reassembly and duplicate detection.
    pub fn held_request_bytes(&self) -> usize {
        self.held_bytes
    }

    // ---- table bookkeeping: every insertion and removal goes through these ----

    fn take(&mut self, key: &(A, u8)) -> Option<ServerTransaction> {
        let transaction = self.in_progress.remove(key)?;
        self.held_bytes = self.held_bytes.saturating_sub(transaction.held_bytes());
        decrement(&mut self.per_peer, &key.0);
        if transaction.is_segmented() {
            self.count_segmented(&key.0, false);
        }
        Some(transaction)
    }

    fn put(&mut self, key: (A, u8), transaction: ServerTransaction) {
        self.held_bytes += transaction.held_bytes();
        *self.per_peer.entry(key.0.clone()).or_insert(0) += 1;
        if transaction.is_segmented() {
            self.count_segmented(&key.0, true);
        }
        if let Some(old) = self.in_progress.insert(key.clone(), transaction) {
            // Callers take before they put; keep the counters right regardless.
            self.held_bytes = self.held_bytes.saturating_sub(old.held_bytes());
            decrement(&mut self.per_peer, &key.0);
            if old.is_segmented() {
                self.count_segmented(&key.0, false);
            }
        }
    }

    fn count_segmented(&mut self, peer: &A, add: bool) {
        let host = (self.host_of)(peer);
        if add {
            self.segmented += 1;
            *self.segmented_per_peer.entry(peer.clone()).or_insert(0) += 1;
            if let Some(host) = host {
                *self.segmented_per_host.entry(host).or_insert(0) += 1;
            }
        } else {
            self.segmented = self.segmented.saturating_sub(1);
            decrement(&mut self.segmented_per_peer, peer);
            if let Some(host) = host {
                decrement(&mut self.segmented_per_host, &host);
            }
        }
    }

    /// Room for one more unsegmented transaction. Segmented ones hold at most
    /// [`Self::segmented_cap`] of the table, so they can never crowd these out.
    fn has_room(&self, peer: &A) -> bool {
        self.in_progress.len() < self.config.max_transactions
            && self.per_peer.get(peer).copied().unwrap_or(0) < self.config.max_transactions_per_peer
    }

    /// Room for one more segmented transaction: the whole table, and the segmented share
    /// in total, for this host and for this peer.
    fn has_segmented_room(&self, peer: &A) -> bool {
        let host_count = (self.host_of)(peer)
            .and_then(|host| self.segmented_per_host.get(&host).copied())
            .unwrap_or(0);
        self.in_progress.len() < self.config.max_transactions
            && self.per_peer.get(peer).copied().unwrap_or(0) < self.config.max_transactions_per_peer
            && self.segmented < self.segmented_cap()
            && host_count < self.config.max_segmented_per_host
            && self.segmented_per_peer.get(peer).copied().unwrap_or(0)
                < self.config.max_segmented_per_peer
    }

    /// The segmented share of the table: `max_segmented_transactions`, and never more than
    /// three quarters of `max_transactions`, so that a quarter stays for unsegmented work.
    fn segmented_cap(&self) -> usize {
        self.config
            .max_segmented_transactions
            .min(self.config.max_transactions / 4 * 3)
    }

    /// Like [`Self::make_room_for_bytes`] for a segmented reassembly, which may fill only
    /// three quarters of the byte budget: the rest stays for unsegmented requests.
    fn make_room_for_segmented_bytes(&mut self, extra: usize) -> bool {
        let budget = self.config.max_total_reassembly_bytes / 4 * 3;
        while self.held_bytes + extra > budget {
            if !self.evict_oldest_cached() {
                return false;
            }
        }
        true
    }

    /// Makes room for `extra` more held bytes, dropping the oldest cached responses.
    fn make_room_for_bytes(&mut self, extra: usize) -> bool {
        while self.held_bytes + extra > self.config.max_total_reassembly_bytes {
            if !self.evict_oldest_cached() {
                return false;
            }
        }
        true
    }

    fn remove_cached(&mut self, key: &(A, u8)) -> Option<CachedResponse> {
        let entry = self.cache.remove(key)?;
        self.held_bytes = self.held_bytes.saturating_sub(entry.fingerprint.len());
        Some(entry)
    }

    fn evict_oldest_cached(&mut self) -> bool {
        while let Some((key, generation)) = self.cache_order.pop_front() {
            if self
                .cache
                .get(&key)
                .is_some_and(|e| e.generation == generation)
            {
                self.remove_cached(&key);
                self.stats.cache_evictions += 1;
                return true;
            }
        }
        false
    }

    fn purge_expired(&mut self, now: Instant) {
        while let Some((key, generation)) = self.cache_order.front() {
            match self.cache.get(key) {
                Some(entry) if entry.generation == *generation => {
                    if entry.expires > now {
                        break;
                    }
                    let key = key.clone();
                    self.remove_cached(&key);
                }
                _ => {}
            }
            self.cache_order.pop_front();
        }
    }

    fn cache_response(
        &mut self,
        now: Instant,
        key: (A, u8),
        request: RequestInfo,
        fingerprint: Vec<u8>,
        reply: CachedReply,
    ) {
        self.remove_cached(&key);
        // Decision: answers to reads are not kept. A read has no side effect, so running a
        // repeated one again is harmless, while replaying a kept answer gives stale values to
        // a client that reuses an invoke id for the same read after its answer (invoke ids
        // wrap every 256 requests, within milliseconds for a busy poller). Services with side
        // effects keep their answer, so that a retransmission is not executed twice.
        if self.config.max_cached_responses == 0 || is_side_effect_free(request.service) {
            return;
        }
        while self.cache.len() >= self.config.max_cached_responses {
            if !self.evict_oldest_cached() {
                break;
            }
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        self.cache_order.push_back((key.clone(), generation));
        self.held_bytes += fingerprint.len();
        self.cache.insert(
            key,
            CachedResponse {
                request,
                fingerprint,
                reply,
                expires: after(now, self.config.response_cache_time),
                generation,
            },
        );
        if self.cache_order.len() > 2 * self.config.max_cached_responses + 16 {
            let cache = &self.cache;
            self.cache_order.retain(|(key, generation)| {
                cache.get(key).is_some_and(|e| e.generation == *generation)
            });
        }
    }

    // ---- output helpers ----

    fn send(&mut self, to: &A, apdu: &Apdu<'_>) {
        let mut bytes = Vec::new();
        apdu.encode(&mut bytes);
        self.transmits.push_back((to.clone(), bytes));
    }

    fn send_abort(&mut self, key: &(A, u8), reason: AbortReason) {
        if reason == AbortReason::OutOfResources {
            self.stats.refused_for_resources += 1;
        }
        self.stats.aborts_sent += 1;
        self.send(
            &key.0,
            &Apdu::Abort {
                server: true,
                invoke_id: key.1,
                reason,
            },
        );
    }

    fn send_segment_ack(&mut self, key: &(A, u8), sequence_number: u8, window: u8, negative: bool) {
        self.send(
            &key.0,
            &Apdu::SegmentAck {
                negative,
                server: true,
                invoke_id: key.1,
                sequence_number,
                actual_window_size: window,
            },
        );
    }

    fn send_window(
        &mut self,
        key: &(A, u8),
        service: ConfirmedServiceChoice,
        sender: &SegmentSender,
    ) {
        for (segment, data) in sender.window() {
            let mut bytes = Vec::with_capacity(SEGMENTED_COMPLEX_ACK_HEADER + data.len());
            Apdu::ComplexAck {
                invoke_id: key.1,
                segment: Some(segment),
                service,
                payload: data,
            }
            .encode(&mut bytes);
            self.transmits.push_back((key.0.clone(), bytes));
            self.stats.segments_sent += 1;
        }
    }

    /// Drops a transaction because a different request reuses its invoke id.
    fn supersede(&mut self, key: &(A, u8)) {
        if let Some(old) = self.take(key)
            && matches!(old.state, ServerState::AwaitingResponse)
        {
            self.events.push_back(ServerEvent::Superseded {
                peer: key.0.clone(),
                invoke_id: key.1,
            });
        }
    }

    /// Answers a repeated request from the cache. Returns false (and forgets the cached
    /// entry) when the request differs from the one that was answered.
    fn answer_from_cache(&mut self, now: Instant, key: &(A, u8), fingerprint: &[u8]) -> bool {
        let Some(entry) = self.cache.get(key) else {
            return false;
        };
        if entry.expires <= now || entry.fingerprint != fingerprint {
            self.remove_cached(key);
            return false;
        }
        let reply = entry.reply.clone();
        self.stats.duplicates += 1;
        self.stats.cache_hits += 1;
        match reply {
            CachedReply::Encoded(bytes) => self.transmits.push_back((key.0.clone(), bytes)),
            CachedReply::Segmented {
                payload,
                segment_size,
            } => {
                let Some(entry) = self.remove_cached(key) else {
                    return true;
                };
                if !self.has_segmented_room(&key.0)
                    || !self.make_room_for_bytes(entry.fingerprint.len())
                {
                    self.stats.refused_for_resources += 1;
                    return true;
                }
                let sender = SegmentSender::new(payload, segment_size, self.config.window());
                self.send_window(key, entry.request.service, &sender);
                self.put(
                    key.clone(),
                    ServerTransaction {
                        request: entry.request,
                        fingerprint: entry.fingerprint,
                        first_segment: None,
                        last_segment: None,
                        state: ServerState::SendingSegments { sender, retries: 0 },
                        deadline: after(now, self.config.segment_timeout),
                    },
                );
            }
        }
        true
    }

    // ---- input ----

    /// Handles one APDU received from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: A, apdu_bytes: &[u8]) {
        self.purge_expired(now);
        let apdu = match Apdu::decode(&mut Reader::new(apdu_bytes)) {
            Ok(apdu) => apdu,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        match apdu {
            Apdu::ConfirmedRequest {
                segmented_response_accepted,
                max_segments,
                max_apdu,
                invoke_id,
                segment,
                service,
                payload,
            } => {
                let info = RequestInfo {
                    service,
                    max_apdu,
                    max_segments,
                    segmented_response_accepted,
                };
                let key = (from, invoke_id);
                match segment {
                    None => self.on_request(now, key, info, apdu_bytes, payload),
                    Some(segment) => {
                        self.on_request_segment(now, key, info, apdu_bytes, segment, payload);
                    }
                }
            }
            Apdu::SegmentAck {
                negative,
                server: false,
                invoke_id,
                sequence_number,
                actual_window_size,
            } => self.on_segment_ack(
                now,
                (from, invoke_id),
                sequence_number,
                actual_window_size,
                negative,
            ),
            Apdu::Abort {
                server: false,
                invoke_id,
                reason,
            } => self.on_abort((from, invoke_id), reason),
            _ => self.stats.ignored += 1,
        }
    }

    fn on_request(
        &mut self,
        now: Instant,
        key: (A, u8),
        info: RequestInfo,
        bytes: &[u8],
        payload: &[u8],
    ) {
        if let Some(current) = self.in_progress.get(&key) {
            if current.fingerprint == bytes {
                self.stats.duplicates += 1;
                return;
            }
            self.supersede(&key);
        }
        if self.answer_from_cache(now, &key, bytes) {
            return;
        }
        if !self.has_room(&key.0) || !self.make_room_for_bytes(bytes.len()) {
            self.send_abort(&key, AbortReason::OutOfResources);
            return;
        }
        self.put(
            key.clone(),
            ServerTransaction {
                request: info,
                fingerprint: bytes.to_vec(),
                first_segment: None,
                last_segment: None,
                state: ServerState::AwaitingResponse,
                deadline: after(now, self.config.application_timeout),
            },
        );
        self.deliver(key, info, payload.to_vec());
    }

    fn deliver(&mut self, key: (A, u8), info: RequestInfo, payload: Vec<u8>) {
        self.stats.requests += 1;
        self.events.push_back(ServerEvent::Request {
            peer: key.0,
            invoke_id: key.1,
            service: info.service,
            payload,
            max_apdu: info.max_apdu,
            max_segments: info.max_segments,
            segmented_response_accepted: info.segmented_response_accepted,
        });
    }

    fn on_request_segment(
        &mut self,
        now: Instant,
        key: (A, u8),
        info: RequestInfo,
        bytes: &[u8],
        segment: SegmentInfo,
        data: &[u8],
    ) {
        self.stats.segments_received += 1;
        if let Some(current) = self.in_progress.get(&key) {
            let repeat_of_first = current.first_segment.as_deref() == Some(bytes);
            if matches!(current.state, ServerState::Reassembling(_)) {
                if segment.sequence_number != 0 || repeat_of_first {
                    self.feed_segment(now, key, segment, data);
                    return;
                }
            } else if repeat_of_first {
                self.stats.duplicates += 1;
                return;
            } else if segment.sequence_number != 0 {
                // A repeat of the request's last window: acknowledge its end again.
                if let Some((last, window)) = current.last_segment {
                    self.stats.duplicates += 1;
                    self.send_segment_ack(&key, last, window, false);
                } else {
                    self.stats.ignored += 1;
                }
                return;
            }
            self.supersede(&key);
        }
        if segment.sequence_number != 0 {
            self.stats.ignored += 1;
            return;
        }
        if !self.config.can_receive_segments() {
            self.send_abort(&key, AbortReason::SegmentationNotSupported);
            return;
        }
        if !(1..=MAX_WINDOW_SIZE).contains(&segment.proposed_window_size) {
            self.send_abort(&key, AbortReason::WindowSizeOutOfRange);
            return;
        }
        if !self.has_segmented_room(&key.0) || !self.make_room_for_segmented_bytes(bytes.len()) {
            self.send_abort(&key, AbortReason::OutOfResources);
            return;
        }
        let reassembler = SegmentReassembler::new(
            segment.proposed_window_size,
            self.config.window(),
            self.config.segment_limit(),
            self.config.max_reassembly_bytes,
        );
        self.put(
            key.clone(),
            ServerTransaction {
                request: info,
                fingerprint: Vec::new(),
                first_segment: Some(bytes.to_vec()),
                last_segment: None,
                state: ServerState::Reassembling(reassembler),
                deadline: after(now, self.config.segment_wait()),
            },
        );
        self.feed_segment(now, key, segment, data);
    }

    fn feed_segment(&mut self, now: Instant, key: (A, u8), segment: SegmentInfo, data: &[u8]) {
        let Some(mut transaction) = self.take(&key) else {
            return;
        };
        if !self.make_room_for_segmented_bytes(transaction.held_bytes() + data.len()) {
            self.send_abort(&key, AbortReason::OutOfResources);
            return;
        }
        let ServerState::Reassembling(reassembler) = &mut transaction.state else {
            self.put(key, transaction);
            return;
        };
        let outcome = reassembler.accept(&segment, data);
        let window = reassembler.window();
        let wait_deadline = after(now, self.config.segment_wait());
        match outcome {
            SegmentOutcome::Wait => {
                transaction.deadline = wait_deadline;
                self.put(key, transaction);
            }
            SegmentOutcome::Ack {
                sequence_number,
                negative,
            } => {
                if !negative && sequence_number != segment.sequence_number {
                    self.stats.duplicates += 1;
                }
                transaction.deadline = wait_deadline;
                self.put(key.clone(), transaction);
                self.send_segment_ack(&key, sequence_number, window, negative);
            }
            SegmentOutcome::Overflow => self.send_abort(&key, AbortReason::BufferOverflow),
            SegmentOutcome::Complete { sequence_number } => {
                self.send_segment_ack(&key, sequence_number, window, false);
                let state =
                    std::mem::replace(&mut transaction.state, ServerState::AwaitingResponse);
                let ServerState::Reassembling(reassembler) = state else {
                    return;
                };
                let payload = reassembler.into_payload();
                let info = transaction.request;
                let mut fingerprint = Vec::with_capacity(payload.len() + 4);
                Apdu::ConfirmedRequest {
                    segmented_response_accepted: info.segmented_response_accepted,
                    max_segments: info.max_segments,
                    max_apdu: info.max_apdu,
                    invoke_id: key.1,
                    segment: None,
                    service: info.service,
                    payload: &payload,
                }
                .encode(&mut fingerprint);
                if self.answer_from_cache(now, &key, &fingerprint) {
                    return;
                }
                transaction.fingerprint = fingerprint;
                transaction.last_segment = Some((sequence_number, window));
                transaction.deadline = after(now, self.config.application_timeout);
                if !self.make_room_for_bytes(transaction.held_bytes()) {
                    self.send_abort(&key, AbortReason::OutOfResources);
                    return;
                }
                self.put(key.clone(), transaction);
                self.deliver(key, info, payload);
            }
        }
    }

    fn on_segment_ack(
        &mut self,
        now: Instant,
        key: (A, u8),
        sequence_number: u8,
        actual_window_size: u8,
        negative: bool,
    ) {
        let Some(mut transaction) = self.take(&key) else {
            self.stats.ignored += 1;
            return;
        };
        let ServerState::SendingSegments { sender, retries } = &mut transaction.state else {
            self.put(key, transaction);
            self.stats.ignored += 1;
            return;
        };
        match sender.handle_ack(sequence_number, actual_window_size, negative) {
            AckOutcome::Progress => {
                *retries = 0;
                let sender = sender.clone();
                transaction.deadline = after(now, self.config.segment_timeout);
                self.send_window(&key, transaction.request.service, &sender);
                self.put(key, transaction);
            }
            AckOutcome::ResendWindow => {
                let sender = sender.clone();
                self.send_window(&key, transaction.request.service, &sender);
                self.put(key, transaction);
            }
            AckOutcome::Ignored => {
                self.stats.duplicates += 1;
                self.put(key, transaction);
            }
            AckOutcome::Finished => {
                self.stats.completed += 1;
                let segment_size = sender.segment_size();
                let payload = sender.take_payload();
                self.cache_response(
                    now,
                    key,
                    transaction.request,
                    transaction.fingerprint,
                    CachedReply::Segmented {
                        payload,
                        segment_size,
                    },
                );
            }
        }
    }

    fn on_abort(&mut self, key: (A, u8), reason: AbortReason) {
        let Some(transaction) = self.take(&key) else {
            self.stats.ignored += 1;
            return;
        };
        self.stats.aborts_received += 1;
        if matches!(transaction.state, ServerState::AwaitingResponse) {
            self.events.push_back(ServerEvent::Aborted {
                peer: key.0,
                invoke_id: key.1,
                reason,
                by_client: true,
            });
        }
    }

    /// Answers a delivered request. A ComplexACK too long for the client is sent in
    /// segments when the client accepts them (within its max-segments), otherwise the
    /// client gets an Abort (`segmentation-not-supported`, or `buffer-overflow` when even
    /// segmented it would not fit).
    pub fn respond(
        &mut self,
        now: Instant,
        peer: A,
        invoke_id: u8,
        response: Response,
    ) -> Result<(), RespondError> {
        let key = (peer, invoke_id);
        match self.in_progress.get(&key) {
            Some(ServerTransaction {
                state: ServerState::AwaitingResponse,
                ..
            }) => {}
            _ => return Err(RespondError::UnknownTransaction),
        }
        let Some(transaction) = self.take(&key) else {
            return Err(RespondError::UnknownTransaction);
        };
        let info = transaction.request;
        let apdu = |bytes: &mut Vec<u8>, apdu: Apdu<'_>| apdu.encode(bytes);
        let mut bytes = Vec::new();
        match response {
            Response::SimpleAck => apdu(
                &mut bytes,
                Apdu::SimpleAck {
                    invoke_id,
                    service: info.service,
                },
            ),
            Response::Error(payload) => apdu(
                &mut bytes,
                Apdu::Error {
                    invoke_id,
                    service: info.service,
                    payload: &payload,
                },
            ),
            Response::Reject(reason) => apdu(&mut bytes, Apdu::Reject { invoke_id, reason }),
            Response::Abort(reason) => {
                self.stats.aborts_sent += 1;
                apdu(
                    &mut bytes,
                    Apdu::Abort {
                        server: true,
                        invoke_id,
                        reason,
                    },
                );
            }
            Response::ComplexAck(payload) => {
                let limit = usize::from(info.max_apdu.octets().min(self.config.max_apdu.octets()));
                if COMPLEX_ACK_HEADER + payload.len() <= limit {
                    apdu(
                        &mut bytes,
                        Apdu::ComplexAck {
                            invoke_id,
                            segment: None,
                            service: info.service,
                            payload: &payload,
                        },
                    );
                } else {
                    let segment_size = limit - SEGMENTED_COMPLEX_ACK_HEADER;
                    let needed = segment_count(payload.len(), segment_size);
                    let refusal = if !info.segmented_response_accepted
                        || !self.config.can_transmit_segments()
                    {
                        Some(AbortReason::SegmentationNotSupported)
                    } else if needed > segment_limit(info.max_segments) as usize {
                        Some(AbortReason::BufferOverflow)
                    } else if !self.has_segmented_room(&key.0) {
                        // The segmented share is full (see the module documentation).
                        Some(AbortReason::OutOfResources)
                    } else {
                        None
                    };
                    match refusal {
                        Some(reason) => {
                            if reason == AbortReason::OutOfResources {
                                self.stats.refused_for_resources += 1;
                            }
                            self.stats.aborts_sent += 1;
                            apdu(
                                &mut bytes,
                                Apdu::Abort {
                                    server: true,
                                    invoke_id,
                                    reason,
                                },
                            );
                        }
                        None => {
                            let sender =
                                SegmentSender::new(payload, segment_size, self.config.window());
                            self.send_window(&key, info.service, &sender);
                            self.put(
                                key,
                                ServerTransaction {
                                    state: ServerState::SendingSegments { sender, retries: 0 },
                                    deadline: after(now, self.config.segment_timeout),
                                    ..transaction
                                },
                            );
                            return Ok(());
                        }
                    }
                }
            }
        }
        self.stats.completed += 1;
        self.transmits.push_back((key.0.clone(), bytes.clone()));
        self.cache_response(
            now,
            key,
            info,
            transaction.fingerprint,
            CachedReply::Encoded(bytes),
        );
        Ok(())
    }

    /// Handles every deadline at or before `now`: window retransmissions, abandoned
    /// reassemblies, overdue application answers and expired cached responses.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.purge_expired(now);
        let due: Vec<(A, u8)> = self
            .in_progress
            .iter()
            .filter(|(_, t)| t.deadline <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            let Some(mut transaction) = self.take(&key) else {
                continue;
            };
            let reason = match &mut transaction.state {
                ServerState::Reassembling(_) => None,
                ServerState::AwaitingResponse => Some(AbortReason::ApplicationExceededReplyTime),
                ServerState::SendingSegments { sender, retries } => {
                    if *retries < self.config.retries {
                        *retries += 1;
                        sender.note_timeout_resend();
                        let sender = sender.clone();
                        self.stats.retries += 1;
                        self.send_window(&key, transaction.request.service, &sender);
                        transaction.deadline = after(now, self.config.segment_timeout);
                        self.put(key, transaction);
                        continue;
                    }
                    Some(AbortReason::TsmTimeout)
                }
            };
            self.stats.timeouts += 1;
            if let Some(reason) = reason {
                self.events.push_back(ServerEvent::Aborted {
                    peer: key.0,
                    invoke_id: key.1,
                    reason,
                    by_client: false,
                });
            }
        }
    }

    /// The next deadline: a transaction timer or the expiry of the oldest cached response.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let transactions = self.in_progress.values().map(|t| t.deadline).min();
        let cache = self.cache_order.iter().find_map(|(key, generation)| {
            self.cache
                .get(key)
                .filter(|e| e.generation == *generation)
                .map(|e| e.expires)
        });
        match (transactions, cache) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next APDU to send and its destination.
    pub fn poll_transmit(&mut self) -> Option<(A, Vec<u8>)> {
        self.transmits.pop_front()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ServerEvent<A>> {
        self.events.pop_front()
    }
}

/// Counts one down, forgetting the key at zero.
fn decrement<K: Eq + Hash>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(count) = counts.get_mut(key) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            counts.remove(key);
        }
    }
}

/// Confirmed services that only read: their repeated requests are run again rather than
/// answered from the response cache.
fn is_side_effect_free(service: ConfirmedServiceChoice) -> bool {
    matches!(
        service,
        ConfirmedServiceChoice::ReadProperty
            | ConfirmedServiceChoice::ReadPropertyMultiple
            | ConfirmedServiceChoice::ReadPropertyConditional
            | ConfirmedServiceChoice::ReadRange
            | ConfirmedServiceChoice::AtomicReadFile
    )
}
