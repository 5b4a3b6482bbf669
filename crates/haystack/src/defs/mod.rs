//! The Haystack 4 standard defs (ph, phScience, phIoT, phIct) as data, and taxonomy queries.
