//! Generic tagged data (`ABSTRACT-SYNTAX.&Type`): a lossless tree of application values,
//! context primitives and constructed (opening/closing) groups, for values whose type is
//! not known statically, plus a non-allocating skipper to step over them.

use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::primitive::{ApplicationValue, unexpected};
use super::reader::Reader;
use super::tag::{Tag, TagClass, TagKind};

/// Deepest nesting of opening tags accepted in generic data.
pub const MAX_NESTING_DEPTH: usize = 32;
/// Most elements accepted in one generic list (each level counted separately).
pub const MAX_ELEMENTS: usize = 65_536;

/// One item of generic tagged data.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// An application-tagged primitive.
    Application(ApplicationValue),
    /// A context-tagged primitive whose type is unknown here: the tag number and raw content.
    Context {
        /// Context tag number.
        tag: u8,
        /// Content octets.
        data: Vec<u8>,
    },
    /// Items enclosed by opening and closing tag `tag`.
    Constructed {
        /// Tag number of the opening/closing pair.
        tag: u8,
        /// The enclosed items.
        children: Vec<Element>,
    },
}

impl Element {
    /// Appends this element.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Application(value) => value.encode(buf),
            Self::Context { tag, data } => {
                Tag::context(*tag, u32::try_from(data.len()).unwrap_or(u32::MAX)).encode(buf);
                buf.extend_from_slice(data);
            }
            Self::Constructed { tag, children } => {
                Tag::opening(*tag).encode(buf);
                encode_elements(children, buf);
                Tag::closing(*tag).encode(buf);
            }
        }
    }

    /// Decodes one element.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Self::decode_at_depth(reader, 0)
    }

    fn decode_at_depth(reader: &mut Reader<'_>, depth: usize) -> Result<Self, DecodeError> {
        let start = reader.position();
        let tag = Tag::peek(reader)?;
        match (tag.class, tag.kind) {
            (TagClass::Application, _) => Ok(Self::Application(ApplicationValue::decode(reader)?)),
            (TagClass::Context, TagKind::Value(length)) => {
                Tag::decode(reader)?;
                let data = reader.read_bytes(length as usize)?.to_vec();
                Ok(Self::Context {
                    tag: tag.number,
                    data,
                })
            }
            (TagClass::Context, TagKind::Opening) => {
                if depth >= MAX_NESTING_DEPTH {
                    return Err(DecodeError::new(
                        start,
                        DecodeErrorKind::NestingTooDeep {
                            limit: MAX_NESTING_DEPTH,
                        },
                    ));
                }
                Tag::decode(reader)?;
                let children = decode_until_closing_at_depth(reader, tag.number, depth + 1)?;
                Ok(Self::Constructed {
                    tag: tag.number,
                    children,
                })
            }
            (TagClass::Context, TagKind::Closing) => {
                Err(unexpected(start, TagSpec::AnyApplication, &tag))
            }
        }
    }
}

/// Appends a sequence of elements.
pub fn encode_elements(elements: &[Element], buf: &mut Vec<u8>) {
    for element in elements {
        element.encode(buf);
    }
}

/// Decodes elements up to and including closing tag `number` (the opening tag has
/// already been consumed).
pub fn decode_until_closing(
    reader: &mut Reader<'_>,
    number: u8,
) -> Result<Vec<Element>, DecodeError> {
    decode_until_closing_at_depth(reader, number, 1)
}

fn decode_until_closing_at_depth(
    reader: &mut Reader<'_>,
    number: u8,
    depth: usize,
) -> Result<Vec<Element>, DecodeError> {
    let mut out = Vec::new();
    loop {
        let start = reader.position();
        let tag = Tag::peek(reader)?;
        if tag.kind == TagKind::Closing {
            Tag::decode(reader)?;
            if tag.number != number {
                return Err(unexpected(start, TagSpec::Closing(number), &tag));
            }
            return Ok(out);
        }
        if out.len() >= MAX_ELEMENTS {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::TooManyElements {
                    limit: MAX_ELEMENTS,
                },
            ));
        }
        out.push(Element::decode_at_depth(reader, depth)?);
    }
}

/// Decodes elements until the input ends.
pub fn decode_to_end(reader: &mut Reader<'_>) -> Result<Vec<Element>, DecodeError> {
    let mut out = Vec::new();
    while !reader.is_empty() {
        if out.len() >= MAX_ELEMENTS {
            return Err(reader.error(DecodeErrorKind::TooManyElements {
                limit: MAX_ELEMENTS,
            }));
        }
        out.push(Element::decode(reader)?);
    }
    Ok(out)
}

