//! Tagging rules: marker tags from object names, descriptions, units and types (the file
//! format is documented in `rules/default.toml`, the shipped set), and the validation of a
//! model against the standard defs.

use serde::Deserialize;

use buildwire_haystack::defs;
use buildwire_haystack::value::{Dict, Value};

use crate::GatewayError;

/// The shipped rules.
pub const DEFAULT_RULES: &str = include_str!("../../rules/default.toml");

/// One rule: when every given condition holds, add `tags`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Whole words of the name or description (any).
    #[serde(default)]
    pub words: Vec<String>,
    /// Text inside the name or description (any).
    #[serde(default)]
    pub contains: Vec<String>,
    /// Unit symbols (any).
    #[serde(default)]
    pub units: Vec<String>,
    /// Connector type codes (any).
    #[serde(default)]
    pub types: Vec<String>,
    /// The marker tags added.
    pub tags: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<Rule>,
}

/// A checked rule set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// The shipped default set.
    pub fn default_set() -> Self {
        // The shipped file is checked by a test; an error here would be a build defect.
        Self::parse(DEFAULT_RULES).unwrap_or_default()
    }

    /// Reads a rules file; errors name the file, the line or the rule.
    pub fn from_file(path: &std::path::Path) -> Result<Self, GatewayError> {
        let text = std::fs::read_to_string(path).map_err(|e| GatewayError::Config {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::parse(&text).map_err(|message| GatewayError::Config {
            file: path.display().to_string(),
            message,
        })
    }

    /// Parses rules text and checks every tag against the standard defs and every unit
    /// against the unit database.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: RulesFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let ns = defs::standard();
        for (number, rule) in file.rule.iter().enumerate() {
            let at = number + 1;
            if rule.tags.is_empty() {
                return Err(format!("rule {at}: `tags` is empty"));
            }
            if rule.words.is_empty()
                && rule.contains.is_empty()
                && rule.units.is_empty()
                && rule.types.is_empty()
            {
                return Err(format!(
                    "rule {at}: give at least one of `words`, `contains`, `units`, `types`"
                ));
            }
            for tag in &rule.tags {
                if !ns.is_marker(tag) {
                    return Err(format!(
                        "rule {at}: tag {tag:?} is not a marker of the standard defs"
                    ));
                }
            }
            for unit in &rule.units {
                if buildwire_haystack::units::get(unit).is_none() {
                    return Err(format!("rule {at}: unit {unit:?} is not a Haystack unit"));
                }
            }
        }
        let rules = file
            .rule
            .into_iter()
            .map(|mut r| {
                r.words = r.words.iter().map(|w| w.to_lowercase()).collect();
                r.contains = r.contains.iter().map(|w| w.to_lowercase()).collect();
                r.types = r.types.iter().map(|w| w.to_ascii_uppercase()).collect();
                r
            })
            .collect();
        Ok(Self { rules })
    }

    /// How many rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The marker tags the rules give a point, each once, in rule order.
    pub fn tags_for(
        &self,
        name: &str,
        description: Option<&str>,
        unit: Option<&str>,
        address: &str,
    ) -> Vec<String> {
        let mut words = split_words(name);
        let mut text = name.to_lowercase();
        if let Some(description) = description {
            words.extend(split_words(description));
            text.push(' ');
            text.push_str(&description.to_lowercase());
        }
        let code: String = address
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let mut out: Vec<String> = Vec::new();
        for rule in &self.rules {
            let holds = (rule.words.is_empty() || rule.words.iter().any(|w| words.contains(w)))
                && (rule.contains.is_empty()
                    || rule.contains.iter().any(|c| text.contains(c.as_str())))
                && (rule.units.is_empty()
                    || unit.is_some_and(|u| rule.units.iter().any(|r| r == u)))
                && (rule.types.is_empty() || rule.types.contains(&code));
            if holds {
                for tag in &rule.tags {
                    if !out.contains(tag) {
                        out.push(tag.clone());
                    }
                }
            }
        }
        out
    }
}

/// The words of a name, lower case: split at anything not a letter or digit, between a
/// lower-case and an upper-case letter (`znTemp`), and between letters and digits.
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current).to_lowercase());
            }
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic());
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current).to_lowercase());
            }
        }
        current.push(c);
        previous = Some(c);
    }
    if !current.is_empty() {
        words.push(current.to_lowercase());
    }
    words
}

/// Tags the gateway writes that are not in the standard defs: the connector's own, and
/// `navName` (the navigation name Haystack servers show in `nav`).
const CONNECTOR_TAGS: &[&str] = &[
    "navName",
    "bacnetConn",
    "bacnetConnRef",
    "bacnetCur",
    "bacnetWrite",
    "bacnetHis",
    "vendor",
    "model",
];

