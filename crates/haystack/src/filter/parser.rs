//! The filter parser: text to [`Filter`], with positions on every error and hard limits
//! on length, nesting and term count so hostile filters are refused cheaply.
//!
//! Grammar (Project Haystack 4, "Filters" chapter, section Grammar):
//!
//! ```text
//! filter  := condOr
//! condOr  := condAnd ("or" condAnd)*
//! condAnd := term ("and" term)*
//! term    := "(" filter ")" | "not" path | path (cmpOp val)?
//! cmpOp   := "==" | "!=" | "<" | "<=" | ">" | ">="
//! path    := name ("->" name)*
//! val     := bool | ref | str | uri | number | date | time | dateTime | symbol
//! bool    := "true" | "false"
//! ```
//!
//! Literals other than `true`/`false` use Zinc syntax and are read with the Zinc reader;
//! as the chapter says, the Zinc keywords `INF`, `-INF` and `NaN` are not accepted, and
//! neither are `N`, `M`, `T`, `F` or any collection.

use std::fmt;

use crate::codec::DecodeErrorKind;
use crate::codec::zinc::ZincReader;
use crate::value::{Ref, Value, is_ref_char, is_tag_name};

use super::ast::{CmpOp, Filter, Path};

/// Longest accepted filter text, in bytes.
pub const MAX_FILTER_LEN: usize = 16 * 1024;
/// Deepest accepted nesting of parentheses.
pub const MAX_DEPTH: usize = 32;
/// Most leaf terms (has, missing, comparisons) in one filter.
pub const MAX_TERMS: usize = 1024;
/// Most names in one `a->b->c` path.
pub const MAX_PATH_SEGMENTS: usize = 16;

/// What the parser did not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterErrorKind {
    /// The filter is empty or only whitespace.
    #[error("empty filter")]
    Empty,
    /// A character that does not fit the grammar here.
    #[error("unexpected {found:?}, expected {expected}")]
    Unexpected {
        /// The character found.
        found: char,
        /// What the grammar wanted.
        expected: &'static str,
    },
    /// The input ended early.
    #[error("unexpected end of filter, expected {0}")]
    UnexpectedEnd(&'static str),
    /// A keyword (`and`, `or`, `not`, `true`, `false`) where a tag name was expected.
    #[error("keyword {0:?} cannot be used as a tag name")]
    KeywordAsName(String),
    /// A word that is not a valid literal (e.g. `N`, `INF`, `NaN`, `T`).
    #[error(
        "{0:?} is not a filter literal (expected true, false, a ref, string, uri, number, date, time, datetime or symbol)"
    )]
    UnsupportedLiteral(String),
    /// A malformed Zinc literal.
    #[error("invalid literal: {0}")]
    InvalidLiteral(DecodeErrorKind),
    /// The filter text exceeds [`MAX_FILTER_LEN`].
    #[error("filter of {size} bytes exceeds the limit of {limit}")]
    TooLong {
        /// Input size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Parentheses nested deeper than [`MAX_DEPTH`].
    #[error("parentheses nested deeper than {0}")]
    TooDeep(usize),
    /// More than [`MAX_TERMS`] terms.
    #[error("more than {0} terms")]
    TooManyTerms(usize),
    /// A path with more than [`MAX_PATH_SEGMENTS`] names.
    #[error("path longer than {0} names")]
    PathTooLong(usize),
}

/// A parse failure and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// What went wrong.
    pub kind: FilterErrorKind,
    /// Byte offset into the filter text.
    pub offset: usize,
    /// Line, starting at 1.
    pub line: usize,
    /// Column in characters, starting at 1.
    pub column: usize,
}

impl FilterError {
    fn at(input: &str, offset: usize, kind: FilterErrorKind) -> Self {
        let offset = offset.min(input.len());
        let before = input.get(..offset).unwrap_or(input);
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        FilterError {
            kind,
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "filter line {}, column {}: {}",
            self.line, self.column, self.kind
        )
    }
}

impl std::error::Error for FilterError {}

