//! `--csv` on every command that prints rows over time or a table, and `haystack convert`
//! to a .csv file: a header row, then one line per row, RFC 4180 quoting. Servers and
//! clients run as processes on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::path::PathBuf;

use processes::{Running, output, served_at, start};

/// Starts a server and returns it with the address its first line names.
fn server(args: &[&str]) -> (Running, String) {
    let (running, first) = start(args);
    (running, served_at(&first))
}

/// The lines of a CSV text split into fields (quoted fields without inner commas only).
fn split_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| line.split(',').map(str::to_owned).collect())
        .collect()
}

const SITE: &str = "ver:\"3.0\"\n\
id,dis,point,his,kind,tz,unit\n\
@p,\"Temp, north\",M,M,\"Number\",\"UTC\",\"°F\"\n\
@q,\"Say \\\"hi\\\"\",M,,\"Str\",\"UTC\",\n";

fn site_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("buildwire-csv-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("site.zinc");
    std::fs::write(&path, SITE).unwrap();
    path
}

#[test]
fn haystack_convert_and_query_write_csv() {
    let zinc = site_file("convert");
    let dir = zinc.parent().unwrap();
    let json = dir.join("site.json");
    let csv = dir.join("site.csv");
    output(&[
        "haystack",
        "convert",
        zinc.to_str().unwrap(),
        json.to_str().unwrap(),
    ]);
    output(&[
        "haystack",
        "convert",
        json.to_str().unwrap(),
        csv.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "id,dis,point,his,kind,tz,unit",
        "{text}"
    );
    // RFC 4180: a comma or a double quote makes a field quoted, inner quotes doubled.
    assert_eq!(
        lines.next().unwrap(),
        "@p,\"Temp, north\",✓,✓,Number,UTC,°F"
    );
    assert_eq!(lines.next().unwrap(), "@q,\"Say \"\"hi\"\"\",✓,,Str,UTC,");
    assert_eq!(lines.next(), None);
    // --to csv to stdout.
    let stdout = output(&[
        "haystack",
        "convert",
        zinc.to_str().unwrap(),
        "-",
        "--to",
        "csv",
    ]);
    assert_eq!(stdout, text);

    let found = output(&["haystack", "query", zinc.to_str().unwrap(), "his", "--csv"]);
    let found: Vec<&str> = found.lines().collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("id,"), "{found:?}");
    assert!(found[1].contains("\"Temp, north\""), "{found:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn haystack_his_read_writes_csv() {
    let zinc = site_file("his");
    let (_server, url) = server(&[
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data",
        zinc.to_str().unwrap(),
    ]);
    output(&[
        "haystack",
        "client",
        &url,
        "his-write",
        "@p",
        "2026-01-15T00:00:00Z UTC=70°F",
        "2026-01-15T00:15:00Z UTC=71.5°F",
    ]);
    let text = output(&[
        "haystack",
        "client",
        &url,
        "his-read",
        "@p",
        "2026-01-15",
        "--csv",
    ]);
    let rows = split_rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
    assert_eq!(rows[0], ["ts", "val"], "{text}");
    assert!(rows[1][0].starts_with("2026-01-15T00:00:00Z"), "{text}");
    assert_eq!(rows[1][1], "70°F", "{text}");
    assert_eq!(rows[2][1], "71.5°F", "{text}");
    std::fs::remove_dir_all(zinc.parent().unwrap()).unwrap();
}

#[test]
fn opcua_read_repeat_and_subscribe_write_csv() {
    let (_server, endpoint) = server(&["opcua", "serve", "--bind", "127.0.0.1:0"]);
    let text = output(&[
        "opcua",
        "read",
        &endpoint,
        "i=2258",
        "i=2259",
        "--repeat",
        "2",
        "--interval",
        "50ms",
        "--csv",
    ]);
    let rows = split_rows(&text);
    assert_eq!(
        rows[0],
        [
            "round",
            "node",
            "value",
            "type",
            "status",
            "source_timestamp",
            "server_timestamp"
        ],
        "{text}"
    );
    // Two rounds of two nodes; the connection events went to stderr.
    assert_eq!(rows.len(), 5, "{text}");
    assert_eq!((rows[1][0].as_str(), rows[1][1].as_str()), ("1", "i=2258"));
    assert_eq!((rows[4][0].as_str(), rows[4][1].as_str()), ("2", "i=2259"));
    assert_eq!(rows[1][3], "DateTime", "{text}");
    assert!(rows[1][4].starts_with("Good"), "{text}");
    assert!(rows.iter().all(|row| row.len() == 7), "{text}");

    let text = output(&[
        "opcua",
        "subscribe",
        &endpoint,
        "i=2258",
        "--interval",
        "100ms",
        "--duration",
        "1s",
        "--csv",
    ]);
    let rows = split_rows(&text);
    assert_eq!(rows[0][0], "node", "{text}");
    assert!(rows.len() >= 3, "{text}");
    assert!(rows[1..].iter().all(|row| row[0] == "i=2258"), "{text}");
}

#[test]
fn bacnet_subscribe_writes_csv() {
    let (_server, device) = server(&["bacnet", "serve", "--bind", "127.0.0.1:0"]);
    let text = output(&[
        "bacnet",
        "subscribe",
        &device,
        "av,1",
        "--count",
        "1",
        "--csv",
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "device,object,property,value,time_remaining,time",
        "{text}"
    );
    // The initial notification: present-value and status-flags; identifiers hold a comma.
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].starts_with("\"device,400\",\"analog-value,1\",present-value,"),
        "{text}"
    );
}
