//! What the remote backends share: the stored form of an entity, its index terms, the
//! pushdown plan of a filter, commit and point-write computation, and the codecs of
//! priority arrays and history samples.
//!
//! Both backends index an entity by *terms*: `h:TAG` for every non-null tag, and
//! `e:TAG=s:TEXT` / `e:TAG=r:ID` for string and ref values (every ref of a ref list too).
//! A filter becomes a [`Candidates`] expression over terms, which Redis answers with set
//! operations and PostgreSQL with array containment on a GIN index. Candidates are a
//! superset of the answer: the server then evaluates the whole filter on them (with
//! `->` paths resolved by further fetches), so results equal the in-memory store's.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use crate::codec::zinc;
use crate::filter::{CmpOp, Filter, RefResolver, instant_of};
use crate::store::{CommitOp, HisSample, StoreError, entity_id};
use crate::value::{DateTime, Dict, Number, Ref, Value};

use crate::store::{PriorityArray, PriorityEntry};

/// Longest string value indexed for equality; longer ones are found through `h:TAG` and
/// checked in the server.
pub const MAX_TERM_VALUE_BYTES: usize = 256;

/// Most rounds of fetching the targets of `->` paths while evaluating one read.
pub const MAX_PATH_ROUNDS: usize = 8;

/// An entity as a remote backend keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEntity {
    /// Insertion order (reads return entities in this order, as the memory store does).
    pub seq: i64,
    /// Bumped on every change (for `expected_version` checks).
    pub version: u64,
    /// The tags.
    pub dict: Dict,
}

/// Encodes an entity's tags as Zinc (`{...}`), the stored body.
pub fn encode_dict(dict: &Dict) -> String {
    zinc::encode_value(&Value::Dict(Box::new(dict.clone())))
}

/// Why a stored record (written by a backend, read back from the store) does not decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    /// The record is not valid Zinc.
    #[error("stored {what} does not decode: {error}")]
    Zinc {
        /// What the record holds (`entity`, `sample`).
        what: &'static str,
        /// The decoding error.
        error: crate::codec::DecodeError,
    },
    /// The record decodes but has the wrong shape.
    #[error("{0}")]
    Shape(&'static str),
}

/// Decodes a stored body.
pub fn decode_dict(text: &str) -> Result<Dict, RecordError> {
    match zinc::decode_value(text) {
        Ok(Value::Dict(d)) => Ok(*d),
        Ok(_) => Err(RecordError::Shape("stored entity is not a dict")),
        Err(error) => Err(RecordError::Zinc {
            what: "entity",
            error,
        }),
    }
}

impl StoredEntity {
    /// `SEQ VERSION {zinc}`: the Redis record.
    pub fn to_record(&self) -> String {
        format!("{} {} {}", self.seq, self.version, encode_dict(&self.dict))
    }

    /// Parses [`StoredEntity::to_record`].
    pub fn from_record(text: &str) -> Result<StoredEntity, RecordError> {
        let mut parts = text.splitn(3, ' ');
        let seq = parts.next().and_then(|s| s.parse().ok());
        let version = parts.next().and_then(|s| s.parse().ok());
        match (seq, version, parts.next()) {
            (Some(seq), Some(version), Some(body)) => Ok(StoredEntity {
                seq,
                version,
                dict: decode_dict(body)?,
            }),
            _ => Err(RecordError::Shape("stored entity record is malformed")),
        }
    }
}

/// The equality term of a tag's value, when the value kind is indexed.
fn eq_term(tag: &str, value: &Value) -> Option<String> {
    match value {
        Value::Str(s) if s.len() <= MAX_TERM_VALUE_BYTES => Some(format!("e:{tag}=s:{s}")),
        Value::Ref(r) => Some(format!("e:{tag}=r:{}", r.id)),
        _ => None,
    }
}

/// Every index term of an entity.
pub fn index_terms(dict: &Dict) -> Vec<String> {
    let mut terms = Vec::new();
    for (tag, value) in dict.iter() {
        if matches!(value, Value::Null) {
            continue;
        }
        terms.push(format!("h:{tag}"));
        match value {
            Value::List(items) => {
                for item in items {
                    if let Value::Ref(_) = item
                        && let Some(t) = eq_term(tag, item)
                    {
                        terms.push(t);
                    }
                }
            }
            other => terms.extend(eq_term(tag, other)),
        }
    }
    terms.sort();
    terms.dedup();
    terms
}

