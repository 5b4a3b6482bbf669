//! `buildwire` as a child process in the tests of the command line: start it, read its
//! stdout line by line, and kill it when the test ends.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};

/// A command that is killed if the test ends before it does.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `buildwire ARGS`; its stdout line by line (stderr is the test's).
pub fn spawn(args: &[&str]) -> (Running, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("buildwire starts");
    let stdout = child.stdout.take().expect("stdout");
    (Running(child), BufReader::new(stdout).lines())
}

/// Starts `buildwire ARGS` and waits for its first line on stdout (a server serves then).
/// The rest of stdout is read and dropped, so that a line the command prints later does not
/// end it with SIGPIPE.
pub fn start(args: &[&str]) -> (Running, String) {
    let (running, mut lines) = spawn(args);
    let line = lines
        .next()
        .unwrap_or_else(|| panic!("{args:?} printed nothing"))
        .expect("readable stdout");
    std::thread::spawn(move || lines.for_each(drop));
    (running, line)
}

/// The address after " on " in a server's first line (`... on 127.0.0.1:PORT (Ctrl-C
/// stops)`, `listening on opc.tcp://...`).
pub fn served_at(first: &str) -> String {
    let rest = first
        .rsplit_once(" on ")
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .1;
    rest.split_whitespace()
        .next()
        .expect("an address")
        .to_owned()
}

/// Runs `buildwire ARGS` to its end; its stdout, which must be a success.
pub fn output(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(args)
        .output()
        .expect("buildwire runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}
