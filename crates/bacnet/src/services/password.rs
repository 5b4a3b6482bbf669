//! The password parameter of DeviceCommunicationControl and ReinitializeDevice:
//! `CharacterString (SIZE (1..20))`.

use crate::encoding::{DecodeError, DecodeErrorKind, PrimitiveValue, Reader};

/// Longest password, in characters.
pub const MAX_PASSWORD_CHARS: usize = 20;

/// Decodes an optional context-tagged password of 1..=20 characters.
pub(crate) fn decode_password(
    reader: &mut Reader<'_>,
    tag: u8,
) -> Result<Option<String>, DecodeError> {
    let start = reader.position();
    let password: Option<String> = crate::encoding::context::decode_optional_context(reader, tag)?;
    if let Some(text) = &password {
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_PASSWORD_CHARS {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue("password must have 1 to 20 characters"),
            ));
        }
    }
    Ok(password)
}

/// Encodes an optional context-tagged password.
pub(crate) fn encode_password(password: Option<&String>, tag: u8, buf: &mut Vec<u8>) {
    if let Some(text) = password {
        text.encode_context(tag, buf);
    }
}
