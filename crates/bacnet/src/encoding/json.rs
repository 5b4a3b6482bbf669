//! The one mapping of application values to JSON and back, used by device profiles
//! (`crate::objects::profile`, a file format users write) and by the dissector and the
//! CLI/Python read results (`crate::inspect`).
//!
//! Two forms share the kind names, numbers and the date and time texts below:
//! - the profile form ([`parse_value`] / [`value_json`]): a bare number is a REAL, a bare
//!   `true`/`false` a BOOLEAN, otherwise `{"kind": value}`;
//! - the described form ([`application_json`] / [`element_json`]): every value as
//!   `{"type": kind, "value": ...}` (character strings as `character-string`), which
//!   [`parse_value`] reads back too for the kinds a profile holds.
//!
//! | value | JSON |
//! |---|---|
//! | primitive value | a number (REAL), `true`/`false`, `null`, or one of `{"real": 1.5}`, `{"double": 1.5}`, `{"unsigned": 3}`, `{"signed": -3}`, `{"enumerated": 1}`, `{"boolean": true}`, `{"string": "x"}` (also `{"type": "real", "value": 1.5}`, as [`application_json`] writes) |
//! | time | `"HH:MM"`, `"HH:MM:SS"` or `"HH:MM:SS.hh"` (written with `*` for an unspecified field) |
//! | date | `"YYYY-MM-DD"`, any field `*` for "any": `"*-12-25"`; a specified weekday follows as `" (weekday N)"`, Monday 1 |
//! | date range | `["2025-01-01", "2025-12-31"]`; `"*-*-*"` leaves a side open |
//! | calendar entry | `{"date": D}`, `{"range": [D, D]}` or `{"week_n_day": [month, week, weekday]}` (255 for any) |
//! | time-values | `[["08:00", 21.0], ["18:00", null]]` |
//! | special event | a calendar entry's key or `{"calendar": "calendar,1"}`, with `"times"` (time-values) and `"priority"` (1..=16) |
//! | object property reference | `"av,1:present-value"`, `"av,1:priority-array[8]"` |
//! | destination | `{"device": 9}` or `{"address": "192.168.1.20:47808"}`, `"process"`, `"confirmed"` (false), `"days"` (`[1..7]`, Monday 1; default all), `"from"`/`"to"` (default all day), `"transitions"` (`[true, true, true]`) |

use serde_json::{Value, json};

use crate::encoding::date_time::UNSPECIFIED;
use crate::encoding::{
    ApplicationValue, BacnetAddress, BitString, CalendarEntry, DailySchedule, Date, DateRange,
    Destination, DeviceObjectPropertyReference, Element, ObjectIdentifier, Recipient, SpecialEvent,
    SpecialEventPeriod, Time, TimeValue, WeekNDay,
};
use crate::enums::PropertyIdentifier;

