//! `buildwire haystack serve`: the Haystack HTTP + WebSocket server, on the in-memory
//! store or on Redis or PostgreSQL (`--backend`); `buildwire haystack import`: bulk loads
//! grid files into a backend.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use buildwire_haystack::server::{HaystackServer, HaystackServerConfig, TlsConfig};
use clap::Args;

use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::secrets;
use crate::commands::common::service::ServiceArgs;
use crate::commands::common::signals::{StopSignals, stopped, wait_for_stop};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// Grid files to load (.zinc, .json or .trio); repeat for several. With a Redis or
    /// PostgreSQL backend they are (re)imported at every start: entities with the same id
    /// are replaced.
    #[arg(long = "data", value_name = "FILE")]
    data: Vec<PathBuf>,
    /// Where entities, histories and point writes live: memory (default),
    /// redis://HOST:PORT[/DB][?prefix=NAME] or postgres://USER@HOST:PORT/DB. Several servers
    /// on one Redis or PostgreSQL serve the same data and see each other's writes.
    #[arg(long, default_value = "memory", value_name = "URL")]
    backend: String,
    /// A user as NAME:PASSWORD:ROLE (role admin, operator or viewer); repeat for several.
    /// Insecure: the password shows in the process list and the shell history; prefer
    /// --users, --user-env, --user-secret-file, --user-password-file or the
    /// BUILDWIRE_HAYSTACK_USER environment variable (NAME:PASSWORD:ROLE).
    #[arg(
        long = "user",
        value_name = "NAME:PASSWORD:ROLE",
        env = "BUILDWIRE_HAYSTACK_USER",
        hide_env_values = true
    )]
    users: Vec<String>,
    /// A file of users with plain passwords, one NAME:PASSWORD:ROLE per line (blank lines
    /// and `#` comments are skipped), read at start-up: the passwords stay out of the
    /// command line.
    #[arg(long, value_name = "FILE")]
    user_password_file: Option<PathBuf>,
    /// A users file of salted SCRAM keys, made with `buildwire haystack users FILE add
    /// NAME`; read at start.
    #[arg(long = "users", value_name = "FILE")]
    users_file: Option<PathBuf>,
    #[command(flatten)]
    user_sources: super::users::ServeUserArgs,
    /// PBKDF2 iterations for users given with --user.
    #[arg(long)]
    iterations: Option<u32>,
    /// Keep entities, point writes and histories in this file across restarts (.json or
    /// .zinc), saved every --snapshot-seconds and at shutdown.
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Time between snapshot saves.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    snapshot_seconds: Duration,
    /// TLS certificate chain (PEM); with --tls-key, serves https and wss.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates must chain to (mutual TLS).
    #[arg(long, requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    #[command(flatten)]
    service: ServiceArgs,
}

pub const AFTER_HELP: &str = "Without users (--users, --user-env, --user-password-file or \
    --user), every request is served as admin with no login (for local experiments only). \
    A password given with --user is visible to every local user in the process list.\n\n\
    Examples:\n  \
    buildwire haystack serve --data ../shared/data/haystack/alpha.zinc --user \\\n      admin:secret:admin   # quick and insecure\n  \
    buildwire haystack serve --data site.zinc --user-env admin:ADMIN_PW:admin\n  \
    buildwire haystack import ../shared/data/haystack/alpha.zinc --backend \\\n      redis://127.0.0.1:6379\n  \
    buildwire haystack serve --backend redis://127.0.0.1:6379 --bind \\\n      127.0.0.1:8081\n  \
    buildwire haystack serve --backend postgres://postgres@127.0.0.1:5432/site\n  \
    buildwire haystack users users.txt add ann --role operator\n  \
    buildwire haystack serve --bind 0.0.0.0:8443 --data site.zinc --users \\\n      users.txt \\\n      \
    --tls-cert cert.pem --tls-key key.pem --snapshot state.json\n\n\
    Then: buildwire haystack client http://127.0.0.1:8080/api read site -u admin";

