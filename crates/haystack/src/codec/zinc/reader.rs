//! [`ZincReader`]: a cursor over Zinc text that decodes grids and values.
//!
//! Grammar: Project Haystack "Zinc" (version 3.0). The reader never panics, tracks
//! nesting depth against [`MAX_DEPTH`] and reports errors with line and column.

use crate::codec::{
    DecodeError, DecodeErrorKind, MAX_COLUMNS, MAX_DEPTH, MAX_INPUT_BYTES, ROW_CHUNKS, RowsEnd,
    chunk_starts, read_chunks,
};
use crate::value::{
    Column, Coord, Date, DateTime, Dict, Grid, GridError, Number, Ref, RowCells, Time, Value, XStr,
    is_ref_char, is_tag_name, is_xstr_type,
};

/// Rows read before cells are reserved for the remaining lines at their average count.
const ROWS_BEFORE_CELL_ESTIMATE: usize = 16;

/// Zinc grid versions the reader accepts (`ver:"..."`).
pub const SUPPORTED_VERSIONS: &[&str] = &["3.0", "2.0"];

/// Most digits accepted in a fraction of a second (nanosecond precision).
const MAX_FRACTION_DIGITS: usize = 9;

type Result<T> = std::result::Result<T, DecodeError>;

/// A position in Zinc text plus the current nesting depth.
#[derive(Debug)]
pub struct ZincReader<'a> {
    input: &'a str,
    pos: usize,
    depth: usize,
    /// The rows of the next top-level grid read are split between two threads when at
    /// least this many bytes are left after its column line (`None`: never).
    split_rows_from: Option<usize>,
}

/// The start of the first line after `from`: probably a row (it may also be a line of a
/// nested grid; [`read_chunks`] checks).
fn line_start_after(bytes: &[u8], from: usize) -> Option<usize> {
    let newline = bytes.get(from..)?.iter().position(|&b| b == b'\n')?;
    let start = from + newline + 1;
    (start < bytes.len()).then_some(start)
}

impl<'a> ZincReader<'a> {
    /// A reader at the start of `input`; fails if the input exceeds [`MAX_INPUT_BYTES`].
    pub fn new(input: &'a str) -> Result<Self> {
        let reader = ZincReader {
            input,
            pos: 0,
            depth: 0,
            split_rows_from: None,
        };
        if input.len() > MAX_INPUT_BYTES {
            return Err(reader.error(DecodeErrorKind::InputTooLarge {
                size: input.len(),
                limit: MAX_INPUT_BYTES,
            }));
        }
        Ok(reader)
    }

    /// Skips spaces and tabs; true if a line break or the end of input follows.
    pub fn at_line_end_after_spaces(&mut self) -> bool {
        self.skip_spaces();
        self.is_at_end() || self.at_newline()
    }

    /// Reads the rows of the next top-level grid with two threads when at least `bytes`
    /// of text follow its column line (see [`crate::codec::set_parallel_decode`]).
    pub(crate) fn split_rows_from(mut self, bytes: usize) -> Self {
        self.split_rows_from = Some(bytes);
        self
    }

    /// Current byte offset.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Whether all input is consumed.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    /// Fails with [`DecodeErrorKind::TrailingInput`] unless only whitespace is left.
    pub fn expect_end(&mut self) -> Result<()> {
        self.skip_whitespace_and_newlines();
        if self.is_at_end() {
            Ok(())
        } else {
            Err(self.error(DecodeErrorKind::TrailingInput))
        }
    }

    fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::at_offset(self.input, self.pos, kind)
    }

    fn error_at(&self, offset: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::at_offset(self.input, offset, kind)
    }

    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_byte(&self) -> Option<u8> {
        self.input.as_bytes().get(self.pos).copied()
    }

    fn peek_byte_at(&self, ahead: usize) -> Option<u8> {
        self.input.as_bytes().get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn unexpected(&self, expected: &'static str) -> DecodeError {
        match self.peek() {
            Some(found) => self.error(DecodeErrorKind::Unexpected { found, expected }),
            None => self.error(DecodeErrorKind::UnexpectedEnd(expected)),
        }
    }

    fn expect_char(&mut self, wanted: char, expected: &'static str) -> Result<()> {
        let found = match u8::try_from(wanted) {
            Ok(byte) if byte.is_ascii() => self.peek_byte() == Some(byte),
            _ => self.peek() == Some(wanted),
        };
        if found {
            self.pos += wanted.len_utf8();
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek_byte(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_whitespace_and_newlines(&mut self) {
        while matches!(self.peek_byte(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    fn at_newline(&self) -> bool {
        matches!(self.peek_byte(), Some(b'\n'))
            || (self.peek_byte() == Some(b'\r') && self.peek_byte_at(1) == Some(b'\n'))
    }

    fn expect_newline(&mut self) -> Result<()> {
        match self.peek_byte() {
            Some(b'\n') => self.pos += 1,
            Some(b'\r') if self.peek_byte_at(1) == Some(b'\n') => self.pos += 2,
            _ => return Err(self.unexpected("a newline")),
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(DecodeErrorKind::TooDeep(MAX_DEPTH)));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reads a run of characters matching `accept`, returning the slice. ASCII bytes
    /// are tested directly; only other characters are decoded.
    fn take_while(&mut self, accept: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        let bytes = self.input.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if b.is_ascii() {
                if !accept(char::from(b)) {
                    break;
                }
                self.pos += 1;
            } else {
                match self.peek() {
                    Some(c) if accept(c) => self.pos += c.len_utf8(),
                    _ => break,
                }
            }
        }
        self.input.get(start..self.pos).unwrap_or("")
    }

    fn read_tag_name(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if !matches!(self.peek_byte(), Some(b'a'..=b'z')) {
            return Err(self.unexpected("a tag name"));
        }
        let name = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_tag_name(name) {
            Ok(name)
        } else {
            Err(self.error_at(start, DecodeErrorKind::InvalidTagName(name.to_owned())))
        }
    }

    // ----- grids -------------------------------------------------------------------

    /// Reads a whole grid: `ver:"3.0"` line with meta, column line, rows.
    ///
    /// Reading stops at the end of input, or (for nested grids) before `>>`.
    pub fn read_grid(&mut self) -> Result<Grid> {
        self.read_grid_body(false)
    }

    fn read_grid_body(&mut self, nested: bool) -> Result<Grid> {
        let start = self.pos;
        if !self.rest().starts_with("ver:") {
            return Err(self.unexpected("ver:\"3.0\""));
        }
        self.pos += 4;
        let version_at = self.pos;
        let version = self.read_str_literal()?;
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            return Err(self.error_at(version_at, DecodeErrorKind::UnsupportedVersion(version)));
        }
        let meta = self.read_meta()?;
        self.expect_newline()?;

        let columns_at = self.pos;
        let mut columns = Vec::new();
        loop {
            self.skip_spaces();
            if columns.len() >= MAX_COLUMNS {
                return Err(self.error(DecodeErrorKind::TooManyColumns(MAX_COLUMNS)));
            }
            let name = self.read_tag_name()?.to_owned();
            let meta = self.read_meta()?;
            columns.push(Column { name, meta });
            self.skip_spaces();
            if self.peek_byte() == Some(b',') {
                self.pos += 1;
            } else {
                break;
            }
        }
        let mut grid = Grid::new(meta, columns).map_err(|e| match e {
            GridError::DuplicateColumn(name) => {
                self.error_at(columns_at, DecodeErrorKind::DuplicateName(name))
            }
            other => self.error_at(start, DecodeErrorKind::InvalidGrid(other.to_string())),
        })?;
        if !(self.is_at_end() || nested && self.rest().starts_with(">>")) {
            self.expect_newline()?;
        }

        if nested {
            self.read_rows(&mut grid, true, usize::MAX)?;
            return Ok(grid);
        }
        if let Some(from) = self.split_rows_from.take()
            && self.input.len() - self.pos >= from
        {
            let bytes = self.input.as_bytes();
            let starts = chunk_starts(self.pos, bytes.len(), ROW_CHUNKS, |at| {
                line_start_after(bytes, at)
            });
            if starts.len() > 1 {
                self.read_rows_in_parts(&mut grid, &starts)?;
                return Ok(grid);
            }
        }
        self.read_rows(&mut grid, false, usize::MAX)?;
        Ok(grid)
    }

    /// Reads the rows of a top-level grid in parts on two threads ([`read_chunks`]): the
    /// parts start at line starts (guesses: a line may continue a nested grid), and a part
    /// is used only if the part before it stopped exactly at its start; from the first
    /// one that is not, this thread reads on alone, so the grid and any error (with its
    /// position) are those of one thread.
    fn read_rows_in_parts(&mut self, grid: &mut Grid, starts: &[usize]) -> Result<()> {
        let input = self.input;
        let read = |grid: &mut Grid, from: usize, stop: usize| {
            // Top-level rows: a reader of its own per part, at depth 0 like this one.
            let mut reader = ZincReader {
                input,
                pos: from,
                depth: 0,
                split_rows_from: None,
            };
            let end = reader.read_rows(grid, false, stop)?;
            Ok((reader.pos, matches!(end, RowsEnd::Closed)))
        };
        self.pos = read_chunks(grid, starts, &read)?;
        Ok(())
    }

    /// Reads rows (the reader is at a line start) to the end of the grid, or up to the
    /// first row that starts at or after `stop`.
    fn read_rows(&mut self, grid: &mut Grid, nested: bool, stop: usize) -> Result<RowsEnd> {
        // Every row takes at least one line: reserve for the lines left (bounded by
        // `Grid::reserve_rows`) instead of growing the cells row by row.
        let lines_left = if nested {
            0
        } else {
            let end = stop.min(self.input.len());
            let ahead = self.input.as_bytes().get(self.pos..end).unwrap_or_default();
            ahead.iter().filter(|&&b| b == b'\n').count() + 1
        };
        grid.reserve_rows(lines_left);
        let first_row = grid.row_count();
        // Offset of the next non-whitespace character, once scanned; remembering it
        // keeps runs of blank lines (each an all-empty row) linear to read.
        let mut next_content = 0;
        loop {
            if self.pos >= stop {
                return Ok(RowsEnd::AtStop);
            }
            if self.pos >= next_content {
                let rest = self.rest();
                next_content =
                    self.pos + rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len();
                let ahead = self.input.get(next_content..).unwrap_or("");
                if ahead.is_empty() || nested && ahead.starts_with(">>") {
                    // Trailing blank lines end the grid rather than adding empty rows.
                    self.pos = next_content;
                    return Ok(RowsEnd::Closed);
                }
            }
            grid.push_row_with(|row| self.read_row(row, nested))?;
            if !nested && grid.row_count() - first_row == ROWS_BEFORE_CELL_ESTIMATE {
                // Now that the cells per row are known: room for the rest at that rate.
                grid.reserve_rows(lines_left.saturating_sub(ROWS_BEFORE_CELL_ESTIMATE));
            }
            if !(self.is_at_end() || nested && self.rest().starts_with(">>")) {
                self.expect_newline()?;
            }
        }
    }

    /// Reads one row into `cells` (the new, empty row of the grid).
    fn read_row(&mut self, cells: &mut RowCells<'_>, nested: bool) -> Result<()> {
        let width = cells.width();
        let mut column = 0;
        loop {
            self.skip_spaces();
            let empty = self.is_at_end()
                || self.at_newline()
                || self.peek_byte() == Some(b',')
                || nested && self.rest().starts_with(">>");
            if !empty {
                let value = self.read_value()?;
                if !cells.set(column, value) {
                    return Err(self.error(DecodeErrorKind::RowTooWide(width)));
                }
            }
            column += 1;
            self.skip_spaces();
            if self.peek_byte() != Some(b',') {
                return Ok(());
            }
            if column >= width {
                return Err(self.error(DecodeErrorKind::RowTooWide(width)));
            }
            self.pos += 1;
            // Runs of empty cells (`,,,,`) are most of a sparse grid's text: each further
            // comma ends one more empty cell, with the same width check as above.
            while self.peek_byte() == Some(b',') {
                column += 1;
                if column >= width {
                    return Err(self.error(DecodeErrorKind::RowTooWide(width)));
                }
                self.pos += 1;
            }
        }
    }

    /// Reads space-separated `name` / `name:value` items (grid or column meta).
    fn read_meta(&mut self) -> Result<Dict> {
        let mut meta = Dict::new();
        loop {
            let before = self.pos;
            self.skip_spaces();
            if !matches!(self.peek_byte(), Some(b'a'..=b'z')) {
                self.pos = before;
                return Ok(meta);
            }
            if self.pos == before {
                return Err(self.unexpected("a space before the meta tag"));
            }
            self.read_dict_item(&mut meta)?;
        }
    }

    /// Reads `name` or `name:value` into `dict`.
    fn read_dict_item(&mut self, dict: &mut Dict) -> Result<()> {
        let at = self.pos;
        let name = self.read_tag_name()?;
        let value = if self.peek_byte() == Some(b':') {
            self.pos += 1;
            self.read_value()?
        } else {
            Value::Marker
        };
        if dict.contains(name) {
            return Err(self.error_at(at, DecodeErrorKind::DuplicateName(name.to_owned())));
        }
        dict.insert(name, value)
            .map_err(|e| self.error_at(at, DecodeErrorKind::InvalidTagName(e.0)))
    }

    // ----- values ------------------------------------------------------------------

    /// Reads one value (scalar or collection) at the current position.
    pub fn read_value(&mut self) -> Result<Value> {
        let Some(c) = self.peek_byte() else {
            return Err(self.unexpected("a value"));
        };
        match c {
            b'"' => Ok(Value::Str(self.read_str_literal()?)),
            b'`' => self.read_uri(),
            b'@' => self.read_ref(),
            b'^' => {
                self.pos += 1;
                let name = self.take_while(is_ref_char);
                if name.is_empty() {
                    return Err(self.unexpected("a symbol name"));
                }
                Ok(Value::Symbol(name.to_owned()))
            }
            b'[' => self.read_list(),
            b'{' => self.read_dict().map(Value::from),
            b'<' if self.rest().starts_with("<<") => self.read_nested_grid(),
            b'-' if self.rest().starts_with("-INF") => {
                self.pos += 4;
                Ok(Value::number(f64::NEG_INFINITY))
            }
            b'-' | b'0'..=b'9' => self.read_number_or_temporal(),
            b'a'..=b'z' | b'A'..=b'Z' => self.read_keyword(),
            _ => Err(self.unexpected("a value")),
        }
    }

    fn read_keyword(&mut self) -> Result<Value> {
        let start = self.pos;
        let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if self.peek_byte() == Some(b'(') {
            // `C(` starts a coordinate unless a string follows: then it is an XStr of type C.
            if word == "C" && self.peek_byte_at(1) != Some(b'"') {
                return self.read_coord_body();
            }
            if is_xstr_type(word) {
                self.pos += 1;
                let value = self.read_str_literal()?;
                self.expect_char(')', "')' closing the XStr")?;
                return Ok(Value::XStr(Box::new(XStr {
                    type_name: word.to_owned(),
                    value,
                })));
            }
        }
        Ok(match word {
            "T" => Value::Bool(true),
            "F" => Value::Bool(false),
            "M" => Value::Marker,
            "N" => Value::Null,
            "R" => Value::Remove,
            "NA" => Value::Na,
            "INF" => Value::number(f64::INFINITY),
            "NaN" => Value::number(f64::NAN),
            _ => {
                self.pos = start;
                return Err(self.unexpected("a value"));
            }
        })
    }

    fn read_coord_body(&mut self) -> Result<Value> {
        let start = self.pos - 1;
        self.expect_char('(', "'('")?;
        let lat = self.read_plain_float()?;
        self.expect_char(',', "',' between latitude and longitude")?;
        let lng = self.read_plain_float()?;
        self.expect_char(')', "')' closing the coordinate")?;
        Coord::new(lat, lng)
            .map(Value::Coord)
            .map_err(|_| self.error_at(start, DecodeErrorKind::InvalidCoord))
    }

    fn read_plain_float(&mut self) -> Result<f64> {
        let start = self.pos;
        let text =
            self.take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
        text.parse::<f64>()
            .map_err(|_| self.error_at(start, DecodeErrorKind::InvalidNumber(text.to_owned())))
    }

    fn read_list(&mut self) -> Result<Value> {
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_whitespace_and_newlines();
            if self.peek_byte() == Some(b']') {
                self.pos += 1;
                break;
            }
            items.push(self.read_value()?);
            self.skip_whitespace_and_newlines();
            match self.peek_byte() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
        self.leave();
        Ok(Value::List(items))
    }

    fn read_dict(&mut self) -> Result<Dict> {
        self.enter()?;
        self.pos += 1;
        let mut dict = Dict::new();
        loop {
            self.skip_whitespace_and_newlines();
            match self.peek_byte() {
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                Some(b',') if !dict.is_empty() => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            self.read_dict_item(&mut dict)?;
            match self.peek_byte() {
                Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'}') => {}
                _ => return Err(self.unexpected("a separator or '}'")),
            }
        }
        self.leave();
        Ok(dict)
    }

    fn read_nested_grid(&mut self) -> Result<Value> {
        self.enter()?;
        self.pos += 2;
        self.skip_whitespace_and_newlines();
        let grid = self.read_grid_body(true)?;
        self.skip_whitespace_and_newlines();
        if !self.rest().starts_with(">>") {
            return Err(self.unexpected("'>>' closing the nested grid"));
        }
        self.pos += 2;
        self.leave();
        Ok(Value::Grid(Box::new(grid)))
    }

    fn read_ref(&mut self) -> Result<Value> {
        self.pos += 1;
        let id = self.take_while(is_ref_char);
        if id.is_empty() {
            return Err(self.unexpected("a ref id"));
        }
        let mut reference = Ref::new(id);
        if self.peek_byte() == Some(b' ') && self.peek_byte_at(1) == Some(b'"') {
            self.pos += 1;
            reference.dis = Some(self.read_str_literal()?);
        }
        Ok(Value::Ref(reference))
    }

    /// Reads a `"..."` string literal with Zinc escapes.
    pub fn read_str_literal(&mut self) -> Result<String> {
        self.expect_char('"', "'\"'")?;
        let mut out = String::new();
        loop {
            let rest = self.rest();
            let stop = rest
                .bytes()
                .position(|b| matches!(b, b'"' | b'\\' | b'\n'))
                .ok_or_else(|| {
                    self.error_at(
                        self.input.len(),
                        DecodeErrorKind::UnexpectedEnd("'\"' closing the string"),
                    )
                })?;
            out.push_str(&rest[..stop]);
            self.pos += stop;
            match self.peek_byte() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.read_escape()?),
                _ => return Err(self.unexpected("'\"' closing the string")),
            }
        }
    }

    /// Reads one escape sequence starting at the backslash.
    fn read_escape(&mut self) -> Result<char> {
        let start = self.pos;
        self.pos += 1;
        let c = match self.bump() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('"') => '"',
            Some('\\') => '\\',
            Some('$') => '$',
            Some('`') => '`',
            Some('u') => {
                let high = self.read_hex4(start)?;
                if (0xD800..0xDC00).contains(&high) {
                    if !self.rest().starts_with("\\u") {
                        return Err(self.error_at(start, DecodeErrorKind::InvalidEscape));
                    }
                    self.pos += 2;
                    let low = self.read_hex4(start)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error_at(start, DecodeErrorKind::InvalidEscape));
                    }
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    char::from_u32(code)
                        .ok_or_else(|| self.error_at(start, DecodeErrorKind::InvalidEscape))?
                } else {
                    char::from_u32(high)
                        .ok_or_else(|| self.error_at(start, DecodeErrorKind::InvalidEscape))?
                }
            }
            _ => return Err(self.error_at(start, DecodeErrorKind::InvalidEscape)),
        };
        Ok(c)
    }

    fn read_hex4(&mut self, escape_start: usize) -> Result<u32> {
        let digits = self.rest().get(..4).unwrap_or("");
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.error_at(escape_start, DecodeErrorKind::InvalidEscape));
        }
        self.pos += 4;
        u32::from_str_radix(digits, 16)
            .map_err(|_| self.error_at(escape_start, DecodeErrorKind::InvalidEscape))
    }

    /// Reads a `` `...` `` URI. URI-level escapes (`\:` `\/` `\?` `\#` `\[` `\]` `\@`
    /// `\\` `\&` `\=` `\;`) are kept verbatim with their backslash; `` \` `` and the
    /// string escapes are decoded.
    fn read_uri(&mut self) -> Result<Value> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => return Err(self.unexpected("'`' closing the URI")),
                Some('`') => {
                    self.pos += 1;
                    return Ok(Value::Uri(out));
                }
                Some('\\') => match self.peek_byte_at(1) {
                    Some(b) if super::URI_VERBATIM_ESCAPES.contains(&b) => {
                        out.push('\\');
                        out.push(char::from(b));
                        self.pos += 2;
                    }
                    _ => out.push(self.read_escape()?),
                },
                Some(c) => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn count_digits_ahead(&self) -> usize {
        self.rest().bytes().take_while(u8::is_ascii_digit).count()
    }

    fn read_number_or_temporal(&mut self) -> Result<Value> {
        let digits = self.count_digits_ahead();
        let next = self.peek_byte_at(digits);
        if digits == 4 && next == Some(b'-') {
            return self.read_date_or_datetime();
        }
        if digits == 2 && next == Some(b':') {
            return Ok(Value::Time(self.read_time()?));
        }
        self.read_number().map(Value::Number)
    }

    fn read_fixed_digits(&mut self, count: usize, what: &'static str) -> Result<u32> {
        let text = self.rest().get(..count).unwrap_or("");
        if text.len() != count || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.unexpected(what));
        }
        self.pos += count;
        Ok(text
            .bytes()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0')))
    }

    /// Reads `YYYY-MM-DD`.
    pub fn read_date(&mut self) -> Result<Date> {
        let start = self.pos;
        let year = self.read_fixed_digits(4, "a four-digit year")?;
        self.expect_char('-', "'-'")?;
        let month = self.read_fixed_digits(2, "a two-digit month")?;
        self.expect_char('-', "'-'")?;
        let day = self.read_fixed_digits(2, "a two-digit day")?;
        // The digit counts bound the values: year < 10000, month and day < 100.
        Date::new(year as i32, month as u8, day as u8)
            .map_err(|e| self.error_at(start, DecodeErrorKind::InvalidTemporal(e.to_string())))
    }

    /// Reads `hh:mm:ss[.fffffffff]`.
    pub fn read_time(&mut self) -> Result<Time> {
        let start = self.pos;
        let hour = self.read_fixed_digits(2, "a two-digit hour")?;
        self.expect_char(':', "':'")?;
        let minute = self.read_fixed_digits(2, "two-digit minutes")?;
        self.expect_char(':', "':'")?;
        let second = self.read_fixed_digits(2, "two-digit seconds")?;
        let mut nanos = 0u32;
        if self.peek_byte() == Some(b'.')
            && self.peek_byte_at(1).is_some_and(|b| b.is_ascii_digit())
        {
            self.pos += 1;
            let count = self.count_digits_ahead();
            if count > MAX_FRACTION_DIGITS {
                return Err(self.error(DecodeErrorKind::InvalidTemporal(
                    "more than 9 fraction digits".into(),
                )));
            }
            let fraction = self.read_fixed_digits(count, "fraction digits")?;
            nanos = fraction * 10u32.pow((MAX_FRACTION_DIGITS - count) as u32);
        }
        Time::new(hour as u8, minute as u8, second as u8, nanos)
            .map_err(|e| self.error_at(start, DecodeErrorKind::InvalidTemporal(e.to_string())))
    }

    fn read_date_or_datetime(&mut self) -> Result<Value> {
        let date = self.read_date()?;
        if self.peek_byte() == Some(b'T')
            && self.peek_byte_at(1).is_some_and(|b| b.is_ascii_digit())
        {
            self.pos += 1;
            let time = self.read_time()?;
            return Ok(Value::DateTime(Box::new(
                self.read_offset_and_tz(date, time)?,
            )));
        }
        Ok(Value::Date(date))
    }

    /// Reads the UTC offset (`Z` or `±hh:mm`) and an optional ` Timezone` name.
    pub fn read_offset_and_tz(&mut self, date: Date, time: Time) -> Result<DateTime> {
        let start = self.pos;
        let offset = match self.peek_byte() {
            Some(b'Z') => {
                self.pos += 1;
                0
            }
            Some(sign @ (b'+' | b'-')) => {
                self.pos += 1;
                let hours = self.read_fixed_digits(2, "offset hours")? as i32;
                self.expect_char(':', "':' in the UTC offset")?;
                let minutes = self.read_fixed_digits(2, "offset minutes")? as i32;
                if minutes > 59 {
                    return Err(self.error_at(
                        start,
                        DecodeErrorKind::InvalidTemporal("offset minutes over 59".into()),
                    ));
                }
                let magnitude = hours * 3600 + minutes * 60;
                if sign == b'-' { -magnitude } else { magnitude }
            }
            _ => return Err(self.unexpected("'Z' or a UTC offset")),
        };
        let mut tz = None;
        if self.peek_byte() == Some(b' ')
            && self.peek_byte_at(1).is_some_and(|b| b.is_ascii_uppercase())
        {
            self.pos += 1;
            tz = Some(self.take_while(DateTime::is_tz_char).to_owned());
        }
        DateTime::new(date, time, offset, tz)
            .map_err(|e| self.error_at(start, DecodeErrorKind::InvalidTemporal(e.to_string())))
    }

    /// Reads a number with optional exponent and unit.
    ///
    /// An `e`/`E` is an exponent only when a digit (optionally after a sign) follows;
    /// otherwise it starts the unit: `10.6EER` is 10.6 in unit `EER`, `1E-3` is 0.001.
    pub fn read_number(&mut self) -> Result<Number> {
        let start = self.pos;
        if self.peek_byte() == Some(b'-') {
            self.pos += 1;
        }
        if !self.peek_byte().is_some_and(|b| b.is_ascii_digit()) {
            return Err(self.unexpected("a digit"));
        }
        self.skip_digits_with_separators();
        if self.peek_byte() == Some(b'.')
            && self.peek_byte_at(1).is_some_and(|b| b.is_ascii_digit())
        {
            self.pos += 1;
            self.skip_digits_with_separators();
        }
        if matches!(self.peek_byte(), Some(b'e' | b'E')) {
            let exponent_digit_at = match self.peek_byte_at(1) {
                Some(b'+' | b'-') => 2,
                _ => 1,
            };
            if self
                .peek_byte_at(exponent_digit_at)
                .is_some_and(|b| b.is_ascii_digit())
            {
                self.pos += exponent_digit_at;
                self.skip_digits_with_separators();
            }
        }
        let text = self.input.get(start..self.pos).unwrap_or("");
        let value = if let Some(value) = Number::parse_short_decimal(text) {
            Ok(value)
        } else if text.contains('_') {
            text.replace('_', "").parse::<f64>()
        } else {
            text.parse::<f64>()
        }
        .ok()
        // Literals too large for f64 are rejected: INF is spelled `INF` and takes no unit.
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| self.error_at(start, DecodeErrorKind::InvalidNumber(text.to_owned())))?;
        let unit = self.take_while(Number::is_unit_char);
        Ok(Number {
            value,
            unit: (!unit.is_empty()).then(|| unit.to_owned()),
        })
    }

    /// Skips digits; `_` separators are allowed between digits.
    fn skip_digits_with_separators(&mut self) {
        loop {
            match self.peek_byte() {
                Some(b'0'..=b'9') => self.pos += 1,
                Some(b'_') if self.peek_byte_at(1).is_some_and(|b| b.is_ascii_digit()) => {
                    self.pos += 1
                }
                _ => return,
            }
        }
    }
}
