//! `Object`: one BACnet object of the database (Clause 12) with its properties, the
//! read/write rules every object type shares, status-flags and property-list computation,
//! and the command prioritization of commandable objects (Clause 19.2).
//!
//! Properties are kept in one ordered list; each is either stored ([`PropertyData`]) or
//! computed when read (object-identifier, object-type, property-list, status-flags, and
//! for commandable objects present-value, priority-array and current-command-priority).

use super::datatypes::{self, MAX_LIST_ITEMS, Shape};
use super::error::PropertyError;
use super::value::{PropertyData, single_application_value};
use crate::encoding::StatusFlags;
use crate::encoding::priority_array::PRIORITY_COUNT;
use crate::encoding::{
    ApplicationValue, BitString, Element, ObjectIdentifier, PriorityArray, PropertyValue,
};
use crate::enums::{EventState, ObjectType, PropertyIdentifier, Reliability};

/// Priority used by a write to a commandable property that carries no priority (Clause 19.2.2).
pub const DEFAULT_WRITE_PRIORITY: u8 = 16;

/// Which properties a ReadPropertyMultiple special identifier selects (Clause 15.7.3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PropertySelection {
    /// `all`: every property of the object.
    All,
    /// `required`: the properties the object type's Clause 12 table marks R or W.
    Required,
    /// `optional`: the properties present that are not required.
    Optional,
}

/// What a successful write changed, so a COV or persistence layer can react.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteOutcome {
    /// Properties whose read value differs after the write (the written one, and derived
    /// ones such as present-value, status-flags or priority-array).
    pub changed: Vec<PropertyIdentifier>,
}

/// Why an AddListElement or RemoveListElement failed: the error and the 1-based number of
/// the first item that could not be added or removed (0 when no item is at fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListChangeError {
    /// Error class and code.
    pub error: PropertyError,
    /// The first failed item (1-based), or 0.
    pub first_failed: u32,
}

impl From<PropertyError> for ListChangeError {
    fn from(error: PropertyError) -> Self {
        Self {
            error,
            first_failed: 0,
        }
    }
}

/// One object: its identifier, its properties and (for commandable objects) its priority
/// array.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    identifier: ObjectIdentifier,
    /// Every property in property-list order; `None` marks a computed property.
    properties: Vec<(PropertyIdentifier, Option<PropertyData>)>,
    /// Present for commandable objects.
    command: Option<PriorityArray>,
    /// Properties the object type requires (Clause 12 tables).
    required: Vec<PropertyIdentifier>,
}

/// Properties a client may write on any object that has them (present-value has its own
/// rules in [`Object::write`]).
const WRITABLE: &[PropertyIdentifier] = &[
    PropertyIdentifier::ObjectName,
    PropertyIdentifier::Description,
    PropertyIdentifier::Location,
    PropertyIdentifier::OutOfService,
    PropertyIdentifier::PresentValue,
    PropertyIdentifier::RelinquishDefault,
    PropertyIdentifier::CovIncrement,
    PropertyIdentifier::Reliability,
    PropertyIdentifier::StateText,
    PropertyIdentifier::ActiveText,
    PropertyIdentifier::InactiveText,
    PropertyIdentifier::ApduTimeout,
    PropertyIdentifier::NumberOfApduRetries,
    PropertyIdentifier::Priority,
    PropertyIdentifier::AckRequired,
    PropertyIdentifier::PriorityForWriting,
    PropertyIdentifier::WeeklySchedule,
    PropertyIdentifier::ExceptionSchedule,
    PropertyIdentifier::EffectivePeriod,
    PropertyIdentifier::ScheduleDefault,
    PropertyIdentifier::ListOfObjectPropertyReferences,
    PropertyIdentifier::DateList,
    PropertyIdentifier::RecipientList,
    PropertyIdentifier::Enable,
    PropertyIdentifier::StopWhenFull,
    PropertyIdentifier::LogInterval,
    PropertyIdentifier::LogDeviceObjectProperty,
];

