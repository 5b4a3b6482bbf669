//! `buildwire bacnet sc-certs | sc-hub` and `serve --transport sc`: BACnet Secure Connect
//! (Annex AB) from the command line. The hub and the nodes speak WebSockets over TLS 1.3 with
//! mutual authentication; plaintext `ws://` only with `--no-tls`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use buildwire_bacnet::driver::sc::certs::write_pki;
use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config, server_config};
use buildwire_bacnet::driver::{
    BacnetServer, BacnetServerConfig, ScHub, ScHubConfig, ScNodeConfig, ScTransport,
    load_or_create_uuid, random_identity, random_uuid, random_vmac,
};
use buildwire_bacnet::link::sc::node::NodeConfig;
use buildwire_bacnet::link::sc::{DeviceUuid, HubConfig, LocalIdentity};
use clap::Args;
use serde_json::json;

/// How long the hub waits for its nodes to take the close when it stops.
const HUB_CLOSE_GRACE: Duration = Duration::from_secs(2);

use crate::commands::common::duration::parse_duration;
use crate::commands::common::report_timer::ReportTimer;
use crate::commands::common::result::CommandResult;
use crate::commands::common::service::ServiceArgs;
use crate::commands::common::signals::{StopSignals, stopped, wait_for_stop};

/// `sc-certs`.
#[derive(Debug, Args)]
pub struct ScCertsArgs {
    /// Folder to write `ca.crt`, `ca.key` and `NAME.crt`, `NAME.key` per name into.
    dir: PathBuf,
    /// Operational certificates to issue (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "hub,node1,node2,client")]
    names: Vec<String>,
    /// More subject alternative names for every certificate (host names or IP addresses;
    /// 127.0.0.1, ::1 and localhost are always in).
    #[arg(long, value_delimiter = ',')]
    san: Vec<String>,
    /// Days the certificates are valid.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Print the files written as JSON.
    #[arg(long)]
    json: bool,
}

/// The TLS files of a hub or node: `--cert`, `--key`, `--ca` (or `--certs DIR --name NAME`).
#[derive(Debug, Args)]
pub struct ScTlsArgs {
    /// Operational certificate (PEM).
    #[arg(long)]
    cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long)]
    key: Option<PathBuf>,
    /// Issuer certificate(s) trusted for peers (PEM; repeat for more).
    #[arg(long)]
    ca: Vec<PathBuf>,
    /// Plaintext `ws://` without TLS: only for comparing with TLS in benchmarks.
    #[arg(long)]
    no_tls: bool,
}

impl ScTlsArgs {
    fn files(&self) -> Result<Option<ScTlsFiles>, String> {
        if self.no_tls {
            return Ok(None);
        }
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) if !self.ca.is_empty() => Ok(Some(ScTlsFiles {
                certificate: cert.clone(),
                private_key: key.clone(),
                issuers: self.ca.clone(),
            })),
            _ => Err(
                "BACnet/SC needs --cert, --key and --ca (make test ones with \
                 `buildwire bacnet sc-certs DIR`), or --no-tls for plaintext"
                    .into(),
            ),
        }
    }
}

/// `sc-hub`.
#[derive(Debug, Args)]
pub struct ScHubArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:4443")]
    bind: SocketAddr,
    #[command(flatten)]
    tls: ScTlsArgs,
    /// Print the hub's counters as a JSON line this often (0: never): nodes,
    /// connections, relayed unicasts and broadcast copies, refused handshakes, and messages
    /// whose originating VMAC (which nodes must not send, Annex AB.5.3) was replaced.
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration)]
    report: Duration,
    #[command(flatten)]
    service: ServiceArgs,
}

/// SC options of `serve --transport sc`.
#[derive(Debug, Args)]
pub struct ScNodeArgs {
    /// BACnet/SC: the primary hub, `wss://HOST:PORT` (`ws://` with --no-tls).
    #[arg(long)]
    hub: Option<String>,
    /// BACnet/SC: the failover hub.
    #[arg(long)]
    failover_hub: Option<String>,
    /// BACnet/SC: file keeping the device UUID across restarts (made when missing).
    #[arg(long)]
    uuid_file: Option<PathBuf>,
    #[command(flatten)]
    tls: ScTlsArgs,
}

