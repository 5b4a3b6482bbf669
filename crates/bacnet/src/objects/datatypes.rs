//! The datatypes of constructed properties (schedules, calendars, recipient lists, object
//! references): which properties hold them, and the checks a written value goes through.
//!
//! Stored values are generic tagged [`Element`]s. A write of one of these properties is
//! decoded with the typed codec of its datatype (so a malformed daily schedule or an
//! event priority of 17 is refused), then stored re-encoded, item by item: BACnetARRAY
//! elements and BACnetLIST entries stay separable for array-index reads, ReadRange and
//! AddListElement / RemoveListElement.

use super::error::PropertyError;
use super::object::ListChangeError;
use crate::encoding::abstract_syntax::{decode_to_end, encode_elements};
use crate::encoding::{
    CalendarEntry, DailySchedule, DateRange, DecodeError, DecodeErrorKind, Destination,
    DeviceObjectPropertyReference, Element, PrimitiveValue, Reader, SpecialEvent,
};
use crate::enums::{ObjectType, PropertyIdentifier as P};

/// Most items one list property accepts (recipient-list, date-list, references...).
pub const MAX_LIST_ITEMS: usize = 256;

/// The datatype of one item (array element, list entry or whole value) of a constructed
/// property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemType {
    /// `BACnetDailySchedule` (weekly-schedule elements).
    DailySchedule,
    /// `BACnetSpecialEvent` (exception-schedule elements).
    SpecialEvent,
    /// `BACnetCalendarEntry` (date-list entries).
    CalendarEntry,
    /// `BACnetDateRange` (effective-period).
    DateRange,
    /// `BACnetDeviceObjectPropertyReference` (list-of-object-property-references,
    /// log-device-object-property).
    DeviceObjectPropertyReference,
    /// `BACnetDestination` (recipient-list entries).
    Destination,
    /// `Unsigned` limited to 0..=255 (a Notification Class's priority elements).
    Priority,
}

/// How a constructed property is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A `BACnetARRAY` of items; `Some(n)` when its size is fixed.
    Array(Option<usize>),
    /// A `BACnetLIST` of items (AddListElement / RemoveListElement apply).
    List,
    /// One constructed value.
    Single,
}

/// The item datatype and shape of `property` of an object of `object_type`, when it is
/// one of the constructed properties this crate checks.
pub fn property_datatype(object_type: ObjectType, property: P) -> Option<(ItemType, Shape)> {
    Some(match (object_type, property) {
        (ObjectType::Schedule, P::WeeklySchedule) => {
            (ItemType::DailySchedule, Shape::Array(Some(7)))
        }
        (ObjectType::Schedule, P::ExceptionSchedule) => {
            (ItemType::SpecialEvent, Shape::Array(None))
        }
        (ObjectType::Schedule, P::EffectivePeriod) => (ItemType::DateRange, Shape::Single),
        (ObjectType::Schedule, P::ListOfObjectPropertyReferences) => {
            (ItemType::DeviceObjectPropertyReference, Shape::List)
        }
        (ObjectType::Calendar, P::DateList) => (ItemType::CalendarEntry, Shape::List),
        (ObjectType::NotificationClass, P::RecipientList) => (ItemType::Destination, Shape::List),
        (ObjectType::NotificationClass, P::Priority) => (ItemType::Priority, Shape::Array(Some(3))),
        (ObjectType::TrendLog, P::LogDeviceObjectProperty) => {
            (ItemType::DeviceObjectPropertyReference, Shape::Single)
        }
        _ => return None,
    })
}

fn check(reader: &mut Reader<'_>, item: ItemType) -> Result<(), DecodeError> {
    match item {
        ItemType::DailySchedule => DailySchedule::decode(reader).map(drop),
        ItemType::SpecialEvent => SpecialEvent::decode(reader).map(drop),
        ItemType::CalendarEntry => CalendarEntry::decode(reader).map(drop),
        ItemType::DateRange => DateRange::decode(reader).map(drop),
        ItemType::DeviceObjectPropertyReference => {
            DeviceObjectPropertyReference::decode(reader).map(drop)
        }
        ItemType::Destination => Destination::decode(reader).map(drop),
        ItemType::Priority => u8::decode_application(reader).map(drop),
    }
}

