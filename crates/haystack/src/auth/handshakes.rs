//! The table of logins in progress (between HELLO and the final SCRAM message), bounded in
//! all, per source address and in time, so that a flood of HELLOs cannot lock anyone out.
//!
//! Decisions (issue 30: about 10,000 unauthenticated HELLOs from one address filled a table
//! of 60-second handshakes and every later login got 503):
//! - one source address holds at most `max_per_source` handshakes; past that its new
//!   HELLOs are refused (429) and nobody else's are touched;
//! - when the whole table is full (a flood from many addresses), the oldest handshake makes
//!   room instead of the new one being refused: a real client finishes its three round
//!   trips in milliseconds, so it is only lost if the table turns over within that time;
//! - handshakes live 15 s by default (`AuthConfig::handshake_timeout`), long enough for a
//!   slow client's PBKDF2 and short enough that stale ones leave soon.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::Instant;

/// One login in progress, with what the table needs to bound it.
struct Entry<S> {
    stage: S,
    expires: Instant,
    source: Option<IpAddr>,
    /// Insertion number: `order` holds it beside the token, so a token that was taken out
    /// and put back (the next SCRAM step) is not evicted by its old place in the queue.
    seq: u64,
}

/// Why a handshake was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The source already holds its share of the table.
    SourceFull,
}

/// Handshakes by token, in insertion order, counted per source address.
pub(crate) struct HandshakeTable<S> {
    entries: HashMap<String, Entry<S>>,
    order: VecDeque<(u64, String)>,
    per_source: HashMap<IpAddr, usize>,
    next_seq: u64,
    max: usize,
    max_per_source: usize,
}

impl<S> HandshakeTable<S> {
    /// An empty table for at most `max` handshakes, `max_per_source` from one address.
    pub(crate) fn new(max: usize, max_per_source: usize) -> Self {
        Self {
            entries: HashMap::new(),
            order: VecDeque::new(),
            per_source: HashMap::new(),
            next_seq: 0,
            max: max.max(1),
            max_per_source: max_per_source.max(1),
        }
    }

    /// Handshakes held now (expired ones may still count until they are dropped).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Stores a handshake, making room as the module documentation says.
    pub(crate) fn insert(
        &mut self,
        token: String,
        stage: S,
        source: Option<IpAddr>,
        expires: Instant,
        now: Instant,
    ) -> Result<(), Refusal> {
        self.drop_expired(now);
        if let Some(ip) = source
            && self.per_source.get(&ip).copied().unwrap_or(0) >= self.max_per_source
        {
            return Err(Refusal::SourceFull);
        }
        while self.entries.len() >= self.max {
            if !self.evict_oldest() {
                break;
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(ip) = source {
            *self.per_source.entry(ip).or_default() += 1;
        }
        self.order.push_back((seq, token.clone()));
        let old = self.entries.insert(
            token,
            Entry {
                stage,
                expires,
                source,
                seq,
            },
        );
        if let Some(old) = old {
            self.forget_source(old.source);
        }
        Ok(())
    }

    /// Takes a handshake out (to move it to its next step, or because it ended), with its
    /// expiry and source.
    pub(crate) fn take(&mut self, token: &str) -> Option<(S, Instant, Option<IpAddr>)> {
        let entry = self.entries.remove(token)?;
        self.forget_source(entry.source);
        Some((entry.stage, entry.expires, entry.source))
    }

    /// Drops the handshakes that expired, oldest first, and the stale queue places in front.
    fn drop_expired(&mut self, now: Instant) {
        while let Some((seq, token)) = self.order.front() {
            let live = self
                .entries
                .get(token)
                .filter(|entry| entry.seq == *seq)
                .map(|entry| entry.expires > now);
            match live {
                Some(true) => break,
                Some(false) => {
                    if let Some((_, token)) = self.order.pop_front()
                        && let Some(entry) = self.entries.remove(&token)
                    {
                        self.forget_source(entry.source);
                    }
                }
                // Taken out or put back since: this place in the queue is stale.
                None => {
                    self.order.pop_front();
                }
            }
        }
        // Handshakes live the same time, so the front is the first to expire; a queue that
        // only holds stale places is cleared above. Keep the queue from growing on tokens
        // that keep moving between steps.
        if self.order.len() > 2 * self.entries.len() + 64 {
            let entries = &self.entries;
            self.order
                .retain(|(seq, token)| entries.get(token).is_some_and(|e| e.seq == *seq));
        }
    }

    /// Removes the oldest live handshake; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some((seq, token)) = self.order.pop_front() {
            if self.entries.get(&token).is_some_and(|e| e.seq == seq) {
                if let Some(entry) = self.entries.remove(&token) {
                    self.forget_source(entry.source);
                }
                return true;
            }
        }
        false
    }

