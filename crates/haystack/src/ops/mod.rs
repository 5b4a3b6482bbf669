//! The Haystack ops (Haystack 4 "Ops" and "HTTP API" chapters) without I/O: a request grid,
//! the op's name, the caller's role and the current time in; a response grid out.
//!
//! - [`Op`]: the standard ops by name, with their `noSideEffects` flag and the least
//!   [`Role`] allowed to call them;
//! - [`WireFormat`]: Zinc, JSON v4 and v3, Trio and CSV by MIME type, `Accept` negotiation;
//! - [`HttpRequest`] → [`Engine::handle_http`] → [`HttpResponse`]: the whole HTTP request
//!   path (URL, method, content negotiation, body decoding, limits) without sockets, so the
//!   tokio driver only moves bytes and the fuzz target drives exactly what the server runs;
//! - [`Engine`]: runs the ops on a [`crate::backends::Backend`] (the async storage
//!   interface: entities, histories, priority arrays, a broadcast channel of changes);
//! - [`WatchRegistry`]: watches, their leases and what changed since the last poll;
//! - [`HisRange`]: the `hisRead` range forms, resolved in the point's timezone (and
//!   `Rollup::parse`, the rollup's `interval` and `fold` cells);
//! - [`ActionRegistry`]: the hook `invokeAction` calls;
//! - [`ws`]: the WebSocket envelope, the one wire type the server, the client and the
//!   benchmark read and write (bounded decoding, typed errors).
//!
//! The caller's role is checked once per request, before the op runs; `close` ends the
//! caller's session in the engine, so HTTP and WebSocket share it. Failures after the
//! request grid was read are error grids ([`error_grid`]); only requests that cannot be
//! read get HTTP error statuses.

mod action;
mod cache;
mod engine;
mod entities;
mod format;
pub mod fuzz;
mod his;
mod point_write;
mod request;
mod rollup;
mod snapshot;
mod time;
mod watch;
pub mod ws;

use crate::auth::Role;
use crate::backends::BackendError;
use crate::value::{Dict, Grid, Value};

pub use action::{ActionError, ActionFn, ActionRegistry, ActionTable, NoActions};
pub use engine::{CallContext, Engine, Limits, ServerInfo};
pub use format::{WireFormat, negotiate_accept};
pub use his::{HisRange, parse_range};
pub use request::{
    HttpError, HttpRequest, HttpResponse, MAX_QUERY_PARAMS, QueryError, query_to_grid,
};
pub use snapshot::SnapshotError;
pub use time::{datetime_at, local_midnight, utc_millis};
pub use watch::{Watch, WatchRegistry};

/// The standard ops (and `formats`, the Haystack 3 name of `filetypes`, and `commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Server information.
    About,
    /// Ends the caller's session.
    Close,
    /// Defs of the namespace.
    Defs,
    /// Lib defs.
    Libs,
    /// Op defs.
    Ops,
    /// Filetype defs.
    Filetypes,
    /// The Haystack 3 `formats` op: MIME types the server reads and writes.
    Formats,
    /// Entities by filter or by id.
    Read,
    /// The site → equip → point tree.
    Nav,
    /// Opens a watch or adds ids to one.
    WatchSub,
    /// Removes ids from a watch or closes it.
    WatchUnsub,
    /// What changed in a watch since the last poll.
    WatchPoll,
    /// Reads or writes a writable point's priority array.
    PointWrite,
    /// Reads a point's history.
    HisRead,
    /// Writes history samples.
    HisWrite,
    /// Runs an action on an entity.
    InvokeAction,
    /// Adds, updates or removes entities (SkySpark's `commit`, admin only).
    Commit,
}

impl Op {
    /// Every op, in the order `ops` lists them.
    pub const ALL: [Op; 17] = [
        Op::About,
        Op::Close,
        Op::Defs,
        Op::Libs,
        Op::Ops,
        Op::Filetypes,
        Op::Formats,
        Op::Read,
        Op::Nav,
        Op::WatchSub,
        Op::WatchUnsub,
        Op::WatchPoll,
        Op::PointWrite,
        Op::HisRead,
        Op::HisWrite,
        Op::InvokeAction,
        Op::Commit,
    ];

