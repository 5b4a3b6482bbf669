//! The budget of log lines about peers' errors (malformed datagrams, rejects, aborts): at
//! most [`LINES_PER_WINDOW`] lines every [`WINDOW`] for the whole process, so a peer that
//! sends garbage in a loop cannot fill a disk or a supervisor's pipe with our logs. The next
//! line written after a quiet spell says how many were left out (`suppressed`).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Length of one budget window.
pub(crate) const WINDOW: Duration = Duration::from_secs(10);
/// Lines allowed per window.
pub(crate) const LINES_PER_WINDOW: u32 = 20;
/// BACnet/SC connection lines allowed per window: more, since a hub sees every node of a
/// site connect at start-up, and still a bound (10 lines a second) on a flood.
pub(crate) const CONNECTION_LINES_PER_WINDOW: u32 = 100;

struct Budget {
    limit: u32,
    window_start: Option<Instant>,
    lines: u32,
    suppressed: u64,
}

static BUDGET: Mutex<Budget> = Mutex::new(Budget::new(LINES_PER_WINDOW));

/// The budget of the BACnet/SC connection lines of links without a hub or node of their
/// own (see [`LineBudget`]).
static CONNECTION_BUDGET: LineBudget = LineBudget::new(CONNECTION_LINES_PER_WINDOW);

/// A budget of log lines of one service (a BACnet/SC hub, a node): connected, disconnected,
/// refused. Each service has its own, so that a flood of connections to one neither
/// silences the lines about peers' errors nor those of another service in the process.
pub(crate) struct LineBudget(Mutex<Budget>);

impl LineBudget {
    /// A budget of `limit` lines every [`WINDOW`].
    pub(crate) const fn new(limit: u32) -> Self {
        Self(Mutex::new(Budget::new(limit)))
    }

    /// Like [`admit`], against this budget.
    pub(crate) fn admit(&self) -> Option<u64> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(Instant::now())
    }
}

impl Budget {
    const fn new(limit: u32) -> Self {
        Self {
            limit,
            window_start: None,
            lines: 0,
            suppressed: 0,
        }
    }

    fn admit(&mut self, now: Instant) -> Option<u64> {
        if self
            .window_start
            .is_none_or(|start| now.saturating_duration_since(start) >= WINDOW)
        {
            self.window_start = Some(now);
            self.lines = 0;
        }
        if self.lines < self.limit {
            self.lines += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

/// Whether a line about a peer's error may be written now: `Some(n)` with the number of
/// lines left out since the last one written, `None` when the budget is spent.
pub(crate) fn admit() -> Option<u64> {
    BUDGET
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(Instant::now())
}

/// [`admit`] for a line about a BACnet/SC link outside a hub's or node's own budget.
pub(crate) fn admit_connection() -> Option<u64> {
    CONNECTION_BUDGET.admit()
}

/// The log lines of a B/IP or B/IPv6 link about one datagram from `peer`: whether it was
/// malformed (dropped) and whether it was answered with a NAK, each within the budget.
/// `link` names the data link (`bip`, `bip6`).
pub(crate) fn bvll_datagram(
    link: &'static str,
    peer: &dyn std::fmt::Display,
    malformed: bool,
    nak: bool,
) {
    if malformed && let Some(suppressed) = admit() {
        let what = "malformed BVLL datagram from a peer: dropped";
        tracing::warn!(link, peer = %peer, suppressed, "{what}");
    }
    if nak && let Some(suppressed) = admit() {
        let what = "BVLL request from a peer answered with a NAK";
        tracing::info!(link, peer = %peer, suppressed, "{what}");
    }
}

/// A device's address as the log lines write it: the link address (`127.0.0.1:47808`), and
/// for a routed device its network (`127.0.0.1:47808 network 5`, the router's address first).
pub(crate) fn peer_text<A: std::fmt::Debug>(peer: &crate::app::PeerAddress<A>) -> String {
    match &peer.remote {
        None => format!("{:?}", peer.link),
        Some(remote) => format!("{:?} network {}", peer.link, remote.network),
    }
}

/// Where a datagram goes, as the log lines write it: an address, or `broadcast`.
pub(crate) fn destination_text<A: std::fmt::Debug>(
    destination: &crate::app::Destination<A>,
) -> String {
    match destination {
        crate::app::Destination::Unicast(to) => format!("{to:?}"),
        crate::app::Destination::Broadcast => "broadcast".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Budget, LINES_PER_WINDOW, WINDOW};

    #[test]
    fn the_budget_refills_each_window_and_counts_what_it_left_out() {
        let start = std::time::Instant::now();
        let mut budget = Budget::new(LINES_PER_WINDOW);
        for _ in 0..LINES_PER_WINDOW {
            assert_eq!(budget.admit(start), Some(0));
        }
        assert_eq!(budget.admit(start), None);
        assert_eq!(budget.admit(start + WINDOW / 2), None);
        assert_eq!(budget.admit(start + WINDOW), Some(2));
        assert_eq!(budget.admit(start + WINDOW), Some(0));
    }
}
