//! The server side of one secure channel under SecurityPolicy None (OPC 10000-4 §5.5,
//! OPC 10000-6 §6.7): security tokens with their lifetimes, renewal, and the sequence numbers
//! received and sent.
//!
//! Token rules: a token is valid for 125 % of its revised lifetime; after a Renew the previous
//! token stays accepted until the client first uses the new one (or it expires).
//! Sequence rules (OPC 10000-6 §6.7.2.4): each received chunk carries the previous number plus
//! one; once the number exceeds `u32::MAX - 1024` it may wrap to any value below 1024.

use std::time::{Duration, Instant};

use super::config::TOKEN_LIFETIME_RANGE_MS;
use crate::encoding::DateTime;
use crate::services::ChannelSecurityToken;
use crate::types::StatusCode;

/// Numbers above this may wrap around (OPC 10000-6 §6.7.2.4).
pub const SEQUENCE_WRAP_THRESHOLD: u32 = u32::MAX - 1024;
/// After wrapping, the next number is below this.
pub const SEQUENCE_WRAP_LIMIT: u32 = 1024;

/// Checks received sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveSequence {
    last: Option<u32>,
}

impl ReceiveSequence {
    /// Accepts `number` if it follows the last one (any first number is accepted), else
    /// Bad_SequenceNumberInvalid.
    pub fn accept(&mut self, number: u32) -> Result<(), StatusCode> {
        let ok = match self.last {
            None => true,
            Some(last) if last >= SEQUENCE_WRAP_THRESHOLD => {
                number == last.wrapping_add(1) || number < SEQUENCE_WRAP_LIMIT
            }
            Some(last) => number == last + 1,
        };
        if !ok {
            return Err(StatusCode::BAD_SEQUENCE_NUMBER_INVALID);
        }
        self.last = Some(number);
        Ok(())
    }
}

/// Numbers for the chunks we send: 1, 2, ... wrapping to 1 past the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendSequence {
    next: u32,
}

impl Default for SendSequence {
    fn default() -> Self {
        Self { next: 1 }
    }
}

