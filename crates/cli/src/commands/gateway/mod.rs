//! `buildwire gateway ...`: a BACnet site as a tagged Haystack model with live values,
//! history and writes (the `buildwire-gateway` crate).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use buildwire_gateway::model::Model;
use buildwire_gateway::rules::Rules;
use buildwire_gateway::{Config, DiscoveryReport, Gateway};
use buildwire_haystack::server::HaystackServerConfig;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::signals::{StopSignals, stopped, wait_for_stop};

#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Discover the BACnet site and write its tagged Haystack model to a file (nothing is
    /// stored or served).
    #[command(after_help = DISCOVER_AFTER_HELP)]
    Discover(DiscoverArgs),
    /// Discover, store and serve: live values (COV, else polling) and history in the store,
    /// the Haystack API over the model, pointWrite to the devices.
    #[command(after_help = RUN_AFTER_HELP)]
    Run(RunArgs),
}

const DISCOVER_AFTER_HELP: &str = "Ids are stable: @bacnet.dev1001 (a device's equip), \
    @bacnet.dev1001.ai3 (a point), @bacnet.dev1001.conn (its connector record). Edit the \
    file (add or remove tags) and give it to `gateway run --model`.\n\n\
    Examples:\n  \
    buildwire gateway discover --broadcast 192.168.1.255 --out site.trio\n  \
    # one device by unicast, a local port, the report as JSON:\n  \
    buildwire gateway discover --bacnet 127.0.0.1:0 --device 127.0.0.1:47808 \\\n      \
    --out site.zinc --json\n  \
    buildwire gateway discover --config gateway.toml --rules my-rules.toml \\\n      --out site.json";

const RUN_AFTER_HELP: &str = "The configuration file (--config) holds every setting; the \
    options override it. See the user's guide, chapter \"BACnet to Haystack gateway\".\n\n\
    Examples:\n  \
    buildwire gateway run --broadcast 192.168.1.255 --store memory \\\n      \
    --haystack 127.0.0.1:8080\n  \
    buildwire gateway run --config gateway.toml \\\n      \
    --store postgres://postgres@127.0.0.1:5432/site\n  \
    # a person's edits of a discovered model, a login:\n  \
    buildwire gateway run --config gateway.toml --model site.trio \\\n      \
    --user admin:secret:admin\n\n\
    Then: buildwire haystack client http://127.0.0.1:8080/api read 'point and temp'";

/// Options both commands share: where the configuration is and how to reach the site.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The configuration file (TOML; see the user's guide). Options below override it.
    // Its own id: the shared `--config` reader (common/config_file.rs, for the flat files of
    // the servers) looks for the id `config` and leaves this structured file alone.
    #[arg(long = "config", id = "gateway_config", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The gateway's own BACnet/IP address (port 0 picks one).
    #[arg(long, value_name = "ADDR:PORT")]
    bacnet: Option<SocketAddrV4>,
    /// Broadcast address for Who-Is (e.g. 192.168.1.255).
    #[arg(long, value_name = "IP")]
    broadcast: Option<Ipv4Addr>,
    /// Register as a foreign device of this BBMD: Who-Is then reaches its networks.
    #[arg(long, value_name = "ADDR:PORT")]
    bbmd: Option<SocketAddrV4>,
    /// A device to ask by unicast Who-Is; repeat for several.
    #[arg(long = "device", value_name = "ADDR:PORT")]
    devices: Vec<SocketAddrV4>,
    /// How long each Who-Is waits for I-Am answers.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    who_is_wait: Option<Duration>,
    /// The tagging rules (default: the shipped set).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// The site's id (without @) and timezone, as SITE or SITE:TZ.
    #[arg(long, value_name = "ID[:TZ]")]
    site: Option<String>,
}

#[derive(Debug, Args)]
pub struct DiscoverArgs {
    #[command(flatten)]
    site: SiteArgs,
    /// Where to write the model: .trio, .zinc or .json.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    site: SiteArgs,
    /// Where values, history and the model live: memory, redis://HOST:PORT or
    /// postgres://USER@HOST:PORT/DB.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Where the Haystack API listens.
    #[arg(long, value_name = "HOST:PORT")]
    haystack: Option<SocketAddr>,
    /// A model file a person edited (from `gateway discover`): its tags are kept.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// A Haystack user as NAME:PASSWORD:ROLE (admin, operator or viewer); repeat for
    /// several. Without one every request is admin.
    #[arg(long = "user", value_name = "NAME:PASSWORD:ROLE")]
    users: Vec<String>,
    /// Print a status line every this often.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    report: Duration,
    /// Print the report and the status lines as JSON lines.
    #[arg(long)]
    json: bool,
}

pub fn execute(command: GatewayCommand) -> CommandResult {
    match command {
        GatewayCommand::Discover(args) => discover(args),
        GatewayCommand::Run(args) => run(args),
    }
}

