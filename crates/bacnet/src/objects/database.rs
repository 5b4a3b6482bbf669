//! `ObjectDatabase`: the Device object plus every other object a device serves, with
//! lookup by identifier and by name, an object-list kept in step automatically, a
//! database-revision bumped on every structural change (Clause 12.11.35), and property
//! reads and writes that report what changed.
//!
//! Sans-IO: the database never reads a clock. The driver calls [`ObjectDatabase::set_clock`]
//! with the current local date and time; local-date and local-time answer with that value.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::datatypes::{self, Shape, decode_items};
use super::device::DeviceConfig;
use super::error::PropertyError;
use super::object::{ListChangeError, Object, PropertySelection, WriteOutcome};
use super::schedule;
use super::trend_log::{self, LogBuffer, RangeSelection};
use super::value::PropertyData;
use crate::encoding::{
    ApplicationValue, BitString, DateTime, DeviceObjectPropertyReference, Element, LogDatum,
    LogRecord, ObjectIdentifier,
};
use crate::enums::{ObjectType, PropertyIdentifier};
use crate::services::{RangeSpec, ResultFlags};

/// Most objects one database holds (object-list stays within one u32 array index).
pub const MAX_OBJECTS: usize = 1 << 20;

/// One property that changed value, as reported by writes and given to the write hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PropertyChange {
    /// The object written.
    pub object: ObjectIdentifier,
    /// The property whose value changed.
    pub property: PropertyIdentifier,
}

/// One property of a ReadPropertyMultiple-style read: its value, or why it failed.
pub type PropertyResult = (PropertyIdentifier, Result<Vec<Element>, PropertyError>);

/// A callback run for every [`PropertyChange`] a network write causes (for COV,
/// persistence or audit layers), with the property's whole value after the write.
pub type WriteHook = Box<dyn FnMut(&PropertyChange, &[Element]) + Send>;

/// What a ReadRange selected: the items returned and where they sit in the list.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeResult {
    /// Position of the returned items in the whole list.
    pub flags: ResultFlags,
    /// Number of items returned.
    pub item_count: u32,
    /// The items, one after another.
    pub items: Vec<Element>,
    /// Sequence number of the first item (log buffers read by sequence number or time).
    pub first_sequence_number: Option<u32>,
}

/// The objects of one device.
pub struct ObjectDatabase {
    /// Object-list order; index 0 is the Device object.
    objects: Vec<Object>,
    by_id: HashMap<ObjectIdentifier, usize>,
    by_name: HashMap<String, ObjectIdentifier>,
    revision: u32,
    clock: Option<DateTime>,
    hook: Option<WriteHook>,
    /// Objects whose properties changed since [`Self::take_changed_objects`] last ran.
    changed: Vec<ObjectIdentifier>,
    changed_set: HashSet<ObjectIdentifier>,
    /// Records of each Trend Log.
    logs: HashMap<ObjectIdentifier, LogBuffer>,
    /// When each enabled Trend Log takes its next sample.
    next_sample: HashMap<ObjectIdentifier, Instant>,
    /// Schedules evaluated at least once since they entered their effective period.
    schedules_active: HashSet<ObjectIdentifier>,
}

impl std::fmt::Debug for ObjectDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectDatabase")
            .field("device", &self.device_identifier())
            .field("objects", &self.objects.len())
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

impl ObjectDatabase {
    /// A database holding only the Device object built from `device`.
    pub fn new(device: &DeviceConfig) -> Self {
        let object = device.build();
        let mut db = Self {
            objects: Vec::new(),
            by_id: HashMap::new(),
            by_name: HashMap::new(),
            revision: 0,
            clock: None,
            hook: None,
            changed: Vec::new(),
            changed_set: HashSet::new(),
            logs: HashMap::new(),
            next_sample: HashMap::new(),
            schedules_active: HashSet::new(),
        };
        db.by_name
            .insert(object.name().to_owned(), object.identifier());
        db.by_id.insert(object.identifier(), 0);
        db.objects.push(object);
        db
    }