/// Parses filter text.
///
/// ```
/// use buildwire_haystack::filter::parse;
/// let f = parse("equip and siteRef->geoCity == \"Chicago\"")?;
/// assert_eq!(f.to_string(), "equip and siteRef->geoCity == \"Chicago\"");
/// # Ok::<(), buildwire_haystack::filter::FilterError>(())
/// ```
pub fn parse(input: &str) -> Result<Filter, FilterError> {
    if input.len() > MAX_FILTER_LEN {
        return Err(FilterError::at(
            input,
            0,
            FilterErrorKind::TooLong {
                size: input.len(),
                limit: MAX_FILTER_LEN,
            },
        ));
    }
    let mut parser = FilterParser {
        input,
        pos: 0,
        depth: 0,
        terms: 0,
    };
    parser.skip_whitespace();
    if parser.pos >= input.len() {
        return Err(parser.error(FilterErrorKind::Empty));
    }
    let filter = parser.parse_or()?;
    parser.skip_whitespace();
    match parser.peek() {
        None => Ok(filter),
        Some(found) => Err(parser.error(FilterErrorKind::Unexpected {
            found,
            expected: "'and', 'or' or the end of the filter",
        })),
    }
}

impl std::str::FromStr for Filter {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// Recursive-descent parser state.
struct FilterParser<'a> {
    input: &'a str,
    pos: usize,
    depth: usize,
    terms: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> FilterParser<'a> {
    fn error(&self, kind: FilterErrorKind) -> FilterError {
        FilterError::at(self.input, self.pos, kind)
    }

    fn error_at(&self, offset: usize, kind: FilterErrorKind) -> FilterError {
        FilterError::at(self.input, offset, kind)
    }

    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn unexpected(&self, expected: &'static str) -> FilterError {
        match self.peek() {
            Some(found) => self.error(FilterErrorKind::Unexpected { found, expected }),
            None => self.error(FilterErrorKind::UnexpectedEnd(expected)),
        }
    }

    fn skip_whitespace(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        self.pos += rest.len() - trimmed.len();
    }

