//! One test suite for every storage backend: memory, Redis (a real redis-server) and
//! PostgreSQL (a real PostgreSQL 15 cluster), both started by the tests on 127.0.0.1
//! with throw-away data directories (`storage_support`).
//!
//! - every filter of the shared corpus gives the same entities, in the same order, with
//!   and without a limit, as the in-memory store (Alpha and Bravo loaded);
//! - navigation, commits (add, update, remove, version checks, errors), histories
//!   (overwrites, ranges, limits, timezones), priority arrays with timed levels, and
//!   change events behave as in memory;
//! - two backends on one store see each other's writes and change events (two server
//!   processes on one database);
//! - what was acknowledged survives `kill -9` of the database, and the same backend
//!   reconnects by itself once the database is back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod filter_corpus;
mod storage_support;

use std::sync::Arc;
use std::time::Duration;

use buildwire_haystack::backends;
use buildwire_haystack::backends::{Backend, BackendError, MemoryBackend};
use buildwire_haystack::codec::zinc;
use buildwire_haystack::filter::parse;
use buildwire_haystack::store::{CommitOp, EntityUpdate, HisSample, PriorityEntry, StoreError};
use buildwire_haystack::{Date, DateTime, Dict, Grid, Ref, Time, Value};
use storage_support::{TempPostgres, TempRedis, fresh_store};

fn data(name: &str) -> Grid {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/haystack")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the shared Haystack examples)", path.display()));
    zinc::decode_grid(&text).unwrap()
}

async fn open(kind: &str) -> Arc<dyn Backend> {
    match kind {
        "memory" => Arc::new(MemoryBackend::new()),
        kind => backends::open(&fresh_store(kind)).await.unwrap(),
    }
}

fn id_of(d: &Dict) -> String {
    match d.get("id") {
        Some(Value::Ref(r)) => r.id.clone(),
        _ => String::new(),
    }
}

fn dict(zinc_text: &str) -> Dict {
    match zinc::decode_value(zinc_text).unwrap() {
        Value::Dict(d) => *d,
        other => panic!("not a dict: {other:?}"),
    }
}

async fn first_id(b: &dyn Backend, filter: &str) -> String {
    let f = parse(filter).unwrap();
    b.read(&f, Some(1))
        .await
        .unwrap()
        .first()
        .map(id_of)
        .unwrap_or_default()
}

/// Every corpus filter on `kind` equals memory, on Alpha and Bravo together.
async fn filters_match_memory(kind: &str) {
    let memory = MemoryBackend::new();
    let backend = open(kind).await;
    for name in ["alpha.zinc", "bravo.zinc"] {
        let grid = data(name);
        memory.load(&grid).await.unwrap();
        assert_eq!(backend.load(&grid).await.unwrap(), grid.row_count());
    }
    let m: &dyn Backend = &memory;
    let site = first_id(m, "site").await;
    let equip = first_id(m, "equip and not ahu").await;
    let ahu = first_id(m, "ahu").await;
    let point = first_id(m, "point").await;
    let weather = {
        let f = parse("weatherStationRef").unwrap();
        match m
            .read(&f, Some(1))
            .await
            .unwrap()
            .first()
            .and_then(|d| d.get("weatherStationRef").cloned())
        {
            Some(Value::Ref(r)) => r.id,
            _ => String::new(),
        }
    };
    let mut nonempty = 0;
    for template in filter_corpus::PLANNER_CORPUS {
        let text = filter_corpus::fill(
            template,
            &filter_corpus::CorpusIds {
                site: &site,
                equip: &equip,
                ahu: &ahu,
                point: &point,
                weather: &weather,
            },
        );
        let filter = parse(&text).unwrap();
        let expected = memory.read(&filter, None).await.unwrap();
        let got = backend.read(&filter, None).await.unwrap();
        assert_eq!(got.len(), expected.len(), "{kind}: {text}");
        assert!(
            got == expected,
            "{kind}: {text}: different entities or order"
        );
        let limited = backend.read(&filter, Some(3)).await.unwrap();
        assert_eq!(
            limited.iter().map(id_of).collect::<Vec<_>>(),
            expected.iter().take(3).map(id_of).collect::<Vec<_>>(),
            "{kind}: {text} with limit 3"
        );
        nonempty += usize::from(!expected.is_empty());
    }
    assert!(nonempty >= 35, "the corpus must find things: {nonempty}");
    // Navigation: the sites, each site's equips, an equip's points.
    let roots = backend.nav_children(None).await.unwrap();
    assert_eq!(roots, memory.nav_children(None).await.unwrap());
    assert_eq!(roots.len(), 2);
    for parent in [
        site.as_str(),
        equip.as_str(),
        ahu.as_str(),
        point.as_str(),
        "nope",
    ] {
        assert_eq!(
            backend.nav_children(Some(parent)).await.unwrap(),
            memory.nav_children(Some(parent)).await.unwrap(),
            "{kind}: nav {parent}"
        );
    }
    let ids = [
        Ref::new(site.clone()),
        Ref::new("missing"),
        Ref::new(point.clone()),
    ];
    assert_eq!(
        backend.read_by_ids(&ids).await.unwrap(),
        memory.read_by_ids(&ids).await.unwrap()
    );
}