    /// The Device object's identifier.
    pub fn device_identifier(&self) -> ObjectIdentifier {
        self.objects.first().map_or(
            ObjectIdentifier::new(ObjectType::Device, 0),
            Object::identifier,
        )
    }

    /// Number of objects, the Device included (the object-list length).
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// False: a database always holds its Device object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The database-revision value.
    pub const fn revision(&self) -> u32 {
        self.revision
    }

    /// Sets the local date and time that local-date and local-time report.
    pub fn set_clock(&mut self, now: DateTime) {
        self.clock = Some(now);
    }

    /// Installs a hook run for each change a [`Self::write_property`] causes.
    pub fn set_write_hook(&mut self, hook: WriteHook) {
        self.hook = Some(hook);
    }

    /// Adds an object. Errors: `object-identifier-already-exists` for a taken identifier
    /// (or a second Device), `duplicate-name` for a taken name, `no-space-to-add-list-element`
    /// past [`MAX_OBJECTS`].
    pub fn add(&mut self, object: Object) -> Result<(), PropertyError> {
        if self.by_id.contains_key(&object.identifier())
            || object.object_type() == ObjectType::Device
        {
            return Err(PropertyError::OBJECT_ALREADY_EXISTS);
        }
        if self.by_name.contains_key(object.name()) {
            return Err(PropertyError::DUPLICATE_NAME);
        }
        if self.objects.len() >= MAX_OBJECTS {
            return Err(PropertyError::NO_SPACE);
        }
        self.by_name
            .insert(object.name().to_owned(), object.identifier());
        self.by_id.insert(object.identifier(), self.objects.len());
        if object.object_type() == ObjectType::TrendLog {
            self.logs.insert(object.identifier(), LogBuffer::default());
        }
        self.mark_changed(object.identifier());
        self.objects.push(object);
        self.revision = self.revision.wrapping_add(1);
        Ok(())
    }

    /// Removes an object; the Device cannot be removed (`object-deletion-not-permitted`).
    pub fn remove(&mut self, identifier: ObjectIdentifier) -> Result<Object, PropertyError> {
        let index = *self
            .by_id
            .get(&identifier)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        if index == 0 {
            return Err(PropertyError::DELETION_NOT_PERMITTED);
        }
        let object = self.objects.remove(index);
        self.by_name.remove(object.name());
        self.by_id.remove(&identifier);
        self.logs.remove(&identifier);
        self.next_sample.remove(&identifier);
        self.schedules_active.remove(&identifier);
        for (position, later) in self.objects.iter().enumerate().skip(index) {
            self.by_id.insert(later.identifier(), position);
        }
        self.revision = self.revision.wrapping_add(1);
        Ok(object)
    }

    /// The object with `identifier`.
    pub fn get(&self, identifier: ObjectIdentifier) -> Option<&Object> {
        self.by_id
            .get(&identifier)
            .and_then(|index| self.objects.get(*index))
    }

    /// The object named `name`.
    pub fn get_by_name(&self, name: &str) -> Option<&Object> {
        self.by_name.get(name).and_then(|id| self.get(*id))
    }

    /// Every object in object-list order.
    pub fn objects(&self) -> impl Iterator<Item = &Object> {
        self.objects.iter()
    }

    /// The Device object.
    pub fn device(&self) -> Option<&Object> {
        self.objects.first()
    }

    /// Updates a stored property locally (a new sensor value, a configuration change),
    /// without network access rules. Renames go through the name index.
    pub fn set_local(
        &mut self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        data: PropertyData,
    ) -> Result<(), PropertyError> {
        let index = *self
            .by_id
            .get(&identifier)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        if property == PropertyIdentifier::ObjectName {
            let Some(ApplicationValue::CharacterString(name)) = data.as_single() else {
                return Err(PropertyError::INVALID_DATA_TYPE);
            };
            self.rename(index, name)?;
        }
        if let Some(object) = self.objects.get_mut(index) {
            let before = object.read(property, None).ok();
            object.set(property, data);
            if object.read(property, None).ok() != before {
                self.mark_changed(identifier);
            }
        }
        Ok(())
    }

