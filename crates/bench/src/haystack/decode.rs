//! `buildwire bench haystack decode`: decode times of the example buildings in every format,
//! ours beside the independent decoders, each decoder in its own process so that peak memory
//! (the child's maximum resident set) is measured the same way for all of them.
//!
//! Decoders: buildwire and libhaystack run in a child `buildwire bench haystack decode-worker`;
//! haystack-core runs under node and haystack-py under Python 3.13, both from the peers that
//! `scripts/peers.sh` installs (skipped, with the reason, when not installed).
//!
//! Every decoder is timed the same way: from the file's bytes in memory (UTF-8 check or
//! decoding included) to a grid whose every value is decoded (haystack-core keeps Hayson
//! rows as parsed JSON until read, so its script reads them all inside the timed part), and
//! without freeing the previous iteration's grid inside the timed part (except for node's
//! garbage collector, which runs when it decides).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use buildwire_haystack::codec::Format;
use serde::{Deserialize, Serialize};

/// The haystack-core timing script, embedded so the binary needs no source tree.
const HAYSTACK_CORE_SCRIPT: &str = include_str!("../../peers/haystack_core_decode.mjs");
/// The haystack-py timing script.
const HAYSTACK_PY_SCRIPT: &str = include_str!("../../peers/haystack_py_decode.py");

/// A decoder under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decoder {
    /// This project.
    Buildwire,
    /// This project with two-thread decoding turned off (large documents are otherwise
    /// split between two threads; the peers use one).
    #[serde(rename = "buildwire-1t")]
    BuildwireOneThread,
    /// The Rust crate libhaystack.
    Libhaystack,
    /// The npm package haystack-core.
    HaystackCore,
    /// The Python package haystack-py.
    HaystackPy,
}

impl Decoder {
    /// All decoders, ours first.
    pub const ALL: [Decoder; 5] = [
        Decoder::Buildwire,
        Decoder::BuildwireOneThread,
        Decoder::Libhaystack,
        Decoder::HaystackCore,
        Decoder::HaystackPy,
    ];

    /// The name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Decoder::Buildwire => "buildwire",
            Decoder::BuildwireOneThread => "buildwire-1t",
            Decoder::Libhaystack => "libhaystack",
            Decoder::HaystackCore => "haystack-core",
            Decoder::HaystackPy => "haystack-py",
        }
    }
}

/// What one child reports.
#[derive(Debug, Deserialize)]
struct WorkerOutput {
    rows: Option<usize>,
    ms: Option<Vec<f64>>,
    encode_ms: Option<Vec<f64>>,
    error: Option<String>,
}

/// One measured (file, decoder) pair.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DecodeResult {
    /// File name, e.g. `alpha.zinc`.
    pub file: String,
    /// Format name.
    pub format: String,
    /// Decoder name.
    pub decoder: String,
    /// Rows decoded (checked against the expected count).
    pub rows: Option<usize>,
    /// Median decode time, ms (first iteration excluded as warm-up when there are several).
    pub median_ms: Option<f64>,
    /// Fastest decode, ms.
    pub min_ms: Option<f64>,
    /// Median encode time back to the same format, ms (ours only).
    pub encode_median_ms: Option<f64>,
    /// Peak resident memory of the decoding process, MiB (includes the runtime's baseline;
    /// the largest over the rounds).
    pub peak_rss_mib: Option<f64>,
    /// With several rounds: each round's median decode time, ms, in round order
    /// (`median_ms` is their median).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_medians_ms: Vec<f64>,
    /// Why there is no number: a decode failure, a wrong row count, or a missing peer.
    pub error: Option<String>,
}

/// Options of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DecodeConfig {
    /// Folder with alpha.* and bravo.*.
    pub data_dir: PathBuf,
    /// Decode iterations per (file, decoder) and round.
    pub iterations: usize,
    /// Rounds: the whole sequence of files and decoders is run this many times, one round
    /// after the other, so that a noisy minute of the machine falls on every decoder alike.
    #[serde(default = "one_round")]
    pub rounds: usize,
    /// Where scripts/peers.sh installed the peers.
    pub peers_dir: PathBuf,
    /// How to start `buildwire` for the in-house worker (the running program).
    pub worker_program: PathBuf,
    /// Decoders to run.
    pub decoders: Vec<Decoder>,
}

/// The files measured and their expected row counts.
pub const FILES: [(&str, usize); 6] = [
    ("alpha.zinc", 2032),
    ("alpha.json", 2032),
    ("alpha.trio", 2032),
    ("bravo.zinc", 1077),
    ("bravo.json", 1077),
    ("bravo.trio", 1077),
];

fn one_round() -> usize {
    1
}

