//! Signals of long-running commands: SIGPIPE's disposition, and how a server stops.
//!
//! Every long-running command (the `serve` commands, routers, BBMDs, hubs) listens for
//! [`StopSignals`] before it says it is serving and then waits in [`wait_for_stop`]: SIGINT
//! (Ctrl-C in a terminal) and SIGTERM (how systemd, container runtimes and orchestrators
//! stop a service) are treated alike. The command then stops accepting, lets requests in
//! flight finish, flushes what it keeps (snapshots), closes its sessions, and returns
//! [`stopped`]'s result. From the first signal on, a second signal, or a shutdown that takes
//! too long, ends the process at once.
//!
//! Exit status after a clean stop (docs/conventions.md): 0 after SIGTERM, a service
//! manager's normal stop; 130 after SIGINT, the shell's status for an interrupted command,
//! as for every other command interrupted with Ctrl-C.

use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// `main` restores the default SIGPIPE so that `buildwire ... | head` ends quietly. Long-running
/// commands undo that: a write to a WebSocket whose peer just closed (a BACnet/SC node
/// disconnecting) must be an error on that connection, and a server whose stdout reader went
/// away (`serve | head -1`) must go on serving.
pub fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition has no memory effects; SIG_IGN needs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// How long a server may take to stop after the first signal before the process exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The signal that asked a command to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT: Ctrl-C in a terminal.
    Interrupt,
    /// SIGTERM: a service manager's stop.
    Terminate,
}

impl StopSignal {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }

    /// The exit status of a process this signal ended at once: 128 + the signal's number.
    fn immediate_status(self) -> i32 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }
}

/// A command stopped by Ctrl-C: [`crate::run`] exits with status 130 and prints nothing more.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// SIGINT and SIGTERM, listened for from [`StopSignals::listen`] on.
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl StopSignals {
    /// Starts listening, inside the runtime. Call it before the command says it is serving,
    /// so that a stop sent as soon as it says so is not lost (before this, the signals end
    /// the process as usual).
    /// It also ignores SIGPIPE from then on: a long-running command outlives the reader of
    /// its stdout (see [`ignore_sigpipe`]).
    pub fn listen() -> std::io::Result<Self> {
        ignore_sigpipe();
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next SIGINT or SIGTERM.
    pub async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
        }
    }
}

/// Waits for a stop signal, says on stderr what the stop will do, and from then on bounds
/// the shutdown: a second SIGINT or SIGTERM ends the process at once (status 130 or 143),
/// and so does a shutdown still running after [`SHUTDOWN_GRACE`] (status 1).
pub async fn wait_for_stop(mut signals: StopSignals, what_happens: &str) -> StopSignal {
    let first = signals.next().await;
    eprintln!("{}: stopping ({what_happens})", first.name());
    tokio::spawn(async move {
        let second = signals.next().await;
        eprintln!("{} during shutdown: exiting now", second.name());
        std::process::exit(second.immediate_status());
    });
    // A thread of its own, so that it fires even if the runtime is stuck.
    std::thread::spawn(move || {
        std::thread::sleep(SHUTDOWN_GRACE);
        eprintln!(
            "shutdown after {} took longer than {} s: exiting now",
            first.name(),
            SHUTDOWN_GRACE.as_secs()
        );
        std::process::exit(1);
    });
    first
}

/// The result of a command that stopped cleanly after `signal`: `Ok` after SIGTERM,
/// [`Interrupted`] (exit status 130) after Ctrl-C.
pub fn stopped(signal: StopSignal) -> Result<(), Box<dyn std::error::Error>> {
    match signal {
        StopSignal::Terminate => Ok(()),
        StopSignal::Interrupt => Err(Box::new(Interrupted)),
    }
}
