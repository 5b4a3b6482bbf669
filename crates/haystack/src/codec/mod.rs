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

/// Runs `second` on the decode helper thread while `first` runs on this one, and returns
/// both results; `None` from a second part that failed (a panic there, which would be a bug,
/// counts as failed: callers then decode that part themselves). Without a helper thread
/// (the system refused to start one) `second` runs here after `first`.
///
/// The helper is one thread started on first use and kept: starting a new thread per
/// document cost 25 to 55 µs before it read anything on the machine of BENCHMARKS.md (a
/// tenth of a Bravo decode), and each new thread starts with empty allocator caches.
pub(crate) fn beside<A, B: Send>(
    second: impl FnOnce() -> Option<B> + Send,
    first: impl FnOnce() -> A,
) -> (A, Option<B>) {
    let second = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(second))
            .ok()
            .flatten()
    };
    let Some(helper) = decode_helper() else {
        let first = first();
        return (first, second());
    };
    let mut other = None;
    let first = helper.in_place_scope(|scope| {
        scope.spawn(|_| other = second());
        first()
    });
    (first, other)
}

/// The one-thread pool two-thread decoding hands its second part to.
fn decode_helper() -> Option<&'static rayon::ThreadPool> {
    static HELPER: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    HELPER
        .get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .thread_name(|_| "haystack-decode".into())
                .build()
                .ok()
        })
        .as_ref()
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

/// Parts a large grid's rows are cut into for two threads. This thread takes parts from
/// the front and reads them straight into the grid; the helper takes them from the back
/// into grids of its own, joined (copied) at the end. So when the helper starts late or
/// runs slowly (its core busy with something else, as often on the virtual machines of
/// BENCHMARKS.md), this thread simply reads more of the parts, and the decode is never
/// much slower than one thread's. Two halves, each thread one, left this thread waiting
/// for a slow helper: on such runs two threads took longer than one.
pub(crate) const ROW_CHUNKS: usize = 8;

/// Which of a document's parts are taken: the calling thread takes them from the front
/// (it starts with part 0), the decode helper from the back, until they meet.
struct PartClaims {
    /// Parts before `.0` are the caller's, parts from `.1` on the helper's.
    taken: std::sync::Mutex<(usize, usize)>,
    parts: usize,
}

impl PartClaims {
    /// `parts` parts, part 0 already the caller's.
    fn new(parts: usize) -> Self {
        PartClaims {
            taken: std::sync::Mutex::new((1, parts)),
            parts,
        }
    }

    /// The caller's next part, if the helper has not taken it.
    fn front(&self) -> Option<usize> {
        let mut taken = self.taken.lock().ok()?;
        (taken.0 < taken.1).then(|| {
            taken.0 += 1;
            taken.0 - 1
        })
    }

    /// The helper's next part, from the back, if the caller has not taken it.
    fn back(&self) -> Option<usize> {
        let mut taken = self.taken.lock().ok()?;
        (taken.1 > taken.0).then(|| {
            taken.1 -= 1;
            taken.1
        })
    }

    /// The first of the helper's parts (the part count if it took none), once both stopped.
    fn helper_from(&self) -> usize {
        self.taken.lock().map_or(self.parts, |taken| taken.1)
    }

    /// In tests, the caller lets the helper take a part before it takes more itself, so
    /// that joining the helper's parts runs even on documents the caller would read alone
    /// before the helper starts (for at most a second: a helper that never comes is a
    /// path of its own).
    #[cfg(test)]
    fn wait_for_helper(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while self
            .taken
            .lock()
            .is_ok_and(|taken| taken.1 == self.parts && taken.1 > taken.0)
            && std::time::Instant::now() < deadline
        {
            std::thread::yield_now();
        }
    }
}

