//! The `buildwire` binary: the whole program is `buildwire_cli::run`.

/// The whole program allocates through mimalloc. glibc's allocator takes a lock on every
/// allocation and free once the process has a second thread (and it always has one: tokio,
/// or the second thread of a large Haystack decode), and it hands freed memory back to the
/// kernel early, so a program decoding one building after another paid page faults for the
/// same memory every time. mimalloc keeps per-thread free lists without locks: decoding the
/// Bravo JSON file went from 0.87 to 0.69 ms on one thread and from 0.60 to 0.45 ms on two
/// (BENCHMARKS.md, "Haystack decode").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