/// A JSON value that does not describe what was expected: where, and why. (Device profiles
/// report it as `crate::objects::profile::ProfileError`.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct JsonError {
    /// JSON path of the bad member (`objects[3].units`), or `line L column C` for syntax.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl JsonError {
    pub(crate) fn new(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

type Parsed<T> = Result<T, JsonError>;

fn error(path: &str, message: impl Into<String>) -> JsonError {
    JsonError::new(path, message)
}

/// A primitive value in its JSON form.
pub fn parse_value(value: &Value, path: &str) -> Parsed<ApplicationValue> {
    let number = |v: &Value| v.as_f64().filter(|n| n.is_finite());
    Ok(match value {
        Value::Null => ApplicationValue::Null,
        Value::Bool(flag) => ApplicationValue::Boolean(*flag),
        Value::Number(_) => match number(value) {
            Some(n) if n.abs() <= f64::from(f32::MAX) => ApplicationValue::Real(n as f32),
            _ => return Err(error(path, "does not fit a REAL")),
        },
        Value::Object(map) if map.len() == 1 || described(map).is_some() => {
            let (kind, inner) = match described(map) {
                Some(pair) => pair,
                None => map
                    .iter()
                    .next()
                    .map(|(kind, inner)| (kind.as_str(), inner))
                    .ok_or_else(|| error(path, "empty value"))?,
            };
            let bad = || error(path, format!("bad {kind} value {inner}"));
            match kind {
                "null" if inner.is_null() => ApplicationValue::Null,
                "real" => ApplicationValue::Real(
                    number(inner)
                        .filter(|n| n.abs() <= f64::from(f32::MAX))
                        .ok_or_else(bad)? as f32,
                ),
                "double" => ApplicationValue::Double(number(inner).ok_or_else(bad)?),
                "unsigned" => ApplicationValue::Unsigned(inner.as_u64().ok_or_else(bad)?),
                "signed" => ApplicationValue::Signed(inner.as_i64().ok_or_else(bad)?),
                "enumerated" => ApplicationValue::Enumerated(
                    inner
                        .as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(bad)?,
                ),
                "boolean" => ApplicationValue::Boolean(inner.as_bool().ok_or_else(bad)?),
                "string" | "character-string" => {
                    ApplicationValue::CharacterString(inner.as_str().ok_or_else(bad)?.to_owned())
                }
                other => return Err(error(path, format!("unknown value kind {other:?}"))),
            }
        }
        _ => {
            return Err(error(
                path,
                "expected a number, true/false, null or {\"kind\": value}",
            ));
        }
    })
}

/// `{"type": kind, "value": v}`, the described form, as `(kind, v)`.
/// Extra members a described value may carry (`name`, `enumeration`, see
/// `crate::app::value_names`) are ignored here.
fn described(map: &serde_json::Map<String, Value>) -> Option<(&str, &Value)> {
    let extra =
        usize::from(map.contains_key("name")) + usize::from(map.contains_key("enumeration"));
    if map.len() != 2 + extra {
        return None;
    }
    Some((map.get("type")?.as_str()?, map.get("value")?))
}

/// The profile form of a primitive value.
pub fn value_json(value: &ApplicationValue) -> Value {
    match value {
        ApplicationValue::Null => Value::Null,
        ApplicationValue::Boolean(flag) => json!(flag),
        ApplicationValue::Real(n) => json!(n),
        ApplicationValue::Double(n) => json!({ "double": n }),
        ApplicationValue::Unsigned(n) => json!({ "unsigned": n }),
        ApplicationValue::Signed(n) => json!({ "signed": n }),
        ApplicationValue::Enumerated(n) => json!({ "enumerated": n }),
        ApplicationValue::CharacterString(text) => json!({ "string": text }),
        other => json!({ "string": format!("{other:?}") }),
    }
}

/// JSON descriptions of generic tagged data, in order.
pub fn elements_json(elements: &[Element]) -> Value {
    Value::Array(elements.iter().map(element_json).collect())
}

/// A JSON description of one element of generic tagged data.
pub fn element_json(element: &Element) -> Value {
    match element {
        Element::Application(v) => application_json(v),
        Element::Context { tag, data } => json!({"context": tag, "hex": hex(data)}),
        Element::Constructed { tag, children } => {
            json!({"context": tag, "children": elements_json(children)})
        }
    }
}

/// A JSON description of an application-tagged value: `{"type": ..., "value": ...}`.
pub fn application_json(value: &ApplicationValue) -> Value {
    let (kind, v) = match value {
        ApplicationValue::Null => ("null", Value::Null),
        ApplicationValue::Boolean(b) => ("boolean", json!(b)),
        ApplicationValue::Unsigned(u) => ("unsigned", json!(u)),
        ApplicationValue::Signed(i) => ("signed", json!(i)),
        ApplicationValue::Real(f) => ("real", float_json(f64::from(*f))),
        ApplicationValue::Double(f) => ("double", float_json(*f)),
        ApplicationValue::OctetString(b) => ("octet-string", json!(hex(b))),
        ApplicationValue::CharacterString(s) => ("character-string", json!(s)),
        ApplicationValue::BitString(bits) => {
            let len = bits.as_bytes().len() * 8 - usize::from(bits.unused_bits());
            let text: String = (0..len)
                .map(|i| if bits.get(i) { '1' } else { '0' })
                .collect();
            ("bit-string", json!(text))
        }
        ApplicationValue::Enumerated(e) => ("enumerated", json!(e)),
        ApplicationValue::Date(d) => ("date", json!(date_text(d))),
        ApplicationValue::Time(t) => ("time", json!(time_text(t))),
        ApplicationValue::ObjectIdentifier(o) => ("object-identifier", json!(o.to_string())),
    };
    json!({"type": kind, "value": v})
}

fn float_json(f: f64) -> Value {
    // JSON has no NaN or infinities: name them.
    serde_json::Number::from_f64(f).map_or_else(|| json!(f.to_string()), Value::Number)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text<'a>(value: &'a Value, path: &str) -> Parsed<&'a str> {
    value
        .as_str()
        .ok_or_else(|| error(path, "expected a string"))
}

