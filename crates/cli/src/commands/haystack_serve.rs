//! `buildwire haystack serve`: the Haystack HTTP + WebSocket server on the in-memory store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use buildwire_haystack::server::{HaystackServer, TlsConfig};
use clap::Args;

use super::CommandResult;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// Grid files to load (.zinc, .json or .trio); repeat for several.
    #[arg(long = "data", value_name = "FILE")]
    data: Vec<PathBuf>,
    /// A user as NAME:PASSWORD:ROLE (role admin, operator or viewer); repeat for several.
    #[arg(long = "user", value_name = "NAME:PASSWORD:ROLE")]
    users: Vec<String>,
    /// A users file of salted SCRAM credentials (see `buildwire haystack serve --help`).
    #[arg(long = "users", value_name = "FILE")]
    users_file: Option<PathBuf>,
    /// PBKDF2 iterations for users given with --user.
    #[arg(long)]
    iterations: Option<u32>,
    /// Keep entities, point writes and histories in this file across restarts (.json or
    /// .zinc), saved every --snapshot-seconds and at shutdown.
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Seconds between snapshot saves.
    #[arg(long, default_value_t = 30.0)]
    snapshot_seconds: f64,
    /// TLS certificate chain (PEM); with --tls-key, serves https and wss.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates must chain to (mutual TLS).
    #[arg(long, requires = "tls_cert")]
    client_ca: Option<PathBuf>,
}

pub const AFTER_HELP: &str = "Without --user or --users, every request is served as admin \
    with no login (for local experiments only).\n\n\
    Examples:\n  \
    buildwire haystack serve --data ../shared/data/haystack/alpha.zinc --user admin:secret:admin\n  \
    buildwire haystack serve --bind 0.0.0.0:8443 --data site.zinc --users users.txt \\\n      \
    --tls-cert cert.pem --tls-key key.pem --snapshot state.json\n\n\
    Then: buildwire haystack client http://127.0.0.1:8080/api read site -u admin";

pub fn serve(args: ServeArgs) -> CommandResult {
    let mut builder = HaystackServer::builder().bind(args.bind);
    if let Some(iterations) = args.iterations {
        builder = builder.iterations(iterations);
    }
    for file in &args.data {
        builder = builder.load_file(file);
    }
    for spec in &args.users {
        builder = builder.user_spec(spec);
    }
    if let Some(path) = &args.users_file {
        builder = builder.users_file(path);
    }
    if let Some(path) = &args.snapshot {
        let interval = Duration::try_from_secs_f64(args.snapshot_seconds).map_err(|_| {
            format!(
                "--snapshot-seconds {} is not a number of seconds",
                args.snapshot_seconds
            )
        })?;
        builder = builder.snapshot(path, interval);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let mut tls = TlsConfig::from_files(cert, key)?;
        if let Some(ca) = &args.client_ca {
            let pem =
                std::fs::read(ca).map_err(|e| format!("cannot read {}: {e}", ca.display()))?;
            tls = tls.require_client_certs(pem);
        }
        builder = builder.tls(tls);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let server = builder.start().await?;
        let login = if server.auth_enabled() {
            "SCRAM login"
        } else {
            "no login: every request is admin"
        };
        // The URL on the first line is what scripts and the benchmark wait for.
        println!(
            "listening on {} ({}; WebSocket {}; Ctrl-C stops)",
            server.url(),
            login,
            server.ws_url()
        );
        tokio::signal::ctrl_c()
            .await
            .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))?;
        eprintln!("stopping: finishing requests and saving the snapshot");
        server.shutdown().await?;
        Ok(())
    })
}
