//! `buildwire opcua ...`: OPC UA tools: decode captured bytes, look up status codes, run our
//! server (`serve`) and use our client (`browse`, `read`, `write`, `call`).

mod client_args;
mod endpoints;
mod repeat;
mod security;
mod subscribe;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use buildwire_opcua::StatusCode;
use buildwire_opcua::client::value_text::{
    is_typed_argument, parse_argument_as, parse_typed, parse_value, value_to_json,
};
use buildwire_opcua::driver::OpcuaServer;
use buildwire_opcua::driver::OpcuaServerConfig;
use buildwire_opcua::driver::batch::value_of;
use buildwire_opcua::encoding::{NodeId, QualifiedName, Variant};
use buildwire_opcua::inspect::dissect_stream;
use buildwire_opcua::server::subscriptions::services::add_eu_range;
use buildwire_opcua::server::{ServerConfig, UserAccount, bench_methods};
use buildwire_opcua::services::well_known_nodes as ids;
use buildwire_opcua::services::{AttributeId, ReadValueId};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::commands::common::csv;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::secrets;
use crate::commands::common::service::ServiceArgs;
use crate::commands::common::signals::{StopSignals, stopped, wait_for_stop};

/// Longest `--shutdown-notice`: well inside the bound every shutdown has.
const MAX_SHUTDOWN_NOTICE: Duration = Duration::from_secs(20);
use crate::hex_input::read_hex_argument;
use client_args::{ClientArgs, client_config, connect, parse_node, split_user};
use security::{CertsArgs, ServeSecurityArgs, certs};

