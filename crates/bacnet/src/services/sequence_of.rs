//! `SEQUENCE OF` decoding with explicit count limits, for the lists inside service
//! parameters: lists closed by a closing tag, and lists that fill the rest of the payload.
//!
//! Items are pushed one by one as they decode, so memory grows only with input actually
//! consumed; the count limit bounds the work per list.

use crate::encoding::context::next_is_closing;
use crate::encoding::context::{expect_closing, expect_opening};
use crate::encoding::{DecodeError, DecodeErrorKind, Reader};

/// Most access specifications (objects) accepted in one ReadPropertyMultiple or
/// WritePropertyMultiple request or result list.
pub const MAX_ACCESS_SPECIFICATIONS: usize = 1024;
/// Most property references, results or values accepted for one object.
pub const MAX_PROPERTIES_PER_OBJECT: usize = 1024;

/// Decodes `[number] { item* }`: opening tag, items until closing tag `number`, closing tag.
pub(crate) fn decode_enclosed_list<T>(
    reader: &mut Reader<'_>,
    number: u8,
    limit: usize,
    mut decode_item: impl FnMut(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    expect_opening(reader, number)?;
    let mut items = Vec::new();
    while !next_is_closing(reader, number) {
        if reader.is_empty() {
            // The closing tag is missing: report where it was expected.
            return expect_closing(reader, number).map(|()| items);
        }
        check_limit(reader, items.len(), limit)?;
        items.push(decode_item(reader)?);
    }
    expect_closing(reader, number)?;
    Ok(items)
}

/// Decodes items until the input ends; at least one item is required, so empty input is
/// reported as truncation (a missing required parameter).
pub(crate) fn decode_list_to_end<T>(
    reader: &mut Reader<'_>,
    limit: usize,
    mut decode_item: impl FnMut(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut items = vec![decode_item(reader)?];
    while !reader.is_empty() {
        check_limit(reader, items.len(), limit)?;
        items.push(decode_item(reader)?);
    }
    Ok(items)
}

fn check_limit(reader: &Reader<'_>, count: usize, limit: usize) -> Result<(), DecodeError> {
    if count >= limit {
        Err(reader.error(DecodeErrorKind::TooManyElements { limit }))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::PrimitiveValue;

    fn unsigned(reader: &mut Reader<'_>) -> Result<u32, DecodeError> {
        u32::decode_application(reader)
    }

    #[test]
    fn enclosed_list_and_limit() {
        let bytes = [0x1E, 0x21, 0x01, 0x21, 0x02, 0x1F];
        let items = decode_enclosed_list(&mut Reader::new(&bytes), 1, 2, unsigned).unwrap();
        assert_eq!(items, [1, 2]);
        let err = decode_enclosed_list(&mut Reader::new(&bytes), 1, 1, unsigned).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(3, DecodeErrorKind::TooManyElements { limit: 1 })
        );
    }

    #[test]
    fn missing_closing_tag_is_truncation() {
        let err = decode_enclosed_list(&mut Reader::new(&[0x1E, 0x21, 0x01]), 1, 8, unsigned)
            .unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                3,
                DecodeErrorKind::Truncated {
                    needed: 1,
                    remaining: 0
                }
            )
        );
    }

    #[test]
    fn list_to_end_needs_one_item() {
        let err = decode_list_to_end(&mut Reader::new(&[]), 8, unsigned).unwrap_err();
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
        let items = decode_list_to_end(&mut Reader::new(&[0x21, 0x07]), 8, unsigned).unwrap();
        assert_eq!(items, [7]);
    }
}
