//! `PropertyData`: how an object stores one property's value, and how a read with or
//! without an array index turns it into encodable [`Element`]s (Clause 12, BACnetARRAY
//! semantics of Clause 15.5: index 0 is the element count, 1..=N one element).

use super::error::PropertyError;
use crate::encoding::{ApplicationValue, Element};

/// The stored value of one property.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyData {
    /// A single application-tagged primitive (most properties).
    Single(ApplicationValue),
    /// A `BACnetARRAY`: each entry is the tagged data of one element.
    Array(Vec<Vec<Element>>),
    /// A `BACnetLIST` or constructed value, only readable as a whole.
    List(Vec<Element>),
}

impl PropertyData {
    /// An array whose elements are single primitives.
    pub fn array_of(values: impl IntoIterator<Item = ApplicationValue>) -> Self {
        Self::Array(
            values
                .into_iter()
                .map(|value| vec![Element::Application(value)])
                .collect(),
        )
    }

    /// A character string.
    pub fn text(text: &str) -> Self {
        Self::Single(ApplicationValue::CharacterString(text.to_owned()))
    }

    /// True for `BACnetARRAY` properties.
    pub const fn is_array(&self) -> bool {
        matches!(self, Self::Array(_))
    }

    /// The primitive when this is [`Self::Single`].
    pub const fn as_single(&self) -> Option<&ApplicationValue> {
        match self {
            Self::Single(value) => Some(value),
            _ => None,
        }
    }

    /// Number of array elements (0 for non-arrays).
    pub fn array_len(&self) -> usize {
        match self {
            Self::Array(items) => items.len(),
            _ => 0,
        }
    }

    /// The encoded value a ReadProperty with `array_index` returns.
    ///
    /// Without an index the whole value; with index 0 the array length as Unsigned; with
    /// 1..=N that element. Errors: `property-is-not-an-array` for an index on a
    /// non-array, `invalid-array-index` past the end.
    pub fn read(&self, array_index: Option<u32>) -> Result<Vec<Element>, PropertyError> {
        match (self, array_index) {
            (Self::Single(value), None) => Ok(vec![Element::Application(value.clone())]),
            (Self::List(items), None) => Ok(items.clone()),
            (Self::Array(items), None) => Ok(items.iter().flatten().cloned().collect()),
            (Self::Array(items), Some(0)) => Ok(vec![Element::Application(
                ApplicationValue::Unsigned(items.len() as u64),
            )]),
            (Self::Array(items), Some(index)) => usize::try_from(index - 1)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .ok_or(PropertyError::INVALID_ARRAY_INDEX),
            (_, Some(_)) => Err(PropertyError::NOT_AN_ARRAY),
        }
    }
}

/// The single application value a write carries, or `invalid-data-type` when the written
/// data is not exactly one application-tagged primitive.
pub fn single_application_value(value: &[Element]) -> Result<&ApplicationValue, PropertyError> {
    match value {
        [Element::Application(value)] => Ok(value),
        _ => Err(PropertyError::INVALID_DATA_TYPE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_semantics() {
        let data =
            PropertyData::array_of([ApplicationValue::Unsigned(3), ApplicationValue::Unsigned(4)]);
        assert_eq!(
            data.read(Some(0)).unwrap(),
            vec![Element::Application(ApplicationValue::Unsigned(2))]
        );
        assert_eq!(
            data.read(Some(2)).unwrap(),
            vec![Element::Application(ApplicationValue::Unsigned(4))]
        );
        assert_eq!(data.read(None).unwrap().len(), 2);
        assert_eq!(data.read(Some(3)), Err(PropertyError::INVALID_ARRAY_INDEX));
        assert_eq!(
            PropertyData::text("x").read(Some(1)),
            Err(PropertyError::NOT_AN_ARRAY)
        );
        assert_eq!(
            PropertyData::List(vec![]).read(Some(0)),
            Err(PropertyError::NOT_AN_ARRAY)
        );
    }
}