/// Which entities may match a filter, as an expression over index terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidates {
    /// Every entity (nothing to push down).
    All,
    /// Entities holding the term.
    Term(String),
    /// Entities in every set.
    And(Vec<Candidates>),
    /// Entities in any set.
    Or(Vec<Candidates>),
}

impl Candidates {
    /// The pushdown plan of a filter: exact for tag existence and string/ref equality on
    /// plain tags, the presence of the first tag for other comparisons and `->` paths,
    /// everything for `not`.
    pub fn of(filter: &Filter) -> Candidates {
        match filter {
            Filter::Has(path) => match path.segments().first() {
                Some(tag) => Candidates::Term(format!("h:{tag}")),
                None => Candidates::All,
            },
            Filter::Missing(_) => Candidates::All,
            Filter::Cmp { path, op, value } => {
                let segments = path.segments();
                let Some(first) = segments.first() else {
                    return Candidates::All;
                };
                if segments.len() == 1
                    && *op == CmpOp::Eq
                    && let Some(term) = eq_term(first, value)
                {
                    return Candidates::Term(term);
                }
                Candidates::Term(format!("h:{first}"))
            }
            Filter::And(items) => {
                let parts: Vec<Candidates> = items
                    .iter()
                    .map(Candidates::of)
                    .filter(|c| *c != Candidates::All)
                    .collect();
                match parts.len() {
                    0 => Candidates::All,
                    1 => parts.into_iter().next().unwrap_or(Candidates::All),
                    _ => Candidates::And(parts),
                }
            }
            Filter::Or(items) => {
                let parts: Vec<Candidates> = items.iter().map(Candidates::of).collect();
                if parts.is_empty() || parts.contains(&Candidates::All) {
                    Candidates::All
                } else if parts.len() == 1 {
                    parts.into_iter().next().unwrap_or(Candidates::All)
                } else {
                    Candidates::Or(parts)
                }
            }
        }
    }
}

/// Whether a filter follows `->` (needs other entities to evaluate).
pub fn has_paths(filter: &Filter) -> bool {
    match filter {
        Filter::Has(p) | Filter::Missing(p) | Filter::Cmp { path: p, .. } => p.segments().len() > 1,
        Filter::And(items) | Filter::Or(items) => items.iter().any(has_paths),
    }
}

/// A resolver over entities fetched so far that records the ids it was asked for and
/// did not have.
#[derive(Debug, Default)]
pub struct Prefetched {
    known: HashMap<String, Option<Dict>>,
    missing: RefCell<HashSet<String>>,
}

impl Prefetched {
    /// Adds fetched entities (`None`: the id is known not to exist).
    pub fn add(&mut self, id: String, dict: Option<Dict>) {
        self.known.insert(id, dict);
    }

    /// Ids asked for and not yet fetched (and forgets them).
    pub fn take_missing(&self) -> Vec<String> {
        self.missing.borrow_mut().drain().collect()
    }
}

impl RefResolver for Prefetched {
    fn resolve(&self, reference: &Ref) -> Option<&Dict> {
        match self.known.get(&reference.id) {
            Some(found) => found.as_ref(),
            None => {
                self.missing.borrow_mut().insert(reference.id.clone());
                None
            }
        }
    }
}

/// What a commit writes: new or changed entities (with the record they replace, for
/// compare-and-set) and removed ones.
#[derive(Debug, Default)]
pub struct CommitPlan {
    /// `(id, before, after)`: `before` is `None` for an added entity.
    pub writes: Vec<(String, Option<StoredEntity>, StoredEntity)>,
    /// `(id, before)` of removed entities.
    pub removes: Vec<(String, StoredEntity)>,
    /// The op's answer (resulting entities; for removes, the removed ones).
    pub out: Vec<Dict>,
}

impl CommitPlan {
    /// Ids the commit touches.
    pub fn ids(&self) -> Vec<String> {
        self.writes
            .iter()
            .map(|(id, _, _)| id.clone())
            .chain(self.removes.iter().map(|(id, _)| id.clone()))
            .collect()
    }
}

/// The ids a commit needs to read first.
pub fn commit_ids(op: &CommitOp) -> Result<Vec<String>, StoreError> {
    Ok(match op {
        CommitOp::Add(dicts) => dicts
            .iter()
            .map(|d| entity_id(d).map(str::to_owned))
            .collect::<Result<_, _>>()?,
        CommitOp::Update(updates) => updates
            .iter()
            .map(|u| entity_id(&u.diff).map(str::to_owned))
            .collect::<Result<_, _>>()?,
        CommitOp::Remove(ids) => ids.iter().map(|(r, _)| r.id.clone()).collect(),
    })
}