    /// Sets a stored property without recording a change (for the server's own
    /// bookkeeping properties, such as the Device's active-cov-subscriptions).
    pub fn set_quietly(
        &mut self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        data: PropertyData,
    ) {
        if property == PropertyIdentifier::ObjectName {
            return;
        }
        if let Some(index) = self.by_id.get(&identifier).copied()
            && let Some(object) = self.objects.get_mut(index)
        {
            object.set(property, data);
        }
    }

    fn mark_changed(&mut self, identifier: ObjectIdentifier) {
        if self.changed_set.insert(identifier) {
            self.changed.push(identifier);
        }
    }

    /// The objects whose properties changed (by a write, a local set, a list change, a
    /// schedule or calendar evaluation) since the last call, in the order they first
    /// changed. The COV layer reads this to decide what to notify.
    pub fn take_changed_objects(&mut self) -> Vec<ObjectIdentifier> {
        self.changed_set.clear();
        std::mem::take(&mut self.changed)
    }

    /// True when objects changed since [`Self::take_changed_objects`] last ran.
    pub fn has_changes(&self) -> bool {
        !self.changed.is_empty()
    }

    /// The local date and time last given to [`Self::set_clock`].
    pub const fn clock(&self) -> Option<DateTime> {
        self.clock
    }

    fn rename(&mut self, index: usize, name: &str) -> Result<(), PropertyError> {
        let Some(object) = self.objects.get(index) else {
            return Err(PropertyError::UNKNOWN_OBJECT);
        };
        if object.name() == name {
            return Ok(());
        }
        if self.by_name.contains_key(name) {
            return Err(PropertyError::DUPLICATE_NAME);
        }
        self.by_name.remove(object.name());
        self.by_name.insert(name.to_owned(), object.identifier());
        self.revision = self.revision.wrapping_add(1);
        Ok(())
    }

