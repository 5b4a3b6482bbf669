//! [`XStr`]: an extended string, a type name plus its string encoding.

/// Whether `name` is a valid XStr type name: `[A-Z][a-zA-Z0-9_]*`.
pub fn is_xstr_type(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An extended string such as `Span("2020-01-01")` or the legacy `Bin("text/plain")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct XStr {
    /// The type name, starting with an upper-case letter.
    pub type_name: String,
    /// The string encoding of the value.
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::is_xstr_type;

    #[test]
    fn type_names() {
        assert!(is_xstr_type("Span"));
        assert!(is_xstr_type("Bin"));
        assert!(!is_xstr_type("span"));
        assert!(!is_xstr_type(""));
    }
}
