//! Sequence numbers of the chunks of one secure channel, both directions (OPC 10000-6
//! §6.7.2.4): each received chunk carries the previous number plus one; once the number
//! exceeds `u32::MAX - 1024` it may wrap to any value below 1024. We send 1, 2, ... and wrap
//! to 1 past the same threshold.

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
}