    /// ReadProperty (Clause 15.5) against this database. The Device's object-list,
    /// database-revision, local-date and local-time are answered here.
    pub fn read_property(
        &self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<Vec<Element>, PropertyError> {
        let object = self.get(identifier).ok_or(PropertyError::UNKNOWN_OBJECT)?;
        if object.object_type() == ObjectType::Device {
            use ApplicationValue as V;
            let dynamic = match property {
                PropertyIdentifier::ObjectList => Some(PropertyData::Array(
                    self.objects
                        .iter()
                        .map(|o| vec![Element::Application(V::ObjectIdentifier(o.identifier()))])
                        .collect(),
                )),
                PropertyIdentifier::DatabaseRevision => {
                    Some(PropertyData::Single(V::Unsigned(u64::from(self.revision))))
                }
                PropertyIdentifier::LocalDate => self
                    .clock
                    .map(|now| PropertyData::Single(V::Date(now.date))),
                PropertyIdentifier::LocalTime => self
                    .clock
                    .map(|now| PropertyData::Single(V::Time(now.time))),
                _ => None,
            };
            if let Some(data) = dynamic {
                return data.read(array_index);
            }
        }
        if object.object_type() == ObjectType::TrendLog {
            let buffer = self.logs.get(&identifier);
            let count = |n: usize| PropertyData::Single(ApplicationValue::Unsigned(n as u64));
            match property {
                PropertyIdentifier::LogBuffer => return Err(PropertyError::READ_ACCESS_DENIED),
                PropertyIdentifier::RecordCount => {
                    return count(buffer.map_or(0, LogBuffer::len)).read(array_index);
                }
                PropertyIdentifier::TotalRecordCount => {
                    return count(buffer.map_or(0, |b| b.total() as usize)).read(array_index);
                }
                _ => {}
            }
        }
        object.read(property, array_index)
    }

    /// The results ReadPropertyMultiple gives for `all`, `required` or `optional`
    /// (Clause 15.7.3.1.2): every selected property with its value or its error.
    pub fn read_selection(
        &self,
        identifier: ObjectIdentifier,
        selection: PropertySelection,
    ) -> Result<Vec<PropertyResult>, PropertyError> {
        let object = self.get(identifier).ok_or(PropertyError::UNKNOWN_OBJECT)?;
        Ok(object
            .select(selection)
            .into_iter()
            .map(|property| (property, self.read_property(identifier, property, None)))
            .collect())
    }

    /// WriteProperty (Clause 15.9) against this database; returns what changed (also
    /// given to the write hook). Object-name writes must stay unique (`duplicate-name`)
    /// and bump the database-revision.
    pub fn write_property(
        &mut self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        value: &[Element],
        priority: Option<u8>,
    ) -> Result<Vec<PropertyChange>, PropertyError> {
        self.write_inner(identifier, property, array_index, value, priority, true)
    }

    fn write_inner(
        &mut self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        value: &[Element],
        priority: Option<u8>,
        run_hook: bool,
    ) -> Result<Vec<PropertyChange>, PropertyError> {
        let index = *self
            .by_id
            .get(&identifier)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        let Some(object) = self.objects.get_mut(index) else {
            return Err(PropertyError::UNKNOWN_OBJECT);
        };
        if object.object_type() == ObjectType::TrendLog
            && property == PropertyIdentifier::RecordCount
        {
            // Only 0 may be written: it empties the buffer (Clause 12.25.17).
            return match (array_index, value) {
                (Some(_), _) => Err(PropertyError::NOT_AN_ARRAY),
                (None, [Element::Application(ApplicationValue::Unsigned(0))]) => {
                    if let Some(buffer) = self.logs.get_mut(&identifier) {
                        buffer.clear();
                    }
                    self.mark_changed(identifier);
                    Ok(vec![PropertyChange {
                        object: identifier,
                        property,
                    }])
                }
                (None, [Element::Application(ApplicationValue::Unsigned(_))]) => {
                    Err(PropertyError::VALUE_OUT_OF_RANGE)
                }
                _ => Err(PropertyError::INVALID_DATA_TYPE),
            };
        }
        let old_name = object.name().to_owned();
        let WriteOutcome { changed } = object.write(property, array_index, value, priority)?;
        if property == PropertyIdentifier::ObjectName {
            let new_name = object.name().to_owned();
            if new_name != old_name {
                if self.by_name.contains_key(&new_name) {
                    // Undo: names are unique within the device.
                    if let Some(object) = self.objects.get_mut(index) {
                        object.set(property, PropertyData::text(&old_name));
                    }
                    return Err(PropertyError::DUPLICATE_NAME);
                }
                self.by_name.remove(&old_name);
                self.by_name.insert(new_name, identifier);
                self.revision = self.revision.wrapping_add(1);
            }
        }
        let changes: Vec<PropertyChange> = changed
            .into_iter()
            .map(|property| PropertyChange {
                object: identifier,
                property,
            })
            .collect();
        if !changes.is_empty() {
            self.mark_changed(identifier);
        }
        // The hook is taken out while it runs so that it can be given the new values.
        if run_hook && let Some(mut hook) = self.hook.take() {
            for change in &changes {
                let value = self
                    .read_property(change.object, change.property, None)
                    .unwrap_or_default();
                hook(change, &value);
            }
            self.hook = Some(hook);
        }
        Ok(changes)
    }

    /// AddListElement (`add` true) or RemoveListElement against this database.
    pub fn change_list(
        &mut self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        elements: &[Element],
        add: bool,
    ) -> Result<Vec<PropertyChange>, ListChangeError> {
        let index = *self
            .by_id
            .get(&identifier)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        let Some(object) = self.objects.get_mut(index) else {
            return Err(PropertyError::UNKNOWN_OBJECT.into());
        };
        let outcome = if add {
            object.add_list_elements(property, array_index, elements)?
        } else {
            object.remove_list_elements(property, array_index, elements)?
        };
        let changes: Vec<PropertyChange> = outcome
            .changed
            .into_iter()
            .map(|property| PropertyChange {
                object: identifier,
                property,
            })
            .collect();
        if !changes.is_empty() {
            self.mark_changed(identifier);
        }
        Ok(changes)
    }

    /// ReadRange (Clause 15.8) against this database: the items of a list or array
    /// property that `range` selects, cut to at most `max_bytes` of encoded items (the
    /// rest is announced with more-items). By position works on every list and array; by
    /// sequence number and by time only on a Trend Log's log-buffer (others answer
    /// `property` / `datatype-not-supported`); other properties `services` /
    /// `property-is-not-a-list`.
    pub fn read_range(
        &self,
        identifier: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        range: Option<&RangeSpec>,
        max_bytes: usize,
    ) -> Result<RangeResult, PropertyError> {
        let object = self.get(identifier).ok_or(PropertyError::UNKNOWN_OBJECT)?;
        if object.object_type() == ObjectType::TrendLog && property == PropertyIdentifier::LogBuffer
        {
            if array_index.is_some() {
                return Err(PropertyError::NOT_AN_ARRAY);
            }
            let empty = LogBuffer::default();
            let buffer = self.logs.get(&identifier).unwrap_or(&empty);
            let records: Vec<&(u32, LogRecord)> = buffer.records().collect();
            let sequence = |i: usize| records.get(i).map_or(0, |r| r.0);
            let time = |i: usize| records.get(i).map_or(0, |r| trend_log::record_time(&r.1));
            let selection =
                trend_log::select_range(records.len(), range, Some(&sequence), Some(&time))
                    .ok_or(PropertyError::DATATYPE_NOT_SUPPORTED)?;
            let items: Vec<Vec<Element>> = records
                .iter()
                .skip(selection.start)
                .take(selection.count)
                .map(|(_, record)| datatypes::to_elements(|b| record.encode(b)))
                .collect();
            let by_number = matches!(
                range,
                Some(RangeSpec::BySequenceNumber { .. } | RangeSpec::ByTime { .. })
            );
            let first = records.get(selection.start).map(|r| r.0);
            return Ok(cut_range(
                records.len(),
                selection,
                items,
                max_bytes,
                by_number,
                first,
            ));
        }
        let object_list = object.object_type() == ObjectType::Device
            && property == PropertyIdentifier::ObjectList;
        let data = match object.stored(property) {
            // The Device's object-list is answered from the database, not its placeholder.
            _ if object_list => PropertyData::Array(
                self.objects
                    .iter()
                    .map(|o| {
                        vec![Element::Application(ApplicationValue::ObjectIdentifier(
                            o.identifier(),
                        ))]
                    })
                    .collect(),
            ),
            Some(data) => data.clone(),
            None if object.has(property) => match self.read_property(identifier, property, None) {
                // Computed arrays (property-list, priority-array).
                Ok(value) => match object.read(property, Some(0)) {
                    Ok(_) => PropertyData::Array(value.into_iter().map(|e| vec![e]).collect()),
                    Err(_) => return Err(PropertyError::NOT_A_LIST),
                },
                Err(error) => return Err(error),
            },
            None => return Err(PropertyError::UNKNOWN_PROPERTY),
        };
        if array_index.is_some() {
            // No array of lists is served here.
            return Err(if data.is_array() {
                PropertyError::NOT_A_LIST
            } else {
                PropertyError::NOT_AN_ARRAY
            });
        }
        let items: Vec<Vec<Element>> = match data {
            PropertyData::Array(items) => items,
            PropertyData::List(elements) => {
                match datatypes::property_datatype(object.object_type(), property) {
                    Some((_, Shape::Single)) => return Err(PropertyError::NOT_A_LIST),
                    Some((item, _)) => datatypes::split_items(item, &elements, usize::MAX)
                        .unwrap_or_else(|_| elements.into_iter().map(|e| vec![e]).collect()),
                    None => elements.into_iter().map(|e| vec![e]).collect(),
                }
            }
            PropertyData::Single(_) => return Err(PropertyError::NOT_A_LIST),
        };
        let selection = trend_log::select_range(items.len(), range, None, None)
            .ok_or(PropertyError::DATATYPE_NOT_SUPPORTED)?;
        let len = items.len();
        let selected = items
            .into_iter()
            .skip(selection.start)
            .take(selection.count)
            .collect();
        Ok(cut_range(len, selection, selected, max_bytes, false, None))
    }

    /// Re-evaluates every Calendar's and Schedule's present-value at the clock's time
    /// (nothing happens before [`Self::set_clock`] was called) and makes each Schedule
    /// that changed value (or just became active) write it, at its priority-for-writing,
    /// to the local properties its list-of-object-property-references names. References
    /// to other devices are skipped (this device does not send writes). Returns the
    /// properties that changed.
    pub fn evaluate_schedules(&mut self) -> Vec<PropertyChange> {
        let Some(now) = self.clock else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let calendars: Vec<ObjectIdentifier> = self
            .objects
            .iter()
            .filter(|o| o.object_type() == ObjectType::Calendar)
            .map(Object::identifier)
            .collect();
        let mut calendar_state = HashMap::new();
        for id in calendars {
            let Some(calendar) = self.get(id) else {
                continue;
            };
            let value = schedule::calendar_value(calendar, &now);
            calendar_state.insert(id, value);
            if calendar.present_value() != Some(ApplicationValue::Boolean(value)) {
                let _ = self.set_local(
                    id,
                    PropertyIdentifier::PresentValue,
                    PropertyData::Single(ApplicationValue::Boolean(value)),
                );
                changes.push(PropertyChange {
                    object: id,
                    property: PropertyIdentifier::PresentValue,
                });
            }
        }
        let schedules: Vec<ObjectIdentifier> = self
            .objects
            .iter()
            .filter(|o| o.object_type() == ObjectType::Schedule)
            .map(Object::identifier)
            .collect();
        let device = self.device_identifier();
        for id in schedules {
            let Some(object) = self.get(id) else { continue };
            if object.out_of_service() {
                // Out of service: the schedule neither evaluates nor writes.
                continue;
            }
            let value = schedule::schedule_value(object, &now, |calendar| {
                calendar_state.get(&calendar).copied().unwrap_or(false)
            });
            let current = object.present_value();
            let priority = match object.stored(PropertyIdentifier::PriorityForWriting) {
                Some(PropertyData::Single(ApplicationValue::Unsigned(p))) => {
                    u8::try_from(*p).ok().filter(|p| (1..=16).contains(p))
                }
                _ => None,
            };
            let references = object
                .stored(PropertyIdentifier::ListOfObjectPropertyReferences)
                .and_then(|data| data.read(None).ok())
                .map(|elements| decode_items(&elements, DeviceObjectPropertyReference::decode))
                .unwrap_or_default();
            let Some(value) = value else {
                self.schedules_active.remove(&id);
                continue;
            };
            let newly_active = self.schedules_active.insert(id);
            if !newly_active && current.as_ref() == Some(&value) {
                continue;
            }
            if current.as_ref() != Some(&value) {
                let _ = self.set_local(
                    id,
                    PropertyIdentifier::PresentValue,
                    PropertyData::Single(value.clone()),
                );
                changes.push(PropertyChange {
                    object: id,
                    property: PropertyIdentifier::PresentValue,
                });
            }
            let written = [Element::Application(value)];
            for reference in references {
                if reference.device.is_some_and(|d| d != device) {
                    continue;
                }
                if let Ok(more) = self.write_as_schedule(&reference, &written, priority) {
                    changes.extend(more);
                }
            }
        }
        changes
    }

    /// A schedule's write of one referenced property: the rules of a network
    /// WriteProperty (so an input's present-value only while it is out of service), but
    /// the write hook, which reports clients' writes, does not run.
    fn write_as_schedule(
        &mut self,
        reference: &DeviceObjectPropertyReference,
        value: &[Element],
        priority: Option<u8>,
    ) -> Result<Vec<PropertyChange>, PropertyError> {
        self.write_inner(
            reference.object,
            reference.property,
            reference.array_index,
            value,
            priority,
            false,
        )
    }

    /// When the next Trend Log sample is due (enabled polled logs with an interval).
    pub fn next_trend_log_sample(&self) -> Option<Instant> {
        self.next_sample.values().min().copied()
    }

    /// Takes the Trend Log samples due at `now` (the record's timestamp is the clock's
    /// date and time) and schedules the next ones. Logs enabled since the last call start
    /// with a sample now.
    pub fn sample_trend_logs(&mut self, now: Instant) {
        let logs: Vec<ObjectIdentifier> = self.logs.keys().copied().collect();
        for id in logs {
            let Some(object) = self.get(id) else { continue };
            let enabled = matches!(
                object.stored(PropertyIdentifier::Enable),
                Some(PropertyData::Single(ApplicationValue::Boolean(true)))
            );
            let interval = match object.stored(PropertyIdentifier::LogInterval) {
                Some(PropertyData::Single(ApplicationValue::Unsigned(n))) => *n,
                _ => 0,
            };
            if !enabled || interval == 0 {
                self.next_sample.remove(&id);
                continue;
            }
            let due = self.next_sample.get(&id).is_none_or(|at| *at <= now);
            if !due {
                continue;
            }
            let step = Duration::from_millis(interval.saturating_mul(10));
            self.next_sample.insert(id, crate::tsm::after(now, step));
            self.take_sample(id);
        }
    }

    /// Adds one record to a Trend Log now (as a polled sample would).
    pub fn take_sample(&mut self, id: ObjectIdentifier) {
        let Some(object) = self.get(id) else { return };
        let Some(timestamp) = self.clock else { return };
        let capacity = match object.stored(PropertyIdentifier::BufferSize) {
            Some(PropertyData::Single(ApplicationValue::Unsigned(n))) => {
                usize::try_from(*n).unwrap_or(usize::MAX)
            }
            _ => 1,
        };
        let stop_when_full = matches!(
            object.stored(PropertyIdentifier::StopWhenFull),
            Some(PropertyData::Single(ApplicationValue::Boolean(true)))
        );
        let reference = object
            .stored(PropertyIdentifier::LogDeviceObjectProperty)
            .and_then(|data| data.read(None).ok())
            .and_then(|e| {
                decode_items(&e, DeviceObjectPropertyReference::decode)
                    .into_iter()
                    .next()
            });
        let Some(reference) = reference else { return };
        let (datum, status_flags) =
            match self.read_property(reference.object, reference.property, reference.array_index) {
                Ok(value) => {
                    let flags = self
                        .read_property(reference.object, PropertyIdentifier::StatusFlags, None)
                        .ok()
                        .and_then(|v| match v.as_slice() {
                            [Element::Application(ApplicationValue::BitString(bits))] => {
                                Some(bits.clone())
                            }
                            _ => None,
                        });
                    (trend_log::log_datum(&value), flags)
                }
                Err(error) => (LogDatum::Failure(error.class, error.code), None),
            };
        let full = self.logs.get(&id).is_some_and(|b| b.len() >= capacity);
        if full && stop_when_full {
            // A full log that stops when full disables itself (Clause 12.25.13).
            if let Some(index) = self.by_id.get(&id).copied()
                && let Some(object) = self.objects.get_mut(index)
            {
                object.set(
                    PropertyIdentifier::Enable,
                    PropertyData::Single(ApplicationValue::Boolean(false)),
                );
            }
            self.next_sample.remove(&id);
            self.mark_changed(id);
            return;
        }
        let record = LogRecord {
            timestamp,
            datum,
            status_flags: status_flags.filter(|bits: &BitString| bits.len() == 4),
        };
        if let Some(buffer) = self.logs.get_mut(&id) {
            buffer.push(record, capacity);
        }
        self.mark_changed(id);
    }
}

/// Cuts a ReadRange selection to what fits in `max_bytes` and computes the result flags.
fn cut_range(
    len: usize,
    selection: RangeSelection,
    items: Vec<Vec<Element>>,
    max_bytes: usize,
    by_number: bool,
    first_sequence: Option<u32>,
) -> RangeResult {
    let mut used = 0usize;
    let mut returned = Vec::new();
    let mut count = 0usize;
    for item in items {
        let mut bytes = Vec::new();
        crate::encoding::abstract_syntax::encode_elements(&item, &mut bytes);
        if used + bytes.len() > max_bytes {
            break;
        }
        used += bytes.len();
        returned.extend(item);
        count += 1;
    }
    RangeResult {
        flags: trend_log::result_flags(len, selection.start, selection.count, count),
        item_count: u32::try_from(count).unwrap_or(u32::MAX),
        items: returned,
        first_sequence_number: if by_number && count > 0 {
            first_sequence
        } else {
            None
        },
    }
}
