//! Device profiles: a JSON description of a device and its objects. (The benchmark
//! profiles `stress` and `large` are fixtures of `buildwire-bench`:
//! `crates/bench/src/bacnet/profiles.rs`.)
//!
//! # JSON format
//!
//! One object with a `device` and an `objects` member. Every member is checked: an
//! unknown key, a wrong type or a value out of range gives a [`ProfileError`] naming the
//! field (`objects[2].units: unknown EngineeringUnits name "furlongs"`).
//!
//! ```json
//! {
//!   "device": {
//!     "instance": 400,
//!     "name": "Docker-Stress-400",
//!     "vendor_name": "bac-py",
//!     "vendor_identifier": 0,
//!     "model_name": "bac-py-docker-stress",
//!     "segmentation": "no-segmentation",
//!     "services": ["read-property", "read-property-multiple", "who-is", "i-am"]
//!   },
//!   "objects": [
//!     { "type": "analog-input", "instance": 1, "name": "AI-1",
//!       "present_value": 61.5, "units": "degrees-fahrenheit" },
//!     { "type": "analog-value", "instance": 1, "name": "AV-1",
//!       "present_value": 71.0, "commandable": true, "min_pres_value": 0.0 },
//!     { "type": "binary-output", "instance": 1, "name": "BO-1", "present_value": 0 },
//!     { "type": "multi-state-value", "instance": 1, "name": "MSV-1",
//!       "commandable": true, "state_text": ["Off", "Low", "High"] },
//!     { "type": "notification-class", "instance": 1, "name": "NC-1",
//!       "priority": [3, 3, 3], "ack_required": [true, false, false] }
//!   ]
//! }
//! ```
//!
//! Device members: `instance` and `name` are required; `description`, `location`,
//! `vendor_name`, `vendor_identifier`, `model_name`, `firmware_revision`,
//! `application_software_version`, `max_apdu_length_accepted`, `segmentation`,
//! `max_segments_accepted`, `apdu_timeout`, `number_of_apdu_retries` and `services`
//! (names of `BACnetServicesSupported` bits) default to [`DeviceConfig::default`].
//!
//! Object members: `type` (an object type name or alias such as `"ai"`), `instance` and
//! `name` are required. Optional: `description`, `present_value` (a number: the analog
//! value, 0/1 for binary objects, 1..=N for multi-state objects), `units`, `commandable`,
//! `out_of_service`, `min_pres_value`, `max_pres_value`, `state_text` or
//! `number_of_states` (multi-state), `priority` and `ack_required` (notification class).
//! Members that do not apply to a type (units of a calendar, say) are accepted and
//! ignored when the object is built.

use serde_json::{Map, Value, json};

use super::database::{MAX_OBJECTS, ObjectDatabase};
use super::device::{DeviceConfig, SUPPORTED_OBJECT_TYPES, ServiceSupported};
use super::object::Object;
use super::object_types::{self, AnalogSettings, ScheduleSettings};
use super::trend_log::{self, TrendLogSettings};
use super::value::PropertyData;
use crate::encoding::json as data;
use crate::encoding::object_identifier::MAX_INSTANCE;
use crate::encoding::{
    ApplicationValue, CalendarEntry, DailySchedule, DateRange, Destination,
    DeviceObjectPropertyReference, SpecialEvent,
};
use crate::enums::{BinaryPv, EngineeringUnits, ObjectType, PropertyIdentifier, Segmentation};

/// Most states a multi-state object of a profile may have.
pub const MAX_STATES: u32 = 1024;
/// Largest profile document accepted, in bytes.
pub const MAX_PROFILE_BYTES: usize = 64 * 1024 * 1024;

/// A profile that could not be parsed or built: where (`path`), and why (`message`). The
/// values in a profile are read by [`crate::encoding::json`], which reports the same error.
pub use crate::encoding::json::JsonError as ProfileError;

