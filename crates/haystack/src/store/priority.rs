//! [`PriorityArray`]: the 17 command levels of a writable point (1 is the highest priority,
//! 17 the default), with who wrote each level and, for level 8 (manual operator), an
//! optional expiry. The `pointWrite` op (request forms, response grid) is in
//! [`crate::ops`].

use crate::value::Value;

/// Number of levels.
pub const LEVELS: u8 = 17;

/// The level a write with a `duration` applies to (manual operator).
pub const TIMED_LEVEL: u8 = 8;

/// One written level.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorityEntry {
    /// The commanded value.
    pub val: Value,
    /// Who wrote it.
    pub who: String,
    /// When the write lapses (UTC milliseconds), for timed level-8 overrides.
    pub expires_ms: Option<i64>,
}

/// A writable point's priority array.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriorityArray {
    levels: [Option<PriorityEntry>; LEVELS as usize],
}

/// The display name of a level (`levelDis`).
pub fn level_dis(level: u8) -> String {
    match level {
        1 => "Emergency".to_owned(),
        TIMED_LEVEL => "Manual Operator".to_owned(),
        LEVELS => "Default".to_owned(),
        n => format!("Level {n}"),
    }
}

impl PriorityArray {
    /// An array with no level written.
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(level: u8) -> Option<usize> {
        (1..=LEVELS)
            .contains(&level)
            .then(|| usize::from(level - 1))
    }

    /// Writes (`Some`) or releases (`None`) a level; levels outside 1..=17 are ignored.
    pub fn set(&mut self, level: u8, entry: Option<PriorityEntry>) {
        if let Some(slot) = Self::slot(level).and_then(|i| self.levels.get_mut(i)) {
            *slot = entry;
        }
    }

    /// The entry of a level, if written and not expired at `now_ms`.
    pub fn get(&self, level: u8, now_ms: i64) -> Option<&PriorityEntry> {
        let entry = self.levels.get(Self::slot(level)?)?.as_ref()?;
        match entry.expires_ms {
            Some(expires) if expires <= now_ms => None,
            _ => Some(entry),
        }
    }

    /// Drops lapsed timed entries; returns whether any was dropped.
    pub fn expire(&mut self, now_ms: i64) -> bool {
        let mut changed = false;
        for slot in &mut self.levels {
            if slot
                .as_ref()
                .and_then(|e| e.expires_ms)
                .is_some_and(|expires| expires <= now_ms)
            {
                *slot = None;
                changed = true;
            }
        }
        changed
    }

    /// Whether a timed entry has lapsed by `now_ms` (and [`PriorityArray::expire`] would
    /// change the array).
    pub fn has_lapsed(&self, now_ms: i64) -> bool {
        self.levels
            .iter()
            .flatten()
            .any(|e| e.expires_ms.is_some_and(|t| t <= now_ms))
    }

    /// The effective command: the value of the highest-priority written level, and that
    /// level.
    pub fn effective(&self, now_ms: i64) -> Option<(u8, &Value)> {
        (1..=LEVELS).find_map(|level| self.get(level, now_ms).map(|e| (level, &e.val)))
    }

    /// Whether no level is written.
    pub fn is_empty(&self) -> bool {
        self.levels.iter().all(Option::is_none)
    }

    /// The written levels (expired ones included), for snapshots.
    pub fn entries(&self) -> impl Iterator<Item = (u8, &PriorityEntry)> {
        (1..=LEVELS)
            .zip(self.levels.iter())
            .filter_map(|(l, e)| e.as_ref().map(|e| (l, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(v: f64, expires_ms: Option<i64>) -> Option<PriorityEntry> {
        Some(PriorityEntry {
            val: Value::number(v),
            who: "t".into(),
            expires_ms,
        })
    }

    #[test]
    fn highest_priority_wins_and_timed_levels_lapse() {
        let mut a = PriorityArray::new();
        assert_eq!(a.effective(0), None);
        a.set(17, entry(1.0, None));
        a.set(8, entry(2.0, Some(1000)));
        a.set(0, entry(9.0, None));
        a.set(18, entry(9.0, None));
        assert_eq!(a.effective(999), Some((8, &Value::number(2.0))));
        assert_eq!(a.effective(1000), Some((17, &Value::number(1.0))));
        assert!(a.expire(1000) && !a.expire(1000));
        assert_eq!(a.entries().count(), 1);
        a.set(17, None);
        assert!(a.is_empty());
    }
}
