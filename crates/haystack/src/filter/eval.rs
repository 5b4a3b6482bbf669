//! Filter evaluation against a [`Dict`], following the "Filters" chapter of Project
//! Haystack 4: comparisons only between values of the same kind; numbers only when
//! their units are equal (no conversion); `!=` needs the tag to be present; strings
//! compare by code point; refs by id (display names ignored); dates, times and
//! timestamps chronologically (timestamps as absolute instants). A comparison against
//! a list of refs matches when any ref in the list does ("Ref Lists" section).

use std::cmp::Ordering;

use crate::value::{Date, DateTime, Dict, Ref, Value};

use super::ast::{CmpOp, Filter, Path};

/// Most dereferences (`->` hops, counting every ref of a ref list) one path may cost
/// while evaluating a single term, so cyclic or fan-out heavy graphs stay cheap.
pub const MAX_DEREFS: usize = 4096;

/// Looks up the entity a [`Ref`] points to; used to follow `->` in paths.
pub trait RefResolver {
    /// The entity with this id, if known.
    fn resolve(&self, reference: &Ref) -> Option<&Dict>;
}

/// A resolver that knows no entity: every `->` through a ref fails to match.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRefs;

impl RefResolver for NoRefs {
    fn resolve(&self, _reference: &Ref) -> Option<&Dict> {
        None
    }
}

impl Filter {
    /// Whether `dict` matches this filter; `refs` resolves `->` through Ref values.
    pub fn matches<R: RefResolver + ?Sized>(&self, dict: &Dict, refs: &R) -> bool {
        match self {
            Filter::Has(path) => path_any(dict, path, refs, &mut |_| true),
            Filter::Missing(path) => !path_any(dict, path, refs, &mut |_| true),
            Filter::Cmp { path, op, value } => path_any(dict, path, refs, &mut |actual| {
                cmp_matches(actual, *op, value)
            }),
            Filter::And(items) => items.iter().all(|f| f.matches(dict, refs)),
            Filter::Or(items) => items.iter().any(|f| f.matches(dict, refs)),
        }
    }
}

/// True if some value reached by `path` from `dict` satisfies `test`.
fn path_any<R: RefResolver + ?Sized>(
    dict: &Dict,
    path: &Path,
    refs: &R,
    test: &mut dyn FnMut(&Value) -> bool,
) -> bool {
    let mut budget = MAX_DEREFS;
    walk(dict, path.segments(), refs, &mut budget, test)
}

fn walk<R: RefResolver + ?Sized>(
    dict: &Dict,
    segments: &[String],
    refs: &R,
    budget: &mut usize,
    test: &mut dyn FnMut(&Value) -> bool,
) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return false;
    };
    match dict.get(first) {
        None | Some(Value::Null) => false,
        Some(value) if rest.is_empty() => test(value),
        Some(value) => follow(value, rest, refs, budget, test),
    }
}

fn follow<R: RefResolver + ?Sized>(
    value: &Value,
    rest: &[String],
    refs: &R,
    budget: &mut usize,
    test: &mut dyn FnMut(&Value) -> bool,
) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match value {
        Value::Ref(r) => refs
            .resolve(r)
            .is_some_and(|target| walk(target, rest, refs, budget, test)),
        Value::Dict(d) => walk(d, rest, refs, budget, test),
        Value::List(items) => items.iter().any(|item| {
            matches!(item, Value::Ref(_) | Value::Dict(_)) && follow(item, rest, refs, budget, test)
        }),
        _ => false,
    }
}

fn cmp_matches(actual: &Value, op: CmpOp, literal: &Value) -> bool {
    if let (Value::List(items), Value::Ref(_)) = (actual, literal) {
        return items.iter().any(|item| cmp_matches(item, op, literal));
    }
    match op {
        CmpOp::Eq => values_equal(actual, literal),
        CmpOp::Ne => !values_equal(actual, literal),
        CmpOp::Lt => compare_values(actual, literal) == Some(Ordering::Less),
        CmpOp::Le => matches!(
            compare_values(actual, literal),
            Some(Ordering::Less | Ordering::Equal)
        ),
        CmpOp::Gt => compare_values(actual, literal) == Some(Ordering::Greater),
        CmpOp::Ge => matches!(
            compare_values(actual, literal),
            Some(Ordering::Greater | Ordering::Equal)
        ),
    }
}

/// Filter equality: like [`compare_values`] giving `Equal`, and structural equality
/// for kinds without an order (markers, coordinates, ...).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match compare_values(a, b) {
        Some(order) => order == Ordering::Equal,
        None => a.kind() == b.kind() && !matches!(a, Value::Number(_)) && a == b,
    }
}

/// Orders two values the way filters do, or `None` when they are not comparable
/// (different kinds, numbers with different units, NaN, unordered kinds).
pub fn compare_values(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.unit == y.unit {
                x.value.partial_cmp(&y.value)
            } else {
                None
            }
        }
        (Value::Str(x), Value::Str(y))
        | (Value::Uri(x), Value::Uri(y))
        | (Value::Symbol(x), Value::Symbol(y)) => Some(x.cmp(y)),
        (Value::Ref(x), Value::Ref(y)) => Some(x.id.cmp(&y.id)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Date(x), Value::Date(y)) => Some(x.cmp(y)),
        (Value::Time(x), Value::Time(y)) => Some(x.cmp(y)),
        (Value::DateTime(x), Value::DateTime(y)) => Some(instant_of(x).cmp(&instant_of(y))),
        _ => None,
    }
}

/// Days from 1970-01-01 to `date` in the proleptic Gregorian calendar.
pub(crate) fn days_since_epoch(date: Date) -> i64 {
    crate::timezone::days_from_civil(
        i64::from(date.year()),
        u32::from(date.month()),
        u32::from(date.day()),
    )
}

/// The absolute instant of a timestamp: seconds since the Unix epoch (UTC) and nanoseconds.
pub fn instant_of(dt: &DateTime) -> (i64, u32) {
    let time = &dt.time;
    let local = days_since_epoch(dt.date) * 86_400
        + i64::from(time.hour()) * 3600
        + i64::from(time.minute()) * 60
        + i64::from(time.second());
    (local - i64::from(dt.offset_seconds()), time.nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Time;

    #[test]
    fn epoch_days() {
        let d = |y, m, day| Date::new(y, m, day).map(days_since_epoch);
        assert_eq!(d(1970, 1, 1), Ok(0));
        assert_eq!(d(2000, 3, 1), Ok(11_017));
        assert_eq!(d(1969, 12, 31), Ok(-1));
        assert_eq!(d(2024, 2, 29), Ok(19_782));
    }

    #[test]
    fn instants_use_the_offset() -> Result<(), crate::value::TemporalError> {
        let date = Date::new(2020, 1, 1)?;
        let ny = DateTime::new(
            date,
            Time::new(0, 0, 0, 0)?,
            -5 * 3600,
            Some("New_York".into()),
        )?;
        let utc = DateTime::new(date, Time::new(5, 0, 0, 0)?, 0, Some("UTC".into()))?;
        assert_eq!(instant_of(&ny), instant_of(&utc));
        Ok(())
    }
}