impl SendSequence {
    /// The number for the next chunk.
    pub fn next_number(&mut self) -> u32 {
        let number = self.next;
        self.next = if number >= SEQUENCE_WRAP_THRESHOLD {
            1
        } else {
            number + 1
        };
        number
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token {
    id: u32,
    expires_at: Instant,
}

/// The state of an open secure channel.
#[derive(Clone, Debug)]
pub struct ChannelState {
    channel_id: u32,
    current: Token,
    previous: Option<Token>,
    /// Set once the client sends a message with the current token.
    current_used: bool,
}

fn revise_lifetime(requested_ms: u32) -> u32 {
    requested_ms.clamp(TOKEN_LIFETIME_RANGE_MS.0, TOKEN_LIFETIME_RANGE_MS.1)
}

fn validity(lifetime_ms: u32) -> Duration {
    // 125 % of the lifetime.
    Duration::from_millis(u64::from(lifetime_ms) * 5 / 4)
}

impl ChannelState {
    /// Opens channel `channel_id` with its first token (id 1); returns the token to send.
    pub fn issue(
        channel_id: u32,
        requested_lifetime_ms: u32,
        now: Instant,
        wall_now: DateTime,
    ) -> (Self, ChannelSecurityToken) {
        let lifetime = revise_lifetime(requested_lifetime_ms);
        let state = Self {
            channel_id,
            current: Token {
                id: 1,
                expires_at: now + validity(lifetime),
            },
            previous: None,
            current_used: false,
        };
        let token = ChannelSecurityToken {
            channel_id,
            token_id: 1,
            created_at: wall_now,
            revised_lifetime: lifetime,
        };
        (state, token)
    }

    /// Issues a new token; the current one stays valid until the new one is used.
    pub fn renew(
        &mut self,
        requested_lifetime_ms: u32,
        now: Instant,
        wall_now: DateTime,
    ) -> ChannelSecurityToken {
        let lifetime = revise_lifetime(requested_lifetime_ms);
        let id = self.current.id.wrapping_add(1).max(1);
        self.previous = Some(self.current);
        self.current = Token {
            id,
            expires_at: now + validity(lifetime),
        };
        self.current_used = false;
        ChannelSecurityToken {
            channel_id: self.channel_id,
            token_id: id,
            created_at: wall_now,
            revised_lifetime: lifetime,
        }
    }

    /// The channel id.
    pub fn channel_id(&self) -> u32 {
        self.channel_id
    }

    /// The id of the newest token.
    pub fn current_token_id(&self) -> u32 {
        self.current.id
    }

    /// The token that secures responses: the newest once the client used it, else the one
    /// before (OPC 10000-6 §6.7.4).
    pub fn response_token_id(&self) -> u32 {
        match self.previous {
            Some(previous) if !self.current_used => previous.id,
            _ => self.current.id,
        }
    }

    /// Checks the token id of a received MSG or CLO chunk at `now`:
    /// Bad_SecureChannelTokenUnknown for an unknown, superseded or expired token.
    pub fn accept_token(&mut self, token_id: u32, now: Instant) -> Result<(), StatusCode> {
        if token_id == self.current.id && now < self.current.expires_at {
            if !self.current_used {
                self.current_used = true;
                self.previous = None;
            }
            return Ok(());
        }
        match self.previous {
            Some(previous) if previous.id == token_id && now < previous.expires_at => Ok(()),
            _ => Err(StatusCode::BAD_SECURE_CHANNEL_TOKEN_UNKNOWN),
        }
    }

    /// When the newest token expires (the channel closes then unless renewed).
    pub fn expires_at(&self) -> Instant {
        self.current.expires_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_increase_by_one_and_wrap() {
        let mut sequence = ReceiveSequence::default();
        sequence.accept(51).unwrap();
        sequence.accept(52).unwrap();
        assert_eq!(
            sequence.accept(52),
            Err(StatusCode::BAD_SEQUENCE_NUMBER_INVALID)
        );
        assert_eq!(
            sequence.accept(54),
            Err(StatusCode::BAD_SEQUENCE_NUMBER_INVALID)
        );
        let mut near_end = ReceiveSequence::default();
        near_end.accept(u32::MAX - 1000).unwrap();
        near_end.accept(3).unwrap();
        near_end.accept(4).unwrap();
        let mut early = ReceiveSequence::default();
        early.accept(100).unwrap();
        assert!(early.accept(3).is_err(), "no wrap below the threshold");

        let mut send = SendSequence {
            next: SEQUENCE_WRAP_THRESHOLD,
        };
        assert_eq!(send.next_number(), SEQUENCE_WRAP_THRESHOLD);
        assert_eq!(send.next_number(), 1);
    }

    #[test]
    fn renewal_keeps_old_token_until_new_one_is_used() {
        let start = Instant::now();
        let (mut channel, token) = ChannelState::issue(9, 60_000, start, DateTime(5));
        assert_eq!(
            token,
            ChannelSecurityToken {
                channel_id: 9,
                token_id: 1,
                created_at: DateTime(5),
                revised_lifetime: 60_000
            }
        );
        channel.accept_token(1, start).unwrap();
        let renewed = channel.renew(1, start, DateTime(6));
        assert_eq!(renewed.token_id, 2);
        assert_eq!(renewed.revised_lifetime, TOKEN_LIFETIME_RANGE_MS.0);
        channel.accept_token(1, start).unwrap();
        channel.accept_token(2, start).unwrap();
        assert_eq!(
            channel.accept_token(1, start),
            Err(StatusCode::BAD_SECURE_CHANNEL_TOKEN_UNKNOWN)
        );
        // 125 % of 10 s: valid at 12.4 s, expired at 12.5 s.
        channel
            .accept_token(2, start + Duration::from_millis(12_499))
            .unwrap();
        assert!(
            channel
                .accept_token(2, start + Duration::from_millis(12_500))
                .is_err()
        );
    }
}