    fn forget_source(&mut self, source: Option<IpAddr>) {
        let Some(ip) = source else {
            return;
        };
        if let Some(count) = self.per_source.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                self.per_source.remove(&ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([127, 0, 0, last]))
    }

    #[test]
    fn one_source_holds_only_its_share() {
        let mut table = HandshakeTable::new(100, 3);
        let now = Instant::now();
        let later = now + Duration::from_secs(15);
        for i in 0..3 {
            assert_eq!(table.insert(format!("a{i}"), (), ip(1), later, now), Ok(()));
        }
        assert_eq!(
            table.insert("a3".into(), (), ip(1), later, now),
            Err(Refusal::SourceFull)
        );
        // Another address is not affected, and a finished handshake frees a place.
        assert_eq!(table.insert("b0".into(), (), ip(2), later, now), Ok(()));
        assert!(table.take("a0").is_some());
        assert_eq!(table.insert("a3".into(), (), ip(1), later, now), Ok(()));
        assert_eq!(table.len(), 4);
    }

    #[test]
    fn a_full_table_drops_its_oldest() {
        let mut table = HandshakeTable::new(3, 10);
        let now = Instant::now();
        let later = now + Duration::from_secs(15);
        for (i, token) in ["t0", "t1", "t2", "t3"].into_iter().enumerate() {
            let source = ip(u8::try_from(i).unwrap_or(0));
            assert_eq!(table.insert(token.into(), i, source, later, now), Ok(()));
        }
        assert_eq!(table.len(), 3);
        assert!(table.take("t0").is_none(), "the oldest made room");
        assert_eq!(table.take("t3").map(|(stage, ..)| stage), Some(3));
        // A handshake put back for its next step counts from then on.
        let (stage, expires, source) = table.take("t1").unwrap_or((9, later, None));
        assert_eq!(
            table.insert("t1".into(), stage, source, expires, now),
            Ok(())
        );
        assert_eq!(table.insert("t4".into(), 4, ip(9), later, now), Ok(()));
        assert_eq!(table.insert("t5".into(), 5, ip(9), later, now), Ok(()));
        assert!(
            table.take("t2").is_none(),
            "t2 was older than t1's second step"
        );
        assert!(table.take("t1").is_some());
    }

    #[test]
    fn expired_handshakes_leave_and_free_their_source() {
        let mut table = HandshakeTable::new(10, 2);
        let now = Instant::now();
        let soon = now + Duration::from_secs(15);
        assert_eq!(table.insert("a".into(), (), ip(1), soon, now), Ok(()));
        assert_eq!(table.insert("b".into(), (), ip(1), soon, now), Ok(()));
        let after = soon + Duration::from_secs(1);
        assert_eq!(
            table.insert(
                "c".into(),
                (),
                ip(1),
                after + Duration::from_secs(15),
                after
            ),
            Ok(())
        );
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn the_queue_stays_bounded_while_tokens_move_between_steps() {
        let mut table = HandshakeTable::new(10, 10);
        let now = Instant::now();
        let later = now + Duration::from_secs(15);
        assert_eq!(table.insert("x".into(), 0u32, ip(1), later, now), Ok(()));
        for step in 1..10_000u32 {
            let taken = table.take("x");
            assert!(taken.is_some());
            assert_eq!(table.insert("x".into(), step, ip(1), later, now), Ok(()));
        }
        assert!(table.order.len() <= 2 * table.entries.len() + 65);
    }
}
