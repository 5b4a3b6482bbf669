//! `BACnetPriorityArray`: 16 command slots, each a value or NULL (Clause 19.2).
//!
//! A slot holds a `BACnetPriorityValue`: usually an application-tagged primitive, but
//! also `constructed-value [0]` or `datetime [1]`, so slots are generic [`Element`]s.

use super::abstract_syntax::Element;
use super::error::DecodeError;
use super::primitive::ApplicationValue;
use super::reader::Reader;

/// Number of command priorities.
pub const PRIORITY_COUNT: usize = 16;

/// The priority array of a commandable object; slot 0 is priority 1 (highest).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriorityArray {
    /// `None` encodes as NULL (slot relinquished).
    pub slots: [Option<Element>; PRIORITY_COUNT],
}

impl PriorityArray {
    /// The value at `priority` (1..=16), if any.
    pub fn get(&self, priority: u8) -> Option<&Element> {
        let index = usize::from(priority).checked_sub(1)?;
        self.slots.get(index)?.as_ref()
    }

    /// The highest-priority non-empty slot and its priority (1..=16).
    pub fn highest(&self) -> Option<(u8, &Element)> {
        self.slots
            .iter()
            .zip(1u8..)
            .find_map(|(slot, priority)| slot.as_ref().map(|value| (priority, value)))
    }

    /// Sets `priority` (1..=16) to an application value; out-of-range priorities are ignored.
    pub fn set(&mut self, priority: u8, value: Option<ApplicationValue>) {
        if let Some(slot) = usize::from(priority)
            .checked_sub(1)
            .and_then(|index| self.slots.get_mut(index))
        {
            *slot = value.map(Element::Application);
        }
    }

    /// Appends the 16 values (NULL for empty slots).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        for slot in &self.slots {
            match slot {
                Some(value) => value.encode(buf),
                None => ApplicationValue::Null.encode(buf),
            }
        }
    }

    /// Decodes exactly 16 values; an application NULL becomes `None`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut out = Self::default();
        for slot in &mut out.slots {
            *slot = match Element::decode(reader)? {
                Element::Application(ApplicationValue::Null) => None,
                value => Some(value),
            };
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::error::DecodeErrorKind;

    #[test]
    fn empty_slots_are_null() {
        let mut array = PriorityArray::default();
        array.set(8, Some(ApplicationValue::Real(21.5)));
        array.set(0, Some(ApplicationValue::Real(1.0)));
        let mut buf = Vec::new();
        array.encode(&mut buf);
        let mut expected = vec![0x00; 7];
        expected.extend([0x44, 0x41, 0xAC, 0x00, 0x00]);
        expected.extend([0x00; 8]);
        assert_eq!(buf, expected);
        let decoded = PriorityArray::decode(&mut Reader::new(&buf)).unwrap();
        assert_eq!(decoded, array);
        let real = Element::Application(ApplicationValue::Real(21.5));
        assert_eq!(decoded.highest(), Some((8, &real)));
        assert_eq!(decoded.get(8), Some(&real));
        assert_eq!(decoded.get(0), None);
    }

    #[test]
    fn datetime_slot_is_kept() {
        // Priority 1 holds datetime [1] { Date, Time }; the other 15 are NULL.
        let mut bytes = vec![
            0x1E, 0xA4, 0x7C, 0x05, 0x01, 0x03, 0xB4, 0x0C, 0x00, 0x00, 0x00, 0x1F,
        ];
        bytes.extend([0x00; 15]);
        let decoded = PriorityArray::decode(&mut Reader::new(&bytes)).unwrap();
        assert!(matches!(
            decoded.get(1),
            Some(Element::Constructed { tag: 1, children }) if children.len() == 2
        ));
        let mut again = Vec::new();
        decoded.encode(&mut again);
        assert_eq!(again, bytes);
    }

    #[test]
    fn fewer_than_sixteen_is_truncated() {
        let err = PriorityArray::decode(&mut Reader::new(&[0x00; 15])).unwrap_err();
        assert_eq!(err.offset, 15);
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
    }
}
