//! The Haystack HTTP API over real sockets on 127.0.0.1: every op in every format, content
//! negotiation, HTTP statuses for unreadable requests, roles, watches, history, the
//! priority array, and bounded bad input.
#![allow(clippy::unwrap_used)]

mod server_support;

use buildwire_haystack::codec::{Format, json, zinc};
use buildwire_haystack::{Ref, Value};
use server_support::*;

#[tokio::test]
async fn read_ops_in_every_format() {
    let server = start().await;
    let http = logged_in(&server, "viewer").await;
    let formats: [(Option<&str>, &str); 7] = [
        (None, "text/zinc; charset=utf-8"),
        (Some("*/*"), "text/zinc; charset=utf-8"),
        (Some("application/json"), "application/json"),
        (
            Some("application/vnd.haystack+json;version=3"),
            "application/vnd.haystack+json;version=3",
        ),
        (Some("text/trio"), "text/trio; charset=utf-8"),
        (Some("text/csv"), "text/csv; charset=utf-8"),
        (Some("text/zinc"), "text/zinc; charset=utf-8"),
    ];
    for (accept, content_type) in formats {
        for (op, query) in [
            ("about", ""),
            ("ops", ""),
            ("formats", ""),
            ("filetypes", ""),
            ("defs", "limit=5"),
            ("libs", ""),
            ("read", "filter=site"),
            (
                "read",
                "filter=point%20and%20siteRef%3D%3D%40a-0000&limit=10",
            ),
            ("nav", ""),
            ("nav", "navId=%40a-0000"),
            ("hisRead", "id=%40bw-sp&range=today"),
        ] {
            let a = http.get(op, query, accept).await;
            assert_eq!(a.status, 200, "{op} {accept:?}: {}", a.body);
            assert_eq!(a.content_type, content_type, "{op}");
            let format = match accept {
                Some("application/json") => Some(Format::Json),
                Some("application/vnd.haystack+json;version=3") => Some(Format::JsonV3),
                Some("text/trio") => Some(Format::Trio),
                Some("text/csv") => None,
                _ => Some(Format::Zinc),
            };
            if let Some(format) = format {
                let grid = format
                    .decode_grid(&a.body)
                    .unwrap_or_else(|e| panic!("{op} {format}: {e}\n{}", a.body));
                assert!(!is_error(&grid), "{op}: {}", a.body);
                if op == "read" && query == "filter=site" {
                    assert_eq!(grid.row_count(), 1);
                }
            }
        }
    }
    // Checked contents: the about tags, the point read, nav levels.
    let about = http.get("about", "", None).await.zinc();
    assert_eq!(
        about.get(0, "haystackVersion"),
        Some(&Value::Str("4.0".into()))
    );
    assert_eq!(about.get(0, "userName"), Some(&Value::Str("viewer".into())));
    let points = http.get("read", "filter=point", None).await.zinc();
    assert_eq!(
        points.row_count(),
        1846 + 2,
        "Alpha's points and the two test points"
    );
    let limited = http.get("read", "filter=point&limit=7", None).await.zinc();
    assert_eq!(limited.row_count(), 7);
    let roots = http.get("nav", "", None).await.zinc();
    assert_eq!(roots.get(0, "navId"), Some(&Value::Ref(Ref::new("a-0000"))));
    let equips = http.get("nav", "navId=%40a-0000", None).await.zinc();
    // A site's children are its top-level equips; sub-equips sit under their equip.
    let top = http
        .get(
            "read",
            "filter=equip%20and%20siteRef%3D%3D%40a-0000%20and%20not%20equipRef",
            None,
        )
        .await
        .zinc();
    assert_eq!(equips.row_count(), top.row_count());
    assert!(equips.row_count() > 10);
    let ahu = http.get("nav", "navId=%40a-0001", None).await.zinc();
    assert!(ahu.row_count() > 10, "AHU-2's points and sub-equips");
    let csv = http.get("read", "filter=site", Some("text/csv")).await;
    assert!(csv.body.contains("Alpha"), "{}", csv.body);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn post_bodies_in_zinc_and_json_and_read_by_id() {
    let server = start().await;
    let http = logged_in(&server, "viewer").await;
    let zinc_body = "ver:\"3.0\"\nid\n@a-0001\n@nope\n@bw-sp\n";
    let g = http.zinc("read", zinc_body).await;
    assert_eq!(g.row_count(), 3);
    assert_eq!(
        g.get(0, "dis"),
        Some(&Value::Str("Alpha Airside AHU-2".into()))
    );
    assert!(g.row(1).unwrap().is_empty());
    let json_body = r#"{"_kind":"grid","meta":{"ver":"3.0"},"cols":[{"name":"filter"},{"name":"limit"}],"rows":[{"filter":"equip and ahu","limit":{"_kind":"number","val":2}}]}"#;
    let a = http
        .post(
            "read",
            json_body,
            Some("application/json"),
            Some("application/json"),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let g = json::hayson::decode_grid(&a.body).unwrap();
    assert_eq!(g.row_count(), 2);
    // No Content-Type: read as Zinc.
    let a = http
        .post("read", "ver:\"3.0\"\nfilter\n\"site\"\n", None, None)
        .await;
    assert_eq!(a.zinc().row_count(), 1);
    // A GET of Zinc-encoded parameters equals the POST of the same grid.
    let get = http.get("read", "filter=%22site%22", None).await.body;
    let post = http
        .post(
            "read",
            "ver:\"3.0\"\nfilter\n\"site\"\n",
            Some("text/zinc"),
            None,
        )
        .await
        .body;
    assert_eq!(get, post);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn unreadable_requests_get_http_statuses() {
    let server = start().await;
    let http = logged_in(&server, "admin").await;
    assert_eq!(http.get("nope", "", None).await.status, 404);
    assert_eq!(http.get("hisWrite", "", None).await.status, 405);
    assert_eq!(http.get("watchPoll", "", None).await.status, 405);
    assert_eq!(http.get("about", "", Some("text/html")).await.status, 406);
    assert_eq!(
        http.post("read", "<x/>", Some("application/xml"), None)
            .await
            .status,
        415
    );
    assert_eq!(
        http.post(
            "read",
            "ver:\"3.0\"\nfilter\n\"site",
            Some("text/zinc"),
            None
        )
        .await
        .status,
        400
    );
    assert_eq!(http.get("read", "Bad=1", None).await.status, 400);
    let put = http
        .client
        .put(format!("{}/about", http.base))
        .header(
            "Authorization",
            format!("BEARER authToken={}", http.token.clone().unwrap()),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(put.status().as_u16(), 405);
    assert_eq!(put.headers()["allow"], "GET, HEAD, POST");
    let huge = "x".repeat(17 * 1024 * 1024);
    assert_eq!(
        http.post("read", &huge, Some("text/zinc"), None)
            .await
            .status,
        413
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn failures_after_reading_are_error_grids_with_status_200() {
    let server = start().await;
    let http = logged_in(&server, "admin").await;
    // Hostile filters: deep nesting, a huge OR, an overlong text.
    let deep = format!("{}site{}", "(".repeat(200), ")".repeat(200));
    let huge_or = vec!["site"; 5000].join(" or ");
    let long = "a".repeat(20_000);
    for filter in [deep.as_str(), huge_or.as_str(), long.as_str(), "point and"] {
        let body = format!(
            "ver:\"3.0\"\nfilter\n{}\n",
            zinc::encode_value(&Value::Str(filter.into()))
        );
        let a = http.post("read", &body, Some("text/zinc"), None).await;
        assert_eq!(a.status, 200);
        let g = a.zinc();
        assert!(is_error(&g), "{}", &a.body[..a.body.len().min(200)]);
        assert!(g.meta.get("dis").is_some());
    }
    let g = http
        .zinc("hisRead", "ver:\"3.0\"\nid,range\n@nope,\"today\"\n")
        .await;
    assert!(is_error(&g));
    let g = http
        .zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@a-0001,8,1\n")
        .await;
    assert!(is_error(&g), "an AHU is not a writable point");
    let g = http
        .zinc(
            "invokeAction",
            "ver:\"3.0\" id:@bw-sp action:\"reboot\"\nempty\n",
        )
        .await;
    assert!(is_error(&g));
    assert!(matches!(g.meta.get("dis"), Some(Value::Str(s)) if s.contains("unknown action")));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn roles_limit_what_users_do() {
    let server = start().await;
    let viewer = logged_in(&server, "viewer").await;
    let op = logged_in(&server, "op").await;
    let admin = logged_in(&server, "admin").await;
    let write = "ver:\"3.0\"\nid,level,val,who\n@bw-sp,8,68°F,\"test\"\n";
    let his = "ver:\"3.0\" id:@bw-sp\nts,val\n2024-07-01T09:00:00-06:00 Denver,70°F\n";
    let commit = "ver:\"3.0\" commit:\"add\"\nid,site,dis\n@bw-new,M,\"New\"\n";
    for (body, op_name) in [(write, "pointWrite"), (his, "hisWrite")] {
        let a = viewer.post(op_name, body, Some("text/zinc"), None).await;
        assert_eq!(a.status, 403, "{op_name}: {}", a.body);
        assert!(is_error(&zinc::decode_grid(&a.body).unwrap()));
        let g = op.zinc(op_name, body).await;
        assert!(!is_error(&g), "{op_name}");
    }
    // Reading the priority array is a read.
    let array = viewer.zinc("pointWrite", "ver:\"3.0\"\nid\n@bw-sp\n").await;
    assert_eq!(array.row_count(), 17);
    assert_eq!(
        array.get(7, "val"),
        Some(&Value::number_with_unit(68.0, "°F"))
    );
    assert_eq!(array.get(7, "who"), Some(&Value::Str("test".into())));
    assert_eq!(
        op.post("commit", commit, Some("text/zinc"), None)
            .await
            .status,
        403
    );
    assert_eq!(admin.zinc("commit", commit).await.row_count(), 1);
    let a = viewer
        .post(
            "invokeAction",
            "ver:\"3.0\" id:@bw-sp action:\"x\"\nempty\n",
            Some("text/zinc"),
            None,
        )
        .await;
    assert_eq!(a.status, 403);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn point_write_levels_history_and_watches() {
    let server = start().await;
    let op = logged_in(&server, "op").await;
    let viewer = logged_in(&server, "viewer").await;
    // Watch the setpoint as the viewer.
    let sub = viewer
        .zinc(
            "watchSub",
            "ver:\"3.0\" watchDis:\"test\" lease:1min\nid\n@bw-sp\n@bw-cmd\n@nope\n",
        )
        .await;
    assert_eq!(sub.row_count(), 3);
    assert_eq!(
        sub.meta.get("lease"),
        Some(&Value::number_with_unit(60.0, "s"))
    );
    let Some(Value::Str(watch)) = sub.meta.get("watchId").cloned() else {
        panic!("{sub:?}")
    };
    let poll = format!("ver:\"3.0\" watchId:\"{watch}\"\nempty\n");
    assert_eq!(viewer.zinc("watchPoll", &poll).await.row_count(), 0);
    // Level 10 then level 8 with a duration: level 8 wins.
    let g = op
        .zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@bw-sp,10,65°F\n")
        .await;
    assert!(!is_error(&g));
    let g = op
        .zinc(
            "pointWrite",
            "ver:\"3.0\"\nid,level,val,duration\n@bw-sp,8,70°F,1h\n",
        )
        .await;
    assert!(!is_error(&g));
    let bad_kind = op
        .zinc("pointWrite", "ver:\"3.0\"\nid,level,val\n@bw-sp,8,T\n")
        .await;
    assert!(is_error(&bad_kind));
    // The change reaches the watch (through the backend's change channel).
    let mut changed = None;
    for _ in 0..50 {
        let g = viewer.zinc("watchPoll", &poll).await;
        if g.row_count() > 0 {
            changed = Some(g);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let changed = changed.expect("the watch saw the point write");
    assert_eq!(
        changed.get(0, "writeVal"),
        Some(&Value::number_with_unit(70.0, "°F"))
    );
    assert_eq!(changed.get(0, "writeLevel"), Some(&Value::number(8.0)));
    let array = op.zinc("pointWrite", "ver:\"3.0\"\nid\n@bw-sp\n").await;
    assert!(matches!(array.get(7, "expires"), Some(Value::DateTime(_))));
    assert_eq!(array.get(7, "who"), Some(&Value::Str("op".into())));
    // Refresh returns every known watched entity; unsub and close.
    let refresh = format!("ver:\"3.0\" watchId:\"{watch}\" refresh\nempty\n");
    assert_eq!(viewer.zinc("watchPoll", &refresh).await.row_count(), 2);
    let close = format!("ver:\"3.0\" watchId:\"{watch}\" close\nempty\n");
    assert!(!is_error(&viewer.zinc("watchUnsub", &close).await));
    assert!(is_error(&viewer.zinc("watchPoll", &poll).await));

    // History: single and batch writes, every range form.
    let write = "ver:\"3.0\" id:@bw-sp\nts,val\n\
        2024-07-01T00:00:00-06:00 Denver,70°F\n2024-07-01T12:00:00-06:00 Denver,72\n\
        2024-07-02T00:00:00-06:00 Denver,71°F\n";
    assert!(!is_error(&op.zinc("hisWrite", write).await));
    let batch = "ver:\"3.0\"\nts,v0 id:@bw-sp,v1 id:@bw-cmd\n\
        2024-07-01T06:00:00-06:00 Denver,69°F,T\n";
    assert!(!is_error(&op.zinc("hisWrite", batch).await));
    let read = |range: &str| {
        format!(
            "ver:\"3.0\"\nid,range\n@bw-sp,{}\n",
            zinc::encode_value(&Value::Str(range.into()))
        )
    };
    let day = viewer.zinc("hisRead", &read("2024-07-01")).await;
    assert_eq!(day.row_count(), 3);
    assert!(
        matches!(day.meta.get("hisStart"), Some(Value::DateTime(dt)) if dt.tz.as_deref() == Some("Denver"))
    );
    let two = viewer.zinc("hisRead", &read("2024-07-01,2024-07-02")).await;
    assert_eq!(two.row_count(), 4);
    let span = viewer
        .zinc(
            "hisRead",
            &read("2024-07-01T05:00:00-06:00 Denver,2024-07-01T13:00:00-06:00 Denver"),
        )
        .await;
    assert_eq!(span.row_count(), 2);
    let since = viewer
        .zinc("hisRead", &read("2024-07-01T18:00:00Z UTC"))
        .await;
    assert_eq!(since.row_count(), 2, "12:00 Denver is 18:00 UTC: included");
    let both = viewer
        .zinc(
            "hisRead",
            "ver:\"3.0\" range:\"2024-07-01\"\nid\n@bw-sp\n@bw-cmd\n",
        )
        .await;
    assert_eq!(both.columns().len(), 3);
    assert_eq!(both.get(1, "v1"), Some(&Value::Bool(true)));
    let today = viewer.zinc("hisRead", &read("today")).await;
    assert_eq!(today.row_count(), 0);
    assert!(viewer.zinc("hisRead", &read("yesterday")).await.row_count() == 0);
    server.stop().await.unwrap();
}
