//! `buildwire bench ...`: benchmarks. Numbers are printed and recorded, never asserted.

mod bacnet;
mod bacnet_sc;
mod gateway;
mod haystack_his;
mod haystack_http;
mod opcua;
mod opcua_soak;
mod scenario;

use std::path::PathBuf;
use std::time::Duration;

use buildwire_bench::haystack::decode;
use buildwire_bench::limit::{self, LimitConfig, LimitOutcome, Phase};
use buildwire_bench::placement::Placement;
use buildwire_bench::report::{MachineInfo, Report, render_table, write_latency_cdf};
use clap::{Args, Subcommand};

use crate::commands::common::duration::parse_duration;
use crate::commands::common::output::print_table_and_report;
use crate::commands::common::program::{peers_dir, self_program};
use crate::commands::common::result::CommandResult;
use crate::progress::ProgressLine;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The physical limit: raw request/response loops on 127.0.0.1 with no protocol at all.
    #[command(subcommand)]
    Limit(LimitCommand),
    /// Project Haystack benchmarks.
    #[command(subcommand)]
    Haystack(HaystackBench),
    /// OPC UA benchmarks.
    #[command(subcommand)]
    Opcua(opcua::OpcuaBench),
    /// BACnet benchmarks: bac-py's published scenarios against the 40-object stress server.
    #[command(subcommand)]
    Bacnet(bacnet::BacnetBench),
    /// The BACnet to Haystack gateway over a simulated site: discovery time, latency from a
    /// device change to the store, changes per second, memory per point.
    #[command(after_help = gateway::AFTER_HELP)]
    Gateway(gateway::GatewayBenchArgs),
}

#[derive(Debug, Subcommand)]
pub enum HaystackBench {
    /// Decode times of Alpha and Bravo in every format: buildwire beside libhaystack,
    /// haystack-core and haystack-py, each in its own process (peak memory per process).
    #[command(
        after_help = "Peers come from scripts/peers.sh (node, py313); a missing one is \
        reported and skipped.\n\nExamples:\n  buildwire bench haystack decode --iterations 20 --json\n  buildwire bench haystack decode --iterations 40 --rounds 3  # BENCHMARKS.md"
    )]
    Decode(HaystackDecodeArgs),
    /// HTTP load as haystack-py publishes it: 50 connections, SCRAM once each, a mix of
    /// about, ops, read site, read point and nav; buildwire, haystack-py and the limit.
    #[command(after_help = haystack_http::AFTER_HELP)]
    Http(haystack_http::HaystackHttpArgs),
    /// WebSocket load as haystack-py publishes it: 20 connections, SCRAM once each, the same
    /// mix as `http` over one WebSocket each; buildwire, haystack-py and the limit
    #[command(after_help = haystack_http::WS_AFTER_HELP)]
    Ws(haystack_http::HaystackHttpArgs),
    /// hisWrite and hisRead throughput per storage backend: a year of 15-minute samples on
    /// 100 points, written in batches and read back, every answer checked.
    #[command(after_help = haystack_his::AFTER_HELP)]
    His(haystack_his::HaystackHisArgs),
    /// (internal) one decoder in a child process; prints timings as JSON.
    #[command(hide = true)]
    DecodeWorker(DecodeWorkerArgs),
}

#[derive(Debug, Args)]
pub struct HaystackDecodeArgs {
    /// Folder holding alpha.* and bravo.*.
    #[arg(long, default_value = "../shared/data/haystack")]
    data: PathBuf,
    /// Decodes per file and decoder (the first is a warm-up and not counted).
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// Run everything this many times, round after round, and report the median of the
    /// rounds' medians (each round's median is in the JSON report): on a noisy machine
    /// three rounds give ratios that one run cannot.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    rounds: u64,
    /// Where scripts/peers.sh installed the peers (default: $BUILDWIRE_PEERS or ./.peers).
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Decoders to run, comma-separated (default: all): buildwire, buildwire-1t (ours
    /// with two-thread decoding of large documents turned off), libhaystack,
    /// haystack-core, haystack-py.
    #[arg(long, value_delimiter = ',')]
    decoders: Option<Vec<String>>,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct DecodeWorkerArgs {
    #[arg(long)]
    decoder: String,
    #[arg(long)]
    file: PathBuf,
    #[arg(long, default_value_t = 10)]
    iterations: usize,
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
    #[arg(long, default_value = "0.5s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// Seconds measured.
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    seconds: Duration,
    /// Thread placement: free, same-core or split-cores (it changes loopback numbers
    /// several-fold on small machines; say which you used when you quote a number).
    #[arg(long, default_value_t = Placement::Free)]
    placement: Placement,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
    /// Draw the latency CDF to this file (.png or .svg).
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
        BenchCommand::Opcua(cmd) => opcua::execute(cmd),
        BenchCommand::Bacnet(cmd) => bacnet::execute(cmd),
        BenchCommand::Gateway(args) => gateway::run(args),
        BenchCommand::Haystack(HaystackBench::Decode(args)) => haystack_decode(args),
        BenchCommand::Haystack(HaystackBench::Http(args)) => haystack_http::run(args),
        BenchCommand::Haystack(HaystackBench::His(args)) => haystack_his::run(args),
        BenchCommand::Haystack(HaystackBench::Ws(args)) => haystack_http::run_ws(args),
        BenchCommand::Haystack(HaystackBench::DecodeWorker(args)) => {
            let decoder = parse_decoder(&args.decoder)?;
            let out = decode::worker(decoder, &args.file, args.iterations);
            println!("{out}");
            Ok(())
        }
    }
}

fn parse_decoder(name: &str) -> Result<decode::Decoder, String> {
    decode::Decoder::ALL
        .into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown decoder `{name}`: use buildwire, buildwire-1t, libhaystack, haystack-core or haystack-py"
            )
        })
}

