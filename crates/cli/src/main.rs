//! The `buildwire` binary: the whole program is `buildwire_cli::run`.

fn main() {
    restore_default_sigpipe();
    std::process::exit(buildwire_cli::run(std::env::args().collect()));
}

/// Rust ignores SIGPIPE, so writing to a closed pipe (`buildwire ... | head`) would turn into
/// an error message; like other command-line tools, end quietly instead.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: setting a signal disposition to SIG_DFL at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}
