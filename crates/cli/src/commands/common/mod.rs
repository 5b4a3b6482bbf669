//! What every command family shares, each in a leaf module of its own so that no command
//! module imports its parent.

pub mod csv;
pub mod duration;
pub mod output;
pub mod program;
pub mod report_timer;
pub mod result;
#[allow(unsafe_code)] // signal(SIGPIPE, SIG_IGN) for long-running commands.
pub mod signals;
pub mod timestamp;
