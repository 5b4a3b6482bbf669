//! The `pointWrite` op: its request forms and the priority array's response grid (the
//! array itself is [`crate::store::PriorityArray`]).

use crate::store::{LEVELS, PriorityArray, PriorityEntry, TIMED_LEVEL, level_dis};
use crate::value::{Dict, Grid, Number, Value};

use super::OpError;
use super::engine::{CallContext, Engine};
use super::time::datetime_at;

impl PriorityArray {
    /// The `pointWrite` read response: a row per level with `level`, `levelDis`, `val`,
    /// `who` and, for a timed level, `expires` (in zone `tz`).
    pub fn to_grid(&self, now_ms: i64, tz: &str) -> Grid {
        let mut grid = match Grid::with_column_names(["level", "levelDis", "val", "who", "expires"])
        {
            Ok(g) => g,
            Err(_) => return Grid::default(),
        };
        for level in 1..=LEVELS {
            let entry = self.get(level, now_ms);
            let _ = grid.push_row(vec![
                Some(Value::Number(Number::new(f64::from(level)))),
                Some(Value::Str(level_dis(level))),
                entry.map(|e| e.val.clone()),
                entry.map(|e| Value::Str(e.who.clone())),
                entry
                    .and_then(|e| e.expires_ms)
                    .and_then(|ms| datetime_at(ms, tz))
                    .map(Value::from),
            ]);
        }
        grid
    }
}

/// A parsed `pointWrite` request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PointWriteRequest {
    /// Read the array.
    Read(crate::value::Ref),
    /// Write (`val` not null) or release a level.
    Write {
        id: crate::value::Ref,
        level: u8,
        val: Option<Value>,
        who: Option<String>,
        duration_ms: Option<i64>,
    },
}

/// Whether the request writes a level (it has a non-null `level` cell).
pub(crate) fn is_write_request(request: &Grid) -> bool {
    request
        .row_dict(0)
        .is_some_and(|row| !matches!(row.get("level"), None | Some(Value::Null)))
}

/// Longest timed override accepted: one year.
const MAX_DURATION_MS: i64 = 366 * 24 * 3600 * 1000;

/// A duration Number in milliseconds: units `ms`, `s`/`sec`, `min`, `h`/`hr`, `day`;
/// unitless means seconds.
pub(crate) fn duration_ms(number: &Number) -> Option<i64> {
    let factor = match number.unit.as_deref() {
        None | Some("s" | "sec") => 1000.0,
        Some("ms") => 1.0,
        Some("min") => 60_000.0,
        Some("h" | "hr") => 3_600_000.0,
        Some("day") => 86_400_000.0,
        Some(_) => return None,
    };
    let ms = number.value * factor;
    (0.0..=1e15).contains(&ms).then(|| ms.round() as i64)
}

impl PointWriteRequest {
    pub(crate) fn parse(request: &Grid) -> Result<Self, OpError> {
        if request.row_count() != 1 {
            return Err(OpError::new(
                "pointWrite takes one row: id, and level, val, who, duration to write",
            ));
        }
        let row: Dict = request.row_dict(0).unwrap_or_default();
        let id = match row.get("id") {
            Some(Value::Ref(r)) => r.clone(),
            _ => return Err(OpError::new("pointWrite: `id` must be a Ref")),
        };
        let level = match row.get("level") {
            None | Some(Value::Null) => return Ok(PointWriteRequest::Read(id)),
            Some(Value::Number(n))
                if n.value.fract() == 0.0 && (1.0..=f64::from(LEVELS)).contains(&n.value) =>
            {
                n.value as u8
            }
            Some(other) => {
                return Err(OpError::new(format!(
                    "pointWrite: `level` must be a whole Number from 1 to 17, not {other:?}"
                )));
            }
        };
        let val = match row.get("val") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.clone()),
        };
        let who = match row.get("who") {
            Some(Value::Str(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let duration_ms = match row.get("duration") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => {
                let ms = duration_ms(n)
                    .filter(|&ms| ms > 0 && ms <= MAX_DURATION_MS)
                    .ok_or_else(|| {
                        OpError::new(
                            "pointWrite: `duration` must be a positive duration up to a year",
                        )
                    })?;
                if level != TIMED_LEVEL {
                    return Err(OpError::new(
                        "pointWrite: `duration` applies to level 8 only",
                    ));
                }
                Some(ms)
            }
            Some(_) => return Err(OpError::new("pointWrite: `duration` must be a Number")),
        };
        Ok(PointWriteRequest::Write {
            id,
            level,
            val,
            who,
            duration_ms,
        })
    }
}

