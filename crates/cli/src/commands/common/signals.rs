//! Signal dispositions of long-running commands.

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