#[derive(Debug, Subcommand)]
pub enum OpcuaCommand {
    /// Decode captured UA TCP bytes: each chunk's header and its Hello / Acknowledge / Error
    /// fields or secure channel headers.
    #[command(after_help = "Example:\n  \
        buildwire opcua decode \"48454c4638000000000000000000010000000100 \\\n      0000000000000000180000006f70632e7463 \\\n      703a2f2f6c6f63616c686f73743a34383430\"")]
    Decode(DecodeArgs),
    /// Look up a StatusCode by number (0x80070000) or by name (BadDecodingError); no
    /// server is asked (for a server's own status: `opcua endpoints URL`).
    #[command(
        visible_alias = "status",
        after_help = "Examples:\n  \
        buildwire opcua status-code 0x80070000\n  \
        buildwire opcua status-code BadTcpMessageTooLarge --json\n\n\
        `opcua status` still works as another name for this lookup; given a server URL it \
        points to `opcua endpoints`."
    )]
    StatusCode(StatusArgs),
    /// Check a server as a user would: its endpoints (security policies, modes, user token
    /// types), then over a session its ServerStatus (state, start time, BuildInfo) and
    /// namespaces.
    #[command(after_help = "Examples:\n  \
        buildwire opcua endpoints opc.tcp://127.0.0.1:4840\n  \
        buildwire opcua endpoints opc.tcp://127.0.0.1:4840 --json\n  \
        buildwire opcua endpoints opc.tcp://plc.local:4840 --no-session \\\n      # endpoints only, no session\n  \
        buildwire opcua endpoints opc.tcp://127.0.0.1:4840 --user alice:secret")]
    Endpoints(endpoints::EndpointsArgs),
    /// Run our OPC UA server until Ctrl-C; prints its endpoint. SecurityPolicy None unless
    /// --security names secured policies (then the certificate in --pki is used, created on
    /// first run, and client certificates must be in trusted/).
    #[command(after_help = "Examples:\n  \
        buildwire opcua serve --bench-methods\n  \
        buildwire opcua serve --bind 127.0.0.1:48400 --user alice:secret\n  \
        buildwire opcua serve --security Basic256Sha256,Aes256_Sha256_RsaPss \\\n      --mode encrypt\n\n\
        A refused client certificate is stored in PKI/rejected/; trust it with\n  \
        buildwire opcua certs trust THUMBPRINT\n\nand restart the server.")]
    Serve(ServeArgs),
    /// Manage the certificates: our own (create, show) and the peers' (list, trust, reject,
    /// remove).
    #[command(after_help = "Examples:\n  \
        buildwire opcua certs create --application-uri urn:plant:gateway --host \\\n      gw.local\n  \
        buildwire opcua certs list --json\n  \
        buildwire opcua certs trust 3f2a9c1d \\\n      # a rejected certificate, by thumbprint prefix\n  \
        buildwire opcua certs trust peer.der --pki /etc/buildwire/pki")]
    Certs(CertsArgs),
    /// Browse the hierarchical references of a node (default: the Objects folder, i=85).
    #[command(
        after_help = "Example:\n  buildwire opcua browse opc.tcp://127.0.0.1:4840 'ns=1;i=5000' --json"
    )]
    Browse(BrowseArgs),
    /// Read one attribute (default: Value) of one or more nodes; with --repeat, read again
    /// every --interval on a client that reconnects by itself when the server goes away.
    #[command(after_help = "Examples:\n  \
        buildwire opcua read opc.tcp://127.0.0.1:4840 i=2258 i=2255 --json\n  \
        buildwire opcua read opc.tcp://127.0.0.1:4840 i=2258 --repeat 100 \\\n      --interval 500ms --json\n  \
        buildwire opcua read opc.tcp://127.0.0.1:4840 i=2258 --repeat 60 --csv\n\n\
        With --repeat the client re-activates its session on a new connection after a network \
        cut, and creates one new session after a server restart; each round and each \
        connection event is one line (JSON lines with --json). A round fails when the server \
        stays away longer than --reconnect-timeout; the loop goes on.")]
    Read(ReadArgs),
    /// Write the Value attribute of a node, converted to the node's DataType (read first)
    /// unless --type says otherwise; numbers the type cannot hold are refused.
    #[command(after_help = "Examples:\n  \
        buildwire opcua write opc.tcp://127.0.0.1:4840 'ns=1;s=Setpoint' 42.5\n  \
        buildwire opcua write opc.tcp://127.0.0.1:4840 'ns=2;s=Mode' 3 --type uint16")]
    Write(WriteArgs),
    /// Call a method; bare arguments are read as the types of the method's InputArguments,
    /// `type:value` (uint32:1, string:abc) forces a type.
    #[command(after_help = "Examples:\n  \
        buildwire opcua call opc.tcp://127.0.0.1:4840 'ns=1;i=5000' 'ns=1;i=6000' 1\n  \
        buildwire opcua call opc.tcp://127.0.0.1:4840 'ns=1;i=5000' 'ns=1;i=6000' \\\n      uint32:1")]
    Call(CallArgs),
    /// Subscribe to the Value of nodes and print every change until Ctrl-C (or --duration);
    /// the subscription is deleted on the way out.
    #[command(after_help = "Examples:\n  \
        buildwire opcua subscribe opc.tcp://127.0.0.1:4840 'ns=1;s=Setpoint' --json\n  \
        buildwire opcua subscribe opc.tcp://127.0.0.1:4840 i=2258 --csv > time.csv\n  \
        buildwire opcua subscribe opc.tcp://127.0.0.1:4840 'ns=1;s=Setpoint' \\\n      --interval 100ms \
        --queue 10 --deadband abs:0.5 --duration 30")]
    Subscribe(subscribe::SubscribeArgs),
}

/// Which tokio runtime `serve` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RuntimeKind {
    /// One thread: every connection on the same core (lowest latency for one client).
    CurrentThread,
    /// One worker per core.
    MultiThread,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:4840")]
    bind: String,
    /// Serve the throughput benchmark methods (ns=1;i=5000 with setSize ns=1;i=6000 and
    /// getData ns=1;i=6001). Our server always has them; the flag is accepted for scripts
    /// written for other servers.
    #[arg(long)]
    bench_methods: bool,
    /// Accept this user (NAME:PASSWORD); repeat for more. Anonymous stays allowed unless
    /// --no-anonymous. A password given here shows in `ps`: prefer --user-password-file or
    /// the BUILDWIRE_OPCUA_USER environment variable (NAME:PASSWORD).
    #[arg(
        long = "user",
        value_name = "NAME:PASSWORD",
        env = "BUILDWIRE_OPCUA_USER",
        hide_env_values = true
    )]
    users: Vec<String>,
    /// A file of users, one NAME:PASSWORD per line (blank lines and `#` comments are
    /// skipped), read at start-up: the passwords stay out of the command line.
    #[arg(long, value_name = "FILE")]
    user_password_file: Option<PathBuf>,
    /// Refuse anonymous sessions.
    #[arg(long)]
    no_anonymous: bool,
    /// The tokio runtime (current-thread measured faster for the 1 KiB getData loop).
    #[arg(long, value_enum, default_value_t = RuntimeKind::CurrentThread)]
    runtime: RuntimeKind,
    /// Also serve N simulated Double points (`ns=1;s=Sim.0` .. `ns=1;s=Sim.{N-1}`, in the
    /// object `ns=1;s=Simulation` under the Objects folder) whose values all change every
    /// --simulate-interval: point i holds i + the number of changes so far, so every change
    /// is visible and checkable.
    #[arg(long, value_name = "N", default_value_t = 0)]
    simulate: usize,
    /// Time between two changes of the simulated points.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    simulate_interval: Duration,
    /// How long the server announces its shutdown on SIGTERM or Ctrl-C (ServerStatus State
    /// Shutdown, SecondsTillShutdown counting down) before it closes the sessions.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    shutdown_notice: Duration,
    #[command(flatten)]
    security: ServeSecurityArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

