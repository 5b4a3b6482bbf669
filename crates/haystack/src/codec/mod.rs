//! Wire encodings of the value model: Zinc, JSON (Hayson v4 and v3) and Trio.

use crate::value;
use std::sync::atomic::{AtomicU8, Ordering};

pub mod csv;
mod error;
mod format;
pub mod json;
pub mod trio;
pub mod zinc;

pub use error::{DecodeError, DecodeErrorKind, Location};
pub use format::Format;

/// Deepest nesting of lists, dicts and grids any decoder accepts.
pub const MAX_DEPTH: usize = 64;

/// Largest input (in bytes) any decoder accepts.
pub const MAX_INPUT_BYTES: usize = 256 * 1024 * 1024;

/// Most columns a decoded grid may have.
pub const MAX_COLUMNS: usize = 16 * 1024;

static PARALLEL_DECODE: AtomicU8 = AtomicU8::new(PARALLEL_UNKNOWN);
const PARALLEL_UNKNOWN: u8 = 0;
const PARALLEL_OFF: u8 = 1;
const PARALLEL_ON: u8 = 2;

/// Whether the decoders may read a large document with two threads (the default when the
/// machine has more than one core): JSON rows arrays, Zinc rows and Trio records of
/// 256 KiB or more are split in two at a guessed boundary that the first thread then
/// confirms. The result, and any error, is the same either way; only the time differs.
///
/// ```
/// use buildwire_haystack::codec::{Format, set_parallel_decode};
/// set_parallel_decode(false);
/// let grid = Format::Zinc.decode_grid("ver:\"3.0\"\na\n1\n")?;
/// assert_eq!(grid.row_count(), 1);
/// # Ok::<(), buildwire_haystack::codec::DecodeError>(())
/// ```
pub fn set_parallel_decode(enabled: bool) {
    let state = if enabled { PARALLEL_ON } else { PARALLEL_OFF };
    PARALLEL_DECODE.store(state, Ordering::Relaxed);
}

/// Whether two-thread decoding is on (see [`set_parallel_decode`]).
pub(crate) fn parallel_decode() -> bool {
    match PARALLEL_DECODE.load(Ordering::Relaxed) {
        PARALLEL_ON => true,
        PARALLEL_OFF => false,
        _ => {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            set_parallel_decode(cores > 1);
            cores > 1
        }
    }
}

/// Documents (or the part of one left after its header) at least this long are decoded
/// by two threads when [`parallel_decode`] allows it; shorter ones are not worth a thread.
pub(crate) const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// Runs `second` on a new thread while `first` runs on this one, and returns both
/// results; `None` from a second part that failed (a panic there, which would be a bug,
/// counts as failed: callers then decode that part themselves).
pub(crate) fn beside<A, B: Send>(
    second: impl FnOnce() -> Option<B> + Send,
    first: impl FnOnce() -> A,
) -> (A, Option<B>) {
    std::thread::scope(|scope| {
        let handle = scope.spawn(second);
        let first = first();
        (first, handle.join().ok().flatten())
    })
}

/// Counts a join of two threads' parts (tests check that the joined path is taken).
#[inline]
pub(crate) fn count_split_joined() {
    #[cfg(test)]
    SPLITS_JOINED.fetch_add(1, Ordering::Relaxed);
}

/// Where a row reader split between two threads stopped.
pub(crate) enum RowsEnd {
    /// At the end of the rows.
    Closed,
    /// At a row that starts at the offset the reader was told to stop at.
    AtStop,
}

/// What the first thread does next after [`beside`] read a grid's rows in two parts.
pub(crate) enum Joined {
    /// The rows are complete.
    Done,
    /// The second part was appended; go on from this offset.
    At(usize),
    /// The second part is unusable (wrong guess, or it failed): read on alone.
    ReadOn,
}

/// Joins the second thread's rows (and where it ended) to `grid` when the first thread
/// stopped exactly where the second began.
pub(crate) fn join_rows(
    grid: &mut value::Grid,
    first: RowsEnd,
    second: Option<(value::Grid, usize)>,
) -> Joined {
    match (first, second) {
        (RowsEnd::AtStop, Some((part, end))) => {
            count_split_joined();
            grid.append_rows(part);
            Joined::At(end)
        }
        (RowsEnd::AtStop, None) => Joined::ReadOn,
        (RowsEnd::Closed, _) => Joined::Done,
    }
}

/// How many times two threads' parts of a document were joined (tests check that the
/// two-thread path is taken, not only its fallback).
#[cfg(test)]
pub(crate) static SPLITS_JOINED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
