//! The filters every store must answer alike: the in-memory planner against a brute-force
//! scan (`filter_store.rs`), and each storage backend against memory (`backends.rs`).
//! `{site}`, `{equip}`, `{ahu}`, `{point}` and `{weather}` are replaced by real ids.

/// ~50 filters over the index-backed and scan-only shapes; `{site}`, `{equip}`,
/// `{ahu}`, `{point}` and `{weather}` are replaced by ids from the data set.
pub const PLANNER_CORPUS: &[&str] = &[
    "site",
    "point",
    "equip",
    "ahu",
    "not point",
    "not equip and not point",
    "point and his",
    "point and his and kind==\"Number\"",
    "point and kind == \"Bool\"",
    "kind == \"Str\"",
    "kind != \"Number\"",
    "point and unit == \"°F\"",
    "unit == \"%\" or unit == \"cfm\"",
    "unit == \"nope\"",
    "siteRef == @{site}",
    "point and siteRef == @{site}",
    "point and equipRef == @{equip}",
    "equipRef == @{equip} and not sensor",
    "equipRef == @{ahu} or equipRef == @{equip}",
    "(equipRef == @{ahu} or equipRef == @{equip}) and cmd",
    "equip and siteRef == @{site} and ahu",
    "id == @{site}",
    "id == @{point} or id == @{site}",
    "id == \"x\"",
    "equipRef == @no-such-id",
    "equipRef != @{equip}",
    "weatherStationRef == @{weather}",
    "siteRef->geoCity",
    "equipRef->siteRef->geoCity",
    "equipRef->siteRef->geoCity == \"Chicago\"",
    "equipRef->siteRef->geoCity == \"Hugo\"",
    "point and equipRef->ahu",
    "point and not equipRef->ahu",
    "equipRef->equipRef->equip",
    "equipRef->dis",
    "dis == \"Alpha\"",
    "dis > \"M\"",
    "dis < \"B\" and point",
    "area",
    "area > 100000ft²",
    "area > 100000",
    "geoElevation >= 0m",
    "tz == \"Denver\" or tz == \"Chicago\"",
    "hisMode",
    "point and (temp or humidity) and sensor",
    "(ahu or vav) and equip",
    "air and temp and sensor and not discharge",
    "his and not kind",
    "curVal",
    "enum and kind == \"Str\"",
    "point and (equipRef == @{equip} or siteRef == @nowhere)",
    "not siteRef",
    "zone and space",
    "spaceRef",
    "equip and not ahu and not vav",
];

/// The ids a corpus template refers to.
pub struct CorpusIds<'a> {
    pub site: &'a str,
    pub equip: &'a str,
    pub ahu: &'a str,
    pub point: &'a str,
    pub weather: &'a str,
}

/// A corpus template with its placeholders replaced.
pub fn fill(template: &str, ids: &CorpusIds<'_>) -> String {
    template
        .replace("{site}", ids.site)
        .replace("{equip}", ids.equip)
        .replace("{ahu}", ids.ahu)
        .replace("{point}", ids.point)
        .replace("{weather}", ids.weather)
}
