//! Programs a command starts: this same command line again, and the installed peers.

use std::path::PathBuf;

/// Where the peers are: `--peers`, else $BUILDWIRE_PEERS, else ./.peers.
pub fn peers_dir(given: Option<&PathBuf>) -> PathBuf {
    given.cloned().unwrap_or_else(|| {
        std::env::var_os("BUILDWIRE_PEERS").map_or_else(|| PathBuf::from(".peers"), PathBuf::from)
    })
}

/// The program to start for child processes that run this same command line (decode
/// workers, the benchmarked server): `$BUILDWIRE_PROGRAM` when set (the Python console script
/// sets it to itself, since there the running executable is the Python interpreter), else
/// this executable.
pub fn self_program() -> Result<PathBuf, String> {
    if let Some(program) = std::env::var_os("BUILDWIRE_PROGRAM").map(PathBuf::from)
        && program.is_file()
    {
        return Ok(program);
    }
    std::env::current_exe().map_err(|e| {
        format!(
            "cannot tell which program this is ({e}): set BUILDWIRE_PROGRAM to the buildwire binary"
        )
    })
}
