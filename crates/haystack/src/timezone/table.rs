//! The zone table: IANA ids, their Haystack names (the city part) and POSIX rules.

use std::collections::HashMap;

use super::posix_rule::{InvalidRule, PosixRule};

/// Most zones a table may hold.
pub const MAX_ZONES: usize = 4_096;

/// One timezone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone<'a> {
    /// IANA id, e.g. `America/New_York`.
    pub iana: &'a str,
    /// Haystack name: the part after the last `/`, e.g. `New_York`.
    pub name: &'a str,
    /// Current UTC offset and daylight saving rules.
    pub rule: PosixRule,
}

/// Why a zone table line was rejected; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZoneTableError {
    /// The line is not `<region>/<city> <rule>`.
    #[error("line {line}: expected `<IANA id> <POSIX rule>`")]
    Malformed {
        /// 1-based line number.
        line: usize,
    },
    /// The rule did not parse.
    #[error("line {line}: {source}")]
    Rule {
        /// 1-based line number.
        line: usize,
        /// Where the rule went wrong.
        source: InvalidRule,
    },
    /// Two zones share a Haystack name.
    #[error("line {line}: Haystack name `{name}` already used")]
    Duplicate {
        /// 1-based line number.
        line: usize,
        /// The repeated name.
        name: String,
    },
    /// More than [`MAX_ZONES`] lines.
    #[error("line {line}: too many zones")]
    TooMany {
        /// 1-based line number.
        line: usize,
    },
}

/// Zones indexed by Haystack name and by IANA id.
#[derive(Debug, Clone, Default)]
pub struct ZoneTable<'a> {
    zones: Vec<Zone<'a>>,
    by_name: HashMap<&'a str, usize>,
    by_iana: HashMap<&'a str, usize>,
}

impl<'a> ZoneTable<'a> {
    /// Parses `<IANA id> <POSIX rule>` lines; blank lines and `#` comments are skipped.
    pub fn parse(text: &'a str) -> Result<Self, ZoneTableError> {
        let mut table = ZoneTable::default();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let raw = raw.trim();
            if raw.is_empty() || raw.starts_with('#') {
                continue;
            }
            if table.zones.len() >= MAX_ZONES {
                return Err(ZoneTableError::TooMany { line });
            }
            let mut fields = raw.split_whitespace();
            let (Some(iana), Some(rule), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(ZoneTableError::Malformed { line });
            };
            let Some((_, name)) = iana.rsplit_once('/') else {
                return Err(ZoneTableError::Malformed { line });
            };
            if name.is_empty() {
                return Err(ZoneTableError::Malformed { line });
            }
            let rule =
                PosixRule::parse(rule).map_err(|source| ZoneTableError::Rule { line, source })?;
            let position = table.zones.len();
            if table.by_name.insert(name, position).is_some() {
                return Err(ZoneTableError::Duplicate {
                    line,
                    name: name.to_owned(),
                });
            }
            table.by_iana.insert(iana, position);
            table.zones.push(Zone { iana, name, rule });
        }
        Ok(table)
    }

    /// Number of zones.
    pub fn len(&self) -> usize {
        self.zones.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.zones.is_empty()
    }

    /// Every zone in table order.
    pub fn zones(&self) -> &[Zone<'a>] {
        &self.zones
    }

    /// The zone with this Haystack name (`New_York`, `UTC`, `GMT+5`).
    pub fn by_name(&self, name: &str) -> Option<&Zone<'a>> {
        self.by_name.get(name).and_then(|i| self.zones.get(*i))
    }

    /// The zone with this IANA id; an id not in the table (such as an alias like
    /// `America/Indianapolis`) falls back to its city part.
    pub fn by_iana(&self, id: &str) -> Option<&Zone<'a>> {
        match self.by_iana.get(id) {
            Some(i) => self.zones.get(*i),
            None => id.rsplit_once('/').and_then(|(_, city)| self.by_name(city)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_indexes() {
        let t =
            ZoneTable::parse("# c\nAmerica/New_York EST5EDT,M3.2.0,M11.1.0\n\nEtc/GMT+5 <-05>5\n")
                .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.by_name("GMT+5").map(|z| z.iana), Some("Etc/GMT+5"));
        assert_eq!(
            t.by_iana("America/New_York").map(|z| z.name),
            Some("New_York")
        );
        assert_eq!(t.by_iana("US/New_York").map(|z| z.name), Some("New_York"));
        assert!(t.by_name("Paris").is_none());
    }

    #[test]
    fn bad_lines_are_located() {
        assert_eq!(
            ZoneTable::parse("\nNew_York EST5").unwrap_err(),
            ZoneTableError::Malformed { line: 2 }
        );
        assert_eq!(
            ZoneTable::parse("A/B EST5 x").unwrap_err(),
            ZoneTableError::Malformed { line: 1 }
        );
        assert!(matches!(
            ZoneTable::parse("A/B E5"),
            Err(ZoneTableError::Rule { line: 1, .. })
        ));
        assert_eq!(
            ZoneTable::parse("A/B UTC0\nC/B UTC0").unwrap_err(),
            ZoneTableError::Duplicate {
                line: 2,
                name: "B".into()
            }
        );
    }
}
