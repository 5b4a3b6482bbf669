//! `buildwire bench opcua soak`: runs [`run_soak`] against our server (in this process or as
//! a child process) or any `--target`, and prints the RSS curve.

use std::time::Duration;

use buildwire_bench::opcua::{
    ItemSoakConfig, ItemSoakSample, ServerChild, SoakConfig, SoakReport, SoakSample, run_item_soak,
    run_soak,
};
use buildwire_opcua::driver::{OpcuaServer, OpcuaServerConfig};
use buildwire_opcua::server::{ServerConfig, bench_methods};
use clap::Args;
use serde_json::json;

use crate::commands::common::duration::parse_duration;
use crate::commands::common::program::self_program;
use crate::commands::common::result::CommandResult;

#[derive(Debug, Args)]
pub struct ItemSoakArgs {
    /// Monitored items (one simulated point each).
    #[arg(long, default_value_t = 10_000)]
    pub items: usize,
    /// Sampling and publishing interval; the points change at the same rate.
    #[arg(long, default_value = "100ms", value_name = "DURATION", value_parser = parse_duration)]
    pub sampling: Duration,
    /// Seconds of receiving after the items exist.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Duration,
    /// Seconds between two memory samples.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    pub sample_every: Duration,
    /// Print the report as JSON on the last line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SoakArgs {
    /// Connect/disconnect cycles.
    #[arg(long, default_value_t = 5000)]
    pub cycles: u64,
    /// Cycles between two memory samples.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub sample_every: u64,
    /// Soak this server instead of one of ours (`opc.tcp://HOST:PORT`).
    #[arg(long, value_name = "ENDPOINT", conflicts_with = "spawn_server")]
    pub target: Option<String>,
    /// With --target: the server's process id on this machine, to sample its RSS too.
    #[arg(long, value_name = "PID", requires = "target")]
    pub server_pid: Option<u32>,
    /// Run our server as a child process (`buildwire opcua serve --bind 127.0.0.1:0`)
    /// instead of in this process.
    #[arg(long)]
    pub spawn_server: bool,
    /// Print the report as JSON on the last line.
    #[arg(long)]
    pub json: bool,
}

/// Our server in a child process: this same program's `opcua serve`.
fn spawn_server(extra: &[String]) -> Result<ServerChild, Box<dyn std::error::Error>> {
    Ok(ServerChild::spawn(&self_program()?, extra)?)
}

fn kib(value: Option<u64>) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |kib| format!("{:.1}", kib as f64 / 1024.0),
    )
}

fn print_sample(sample: &SoakSample) {
    println!(
        "cycle {:>7}  {:>8.1} s  client RSS {:>8} MiB  server RSS {:>8} MiB",
        sample.cycle,
        sample.elapsed_s,
        kib(sample.client_rss_kib),
        kib(sample.server_rss_kib)
    );
}

/// A growth in KiB as signed MiB ("-" when unknown).
fn growth(kib: Option<i64>) -> String {
    kib.map_or("-".to_owned(), |g| format!("{:+.1} MiB", g as f64 / 1024.0))
}

fn print_summary(report: &SoakReport, where_: &str) {
    println!(
        "{} cycles in {:.1} s ({:.0} cycles/s), {} failed{}",
        report.cycles,
        report.seconds,
        report.cycles_per_second,
        report.failures,
        report
            .first_error
            .as_ref()
            .map_or(String::new(), |e| format!(" (first: {e})"))
    );
    println!(
        "RSS growth after warm-up: client {}, server {} ({where_})",
        growth(report.client_growth_kib()),
        growth(report.server_growth_kib())
    );
}

