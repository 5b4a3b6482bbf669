//! Streaming decode of large Zinc grids: rows come one at a time from any `BufRead`, so a
//! grid of millions of rows never has to be in memory at once.
//!
//! Zinc is line-oriented: the first line is `ver:"3.0"` with the grid meta, the second the
//! columns, then one row per line (a nested grid `<<...>>` inside a cell may span lines). The
//! stream decodes rows in batches of [`BATCH_LINES`] lines with the ordinary decoder, under the
//! same column line; a batch that ends inside a multi-line cell is extended by more lines and
//! decoded again. Errors carry the line number in the whole input.

use std::io::BufRead;

use super::decode_grid;
use crate::codec::{DecodeError, DecodeErrorKind, Location};
use crate::value::{Column, Dict, Grid};

/// Lines decoded together (amortizes re-reading the column line).
pub const BATCH_LINES: usize = 256;
/// Longest single row (with its nested grids) the stream accepts, in bytes.
pub const MAX_ROW_BYTES: usize = 16 * 1024 * 1024;

/// Rows of a Zinc grid read incrementally.
///
/// ```
/// use buildwire_haystack::codec::zinc::ZincRowStream;
/// let text = "ver:\"3.0\" site\nid,dis\n@a,\"A\"\n@b,\"B\"\n";
/// let mut stream = ZincRowStream::new(text.as_bytes())?;
/// assert_eq!(stream.columns().len(), 2);
/// let ids: Vec<String> = stream
///     .map(|row| row.map(|r| r.get("dis").map(|v| format!("{v:?}")).unwrap_or_default()))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(ids.len(), 2);
/// # Ok::<(), buildwire_haystack::codec::DecodeError>(())
/// ```
pub struct ZincRowStream<R> {
    input: R,
    /// `ver:"3.0"` plus the column line, prefixed to every batch.
    prefix: String,
    meta: Dict,
    columns: Vec<Column>,
    /// Decoded rows not yet returned.
    ready: std::collections::VecDeque<Dict>,
    /// 1-based input line of the next line to read.
    next_line: usize,
    /// Blank lines that ended the last batch: rows only if more rows follow, so they wait
    /// for the next batch (a blank line inside a grid is an empty row, at its end nothing).
    carry: String,
    carry_lines: usize,
    done: bool,
}

/// A read failure of the underlying input, placed at the line being read.
fn io_error(line: usize, e: &std::io::Error) -> DecodeError {
    let kind = if e.kind() == std::io::ErrorKind::InvalidData {
        DecodeErrorKind::InvalidUtf8
    } else {
        DecodeErrorKind::InvalidGrid(format!("cannot read the input: {e}"))
    };
    DecodeError {
        location: Location::Text {
            line,
            column: 1,
            offset: 0,
        },
        kind,
    }
}

impl<R: BufRead> ZincRowStream<R> {
    /// Reads the header and column lines.
    pub fn new(mut input: R) -> Result<Self, DecodeError> {
        let mut header = String::new();
        for line in 1..=2 {
            if input
                .read_line(&mut header)
                .map_err(|e| io_error(line, &e))?
                == 0
            {
                break;
            }
        }
        let head = decode_grid(&header)?;
        let columns = head.columns().to_vec();
        let column_line = header.split_once('\n').map_or("", |(_, rest)| rest);
        let prefix = format!(
            "ver:\"3.0\"\n{}\n",
            column_line.trim_end_matches(['\r', '\n'])
        );
        Ok(Self {
            input,
            prefix,
            meta: head.meta.clone(),
            columns,
            ready: std::collections::VecDeque::new(),
            next_line: 3,
            carry: String::new(),
            carry_lines: 0,
            done: false,
        })
    }

