//! Entity store tests on the Project Haystack example sites Alpha and Bravo
//! (`/work/shared/data/haystack`): counts for common queries, `->` paths, and the key
//! correctness check that index-planned reads return exactly the ids of a brute-force
//! scan for a corpus of filters; plus commits, the ref graph, histories and [`InMemoryStorage`].

use buildwire_haystack::codec::zinc;
use buildwire_haystack::filter::parse;
use buildwire_haystack::store::{
    CommitOp, EntityStore, EntityUpdate, HisSample, HistoryError, HistoryStore, InMemoryStorage,
    StoreError,
};
use buildwire_haystack::{Date, DateTime, Dict, Ref, Time, Value};
use proptest::prelude::*;
use std::path::PathBuf;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn load(name: &str) -> EntityStore {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/haystack")
        .join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!(
            "sample data {} is missing ({e}); these tests need the shared Haystack example files",
            path.display()
        ),
    };
    let grid = match zinc::decode_grid(&text) {
        Ok(grid) => grid,
        Err(e) => panic!("{name}: {e}"),
    };
    let mut store = EntityStore::new();
    match store.load_grid(&grid) {
        Ok(n) => assert_eq!(n, grid.row_count()),
        Err(e) => panic!("{name}: {e}"),
    }
    store
}

fn count(store: &EntityStore, filter: &str) -> usize {
    match parse(filter) {
        Ok(f) => store.read(&f, None).len(),
        Err(e) => panic!("{filter:?}: {e}"),
    }
}

fn ids(dicts: &[&Dict]) -> Vec<String> {
    dicts
        .iter()
        .map(|d| match d.get("id") {
            Some(Value::Ref(r)) => r.id.clone(),
            _ => String::new(),
        })
        .collect()
}

fn first_id(store: &EntityStore, filter: &str) -> String {
    match parse(filter) {
        Ok(f) => ids(&store.read(&f, Some(1))).pop().unwrap_or_default(),
        Err(e) => panic!("{e}"),
    }
}

/// The id of the `n`-th point whose `tag` is a Ref, and that ref's id.
fn some_ref(store: &EntityStore, tag: &str, n: usize) -> String {
    let Ok(f) = parse(tag) else { panic!("{tag}") };
    let found = store.read(&f, None);
    match found
        .get(n.min(found.len().saturating_sub(1)))
        .and_then(|d| d.get(tag))
    {
        Some(Value::Ref(r)) => r.id.clone(),
        _ => String::new(),
    }
}

mod filter_corpus;
use filter_corpus::PLANNER_CORPUS;

fn check_planner_agrees(store: &EntityStore) -> usize {
    let site = first_id(store, "site");
    let equip = first_id(store, "equip and not ahu");
    let ahu = first_id(store, "ahu");
    let point = first_id(store, "point");
    let weather = some_ref(store, "weatherStationRef", 0);
    let mut nonempty = 0;
    for template in PLANNER_CORPUS {
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
        let filter = match parse(&text) {
            Ok(f) => f,
            Err(e) => panic!("{text:?}: {e}"),
        };
        let planned = ids(&store.read(&filter, None));
        let scanned = ids(&store.read_by_scan(&filter, None));
        assert_eq!(planned, scanned, "{text}");
        assert_eq!(
            ids(&store.read(&filter, Some(3))),
            scanned.iter().take(3).cloned().collect::<Vec<_>>(),
            "{text} with limit"
        );
        if !planned.is_empty() {
            nonempty += 1;
        }
    }
    nonempty
}

#[test]
fn alpha_counts_and_paths() {
    let alpha = load("alpha.zinc");
    assert_eq!(alpha.len(), 2032);
    assert_eq!(count(&alpha, "site"), 1);
    assert_eq!(count(&alpha, "point"), 1846);
    assert_eq!(count(&alpha, "his"), 1846);
    assert_eq!(count(&alpha, "equip"), 184);
    assert_eq!(count(&alpha, "ahu"), 4);
    assert_eq!(count(&alpha, "weatherStation"), 1);
    assert_eq!(count(&alpha, "point and his and kind==\"Number\""), 1632);
    assert_eq!(
        count(&alpha, "equipRef->siteRef->geoCity == \"Hugo\""),
        2007
    );
    assert_eq!(
        count(&alpha, "equipRef->siteRef->geoCity == \"Chicago\""),
        0
    );
    // The site's id and the equips on it.
    assert_eq!(count(&alpha, "equip and siteRef==@a-0000"), 184);
    assert_eq!(
        count(&alpha, "point and equipRef==@a-0001 and equipRef->ahu"),
        count(&alpha, "point and equipRef==@a-0001")
    );
    assert_eq!(
        count(&alpha, "site and geoCity == \"Hugo\" and area == 151455ft²"),
        1
    );
}