fn array<'a>(value: &'a Value, path: &str) -> Parsed<&'a Vec<Value>> {
    value
        .as_array()
        .ok_or_else(|| error(path, "expected an array"))
}

/// `"HH:MM[:SS[.hh]]"`.
pub fn parse_time(value: &Value, path: &str) -> Parsed<Time> {
    let raw = text(value, path)?;
    let bad = || {
        error(
            path,
            format!("{raw:?} is not HH:MM, HH:MM:SS or HH:MM:SS.hh"),
        )
    };
    let (clock, hundredths) = match raw.split_once('.') {
        Some((clock, h)) => (clock, h.parse::<u8>().map_err(|_| bad())?),
        None => (raw, 0),
    };
    let parts: Vec<u8> = clock
        .split(':')
        .map(|p| p.parse::<u8>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let time = match parts.as_slice() {
        [h, m] => Time::new(*h, *m, 0, hundredths),
        [h, m, s] => Time::new(*h, *m, *s, hundredths),
        _ => return Err(bad()),
    };
    time.validate().map_err(|what| error(path, what))?;
    Ok(time)
}

/// A date or time field: two digits, or `*` when unspecified.
fn field_text(value: u8) -> String {
    if value == UNSPECIFIED {
        "*".to_owned()
    } else {
        format!("{value:02}")
    }
}

/// `"HH:MM:SS.hh"`, `*` for an unspecified field.
pub fn time_text(time: &Time) -> String {
    let field = field_text;
    format!(
        "{}:{}:{}.{}",
        field(time.hour),
        field(time.minute),
        field(time.second),
        field(time.hundredths)
    )
}

/// `"YYYY-MM-DD"` with `*` for any field, optionally followed by `" (weekday N)"`.
pub fn parse_date(value: &Value, path: &str) -> Parsed<Date> {
    let raw = text(value, path)?;
    let bad = || error(path, format!("{raw:?} is not YYYY-MM-DD (fields may be *)"));
    let (day_text, weekday) = match raw.split_once(" (weekday ") {
        Some((date, rest)) => {
            let weekday = rest
                .strip_suffix(')')
                .and_then(|n| n.parse::<u8>().ok())
                .ok_or_else(bad)?;
            (date, weekday)
        }
        None => (raw, UNSPECIFIED),
    };
    let fields: Vec<&str> = day_text.split('-').collect();
    let [year, month, day] = fields.as_slice() else {
        return Err(bad());
    };
    let field = |f: &str| -> Parsed<u16> {
        if f == "*" {
            Ok(u16::from(UNSPECIFIED))
        } else {
            f.parse().map_err(|_| bad())
        }
    };
    let year = if *year == "*" { 255 } else { field(year)? };
    let month = u8::try_from(field(month)?).map_err(|_| bad())?;
    let day = u8::try_from(field(day)?).map_err(|_| bad())?;
    let date = if year == 255 {
        Date {
            year_since_1900: UNSPECIFIED,
            month,
            day,
            weekday,
        }
    } else {
        if !(1900..=2154).contains(&year) {
            return Err(error(path, format!("year {year} is outside 1900..=2154")));
        }
        Date::new(year, month, day, weekday)
    };
    date.validate().map_err(|what| error(path, what))?;
    Ok(date)
}

/// `"YYYY-MM-DD"` with `*` for an unspecified field, then `" (weekday N)"` when the weekday
/// is specified.
pub fn date_text(date: &Date) -> String {
    let part = field_text;
    let year = date
        .year()
        .map_or_else(|| "*".to_owned(), |y| y.to_string());
    let text = format!("{year}-{}-{}", part(date.month), part(date.day));
    if date.weekday == UNSPECIFIED {
        text
    } else {
        format!("{text} (weekday {})", date.weekday)
    }
}

/// `[D, D]`.
pub fn parse_date_range(value: &Value, path: &str) -> Parsed<DateRange> {
    match array(value, path)?.as_slice() {
        [start, end] => Ok(DateRange {
            start: parse_date(start, &format!("{path}[0]"))?,
            end: parse_date(end, &format!("{path}[1]"))?,
        }),
        _ => Err(error(path, "expected [start date, end date]")),
    }
}

/// The JSON form of a date range.
pub fn date_range_json(range: &DateRange) -> Value {
    json!([date_text(&range.start), date_text(&range.end)])
}

fn parse_entry(map: &serde_json::Map<String, Value>, path: &str) -> Parsed<Option<CalendarEntry>> {
    if let Some(date) = map.get("date") {
        return Ok(Some(CalendarEntry::Date(parse_date(
            date,
            &format!("{path}.date"),
        )?)));
    }
    if let Some(range) = map.get("range") {
        return Ok(Some(CalendarEntry::DateRange(parse_date_range(
            range,
            &format!("{path}.range"),
        )?)));
    }
    if let Some(pattern) = map.get("week_n_day") {
        let here = format!("{path}.week_n_day");
        let octets: Vec<u8> = array(pattern, &here)?
            .iter()
            .map(|v| v.as_u64().and_then(|n| u8::try_from(n).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| error(&here, "expected three numbers 0..=255"))?;
        let [month, week_of_month, day_of_week] = octets[..] else {
            return Err(error(&here, "expected [month, week of month, day of week]"));
        };
        let pattern = WeekNDay {
            month,
            week_of_month,
            day_of_week,
        };
        pattern.validate().map_err(|what| error(&here, what))?;
        return Ok(Some(CalendarEntry::WeekNDay(pattern)));
    }
    Ok(None)
}

/// A calendar entry (`date`, `range` or `week_n_day`).
pub fn parse_calendar_entry(value: &Value, path: &str) -> Parsed<CalendarEntry> {
    let map = value
        .as_object()
        .ok_or_else(|| error(path, "expected an object"))?;
    if map.len() != 1 {
        return Err(error(path, "expected one of date, range, week_n_day"));
    }
    parse_entry(map, path)?.ok_or_else(|| error(path, "expected one of date, range, week_n_day"))
}

/// The JSON form of a calendar entry.
pub fn calendar_entry_json(entry: &CalendarEntry) -> Value {
    match entry {
        CalendarEntry::Date(date) => json!({ "date": date_text(date) }),
        CalendarEntry::DateRange(range) => json!({ "range": date_range_json(range) }),
        CalendarEntry::WeekNDay(p) => {
            json!({ "week_n_day": [p.month, p.week_of_month, p.day_of_week] })
        }
    }
}

/// `[[time, value], ...]`.
pub fn parse_time_values(value: &Value, path: &str) -> Parsed<Vec<TimeValue>> {
    array(value, path)?
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let here = format!("{path}[{i}]");
            match pair.as_array().map(Vec::as_slice) {
                Some([time, value]) => Ok(TimeValue {
                    time: parse_time(time, &format!("{here}[0]"))?,
                    value: parse_value(value, &format!("{here}[1]"))?,
                }),
                _ => Err(error(&here, "expected [time, value]")),
            }
        })
        .collect()
}

