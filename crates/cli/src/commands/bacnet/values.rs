//! Values as the BACnet commands print them: enumerations by name, constructed datatypes
//! decoded, a multi-state present-value with its state-text (see
//! `buildwire_bacnet::app::value_names` and the JSON shape in docs/conventions.md); `bacnet
//! name --enum`. A single read is `BacnetClient::read_named`.

use buildwire_bacnet::app::value_names::{ValueContext, describe_value, value_text};
pub use buildwire_bacnet::driver::{state_texts, wants_state_text};
use buildwire_bacnet::encoding::Element;
use buildwire_bacnet::enums::Enumeration;
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier};
use serde_json::{Value, json};

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

/// `--enum NAME`: an enumeration by its JSON name (`engineering-units`, `binary-pv`...).
pub fn parse_enumeration(text: &str) -> Result<Enumeration, String> {
    Enumeration::from_name(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Enumeration::ALL.iter().map(|e| e.name()).collect();
        format!(
            "unknown enumeration `{text}`: use one of {}",
            names.join(", ")
        )
    })
}

/// `text` (a number or a standard name) looked up in `enumeration`: its name and number.
pub fn enumeration_entry(enumeration: Enumeration, text: &str) -> Result<Value, String> {
    let text = text.trim();
    let (name, number) = match text.parse::<u32>() {
        Ok(number) => (enumeration.value_name(number), number),
        Err(_) => {
            let wanted = text.to_ascii_lowercase().replace(['_', ' '], "-");
            let (name, number) = enumeration
                .members()
                .into_iter()
                .find(|(name, _)| *name == wanted)
                .ok_or_else(|| {
                    format!(
                        "`{text}` is not a value of {}; give a number or a name such as `{}`",
                        enumeration.name(),
                        enumeration.members().first().map_or("", |(name, _)| name)
                    )
                })?;
            (Some(name), number)
        }
    };
    Ok(json!({"enumeration": enumeration.name(), "name": name, "number": number}))
}

/// The first enumeration (in [`Enumeration::ALL`] order) with a value named `text`.
pub fn find_value_name(text: &str) -> Option<Value> {
    Enumeration::ALL
        .into_iter()
        .find_map(|enumeration| enumeration_entry(enumeration, text).ok())
        .filter(|_| text.trim().parse::<u32>().is_err())
}