/// The description of one object in a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSpec {
    /// Object type (one of [`SUPPORTED_OBJECT_TYPES`] other than Device).
    pub object_type: ObjectType,
    /// Instance number.
    pub instance: u32,
    /// object-name.
    pub name: String,
    /// description.
    pub description: String,
    /// Starting present-value: analog value (a REAL, hence `f32`), 0/1 for binary,
    /// 1..=N for multi-state.
    pub present_value: Option<f32>,
    /// units (analog objects).
    pub units: EngineeringUnits,
    /// Whether a value object is commandable (outputs always are).
    pub commandable: bool,
    /// Starting out-of-service.
    pub out_of_service: bool,
    /// min-pres-value (analog).
    pub min_pres_value: Option<f32>,
    /// max-pres-value (analog).
    pub max_pres_value: Option<f32>,
    /// state-text (multi-state; its length is number-of-states).
    pub state_text: Vec<String>,
    /// priority (notification class).
    pub priority: [u8; 3],
    /// ack-required (notification class).
    pub ack_required: [bool; 3],
    /// recipient-list (notification class).
    pub recipients: Vec<Destination>,
    /// weekly-schedule, Monday first (schedule; `None`: seven empty days).
    pub weekly_schedule: Option<Vec<DailySchedule>>,
    /// exception-schedule (schedule).
    pub exception_schedule: Vec<SpecialEvent>,
    /// schedule-default (schedule; `None`: REAL 0.0).
    pub schedule_default: Option<ApplicationValue>,
    /// effective-period (schedule; `None`: every date).
    pub effective_period: Option<DateRange>,
    /// list-of-object-property-references (schedule).
    pub references: Vec<DeviceObjectPropertyReference>,
    /// priority-for-writing (schedule; `None`: 16).
    pub priority_for_writing: Option<u8>,
    /// date-list (calendar).
    pub date_list: Vec<CalendarEntry>,
    /// log-device-object-property (trend log).
    pub log: Option<DeviceObjectPropertyReference>,
    /// log-interval in seconds (trend log; `None`: 60).
    pub log_interval: Option<f64>,
    /// buffer-size (trend log; `None`: 1000).
    pub buffer_size: Option<u32>,
}

impl ObjectSpec {
    /// Parses one object of the JSON format (the members listed in the module doc), for
    /// adding objects to a running device.
    pub fn from_json(text: &str) -> Result<ObjectSpec, ProfileError> {
        let document = parse_json(text, "(object)")?;
        let mut fields = Fields::new("", &document)?;
        let spec = parse_object(&mut fields)?;
        fields.finish()?;
        Ok(spec)
    }

    /// A spec with defaults for everything but type, instance and name.
    pub fn new(object_type: ObjectType, instance: u32, name: &str) -> Self {
        Self {
            object_type,
            instance,
            name: name.to_owned(),
            description: String::new(),
            present_value: None,
            units: EngineeringUnits::NoUnits,
            commandable: false,
            out_of_service: false,
            min_pres_value: None,
            max_pres_value: None,
            state_text: Vec::new(),
            priority: [255, 255, 255],
            ack_required: [false; 3],
            recipients: Vec::new(),
            weekly_schedule: None,
            exception_schedule: Vec::new(),
            schedule_default: None,
            effective_period: None,
            references: Vec::new(),
            priority_for_writing: None,
            date_list: Vec::new(),
            log: None,
            log_interval: None,
            buffer_size: None,
        }
    }

