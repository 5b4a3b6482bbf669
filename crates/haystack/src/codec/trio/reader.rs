//! Trio decoder: line-oriented records of `name` / `name:value` tags separated by
//! `---` lines.
//!
//! Values use the Zinc grammar. A value that does not parse as Zinc is an unquoted
//! string (e.g. `dis:Alpha Airside AHU-2`), except that text starting with `"`, `[`,
//! `{` or `<<` must parse, so a broken literal is reported instead of silently kept.
//! An empty value followed by indented lines is a multi-line string; `Zinc:`
//! followed by indented lines is a nested grid. `//` lines are comments.

use crate::codec::zinc::{self, ZincReader};
use crate::codec::{
    DecodeError, DecodeErrorKind, Location, MAX_INPUT_BYTES, chunk_starts, parallel_min_bytes,
};
use crate::value::{Dict, Grid, GridError, Value, is_tag_name};
use std::collections::HashMap;

type Result<T> = std::result::Result<T, DecodeError>;

/// One input line: its text (without line break) and byte offset.
#[derive(Clone, Copy)]
struct Line<'a> {
    text: &'a str,
    offset: usize,
}

/// The lines of `input[from..to]` (`from` at a line start), with offsets in `input`.
fn split_lines(input: &str, from: usize, to: usize) -> Vec<Line<'_>> {
    let text = input.get(from..to).unwrap_or("");
    let mut lines = Vec::with_capacity(text.len() / 24 + 1);
    let mut start = 0;
    let line_ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in line_ends {
        if start == text.len() && end == text.len() {
            // No empty line after a final line break (as `split_inclusive`).
            break;
        }
        // `end` is at a '\n' (ASCII) or the end of the text: both are char boundaries.
        let raw = text.get(start..end).unwrap_or("");
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        lines.push(Line {
            text: raw,
            offset: from + start,
        });
        start = end + 1;
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
    /// The previous tag's column in this record (`None` at a record's start); the next
    /// tag is looked for at its predicted column, then from the column after this one.
    previous: Option<usize>,
    /// For each column, the column of the tag that followed it last time, and for the
    /// record start the first tag's: records of one kind list their tags in the same
    /// order, which need not be the column order.
    successor: Vec<usize>,
    first: usize,
}

/// Tag name equality that settles most unequal pairs on their length and last byte,
/// without calling `memcmp`.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// No known successor.
const NO_COLUMN: usize = usize::MAX;

/// Columns looked at after the previous tag's before a tag name is hashed.
const TAG_LOOKAHEAD: usize = 8;

impl<'a> RecordSink<'a> for GridRecords<'a> {
    fn tag(&mut self, input: &str, name: &'a str, value: Value, line_offset: usize) -> Result<()> {
        // Record numbers start at 1 so that 0 means "never set".
        let record = self.record_ends.len() + 1;
        // Records tend to list their tags in the same order: look a few columns past
        // the previous tag's before hashing the name.
        let predicted = match self.previous {
            Some(previous) => self.successor.get(previous).copied().unwrap_or(NO_COLUMN),
            None => self.first,
        };
        let near = if self
            .names
            .get(predicted)
            .is_some_and(|n| same_name(n, name))
        {
            Some(predicted)
        } else {
            let next_guess = self.previous.map_or(0, |previous| previous + 1);
            let ahead = self.names.get(next_guess..).unwrap_or(&[]);
            ahead
                .iter()
                .take(TAG_LOOKAHEAD)
                .position(|n| same_name(n, name))
                .map(|skip| next_guess + skip)
        };
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
                self.add_column(name)
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
        match self.previous {
            Some(previous) => {
                if let Some(next) = self.successor.get_mut(previous) {
                    *next = column;
                }
            }
            None => self.first = column,
        }
        self.previous = Some(column);
        self.tags.push((column, value));
        Ok(())
    }

    fn end_record(&mut self) {
        self.previous = None;
        let start = self.record_ends.last().copied().unwrap_or(0);
        if self.tags.len() > start {
            self.record_ends.push(self.tags.len());
        }
    }
}

impl<'a> GridRecords<'a> {
    /// A new column for `name` (a valid tag name not seen before); returns its index.
    fn add_column(&mut self, name: &'a str) -> usize {
        let column = self.names.len();
        self.names.push(name);
        self.index.insert(name, column);
        self.last_record.push(0);
        self.successor.push(NO_COLUMN);
        column
    }