pub fn soak(args: SoakArgs) -> CommandResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let mut in_process = None;
        let mut child = None;
        let (endpoint, server_pid, where_) = match (&args.target, args.spawn_server) {
            (Some(target), _) => (target.clone(), args.server_pid, "server at --target"),
            (None, true) => {
                let server = spawn_server(&[])?;
                let (endpoint, pid) = (server.endpoint.clone(), server.id());
                child = Some(server);
                (endpoint, Some(pid), "server in a child process")
            }
            (None, false) => {
                let config = ServerConfig {
                    endpoint_url: String::new(),
                    ..ServerConfig::default()
                };
                let server = OpcuaServer::start(
                    OpcuaServerConfig::new("127.0.0.1:0", config)
                        .with_setup(bench_methods::install),
                )
                .await?;
                let endpoint = server.endpoint_url().to_owned();
                in_process = Some(server);
                (
                    endpoint,
                    None,
                    "server in this process: the client RSS covers both",
                )
            }
        };
        println!("soak: {} cycles against {endpoint} ({where_})", args.cycles);
        let config = SoakConfig {
            endpoint: endpoint.clone(),
            cycles: args.cycles,
            sample_every: args.sample_every,
            server_pid,
        };
        let report = run_soak(&config, print_sample).await;
        print_summary(&report, where_);
        let open_sessions = in_process
            .as_ref()
            .map(|server| server.with_server(|s| s.sessions.len()));
        if let Some(open) = open_sessions {
            println!("sessions still open on the server: {open}");
        }
        if args.json {
            println!(
                "{}",
                json!({
                    "benchmark": "opcua soak",
                    "server": where_,
                    "report": report,
                    "client_growth_kib": report.client_growth_kib(),
                    "server_growth_kib": report.server_growth_kib(),
                    "server_open_sessions": open_sessions,
                })
            );
        }
        if let Some(server) = in_process {
            server.shutdown().await;
        }
        drop(child);
        if report.failures > 0 {
            return Err(format!(
                "{} of {} cycles failed; the first: {}",
                report.failures,
                report.cycles,
                report.first_error.unwrap_or_default()
            )
            .into());
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

fn print_item_sample(sample: &ItemSoakSample) {
    println!(
        "{:>7.1} s  {:>10} changes  client RSS {:>8} MiB  server RSS {:>8} MiB",
        sample.elapsed_s,
        sample.changes,
        kib(sample.client_rss_kib),
        kib(sample.server_rss_kib)
    );
}

/// `bench opcua subscriptions`: our server with `--simulate ITEMS` as a child process, one
/// client session monitoring every point.
pub fn items(args: ItemSoakArgs) -> CommandResult {
    if args.items == 0 || args.sampling < Duration::from_millis(1) {
        return Err("--items must be at least 1 and --sampling at least 1ms".into());
    }
    let duration = args.duration;
    let sample_every = args.sample_every;
    if sample_every.is_zero() {
        return Err("--sample-every must be longer than 0".into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let server = spawn_server(&[
            "--simulate".to_owned(),
            args.items.to_string(),
            "--simulate-interval".to_owned(),
            format!("{}s", args.sampling.as_secs_f64()),
        ])?;
        let endpoint = server.endpoint.clone();
        println!(
            "subscriptions soak: {} items sampled every {} ms for {:.0} s against {endpoint} \
             (server in a child process)",
            args.items,
            args.sampling.as_millis(),
            args.duration.as_secs_f64()
        );
        let config = ItemSoakConfig {
            endpoint,
            nodes: (0..args.items)
                .map(crate::commands::opcua::simulated_node)
                .collect(),
            sampling_ms: args.sampling.as_secs_f64() * 1000.0,
            duration,
            sample_every,
            server_pid: Some(server.id()),
        };
        let report = run_item_soak(&config, print_item_sample).await?;
        drop(server);
        println!(
            "{} items created in {:.1} s; {} changes in {:.1} s ({:.0}/s of {:.0}/s expected), \
             {} wrong values, {} messages lost, {} items silent",
            report.items,
            report.setup_s,
            report.changes,
            report.seconds,
            report.changes_per_second,
            report.expected_per_second,
            report.wrong_values,
            report.lost_messages,
            report.silent_items
        );
        println!(
            "RSS growth from the first sample to the last: client {}, server {}",
            growth(report.client_growth_kib()),
            growth(report.server_growth_kib())
        );
        if args.json {
            println!(
                "{}",
                json!({
                    "benchmark": "opcua subscriptions",
                    "report": report,
                    "client_growth_kib": report.client_growth_kib(),
                    "server_growth_kib": report.server_growth_kib(),
                })
            );
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