const SMALL: &str = "ver:\"3.0\"\n\
id,dis,site,equip,point,his,writable,kind,tz,siteRef,equipRef,unit\n\
@s,\"Site\",M,,,,,,,,,\n\
@e,\"AHU\",,M,,,,,,@s,,\n\
@p,\"Temp\",,,M,M,M,\"Number\",\"New_York\",@s,@e,\"°F\"\n\
@q,\"Plain\",,,M,,,\"Number\",,@s,@e,\n";

fn ts(hour: u8, minute: u8, second: u8, tz: &str) -> DateTime {
    let offset = if tz == "New_York" { -5 * 3600 } else { 0 };
    DateTime::new(
        Date::new(2026, 1, 15).unwrap(),
        Time::new(hour, minute, second, 0).unwrap(),
        offset,
        Some(tz.to_owned()),
    )
    .unwrap()
}

/// Commits, histories, priority arrays and change events, checked against memory.
async fn ops_behave_like_memory(kind: &str) {
    let backend = open(kind).await;
    let memory: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
    let small = zinc::decode_grid(SMALL).unwrap();
    for b in [&backend, &memory] {
        b.load(&small).await.unwrap();
    }
    let mut events = backend.subscribe();

    // Commits: the same answers and the same errors.
    for b in [&backend, &memory] {
        let added = b
            .commit(CommitOp::Add(vec![dict(
                "{id:@n1 dis:\"New\" point siteRef:@s}",
            )]))
            .await
            .unwrap();
        assert_eq!(added.len(), 1);
        let dup = b
            .commit(CommitOp::Add(vec![dict("{id:@n2}"), dict("{id:@s}")]))
            .await;
        assert!(
            matches!(dup, Err(BackendError::Store(StoreError::DuplicateId(ref id))) if id == "s"),
            "{kind}: {dup:?}"
        );
        // Nothing of a refused commit was written.
        assert_eq!(b.read_by_ids(&[Ref::new("n2")]).await.unwrap(), vec![None]);
        let updated = b
            .commit(CommitOp::Update(vec![EntityUpdate {
                diff: dict("{id:@n1 dis:\"Renamed\" point:R curVal:42}"),
                expected_version: None,
            }]))
            .await
            .unwrap();
        assert_eq!(updated[0].get("dis"), Some(&Value::Str("Renamed".into())));
        assert!(!updated[0].contains("point"));
        let stale = b
            .commit(CommitOp::Update(vec![EntityUpdate {
                diff: dict("{id:@n1 dis:\"X\"}"),
                expected_version: Some(987_654),
            }]))
            .await;
        assert!(
            matches!(
                stale,
                Err(BackendError::Store(StoreError::VersionConflict { .. }))
            ),
            "{kind}: {stale:?}"
        );
        let unknown = b
            .commit(CommitOp::Remove(vec![(Ref::new("nope"), None)]))
            .await;
        assert!(matches!(
            unknown,
            Err(BackendError::Store(StoreError::UnknownId(_)))
        ));
        let f = parse("curVal == 42").unwrap();
        assert_eq!(b.read(&f, None).await.unwrap().len(), 1, "{kind}");
        let removed = b
            .commit(CommitOp::Remove(vec![(Ref::new("n1"), None)]))
            .await
            .unwrap();
        assert_eq!(id_of(&removed[0]), "n1");
        assert_eq!(b.read_by_ids(&[Ref::new("n1")]).await.unwrap(), vec![None]);
        assert!(
            b.read(&f, None).await.unwrap().is_empty(),
            "{kind}: index updated"
        );
    }
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(event.ids.contains(&"n1".to_owned()) || event.ids.contains(&"s".to_owned()));

    // Histories.
    let p = Ref::new("p");
    for b in [&backend, &memory] {
        let samples: Vec<HisSample> = (0..60)
            .map(|m| HisSample {
                ts: ts(10, m, 0, "New_York"),
                value: Value::number(f64::from(m)),
            })
            .collect();
        let report = b.his_write(&p, samples).await.unwrap();
        assert_eq!((report.inserted, report.overwritten), (60, 0), "{kind}");
        // Two writes at one instant in one request, and one over a stored sample.
        let again = vec![
            HisSample {
                ts: ts(10, 5, 0, "New_York"),
                value: Value::number(500.0),
            },
            HisSample {
                ts: ts(10, 5, 0, "New_York"),
                value: Value::number(501.0),
            },
            HisSample {
                ts: ts(11, 0, 0, "New_York"),
                value: Value::number(600.0),
            },
        ];
        let report = b.his_write(&p, again).await.unwrap();
        assert_eq!((report.inserted, report.overwritten), (1, 2), "{kind}");
    }
    let (start, end) = (ts(10, 3, 0, "New_York"), ts(10, 7, 0, "New_York"));
    let got = backend.his_read(&p, &start, &end, 1000).await.unwrap();
    assert_eq!(got, memory.his_read(&p, &start, &end, 1000).await.unwrap());
    assert_eq!(got.len(), 4);
    assert_eq!(got[2].value, Value::number(501.0));
    let all = backend
        .his_read(
            &p,
            &ts(0, 0, 0, "New_York"),
            &ts(23, 0, 0, "New_York"),
            1000,
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 61);
    assert_eq!(
        all,
        memory
            .his_read(
                &p,
                &ts(0, 0, 0, "New_York"),
                &ts(23, 0, 0, "New_York"),
                1000
            )
            .await
            .unwrap()
    );
    let limited = backend
        .his_read(&p, &ts(0, 0, 0, "New_York"), &ts(23, 0, 0, "New_York"), 7)
        .await
        .unwrap();
    assert_eq!(limited, all[..7].to_vec());
    let utc = vec![HisSample {
        ts: ts(12, 0, 0, "UTC"),
        value: Value::number(1.0),
    }];
    assert!(matches!(
        backend.his_write(&p, utc).await,
        Err(BackendError::Store(StoreError::History(_)))
    ));
    let none = vec![HisSample {
        ts: ts(12, 0, 0, "UTC"),
        value: Value::number(1.0),
    }];
    assert!(matches!(
        backend.his_write(&Ref::new("q"), none.clone()).await,
        Err(BackendError::Store(StoreError::NotHistorized(_)))
    ));
    assert!(matches!(
        backend.his_write(&Ref::new("zz"), none).await,
        Err(BackendError::Store(StoreError::UnknownId(_)))
    ));

    // Priority arrays, with a timed level that lapses.
    for b in [&backend, &memory] {
        let entry = |v: f64, expires_ms| PriorityEntry {
            val: Value::number(v),
            who: "ann".into(),
            expires_ms,
        };
        b.point_write(&p, 16, Some(entry(60.0, None)), 0)
            .await
            .unwrap();
        let array = b
            .point_write(&p, 8, Some(entry(80.0, Some(1_000))), 0)
            .await
            .unwrap();
        assert_eq!(array.effective(0).map(|(l, _)| l), Some(8));
        let point = b.read_by_ids(std::slice::from_ref(&p)).await.unwrap()[0]
            .clone()
            .unwrap();
        assert_eq!(point.get("writeVal"), Some(&Value::number(80.0)));
        assert_eq!(b.expire_writes(999).await.unwrap(), 0, "{kind}");
        assert_eq!(b.expire_writes(1_000).await.unwrap(), 1, "{kind}");
        let point = b.read_by_ids(std::slice::from_ref(&p)).await.unwrap()[0]
            .clone()
            .unwrap();
        assert_eq!(point.get("writeVal"), Some(&Value::number(60.0)), "{kind}");
        assert_eq!(point.get("writeLevel"), Some(&Value::number(16.0)));
        b.point_write(&p, 16, None, 2_000).await.unwrap();
        let point = b.read_by_ids(std::slice::from_ref(&p)).await.unwrap()[0]
            .clone()
            .unwrap();
        assert!(!point.contains("writeVal"));
        assert!(matches!(
            b.point_write(&Ref::new("zz"), 8, None, 0).await,
            Err(BackendError::Store(StoreError::UnknownId(_)))
        ));
    }
    assert_eq!(
        backend.priority_array(&p).await.unwrap(),
        memory.priority_array(&p).await.unwrap()
    );
}

