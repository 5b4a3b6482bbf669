//! The Haystack kinds, generated from one table so that the Rust variant, the
//! Haystack kind name and the Hayson (JSON v4) `_kind` tag cannot drift apart.

/// Expands the single kind table into the [`Kind`] enum and its name lookups.
macro_rules! kind_table {
    ($( $(#[doc = $doc:literal])* $variant:ident => $name:literal, $hayson:literal; )+) => {
        /// The kind (type) of a Haystack value.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl Kind {
            /// Every kind, in table order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),+];

            /// The Haystack kind name, e.g. `"DateTime"`.
            pub fn name(self) -> &'static str {
                match self { $(Kind::$variant => $name,)+ }
            }

            /// The Hayson (JSON v4) `_kind` value, e.g. `"dateTime"`.
            pub fn hayson_name(self) -> &'static str {
                match self { $(Kind::$variant => $hayson,)+ }
            }

            /// Looks a kind up by its Haystack kind name (case sensitive).
            pub fn from_name(name: &str) -> Option<Kind> {
                match name { $($name => Some(Kind::$variant),)+ _ => None }
            }

            /// Looks a kind up by its Hayson `_kind` value (case sensitive).
            pub fn from_hayson_name(name: &str) -> Option<Kind> {
                match name { $($hayson => Some(Kind::$variant),)+ _ => None }
            }
        }
    };
}

kind_table! {
    /// The absence of a value.
    Null => "Null", "null";
    /// A marker tag: presence only.
    Marker => "Marker", "marker";
    /// Not available: the value exists but is unknown.
    Na => "NA", "na";
    /// Removes a tag in an update.
    Remove => "Remove", "remove";
    /// Boolean.
    Bool => "Bool", "bool";
    /// 64-bit float with an optional unit.
    Number => "Number", "number";
    /// Unicode string.
    Str => "Str", "str";
    /// Uniform resource identifier.
    Uri => "Uri", "uri";
    /// Reference to an entity, with an optional display name.
    Ref => "Ref", "ref";
    /// Name of a def.
    Symbol => "Symbol", "symbol";
    /// Calendar date.
    Date => "Date", "date";
    /// Time of day.
    Time => "Time", "time";
    /// Timestamp with UTC offset and timezone name.
    DateTime => "DateTime", "dateTime";
    /// Geographic coordinate.
    Coord => "Coord", "coord";
    /// Extended string: a type name and a string encoding.
    XStr => "XStr", "xstr";
    /// Ordered list of values.
    List => "List", "list";
    /// Name/value pairs.
    Dict => "Dict", "dict";
    /// Table of rows and columns.
    Grid => "Grid", "grid";
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Kind;

    #[test]
    fn names_round_trip_through_the_table() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_name(kind.name()), Some(*kind));
            assert_eq!(Kind::from_hayson_name(kind.hayson_name()), Some(*kind));
        }
        assert_eq!(Kind::DateTime.hayson_name(), "dateTime");
        assert_eq!(Kind::Na.name(), "NA");
        assert_eq!(Kind::from_name("Bin"), None);
    }
}
