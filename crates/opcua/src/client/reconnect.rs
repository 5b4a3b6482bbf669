//! The sans-IO reconnect policy of a client: when to try again ([`Backoff`]), which failures
//! mean the connection is gone ([`is_connection_lost`]) and which mean the session is gone
//! ([`session_is_gone`]), and what a reconnect carries over to the new channel
//! ([`ResumeSession`]).
//!
//! Nothing here reads the clock or sleeps: the driver passes `now` in and gets instants (the
//! next attempt's deadline) out, so the whole policy is tested without a runtime.
//!
//! The order a reconnect follows (OPC 10000-4 §5.6.3.1 and §6.7 "Re-establishing
//! connections"): open a new connection and secure channel, call ActivateSession with the
//! EXISTING authentication token (the session moves to the new channel), and only when the
//! server answers that the session is gone create a new one. One attempt is in flight at a
//! time per client: the driver owns one [`Backoff`] and runs attempts one after another.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use buildwire_opcua::client::reconnect::{Backoff, BackoffConfig};
//!
//! let config = BackoffConfig {
//!     initial_delay: Duration::from_millis(100),
//!     max_delay: Duration::from_secs(5),
//!     multiplier: 2,
//!     jitter_percent: 0,
//! };
//! let mut backoff = Backoff::new(config, 7);
//! let now = Instant::now();
//! let first = backoff.next_attempt(now);
//! assert_eq!((first.attempt, first.delay), (1, Duration::from_millis(100)));
//! assert_eq!(first.at, now + Duration::from_millis(100));
//! assert_eq!(backoff.next_attempt(now).delay, Duration::from_millis(200));
//! backoff.reset();
//! assert_eq!(backoff.next_attempt(now).attempt, 1);
//! ```

use std::time::{Duration, Instant};

use crate::encoding::NodeId;
use crate::services::EndpointDescription;
use crate::types::StatusCode;

/// Default delay before the first reconnect attempt.
pub const DEFAULT_INITIAL_DELAY: Duration = Duration::from_millis(100);
/// Default longest delay between attempts.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(10);
/// Default factor between one delay and the next.
pub const DEFAULT_MULTIPLIER: u32 = 2;
/// Default jitter: each delay is shortened by a random share of up to this many percent, so
/// that clients that lost the same server do not all come back in the same millisecond.
pub const DEFAULT_JITTER_PERCENT: u32 = 20;
/// Longest delay ever chosen, whatever the configuration says (keeps `now + delay` finite).
pub const MAX_BACKOFF_DELAY: Duration = Duration::from_secs(24 * 3600);

/// Exponential backoff with jitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackoffConfig {
    /// Delay before the first attempt.
    pub initial_delay: Duration,
    /// Longest delay between attempts.
    pub max_delay: Duration,
    /// Factor between one delay and the next (1 keeps it constant).
    pub multiplier: u32,
    /// Up to this share (0..=100 %) of each delay is taken off at random.
    pub jitter_percent: u32,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            initial_delay: DEFAULT_INITIAL_DELAY,
            max_delay: DEFAULT_MAX_DELAY,
            multiplier: DEFAULT_MULTIPLIER,
            jitter_percent: DEFAULT_JITTER_PERCENT,
        }
    }
}

/// The next reconnect attempt: its number (from 1), the delay chosen and when it is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first attempt after a loss.
    pub attempt: u32,
    /// The delay before it.
    pub delay: Duration,
    /// `now + delay`.
    pub at: Instant,
}

/// The backoff state of one client: the number of failed attempts and a jitter source.
#[derive(Clone, Debug)]
pub struct Backoff {
    config: BackoffConfig,
    attempts: u32,
    state: u64,
}