/// One round's numbers for one (file, decoder).
#[derive(Default)]
struct RoundResult {
    rows: Option<usize>,
    median_ms: Option<f64>,
    min_ms: Option<f64>,
    encode_median_ms: Option<f64>,
    peak_rss_mib: Option<f64>,
    error: Option<String>,
}

/// Runs every decoder on every file, `config.rounds` times over; `progress` is told what
/// runs next. Each result combines the rounds: the median of the round medians, the
/// fastest decode of any round, the largest peak RSS, the first error.
pub fn run(config: &DecodeConfig, progress: &dyn Fn(&str)) -> Vec<DecodeResult> {
    let scripts = match write_scripts() {
        Ok(dir) => Some(dir),
        Err(e) => {
            progress(&format!("cannot write peer scripts: {e}"));
            None
        }
    };
    let rounds = config.rounds.max(1);
    let pairs: Vec<(&str, usize, Decoder)> = FILES
        .iter()
        .flat_map(|&(file, rows)| config.decoders.iter().map(move |&d| (file, rows, d)))
        .collect();
    let mut measured: Vec<Vec<RoundResult>> = pairs.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        for ((file, expected_rows, decoder), runs) in pairs.iter().zip(&mut measured) {
            let what = format!("{file}: {}", decoder.name());
            if rounds > 1 {
                progress(&format!("round {round}/{rounds}: {what}"));
            } else {
                progress(&what);
            }
            let path = config.data_dir.join(file);
            let command = scripts
                .as_deref()
                .ok_or(WorkerError::NoScripts)
                .and_then(|dir| worker_command(config, *decoder, &path, dir));
            runs.push(match command.and_then(run_child) {
                Ok((out, rss)) => measure(out, rss, *expected_rows),
                Err(e) => RoundResult {
                    error: Some(e.to_string()),
                    ..RoundResult::default()
                },
            });
        }
    }
    pairs
        .iter()
        .zip(measured)
        .map(|(&(file, _, decoder), runs)| combine(file, decoder, &runs))
        .collect()
}

fn measure(out: WorkerOutput, rss_kib: u64, expected_rows: usize) -> RoundResult {
    let mut result = RoundResult {
        rows: out.rows,
        peak_rss_mib: Some(rss_kib as f64 / 1024.0),
        error: out.error,
        ..RoundResult::default()
    };
    if result.error.is_some() {
        return result;
    }
    if out.rows != Some(expected_rows) {
        result.error = Some(format!(
            "decoded {:?} rows, expected {expected_rows}",
            out.rows
        ));
        return result;
    }
    (result.median_ms, result.min_ms) = summarize(out.ms.unwrap_or_default());
    result.encode_median_ms = summarize(out.encode_ms.unwrap_or_default()).0;
    result
}

/// One result from the rounds of one (file, decoder).
fn combine(file: &str, decoder: Decoder, runs: &[RoundResult]) -> DecodeResult {
    let median_of = |values: Vec<f64>| summarize_all(values).0;
    let round_medians: Vec<f64> = runs.iter().filter_map(|r| r.median_ms).collect();
    let error = runs.iter().enumerate().find_map(|(i, r)| {
        r.error.as_ref().map(|e| {
            if runs.len() > 1 {
                format!("round {}: {e}", i + 1)
            } else {
                e.clone()
            }
        })
    });
    DecodeResult {
        file: file.to_owned(),
        format: file.rsplit('.').next().unwrap_or_default().to_owned(),
        decoder: decoder.name().to_owned(),
        rows: runs.iter().find_map(|r| r.rows),
        median_ms: median_of(round_medians.clone()),
        min_ms: runs.iter().filter_map(|r| r.min_ms).reduce(f64::min),
        encode_median_ms: median_of(runs.iter().filter_map(|r| r.encode_median_ms).collect()),
        peak_rss_mib: runs.iter().filter_map(|r| r.peak_rss_mib).reduce(f64::max),
        round_medians_ms: if runs.len() > 1 {
            round_medians
        } else {
            Vec::new()
        },
        error,
    }
}

/// Median (the upper one of an even count) and minimum of all values.
fn summarize_all(mut values: Vec<f64>) -> (Option<f64>, Option<f64>) {
    values.sort_by(f64::total_cmp);
    (
        values.get(values.len() / 2).copied(),
        values.first().copied(),
    )
}

/// Median and minimum, leaving out the first (cold) iteration when there are several.
fn summarize(mut ms: Vec<f64>) -> (Option<f64>, Option<f64>) {
    if ms.len() > 1 {
        ms.remove(0);
    }
    summarize_all(ms)
}

fn write_scripts() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("buildwire-bench-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("haystack_core_decode.mjs"), HAYSTACK_CORE_SCRIPT)?;
    std::fs::write(dir.join("haystack_py_decode.py"), HAYSTACK_PY_SCRIPT)?;
    Ok(dir)
}

