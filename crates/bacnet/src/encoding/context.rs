//! Helpers for context-tagged grammar (Clause 20.2.1.3.2): opening/closing tags and
//! optional context-tagged fields.

use super::error::{DecodeError, TagSpec};
use super::primitive::{PrimitiveValue, unexpected};
use super::reader::Reader;
use super::tag::Tag;

/// Appends opening tag `number`.
pub fn encode_opening(number: u8, buf: &mut Vec<u8>) {
    Tag::opening(number).encode(buf);
}

/// Appends closing tag `number`.
pub fn encode_closing(number: u8, buf: &mut Vec<u8>) {
    Tag::closing(number).encode(buf);
}

/// Consumes opening tag `number` or fails with `UnexpectedTag`.
pub fn expect_opening(reader: &mut Reader<'_>, number: u8) -> Result<(), DecodeError> {
    let start = reader.position();
    let tag = Tag::decode(reader)?;
    if tag.is_opening(number) {
        Ok(())
    } else {
        Err(unexpected(start, TagSpec::Opening(number), &tag))
    }
}

/// Consumes closing tag `number` or fails with `UnexpectedTag`.
pub fn expect_closing(reader: &mut Reader<'_>, number: u8) -> Result<(), DecodeError> {
    let start = reader.position();
    let tag = Tag::decode(reader)?;
    if tag.is_closing(number) {
        Ok(())
    } else {
        Err(unexpected(start, TagSpec::Closing(number), &tag))
    }
}

/// The next tag header, or `None` at the end of input (malformed headers also give `None`;
/// the following decode reports them).
pub fn peek_tag(reader: &Reader<'_>) -> Option<Tag> {
    if reader.is_empty() {
        None
    } else {
        Tag::peek(reader).ok()
    }
}

/// True when the next tag is context primitive tag `number`.
pub fn next_is_context(reader: &Reader<'_>, number: u8) -> bool {
    peek_tag(reader).is_some_and(|tag| tag.is_context(number))
}

/// True when the next tag is opening tag `number`.
pub fn next_is_opening(reader: &Reader<'_>, number: u8) -> bool {
    peek_tag(reader).is_some_and(|tag| tag.is_opening(number))
}

/// True when the next tag is closing tag `number`.
pub fn next_is_closing(reader: &Reader<'_>, number: u8) -> bool {
    peek_tag(reader).is_some_and(|tag| tag.is_closing(number))
}

/// Decodes an OPTIONAL field with context tag `number`: `None` when the next tag differs.
pub fn decode_optional_context<T: PrimitiveValue>(
    reader: &mut Reader<'_>,
    number: u8,
) -> Result<Option<T>, DecodeError> {
    if next_is_context(reader, number) {
        T::decode_context(reader, number).map(Some)
    } else {
        Ok(None)
    }
}

/// Encodes an OPTIONAL field with context tag `number` when present.
pub fn encode_optional_context<T: PrimitiveValue>(
    value: Option<&T>,
    number: u8,
    buf: &mut Vec<u8>,
) {
    if let Some(value) = value {
        value.encode_context(number, buf);
    }
}
