//! The result type of every command.

/// Errors of a command, printed as `error: ...` with a hint of what to do next.
pub type CommandResult = Result<(), Box<dyn std::error::Error>>;