fn haystack_decode(args: HaystackDecodeArgs) -> CommandResult {
    if !args.data.join("alpha.zinc").is_file() {
        return Err(format!(
            "{} has no alpha.zinc: pass --data DIR with the Alpha and Bravo files",
            args.data.display()
        )
        .into());
    }
    let decoders = match &args.decoders {
        Some(names) => names
            .iter()
            .map(|n| parse_decoder(n))
            .collect::<Result<Vec<_>, _>>()?,
        None => decode::Decoder::ALL.to_vec(),
    };
    let peers = peers_dir(args.peers.as_ref());
    let worker_program = self_program()?;
    let config = decode::DecodeConfig {
        data_dir: args.data.clone(),
        iterations: args.iterations.max(2),
        rounds: usize::try_from(args.rounds).unwrap_or(1),
        peers_dir: peers,
        worker_program,
        decoders,
    };
    let progress = ProgressLine::new(args.json);
    let results = decode::run(&config, &|what: &str| {
        progress.set(format!("decoding {what}"))
    });
    progress.finish();
    let table = decode_table(&results, config.rounds);
    let report = serde_json::json!({
        "benchmark": "haystack decode",
        "machine": MachineInfo::detect(),
        "config": config,
        "results": results,
    });
    print_table_and_report(&table, &report, args.json)
}

/// The first line of an error, cut to fit a table cell (the JSON report has it whole).
fn short_note(error: &str) -> String {
    let line = error
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let mut note: String = line.chars().take(70).collect();
    if line.chars().count() > 70 {
        note.push('…');
    }
    note
}

fn decode_table(results: &[decode::DecodeResult], rounds: usize) -> String {
    use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "file",
        "decoder",
        "median ms",
        "min ms",
        "vs buildwire",
        "encode ms",
        "peak RSS MiB",
        "note",
    ]);
    let ours = |file: &str| {
        results
            .iter()
            .find(|r| r.file == file && r.decoder == "buildwire")
            .and_then(|r| r.median_ms)
    };
    let num = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
    };
    for r in results {
        let ratio = match (r.median_ms, ours(&r.file)) {
            (Some(theirs), Some(mine)) if mine > 0.0 => format!("{:.1}x", theirs / mine),
            _ => "-".to_owned(),
        };
        table.add_row(vec![
            r.file.clone(),
            r.decoder.clone(),
            num(r.median_ms, 2),
            num(r.min_ms, 2),
            ratio,
            num(r.encode_median_ms, 2),
            num(r.peak_rss_mib, 1),
            r.error.as_deref().map_or_else(String::new, short_note),
        ]);
    }
    let medians = if rounds > 1 {
        format!("; median ms: the median of {rounds} rounds' medians, min ms: of all rounds")
    } else {
        String::new()
    };
    format!(
        "haystack decode (each decoder in its own process{medians})\nmachine: {}\n{table}\n",
        MachineInfo::detect().one_line()
    )
}

type LimitRunner =
    fn(&LimitConfig, limit::ProgressFn<'_>) -> Result<LimitOutcome, limit::LimitError>;

fn run_limit(name: &str, args: LimitArgs, runner: LimitRunner) -> CommandResult {
    let config = LimitConfig {
        request_size: args.request_size,
        response_size: args.response_size,
        in_flight: args.in_flight,
        warmup: args.warmup,
        duration: args.seconds,
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
        write_latency_cdf(path, name, &[(name, &outcome.histogram)])?;
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
