//! `--profile FILE.svg`: a CPU flame graph of the benchmark process, sampled with SIGPROF
//! (pprof) while the workload runs, so a target that is missed can say where the time went.
//!
//! The in-process server and the clients share the process's threads: the server's frames
//! are the ones under `buildwire_bacnet::driver` server and router tasks, the clients' under
//! the benchmark's workers. Samples are taken 499 times a second per thread, which costs a
//! few percent of throughput; numbers from a profiled run are not recorded as results.

use std::fs::File;
use std::path::Path;

/// Samples per second of CPU time.
const FREQUENCY: i32 = 499;

/// Why a profile could not be taken or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The sampler could not start or its report could not be built.
    #[error("CPU profiler: {0}; run without --profile, or check that SIGPROF is not blocked")]
    Sampler(String),
    /// The SVG could not be written.
    #[error("cannot write the flame graph to {path}: {source}")]
    Write {
        /// The file asked for.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// A running CPU profile of this process.
pub struct CpuProfile {
    guard: pprof::ProfilerGuard<'static>,
}

impl std::fmt::Debug for CpuProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuProfile").finish_non_exhaustive()
    }
}

impl CpuProfile {
    /// Starts sampling every thread of the process.
    pub fn start() -> Result<Self, ProfileError> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(FREQUENCY)
            // Not blocklisted: libc, where the socket calls spend their time, must stay in.
            .blocklist(&["vdso"])
            .build()
            .map_err(|e| ProfileError::Sampler(e.to_string()))?;
        Ok(CpuProfile { guard })
    }

    /// Stops sampling and writes the flame graph (SVG) to `path`; returns the number of
    /// samples in it.
    pub fn write_flame_graph(self, path: &Path) -> Result<usize, ProfileError> {
        let report = self
            .guard
            .report()
            .build()
            .map_err(|e| ProfileError::Sampler(e.to_string()))?;
        let samples = report.data.values().map(|&n| n.max(0) as usize).sum();
        let file = File::create(path).map_err(|source| ProfileError::Write {
            path: path.display().to_string(),
            source,
        })?;
        report
            .flamegraph(file)
            .map_err(|e| ProfileError::Sampler(e.to_string()))?;
        Ok(samples)
    }
}
