//! The fast Hayson decoder: scans JSON bytes once and builds [`Value`]s and grids
//! directly, without the intermediate [`JsonNode`](super::JsonNode) tree.
//!
//! It only handles the shapes it recognises on the first look (an object whose first
//! member is `_kind`, plain dicts, grids whose `cols` come before their `rows`). On
//! anything else, and on any error, it gives up with [`GiveUp`] and the caller decodes
//! the text again with the tree-based decoder, which has the complete grammar and
//! reports the error position (line/column or JSON path). So this scanner must accept
//! no text that the tree decoder rejects, and must build the same value from any text
//! it accepts; `tests.rs` checks both with property tests.
//!
//! Limits: nesting beyond [`FAST_DEPTH`] gives up (the tree decoder then applies
//! [`MAX_DEPTH`](crate::codec::MAX_DEPTH)); nothing is allocated from a length read in
//! the input.
//!
//! Speed: strings are scanned eight bytes at a time ([`plain_run`]) and borrowed from the
//! input until a value needs them owned; row member names are matched to columns by
//! length and first eight bytes, looking a few columns ahead of the previous cell before
//! hashing; dict members collect in one scratch vector and each dict is allocated once,
//! at its final size.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::codec::{
    MAX_COLUMNS, MAX_DEPTH, ROW_CHUNKS, RowsEnd, chunk_starts, parallel_decode, parallel_min_bytes,
    read_chunks, zinc,
};
use crate::value::{
    Column, Coord, Date, DateTime, Dict, Grid, Kind, Number, Ref, Value, XStr, is_ref_id,
    is_tag_name, is_xstr_type,
};

/// Deepest nesting the scanner handles itself; deeper documents go to the tree decoder.
pub(crate) const FAST_DEPTH: usize = MAX_DEPTH / 2;

/// Columns looked at after the previous cell's before a row key is hashed.
const ROW_LOOKAHEAD: usize = 16;

/// Rows read (growing the cells the usual way) before the row count is projected.
const ROWS_BEFORE_ESTIMATE: usize = 16;

/// How far past a share's start a row start is looked for.
const SPLIT_SEARCH_BYTES: usize = 64 * 1024;

/// Where a row probably starts at or after `from`: the `{` of the first `}`, `,`, `{`
/// (white space allowed between). Only a guess: the same bytes may sit inside a string.
fn row_start_after(bytes: &[u8], from: usize) -> Option<usize> {
    let window = bytes.get(from..(from + SPLIT_SEARCH_BYTES).min(bytes.len()))?;
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    for (i, &b) in window.iter().enumerate() {
        if b != b'{' {
            continue;
        }
        let before = window.get(..i)?;
        let mut back = before.iter().rev().skip_while(|b| is_ws(b));
        if back.next() != Some(&b',') {
            continue;
        }
        if back.find(|b| !is_ws(b)) == Some(&b'}') {
            return Some(from + i);
        }
    }
    None
}

/// What [`Scanner::row_loop`] reads rows with.
#[derive(Clone, Copy)]
struct RowContext<'r> {
    columns: &'r ColumnNames,
    index: &'r NameIndex<'r>,
    depth: usize,
}

/// The scanner met something it does not handle (or an error): decode the slow way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GiveUp;

type Scan<T> = Result<T, GiveUp>;

/// A JSON value as written, before any Hayson meaning is given to it (the members of
/// kinded objects, whose meaning depends on their JSON type).
enum Raw<'a> {
    Null,
    Bool(bool),
    Number(f64),
    Str(Cow<'a, str>),
    /// A JSON array, already mapped to Hayson values.
    Array(Vec<Value>),
    /// A JSON object (read and checked; no kind uses one as a member).
    Object,
}

/// Decodes a whole Hayson value document, or gives up.
pub(crate) fn scan_value(input: &str) -> Scan<Value> {
    let mut scanner = Scanner::new(input);
    let value = scanner.value(0)?;
    scanner.end()?;
    Ok(value)
}

/// Decodes a whole Hayson grid document (any `_kind` member is ignored), or gives up.
pub(crate) fn scan_grid(input: &str) -> Scan<Grid> {
    let split_rows_from = parallel_decode().then(parallel_min_bytes);
    scan_grid_splitting(input, split_rows_from)
}