fn time_values_json(values: &[TimeValue]) -> Value {
    Value::Array(
        values
            .iter()
            .map(|tv| json!([time_text(&tv.time), value_json(&tv.value)]))
            .collect(),
    )
}

/// Seven days of time-values, Monday first.
pub fn parse_weekly(value: &Value, path: &str) -> Parsed<Vec<DailySchedule>> {
    let days = array(value, path)?;
    if days.len() != 7 {
        return Err(error(path, "expected 7 days, Monday first"));
    }
    days.iter()
        .enumerate()
        .map(|(i, day)| {
            Ok(DailySchedule {
                day_schedule: parse_time_values(day, &format!("{path}[{i}]"))?,
            })
        })
        .collect()
}

/// The JSON form of a weekly schedule.
pub fn weekly_json(days: &[DailySchedule]) -> Value {
    Value::Array(
        days.iter()
            .map(|d| time_values_json(&d.day_schedule))
            .collect(),
    )
}

/// A special event.
pub fn parse_special_event(value: &Value, path: &str) -> Parsed<SpecialEvent> {
    let map = value
        .as_object()
        .ok_or_else(|| error(path, "expected an object"))?;
    for key in map.keys() {
        if ![
            "date",
            "range",
            "week_n_day",
            "calendar",
            "times",
            "priority",
        ]
        .contains(&key.as_str())
        {
            return Err(error(&format!("{path}.{key}"), "unknown member"));
        }
    }
    let period = match map.get("calendar") {
        Some(calendar) => {
            let here = format!("{path}.calendar");
            SpecialEventPeriod::CalendarReference(
                text(calendar, &here)?
                    .parse::<ObjectIdentifier>()
                    .map_err(|e| error(&here, e.to_string()))?,
            )
        }
        None => SpecialEventPeriod::CalendarEntry(
            parse_entry(map, path)?
                .ok_or_else(|| error(path, "expected one of date, range, week_n_day, calendar"))?,
        ),
    };
    let time_values = match map.get("times") {
        Some(times) => parse_time_values(times, &format!("{path}.times"))?,
        None => Vec::new(),
    };
    let event_priority = match map.get("priority") {
        None => 16,
        Some(p) => p
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .filter(|n| (1..=16).contains(n))
            .ok_or_else(|| error(&format!("{path}.priority"), "expected 1..=16"))?,
    };
    Ok(SpecialEvent {
        period,
        time_values,
        event_priority,
    })
}

