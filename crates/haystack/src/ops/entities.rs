//! The ops on entities: `read` (by filter or by id), `nav`, the watch ops and `commit`.

use crate::store::{CommitOp, EntityUpdate};
use crate::value::{Dict, Grid, Ref, Value};

use super::OpError;
use super::engine::{
    CallContext, Engine, filter_of, first_row, grid_of, lease_ms, limit_of, ref_of, seconds,
};

/// The ids of the `id` column (null cells skipped); every other cell must be a Ref.
fn ids_of(request: &Grid, max: usize) -> Result<Vec<Ref>, OpError> {
    if request.row_count() > max {
        return Err(OpError::new(format!(
            "at most {max} ids per request, got {}",
            request.row_count()
        )));
    }
    let mut ids = Vec::with_capacity(request.row_count());
    for i in 0..request.row_count() {
        match request.get(i, "id") {
            None | Some(Value::Null) => {}
            Some(value) => ids.push(ref_of(Some(value)).ok_or_else(|| {
                OpError::new(format!("row {i}: `id` must be a Ref, not {value:?}"))
            })?),
        }
    }
    Ok(ids)
}

/// Rows for ids read one by one: an all-null row for each unknown id, as `read` and
/// `watchSub` answer.
fn rows_by_id(found: Vec<Option<Dict>>) -> Result<Grid, OpError> {
    let any_found = found.iter().any(Option::is_some);
    let rows: Vec<Dict> = found.into_iter().map(Option::unwrap_or_default).collect();
    if !any_found && !rows.is_empty() {
        // No columns would hold no rows: keep an `id` column of nulls.
        let mut grid = Grid::with_column_names(["id"])
            .map_err(|e| OpError::new(format!("cannot build the response: {e}")))?;
        for _ in &rows {
            let _ = grid.push_row(vec![None]);
        }
        return Ok(grid);
    }
    grid_of(&rows)
}

fn incomplete(dis: String, limit: usize) -> Value {
    let mut d = Dict::new();
    let _ = d.insert("dis", Value::Str(dis));
    let _ = d.insert("limit", Value::number(limit as f64));
    Value::from(d)
}

impl Engine {
    pub(super) async fn read(&self, request: &Grid) -> Result<Grid, OpError> {
        if request.column_index("filter").is_some() {
            let row = first_row(request);
            let Some(filter) = filter_of(&row)? else {
                return Err(OpError::new("read: `filter` is null"));
            };
            let max = self.limits.max_read_rows;
            let asked = limit_of(&row)?;
            let take = asked.unwrap_or(usize::MAX).min(max.saturating_add(1));
            let mut rows = self.backend.read(&filter, Some(take)).await?;
            let cut = rows.len() > max;
            rows.truncate(max);
            let mut grid = grid_of(&rows)?;
            if cut {
                let _ = grid.meta.insert(
                    "incomplete",
                    incomplete(format!("read returns at most {max} rows"), max),
                );
            }
            return Ok(grid);
        }
        if request.column_index("id").is_some() {
            // Ids must be Refs here: a Str (`"@p1"`) is refused with an error grid rather
            // than read as a Ref, so that a client learns it encodes ids wrongly.
            if let Some(i) = (0..request.row_count())
                .find(|&i| matches!(request.get(i, "id"), Some(Value::Str(_))))
            {
                return Err(OpError::new(format!(
                    "read: the `id` column needs Refs, but row {i} holds a Str"
                )));
            }
            let ids = ids_of(request, self.limits.max_ids_per_request)?;
            // Null id cells still answer with a null row, in request order.
            let mut wanted: Vec<Option<Ref>> = Vec::with_capacity(request.row_count());
            for i in 0..request.row_count() {
                wanted.push(ref_of(request.get(i, "id")));
            }
            let found = self.backend.read_by_ids(&ids).await?;
            let mut found = found.into_iter();
            let rows: Vec<Option<Dict>> = wanted
                .iter()
                .map(|w| w.as_ref().and_then(|_| found.next().flatten()))
                .collect();
            return rows_by_id(rows);
        }
        Err(OpError::new(
            "read: the request needs a `filter` column or an `id` column",
        ))
    }

