//! Secrets kept off the command line (where `ps` shows them): files of users read at
//! start-up. (Environment variables are clap's `env` on the option itself.)

use std::path::Path;

/// The users of a `--user-password-file`: one entry per line, in the format of the
/// command's `--user` option; blank lines and lines starting with `#` are skipped.
pub fn user_lines(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the user file {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect())
}