/// Why a decode worker could not be run or read.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The peers' decode scripts could not be written out.
    #[error("peer scripts unavailable")]
    NoScripts,
    /// A peer's runtime is not installed.
    #[error("not installed: run scripts/peers.sh {0}")]
    NotInstalled(&'static str),
    /// A path could not be made absolute.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The worker could not be started.
    #[error("cannot start {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why not.
        source: std::io::Error,
    },
    /// Its process id does not fit `wait4`.
    #[error("process id {0} out of range")]
    Pid(u32),
    /// Waiting for it failed.
    #[error("wait4 failed: {0}")]
    Wait(std::io::Error),
    /// Its output was not the worker's JSON.
    #[error("unreadable output ({source}): {stdout} {stderr}")]
    Unreadable {
        /// Why it did not parse.
        source: serde_json::Error,
        /// What it printed.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// Why libhaystack could not decode a file.
#[derive(Debug, thiserror::Error)]
pub enum LibhaystackError {
    /// libhaystack's own error.
    #[error("{0}")]
    Decode(String),
    /// JSON v3 asked for.
    #[error("libhaystack reads JSON v4 only")]
    JsonV3,
}

fn worker_command(
    config: &DecodeConfig,
    decoder: Decoder,
    path: &Path,
    scripts: &Path,
) -> Result<Command, WorkerError> {
    let iterations = config.iterations.to_string();
    let file = path.display().to_string();
    match decoder {
        Decoder::Buildwire | Decoder::BuildwireOneThread | Decoder::Libhaystack => {
            let mut c = Command::new(&config.worker_program);
            c.args([
                "bench",
                "haystack",
                "decode-worker",
                "--decoder",
                decoder.name(),
            ]);
            c.args(["--file", &file, "--iterations", &iterations]);
            Ok(c)
        }
        Decoder::HaystackCore => {
            let modules = std::path::absolute(config.peers_dir.join("node").join("node_modules"))?;
            if !modules.join("haystack-core").is_dir() {
                return Err(WorkerError::NotInstalled("node"));
            }
            let mut c = Command::new("node");
            c.env("NODE_PATH", &modules);
            c.arg(scripts.join("haystack_core_decode.mjs"));
            c.args([file.as_str(), "--time", iterations.as_str()]);
            Ok(c)
        }
        Decoder::HaystackPy => {
            let python = config.peers_dir.join("py313").join("bin").join("python");
            if !python.is_file() {
                return Err(WorkerError::NotInstalled("py313"));
            }
            let mut c = Command::new(python);
            c.arg(scripts.join("haystack_py_decode.py"));
            c.args([file.as_str(), "--time", iterations.as_str()]);
            Ok(c)
        }
    }
}

/// Runs a child to the end and returns its JSON output and peak RSS in KiB.
fn run_child(mut command: Command) -> Result<(WorkerOutput, u64), WorkerError> {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| WorkerError::Spawn {
            command: format!("{command:?}"),
            source,
        })?;
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read_all(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read_all(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let rss = reap(&mut child)?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let parsed: WorkerOutput =
        serde_json::from_str(stdout.trim()).map_err(|source| WorkerError::Unreadable {
            source,
            stdout: stdout.trim().to_owned(),
            stderr: stderr.trim().to_owned(),
        })?;
    Ok((parsed, rss))
}

/// Waits for the child and returns its own peak RSS in KiB (0 where the OS cannot tell).
#[cfg(target_os = "linux")]
fn reap(child: &mut std::process::Child) -> Result<u64, WorkerError> {
    let pid = i32::try_from(child.id()).map_err(|_| WorkerError::Pid(child.id()))?;
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills for this child, which we own and which
    // nothing else waits for (the std handle is never waited on after this).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        return Err(WorkerError::Wait(std::io::Error::last_os_error()));
    }
    Ok(u64::try_from(usage.ru_maxrss).unwrap_or(0))
}

#[cfg(not(target_os = "linux"))]
fn reap(child: &mut std::process::Child) -> Result<u64, WorkerError> {
    child.wait().map_err(WorkerError::Wait)?;
    Ok(0)
}

/// The worker: decodes `file` `iterations` times with `decoder` (buildwire or libhaystack)
/// and returns the JSON line the parent reads.
///
/// What is timed, the same for every decoder (see also the peer scripts): from the file's
/// bytes in memory to a completely decoded grid, so the UTF-8 check of the text is inside
/// the timed part; freeing the previous iteration's grid is not.
pub fn worker(decoder: Decoder, file: &Path, iterations: usize) -> serde_json::Value {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            return serde_json::json!({"error": format!("cannot read {}: {e}", file.display())});
        }
    };
    let Some(format) = Format::from_path(&file.display().to_string()) else {
        return serde_json::json!({"error": "unknown format"});
    };
    let mut ms = Vec::with_capacity(iterations);
    let mut encode_ms = Vec::new();
    let mut rows = 0;
    if decoder == Decoder::BuildwireOneThread {
        buildwire_haystack::codec::set_parallel_decode(false);
    }
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        let decoded = match decoder {
            Decoder::Buildwire | Decoder::BuildwireOneThread => std::str::from_utf8(&bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| format.decode_grid(text).map_err(|e| e.to_string()))
                .map(Decoded::Ours),
            Decoder::Libhaystack => std::str::from_utf8(&bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| libhaystack_grid(format, text).map_err(|e| e.to_string()))
                .map(Decoded::Libhaystack),
            _ => return serde_json::json!({"error": "peer decoders run in their own runtime"}),
        };
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        match decoded {
            Ok(Decoded::Ours(grid)) => {
                rows = grid.row_count();
                let start = Instant::now();
                let encoded = format.encode_grid(&grid);
                encode_ms.push(start.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(encoded);
            }
            Ok(Decoded::Libhaystack(value)) => {
                rows = match &value {
                    libhaystack::val::Value::Grid(grid) => grid.rows.len(),
                    _ => 0,
                };
            }
            Err(e) => return serde_json::json!({"error": e}),
        }
        // The decoded grid is dropped here, outside the timed part.
    }
    serde_json::json!({"rows": rows, "ms": ms, "encode_ms": encode_ms})
}

