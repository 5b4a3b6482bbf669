//! Clause 20.2 application-layer encoding: tags, primitive values, generic tagged data and
//! the constructed types that services and objects share.

pub mod abstract_syntax;
pub(crate) mod bit_string;
pub mod calendar;
pub(crate) mod character_string;
pub(crate) mod context;
pub mod date_time;
pub(crate) mod error;
pub mod json;
pub(crate) mod log_record;
pub mod object_identifier;
pub(crate) mod primitive;
pub(crate) mod priority_array;
pub(crate) mod property_reference;
pub(crate) mod property_value;
pub(crate) mod reader;
pub(crate) mod recipient;
pub(crate) mod schedule;
pub(crate) mod status_flags;
pub(crate) mod tag;

pub use abstract_syntax::Element;
pub use bit_string::BitString;
pub use calendar::{CalendarEntry, DateRange, WeekNDay};
pub use character_string::character_set;
pub use date_time::{Date, DateTime, Time};
pub use error::{DecodeError, DecodeErrorKind, TagSpec};
pub use log_record::{LogDatum, LogRecord};
pub use object_identifier::{ObjectIdentifier, ParseObjectIdentifierError};
pub use primitive::{ApplicationTag, ApplicationValue, Enumerated, PrimitiveValue};
pub use priority_array::PriorityArray;
pub use property_reference::{DeviceObjectPropertyReference, ObjectPropertyReference};
pub use property_value::PropertyValue;
pub use reader::Reader;
pub use recipient::{BacnetAddress, CovSubscription, Destination, Recipient, RecipientProcess};
pub use schedule::{DailySchedule, SpecialEvent, SpecialEventPeriod, TimeValue};
pub use status_flags::StatusFlags;
pub use tag::{MAX_TAG_NUMBER, Tag, TagClass, TagKind};
