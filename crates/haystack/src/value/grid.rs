//! [`Grid`]: grid meta, columns with their meta, and rows stored sparsely: one flat
//! vector of the non-empty cells, row after row, each with its column number.
//!
//! Building grids are sparse (the example buildings leave 80 % of their cells empty),
//! so a cell costs nothing until it holds a value, and a whole grid is three
//! allocations however many rows it has.

use super::dict::{InvalidTagName, is_tag_name};
use super::{Dict, Value};

/// Most cells [`Grid::reserve_rows`] reserves in one call (decoders reserve from an
/// estimate of the row count; beyond this the cell vectors grow as rows arrive).
pub const MAX_RESERVED_CELLS: usize = 1 << 20;

/// A grid column: its name and meta.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name, a valid tag name.
    pub name: String,
    /// Column meta.
    pub meta: Dict,
}

/// Why a grid could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    /// A column name is not a valid tag name.
    #[error(transparent)]
    InvalidColumnName(#[from] InvalidTagName),
    /// Two columns have the same name.
    #[error("duplicate column {0:?}")]
    DuplicateColumn(String),
    /// A row dict has a tag with no matching column.
    #[error("no column named {0:?}")]
    UnknownColumn(String),
    /// A row has more cells than the grid has columns.
    #[error("row has {cells} cells but the grid has {columns} columns")]
    RowTooWide {
        /// Cells in the row.
        cells: usize,
        /// Columns in the grid.
        columns: usize,
    },
    /// More columns than a grid holds (2^32 - 1).
    #[error("{0} columns is more than a grid holds")]
    TooManyColumns(usize),
}

/// A Haystack grid.
///
/// Cells are empty or hold a value; `Null` pushed into a row is stored as empty, since
/// the encodings cannot tell them apart. Rows are read as [`Row`]s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// Grid meta (without the `ver` tag, which the codecs handle).
    pub meta: Dict,
    columns: Vec<Column>,
    /// The non-empty cells, row after row; within a row in column order.
    values: Vec<Value>,
    /// The column of each entry of `values`.
    value_columns: Vec<u32>,
    /// Where each row's cells end in `values`.
    row_ends: Vec<usize>,
}

impl Grid {
    /// An empty grid with the given meta and columns.
    pub fn new(meta: Dict, columns: Vec<Column>) -> Result<Self, GridError> {
        if u32::try_from(columns.len()).is_err() {
            return Err(GridError::TooManyColumns(columns.len()));
        }
        let mut seen = std::collections::HashSet::with_capacity(columns.len());
        for column in &columns {
            if !is_tag_name(&column.name) {
                return Err(InvalidTagName(column.name.clone()).into());
            }
            if !seen.insert(column.name.as_str()) {
                return Err(GridError::DuplicateColumn(column.name.clone()));
            }
        }
        Ok(Grid {
            meta,
            columns,
            ..Grid::default()
        })
    }

    /// A grid with no meta and columns of the given names.
    pub fn with_column_names<S: Into<String>>(
        names: impl IntoIterator<Item = S>,
    ) -> Result<Self, GridError> {
        let columns = names
            .into_iter()
            .map(|name| Column {
                name: name.into(),
                meta: Dict::new(),
            })
            .collect();
        Grid::new(Dict::new(), columns)
    }

    /// An empty grid with the meta and columns of this one.
    pub fn empty_like(&self) -> Grid {
        Grid {
            meta: self.meta.clone(),
            columns: self.columns.clone(),
            ..Grid::default()
        }
    }

    /// An empty grid for rows read apart and then joined to this one with `append_rows`:
    /// as many columns, but unnamed and without meta (nothing to copy).
    pub(crate) fn rows_part(&self) -> Grid {
        let column = || Column {
            name: String::new(),
            meta: Dict::default(),
        };
        Grid {
            columns: std::iter::repeat_with(column)
                .take(self.columns.len())
                .collect(),
            ..Grid::default()
        }
    }

