//! The Haystack value model: [`Value`] and the types of its variants.

mod coord;
mod dict;
mod grid;
mod kind;
mod number;
mod reference;
mod temporal;
mod xstr;

pub use coord::{Coord, InvalidCoord};
pub use dict::{Dict, InvalidTagName, SMALL_DICT_TAGS, is_tag_name};
pub(crate) use grid::RowCells;
pub use grid::{Column, Grid, GridError, MAX_RESERVED_CELLS, Row, RowIter};
pub use kind::Kind;
pub use number::Number;
pub use reference::{Ref, is_ref_char, is_ref_id};
pub use temporal::{Date, DateTime, MAX_UTC_OFFSET_SECONDS, TemporalError, Time};
pub use xstr::{XStr, is_xstr_type};

/// Any Haystack value.
///
/// Equality is structural, except that numbers compare NaN equal to NaN (see
/// [`Number`]) and dicts ignore tag order (see [`Dict`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// Null: no value (Zinc `N`, JSON `null`).
    #[default]
    Null,
    /// Marker.
    Marker,
    /// Not available.
    Na,
    /// Remove.
    Remove,
    /// Boolean.
    Bool(bool),
    /// Number with optional unit.
    Number(Number),
    /// String.
    Str(String),
    /// URI.
    Uri(String),
    /// Reference.
    Ref(Ref),
    /// Symbol (def name), without the leading `^`.
    Symbol(String),
    /// Date.
    Date(Date),
    /// Time of day.
    Time(Time),
    /// Timestamp (boxed: it is the largest scalar).
    DateTime(Box<DateTime>),
    /// Geographic coordinate.
    Coord(Coord),
    /// Extended string.
    XStr(Box<XStr>),
    /// List.
    List(Vec<Value>),
    /// Dict (boxed: the map is larger than the other variants).
    Dict(Box<Dict>),
    /// Nested grid.
    Grid(Box<Grid>),
}

impl Value {
    /// The kind of this value.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Marker => Kind::Marker,
            Value::Na => Kind::Na,
            Value::Remove => Kind::Remove,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::Str(_) => Kind::Str,
            Value::Uri(_) => Kind::Uri,
            Value::Ref(_) => Kind::Ref,
            Value::Symbol(_) => Kind::Symbol,
            Value::Date(_) => Kind::Date,
            Value::Time(_) => Kind::Time,
            Value::DateTime(_) => Kind::DateTime,
            Value::Coord(_) => Kind::Coord,
            Value::XStr(_) => Kind::XStr,
            Value::List(_) => Kind::List,
            Value::Dict(_) => Kind::Dict,
            Value::Grid(_) => Kind::Grid,
        }
    }

    /// A number without unit.
    pub fn number(value: f64) -> Value {
        Value::Number(Number::new(value))
    }

    /// A number with a unit.
    pub fn number_with_unit(value: f64, unit: &str) -> Value {
        Value::Number(Number::with_unit(value, unit))
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Self {
        Value::Bool(value)
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Self {
        Value::number(value)
    }
}

impl From<Number> for Value {
    fn from(value: Number) -> Self {
        Value::Number(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Value::Str(value.to_owned())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Value::Str(value)
    }
}

impl From<Ref> for Value {
    fn from(value: Ref) -> Self {
        Value::Ref(value)
    }
}

impl From<Date> for Value {
    fn from(value: Date) -> Self {
        Value::Date(value)
    }
}

impl From<Time> for Value {
    fn from(value: Time) -> Self {
        Value::Time(value)
    }
}

impl From<DateTime> for Value {
    fn from(value: DateTime) -> Self {
        Value::DateTime(Box::new(value))
    }
}

impl From<Coord> for Value {
    fn from(value: Coord) -> Self {
        Value::Coord(value)
    }
}

impl From<Dict> for Value {
    fn from(value: Dict) -> Self {
        Value::Dict(Box::new(value))
    }
}

impl From<Grid> for Value {
    fn from(value: Grid) -> Self {
        Value::Grid(Box::new(value))
    }
}

impl From<Vec<Value>> for Value {
    fn from(value: Vec<Value>) -> Self {
        Value::List(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_size() {
        assert_eq!(Value::number(1.0).kind(), Kind::Number);
        assert_eq!(Value::Grid(Box::default()).kind(), Kind::Grid);
        assert_eq!(Value::default(), Value::Null);
        assert_eq!(Value::from("x"), Value::Str("x".into()));
        assert_eq!(Value::from(2.0), Value::number(2.0));
        assert_eq!(Value::from(vec![Value::from(true)]).kind(), Kind::List);
        // Keep the enum compact: grids hold thousands of cells.
        assert!(std::mem::size_of::<Value>() <= 56);
    }
}