fn check_version(
    id: &str,
    current: &StoredEntity,
    expected: Option<u64>,
) -> Result<(), StoreError> {
    match expected {
        Some(expected) if expected != current.version => Err(StoreError::VersionConflict {
            id: id.to_owned(),
            expected,
            actual: current.version,
        }),
        _ => Ok(()),
    }
}

/// Computes a commit against the current entities (by id, `None` if absent), with the
/// same checks and results as the in-memory store: all entities are checked before
/// anything is written. `next_seq` numbers added entities.
pub fn plan_commit(
    op: CommitOp,
    current: &HashMap<String, Option<StoredEntity>>,
    mut next_seq: impl FnMut() -> i64,
) -> Result<CommitPlan, StoreError> {
    let get = |id: &str| current.get(id).and_then(Option::as_ref);
    let mut plan = CommitPlan::default();
    match op {
        CommitOp::Add(dicts) => {
            let mut seen = HashSet::new();
            for dict in &dicts {
                let id = entity_id(dict)?;
                if get(id).is_some() || !seen.insert(id.to_owned()) {
                    return Err(StoreError::DuplicateId(id.to_owned()));
                }
            }
            for dict in dicts {
                let id = entity_id(&dict)?.to_owned();
                let after = StoredEntity {
                    seq: next_seq(),
                    version: 1,
                    dict: dict.clone(),
                };
                plan.writes.push((id, None, after));
                plan.out.push(dict);
            }
        }
        CommitOp::Update(updates) => {
            let mut staged: HashMap<String, StoredEntity> = HashMap::new();
            for update in &updates {
                let id = entity_id(&update.diff)?;
                let current = get(id).ok_or_else(|| StoreError::UnknownId(id.to_owned()))?;
                check_version(id, current, update.expected_version)?;
            }
            let mut order = Vec::new();
            for update in updates {
                let id = entity_id(&update.diff)?.to_owned();
                let base = match staged.get(&id) {
                    Some(e) => e.clone(),
                    None => get(&id)
                        .cloned()
                        .ok_or_else(|| StoreError::UnknownId(id.clone()))?,
                };
                let mut after = base;
                for (tag, value) in update.diff.iter() {
                    if tag == "id" {
                        continue;
                    }
                    if matches!(value, Value::Remove) {
                        after.dict.remove(tag);
                    } else {
                        let _ = after.dict.insert(tag, value.clone());
                    }
                }
                after.version += 1;
                plan.out.push(after.dict.clone());
                if !staged.contains_key(&id) {
                    order.push(id.clone());
                }
                staged.insert(id, after);
            }
            for id in order {
                if let Some(after) = staged.remove(&id) {
                    let before = get(&id).cloned();
                    plan.writes.push((id, before, after));
                }
            }
        }
        CommitOp::Remove(ids) => {
            let mut seen = HashSet::new();
            for (id, expected) in &ids {
                if !seen.insert(id.id.as_str()) {
                    return Err(StoreError::UnknownId(id.id.clone()));
                }
                let current = get(&id.id).ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
                check_version(&id.id, current, *expected)?;
            }
            for (id, _) in ids {
                if let Some(before) = get(&id.id).cloned() {
                    plan.out.push(before.dict.clone());
                    plan.removes.push((id.id, before));
                }
            }
        }
    }
    Ok(plan)
}

/// A point write against a stored point and its array: the point with `writeVal` and
/// `writeLevel` set to the effective command (removed when no level is written).
pub fn apply_command(mut point: StoredEntity, array: &PriorityArray, now_ms: i64) -> StoredEntity {
    match array.effective(now_ms) {
        Some((level, val)) => {
            let _ = point.dict.insert("writeVal", val.clone());
            let _ = point
                .dict
                .insert("writeLevel", Value::Number(Number::new(f64::from(level))));
        }
        None => {
            point.dict.remove("writeVal");
            point.dict.remove("writeLevel");
        }
    }
    point.version += 1;
    point
}

/// The earliest time a level of the array lapses, if any level is timed.
pub fn next_expiry(array: &PriorityArray) -> Option<i64> {
    array.entries().filter_map(|(_, e)| e.expires_ms).min()
}

/// A priority array as a Zinc list of `{level val who expires}` dicts.
pub fn encode_array(array: &PriorityArray) -> String {
    let items = array
        .entries()
        .map(|(level, entry)| {
            let mut d = Dict::new();
            let _ = d.insert("level", Value::Number(Number::new(f64::from(level))));
            let _ = d.insert("val", entry.val.clone());
            let _ = d.insert("who", Value::Str(entry.who.clone()));
            if let Some(ms) = entry.expires_ms {
                // Milliseconds as a string: exact for any i64.
                let _ = d.insert("expires", Value::Str(ms.to_string()));
            }
            Value::Dict(Box::new(d))
        })
        .collect();
    zinc::encode_value(&Value::List(items))
}

