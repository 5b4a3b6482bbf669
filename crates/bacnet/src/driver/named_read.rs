//! [`BacnetClient::read_named`]: a property read as people and programs want it, by name
//! (`crate::app::value_names`), with the state-text that names a multi-state value.

use serde_json::Value;

use super::client::BacnetClient;
use crate::app::ClientError;
use crate::app::value_names::{ValueContext, describe_value, is_multi_state};
use crate::encoding::{ApplicationValue, Element, ObjectIdentifier};
use crate::enums::PropertyIdentifier;
use crate::network::{DeviceAddress, LinkAddress};

/// True when a read of `property` of `object` is named by the object's state-text (the
/// present-value and relinquish-default of a multi-state object).
pub fn wants_state_text(object: ObjectIdentifier, property: PropertyIdentifier) -> bool {
    is_multi_state(Some(object.object_type()))
        && matches!(
            property,
            PropertyIdentifier::PresentValue | PropertyIdentifier::RelinquishDefault
        )
}

/// The character strings of a state-text value (other items are skipped).
pub fn state_texts(value: &[Element]) -> Vec<String> {
    value
        .iter()
        .filter_map(|element| match element {
            Element::Application(ApplicationValue::CharacterString(text)) => Some(text.clone()),
            _ => None,
        })
        .collect()
}

impl<A: LinkAddress> BacnetClient<A> {
    /// The state-text of a multi-state `object` (to name its present-value in reads and COV
    /// notifications), or `None` for another object or when the device does not give it.
    pub async fn state_text(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
    ) -> Option<Vec<String>> {
        if !is_multi_state(Some(object.object_type())) {
            return None;
        }
        let states = self
            .read(to, object, PropertyIdentifier::StateText, None)
            .await
            .ok()?;
        Some(state_texts(&states))
    }

    /// Reads a property and describes it by name
    /// ([`describe_value`](crate::app::value_names::describe_value)); for the present-value
    /// of a multi-state object it also reads the state-text to name the state (a device
    /// that has none, or refuses it, leaves the number unnamed).
    pub async fn read_named(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<Value, ClientError> {
        let to = to.into();
        let value = self.read(to, object, property, array_index).await?;
        let states = if wants_state_text(object, property) {
            self.state_text(to, object).await
        } else {
            None
        };
        let context = ValueContext {
            object_type: Some(object.object_type()),
            property,
            array_index,
            state_text: states.as_deref(),
        };
        Ok(describe_value(&context, &value))
    }
}