fn load(args: &SiteArgs) -> Result<(Config, Rules), Box<dyn std::error::Error>> {
    let mut config = match &args.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    if let Some(bind) = args.bacnet {
        config.bacnet.bind = bind;
    }
    if args.broadcast.is_some() {
        config.bacnet.broadcast = args.broadcast;
    }
    config.bacnet.devices.extend(args.devices.iter().copied());
    if args.bbmd.is_some() {
        config.bacnet.bbmd = args.bbmd;
    }
    if let Some(wait) = args.who_is_wait {
        config.bacnet.who_is_wait_seconds = wait.as_secs_f64();
    }
    if let Some(site) = &args.site {
        let (id, tz) = site.split_once(':').unwrap_or((site, &config.site.tz));
        config.site.tz = tz.to_owned();
        config.site.id = id.to_owned();
    }
    if let Some(rules) = &args.rules {
        config.rules.file = Some(rules.clone());
    }
    config
        .check()
        .map_err(|e| format!("--site or the configuration: {e}"))?;
    if config.bacnet.broadcast.is_none()
        && config.bacnet.bbmd.is_none()
        && config.bacnet.devices.is_empty()
    {
        return Err(
            "no way to find devices: give --broadcast IP, --bbmd ADDR:PORT or \
            --device ADDR:PORT (or bacnet.broadcast, bacnet.bbmd or bacnet.devices in --config)"
                .into(),
        );
    }
    let rules = match &config.rules.file {
        Some(path) => Rules::from_file(path)?,
        None => Rules::default_set(),
    };
    Ok((config, rules))
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

fn report_json(report: &DiscoveryReport) -> serde_json::Value {
    json!({
        "devices": report.devices,
        "points": report.points,
        "other_objects": report.other_objects,
        "problems": report.problems,
        "invalid": report.validation.invalid.iter()
            .map(|(id, problems)| json!({"id": id, "problems": problems}))
            .collect::<Vec<_>>(),
        "untagged": report.validation.untagged,
    })
}

fn print_report(report: &DiscoveryReport) {
    crate::say!(
        "{} devices, {} points ({} other objects not modelled)",
        report.devices,
        report.points,
        report.other_objects
    );
    for problem in &report.problems {
        crate::say!("  problem: {problem}");
    }
    for (id, problems) in &report.validation.invalid {
        crate::say!("  invalid @{id}: {}", problems.join("; "));
    }
    let untagged = &report.validation.untagged;
    if !untagged.is_empty() {
        // The first ones by name; --json lists them all.
        const SHOWN: usize = 20;
        let mut names: Vec<String> = untagged
            .iter()
            .take(SHOWN)
            .map(|id| format!("@{id}"))
            .collect();
        if untagged.len() > SHOWN {
            names.push(format!(
                "... and {} more (--json lists all)",
                untagged.len() - SHOWN
            ));
        }
        crate::say!(
            "  {} points no rule tagged: {}",
            untagged.len(),
            names.join(" ")
        );
    }
}

fn discover(args: DiscoverArgs) -> CommandResult {
    let (config, rules) = load(&args.site)?;
    // Refuse a bad output name before the network work.
    buildwire_gateway::model::model_format(&args.out)?;
    runtime()?.block_on(async move {
        let client = buildwire_gateway::run::bind_client(&config).await?;
        let (model, _, report) =
            buildwire_gateway::discover_model(&client, &config, &rules).await?;
        client.shutdown();
        model.write_file(&args.out)?;
        if args.json {
            let mut doc = report_json(&report);
            doc["out"] = json!(args.out.display().to_string());
            crate::say!("{doc}");
        } else {
            print_report(&report);
            crate::say!("model written to {}", args.out.display());
        }
        Ok(())
    })
}

fn run(args: RunArgs) -> CommandResult {
    let (mut config, rules) = load(&args.site)?;
    if let Some(store) = &args.store {
        config.store.url = store.clone();
    }
    if let Some(haystack) = args.haystack {
        config.haystack.bind = haystack;
    }
    let imported = match &args.model {
        Some(path) => Some(Model::read_file(path)?),
        None => None,
    };
    let mut server = HaystackServerConfig::new();
    for spec in &args.users {
        server = server.user_spec(spec);
    }
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let store = buildwire_haystack::backends::open(&config.store.url).await?;
        let client = std::sync::Arc::new(buildwire_gateway::run::bind_client(&config).await?);
        let gateway = Gateway::start_with(config, rules, server, store, client, imported).await?;
        if args.json {
            let mut doc = report_json(gateway.report());
            doc["haystack"] = json!(gateway.haystack_url());
            crate::say!("{doc}");
        } else {
            // The URL on the first line is what scripts wait for.
            crate::say!(
                "serving Haystack on {} (WebSocket {}; Ctrl-C stops)",
                gateway.haystack_url(),
                gateway.haystack_ws_url()
            );
            print_report(gateway.report());
        }
        let stats = std::sync::Arc::clone(gateway.stats());
        let json = args.json;
        let every = args.report;
        let status = tokio::spawn(async move {
            let mut timer = tokio::time::interval(every);
            timer.tick().await;
            loop {
                timer.tick().await;
                let (cov, polled, changes, samples, errors) = (
                    stats.cov_points.load(Ordering::Relaxed),
                    stats.polled_points.load(Ordering::Relaxed),
                    stats.changes.load(Ordering::Relaxed),
                    stats.samples.load(Ordering::Relaxed),
                    stats.store_errors.load(Ordering::Relaxed),
                );
                if json {
                    crate::say!(
                        "{}",
                        json!({"cov_points": cov, "polled_points": polled, "changes": changes,
                               "samples": samples, "store_errors": errors})
                    );
                } else {
                    crate::say!(
                        "{cov} points on COV, {polled} polled; {changes} changes, {samples} \
                         history samples, {errors} store errors"
                    );
                }
            }
        });
        let signal = wait_for_stop(signals, "cancelling COV subscriptions").await;
        status.abort();
        gateway.stop().await;
        stopped(signal)
    })
}