/// Decodes [`encode_array`].
pub fn decode_array(text: &str) -> Result<PriorityArray, RecordError> {
    let Ok(Value::List(items)) = zinc::decode_value(text) else {
        return Err(RecordError::Shape("stored priority array does not decode"));
    };
    let mut array = PriorityArray::new();
    for item in items {
        let Value::Dict(d) = item else {
            return Err(RecordError::Shape("stored priority level is not a dict"));
        };
        let level = match d.get("level") {
            Some(Value::Number(n)) if (1.0..=17.0).contains(&n.value) => n.value as u8,
            _ => return Err(RecordError::Shape("stored priority level has no level")),
        };
        let who = match d.get("who") {
            Some(Value::Str(s)) => s.clone(),
            _ => String::new(),
        };
        let expires_ms = match d.get("expires") {
            Some(Value::Str(s)) => s.parse().ok(),
            _ => None,
        };
        let val = d.get("val").cloned().unwrap_or(Value::Null);
        array.set(
            level,
            Some(PriorityEntry {
                val,
                who,
                expires_ms,
            }),
        );
    }
    Ok(array)
}

/// The absolute instant of a timestamp as a fixed-width key that sorts like the instant
/// (seconds offset by 2^40 so that dates before 1970 stay positive, then nanoseconds).
pub fn instant_key(ts: &DateTime) -> String {
    let (secs, nanos) = instant_of(ts);
    format!("{:014}{:09}", secs.saturating_add(1 << 40), nanos)
}

/// Milliseconds since the epoch of a timestamp (the Redis score, the PostgreSQL bound).
pub fn instant_ms(ts: &DateTime) -> i64 {
    let (secs, nanos) = instant_of(ts);
    secs.saturating_mul(1000)
        .saturating_add(i64::from(nanos / 1_000_000))
}

/// Microseconds since the epoch and the nanoseconds below them.
pub fn instant_us(ts: &DateTime) -> (i64, i32) {
    let (secs, nanos) = instant_of(ts);
    let us = secs
        .saturating_mul(1_000_000)
        .saturating_add(i64::from(nanos / 1000));
    (us, (nanos % 1000) as i32)
}

/// A sample as the Zinc list `[TS, VALUE]` (exact, with the timezone name).
pub fn encode_sample(sample: &HisSample) -> String {
    zinc::encode_value(&Value::List(vec![
        Value::DateTime(Box::new(sample.ts.clone())),
        sample.value.clone(),
    ]))
}

/// Decodes [`encode_sample`].
pub fn decode_sample(text: &str) -> Result<HisSample, RecordError> {
    match zinc::decode_value(text) {
        Ok(Value::List(items)) => match <[Value; 2]>::try_from(items) {
            Ok([Value::DateTime(ts), value]) => Ok(HisSample { ts: *ts, value }),
            _ => Err(RecordError::Shape(
                "stored sample is not [timestamp, value]",
            )),
        },
        Ok(_) => Err(RecordError::Shape("stored sample is not a list")),
        Err(error) => Err(RecordError::Zinc {
            what: "sample",
            error,
        }),
    }
}