/// Most simulated points `serve --simulate` accepts.
const MAX_SIMULATED_POINTS: usize = 1_000_000;

/// The node of simulated point `index`.
pub(super) fn simulated_node(index: usize) -> NodeId {
    NodeId::string(1, &format!("Sim.{index}"))
}

#[derive(Debug, Args)]
pub struct BrowseArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The node (`i=85`, `ns=1;i=5000`, `ns=2;s=Name`).
    #[arg(default_value = "i=85")]
    node: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The nodes.
    #[arg(required = true)]
    nodes: Vec<String>,
    /// The attribute, by name (value, browse-name, display-name, data-type, node-class...).
    #[arg(long, default_value = "value")]
    attribute: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// CSV rows after a header row (with --repeat, a round column first); connection
    /// events go to stderr.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Read this many times, reconnecting by itself whenever the connection is lost.
    #[arg(long, value_name = "N")]
    repeat: Option<u64>,
    /// Time between two reads of --repeat.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    interval: Duration,
    /// With --repeat: how long one read waits for a lost server to come back.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    reconnect_timeout: Duration,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The node.
    node: String,
    /// The value, as text of the node's DataType (or of `--type`).
    value: String,
    /// Send the value as this type instead of the node's DataType: boolean, sbyte, byte,
    /// int16, uint16, int32, uint32, int64, uint64, float, double, string, bytestring (hex).
    #[arg(long = "type")]
    value_type: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The object the method belongs to.
    object: String,
    /// The method.
    method: String,
    /// Input arguments: bare (read as the declared InputArguments types) or `type:value`.
    args: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The bytes in hex (spaces, colons and 0x prefixes are ignored); `-` reads stdin.
    hex: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A number (decimal or 0x hex) or a name.
    code: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn execute(cmd: OpcuaCommand) -> CommandResult {
    match cmd {
        OpcuaCommand::Decode(args) => decode(args),
        OpcuaCommand::StatusCode(args) => status(args),
        OpcuaCommand::Endpoints(args) => client_runtime()?.block_on(endpoints::endpoints(args)),
        OpcuaCommand::Serve(args) => serve(args),
        OpcuaCommand::Certs(args) => certs(args),
        OpcuaCommand::Browse(args) => client_runtime()?.block_on(browse(args)),
        OpcuaCommand::Read(args) => client_runtime()?.block_on(read(args)),
        OpcuaCommand::Write(args) => client_runtime()?.block_on(write(args)),
        OpcuaCommand::Call(args) => client_runtime()?.block_on(call(args)),
        OpcuaCommand::Subscribe(args) => client_runtime()?.block_on(subscribe::subscribe(args)),
    }
}

fn client_runtime() -> Result<tokio::runtime::Runtime, Box<dyn std::error::Error>> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Changes every simulated point each `interval`, for ever: point i becomes i + tick,
/// stamped with the server's clock.
async fn run_simulation(server: &OpcuaServer, points: usize, interval: Duration) {
    let nodes: Vec<NodeId> = (0..points).map(simulated_node).collect();
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    for tick in 1u64.. {
        ticker.tick().await;
        server.with_server(|s| {
            let stamp = s.wall_clock(std::time::Instant::now());
            for (index, node) in nodes.iter().enumerate() {
                let value = Variant::Double(index as f64 + tick as f64);
                // The points were added at start and nothing removes them.
                let _ = s.address_space.set_value(node, value, stamp);
            }
        });
    }
}