/// `buildwire bacnet sc-certs`.
pub fn sc_certs(args: &ScCertsArgs) -> CommandResult {
    let written = write_pki(&args.dir, &args.names, &args.san, args.days)?;
    if args.json {
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        println!("{}", json!({ "files": files }));
    } else {
        for path in &written {
            println!("{}", path.display());
        }
        eprintln!(
            "a CA and {} EC P-256 operational certificate(s), valid {} days: use them with \
             --cert DIR/NAME.crt --key DIR/NAME.key --ca DIR/ca.crt",
            args.names.len(),
            args.days
        );
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, Box<dyn std::error::Error>> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn uuid_of(file: Option<&Path>) -> Result<DeviceUuid, Box<dyn std::error::Error>> {
    match file {
        Some(path) => Ok(load_or_create_uuid(path)?),
        None => Ok(random_uuid()),
    }
}

/// `buildwire bacnet sc-hub`.
pub fn sc_hub(args: &ScHubArgs) -> CommandResult {
    args.service.start_logs()?;
    let tls = match args.tls.files()? {
        Some(files) => Some(server_config(&files)?),
        None => None,
    };
    let plain = tls.is_none();
    let config = ScHubConfig {
        bind: args.bind,
        tls,
        hub: HubConfig::new(random_vmac(), uuid_of(None)?),
    };
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let hub = ScHub::start(config).await?;
        crate::say!(
            "BACnet/SC hub on {}{} (Ctrl-C stops)",
            hub.uri(),
            if plain { " without TLS" } else { "" }
        );
        let stop = wait_for_stop(signals, "disconnecting the nodes");
        tokio::pin!(stop);
        let mut reports = ReportTimer::every(args.report);
        loop {
            tokio::select! {
                signal = &mut stop => {
                    hub.shutdown(HUB_CLOSE_GRACE).await;
                    return stopped(signal);
                }
                () = reports.tick() => {}
            }
            let stats = hub.stats();
            crate::say!(
                "{}",
                json!({
                    "nodes": stats.nodes,
                    "connections": stats.connections,
                    "unicast_relayed": stats.hub.unicast_relayed,
                    "broadcast_copies": stats.hub.broadcast_copies,
                    "handshake_refused": stats.handshake_refused,
                    "originating_replaced": stats.hub.originating_replaced,
                })
            );
        }
    })
}

/// `serve --transport sc`: the device of `config` on a BACnet/SC node of `--hub`.
pub fn serve_sc(args: &ScNodeArgs, config: BacnetServerConfig) -> CommandResult {
    let hub = args.hub.clone().ok_or(
        "--transport sc needs --hub wss://HOST:PORT (start one with `buildwire bacnet sc-hub`)",
    )?;
    let tls = match args.tls.files()? {
        Some(files) => Some(client_config(&files)?),
        None => None,
    };
    let identity = LocalIdentity {
        uuid: uuid_of(args.uuid_file.as_deref())?,
        ..random_identity()
    };
    let mut node = NodeConfig::new(identity, hub.clone());
    node.failover_hub = args.failover_hub.clone();
    let node_config = ScNodeConfig::new(node, tls);
    let device = config.database.device_identifier();
    let objects = config.database.len();
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let transport = ScTransport::start(node_config)
            .await
            .map_err(|e| format!("cannot connect to the hub {hub}: {e}"))?;
        let server = BacnetServer::start_on(transport, config).await?;
        crate::say!(
            "serving {device} with {objects} objects on BACnet/SC hub {hub} vmac {} (Ctrl-C stops)",
            server.local_addr()
        );
        let signal =
            wait_for_stop(signals, "answering the requests in flight, leaving the hub").await;
        server.shutdown().await;
        stopped(signal)
    })
}

/// The data link of a client command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ClientLink {
    /// BACnet/IP.
    #[default]
    Bip,
    /// BACnet/SC: a node of --hub; devices are addressed by VMAC (`xx:xx:xx:xx:xx:xx`).
    Sc,
}

/// `--transport sc --hub ... --cert --key --ca` of the client commands.
#[derive(Debug, Args)]
pub struct ScClientArgs {
    /// The data link: `bip` (BACnet/IP) or `sc` (BACnet/SC, a node of --hub; the device
    /// is then its VMAC, e.g. `02:63:aa:05:89:8e`).
    #[arg(long, value_enum, default_value_t = ClientLink::Bip)]
    pub transport: ClientLink,
    /// BACnet/SC: the hub, `wss://HOST:PORT`.
    #[arg(long)]
    hub: Option<String>,
    #[command(flatten)]
    tls: ScTlsArgs,
}

impl ScClientArgs {
    /// True for `--transport sc`.
    pub fn is_sc(&self) -> bool {
        self.transport == ClientLink::Sc
    }

    /// A client on a new node of the hub.
    pub async fn client(
        &self,
        tsm: buildwire_bacnet::tsm::TsmConfig,
    ) -> Result<
        buildwire_bacnet::driver::BacnetClient<buildwire_bacnet::link::sc::Vmac>,
        Box<dyn std::error::Error>,
    > {
        let hub = self
            .hub
            .clone()
            .ok_or("--transport sc needs --hub wss://HOST:PORT")?;
        let tls = match self.tls.files()? {
            Some(files) => Some(client_config(&files)?),
            None => None,
        };
        let identity = random_identity();
        let mut config = ScNodeConfig::new(NodeConfig::new(identity, hub.clone()), tls);
        config.connect_timeout = Duration::from_secs(5);
        let transport = ScTransport::start(config).await?;
        if transport.status() == buildwire_bacnet::link::sc::HubConnectionStatus::NoHubConnection {
            return Err(format!(
                "no connection to the hub {hub}: check the address, and that the hub trusts \
                 this certificate's CA and this node trusts the hub's"
            )
            .into());
        }
        Ok(buildwire_bacnet::driver::BacnetClient::start_on(
            transport, tsm, true,
        )?)
    }
}

/// A device address on BACnet/SC: its VMAC.
pub fn sc_device(
    text: &str,
) -> Result<buildwire_bacnet::network::DeviceAddress<buildwire_bacnet::link::sc::Vmac>, String> {
    text.parse::<buildwire_bacnet::link::sc::Vmac>()
        .map(buildwire_bacnet::network::DeviceAddress::Local)
        .map_err(|e| format!("{text:?} is not a BACnet/SC VMAC (12 hex digits): {e}"))
}
