//! `buildwire bench opcua soak`: runs [`run_soak`] against our server (in this process or as
//! a child process) or any `--target`, and prints the RSS curve.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use buildwire_bench::opcua::{SoakConfig, SoakReport, SoakSample, run_soak};
use buildwire_opcua::driver::OpcuaServer;
use buildwire_opcua::server::ServerConfig;
use serde_json::json;

use super::CommandResult;
use super::bench_opcua::SoakArgs;

/// A child server process, killed when dropped.
struct ChildServer(Child);

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `buildwire opcua serve --bind 127.0.0.1:0` and waits for its endpoint.
fn spawn_server() -> Result<(ChildServer, String), Box<dyn std::error::Error>> {
    let program = super::bench::self_program()?;
    let mut child = Command::new(program)
        .args(["opcua", "serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or("the server's standard output is not available")?;
    let child = ChildServer(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let endpoint = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| format!("the server did not start: `{}`", line.trim()))?
        .to_owned();
    Ok((child, endpoint))
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
    let growth =
        |g: Option<i64>| g.map_or("-".to_owned(), |g| format!("{:+.1} MiB", g as f64 / 1024.0));
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
                let (server, endpoint) = spawn_server()?;
                let pid = server.0.id();
                child = Some(server);
                (endpoint, Some(pid), "server in a child process")
            }
            (None, false) => {
                let config = ServerConfig {
                    endpoint_url: String::new(),
                    ..ServerConfig::default()
                };
                let server = OpcuaServer::start("127.0.0.1:0", config, |_| Ok(())).await?;
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