    /// Builds the object.
    pub fn build(&self) -> Object {
        let pv = self.present_value;
        let mut object = match self.object_type {
            ObjectType::AnalogInput | ObjectType::AnalogOutput | ObjectType::AnalogValue => {
                let settings = AnalogSettings {
                    present_value: pv.unwrap_or(0.0),
                    units: self.units,
                    min_pres_value: self.min_pres_value,
                    max_pres_value: self.max_pres_value,
                    ..AnalogSettings::default()
                };
                object_types::analog(
                    self.object_type,
                    self.instance,
                    &self.name,
                    &settings,
                    self.commandable,
                )
            }
            ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue => {
                let state = if pv.unwrap_or(0.0) == 1.0 {
                    BinaryPv::Active
                } else {
                    BinaryPv::Inactive
                };
                object_types::binary(
                    self.object_type,
                    self.instance,
                    &self.name,
                    state,
                    self.commandable,
                )
            }
            ObjectType::MultiStateInput | ObjectType::MultiStateValue => object_types::multi_state(
                self.object_type,
                self.instance,
                &self.name,
                pv.unwrap_or(1.0) as u32,
                &self.state_text,
                self.commandable,
            ),
            ObjectType::Schedule => {
                let defaults = ScheduleSettings::default();
                let settings = ScheduleSettings {
                    weekly: self.weekly_schedule.clone().unwrap_or(defaults.weekly),
                    exceptions: self.exception_schedule.clone(),
                    default: self.schedule_default.clone().unwrap_or(defaults.default),
                    effective_period: self.effective_period.unwrap_or(defaults.effective_period),
                    references: self.references.clone(),
                    priority_for_writing: self
                        .priority_for_writing
                        .unwrap_or(defaults.priority_for_writing),
                };
                object_types::schedule_with(self.instance, &self.name, &settings)
            }
            ObjectType::Calendar => {
                object_types::calendar_with(self.instance, &self.name, &self.date_list)
            }
            ObjectType::TrendLog => {
                let defaults = TrendLogSettings::default();
                let settings = TrendLogSettings {
                    log: self.log,
                    log_interval: self
                        .log_interval
                        .map_or(defaults.log_interval, |s| (s * 100.0).round() as u32),
                    buffer_size: self.buffer_size.unwrap_or(defaults.buffer_size),
                    ..defaults
                };
                trend_log::trend_log(self.instance, &self.name, &settings)
            }
            _ => object_types::notification_class_with(
                self.instance,
                &self.name,
                self.priority,
                self.ack_required,
                &self.recipients,
            ),
        };
        object.set(
            PropertyIdentifier::Description,
            PropertyData::text(&self.description),
        );
        if object.has(PropertyIdentifier::OutOfService) {
            object.set(
                PropertyIdentifier::OutOfService,
                PropertyData::Single(ApplicationValue::Boolean(self.out_of_service)),
            );
        }
        object
    }

    fn to_json(&self) -> Value {
        let mut map = Map::new();
        let type_name = self.object_type.name().unwrap_or_default();
        map.insert("type".into(), json!(type_name));
        map.insert("instance".into(), json!(self.instance));
        map.insert("name".into(), json!(self.name));
        if !self.description.is_empty() {
            map.insert("description".into(), json!(self.description));
        }
        if let Some(pv) = self.present_value {
            map.insert("present_value".into(), json!(pv));
        }
        if let Some(units) = self.units.name() {
            map.insert("units".into(), json!(units));
        }
        map.insert("commandable".into(), json!(self.commandable));
        map.insert("out_of_service".into(), json!(self.out_of_service));
        if let Some(min) = self.min_pres_value {
            map.insert("min_pres_value".into(), json!(min));
        }
        if let Some(max) = self.max_pres_value {
            map.insert("max_pres_value".into(), json!(max));
        }
        if !self.state_text.is_empty() {
            map.insert("state_text".into(), json!(self.state_text));
        }
        if self.object_type == ObjectType::NotificationClass {
            map.insert("priority".into(), json!(self.priority));
            map.insert("ack_required".into(), json!(self.ack_required));
            map.insert(
                "recipients".into(),
                Value::Array(self.recipients.iter().map(data::destination_json).collect()),
            );
        }
        if let Some(weekly) = &self.weekly_schedule {
            map.insert("weekly_schedule".into(), data::weekly_json(weekly));
        }
        if !self.exception_schedule.is_empty() {
            map.insert(
                "exception_schedule".into(),
                Value::Array(
                    self.exception_schedule
                        .iter()
                        .map(data::special_event_json)
                        .collect(),
                ),
            );
        }
        if let Some(default) = &self.schedule_default {
            map.insert("schedule_default".into(), data::value_json(default));
        }
        if let Some(range) = &self.effective_period {
            map.insert("effective_period".into(), data::date_range_json(range));
        }
        if !self.references.is_empty() {
            map.insert(
                "references".into(),
                Value::Array(self.references.iter().map(data::reference_json).collect()),
            );
        }
        if let Some(priority) = self.priority_for_writing {
            map.insert("priority_for_writing".into(), json!(priority));
        }
        if !self.date_list.is_empty() {
            map.insert(
                "date_list".into(),
                Value::Array(
                    self.date_list
                        .iter()
                        .map(data::calendar_entry_json)
                        .collect(),
                ),
            );
        }
        if let Some(log) = &self.log {
            map.insert("log".into(), data::reference_json(log));
        }
        if let Some(interval) = self.log_interval {
            map.insert("log_interval".into(), json!(interval));
        }
        if let Some(size) = self.buffer_size {
            map.insert("buffer_size".into(), json!(size));
        }
        Value::Object(map)
    }
}