#[test]
fn bravo_counts_and_paths() {
    let bravo = load("bravo.zinc");
    assert_eq!(bravo.len(), 1077);
    assert_eq!(count(&bravo, "site"), 1);
    assert_eq!(count(&bravo, "point"), 918);
    assert_eq!(count(&bravo, "equip"), 149);
    assert_eq!(count(&bravo, "ahu"), 4);
    assert_eq!(count(&bravo, "space"), 8);
    assert_eq!(count(&bravo, "point and his and kind==\"Number\""), 815);
    assert_eq!(count(&bravo, "equipRef->siteRef->geoCity"), 913);
    assert_eq!(
        count(&bravo, "equipRef->siteRef->geoCity == \"Fort Wayne\""),
        913
    );
    assert_eq!(count(&bravo, "equipRef->siteRef->tz == \"Chicago\""), 913);
}

#[test]
fn counts_agree_with_the_raw_grid() -> TestResult {
    // Independent of the store: count marker cells straight from the decoded grid.
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack/bravo.zinc");
    let grid = zinc::decode_grid(&std::fs::read_to_string(path)?)?;
    let store = load("bravo.zinc");
    for tag in ["point", "equip", "site", "his", "ahu", "sensor", "cmd"] {
        let raw = (0..grid.row_count())
            .filter(|&i| grid.get(i, tag).is_some())
            .count();
        assert_eq!(count(&store, tag), raw, "{tag}");
    }
    Ok(())
}

#[test]
fn planned_reads_equal_brute_force_on_alpha_and_bravo() {
    assert!(PLANNER_CORPUS.len() >= 50);
    for name in ["alpha.zinc", "bravo.zinc"] {
        let store = load(name);
        let nonempty = check_planner_agrees(&store);
        // The corpus must exercise real results, not just empty sets.
        assert!(nonempty >= 35, "{name}: only {nonempty} non-empty results");
    }
}

#[test]
fn both_sites_in_one_store() -> TestResult {
    let mut store = load("alpha.zinc");
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack/bravo.zinc");
    let bravo = zinc::decode_grid(&std::fs::read_to_string(path)?)?;
    store.load_grid(&bravo)?;
    assert_eq!(store.len(), 3109);
    assert_eq!(count(&store, "site"), 2);
    assert_eq!(count(&store, "point"), 1846 + 918);
    check_planner_agrees(&store);
    // Loading again fails on the first duplicate row, reporting it.
    assert!(matches!(
        store.load_grid(&bravo),
        Err(StoreError::GridRow { row: 0, .. })
    ));
    Ok(())
}

#[test]
fn nav_children_and_referrers() {
    let alpha = load("alpha.zinc");
    let equips = alpha.children("a-0000");
    assert!(!equips.is_empty());
    assert!(
        equips
            .iter()
            .all(|d| d.contains("equip") && !d.contains("equipRef"))
    );
    let points = alpha.children("a-0001");
    assert_eq!(points.len(), count(&alpha, "equipRef == @a-0001"));
    assert!(alpha.children("no-such").is_empty());
    let refs = alpha.referrers("a-0001");
    assert!(refs.iter().any(|(_, tag)| *tag == "equipRef"));
    assert_eq!(
        refs.iter().filter(|(_, tag)| *tag == "equipRef").count(),
        points.len()
    );
    // Every entity of the site refers to it via siteRef.
    assert_eq!(
        alpha
            .referrers("a-0000")
            .iter()
            .filter(|(_, t)| *t == "siteRef")
            .count(),
        count(&alpha, "siteRef == @a-0000")
    );
}

