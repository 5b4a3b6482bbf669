//! `buildwire haystack ...`: Haystack tools.

mod client;
mod serve;
mod users;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use buildwire_haystack::codec::Format;
use buildwire_haystack::codec::csv as haystack_csv;
use buildwire_haystack::value::Grid;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::commands::common::result::CommandResult;

#[derive(Debug, Subcommand)]
pub enum HaystackCommand {
    /// Convert a grid between Zinc, JSON (v4 Hayson or v3) and Trio, or export it as CSV.
    #[command(
        after_help = "Formats come from the file extensions (.zinc, .json, .trio, .csv) unless \
        --from/--to say otherwise; `-` is stdin or stdout. CSV is output only.\n\nExamples:\n  \
        buildwire haystack convert ../shared/data/haystack/alpha.zinc alpha.json\n  \
        buildwire haystack convert alpha.json alpha.csv\n  \
        buildwire haystack convert bravo.trio - --to json3 | head"
    )]
    Convert(ConvertArgs),
    /// Run a Haystack filter over the entities of one or more files (Zinc out, or JSON or CSV).
    #[command(after_help = "Examples:\n  \
        buildwire haystack query ../shared/data/haystack/alpha.zinc 'ahu'\n  \
        buildwire haystack query alpha.zinc bravo.zinc \\\n      'point and his and kind==\"Number\"' --count\n  \
        buildwire haystack query bravo.zinc \\\n      'equipRef->siteRef->geoCity==\"Fort Wayne\"' --json --limit 5\n  \
        buildwire haystack query alpha.zinc 'point and his' --csv > points.csv")]
    Query(QueryArgs),
    /// Decode a file, check it, and report its shape and the decode time.
    #[command(
        after_help = "Example:\n  buildwire haystack decode ../shared/data/haystack/bravo.zinc --json"
    )]
    Decode(DecodeArgs),
    /// Serve Haystack over HTTP and WebSocket (SCRAM login, roles, optional TLS).
    #[command(after_help = serve::AFTER_HELP)]
    Serve(serve::ServeArgs),
    /// Bulk-load grid files into a Redis or PostgreSQL backend.
    #[command(after_help = serve::IMPORT_AFTER_HELP)]
    Import(serve::ImportArgs),
    /// List, add or remove users (salted SCRAM keys) in a users file or in a Redis or
    /// PostgreSQL backend.
    #[command(after_help = users::USERS_AFTER_HELP)]
    Users(users::UsersArgs),
    /// Run one op against a Haystack server (HTTP or WebSocket), with SCRAM login.
    #[command(after_help = client::AFTER_HELP)]
    Client(client::ClientArgs),
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input file, or `-` for stdin.
    input: String,
    /// Output file, or `-` for stdout.
    output: String,
    /// Input format: zinc, json, json3 or trio (default: from the input's extension).
    #[arg(long)]
    from: Option<Format>,
    /// Output format: zinc, json, json3, trio or csv (default: from the output's extension;
    /// CSV has no reader back).
    #[arg(long, value_parser = parse_output_format)]
    to: Option<OutputFormat>,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The file to decode.
    input: PathBuf,
    /// Its format (default: from the extension).
    #[arg(long)]
    from: Option<Format>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// One or more files (their entities are loaded into one store), then the filter.
    #[arg(required = true, num_args = 2..)]
    inputs: Vec<String>,
    /// Print at most this many entities.
    #[arg(long)]
    limit: Option<usize>,
    /// Print only the number of matches.
    #[arg(long)]
    count: bool,
    /// Print JSON (Hayson) instead of Zinc.
    #[arg(long)]
    json: bool,
    /// Print CSV (a header row of column names, then one line per entity) instead of Zinc.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
}

pub fn execute(cmd: HaystackCommand) -> CommandResult {
    match cmd {
        HaystackCommand::Convert(args) => convert(args),
        HaystackCommand::Query(args) => query(args),
        HaystackCommand::Decode(args) => decode(args),
        HaystackCommand::Client(args) => client::client(args),
        HaystackCommand::Serve(args) => serve::serve(args),
        HaystackCommand::Import(args) => serve::import(args),
        HaystackCommand::Users(args) => users::users(args),
    }
}