fn serve(args: ServeArgs) -> CommandResult {
    args.service.start_logs()?;
    crate::commands::common::signals::ignore_sigpipe();
    let simulate = args.simulate;
    if simulate > MAX_SIMULATED_POINTS {
        return Err(format!("--simulate {simulate}: at most {MAX_SIMULATED_POINTS} points").into());
    }
    let simulate_interval = args.simulate_interval;
    if simulate_interval < Duration::from_millis(1) {
        return Err("--simulate-interval must be at least 1ms".into());
    }
    let shutdown_notice = args.shutdown_notice;
    if shutdown_notice > MAX_SHUTDOWN_NOTICE {
        return Err(format!(
            "--shutdown-notice {:?}: give 0 to {} seconds",
            shutdown_notice,
            MAX_SHUTDOWN_NOTICE.as_secs()
        )
        .into());
    }
    let mut user_specs = args.users.clone();
    if let Some(path) = &args.user_password_file {
        user_specs.extend(secrets::user_lines(path)?);
    }
    let users = user_specs
        .iter()
        .map(|text| {
            split_user(text).map(|(user_name, password)| UserAccount {
                user_name,
                password,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let _ = args.bench_methods;
    let (security, application_uri) = args.security.server_security(!users.is_empty())?;
    let allow_cleartext_passwords = args.security.allow_cleartext_passwords;
    let runtime = match args.runtime {
        RuntimeKind::CurrentThread => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        RuntimeKind::MultiThread => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    runtime.block_on(async move {
        let signals = StopSignals::listen()?;
        let config = ServerConfig {
            endpoint_url: String::new(),
            users,
            allow_anonymous: !args.no_anonymous,
            allow_cleartext_passwords,
            application_uri: application_uri
                .unwrap_or_else(|| ServerConfig::default().application_uri),
            security,
            ..ServerConfig::default()
        };
        let server = OpcuaServer::start(
            OpcuaServerConfig::new(&args.bind, config)
                .with_setup(bench_methods::install)
                .with_setup(move |server| {
                    // A writable Double for clients to try writes on.
                    let setpoint = NodeId::string(1, "Setpoint");
                    server.address_space.add_variable(
                        &ids::OBJECTS_FOLDER,
                        setpoint.clone(),
                        QualifiedName::new(1, "Setpoint"),
                        Variant::Double(0.0),
                        NodeId::numeric(0, 11),
                        true,
                    )?;
                    // An analog item: its EURange (0..100) makes percent deadbands possible.
                    add_eu_range(&mut server.address_space, &setpoint, 0.0, 100.0)?;
                    if simulate > 0 {
                        server.address_space.add_object(
                            &ids::OBJECTS_FOLDER,
                            NodeId::string(1, "Simulation"),
                            QualifiedName::new(1, "Simulation"),
                        )?;
                    }
                    for index in 0..simulate {
                        let node = simulated_node(index);
                        server.address_space.add_variable(
                            &NodeId::string(1, "Simulation"),
                            node,
                            QualifiedName::new(1, &format!("Sim.{index}")),
                            Variant::Double(index as f64),
                            NodeId::numeric(0, 11),
                            false,
                        )?;
                    }
                    Ok(())
                }),
        )
        .await?;

        // What is printed is for whoever reads stdout; a reader that went away (`| head -1`)
        // must not stop the server, so write errors are ignored.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on {}", server.endpoint_url());
        server.with_server(|server| {
            let security = &server.config.security;
            let endpoints: Vec<String> = security
                .endpoints
                .iter()
                .map(|(policy, mode)| format!("{policy}/{mode:?}"))
                .collect();
            let _ = writeln!(out, "endpoints: {}", endpoints.join(", "));
            if let Some(identity) = &security.identity {
                let _ = writeln!(
                    out,
                    "certificate {} ({})",
                    identity.certificate.thumbprint_hex(),
                    identity.certificate.application_uri().unwrap_or("-")
                );
            }
        });
        let _ = out.flush();
        drop(out);
        // Serves (and simulates) until SIGINT or SIGTERM; then clients are told for
        // --shutdown-notice (ServerStatus State, SecondsTillShutdown) before they are closed.
        let stop = wait_for_stop(signals, "telling clients, then closing their sessions");
        tokio::pin!(stop);
        let signal = if simulate > 0 {
            tokio::select! {
                signal = &mut stop => signal,
                () = run_simulation(&server, simulate, simulate_interval) => (&mut stop).await,
            }
        } else {
            stop.await
        };
        server
            .shutdown_announced(shutdown_notice, "the server was asked to stop")
            .await;
        stopped(signal)
    })
}

fn node_id_text(node: &NodeId) -> String {
    node.to_string()
}

async fn browse(args: BrowseArgs) -> CommandResult {
    let node = parse_node(&args.node)?;
    let mut client = connect(&args.client).await?;
    let references = client.browse(&node).await?;
    client.close().await?;
    let rows: Vec<Value> = references
        .iter()
        .map(|r| {
            json!({
                "node_id": node_id_text(&r.node_id.node_id),
                "browse_name": r.browse_name.to_string(),
                "display_name": r.display_name.text.as_str(),
                "node_class": format!("{:?}", r.node_class),
                "reference_type": node_id_text(&r.reference_type_id),
                "type_definition": node_id_text(&r.type_definition.node_id),
            })
        })
        .collect();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"node": args.node, "references": rows}))?
        );
    } else {
        for r in &references {
            println!(
                "{:<24} {:<32} {:?}",
                node_id_text(&r.node_id.node_id),
                r.browse_name.to_string(),
                r.node_class
            );
        }
    }
    Ok(())
}