/// Markers every point has, which say nothing of what it measures.
const BASE_MARKERS: &[&str] = &["point", "sensor", "cmd", "sp", "cur", "his", "writable"];

/// What [`validate`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Points checked.
    pub points: usize,
    /// Points with a problem, and the problems.
    pub invalid: Vec<(String, Vec<String>)>,
    /// Points that got no tag beyond the base markers (no rule matched).
    pub untagged: Vec<String>,
}

/// Checks every point against the standard defs: exactly one of `sensor`, `cmd`, `sp`;
/// a `kind`; a known `unit`; `tz` where `his`; every tag a def (or a connector tag); the
/// entity reflects as a `point`. Lists the points no rule tagged.
pub fn validate(records: &[Dict]) -> Report {
    let ns = defs::standard();
    let mut report = Report::default();
    for record in records.iter().filter(|r| r.contains("point")) {
        report.points += 1;
        let id = match record.get("id") {
            Some(Value::Ref(r)) => r.id.clone(),
            _ => String::from("(no id)"),
        };
        let mut problems = Vec::new();
        let functions = ["sensor", "cmd", "sp"]
            .iter()
            .filter(|f| record.contains(f))
            .count();
        if functions != 1 {
            problems.push(format!(
                "has {functions} of sensor, cmd, sp (a point has exactly one)"
            ));
        }
        match record.get("kind") {
            Some(Value::Str(k)) if ["Number", "Bool", "Str"].contains(&k.as_str()) => {}
            other => problems.push(format!("kind {other:?} is not Number, Bool or Str")),
        }
        if let Some(unit) = record.get("unit") {
            match unit {
                Value::Str(u) if buildwire_haystack::units::get(u).is_some() => {}
                other => problems.push(format!("unit {other:?} is not a Haystack unit")),
            }
        }
        if record.contains("his") && !matches!(record.get("tz"), Some(Value::Str(_))) {
            problems.push("his without tz".to_owned());
        }
        for (name, _) in record.iter() {
            if ns.def(name).is_none() && !CONNECTOR_TAGS.contains(&name) {
                problems.push(format!("tag {name:?} is not in the standard defs"));
            }
        }
        if !ns.fits(record, "point") {
            problems.push("does not reflect as a point".to_owned());
        }
        if !problems.is_empty() {
            report.invalid.push((id.clone(), problems));
        }
        let tagged = record
            .iter()
            .any(|(name, value)| matches!(value, Value::Marker) && !BASE_MARKERS.contains(&name));
        if !tagged {
            report.untagged.push(id);
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_rules_parse_and_tag() {
        let rules = Rules::parse(DEFAULT_RULES).unwrap_or_else(|e| panic!("{e}"));
        assert!(rules.len() > 20);
        let tags = rules.tags_for("ZN-T", None, Some("°F"), "AI3");
        assert_eq!(tags, ["zone", "temp"]);
        let tags = rules.tags_for(
            "AHU1 DaTemp",
            Some("discharge air temperature"),
            None,
            "AI1",
        );
        assert!(tags.contains(&"discharge".to_owned()) && tags.contains(&"air".to_owned()));
        assert!(tags.contains(&"temp".to_owned()));
        let tags = rules.tags_for("SF Status", None, None, "BI1");
        assert_eq!(tags, ["fan", "run"]);
        assert!(rules.tags_for("Widget 7", None, None, "AV7").is_empty());
    }

    #[test]
    fn words_split_at_case_digits_and_punctuation() {
        assert_eq!(split_words("znTemp-2 SAT"), ["zn", "temp", "2", "sat"]);
        assert_eq!(split_words("AHU1_DA-T"), ["ahu", "1", "da", "t"]);
    }

    #[test]
    fn bad_rules_are_refused_with_the_rule_number() {
        let error = Rules::parse("[[rule]]\nwords = [\"x\"]\ntags = [\"temp\"]\n[[rule]]\nwords = [\"y\"]\ntags = [\"notATag\"]\n")
            .err()
            .unwrap_or_default();
        assert!(
            error.contains("rule 2") && error.contains("notATag"),
            "{error}"
        );
        let error = Rules::parse("[[rule]]\ntags = [\"temp\"]\n")
            .err()
            .unwrap_or_default();
        assert!(error.contains("rule 1"), "{error}");
        let error = Rules::parse("[[rule]]\nword = [\"x\"]\ntags = [\"temp\"]\n")
            .err()
            .unwrap_or_default();
        assert!(error.contains("line 2"), "{error}");
    }
}
