//! `buildwire bench haystack his`: `hisWrite` and `hisRead` throughput of a server per
//! storage backend, for a year of 15-minute samples on 100 points (the shape of the
//! published storage table). Each backend gets a server process of its own; samples are
//! written in batches over several connections, then every point's year is read back and
//! checked (count and values) before it is counted.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use buildwire_bench::haystack::http::ServerProcess;
use buildwire_bench::report::MachineInfo;
use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
use buildwire_haystack::{Date, DateTime, Ref, Time, Value};
use clap::Args;

use crate::commands::common::result::CommandResult;

#[derive(Debug, Args)]
pub struct HaystackHisArgs {
    /// Storage backends, each measured with a server of its own: memory,
    /// redis://HOST:PORT or postgres://USER@HOST:PORT/DB (repeat or separate with commas).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "memory",
        value_name = "URL"
    )]
    backend: Vec<String>,
    /// Historized points.
    #[arg(long, default_value_t = 100)]
    points: usize,
    /// Days of samples per point (from 2025-01-01).
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Minutes between samples.
    #[arg(long, default_value_t = 15)]
    interval_minutes: u32,
    /// Days of samples per hisWrite request.
    #[arg(long, default_value_t = 30)]
    batch_days: u32,
    /// Concurrent connections (points are shared out between them).
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
}

pub const AFTER_HELP: &str = "Writes then reads every point's samples through the HTTP API \
    (Zinc), one server process per backend, and checks every answer: each write must be \
    acknowledged, each read must return the point's samples with their values, and each \
    point's range folded into daily means (`hisRead` with interval 1day and fold avg; \
    PostgreSQL folds in SQL, with time_bucket on TimescaleDB) must give every day's mean.\n\n\
    Examples:\n  buildwire bench haystack his --days 30\n  \
    buildwire bench haystack his --backend memory,redis://127.0.0.1:6379,\\\n      \
    postgres://postgres@127.0.0.1:5432/bench --json";

/// The civil date `days` after 1970-01-01 (proleptic Gregorian).
fn civil_date(days: i64) -> Result<Date, String> {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    Date::new(year, month, day).map_err(|e| e.to_string())
}

/// The timestamp of sample `n` (every `interval` minutes from 2025-01-01T00:00Z).
fn sample_time(n: u32, interval: u32) -> Result<DateTime, String> {
    let minutes = u64::from(n) * u64::from(interval);
    let days = (minutes / 1440) as i64;
    let in_day = (minutes % 1440) as u32;
    // 2025-01-01 is day 20,089 of the Unix epoch.
    let date = civil_date(20_089 + days)?;
    let time =
        Time::new((in_day / 60) as u8, (in_day % 60) as u8, 0, 0).map_err(|e| e.to_string())?;
    DateTime::new(date, time, 0, Some("UTC".into())).map_err(|e| e.to_string())
}

fn points_file(points: usize) -> Result<PathBuf, String> {
    let mut text = String::from("ver:\"3.0\"\nid,dis,point,his,kind,tz,unit\n");
    for i in 0..points {
        text.push_str(&format!(
            "@his-{i},\"His {i}\",M,M,\"Number\",\"UTC\",\"kW\"\n"
        ));
    }
    let path =
        std::env::temp_dir().join(format!("buildwire-his-bench-{}.zinc", std::process::id()));
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

struct PhaseResult {
    samples: u64,
    seconds: f64,
    errors: u64,
}

impl PhaseResult {
    fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.samples as f64 / self.seconds
        } else {
            0.0
        }
    }
}

