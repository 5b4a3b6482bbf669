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