    /// Appends the records `other` read from the text after this one's: its columns are
    /// renumbered into these, new names added in its first-seen order.
    fn append(&mut self, other: GridRecords<'a>) {
        let renumber: Vec<usize> = other
            .names
            .iter()
            .map(|&name| match self.index.get(name) {
                Some(&column) => column,
                None => self.add_column(name),
            })
            .collect();
        let base = self.tags.len();
        self.tags.extend(
            other
                .tags
                .into_iter()
                .map(|(column, value)| (renumber.get(column).copied().unwrap_or(column), value)),
        );
        self.record_ends
            .extend(other.record_ends.iter().map(|end| end + base));
    }

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
    if crate::codec::parallel_decode()
        && (parallel_min_bytes()..=MAX_INPUT_BYTES).contains(&input.len())
    {
        let starts = record_part_starts(input);
        if starts.len() > 1
            && let Some(grid) = decode_grid_in_parts(input, &starts)
        {
            return Ok(grid);
        }
    }
    decode_grid_one_thread(input)
}

/// [`decode_grid`] on this thread alone.
fn decode_grid_one_thread(input: &str) -> Result<Grid> {
    let mut sink = GridRecords::default();
    read_records(input, &mut sink)?;
    sink.into_grid()
        .map_err(|e| DecodeError::at_offset(input, 0, DecodeErrorKind::InvalidGrid(e.to_string())))
}

/// Parts a large Trio document is cut into for two threads. Fewer than for JSON and Zinc
/// rows: every part the helper reads builds a column table of its own, which the join
/// then renumbers.
const RECORD_PARTS: usize = 4;

/// Where the parts of a document read by two threads start: 0, then the first `---` line
/// from each even share of the text on ([`chunk_starts`]).
fn record_part_starts(input: &str) -> Vec<usize> {
    let bytes = input.as_bytes();
    chunk_starts(0, bytes.len(), RECORD_PARTS, |from| {
        let at = memchr::memmem::find(bytes.get(from..)?, b"\n---")?;
        Some(from + at + 1)
    })
}

/// Decodes the records of the parts that start at `starts` (0, then starts of `---`
/// lines) on this thread and the decode helper, and joins them: this thread reads parts
/// from the front into one record table, the helper parts from the back into tables of
/// their own (so a helper that starts late or runs slowly just gets fewer), and the
/// helper's tables are appended in order, columns in first-seen order over all parts, as
/// one thread would have them. `None` when one thread alone must decide: a value runs past
/// its part's end (a nested grid over several lines), or any part has an error (whose
/// first occurrence and position the one-thread decode reports).
fn decode_grid_in_parts<'a>(input: &'a str, starts: &[usize]) -> Option<Grid> {
    let read_part = |i: usize, sink: &mut GridRecords<'a>| {
        let from = *starts.get(i)?;
        let to = starts.get(i + 1).copied().unwrap_or(input.len());
        let lines = split_lines(input, from, to);
        matches!(read_lines(input, &lines, to, sink), Ok(Read::All)).then_some(())
    };
    let back = |i: usize| {
        let mut sink = GridRecords::default();
        read_part(i, &mut sink).map(|()| sink)
    };
    let mut records = GridRecords::default();
    let helper_parts = crate::codec::read_parts(
        starts.len(),
        |i| read_part(i, &mut records).map(|()| true).ok_or(()),
        &back,
    )
    .ok()?;
    for (_, part) in helper_parts {
        records.append(part?);
        crate::codec::count_split_joined();
    }
    records.into_grid().ok()
}

/// How [`read_lines`] ended.
enum Read {
    /// Every line was read.
    All,
    /// A value ran past the limit.
    Crossed,
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
    let lines = split_lines(input, 0, input.len());
    read_lines(input, &lines, input.len(), sink).map(|_| ())
}

