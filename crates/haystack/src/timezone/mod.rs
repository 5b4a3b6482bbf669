//! Haystack timezone names and their IANA zones.
