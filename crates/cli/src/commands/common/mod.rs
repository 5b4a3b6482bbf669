//! What every command family shares, each in a leaf module of its own so that no command
//! module imports its parent.

pub mod config_file;
pub mod csv;
pub mod duration;
pub mod output;
pub mod program;
pub mod report_timer;
pub mod result;
pub mod secrets;
pub mod service;
#[allow(unsafe_code)] // signal(SIGPIPE, SIG_IGN) for long-running commands.
pub mod signals;
pub mod timestamp;
