//! Our Haystack client (HTTP and WebSocket) against haystack-py's server (FastAPI, in-memory
//! backend, SCRAM), started on 127.0.0.1 with the Alpha building loaded.
//!
//! haystack-py runs under Python 3.13 from `.peers/py313`, which `scripts/peers.sh py313`
//! installs (idempotent; the test runs it).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use buildwire_haystack::client::{
    ClientError, ClientOptions, HaystackApi, HaystackClient, WsClient,
};
use buildwire_haystack::codec::Format;
use buildwire_haystack::value::{Number, Ref, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// haystack-py's server on a free port, serving Alpha, user admin / secret.
fn start_haystack_py() -> (Peer, u16) {
    let repo = repo();
    let status = Command::new(repo.join("scripts/peers.sh"))
        .arg("py313")
        .status()
        .expect("scripts/peers.sh runs");
    assert!(status.success(), "scripts/peers.sh py313 failed");
    let port = free_port();
    let mut child = Command::new(repo.join(".peers/py313/bin/python"))
        .arg(repo.join("crates/bench/peers/haystackpy_server.py"))
        .arg("--port")
        .arg(port.to_string())
        .arg(repo.join("../shared/data/haystack/alpha.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("haystack-py server starts");
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(line.starts_with("ready 2032"), "haystack-py said {line:?}");
    (Peer(child), port)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn http_and_websocket_clients_against_haystack_py() {
    let (_peer, port) = start_haystack_py();
    let url = format!("http://127.0.0.1:{port}/api");
    runtime().block_on(async {
        // A wrong password is refused after the SCRAM exchange.
        let refused = HaystackClient::connect(&url, ClientOptions::login("admin", "wrong")).await;
        assert!(
            matches!(refused, Err(ClientError::LoginRefused { status: 403, .. })),
            "{refused:?}"
        );

        for format in [Format::Zinc, Format::Json] {
            let options = ClientOptions {
                format,
                ..ClientOptions::login("admin", "secret")
            };
            let client = HaystackClient::connect(&url, options).await.unwrap();
            assert!(client.auth_token().is_some_and(|t| !t.is_empty()));

            // haystack-py 0.1.10 answers about with only haystackVersion, productName and
            // productVersion (the spec requires serverName, serverTime, tz, vendorName ...).
            let about = client.about().await.unwrap();
            assert_eq!(about.get("productName"), Some(&Value::Str("hs-py".into())));
            assert!(about.contains("haystackVersion"), "{about:?}");

            let ops = client.ops().await.unwrap();
            let names: Vec<String> = (0..ops.row_count())
                .filter_map(|row| match ops.get(row, "name") {
                    Some(Value::Str(name)) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            for op in ["about", "read", "nav", "hisRead", "pointWrite", "watchSub"] {
                assert!(names.iter().any(|n| n == op), "{op} missing in {names:?}");
            }

            // Alpha: 1 site? Count with our own decoder of the same file.
            let sites = client.read("site", None).await.unwrap();
            assert!(sites.row_count() >= 1);
            let points = client.read("point", None).await.unwrap();
            assert_eq!(points.row_count(), 1846, "Alpha has 1,846 points");
            let limited = client.read("point", Some(10)).await.unwrap();
            assert_eq!(limited.row_count(), 10);

            let Some(Value::Ref(site)) = sites.get(0, "id") else {
                panic!("site without id");
            };
            let by_id = client
                .read_ids(&[site.clone(), Ref::new("no-such-entity")])
                .await
                .unwrap();
            // haystack-py leaves unknown ids out; the spec answers them with a row of nulls.
            assert_eq!(by_id.row_count(), 1);
            assert!(matches!(by_id.get(0, "site"), Some(Value::Marker)));

            let roots = client.nav(None).await.unwrap();
            assert!(roots.row_count() >= 1);

            // An error grid comes back as a server error with its message.
            let bad = client.read("point and (", None).await;
            assert!(matches!(bad, Err(ClientError::Server { .. })), "{bad:?}");
        }

        // pointWrite and the priority array, then hisWrite / hisRead on a writable point.
        let client = HaystackClient::connect(&url, ClientOptions::login("admin", "secret"))
            .await
            .unwrap();
        // Alpha has no `writable` tag; haystack-py accepts writes to any point, so a `cmd`.
        let commands = client.read("cmd and point", Some(1)).await.unwrap();
        {
            let Some(Value::Ref(point)) = commands.get(0, "id") else {
                panic!("Alpha has cmd points");
            };
            client
                .point_write(
                    point,
                    8,
                    Value::Number(Number::new(72.5)),
                    Some("test"),
                    None,
                )
                .await
                .unwrap();
            let array = client.point_write_array(point).await.unwrap();
            assert_eq!(array.row_count(), 17);
            let level8 = (0..17)
                .find(|row| {
                    matches!(array.get(*row, "level"), Some(Value::Number(n)) if n.value == 8.0)
                })
                .unwrap();
            assert!(
                matches!(array.get(level8, "val"), Some(Value::Number(n)) if n.value == 72.5),
                "{array:?}"
            );
        }
        let his = client.read("his and point", Some(1)).await.unwrap();
        let Some(Value::Ref(his_point)) = his.get(0, "id") else {
            panic!("Alpha has historized points");
        };
        let ts = |text: &str| match buildwire_haystack::codec::zinc::decode_value(text).unwrap() {
            Value::DateTime(ts) => *ts,
            other => panic!("{other:?}"),
        };
        client
            .his_write(
                his_point,
                &[
                    (
                        ts("2024-03-01T10:00:00Z UTC"),
                        Value::Number(Number::new(1.5)),
                    ),
                    (
                        ts("2024-03-01T11:00:00Z UTC"),
                        Value::Number(Number::new(2.5)),
                    ),
                ],
            )
            .await
            .unwrap();
        let read = client
            .his_read(
                his_point,
                "2024-03-01T00:00:00Z UTC,2024-03-02T00:00:00Z UTC",
            )
            .await
            .unwrap();
        assert_eq!(read.row_count(), 2, "{read:?}");

        // The same reads over the WebSocket API with the HTTP login's token.
        let ws_url = format!("ws://127.0.0.1:{port}/api/ws");
        let ws = WsClient::connect(&ws_url, client.auth_token(), Duration::from_secs(10))
            .await
            .unwrap();
        let (a, b, c) = tokio::join!(ws.about(), ws.read("site", None), ws.read("point", None));
        assert!(a.unwrap().contains("haystackVersion"));
        assert_eq!(b.unwrap().row_count(), sites_count(&client).await);
        assert_eq!(c.unwrap().row_count(), 1846);
    });
}

async fn sites_count(client: &HaystackClient) -> usize {
    client.read("site", None).await.unwrap().row_count()
}

/// haystack-py has no rollup: it ignores `interval` and `fold` and answers the raw samples,
/// which our client folds itself (and says so in the meta) instead of passing them off as
/// buckets.
#[test]
fn rollups_are_folded_by_our_client_when_haystack_py_answers_raw_samples() {
    use buildwire_haystack::client::rollup::CLIENT_ROLLUP_TAG;
    use buildwire_haystack::store::micros;
    let (_peer, port) = start_haystack_py();
    let url = format!("http://127.0.0.1:{port}/api");
    runtime().block_on(async {
        let client = HaystackClient::connect(&url, ClientOptions::login("admin", "secret"))
            .await
            .unwrap();
        let his = client.read("his and point", Some(1)).await.unwrap();
        let Some(Value::Ref(point)) = his.get(0, "id") else {
            panic!("Alpha has historized points");
        };
        // Eight samples 15 minutes apart from 10:00 UTC, values 0..7.
        let ts = |minutes: i64| {
            let text = format!("2024-03-01T{:02}:{:02}:00Z UTC", minutes / 60, minutes % 60);
            match buildwire_haystack::codec::zinc::decode_value(&text).unwrap() {
                Value::DateTime(ts) => *ts,
                other => panic!("{other:?}"),
            }
        };
        let samples: Vec<_> = (0..8)
            .map(|i| (ts(600 + 15 * i), Value::Number(Number::new(i as f64))))
            .collect();
        client.his_write(point, &samples).await.unwrap();
        let range = "2024-03-01T10:00:00Z UTC,2024-03-01T12:00:00Z UTC";
        let raw = client.his_read(point, range).await.unwrap();
        assert_eq!(
            raw.row_count(),
            8,
            "haystack-py answers the samples: {raw:?}"
        );
        let hour = Value::Number(Number::with_unit(1.0, "h"));
        for (fold, expected) in [
            ("avg", [1.5, 5.5]),
            ("sum", [6.0, 22.0]),
            ("min", [0.0, 4.0]),
            ("max", [3.0, 7.0]),
            ("count", [4.0, 4.0]),
            ("first", [0.0, 4.0]),
            ("last", [3.0, 7.0]),
        ] {
            let grid = client
                .his_rollup(point, range, hour.clone(), fold)
                .await
                .unwrap();
            assert!(grid.meta.contains(CLIENT_ROLLUP_TAG), "{fold}: {grid:?}");
            assert_eq!(grid.meta.get("hisRollup"), Some(&Value::Str(fold.into())));
            assert_eq!(grid.row_count(), 2, "{fold}: {grid:?}");
            for (row, want) in expected.iter().enumerate() {
                let Some(Value::Number(n)) = grid.get(row, "val") else {
                    panic!("{fold}: row {row} of {grid:?}");
                };
                assert_eq!(n.value, *want, "{fold}, bucket {row}");
                let Some(Value::DateTime(at)) = grid.get(row, "ts") else {
                    panic!("{fold}: row {row} has no ts");
                };
                assert_eq!(micros(at), micros(&ts(600 + 60 * row as i64)));
            }
        }
        // A bad fold is the caller's mistake, refused before anything is sent.
        let bad = client.his_rollup(point, range, hour, "median").await;
        assert!(matches!(bad, Err(ClientError::Rollup(_))), "{bad:?}");
    });
}
