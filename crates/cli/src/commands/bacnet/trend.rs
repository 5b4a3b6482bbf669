//! `buildwire bacnet read ... --repeat N --interval DURATION`: the same ReadProperty every
//! interval on one client, one line per round with the time it was read (UTC): text,
//! `--json` (one object per line) or `--csv`. A round that fails is printed with its
//! error and the loop goes on; the exit status is 0 when the last round succeeded, 130
//! after Ctrl-C.

use std::io::Write as _;
use std::time::Duration;

use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::inspect::elements_json;
use buildwire_bacnet::network::{DeviceAddress, LinkAddress};
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier};
use clap::Args;
use serde_json::{Value, json};

use super::{ReadArgs, client_tsm, elements_text, runtime, sc, start_client};
use crate::commands::common::csv;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::signals::Interrupted;
use crate::commands::common::timestamp::utc_now;

/// The CSV columns of `read --repeat --csv`.
const COLUMNS: [&str; 7] = [
    "round", "time", "address", "object", "property", "value", "error",
];

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// Read this many times, every --interval (a trend); each line carries its time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    repeat: Option<u64>,
    /// Time between two reads of --repeat.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration,
          requires = "repeat")]
    interval: Duration,
    /// CSV rows after a header row (round, time, address, object, property, value, error);
    /// with --repeat, or for a single read.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
}

impl TrendArgs {
    /// True when the read is repeated or printed as CSV (both print rounds).
    pub fn repeats(&self) -> bool {
        self.repeat.is_some() || self.csv
    }
}

/// Runs the rounds on a B/IP or BACnet/SC client.
pub fn read_repeat(
    args: &ReadArgs,
    object: ObjectIdentifier,
    property: PropertyIdentifier,
) -> CommandResult {
    if args.client.sc.is_sc() {
        let to = sc::sc_device(&args.address)?;
        let tsm = client_tsm(&args.client)?;
        return runtime()?.block_on(async {
            let client = args.client.sc.client(tsm).await?;
            rounds(&client, to, args, object, property).await
        });
    }
    let to = args.client.foreign.target(&args.address)?;
    runtime()?.block_on(async {
        let client = start_client(&args.client, None).await?;
        rounds(&client, to, args, object, property).await
    })
}

async fn rounds<A: LinkAddress + std::fmt::Display>(
    client: &BacnetClient<A>,
    to: DeviceAddress<A>,
    args: &ReadArgs,
    object: ObjectIdentifier,
    property: PropertyIdentifier,
) -> CommandResult {
    let repeat = args.trend.repeat.unwrap_or(1);
    let property_text = match args.index {
        Some(index) => format!("{property}[{index}]"),
        None => property.to_string(),
    };
    if args.trend.csv {
        println!("{}", csv::line(&COLUMNS));
    }
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut next = tokio::time::Instant::now();
    let mut last_ok = false;
    for round in 1..=repeat {
        let result = tokio::select! {
            result = client.read(to, object, property, args.index) => result,
            _ = &mut interrupted => return Err(Box::new(Interrupted)),
        };
        let time = utc_now();
        last_ok = result.is_ok();
        let mut row = json!({
            "round": round,
            "time": time,
            "address": to.to_string(),
            "object": object.to_string(),
            "property": property_text,
        });
        let (value_text, error_text) = match &result {
            Ok(value) => {
                row["value"] = elements_json(value);
                (elements_text(value), String::new())
            }
            Err(error) => {
                row["error"] = Value::String(error.to_string());
                (String::new(), error.to_string())
            }
        };
        if args.client.json {
            println!("{row}");
        } else if args.trend.csv {
            let fields = [
                round.to_string(),
                time,
                to.to_string(),
                object.to_string(),
                property_text.clone(),
                value_text,
                error_text,
            ];
            println!("{}", csv::line(&fields));
        } else if result.is_ok() {
            println!("{time} {object} {property_text}: {value_text}");
        } else {
            println!("{time} {object} {property_text}: error {error_text}");
        }
        let _ = std::io::stdout().flush();
        if round == repeat {
            break;
        }
        next += args.trend.interval;
        tokio::select! {
            () = tokio::time::sleep_until(next) => {}
            _ = &mut interrupted => return Err(Box::new(Interrupted)),
        }
    }
    if last_ok {
        Ok(())
    } else {
        Err("the last read failed".into())
    }
}