    /// Appends a row given cell by cell; missing trailing cells are empty. A grid
    /// without columns holds no rows, so an empty row pushed to it is ignored.
    ///
    /// ```
    /// use buildwire_haystack::value::{Grid, Value};
    /// let mut grid = Grid::with_column_names(["id", "dis"])?;
    /// grid.push_row(vec![None, Some(Value::from("Site"))])?;
    /// assert_eq!(grid.get(0, "dis"), Some(&Value::from("Site")));
    /// # Ok::<(), buildwire_haystack::value::GridError>(())
    /// ```
    pub fn push_row(&mut self, row: Vec<Option<Value>>) -> Result<(), GridError> {
        let columns = self.columns.len();
        if row.len() > columns {
            return Err(GridError::RowTooWide {
                cells: row.len(),
                columns,
            });
        }
        if columns == 0 {
            return Ok(());
        }
        for (column, cell) in row.into_iter().enumerate() {
            match cell {
                None | Some(Value::Null) => {}
                Some(value) => self.push_cell(column, value),
            }
        }
        self.row_ends.push(self.values.len());
        Ok(())
    }

    /// Stores a cell of the row being appended (the caller keeps column order).
    #[inline(always)]
    fn push_cell(&mut self, column: usize, value: Value) {
        // `Grid::new` bounds the column count by u32.
        self.value_columns.push(column as u32);
        self.values.push(value);
    }

    /// Reserves room for `rows` more rows. It is a hint, often estimated from
    /// untrusted input, so at most [`MAX_RESERVED_CELLS`] cells are reserved at once;
    /// cells are reserved at the average count of the rows so far.
    pub fn reserve_rows(&mut self, rows: usize) {
        if self.columns.is_empty() {
            return;
        }
        self.row_ends.reserve(rows.min(MAX_RESERVED_CELLS));
        if let Some(per_row) = self.values.len().checked_div(self.row_ends.len()) {
            self.reserve_cells(rows.saturating_mul(per_row + 1));
        }
    }

    /// Reserves room for `cells` more non-empty cells (bounded like
    /// [`Grid::reserve_rows`]).
    pub(crate) fn reserve_cells(&mut self, cells: usize) {
        let cells = cells.min(MAX_RESERVED_CELLS);
        self.values.reserve(cells);
        self.value_columns.reserve(cells);
    }

    /// How many more rows fit without growing the row index.
    pub(crate) fn spare_rows(&self) -> usize {
        self.row_ends.capacity() - self.row_ends.len()
    }

    /// Appends a row whose cells `fill` sets one by one (decoders use it to write each
    /// cell once, without a temporary row). Cells not set are empty; the row is
    /// appended even when `fill` fails. A grid without columns gets no row.
    pub(crate) fn push_row_with<E>(
        &mut self,
        fill: impl FnOnce(&mut RowCells<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let width = self.columns.len();
        let start = self.values.len();
        let result = fill(&mut RowCells {
            grid: self,
            start,
            width,
            next: 0,
        });
        if width > 0 {
            self.row_ends.push(self.values.len());
        }
        result
    }

    /// Appends the rows of `other`, a grid with the same columns (decoders that read
    /// parts of one grid apart join them with it).
    pub(crate) fn append_rows(&mut self, other: Grid) {
        debug_assert_eq!(self.columns.len(), other.columns.len());
        let base = self.values.len();
        self.values.extend(other.values);
        self.value_columns.extend(other.value_columns);
        self.row_ends
            .extend(other.row_ends.into_iter().map(|end| end + base));
    }

    /// Appends a row given as a dict; tags without a column are an error.
    pub fn push_dict(&mut self, row: &Dict) -> Result<(), GridError> {
        let mut cells = vec![None; self.columns.len()];
        for (name, value) in row.iter() {
            match self.column_index(name) {
                Some(i) => cells[i] = Some(value.clone()),
                None => return Err(GridError::UnknownColumn(name.to_owned())),
            }
        }
        self.push_row(cells)
    }

    /// The columns in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Index of the column `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.row_ends.len()
    }