/// A device and its objects.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProfile {
    /// The Device object's configuration.
    pub device: DeviceConfig,
    /// The other objects, in object-list order.
    pub objects: Vec<ObjectSpec>,
}

impl DeviceProfile {
    /// Builds the database. Errors name the object whose identifier or name repeats.
    pub fn build(&self) -> Result<ObjectDatabase, ProfileError> {
        // Instances are 22 bits; an identifier would silently wrap a larger one.
        let max = crate::encoding::object_identifier::MAX_INSTANCE;
        if self.device.instance >= max {
            return Err(ProfileError::new(
                "device.instance",
                format!(
                    "{} is out of range: device instances go from 0 to {} ({max} means \
                     \"any device\")",
                    self.device.instance,
                    max - 1
                ),
            ));
        }
        if let Some((index, spec)) = self
            .objects
            .iter()
            .enumerate()
            .find(|(_, spec)| spec.instance > max)
        {
            return Err(ProfileError::new(
                &format!("objects[{index}].instance"),
                format!(
                    "{} is out of range: object instances go from 0 to {max}",
                    spec.instance
                ),
            ));
        }
        let mut db = ObjectDatabase::new(&self.device);
        for (index, spec) in self.objects.iter().enumerate() {
            db.add(spec.build()).map_err(|error| {
                let field = if error == super::PropertyError::DUPLICATE_NAME {
                    "name"
                } else {
                    "instance"
                };
                ProfileError::new(&format!("objects[{index}].{field}"), error.to_string())
            })?;
        }
        Ok(db)
    }

    /// The JSON document (see the module doc) describing this profile.
    pub fn to_json(&self) -> String {
        let d = &self.device;
        let services: Vec<&str> = d.services.iter().filter_map(|s| s.name()).collect();
        let document = json!({
            "device": {
                "instance": d.instance,
                "name": d.name,
                "description": d.description,
                "location": d.location,
                "vendor_name": d.vendor_name,
                "vendor_identifier": d.vendor_identifier,
                "model_name": d.model_name,
                "firmware_revision": d.firmware_revision,
                "application_software_version": d.application_software_version,
                "max_apdu_length_accepted": d.max_apdu_length_accepted,
                "segmentation": d.segmentation.name().unwrap_or("no-segmentation"),
                "max_segments_accepted": d.max_segments_accepted,
                "apdu_timeout": d.apdu_timeout,
                "number_of_apdu_retries": d.number_of_apdu_retries,
                "services": services,
            },
            "objects": self.objects.iter().map(ObjectSpec::to_json).collect::<Vec<_>>(),
        });
        serde_json::to_string_pretty(&document).unwrap_or_default()
    }

    /// Parses a JSON profile (see the module doc for the format).
    pub fn from_json(text: &str) -> Result<Self, ProfileError> {
        let document = parse_json(text, "(document)")?;
        let mut root = Fields::new("", &document)?;
        let device = parse_device(&mut root.object("device")?)?;
        let items = root.array("objects")?;
        root.finish()?;
        if items.len() > MAX_OBJECTS {
            return Err(ProfileError::new(
                "objects",
                format!("more than {MAX_OBJECTS} objects"),
            ));
        }
        let objects = items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let mut fields = Fields::new(&format!("objects[{index}]"), item)?;
                let spec = parse_object(&mut fields)?;
                fields.finish()?;
                Ok(spec)
            })
            .collect::<Result<Vec<_>, ProfileError>>()?;
        Ok(Self { device, objects })
    }
}

/// JSON text of at most [`MAX_PROFILE_BYTES`], parsed; `what` names it in the size error.
fn parse_json(text: &str, what: &str) -> Result<Value, ProfileError> {
    if text.len() > MAX_PROFILE_BYTES {
        return Err(ProfileError::new(
            what,
            format!("larger than {MAX_PROFILE_BYTES} bytes"),
        ));
    }
    serde_json::from_str(text).map_err(|error| {
        ProfileError::new(
            &format!("line {} column {}", error.line(), error.column()),
            error.to_string(),
        )
    })
}