/// The timezone check of `hisWrite`: the point must exist and be historized, and samples
/// that carry a timezone name must carry the point's.
pub fn check_his_write(
    id: &Ref,
    point: Option<&StoredEntity>,
    samples: &[HisSample],
) -> Result<(), StoreError> {
    let point = point.ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
    if !point.dict.contains("his") {
        return Err(StoreError::NotHistorized(id.id.clone()));
    }
    if let Some(Value::Str(expected)) = point.dict.get("tz") {
        for sample in samples {
            if let Some(found) = &sample.ts.tz
                && found != expected
            {
                return Err(crate::store::HistoryError::TimezoneMismatch {
                    expected: expected.clone(),
                    found: found.clone(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// A change notification between processes: `ORIGIN VERSION id,id,...`.
pub fn encode_change(origin: &str, version: u64, ids: &[String]) -> String {
    format!("{origin} {version} {}", ids.join(","))
}

/// Parses [`encode_change`]: the origin and the ids.
pub fn decode_change(text: &str) -> Option<(String, Vec<String>)> {
    let mut parts = text.splitn(3, ' ');
    let origin = parts.next()?.to_owned();
    let _version: u64 = parts.next()?.parse().ok()?;
    let ids = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    Some((origin, ids))
}

/// Splits ids into notification payloads of at most `max_bytes` each.
pub fn change_batches(ids: &[String], max_bytes: usize) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut size = 0;
    for id in ids {
        if out.is_empty() || size + id.len() + 1 > max_bytes {
            out.push(Vec::new());
            size = 0;
        }
        size += id.len() + 1;
        if let Some(last) = out.last_mut() {
            last.push(id.clone());
        }
    }
    out
}

/// A new id for a watch shared through a remote backend (the shared prefix, then a random
/// part, so ids made by different processes do not collide).
pub fn shared_watch_id() -> String {
    format!("{}{}", super::SHARED_WATCH_PREFIX, origin_id())
}

/// A random identifier of this process's backend (to skip its own notifications).
pub fn origin_id() -> String {
    let mut bytes = [0u8; 8];
    // Without OS randomness the pid and the time still tell processes apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ u64::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::parse;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the store holds, the decoders answer without panicking, and a record
        /// that decodes encodes back to one that decodes the same.
        #[test]
        fn stored_text_decodes_or_fails_cleanly(text in "\\PC{0,200}") {
            if let Ok(e) = StoredEntity::from_record(&text) {
                prop_assert_eq!(StoredEntity::from_record(&e.to_record()), Ok(e));
            }
            if let Ok(a) = decode_array(&text) {
                prop_assert_eq!(decode_array(&encode_array(&a)), Ok(a));
            }
            let _ = decode_sample(&text);
            let _ = decode_change(&text);
        }

        /// Records of arbitrary string tags round-trip.
        #[test]
        fn records_round_trip(seq in any::<i64>(), version in any::<u64>(), dis in "\\PC{0,40}") {
            let mut dict = Dict::new();
            let _ = dict.insert("id", Value::Ref(Ref::new("a")));
            let _ = dict.insert("dis", Value::Str(dis));
            let e = StoredEntity { seq, version, dict };
            prop_assert_eq!(StoredEntity::from_record(&e.to_record()), Ok(e));
        }
    }

    #[test]
    fn plans_push_down_existence_and_equality() {
        let plan = |s: &str| Candidates::of(&parse(s).unwrap());
        assert_eq!(plan("site"), Candidates::Term("h:site".into()));
        assert_eq!(
            plan("point and siteRef==@s"),
            Candidates::And(vec![
                Candidates::Term("h:point".into()),
                Candidates::Term("e:siteRef=r:s".into())
            ])
        );
        assert_eq!(plan("dis==\"A\""), Candidates::Term("e:dis=s:A".into()));
        assert_eq!(plan("curVal > 3"), Candidates::Term("h:curVal".into()));
        assert_eq!(
            plan("equipRef->siteRef"),
            Candidates::Term("h:equipRef".into())
        );
        assert_eq!(plan("not point"), Candidates::All);
        assert_eq!(plan("point or not site"), Candidates::All);
        assert!(has_paths(&parse("point and equipRef->dis").unwrap()));
    }

    #[test]
    fn records_and_arrays_round_trip() {
        let dict = match zinc::decode_value("{id:@a dis:\"x y\" n:3.5kW refs:[@b,@c]}").unwrap() {
            Value::Dict(d) => *d,
            _ => unreachable!(),
        };
        let e = StoredEntity {
            seq: 7,
            version: 3,
            dict: dict.clone(),
        };
        assert_eq!(StoredEntity::from_record(&e.to_record()), Ok(e));
        let terms = index_terms(&dict);
        assert!(terms.contains(&"e:refs=r:b".to_owned()));
        assert!(terms.contains(&"e:dis=s:x y".to_owned()));
        let mut array = PriorityArray::new();
        array.set(
            8,
            Some(PriorityEntry {
                val: Value::number(72.0),
                who: "ann".into(),
                expires_ms: Some(1_700_000_000_123),
            }),
        );
        assert_eq!(decode_array(&encode_array(&array)), Ok(array.clone()));
        assert_eq!(next_expiry(&array), Some(1_700_000_000_123));
        let (origin, ids) =
            decode_change(&encode_change("o1", 4, &["a".into(), "b".into()])).unwrap();
        assert_eq!((origin.as_str(), ids.len()), ("o1", 2));
        assert_eq!(
            change_batches(&["aaaa".into(), "bbbb".into(), "c".into()], 9),
            vec![
                vec!["aaaa".to_owned()],
                vec!["bbbb".to_owned(), "c".to_owned()]
            ]
        );
    }
}