/// Whether a value fits a point's `kind` (`Number`, `Bool`, `Str`; others unchecked).
fn fits_kind(kind: Option<&Value>, val: &Value) -> bool {
    match kind {
        Some(Value::Str(k)) if k == "Number" => matches!(val, Value::Number(_)),
        Some(Value::Str(k)) if k == "Bool" => matches!(val, Value::Bool(_)),
        Some(Value::Str(k)) if k == "Str" => matches!(val, Value::Str(_)),
        _ => true,
    }
}

impl Engine {
    pub(super) async fn point_write(
        &self,
        ctx: &CallContext,
        request: &Grid,
    ) -> Result<Grid, OpError> {
        let parsed = PointWriteRequest::parse(request)?;
        let id = match &parsed {
            PointWriteRequest::Read(id) | PointWriteRequest::Write { id, .. } => id.clone(),
        };
        let point = self.entity(&id, "pointWrite").await?;
        if !point.contains("point") || !point.contains("writable") {
            return Err(OpError::new(format!(
                "pointWrite: @{} is not a writable point",
                id.id
            )));
        }
        let tz = match point.get("tz") {
            Some(Value::Str(tz)) => tz.clone(),
            _ => self.info.tz.clone(),
        };
        match parsed {
            PointWriteRequest::Read(_) => {
                let array = self.backend.priority_array(&id).await?;
                Ok(array.to_grid(ctx.now_ms, &tz))
            }
            PointWriteRequest::Write {
                level,
                val,
                who,
                duration_ms,
                ..
            } => {
                if let Some(val) = &val
                    && !fits_kind(point.get("kind"), val)
                {
                    return Err(OpError::new(format!(
                        "pointWrite: {val:?} does not fit the point's kind {:?}",
                        point.get("kind")
                    )));
                }
                let entry = val.map(|val| PriorityEntry {
                    val,
                    who: who
                        .or_else(|| ctx.user.clone())
                        .unwrap_or_else(|| ctx.owner.clone()),
                    expires_ms: duration_ms.map(|d| ctx.now_ms.saturating_add(d)),
                });
                self.backend
                    .point_write(&id, level, entry, ctx.now_ms)
                    .await?;
                Ok(Grid::default())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;

    #[test]
    fn read_grid_has_seventeen_levels() {
        let mut a = PriorityArray::new();
        let emergency = PriorityEntry {
            val: Value::number(5.0),
            who: "t".into(),
            expires_ms: None,
        };
        a.set(1, Some(emergency));
        let g = a.to_grid(0, "UTC");
        assert_eq!(g.row_count(), 17);
        assert_eq!(g.get(0, "levelDis"), Some(&Value::Str("Emergency".into())));
        assert_eq!(g.get(0, "val"), Some(&Value::number(5.0)));
        assert_eq!(g.get(16, "val"), None);
    }

    #[test]
    fn requests_parse_with_their_limits() {
        let parse = |z: &str| PointWriteRequest::parse(&zinc::decode_grid(z).unwrap());
        assert!(matches!(
            parse("ver:\"3.0\"\nid\n@p\n"),
            Ok(PointWriteRequest::Read(_))
        ));
        match parse("ver:\"3.0\"\nid,level,val,who,duration\n@p,8,72,\"me\",30min\n") {
            Ok(PointWriteRequest::Write {
                level: 8,
                val: Some(_),
                who: Some(who),
                duration_ms: Some(1_800_000),
                ..
            }) => assert_eq!(who, "me"),
            other => panic!("{other:?}"),
        }
        assert!(parse("ver:\"3.0\"\nid,level,val\n@p,18,1\n").is_err());
        assert!(parse("ver:\"3.0\"\nid,level,val\n@p,1.5,1\n").is_err());
        assert!(parse("ver:\"3.0\"\nid,level,val,duration\n@p,9,1,1h\n").is_err());
        assert!(parse("ver:\"3.0\"\nid,level,val,duration\n@p,8,1,1parsec\n").is_err());
        assert!(parse("ver:\"3.0\"\nid,level\n\"p\",8\n").is_err());
        assert!(is_write_request(
            &zinc::decode_grid("ver:\"3.0\"\nid,level\n@p,8\n").unwrap()
        ));
        assert!(!is_write_request(
            &zinc::decode_grid("ver:\"3.0\"\nid,level\n@p,N\n").unwrap()
        ));
    }
}
