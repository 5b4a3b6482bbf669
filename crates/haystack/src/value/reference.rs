//! [`Ref`]: a reference to an entity, with its optional display name.

/// Whether `c` may appear in a ref id or a symbol: `[a-zA-Z0-9_:\-.~]`.
pub fn is_ref_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.' | '~')
}

/// Whether `id` is a non-empty string of ref characters.
pub fn is_ref_id(id: &str) -> bool {
    // Byte by byte: every ref character is ASCII, and no byte of a non-ASCII character is.
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'-' | b'.' | b'~'))
}

/// A reference to an entity, e.g. `@a-0001 "Alpha Airside AHU-2"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ref {
    /// The id, without the leading `@`.
    pub id: String,
    /// The display name, if given.
    pub dis: Option<String>,
}

impl Ref {
    /// A ref without display name.
    pub fn new(id: impl Into<String>) -> Self {
        Ref {
            id: id.into(),
            dis: None,
        }
    }

    /// A ref with a display name.
    pub fn with_dis(id: impl Into<String>, dis: impl Into<String>) -> Self {
        Ref {
            id: id.into(),
            dis: Some(dis.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_ids() {
        assert!(is_ref_id("a-0001"));
        assert!(is_ref_id("p:demo:r:2a.b~c_d"));
        assert!(!is_ref_id(""));
        assert!(!is_ref_id("a b"));
        assert_eq!(Ref::with_dis("x", "X").dis.as_deref(), Some("X"));
    }
}
