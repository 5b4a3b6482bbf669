//! `buildwire opcua subscribe`: one subscription with a monitored item per node, streaming
//! each data change (a JSON line with `--json`); Ctrl-C or `--duration` deletes the
//! subscription and closes the session.
//!
//! The client reconnects by itself (`ReconnectingClient`): after a lost connection the
//! session is re-activated and keeps its subscription, and after a server restart the
//! subscription and its items are created again with the same client handles. Connection
//! events are printed as they happen (`{"event": "lost", ...}` lines with `--json`, on
//! stdout with the changes; `# ...` lines on stderr otherwise).

use std::time::Duration;

use buildwire_opcua::client::subscriptions::{
    MonitoredItemSpec, SubscriptionEvent, SubscriptionSettings,
};
use buildwire_opcua::services::{DataChangeFilter, DataChangeTrigger, deadband_type};
use clap::Args;
use serde_json::json;

use buildwire_opcua::driver::{ConnectionEvent, ReconnectPolicy, ReconnectingClient};
use tokio::sync::broadcast;

use crate::commands::common::csv;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::signals::Interrupted;
use crate::commands::opcua::repeat::{DATA_VALUE_COLUMNS, event_json};
use buildwire_opcua::client::value_text::data_value_json;

use crate::commands::opcua::client_args::{ClientArgs, client_config, parse_node};

#[derive(Debug, Args)]
pub struct SubscribeArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The nodes whose Value to monitor (`ns=1;s=Setpoint`, `i=2258`).
    #[arg(required = true)]
    nodes: Vec<String>,
    /// Publishing interval (the server may revise it).
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    interval: Duration,
    /// Sampling interval (default: the publishing interval).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    sampling: Option<Duration>,
    /// Queue size per item: values kept between two publishes (1: the latest only).
    #[arg(long, default_value_t = 1, value_name = "N")]
    queue: u32,
    /// Report only changes beyond a deadband: `abs:X` (in the value's units) or `pct:X`
    /// (percent of the node's EURange).
    #[arg(long, value_name = "abs:X|pct:X")]
    deadband: Option<String>,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// How long the server may stay unreachable before the command gives up;
    /// until then it reconnects with backoff and restores the subscription.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = parse_duration)]
    reconnect_timeout: Duration,
    /// One JSON object per change and line (node, value, type, status, timestamps).
    #[arg(long)]
    json: bool,
    /// One CSV row per change after a header row (the JSON fields as columns); connection
    /// events go to stderr.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
}

/// Prints the connection events that happened since the last call.
fn print_events(json: bool, events: &mut broadcast::Receiver<ConnectionEvent>) {
    while let Ok(event) = events.try_recv() {
        let line = event_json(&event);
        if json {
            println!("{line}");
        } else {
            eprintln!("# {line}");
        }
    }
}

fn parse_deadband(text: &str) -> Result<DataChangeFilter, Box<dyn std::error::Error>> {
    let usage = || format!("`{text}`: the deadband is abs:X or pct:X with a number X >= 0");
    let (kind, amount) = text.split_once(':').ok_or_else(usage)?;
    let value: f64 = amount.trim().parse().map_err(|_| usage())?;
    if !value.is_finite() || value < 0.0 {
        return Err(usage().into());
    }
    let deadband_type = match kind {
        "abs" => deadband_type::ABSOLUTE,
        "pct" if value <= 100.0 => deadband_type::PERCENT,
        _ => return Err(usage().into()),
    };
    Ok(DataChangeFilter {
        trigger: DataChangeTrigger::StatusValue,
        deadband_type,
        deadband_value: value,
    })
}