/// [`scan_grid`] that reads rows arrays of at least `split_rows_from` bytes with two
/// threads (`None`: never).
pub(crate) fn scan_grid_splitting(input: &str, split_rows_from: Option<usize>) -> Scan<Grid> {
    let mut scanner = Scanner::new(input);
    scanner.split_rows_from = split_rows_from;
    scanner.skip_ws();
    scanner.expect(b'{')?;
    let grid = scanner.grid_members(None, 0)?;
    scanner.end()?;
    Ok(grid)
}

/// `{"_kind":"marker"}` after its `{`.
const MARKER_REST: &[u8] = br#""_kind":"marker"}"#;

/// The `_kind` member name as encoders write it.
const KIND_KEY: &[u8] = br#""_kind""#;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Length of the leading run of `bytes` that needs no attention inside a JSON string:
/// up to the first `"`, `\` or control character (or the end).
///
/// Eight bytes at a time: for each of the three tests, the classic "has a zero byte"
/// expression flags the first matching byte exactly (a borrow can only flag bytes after
/// a true match), so the lowest flag of the three masks is the first special byte.
#[inline]
fn plain_run(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let x = u64::from_le_bytes(chunk);
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (x.wrapping_sub(ONES * 0x20) & !x);
        let flags = flags & HIGH_BITS;
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// The first (up to) eight bytes of a name as a number, zero-padded: with the length, a
/// cheap first test of equality. `after` is the input from the name's first byte on.
#[inline]
fn name_head(name: &[u8], after: &[u8]) -> u64 {
    let len = name.len();
    if let Some(Ok(chunk)) = after.get(..8).map(<[u8; 8]>::try_from) {
        let mask = if len >= 8 {
            u64::MAX
        } else {
            (1u64 << (len * 8)) - 1
        };
        return u64::from_le_bytes(chunk) & mask;
    }
    name.iter()
        .take(8)
        .enumerate()
        .fold(0, |head, (i, &b)| head | (u64::from(b) << (i * 8)))
}

/// Column index by name, for row members out of column order (std's keyed hash: the
/// names come from the document).
type NameIndex<'n> = HashMap<&'n str, usize>;

/// The columns of a grid, for matching row member names.
struct ColumnNames {
    /// Each column's name head ([`name_head`]) and length.
    heads: Vec<(u64, usize)>,
    names: Vec<String>,
}

impl ColumnNames {
    fn new(grid: &Grid) -> Self {
        let names: Vec<String> = grid.columns().iter().map(|c| c.name.clone()).collect();
        let heads = names
            .iter()
            .map(|n| (name_head(n.as_bytes(), &[]), n.len()))
            .collect();
        ColumnNames { heads, names }
    }

    /// The column called `name`, looking at the [`ROW_LOOKAHEAD`] columns from `guess`.
    #[inline]
    fn near(&self, name: &[u8], head: u64, guess: usize) -> Option<usize> {
        let heads = self.heads.get(guess..)?;
        for (skip, &(h, len)) in heads.iter().take(ROW_LOOKAHEAD).enumerate() {
            if h == head && len == name.len() {
                let at = guess + skip;
                // Names are unique, so equal heads of names of 8 bytes or less mean equal.
                if len <= 8
                    || self.names.get(at).map(|n| n.as_bytes().get(8..)) == Some(name.get(8..))
                {
                    return Some(at);
                }
            }
        }
        None
    }
}

/// A cursor over the JSON text.
struct Scanner<'a> {
    input: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Members of the dicts being read (nested dicts stack theirs after their parent's).
    pairs: Vec<(String, Value)>,
    /// Rows arrays at least this long (bytes to the end of the input) of the top-level
    /// grid are read by two threads; `None`: never.
    split_rows_from: Option<usize>,
}

impl<'a> Scanner<'a> {
    fn new(input: &'a str) -> Self {
        Scanner {
            input,
            bytes: input.as_bytes(),
            pos: 0,
            pairs: Vec::new(),
            split_rows_from: None,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Scan<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    fn end(&mut self) -> Scan<()> {
        self.skip_ws();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Scan<()> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// After a member value: true if another member follows (`,`), false at `}`/`]`.
    #[inline]
    fn next_item(&mut self, close: u8) -> Scan<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(GiveUp),
        }
    }

    /// Reads `:` and the white space around it.
    #[inline]
    fn colon(&mut self) -> Scan<()> {
        self.skip_ws();
        self.expect(b':')?;
        self.skip_ws();
        Ok(())
    }

    /// Reads `"key"` and the `:` after it.
    #[inline]
    fn key(&mut self) -> Scan<Cow<'a, str>> {
        let key = self.string()?;
        self.colon()?;
        Ok(key)
    }

    /// Reads any JSON value at `depth` (lists, dicts and grids count one level each).
    fn value(&mut self, depth: usize) -> Scan<Value> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => Ok(Value::Str(self.string()?.into_owned())),
            Some(b'{') => {
                self.pos += 1;
                self.object(depth)
            }
            Some(b'[') => {
                self.pos += 1;
                self.array(depth).map(Value::List)
            }
            Some(b'n') => self.literal(b"null").map(|()| Value::Null),
            Some(b't') => self.literal(b"true").map(|()| Value::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|()| Value::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::number),
            _ => Err(GiveUp),
        }
    }

    /// Reads any JSON value at `depth`, keeping its JSON type (for kinded members).
    fn raw(&mut self, depth: usize) -> Scan<Raw<'a>> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.string().map(Raw::Str),
            Some(b'{') => {
                self.pos += 1;
                self.object(depth).map(|_| Raw::Object)
            }
            Some(b'[') => {
                self.pos += 1;
                self.array(depth).map(Raw::Array)
            }
            Some(b'n') => self.literal(b"null").map(|()| Raw::Null),
            Some(b't') => self.literal(b"true").map(|()| Raw::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|()| Raw::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Raw::Number),
            _ => Err(GiveUp),
        }
    }

    fn array(&mut self, depth: usize) -> Scan<Vec<Value>> {
        if depth > FAST_DEPTH {
            return Err(GiveUp);
        }
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(items);
        }
        loop {
            items.push(self.value(depth + 1)?);
            if !self.next_item(b']')? {
                return Ok(items);
            }
        }
    }

    /// Reads the `"..."` value of `_kind` (the scanner is at its opening quote).
    fn kind(&mut self) -> Scan<Kind> {
        let start = self.pos + 1;
        let rest = self.bytes.get(start..).unwrap_or(&[]);
        let run = plain_run(rest);
        if rest.get(run) == Some(&b'"') {
            let name = self.input.get(start..start + run).ok_or(GiveUp)?;
            self.pos = start + run + 1;
            return Kind::from_hayson_name(name).ok_or(GiveUp);
        }
        // Escapes (or no string at all): the general string reader decides.
        let name = self.string()?;
        Kind::from_hayson_name(&name).ok_or(GiveUp)
    }

    /// Reads an object after its `{`: a kinded value when its first member is `_kind`,
    /// otherwise a dict.
    fn object(&mut self, depth: usize) -> Scan<Value> {
        if depth > FAST_DEPTH {
            return Err(GiveUp);
        }
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Dict(Box::default()));
        }
        if self.bytes.get(self.pos..self.pos + MARKER_REST.len()) == Some(MARKER_REST) {
            // The most common cell by far, as encoders write it.
            self.pos += MARKER_REST.len();
            return Ok(Value::Marker);
        }
        let first = if self.bytes.get(self.pos..self.pos + KIND_KEY.len()) == Some(KIND_KEY) {
            // `"_kind"` without escapes: no string to read.
            self.pos += KIND_KEY.len();
            self.colon()?;
            Cow::Borrowed("_kind")
        } else {
            self.key()?
        };
        if first == "_kind" {
            if self.peek() != Some(b'"') {
                return Err(GiveUp);
            }
            let kind = self.kind()?;
            if kind == Kind::Marker {
                // The most common cell by far: `{"_kind":"marker"}`.
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Value::Marker);
                }
            }
            return self.kinded(kind, depth);
        }
        let start = self.pairs.len();
        let mut name = first;
        loop {
            // Also refuses `_kind` after other members: the tree decoder reads that one.
            if !is_tag_name(&name) {
                return Err(GiveUp);
            }
            let value = self.value(depth + 1)?;
            self.pairs.push((name.into_owned(), value));
            if !self.next_item(b'}')? {
                return Ok(Value::Dict(Box::new(self.take_dict(start))));
            }
            name = self.key()?;
        }
    }

    /// The dict of the members pushed to `pairs` since `start`.
    fn take_dict(&mut self, start: usize) -> Dict {
        let pairs: Vec<(String, Value)> = self.pairs.drain(start.min(self.pairs.len())..).collect();
        Dict::from_checked_pairs(pairs)
    }

    /// Reads the members after `"_kind":"..."` and builds the value of that kind.
    fn kinded(&mut self, kind: Kind, depth: usize) -> Scan<Value> {
        match kind {
            Kind::Dict => {
                let start = self.pairs.len();
                while self.next_item(b'}')? {
                    let name = self.key()?;
                    // A later `_kind` wins in the tree decoder: leave it to the tree (the
                    // name check refuses it, as it does every invalid name).
                    if !is_tag_name(&name) {
                        return Err(GiveUp);
                    }
                    let value = self.value(depth + 1)?;
                    self.pairs.push((name.into_owned(), value));
                }
                return Ok(Value::Dict(Box::new(self.take_dict(start))));
            }
            Kind::Grid => {
                if !self.next_item(b'}')? {
                    return Err(GiveUp);
                }
                return self
                    .grid_members(Some(()), depth)
                    .map(|g| Value::Grid(Box::new(g)));
            }
            _ => {}
        }
        if let Some(value) = self.common_layout(kind) {
            return Ok(value);
        }
        // Each remaining kind reads at most two members; the others are checked and
        // ignored, as by the tree decoder.
        let (first_name, second_name) = match kind {
            Kind::Number => ("val", "unit"),
            Kind::Ref => ("val", "dis"),
            Kind::DateTime => ("val", "tz"),
            Kind::Coord => ("lat", "lng"),
            Kind::XStr => ("type", "val"),
            Kind::List => ("vals", "vals"),
            _ => ("val", "val"),
        };
        let mut first = None;
        let mut second = None;
        while self.next_item(b'}')? {
            let name = self.key()?;
            let raw = self.raw(depth + 1)?;
            if name == first_name {
                first = Some(raw);
            } else if name == second_name {
                second = Some(raw);
            } else if name == "_kind" {
                // `_kind` again would change the kind (last one wins): leave it to the tree.
                return Err(GiveUp);
            }
        }
        Ok(match kind {
            Kind::Null => Value::Null,
            Kind::Marker => Value::Marker,
            Kind::Na => Value::Na,
            Kind::Remove => Value::Remove,
            Kind::Bool => match first {
                Some(Raw::Bool(b)) => Value::Bool(b),
                _ => return Err(GiveUp),
            },
            Kind::Number => {
                let value = number_of(first)?;
                let unit = match second {
                    None | Some(Raw::Null) => None,
                    Some(Raw::Str(u)) => Some(u.into_owned()),
                    Some(_) => return Err(GiveUp),
                };
                Value::Number(Number { value, unit })
            }
            Kind::Str => Value::Str(string_of(first)?.into_owned()),
            Kind::Uri => Value::Uri(string_of(first)?.into_owned()),
            Kind::Ref => {
                let id = string_of(first)?;
                if !is_ref_id(&id) {
                    return Err(GiveUp);
                }
                let dis = match second {
                    Some(Raw::Str(d)) => Some(d.into_owned()),
                    _ => None,
                };
                Value::Ref(Ref {
                    id: id.into_owned(),
                    dis,
                })
            }
            Kind::Symbol => {
                let name = string_of(first)?;
                if !is_ref_id(&name) {
                    return Err(GiveUp);
                }
                Value::Symbol(name.into_owned())
            }
            Kind::Date | Kind::Time => zinc_scalar(&string_of(first)?, kind)?,
            Kind::DateTime => {
                let Value::DateTime(mut dt) = zinc_scalar(&string_of(first)?, kind)? else {
                    return Err(GiveUp);
                };
                if let Some(Raw::Str(tz)) = second {
                    if tz.is_empty() || !tz.chars().all(DateTime::is_tz_char) {
                        return Err(GiveUp);
                    }
                    dt.tz = Some(tz.into_owned());
                }
                Value::DateTime(dt)
            }
            Kind::Coord => {
                let lat = number_of(first)?;
                let lng = number_of(second)?;
                Value::Coord(Coord::new(lat, lng).map_err(|_| GiveUp)?)
            }
            Kind::XStr => {
                let type_name = string_of(first)?;
                if !is_xstr_type(&type_name) {
                    return Err(GiveUp);
                }
                Value::XStr(Box::new(XStr {
                    type_name: type_name.into_owned(),
                    value: string_of(second)?.into_owned(),
                }))
            }
            Kind::List => match first {
                Some(Raw::Array(items)) => Value::List(items),
                _ => return Err(GiveUp),
            },
            // Handled above.
            Kind::Dict | Kind::Grid => return Err(GiveUp),
        })
    }

    /// Reads the members after `"_kind":"..."` when they are laid out as encoders write
    /// them: `"val"`, then at most the kind's second member (`unit`, `dis`, `tz`), then
    /// `}`. Builds the value the general loop of [`Scanner::kinded`] builds from the same
    /// text; `None`, with the position unchanged, for any other layout or on any doubt
    /// (the general loop then decides).
    fn common_layout(&mut self, kind: Kind) -> Option<Value> {
        let start = self.pos;
        let value = match kind {
            Kind::Ref => self.common_ref(),
            Kind::Number => self.common_number(),
            Kind::DateTime => self.common_date_time(),
            Kind::Date => {
                self.member(b"val")?;
                let date = Date::parse_iso(self.plain_str()?.as_bytes())?;
                self.close()?;
                Some(Value::Date(date))
            }
            Kind::Symbol => {
                self.member(b"val")?;
                let name = self.plain_str()?;
                self.close()?;
                is_ref_id(name).then(|| Value::Symbol(name.to_owned()))
            }
            Kind::Str | Kind::Uri => {
                self.member(b"val")?;
                if self.peek() != Some(b'"') {
                    return None;
                }
                let text = self.string().ok()?.into_owned();
                self.close()?;
                Some(if kind == Kind::Str {
                    Value::Str(text)
                } else {
                    Value::Uri(text)
                })
            }
            _ => None,
        };
        if value.is_none() {
            self.pos = start;
        }
        value
    }

    /// `"val":"id"` and an optional string `"dis"`.
    fn common_ref(&mut self) -> Option<Value> {
        self.member(b"val")?;
        let id = self.plain_str()?;
        if !is_ref_id(id) {
            return None;
        }
        let dis = if self.close_or(b"dis")? {
            let dis = self.quoted()?;
            self.close()?;
            Some(dis)
        } else {
            None
        };
        Some(Value::Ref(Ref {
            id: id.to_owned(),
            dis,
        }))
    }

    /// `"val":number` and an optional string `"unit"`.
    fn common_number(&mut self) -> Option<Value> {
        self.member(b"val")?;
        if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            return None;
        }
        let value = self.number().ok()?;
        let unit = if self.close_or(b"unit")? {
            let unit = self.quoted()?;
            self.close()?;
            Some(unit)
        } else {
            None
        };
        Some(Value::Number(Number { value, unit }))
    }

    /// `"val":"YYYY-MM-DDThh:mm:ss[.f]±hh:mm"` and an optional `"tz"` name.
    fn common_date_time(&mut self) -> Option<Value> {
        self.member(b"val")?;
        let mut dt = DateTime::parse_iso_offset(self.plain_str()?)?;
        if self.close_or(b"tz")? {
            let tz = self.plain_str()?;
            if tz.is_empty() || !tz.chars().all(DateTime::is_tz_char) {
                return None;
            }
            self.close()?;
            dt.tz = Some(tz.to_owned());
        }
        Some(Value::DateTime(Box::new(dt)))
    }

    /// After a member value: `,` and the member `"name":` (no escapes in the name).
    #[inline]
    fn member(&mut self, name: &[u8]) -> Option<()> {
        self.skip_ws();
        if self.peek() != Some(b',') {
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        let end = self.pos + name.len() + 2;
        match self.bytes.get(self.pos..end) {
            Some([b'"', inner @ .., b'"']) if inner == name => {}
            _ => return None,
        }
        self.pos = end;
        self.colon().ok()
    }

    /// After a member value: true after `,"name":`, false after the closing `}`.
    #[inline]
    fn close_or(&mut self, name: &[u8]) -> Option<bool> {
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(false);
        }
        self.member(name).map(|()| true)
    }

    /// After a member value: the closing `}`.
    #[inline]
    fn close(&mut self) -> Option<()> {
        self.skip_ws();
        if self.peek() != Some(b'}') {
            return None;
        }
        self.pos += 1;
        Some(())
    }

    /// A JSON string without escapes, borrowed from the input.
    #[inline]
    fn plain_str(&mut self) -> Option<&'a str> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let run = plain_run(self.bytes.get(start..)?);
        if self.bytes.get(start + run) != Some(&b'"') {
            return None;
        }
        let text = self.input.get(start..start + run)?;
        self.pos = start + run + 1;
        Some(text)
    }

    /// A JSON string (escapes allowed), owned; `None` if no string is here.
    #[inline]
    fn quoted(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.string().ok().map(Cow::into_owned)
    }

    /// Reads grid members up to the closing `}`; the scanner is at the first member
    /// name (`kinded` is `Some` when `_kind` was already read) or just after `{`.
    fn grid_members(&mut self, kinded: Option<()>, depth: usize) -> Scan<Grid> {
        if depth > FAST_DEPTH {
            return Err(GiveUp);
        }
        if kinded.is_none() {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                // No `cols`: the tree decoder reports it.
                return Err(GiveUp);
            }
        }
        let mut meta = None;
        let mut grid: Option<Grid> = None;
        let mut rows_seen = false;
        loop {
            let name = self.key()?;
            match &*name {
                "meta" => {
                    if grid.is_some() {
                        // Meta after cols: rare, leave it to the tree decoder.
                        return Err(GiveUp);
                    }
                    self.expect(b'{')?;
                    meta = Some(self.meta_members(&["ver", "_kind"], depth + 1)?);
                }
                "cols" => {
                    if grid.is_some() || rows_seen {
                        return Err(GiveUp);
                    }
                    let columns = self.columns(depth + 1)?;
                    grid = Some(
                        Grid::new(meta.take().unwrap_or_default(), columns).map_err(|_| GiveUp)?,
                    );
                }
                "rows" => {
                    let Some(grid) = grid.as_mut() else {
                        return Err(GiveUp);
                    };
                    if rows_seen {
                        return Err(GiveUp);
                    }
                    rows_seen = true;
                    self.rows(grid, depth + 1)?;
                }
                "_kind" if kinded.is_some() => {
                    // A later `_kind` changes the kind in the tree decoder.
                    return Err(GiveUp);
                }
                _ => {
                    // Unknown members (and `_kind` of a whole grid document) are ignored,
                    // as by the tree decoder.
                    self.value(depth + 1)?;
                }
            }
            if !self.next_item(b'}')? {
                break;
            }
        }
        grid.ok_or(GiveUp)
    }

    /// Reads object members after `{` into a dict, skipping the names in `skip`.
    fn meta_members(&mut self, skip: &[&str], depth: usize) -> Scan<Dict> {
        if depth > FAST_DEPTH {
            return Err(GiveUp);
        }
        let mut dict = Dict::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(dict);
        }
        loop {
            let name = self.key()?;
            let value = self.value(depth + 1)?;
            if !skip.contains(&&*name) {
                if !is_tag_name(&name) {
                    return Err(GiveUp);
                }
                dict.insert(name.into_owned(), value).map_err(|_| GiveUp)?;
            }
            if !self.next_item(b'}')? {
                return Ok(dict);
            }
        }
    }

    /// Reads the `cols` array: `{"name":..,"meta":{..}, other meta members}` objects.
    fn columns(&mut self, depth: usize) -> Scan<Vec<Column>> {
        self.expect(b'[')?;
        let mut columns = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(columns);
        }
        loop {
            if columns.len() >= MAX_COLUMNS {
                return Err(GiveUp);
            }
            self.expect(b'{')?;
            columns.push(self.column(depth + 1)?);
            if !self.next_item(b']')? {
                return Ok(columns);
            }
        }
    }

    fn column(&mut self, depth: usize) -> Scan<Column> {
        if depth > FAST_DEPTH {
            return Err(GiveUp);
        }
        let mut name = None;
        let mut meta = Dict::new();
        let mut inner = None;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            return Err(GiveUp);
        }
        loop {
            let key = self.key()?;
            match &*key {
                "name" => name = Some(self.raw(depth + 1)?),
                // Only an object `meta` counts; anything else is ignored.
                "meta" if self.peek() == Some(b'{') => {
                    self.pos += 1;
                    inner = Some(self.meta_members(&[], depth + 1)?);
                }
                "meta" => {
                    inner = None;
                    self.value(depth + 1)?;
                }
                _ => {
                    if !is_tag_name(&key) {
                        return Err(GiveUp);
                    }
                    let value = self.value(depth + 1)?;
                    meta.insert(key.into_owned(), value).map_err(|_| GiveUp)?;
                }
            }
            if !self.next_item(b'}')? {
                break;
            }
        }
        let Some(Raw::Str(name)) = name else {
            return Err(GiveUp);
        };
        if !is_tag_name(&name) {
            return Err(GiveUp);
        }
        if let Some(inner) = inner {
            if meta.is_empty() {
                meta = inner;
            } else {
                for (k, v) in inner.iter() {
                    meta.insert(k, v.clone()).map_err(|_| GiveUp)?;
                }
            }
        }
        Ok(Column {
            name: name.into_owned(),
            meta,
        })
    }

    /// Reads the `rows` array into `grid`: each row an object of column name → value.
    ///
    /// A large rows array is read by two threads when the machine has a second core:
    /// see [`Scanner::rows_in_parts`].
    fn rows(&mut self, grid: &mut Grid, depth: usize) -> Scan<()> {
        self.expect(b'[')?;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let columns = ColumnNames::new(grid);
        let index: NameIndex<'_> = columns
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let rows = RowContext {
            columns: &columns,
            index: &index,
            depth,
        };
        // Only the document's grid (its rows are at depth 1): nested grids are not split.
        if let Some(from) = self.split_rows_from
            && depth == 1
            && self.bytes.len() - self.pos >= from
        {
            let bytes = self.bytes;
            let starts = chunk_starts(self.pos, bytes.len(), ROW_CHUNKS, |at| {
                row_start_after(bytes, at)
            });
            if starts.len() > 1 {
                return self.rows_in_parts(grid, &rows, &starts);
            }
        }
        self.row_loop(grid, &rows, usize::MAX).map(|_| ())
    }

    /// Reads the rows array in parts on two threads ([`read_chunks`]): the parts start
    /// at guessed row starts (found by their look, `}`, `,`, `{`, so one may be inside a
    /// string), and a part is used only if the part before it stopped exactly at its
    /// start; from the first one that is not, this thread reads on alone. So the result
    /// and any give-up are those of reading the whole array in one go.
    fn rows_in_parts(
        &mut self,
        grid: &mut Grid,
        rows: &RowContext<'_>,
        starts: &[usize],
    ) -> Scan<()> {
        let input = self.input;
        let read = |grid: &mut Grid, from: usize, stop: usize| {
            let mut scanner = Scanner::new(input);
            scanner.pos = from;
            let end = scanner.row_loop(grid, rows, stop)?;
            Ok((scanner.pos, matches!(end, RowsEnd::Closed)))
        };
        self.pos = read_chunks(grid, starts, &read)?;
        Ok(())
    }

    /// Reads rows (the scanner is at a row's `{`) up to the array's `]`, or up to the
    /// first row that starts at or after `stop`.
    fn row_loop(&mut self, grid: &mut Grid, rows: &RowContext<'_>, stop: usize) -> Scan<RowsEnd> {
        let RowContext {
            columns,
            index,
            depth,
        } = *rows;
        let rows_start = self.pos;
        let end = stop.min(self.bytes.len());
        loop {
            if self.pos >= stop {
                return Ok(RowsEnd::AtStop);
            }
            self.expect(b'{')?;
            let rows_read = grid.row_count();
            if rows_read >= ROWS_BEFORE_ESTIMATE && grid.spare_rows() == 0 {
                // Project the rows left from the bytes per row so far (bounded by
                // `Grid::reserve_rows`): one right-sized growth instead of doublings,
                // each of which copies all the cells.
                let consumed = (self.pos - rows_start).max(1);
                let left = end.saturating_sub(self.pos);
                let estimate = left.saturating_mul(rows_read) / consumed;
                grid.reserve_rows(estimate + estimate / 8 + ROWS_BEFORE_ESTIMATE);
            }
            grid.push_row_with(|row| {
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(());
                }
                let mut guess = 0;
                loop {
                    let at = self.row_key(columns, index, guess)?;
                    guess = at + 1;
                    let value = self.value(depth + 2)?;
                    if !row.set(at, value) {
                        return Err(GiveUp);
                    }
                    if !self.next_item(b'}')? {
                        return Ok(());
                    }
                }
            })?;
            if !self.next_item(b']')? {
                return Ok(RowsEnd::Closed);
            }
        }
    }

    /// Reads a row member name and its `:`, and returns its column. Rows list their cells
    /// in column order, skipping empty ones: the columns from `guess` on are tried first.
    #[inline]
    fn row_key(
        &mut self,
        columns: &ColumnNames,
        index: &NameIndex<'_>,
        guess: usize,
    ) -> Scan<usize> {
        if self.peek() != Some(b'"') {
            return Err(GiveUp);
        }
        let start = self.pos + 1;
        let rest = self.bytes.get(start..).unwrap_or(&[]);
        let run = plain_run(rest);
        let at = match (rest.get(run), rest.get(..run)) {
            (Some(b'"'), Some(name)) => {
                self.pos = start + run + 1;
                match columns.near(name, name_head(name, rest), guess) {
                    Some(at) => at,
                    None => {
                        let name = self.input.get(start..start + run).ok_or(GiveUp)?;
                        *index.get(name).ok_or(GiveUp)?
                    }
                }
            }
            _ => {
                let name = self.string()?;
                *index.get(&*name).ok_or(GiveUp)?
            }
        };
        self.colon()?;
        Ok(at)
    }

    /// Reads a JSON number with the strict JSON grammar.
    fn number(&mut self) -> Scan<f64> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                }
            }
            _ => return Err(GiveUp),
        }
        let int_end = self.pos;
        let mut plain = true;
        if self.peek() == Some(b'.') {
            plain = false;
            self.pos += 1;
            let digits = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == digits {
                return Err(GiveUp);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            let digits = self.pos;
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
            if self.pos == digits {
                return Err(GiveUp);
            }
        }
        let text = self.input.get(start..self.pos).ok_or(GiveUp)?;
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        if plain && int_end - start <= 19 + usize::from(negative) {
            // At most 19 digits fit a u64; converting it rounds exactly as parsing would
            // (`-0` gives -0.0, as serde_json reads it).
            let magnitude = digits
                .bytes()
                .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0'));
            let value = magnitude as f64;
            return Ok(if negative { -value } else { value });
        }
        if let Some(value) = Number::parse_short_decimal(text) {
            return Ok(value);
        }
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or(GiveUp)
    }

    /// Reads a JSON string; borrowed from the input when it has no escapes.
    fn string(&mut self) -> Scan<Cow<'a, str>> {
        self.expect(b'"')?;
        let start = self.pos;
        self.pos += plain_run(self.bytes.get(start..).unwrap_or(&[]));
        match self.peek() {
            Some(b'"') => {
                let text = self.input.get(start..self.pos).ok_or(GiveUp)?;
                self.pos += 1;
                return Ok(Cow::Borrowed(text));
            }
            Some(b'\\') => {}
            _ => return Err(GiveUp),
        }
        let mut out = String::from(self.input.get(start..self.pos).ok_or(GiveUp)?);
        loop {
            let run = self.pos;
            self.pos += plain_run(self.bytes.get(run..).unwrap_or(&[]));
            out.push_str(self.input.get(run..self.pos).ok_or(GiveUp)?);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escaped = self.peek().ok_or(GiveUp)?;
                    self.pos += 1;
                    out.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(GiveUp),
                    });
                }
                _ => return Err(GiveUp),
            }
        }
    }

    /// Reads the `XXXX` of `\uXXXX` (and a following low surrogate escape when needed).
    fn unicode_escape(&mut self) -> Scan<char> {
        let high = self.hex4()?;
        if (0xDC00..0xE000).contains(&high) {
            return Err(GiveUp);
        }
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high).ok_or(GiveUp);
        }
        self.literal(b"\\u")?;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return Err(GiveUp);
        }
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).ok_or(GiveUp)
    }

    fn hex4(&mut self) -> Scan<u32> {
        let digits = self.input.get(self.pos..self.pos + 4).ok_or(GiveUp)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GiveUp);
        }
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| GiveUp)
    }
}

fn string_of(raw: Option<Raw<'_>>) -> Scan<Cow<'_, str>> {
    match raw {
        Some(Raw::Str(s)) => Ok(s),
        _ => Err(GiveUp),
    }
}

fn number_of(raw: Option<Raw<'_>>) -> Scan<f64> {
    match raw {
        Some(Raw::Number(n)) => Ok(n),
        Some(Raw::Str(s)) => match &*s {
            "INF" => Ok(f64::INFINITY),
            "-INF" => Ok(f64::NEG_INFINITY),
            "NaN" => Ok(f64::NAN),
            _ => Err(GiveUp),
        },
        _ => Err(GiveUp),
    }
}

/// Decodes `text` with the Zinc scalar grammar, requiring the given kind.
fn zinc_scalar(text: &str, kind: Kind) -> Scan<Value> {
    match zinc::decode_value(text) {
        Ok(value) if value.kind() == kind => Ok(value),
        _ => Err(GiveUp),
    }
}
