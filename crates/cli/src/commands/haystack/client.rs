//! `buildwire haystack client URL OP [ARGS]`: any standard op against a Haystack server,
//! over HTTP (default) or the WebSocket API (`--ws`), with SCRAM login.

use std::time::Duration;

use buildwire_haystack::client::rollup::CLIENT_ROLLUP_TAG;
use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient, Transport, connect};
use buildwire_haystack::codec::{Format, zinc};
use buildwire_haystack::value::{DateTime, Dict, Grid, Ref, Value};
use clap::Args;

use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::service::ClientLogArgs;

/// Environment variable read for the password when `--password` is not given.
const PASSWORD_VARIABLE: &str = "BUILDWIRE_HAYSTACK_PASSWORD";

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The API's base URL, e.g. http://127.0.0.1:8080/api
    url: String,
    /// The op: about, ops, filetypes, formats, defs, libs, read, nav, watch, point-write,
    /// his-read, his-write, invoke-action, close.
    op: String,
    /// The op's arguments (see the examples).
    args: Vec<String>,
    /// User name for SCRAM login.
    #[arg(long, short)]
    user: Option<String>,
    /// Password (default: the BUILDWIRE_HAYSTACK_PASSWORD environment variable).
    #[arg(long)]
    password: Option<String>,
    /// `read`: at most this many entities.
    #[arg(long)]
    limit: Option<usize>,
    /// `point-write`: who is writing.
    #[arg(long)]
    who: Option<String>,
    /// `watch`: time between polls.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_duration)]
    interval: Duration,
    /// `his-read`: fold the range into buckets this long (a duration such as 15min, 1h, 1day);
    /// needs --fold.
    #[arg(long)]
    every: Option<String>,
    /// `his-read`: how each bucket folds: avg, min, max, sum, count, first or last.
    #[arg(long)]
    fold: Option<String>,
    /// `watch`: stop after this many sets of changes.
    #[arg(long)]
    count: Option<usize>,
    /// Use the WebSocket API (`ws://HOST:PORT/api/ws` derived from the URL, after an HTTP
    /// login).
    #[arg(long)]
    ws: bool,
    /// Encoding on the wire: zinc (the spec's default) or json.
    #[arg(long, default_value = "zinc")]
    wire: Format,
    /// How long to wait for each answer.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,
    /// A PEM file of extra trusted CA certificates (https with a private CA).
    #[arg(long)]
    ca: Option<String>,
    /// Print the grid as JSON (Hayson) instead of Zinc.
    #[arg(long)]
    json: bool,
    /// Print the grid as CSV (a header row, then one line per row) instead of Zinc: for
    /// `read`, `his-read` (ts, val) and every op that answers a table.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    #[command(flatten)]
    logs: ClientLogArgs,
}

pub const AFTER_HELP: &str = "Ops and their arguments:\n  \
    about | ops | filetypes | formats | close\n  \
    defs [FILTER] | libs [FILTER]\n  \
    read FILTER [--limit N]            read @id1 @id2 ...   (by id)\n  \
    nav [@NAVID]\n  \
    watch @id1 @id2 ... [--interval DURATION] [--count N]   (one grid of changes per line with --json)\n  \
    point-write @ID                    (the priority array)\n  \
    point-write @ID LEVEL VALUE [--who NAME]   (VALUE in Zinc: 72.5, N to release, \"text\")\n  \
    his-read @ID RANGE                 (today, yesterday, 2024-01-01, 2024-01-01,2024-01-31)\n  \
    his-read @ID RANGE --every 15min --fold avg   (a rollup: avg min max sum count first last;\n    \
      folded here, with a note on stderr, when the server answers raw samples)\n  \
    his-write @ID TS=VALUE ...         (2024-01-01T00:00:00Z UTC=72.5)\n  \
    invoke-action @ID ACTION [name=VALUE ...]\n\n\
    Examples:\n  \
    buildwire haystack client http://127.0.0.1:8080/api about -u admin\n  \
    buildwire haystack client http://127.0.0.1:8080/api read 'point and his' \\\n      --limit 5 --json\n  \
    buildwire haystack client http://127.0.0.1:8080/api his-read @p1 yesterday \\\n      -u admin\n  \
    buildwire haystack client http://127.0.0.1:8080/api his-read @p1 today \\\n      --csv > p1.csv\n  \
    buildwire haystack client http://127.0.0.1:8080/api read site --ws -u admin\n  \
    buildwire haystack client http://127.0.0.1:8080/api about -u admin \\\n      \
      --log-level debug                       # login steps, no secrets";

pub fn client(args: ClientArgs) -> CommandResult {
    args.logs.start_logs()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: ClientArgs) -> CommandResult {
    let timeout = args.timeout;
    let mut options = ClientOptions {
        format: args.wire,
        timeout,
        ..ClientOptions::default()
    };
    if let Some(user) = &args.user {
        let password = match &args.password {
            Some(password) => password.clone(),
            None => std::env::var(PASSWORD_VARIABLE).map_err(|_| {
                format!("--user needs --password or the {PASSWORD_VARIABLE} environment variable")
            })?,
        };
        options.username = Some(user.clone());
        options.password = Some(password);
    }
    if let Some(path) = &args.ca {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        options.root_certificates_pem.push(pem);
    }
    let transport = if args.ws && args.op != "watch" {
        Transport::WebSocket
    } else {
        Transport::Http
    };
    let client = connect(&args.url, options, transport).await?;
    if args.op == "watch" {
        return watch(client.http(), &args).await;
    }
    let grid = call(&client, &args).await?;
    print_grid(&grid, &args);
    Ok(())
}