    /// The word (ASCII letters, digits, `_`) starting here, without consuming it.
    fn peek_word(&self) -> &'a str {
        let rest = self.rest();
        let end = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
        rest.get(..end).unwrap_or("")
    }

    /// Consumes `keyword` if the next word (after whitespace) is exactly it.
    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let saved = self.pos;
        self.skip_whitespace();
        if self.peek_word() == keyword {
            self.pos += keyword.len();
            true
        } else {
            self.pos = saved;
            false
        }
    }

    fn parse_or(&mut self) -> Result<Filter, FilterError> {
        let first = self.parse_and()?;
        if !self.eat_keyword("or") {
            return Ok(first);
        }
        let mut items = vec![first, self.parse_and()?];
        while self.eat_keyword("or") {
            items.push(self.parse_and()?);
        }
        Ok(Filter::Or(items))
    }

    fn parse_and(&mut self) -> Result<Filter, FilterError> {
        let first = self.parse_term()?;
        if !self.eat_keyword("and") {
            return Ok(first);
        }
        let mut items = vec![first, self.parse_term()?];
        while self.eat_keyword("and") {
            items.push(self.parse_term()?);
        }
        Ok(Filter::And(items))
    }

    fn count_term(&mut self, start: usize) -> Result<(), FilterError> {
        self.terms += 1;
        if self.terms > MAX_TERMS {
            return Err(self.error_at(start, FilterErrorKind::TooManyTerms(MAX_TERMS)));
        }
        Ok(())
    }

    fn parse_term(&mut self) -> Result<Filter, FilterError> {
        self.skip_whitespace();
        let start = self.pos;
        if self.peek() == Some('(') {
            if self.depth >= MAX_DEPTH {
                return Err(self.error(FilterErrorKind::TooDeep(MAX_DEPTH)));
            }
            self.depth += 1;
            self.pos += 1;
            let inner = self.parse_or()?;
            self.skip_whitespace();
            if self.peek() != Some(')') {
                return Err(self.unexpected("')' or 'and'/'or'"));
            }
            self.pos += 1;
            self.depth -= 1;
            return Ok(inner);
        }
        if self.peek_word() == "not" {
            self.pos += 3;
            self.skip_whitespace();
            if self.peek() == Some('(') {
                return Err(self.unexpected("a tag path ('not' applies to a path, not a group)"));
            }
            let path = self.parse_path()?;
            self.count_term(start)?;
            return Ok(Filter::Missing(path));
        }
        let path = self.parse_path()?;
        self.count_term(start)?;
        self.skip_whitespace();
        let Some(op) = CmpOp::ALL
            .into_iter()
            .find(|op| self.rest().starts_with(op.symbol()))
        else {
            if self.rest().starts_with('=') {
                return Err(self.error(FilterErrorKind::Unexpected {
                    found: '=',
                    expected: "'==' (a single '=' is not an operator)",
                }));
            }
            return Ok(Filter::Has(path));
        };
        self.pos += op.symbol().len();
        self.skip_whitespace();
        let value = self.parse_literal()?;
        Ok(Filter::Cmp { path, op, value })
    }

    fn parse_name(&mut self) -> Result<String, FilterError> {
        let word = self.peek_word();
        if word.is_empty() {
            return Err(self.unexpected("a tag name, 'not' or '('"));
        }
        if matches!(word, "and" | "or" | "not" | "true" | "false") {
            return Err(self.error(FilterErrorKind::KeywordAsName(word.to_owned())));
        }
        if !is_tag_name(word) {
            return Err(self.unexpected("a tag name (starting with a lowercase letter)"));
        }
        self.pos += word.len();
        Ok(word.to_owned())
    }

    fn parse_path(&mut self) -> Result<Path, FilterError> {
        let mut names = vec![self.parse_name()?];
        while self.rest().starts_with("->") {
            if names.len() >= MAX_PATH_SEGMENTS {
                return Err(self.error(FilterErrorKind::PathTooLong(MAX_PATH_SEGMENTS)));
            }
            self.pos += 2;
            names.push(self.parse_name()?);
        }
        Ok(Path(names))
    }

    fn parse_literal(&mut self) -> Result<Value, FilterError> {
        let start = self.pos;
        match self.peek() {
            None => Err(self.error(FilterErrorKind::UnexpectedEnd("a value"))),
            Some('@') => {
                self.pos += 1;
                let rest = self.rest();
                let end = rest.find(|c| !is_ref_char(c)).unwrap_or(rest.len());
                if end == 0 {
                    return Err(self.unexpected("a ref id after '@'"));
                }
                let id = rest.get(..end).unwrap_or("");
                self.pos += end;
                Ok(Value::Ref(Ref::new(id)))
            }
            Some('"' | '`' | '^' | '-' | '0'..='9') => {
                let value = self.read_zinc_literal()?;
                match &value {
                    Value::Number(n) if !n.value.is_finite() => {
                        let text = self.input.get(start..self.pos).unwrap_or("");
                        Err(self
                            .error_at(start, FilterErrorKind::UnsupportedLiteral(text.to_owned())))
                    }
                    _ => Ok(value),
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let word = self.peek_word();
                let value = match word {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => {
                        return Err(
                            self.error(FilterErrorKind::UnsupportedLiteral(word.to_owned()))
                        );
                    }
                };
                self.pos += word.len();
                Ok(value)
            }
            Some(_) => Err(self.unexpected("a value")),
        }
    }

    /// Reads one Zinc scalar starting here with the Zinc reader, mapping its error
    /// positions back into the filter text.
    fn read_zinc_literal(&mut self) -> Result<Value, FilterError> {
        let start = self.pos;
        let rest = self.rest();
        let mut reader = ZincReader::new(rest)
            .map_err(|e| self.error_at(start, FilterErrorKind::InvalidLiteral(e.kind)))?;
        match reader.read_value() {
            Ok(value) => {
                self.pos = start + reader.offset();
                Ok(value)
            }
            Err(e) => {
                let inner = match e.location {
                    crate::codec::Location::Text { offset, .. } => offset,
                    crate::codec::Location::Path(_) => 0,
                };
                Err(self.error_at(start + inner, FilterErrorKind::InvalidLiteral(e.kind)))
            }
        }
    }
}