/// Steps over any tagged data up to and including closing tag `number` (whose opening
/// tag has been consumed) and returns the bytes in between. Checks tag structure and
/// lengths but not primitive contents; allocates nothing.
pub fn skip_until_closing<'a>(
    reader: &mut Reader<'a>,
    number: u8,
) -> Result<&'a [u8], DecodeError> {
    let mut scan = reader.clone();
    let mut open: [u8; MAX_NESTING_DEPTH] = [0; MAX_NESTING_DEPTH];
    open[0] = number;
    let mut depth = 1usize;
    let content_len;
    loop {
        let start = scan.position();
        let tag = Tag::decode(&mut scan)?;
        match (tag.class, tag.kind) {
            (TagClass::Application, TagKind::Value(_)) if tag.number == 1 => {
                // Application BOOLEAN: the value sits in L/V/T, no content octets.
            }
            (_, TagKind::Value(length)) => {
                scan.read_bytes(length as usize)?;
            }
            (_, TagKind::Opening) => {
                if depth >= MAX_NESTING_DEPTH {
                    return Err(DecodeError::new(
                        start,
                        DecodeErrorKind::NestingTooDeep {
                            limit: MAX_NESTING_DEPTH,
                        },
                    ));
                }
                open[depth] = tag.number;
                depth += 1;
            }
            (_, TagKind::Closing) => {
                depth -= 1;
                if open[depth] != tag.number {
                    return Err(unexpected(start, TagSpec::Closing(open[depth]), &tag));
                }
                if depth == 0 {
                    content_len = start - reader.position();
                    break;
                }
            }
        }
    }
    let content = reader.read_bytes(content_len)?;
    Tag::decode(reader)?;
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_round_trip() {
        // [2]{ REAL 72.0, [0] 0x01, [1]{ TRUE } } followed by an unrelated byte.
        let bytes = [
            0x44, 0x42, 0x90, 0x00, 0x00, 0x09, 0x01, 0x1E, 0x11, 0x1F, 0x2F, 0xAA,
        ];
        let mut r = Reader::new(&bytes);
        let items = decode_until_closing(&mut r, 2).unwrap();
        assert_eq!(
            items,
            vec![
                Element::Application(ApplicationValue::Real(72.0)),
                Element::Context {
                    tag: 0,
                    data: vec![1]
                },
                Element::Constructed {
                    tag: 1,
                    children: vec![Element::Application(ApplicationValue::Boolean(true))]
                },
            ]
        );
        assert_eq!(r.position(), 11);
        let mut again = Vec::new();
        encode_elements(&items, &mut again);
        assert_eq!(again, bytes[..10]);

        let mut r = Reader::new(&bytes);
        assert_eq!(skip_until_closing(&mut r, 2).unwrap(), &bytes[..10]);
        assert_eq!(r.read_u8().unwrap(), 0xAA);
    }

    #[test]
    fn mismatched_closing_tag() {
        let bytes = [0x1E, 0x2F];
        let err = decode_until_closing(&mut Reader::new(&bytes), 2).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                1,
                DecodeErrorKind::UnexpectedTag {
                    expected: TagSpec::Closing(1),
                    found: TagSpec::Closing(2)
                }
            )
        );
        let err = skip_until_closing(&mut Reader::new(&bytes), 2).unwrap_err();
        assert_eq!(err.offset, 1);
    }

    #[test]
    fn nesting_limit() {
        let mut bytes = vec![0x0E; MAX_NESTING_DEPTH + 1];
        bytes.extend(vec![0x0F; MAX_NESTING_DEPTH + 2]);
        let err = decode_until_closing(&mut Reader::new(&bytes), 0).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::NestingTooDeep {
                limit: MAX_NESTING_DEPTH
            }
        );
        let err = skip_until_closing(&mut Reader::new(&bytes), 0).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::NestingTooDeep {
                limit: MAX_NESTING_DEPTH
            }
        );
    }

    #[test]
    fn missing_closing_tag_is_truncation() {
        let err = skip_until_closing(&mut Reader::new(&[0x21, 0x05]), 3).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                2,
                DecodeErrorKind::Truncated {
                    needed: 1,
                    remaining: 0
                }
            )
        );
    }
}
