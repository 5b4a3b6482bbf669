//! Clause 20.2 application-layer encoding: tags, primitive values, generic tagged data and
//! the constructed types that services and objects share.

pub mod abstract_syntax;
pub mod bit_string;
pub mod calendar;
pub mod character_string;
pub mod context;
pub mod date_time;
pub mod error;
pub mod json;
pub mod log_record;
pub mod object_identifier;
pub mod primitive;
pub mod priority_array;
pub mod property_reference;
pub mod property_value;
pub mod reader;
pub mod recipient;
pub mod schedule;
pub mod status_flags;
pub mod tag;

pub use abstract_syntax::Element;
pub use bit_string::BitString;
pub use calendar::{CalendarEntry, DateRange, WeekNDay};
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
pub use tag::{Tag, TagClass, TagKind};