async fn run_backend(
    url: &str,
    args: &HaystackHisArgs,
    progress: &crate::progress::ProgressLine,
) -> Result<(PhaseResult, PhaseResult, PhaseResult), String> {
    let per_point = args.days * 1440 / args.interval_minutes.max(1);
    let per_batch = (args.batch_days * 1440 / args.interval_minutes.max(1)).max(1);
    let connections = args.connections.max(1);
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        clients.push(
            HaystackClient::connect(url, ClientOptions::default())
                .await
                .map_err(|e| e.to_string())?,
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
            Ok::<u64, String>(errors)
        }));
    }
    let mut write_errors = 0;
    let total = (points as u64) * u64::from(per_point);
    for task in tasks {
        loop {
            if task.is_finished() {
                break;
            }
            progress.set(format!(
                "{url}: wrote {} of {total} samples",
                written.load(std::sync::atomic::Ordering::Relaxed)
            ));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        write_errors += task.await.map_err(|e| e.to_string())??;
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
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, client) in clients.iter().cloned().enumerate() {
        let range = range.clone();
        tasks.push(tokio::spawn(async move {
            let (mut samples, mut errors) = (0u64, 0u64);
            for p in (c..points).step_by(connections) {
                let id = Ref::new(format!("his-{p}"));
                match client.his_read(&id, &range).await {
                    Ok(grid) => {
                        let rows = grid.row_count();
                        let last = rows.checked_sub(1).and_then(|r| grid.get(r, "val"));
                        let expected_last = f64::from(per_point.saturating_sub(1)) + p as f64 / 1000.0;
                        if rows == per_point as usize
                            && matches!(last, Some(Value::Number(n)) if (n.value - expected_last).abs() < 1e-9)
                        {
                            samples += rows as u64;
                        } else {
                            errors += 1;
                        }
                    }
                    Err(_) => errors += 1,
                }
            }
            (samples, errors)
        }));
    }
    let (mut samples, mut errors) = (0, 0);
    for task in tasks {
        let (s, e) = task.await.map_err(|e| e.to_string())?;
        samples += s;
        errors += e;
    }
    let read = PhaseResult {
        samples,
        seconds: started.elapsed().as_secs_f64(),
        errors,
    };
    // Rollups: every point's range folded into daily means (`hisRead` with `interval` 1day
    // and `fold` avg), each mean checked: day d holds samples d*n .. d*n+n-1 of value
    // k + p/1000, so its mean is d*n + (n-1)/2 + p/1000.
    let per_day = (1440 / interval.max(1)).max(1);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, client) in clients.into_iter().enumerate() {
        let range = range.clone();
        tasks.push(tokio::spawn(async move {
            let (mut samples, mut errors) = (0u64, 0u64);
            for p in (c..points).step_by(connections) {
                let id = Ref::new(format!("his-{p}"));
                let every = Value::number_with_unit(1.0, "day");
                match client.his_rollup(&id, &range, every, "avg").await {
                    Ok(grid) => {
                        let days = (per_point / per_day) as usize;
                        let right = grid.row_count() == days
                            && (0..days).all(|d| {
                                let want = (d as f64) * f64::from(per_day)
                                    + f64::from(per_day - 1) / 2.0
                                    + p as f64 / 1000.0;
                                matches!(grid.get(d, "val"),
                                    Some(Value::Number(n)) if (n.value - want).abs() < 1e-6)
                            });
                        if right {
                            samples += u64::from(per_point);
                        } else {
                            errors += 1;
                        }
                    }
                    Err(_) => errors += 1,
                }
            }
            (samples, errors)
        }));
    }
    let (mut samples, mut errors) = (0, 0);
    for task in tasks {
        let (s, e) = task.await.map_err(|e| e.to_string())?;
        samples += s;
        errors += e;
    }
    let rollup = PhaseResult {
        samples,
        seconds: started.elapsed().as_secs_f64(),
        errors,
    };
    Ok((write, read, rollup))
}

/// `buildwire bench haystack his`.
pub fn run(args: HaystackHisArgs) -> CommandResult {
    let file = points_file(args.points)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = crate::progress::ProgressLine::new(args.json);
    let mut rows = Vec::new();
    for backend in &args.backend {
        let program = crate::commands::common::program::self_program()?;
        let mut command = Command::new(program);
        command
            .args([
                "haystack",
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--backend",
                backend,
                "--data",
            ])
            .arg(&file);
        progress.set(format!("{backend}: starting the server"));
        let server = ServerProcess::start(command, Duration::from_secs(60))?;
        let outcome = runtime.block_on(run_backend(&server.url, &args, &progress));
        drop(server);
        rows.push((backend.clone(), outcome));
    }
    progress.finish();
    let _ = std::fs::remove_file(&file);
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
    let mut results = Vec::new();
    for (backend, outcome) in &rows {
        match outcome {
            Ok((write, read, rollup)) => {
                table.add_row([
                    backend.clone(),
                    format!("{:.0}", write.rate()),
                    write.errors.to_string(),
                    format!("{:.0}", read.rate()),
                    read.errors.to_string(),
                    format!("{:.0}", rollup.rate()),
                    rollup.errors.to_string(),
                ]);
                results.push(serde_json::json!({
                    "backend": backend,
                    "write": {"samples": write.samples, "seconds": write.seconds,
                              "samples_per_s": write.rate(), "errors": write.errors},
                    "read": {"samples": read.samples, "seconds": read.seconds,
                             "samples_per_s": read.rate(), "errors": read.errors},
                    "rollup": {"fold": "avg", "interval": "1day", "samples": rollup.samples,
                               "seconds": rollup.seconds, "samples_per_s": rollup.rate(),
                               "errors": rollup.errors},
                }));
            }
            Err(e) => {
                table.add_row([
                    backend.clone(),
                    format!("error: {e}"),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
                results.push(serde_json::json!({"backend": backend, "error": e}));
            }
        }
    }
    let report = serde_json::json!({
        "benchmark": "haystack his",
        "machine": MachineInfo::detect(),
        "config": {
            "points": args.points, "days": args.days, "interval_minutes": args.interval_minutes,
            "batch_days": args.batch_days, "connections": args.connections,
        },
        "results": results,
    });
    let failed = rows.iter().any(|(_, o)| match o {
        Ok((w, r, u)) => w.errors + r.errors + u.errors > 0,
        Err(_) => true,
    });
    crate::commands::common::output::print_table_and_report(
        &table.to_string(),
        &report,
        args.json,
    )?;
    if failed {
        return Err("some writes or reads failed or returned wrong samples (see the table)".into());
    }
    Ok(())
}