/// Reads the records of `lines`; a value may not run past `limit` (else [`Read::Crossed`]).
fn read_lines<'a>(
    input: &'a str,
    lines: &[Line<'a>],
    limit: usize,
    sink: &mut impl RecordSink<'a>,
) -> Result<Read> {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.text.starts_with("---") {
            sink.end_record();
            continue;
        }
        // A line that starts with a lower-case letter is a tag: not blank, not a
        // comment, not indented (the common case, tested first).
        let tag_line = matches!(line.text.as_bytes().first(), Some(b'a'..=b'z'));
        if !tag_line && (line.text.trim().is_empty() || line.text.starts_with("//")) {
            continue;
        }
        if !tag_line && is_indented(&line) {
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
                if end > limit {
                    return Ok(Read::Crossed);
                }
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
    Ok(Read::All)
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

#[cfg(test)]
mod split_tests {
    use super::*;
    use crate::codec::zinc::tests::{nested_value, small_grid};
    use proptest::prelude::*;

    /// Splits at every line that starts with `---` (record separators, and any such line
    /// inside a value): each join that is made equals the one-thread grid.
    fn check_every_split(text: &str) -> std::result::Result<usize, TestCaseError> {
        let expected = decode_grid_one_thread(text);
        let mut joined = 0;
        for (at, _) in text.match_indices("---") {
            if at != 0 && text.as_bytes().get(at - 1) != Some(&b'\n') {
                continue;
            }
            if let Some(grid) = decode_grid_in_parts(text, &[0, at]) {
                prop_assert_eq!(
                    Some(&grid),
                    expected.as_ref().ok(),
                    "split at {}: {}",
                    at,
                    text
                );
                joined += 1;
            }
        }
        Ok(joined)
    }

    /// Cuts at every line that starts with `---` at once, so that both threads read
    /// several parts: a join, when made, equals the one-thread grid.
    fn check_all_parts(text: &str) -> std::result::Result<bool, TestCaseError> {
        let mut starts = vec![0];
        starts.extend(
            text.match_indices("\n---")
                .map(|(at, _)| at + 1)
                .filter(|&at| at < text.len()),
        );
        let expected = decode_grid_one_thread(text);
        match decode_grid_in_parts(text, &starts) {
            Some(grid) => {
                prop_assert_eq!(Some(&grid), expected.as_ref().ok(), "{}", text);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    proptest! {
        #[test]
        fn records_read_in_many_parts_equal_records_read_by_one(
            grid in small_grid(nested_value())
        ) {
            check_all_parts(&crate::codec::trio::encode_grid(&grid))?;
        }
    }

    #[test]
    fn many_parts_are_joined_in_order() {
        let mut text = String::new();
        for i in 0..40 {
            // Tag orders and new columns vary from record to record.
            text.push_str(&format!("id:@r{i}\nn:{i}\n"));
            if i % 3 == 0 {
                text.push_str(&format!("c{}:M\n", i % 7));
            }
            text.push_str("---\n");
        }
        let before = crate::codec::SPLITS_JOINED.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(check_all_parts(&text).ok(), Some(true));
        assert!(crate::codec::SPLITS_JOINED.load(std::sync::atomic::Ordering::Relaxed) > before);
    }

    proptest! {
        #[test]
        fn records_read_by_two_threads_equal_records_read_by_one(
            grid in small_grid(nested_value())
        ) {
            check_every_split(&crate::codec::trio::encode_grid(&grid))?;
        }
    }

    #[test]
    fn splits_join_columns_in_first_seen_order_and_refuse_crossing_values() {
        // The second part brings new columns and repeats old ones in another order.
        let text = "id:@a\ndis:A\n---\nid:@b\narea:1m\n---\narea:2m\nnew:T\nid:@c\n---\nz\ndis:D\n";
        let joined = check_every_split(text).unwrap_or_default();
        assert_eq!(joined, 3);
        let grid = decode_grid_in_parts(text, &[0, text.find("---\narea").unwrap_or(0)]);
        let names: Vec<String> = grid
            .map(|g| g.columns().iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default();
        assert_eq!(names, ["id", "dis", "area", "new", "z"]);
        // A list holding a nested grid runs over lines; the split after it is joined.
        let multi_line = "id:@a\nv:[<<\nver:\"3.0\"\na\n1\n>>]\n---\nid:@b\n";
        assert_eq!(check_every_split(multi_line).unwrap_or_default(), 1);
        // A `---` line inside such a value (which no valid Zinc has): refused, and the
        // one-thread decode reports the error.
        let crossing = "id:@a\nv:[<<\nver:\"3.0\"\na\n---\n>>]\n---\nid:@b\n";
        let at = crossing.find("---").unwrap_or(0);
        assert!(decode_grid_in_parts(crossing, &[0, at]).is_none());
        assert!(decode_grid_one_thread(crossing).is_err());
        // Lines cut inside a value: the reader says so instead of reading on.
        let limit = multi_line.find("1\n>>").unwrap_or(0);
        let lines = split_lines(multi_line, 0, limit);
        let mut sink = GridRecords::default();
        let read = read_lines(multi_line, &lines, limit, &mut sink);
        assert!(matches!(read, Ok(Read::Crossed)));
        // An error in either part: the one-thread decode reports it.
        assert!(decode_grid_in_parts("a:\"open\n---\nb\n", &[0, 6]).is_none());
        assert!(decode_grid_in_parts("a\n---\nb:\"open\n", &[0, 2]).is_none());
    }
}