    /// Number of non-empty cells in all rows.
    pub fn cell_count(&self) -> usize {
        self.values.len()
    }

    /// Row `index`.
    pub fn row(&self, index: usize) -> Option<Row<'_>> {
        let end = *self.row_ends.get(index)?;
        let start = match index.checked_sub(1) {
            Some(before) => *self.row_ends.get(before)?,
            None => 0,
        };
        Some(Row {
            width: self.columns.len(),
            columns: self.value_columns.get(start..end)?,
            values: self.values.get(start..end)?,
        })
    }

    /// The rows in order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = Row<'_>> + '_ {
        let width = self.columns.len();
        let mut start = 0;
        self.row_ends.iter().map(move |&end| {
            let row = Row {
                width,
                columns: self.value_columns.get(start..end).unwrap_or_default(),
                values: self.values.get(start..end).unwrap_or_default(),
            };
            start = end;
            row
        })
    }

    /// The cell of row `row` in column `name`.
    pub fn get(&self, row: usize, name: &str) -> Option<&Value> {
        let column = self.column_index(name)?;
        self.row(row)?.get(column)
    }

    /// Row `index` as a dict of its non-empty cells.
    pub fn row_dict(&self, index: usize) -> Option<Dict> {
        let row = self.row(index)?;
        let mut dict = Dict::new();
        for (column, value) in row.cells() {
            // Column names were validated when the grid was built.
            dict.insert(self.columns.get(column)?.name.clone(), value.clone())
                .ok()?;
        }
        Some(dict)
    }

    /// Builds a grid from dicts: columns are the union of tag names in first-seen order.
    pub fn from_dicts(rows: &[Dict]) -> Result<Self, GridError> {
        let mut index: indexmap::IndexMap<&str, ()> = indexmap::IndexMap::new();
        for row in rows {
            for (name, _) in row.iter() {
                index.entry(name).or_insert(());
            }
        }
        let mut grid = Grid::with_column_names(index.keys().copied())?;
        if grid.columns.is_empty() {
            return Ok(grid);
        }
        grid.row_ends.reserve(rows.len());
        for row in rows {
            let filled: Result<(), std::convert::Infallible> = grid.push_row_with(|cells| {
                for (name, value) in row.iter() {
                    if let Some(i) = index.get_index_of(name) {
                        cells.set(i, value.clone());
                    }
                }
                Ok(())
            });
            let Ok(()) = filled;
        }
        Ok(grid)
    }
}

/// One row of a [`Grid`]: its non-empty cells, each with its column number.
///
/// ```
/// use buildwire_haystack::value::{Grid, Value};
/// let mut grid = Grid::with_column_names(["id", "dis", "area"])?;
/// grid.push_row(vec![None, Some(Value::from("Site"))])?;
/// let row = grid.row(0).expect("one row");
/// assert_eq!(row.get(1), Some(&Value::from("Site")));
/// assert_eq!(row.iter().filter(Option::is_none).count(), 2);
/// assert_eq!(row.cells().map(|(column, _)| column).collect::<Vec<_>>(), [1]);
/// # Ok::<(), buildwire_haystack::value::GridError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row<'g> {
    width: usize,
    columns: &'g [u32],
    values: &'g [Value],
}

impl<'g> Row<'g> {
    /// How many cells the row has, empty ones included (the grid's column count).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether every cell is empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The value in column `column`, if the cell is not empty.
    pub fn get(&self, column: usize) -> Option<&'g Value> {
        let column = u32::try_from(column).ok()?;
        let at = self.columns.binary_search(&column).ok()?;
        self.values.get(at)
    }

    /// The non-empty cells, each with its column number, in column order.
    pub fn cells(&self) -> impl Iterator<Item = (usize, &'g Value)> + 'g {
        self.columns
            .iter()
            .map(|&c| c as usize)
            .zip(self.values.iter())
    }

    /// Every cell in column order: `None` for an empty one.
    pub fn iter(&self) -> RowIter<'g> {
        RowIter {
            column: 0,
            width: self.width,
            columns: self.columns,
            values: self.values,
        }
    }

    /// The cells as a vector of owned values.
    pub fn to_vec(&self) -> Vec<Option<Value>> {
        self.iter().map(|cell| cell.cloned()).collect()
    }
}

