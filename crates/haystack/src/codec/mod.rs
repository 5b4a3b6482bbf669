//! Wire encodings of the value model: Zinc, JSON (Hayson v4 and v3) and Trio.

use crate::value;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

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
pub const PARALLEL_MIN_BYTES: usize = 256 * 1024;

static PARALLEL_FROM: AtomicUsize = AtomicUsize::new(PARALLEL_MIN_BYTES);

/// Sets the size from which documents are decoded by two threads ([`PARALLEL_MIN_BYTES`]
/// by default). For fuzzing and tests, which split small documents this way.
#[doc(hidden)]
pub fn set_parallel_min_bytes(bytes: usize) {
    PARALLEL_FROM.store(bytes, Ordering::Relaxed);
}

/// The size from which documents are decoded by two threads.
pub(crate) fn parallel_min_bytes() -> usize {
    PARALLEL_FROM.load(Ordering::Relaxed)
}

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

/// Where a row reader stopped.
pub(crate) enum RowsEnd {
    /// At the end of the rows.
    Closed,
    /// At the first row that starts at or after the offset it was told to stop at.
    AtStop,
}

/// Parts a large grid's rows are cut into for two threads. More parts than threads let a
/// thread that starts late take fewer, but each part costs a copy when it is joined: on
/// the 2-core machine of BENCHMARKS.md, 3 and 4 parts were slower than 2 for the example
/// buildings.
pub(crate) const ROW_CHUNKS: usize = 2;

/// Rows read from a guessed row start, up to the first row start at or after a stop.
pub(crate) struct Chunk {
    /// The rows read.
    pub grid: value::Grid,
    /// Where reading stopped: a row start at or after the stop, or the end of the rows.
    pub end: usize,
    /// Whether the rows ended there.
    pub closed: bool,
}

/// Reads a grid's rows in parts on this thread and one more: `starts` holds the offset of
/// the first row and guessed row starts after it (increasing). This thread reads the
/// first part into `grid` with `read` (from a true row start, so its errors are the
/// grid's) and then, like the other thread, takes the next part not yet taken and reads
/// it with `other` into a grid of its own. The parts are then joined in order, each only
/// if the rows before it stopped exactly at its start; where they did not (a guess inside
/// a value) or a part failed, this thread reads from where the rows stopped with `read`
/// up to the next part, and reads the last rows itself if needed. So the grid, and any
/// error, are those of reading the rows in one go. Returns where the rows end.
///
/// `read(grid, from, stop)` reads rows from `from` up to the first row start at or after
/// `stop` and returns where it stopped and whether the rows ended there; `other` does the
/// same into the grid it is given, `None` on any failure.
pub(crate) fn read_chunks<E>(
    grid: &mut value::Grid,
    starts: &[usize],
    mut read: impl FnMut(&mut value::Grid, usize, usize) -> Result<(usize, bool), E>,
    other: &(impl Fn(value::Grid, usize, usize) -> Option<Chunk> + Sync),
) -> Result<usize, E> {
    use std::sync::Mutex;
    let stop = |i: usize| starts.get(i + 1).copied().unwrap_or(usize::MAX);
    let empty = grid.empty_like();
    let parts: Vec<Mutex<Option<Chunk>>> = starts.iter().map(|_| Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(1);
    let take_parts = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let (Some(&start), Some(slot)) = (starts.get(i), parts.get(i)) else {
                return;
            };
            let chunk = other(empty.empty_like(), start, stop(i));
            if let Ok(mut slot) = slot.lock() {
                *slot = chunk;
            }
        }
    };
    let first_start = starts.first().copied().unwrap_or_default();
    let (first, _) = beside(
        || {
            take_parts();
            Some(())
        },
        || {
            let first = read(grid, first_start, stop(0));
            take_parts();
            first
        },
    );
    let (mut end, mut closed) = first?;
    for (start, slot) in starts.iter().zip(&parts).skip(1) {
        if closed {
            break;
        }
        if end < *start {
            // The part before was unusable: read the rows up to this one's start.
            (end, closed) = read(grid, end, *start)?;
            if closed {
                break;
            }
        }
        let chunk = slot.lock().ok().and_then(|mut slot| slot.take());
        if let Some(chunk) = chunk.filter(|_| *start == end) {
            count_split_joined();
            grid.append_rows(chunk.grid);
            end = chunk.end;
            closed = chunk.closed;
        }
    }
    if !closed {
        (end, _) = read(grid, end, usize::MAX)?;
    }
    Ok(end)
}

/// Guessed row starts for [`read_chunks`]: `first` (a true row start), then for each
/// further part the first offset `find` accepts at or after an even share of the text
/// after `first`, kept only while they increase.
pub(crate) fn chunk_starts(
    first: usize,
    len: usize,
    find: impl Fn(usize) -> Option<usize>,
) -> Vec<usize> {
    let mut starts = vec![first];
    let share = (len - first) / ROW_CHUNKS;
    for part in 1..ROW_CHUNKS {
        let Some(at) = find(first + share * part) else {
            break;
        };
        if starts.last().is_some_and(|&last| at > last) {
            starts.push(at);
        }
    }
    starts
}

/// How many times two threads' parts of a document were joined (tests check that the
/// two-thread path is taken, not only its fallback).
#[cfg(test)]
pub(crate) static SPLITS_JOINED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);
