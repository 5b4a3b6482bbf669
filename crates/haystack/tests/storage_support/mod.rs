//! Throw-away storage servers for the backend tests, on 127.0.0.1 with a free port and a
//! temporary data directory:
//! - [`TempRedis`]: `redis-server` with an append-only file fsynced on every write (so a
//!   `kill -9` loses nothing acknowledged);
//! - [`TempPostgres`]: a PostgreSQL 15 cluster from `initdb` (run as the `postgres` user
//!   when the tests run as root, since PostgreSQL refuses root).
//!
//! Each is stopped and its directory deleted when dropped. [`shared_redis`] and
//! [`shared_postgres`] give one server per test binary; a watchdog shell stops it when
//! the test process exits (statics are never dropped).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where Debian puts the PostgreSQL 15 server binaries.
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local address").port()
}

fn temp_dir(kind: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "buildwire-{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

/// Stops `cleanup` (a shell command) when this test process exits.
fn watchdog(cleanup: &str) {
    let script = format!(
        "while kill -0 {} 2>/dev/null; do sleep 0.5; done; {cleanup}",
        std::process::id()
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

fn describe(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A redis-server owned by the test.
pub struct TempRedis {
    dir: PathBuf,
    port: u16,
    child: Mutex<Option<Child>>,
}

impl TempRedis {
    /// Starts redis-server (append-only, `appendfsync always`); panics with what to
    /// install when it is missing.
    pub fn start() -> TempRedis {
        let redis = TempRedis {
            dir: temp_dir("redis"),
            port: free_port(),
            child: Mutex::new(None),
        };
        redis.start_server();
        redis
    }

    /// Starts the server again on the same directory (replaying its append-only file).
    pub fn start_server(&self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--dir",
                &self.dir.to_string_lossy(),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--protected-mode",
                "yes",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run redis-server: install it with `make system-deps` (Debian package redis-server)");
        *self.child.lock().unwrap() = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let mut buf = [0u8; 64];
                if s.write_all(b"PING\r\n").is_ok()
                    && s.read(&mut buf)
                        .is_ok_and(|n| buf[..n].starts_with(b"+PONG"))
                {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server with SIGKILL.
    pub fn kill(&self) {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A URL with a key prefix of its own (many tests share one server).
    pub fn url_with_prefix(&self, prefix: &str) -> String {
        format!("{}?prefix={prefix}", self.url())
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TempRedis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PostgreSQL cluster owned by the test.
pub struct TempPostgres {
    dir: PathBuf,
    port: u16,
    run_as: Option<String>,
    /// Extra server settings (`-c name=value ...`).
    settings: String,
}

fn pg_bin(name: &str) -> String {
    let dir = std::env::var("BUILDWIRE_PG_BIN").unwrap_or_else(|_| PG_BIN.to_owned());
    format!("{dir}/{name}")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn user_ids(user: &str) -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, user])
            .output()
            .expect("run id");
        assert!(
            out.status.success(),
            "no `{user}` user: install PostgreSQL with `make system-deps` (Debian package postgresql)"
        );
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("numeric id")
    };
    (id("-u"), id("-g"))
}

impl TempPostgres {
    /// Creates a cluster and starts it.
    pub fn start() -> TempPostgres {
        Self::start_with("")
    }

    /// The shared library directory of the PostgreSQL binaries (`.../lib` beside `bin`).
    pub fn lib_dir() -> PathBuf {
        Path::new(&pg_bin("initdb"))
            .parent()
            .and_then(Path::parent)
            .map(|p| p.join("lib"))
            .unwrap_or_default()
    }

    /// Creates a cluster and starts it with extra settings (`-c name=value ...`).
    pub fn start_with(settings: &str) -> TempPostgres {
        assert!(
            Path::new(&pg_bin("initdb")).exists(),
            "{} not found: install PostgreSQL 15 with `make system-deps` (Debian package postgresql)",
            pg_bin("initdb")
        );
        let run_as = is_root().then(|| "postgres".to_owned());
        let dir = temp_dir("pg");
        if let Some(user) = &run_as {
            let (uid, gid) = user_ids(user);
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("chown the temp dir");
        }
        let pg = TempPostgres {
            dir,
            port: free_port(),
            run_as,
            settings: settings.to_owned(),
        };
        let data = pg.data_dir();
        let out = pg.run(
            &pg_bin("initdb"),
            &[
                "-D",
                &data.to_string_lossy(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        assert!(out.status.success(), "initdb failed: {}", describe(&out));
        pg.start_server();
        pg
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--", program]);
                c
            }
            None => Command::new(program),
        };
        cmd.current_dir(&self.dir);
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"))
    }

    /// Starts the postmaster (again) and waits until it accepts connections.
    pub fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on {}",
            self.port,
            self.dir.to_string_lossy(),
            self.settings
        );
        let out = self.run(
            &pg_bin("pg_ctl"),
            &[
                "-D",
                &self.data_dir().to_string_lossy(),
                "-l",
                &self.dir.join("server.log").to_string_lossy(),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}\nserver log:\n{}",
            describe(&out),
            self.log()
        );
    }

    /// Kills the postmaster with SIGKILL (a crash: the next start replays the WAL).
    pub fn kill(&self) {
        let text = std::fs::read_to_string(self.data_dir().join("postmaster.pid"))
            .expect("read postmaster.pid");
        let pid = text.lines().next().unwrap_or("").trim().to_owned();
        // The whole server crashes: the postmaster, then its backends (so none keeps the
        // shared memory that would stop the next start).
        let children = Command::new("pgrep").args(["-P", &pid]).output();
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
        if let Ok(out) = children {
            for child in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", child]).status();
            }
        }
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        // In a container whose init does not reap orphans the dead postmaster stays a
        // zombie, which PostgreSQL would take for a live one: remove its lock files, as an
        // operator would after a crash.
        let _ = std::fs::remove_file(self.data_dir().join("postmaster.pid"));
        let _ = std::fs::remove_file(self.dir.join(format!(".s.PGSQL.{}.lock", self.port)));
        let _ = std::fs::remove_file(self.dir.join(format!(".s.PGSQL.{}", self.port)));
    }

    /// Creates a database and returns its URL.
    pub fn create_database(&self, name: &str) -> String {
        let out = self.run(
            &pg_bin("createdb"),
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                name,
            ],
        );
        assert!(out.status.success(), "createdb failed: {}", describe(&out));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    fn stop_command(&self) -> String {
        let stop = format!(
            "{} -D {} -m immediate -w stop",
            pg_bin("pg_ctl"),
            self.data_dir().to_string_lossy()
        );
        let stop = match &self.run_as {
            Some(user) => format!("runuser -u {user} -- {stop}"),
            None => stop,
        };
        format!("{stop}; rm -rf {}", self.dir.to_string_lossy())
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .args(["-c", &self.stop_command()])
            .output();
    }
}

/// One redis-server for the whole test binary (stopped when the process exits).
pub fn shared_redis() -> &'static TempRedis {
    static REDIS: OnceLock<TempRedis> = OnceLock::new();
    REDIS.get_or_init(|| {
        let redis = TempRedis::start();
        watchdog(&format!(
            "redis-cli -p {} shutdown nosave; rm -rf {}",
            redis.port,
            redis.dir.to_string_lossy()
        ));
        redis
    })
}

/// One PostgreSQL cluster for the whole test binary (stopped when the process exits).
pub fn shared_postgres() -> &'static TempPostgres {
    static PG: OnceLock<TempPostgres> = OnceLock::new();
    PG.get_or_init(|| {
        let pg = TempPostgres::start();
        watchdog(&pg.stop_command());
        pg
    })
}

/// A fresh, empty store on the shared server: a Redis key prefix or a PostgreSQL
/// database of its own. `kind` is `redis` or `postgres`.
pub fn fresh_store(kind: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!("t{}", N.fetch_add(1, Ordering::Relaxed));
    match kind {
        "redis" => shared_redis().url_with_prefix(&name),
        "postgres" => shared_postgres().create_database(&name),
        other => panic!("unknown backend kind {other:?}"),
    }
}
