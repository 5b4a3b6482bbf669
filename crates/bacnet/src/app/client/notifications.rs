//! COV notifications arriving at a [`ClientCore`]: unconfirmed ones are queued as they
//! come; confirmed ones go through a server TSM of the client's own (so that retries are
//! recognised as duplicates and long notifications may come segmented) and are answered
//! with a SimpleACK once decoded. Other confirmed services are rejected with
//! `unrecognized-service`: a client executes no other.

use std::collections::VecDeque;
use std::time::Instant;

use super::{ClientCore, Destination, PeerAddress, Transmit};
use crate::apdu::ConfirmedServiceChoice;
use crate::encoding::Reader;
use crate::enums::RejectReason;
use crate::network::LinkAddress;
use crate::network::npdu::{DEFAULT_HOP_COUNT, NetworkPriority, Npdu, NpduBody};
use crate::services::{ConfirmedRequest, CovNotificationRequest, reject_reason_for};
use crate::tsm::{Response, ServerEvent, ServerTsm, TsmConfig};

/// Most notifications kept until the application takes them; the oldest are dropped past
/// this (and counted).
pub const MAX_QUEUED_NOTIFICATIONS: usize = 4096;

/// A COV notification received.
#[derive(Debug, Clone, PartialEq)]
pub struct CovNotification<A = std::net::SocketAddrV4> {
    /// The device that sent it.
    pub from: PeerAddress<A>,
    /// True for a ConfirmedCOVNotification (already acknowledged).
    pub confirmed: bool,
    /// Its parameters.
    pub request: CovNotificationRequest,
}

/// The notification side of a client core.
#[derive(Debug)]
pub(super) struct Inbox<A> {
    responder: ServerTsm<PeerAddress<A>>,
    queue: VecDeque<CovNotification<A>>,
    dropped: u64,
}

impl<A: LinkAddress> Inbox<A> {
    pub(super) fn new(config: &TsmConfig) -> Self {
        Self {
            responder: ServerTsm::new(config.clone()),
            queue: VecDeque::new(),
            dropped: 0,
        }
    }
}

impl<A: LinkAddress> ClientCore<A> {
    /// The next COV notification received.
    pub fn poll_notification(&mut self) -> Option<CovNotification<A>> {
        self.inbox.queue.pop_front()
    }

    /// Notifications dropped because nobody took them.
    pub fn dropped_notifications(&self) -> u64 {
        self.inbox.dropped
    }

    fn push_notification(&mut self, notification: CovNotification<A>) {
        if self.inbox.queue.len() >= MAX_QUEUED_NOTIFICATIONS {
            self.inbox.queue.pop_front();
            self.inbox.dropped += 1;
        }
        self.inbox.queue.push_back(notification);
    }

    /// An UnconfirmedCOVNotification.
    pub(super) fn unconfirmed_notification(
        &mut self,
        from: PeerAddress<A>,
        request: CovNotificationRequest,
    ) {
        self.push_notification(CovNotification {
            from,
            confirmed: false,
            request,
        });
    }

    /// A confirmed request (or a segment-ack / abort of one) from a device.
    pub(super) fn inbox_datagram(&mut self, now: Instant, from: PeerAddress<A>, apdu: &[u8]) {
        self.inbox.responder.handle_datagram(now, from, apdu);
        self.drain_inbox(now);
    }

    /// The responder's deadlines.
    pub(super) fn inbox_timeout(&self) -> Option<Instant> {
        self.inbox.responder.poll_timeout()
    }

    /// Handles the responder's deadlines.
    pub(super) fn inbox_handle_timeout(&mut self, now: Instant) {
        self.inbox.responder.handle_timeout(now);
        self.drain_inbox(now);
    }

    fn drain_inbox(&mut self, now: Instant) {
        while let Some(event) = self.inbox.responder.poll_event() {
            let ServerEvent::Request {
                peer,
                invoke_id,
                service,
                payload,
                ..
            } = event
            else {
                continue;
            };
            let response = if service == ConfirmedServiceChoice::ConfirmedCovNotification {
                match ConfirmedRequest::decode(service, &mut Reader::new(&payload)) {
                    Ok(ConfirmedRequest::ConfirmedCovNotification(request)) => {
                        self.push_notification(CovNotification {
                            from: peer,
                            confirmed: true,
                            request,
                        });
                        Response::SimpleAck
                    }
                    Ok(_) => Response::Reject(RejectReason::UnrecognizedService),
                    Err(error) => Response::Reject(reject_reason_for(&error)),
                }
            } else {
                Response::Reject(RejectReason::UnrecognizedService)
            };
            // Delivered just now: the transaction is known to the responder.
            let _ = self.inbox.responder.respond(now, peer, invoke_id, response);
        }
        while let Some((peer, apdu)) = self.inbox.responder.poll_transmit() {
            let mut npdu = Vec::with_capacity(apdu.len() + 24);
            Npdu {
                destination: peer.remote,
                source: None,
                hop_count: DEFAULT_HOP_COUNT,
                expecting_reply: false,
                priority: NetworkPriority::Normal,
                body: NpduBody::Apdu(&apdu),
            }
            .encode(&mut npdu);
            self.transmits.push_back(Transmit {
                destination: Destination::Unicast(peer.link),
                npdu,
            });
        }
    }
}