fn entity(id: &str, tags: &[(&str, Value)]) -> Dict {
    let mut d = Dict::new();
    let _ = d.insert("id", Value::Ref(Ref::new(id)));
    for (name, value) in tags {
        if let Err(e) = d.insert(*name, value.clone()) {
            panic!("{e}");
        }
    }
    d
}

#[test]
fn updates_keep_indexes_and_ref_graph_in_step() -> TestResult {
    let mut store = EntityStore::new();
    store.add(entity("s", &[("site", Value::Marker)]))?;
    store.add(entity(
        "e1",
        &[
            ("equip", Value::Marker),
            ("siteRef", Value::Ref(Ref::new("s"))),
        ],
    ))?;
    let v = store.add(entity(
        "p1",
        &[
            ("point", Value::Marker),
            ("equipRef", Value::Ref(Ref::new("e1"))),
        ],
    ))?;
    assert_eq!(store.change_counter(), 3);
    assert_eq!(store.version("p1"), Some(v));
    assert_eq!(
        store.add(entity("p1", &[])),
        Err(StoreError::DuplicateId("p1".into()))
    );
    assert_eq!(store.add(Dict::new()), Err(StoreError::MissingId));
    let eq = parse("equipRef == @e1")?;
    assert_eq!(ids(&store.read(&eq, None)), ["p1"]);
    assert_eq!(store.referrers("e1").len(), 1);

    // Move the point to another equip, and drop the marker.
    store.add(entity("e2", &[("equip", Value::Marker)]))?;
    let diff = entity(
        "p1",
        &[
            ("equipRef", Value::Ref(Ref::new("e2"))),
            ("point", Value::Remove),
            ("sensor", Value::Marker),
        ],
    );
    assert!(matches!(
        store.update(&diff, Some(v + 100)),
        Err(StoreError::VersionConflict { .. })
    ));
    let v2 = store.update(&diff, Some(v))?;
    assert!(v2 > v);
    assert!(store.read(&eq, None).is_empty());
    assert!(store.referrers("e1").is_empty());
    assert_eq!(store.referrers("e2").len(), 1);
    assert_eq!(
        ids(&store.read(&parse("sensor and equipRef == @e2")?, None)),
        ["p1"]
    );
    assert!(store.read(&parse("point")?, None).is_empty());
    assert_eq!(
        ids(&store.read(&parse("not point")?, None)),
        ["s", "e1", "p1", "e2"]
    );

    // Remove, then reuse of the slot keeps reads correct.
    let removed = store.remove("e1", None)?;
    assert!(removed.contains("equip"));
    assert_eq!(
        store.remove("e1", None),
        Err(StoreError::UnknownId("e1".into()))
    );
    assert!(store.referrers("s").is_empty());
    store.add(entity(
        "e3",
        &[
            ("equip", Value::Marker),
            ("siteRef", Value::Ref(Ref::new("s"))),
        ],
    ))?;
    assert_eq!(ids(&store.read(&parse("equip")?, None)), ["e3", "e2"]);
    assert_eq!(
        ids(&store.read_by_scan(&parse("equip")?, None)),
        ["e3", "e2"]
    );
    assert_eq!(ids(&store.children("s")), ["e3"]);
    // Watch polling: what changed after the update of p1.
    assert_eq!(ids(&store.changed_since(v2)), ["e3"]);
    assert_eq!(ids(&store.changed_since(v2 - 1)), ["e3", "p1"]);
    let found = store.read_by_ids(&[Ref::new("e3"), Ref::new("e1")]);
    assert!(found[0].is_some() && found[1].is_none());
    Ok(())
}

fn ts(hour: u8, minute: u8, offset_hours: i32, tz: &str) -> DateTime {
    match (Date::new(2024, 3, 10), Time::new(hour, minute, 0, 0)) {
        (Ok(d), Ok(t)) => match DateTime::new(d, t, offset_hours * 3600, Some(tz.into())) {
            Ok(dt) => dt,
            Err(e) => panic!("{e}"),
        },
        _ => panic!("bad timestamp"),
    }
}

fn sample(hour: u8, minute: u8, v: f64) -> HisSample {
    HisSample {
        ts: ts(hour, minute, -5, "Chicago"),
        value: Value::number_with_unit(v, "°F"),
    }
}

