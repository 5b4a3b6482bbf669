//! `buildwire bench ...`: benchmarks. Numbers are printed and recorded, never asserted.

use std::path::PathBuf;
use std::time::Duration;

use buildwire_bench::limit::{self, LimitConfig, LimitOutcome, Phase};
use buildwire_bench::placement::Placement;
use buildwire_bench::report::{MachineInfo, Report, render_table, write_latency_cdf_svg};
use clap::{Args, Subcommand};

use super::CommandResult;
use crate::progress::ProgressLine;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The physical limit: raw request/response loops on 127.0.0.1 with no protocol at all.
    #[command(subcommand)]
    Limit(LimitCommand),
}

#[derive(Debug, Subcommand)]
pub enum LimitCommand {
    /// One UDP datagram out, one back (the ceiling for BACnet/IP).
    #[command(after_help = "Example: buildwire bench limit udp --in-flight 7 --seconds 5")]
    Udp(LimitArgs),
    /// A small TCP request, a response of any size (the ceiling for OPC UA and HTTP).
    #[command(
        after_help = "Example (the 1 MiB OPC UA package): buildwire bench limit tcp --request-size 64 --response-size 1048576"
    )]
    Tcp(LimitArgs),
}

#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Requests kept outstanding at once (bac-py's worker mix has 7).
    #[arg(long, default_value_t = 1)]
    in_flight: usize,
    /// Bytes per request (at least 8: the sequence number).
    #[arg(long, default_value_t = 20)]
    request_size: usize,
    /// Bytes per response (at least 8).
    #[arg(long, default_value_t = 20)]
    response_size: usize,
    /// Seconds to run before measuring.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Seconds measured.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Thread placement: free, same-core or split-cores (it changes loopback numbers
    /// several-fold on small machines; say which you used when you quote a number).
    #[arg(long, default_value_t = Placement::Free)]
    placement: Placement,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
    /// Draw the latency CDF to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

pub fn execute(cmd: BenchCommand) -> CommandResult {
    match cmd {
        BenchCommand::Limit(LimitCommand::Udp(args)) => {
            run_limit("limit udp", args, limit::run_udp_limit)
        }
        BenchCommand::Limit(LimitCommand::Tcp(args)) => {
            run_limit("limit tcp", args, limit::run_tcp_limit)
        }
    }
}

type LimitRunner =
    fn(&LimitConfig, limit::ProgressFn<'_>) -> Result<LimitOutcome, limit::LimitError>;

fn run_limit(name: &str, args: LimitArgs, runner: LimitRunner) -> CommandResult {
    let config = LimitConfig {
        request_size: args.request_size,
        response_size: args.response_size,
        in_flight: args.in_flight,
        warmup: seconds("--warmup", args.warmup)?,
        duration: seconds("--seconds", args.seconds)?,
        placement: args.placement,
    };
    let progress = ProgressLine::new(args.json);
    let report_progress = |phase: Phase, answered: u64, secs: f64| {
        let rate = if secs > 0.0 {
            answered as f64 / secs
        } else {
            0.0
        };
        let phase = match phase {
            Phase::Warmup => "warmup",
            Phase::Sustain => "sustain",
        };
        progress.set(format!("{name} {phase}: {answered} replies, {rate:.0}/s"));
    };
    let outcome = runner(&config, &report_progress);
    progress.finish();
    let outcome = outcome?;
    if let Some(path) = &args.plot {
        write_latency_cdf_svg(path, name, &[(name, &outcome.histogram)])?;
        eprintln!("latency CDF written to {}", path.display());
    }
    let report = Report {
        benchmark: name.to_owned(),
        machine: MachineInfo::detect(),
        config: serde_json::to_value(&config)?,
        results: vec![outcome.measurement],
    };
    if args.json {
        eprint!("{}", render_table(&report));
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_table(&report));
        println!("placement: {}", config.placement);
    }
    Ok(())
}

fn seconds(flag: &str, value: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("{flag} {value} is not a number of seconds >= 0; try --seconds 3"))
}
