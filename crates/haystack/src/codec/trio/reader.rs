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
use crate::value::{Dict, Grid, GridError, Value, is_tag_name};
use std::collections::HashMap;

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

/// Receives the tags of a Trio document as they are read.
trait RecordSink<'a> {
    /// One tag of the current record; `line_offset` is where its line starts.
    fn tag(&mut self, input: &str, name: &'a str, value: Value, line_offset: usize) -> Result<()>;
    /// The current record ended (at a `---` line or the end of input).
    fn end_record(&mut self);
}

/// Collects records as dicts.
#[derive(Default)]
struct DictRecords {
    records: Vec<Dict>,
    current: Dict,
}

impl<'a> RecordSink<'a> for DictRecords {
    fn tag(&mut self, input: &str, name: &'a str, value: Value, line_offset: usize) -> Result<()> {
        if self.current.contains(name) {
            return Err(DecodeError::at_offset(
                input,
                line_offset,
                DecodeErrorKind::DuplicateName(name.to_owned()),
            ));
        }
        self.current.insert(name, value).map_err(|e| {
            DecodeError::at_offset(input, line_offset, DecodeErrorKind::InvalidTagName(e.0))
        })
    }

    fn end_record(&mut self) {
        if !self.current.is_empty() {
            self.records.push(std::mem::take(&mut self.current));
        }
    }
}

/// Collects records straight into grid columns and cells: each tag name is looked up
/// once per tag and allocated once per document, not once per record.
#[derive(Default)]
struct GridRecords<'a> {
    /// Column names in first-seen order.
    names: Vec<&'a str>,
    /// Column index of each name.
    index: HashMap<&'a str, usize>,
    /// For each column, the number of the last record that set it (finds duplicates).
    last_record: Vec<usize>,
    /// Tags of all records: (column, value).
    tags: Vec<(usize, Value)>,
    /// Where each finished, non-empty record ends in `tags`.
    record_ends: Vec<usize>,
    /// Column after the previous tag's in this record: where the next tag is looked for first.
    next_guess: usize,
}

/// Columns looked at after the previous tag's before a tag name is hashed.
const TAG_LOOKAHEAD: usize = 8;

impl<'a> RecordSink<'a> for GridRecords<'a> {
    fn tag(&mut self, input: &str, name: &'a str, value: Value, line_offset: usize) -> Result<()> {
        // Record numbers start at 1 so that 0 means "never set".
        let record = self.record_ends.len() + 1;
        // Records tend to list their tags in the same order: look a few columns past
        // the previous tag's before hashing the name.
        let ahead = self.names.get(self.next_guess..).unwrap_or(&[]);
        let near = ahead
            .iter()
            .take(TAG_LOOKAHEAD)
            .position(|n| *n == name)
            .map(|skip| self.next_guess + skip);
        let column = match near.or_else(|| self.index.get(name).copied()) {
            Some(column) => column,
            None => {
                if !is_tag_name(name) {
                    return Err(DecodeError::at_offset(
                        input,
                        line_offset,
                        DecodeErrorKind::InvalidTagName(name.to_owned()),
                    ));
                }
                let column = self.names.len();
                self.names.push(name);
                self.index.insert(name, column);
                self.last_record.push(0);
                column
            }
        };
        let Some(last) = self.last_record.get_mut(column) else {
            return Err(DecodeError::at_offset(
                input,
                line_offset,
                DecodeErrorKind::InvalidGrid("column table out of step".into()),
            ));
        };
        if *last == record {
            return Err(DecodeError::at_offset(
                input,
                line_offset,
                DecodeErrorKind::DuplicateName(name.to_owned()),
            ));
        }
        *last = record;
        self.next_guess = column + 1;
        self.tags.push((column, value));
        Ok(())
    }

    fn end_record(&mut self) {
        self.next_guess = 0;
        let start = self.record_ends.last().copied().unwrap_or(0);
        if self.tags.len() > start {
            self.record_ends.push(self.tags.len());
        }
    }
}

impl GridRecords<'_> {
    fn into_grid(self) -> std::result::Result<Grid, GridError> {
        let mut grid = Grid::with_column_names(self.names.iter().copied())?;
        grid.reserve_rows(self.record_ends.len());
        // Records list their tags in any order; the grid stores a row's cells in column
        // order, which costs least when they arrive in it (names are unique per record).
        let mut tags = self.tags;
        grid.reserve_cells(tags.len());
        let mut start = 0;
        for &end in &self.record_ends {
            if let Some(record) = tags.get_mut(start..end) {
                record.sort_unstable_by_key(|&(column, _)| column);
            }
            start = end;
        }
        let mut tags = tags.into_iter();
        let mut start = 0;
        for end in self.record_ends {
            let filled: std::result::Result<(), std::convert::Infallible> =
                grid.push_row_with(|cells| {
                    for (column, value) in tags.by_ref().take(end - start) {
                        cells.set(column, value);
                    }
                    Ok(())
                });
            let Ok(()) = filled;
            start = end;
        }
        Ok(grid)
    }
}

/// Decodes all records of a Trio document.
pub fn decode_records(input: &str) -> Result<Vec<Dict>> {
    let mut sink = DictRecords::default();
    read_records(input, &mut sink)?;
    Ok(sink.records)
}

/// Decodes a Trio document into a grid whose columns are the union of all tag names
/// in first-seen order (the same grid as [`Grid::from_dicts`] of [`decode_records`]).
pub fn decode_grid(input: &str) -> Result<Grid> {
    let mut sink = GridRecords::default();
    read_records(input, &mut sink)?;
    sink.into_grid()
        .map_err(|e| DecodeError::at_offset(input, 0, DecodeErrorKind::InvalidGrid(e.to_string())))
}

fn read_records<'a>(input: &'a str, sink: &mut impl RecordSink<'a>) -> Result<()> {
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
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.text.starts_with("---") {
            sink.end_record();
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
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(line.text.len());
        let name = line.text.get(..name_len).unwrap_or("");
        if !is_tag_name(name) {
            return Err(DecodeError::at_offset(
                input,
                line.offset,
                DecodeErrorKind::InvalidTagName(name.to_owned()),
            ));
        }
        let after = line.text.get(name_len..).unwrap_or("");
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
        sink.tag(input, name, value, line.offset)?;
    }
    sink.end_record();
    Ok(())
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
    if is_plain_text(text) {
        return Ok((Value::Str(text.to_owned()), offset + text.len()));
    }
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

/// Whether `text` is certainly an unquoted string, known without running the Zinc
/// reader (which would fail on it): it starts with a non-ASCII character, or with a
/// letter whose word is not a Zinc keyword and is not followed by `(` (a coordinate or
/// an XStr).
pub(super) fn is_plain_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(0x80..) => true,
        Some(b'a'..=b'z' | b'A'..=b'Z') => {
            let word_len = bytes
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .unwrap_or(bytes.len());
            let word = text.get(..word_len).unwrap_or("");
            bytes.get(word_len) != Some(&b'(')
                && !matches!(word, "T" | "F" | "M" | "N" | "R" | "NA" | "INF" | "NaN")
        }
        _ => false,
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
