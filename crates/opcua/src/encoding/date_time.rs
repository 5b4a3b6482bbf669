//! DateTime (OPC 10000-6 §5.2.2.5): an Int64 count of 100 ns intervals since 1601-01-01 UTC.

use super::binary_encodable::BinaryEncodable;
use super::error::DecodeError;
use super::reader::Reader;

/// Ticks (100 ns) between 1601-01-01 and the Unix epoch 1970-01-01.
pub const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;

/// A UA DateTime as raw ticks. 0 and `i64::MAX` mean "earliest" and "latest" representable
/// time; the clock is never read here, callers supply times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DateTime(pub i64);

impl DateTime {
    /// The null / minimum DateTime (ticks = 0).
    pub const MIN: DateTime = DateTime(0);
    /// The maximum DateTime (ticks = `i64::MAX`).
    pub const MAX: DateTime = DateTime(i64::MAX);

    /// Ticks of 100 ns since 1601-01-01 UTC.
    pub const fn ticks(self) -> i64 {
        self.0
    }

    /// From milliseconds since the Unix epoch (saturating at the ends of the range).
    pub const fn from_unix_millis(millis: i64) -> Self {
        Self(UNIX_EPOCH_TICKS.saturating_add(millis.saturating_mul(10_000)))
    }

    /// Milliseconds since the Unix epoch (rounded towards negative infinity).
    pub const fn unix_millis(self) -> i64 {
        (self.0 - UNIX_EPOCH_TICKS).div_euclid(10_000)
    }
}

impl BinaryEncodable for DateTime {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.0.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        i64::decode(reader).map(Self)
    }

    fn encoded_len(&self) -> usize {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unix_epoch() {
        let epoch = DateTime::from_unix_millis(0);
        assert_eq!(epoch.ticks(), UNIX_EPOCH_TICKS);
        assert_eq!(epoch.to_bytes(), UNIX_EPOCH_TICKS.to_le_bytes());
        assert_eq!(DateTime::from_unix_millis(1_500).unix_millis(), 1_500);
    }

    proptest! {
        #[test]
        fn round_trip(ticks: i64) {
            let value = DateTime(ticks);
            prop_assert_eq!(DateTime::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