fn print_grid(grid: &Grid, args: &ClientArgs) {
    if args.json {
        println!("{}", Format::Json.encode_grid(grid));
    } else if args.csv {
        print!("{}", buildwire_haystack::codec::csv::encode_grid(grid));
    } else {
        print!("{}", zinc::encode_grid(grid));
    }
}

fn parse_ref(text: &str) -> Result<Ref, String> {
    match zinc::decode_value(text) {
        Ok(Value::Ref(id)) => Ok(id),
        _ => Err(format!("`{text}` is not a ref: write ids as @id")),
    }
}

fn parse_value(text: &str) -> Result<Value, String> {
    zinc::decode_value(text).map_err(|e| format!("`{text}` is not a Zinc value ({e})"))
}

fn argument<'a>(args: &'a ClientArgs, index: usize, what: &str) -> Result<&'a str, String> {
    args.args
        .get(index)
        .map(String::as_str)
        .ok_or_else(|| format!("`{}` needs {what}", args.op))
}

async fn call(
    api: &impl HaystackApi,
    args: &ClientArgs,
) -> Result<Grid, Box<dyn std::error::Error>> {
    let first = args.args.first().map(String::as_str);
    let grid = match args.op.as_str() {
        "about" => Grid::from_dicts(&[api.about().await?])?,
        "ops" => api.ops().await?,
        "filetypes" => api.filetypes().await?,
        "formats" => api.formats().await?,
        "defs" => api.defs(first, args.limit).await?,
        "libs" => api.libs(first, args.limit).await?,
        "read" => {
            let filter = argument(args, 0, "a filter or ids")?;
            if filter.starts_with('@') {
                let ids = args
                    .args
                    .iter()
                    .map(|id| parse_ref(id))
                    .collect::<Result<Vec<_>, _>>()?;
                api.read_ids(&ids).await?
            } else {
                api.read(filter, args.limit).await?
            }
        }
        "nav" => {
            let nav_id = first.map(parse_ref).transpose()?;
            api.nav(nav_id.as_ref()).await?
        }
        "point-write" => {
            let id = parse_ref(argument(args, 0, "a point id")?)?;
            match args.args.get(1) {
                None => api.point_write_array(&id).await?,
                Some(level) => {
                    let level: u8 = level
                        .parse()
                        .ok()
                        .filter(|l| (1..=17).contains(l))
                        .ok_or_else(|| format!("level `{level}` is not 1..17"))?;
                    let value = parse_value(argument(args, 2, "a value")?)?;
                    api.point_write(&id, level, value, args.who.as_deref(), None)
                        .await?
                }
            }
        }
        "his-read" => {
            let id = parse_ref(argument(args, 0, "a point id")?)?;
            let range = argument(args, 1, "a range")?;
            match (&args.every, &args.fold) {
                (None, None) => api.his_read(&id, range).await?,
                (Some(every), Some(fold)) => {
                    let interval = parse_value(every)?;
                    let grid = api.his_rollup(&id, range, interval, fold).await?;
                    if grid.meta.contains(CLIENT_ROLLUP_TAG) {
                        eprintln!(
                            "note: the server answered raw samples (it does not roll up): \
                             folded here into {} buckets with `{fold}` (meta \
                             {CLIENT_ROLLUP_TAG})",
                            grid.row_count()
                        );
                    }
                    grid
                }
                _ => {
                    return Err(
                        "a rollup needs both --every (e.g. 15min) and --fold (e.g. avg)".into(),
                    );
                }
            }
        }
        "his-write" => {
            let id = parse_ref(argument(args, 0, "a point id")?)?;
            let samples = args.args[1..]
                .iter()
                .map(|pair| {
                    let (ts, value) = pair
                        .rsplit_once('=')
                        .ok_or_else(|| format!("`{pair}` is not TS=VALUE"))?;
                    let Value::DateTime(ts) = parse_value(ts)? else {
                        return Err(format!("`{ts}` is not a Zinc datetime"));
                    };
                    Ok::<(DateTime, Value), String>((*ts, parse_value(value)?))
                })
                .collect::<Result<Vec<_>, _>>()?;
            api.his_write(&id, &samples).await?
        }
        "invoke-action" => {
            let id = parse_ref(argument(args, 0, "an entity id")?)?;
            let action = argument(args, 1, "an action name")?;
            let mut arguments = Dict::new();
            for pair in &args.args[2..] {
                let (name, value) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("`{pair}` is not name=VALUE"))?;
                arguments.insert(name, parse_value(value)?)?;
            }
            api.invoke_action(&id, action, &arguments).await?
        }
        "close" => {
            api.close().await?;
            Grid::default()
        }
        other => {
            return Err(format!(
                "unknown op `{other}`: see `buildwire haystack client --help` for the list"
            )
            .into());
        }
    };
    Ok(grid)
}

async fn watch(http: &HaystackClient, args: &ClientArgs) -> CommandResult {
    let ids = args
        .args
        .iter()
        .map(|id| parse_ref(id))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() {
        return Err("`watch` needs the ids to watch (@id ...)".into());
    }
    let interval = args.interval;
    let mut watch = http.watch("buildwire cli", &ids, None, interval).await?;
    let mut seen = 0;
    while args.count.is_none_or(|count| seen < count) {
        let Some(changes) = watch.next().await else {
            break;
        };
        print_grid(&changes?, args);
        seen += 1;
    }
    watch.close().await?;
    Ok(())
}
