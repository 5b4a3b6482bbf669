//! DataValue (OPC 10000-6 §5.2.2.17): an encoding mask then, when present, the value, status,
//! source timestamp, source picoseconds, server timestamp and server picoseconds.

use super::binary_encodable::BinaryEncodable;
use super::date_time::DateTime;
use super::error::{DecodeError, DecodeErrorKind};
use super::reader::Reader;
use super::variant::Variant;
use crate::types::StatusCode;

mod mask {
    pub const VALUE: u8 = 0x01;
    pub const STATUS: u8 = 0x02;
    pub const SOURCE_TIMESTAMP: u8 = 0x04;
    pub const SERVER_TIMESTAMP: u8 = 0x08;
    pub const SOURCE_PICOSECONDS: u8 = 0x10;
    pub const SERVER_PICOSECONDS: u8 = 0x20;
    pub const ALL: u8 = 0x3F;
}

/// A value with its status and timestamps; absent fields are `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DataValue {
    /// The value.
    pub value: Option<Variant>,
    /// Status of the value (absent means Good).
    pub status: Option<StatusCode>,
    /// When the source produced the value.
    pub source_timestamp: Option<DateTime>,
    /// 10 ps intervals to add to `source_timestamp`.
    pub source_picoseconds: Option<u16>,
    /// When the server received the value.
    pub server_timestamp: Option<DateTime>,
    /// 10 ps intervals to add to `server_timestamp`.
    pub server_picoseconds: Option<u16>,
}

impl DataValue {
    fn mask(&self) -> u8 {
        let mut bits = 0;
        for (present, bit) in [
            (self.value.is_some(), mask::VALUE),
            (self.status.is_some(), mask::STATUS),
            (self.source_timestamp.is_some(), mask::SOURCE_TIMESTAMP),
            (self.server_timestamp.is_some(), mask::SERVER_TIMESTAMP),
            (self.source_picoseconds.is_some(), mask::SOURCE_PICOSECONDS),
            (self.server_picoseconds.is_some(), mask::SERVER_PICOSECONDS),
        ] {
            if present {
                bits |= bit;
            }
        }
        bits
    }
}

fn decode_if<T: BinaryEncodable>(
    present: bool,
    reader: &mut Reader<'_>,
) -> Result<Option<T>, DecodeError> {
    if present {
        T::decode(reader).map(Some)
    } else {
        Ok(None)
    }
}

impl BinaryEncodable for DataValue {
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(self.mask());
        if let Some(value) = &self.value {
            value.encode(buf);
        }
        if let Some(status) = self.status {
            status.encode(buf);
        }
        if let Some(time) = self.source_timestamp {
            time.encode(buf);
        }
        if let Some(pico) = self.source_picoseconds {
            pico.encode(buf);
        }
        if let Some(time) = self.server_timestamp {
            time.encode(buf);
        }
        if let Some(pico) = self.server_picoseconds {
            pico.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        reader.nested(|reader| {
            let offset = reader.position();
            let bits = reader.read_u8()?;
            if bits & !mask::ALL != 0 {
                return Err(reader.error_at(
                    offset,
                    DecodeErrorKind::InvalidEncodingByte {
                        field: "DataValue mask",
                        value: bits,
                    },
                ));
            }
            let has = |bit: u8| bits & bit != 0;
            Ok(Self {
                value: decode_if(has(mask::VALUE), reader)?,
                status: decode_if(has(mask::STATUS), reader)?,
                source_timestamp: decode_if(has(mask::SOURCE_TIMESTAMP), reader)?,
                source_picoseconds: decode_if(has(mask::SOURCE_PICOSECONDS), reader)?,
                server_timestamp: decode_if(has(mask::SERVER_TIMESTAMP), reader)?,
                server_picoseconds: decode_if(has(mask::SERVER_PICOSECONDS), reader)?,
            })
        })
    }

    fn encoded_len(&self) -> usize {
        1 + self.value.as_ref().map_or(0, Variant::encoded_len)
            + self.status.map_or(0, |_| 4)
            + self.source_timestamp.map_or(0, |_| 8)
            + self.source_picoseconds.map_or(0, |_| 2)
            + self.server_timestamp.map_or(0, |_| 8)
            + self.server_picoseconds.map_or(0, |_| 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::variant::tests::any_variant;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(
            value in proptest::option::of(any_variant()),
            status: Option<u32>,
            times: (Option<i64>, Option<i64>),
            picos: (Option<u16>, Option<u16>),
        ) {
            let data_value = DataValue {
                value,
                status: status.map(StatusCode::from_u32),
                source_timestamp: times.0.map(DateTime),
                source_picoseconds: picos.0,
                server_timestamp: times.1.map(DateTime),
                server_picoseconds: picos.1,
            };
            let bytes = data_value.to_bytes();
            prop_assert_eq!(bytes.len(), data_value.encoded_len());
            // Compared through the encoding so that NaN floats count as equal.
            prop_assert_eq!(DataValue::from_bytes(&bytes).unwrap().to_bytes(), bytes);
        }
    }

    #[test]
    fn field_order() {
        let value = DataValue {
            value: Some(Variant::Byte(7)),
            status: None,
            source_timestamp: Some(DateTime(1)),
            source_picoseconds: Some(2),
            server_timestamp: Some(DateTime(3)),
            server_picoseconds: Some(4),
        };
        assert_eq!(
            value.to_bytes(),
            [
                0x3D, 0x03, 7, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4, 0
            ]
        );
        assert_eq!(DataValue::from_bytes(&value.to_bytes()).unwrap(), value);
        assert_eq!(DataValue::default().to_bytes(), [0x00]);
    }

    #[test]
    fn reserved_bits_and_truncation() {
        assert_eq!(
            DataValue::from_bytes(&[0x40]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "DataValue mask",
                value: 0x40
            }
        );
        let truncated = DataValue::from_bytes(&[0x02, 0, 0]).unwrap_err();
        assert_eq!(truncated.offset, 1);
        assert!(matches!(
            truncated.kind,
            DecodeErrorKind::UnexpectedEnd { .. }
        ));
    }
}