pub fn serve(args: ServeArgs) -> CommandResult {
    args.service.start_logs()?;
    let mut config = HaystackServerConfig::new().bind(args.bind);
    if let Some(iterations) = args.iterations {
        config = config.iterations(iterations);
    }
    for file in &args.data {
        config = config.load_file(file);
    }
    for spec in &args.users {
        config = config.user_spec(spec);
    }
    if let Some(path) = &args.user_password_file {
        for spec in secrets::user_lines(path)? {
            config = config.user_spec(&spec);
        }
    }
    config = config.users(args.user_sources.users(args.iterations)?);
    if let Some(path) = &args.users_file {
        config = config.users_file(path);
    }
    if let Some(path) = &args.snapshot {
        config = config.snapshot(path, args.snapshot_seconds);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let mut tls = TlsConfig::from_files(cert, key)?;
        if let Some(ca) = &args.client_ca {
            let pem =
                std::fs::read(ca).map_err(|e| format!("cannot read {}: {e}", ca.display()))?;
            tls = tls.require_client_certs(pem);
        }
        config = config.tls(tls);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        if args.backend != "memory" {
            let backend = buildwire_haystack::backends::open(&args.backend).await?;
            config = config.backend(backend);
        }
        let signals = StopSignals::listen()?;
        let server = HaystackServer::start(config).await?;
        let login = if server.auth_enabled() {
            "SCRAM login"
        } else {
            "no login: every request is admin"
        };
        // The URL on the first line is what scripts and the benchmark wait for.
        crate::say!(
            "listening on {} ({}; WebSocket {}; Ctrl-C stops)",
            server.url(),
            login,
            server.ws_url()
        );
        let signal = wait_for_stop(signals, "finishing requests, saving the snapshot if any").await;
        server.stop().await?;
        stopped(signal)
    })
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Grid files (.zinc, .json or .trio) whose rows become entities.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The store: redis://HOST:PORT[/DB][?prefix=NAME] or postgres://USER@HOST:PORT/DB.
    #[arg(long, value_name = "URL")]
    backend: String,
    /// Print a JSON summary.
    #[arg(long)]
    json: bool,
}

pub const IMPORT_AFTER_HELP: &str = "Entities whose id is already stored are replaced; the \
    others are added. Every file is loaded in batches, each all or nothing.\n\n\
    Examples:\n  \
    buildwire haystack import ../shared/data/haystack/alpha.zinc \\\n      ../shared/data/haystack/bravo.zinc \\\n      \
    --backend redis://127.0.0.1:6379\n  \
    buildwire haystack import site.trio --backend \\\n      postgres://postgres@127.0.0.1:5432/site --json";

pub fn import(args: ImportArgs) -> CommandResult {
    if args.backend == "memory" {
        return Err("import into memory would be lost at exit: give \
            --backend redis://HOST:PORT or postgres://USER@HOST:PORT/DB"
            .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let backend = buildwire_haystack::backends::open(&args.backend).await?;
        let started = std::time::Instant::now();
        let mut files = Vec::new();
        let bar = indicatif::ProgressBar::new(args.files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        for path in &args.files {
            bar.set_message(path.display().to_string());
            let grid = buildwire_haystack::server::read_grid_file(path)?;
            let n = backend.load(&grid).await?;
            files.push(serde_json::json!({"file": path.display().to_string(), "entities": n}));
            bar.inc(1);
        }
        bar.finish_and_clear();
        let total: u64 = files.iter().filter_map(|f| f["entities"].as_u64()).sum();
        let seconds = started.elapsed().as_secs_f64();
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "backend": backend.describe(),
                    "files": files,
                    "entities": total,
                    "seconds": seconds,
                })
            );
        } else {
            println!(
                "imported {total} entities from {} file(s) into {} in {seconds:.2} s",
                args.files.len(),
                backend.describe()
            );
        }
        Ok(())
    })
}