fn format_of(explicit: Option<Format>, path: &str, flag: &str) -> Result<Format, String> {
    explicit.or_else(|| Format::from_path(path)).ok_or_else(|| {
        format!(
            "cannot tell the format of `{path}` from its extension: add {flag} zinc|json|json3|trio"
        )
    })
}

fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
    }
}

fn decode_file(path: &str, format: Format) -> Result<Grid, String> {
    let text = read_input(path)?;
    format
        .decode_grid(&text)
        .map_err(|e| format!("{path} is not valid {format}: {e}"))
}

/// What `convert` writes: a grid format, or CSV (a table without types or metadata).
#[derive(Clone, Copy, Debug)]
enum OutputFormat {
    Grid(Format),
    Csv,
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputFormat::Grid(format) => format.fmt(f),
            OutputFormat::Csv => f.write_str("csv"),
        }
    }
}

fn parse_output_format(text: &str) -> Result<OutputFormat, String> {
    if text.eq_ignore_ascii_case("csv") {
        Ok(OutputFormat::Csv)
    } else {
        text.parse()
            .map(OutputFormat::Grid)
            .map_err(|e: String| format!("{e}, or csv"))
    }
}

fn convert(args: ConvertArgs) -> CommandResult {
    let from = format_of(args.from, &args.input, "--from")?;
    let to = match args.to {
        Some(to) => to,
        None if args.output.to_ascii_lowercase().ends_with(".csv") => OutputFormat::Csv,
        None => OutputFormat::Grid(format_of(None, &args.output, "--to")?),
    };
    let grid = decode_file(&args.input, from)?;
    let text = match to {
        OutputFormat::Grid(format) => format.encode_grid(&grid),
        OutputFormat::Csv => haystack_csv::encode_grid(&grid),
    };
    if args.output == "-" {
        std::io::stdout().write_all(text.as_bytes())?;
    } else {
        std::fs::write(&args.output, text)
            .map_err(|e| format!("cannot write {}: {e}", args.output))?;
        eprintln!(
            "{} rows: {} ({from}) -> {} ({to})",
            grid.row_count(),
            args.input,
            args.output
        );
    }
    Ok(())
}

fn decode(args: DecodeArgs) -> CommandResult {
    let path = args.input.display().to_string();
    let format = format_of(args.from, &path, "--from")?;
    let text = read_input(&path)?;
    let start = Instant::now();
    let grid = format
        .decode_grid(&text)
        .map_err(|e| format!("{path} is not valid {format}: {e}"))?;
    let millis = start.elapsed().as_secs_f64() * 1e3;
    let out = json!({
        "file": path,
        "format": format.name(),
        "bytes": text.len(),
        "rows": grid.row_count(),
        "columns": grid.columns().len(),
        "decode_ms": millis,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{path}: {format}, {} bytes, {} rows, {} columns, decoded in {millis:.1} ms",
            text.len(),
            grid.row_count(),
            grid.columns().len()
        );
    }
    Ok(())
}

fn query(mut args: QueryArgs) -> CommandResult {
    use buildwire_haystack::filter;
    use buildwire_haystack::store::EntityStore;
    let text = args.inputs.pop().ok_or("give the files, then the filter")?;
    let filter = filter::parse(&text).map_err(|e| format!("invalid filter `{text}`: {e}"))?;
    let mut store = EntityStore::new();
    for path in &args.inputs {
        let grid = decode_file(path, format_of(None, path, "a .zinc/.json/.trio name")?)?;
        store
            .load_grid(&grid)
            .map_err(|e| format!("cannot load {path} into the store: {e}"))?;
    }
    let found = store.read(&filter, args.limit);
    if args.count {
        println!("{}", found.len());
        return Ok(());
    }
    let rows: Vec<_> = found.into_iter().cloned().collect();
    let grid = Grid::from_dicts(&rows).map_err(|e| format!("cannot build the result grid: {e}"))?;
    if args.csv {
        std::io::stdout().write_all(haystack_csv::encode_grid(&grid).as_bytes())?;
        return Ok(());
    }
    let format = if args.json {
        Format::Json
    } else {
        Format::Zinc
    };
    std::io::stdout().write_all(format.encode_grid(&grid).as_bytes())?;
    if args.json {
        println!();
    }
    Ok(())
}