/// Properties every object has and property-list leaves out (Clause 12.1.1.4.1).
const NOT_IN_PROPERTY_LIST: [PropertyIdentifier; 4] = [
    PropertyIdentifier::ObjectIdentifier,
    PropertyIdentifier::ObjectName,
    PropertyIdentifier::ObjectType,
    PropertyIdentifier::PropertyList,
];

impl Object {
    /// A new object with only object-identifier, object-name, object-type and
    /// property-list; object types add theirs with [`Self::with`] / [`Self::with_computed`].
    pub fn new(identifier: ObjectIdentifier, name: &str) -> Self {
        Self {
            identifier,
            properties: vec![
                (PropertyIdentifier::ObjectIdentifier, None),
                (
                    PropertyIdentifier::ObjectName,
                    Some(PropertyData::text(name)),
                ),
                (PropertyIdentifier::ObjectType, None),
                (PropertyIdentifier::PropertyList, None),
            ],
            command: None,
            required: NOT_IN_PROPERTY_LIST.to_vec(),
        }
    }

    /// Adds (or replaces) a stored property.
    #[must_use]
    pub fn with(mut self, property: PropertyIdentifier, data: PropertyData) -> Self {
        self.set(property, data);
        self
    }

    /// Adds a property computed on read (status-flags and the command properties).
    #[must_use]
    pub fn with_computed(mut self, property: PropertyIdentifier) -> Self {
        match self.properties.iter_mut().find(|(p, _)| *p == property) {
            Some(slot) => slot.1 = None,
            None => self.properties.push((property, None)),
        }
        self
    }

    /// Makes the object commandable: adds priority-array, relinquish-default (stored, with
    /// `relinquish_default`) and current-command-priority; present-value becomes computed.
    #[must_use]
    pub fn commandable(mut self, relinquish_default: ApplicationValue) -> Self {
        self.command = Some(PriorityArray::default());
        self = self
            .with_computed(PropertyIdentifier::PresentValue)
            .with_computed(PropertyIdentifier::PriorityArray)
            .with(
                PropertyIdentifier::RelinquishDefault,
                PropertyData::Single(relinquish_default),
            )
            .with_computed(PropertyIdentifier::CurrentCommandPriority);
        self.require(&[
            PropertyIdentifier::PriorityArray,
            PropertyIdentifier::RelinquishDefault,
            PropertyIdentifier::CurrentCommandPriority,
        ])
    }

    /// Marks properties as required for RPM `required`/`optional` selection.
    #[must_use]
    pub fn require(mut self, properties: &[PropertyIdentifier]) -> Self {
        for property in properties {
            if !self.required.contains(property) {
                self.required.push(*property);
            }
        }
        self
    }

    /// The object identifier.
    pub const fn identifier(&self) -> ObjectIdentifier {
        self.identifier
    }

    /// The object type.
    pub const fn object_type(&self) -> ObjectType {
        self.identifier.object_type()
    }

    /// The object name.
    pub fn name(&self) -> &str {
        match self.stored(PropertyIdentifier::ObjectName) {
            Some(PropertyData::Single(ApplicationValue::CharacterString(name))) => name,
            _ => "",
        }
    }

    /// True when the object has a priority array.
    pub const fn is_commandable(&self) -> bool {
        self.command.is_some()
    }

    /// The priority array of a commandable object.
    pub const fn priority_array(&self) -> Option<&PriorityArray> {
        self.command.as_ref()
    }

    /// True when the object has `property` (stored or computed).
    pub fn has(&self, property: PropertyIdentifier) -> bool {
        self.properties.iter().any(|(p, _)| *p == property)
    }

    /// The stored value of `property`, if it is stored (not computed).
    pub fn stored(&self, property: PropertyIdentifier) -> Option<&PropertyData> {
        self.properties
            .iter()
            .find(|(p, _)| *p == property)
            .and_then(|(_, data)| data.as_ref())
    }

    /// Sets a stored property without access checks: for the application itself (a new
    /// sensor reading, a configuration change), not for network writes.
    pub fn set(&mut self, property: PropertyIdentifier, data: PropertyData) {
        match self.properties.iter_mut().find(|(p, _)| *p == property) {
            Some(slot) => slot.1 = Some(data),
            None => self.properties.push((property, Some(data))),
        }
    }