/// A JSON object being read member by member; [`Fields::finish`] rejects leftovers.
struct Fields<'a> {
    path: String,
    map: &'a Map<String, Value>,
    used: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(path: &str, value: &'a Value) -> Result<Self, ProfileError> {
        let shown = if path.is_empty() { "(document)" } else { path };
        match value {
            Value::Object(map) => Ok(Self {
                path: path.to_owned(),
                map,
                used: Vec::new(),
            }),
            _ => Err(ProfileError::new(shown, "expected a JSON object")),
        }
    }

    fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn error(&self, key: &str, message: impl Into<String>) -> ProfileError {
        ProfileError::new(&self.path_of(key), message)
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn required(&mut self, key: &'static str) -> Result<&'a Value, ProfileError> {
        self.get(key)
            .ok_or_else(|| self.error(key, "missing required member"))
    }

    fn object(&mut self, key: &'static str) -> Result<Fields<'a>, ProfileError> {
        let value = self.required(key)?;
        Fields::new(&self.path_of(key), value)
    }

    fn array(&mut self, key: &'static str) -> Result<&'a Vec<Value>, ProfileError> {
        match self.get(key) {
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(self.error(key, "expected an array")),
            None => Err(self.error(key, "missing required member")),
        }
    }

    fn string(&mut self, key: &'static str) -> Result<Option<String>, ProfileError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.error(key, "expected a string")),
        }
    }

    fn unsigned(&mut self, key: &'static str, max: u64) -> Result<Option<u64>, ProfileError> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n <= max => Ok(Some(n)),
                Some(n) => Err(self.error(key, format!("{n} is larger than {max}"))),
                None => Err(self.error(key, "expected a non-negative integer")),
            },
        }
    }

    fn u32(&mut self, key: &'static str) -> Result<Option<u32>, ProfileError> {
        Ok(self
            .unsigned(key, u64::from(u32::MAX))?
            .and_then(|n| u32::try_from(n).ok()))
    }

    /// A number stored as a BACnet REAL.
    fn real(&mut self, key: &'static str) -> Result<Option<f32>, ProfileError> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => match value.as_f64() {
                Some(number) if number.is_finite() && number.abs() <= f64::from(f32::MAX) => {
                    Ok(Some(number as f32))
                }
                Some(number) => Err(self.error(key, format!("{number} does not fit a REAL"))),
                None => Err(self.error(key, "expected a number")),
            },
        }
    }

    fn boolean(&mut self, key: &'static str) -> Result<Option<bool>, ProfileError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(_) => Err(self.error(key, "expected true or false")),
        }
    }

    fn parsed<T: std::str::FromStr>(&mut self, key: &'static str) -> Result<Option<T>, ProfileError>
    where
        T::Err: std::fmt::Display,
    {
        match self.string(key)? {
            None => Ok(None),
            Some(text) => text
                .parse()
                .map(Some)
                .map_err(|error: T::Err| self.error(key, error.to_string())),
        }
    }

    fn finish(&self) -> Result<(), ProfileError> {
        match self
            .map
            .keys()
            .find(|key| !self.used.contains(&key.as_str()))
        {
            Some(key) => Err(self.error(key, "unknown member")),
            None => Ok(()),
        }
    }
}

