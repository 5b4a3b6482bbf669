//! Trio decoder: line-oriented records of `name` / `name:value` tags separated by
//! `---` lines.
//!
//! Values use the Zinc grammar. A value that does not parse as Zinc is an unquoted
//! string (e.g. `dis:Alpha Airside AHU-2`), except that text starting with `"`, `[`,
//! `{` or `<<` must parse, so a broken literal is reported instead of silently kept.
//! An empty value followed by indented lines is a multi-line string; `Zinc:`
//! followed by indented lines is a nested grid. `//` lines are comments.

use crate::codec::zinc::{self, ZincReader};
use crate::codec::{DecodeError, DecodeErrorKind, Location, MAX_INPUT_BYTES};
use crate::value::{Dict, Value, is_tag_name};

type Result<T> = std::result::Result<T, DecodeError>;

/// One input line: its text (without line break) and byte offset.
#[derive(Clone, Copy)]
struct Line<'a> {
    text: &'a str,
    offset: usize,
}

fn split_lines(input: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut offset = 0;
    for raw in input.split_inclusive('\n') {
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let text = text.strip_suffix('\r').unwrap_or(text);
        lines.push(Line { text, offset });
        offset += raw.len();
    }
    lines
}

fn is_indented(line: &Line<'_>) -> bool {
    line.text.starts_with([' ', '\t'])
}

fn indentation(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t']).len()
}

/// Decodes all records of a Trio document.
pub fn decode_records(input: &str) -> Result<Vec<Dict>> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(DecodeError::at_offset(
            "",
            0,
            DecodeErrorKind::InputTooLarge {
                size: input.len(),
                limit: MAX_INPUT_BYTES,
            },
        ));
    }
    let lines = split_lines(input);
    let mut records = Vec::new();
    let mut current = Dict::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.text.starts_with("---") {
            if !current.is_empty() {
                records.push(std::mem::take(&mut current));
            }
            continue;
        }
        if line.text.trim().is_empty() || line.text.starts_with("//") {
            continue;
        }
        if is_indented(&line) {
            return Err(DecodeError::at_offset(
                input,
                line.offset,
                DecodeErrorKind::Unexpected {
                    found: line.text.chars().next().unwrap_or(' '),
                    expected: "a tag name at the start of the line",
                },
            ));
        }
        let name_len = line
            .text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(line.text.len());
        let name = &line.text[..name_len];
        if !is_tag_name(name) {
            return Err(DecodeError::at_offset(
                input,
                line.offset,
                DecodeErrorKind::InvalidTagName(name.to_owned()),
            ));
        }
        let after = &line.text[name_len..];
        let value = if after.trim().is_empty() {
            Value::Marker
        } else if let Some(raw_value) = after.strip_prefix(':') {
            let text = raw_value.trim();
            let value_offset = line.offset + name_len + 1 + indentation(raw_value);
            if text.is_empty() || text == "Zinc:" {
                let start = i;
                while i < lines.len() && is_indented(&lines[i]) {
                    i += 1;
                }
                let block = &lines[start..i];
                if text.is_empty() {
                    Value::Str(dedent(block).0)
                } else {
                    decode_zinc_block(input, block)?
                }
            } else {
                let (value, end) = decode_inline_value(input, text, value_offset)?;
                // A collection holding a nested grid may span several lines.
                while i < lines.len() && lines[i].offset < end {
                    i += 1;
                }
                value
            }
        } else {
            let found = after.chars().next().unwrap_or(' ');
            return Err(DecodeError::at_offset(
                input,
                line.offset + name_len,
                DecodeErrorKind::Unexpected {
                    found,
                    expected: "':' or the end of the line",
                },
            ));
        };
        if current.contains(name) {
            return Err(DecodeError::at_offset(
                input,
                line.offset,
                DecodeErrorKind::DuplicateName(name.to_owned()),
            ));
        }
        current.insert(name, value).map_err(|e| {
            DecodeError::at_offset(input, line.offset, DecodeErrorKind::InvalidTagName(e.0))
        })?;
    }
    if !current.is_empty() {
        records.push(current);
    }
    Ok(records)
}

/// Removes the common indentation of `block`; whitespace-only lines become empty.
/// Returns the text and the indentation removed.
fn dedent(block: &[Line<'_>]) -> (String, usize) {
    let indent = block
        .iter()
        .filter(|l| !l.text.trim().is_empty())
        .map(|l| indentation(l.text))
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for (n, line) in block.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        if !line.text.trim().is_empty() {
            out.push_str(line.text.get(indent..).unwrap_or(""));
        }
    }
    (out, indent)
}

/// Decodes the value starting at `offset` (whose first line holds `text`), returning
/// it and the byte offset where it ends.
fn decode_inline_value(input: &str, text: &str, offset: usize) -> Result<(Value, usize)> {
    // Read from the value onwards (not the whole document) so that a failed attempt,
    // which is the normal case for unquoted strings, costs only the text it looked at.
    let rest = input.get(offset..).unwrap_or("");
    let parsed = ZincReader::new(rest).and_then(|mut reader| {
        let value = reader.read_value()?;
        let end = reader.offset();
        if reader.at_line_end_after_spaces() {
            Ok((value, offset + end))
        } else {
            Err(DecodeError::at_offset(
                rest,
                end,
                DecodeErrorKind::TrailingInput,
            ))
        }
    });
    match parsed {
        Ok(found) => Ok(found),
        Err(e) if text.starts_with(['"', '[', '{']) || text.starts_with("<<") => {
            let inner = match e.location {
                Location::Text { offset, .. } => offset,
                Location::Path(_) => 0,
            };
            Err(DecodeError::at_offset(input, offset + inner, e.kind))
        }
        Err(_) => Ok((Value::Str(text.to_owned()), offset + text.len())),
    }
}

/// Decodes an indented Zinc grid block, mapping error positions back to the Trio input.
fn decode_zinc_block(input: &str, block: &[Line<'_>]) -> Result<Value> {
    let (text, indent) = dedent(block);
    match zinc::decode_grid(&text) {
        Ok(grid) => Ok(Value::Grid(Box::new(grid))),
        Err(e) => {
            let (line, column) = e.line_column().unwrap_or((1, 1));
            let offset = block
                .get(line - 1)
                .or(block.last())
                .map_or(input.len(), |l| {
                    let byte_in_line = l
                        .text
                        .get(indent..)
                        .unwrap_or("")
                        .char_indices()
                        .nth(column - 1)
                        .map_or(l.text.len().saturating_sub(indent), |(b, _)| b);
                    l.offset + indent + byte_in_line
                });
            Err(DecodeError::at_offset(input, offset, e.kind))
        }
    }
}