/// The JSON form of a special event.
pub fn special_event_json(event: &SpecialEvent) -> Value {
    let mut value = match &event.period {
        SpecialEventPeriod::CalendarEntry(entry) => calendar_entry_json(entry),
        SpecialEventPeriod::CalendarReference(id) => json!({ "calendar": id.to_string() }),
    };
    value["times"] = time_values_json(&event.time_values);
    value["priority"] = json!(event.event_priority);
    value
}

/// `"OBJECT:PROPERTY"` or `"OBJECT:PROPERTY[INDEX]"`, optionally `"device,N/"` before.
pub fn parse_reference(value: &Value, path: &str) -> Parsed<DeviceObjectPropertyReference> {
    let raw = text(value, path)?;
    let bad = |why: String| error(path, format!("{raw:?}: {why}"));
    let (device, rest) = match raw.split_once('/') {
        Some((device, rest)) => (
            Some(
                device
                    .parse::<ObjectIdentifier>()
                    .map_err(|e| bad(e.to_string()))?,
            ),
            rest,
        ),
        None => (None, raw),
    };
    let (object, property) = rest
        .rsplit_once(':')
        .ok_or_else(|| bad("expected OBJECT:PROPERTY".to_owned()))?;
    let (property, array_index) = match property.strip_suffix(']').and_then(|p| p.split_once('[')) {
        Some((name, index)) => (
            name,
            Some(index.parse::<u32>().map_err(|e| bad(e.to_string()))?),
        ),
        None => (property, None),
    };
    Ok(DeviceObjectPropertyReference {
        object: object
            .parse()
            .map_err(|e: crate::encoding::ParseObjectIdentifierError| bad(e.to_string()))?,
        property: property
            .parse::<PropertyIdentifier>()
            .map_err(|e| bad(e.to_string()))?,
        array_index,
        device,
    })
}

