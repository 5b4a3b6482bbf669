//! `RequestTable`: the requests waiting for a response, keyed by secure channel request id,
//! with their request handle, purpose and deadline. It answers which request a response (or an
//! abort chunk) belongs to and which requests are past their deadline.

use std::collections::HashMap;
use std::time::Instant;

/// Most requests outstanding at once; more are refused with Bad_TooManyOperations.
pub const MAX_OUTSTANDING_REQUESTS: usize = 4096;

/// Why a request was sent: the connection's own steps, or the application's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestPurpose {
    /// OpenSecureChannel (Issue).
    OpenChannel,
    /// OpenSecureChannel (Renew).
    RenewChannel,
    /// CreateSession.
    CreateSession,
    /// ActivateSession.
    ActivateSession,
    /// CloseSession during [`close`](super::ClientConnection::close).
    CloseSession,
    /// CloseSession of a session that could not be re-activated after a reconnect and might
    /// still exist on the server; its answer is ignored.
    CloseStaleSession,
    /// A request of the application.
    Application,
}

/// One outstanding request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRequest {
    /// The handle in the RequestHeader (and returned by `send`).
    pub handle: u32,
    /// Why it was sent.
    pub purpose: RequestPurpose,
    /// When it fails with Bad_Timeout.
    pub deadline: Instant,
}

/// Outstanding requests by request id.
#[derive(Debug, Default)]
pub struct RequestTable {
    pending: HashMap<u32, PendingRequest>,
}

impl RequestTable {
    /// Number of outstanding requests.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// True when nothing is outstanding.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// True when another request would exceed [`MAX_OUTSTANDING_REQUESTS`].
    pub fn is_full(&self) -> bool {
        self.pending.len() >= MAX_OUTSTANDING_REQUESTS
    }

    /// Records a request sent with `request_id`.
    pub fn insert(&mut self, request_id: u32, request: PendingRequest) {
        self.pending.insert(request_id, request);
    }

    /// Removes and returns the request a response with `request_id` answers.
    pub fn take(&mut self, request_id: u32) -> Option<PendingRequest> {
        self.pending.remove(&request_id)
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().map(|request| request.deadline).min()
    }

    /// Removes and returns the requests whose deadline is at or before `now`, oldest first.
    pub fn take_expired(&mut self, now: Instant) -> Vec<PendingRequest> {
        let mut expired: Vec<(u32, PendingRequest)> = self
            .pending
            .iter()
            .filter(|(_, request)| request.deadline <= now)
            .map(|(id, request)| (*id, *request))
            .collect();
        expired.sort_by_key(|(id, request)| (request.deadline, *id));
        for (id, _) in &expired {
            self.pending.remove(id);
        }
        expired.into_iter().map(|(_, request)| request).collect()
    }

    /// Removes and returns every request (the connection closed).
    pub fn drain(&mut self) -> Vec<PendingRequest> {
        let mut all: Vec<(u32, PendingRequest)> = self.pending.drain().collect();
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, request)| request).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn expiry_in_deadline_order() {
        let start = Instant::now();
        let mut table = RequestTable::default();
        for (id, seconds) in [(1, 3), (2, 1), (3, 2)] {
            table.insert(
                id,
                PendingRequest {
                    handle: id * 10,
                    purpose: RequestPurpose::Application,
                    deadline: start + Duration::from_secs(seconds),
                },
            );
        }
        assert_eq!(table.next_deadline(), Some(start + Duration::from_secs(1)));
        let expired = table.take_expired(start + Duration::from_secs(2));
        assert_eq!(
            expired.iter().map(|r| r.handle).collect::<Vec<_>>(),
            [20, 30]
        );
        assert_eq!(table.len(), 1);
        assert_eq!(table.take(1).map(|r| r.handle), Some(10));
        assert!(table.take(1).is_none());
        assert!(table.is_empty());
    }
}
