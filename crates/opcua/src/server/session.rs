//! Sessions (OPC 10000-4 §5.6): the table of sessions shared by all connections, their
//! authentication tokens, activation state, timeouts and browse continuation points.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::encoding::NodeId;
use crate::services::ReferenceDescription;
use crate::types::StatusCode;

/// References left over from a Browse, resumed by BrowseNext.
#[derive(Clone, Debug)]
pub struct BrowseContinuation {
    /// The references not yet returned.
    pub remaining: Vec<ReferenceDescription>,
    /// How many to return per BrowseNext.
    pub max_per_call: usize,
}

/// One session.
#[derive(Debug)]
pub struct Session {
    /// Public identifier.
    pub session_id: NodeId,
    /// Secret identifier carried in every RequestHeader.
    pub authentication_token: NodeId,
    /// Client-chosen name.
    pub name: String,
    /// Secure channel the session is bound to.
    pub channel_id: u32,
    /// Set by a successful ActivateSession.
    pub activated: bool,
    /// The user name given at activation (None: anonymous).
    pub user: Option<String>,
    /// Inactivity timeout.
    pub timeout: Duration,
    /// When the session expires unless a request arrives.
    pub deadline: Instant,
    /// Open browse continuation points, by id.
    pub continuation_points: HashMap<Vec<u8>, BrowseContinuation>,
    /// Source of continuation point ids.
    pub next_continuation_id: u64,
    /// The last server nonce sent (CreateSession, ActivateSession): the client signs it and
    /// encrypted user secrets end with it.
    pub server_nonce: Vec<u8>,
    /// The client application certificate (DER) of the secured channel the session was
    /// created on; None under SecurityPolicy None. A re-activation on another channel must
    /// come from the same certificate.
    pub client_certificate: Option<Vec<u8>>,
}

/// All sessions of the server, keyed by authentication token.
#[derive(Debug, Default)]
pub struct SessionTable {
    sessions: HashMap<NodeId, Session>,
}

impl SessionTable {
    /// Number of sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// True when there is no session.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Number of sessions bound to `channel_id`.
    pub fn count_on_channel(&self, channel_id: u32) -> usize {
        self.sessions
            .values()
            .filter(|s| s.channel_id == channel_id)
            .count()
    }

    /// Adds a session.
    pub fn insert(&mut self, session: Session) {
        self.sessions
            .insert(session.authentication_token.clone(), session);
    }

    /// Removes a session.
    pub fn remove(&mut self, token: &NodeId) -> Option<Session> {
        self.sessions.remove(token)
    }

    /// The session for `token` as seen from `channel_id` at `now`: Bad_SessionIdInvalid when
    /// unknown or expired (an expired session is removed), Bad_SecureChannelIdInvalid when
    /// bound to another channel. The deadline is pushed back on success.
    pub fn find(
        &mut self,
        token: &NodeId,
        channel_id: u32,
        now: Instant,
    ) -> Result<&mut Session, StatusCode> {
        let expired = self
            .sessions
            .get(token)
            .is_some_and(|session| now >= session.deadline);
        if expired {
            self.sessions.remove(token);
        }
        let session = self
            .sessions
            .get_mut(token)
            .ok_or(StatusCode::BAD_SESSION_ID_INVALID)?;
        if session.channel_id != channel_id {
            return Err(StatusCode::BAD_SECURE_CHANNEL_ID_INVALID);
        }
        session.deadline = now + session.timeout;
        Ok(session)
    }

    /// The session for `token` whatever its channel (expired sessions are removed).
    pub fn find_any(&mut self, token: &NodeId, now: Instant) -> Result<&Session, StatusCode> {
        if self.sessions.get(token).is_some_and(|s| now >= s.deadline) {
            self.sessions.remove(token);
        }
        self.sessions
            .get(token)
            .ok_or(StatusCode::BAD_SESSION_ID_INVALID)
    }

    /// Moves an activated session to `channel_id` (ActivateSession on a new channel, OPC
    /// 10000-4 §5.6.3.1); a session never activated stays bound to the channel that created it
    /// (Bad_SecureChannelIdInvalid). Unknown or expired: Bad_SessionIdInvalid.
    pub fn rebind(
        &mut self,
        token: &NodeId,
        channel_id: u32,
        now: Instant,
    ) -> Result<&mut Session, StatusCode> {
        if let Some(session) = self.sessions.get_mut(token)
            && session.channel_id != channel_id
            && session.activated
            && now < session.deadline
        {
            session.channel_id = channel_id;
        }
        self.find(token, channel_id, now)
    }

    /// The earliest session deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.sessions.values().map(|s| s.deadline).min()
    }

    /// Removes the sessions whose deadline has passed; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let before = self.sessions.len();
        self.sessions.retain(|_, session| now < session.deadline);
        before - self.sessions.len()
    }

    /// The authentication token of the session that was never activated and was used
    /// longest ago (its deadline minus its timeout), if any.
    pub fn oldest_unactivated(&self) -> Option<NodeId> {
        self.sessions
            .iter()
            .filter(|(_, s)| !s.activated)
            .min_by_key(|(_, s)| s.deadline.checked_sub(s.timeout).unwrap_or(s.deadline))
            .map(|(token, _)| token.clone())
    }

    /// Removes the sessions that were never activated on a closed channel.
    pub fn drop_unactivated_on_channel(&mut self, channel_id: u32) {
        self.sessions
            .retain(|_, s| s.activated || s.channel_id != channel_id);
    }
}
