//! `bench haystack his`: `hisWrite` and `hisRead` throughput of a server per storage
//! backend, for a year of 15-minute samples on 100 points (the shape of the published
//! storage table). Each backend gets a server process of its own; samples are written in
//! batches over several connections, then every point's year is read back and checked
//! (count and values) before it is counted, and folded into daily means.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
use buildwire_haystack::{Date, DateTime, Ref, Time, Value};

use super::http::{ServerProcess, ServerProcessError, buildwire_serve_command};

/// What the run writes and reads, against which backends.
#[derive(Clone, Debug)]
pub struct HisConfig {
    /// Storage backends, each measured with a server of its own.
    pub backends: Vec<String>,
    /// Historized points.
    pub points: usize,
    /// Days of samples per point (from 2025-01-01).
    pub days: u32,
    /// Minutes between samples.
    pub interval_minutes: u32,
    /// Days of samples per hisWrite request.
    pub batch_days: u32,
    /// Concurrent connections (points are shared out between them).
    pub connections: usize,
    /// This program, started again as `haystack serve` per backend.
    pub program: PathBuf,
}

/// Why the run, or one backend's part of it, failed.
#[derive(Debug, thiserror::Error)]
pub enum HisError {
    /// The points file could not be written.
    #[error("{}: {source}", path.display())]
    PointsFile {
        /// The file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// A backend's server could not be started.
    #[error(transparent)]
    Server(#[from] ServerProcessError),
    /// The runtime could not be built.
    #[error("{0}")]
    Runtime(#[from] std::io::Error),
    /// A client could not connect.
    #[error("{0}")]
    Client(String),
    /// A sample's timestamp could not be made.
    #[error("{0}")]
    Time(String),
    /// A worker task failed.
    #[error("{0}")]
    Task(String),
}

/// The three phases against one backend.
#[derive(Clone, Copy, Debug)]
pub struct BackendPhases {
    /// hisWrite.
    pub write: PhaseResult,
    /// hisRead of every point's range.
    pub read: PhaseResult,
    /// hisRead folded into daily means.
    pub rollup: PhaseResult,
}

/// One backend's result.
#[derive(Debug)]
pub struct BackendResult {
    /// The backend.
    pub backend: String,
    /// Its phases, or why they could not run.
    pub outcome: Result<BackendPhases, HisError>,
}

/// Writes, reads and rolls up against each backend of `config` in turn.
pub fn run_his(
    runtime: &tokio::runtime::Runtime,
    config: &HisConfig,
    status: &(dyn Fn(String) + Sync),
) -> Result<Vec<BackendResult>, HisError> {
    let file = points_file(config.points)?;
    let mut rows = Vec::new();
    for backend in &config.backends {
        let mut command = buildwire_serve_command(&config.program, backend);
        command.arg("--data").arg(&file);
        status(format!("{backend}: starting the server"));
        let server = ServerProcess::start(command, Duration::from_secs(60))?;
        let outcome = runtime.block_on(run_backend(&server.url, config, status));
        drop(server);
        rows.push(BackendResult {
            backend: backend.clone(),
            outcome,
        });
    }
    let _ = std::fs::remove_file(&file);
    Ok(rows)
}

/// True when a backend failed or any request failed or answered wrong samples.
pub fn any_failed(rows: &[BackendResult]) -> bool {
    rows.iter().any(|row| match &row.outcome {
        Ok(p) => p.write.errors + p.read.errors + p.rollup.errors > 0,
        Err(_) => true,
    })
}

/// The table of rates and errors per backend.
pub fn his_table(rows: &[BackendResult]) -> String {
    let mut table = comfy_table::Table::new();
    table.set_header([
        "backend",
        "hisWrite samples/s",
        "write errors",
        "hisRead samples/s",
        "read errors",
        "daily-avg rollup samples/s",
        "rollup errors",
    ]);
    for row in rows {
        match &row.outcome {
            Ok(BackendPhases {
                write,
                read,
                rollup,
            }) => {
                table.add_row([
                    row.backend.clone(),
                    format!("{:.0}", write.rate()),
                    write.errors.to_string(),
                    format!("{:.0}", read.rate()),
                    read.errors.to_string(),
                    format!("{:.0}", rollup.rate()),
                    rollup.errors.to_string(),
                ]);
            }
            Err(e) => {
                table.add_row([
                    row.backend.clone(),
                    format!("error: {e}"),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
        }
    }
    table.to_string()
}

/// The JSON results, one object per backend.
pub fn his_results_json(rows: &[BackendResult]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|row| match &row.outcome {
            Ok(BackendPhases {
                write,
                read,
                rollup,
            }) => serde_json::json!({
                "backend": row.backend,
                "write": {"samples": write.samples, "seconds": write.seconds,
                          "samples_per_s": write.rate(), "errors": write.errors},
                "read": {"samples": read.samples, "seconds": read.seconds,
                         "samples_per_s": read.rate(), "errors": read.errors},
                "rollup": {"fold": "avg", "interval": "1day", "samples": rollup.samples,
                           "seconds": rollup.seconds, "samples_per_s": rollup.rate(),
                           "errors": rollup.errors},
            }),
            Err(e) => serde_json::json!({"backend": row.backend, "error": e.to_string()}),
        })
        .collect()
}

/// The civil date `days` after 1970-01-01 (proleptic Gregorian).
fn civil_date(days: i64) -> Result<Date, HisError> {
    let (year, month, day) = buildwire_civil::civil_from_days(days);
    let year = i32::try_from(year).map_err(|e| HisError::Time(e.to_string()))?;
    // Month 1..=12 and day 1..=31: the narrowing keeps the values.
    Date::new(year, month as u8, day as u8).map_err(|e| HisError::Time(e.to_string()))
}

/// The timestamp of sample `n` (every `interval` minutes from 2025-01-01T00:00Z).
fn sample_time(n: u32, interval: u32) -> Result<DateTime, HisError> {
    let minutes = u64::from(n) * u64::from(interval);
    let days = (minutes / 1440) as i64;
    let in_day = (minutes % 1440) as u32;
    // 2025-01-01 is day 20,089 of the Unix epoch.
    let date = civil_date(20_089 + days)?;
    let time = Time::new((in_day / 60) as u8, (in_day % 60) as u8, 0, 0)
        .map_err(|e| HisError::Time(e.to_string()))?;
    DateTime::new(date, time, 0, Some("UTC".into())).map_err(|e| HisError::Time(e.to_string()))
}

/// A Zinc file of `points` historized points, in the temporary folder.
fn points_file(points: usize) -> Result<PathBuf, HisError> {
    let mut text = String::from("ver:\"3.0\"\nid,dis,point,his,kind,tz,unit\n");
    for i in 0..points {
        text.push_str(&format!(
            "@his-{i},\"His {i}\",M,M,\"Number\",\"UTC\",\"kW\"\n"
        ));
    }
    let path =
        std::env::temp_dir().join(format!("buildwire-his-bench-{}.zinc", std::process::id()));
    std::fs::write(&path, text).map_err(|source| HisError::PointsFile {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// One phase (writes, reads or rollups) against one backend.
#[derive(Clone, Copy, Debug)]
pub struct PhaseResult {
    /// Samples written, or read back and checked.
    pub samples: u64,
    /// How long the phase took.
    pub seconds: f64,
    /// Requests that failed or answered wrong samples.
    pub errors: u64,
}

impl PhaseResult {
    /// Samples per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.samples as f64 / self.seconds
        } else {
            0.0
        }
    }
}

async fn run_backend(
    url: &str,
    args: &HisConfig,
    status: &(dyn Fn(String) + Sync),
) -> Result<BackendPhases, HisError> {
    let per_point = args.days * 1440 / args.interval_minutes.max(1);
    let per_batch = (args.batch_days * 1440 / args.interval_minutes.max(1)).max(1);
    let connections = args.connections.max(1);
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        clients.push(
            HaystackClient::connect(url, ClientOptions::default())
                .await
                .map_err(|e| HisError::Client(e.to_string()))?,
        );
    }
    let points = args.points;
    let interval = args.interval_minutes;
    // Writes.
    let started = Instant::now();
    let mut tasks = Vec::new();
    let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
    for (c, client) in clients.iter().cloned().enumerate() {
        let written = written.clone();
        tasks.push(tokio::spawn(async move {
            let mut errors = 0u64;
            for p in (c..points).step_by(connections) {
                let id = Ref::new(format!("his-{p}"));
                let mut n = 0;
                while n < per_point {
                    let end = (n + per_batch).min(per_point);
                    let mut batch = Vec::with_capacity((end - n) as usize);
                    for k in n..end {
                        let ts = sample_time(k, interval)?;
                        batch.push((ts, Value::number(f64::from(k) + p as f64 / 1000.0)));
                    }
                    match client.his_write(&id, &batch).await {
                        Ok(_) => {
                            written.fetch_add(
                                batch.len() as u64,
                                std::sync::atomic::Ordering::Relaxed,
                            );
                        }
                        Err(_) => errors += 1,
                    }
                    n = end;
                }
            }
            Ok::<u64, HisError>(errors)
        }));
    }
    let mut write_errors = 0;
    let total = (points as u64) * u64::from(per_point);
    for task in tasks {
        loop {
            if task.is_finished() {
                break;
            }
            status(format!(
                "{url}: wrote {} of {total} samples",
                written.load(std::sync::atomic::Ordering::Relaxed)
            ));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        write_errors += task.await.map_err(|e| HisError::Task(e.to_string()))??;
    }
    let write = PhaseResult {
        samples: written.load(std::sync::atomic::Ordering::Relaxed),
        seconds: started.elapsed().as_secs_f64(),
        errors: write_errors,
    };
    // Reads: every point's whole range, checked.
    let day = |d: Date| format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day());
    let range = format!(
        "{},{}",
        day(sample_time(0, interval)?.date),
        day(sample_time(per_point.saturating_sub(1), interval)?.date)
    );
    let read = {
        let range = range.clone();
        checked_phase(&clients, points, move |client, p| {
            let range = range.clone();
            async move {
                let id = Ref::new(format!("his-{p}"));
                let grid = client.his_read(&id, &range).await.ok()?;
                let rows = grid.row_count();
                let last = rows.checked_sub(1).and_then(|r| grid.get(r, "val"));
                let expected_last = f64::from(per_point.saturating_sub(1)) + p as f64 / 1000.0;
                (rows == per_point as usize
                    && matches!(last, Some(Value::Number(n)) if (n.value - expected_last).abs() < 1e-9))
                .then_some(rows as u64)
            }
        })
        .await?
    };
    // Rollups: every point's range folded into daily means (`hisRead` with `interval` 1day
    // and `fold` avg), each mean checked: day d holds samples d*n .. d*n+n-1 of value
    // k + p/1000, so its mean is d*n + (n-1)/2 + p/1000.
    let per_day = (1440 / interval.max(1)).max(1);
    let rollup = checked_phase(&clients, points, move |client, p| {
        let range = range.clone();
        async move {
            let id = Ref::new(format!("his-{p}"));
            let every = Value::number_with_unit(1.0, "day");
            let grid = client.his_rollup(&id, &range, every, "avg").await.ok()?;
            let days = (per_point / per_day) as usize;
            let right = grid.row_count() == days
                && (0..days).all(|d| {
                    let want = (d as f64) * f64::from(per_day)
                        + f64::from(per_day - 1) / 2.0
                        + p as f64 / 1000.0;
                    matches!(grid.get(d, "val"),
                        Some(Value::Number(n)) if (n.value - want).abs() < 1e-6)
                });
            right.then_some(u64::from(per_point))
        }
    })
    .await?;
    Ok(BackendPhases {
        write,
        read,
        rollup,
    })
}

/// Runs `check(client, point)` for every point, the points shared out between the clients
/// (a task each); a check gives the samples it verified, or `None` for a failed request or
/// a wrong answer (an error). The phase's samples, time and errors.
async fn checked_phase<F, Fut>(
    clients: &[HaystackClient],
    points: usize,
    check: F,
) -> Result<PhaseResult, HisError>
where
    F: Fn(HaystackClient, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Option<u64>> + Send,
{
    let connections = clients.len().max(1);
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .cloned()
        .enumerate()
        .map(|(c, client)| {
            let check = check.clone();
            tokio::spawn(async move {
                let (mut samples, mut errors) = (0u64, 0u64);
                for p in (c..points).step_by(connections) {
                    match check(client.clone(), p).await {
                        Some(n) => samples += n,
                        None => errors += 1,
                    }
                }
                (samples, errors)
            })
        })
        .collect();
    let (mut samples, mut errors) = (0, 0);
    for task in tasks {
        let (s, e) = task.await.map_err(|e| HisError::Task(e.to_string()))?;
        samples += s;
        errors += e;
    }
    Ok(PhaseResult {
        samples,
        seconds: started.elapsed().as_secs_f64(),
        errors,
    })
}