/// The JSON form of a reference.
pub fn reference_json(reference: &DeviceObjectPropertyReference) -> Value {
    let device = reference
        .device
        .map(|d| format!("{d}/"))
        .unwrap_or_default();
    let index = reference
        .array_index
        .map(|i| format!("[{i}]"))
        .unwrap_or_default();
    json!(format!(
        "{device}{}:{}{index}",
        reference.object, reference.property
    ))
}

fn bits<const N: usize>(
    value: Option<&Value>,
    path: &str,
    default: [bool; N],
) -> Parsed<[bool; N]> {
    match value {
        None => Ok(default),
        Some(v) => {
            let flags: Vec<bool> = array(v, path)?
                .iter()
                .map(Value::as_bool)
                .collect::<Option<_>>()
                .ok_or_else(|| error(path, "expected booleans"))?;
            flags
                .try_into()
                .map_err(|_| error(path, format!("expected {N} booleans")))
        }
    }
}

/// A recipient-list destination.
pub fn parse_destination(value: &Value, path: &str) -> Parsed<Destination> {
    let map = value
        .as_object()
        .ok_or_else(|| error(path, "expected an object"))?;
    for key in map.keys() {
        if ![
            "device",
            "address",
            "process",
            "confirmed",
            "days",
            "from",
            "to",
            "transitions",
        ]
        .contains(&key.as_str())
        {
            return Err(error(&format!("{path}.{key}"), "unknown member"));
        }
    }
    let recipient = match (map.get("device"), map.get("address")) {
        (Some(device), None) => Recipient::Device(ObjectIdentifier::new(
            crate::enums::ObjectType::Device,
            device
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n < crate::encoding::object_identifier::MAX_INSTANCE)
                .ok_or_else(|| error(&format!("{path}.device"), "expected a device instance"))?,
        )),
        (None, Some(address)) => {
            let here = format!("{path}.address");
            let socket = text(address, &here)?
                .parse::<std::net::SocketAddrV4>()
                .map_err(|e| error(&here, e.to_string()))?;
            Recipient::Address(BacnetAddress::local_bip(socket))
        }
        _ => return Err(error(path, "give either device or address")),
    };
    let days = match map.get("days") {
        None => [true; 7],
        Some(list) => {
            let here = format!("{path}.days");
            let mut days = [false; 7];
            for day in array(list, &here)? {
                let n = day
                    .as_u64()
                    .filter(|n| (1..=7).contains(n))
                    .ok_or_else(|| error(&here, "expected weekdays 1 (Monday) ..= 7"))?;
                days[(n - 1) as usize] = true;
            }
            days
        }
    };
    Ok(Destination {
        valid_days: BitString::from_bits(&days),
        from_time: match map.get("from") {
            Some(t) => parse_time(t, &format!("{path}.from"))?,
            None => Time::new(0, 0, 0, 0),
        },
        to_time: match map.get("to") {
            Some(t) => parse_time(t, &format!("{path}.to"))?,
            None => Time::new(23, 59, 59, 99),
        },
        recipient,
        process_identifier: match map.get("process") {
            None => 0,
            Some(p) => p
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| error(&format!("{path}.process"), "expected 0..=4294967295"))?,
        },
        issue_confirmed_notifications: match map.get("confirmed") {
            None => false,
            Some(c) => c
                .as_bool()
                .ok_or_else(|| error(&format!("{path}.confirmed"), "expected true or false"))?,
        },
        transitions: BitString::from_bits(&bits(
            map.get("transitions"),
            &format!("{path}.transitions"),
            [true; 3],
        )?),
    })
}

