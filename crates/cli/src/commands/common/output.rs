//! How a benchmark prints: the table for people and, with `--json`, the report for scripts.

use crate::commands::common::result::CommandResult;

/// The table on stdout; with `json`, the table on stderr and the JSON report on stdout.
pub fn print_table_and_report(
    table: &str,
    report: &serde_json::Value,
    json: bool,
) -> CommandResult {
    if json {
        eprint!("{table}");
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{table}");
    }
    Ok(())
}

/// `println!` for long-running commands: a reader of stdout that went away (`serve | head
/// -1`, a supervisor that stopped reading) must not stop a server, so the line is written
/// and a failed write ignored (`println!` would panic; SIGPIPE is ignored while serving,
/// see `signals::StopSignals::listen`).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
