//! CSV export of grids.
