//! The logs and configuration files of the long-running commands, as processes on
//! 127.0.0.1: log lines on stderr that parse as JSON with `--log-format json` (one per
//! Haystack request, per OPC UA channel and session event, per BACnet peer error), no
//! password in the log of a login, `--config` precedence and its error messages, and every
//! example of docs/configuration-files.md accepted by its command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("buildwire-service-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A server started with its stderr in `log`; its first line of stdout.
struct Server {
    child: Child,
    first: String,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(args: &[&str], log: &Path, env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_buildwire"));
        command
            .args(args)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines
            .next()
            .unwrap_or_else(|| {
                panic!(
                    "{args:?} printed nothing; stderr: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            })
            .unwrap();
        std::thread::spawn(move || lines.for_each(drop));
        Server {
            child,
            first,
            log: log.to_owned(),
        }
    }

    /// Stops the server with SIGTERM and waits for it.
    fn stop(mut self) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: a signal to the child process this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let status = self.child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{status:?}");
    }

    /// The log's JSON lines, waiting (up to 10 s) until `wanted` holds for them.
    fn json_lines_until(&self, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap();
            let lines: Vec<Value> = text
                .lines()
                .map(|line| {
                    serde_json::from_str(line)
                        .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"))
                })
                .collect();
            if wanted(&lines) {
                return lines;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the log never held what was expected:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn has(lines: &[Value], message: &str) -> bool {
    lines.iter().any(|line| line["message"] == message)
}

fn buildwire(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_buildwire"));
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

const PASSWORD: &str = "Pw-not-in-logs-7c1f";

/// `haystack serve` on a free port of 127.0.0.1 with the user `alice` (password
/// [`PASSWORD`]) from a users file in `dir`, and `extra` options; its log in `log`.
fn haystack_with_alice(dir: &Path, log: &Path, extra: &[&str]) -> Server {
    let users = dir.join("users.txt");
    std::fs::write(&users, format!("# test users\nalice:{PASSWORD}:admin\n")).unwrap();
    let users = users.to_str().unwrap();
    let mut args = vec![
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--user-password-file",
        users,
    ];
    args.extend_from_slice(extra);
    Server::start(&args, log, &[])
}

#[test]
fn haystack_logs_one_json_line_per_request_and_never_the_password() {
    let dir = scratch("haystack");
    let log = dir.join("haystack.log");
    let server = haystack_with_alice(
        &dir,
        &log,
        &["--log-format", "json", "--log-level", "debug"],
    );
    let url = processes::served_at(&server.first);
    let about = buildwire(
        &["haystack", "client", &url, "about", "-u", "alice"],
        &[("BUILDWIRE_HAYSTACK_PASSWORD", PASSWORD)],
    );
    assert!(
        about.status.success(),
        "{}",
        String::from_utf8_lossy(&about.stderr)
    );
    let over_ws = buildwire(
        &["haystack", "client", &url, "about", "--ws", "-u", "alice"],
        &[("BUILDWIRE_HAYSTACK_PASSWORD", PASSWORD)],
    );
    assert!(
        over_ws.status.success(),
        "{}",
        String::from_utf8_lossy(&over_ws.stderr)
    );
    let wrong = buildwire(
        &["haystack", "client", &url, "about", "-u", "alice"],
        &[("BUILDWIRE_HAYSTACK_PASSWORD", "wrong-password")],
    );
    assert!(!wrong.status.success());
    let lines = server.json_lines_until(|lines| {
        let websocket = |l: &&Value| l["message"] == "websocket op" && l["op"] == "about";
        lines
            .iter()
            .any(|l| l["op"] == "about" && l["status"] == 200 && l["user"] == "alice")
            && lines
                .iter()
                .any(|l| websocket(&l) && l["user"] == "alice" && l["error_grid"] == false)
    });
    let requests: Vec<&Value> = lines.iter().filter(|l| l["message"] == "request").collect();
    // HELLO, SCRAM first and final of each login, then `about` and `close`.
    assert!(requests.len() >= 5, "{requests:#?}");
    for request in &requests {
        assert_eq!(request["level"], "INFO", "{request}");
        assert!(
            request["method"].is_string() && request["status"].is_u64(),
            "{request}"
        );
        assert!(request["duration_ms"].is_f64(), "{request}");
        assert!(request["timestamp"].is_string() && request["target"].is_string());
    }
    // The failed login ends with 403 before any op runs.
    assert!(requests.iter().any(|l| l["status"] == 403), "{requests:#?}");
    server.stop();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains(PASSWORD),
        "the password is in the log:\n{text}"
    );
    assert!(!text.contains("wrong-password"), "{text}");
    assert!(
        !text.to_ascii_lowercase().contains("authorization"),
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `buildwire FAMILY serve --bind 127.0.0.1:0 --log-format json EXTRA...` with its log in a
/// scratch folder (returned too).
fn serve_with_json_logs(
    family: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (PathBuf, PathBuf, Server) {
    let dir = scratch(family);
    let log = dir.join(format!("{family}.log"));
    let mut args = vec![
        family,
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--log-format",
        "json",
    ];
    args.extend_from_slice(extra);
    let server = Server::start(&args, &log, env);
    (dir, log, server)
}

#[test]
fn opcua_logs_channel_and_session_events() {
    let user = format!("bob:{PASSWORD}");
    // Passwords in clear over SecurityPolicy None: only to see that they are not logged.
    let (dir, log, server) = serve_with_json_logs(
        "opcua",
        &["--allow-cleartext-passwords", "--log-level", "debug"],
        &[("BUILDWIRE_OPCUA_USER", &user)],
    );
    let endpoint = processes::served_at(&server.first);
    let read = |args: &[&str]| {
        let mut all = vec!["opcua", "read", &endpoint, "i=2258"];
        all.extend_from_slice(args);
        buildwire(&all, &[])
    };
    let anonymous = read(&[]);
    assert!(
        anonymous.status.success(),
        "{}",
        String::from_utf8_lossy(&anonymous.stderr)
    );
    let logged_in = read(&["--user", &user, "--allow-cleartext-password"]);
    assert!(
        logged_in.status.success(),
        "{}",
        String::from_utf8_lossy(&logged_in.stderr)
    );
    let wrong = read(&["--user", "bob:wrong-password", "--allow-cleartext-password"]);
    assert!(!wrong.status.success());
    let lines = server.json_lines_until(|lines| {
        let activated_as = |who: &str| {
            lines
                .iter()
                .any(|l| l["message"] == "session activated" && l["user"] == who)
        };
        ["channel open", "session created", "session closed"]
            .iter()
            .all(|m| has(lines, m))
            && activated_as("anonymous")
            && activated_as("bob")
            && lines.iter().any(|l| {
                l["message"] == "session service refused"
                    && l["service"] == "ActivateSession"
                    && l["level"] == "WARN"
            })
    });
    let opened = lines
        .iter()
        .find(|l| l["message"] == "channel open")
        .unwrap();
    assert!(opened["channel_id"].as_u64().unwrap() > 0);
    assert_eq!(opened["policy"], "None");
    server.stop();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains(PASSWORD) && !text.contains("wrong-password"),
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bacnet_logs_a_malformed_message_from_a_peer() {
    let (dir, _log, server) = serve_with_json_logs("bacnet", &[], &[]);
    let address = processes::served_at(&server.first);
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    // Original-Unicast-NPDU carrying an NPDU of protocol version 7 (only 1 exists).
    peer.send_to(&[0x81, 0x0a, 0x00, 0x06, 0x07, 0x04], &address)
        .unwrap();
    // Not a BVLL at all (BVLC type 0x42).
    peer.send_to(&[0x42, 0x0a, 0x00, 0x04], &address).unwrap();
    let port = peer.local_addr().unwrap().port().to_string();
    for message in [
        "malformed message from a peer: dropped",
        "malformed BVLL datagram from a peer: dropped",
    ] {
        let lines = server.json_lines_until(|lines| has(lines, message));
        let line = lines.iter().find(|l| l["message"] == message).unwrap();
        assert_eq!(line["level"], "WARN");
        assert!(line["peer"].as_str().unwrap().contains(&port), "{line}");
    }
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bacnet_router_logs_a_malformed_npdu_from_a_peer() {
    let free_port = || {
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let first = format!("127.0.0.1:{}", free_port());
    let one = format!("1=bip:{first}");
    let two = format!("2=bip:127.0.0.2:{}", free_port());
    let dir = scratch("router");
    let log = dir.join("router.log");
    let args = [
        "bacnet",
        "router",
        "--port",
        &one,
        "--port",
        &two,
        "--log-format",
        "json",
    ];
    let server = Server::start(&args, &log, &[]);
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    // Original-Broadcast-NPDU with an NPDU of protocol version 7.
    peer.send_to(&[0x81, 0x0b, 0x00, 0x06, 0x07, 0x04], &first)
        .unwrap();
    let message = "malformed NPDU from a peer: dropped";
    let lines = server.json_lines_until(|lines| has(lines, message));
    let line = lines.iter().find(|l| l["message"] == message).unwrap();
    // The first --port.
    assert_eq!(line["port_index"], 0, "{line}");
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bacnet_sc_hub_logs_each_node_connection_with_vmac_peer_and_device() {
    let dir = scratch("sc-fields");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bind = format!("127.0.0.1:{port}");
    let hub_args = [
        "bacnet",
        "sc-hub",
        "--bind",
        &bind,
        "--no-tls",
        "--log-format",
        "json",
    ];
    let hub = Server::start(&hub_args, &dir.join("hub.log"), &[]);
    let hub_option = format!("--hub=ws://{bind}");
    let node_args = [
        "bacnet",
        "serve",
        "--transport=sc",
        &hub_option,
        "--no-tls",
        "--log-format",
        "json",
    ];
    let node = Server::start(&node_args, &dir.join("node.log"), &[]);
    let lines = hub.json_lines_until(|lines| has(lines, "BACnet/SC hub: node connected"));
    let connected = with_message(&lines, "BACnet/SC hub: node connected")[0];
    let vmac = connected["vmac"].as_str().unwrap().to_owned();
    assert_eq!(vmac.len(), 17, "{connected}");
    assert!(
        connected["peer"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:"),
        "{connected}"
    );
    assert_eq!(
        connected["device_uuid"].as_str().unwrap().len(),
        36,
        "{connected}"
    );
    assert_eq!(connected["suppressed"], 0);
    let node_lines = node.json_lines_until(|lines| {
        lines.iter().any(|l| {
            l["message"] == "BACnet/SC node: hub connection"
                && l["status"] == "connected-to-primary-hub"
        })
    });
    assert!(
        node_lines
            .iter()
            .any(|l| l["message"] == "BACnet/SC node: hub connection" && l["vmac"] == vmac.as_str()),
        "{node_lines:#?}"
    );
    node.stop();
    let lines = hub.json_lines_until(|lines| has(lines, "BACnet/SC hub: node disconnected"));
    let gone = with_message(&lines, "BACnet/SC hub: node disconnected")[0];
    assert_eq!(gone["vmac"], vmac.as_str());
    assert!(
        gone["reason"].is_string() && gone["peer"].is_string(),
        "{gone}"
    );
    hub.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

/// `haystack serve ARGS`, which must listen on `host`, asked `about` once.
fn serve_and_ask(args: &[&str], log: &Path, host: &str) -> Server {
    let mut all = vec!["haystack", "serve"];
    all.extend_from_slice(args);
    let server = Server::start(&all, log, &[]);
    let url = processes::served_at(&server.first);
    assert!(
        url.starts_with(&format!("http://{host}:")),
        "{}",
        server.first
    );
    let about = buildwire(&["haystack", "client", &url, "about"], &[]);
    assert!(about.status.success());
    server
}

#[test]
fn the_command_line_wins_over_the_config_file_and_the_file_over_the_defaults() {
    let dir = scratch("precedence");
    let config = dir.join("haystack.toml");
    std::fs::write(
        &config,
        "bind = \"127.0.0.2:0\"\nlog-format = \"json\"\nlog-level = \"debug\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    // From the file: the address and the JSON log lines.
    let log = dir.join("file.log");
    let server = serve_and_ask(&["--config", config], &log, "127.0.0.2");
    server.json_lines_until(|lines| has(lines, "request"));
    server.stop();
    // The command line wins over the file.
    let log = dir.join("command-line.log");
    let args = [
        "--config",
        config,
        "--bind",
        "127.0.0.3:0",
        "--log-format",
        "text",
    ];
    serve_and_ask(&args, &log, "127.0.0.3").stop();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("request") && !text.trim_start().starts_with('{'),
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn rust_log_sets_the_level_unless_log_level_is_given() {
    let dir = scratch("rust-log");
    let requests_logged = |extra: &[&str], name: &str| {
        let mut args = vec!["--bind", "127.0.0.1:0", "--log-format", "json"];
        args.extend_from_slice(extra);
        let mut all = vec!["haystack", "serve"];
        all.extend_from_slice(&args);
        let log = dir.join(name);
        let server = Server::start(&all, &log, &[("RUST_LOG", "warn")]);
        let url = processes::served_at(&server.first);
        assert!(
            buildwire(&["haystack", "client", &url, "about"], &[])
                .status
                .success()
        );
        server.stop();
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("\"message\":\"request\"")
    };
    assert!(!requests_logged(&[], "warn.log"));
    assert!(requests_logged(&["--log-level", "info"], "info.log"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_wrong_config_file_is_an_error_naming_the_file_line_and_key() {
    let dir = scratch("wrong");
    let cases = [
        (
            "bind = \"127.0.0.1:0\"\n\nbnd = \"127.0.0.1:1\"\n",
            "{FILE}:3:1: unknown key `bnd`: not an option of `buildwire haystack serve` (see \
             `buildwire haystack serve --help`)",
        ),
        (
            "snapshot-seconds = \"30s\"\nbind = 8080\n",
            "{FILE}:2:1: bind: invalid value '8080' for '--bind <BIND>': invalid socket \
             address syntax",
        ),
        (
            "data = [\"a.zinc\", { file = \"b.zinc\" }]\n",
            "{FILE}:1:1: `data` takes a value or an array of values, not a table",
        ),
    ];
    for (number, (text, expected)) in cases.iter().enumerate() {
        let file = dir.join(format!("wrong-{number}.toml"));
        std::fs::write(&file, text).unwrap();
        let file = file.to_str().unwrap();
        let out = buildwire(&["haystack", "serve", "--config", file], &[]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr.trim_end(),
            format!("error: {}", expected.replace("{FILE}", file))
        );
    }
    let out = buildwire(
        &[
            "opcua",
            "serve",
            "--config",
            &dir.join("missing.toml").display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the configuration file"));
    let out = buildwire(&["bacnet", "serve", "--log-level", "chatty=="], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--log-level \"chatty==\""));
    std::fs::remove_dir_all(dir).unwrap();
}

/// The `toml` blocks of docs/configuration-files.md and the files of contrib/config/, each
/// with its first line `# buildwire COMMAND... --config FILE`.
fn documented_examples() -> Vec<(Vec<String>, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("docs/configuration-files.md")).unwrap();
    let mut files: Vec<String> = text
        .split("```toml\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap().to_owned())
        .collect();
    let mut contrib: Vec<PathBuf> = std::fs::read_dir(root.join("contrib/config"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    contrib.sort();
    assert!(contrib.len() >= 3, "{contrib:?}");
    files.extend(contrib.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    files
        .into_iter()
        .map(|block| {
            let first = block.lines().next().unwrap();
            let command: Vec<String> = first
                .strip_prefix("# ")
                .unwrap_or_else(|| panic!("no command line in {first:?}"))
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            (command, block)
        })
        .collect()
}

#[test]
fn every_documented_config_file_is_accepted_by_its_command() {
    let examples = documented_examples();
    let commands: Vec<String> = examples.iter().map(|(c, _)| c[..3].join(" ")).collect();
    for expected in [
        "buildwire bacnet serve",
        "buildwire bacnet router",
        "buildwire bacnet bbmd",
        "buildwire bacnet sc-hub",
        "buildwire haystack serve",
        "buildwire opcua serve",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "no example for {expected}"
        );
    }
    let dir = scratch("documented");
    for (command, block) in examples {
        // Only the file's name: the contrib files name their place in /etc.
        let name = Path::new(command.last().unwrap()).file_name().unwrap();
        let file = dir.join(name);
        std::fs::write(&file, &block).unwrap();
        let mut args = command.clone();
        *args.last_mut().unwrap() = file.display().to_string();
        buildwire_cli::check_args(args).unwrap_or_else(|e| panic!("{command:?}:\n{e}"));
        // Every key of the example is an option the file set (not a silent no-op).
        let table: toml::Table = block.parse().unwrap();
        assert!(!table.is_empty());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_command_line_reference_lists_every_command_and_the_service_options() {
    let dir = scratch("reference");
    let out = buildwire(&["help-markdown", dir.to_str().unwrap()], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = std::fs::read_to_string(dir.join("index.md")).unwrap();
    for family in ["bacnet", "haystack", "opcua", "bench"] {
        assert!(index.contains(&format!("({family}.md)")), "{index}");
    }
    let haystack = std::fs::read_to_string(dir.join("haystack.md")).unwrap();
    assert!(
        haystack.contains("## `buildwire haystack serve`"),
        "{haystack}"
    );
    for option in [
        "--config <FILE>",
        "--log-level <LEVEL>",
        "--log-format <FORMAT>",
        "--user-password-file <FILE>",
    ] {
        assert!(
            haystack.contains(&format!("- `{option}`")),
            "{option} missing"
        );
    }
    assert!(haystack.contains("Environment: `BUILDWIRE_HAYSTACK_USER`"));
    let bacnet = std::fs::read_to_string(dir.join("bacnet.md")).unwrap();
    for command in ["serve", "router", "bbmd", "sc-hub", "read", "whois"] {
        assert!(
            bacnet.contains(&format!("## `buildwire bacnet {command}`")),
            "{command}"
        );
    }
    // The hidden generator itself has no page.
    assert!(!index.contains("(help-markdown.md)"));
    assert!(!dir.join("help-markdown.md").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// The JSON log lines a client command wrote on stderr (its `error: ...` line left out).
fn stderr_json_lines(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"))
        })
        .collect()
}

/// [`stderr_json_lines`] of a command that must have succeeded.
fn succeeded_json_lines(output: &std::process::Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stderr_json_lines(output)
}

fn with_message<'a>(lines: &'a [Value], message: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["message"] == message).collect()
}

#[test]
fn the_haystack_client_logs_requests_and_login_steps_but_never_a_secret() {
    let dir = scratch("haystack-client");
    let server = haystack_with_alice(&dir, &dir.join("server.log"), &[]);
    let url = processes::served_at(&server.first);
    let password = [("BUILDWIRE_HAYSTACK_PASSWORD", PASSWORD)];
    let client = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["haystack", "client", &url, "about", "-u", "alice"];
        args.extend_from_slice(extra);
        buildwire(&args, env)
    };
    // Quiet by default: the output of a client command is unchanged.
    let quiet = client(&[], &password);
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let logged = client(&["--log-level", "debug", "--log-format", "json"], &password);
    assert!(
        logged.status.success(),
        "{}",
        String::from_utf8_lossy(&logged.stderr)
    );
    // The same grid on stdout (its rows hold the server's clock, so compare the header).
    let header = |output: &std::process::Output| {
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.lines().take(2).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(header(&logged), header(&quiet));
    assert!(!String::from_utf8_lossy(&logged.stdout).contains('{'));
    let lines = stderr_json_lines(&logged);
    let steps: Vec<&str> = with_message(&lines, "login: sending")
        .iter()
        .map(|l| l["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["hello", "scram-first", "scram-final"], "{lines:#?}");
    for answered in with_message(&lines, "login: answered") {
        assert_eq!(answered["user"], "alice");
        assert!(answered["status"].is_u64(), "{answered}");
    }
    assert_eq!(with_message(&lines, "login: authenticated").len(), 1);
    let requests = with_message(&lines, "request");
    let about = requests.iter().find(|l| l["op"] == "about").unwrap();
    assert_eq!(about["level"], "DEBUG");
    assert_eq!(about["status"], 200);
    assert!(
        about["method"] == "GET" || about["method"] == "POST",
        "{about}"
    );
    assert!(about["duration_ms"].is_f64(), "{about}");
    assert_eq!(about["target"], "buildwire_haystack::client::http");
    // Over the WebSocket: one line per op.
    let over_ws = client(
        &["--ws", "--log-level", "debug", "--log-format", "json"],
        &password,
    );
    let ws_lines = succeeded_json_lines(&over_ws);
    let op = with_message(&ws_lines, "websocket op");
    assert!(
        op.iter()
            .any(|l| l["op"] == "about" && l["duration_ms"].is_f64()),
        "{ws_lines:#?}"
    );
    // A refused login at info level, with the user and the status.
    let wrong = client(
        &["--log-level", "info", "--log-format", "json"],
        &[("BUILDWIRE_HAYSTACK_PASSWORD", "wrong-password")],
    );
    assert!(!wrong.status.success());
    let wrong_lines = stderr_json_lines(&wrong);
    let refused = with_message(&wrong_lines, "login refused");
    assert!(
        refused
            .iter()
            .any(|l| l["level"] == "INFO" && l["user"] == "alice"),
        "{wrong_lines:#?}"
    );
    for output in [&logged, &over_ws, &wrong] {
        let text = String::from_utf8_lossy(&output.stderr).to_ascii_lowercase();
        for secret in [
            PASSWORD.to_ascii_lowercase().as_str(),
            "wrong-password",
            "authtoken",
            "bearer ",
            "authorization",
            "proof",
            "nonce",
        ] {
            assert!(!text.contains(secret), "{secret:?} is in the log:\n{text}");
        }
    }
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_bacnet_client_logs_requests_retries_and_refusals() {
    let (dir, _log, server) = serve_with_json_logs("bacnet", &[], &[]);
    let device = processes::served_at(&server.first);
    let port = device.rsplit(':').next().unwrap().to_owned();
    let read = |target: &str, object: &str, extra: &[&str]| {
        let mut args = vec![
            "bacnet",
            "read",
            target,
            object,
            "present-value",
            "--bind",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra);
        buildwire(&args, &[])
    };
    let json = ["--log-level", "debug", "--log-format", "json"];
    let quiet = read(&device, "analog-input,1", &[]);
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );

    let answered = read(&device, "analog-input,1", &json);
    let lines = succeeded_json_lines(&answered);
    let sent = with_message(&lines, "request sent");
    assert_eq!(sent.len(), 1, "{lines:#?}");
    assert_eq!(sent[0]["service"], "read-property");
    assert!(
        sent[0]["peer"]
            .as_str()
            .unwrap()
            .ends_with(&format!(":{port}")),
        "{}",
        sent[0]
    );
    let done = with_message(&lines, "request answered");
    assert_eq!(done.len(), 1, "{lines:#?}");
    assert_eq!(done[0]["level"], "DEBUG");
    assert_eq!(done[0]["answer"], "complex-ack");
    assert_eq!(done[0]["invoke_id"], sent[0]["invoke_id"]);
    assert!(done[0]["duration_ms"].is_f64());
    assert_eq!(done[0]["target"], "buildwire_bacnet::driver::client");

    // An Error PDU from the device: at info level, with the reason.
    let refused = read(&device, "analog-input,999999", &json);
    assert!(!refused.status.success());
    let lines = stderr_json_lines(&refused);
    let line = with_message(&lines, "request refused by the peer");
    assert_eq!(line.len(), 1, "{lines:#?}");
    assert_eq!(line[0]["level"], "INFO");
    assert_eq!(line[0]["answer"], "error");
    assert!(
        line[0]["reason"]
            .as_str()
            .unwrap()
            .contains("unknown-object"),
        "{}",
        line[0]
    );

    // A segmented answer (the object-list in 50-byte APDUs): one line per segment received.
    let device_id = server
        .first
        .split_whitespace()
        .find(|word| word.starts_with("device,"))
        .unwrap()
        .to_owned();
    let mut args = vec!["bacnet", "read", &device, &device_id, "object-list"];
    args.extend_from_slice(&["--bind", "127.0.0.1:0", "--max-apdu", "50"]);
    args.extend_from_slice(&json);
    let segmented = buildwire(&args, &[]);
    let lines = succeeded_json_lines(&segmented);
    let segments = with_message(&lines, "segmented transfer");
    assert!(segments.len() > 1, "{lines:#?}");
    assert!(
        segments
            .iter()
            .all(|l| l["segments_received"].as_u64() >= Some(1) && l["peer"] == device.as_str()),
        "{segments:#?}"
    );

    // A silent peer: each retry, then the timeout.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_address = silent.local_addr().unwrap().to_string();
    let timed_out = read(
        &silent_address,
        "analog-input,1",
        &[&json[..], &["--timeout", "100ms"]].concat(),
    );
    assert!(!timed_out.status.success());
    let lines = stderr_json_lines(&timed_out);
    let retries = with_message(&lines, "no answer in time: sending again");
    // The default TSM retries three times after the first attempt.
    assert_eq!(retries.len(), 3, "{lines:#?}");
    assert!(retries.iter().all(|l| l["peer"] == silent_address.as_str()));
    let end = with_message(&lines, "request timed out: no answer after every retry");
    assert_eq!(end.len(), 1, "{lines:#?}");
    assert!(
        end[0]["duration_ms"].as_f64().unwrap() >= 300.0,
        "{}",
        end[0]
    );
    server.stop();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_wrong_log_level_of_a_client_command_is_a_user_error() {
    let output = buildwire(
        &[
            "bacnet",
            "read",
            "127.0.0.1:9",
            "analog-input,1",
            "present-value",
            "--log-level",
            "loud=[",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--log-level"), "{stderr}");
}

#[test]
fn a_bbmd_logs_foreign_device_registrations_deletions_and_bdt_writes() {
    let dir = scratch("bbmd-tables");
    let log = dir.join("bbmd.log");
    let args = [
        "bacnet",
        "bbmd",
        "--bind",
        "127.0.0.1:0",
        "--allow-write-bdt",
        "--log-format",
        "json",
        "--log-level",
        "debug",
    ];
    let bbmd = Server::start(&args, &log, &[]);
    let address = processes::served_at(&bbmd.first);
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let std::net::SocketAddr::V4(me) = peer.local_addr().unwrap() else {
        unreachable!("bound to 127.0.0.1")
    };
    let me_bytes = {
        let mut bytes = me.ip().octets().to_vec();
        bytes.extend_from_slice(&me.port().to_be_bytes());
        bytes
    };
    // Register-Foreign-Device, time-to-live 60 s (Annex J.2.6), then once more (a renewal).
    peer.send_to(&[0x81, 0x05, 0x00, 0x06, 0x00, 0x3c], &address)
        .unwrap();
    let registered = |lines: &[Value]| has(lines, "foreign device registered");
    let lines = bbmd.json_lines_until(registered);
    let line = with_message(&lines, "foreign device registered")[0];
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["address"], me.to_string().as_str());
    assert_eq!(line["time_to_live"], 60);
    peer.send_to(&[0x81, 0x05, 0x00, 0x06, 0x00, 0x3c], &address)
        .unwrap();
    bbmd.json_lines_until(|lines| has(lines, "foreign device renewed its registration"));
    // Delete-Foreign-Device-Table-Entry for that address (Annex J.2.8).
    let mut delete = vec![0x81, 0x08, 0x00, 0x0a];
    delete.extend_from_slice(&me_bytes);
    peer.send_to(&delete, &address).unwrap();
    let lines = bbmd.json_lines_until(|lines| has(lines, "foreign device table entry deleted"));
    let line = with_message(&lines, "foreign device table entry deleted")[0];
    assert_eq!(line["address"], me.to_string().as_str());
    assert_eq!(line["by"], me.to_string().as_str());
    // A client registering as a foreign device says so at info level.
    let whois = buildwire(
        &[
            "bacnet",
            "whois",
            "--bind",
            "127.0.0.1:0",
            "--foreign",
            &address,
            "--timeout",
            "200ms",
            "--log-level",
            "info",
            "--log-format",
            "json",
        ],
        &[],
    );
    let client_lines = succeeded_json_lines(&whois);
    let registered = with_message(&client_lines, "registered as a foreign device");
    assert_eq!(registered.len(), 1, "{client_lines:#?}");
    assert_eq!(registered[0]["bbmd"], address.as_str());
    // Write-Broadcast-Distribution-Table with one entry, 10.0.2.1:47808/255.255.255.255.
    let write = [
        0x81, 0x01, 0x00, 0x0e, 10, 0, 2, 1, 0xba, 0xc0, 255, 255, 255, 255,
    ];
    peer.send_to(&write, &address).unwrap();
    let lines = bbmd.json_lines_until(|lines| has(lines, "broadcast distribution table written"));
    let line = with_message(&lines, "broadcast distribution table written")[0];
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["by"], me.to_string().as_str());
    assert!(
        line["entries"]
            .as_str()
            .unwrap()
            .contains("10.0.2.1:47808/255.255.255.255"),
        "{line}"
    );
    bbmd.stop();
    std::fs::remove_dir_all(dir).unwrap();
}