/// The JSON form of a destination.
pub fn destination_json(destination: &Destination) -> Value {
    let mut value = match &destination.recipient {
        Recipient::Device(device) => json!({ "device": device.instance() }),
        Recipient::Address(address) => match <[u8; 6]>::try_from(address.mac.as_slice()) {
            Ok([a, b, c, d, hi, lo]) if address.network == 0 => {
                let socket = std::net::SocketAddrV4::new(
                    std::net::Ipv4Addr::new(a, b, c, d),
                    u16::from_be_bytes([hi, lo]),
                );
                json!({ "address": socket.to_string() })
            }
            _ => json!({ "network": address.network, "mac": address.mac }),
        },
    };
    let days: Vec<u8> = (0..7u8)
        .filter(|d| destination.valid_days.get(usize::from(*d)))
        .map(|d| d + 1)
        .collect();
    value["process"] = json!(destination.process_identifier);
    value["confirmed"] = json!(destination.issue_confirmed_notifications);
    value["days"] = json!(days);
    value["from"] = json!(time_text(&destination.from_time));
    value["to"] = json!(time_text(&destination.to_time));
    value["transitions"] = json!([
        destination.transitions.get(0),
        destination.transitions.get(1),
        destination.transitions.get(2)
    ]);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_times_and_dates() {
        assert_eq!(
            parse_value(&json!(21.5), "v").unwrap(),
            ApplicationValue::Real(21.5)
        );
        assert_eq!(
            parse_value(&json!({"enumerated": 1}), "v").unwrap(),
            ApplicationValue::Enumerated(1)
        );
        assert!(parse_value(&json!({"colour": 1}), "v").is_err());
        assert_eq!(
            parse_time(&json!("08:30"), "t").unwrap(),
            Time::new(8, 30, 0, 0)
        );
        assert_eq!(
            parse_time(&json!("23:59:59.99"), "t").unwrap(),
            Time::new(23, 59, 59, 99)
        );
        assert!(parse_time(&json!("24:00"), "t").is_err());
        let christmas = parse_date(&json!("*-12-25"), "d").unwrap();
        assert_eq!(christmas.year(), None);
        assert_eq!((christmas.month, christmas.day), (12, 25));
        assert_eq!(date_text(&christmas), "*-12-25");
        let err = parse_date(&json!("2025-15-01"), "objects[3].date_list[0].date").unwrap_err();
        assert_eq!(err.path, "objects[3].date_list[0].date");
    }

    #[test]
    fn special_events_references_and_destinations_round_trip() {
        let event = json!({"calendar": "calendar,1", "times": [["00:00", 15.0]], "priority": 10});
        let parsed = parse_special_event(&event, "e").unwrap();
        assert_eq!(
            parse_special_event(&special_event_json(&parsed), "e").unwrap(),
            parsed
        );
        let reference = parse_reference(&json!("av,1:priority-array[8]"), "r").unwrap();
        assert_eq!(reference.array_index, Some(8));
        assert_eq!(
            reference_json(&reference),
            json!("analog-value,1:priority-array[8]")
        );
        let destination = parse_destination(
            &json!({"address": "127.0.0.1:47808", "process": 3, "confirmed": true, "days": [1, 2, 3, 4, 5]}),
            "d",
        )
        .unwrap();
        assert_eq!(
            parse_destination(&destination_json(&destination), "d").unwrap(),
            destination
        );
        assert!(!destination.valid_days.get(5));
        assert!(parse_destination(&json!({"process": 1}), "d").is_err());
    }
}