    pub(super) async fn nav(&self, request: &Grid) -> Result<Grid, OpError> {
        let row = first_row(request);
        let parent = match row.get("navId") {
            None | Some(Value::Null) => None,
            value => Some(ref_of(value).ok_or_else(|| {
                OpError::new("nav: `navId` must be a Ref (or a Str holding one)")
            })?),
        };
        let children = self
            .backend
            .nav_children(parent.as_ref().map(|r| r.id.as_str()))
            .await?;
        let rows: Vec<Dict> = children
            .into_iter()
            .map(|mut d| {
                let branch = ["site", "equip", "space"].iter().any(|t| d.contains(t));
                let nav_id = match (branch, d.get("id")) {
                    (true, Some(Value::Ref(r))) => Value::Ref(Ref::new(r.id.clone())),
                    _ => Value::Null,
                };
                let _ = d.insert("navId", nav_id);
                d
            })
            .collect();
        let mut grid = grid_of(&rows)?;
        if grid.columns().is_empty() {
            grid = Grid::with_column_names(["navId"])
                .map_err(|e| OpError::new(format!("cannot build the response: {e}")))?;
        }
        Ok(grid)
    }

    /// The shared watch store, for HTTP watches, when the backend keeps watches.
    fn shared_watches(&self, ctx: &CallContext) -> Option<&dyn crate::backends::SharedWatches> {
        if ctx.connection.is_some() {
            return None;
        }
        self.backend.shared_watches()
    }

    pub(super) async fn watch_sub(
        &self,
        ctx: &CallContext,
        request: &Grid,
    ) -> Result<Grid, OpError> {
        let ids = ids_of(request, self.limits.max_ids_per_request)?;
        let lease = lease_ms(request.meta.get("lease"))?;
        let names: Vec<String> = ids.iter().map(|r| r.id.clone()).collect();
        let requested = match request.meta.get("watchId") {
            Some(Value::Str(id)) => Some(id.clone()),
            None | Some(Value::Null) => None,
            Some(_) => return Err(OpError::new("watchSub: `watchId` must be a Str")),
        };
        let dis = match request.meta.get("watchDis") {
            Some(Value::Str(s)) => s.clone(),
            _ => String::new(),
        };
        let shared = match &requested {
            Some(id) => id
                .starts_with(crate::backends::SHARED_WATCH_PREFIX)
                .then(|| self.backend.shared_watches())
                .flatten(),
            None => self.shared_watches(ctx),
        };
        let (watch_id, lease) = match shared {
            Some(store) => {
                let limits = &self.limits.watches;
                let watch_id = match requested {
                    Some(id) => id,
                    None => {
                        let lease = lease
                            .unwrap_or(limits.default_lease_ms)
                            .clamp(limits.min_lease_ms, limits.max_lease_ms);
                        store
                            .open(&ctx.owner, &dis, lease, limits, ctx.now_ms)
                            .await?
                    }
                };
                let lease = store
                    .add(&watch_id, &ctx.owner, &names, limits, ctx.now_ms)
                    .await?;
                (watch_id, lease)
            }
            None => {
                let mut watches = self.watches();
                let watch_id = match requested {
                    Some(id) => id,
                    None => watches
                        .open(&ctx.owner, &dis, lease, ctx.connection, ctx.now_ms)
                        .map_err(|e| OpError::new(e.to_string()))?,
                };
                watches
                    .add(&watch_id, &ctx.owner, &names, ctx.now_ms)
                    .map_err(|e| OpError::new(e.to_string()))?;
                let lease = watches.get(&watch_id).map_or(0, |w| w.lease_ms);
                (watch_id, lease)
            }
        };
        let found = self.backend.read_by_ids(&ids).await?;
        let mut grid = rows_by_id(found)?;
        let _ = grid.meta.insert("watchId", Value::Str(watch_id));
        let _ = grid.meta.insert("lease", seconds(lease));
        Ok(grid)
    }

    /// The shared store of a watch id, when it is a shared watch.
    fn store_of(&self, watch_id: &str) -> Option<&dyn crate::backends::SharedWatches> {
        if watch_id.starts_with(crate::backends::SHARED_WATCH_PREFIX) {
            self.backend.shared_watches()
        } else {
            None
        }
    }

