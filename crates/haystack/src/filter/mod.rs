//! Haystack filters: grammar, parser and evaluation.
