//! The foreign-device side of Annex J.5.2 / U.4.3: register with a BBMD, re-register before
//! the time-to-live runs out (at half of it), retry when no BVLC-Result comes, and back off
//! after a NAK. Sans-IO: `handle_timeout(now)` says when to send a Register-Foreign-Device;
//! the link encodes and sends it.

use std::time::{Duration, Instant};

/// How long to wait for the BBMD's BVLC-Result before registering again.
pub const RESULT_TIMEOUT: Duration = Duration::from_secs(3);
/// Wait after a NAK before trying again.
pub const NAK_BACKOFF: Duration = Duration::from_secs(30);

/// Where the registration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistrationState {
    /// Sent, no answer yet.
    Registering,
    /// The BBMD accepted; the registration is renewed at `renew_at`.
    Registered {
        /// When the BBMD accepted the last registration.
        since: Instant,
    },
    /// The BBMD refused (NAK); retried after a back-off.
    Refused,
}

/// The registration state machine of a foreign device.
#[derive(Debug, Clone)]
pub struct ForeignRegistration {
    time_to_live: u16,
    state: RegistrationState,
    next: Instant,
    sent: u64,
    accepted: u64,
}

impl ForeignRegistration {
    /// Starts registering at `now` for `time_to_live` seconds (at least 1).
    pub fn new(now: Instant, time_to_live: u16) -> Self {
        Self {
            time_to_live: time_to_live.max(1),
            state: RegistrationState::Registering,
            next: now,
            sent: 0,
            accepted: 0,
        }
    }

    /// The time-to-live asked for.
    pub fn time_to_live(&self) -> u16 {
        self.time_to_live
    }

    /// The current state.
    pub fn state(&self) -> RegistrationState {
        self.state
    }

    /// True while registered.
    pub fn is_registered(&self) -> bool {
        matches!(self.state, RegistrationState::Registered { .. })
    }

    /// Register-Foreign-Device messages sent and accepted so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.sent, self.accepted)
    }

    fn renew_interval(&self) -> Duration {
        Duration::from_secs(u64::from(self.time_to_live / 2).max(1))
    }

    /// True when a Register-Foreign-Device is due at `now` (the caller sends it).
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        self.sent += 1;
        if !self.is_registered() {
            self.state = RegistrationState::Registering;
        }
        // Until the result comes, try again after the result timeout (or sooner when the
        // time-to-live is that short).
        self.next = now + RESULT_TIMEOUT.min(self.renew_interval());
        true
    }

    /// The BBMD's BVLC-Result for a registration: success or NAK.
    pub fn handle_result(&mut self, now: Instant, success: bool) {
        if success {
            self.accepted += 1;
            self.state = RegistrationState::Registered { since: now };
            self.next = now + self.renew_interval();
        } else {
            self.state = RegistrationState::Refused;
            self.next = now + NAK_BACKOFF;
        }
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Instant {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_renews_at_half_ttl_and_retries() {
        let t0 = Instant::now();
        let mut fd = ForeignRegistration::new(t0, 60);
        assert!(fd.handle_timeout(t0));
        assert!(!fd.handle_timeout(t0));
        // No answer: again after the result timeout.
        assert_eq!(fd.poll_timeout(), t0 + RESULT_TIMEOUT);
        let t1 = t0 + RESULT_TIMEOUT;
        assert!(fd.handle_timeout(t1));
        fd.handle_result(t1, true);
        assert!(fd.is_registered());
        assert_eq!(fd.poll_timeout(), t1 + Duration::from_secs(30));
        let t2 = t1 + Duration::from_secs(30);
        assert!(fd.handle_timeout(t2));
        // Still registered while the renewal is under way.
        assert!(fd.is_registered());
        fd.handle_result(t2, false);
        assert_eq!(fd.state(), RegistrationState::Refused);
        assert_eq!(fd.poll_timeout(), t2 + NAK_BACKOFF);
        assert_eq!(fd.counts(), (3, 1));
    }
}
