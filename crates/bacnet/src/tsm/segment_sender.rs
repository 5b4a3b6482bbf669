//! `SegmentSender`: splits one message into segments and sends them window by window as
//! SegmentACKs arrive (Clause 5.4, "FillWindow" and the SegmentACK rules of the
//! SEGMENTED_REQUEST and SEGMENTED_RESPONSE states).
//!
//! Sequence numbers are modulo 256 on the wire; internally segments are counted with an
//! absolute index so that messages of more than 256 segments work.

use crate::apdu::SegmentInfo;

use super::MAX_WINDOW_SIZE;

/// What a SegmentACK did to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckOutcome {
    /// Segments were acknowledged and more remain: send [`SegmentSender::window`].
    Progress,
    /// The final segment was acknowledged.
    Finished,
    /// A negative ACK for the segment before the window: resend the window now.
    ResendWindow,
    /// Not within the window (a duplicate or stale ACK): nothing to do.
    Ignored,
}

/// Splits a payload into segments and tracks the receiver's acknowledgements.
#[derive(Debug, Clone)]
pub(crate) struct SegmentSender {
    payload: Vec<u8>,
    segment_size: usize,
    total: u32,
    /// Absolute index of the first unacknowledged segment.
    initial: u32,
    /// Actual window size: 1 until the receiver's first SegmentACK gives its own.
    window: u8,
    proposed_window: u8,
    /// A negative ACK already triggered a resend of this window.
    nak_resent: bool,
}

impl SegmentSender {
    /// A sender for `payload` in segments of `segment_size` bytes, proposing
    /// `proposed_window`. Only the first segment is sent before the first SegmentACK.
    pub(crate) fn new(payload: Vec<u8>, segment_size: usize, proposed_window: u8) -> Self {
        let segment_size = segment_size.max(1);
        let total =
            u32::try_from(super::segment_count(payload.len(), segment_size)).unwrap_or(u32::MAX);
        Self {
            payload,
            segment_size,
            total,
            initial: 0,
            window: 1,
            proposed_window: proposed_window.clamp(1, MAX_WINDOW_SIZE),
            nak_resent: false,
        }
    }

    /// Number of segments of the whole message.
    #[cfg(test)]
    pub(crate) fn segment_count(&self) -> u32 {
        self.total
    }

    /// Payload bytes per segment.
    pub(crate) fn segment_size(&self) -> usize {
        self.segment_size
    }

    /// Takes the whole payload (once the message is finished).
    pub(crate) fn take_payload(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.payload)
    }

    /// The segments of the current window: header fields and payload slice.
    pub(crate) fn window(&self) -> Vec<(SegmentInfo, &[u8])> {
        let end = self
            .initial
            .saturating_add(u32::from(self.window))
            .min(self.total);
        (self.initial..end)
            .map(|index| self.segment(index))
            .collect()
    }

    fn segment(&self, index: u32) -> (SegmentInfo, &[u8]) {
        let start = (index as usize).saturating_mul(self.segment_size);
        let end = start
            .saturating_add(self.segment_size)
            .min(self.payload.len());
        let data = self.payload.get(start.min(end)..end).unwrap_or(&[]);
        (
            SegmentInfo {
                more_follows: index + 1 < self.total,
                sequence_number: (index & 0xFF) as u8,
                proposed_window_size: self.proposed_window,
            },
            data,
        )
    }

    /// Applies a SegmentACK (Clause 5.4.4.2 NewACK / FinalACK / DuplicateACK).
    pub(crate) fn handle_ack(
        &mut self,
        sequence_number: u8,
        actual_window_size: u8,
        negative: bool,
    ) -> AckOutcome {
        let offset = sequence_number.wrapping_sub((self.initial & 0xFF) as u8);
        let acked = self.initial.saturating_add(u32::from(offset));
        if offset < self.window && acked < self.total {
            self.initial = acked + 1;
            self.window = actual_window_size.clamp(1, self.proposed_window);
            self.nak_resent = false;
            if self.initial >= self.total {
                AckOutcome::Finished
            } else {
                AckOutcome::Progress
            }
        } else if negative
            && sequence_number == (self.initial.wrapping_sub(1) & 0xFF) as u8
            && !self.nak_resent
        {
            self.nak_resent = true;
            AckOutcome::ResendWindow
        } else {
            AckOutcome::Ignored
        }
    }

    /// Called when the window is resent after a timeout.
    pub(crate) fn note_timeout_resend(&mut self) {
        self.nak_resent = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_acks() {
        let mut sender = SegmentSender::new((0..100u8).collect(), 10, 4);
        assert_eq!(sender.segment_count(), 10);
        let first = sender.window();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0.sequence_number, 0);
        assert_eq!(first[0].0.proposed_window_size, 4);
        assert!(first[0].0.more_follows);
        assert_eq!(first[0].1, &(0..10u8).collect::<Vec<_>>()[..]);

        // Receiver acks segment 0 with actual window 3.
        assert_eq!(sender.handle_ack(0, 3, false), AckOutcome::Progress);
        let seqs: Vec<u8> = sender
            .window()
            .iter()
            .map(|s| s.0.sequence_number)
            .collect();
        assert_eq!(seqs, [1, 2, 3]);
        // Out-of-window ACK is ignored; NAK of the segment before the window resends once.
        assert_eq!(sender.handle_ack(9, 3, false), AckOutcome::Ignored);
        assert_eq!(sender.handle_ack(0, 3, true), AckOutcome::ResendWindow);
        assert_eq!(sender.handle_ack(0, 3, true), AckOutcome::Ignored);
        // Partial ack of the window (NAK after segment 1) moves the window to 2.
        assert_eq!(sender.handle_ack(1, 3, true), AckOutcome::Progress);
        let seqs: Vec<u8> = sender
            .window()
            .iter()
            .map(|s| s.0.sequence_number)
            .collect();
        assert_eq!(seqs, [2, 3, 4]);
        assert_eq!(sender.handle_ack(4, 3, false), AckOutcome::Progress);
        assert_eq!(sender.handle_ack(7, 3, false), AckOutcome::Progress);
        let last = sender.window();
        assert_eq!(last.len(), 2);
        assert!(!last[1].0.more_follows);
        assert_eq!(last[1].1, &(90..100u8).collect::<Vec<_>>()[..]);
        assert_eq!(sender.handle_ack(9, 3, false), AckOutcome::Finished);
    }

    #[test]
    fn sequence_numbers_wrap_after_255() {
        let mut sender = SegmentSender::new(vec![7; 300], 1, 127);
        assert_eq!(sender.handle_ack(0, 127, false), AckOutcome::Progress);
        assert_eq!(sender.handle_ack(127, 127, false), AckOutcome::Progress);
        assert_eq!(sender.handle_ack(254, 127, false), AckOutcome::Progress);
        let window = sender.window();
        assert_eq!(window[0].0.sequence_number, 255);
        assert_eq!(window[1].0.sequence_number, 0);
        // Segment 255 + 127 = absolute 381 > 299: only 45 remain.
        assert_eq!(window.len(), 45);
        assert_eq!(sender.handle_ack(43, 127, false), AckOutcome::Finished);
    }
}
