//! Server life: snapshots across a restart, graceful shutdown, slow and idle clients, the
//! connection limit, Bravo alongside Alpha.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::time::{Duration, Instant};

use buildwire_haystack::Value;
use buildwire_haystack::server::{HaystackServer, HaystackServerConfig, Timeouts};
use server_support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bw-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn a_snapshot_keeps_entities_arrays_and_histories_across_a_restart() {
    for file in ["state.zinc", "state.json"] {
        let dir = temp_dir(&format!("snap-{file}"));
        let path = dir.join(file);
        let server =
            HaystackServer::start(server_config().snapshot(&path, Duration::from_secs(3600)))
                .await
                .unwrap();
        let op = logged_in(&server, "op").await;
        let admin = logged_in(&server, "admin").await;
        let w = op
            .zinc(
                "pointWrite",
                "ver:\"3.0\"\nid,level,val,who\n@bw-sp,7,64°F,\"me\"\n",
            )
            .await;
        assert!(!is_error(&w));
        let h = op
            .zinc(
                "hisWrite",
                "ver:\"3.0\" id:@bw-sp\nts,val\n2024-07-01T09:00:00-06:00 Denver,70°F\n",
            )
            .await;
        assert!(!is_error(&h));
        let c = admin
            .zinc(
                "commit",
                "ver:\"3.0\" commit:\"add\"\nid,site,dis\n@bw-new,M,\"New\"\n",
            )
            .await;
        assert!(!is_error(&c));
        server.stop().await.unwrap();
        assert!(path.exists(), "saved at shutdown");

        // Restart without data files: everything comes from the snapshot.
        let again = HaystackServer::start(
            HaystackServerConfig::new()
                .bind("127.0.0.1:0".parse().unwrap())
                .snapshot(&path, Duration::from_secs(3600)),
        )
        .await
        .unwrap();
        let http = Http::new(&again.url());
        let sites = http.get("read", "filter=site", None).await.zinc();
        assert_eq!(sites.row_count(), 2, "Alpha and the committed site");
        let points = http.get("read", "filter=point", None).await.zinc();
        assert_eq!(points.row_count(), 1848);
        let array = http.zinc("pointWrite", "ver:\"3.0\"\nid\n@bw-sp\n").await;
        assert_eq!(
            array.get(6, "val"),
            Some(&Value::number_with_unit(64.0, "°F"))
        );
        assert_eq!(array.get(6, "who"), Some(&Value::Str("me".into())));
        let his = http
            .zinc("hisRead", "ver:\"3.0\"\nid,range\n@bw-sp,\"2024-07-01\"\n")
            .await;
        assert_eq!(his.row_count(), 1);
        again.stop().await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn alpha_and_bravo_load_side_by_side() {
    let server = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load_file(data_dir().join("alpha.zinc"))
            .load_file(data_dir().join("bravo.trio")),
    )
    .await
    .unwrap();
    let http = Http::new(&server.url());
    assert_eq!(
        http.get("read", "filter=site", None)
            .await
            .zinc()
            .row_count(),
        2
    );
    assert_eq!(
        http.get("read", "filter=point", None)
            .await
            .zinc()
            .row_count(),
        1846 + 918
    );
    let roots = http.get("nav", "", None).await.zinc();
    assert_eq!(roots.row_count(), 2);
    server.stop().await.unwrap();
    let missing = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load_file("/nonexistent/x.zinc"),
    )
    .await;
    assert!(missing.is_err());
}

/// Reads until the server closes the connection; returns what it sent and how long it took.
async fn read_to_close(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out)).await;
    (
        String::from_utf8_lossy(&out).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn slow_and_idle_clients_are_cut_off() {
    let timeouts = Timeouts {
        header_read: Duration::from_millis(500),
        body_read: Duration::from_millis(500),
        ..Timeouts::default()
    };
    let server = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra())
            .timeouts(timeouts),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    // Headers that never end.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /api/about HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (_, took) = read_to_close(&mut slow).await;
    assert!(took < Duration::from_secs(5), "closed after {took:?}");
    // A body that never arrives.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(
        b"POST /api/read HTTP/1.1\r\nHost: x\r\nContent-Type: text/zinc\r\nContent-Length: 100\r\n\r\nver:",
    )
    .await
    .unwrap();
    let (answer, took) = read_to_close(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(took < Duration::from_secs(5));
    // A declared body over the limit is refused before it is read.
    let mut big = TcpStream::connect(addr).await.unwrap();
    big.write_all(
        b"POST /api/read HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let (answer, _) = read_to_close(&mut big).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Garbage instead of HTTP.
    let mut junk = TcpStream::connect(addr).await.unwrap();
    junk.write_all(b"\x00\x01\x02 not http\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_to_close(&mut junk).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer}"
    );
    // Still serving.
    assert_eq!(
        Http::new(&server.url()).get("about", "", None).await.status,
        200
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn connections_over_the_limit_are_closed() {
    let server = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra())
            .max_connections(2),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    let _a = TcpStream::connect(addr).await.unwrap();
    let _b = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let _ = c
        .write_all(b"GET /api/about HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    let (answer, took) = read_to_close(&mut c).await;
    assert!(answer.is_empty(), "{answer}");
    assert!(took < Duration::from_secs(5));
    drop((_a, _b));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        Http::new(&server.url()).get("about", "", None).await.status,
        200
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn shutdown_stops_listening() {
    let server = HaystackServer::start(
        HaystackServerConfig::new()
            .bind("127.0.0.1:0".parse().unwrap())
            .load(extra()),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    // A keep-alive connection with a finished request does not hold shutdown up.
    let http = Http::new(&server.url());
    assert_eq!(http.get("about", "", None).await.status, 200);
    let started = Instant::now();
    server.stop().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn timed_commands_lapse_and_watches_see_it() {
    let server = start().await;
    let op = logged_in(&server, "op").await;
    let sub = op
        .zinc("watchSub", "ver:\"3.0\" watchDis:\"t\"\nid\n@bw-sp\n")
        .await;
    let Some(Value::Str(watch)) = sub.meta.get("watchId").cloned() else {
        panic!("{sub:?}")
    };
    let poll = format!("ver:\"3.0\" watchId:\"{watch}\"\nempty\n");
    op.zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@bw-sp,10,65°F\n")
        .await;
    op.zinc(
        "pointWrite",
        "ver:\"3.0\"\nid,level,val,duration\n@bw-sp,8,70°F,1s\n",
    )
    .await;
    let read = "ver:\"3.0\"\nid\n@bw-sp\n";
    let now = op.zinc("read", read).await;
    assert_eq!(now.get(0, "writeLevel"), Some(&Value::number(8.0)));
    let _ = op.zinc("watchPoll", &poll).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let later = op.zinc("read", read).await;
    assert_eq!(later.get(0, "writeLevel"), Some(&Value::number(10.0)));
    assert_eq!(
        later.get(0, "writeVal"),
        Some(&Value::number_with_unit(65.0, "°F"))
    );
    let changed = op.zinc("watchPoll", &poll).await;
    assert_eq!(changed.row_count(), 1, "the lapse reached the watch");
    server.stop().await.unwrap();
}
