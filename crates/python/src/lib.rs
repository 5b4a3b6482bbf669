//! The `buildwire._native` extension module: thin PyO3 wrappers over the Rust crates.
//!
//! Protocol logic never lives here; each function converts arguments, calls the Rust API
//! one to one and converts the result. The Pythonic layer (names, docstrings, type stubs) is
//! in `python/buildwire/`.

use pyo3::prelude::*;

/// Runs the `buildwire` command line with `argv` (program name first) and returns its exit
/// status. The GIL is released while the command runs.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| buildwire_cli::run(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}
