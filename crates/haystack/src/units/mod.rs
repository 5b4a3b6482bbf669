//! The standard Haystack unit database.