    pub(super) async fn watch_unsub(
        &self,
        ctx: &CallContext,
        request: &Grid,
    ) -> Result<Grid, OpError> {
        let Some(Value::Str(watch_id)) = request.meta.get("watchId") else {
            return Err(OpError::new(
                "watchUnsub: grid meta `watchId` must be a Str",
            ));
        };
        let close = request.meta.contains("close");
        let names: Vec<String> = if close {
            Vec::new()
        } else {
            ids_of(request, self.limits.max_ids_per_request)?
                .into_iter()
                .map(|r| r.id)
                .collect()
        };
        if let Some(store) = self.store_of(watch_id) {
            if close {
                store.close(watch_id, &ctx.owner).await?;
            } else {
                store
                    .remove(watch_id, &ctx.owner, &names, ctx.now_ms)
                    .await?;
            }
            return Ok(Grid::default());
        }
        let mut watches = self.watches();
        if close {
            watches.close(watch_id, &ctx.owner)
        } else {
            watches.remove(watch_id, &ctx.owner, &names, ctx.now_ms)
        }
        .map_err(|e| OpError::new(e.to_string()))?;
        Ok(Grid::default())
    }

    pub(super) async fn watch_poll(
        &self,
        ctx: &CallContext,
        request: &Grid,
    ) -> Result<Grid, OpError> {
        let Some(Value::Str(watch_id)) = request.meta.get("watchId") else {
            return Err(OpError::new("watchPoll: grid meta `watchId` must be a Str"));
        };
        let refresh = request.meta.contains("refresh");
        self.poll_watch(ctx, watch_id, refresh).await
    }

    /// The rows of a watch's changes (or of all its entities with `refresh`).
    pub(super) async fn poll_watch(
        &self,
        ctx: &CallContext,
        watch_id: &str,
        refresh: bool,
    ) -> Result<Grid, OpError> {
        let ids = match self.store_of(watch_id) {
            Some(store) => {
                store
                    .poll(watch_id, &ctx.owner, refresh, ctx.now_ms)
                    .await?
            }
            None => self
                .watches()
                .poll(watch_id, &ctx.owner, refresh, ctx.now_ms)
                .map_err(|e| OpError::new(e.to_string()))?,
        };
        let refs: Vec<Ref> = ids.into_iter().map(Ref::new).collect();
        let rows: Vec<Dict> = if refs.is_empty() {
            Vec::new()
        } else {
            self.backend
                .read_by_ids(&refs)
                .await?
                .into_iter()
                .flatten()
                .collect()
        };
        let mut grid = grid_of(&rows)?;
        let _ = grid.meta.insert("watchId", Value::Str(watch_id.to_owned()));
        Ok(grid)
    }

    /// The changes of a WebSocket connection's watch, for a push: `None` when there is
    /// nothing to say (no change, or the watch is gone).
    pub async fn push_changes(&self, ctx: &CallContext, watch_id: &str) -> Option<Grid> {
        match self.poll_watch(ctx, watch_id, false).await {
            Ok(grid) if grid.row_count() > 0 => Some(grid),
            Ok(_) | Err(_) => None,
        }
    }

