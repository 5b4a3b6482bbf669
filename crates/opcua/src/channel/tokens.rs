//! The security tokens of one secure channel as the server issues them (OPC 10000-4 §5.5,
//! OPC 10000-6 §6.7): the channel id, token ids with their lifetimes, and renewal.
//!
//! Token rules: a token is valid for 125 % of its revised lifetime; after a Renew the previous
//! token stays accepted until the client first uses the new one (or it expires).

use std::time::{Duration, Instant};

use crate::encoding::DateTime;
use crate::services::ChannelSecurityToken;
use crate::types::StatusCode;

/// Shortest and longest secure channel token lifetime granted, in milliseconds.
pub const TOKEN_LIFETIME_RANGE_MS: (u32, u32) = (10_000, 3_600_000);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token {
    id: u32,
    expires_at: Instant,
}

/// The channel id and the tokens issued on it: the server side of an open secure channel.
#[derive(Clone, Debug)]
pub struct ChannelTokens {
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

impl ChannelTokens {
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
    fn renewal_keeps_old_token_until_new_one_is_used() {
        let start = Instant::now();
        let (mut channel, token) = ChannelTokens::issue(9, 60_000, start, DateTime(5));
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
