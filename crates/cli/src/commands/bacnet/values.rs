//! Values as the BACnet commands print them: enumerations by name, constructed datatypes
//! decoded, a multi-state present-value with its state-text (see
//! `buildwire_bacnet::app::value_names` and the JSON shape in docs/conventions.md).

use buildwire_bacnet::app::ClientError;
use buildwire_bacnet::app::value_names::{
    ValueContext, describe_value, is_multi_state, value_text,
};
use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::network::{DeviceAddress, LinkAddress};
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier};
use serde_json::Value;

/// A property's value with what names it.
pub struct NamedValue {
    /// The object it was read from.
    pub object: ObjectIdentifier,
    /// The property.
    pub property: PropertyIdentifier,
    /// The array index read, if any.
    pub array_index: Option<u32>,
    /// The object's state-text, when it was read too.
    pub state_text: Option<Vec<String>>,
}

impl NamedValue {
    /// `property` (at `array_index`) of `object`, without state-text.
    pub fn new(
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Self {
        Self {
            object,
            property,
            array_index,
            state_text: None,
        }
    }

    /// The described JSON of `value` (an array, one entry per item).
    pub fn json(&self, value: &[Element]) -> Value {
        let context = ValueContext {
            object_type: Some(self.object.object_type()),
            property: self.property,
            array_index: self.array_index,
            state_text: self.state_text.as_deref(),
        };
        describe_value(&context, value)
    }

    /// One line of text for `value`.
    pub fn text(&self, value: &[Element]) -> String {
        value_text(&self.json(value))
    }
}

/// True when reading `property` of `object` should also read its state-text (the
/// present-value of a multi-state object, to name the state).
pub fn wants_state_text(object: ObjectIdentifier, property: PropertyIdentifier) -> bool {
    is_multi_state(Some(object.object_type()))
        && matches!(
            property,
            PropertyIdentifier::PresentValue | PropertyIdentifier::RelinquishDefault
        )
}

/// The character strings of a state-text value.
pub fn state_texts(value: &[Element]) -> Vec<String> {
    value
        .iter()
        .filter_map(|element| match element {
            Element::Application(ApplicationValue::CharacterString(text)) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Reads a property and, when it is a multi-state present-value, the object's state-text
/// (a device without state-text, or one that refuses it, just leaves the number unnamed).
pub async fn read_named<A: LinkAddress>(
    client: &BacnetClient<A>,
    to: DeviceAddress<A>,
    mut named: NamedValue,
) -> Result<(NamedValue, Vec<Element>), ClientError> {
    let value = client
        .read(to, named.object, named.property, named.array_index)
        .await?;
    if wants_state_text(named.object, named.property) {
        named.state_text = client
            .read(to, named.object, PropertyIdentifier::StateText, None)
            .await
            .ok()
            .map(|states| state_texts(&states));
    }
    Ok((named, value))
}