    /// The grid meta.
    pub fn meta(&self) -> &Dict {
        &self.meta
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Reads and decodes the next batch into `ready`.
    fn fill(&mut self) -> Result<(), DecodeError> {
        let first_line = self.next_line - self.carry_lines;
        let mut batch = self.prefix.clone();
        let body_start = batch.len();
        batch.push_str(&std::mem::take(&mut self.carry));
        self.carry_lines = 0;
        let mut lines = 0;
        loop {
            let before = batch.len();
            let read = self
                .input
                .read_line(&mut batch)
                .map_err(|e| io_error(self.next_line, &e))?;
            if read == 0 {
                self.done = true;
            } else {
                self.next_line += 1;
                lines += 1;
                if batch.len() - body_start > MAX_ROW_BYTES * 4 {
                    return Err(DecodeError::at_offset(
                        &batch,
                        before,
                        DecodeErrorKind::InvalidGrid(format!(
                            "a row longer than {MAX_ROW_BYTES} bytes"
                        )),
                    ));
                }
            }
            if lines < BATCH_LINES && !self.done {
                continue;
            }
            if !self.done {
                let blank = trailing_blank_lines(&batch[body_start..]);
                if blank.1 > 0 {
                    let cut = batch.len() - blank.0;
                    self.carry = batch.split_off(cut);
                    self.carry_lines = blank.1;
                }
                if batch.len() == body_start {
                    // Nothing but blank lines so far: read on.
                    batch.push_str(&std::mem::take(&mut self.carry));
                    lines = 0;
                    continue;
                }
            }
            match decode_grid(&batch) {
                Ok(grid) => {
                    self.push_rows(&grid);
                    return Ok(());
                }
                // Cut inside a multi-line cell: put back any blank lines set aside (they are
                // inside the cell) and read on, unless the input has ended.
                Err(e) if !self.done && is_cut_short(&e, &batch) => {
                    batch.push_str(&std::mem::take(&mut self.carry));
                    self.carry_lines = 0;
                    lines = 0;
                    continue;
                }
                Err(mut e) => {
                    if let Location::Text { line, offset, .. } = &mut e.location {
                        // Batch lines 1-2 are the prefix; line 3 is input line `first_line`.
                        *line = (*line + first_line).saturating_sub(3).max(1);
                        *offset = offset.saturating_sub(body_start);
                    }
                    return Err(e);
                }
            }
        }
    }

    fn push_rows(&mut self, grid: &Grid) {
        for i in 0..grid.row_count() {
            if let Some(row) = grid.row_dict(i) {
                self.ready.push_back(row);
            }
        }
    }
}

/// Byte length and count of the whitespace-only lines that end `body` (complete lines only).
fn trailing_blank_lines(body: &str) -> (usize, usize) {
    let mut bytes = 0;
    let mut count = 0;
    let mut rest = body;
    while let Some(stripped) = rest.strip_suffix('\n') {
        let line_start = stripped.rfind('\n').map_or(0, |i| i + 1);
        let line = &stripped[line_start..];
        if !line.trim().is_empty() {
            break;
        }
        bytes += line.len() + 1;
        count += 1;
        rest = &stripped[..line_start];
    }
    (bytes, count)
}

/// True when decoding failed only because the text ended: the error sits at the very end.
fn is_cut_short(error: &DecodeError, text: &str) -> bool {
    let at_end = match &error.location {
        Location::Text { offset, .. } => text.get(*offset..).is_none_or(|r| r.trim().is_empty()),
        Location::Path(_) => false,
    };
    at_end && matches!(error.kind, DecodeErrorKind::UnexpectedEnd(_))
}

impl<R: BufRead> Iterator for ZincRowStream<R> {
    type Item = Result<Dict, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.ready.is_empty() {
            if self.done {
                return None;
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(e));
            }
        }
        self.ready.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts the stream yields exactly the rows of the whole-grid decode; returns them.
    fn assert_streams_like_whole(text: &str) -> Vec<Dict> {
        let rows: Vec<Dict> = ZincRowStream::new(text.as_bytes())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let whole = decode_grid(text).unwrap();
        assert_eq!(rows.len(), whole.row_count());
        let expected: Vec<Dict> = (0..whole.row_count())
            .filter_map(|i| whole.row_dict(i))
            .collect();
        assert_eq!(rows, expected);
        rows
    }

    #[test]
    fn rows_stream_in_order_across_batches() {
        let mut text = String::from("ver:\"3.0\" site\nid,n\n");
        for i in 0..(BATCH_LINES * 3 + 7) {
            text.push_str(&format!("@r{i},{i}\n"));
        }
        let stream = ZincRowStream::new(text.as_bytes()).unwrap();
        assert!(stream.meta().contains("site"));
        let rows: Vec<Dict> = stream.collect::<Result<_, _>>().unwrap();
        assert_eq!(rows.len(), BATCH_LINES * 3 + 7);
        let whole = decode_grid(&text).unwrap();
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(Some(row), whole.row_dict(i).as_ref());
        }
    }

    #[test]
    fn a_nested_grid_spanning_a_batch_boundary_is_read_whole() {
        let mut text = String::from("ver:\"3.0\"\nid,g\n");
        for i in 0..(BATCH_LINES - 1) {
            text.push_str(&format!("@r{i},\n"));
        }
        text.push_str("@nested,<<\nver:\"3.0\"\na,b\n1,2\n3,4\n>>\n@last,\n");
        let rows = assert_streams_like_whole(&text);
        assert_eq!(rows.len(), BATCH_LINES + 1);
    }

    #[test]
    fn blank_lines_at_a_batch_boundary_stay_empty_rows() {
        let mut text = String::from("ver:\"3.0\"\nid,n\n");
        for i in 0..(BATCH_LINES - 2) {
            text.push_str(&format!("@r{i},{i}\n"));
        }
        text.push_str("\n\n\n\n@after,1\n\n\n");
        assert_streams_like_whole(&text);
    }

    #[test]
    fn blank_lines_inside_a_multi_line_cell_at_a_batch_boundary_are_kept() {
        // Found by the zinc_stream fuzz target: a list spanning lines, with blank lines inside,
        // cut by the batch boundary.
        let mut text = String::from("ver:\"3.0\"\nid,v\n");
        for i in 0..(BATCH_LINES - 3) {
            text.push_str(&format!("@r{i},\n"));
        }
        text.push_str("@list,[\n\n\n\n\n1,\n\n-INF\n\n]\n@last,2\n");
        assert_streams_like_whole(&text);
    }

    #[test]
    fn errors_name_the_line_of_the_whole_input() {
        let mut text = String::from("ver:\"3.0\"\nid,n\n");
        for i in 0..(BATCH_LINES + 10) {
            text.push_str(&format!("@r{i},{i}\n"));
        }
        text.push_str("@bad,\"unterminated\n");
        let bad_line = BATCH_LINES + 10 + 3;
        let result: Result<Vec<Dict>, _> = ZincRowStream::new(text.as_bytes()).unwrap().collect();
        match result.unwrap_err().location {
            Location::Text { line, .. } => assert_eq!(line, bad_line),
            other => panic!("{other:?}"),
        }
    }
}