fn attribute_by_name(name: &str) -> Result<AttributeId, Box<dyn std::error::Error>> {
    AttributeId::from_name(name).ok_or_else(|| {
        format!("unknown attribute `{name}`; try value, browse-name, display-name, data-type")
            .into()
    })
}

use buildwire_opcua::client::value_text::data_value_json;

async fn read(args: ReadArgs) -> CommandResult {
    let nodes = args
        .nodes
        .iter()
        .map(|text| parse_node(text))
        .collect::<Result<Vec<_>, _>>()?;
    let attribute = attribute_by_name(&args.attribute)?;
    if let Some(repeat) = args.repeat {
        let config = client_config(&args.client).await?;
        let read = repeat::RepeatRead {
            config,
            nodes,
            node_texts: args.nodes.clone(),
            attribute,
            repeat,
            interval: args.interval,
            reconnect_timeout: args.reconnect_timeout,
            json: args.json,
            csv: args.csv,
        };
        return repeat::run(read, data_value_json).await;
    }
    let mut client = connect(&args.client).await?;
    // Batched to the server's MaxNodesPerRead (see `OpcuaClient::read_many`).
    let reads: Vec<ReadValueId> = nodes
        .iter()
        .map(|node| ReadValueId {
            attribute_id: attribute.id(),
            ..value_of(node)
        })
        .collect();
    let values = client.read_many(&reads).await?;
    client.close().await?;
    let rows: Vec<Value> = args
        .nodes
        .iter()
        .zip(&values)
        .map(|(node, value)| data_value_json(node, value))
        .collect();
    if args.csv {
        println!("{}", csv::line(repeat::DATA_VALUE_COLUMNS));
        for row in &rows {
            println!("{}", csv::json_line(row, repeat::DATA_VALUE_COLUMNS));
        }
        return Ok(());
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"results": rows}))?
        );
    } else {
        for row in &rows {
            println!(
                "{} = {} ({})",
                row["node"].as_str().unwrap_or_default(),
                value_text(&row["value"]),
                row["status"].as_str().unwrap_or_default()
            );
        }
    }
    all_reads_failed(&values)
}

/// A value for the text output: a decoded structure as `Name: value, ...` (nested ones in
/// braces), anything else as JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::Object(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(name, field)| match field {
                    Value::Object(_) => format!("{name}: {{{}}}", value_text(field)),
                    Value::String(text) => format!("{name}: {text}"),
                    other => format!("{name}: {other}"),
                })
                .collect();
            parts.join(", ")
        }
        other => other.to_string(),
    }
}