/// A grid decoded by the in-process worker, kept until the decode has been timed.
enum Decoded {
    Ours(buildwire_haystack::value::Grid),
    Libhaystack(libhaystack::val::Value),
}

/// Decodes with libhaystack and returns the row count.
pub fn libhaystack_rows(format: Format, text: &str) -> Result<usize, LibhaystackError> {
    libhaystack_grid(format, text).map(|value| match value {
        libhaystack::val::Value::Grid(grid) => grid.rows.len(),
        _ => 0,
    })
}

/// Decodes with libhaystack (Zinc, Hayson JSON or Trio) into its own value model.
pub fn libhaystack_grid(
    format: Format,
    text: &str,
) -> Result<libhaystack::val::Value, LibhaystackError> {
    use libhaystack::encoding::trio::decode::TrioReader;
    use libhaystack::encoding::zinc::decode::from_str;
    match format {
        Format::Zinc => from_str(text).map_err(|e| LibhaystackError::Decode(e.to_string())),
        Format::Json => {
            serde_json::from_str(text).map_err(|e| LibhaystackError::Decode(e.to_string()))
        }
        Format::Trio => TrioReader::from_str(text)
            .read_grid()
            .map(libhaystack::val::Value::from)
            .map_err(|e| LibhaystackError::Decode(e.to_string())),
        Format::JsonV3 => Err(LibhaystackError::JsonV3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(median: f64, min: f64, rss: f64, error: Option<&str>) -> RoundResult {
        RoundResult {
            rows: Some(1077),
            median_ms: error.is_none().then_some(median),
            min_ms: error.is_none().then_some(min),
            encode_median_ms: error.is_none().then_some(median / 2.0),
            peak_rss_mib: Some(rss),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn rounds_combine_into_the_median_of_medians() {
        let runs = [
            round(0.9, 0.8, 20.0, None),
            round(0.5, 0.45, 25.0, None),
            round(0.6, 0.4, 22.0, None),
        ];
        let result = combine("bravo.json", Decoder::Buildwire, &runs);
        assert_eq!(result.median_ms, Some(0.6));
        assert_eq!(result.min_ms, Some(0.4));
        assert_eq!(result.encode_median_ms, Some(0.3));
        assert_eq!(result.peak_rss_mib, Some(25.0));
        assert_eq!(result.round_medians_ms, vec![0.9, 0.5, 0.6]);
        assert_eq!((result.format.as_str(), result.error), ("json", None));
    }

    #[test]
    fn a_failed_round_is_reported_with_its_number() {
        let runs = [
            round(0.9, 0.8, 20.0, None),
            round(0.0, 0.0, 21.0, Some("boom")),
        ];
        let result = combine("alpha.zinc", Decoder::HaystackPy, &runs);
        assert_eq!(result.error.as_deref(), Some("round 2: boom"));
        assert_eq!(result.median_ms, Some(0.9));
        // One round: the error as the worker gave it, no round list.
        let single = combine("alpha.zinc", Decoder::HaystackPy, &runs[1..]);
        assert_eq!(single.error.as_deref(), Some("boom"));
        assert!(single.round_medians_ms.is_empty());
    }
}
