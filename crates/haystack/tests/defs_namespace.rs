//! The standard defs namespace: taxonomy facts from the Haystack 4 defs (ph, phScience,
//! phIoT, phIct), namespace checks on hand-made records, and entity reflection on the
//! Project Haystack example sites Alpha and Bravo.

use buildwire_haystack::codec::{trio, zinc};
use buildwire_haystack::defs::{self, LoadError, Namespace, NamespaceError};
use buildwire_haystack::{Dict, Grid, Value};
use std::path::PathBuf;

fn read(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/haystack")
        .join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!("sample data {} is missing: {e}", path.display()),
    }
}

fn site(name: &str) -> Grid {
    zinc::decode_grid(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn count_fitting(ns: &Namespace, grid: &Grid, def: &str) -> usize {
    (0..grid.row_count())
        .filter_map(|i| grid.row_dict(i))
        .filter(|row| ns.fits(row, def))
        .count()
}

#[test]
fn libraries_and_size() {
    let ns = defs::standard();
    assert_eq!(ns.len(), 714);
    assert_eq!(
        ns.libs(),
        vec!["lib:ph", "lib:phIct", "lib:phIoT", "lib:phScience"]
    );
    assert_eq!(ns.def("ahu").and_then(|d| d.lib()), Some("lib:phIoT"));
    assert_eq!(ns.def("water").and_then(|d| d.lib()), Some("lib:phScience"));
    assert!(ns.defs_of_lib("lib:ph").any(|d| d.name() == "marker"));
    // Prose was dropped by the generator: no def keeps a doc or wikipedia tag.
    assert!(
        ns.defs()
            .all(|d| !d.tags().contains("doc") && !d.tags().contains("wikipedia"))
    );
}

#[test]
fn ahu_taxonomy() {
    let ns = defs::standard();
    assert_eq!(ns.supertypes("ahu"), Some(vec!["airHandlingEquip"]));
    assert_eq!(
        ns.supertypes("airHandlingEquip"),
        Some(vec!["equip", "air-output", "elec-input"])
    );
    assert_eq!(ns.supertypes("equip"), Some(vec!["entity"]));
    let chain = ns.inheritance("ahu").unwrap();
    assert_eq!(&chain[..4], &["ahu", "airHandlingEquip", "equip", "entity"]);
    assert!(chain.contains(&"marker"));
    assert!(ns.fits_def("ahu", "entity"));
    assert!(!ns.fits_def("ahu", "point"));
    assert_eq!(ns.implementation("ahu"), Some(vec!["ahu", "equip"]));
    assert_eq!(ns.implementation("vav"), Some(vec!["vav", "equip"]));
    assert_eq!(
        ns.implementation("elec-meter"),
        Some(vec!["elec", "meter", "equip"])
    );
    assert_eq!(ns.implementation("site"), Some(vec!["site"]));
    // Reflection chapter examples: rtu needs its mandatory supertypes ahu and equip.
    assert_eq!(ns.implementation("rtu"), Some(vec!["rtu", "ahu", "equip"]));
    assert_eq!(ns.implementation("point"), Some(vec!["point"]));
    assert_eq!(
        ns.implementation("hot-water-plant"),
        Some(vec!["hot", "water", "plant", "equip"])
    );
    assert_eq!(ns.implementation("lib:ph"), Some(vec![]));
    assert_eq!(ns.implementation("discharge"), Some(vec!["discharge"]));
}

#[test]
fn subtypes_and_choices() {
    let ns = defs::standard();
    let points = ns.subtypes("point").unwrap();
    for expected in ["cur-point", "his-point", "writable-point"] {
        assert!(
            points.contains(&expected),
            "{expected} missing from {points:?}"
        );
    }
    // cmd, sensor and sp are the options of the pointFunction choice, not point subtypes.
    assert_eq!(
        ns.choices_of("pointFunction"),
        Some(vec![
            "cmd",
            "computed",
            "ml",
            "sensor",
            "sim",
            "sp",
            "synthetic"
        ])
    );
    let equips = ns.all_subtypes("equip").unwrap();
    assert!(equips.contains(&"ahu") && equips.contains(&"vav") && equips.contains(&"elec-meter"));
    assert!(!equips.contains(&"site"));
    let sections = ns.choices_of("ductSection").unwrap();
    assert!(sections.contains(&"discharge") && sections.contains(&"return"));
    let fluids = ns.choices_of("pipeFluid").unwrap();
    assert!(fluids.contains(&"water") && fluids.contains(&"hot-water"));
    assert_eq!(ns.choices_of("ahu"), None);
    assert_eq!(ns.choices_of("choice"), None);
    assert_eq!(
        ns.tag_on("siteRef"),
        Some(vec!["system", "space", "equip", "point"])
    );
    let on_ahu = ns.tags_on("ahu");
    assert!(on_ahu.contains(&"siteRef") && on_ahu.contains(&"ahuZoneDelivery"));
    assert_eq!(ns.def("siteRef").and_then(|d| d.of()), Some("site"));
    assert!(ns.def("siteRef").is_some_and(|d| !d.is_mandatory()));
    let children = ns.def("ahu").map(|d| d.children()).unwrap_or_default();
    assert!(
        children
            .iter()
            .any(|c| c.contains("discharge") && c.contains("duct"))
    );
    assert!(
        children
            .iter()
            .all(|c| c.contains("equip") || c.contains("point"))
    );
    let status = ns
        .def("curStatus")
        .map(|d| d.enum_items())
        .unwrap_or_default();
    assert!(
        status.contains(&"ok") && status.contains(&"fault"),
        "{status:?}"
    );
}

#[test]
fn unknown_names_answer_none() {
    let ns = defs::standard();
    assert!(ns.def("noSuchDef").is_none());
    assert_eq!(ns.supertypes("noSuchDef"), None);
    assert_eq!(ns.inheritance("noSuchDef"), None);
    assert_eq!(ns.subtypes("noSuchDef"), None);
    assert_eq!(ns.implementation("noSuchDef"), None);
    assert_eq!(ns.tag_on("noSuchDef"), None);
    let mut entity = Dict::new();
    entity.insert_marker("noSuchDef").unwrap();
    assert!(!ns.fits(&entity, "noSuchDef"));
}

#[test]
fn no_def_inherits_from_itself() {
    let ns = defs::standard();
    for def in ns.defs() {
        let chain = ns.inheritance(def.name()).unwrap();
        assert_eq!(chain.iter().filter(|n| **n == def.name()).count(), 1);
        for supertype in def.is() {
            assert!(ns.def(supertype).is_some(), "{} -> {supertype}", def.name());
            assert!(
                !ns.fits_def(supertype, def.name()),
                "cycle through {}",
                def.name()
            );
        }
    }
}

#[test]
fn cycles_and_dangling_supertypes_are_refused() {
    let cyclic = "def:^a\nis:[^b]\n---\ndef:^b\nis:[^c]\n---\ndef:^c\nis:[^a]\n---\ndef:^d\n";
    assert_eq!(
        defs::load_trio(cyclic).unwrap_err(),
        LoadError::Namespace(NamespaceError::Cycle("a".into()))
    );
    let self_loop = "def:^a\nis:^a\n";
    assert_eq!(
        defs::load_trio(self_loop).unwrap_err(),
        LoadError::Namespace(NamespaceError::Cycle("a".into()))
    );
    let dangling = "def:^a\nis:[^ghost]\n";
    assert_eq!(
        defs::load_trio(dangling).unwrap_err(),
        LoadError::Namespace(NamespaceError::UnknownSupertype {
            def: "a".into(),
            supertype: "ghost".into()
        })
    );
    assert_eq!(
        defs::load_trio("def:^a\n---\ndef:^a\n").unwrap_err(),
        LoadError::Namespace(NamespaceError::Duplicate("a".into()))
    );
    assert_eq!(
        defs::load_trio("def:^a\n---\ndis:\"x\"\n").unwrap_err(),
        LoadError::Namespace(NamespaceError::MissingDef { index: 1 })
    );
    assert!(matches!(
        defs::load_trio("def:[^a\n"),
        Err(LoadError::Decode(_))
    ));
}

#[test]
fn a_small_namespace_works_on_its_own() {
    let records = trio::decode_records(
        "def:^marker\n---\ndef:^entity\nis:^marker\n---\ndef:^thing\nis:^entity\nmandatory\n\
         ---\ndef:^big-thing\nis:[^thing]\n",
    )
    .unwrap();
    let ns = Namespace::from_records(&records).unwrap();
    assert_eq!(ns.implementation("big-thing"), Some(vec!["big", "thing"]));
    assert_eq!(
        ns.inheritance("big-thing"),
        Some(vec!["big-thing", "thing", "entity", "marker"])
    );
    let mut entity = Dict::new();
    entity.insert_marker("big").unwrap();
    assert!(!ns.fits(&entity, "big-thing"));
    entity.insert_marker("thing").unwrap();
    assert!(ns.fits(&entity, "big-thing"));
    // A tag that is present but not a marker does not count.
    let mut not_marker = Dict::new();
    not_marker.insert("big", Value::from("yes")).unwrap();
    not_marker.insert_marker("thing").unwrap();
    assert!(!ns.fits(&not_marker, "big-thing"));
    assert_eq!(ns.entity_types(&entity), vec!["big-thing"]);
}

#[test]
fn alpha_entities_fit_their_defs() {
    let ns = defs::standard();
    let grid = site("alpha.zinc");
    assert_eq!(count_fitting(ns, &grid, "site"), 1);
    assert_eq!(count_fitting(ns, &grid, "equip"), 184);
    assert_eq!(count_fitting(ns, &grid, "point"), 1846);
    assert_eq!(count_fitting(ns, &grid, "ahu"), 4);
    assert_eq!(count_fitting(ns, &grid, "vav"), 138);
    assert_eq!(count_fitting(ns, &grid, "elec-meter"), 13);
    assert_eq!(count_fitting(ns, &grid, "weatherStation"), 1);
    let ahu = grid.row_dict(1).unwrap();
    assert_eq!(ahu.get("dis"), Some(&Value::from("Alpha Airside AHU-2")));
    assert_eq!(ns.entity_types(&ahu), vec!["ahu"]);
    let reflected = ns.reflect(&ahu);
    for expected in ["ahu", "equip", "dis", "siteRef", "id"] {
        assert!(
            reflected.contains(&expected),
            "{expected} not in {reflected:?}"
        );
    }
}

#[test]
fn bravo_entities_fit_their_defs() {
    let ns = defs::standard();
    let grid = site("bravo.zinc");
    assert_eq!(count_fitting(ns, &grid, "site"), 1);
    assert_eq!(count_fitting(ns, &grid, "equip"), 149);
    assert_eq!(count_fitting(ns, &grid, "point"), 918);
    assert_eq!(count_fitting(ns, &grid, "ahu"), 4);
    assert_eq!(count_fitting(ns, &grid, "vav"), 100);
    assert_eq!(count_fitting(ns, &grid, "space"), 8);
}