macro_rules! per_backend {
    ($name:ident, $body:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                super::$body("memory").await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                super::$body("redis").await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$body("postgres").await;
            }
        }
    };
}

/// A day of 5-minute samples on @p (°F) with a NaN, and Bools on @b: every fold at several
/// intervals, from an aligned and an unaligned start, equals memory's (PostgreSQL folds in
/// SQL with `date_bin` or `time_bucket`; memory and Redis in the server).
async fn rollups_match_on(backend: &dyn Backend, kind: &str) {
    use buildwire_haystack::store::{HisFold, Rollup};
    let memory = MemoryBackend::new();
    let small = zinc::decode_grid(SMALL).unwrap();
    let bools =
        zinc::decode_grid("ver:\"3.0\"\nid,point,his,kind,tz\n@b,M,M,\"Bool\",\"New_York\"\n")
            .unwrap();
    let (p, b) = (Ref::new("p"), Ref::new("b"));
    for store in [backend, &memory as &dyn Backend] {
        store.load(&small).await.unwrap();
        store.load(&bools).await.unwrap();
        let numbers: Vec<HisSample> = (0..23 * 12)
            .map(|i: u32| HisSample {
                ts: ts((i / 12) as u8, (i % 12 * 5) as u8, 0, "New_York"),
                value: if i == 7 {
                    Value::number(f64::NAN)
                } else {
                    Value::number_with_unit(f64::from(i % 9) * 0.5 - 1.0, "°F")
                },
            })
            .collect();
        store.his_write(&p, numbers).await.unwrap();
        let flags: Vec<HisSample> = (0..40)
            .map(|i: u32| HisSample {
                ts: ts((i / 4) as u8, (i % 4 * 15) as u8, 0, "New_York"),
                value: Value::Bool(i.is_multiple_of(3)),
            })
            .collect();
        store.his_write(&b, flags).await.unwrap();
    }
    let end = ts(23, 0, 0, "New_York");
    let mut compared = 0;
    for start in [ts(0, 0, 0, "New_York"), ts(0, 7, 30, "New_York")] {
        for interval_us in [900_000_000, 3_600_000_000, 86_400_000_000] {
            for fold in HisFold::ALL {
                let rollup = Rollup { interval_us, fold };
                for id in [&p, &b] {
                    let got = backend
                        .his_rollup(id, &start, &end, rollup, 1000)
                        .await
                        .unwrap();
                    let want = memory
                        .his_rollup(id, &start, &end, rollup, 1000)
                        .await
                        .unwrap();
                    assert_eq!(got, want, "{kind} {} {fold:?} {interval_us}", id.id);
                    assert!(!got.is_empty());
                    compared += got.len();
                }
            }
        }
    }
    assert!(compared > 500, "{compared}");
    // Spot checks against hand-computed values: the first hour holds 0..=11 without the
    // NaN at 7, i.e. (i % 9) * 0.5 - 1 for i in 0..12 minus i = 7.
    let start = ts(0, 0, 0, "New_York");
    let hour = |fold| Rollup {
        interval_us: 3_600_000_000,
        fold,
    };
    let first_hour = |fold| {
        let (p, start, end) = (p.clone(), start.clone(), end.clone());
        async move {
            backend
                .his_rollup(&p, &start, &end, hour(fold), 1)
                .await
                .unwrap()
                .remove(0)
                .value
        }
    };
    let values: Vec<f64> = (0..12u32)
        .filter(|i| *i != 7)
        .map(|i| f64::from(i % 9) * 0.5 - 1.0)
        .collect();
    let sum: f64 = values.iter().sum();
    assert_eq!(first_hour(HisFold::Sum).await, Value::number(sum));
    assert_eq!(first_hour(HisFold::Count).await, Value::number(12.0));
    assert_eq!(first_hour(HisFold::Max).await, Value::number(3.0));
    assert_eq!(
        first_hour(HisFold::Last).await,
        Value::number_with_unit(0.0, "°F")
    );
    // Limits: at most `limit` buckets.
    let two = backend
        .his_rollup(&p, &start, &end, hour(HisFold::Avg), 2)
        .await
        .unwrap();
    assert_eq!(two.len(), 2);
}