impl Backoff {
    /// A backoff with no failed attempt yet; `seed` feeds the jitter (any value).
    pub fn new(config: BackoffConfig, seed: u64) -> Self {
        Self {
            config,
            attempts: 0,
            state: (seed ^ 0x9E37_79B9_7F4A_7C15).max(1),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BackoffConfig {
        &self.config
    }

    /// Attempts made since the last [`reset`](Self::reset).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Starts over after a successful reconnect.
    pub fn reset(&mut self) {
        self.attempts = 0;
    }

    /// Counts one more attempt and says when it is due: `initial × multiplierⁿ`, capped at
    /// `max_delay`, minus up to `jitter_percent` of it.
    pub fn next_attempt(&mut self, now: Instant) -> Attempt {
        let exponent = self.attempts;
        self.attempts = self.attempts.saturating_add(1);
        let max = self
            .config
            .max_delay
            .max(self.config.initial_delay)
            .min(MAX_BACKOFF_DELAY);
        let mut delay = self.config.initial_delay.min(max);
        for _ in 0..exponent {
            delay = delay.saturating_mul(self.config.multiplier.max(1));
            if delay >= max {
                delay = max;
                break;
            }
        }
        let jitter = self.config.jitter_percent.min(100);
        if jitter > 0 {
            // A share in 0..=jitter percent, at a resolution of 1/1000 percent.
            let share = self.random() % (u64::from(jitter) * 1000 + 1);
            let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
            let cut = u128::from(nanos) * u128::from(share) / 100_000;
            delay = delay.saturating_sub(Duration::from_nanos(u64::try_from(cut).unwrap_or(0)));
        }
        Attempt {
            attempt: self.attempts,
            delay,
            at: now + delay,
        }
    }

    /// xorshift64*: jitter needs spread, not secrecy.
    fn random(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// True when a failure means the connection (socket or secure channel) is gone and a
/// reconnect may help; false for answers of a working server (a bad node id, access denied,
/// Bad_Timeout of one request...).
pub fn is_connection_lost(status: StatusCode) -> bool {
    [
        StatusCode::BAD_CONNECTION_CLOSED,
        StatusCode::BAD_COMMUNICATION_ERROR,
        StatusCode::BAD_NOT_CONNECTED,
        StatusCode::BAD_SECURE_CHANNEL_CLOSED,
        StatusCode::BAD_SECURE_CHANNEL_ID_INVALID,
        StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
        StatusCode::BAD_SERVER_NOT_CONNECTED,
        StatusCode::BAD_SERVER_HALTED,
        StatusCode::BAD_SHUTDOWN,
        StatusCode::BAD_SESSION_ID_INVALID,
        StatusCode::BAD_SESSION_CLOSED,
    ]
    .contains(&status)
}

/// True when the server says the session no longer exists, so that a new one must be
/// created (after a server restart, or once the session timed out). Bad_SessionNotActivated
/// counts too: a session that was never activated cannot be taken over on a new channel.
pub fn session_is_gone(status: StatusCode) -> bool {
    [
        StatusCode::BAD_SESSION_ID_INVALID,
        StatusCode::BAD_SESSION_CLOSED,
        StatusCode::BAD_SESSION_NOT_ACTIVATED,
    ]
    .contains(&status)
}

/// What a new connection takes over from the old one: the session to re-activate.
#[derive(Clone, Debug, PartialEq)]
pub struct ResumeSession {
    /// The session id from CreateSession.
    pub session_id: NodeId,
    /// The authentication token ActivateSession is sent with.
    pub authentication_token: NodeId,
    /// The endpoints from CreateSession (the identity token's policy id comes from them).
    pub server_endpoints: Vec<EndpointDescription>,
    /// The server's MaxRequestMessageSize from CreateSession.
    pub max_request_message_size: usize,
    /// The last server nonce (CreateSession's or the latest ActivateSession's): a secured
    /// re-activation signs it.
    pub server_nonce: Vec<u8>,
}

/// How a connection reached its active session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionOutcome {
    /// A new session was created and activated.
    Created,
    /// The existing session was re-activated on the new channel.
    Reactivated,
    /// The old session was gone (the server said so) and a new one was created.
    Recreated,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(jitter_percent: u32) -> BackoffConfig {
        BackoffConfig {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            multiplier: 2,
            jitter_percent,
        }
    }

    #[test]
    fn doubles_up_to_the_cap() {
        let mut backoff = Backoff::new(config(0), 1);
        let now = Instant::now();
        let delays: Vec<u64> = (0..7)
            .map(|_| backoff.next_attempt(now).delay.as_millis() as u64)
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000, 1000]);
        assert_eq!(backoff.attempts(), 7);
    }

    #[test]
    fn jitter_only_shortens_within_its_share() {
        let mut backoff = Backoff::new(config(50), 42);
        let now = Instant::now();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            backoff.reset();
            let attempt = backoff.next_attempt(now);
            assert!(attempt.delay <= Duration::from_millis(100));
            assert!(attempt.delay >= Duration::from_millis(50));
            assert_eq!(attempt.at, now + attempt.delay);
            seen.insert(attempt.delay);
        }
        // Jitter spreads the delays.
        assert!(seen.len() > 50, "only {} distinct delays", seen.len());
    }

    #[test]
    fn different_seeds_spread_clients_apart() {
        let now = Instant::now();
        let a = Backoff::new(config(20), 1).next_attempt(now).delay;
        let b = Backoff::new(config(20), 2).next_attempt(now).delay;
        assert_ne!(a, b);
    }

    #[test]
    fn huge_exponents_saturate() {
        let mut backoff = Backoff::new(
            BackoffConfig {
                multiplier: 1000,
                max_delay: Duration::MAX,
                ..config(0)
            },
            3,
        );
        let now = Instant::now();
        for _ in 0..20 {
            backoff.next_attempt(now);
        }
        // Saturates at the hard cap instead of overflowing.
        assert_eq!(backoff.next_attempt(now).delay, MAX_BACKOFF_DELAY);
    }

    #[test]
    fn classifies_failures() {
        assert!(is_connection_lost(StatusCode::BAD_CONNECTION_CLOSED));
        assert!(is_connection_lost(StatusCode::BAD_COMMUNICATION_ERROR));
        assert!(!is_connection_lost(StatusCode::BAD_NODE_ID_UNKNOWN));
        assert!(!is_connection_lost(StatusCode::BAD_TIMEOUT));
        assert!(session_is_gone(StatusCode::BAD_SESSION_ID_INVALID));
        assert!(session_is_gone(StatusCode::BAD_SESSION_CLOSED));
        assert!(!session_is_gone(StatusCode::BAD_USER_ACCESS_DENIED));
    }
}