#[test]
fn history_ranges_overwrites_and_bounds() -> TestResult {
    let p = Ref::new("p");
    let mut his = HistoryStore::with_limit(5);
    his.set_timezone(&p, Some("Chicago".into()));
    let report = his.write(
        &p,
        [sample(2, 0, 2.0), sample(0, 0, 0.0), sample(1, 0, 1.0)],
    )?;
    assert_eq!(
        (report.inserted, report.overwritten, report.evicted),
        (3, 0, 0)
    );
    // Later write wins at an equal instant.
    let report = his.write(&p, [sample(1, 0, 10.0)])?;
    assert_eq!(report.overwritten, 1);
    let all = his.read(&p, &ts(0, 0, -5, "Chicago"), &ts(23, 0, -5, "Chicago"));
    let values: Vec<_> = all.iter().map(|s| s.value.clone()).collect();
    assert_eq!(
        values,
        [0.0, 10.0, 2.0].map(|v| Value::number_with_unit(v, "°F"))
    );
    // [start, end): start included, end excluded; bounds in another offset compare absolutely.
    let range = his.read(&p, &ts(6, 0, 0, "UTC"), &ts(7, 0, 0, "UTC"));
    assert_eq!(range.len(), 1);
    assert_eq!(range[0].ts, ts(1, 0, -5, "Chicago"));
    assert!(
        his.read(&p, &ts(3, 0, -5, "Chicago"), &ts(1, 0, -5, "Chicago"))
            .is_empty()
    );
    assert!(
        his.read(&Ref::new("other"), &ts(0, 0, 0, "UTC"), &ts(9, 0, 0, "UTC"))
            .is_empty()
    );
    // Timezone of the point is enforced, nothing is written on refusal.
    let wrong = HisSample {
        ts: ts(5, 0, 0, "UTC"),
        value: Value::number(1.0),
    };
    assert_eq!(
        his.write(&p, [sample(9, 0, 9.0), wrong]),
        Err(HistoryError::TimezoneMismatch {
            expected: "Chicago".into(),
            found: "UTC".into()
        })
    );
    assert_eq!(his.sample_count(&p), 3);
    // Bounded: the oldest samples are evicted first.
    let report = his.write(&p, (3..7).map(|h| sample(h, 30, f64::from(h))))?;
    assert_eq!((report.inserted, report.evicted), (4, 2));
    let kept = his.read(&p, &ts(0, 0, -5, "Chicago"), &ts(23, 0, -5, "Chicago"));
    assert_eq!(kept.len(), 5);
    assert_eq!(kept[0].ts, ts(2, 0, -5, "Chicago"));
    assert!(kept.windows(2).all(|w| w[0].ts.time < w[1].ts.time));
    Ok(())
}

#[test]
fn in_memory_storage() -> TestResult {
    let mut storage = InMemoryStorage::new();
    let db = &mut storage;
    let point = entity(
        "p",
        &[
            ("point", Value::Marker),
            ("his", Value::Marker),
            ("tz", Value::from("Chicago")),
        ],
    );
    let added = db.commit(CommitOp::Add(vec![
        point.clone(),
        entity("q", &[("point", Value::Marker)]),
    ]))?;
    assert_eq!(added.len(), 2);
    assert_eq!(db.change_counter(), 2);
    // A commit with one bad entity changes nothing.
    let err = db.commit(CommitOp::Add(vec![entity("r", &[]), entity("p", &[])]));
    assert_eq!(err, Err(StoreError::DuplicateId("p".into())));
    assert_eq!(db.read(&parse("point")?, None)?.len(), 2);
    assert_eq!(db.read_by_ids(&[Ref::new("r")])?, [None]);

    let updated = db.commit(CommitOp::Update(vec![EntityUpdate {
        diff: entity("q", &[("dis", Value::from("Q"))]),
        expected_version: Some(2),
    }]))?;
    assert_eq!(updated[0].get("dis"), Some(&Value::from("Q")));
    assert!(matches!(
        db.commit(CommitOp::Update(vec![EntityUpdate {
            diff: entity("q", &[]),
            expected_version: Some(2)
        }])),
        Err(StoreError::VersionConflict {
            expected: 2,
            actual: 3,
            ..
        })
    ));

    let report = db.his_write(&Ref::new("p"), vec![sample(1, 0, 1.0), sample(0, 0, 0.0)])?;
    assert_eq!(report.inserted, 2);
    let read = db.his_read(
        &Ref::new("p"),
        &ts(0, 0, -5, "Chicago"),
        &ts(1, 0, -5, "Chicago"),
    )?;
    assert_eq!(read, [sample(0, 0, 0.0)]);
    assert_eq!(
        db.his_write(&Ref::new("q"), vec![sample(1, 0, 1.0)]),
        Err(StoreError::NotHistorized("q".into()))
    );
    assert!(matches!(
        db.his_write(
            &Ref::new("p"),
            vec![HisSample {
                ts: ts(1, 0, 0, "UTC"),
                value: Value::number(1.0)
            }]
        ),
        Err(StoreError::History(HistoryError::TimezoneMismatch { .. }))
    ));

    let removed = db.commit(CommitOp::Remove(vec![(Ref::new("p"), None)]))?;
    assert_eq!(removed, [point]);
    assert_eq!(
        db.his_read(&Ref::new("p"), &ts(0, 0, 0, "UTC"), &ts(9, 0, 0, "UTC")),
        Err(StoreError::UnknownId("p".into()))
    );
    assert_eq!(db.read(&parse("point")?, None)?.len(), 1);
    Ok(())
}