async fn rollups_match_memory(kind: &str) {
    let backend = open(kind).await;
    rollups_match_on(backend.as_ref(), kind).await;
}

per_backend!(corpus, filters_match_memory);
per_backend!(ops, ops_behave_like_memory);
per_backend!(rollups, rollups_match_memory);

/// Two backends on one store (two server processes): each sees the other's writes, and
/// change events cross between them.
async fn two_processes_share_one_store(kind: &str) {
    let url = fresh_store(kind);
    let a = backends::open(&url).await.unwrap();
    let b = backends::open(&url).await.unwrap();
    a.load(&zinc::decode_grid(SMALL).unwrap()).await.unwrap();
    // Let B's listener subscribe before A writes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut b_events = b.subscribe();
    a.commit(CommitOp::Update(vec![EntityUpdate {
        diff: dict("{id:@e dis:\"Changed by A\"}"),
        expected_version: None,
    }]))
    .await
    .unwrap();
    // B reads A's write at once (no cache in front of a shared store).
    let e = b.read_by_ids(&[Ref::new("e")]).await.unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(e.get("dis"), Some(&Value::Str("Changed by A".into())));
    // (A's bulk load may still be on its way; A's update follows it.)
    let heard = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let event = b_events.recv().await.unwrap();
            if event.ids == ["e"] {
                break;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "B hears of A's change");
    // Concurrent point writes from both sides end in one consistent array.
    let p = Ref::new("p");
    let mut tasks = Vec::new();
    for (i, backend) in [a.clone(), b.clone(), a.clone(), b.clone()]
        .into_iter()
        .enumerate()
    {
        let p = p.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..10u8 {
                let level = 10 + (i as u8);
                let entry = PriorityEntry {
                    val: Value::number(f64::from(n)),
                    who: format!("w{i}"),
                    expires_ms: None,
                };
                backend
                    .point_write(&p, level, Some(entry), 0)
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let array = a.priority_array(&p).await.unwrap();
    assert_eq!(array.entries().count(), 4, "every writer's level is there");
    assert_eq!(array, b.priority_array(&p).await.unwrap());
    let point = b.read_by_ids(std::slice::from_ref(&p)).await.unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(point.get("writeLevel"), Some(&Value::number(10.0)));
    assert_eq!(point.get("writeVal"), Some(&Value::number(9.0)));
}

mod shared_store {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis() {
        super::two_processes_share_one_store("redis").await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::two_processes_share_one_store("postgres").await;
    }
}

/// Retries a call until the database answers again (the backend reconnects by itself).
async fn until_ok<T, F, Fut>(mut call: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, BackendError>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match call().await {
            Ok(v) => return v,
            Err(BackendError::Unavailable(why)) if tokio::time::Instant::now() < deadline => {
                let _ = why;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("the backend did not come back: {e}"),
        }
    }
}

/// Writes, kills the database with SIGKILL, restarts it: everything acknowledged is
/// there, for the old backend (after reconnecting) and for a new one.
async fn survives_a_database_crash(url: &str, kill: impl Fn(), start: impl Fn()) {
    let backend = backends::open(url).await.unwrap();
    backend
        .load(&zinc::decode_grid(SMALL).unwrap())
        .await
        .unwrap();
    let p = Ref::new("p");
    let mut acknowledged = 0;
    for hour in 0..24u8 {
        let samples = (0..60u8)
            .map(|m| HisSample {
                ts: ts(hour, m, 0, "New_York"),
                value: Value::number(f64::from(m)),
            })
            .collect();
        acknowledged += backend.his_write(&p, samples).await.unwrap().inserted;
    }
    let entry = PriorityEntry {
        val: Value::number(71.0),
        who: "ann".into(),
        expires_ms: None,
    };
    backend.point_write(&p, 10, Some(entry), 0).await.unwrap();
    kill();
    // While the database is down, calls fail with a clear error, not a hang or a panic.
    let down = backend.read_by_ids(std::slice::from_ref(&p)).await;
    assert!(
        matches!(down, Err(BackendError::Unavailable(_))),
        "{down:?}"
    );
    start();
    let from = ts(0, 0, 0, "New_York");
    let to = DateTime::new(
        Date::new(2026, 1, 16).unwrap(),
        Time::new(0, 0, 0, 0).unwrap(),
        -5 * 3600,
        Some("New_York".into()),
    )
    .unwrap();
    let samples = until_ok(|| backend.his_read(&p, &from, &to, 100_000)).await;
    assert_eq!(samples.len(), acknowledged);
    let fresh = backends::open(url).await.unwrap();
    assert_eq!(
        fresh.his_read(&p, &from, &to, 100_000).await.unwrap().len(),
        1440
    );
    let point = fresh.read_by_ids(std::slice::from_ref(&p)).await.unwrap()[0]
        .clone()
        .unwrap();
    assert_eq!(point.get("writeVal"), Some(&Value::number(71.0)));
    assert_eq!(fresh.priority_array(&p).await.unwrap().entries().count(), 1);
    // And it takes writes again.
    fresh
        .commit(CommitOp::Add(vec![dict(
            "{id:@after dis:\"after the crash\"}",
        )]))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_survives_kill_9() {
    let redis = TempRedis::start();
    let url = redis.url();
    survives_a_database_crash(&url, || redis.kill(), || redis.start_server()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_survives_kill_9() {
    let pg = TempPostgres::start();
    let url = pg.create_database("crash");
    survives_a_database_crash(&url, || pg.kill(), || pg.start_server()).await;
}

#[tokio::test]
async fn unknown_backend_urls_say_what_to_use() {
    let err = backends::open("mongodb://x").await.err().unwrap();
    assert!(err.to_string().contains("redis://"), "{err}");
    let err = backends::open("redis://127.0.0.1:1").await.err().unwrap();
    assert!(err.to_string().contains("redis-server"), "{err}");
}

/// PostgreSQL: the migrations are recorded, and entities are also JSONB (Hayson) that SQL
/// can query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_schema_is_versioned_and_tags_are_jsonb() {
    let url = fresh_store("postgres");
    let backend = backends::open(&url).await.unwrap();
    backend
        .load(&zinc::decode_grid(SMALL).unwrap())
        .await
        .unwrap();
    // A second process on the same database applies nothing twice.
    let _again = backends::open(&url).await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let versions: Vec<i32> = client
        .query("SELECT version FROM bw_schema ORDER BY version", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 5]);
    let row = client
        .query_one(
            "SELECT tags->>'dis', tags->'siteRef'->>'val' FROM bw_entities WHERE id = 'p'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "Temp");
    assert_eq!(row.get::<_, String>(1), "s");
}

/// HTTP watches kept in the store: opened through one process, fed by writes through the
/// other, polled through either; every change reported once; leases, limits and closing.
async fn shared_watches_behave(kind: &str) {
    use buildwire_haystack::backends::{SHARED_WATCH_PREFIX, WatchLimits};
    let url = fresh_store(kind);
    let a = backends::open(&url).await.unwrap();
    let b = backends::open(&url).await.unwrap();
    a.load(&zinc::decode_grid(SMALL).unwrap()).await.unwrap();
    let (wa, wb) = (a.shared_watches().unwrap(), b.shared_watches().unwrap());
    let limits = WatchLimits {
        max_ids_per_watch: 3,
        max_watches_per_owner: 2,
        ..WatchLimits::default()
    };
    let now = 1_000_000;
    let w = wa.open("ann", "test", 10_000, &limits, now).await.unwrap();
    assert!(w.starts_with(SHARED_WATCH_PREFIX));
    let ids = vec!["p".to_owned(), "e".to_owned()];
    assert_eq!(wa.add(&w, "ann", &ids, &limits, now).await.unwrap(), 10_000);
    assert!(wb.poll(&w, "ann", false, now).await.unwrap().is_empty());
    // Writes through B: a commit, a point write and a history write.
    b.commit(CommitOp::Update(vec![EntityUpdate {
        diff: dict("{id:@e dis:\"E2\"}"),
        expected_version: None,
    }]))
    .await
    .unwrap();
    let entry = PriorityEntry {
        val: Value::number(1.0),
        who: "x".into(),
        expires_ms: None,
    };
    b.point_write(&Ref::new("p"), 9, Some(entry), now)
        .await
        .unwrap();
    // Polled through A: both, in watch order, once.
    assert_eq!(wa.poll(&w, "ann", false, now).await.unwrap(), ["p", "e"]);
    assert!(wb.poll(&w, "ann", false, now).await.unwrap().is_empty());
    let sample = vec![HisSample {
        ts: ts(9, 0, 0, "New_York"),
        value: Value::number(3.0),
    }];
    b.his_write(&Ref::new("p"), sample).await.unwrap();
    assert_eq!(wb.poll(&w, "ann", false, now).await.unwrap(), ["p"]);
    assert_eq!(wb.poll(&w, "ann", true, now).await.unwrap(), ["p", "e"]);
    // Someone else's watch is unknown to them; limits hold.
    assert!(matches!(
        wb.poll(&w, "bob", false, now).await,
        Err(BackendError::Watch(_))
    ));
    let too_many = vec!["s".to_owned(), "q".to_owned()];
    assert!(matches!(
        wa.add(&w, "ann", &too_many, &limits, now).await,
        Err(BackendError::Watch(_))
    ));
    wb.remove(&w, "ann", &["e".to_owned()], now).await.unwrap();
    b.commit(CommitOp::Update(vec![EntityUpdate {
        diff: dict("{id:@e dis:\"E3\"}"),
        expected_version: None,
    }]))
    .await
    .unwrap();
    assert!(wa.poll(&w, "ann", false, now).await.unwrap().is_empty());
    let w2 = wb.open("ann", "", 10_000, &limits, now).await.unwrap();
    assert!(matches!(
        wa.open("ann", "", 10_000, &limits, now).await,
        Err(BackendError::Watch(_))
    ));
    wa.close(&w2, "ann").await.unwrap();
    assert!(matches!(
        wa.poll(&w2, "ann", false, now).await,
        Err(BackendError::Watch(_))
    ));
    // A lease that runs out closes the watch (the sweeper runs every second in a server).
    assert!(wa.poll(&w, "ann", false, now + 20_000).await.is_err());
    assert_eq!(wb.sweep(now + 20_000).await.unwrap(), 1);
    assert!(wa.poll(&w, "ann", false, now).await.is_err());
}

mod shared_watches {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis() {
        super::shared_watches_behave("redis").await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::shared_watches_behave("postgres").await;
    }
}

/// Users and login sessions kept in the store: what one process stores, another reads.
async fn shared_auth_behaves(kind: &str) {
    let url = fresh_store(kind);
    let a = backends::open(&url).await.unwrap();
    let b = backends::open(&url).await.unwrap();
    let (sa, sb) = (a.shared_auth().unwrap(), b.shared_auth().unwrap());
    let users = vec![
        (
            "ann".to_owned(),
            "ann:operator:4096:c2FsdA==:a2V5:c2Vydg==".to_owned(),
        ),
        (
            "bob".to_owned(),
            "bob:viewer:4096:c2FsdA==:a2V5:c2Vydg==".to_owned(),
        ),
    ];
    sa.put_users(&users).await.unwrap();
    let mut seen = sb.users().await.unwrap();
    seen.sort();
    assert_eq!(seen, vec![users[0].1.clone(), users[1].1.clone()]);
    assert!(sb.remove_user("bob").await.unwrap());
    assert!(!sb.remove_user("bob").await.unwrap());
    assert_eq!(sa.users().await.unwrap().len(), 1);
    let now = 1_800_000_000_000;
    sa.put_session("k1", "ann", "operator", now + 60_000)
        .await
        .unwrap();
    assert_eq!(
        sb.session("k1", now).await.unwrap(),
        Some(("ann".to_owned(), "operator".to_owned()))
    );
    assert_eq!(sb.session("k2", now).await.unwrap(), None);
    sb.drop_session("k1").await.unwrap();
    assert_eq!(sa.session("k1", now).await.unwrap(), None);
}

mod shared_auth {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis() {
        super::shared_auth_behaves("redis").await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::shared_auth_behaves("postgres").await;
    }
}

/// TimescaleDB, where it is installed next to the PostgreSQL binaries: loaded, histories
/// become a hypertable and rollups use `time_bucket` (and equal memory's); installed but not
/// loaded, the backend stays on a plain table and says how to load it. Skipped, with the
/// reason printed, where the extension is not installed (it has no Debian package).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timescaledb_hypertable_when_loaded() {
    let library = TempPostgres::lib_dir().join("timescaledb.so");
    if !library.exists() {
        eprintln!(
            "SKIPPED timescaledb_hypertable_when_loaded: {} is missing (TimescaleDB is not \
             installed; the plain PostgreSQL path is tested by every other test)",
            library.display()
        );
        return;
    }
    let loaded = TempPostgres::start_with(
        "-c shared_preload_libraries=timescaledb -c timescaledb.telemetry_level=off",
    );
    let url = loaded.create_database("ts");
    let backend = backends::open(&url).await.unwrap();
    assert!(
        backend.describe().contains("TimescaleDB hypertable"),
        "{}",
        backend.describe()
    );
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let tables: Vec<String> = client
        .query(
            "SELECT hypertable_name::text FROM timescaledb_information.hypertables",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(tables, ["bw_his"]);
    // Rollups run through time_bucket here (a query error otherwise) and equal memory's.
    rollups_match_on(backend.as_ref(), "timescaledb").await;
    let plain = TempPostgres::start();
    let url = plain.create_database("plain");
    let backend = backends::open(&url).await.unwrap();
    let about = backend.describe();
    assert!(
        about.contains("plain table") && about.contains("shared_preload_libraries"),
        "{about}"
    );
}