/// Reads `parts` parts of a document on this thread and the decode helper. This thread
/// reads part 0 and then the next parts from the front with `front(i)`, which says whether
/// to go on; the helper takes parts from the back and reads each with `back(i)` (`None`:
/// it failed). So a helper that starts late or runs slowly just gets fewer parts. Returns
/// the helper's parts in order, with their numbers, for the caller to join.
pub(crate) fn read_parts<T: Send, E>(
    parts: usize,
    mut front: impl FnMut(usize) -> Result<bool, E>,
    back: &(impl Fn(usize) -> Option<T> + Sync),
) -> Result<Vec<(usize, Option<T>)>, E> {
    use std::sync::Mutex;
    let claims = PartClaims::new(parts);
    let slots: Vec<Mutex<Option<T>>> = (0..parts).map(|_| Mutex::new(None)).collect();
    let helper = || {
        while let Some(i) = claims.back() {
            let part = back(i);
            if let Some(slot) = slots.get(i)
                && let Ok(mut slot) = slot.lock()
            {
                *slot = part;
            }
        }
        Some(())
    };
    let (mine, _) = beside(helper, || {
        if front(0)? {
            #[cfg(test)]
            claims.wait_for_helper();
            while let Some(i) = claims.front() {
                if !front(i)? {
                    break;
                }
            }
        }
        Ok(())
    });
    mine?;
    Ok(slots
        .into_iter()
        .enumerate()
        .skip(claims.helper_from())
        .map(|(i, slot)| (i, slot.into_inner().ok().flatten()))
        .collect())
}

/// Reads a grid's rows in parts ([`read_parts`]) at `starts`: the offset of the first row
/// and guessed row starts after it (increasing). This thread reads from the first row into
/// `grid` (from a true row start, so its errors are the grid's); the helper reads its parts
/// into grids of their own. Those are joined in order, each only if the rows before it
/// stopped exactly at its start; where they did not (a guess inside a value) or a part
/// failed, this thread reads from where the rows stopped up to the next part, and reads the
/// last rows itself if needed. So the grid, and any error, are those of reading the rows
/// in one go. Returns where the rows end.
///
/// `read(grid, from, stop)` reads rows from `from` up to the first row start at or after
/// `stop` (with a reader of its own) and returns where it stopped and whether the rows
/// ended there.
pub(crate) fn read_chunks<E>(
    grid: &mut value::Grid,
    starts: &[usize],
    read: &(impl Fn(&mut value::Grid, usize, usize) -> Result<(usize, bool), E> + Sync),
) -> Result<usize, E> {
    let stop = |i: usize| starts.get(i + 1).copied().unwrap_or(usize::MAX);
    let empty = grid.rows_part();
    let back = |i: usize| {
        let mut part = empty.rows_part();
        let (end, closed) = read(&mut part, *starts.get(i)?, stop(i)).ok()?;
        Some((part, end, closed))
    };
    let mut end = starts.first().copied().unwrap_or_default();
    let mut closed = false;
    let helper_parts = read_parts(
        starts.len(),
        |i| {
            (end, closed) = read(grid, end, stop(i))?;
            Ok(!closed)
        },
        &back,
    )?;
    for (i, part) in helper_parts {
        let Some(&start) = starts.get(i) else {
            break;
        };
        if closed {
            break;
        }
        if end < start {
            // The part before was unusable: read the rows up to this one's start.
            (end, closed) = read(grid, end, start)?;
            if closed {
                break;
            }
        }
        if let Some((rows, rows_end, rows_closed)) = part.filter(|_| start == end) {
            count_split_joined();
            grid.append_rows(rows);
            (end, closed) = (rows_end, rows_closed);
        }
    }
    if !closed {
        (end, _) = read(grid, end, usize::MAX)?;
    }
    Ok(end)
}

/// Guessed row starts for [`read_chunks`]: `first` (a true row start), then for each
/// further of `parts` parts the first offset `find` accepts at or after an even share of
/// the text after `first`, kept only while they increase.
pub(crate) fn chunk_starts(
    first: usize,
    len: usize,
    parts: usize,
    find: impl Fn(usize) -> Option<usize>,
) -> Vec<usize> {
    let mut starts = vec![first];
    let share = (len - first) / parts.max(1);
    for part in 1..parts {
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

#[cfg(test)]
mod tests {
    use super::beside;

    #[test]
    fn beside_runs_both_parts_on_two_threads() {
        let here = std::thread::current().id();
        let (first, second) = beside(
            || Some(std::thread::current().id()),
            || std::thread::current().id(),
        );
        assert_eq!(first, here);
        assert!(second.is_some_and(|id| id != here), "{second:?}");
        // The helper thread is kept: a second call runs on the same one.
        let (_, again) = beside(|| Some(std::thread::current().id()), || ());
        assert_eq!(again, second);
    }

    #[test]
    fn a_panic_in_the_second_part_counts_as_failed() {
        let (first, second) = beside(
            || -> Option<u8> { panic!("a bug in the second part") },
            || 7,
        );
        assert_eq!((first, second), (7, None));
        // The helper survives it.
        assert_eq!(beside(|| Some(2), || 1), (1, Some(2)));
    }
}