    /// The op's name in URLs and WebSocket envelopes.
    pub const fn name(self) -> &'static str {
        match self {
            Op::About => "about",
            Op::Close => "close",
            Op::Defs => "defs",
            Op::Libs => "libs",
            Op::Ops => "ops",
            Op::Filetypes => "filetypes",
            Op::Formats => "formats",
            Op::Read => "read",
            Op::Nav => "nav",
            Op::WatchSub => "watchSub",
            Op::WatchUnsub => "watchUnsub",
            Op::WatchPoll => "watchPoll",
            Op::PointWrite => "pointWrite",
            Op::HisRead => "hisRead",
            Op::HisWrite => "hisWrite",
            Op::InvokeAction => "invokeAction",
            Op::Commit => "commit",
        }
    }

    /// The op of a name (case-sensitive, as the spec's op names are).
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether the op is tagged `noSideEffects` (callable with HTTP GET). `close` is not, so
    /// it needs POST like every op with side effects, as the `ops` grid says (haystack-py's
    /// client sends it with GET and ignores the 405).
    pub const fn no_side_effects(self) -> bool {
        matches!(
            self,
            Op::About
                | Op::Defs
                | Op::Libs
                | Op::Ops
                | Op::Filetypes
                | Op::Formats
                | Op::Read
                | Op::Nav
                | Op::HisRead
        )
    }

    /// Whether an HTTP GET (or HEAD) may call the op.
    pub const fn allows_get(self) -> bool {
        self.no_side_effects()
    }

    /// The least role that may call the op with this request: viewers read (including a
    /// point's priority array, a `pointWrite` with only `id`), operators also command
    /// points, write histories and invoke actions, admins also commit.
    pub fn required_role(self, request: &Grid) -> Role {
        match self {
            Op::PointWrite if !point_write::is_write_request(request) => Role::Viewer,
            Op::PointWrite | Op::HisWrite | Op::InvokeAction => Role::Operator,
            Op::Commit => Role::Admin,
            _ => Role::Viewer,
        }
    }

    /// Whether a response to this op depends only on the request and the stored data (so an
    /// encoded response may be reused until the data changes).
    pub const fn is_cacheable(self) -> bool {
        matches!(
            self,
            Op::Defs | Op::Libs | Op::Ops | Op::Filetypes | Op::Formats | Op::Read | Op::Nav
        )
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an op failed once its request was read: becomes an error grid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{dis}")]
pub struct OpError {
    /// The human-readable message (`dis`).
    pub dis: String,
    /// The error's kind and context (`errTrace`), when there is more to say.
    pub trace: Option<String>,
}

impl OpError {
    /// An error with a message.
    pub fn new(dis: impl Into<String>) -> Self {
        Self {
            dis: dis.into(),
            trace: None,
        }
    }

    /// An error with a message and a trace.
    pub fn with_trace(dis: impl Into<String>, trace: impl Into<String>) -> Self {
        Self {
            dis: dis.into(),
            trace: Some(trace.into()),
        }
    }

    /// The error grid.
    pub fn to_grid(&self) -> Grid {
        error_grid(&self.dis, self.trace.as_deref())
    }
}

impl From<BackendError> for OpError {
    fn from(e: BackendError) -> Self {
        OpError::with_trace(e.to_string(), format!("{e:?}"))
    }
}

/// An error grid: meta `err`, `dis` and (when given) `errTrace`, no columns.
pub fn error_grid(dis: &str, trace: Option<&str>) -> Grid {
    let mut meta = Dict::new();
    // The names are valid tag names, so the inserts cannot fail.
    let _ = meta.insert_marker("err");
    let _ = meta.insert("dis", Value::Str(dis.to_owned()));
    if let Some(trace) = trace {
        let _ = meta.insert("errTrace", Value::Str(trace.to_owned()));
    }
    let mut grid = Grid::default();
    grid.meta = meta;
    grid
}

/// Whether a grid is an error grid (meta `err`).
pub fn is_error_grid(grid: &Grid) -> bool {
    grid.meta.contains("err")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_round_trip_and_flags() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
        assert_eq!(Op::from_name("Read"), None);
        assert!(Op::Read.no_side_effects() && Op::HisRead.allows_get());
        assert!(!Op::PointWrite.allows_get() && !Op::WatchPoll.allows_get());
        assert!(!Op::Close.allows_get() && !Op::Close.no_side_effects());
        assert_eq!(Op::HisWrite.required_role(&Grid::default()), Role::Operator);
        assert_eq!(Op::Commit.required_role(&Grid::default()), Role::Admin);
        assert_eq!(Op::Read.required_role(&Grid::default()), Role::Viewer);
    }

    #[test]
    fn error_grids_carry_err_dis_and_trace() {
        let grid = OpError::with_trace("bad", "trace").to_grid();
        assert!(is_error_grid(&grid));
        assert_eq!(grid.meta.get("dis"), Some(&Value::Str("bad".into())));
        assert_eq!(grid.meta.get("errTrace"), Some(&Value::Str("trace".into())));
        assert_eq!(
            crate::codec::zinc::encode_grid(&grid),
            "ver:\"3.0\" err dis:\"bad\" errTrace:\"trace\"\nempty\n"
        );
    }
}