impl<'g> IntoIterator for Row<'g> {
    type Item = Option<&'g Value>;
    type IntoIter = RowIter<'g>;
    fn into_iter(self) -> RowIter<'g> {
        self.iter()
    }
}

/// Every cell of a [`Row`], empty ones as `None`.
#[derive(Debug, Clone)]
pub struct RowIter<'g> {
    column: usize,
    width: usize,
    columns: &'g [u32],
    values: &'g [Value],
}

impl<'g> Iterator for RowIter<'g> {
    type Item = Option<&'g Value>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.column >= self.width {
            return None;
        }
        let here = self.column;
        self.column += 1;
        match (self.columns.first(), self.values.split_first()) {
            (Some(&c), Some((value, rest))) if c as usize == here => {
                self.columns = self.columns.get(1..).unwrap_or_default();
                self.values = rest;
                Some(Some(value))
            }
            _ => Some(None),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.width.saturating_sub(self.column);
        (left, Some(left))
    }
}

impl ExactSizeIterator for RowIter<'_> {}

/// The row being written by [`Grid::push_row_with`].
pub(crate) struct RowCells<'g> {
    grid: &'g mut Grid,
    start: usize,
    width: usize,
    /// The column after the last one stored (cells are kept in column order).
    next: usize,
}

impl RowCells<'_> {
    /// Sets the cell of `column` (`Null` makes it empty; a second value for a column
    /// replaces the first); false if there is no such column. Cells set in column
    /// order are appended; others are inserted in place.
    #[inline(always)]
    pub(crate) fn set(&mut self, column: usize, value: Value) -> bool {
        if column >= self.width {
            return false;
        }
        if column >= self.next {
            if !matches!(value, Value::Null) {
                self.next = column + 1;
                self.grid.push_cell(column, value);
            }
        } else {
            self.set_out_of_order(column, value);
        }
        true
    }

    /// The number of columns of the row.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Sets a cell left of the last one stored: replaced, removed or inserted so that
    /// the row stays in column order.
    #[cold]
    fn set_out_of_order(&mut self, column: usize, value: Value) {
        let grid = &mut *self.grid;
        let row = grid.value_columns.get(self.start..).unwrap_or_default();
        // `Grid::new` bounds the column count by u32.
        let found = row.binary_search(&(column as u32));
        match (found, value) {
            (Ok(at), Value::Null) => {
                grid.value_columns.remove(self.start + at);
                grid.values.remove(self.start + at);
                self.next = grid
                    .value_columns
                    .get(self.start..)
                    .and_then(|row| row.last())
                    .map_or(0, |&last| last as usize + 1);
            }
            (Ok(at), value) => {
                if let Some(slot) = grid.values.get_mut(self.start + at) {
                    *slot = value;
                }
            }
            (Err(_), Value::Null) => {}
            (Err(at), value) => {
                grid.value_columns.insert(self.start + at, column as u32);
                grid.values.insert(self.start + at, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Number;

    #[test]
    fn rows_are_stored_flat() -> Result<(), GridError> {
        let mut grid = Grid::with_column_names(["id", "val"])?;
        grid.push_row(vec![Some(Value::Str("a".into())), Some(Value::Null)])?;
        grid.push_row(vec![Some(Value::Number(Number::new(1.0)))])?;
        assert_eq!(grid.row_count(), 2);
        assert_eq!(
            grid.row(0).map(|r| r.to_vec()),
            Some(vec![Some(Value::Str("a".into())), None])
        );
        assert_eq!(grid.cell_count(), 2);
        assert_eq!(grid.get(1, "id"), Some(&Value::Number(Number::new(1.0))));
        assert_eq!(grid.row(2), None);
        assert_eq!(grid.rows().count(), 2);
        assert_eq!(
            grid.push_row(vec![None, None, None]),
            Err(GridError::RowTooWide {
                cells: 3,
                columns: 2
            })
        );
        Ok(())
    }

    #[test]
    fn rows_written_cell_by_cell() -> Result<(), GridError> {
        let mut grid = Grid::with_column_names(["a", "b", "c"])?;
        let filled: Result<(), ()> = grid.push_row_with(|row| {
            assert!(row.set(2, Value::Marker));
            // Out of order, and a null (stored as empty).
            assert!(row.set(0, Value::Bool(true)));
            assert!(row.set(1, Value::Null));
            assert!(!row.set(3, Value::Marker));
            Ok(())
        });
        assert_eq!(filled, Ok(()));
        // A failing fill still leaves a whole row.
        let failed: Result<(), &str> = grid.push_row_with(|row| {
            row.set(1, Value::Marker);
            Err("stop")
        });
        assert_eq!(failed, Err("stop"));
        let _ = grid.push_row_with(|_| Ok::<(), ()>(()));
        assert_eq!(grid.row_count(), 3);
        assert_eq!(
            grid.row(0).map(|r| r.to_vec()),
            Some(vec![Some(Value::Bool(true)), None, Some(Value::Marker)])
        );
        assert_eq!(
            grid.row(1).map(|r| r.to_vec()),
            Some(vec![None, Some(Value::Marker), None])
        );
        assert_eq!(
            grid.row(2).map(|r| r.to_vec()),
            Some(vec![None, None, None])
        );
        assert!(grid.row(2).is_some_and(|r| r.is_empty()));
        let mut empty = Grid::default();
        let _ = empty.push_row_with(|row| {
            assert!(!row.set(0, Value::Marker));
            Ok::<(), ()>(())
        });
        assert_eq!(empty.row_count(), 0);
        Ok(())
    }

    #[test]
    fn out_of_order_cells_keep_the_last_value() -> Result<(), GridError> {
        let mut grid = Grid::with_column_names(["a", "b", "c"])?;
        let _ = grid.push_row_with(|row| {
            row.set(1, Value::from("first"));
            row.set(0, Value::Marker);
            row.set(1, Value::from("second"));
            row.set(2, Value::Marker);
            row.set(2, Value::Null);
            Ok::<(), ()>(())
        });
        grid.push_row(vec![None, None, Some(Value::from(3.0))])?;
        assert_eq!(
            grid.row(0).map(|r| r.to_vec()),
            Some(vec![Some(Value::Marker), Some(Value::from("second")), None])
        );
        assert_eq!(grid.get(1, "c"), Some(&Value::from(3.0)));
        assert_eq!(grid.get(1, "a"), None);
        let mut twice = grid.empty_like();
        twice.append_rows(grid.clone());
        twice.append_rows(grid.clone());
        assert_eq!(twice.row_count(), 4);
        assert_eq!(twice.row(3), grid.row(1));
        assert_eq!(twice.get(3, "c"), Some(&Value::from(3.0)));
        assert_eq!(twice.row_dict(2), grid.row_dict(0));
        Ok(())
    }

    #[test]
    fn column_names_are_checked() {
        assert_eq!(
            Grid::with_column_names(["a", "a"]).err(),
            Some(GridError::DuplicateColumn("a".into()))
        );
        assert!(matches!(
            Grid::with_column_names(["A"]),
            Err(GridError::InvalidColumnName(_))
        ));
        let mut dict = Dict::new();
        let _ = dict.insert_marker("other");
        let mut grid = Grid::with_column_names(["a"]).unwrap_or_default();
        assert_eq!(
            grid.push_dict(&dict),
            Err(GridError::UnknownColumn("other".into()))
        );
        let empty = Grid::default();
        assert_eq!(empty.rows().count(), 0);
    }
}
