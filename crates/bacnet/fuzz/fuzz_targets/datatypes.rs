//! Fuzz target: the constructed datatypes of schedules, calendars, notification classes,
//! COV subscriptions and trend logs (BACnetDateRange, BACnetCalendarEntry, BACnetTimeValue,
//! BACnetDailySchedule, BACnetSpecialEvent, BACnetDestination, BACnetRecipient,
//! BACnetRecipientProcess, BACnetAddress, BACnetCOVSubscription, BACnetLogRecord and its
//! datum, the property references and BACnetPropertyValue). Whatever decodes must
//! re-encode stably, and calendar matching must not panic. The driver is shared with
//! `tests/datatypes_fuzz_driver.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../drivers/datatypes.rs");

fuzz_target!(|data: &[u8]| drive(data));
