//! Request grids of the standard ops (Haystack 4 "Ops" chapter), and the reading of a
//! response grid: everything a client sends and checks, without any I/O, so that the HTTP
//! and WebSocket clients (and tests) share it.

use crate::value::{DateTime, Dict, Grid, GridError, Number, Ref, Value};

use super::error::ClientError;

/// One row, one column per tag: the request grid of ops that take a single dict.
fn one_row(tags: &[(&str, Value)]) -> Result<Grid, GridError> {
    let mut grid = Grid::with_column_names(tags.iter().map(|(name, _)| *name))?;
    grid.push_row(tags.iter().map(|(_, value)| Some(value.clone())).collect())?;
    Ok(grid)
}

/// A grid with one `id` column and a row per id.
fn id_rows(ids: &[Ref]) -> Result<Grid, GridError> {
    let mut grid = Grid::with_column_names(["id"])?;
    for id in ids {
        grid.push_row(vec![Some(Value::Ref(id.clone()))])?;
    }
    Ok(grid)
}

/// The empty request grid of `about`, `ops`, `filetypes`, `close` ...
pub fn empty() -> Grid {
    Grid::default()
}

/// `read` by filter, with an optional limit.
pub fn read_filter(filter: &str, limit: Option<usize>) -> Result<Grid, GridError> {
    let mut tags = vec![("filter", Value::Str(filter.to_owned()))];
    if let Some(limit) = limit {
        tags.push(("limit", Value::Number(Number::new(limit as f64))));
    }
    one_row(&tags)
}

/// `read` by ids (unknown ids come back as rows of nulls).
pub fn read_ids(ids: &[Ref]) -> Result<Grid, GridError> {
    id_rows(ids)
}

/// `nav`: the children of `nav_id`, or the roots without one.
pub fn nav(nav_id: Option<&Ref>) -> Result<Grid, GridError> {
    match nav_id {
        Some(id) => one_row(&[("navId", Value::Ref(id.clone()))]),
        None => Ok(empty()),
    }
}

/// `defs`, `libs` and the like: an optional filter and limit.
pub fn filtered(filter: Option<&str>, limit: Option<usize>) -> Result<Grid, GridError> {
    let mut tags = Vec::new();
    if let Some(filter) = filter {
        tags.push(("filter", Value::Str(filter.to_owned())));
    }
    if let Some(limit) = limit {
        tags.push(("limit", Value::Number(Number::new(limit as f64))));
    }
    if tags.is_empty() {
        return Ok(empty());
    }
    one_row(&tags)
}

/// `watchSub`: a new watch (`dis` given) or more ids for an existing one (`watch_id`).
pub fn watch_sub(
    watch_id: Option<&str>,
    dis: Option<&str>,
    lease_seconds: Option<f64>,
    ids: &[Ref],
) -> Result<Grid, GridError> {
    let mut grid = id_rows(ids)?;
    if let Some(watch_id) = watch_id {
        insert_meta(&mut grid.meta, "watchId", Value::Str(watch_id.to_owned()))?;
    }
    if let Some(dis) = dis {
        insert_meta(&mut grid.meta, "watchDis", Value::Str(dis.to_owned()))?;
    }
    if let Some(lease) = lease_seconds {
        let mut lease = Number::new(lease);
        lease.unit = Some("s".to_owned());
        insert_meta(&mut grid.meta, "lease", Value::Number(lease))?;
    }
    Ok(grid)
}

/// `watchUnsub`: some ids, or the whole watch with `close`.
pub fn watch_unsub(watch_id: &str, ids: &[Ref], close: bool) -> Result<Grid, GridError> {
    let mut grid = id_rows(ids)?;
    insert_meta(&mut grid.meta, "watchId", Value::Str(watch_id.to_owned()))?;
    if close {
        insert_meta(&mut grid.meta, "close", Value::Marker)?;
    }
    Ok(grid)
}

/// `watchPoll`: changes since the last poll, or everything with `refresh`.
pub fn watch_poll(watch_id: &str, refresh: bool) -> Result<Grid, GridError> {
    let mut grid = empty();
    insert_meta(&mut grid.meta, "watchId", Value::Str(watch_id.to_owned()))?;
    if refresh {
        insert_meta(&mut grid.meta, "refresh", Value::Marker)?;
    }
    Ok(grid)
}

fn insert_meta(meta: &mut Dict, name: &'static str, value: Value) -> Result<(), GridError> {
    meta.insert(name, value)?;
    Ok(())
}

/// `pointWrite` of `value` (null releases the level) at `level` 1..=17.
pub fn point_write(
    id: &Ref,
    level: u8,
    value: Value,
    who: Option<&str>,
    duration: Option<Number>,
) -> Result<Grid, GridError> {
    let mut tags = vec![
        ("id", Value::Ref(id.clone())),
        ("level", Value::Number(Number::new(f64::from(level)))),
        ("val", value),
    ];
    if let Some(who) = who {
        tags.push(("who", Value::Str(who.to_owned())));
    }
    if let Some(duration) = duration {
        tags.push(("duration", Value::Number(duration)));
    }
    one_row(&tags)
}

/// `pointWrite` with only an id: reads the point's priority array.
pub fn point_write_array(id: &Ref) -> Result<Grid, GridError> {
    one_row(&[("id", Value::Ref(id.clone()))])
}