fn parse_device(fields: &mut Fields<'_>) -> Result<DeviceConfig, ProfileError> {
    let defaults = DeviceConfig::default();
    let instance = fields
        .unsigned("instance", u64::from(MAX_INSTANCE - 1))?
        .ok_or_else(|| fields.error("instance", "missing required member"))?;
    let name = fields
        .string("name")?
        .ok_or_else(|| fields.error("name", "missing required member"))?;
    let text = |fields: &mut Fields<'_>, key, default: &String| {
        fields
            .string(key)
            .map(|v| v.unwrap_or_else(|| default.clone()))
    };
    let services = match fields.get("services") {
        None => defaults.services.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str()
                    .and_then(ServiceSupported::from_name)
                    .ok_or_else(|| {
                        fields.error(&format!("services[{i}]"), format!("unknown service {item}"))
                    })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(fields.error("services", "expected an array of service names")),
    };
    let config = DeviceConfig {
        instance: u32::try_from(instance).unwrap_or_default(),
        name,
        description: text(fields, "description", &defaults.description)?,
        location: text(fields, "location", &defaults.location)?,
        vendor_name: text(fields, "vendor_name", &defaults.vendor_name)?,
        vendor_identifier: fields
            .unsigned("vendor_identifier", u64::from(u16::MAX))?
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(defaults.vendor_identifier),
        model_name: text(fields, "model_name", &defaults.model_name)?,
        firmware_revision: text(fields, "firmware_revision", &defaults.firmware_revision)?,
        application_software_version: text(
            fields,
            "application_software_version",
            &defaults.application_software_version,
        )?,
        max_apdu_length_accepted: fields
            .u32("max_apdu_length_accepted")?
            .unwrap_or(defaults.max_apdu_length_accepted),
        segmentation: fields
            .parsed::<Segmentation>("segmentation")?
            .unwrap_or(defaults.segmentation),
        max_segments_accepted: fields
            .u32("max_segments_accepted")?
            .unwrap_or(defaults.max_segments_accepted),
        apdu_timeout: fields.u32("apdu_timeout")?.unwrap_or(defaults.apdu_timeout),
        number_of_apdu_retries: fields
            .u32("number_of_apdu_retries")?
            .unwrap_or(defaults.number_of_apdu_retries),
        services,
    };
    fields.finish()?;
    Ok(config)
}

fn parse_object(fields: &mut Fields<'_>) -> Result<ObjectSpec, ProfileError> {
    let object_type: ObjectType = fields
        .parsed("type")?
        .ok_or_else(|| fields.error("type", "missing required member"))?;
    if object_type == ObjectType::Device || !SUPPORTED_OBJECT_TYPES.contains(&object_type) {
        return Err(fields.error(
            "type",
            format!("object type {object_type} is not supported here"),
        ));
    }
    let instance = fields
        .unsigned("instance", u64::from(MAX_INSTANCE - 1))?
        .ok_or_else(|| fields.error("instance", "missing required member"))?;
    let name = fields
        .string("name")?
        .ok_or_else(|| fields.error("name", "missing required member"))?;
    if name.is_empty() {
        return Err(fields.error("name", "must not be empty"));
    }
    let mut spec = ObjectSpec::new(
        object_type,
        u32::try_from(instance).unwrap_or_default(),
        &name,
    );
    spec.description = fields.string("description")?.unwrap_or_default();
    spec.present_value = fields.real("present_value")?;
    spec.units = fields.parsed("units")?.unwrap_or(EngineeringUnits::NoUnits);
    spec.commandable = fields.boolean("commandable")?.unwrap_or(false);
    spec.out_of_service = fields.boolean("out_of_service")?.unwrap_or(false);
    spec.min_pres_value = fields.real("min_pres_value")?;
    spec.max_pres_value = fields.real("max_pres_value")?;
    let count = fields.unsigned("number_of_states", u64::from(MAX_STATES))?;
    spec.state_text = match fields.get("state_text") {
        None => Vec::new(),
        Some(Value::Array(items)) if items.len() <= MAX_STATES as usize => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| fields.error(&format!("state_text[{i}]"), "expected a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(fields.error(
                "state_text",
                format!("expected an array of at most {MAX_STATES} strings"),
            ));
        }
    };
    let multi_state = matches!(
        object_type,
        ObjectType::MultiStateInput | ObjectType::MultiStateValue
    );
    match count {
        Some(n) if !spec.state_text.is_empty() && n != spec.state_text.len() as u64 => {
            return Err(fields.error("number_of_states", "does not match state_text"));
        }
        Some(n) if spec.state_text.is_empty() => {
            spec.state_text = object_types::numbered_states(u32::try_from(n).unwrap_or(0));
        }
        _ => {}
    }
    if multi_state && spec.state_text.is_empty() {
        return Err(fields.error(
            "state_text",
            "a multi-state object needs state_text or number_of_states",
        ));
    }
    if let Some(pv) = spec.present_value {
        let ok = match object_type {
            ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue => {
                pv == 0.0 || pv == 1.0
            }
            _ if multi_state => {
                pv.fract() == 0.0 && pv >= 1.0 && f64::from(pv) <= spec.state_text.len() as f64
            }
            _ => pv.is_finite(),
        };
        if !ok {
            return Err(fields.error(
                "present_value",
                format!("{pv} is out of range for {object_type}"),
            ));
        }
    }
    if let Some(items) = fields.get("priority") {
        spec.priority = three(items, |v| v.as_u64().and_then(|n| u8::try_from(n).ok()))
            .ok_or_else(|| fields.error("priority", "expected three integers 0..=255"))?;
    }
    if let Some(items) = fields.get("ack_required") {
        spec.ack_required = three(items, Value::as_bool)
            .ok_or_else(|| fields.error("ack_required", "expected three booleans"))?;
    }
    parse_constructed(fields, &mut spec)?;
    Ok(spec)
}

