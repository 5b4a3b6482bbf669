//! Our OPC UA server as a child process (`PROGRAM opcua serve --bind 127.0.0.1:0 ...`), for
//! the soaks that measure the server's memory apart from the client's.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Why the server process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ServerChildError {
    /// It could not be run, or its first line not read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Its standard output could not be taken.
    #[error("the server's standard output is not available")]
    NoStdout,
    /// Its first line was not `listening on ENDPOINT`.
    #[error("the server did not start: `{0}`")]
    NotStarted(String),
}

/// A server in a child process, killed when dropped.
#[derive(Debug)]
pub struct ServerChild {
    child: Child,
    /// The endpoint it printed.
    pub endpoint: String,
}

impl ServerChild {
    /// Starts `program opcua serve --bind 127.0.0.1:0 --log-level warn EXTRA...` (no line
    /// per channel and session of the measured clients) and waits for its endpoint.
    pub fn spawn(program: &Path, extra: &[String]) -> Result<Self, ServerChildError> {
        let mut child = Command::new(program)
            .args([
                "opcua",
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--log-level",
                "warn",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ServerChildError::NoStdout);
        };
        let mut server = Self {
            child,
            endpoint: String::new(),
        };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        server.endpoint = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| ServerChildError::NotStarted(line.trim().to_owned()))?
            .to_owned();
        Ok(server)
    }

    /// Its process id (for its resident memory).
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
