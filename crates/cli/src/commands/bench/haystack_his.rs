//! `buildwire bench haystack his`: `hisWrite` and `hisRead` throughput of a server per
//! storage backend, for a year of 15-minute samples on 100 points (the shape of the
//! published storage table). Each backend gets a server process of its own; samples are
//! written in batches over several connections, then every point's year is read back and
//! checked (count and values) before it is counted.

use buildwire_bench::haystack::his::{HisConfig, any_failed, his_results_json, his_table, run_his};
use buildwire_bench::report::MachineInfo;
use clap::Args;

use crate::commands::common::output::print_table_and_report;
use crate::commands::common::program::self_program;
use crate::commands::common::result::CommandResult;
use crate::progress::ProgressLine;

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

/// `buildwire bench haystack his`.
pub fn run(args: HaystackHisArgs) -> CommandResult {
    let config = HisConfig {
        backends: args.backend.clone(),
        points: args.points,
        days: args.days,
        interval_minutes: args.interval_minutes,
        batch_days: args.batch_days,
        connections: args.connections,
        program: self_program()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = ProgressLine::new(args.json);
    let rows = run_his(&runtime, &config, &|line| progress.set(line));
    progress.finish();
    let rows = rows?;
    let report = serde_json::json!({
        "benchmark": "haystack his",
        "machine": MachineInfo::detect(),
        "config": {
            "points": args.points, "days": args.days, "interval_minutes": args.interval_minutes,
            "batch_days": args.batch_days, "connections": args.connections,
        },
        "results": his_results_json(&rows),
    });
    print_table_and_report(&his_table(&rows), &report, args.json)?;
    if any_failed(&rows) {
        return Err("some writes or reads failed or returned wrong samples (see the table)".into());
    }
    Ok(())
}