fn small_store() -> EntityStore {
    let mut store = EntityStore::new();
    let rows = [
        entity(
            "s",
            &[
                ("site", Value::Marker),
                ("dis", Value::from("S")),
                ("geoCity", Value::from("Hugo")),
            ],
        ),
        entity(
            "e",
            &[
                ("equip", Value::Marker),
                ("ahu", Value::Marker),
                ("siteRef", Value::Ref(Ref::new("s"))),
            ],
        ),
        entity(
            "f",
            &[
                ("equip", Value::Marker),
                ("equipRef", Value::Ref(Ref::new("e"))),
                ("siteRef", Value::Ref(Ref::new("s"))),
            ],
        ),
        entity(
            "p",
            &[
                ("point", Value::Marker),
                ("kind", Value::from("Number")),
                ("curVal", Value::number_with_unit(72.5, "°F")),
                ("equipRef", Value::Ref(Ref::new("e"))),
                (
                    "airRef",
                    Value::from(vec![Value::Ref(Ref::new("f")), Value::Ref(Ref::new("x"))]),
                ),
                ("enabled", Value::Bool(true)),
            ],
        ),
        entity(
            "q",
            &[
                ("point", Value::Marker),
                ("kind", Value::from("Bool")),
                ("equipRef", Value::Ref(Ref::new("f"))),
                ("dis", Value::Null),
            ],
        ),
    ];
    for row in rows {
        if let Err(e) = store.add(row) {
            panic!("{e}");
        }
    }
    store
}

fn arb_term() -> impl Strategy<Value = String> {
    let path = proptest::sample::select(vec![
        "site",
        "equip",
        "point",
        "ahu",
        "dis",
        "kind",
        "curVal",
        "equipRef",
        "siteRef",
        "airRef",
        "enabled",
        "id",
        "equipRef->siteRef",
        "equipRef->ahu",
        "airRef->equipRef",
        "siteRef->geoCity",
    ]);
    let literal = proptest::sample::select(vec![
        "@s",
        "@e",
        "@f",
        "@p",
        "@x",
        "\"Number\"",
        "\"Bool\"",
        "\"S\"",
        "\"Hugo\"",
        "72.5°F",
        "72.5",
        "true",
        "1",
    ]);
    let op = proptest::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]);
    prop_oneof![
        path.clone().prop_map(str::to_owned),
        path.clone().prop_map(|p| format!("not {p}")),
        (path, op, literal).prop_map(|(p, o, l)| format!("{p} {o} {l}")),
    ]
}

fn arb_query() -> impl Strategy<Value = String> {
    arb_term().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} and {b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a} or {b})")),
        ]
    })
}

proptest! {
    #[test]
    fn planned_reads_equal_brute_force_for_random_filters(query in arb_query()) {
        let store = small_store();
        let filter = parse(&query).map_err(|e| TestCaseError::fail(format!("{query}: {e}")))?;
        prop_assert_eq!(ids(&store.read(&filter, None)), ids(&store.read_by_scan(&filter, None)), "{}", query);
    }
}