pub async fn subscribe(args: SubscribeArgs) -> CommandResult {
    let nodes = args
        .nodes
        .iter()
        .map(|text| parse_node(text))
        .collect::<Result<Vec<_>, _>>()?;
    let filter = args.deadband.as_deref().map(parse_deadband).transpose()?;
    if args.interval.is_zero() {
        return Err("--interval must be longer than 0".into());
    }
    let config = client_config(&args.client).await?;
    let policy = ReconnectPolicy {
        reconnect_timeout: args.reconnect_timeout,
        ..ReconnectPolicy::default()
    };
    let endpoint = config.endpoint_url.clone();
    let mut client = ReconnectingClient::connect(config, policy)
        .await
        .map_err(|e| format!("cannot connect to {endpoint}: {e}"))?;
    let mut events = client.subscribe_events();
    let settings = SubscriptionSettings {
        publishing_interval_ms: args.interval.as_secs_f64() * 1000.0,
        ..SubscriptionSettings::default()
    };
    let subscription = client.create_subscription(settings).await?;
    let specs: Vec<MonitoredItemSpec> = nodes
        .iter()
        .map(|node| MonitoredItemSpec {
            sampling_interval_ms: args.sampling.map_or(-1.0, |d| d.as_secs_f64() * 1000.0),
            queue_size: args.queue,
            filter,
            ..MonitoredItemSpec::value(node.clone())
        })
        .collect();
    let results = client.create_monitored_items(subscription, &specs).await?;
    let mut names = std::collections::HashMap::new();
    let mut refused = Vec::new();
    for ((handle, result), text) in results.iter().zip(&args.nodes) {
        if result.status_code.is_good() {
            names.insert(*handle, text.clone());
        } else {
            refused.push(format!("{text}: {}", result.status_code));
        }
    }
    if names.is_empty() {
        let _ = client.delete_subscriptions(&[subscription]).await;
        let _ = client.close().await;
        return Err(format!(
            "the server monitors none of the nodes ({}); check the node ids with `buildwire opcua browse`",
            refused.join(", ")
        )
        .into());
    }
    for line in &refused {
        eprintln!("not monitored: {line}");
    }
    let deadline = args.duration.map(|d| tokio::time::Instant::now() + d);
    if args.csv {
        println!("{}", csv::line(DATA_VALUE_COLUMNS));
    }
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let outcome: CommandResult = loop {
        let stop = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let event = tokio::select! {
            event = client.next_notification() => event,
            _ = &mut interrupted => break Err(Box::new(Interrupted)),
            () = stop => break Ok(()),
        };
        print_events(args.json, &mut events);
        match event {
            Ok(SubscriptionEvent::DataChange {
                client_handle,
                value,
                ..
            }) => {
                let node = names.get(&client_handle).map_or("?", String::as_str);
                let row = data_value_json(node, &value);
                if args.json {
                    println!("{row}");
                } else if args.csv {
                    println!("{}", csv::json_line(&row, DATA_VALUE_COLUMNS));
                } else {
                    println!(
                        "{} = {} ({}) {}",
                        node,
                        row["value"],
                        row["status"].as_str().unwrap_or_default(),
                        row["source_timestamp"].as_str().unwrap_or_default()
                    );
                }
            }
            Ok(SubscriptionEvent::StatusChange { status, .. }) => {
                eprintln!("subscription status: {status}");
                if status.is_bad() {
                    break Err(format!("the server ended the subscription ({status})").into());
                }
            }
            Ok(SubscriptionEvent::Lost {
                sequence_number, ..
            }) => {
                if args.json {
                    eprintln!("{}", json!({"lost_sequence_number": sequence_number}));
                } else {
                    eprintln!("message {sequence_number} was lost");
                }
            }
            Ok(SubscriptionEvent::KeepAlive { .. }) => {}
            Err(error) => break Err(format!("subscription failed: {error}").into()),
        }
    };
    // Leave nothing behind on the server (the id changes when a server restart made the
    // client create the subscription again), also after Ctrl-C (then exit status 130).
    let ids = client.subscription_ids();
    let _ = client.delete_subscriptions(&ids).await;
    let _ = client.close().await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadbands() {
        let filter = parse_deadband("abs:0.5").unwrap();
        assert_eq!(filter.deadband_type, deadband_type::ABSOLUTE);
        assert_eq!(filter.deadband_value, 0.5);
        assert_eq!(
            parse_deadband("pct:10").unwrap().deadband_type,
            deadband_type::PERCENT
        );
        for bad in ["pct:101", "abs:-1", "abs", "rel:1", "abs:x"] {
            assert!(parse_deadband(bad).is_err(), "{bad}");
        }
    }
}