/// Exit status of a read: a failure when every node's read failed (one node or many); a
/// few bad ones among good ones are shown in the output only.
fn all_reads_failed(values: &[buildwire_opcua::encoding::DataValue]) -> CommandResult {
    let bad = values
        .iter()
        .filter(|v| v.status.is_some_and(|s| s.is_bad()))
        .count();
    if !values.is_empty() && bad == values.len() {
        let status = values.first().and_then(|v| v.status).unwrap_or_default();
        let what = if values.len() == 1 {
            format!("the read failed: {status}")
        } else {
            format!("all {} reads failed (the first: {status})", values.len())
        };
        return Err(what.into());
    }
    Ok(())
}

async fn write(args: WriteArgs) -> CommandResult {
    let node = parse_node(&args.node)?;
    let given = match &args.value_type {
        Some(kind) => Some(parse_value(kind, &args.value)?),
        None => None,
    };
    let mut client = connect(&args.client).await?;
    let value = match given {
        Some(value) => value,
        None => {
            let kind = client.value_type(&node).await?.ok_or_else(|| {
                format!(
                    "{} does not say what type its value has: give --type (double, int32, ...)",
                    args.node
                )
            })?;
            parse_typed(kind, &args.value)
                .map_err(|e| format!("{}: {e} (its DataType is {})", args.node, kind.name()))?
        }
    };
    client.write(&node, value.clone()).await?;
    client.close().await?;
    if args.json {
        println!(
            "{}",
            json!({"node": args.node, "value": value_to_json(&value), "status": StatusCode::GOOD.to_string()})
        );
    } else {
        println!("{} <- {} (Good)", args.node, value_to_json(&value));
    }
    Ok(())
}

async fn call(args: CallArgs) -> CommandResult {
    let object = parse_node(&args.object)?;
    let method = parse_node(&args.method)?;
    let mut client = connect(&args.client).await?;
    let declared = if args.args.iter().all(|a| is_typed_argument(a)) {
        Vec::new()
    } else {
        client.input_argument_types(&method).await?
    };
    let inputs = args
        .args
        .iter()
        .enumerate()
        .map(|(i, text)| parse_argument_as(text, declared.get(i).copied().flatten()))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = client.call(&object, &method, inputs).await?;
    client.close().await?;
    let values: Vec<Value> = outputs.iter().map(value_to_json).collect();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"object": args.object, "method": args.method, "status": StatusCode::GOOD.to_string(), "outputs": values})
            )?
        );
    } else {
        println!("Good");
        for value in &values {
            println!("{value}");
        }
    }
    Ok(())
}

fn decode(args: DecodeArgs) -> CommandResult {
    let bytes = read_hex_argument(&args.hex)?;
    let dissection = dissect_stream(&bytes);
    if args.json {
        let out = json!({"chunks": dissection.chunks, "error": dissection.error});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for chunk in &dissection.chunks {
            println!("{}", serde_json::to_string(chunk)?);
        }
        if let Some(e) = &dissection.error {
            println!(
                "ERROR at byte {}: {} ({})",
                e["offset"], e["message"], e["status"]
            );
        }
    }
    match dissection.error {
        Some(_) => Err("the bytes do not decode as a UA TCP stream to the end".into()),
        None => Ok(()),
    }
}

fn status(args: StatusArgs) -> CommandResult {
    let text = args.code.trim();
    if text.starts_with("opc.tcp://") {
        return Err(format!(
            "`opcua status-code` (also `opcua status`) looks up a StatusCode and asks no \
             server; for the state of the server at {text}: buildwire opcua endpoints {text}"
        )
        .into());
    }
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok().map(StatusCode::from_u32),
        None => text.parse::<u32>().ok().map(StatusCode::from_u32),
    };
    let code = parsed.or_else(|| StatusCode::from_name(text)).ok_or_else(|| {
        format!("`{text}` is neither a StatusCode number nor a known name; try 0x80070000 or BadDecodingError")
    })?;
    let out = json!({
        "name": code.name(),
        "value": format!("0x{:08X}", code.bits()),
        "severity": if code.is_good() { "good" } else if code.is_bad() { "bad" } else { "uncertain" },
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{code}");
    }
    Ok(())
}
