//! Stress servers in their own processes: buildwire's (`--processes`) and the peers'
//! launchers (crates/bench/peers/bacnet_stress_*.py). A launcher prints `ready PORT` once
//! it serves and answers each `count` line on its stdin with `executed N`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The launcher of the stress server on BACpypes3 (Python 3.11).
pub const BACPYPES3_SCRIPT: &str = include_str!("../../peers/bacnet_stress_bacpypes3.py");
/// The launcher of the stress server on bac-py (Python 3.13).
pub const BACPY_SCRIPT: &str = include_str!("../../peers/bacnet_stress_bacpy.py");
/// The launcher of bac-py's BACnet/SC hub and echo nodes (Python 3.13).
pub const BACPY_SC_SCRIPT: &str = include_str!("../../peers/bacnet_sc_bacpy.py");
/// The launcher of the stress server on rusty-bacnet (Python 3.11 wheel).
pub const RUSTY_SCRIPT: &str = include_str!("../../peers/bacnet_stress_rusty.py");

/// A peer: its name, the Python of `scripts/peers.sh` it needs, its launcher.
#[derive(Clone, Copy, Debug)]
pub struct PeerKind {
    /// Name in reports.
    pub name: &'static str,
    /// The venv under the peers folder (`py311`, `py313`).
    pub venv: &'static str,
    /// The launcher's text.
    pub script: &'static str,
}

/// Every peer, in the order `compare` runs them.
pub const PEERS: [PeerKind; 3] = [
    PeerKind {
        name: "rusty-bacnet",
        venv: "py311",
        script: RUSTY_SCRIPT,
    },
    PeerKind {
        name: "bacpypes3",
        venv: "py311",
        script: BACPYPES3_SCRIPT,
    },
    PeerKind {
        name: "bac-py",
        venv: "py313",
        script: BACPY_SCRIPT,
    },
];

/// Why a launcher process (ours or a peer's) could not be started.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The program could not be run.
    #[error("cannot start {what}: {source}")]
    Spawn {
        /// What was started.
        what: String,
        /// Why not.
        source: std::io::Error,
    },
    /// Its stdin or stdout could not be taken.
    #[error("{what}: no pipes to talk to it")]
    NoPipes {
        /// What was started.
        what: String,
    },
    /// It ended before it printed `ready ...`.
    #[error("{what} stopped before it was ready (its errors are above)")]
    NotReady {
        /// What was started.
        what: String,
    },
    /// Its `ready` line did not name a port.
    #[error("{what}: bad line \"ready {line}\"")]
    BadReadyLine {
        /// What was started.
        what: String,
        /// The rest of the line after `ready `.
        line: String,
    },
    /// The peers folder has no Python for the launcher.
    #[error("{} is missing: run scripts/peers.sh {venv}", python.display())]
    MissingPython {
        /// The Python that was looked for.
        python: std::path::PathBuf,
        /// The peers folder's venv it belongs to.
        venv: String,
    },
    /// The launcher script could not be written to the temporary folder.
    #[error("{0}")]
    Script(#[from] std::io::Error),
}

/// A stress server running in a child process.
pub struct StressProcess {
    child: Child,
    io: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
    /// The UDP port it serves on 127.0.0.1.
    pub port: u16,
}

impl std::fmt::Debug for StressProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StressProcess")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl StressProcess {
    /// Starts `command` (which speaks the launcher protocol) and waits for `ready PORT`.
    pub fn start(command: Command, what: &str) -> Result<Self, PeerError> {
        let (mut process, ready) = Self::start_any(command, what)?;
        process.port = ready.parse().map_err(|_| PeerError::BadReadyLine {
            what: what.to_owned(),
            line: ready.clone(),
        })?;
        Ok(process)
    }

    /// Starts `command` and waits for its `ready ...` line; returns the process (port 0)
    /// and the rest of that line (a process that serves no port of its own says
    /// `ready 0`).
    pub fn start_any(mut command: Command, what: &str) -> Result<(Self, String), PeerError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().map_err(|source| PeerError::Spawn {
            what: what.to_owned(),
            source,
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(PeerError::NoPipes {
                what: what.to_owned(),
            });
        };
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match stdout.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(PeerError::NotReady {
                        what: what.to_owned(),
                    });
                }
                Ok(_) => {
                    if let Some(rest) = line.trim().strip_prefix("ready ") {
                        let rest = rest.to_owned();
                        return Ok((
                            Self {
                                child,
                                io: Mutex::new((stdin, stdout)),
                                port: 0,
                            },
                            rest,
                        ));
                    }
                }
            }
        }
    }

    /// Starts a peer's launcher from the peers folder on `port`.
    pub fn start_peer(peer: PeerKind, peers_dir: &Path, port: u16) -> Result<Self, PeerError> {
        // Not named like the peer's package, which the script imports.
        let file = format!("stress_{}.py", peer.name.replace('-', "_"));
        let mut command = script_command(peer.venv, peer.script, &file, peers_dir)?;
        command.args(["--port", &port.to_string()]);
        Self::start(command, peer.name)
    }

    /// Resident memory of the server process (Linux), MiB.
    pub fn resident_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }

    /// Confirmed requests the server executed so far.
    pub fn executed(&self) -> Option<u64> {
        let mut io = self.io.lock().ok()?;
        let (stdin, stdout) = &mut *io;
        stdin.write_all(b"count\n").ok()?;
        stdin.flush().ok()?;
        let mut line = String::new();
        stdout.read_line(&mut line).ok()?;
        line.trim().strip_prefix("executed ")?.parse().ok()
    }
}

impl Drop for StressProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `PYTHON SCRIPT` for a launcher: the Python of the peers folder's venv `venv` and the
/// launcher's text written as `file_name` into a temporary folder of this process.
pub fn script_command(
    venv: &str,
    script: &str,
    file_name: &str,
    peers_dir: &Path,
) -> Result<Command, PeerError> {
    let python = peers_dir.join(venv).join("bin/python");
    if !python.is_file() {
        return Err(PeerError::MissingPython {
            python,
            venv: venv.to_owned(),
        });
    }
    let dir = std::env::temp_dir().join(format!("buildwire-bench-bacnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(file_name);
    std::fs::write(&path, script)?;
    let mut command = Command::new(python);
    command.arg(path);
    Ok(command)
}

/// Waits a little for a server process to settle before load starts.
pub const SETTLE: Duration = Duration::from_millis(300);