    /// Every property identifier, in order (what RPM `all` returns).
    pub fn all_properties(&self) -> impl Iterator<Item = PropertyIdentifier> + '_ {
        self.properties.iter().map(|(p, _)| *p)
    }

    /// The property-list value: all properties but the four of Clause 12.1.1.4.1.
    pub fn property_list(&self) -> Vec<PropertyIdentifier> {
        self.all_properties()
            .filter(|p| !NOT_IN_PROPERTY_LIST.contains(p))
            .collect()
    }

    /// The properties an RPM special identifier selects.
    pub fn select(&self, selection: PropertySelection) -> Vec<PropertyIdentifier> {
        self.all_properties()
            .filter(|p| match selection {
                PropertySelection::All => true,
                PropertySelection::Required => self.required.contains(p),
                PropertySelection::Optional => !self.required.contains(p),
            })
            .collect()
    }

    /// The status flags computed from event-state, reliability and out-of-service.
    pub fn status_flags(&self) -> StatusFlags {
        let event_state = match self.stored(PropertyIdentifier::EventState) {
            Some(PropertyData::Single(ApplicationValue::Enumerated(value))) => {
                EventState::from_u32(*value)
            }
            _ => EventState::Normal,
        };
        let reliability = match self.stored(PropertyIdentifier::Reliability) {
            Some(PropertyData::Single(ApplicationValue::Enumerated(value))) => {
                Reliability::from_u32(*value)
            }
            _ => Reliability::NoFaultDetected,
        };
        StatusFlags {
            in_alarm: event_state != EventState::Normal,
            fault: reliability != Reliability::NoFaultDetected,
            overridden: false,
            out_of_service: self.out_of_service(),
        }
    }

    /// The out-of-service flag (false when the object has none).
    pub fn out_of_service(&self) -> bool {
        matches!(
            self.stored(PropertyIdentifier::OutOfService),
            Some(PropertyData::Single(ApplicationValue::Boolean(true)))
        )
    }

    /// The present value: for commandable objects the highest-priority non-NULL command,
    /// else relinquish-default; for the others the stored value.
    pub fn present_value(&self) -> Option<ApplicationValue> {
        match &self.command {
            Some(array) => match array.highest() {
                Some((_, Element::Application(value))) => Some(value.clone()),
                _ => self
                    .stored(PropertyIdentifier::RelinquishDefault)
                    .and_then(PropertyData::as_single)
                    .cloned(),
            },
            None => self
                .stored(PropertyIdentifier::PresentValue)
                .and_then(PropertyData::as_single)
                .cloned(),
        }
    }

    fn computed(&self, property: PropertyIdentifier) -> Result<PropertyData, PropertyError> {
        use ApplicationValue as V;
        Ok(match property {
            PropertyIdentifier::ObjectIdentifier => {
                PropertyData::Single(V::ObjectIdentifier(self.identifier))
            }
            PropertyIdentifier::ObjectType => {
                PropertyData::Single(V::Enumerated(self.object_type().to_u32()))
            }
            PropertyIdentifier::PropertyList => PropertyData::array_of(
                self.property_list()
                    .into_iter()
                    .map(|p| V::Enumerated(p.to_u32())),
            ),
            PropertyIdentifier::StatusFlags => {
                let flags = self.status_flags();
                PropertyData::Single(V::BitString(BitString::from_bits(&[
                    flags.in_alarm,
                    flags.fault,
                    flags.overridden,
                    flags.out_of_service,
                ])))
            }
            PropertyIdentifier::PresentValue => PropertyData::Single(
                self.present_value()
                    .ok_or(PropertyError::UNKNOWN_PROPERTY)?,
            ),
            PropertyIdentifier::PriorityArray => {
                let array = self
                    .command
                    .as_ref()
                    .ok_or(PropertyError::UNKNOWN_PROPERTY)?;
                PropertyData::Array(
                    array
                        .slots
                        .iter()
                        .map(|slot| vec![slot.clone().unwrap_or(Element::Application(V::Null))])
                        .collect(),
                )
            }
            PropertyIdentifier::CurrentCommandPriority => {
                let array = self
                    .command
                    .as_ref()
                    .ok_or(PropertyError::UNKNOWN_PROPERTY)?;
                PropertyData::Single(match array.highest() {
                    Some((priority, _)) => V::Unsigned(u64::from(priority)),
                    None => V::Null,
                })
            }
            _ => return Err(PropertyError::UNKNOWN_PROPERTY),
        })
    }

    /// Reads a property as ReadProperty would (Clause 15.5): the whole value, or with
    /// `array_index` the array length (0) or one element.
    pub fn read(
        &self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<Vec<Element>, PropertyError> {
        match self.properties.iter().find(|(p, _)| *p == property) {
            None => Err(PropertyError::UNKNOWN_PROPERTY),
            Some((_, Some(data))) => data.read(array_index),
            Some((_, None)) => self.computed(property)?.read(array_index),
        }
    }

    /// The property as a `BACnetPropertyValue` (for COV notifications and
    /// ReadPropertyMultiple results), read with [`Self::read`].
    pub fn property_value(
        &self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<PropertyValue, PropertyError> {
        Ok(PropertyValue {
            property,
            array_index,
            value: self.read(property, array_index)?,
            priority: None,
        })
    }

    /// True when a network write to `property` is allowed now: present-value of inputs
    /// (and schedules) and reliability only while out-of-service.
    pub fn is_writable(&self, property: PropertyIdentifier) -> bool {
        if !WRITABLE.contains(&property) {
            return false;
        }
        if property == PropertyIdentifier::Reliability {
            // Reliability may be forced only while out of service (simulation/testing).
            return self.out_of_service();
        }
        if property != PropertyIdentifier::PresentValue {
            return true;
        }
        match self.object_type() {
            ObjectType::AnalogInput
            | ObjectType::BinaryInput
            | ObjectType::MultiStateInput
            | ObjectType::Schedule => self.out_of_service(),
            ObjectType::AnalogOutput
            | ObjectType::AnalogValue
            | ObjectType::BinaryOutput
            | ObjectType::BinaryValue
            | ObjectType::MultiStateValue => true,
            _ => false,
        }
    }

    /// Writes a property as WriteProperty would (Clause 15.9).
    ///
    /// `value` is the tagged data of the request; `priority` (1..=16, default 16) only
    /// matters for the commanded property of commandable objects, where a NULL value
    /// relinquishes that priority. Non-commandable objects ignore the priority and
    /// reject NULL (`invalid-data-type`). Object-name uniqueness is checked by
    /// [`super::database::ObjectDatabase::write_property`], not here.
    pub fn write(
        &mut self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        value: &[Element],
        priority: Option<u8>,
    ) -> Result<WriteOutcome, PropertyError> {
        if !self.has(property) {
            return Err(PropertyError::UNKNOWN_PROPERTY);
        }
        if !self.is_writable(property) {
            return Err(PropertyError::WRITE_ACCESS_DENIED);
        }
        let watched = [
            property,
            PropertyIdentifier::PresentValue,
            PropertyIdentifier::StatusFlags,
            PropertyIdentifier::PriorityArray,
            PropertyIdentifier::CurrentCommandPriority,
        ];
        let before: Vec<_> = watched.iter().map(|p| self.read(*p, None).ok()).collect();
        if property == PropertyIdentifier::PresentValue {
            self.write_present_value(array_index, value, priority)?;
        } else {
            self.write_stored(property, array_index, value)?;
        }
        let mut outcome = WriteOutcome::default();
        for (p, old) in watched.iter().zip(before) {
            if old.is_some() && self.read(*p, None).ok() != old && !outcome.changed.contains(p) {
                outcome.changed.push(*p);
            }
        }
        Ok(outcome)
    }

    /// AddListElement (Clause 15.1): adds the items in `elements` to a list property.
    /// Items already in the list are not added twice; if any item fails, none is added.
    pub fn add_list_elements(
        &mut self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        elements: &[Element],
    ) -> Result<WriteOutcome, ListChangeError> {
        let (item, mut items) = self.list_for_change(property, array_index)?;
        let new_items = datatypes::split_items_numbered(item, elements, MAX_LIST_ITEMS)?;
        for (number, new) in new_items.into_iter().enumerate() {
            if items.contains(&new) {
                continue;
            }
            if items.len() >= MAX_LIST_ITEMS {
                return Err(ListChangeError {
                    error: PropertyError::NO_SPACE,
                    first_failed: u32::try_from(number + 1).unwrap_or(u32::MAX),
                });
            }
            items.push(new);
        }
        Ok(self.replace_list(property, items))
    }

    /// RemoveListElement (Clause 15.2): removes the items in `elements` from a list
    /// property. An item not in the list fails the whole request
    /// (`services` / `list-element-not-found`).
    pub fn remove_list_elements(
        &mut self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        elements: &[Element],
    ) -> Result<WriteOutcome, ListChangeError> {
        let (item, mut items) = self.list_for_change(property, array_index)?;
        let gone = datatypes::split_items_numbered(item, elements, MAX_LIST_ITEMS)?;
        for (number, old) in gone.into_iter().enumerate() {
            match items.iter().position(|i| *i == old) {
                Some(at) => {
                    items.remove(at);
                }
                None => {
                    return Err(ListChangeError {
                        error: PropertyError::LIST_ELEMENT_NOT_FOUND,
                        first_failed: u32::try_from(number + 1).unwrap_or(u32::MAX),
                    });
                }
            }
        }
        Ok(self.replace_list(property, items))
    }

    /// The item type and current items of a list property that may be changed.
    fn list_for_change(
        &self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<(datatypes::ItemType, Vec<Vec<Element>>), PropertyError> {
        let Some(current) = self.stored(property) else {
            return Err(if self.has(property) {
                PropertyError::NOT_A_LIST
            } else {
                PropertyError::UNKNOWN_PROPERTY
            });
        };
        let datatype = datatypes::property_datatype(self.object_type(), property);
        let Some((item, Shape::List)) = datatype else {
            return Err(match current {
                PropertyData::List(_) if datatype.is_none() => PropertyError::WRITE_ACCESS_DENIED,
                _ => PropertyError::NOT_A_LIST,
            });
        };
        if array_index.is_some() {
            return Err(PropertyError::NOT_AN_ARRAY);
        }
        if !self.is_writable(property) {
            return Err(PropertyError::WRITE_ACCESS_DENIED);
        }
        let PropertyData::List(elements) = current else {
            return Err(PropertyError::NOT_A_LIST);
        };
        let items = datatypes::split_items(item, elements, usize::MAX)?;
        Ok((item, items))
    }

    fn replace_list(
        &mut self,
        property: PropertyIdentifier,
        items: Vec<Vec<Element>>,
    ) -> WriteOutcome {
        let before = self.read(property, None).ok();
        self.set(
            property,
            PropertyData::List(items.into_iter().flatten().collect()),
        );
        let changed = if self.read(property, None).ok() == before {
            Vec::new()
        } else {
            vec![property]
        };
        WriteOutcome { changed }
    }

    fn write_present_value(
        &mut self,
        array_index: Option<u32>,
        value: &[Element],
        priority: Option<u8>,
    ) -> Result<(), PropertyError> {
        if array_index.is_some() {
            return Err(PropertyError::NOT_AN_ARRAY);
        }
        let value = single_application_value(value)?;
        if self.command.is_some() {
            let priority = priority.unwrap_or(DEFAULT_WRITE_PRIORITY);
            if !(1..=PRIORITY_COUNT as u8).contains(&priority) {
                return Err(PropertyError::PRIORITY_OUT_OF_RANGE);
            }
            let slot = if *value == ApplicationValue::Null {
                None
            } else {
                self.check_present_value(value)?;
                Some(value.clone())
            };
            if let Some(array) = self.command.as_mut() {
                array.set(priority, slot);
            }
            return Ok(());
        }
        self.check_present_value(value)?;
        self.set(
            PropertyIdentifier::PresentValue,
            PropertyData::Single(value.clone()),
        );
        Ok(())
    }

    /// Datatype and range checks for a present-value (or relinquish-default) of this type.
    fn check_present_value(&self, value: &ApplicationValue) -> Result<(), PropertyError> {
        use ApplicationValue as V;
        match (self.object_type(), value) {
            (
                ObjectType::AnalogInput | ObjectType::AnalogOutput | ObjectType::AnalogValue,
                V::Real(real),
            ) => {
                let bound = |p| match self.stored(p) {
                    Some(PropertyData::Single(V::Real(limit))) => Some(*limit),
                    _ => None,
                };
                let below = bound(PropertyIdentifier::MinPresValue).is_some_and(|min| *real < min);
                let above = bound(PropertyIdentifier::MaxPresValue).is_some_and(|max| *real > max);
                if below || above || real.is_nan() {
                    return Err(PropertyError::VALUE_OUT_OF_RANGE);
                }
                Ok(())
            }
            (
                ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue,
                V::Enumerated(state),
            ) => match state {
                0 | 1 => Ok(()),
                _ => Err(PropertyError::VALUE_OUT_OF_RANGE),
            },
            (ObjectType::MultiStateInput | ObjectType::MultiStateValue, V::Unsigned(state)) => {
                let states = match self.stored(PropertyIdentifier::NumberOfStates) {
                    Some(PropertyData::Single(V::Unsigned(n))) => *n,
                    _ => 0,
                };
                if (1..=states).contains(state) {
                    Ok(())
                } else {
                    Err(PropertyError::VALUE_OUT_OF_RANGE)
                }
            }
            (
                ObjectType::AnalogInput
                | ObjectType::AnalogOutput
                | ObjectType::AnalogValue
                | ObjectType::BinaryInput
                | ObjectType::BinaryOutput
                | ObjectType::BinaryValue
                | ObjectType::MultiStateInput
                | ObjectType::MultiStateValue,
                _,
            ) => Err(PropertyError::INVALID_DATA_TYPE),
            // A schedule's value may be of any primitive datatype.
            (ObjectType::Schedule, _) => Ok(()),
            (_, value) => match self.present_value() {
                Some(current) if current.tag() == value.tag() => Ok(()),
                _ => Err(PropertyError::INVALID_DATA_TYPE),
            },
        }
    }

    fn write_stored(
        &mut self,
        property: PropertyIdentifier,
        array_index: Option<u32>,
        value: &[Element],
    ) -> Result<(), PropertyError> {
        let Some(current) = self.stored(property) else {
            return Err(PropertyError::WRITE_ACCESS_DENIED);
        };
        if let Some((item, shape)) = datatypes::property_datatype(self.object_type(), property) {
            let updated = write_constructed(current, item, shape, array_index, value)?;
            self.set(property, updated);
            return Ok(());
        }
        let updated = match (current, array_index) {
            (PropertyData::Single(_), None) if property == PropertyIdentifier::ScheduleDefault => {
                // Schedule-default takes any primitive datatype.
                PropertyData::Single(single_application_value(value)?.clone())
            }
            (PropertyData::Single(old), None) => {
                let new = single_application_value(value)?;
                if new.tag() != old.tag() {
                    return Err(PropertyError::INVALID_DATA_TYPE);
                }
                match (property, new) {
                    (PropertyIdentifier::AckRequired, ApplicationValue::BitString(bits))
                        if bits.len() != 3 =>
                    {
                        return Err(PropertyError::VALUE_OUT_OF_RANGE);
                    }
                    (PropertyIdentifier::RelinquishDefault, _) => self.check_present_value(new)?,
                    (PropertyIdentifier::ObjectName, ApplicationValue::CharacterString(name))
                        if name.is_empty() =>
                    {
                        return Err(PropertyError::VALUE_OUT_OF_RANGE);
                    }
                    (PropertyIdentifier::CovIncrement, ApplicationValue::Real(step))
                        if step.is_nan() || *step < 0.0 =>
                    {
                        return Err(PropertyError::VALUE_OUT_OF_RANGE);
                    }
                    (PropertyIdentifier::PriorityForWriting, ApplicationValue::Unsigned(p))
                        if !(1..=PRIORITY_COUNT as u64).contains(p) =>
                    {
                        return Err(PropertyError::VALUE_OUT_OF_RANGE);
                    }
                    _ => {}
                }
                PropertyData::Single(new.clone())
            }
            (PropertyData::Single(_) | PropertyData::List(_), Some(_)) => {
                return Err(PropertyError::NOT_AN_ARRAY);
            }
            (PropertyData::List(_), None) => return Err(PropertyError::WRITE_ACCESS_DENIED),
            (PropertyData::Array(items), None) => {
                if value.len() != items.len() {
                    return Err(PropertyError::VALUE_OUT_OF_RANGE);
                }
                for (new, old) in value.iter().zip(items) {
                    check_same_type(new, old)?;
                }
                PropertyData::Array(value.iter().map(|e| vec![e.clone()]).collect())
            }
            (PropertyData::Array(_), Some(0)) => return Err(PropertyError::WRITE_ACCESS_DENIED),
            (PropertyData::Array(items), Some(index)) => {
                let position = usize::try_from(index - 1)
                    .ok()
                    .filter(|i| *i < items.len())
                    .ok_or(PropertyError::INVALID_ARRAY_INDEX)?;
                let [new] = value else {
                    return Err(PropertyError::INVALID_DATA_TYPE);
                };
                check_same_type(new, &items[position])?;
                let mut items = items.clone();
                items[position] = vec![new.clone()];
                PropertyData::Array(items)
            }
        };
        self.set(property, updated);
        Ok(())
    }
}

/// A write of a constructed property: every item decoded as its datatype, then stored.
fn write_constructed(
    current: &PropertyData,
    item: datatypes::ItemType,
    shape: Shape,
    array_index: Option<u32>,
    value: &[Element],
) -> Result<PropertyData, PropertyError> {
    match (shape, array_index) {
        (Shape::Single | Shape::List, Some(_)) => Err(PropertyError::NOT_AN_ARRAY),
        (Shape::Single, None) => match datatypes::split_items(item, value, 1) {
            Ok(mut items) if items.len() == 1 => Ok(PropertyData::List(items.remove(0))),
            Ok(_) | Err(PropertyError::NO_SPACE) => Err(PropertyError::INVALID_DATA_TYPE),
            Err(error) => Err(error),
        },
        (Shape::List, None) => Ok(PropertyData::List(
            datatypes::split_items(item, value, MAX_LIST_ITEMS)?
                .into_iter()
                .flatten()
                .collect(),
        )),
        (Shape::Array(size), None) => {
            let items = datatypes::split_items(item, value, size.unwrap_or(MAX_LIST_ITEMS))
                .map_err(|error| match (error, size) {
                    (PropertyError::NO_SPACE, Some(_)) => PropertyError::VALUE_OUT_OF_RANGE,
                    (other, _) => other,
                })?;
            if size.is_some_and(|n| n != items.len()) {
                return Err(PropertyError::VALUE_OUT_OF_RANGE);
            }
            Ok(PropertyData::Array(items))
        }
        // The size of these arrays is fixed, or only changed by writing the whole array.
        (Shape::Array(_), Some(0)) => Err(PropertyError::WRITE_ACCESS_DENIED),
        (Shape::Array(_), Some(index)) => {
            let PropertyData::Array(items) = current else {
                return Err(PropertyError::NOT_AN_ARRAY);
            };
            let position = usize::try_from(index - 1)
                .ok()
                .filter(|i| *i < items.len())
                .ok_or(PropertyError::INVALID_ARRAY_INDEX)?;
            let mut new = match datatypes::split_items(item, value, 1) {
                Ok(new) if new.len() == 1 => new,
                Ok(_) | Err(PropertyError::NO_SPACE) => {
                    return Err(PropertyError::INVALID_DATA_TYPE);
                }
                Err(error) => return Err(error),
            };
            let mut items = items.clone();
            items[position] = new.remove(0);
            Ok(PropertyData::Array(items))
        }
    }
}

/// An array element write must be one application value of the element's current type.
fn check_same_type(new: &Element, old: &[Element]) -> Result<(), PropertyError> {
    match (new, old) {
        (Element::Application(new), [Element::Application(old)]) if new.tag() == old.tag() => {
            Ok(())
        }
        _ => Err(PropertyError::INVALID_DATA_TYPE),
    }
}