/// `hisRead` of one point over `range`: `today`, `yesterday`, a date `2024-01-01`, two dates
/// `2024-01-01,2024-01-31`, a datetime, or two datetimes, in the Zinc forms the spec lists.
pub fn his_read(id: &Ref, range: &str) -> Result<Grid, GridError> {
    one_row(&[
        ("id", Value::Ref(id.clone())),
        ("range", Value::Str(range.to_owned())),
    ])
}

/// `hisRead` of one point over `range` folded into buckets of `interval` (a Number with a
/// duration unit, e.g. `15min`) with `fold` (`avg`, `min`, `max`, `sum`, `count`, `first`,
/// `last`): buildwire's rollup extension of `hisRead`.
pub fn his_rollup(id: &Ref, range: &str, interval: Value, fold: &str) -> Result<Grid, GridError> {
    one_row(&[
        ("id", Value::Ref(id.clone())),
        ("range", Value::Str(range.to_owned())),
        ("interval", interval),
        ("fold", Value::Str(fold.to_owned())),
    ])
}

/// `hisWrite` of timestamped values to one point.
pub fn his_write(id: &Ref, samples: &[(DateTime, Value)]) -> Result<Grid, GridError> {
    let mut grid = Grid::with_column_names(["ts", "val"])?;
    insert_meta(&mut grid.meta, "id", Value::Ref(id.clone()))?;
    for (ts, val) in samples {
        grid.push_row(vec![
            Some(Value::DateTime(Box::new(ts.clone()))),
            Some(val.clone()),
        ])?;
    }
    Ok(grid)
}

/// `invokeAction`: `action` on entity `id` with arguments.
pub fn invoke_action(id: &Ref, action: &str, args: &Dict) -> Result<Grid, GridError> {
    let mut columns: Vec<&str> = args.iter().map(|(name, _)| name).collect();
    if columns.is_empty() {
        columns.push("empty");
    }
    let mut grid = Grid::with_column_names(columns.iter().copied())?;
    insert_meta(&mut grid.meta, "id", Value::Ref(id.clone()))?;
    insert_meta(&mut grid.meta, "action", Value::Str(action.to_owned()))?;
    if !args.is_empty() {
        grid.push_row(args.iter().map(|(_, value)| Some(value.clone())).collect())?;
    }
    Ok(grid)
}

/// A response grid as the caller's result: an error grid (meta `err`) becomes
/// [`ClientError::Server`] with its `dis` and `errTrace`.
pub fn check_response(grid: Grid) -> Result<Grid, ClientError> {
    if grid.meta.contains("err") {
        let text = |name: &str| match grid.meta.get(name) {
            Some(Value::Str(text)) => Some(text.clone()),
            _ => None,
        };
        return Err(ClientError::Server {
            dis: text("dis").unwrap_or_else(|| "error grid without dis".to_owned()),
            trace: text("errTrace"),
        });
    }
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;

    #[test]
    fn read_by_filter_encodes_as_the_spec_example() {
        let grid = read_filter("site", Some(10)).unwrap();
        assert_eq!(
            zinc::encode_grid(&grid),
            "ver:\"3.0\"\nfilter,limit\n\"site\",10\n"
        );
    }

    #[test]
    fn watch_requests_carry_their_meta() {
        let sub = watch_sub(
            None,
            Some("app"),
            Some(60.0),
            &[Ref::new("a"), Ref::new("b")],
        )
        .unwrap();
        let text = zinc::encode_grid(&sub);
        assert!(
            text.starts_with("ver:\"3.0\" watchDis:\"app\" lease:60s\nid\n@a\n@b\n"),
            "{text}"
        );
        let poll = watch_poll("w-1", true).unwrap();
        assert_eq!(
            zinc::encode_grid(&poll),
            "ver:\"3.0\" watchId:\"w-1\" refresh\nempty\n"
        );
        let unsub = watch_unsub("w-1", &[], true).unwrap();
        assert!(zinc::encode_grid(&unsub).starts_with("ver:\"3.0\" watchId:\"w-1\" close\n"));
    }

    #[test]
    fn point_write_and_his_write_rows() {
        let grid = point_write(
            &Ref::new("p"),
            8,
            Value::Number(Number::new(72.5)),
            Some("me"),
            None,
        )
        .unwrap();
        assert_eq!(
            zinc::encode_grid(&grid),
            "ver:\"3.0\"\nid,level,val,who\n@p,8,72.5,\"me\"\n"
        );
        let ts = zinc::decode_value("2024-01-01T00:00:00Z UTC").unwrap();
        let Value::DateTime(ts) = ts else { panic!() };
        let grid = his_write(&Ref::new("p"), &[(*ts, Value::Bool(true))]).unwrap();
        assert_eq!(
            zinc::encode_grid(&grid),
            "ver:\"3.0\" id:@p\nts,val\n2024-01-01T00:00:00Z UTC,T\n"
        );
    }

    #[test]
    fn error_grids_become_server_errors() {
        let grid =
            zinc::decode_grid("ver:\"3.0\" err dis:\"bad filter\" errTrace:\"at 1\"\nempty\n")
                .unwrap();
        match check_response(grid) {
            Err(ClientError::Server { dis, trace }) => {
                assert_eq!(dis, "bad filter");
                assert_eq!(trace.as_deref(), Some("at 1"));
            }
            other => panic!("{other:?}"),
        }
        assert!(check_response(empty()).is_ok());
    }
}
