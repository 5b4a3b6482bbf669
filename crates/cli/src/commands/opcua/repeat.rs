//! `buildwire opcua read ... --repeat N --interval DURATION`: the same Read every interval on one
//! client that reconnects by itself (`ReconnectingClient`). A round that fails (server down
//! longer than `--reconnect-timeout`) is reported and the loop goes on; connection events
//! (lost, reconnecting, reconnected) are printed as they happen.
//!
//! Output: one line per round and per event: text, or with `--json` one JSON object per line
//! (`{"round": 3, "results": [...]}`, `{"round": 4, "error": ..., "status": ...}`,
//! `{"event": "reconnected", "session_reactivated": false, ...}`). The exit status is 0 when
//! the last round succeeded.

use std::io::Write as _;
use std::time::Duration;

use buildwire_opcua::client::ClientConfig;
use buildwire_opcua::driver::{ConnectionEvent, ReconnectPolicy, ReconnectingClient};
use buildwire_opcua::encoding::NodeId;
use buildwire_opcua::services::AttributeId;
use serde_json::{Value, json};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::broadcast;

use crate::commands::common::csv;
use crate::commands::common::result::CommandResult;
use crate::commands::common::signals::Interrupted;

/// What one `read --repeat` run does.
pub struct RepeatRead {
    pub config: ClientConfig,
    pub nodes: Vec<NodeId>,
    pub node_texts: Vec<String>,
    pub attribute: AttributeId,
    pub repeat: u64,
    pub interval: Duration,
    pub reconnect_timeout: Duration,
    pub json: bool,
    /// CSV rows (round and [`DATA_VALUE_COLUMNS`]) after a header row; events on stderr.
    pub csv: bool,
}

/// The fields of a value row (`data_value_json`), the columns of `--csv`.
pub const DATA_VALUE_COLUMNS: &[&str] = &[
    "node",
    "value",
    "type",
    "status",
    "source_timestamp",
    "server_timestamp",
];

/// A connection event as one JSON object (`{"event": "lost", ...}`).
pub(super) fn event_json(event: &ConnectionEvent) -> Value {
    match event {
        ConnectionEvent::Connected { session_id } => {
            json!({"event": "connected", "session_id": session_id.to_string()})
        }
        ConnectionEvent::Lost { status, reason } => {
            json!({"event": "lost", "status": status.to_string(), "reason": reason})
        }
        ConnectionEvent::Reconnecting { attempt, delay } => json!({
            "event": "reconnecting",
            "attempt": attempt,
            "delay_ms": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        }),
        ConnectionEvent::AttemptFailed {
            attempt,
            status,
            reason,
        } => json!({
            "event": "attempt_failed",
            "attempt": attempt,
            "status": status.to_string(),
            "reason": reason,
        }),
        ConnectionEvent::SubscriptionsRestored {
            kept,
            transferred,
            recreated,
        } => json!({
            "event": "subscriptions_restored",
            "kept": kept,
            "transferred": transferred,
            "recreated": recreated,
        }),
        ConnectionEvent::Reconnected {
            session_reactivated,
            session_id,
        } => json!({
            "event": "reconnected",
            "session_reactivated": session_reactivated,
            "session_id": session_id.to_string(),
        }),
    }
}

fn print_line(json_mode: bool, value: &Value, text: String) {
    if json_mode {
        println!("{value}");
    } else {
        println!("{text}");
    }
    let _ = std::io::stdout().flush();
}

fn print_events(json: bool, csv: bool, events: &mut broadcast::Receiver<ConnectionEvent>) {
    while let Ok(event) = events.try_recv() {
        let value = event_json(&event);
        let text = format!("# {}", value);
        if csv {
            eprintln!("{text}");
        } else {
            print_line(json, &value, text);
        }
    }
}

/// Runs the loop.
pub async fn run(
    read: RepeatRead,
    row: impl Fn(&str, &buildwire_opcua::DataValue) -> Value,
) -> CommandResult {
    let endpoint = read.config.endpoint_url.clone();
    let policy = ReconnectPolicy {
        reconnect_timeout: read.reconnect_timeout,
        ..ReconnectPolicy::default()
    };
    let mut client = ReconnectingClient::connect(read.config, policy)
        .await
        .map_err(|e| format!("cannot connect to {endpoint}: {e}"))?;
    let mut events = client.subscribe_events();
    // Ctrl-C ends the loop; the session is closed and the exit status is 130. Listening
    // starts before the first line, so a Ctrl-C right after it is not lost.
    let mut interrupt = signal(SignalKind::interrupt())?;
    if let Some(session_id) = client.session_id() {
        let value = json!({"event": "connected", "session_id": session_id.to_string()});
        let text = format!("# connected, session {session_id}");
        if read.csv {
            eprintln!("{text}");
        } else {
            print_line(read.json, &value, text);
        }
    }
    if read.csv {
        let mut header = vec!["round"];
        header.extend_from_slice(DATA_VALUE_COLUMNS);
        print_line(false, &Value::Null, csv::line(&header));
    }
    let mut last_ok = false;
    let mut stopped_by_ctrl_c = false;
    for round in 1..=read.repeat {
        let next_read = async {
            if round > 1 {
                tokio::time::sleep(read.interval).await;
            }
            client.read(&read.nodes, read.attribute).await
        };
        let result = tokio::select! {
            result = next_read => result,
            _ = interrupt.recv() => {
                stopped_by_ctrl_c = true;
                break;
            }
        };
        print_events(read.json, read.csv, &mut events);
        match result {
            Ok(values) => {
                last_ok = true;
                let rows: Vec<Value> = read
                    .node_texts
                    .iter()
                    .zip(&values)
                    .map(|(node, value)| row(node, value))
                    .collect();
                if read.csv {
                    for r in &rows {
                        let line = csv::json_line(r, DATA_VALUE_COLUMNS);
                        print_line(false, &Value::Null, format!("{round},{line}"));
                    }
                    continue;
                }
                let text = rows
                    .iter()
                    .map(|r| {
                        format!(
                            "{} = {} ({})",
                            r["node"].as_str().unwrap_or_default(),
                            r["value"],
                            r["status"].as_str().unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                print_line(
                    read.json,
                    &json!({"round": round, "results": rows, "reconnects": client.reconnects()}),
                    format!("[{round}] {text}"),
                );
            }
            Err(error) if read.csv => {
                last_ok = false;
                eprintln!("# [{round}] error: {error}");
            }
            Err(error) => {
                last_ok = false;
                print_line(
                    read.json,
                    &json!({
                        "round": round,
                        "error": error.to_string(),
                        "status": error.status_code().to_string(),
                    }),
                    format!("[{round}] error: {error}"),
                );
            }
        }
    }
    let _ = client.close().await;
    if stopped_by_ctrl_c {
        return Err(Box::new(Interrupted));
    }
    if last_ok {
        Ok(())
    } else {
        Err(format!(
            "the last read of {endpoint} failed; check that the server runs, or raise \
             --reconnect-timeout"
        )
        .into())
    }
}