    pub(super) async fn commit(&self, request: &Grid) -> Result<Grid, OpError> {
        let mode = match request.meta.get("commit") {
            Some(Value::Str(s)) => s.clone(),
            _ => {
                return Err(OpError::new(
                    "commit: grid meta `commit` must be \"add\", \"update\" or \"remove\"",
                ));
            }
        };
        if request.row_count() > self.limits.max_ids_per_request {
            return Err(OpError::new(format!(
                "commit: at most {} rows per request",
                self.limits.max_ids_per_request
            )));
        }
        let rows: Vec<Dict> = (0..request.row_count())
            .filter_map(|i| request.row_dict(i))
            .collect();
        let op = match mode.as_str() {
            "add" => CommitOp::Add(rows),
            "update" => CommitOp::Update(
                rows.into_iter()
                    .map(|diff| EntityUpdate {
                        diff,
                        expected_version: None,
                    })
                    .collect(),
            ),
            "remove" => CommitOp::Remove(
                ids_of(request, self.limits.max_ids_per_request)?
                    .into_iter()
                    .map(|r| (r, None))
                    .collect(),
            ),
            other => {
                return Err(OpError::new(format!(
                    "commit: unknown mode `{other}` (add, update or remove)"
                )));
            }
        };
        let out = self.backend.commit(op).await?;
        grid_of(&out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::auth::Role;
    use crate::backends::{Backend, MemoryBackend};
    use crate::codec::zinc;
    use crate::ops::{Limits, Op, ServerInfo, is_error_grid};
    use futures_util::FutureExt;

    const DATA: &str = "ver:\"3.0\"\nid,dis,site,equip,point,siteRef,equipRef,curVal\n\
        @s,\"S\",M,,,,,\n@e,\"E\",,M,,@s,,\n@p1,\"P1\",,,M,@s,@e,1\n@p2,\"P2\",,,M,@s,@e,2\n";

    fn setup() -> (Engine, Arc<MemoryBackend>) {
        let backend = Arc::new(MemoryBackend::new());
        backend
            .load_grid(&zinc::decode_grid(DATA).unwrap())
            .unwrap();
        let limits = Limits {
            max_read_rows: 1,
            ..Limits::default()
        };
        (
            Engine::new(backend.clone(), ServerInfo::default(), limits),
            backend,
        )
    }

    fn call(e: &Engine, op: Op, req: &str) -> Grid {
        let ctx = CallContext::user("ann", Role::Admin, 0);
        e.call(&ctx, op, &zinc::decode_grid(req).unwrap())
            .now_or_never()
            .unwrap()
    }

    #[test]
    fn read_by_filter_and_by_id() {
        let (e, _) = setup();
        let g = call(&e, Op::Read, "ver:\"3.0\"\nfilter,limit\n\"point\",1\n");
        assert_eq!(g.row_count(), 1);
        assert!(!g.meta.contains("incomplete"));
        let g = call(&e, Op::Read, "ver:\"3.0\"\nfilter\n\"point\"\n");
        assert_eq!(g.row_count(), 1, "cut to max_read_rows");
        assert!(g.meta.contains("incomplete"));
        let g = call(&e, Op::Read, "ver:\"3.0\"\nid\n@p2\n@nope\nN\n@s\n");
        assert_eq!(g.row_count(), 4);
        assert_eq!(g.get(0, "dis"), Some(&Value::Str("P2".into())));
        assert_eq!(g.row(1).map(|r| r.is_empty()), Some(true));
        assert_eq!(g.row(2).map(|r| r.is_empty()), Some(true));
        assert_eq!(g.get(3, "dis"), Some(&Value::Str("S".into())));
        let g = call(&e, Op::Read, "ver:\"3.0\"\nid\n@nope\n");
        assert_eq!(g.row_count(), 1);
        assert!(is_error_grid(&call(&e, Op::Read, "ver:\"3.0\"\nfoo\n1\n")));
        assert!(is_error_grid(&call(&e, Op::Read, "ver:\"3.0\"\nid\n1\n")));
        let str_id = call(&e, Op::Read, "ver:\"3.0\"\nid\n@p2\n\"@s\"\n");
        assert_eq!(
            str_id.meta.get("dis"),
            Some(&Value::Str(
                "read: the `id` column needs Refs, but row 1 holds a Str".into()
            ))
        );
        assert!(is_error_grid(&call(
            &e,
            Op::Read,
            "ver:\"3.0\"\nfilter\n\"((((\"\n"
        )));
    }

    #[test]
    fn nav_walks_site_equip_point() {
        let (e, _) = setup();
        let roots = call(&e, Op::Nav, "ver:\"3.0\"\nempty\n");
        assert_eq!(roots.row_count(), 1);
        assert_eq!(roots.get(0, "navId"), Some(&Value::Ref(Ref::new("s"))));
        let equips = call(&e, Op::Nav, "ver:\"3.0\"\nnavId\n@s\n");
        assert_eq!(equips.get(0, "navId"), Some(&Value::Ref(Ref::new("e"))));
        // haystack-py sends navId as a Str.
        let points = call(&e, Op::Nav, "ver:\"3.0\"\nnavId\n\"@e\"\n");
        assert_eq!(points.row_count(), 2);
        assert!(points.column_index("navId").is_some());
        assert_eq!(points.get(0, "navId"), None);
        let leaf = call(&e, Op::Nav, "ver:\"3.0\"\nnavId\n@p1\n");
        assert_eq!(leaf.row_count(), 0);
        let null_root = call(&e, Op::Nav, "ver:\"3.0\"\nnavId\nN\n");
        assert_eq!(null_root.row_count(), 1);
    }

    #[test]
    fn watches_report_changes_from_events() {
        let (e, backend) = setup();
        let mut rx = backend.subscribe();
        let sub = call(
            &e,
            Op::WatchSub,
            "ver:\"3.0\" watchDis:\"t\" lease:30s\nid\n@p1\n@p2\n@nope\n",
        );
        assert_eq!(sub.row_count(), 3);
        let Some(Value::Str(w)) = sub.meta.get("watchId").cloned() else {
            panic!("{sub:?}")
        };
        assert_eq!(
            sub.meta.get("lease"),
            Some(&Value::number_with_unit(30.0, "s"))
        );
        let poll = format!("ver:\"3.0\" watchId:\"{w}\"\nempty\n");
        assert_eq!(call(&e, Op::WatchPoll, &poll).row_count(), 0);
        let commit = "ver:\"3.0\" commit:\"update\"\nid,curVal\n@p2,5\n";
        assert_eq!(call(&e, Op::Commit, commit).row_count(), 1);
        let event = rx.try_recv().unwrap();
        assert_eq!(e.on_change(&event), vec![(w.clone(), None)]);
        let changed = call(&e, Op::WatchPoll, &poll);
        assert_eq!(changed.row_count(), 1);
        assert_eq!(changed.get(0, "curVal"), Some(&Value::number(5.0)));
        let refresh = format!("ver:\"3.0\" watchId:\"{w}\" refresh\nempty\n");
        assert_eq!(call(&e, Op::WatchPoll, &refresh).row_count(), 2);
        let unsub = format!("ver:\"3.0\" watchId:\"{w}\"\nid\n@p1\n");
        assert!(!is_error_grid(&call(&e, Op::WatchUnsub, &unsub)));
        assert_eq!(call(&e, Op::WatchPoll, &refresh).row_count(), 1);
        let add = format!("ver:\"3.0\" watchId:\"{w}\"\nid\n@s\n");
        assert_eq!(call(&e, Op::WatchSub, &add).row_count(), 1);
        assert_eq!(call(&e, Op::WatchPoll, &refresh).row_count(), 2);
        let close = format!("ver:\"3.0\" watchId:\"{w}\" close\nempty\n");
        assert!(!is_error_grid(&call(&e, Op::WatchUnsub, &close)));
        assert!(is_error_grid(&call(&e, Op::WatchPoll, &poll)));
        // Another user cannot poll someone's watch.
        let sub = call(&e, Op::WatchSub, "ver:\"3.0\" watchDis:\"t\"\nid\n@p1\n");
        let Some(Value::Str(w)) = sub.meta.get("watchId").cloned() else {
            panic!()
        };
        let bob = CallContext::user("bob", Role::Admin, 0);
        let req = zinc::decode_grid(&format!("ver:\"3.0\" watchId:\"{w}\"\nempty\n")).unwrap();
        let g = e.call(&bob, Op::WatchPoll, &req).now_or_never().unwrap();
        assert!(is_error_grid(&g));
    }

    #[test]
    fn commit_adds_updates_removes() {
        let (e, _) = setup();
        let add = call(
            &e,
            Op::Commit,
            "ver:\"3.0\" commit:\"add\"\nid,site\n@n,M\n",
        );
        assert_eq!(add.row_count(), 1);
        let dup = call(
            &e,
            Op::Commit,
            "ver:\"3.0\" commit:\"add\"\nid,site\n@n,M\n",
        );
        assert!(is_error_grid(&dup));
        let rm = call(&e, Op::Commit, "ver:\"3.0\" commit:\"remove\"\nid\n@n\n");
        assert_eq!(rm.row_count(), 1);
        assert!(is_error_grid(&call(
            &e,
            Op::Commit,
            "ver:\"3.0\" commit:\"zap\"\nid\n@n\n"
        )));
        let viewer = CallContext::user("v", Role::Viewer, 0);
        let req = zinc::decode_grid("ver:\"3.0\" commit:\"add\"\nid\n@x\n").unwrap();
        assert!(is_error_grid(
            &e.call(&viewer, Op::Commit, &req).now_or_never().unwrap()
        ));
    }
}
