//! [`Grid`]: grid meta, columns with their meta, and rows stored in one flat,
//! row-major vector of cells (one allocation for thousands of rows).

use super::dict::{InvalidTagName, is_tag_name};
use super::{Dict, Value};

/// Most cells [`Grid::reserve_rows`] reserves in one call (decoders reserve from an
/// estimate of the row count; beyond this the cell vector grows as rows arrive).
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
}

/// A Haystack grid.
///
/// Cells are `Option<Value>`: `None` is an empty cell. A `Some(Value::Null)` pushed
/// into a row is stored as `None`, since the encodings cannot tell them apart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// Grid meta (without the `ver` tag, which the codecs handle).
    pub meta: Dict,
    columns: Vec<Column>,
    cells: Vec<Option<Value>>,
    row_count: usize,
}

impl Grid {
    /// An empty grid with the given meta and columns.
    pub fn new(meta: Dict, columns: Vec<Column>) -> Result<Self, GridError> {
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
            cells: Vec::new(),
            row_count: 0,
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

    /// Appends a row; missing trailing cells are empty. A grid without columns
    /// holds no rows, so an empty row pushed to it is ignored.
    pub fn push_row(&mut self, row: Vec<Option<Value>>) -> Result<(), GridError> {
        let columns = self.columns.len();
        if row.len() > columns {
            return Err(GridError::RowTooWide {
                cells: row.len(),
                columns,
            });
        }
        let missing = columns - row.len();
        self.cells.extend(row.into_iter().map(|cell| match cell {
            Some(Value::Null) => None,
            other => other,
        }));
        self.cells.extend(std::iter::repeat_n(None, missing));
        if columns > 0 {
            self.row_count += 1;
        }
        Ok(())
    }

    /// Reserves room for `rows` more rows. It is a hint, often estimated from
    /// untrusted input, so at most [`MAX_RESERVED_CELLS`] cells are reserved at once.
    pub fn reserve_rows(&mut self, rows: usize) {
        let cells = rows.saturating_mul(self.columns.len());
        self.cells.reserve(cells.min(MAX_RESERVED_CELLS));
    }

    /// How many more rows fit without growing the cell vector.
    pub(crate) fn spare_rows(&self) -> usize {
        (self.cells.capacity() - self.cells.len()) / self.columns.len().max(1)
    }

    /// Appends a row of empty cells and returns them to be filled in place (decoders
    /// use it to avoid a temporary row). A grid without columns gets no row.
    pub(crate) fn push_empty_row(&mut self) -> &mut [Option<Value>] {
        let width = self.columns.len();
        let start = self.cells.len();
        self.cells.resize_with(start + width, || None);
        if width > 0 {
            self.row_count += 1;
        }
        self.cells.get_mut(start..).unwrap_or_default()
    }

    /// Appends a row whose cells `fill` sets one by one (decoders use it to write each
    /// cell once, in order, instead of clearing a whole row first). Cells not set are
    /// empty; the row is appended even when `fill` fails. A grid without columns gets
    /// no row.
    pub(crate) fn push_row_with<E>(
        &mut self,
        fill: impl FnOnce(&mut RowCells<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let width = self.columns.len();
        let start = self.cells.len();
        let result = fill(&mut RowCells {
            cells: &mut self.cells,
            start,
            width,
        });
        // `RowCells::set` never writes past the row, so this only pads.
        self.cells.resize_with(start + width, || None);
        if width > 0 {
            self.row_count += 1;
        }
        result
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
        self.row_count
    }

    /// The cells of row `index`.
    pub fn row(&self, index: usize) -> Option<&[Option<Value>]> {
        let width = self.columns.len();
        let start = index.checked_mul(width)?;
        self.cells
            .get(start..start.checked_add(width)?)
            .filter(|_| index < self.row_count)
    }

    /// The rows in order, each a slice of cells.
    pub fn rows(&self) -> impl Iterator<Item = &[Option<Value>]> {
        // `max(1)` keeps `chunks` valid for zero-column grids, which hold no cells.
        self.cells.chunks(self.columns.len().max(1))
    }

    /// The cell of row `row` in column `name`.
    pub fn get(&self, row: usize, name: &str) -> Option<&Value> {
        let column = self.column_index(name)?;
        self.row(row)?.get(column)?.as_ref()
    }

    /// Row `index` as a dict of its non-empty cells.
    pub fn row_dict(&self, index: usize) -> Option<Dict> {
        let row = self.row(index)?;
        let mut dict = Dict::new();
        for (column, cell) in self.columns.iter().zip(row) {
            if let Some(value) = cell {
                // Column names were validated when the grid was built.
                dict.insert(column.name.clone(), value.clone()).ok()?;
            }
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
        let width = index.len();
        grid.cells.reserve(rows.len().saturating_mul(width));
        for row in rows {
            let mut cells = vec![None; width];
            for (name, value) in row.iter() {
                if let Some(i) = index.get_index_of(name) {
                    cells[i] = Some(value.clone());
                }
            }
            grid.push_row(cells)?;
        }
        Ok(grid)
    }
}

/// The row being written by [`Grid::push_row_with`].
pub(crate) struct RowCells<'g> {
    cells: &'g mut Vec<Option<Value>>,
    start: usize,
    width: usize,
}

impl RowCells<'_> {
    /// Sets the cell of `column` (`Null` leaves it empty); false if there is no such
    /// column. Cells are cheapest set in column order: the skipped ones are written
    /// empty once, as the row grows.
    #[inline]
    pub(crate) fn set(&mut self, column: usize, value: Value) -> bool {
        if column >= self.width {
            return false;
        }
        let cell = match value {
            Value::Null => None,
            value => Some(value),
        };
        let at = self.start + column;
        if at >= self.cells.len() {
            self.cells.resize_with(at, || None);
            self.cells.push(cell);
        } else if let Some(slot) = self.cells.get_mut(at) {
            *slot = cell;
        }
        true
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
        assert_eq!(grid.row(0), Some(&[Some(Value::Str("a".into())), None][..]));
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
            grid.row(0),
            Some(&[Some(Value::Bool(true)), None, Some(Value::Marker)][..])
        );
        assert_eq!(grid.row(1), Some(&[None, Some(Value::Marker), None][..]));
        assert_eq!(grid.row(2), Some(&[None, None, None][..]));
        let mut empty = Grid::default();
        let _ = empty.push_row_with(|row| {
            assert!(!row.set(0, Value::Marker));
            Ok::<(), ()>(())
        });
        assert_eq!(empty.row_count(), 0);
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