/// The schedule, calendar, recipient-list and trend-log members (JSON forms in
/// [`crate::encoding::json`]).
fn parse_constructed(fields: &mut Fields<'_>, spec: &mut ObjectSpec) -> Result<(), ProfileError> {
    let list = |fields: &mut Fields<'_>,
                key: &'static str|
     -> Result<Vec<(String, Value)>, ProfileError> {
        match fields.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) if items.len() <= super::datatypes::MAX_LIST_ITEMS => {
                Ok(items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (fields.path_of(&format!("{key}[{i}]")), item.clone()))
                    .collect())
            }
            Some(_) => Err(fields.error(
                key,
                format!(
                    "expected an array of at most {} entries",
                    super::datatypes::MAX_LIST_ITEMS
                ),
            )),
        }
    };
    spec.recipients = list(fields, "recipients")?
        .iter()
        .map(|(path, item)| data::parse_destination(item, path))
        .collect::<Result<_, _>>()?;
    if let Some(weekly) = fields.get("weekly_schedule") {
        spec.weekly_schedule = Some(data::parse_weekly(
            weekly,
            &fields.path_of("weekly_schedule"),
        )?);
    }
    spec.exception_schedule = list(fields, "exception_schedule")?
        .iter()
        .map(|(path, item)| data::parse_special_event(item, path))
        .collect::<Result<_, _>>()?;
    if let Some(value) = fields.get("schedule_default") {
        spec.schedule_default = Some(data::parse_value(
            value,
            &fields.path_of("schedule_default"),
        )?);
    }
    if let Some(range) = fields.get("effective_period") {
        spec.effective_period = Some(data::parse_date_range(
            range,
            &fields.path_of("effective_period"),
        )?);
    }
    spec.references = list(fields, "references")?
        .iter()
        .map(|(path, item)| data::parse_reference(item, path))
        .collect::<Result<_, _>>()?;
    spec.priority_for_writing = fields
        .unsigned("priority_for_writing", 16)?
        .map(|p| p as u8)
        .filter(|p| *p >= 1);
    if spec.priority_for_writing.is_none()
        && fields
            .map
            .get("priority_for_writing")
            .is_some_and(|v| !v.is_null())
    {
        return Err(fields.error("priority_for_writing", "expected 1..=16"));
    }
    spec.date_list = list(fields, "date_list")?
        .iter()
        .map(|(path, item)| data::parse_calendar_entry(item, path))
        .collect::<Result<_, _>>()?;
    if let Some(log) = fields.get("log") {
        spec.log = Some(data::parse_reference(log, &fields.path_of("log"))?);
    }
    spec.log_interval = fields.real("log_interval")?.map(f64::from);
    if spec
        .log_interval
        .is_some_and(|s| !(0.0..=86_400.0).contains(&s))
    {
        return Err(fields.error("log_interval", "expected 0 to 86400 seconds"));
    }
    spec.buffer_size = fields
        .unsigned("buffer_size", u64::from(trend_log::MAX_BUFFER_SIZE))?
        .map(|n| n as u32);
    Ok(())
}

fn three<T: Copy + Default>(value: &Value, item: impl Fn(&Value) -> Option<T>) -> Option<[T; 3]> {
    match value.as_array()?.as_slice() {
        [a, b, c] => Some([item(a)?, item(b)?, item(c)?]),
        _ => None,
    }
}