/// The error a write answers with when its value does not decode as the datatype:
/// a value outside its range is `value-out-of-range`, anything else `invalid-data-type`.
fn write_error(error: &DecodeError) -> PropertyError {
    match error.kind {
        DecodeErrorKind::InvalidValue(_) => PropertyError::VALUE_OUT_OF_RANGE,
        DecodeErrorKind::TooManyElements { .. } => PropertyError::NO_SPACE,
        _ => PropertyError::INVALID_DATA_TYPE,
    }
}

/// Splits written data into items of `item`, each checked and re-encoded canonically.
/// At most `limit` items are accepted (`no-space-to-add-list-element` past it).
pub fn split_items(
    item: ItemType,
    elements: &[Element],
    limit: usize,
) -> Result<Vec<Vec<Element>>, PropertyError> {
    split_items_numbered(item, elements, limit).map_err(|e| e.error)
}

/// [`split_items`], with the 1-based number of the item at fault in the error.
pub fn split_items_numbered(
    item: ItemType,
    elements: &[Element],
    limit: usize,
) -> Result<Vec<Vec<Element>>, ListChangeError> {
    let mut bytes = Vec::new();
    encode_elements(elements, &mut bytes);
    let mut reader = Reader::new(&bytes);
    let mut items = Vec::new();
    while !reader.is_empty() {
        let number = u32::try_from(items.len() + 1).unwrap_or(u32::MAX);
        let fail = |error| ListChangeError {
            error,
            first_failed: number,
        };
        if items.len() >= limit {
            return Err(fail(PropertyError::NO_SPACE));
        }
        let start = reader.position();
        check(&mut reader, item).map_err(|e| fail(write_error(&e)))?;
        let end = reader.position();
        let mut one = Reader::new(&bytes[start..end]);
        items.push(decode_to_end(&mut one).map_err(|e| fail(write_error(&e)))?);
    }
    Ok(items)
}

/// Decodes every item of `T` held in stored elements (which were checked when written;
/// anything that does not decode is skipped).
pub fn decode_items<T>(
    elements: &[Element],
    decode: impl Fn(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Vec<T> {
    let mut bytes = Vec::new();
    encode_elements(elements, &mut bytes);
    let mut reader = Reader::new(&bytes);
    let mut items = Vec::new();
    while !reader.is_empty() {
        match decode(&mut reader) {
            Ok(item) => items.push(item),
            Err(_) => break,
        }
    }
    items
}

/// Encodes a typed value into stored elements.
pub fn to_elements(encode: impl FnOnce(&mut Vec<u8>)) -> Vec<Element> {
    let mut bytes = Vec::new();
    encode(&mut bytes);
    decode_to_end(&mut Reader::new(&bytes)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ApplicationValue, Date, Time, TimeValue};

    #[test]
    fn splits_and_checks_daily_schedules() {
        let monday = DailySchedule {
            day_schedule: vec![TimeValue {
                time: Time::new(8, 0, 0, 0),
                value: ApplicationValue::Real(21.0),
            }],
        };
        let mut elements = to_elements(|b| monday.encode(b));
        elements.extend(to_elements(|b| DailySchedule::default().encode(b)));
        let items = split_items(ItemType::DailySchedule, &elements, 7).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], to_elements(|b| monday.encode(b)));
        assert_eq!(
            split_items(ItemType::DailySchedule, &elements, 1),
            Err(PropertyError::NO_SPACE)
        );
        // A bare time-value is not a daily schedule.
        let bare = vec![Element::Application(ApplicationValue::Time(Time::new(
            8, 0, 0, 0,
        )))];
        assert_eq!(
            split_items(ItemType::DailySchedule, &bare, 7),
            Err(PropertyError::INVALID_DATA_TYPE)
        );
    }

    #[test]
    fn range_checks_give_value_out_of_range() {
        let mut bytes = Vec::new();
        300u16.encode_application(&mut bytes);
        let elements = decode_to_end(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            split_items(ItemType::Priority, &elements, 3),
            Err(PropertyError::VALUE_OUT_OF_RANGE)
        );
        let entry = CalendarEntry::Date(Date::new(2025, 12, 25, 255));
        let elements = to_elements(|b| entry.encode(b));
        let items = split_items(ItemType::CalendarEntry, &elements, 8).unwrap();
        assert_eq!(decode_items(&items[0], CalendarEntry::decode), vec![entry]);
    }
}
