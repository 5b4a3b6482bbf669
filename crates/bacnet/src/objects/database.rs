//! `ObjectDatabase`: the Device object plus every other object a device serves, with
//! lookup by identifier and by name, an object-list kept in step automatically, a
//! database-revision bumped on every structural change (Clause 12.11.35), and property
//! reads and writes that report what changed.
//!
//! Sans-IO: the database never reads a clock. The driver calls [`ObjectDatabase::set_clock`]
//! with the current local date and time; local-date and local-time answer with that value.

use std::collections::HashMap;

use super::device::DeviceConfig;
use super::error::PropertyError;
use super::object::{Object, PropertySelection, WriteOutcome};
use super::value::PropertyData;
use crate::encoding::{ApplicationValue, DateTime, Element, ObjectIdentifier};
use crate::enums::{ObjectType, PropertyIdentifier};

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

/// The objects of one device.
pub struct ObjectDatabase {
    /// Object-list order; index 0 is the Device object.
    objects: Vec<Object>,
    by_id: HashMap<ObjectIdentifier, usize>,
    by_name: HashMap<String, ObjectIdentifier>,
    revision: u32,
    clock: Option<DateTime>,
    hook: Option<WriteHook>,
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
            object.set(property, data);
        }
        Ok(())
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
        let index = *self
            .by_id
            .get(&identifier)
            .ok_or(PropertyError::UNKNOWN_OBJECT)?;
        let Some(object) = self.objects.get_mut(index) else {
            return Err(PropertyError::UNKNOWN_OBJECT);
        };
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
        // The hook is taken out while it runs so that it can be given the new values.
        if let Some(mut hook) = self.hook.take() {
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
}
