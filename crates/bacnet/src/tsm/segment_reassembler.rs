//! `SegmentReassembler`: collects the segments of one message in order and says when to
//! send a SegmentACK (Clause 5.4, the SEGMENTED_CONF and SEGMENTED_REQUEST receive rules).
//!
//! The first segment is acknowledged at once, with the actual window size; afterwards a
//! SegmentACK goes out after each full window and after the last segment. A segment out of
//! order is dropped and answered with a negative SegmentACK naming the last segment received
//! in order; a repeated segment is answered with a positive one. The message is bounded by a
//! segment count and a byte limit, checked before any byte is stored.

use crate::apdu::SegmentInfo;

/// What to do after a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegmentOutcome {
    /// Send a SegmentACK with this sequence number.
    Ack {
        /// Sequence number to acknowledge.
        sequence_number: u8,
        /// NAK bit: the segment was out of order.
        negative: bool,
    },
    /// Accepted; no SegmentACK due yet.
    Wait,
    /// The last segment: acknowledge it, then take the payload.
    Complete {
        /// Sequence number of the last segment.
        sequence_number: u8,
    },
    /// The message is longer than the segment or byte limit allows.
    Overflow,
}

/// Reassembles one segmented message.
#[derive(Debug, Clone)]
pub(crate) struct SegmentReassembler {
    payload: Vec<u8>,
    /// Segments received in order so far.
    received: u32,
    /// Value of `received` when the last SegmentACK was sent.
    window_start: u32,
    /// Actual window size.
    window: u8,
    max_segments: u32,
    max_bytes: usize,
}

impl SegmentReassembler {
    /// A reassembler using window `min(proposed, own_window)` (both at least 1).
    pub(crate) fn new(proposed: u8, own_window: u8, max_segments: u32, max_bytes: usize) -> Self {
        Self {
            payload: Vec::new(),
            received: 0,
            window_start: 0,
            window: proposed.min(own_window).max(1),
            max_segments,
            max_bytes,
        }
    }

    /// The actual window size, sent in every SegmentACK.
    pub(crate) fn window(&self) -> u8 {
        self.window
    }

    /// Bytes held so far.
    pub(crate) fn len(&self) -> usize {
        self.payload.len()
    }

    /// Takes the reassembled payload.
    pub(crate) fn into_payload(self) -> Vec<u8> {
        self.payload
    }

    /// Handles one received segment.
    pub(crate) fn accept(&mut self, segment: &SegmentInfo, data: &[u8]) -> SegmentOutcome {
        let expected = (self.received & 0xFF) as u8;
        if segment.sequence_number != expected {
            if self.received == 0 {
                // Nothing received yet: nothing to acknowledge.
                return SegmentOutcome::Wait;
            }
            let last = ((self.received - 1) & 0xFF) as u8;
            let behind = last.wrapping_sub(segment.sequence_number);
            self.window_start = self.received;
            return SegmentOutcome::Ack {
                sequence_number: last,
                // Within the last 128 segments: a repeat; otherwise ahead of order.
                negative: behind >= 128,
            };
        }
        if self.payload.len().saturating_add(data.len()) > self.max_bytes
            || self.received >= self.max_segments
        {
            return SegmentOutcome::Overflow;
        }
        self.payload.extend_from_slice(data);
        self.received += 1;
        if !segment.more_follows {
            return SegmentOutcome::Complete {
                sequence_number: expected,
            };
        }
        if self.received == self.max_segments {
            // More follow, but no further segment may be stored.
            return SegmentOutcome::Overflow;
        }
        if self.received == 1 || self.received - self.window_start >= u32::from(self.window) {
            self.window_start = self.received;
            SegmentOutcome::Ack {
                sequence_number: expected,
                negative: false,
            }
        } else {
            SegmentOutcome::Wait
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(sequence_number: u8, more_follows: bool) -> SegmentInfo {
        SegmentInfo {
            more_follows,
            sequence_number,
            proposed_window_size: 2,
        }
    }

    #[test]
    fn acks_first_segment_each_window_and_the_last() {
        let mut r = SegmentReassembler::new(2, 16, 64, 1000);
        assert_eq!(r.window(), 2);
        let ack = |n| SegmentOutcome::Ack {
            sequence_number: n,
            negative: false,
        };
        assert_eq!(r.accept(&seg(0, true), b"ab"), ack(0));
        assert_eq!(r.accept(&seg(1, true), b"cd"), SegmentOutcome::Wait);
        assert_eq!(r.accept(&seg(2, true), b"ef"), ack(2));
        // Repeat of segment 1: positive ACK of the last in-order segment.
        assert_eq!(r.accept(&seg(1, true), b"cd"), ack(2));
        // Segment 4 before 3: NAK naming 2.
        assert_eq!(
            r.accept(&seg(4, true), b"ij"),
            SegmentOutcome::Ack {
                sequence_number: 2,
                negative: true
            }
        );
        assert_eq!(r.accept(&seg(3, true), b"gh"), SegmentOutcome::Wait);
        assert_eq!(
            r.accept(&seg(4, false), b"ij"),
            SegmentOutcome::Complete { sequence_number: 4 }
        );
        assert_eq!(r.into_payload(), b"abcdefghij");
    }

    #[test]
    fn limits_are_checked_before_storing() {
        let mut r = SegmentReassembler::new(4, 4, 2, 1000);
        assert!(matches!(
            r.accept(&seg(0, true), b"a"),
            SegmentOutcome::Ack { .. }
        ));
        // The second of at most two segments says more follow.
        assert_eq!(r.accept(&seg(1, true), b"b"), SegmentOutcome::Overflow);

        let mut r = SegmentReassembler::new(4, 4, 64, 3);
        assert!(matches!(
            r.accept(&seg(0, true), b"ab"),
            SegmentOutcome::Ack { .. }
        ));
        assert_eq!(r.accept(&seg(1, false), b"cd"), SegmentOutcome::Overflow);
        assert_eq!(r.len(), 2);
    }
}
