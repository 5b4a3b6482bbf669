//! `buildwire haystack serve --backend redis://...|postgres://...` and `haystack import` as
//! processes, on a real redis-server and PostgreSQL 15 started by the test:
//! - two server processes on one store: a watch opened on one sees a `pointWrite` made
//!   through the other and can be polled through either, and reads agree at once;
//! - a load of `hisWrite`s during which the server is killed with SIGKILL and the
//!   database crashes and restarts: every acknowledged sample is there afterwards;
//! - the same load on the memory backend with a snapshot file, stopped with SIGTERM as a
//!   service manager stops it: exit status 0 and every acknowledged sample in the snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../haystack/tests/storage_support/mod.rs"]
mod storage_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
use buildwire_haystack::{Date, DateTime, Ref, Time, Value};
use storage_support::{TempPostgres, TempRedis};

const SITE: &str = "ver:\"3.0\"\n\
id,dis,site,equip,point,his,writable,kind,tz,siteRef,equipRef,unit\n\
@s,\"Site\",M,,,,,,\"New_York\",,,\n\
@e,\"AHU\",,M,,,,,,@s,,\n\
@p,\"Temp\",,,M,M,M,\"Number\",\"New_York\",@s,@e,\"°F\"\n";

/// Runs `$body(url)` on a fresh Redis and on a fresh PostgreSQL database.
macro_rules! on_both_stores {
    ($body:ident) => {
        mod $body {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                let redis = TempRedis::start();
                super::$body(&redis.url()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let pg = TempPostgres::start();
                super::$body(&pg.create_database("store")).await;
            }
        }
    };
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn site_file() -> PathBuf {
    let path = std::env::temp_dir().join(format!("buildwire-site-{}.zinc", std::process::id()));
    std::fs::write(&path, SITE).unwrap();
    path
}

/// `buildwire haystack serve --backend URL` on a free port; returns it and its API URL.
fn serve(backend: &str, data: Option<&PathBuf>) -> (Running, String) {
    serve_with(backend, data, &[])
}

fn serve_with(backend: &str, data: Option<&PathBuf>, extra: &[&str]) -> (Running, String) {
    let mut args = vec![
        "haystack".to_owned(),
        "serve".into(),
        "--bind".into(),
        "127.0.0.1:0".into(),
        "--backend".into(),
        backend.into(),
    ];
    if let Some(path) = data {
        args.push("--data".into());
        args.push(path.display().to_string());
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("buildwire starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .next()
        .expect("the server printed its URL")
        .expect("readable stdout");
    let url = line
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (running, url)
}

async fn client(url: &str) -> HaystackClient {
    HaystackClient::connect(url, ClientOptions::default())
        .await
        .unwrap()
}

fn import(backend: &str, file: &PathBuf) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["haystack", "import", "--json", "--backend", backend])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn two_servers_share_watches(backend: &str) {
    let file = site_file();
    let summary = import(backend, &file);
    assert_eq!(summary["entities"], 3);
    let (_a, url_a) = serve(backend, None);
    let (_b, url_b) = serve(backend, None);
    let (a, b) = (client(&url_a).await, client(&url_b).await);
    let about = b.about().await.unwrap();
    let storage = match about.get("storage") {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("about has no storage: {other:?}"),
    };
    assert!(
        storage.starts_with(backend.split(':').next().unwrap()),
        "{storage}"
    );
    let p = Ref::new("p");
    let watch = b
        .watch_open("test", std::slice::from_ref(&p), Some(60.0))
        .await
        .unwrap();
    let watch_id = match watch.meta.get("watchId") {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("no watchId: {other:?}"),
    };
    b.watch_poll(&watch_id, false).await.unwrap();
    // B answers (and caches) the read before A's write...
    for _ in 0..2 {
        let row = b.read("id==@p", None).await.unwrap();
        assert_eq!(row.get(0, "writeVal"), None);
    }
    a.point_write(&p, 8, Value::number(72.5), Some("ann"), None)
        .await
        .unwrap();
    // ...and reads A's write at once (its cache follows the store's change counter).
    let row = b.read("id==@p", None).await.unwrap();
    assert_eq!(row.get(0, "writeVal"), Some(&Value::number(72.5)));
    // And B's watch reports it.
    let mut seen = false;
    for _ in 0..50 {
        let changed = b.watch_poll(&watch_id, false).await.unwrap();
        if changed.row_count() == 1 && changed.get(0, "writeVal") == Some(&Value::number(72.5)) {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        seen,
        "the watch on server B saw the write made through server A"
    );
}

fn minute(n: u32) -> DateTime {
    let day = 15 + (n / 1440) as u8;
    let n = n % 1440;
    DateTime::new(
        Date::new(2026, 1, day).unwrap(),
        Time::new((n / 60) as u8, (n % 60) as u8, 0, 0).unwrap(),
        -5 * 3600,
        Some("New_York".into()),
    )
    .unwrap()
}

/// hisWrites in batches until told to stop; returns the minutes of acknowledged samples.
async fn writer(url: Arc<std::sync::Mutex<String>>, stop: Arc<AtomicBool>) -> Vec<u32> {
    let p = Ref::new("p");
    let mut acknowledged = Vec::new();
    let mut next = 0u32;
    while !stop.load(Ordering::Acquire) && next < 2800 {
        let current = url.lock().unwrap().clone();
        let Ok(c) = HaystackClient::connect(&current, ClientOptions::default()).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let batch: Vec<(DateTime, Value)> = (next..next + 20)
            .map(|m| (minute(m), Value::number(f64::from(m))))
            .collect();
        if c.his_write(&p, &batch).await.is_ok() {
            acknowledged.extend(next..next + 20);
        }
        // Unacknowledged batches are not retried: they may or may not be stored.
        next += 20;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    acknowledged
}

async fn nothing_acknowledged_is_lost(backend: &str, crash_db: impl Fn(), restart_db: impl Fn()) {
    let file = site_file();
    import(backend, &file);
    let (server, url) = serve(backend, None);
    let url = Arc::new(std::sync::Mutex::new(url));
    let stop = Arc::new(AtomicBool::new(false));
    let task = tokio::spawn(writer(url.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(700)).await;
    // Mid-load: the server dies (SIGKILL) and the database crashes and restarts.
    drop(server);
    crash_db();
    restart_db();
    let (_server, new_url) = serve(backend, None);
    *url.lock().unwrap() = new_url.clone();
    tokio::time::sleep(Duration::from_millis(700)).await;
    stop.store(true, Ordering::Release);
    let acknowledged = task.await.unwrap();
    assert!(
        acknowledged.len() >= 100,
        "the load ran: {}",
        acknowledged.len()
    );
    assert_none_lost(&new_url, &acknowledged, backend).await;
}

/// Reads point `p`'s history from the server at `url` and checks that every acknowledged
/// minute is there.
async fn assert_none_lost(url: &str, acknowledged: &[u32], label: &str) {
    let c = client(url).await;
    let grid = c
        .his_read(&Ref::new("p"), "2026-01-15,2026-01-17")
        .await
        .unwrap();
    let stored: std::collections::HashSet<u32> = (0..grid.row_count())
        .filter_map(|i| match grid.get(i, "val") {
            Some(Value::Number(n)) => Some(n.value as u32),
            _ => None,
        })
        .collect();
    let lost: Vec<u32> = acknowledged
        .iter()
        .copied()
        .filter(|m| !stored.contains(m))
        .collect();
    assert!(
        lost.is_empty(),
        "acknowledged but lost: {} samples, first {:?}",
        lost.len(),
        lost.first()
    );
    eprintln!(
        "{label}: {} samples acknowledged, {} stored, none lost",
        acknowledged.len(),
        stored.len()
    );
}

on_both_stores!(two_servers_share_watches);
/// `haystack client ... his-read --every 1h --fold avg` through a server on the store: two
/// hours of minute samples fold into two hourly means, with the point's unit.
async fn cli_rolls_up_histories(backend: &str) {
    let file = site_file();
    import(backend, &file);
    let (_server, url) = serve(backend, None);
    let c = client(&url).await;
    let samples: Vec<(DateTime, Value)> = (0..120)
        .map(|m| (minute(m), Value::number_with_unit(f64::from(m), "°F")))
        .collect();
    c.his_write(&Ref::new("p"), &samples).await.unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["haystack", "client", &url, "his-read", "@p", "2026-01-15"])
        .args(["--every", "1h", "--fold", "avg", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let grid: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = grid["rows"].as_array().unwrap();
    let means: Vec<(f64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["val"]["val"].as_f64().unwrap(),
                r["val"]["unit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(means, [(29.5, "°F"), (89.5, "°F")], "{grid}");
    assert_eq!(grid["meta"]["hisRollup"], "avg");
    assert_eq!(rows[1]["ts"]["val"], "2026-01-15T01:00:00-05:00");
}

on_both_stores!(cli_rolls_up_histories);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_kill_9_mid_load_loses_nothing_acknowledged() {
    let redis = TempRedis::start();
    let url = redis.url();
    nothing_acknowledged_is_lost(&url, || redis.kill(), || redis.start_server()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_kill_9_mid_load_loses_nothing_acknowledged() {
    let pg = TempPostgres::start();
    let url = pg.create_database("crash");
    nothing_acknowledged_is_lost(&url, || pg.kill(), || pg.start_server()).await;
}

/// SIGTERM, as systemd, container runtimes and orchestrators stop a service, mid-load: the
/// server finishes, saves its snapshot and exits 0; a new server started from the snapshot
/// alone has every acknowledged sample (issue 26: before, SIGTERM lost every write since the
/// last periodic save).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_load_saves_every_acknowledged_write_in_the_snapshot() {
    let file = site_file();
    let snapshot = std::env::temp_dir().join(format!(
        "buildwire-sigterm-snapshot-{}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&snapshot);
    let snapshot_arg = snapshot.display().to_string();
    let periodic = ["--snapshot", &snapshot_arg, "--snapshot-seconds", "300"];
    let (mut server, url) = serve_with("memory", Some(&file), &periodic);
    let url = Arc::new(std::sync::Mutex::new(url));
    let stop = Arc::new(AtomicBool::new(false));
    let task = tokio::spawn(writer(url.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let pid = libc::pid_t::try_from(server.0.id()).unwrap();
    // SAFETY: sends a signal to the child process this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::task::spawn_blocking(move || server.0.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "SIGTERM is a clean stop: {status:?}"
    );
    stop.store(true, Ordering::Release);
    let acknowledged = task.await.unwrap();
    assert!(
        acknowledged.len() >= 100,
        "the load ran: {}",
        acknowledged.len()
    );
    let (_restarted, new_url) = serve_with("memory", None, &["--snapshot", &snapshot_arg]);
    assert_none_lost(&new_url, &acknowledged, "memory + snapshot").await;
    let _ = std::fs::remove_file(&snapshot);
}

#[test]
fn import_into_memory_is_refused_with_advice() {
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["haystack", "import", "--backend", "memory"])
        .arg(site_file())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("redis://"));
}

/// `bench haystack his` on memory and Redis: every write acknowledged, every read checked
/// (no speed asserted).
#[test]
fn his_benchmark_smoke() {
    let redis = TempRedis::start();
    let pg = TempPostgres::start();
    let db = pg.create_database("his");
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args([
            "bench", "haystack", "his", "--points", "3", "--days", "2", "--json",
        ])
        .args(["--connections", "2", "--backend"])
        .arg(format!("memory,{},{db}", redis.url()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for result in results {
        assert_eq!(result["write"]["errors"], 0);
        assert_eq!(result["read"]["errors"], 0);
        assert_eq!(result["read"]["samples"], 3 * 2 * 96);
        assert_eq!(result["rollup"]["errors"], 0);
        assert_eq!(result["rollup"]["samples"], 3 * 2 * 96);
    }
}

/// A raw `GET {api}/about` with a bearer token; the HTTP status.
fn about_status(api: &str, token: &str) -> u16 {
    use std::io::{Read, Write};
    let rest = api.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /{path}/about HTTP/1.1\r\nHost: {host}\r\nAuthorization: BEARER authToken={token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Users given to one server are stored: a second server started without users lets them
/// log in, and accepts the token the first one issued (and `haystack users` manages them).
async fn servers_share_users_and_tokens(backend: &str) {
    let file = site_file();
    import(backend, &file);
    let (_a, url_a) = serve_with(backend, None, &["--user", "ann:pencil-42:operator"]);
    let (_b, url_b) = serve(backend, None);
    let a = HaystackClient::connect(&url_a, ClientOptions::login("ann", "pencil-42"))
        .await
        .unwrap();
    let token = a.auth_token().unwrap().to_owned();
    assert_eq!(about_status(&url_b, &token), 200, "B accepts A's token");
    assert_eq!(about_status(&url_b, "not-a-token"), 401);
    let b = HaystackClient::connect(&url_b, ClientOptions::login("ann", "pencil-42"))
        .await
        .unwrap();
    assert!(b.read("site", None).await.unwrap().row_count() == 1);
    // Users added with `buildwire haystack users` reach running servers.
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["haystack", "users", "--json", "--backend", backend])
        .args(["--add", "bob:b0b-pass:viewer", "--iterations", "4096"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["users"].as_array().unwrap().len(), 2);
    let mut bob = None;
    for _ in 0..40 {
        if let Ok(c) =
            HaystackClient::connect(&url_a, ClientOptions::login("bob", "b0b-pass")).await
        {
            bob = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(bob.is_some(), "bob can log in within the refresh period");
    // The same with the password off the command line (`users URL add NAME`), then removed.
    let users = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
            .args(["haystack", "users", backend])
            .args(args)
            .env("CY_PASSWORD", "cy-secret")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let listed = users(&[
        "add",
        "cy",
        "--role",
        "operator",
        "--password-env",
        "CY_PASSWORD",
        "--iterations",
        "4096",
        "--json",
    ]);
    assert_eq!(listed["users"].as_array().unwrap().len(), 3);
    let mut cy = false;
    for _ in 0..40 {
        if HaystackClient::connect(&url_b, ClientOptions::login("cy", "cy-secret"))
            .await
            .is_ok()
        {
            cy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(cy, "cy can log in within the refresh period");
    let listed = users(&["remove", "cy", "--json"]);
    assert_eq!(listed["users"].as_array().unwrap().len(), 2);
}

on_both_stores!(servers_share_users_and_tokens);
