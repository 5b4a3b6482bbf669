//! [`Engine`]: runs one op — the caller's role checked, the request grid read, the backend
//! asked, the response grid built — and the ops that need no storage: `about`, `close`,
//! `defs`, `libs`, `ops`, `filetypes`, `formats` and `invokeAction`.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::auth::{AuthServer, Role};
use crate::defs;
use crate::filter::{self, NoRefs};
use crate::value::{Dict, Grid, Number, Ref, Value};

use super::action::{self, ActionRegistry, NoActions};
use super::cache::ResponseCache;
use super::format::WireFormat;
use super::time::datetime_at;
use super::watch::WatchRegistry;
use super::{Op, OpError, error_grid};
use crate::backends::WatchLimits;
use crate::backends::{Backend, ChangeEvent};

/// What `about` says of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// `serverName`.
    pub server_name: String,
    /// `productName`.
    pub product_name: String,
    /// `productUri`.
    pub product_uri: String,
    /// `productVersion`.
    pub product_version: String,
    /// `vendorName`.
    pub vendor_name: String,
    /// `vendorUri`.
    pub vendor_uri: String,
    /// The server's default timezone (`tz`), a Haystack timezone name.
    pub tz: String,
    /// When the server started (UTC milliseconds): `serverBootTime`.
    pub boot_ms: i64,
}

impl Default for ServerInfo {
    fn default() -> Self {
        Self {
            server_name: "buildwire".to_owned(),
            product_name: "buildwire".to_owned(),
            product_uri: "https://example.invalid/buildwire".to_owned(),
            product_version: env!("CARGO_PKG_VERSION").to_owned(),
            vendor_name: "buildwire".to_owned(),
            vendor_uri: "https://example.invalid/buildwire".to_owned(),
            tz: "UTC".to_owned(),
            boot_ms: 0,
        }
    }
}

/// Bounds on what one request may ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body (HTTP) or message (WebSocket), in bytes.
    pub max_body_bytes: usize,
    /// Most rows a filter `read` returns; more are cut and the grid marked `incomplete`.
    pub max_read_rows: usize,
    /// Most ids in one `read`, `watchSub` or `watchUnsub` request.
    pub max_ids_per_request: usize,
    /// Most samples one `hisRead` returns (per point); more are cut and marked `incomplete`.
    pub max_his_rows: usize,
    /// Most points in one batch `hisRead` or `hisWrite`.
    pub max_his_points: usize,
    /// Watch limits (watches per owner, ids per watch, leases).
    pub watches: WatchLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 16 * 1024 * 1024,
            max_read_rows: 100_000,
            max_ids_per_request: 10_000,
            max_his_rows: 1_000_000,
            max_his_points: 100,
            watches: WatchLimits::default(),
        }
    }
}

/// Who calls and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    /// The logged-in user, if any.
    pub user: Option<String>,
    /// The caller's role.
    pub role: Role,
    /// The current time, UTC milliseconds since 1970.
    pub now_ms: i64,
    /// Who owns the watches the caller opens (the user name, or `anonymous`).
    pub owner: String,
    /// The WebSocket connection the call came on, if any.
    pub connection: Option<u64>,
    /// The bearer token the caller logged in with, if any: `close` ends its session.
    pub token: Option<String>,
}

impl CallContext {
    /// A caller with a role and no user name (servers without login).
    pub fn anonymous(role: Role, now_ms: i64) -> Self {
        Self {
            user: None,
            role,
            now_ms,
            owner: "anonymous".to_owned(),
            connection: None,
            token: None,
        }
    }

    /// A logged-in user.
    pub fn user(name: &str, role: Role, now_ms: i64) -> Self {
        Self {
            user: Some(name.to_owned()),
            role,
            now_ms,
            owner: name.to_owned(),
            connection: None,
            token: None,
        }
    }
}

/// The op layer of one server: backend, watches, actions, limits.
pub struct Engine {
    pub(super) backend: Arc<dyn Backend>,
    watches: Mutex<WatchRegistry>,
    pub(super) actions: Arc<dyn ActionRegistry>,
    pub(super) info: ServerInfo,
    pub(super) limits: Limits,
    pub(super) cache: ResponseCache,
    /// The logins `close` ends (servers with users).
    auth: Option<Arc<Mutex<AuthServer>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("backend", &self.backend.name())
            .field("info", &self.info)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The first row of a request as a dict (empty for an empty grid).
pub(super) fn first_row(request: &Grid) -> Dict {
    request.row_dict(0).unwrap_or_default()
}

/// A whole-number, non-negative `limit` cell, if present.
pub(super) fn limit_of(row: &Dict) -> Result<Option<usize>, OpError> {
    match row.get("limit") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.value >= 0.0 && n.value.is_finite() => {
            Ok(Some(n.value.min(usize::MAX as f64) as usize))
        }
        Some(other) => Err(OpError::new(format!(
            "`limit` must be a non-negative Number, not {other:?}"
        ))),
    }
}

/// A parsed `filter` cell, if present.
pub(super) fn filter_of(row: &Dict) -> Result<Option<filter::Filter>, OpError> {
    match row.get("filter") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(text)) => filter::parse(text)
            .map(Some)
            .map_err(|e| OpError::with_trace(format!("invalid filter: {e}"), text.clone())),
        Some(other) => Err(OpError::new(format!(
            "`filter` must be a Str, not {other:?}"
        ))),
    }
}

/// A grid of dicts (columns in first-seen order).
pub(super) fn grid_of(rows: &[Dict]) -> Result<Grid, OpError> {
    Grid::from_dicts(rows).map_err(|e| OpError::new(format!("cannot build the response: {e}")))
}

/// The error grid (`PermissionErr`) when the caller's role may not run the op with this
/// request; checked once per request.
pub(super) fn refusal(ctx: &CallContext, op: Op, request: &Grid) -> Option<Grid> {
    let needed = op.required_role(request);
    (ctx.role < needed).then(|| {
        error_grid(
            &format!(
                "{op}: the {} role may not do this (needs {})",
                ctx.role.name(),
                needed.name()
            ),
            Some("PermissionErr"),
        )
    })
}

fn meta_str(meta: &Dict, name: &str) -> Option<String> {
    match meta.get(name) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

impl Engine {
    /// An engine over a backend, with no actions.
    pub fn new(backend: Arc<dyn Backend>, info: ServerInfo, limits: Limits) -> Self {
        Self {
            backend,
            watches: Mutex::new(WatchRegistry::new(limits.watches.clone())),
            actions: Arc::new(NoActions),
            info,
            limits,
            cache: ResponseCache::default(),
            auth: None,
        }
    }

    /// Sets the logins `close` ends (the caller's session, by its bearer token).
    pub fn with_auth(mut self, auth: Arc<Mutex<AuthServer>>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// `close`: ends the caller's session, here and in a store shared with other server
    /// processes (HTTP and WebSocket alike).
    async fn logout(&self, ctx: &CallContext) {
        let Some(token) = &ctx.token else { return };
        if let Some(auth) = &self.auth {
            auth.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .logout(token);
        }
        if let Some(store) = self.backend.shared_auth() {
            // The session is over here either way; another process may still accept the
            // token until the store's copy expires.
            let _ = store
                .drop_session(&crate::auth::session_key_hex(token))
                .await;
        }
    }

    /// Sets the actions `invokeAction` runs.
    pub fn with_actions(mut self, actions: Arc<dyn ActionRegistry>) -> Self {
        self.actions = actions;
        self
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The server information `about` reports.
    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    pub(super) fn watches(&self) -> MutexGuard<'_, WatchRegistry> {
        self.watches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Number of open watches.
    pub fn watch_count(&self) -> usize {
        self.watches().len()
    }

    /// Feeds a change event to the watches; returns the affected watches and their
    /// WebSocket connections.
    pub fn on_change(&self, event: &ChangeEvent) -> Vec<(String, Option<u64>)> {
        self.watches()
            .mark_changed(event.ids.iter().map(String::as_str))
    }

    /// After change events were missed (a lagging listener): every watch refreshes.
    pub fn on_missed_changes(&self) -> Vec<(String, Option<u64>)> {
        self.watches().mark_all_changed()
    }

    /// Closes the watches of a WebSocket connection that ended.
    pub fn close_connection(&self, connection: u64) {
        self.watches().close_connection(connection);
    }

    /// Runs one op: checks the caller's role, then answers with the response grid or an
    /// error grid. Never fails.
    pub async fn call(&self, ctx: &CallContext, op: Op, request: &Grid) -> Grid {
        match refusal(ctx, op, request) {
            Some(refused) => refused,
            None => self.run(ctx, op, request).await,
        }
    }

    /// Runs an op the caller may run.
    async fn run(&self, ctx: &CallContext, op: Op, request: &Grid) -> Grid {
        match self.dispatch(ctx, op, request).await {
            Ok(grid) => grid,
            Err(e) => e.to_grid(),
        }
    }

    /// Runs one op and encodes the answer; cacheable ops (reads of entities and defs) reuse
    /// the encoded answer of an identical request while the backend's data is unchanged.
    /// Returns whether the answer is an error grid, and its text.
    pub async fn call_encoded(
        &self,
        ctx: &CallContext,
        op: Op,
        request: &Grid,
        format: WireFormat,
    ) -> (bool, Arc<str>) {
        match refusal(ctx, op, request) {
            Some(refused) => (true, Arc::from(format.encode(&refused))),
            None => self.answer_encoded(ctx, op, request, format).await,
        }
    }

    /// [`Engine::call_encoded`] once the caller's role was checked.
    pub(super) async fn answer_encoded(
        &self,
        ctx: &CallContext,
        op: Op,
        request: &Grid,
        format: WireFormat,
    ) -> (bool, Arc<str>) {
        // A backend shared with other processes cannot tell from its local version whether
        // another process changed the data: its answers are cached under the store's own
        // change counter, read at the start of the request (a write commits with its
        // increment, so data read after it is at least that new).
        let cacheable = op.is_cacheable();
        let version = if !cacheable {
            None
        } else if self.backend.caches_responses() {
            Some(self.backend.version())
        } else {
            self.backend.store_version().await.ok().flatten()
        };
        let cacheable = cacheable && version.is_some();
        let version = version.unwrap_or(0);
        let key = if cacheable {
            let key = super::cache::CacheKey::new(op, format, request);
            if let Some(text) = self.cache.get(&key, version) {
                return (false, text);
            }
            Some(key)
        } else {
            None
        };
        let grid = self.run(ctx, op, request).await;
        let is_error = super::is_error_grid(&grid);
        let text: Arc<str> = Arc::from(format.encode(&grid));
        if let Some(key) = key
            && !is_error
        {
            self.cache.put(key, version, text.clone());
        }
        (is_error, text)
    }

    async fn dispatch(&self, ctx: &CallContext, op: Op, request: &Grid) -> Result<Grid, OpError> {
        match op {
            Op::About => self.about(ctx),
            Op::Close => {
                self.logout(ctx).await;
                Ok(Grid::default())
            }
            Op::Defs => defs_grid(request, |_| true),
            Op::Libs => defs_grid(request, |d| d.is().contains(&"lib")),
            Op::Ops => defs_grid(request, |d| d.is().contains(&"op")),
            Op::Filetypes => filetypes(request),
            Op::Formats => formats(),
            Op::Read => self.read(request).await,
            Op::Nav => self.nav(request).await,
            Op::WatchSub => self.watch_sub(ctx, request).await,
            Op::WatchUnsub => self.watch_unsub(ctx, request).await,
            Op::WatchPoll => self.watch_poll(ctx, request).await,
            Op::PointWrite => self.point_write(ctx, request).await,
            Op::HisRead => self.his_read(ctx, request).await,
            Op::HisWrite => self.his_write(request).await,
            Op::InvokeAction => self.invoke_action(request).await,
            Op::Commit => self.commit(request).await,
        }
    }

    fn about(&self, ctx: &CallContext) -> Result<Grid, OpError> {
        let info = &self.info;
        let time = |ms: i64| {
            datetime_at(ms, &info.tz)
                .map(Value::from)
                .ok_or_else(|| OpError::new("the clock is outside years 0..=9999"))
        };
        let mut row = Dict::new();
        let mut put = |name: &str, value: Value| {
            let _ = row.insert(name, value);
        };
        put("haystackVersion", Value::Str("4.0".into()));
        put("tz", Value::Str(info.tz.clone()));
        put("serverName", Value::Str(info.server_name.clone()));
        put("serverTime", time(ctx.now_ms)?);
        put("serverBootTime", time(info.boot_ms)?);
        put("productName", Value::Str(info.product_name.clone()));
        put("productUri", Value::Uri(info.product_uri.clone()));
        put("productVersion", Value::Str(info.product_version.clone()));
        put("vendorName", Value::Str(info.vendor_name.clone()));
        put("vendorUri", Value::Uri(info.vendor_uri.clone()));
        put("moduleName", Value::Str("buildwire-haystack".into()));
        put(
            "moduleVersion",
            Value::Str(env!("CARGO_PKG_VERSION").into()),
        );
        if let Some(user) = &ctx.user {
            put("userName", Value::Str(user.clone()));
        }
        put("userRole", Value::Str(ctx.role.name().into()));
        // Not a standard tag: which storage backend serves this server, and how durable.
        put("storage", Value::Str(self.backend.describe()));
        grid_of(&[row])
    }

    /// The entity `id`, or an `{op}: unknown id @...` error.
    pub(crate) async fn entity(&self, id: &Ref, op: &str) -> Result<Dict, OpError> {
        self.backend
            .read_by_ids(std::slice::from_ref(id))
            .await?
            .into_iter()
            .next()
            .flatten()
            .ok_or_else(|| OpError::new(format!("{op}: unknown id @{}", id.id)))
    }

    async fn invoke_action(&self, request: &Grid) -> Result<Grid, OpError> {
        let id = match request.meta.get("id") {
            Some(Value::Ref(r)) => r.clone(),
            _ => return Err(OpError::new("invokeAction: grid meta `id` must be a Ref")),
        };
        let Some(action) = meta_str(&request.meta, "action") else {
            return Err(OpError::new(
                "invokeAction: grid meta `action` must be a Str",
            ));
        };
        let target = self.entity(&id, "invokeAction").await?;
        let args = first_row(request);
        action::run(self.actions.as_ref(), &target, &action, &args)
    }
}

/// `defs`, `libs`, `ops`: the namespace's defs that pass `keep`, then the request's filter
/// and limit.
fn defs_grid(request: &Grid, keep: impl Fn(&defs::Def) -> bool) -> Result<Grid, OpError> {
    let row = first_row(request);
    let filter = filter_of(&row)?;
    let limit = limit_of(&row)?.unwrap_or(usize::MAX);
    let rows: Vec<Dict> = defs::standard()
        .defs()
        .filter(|d| keep(d))
        .map(|d| d.tags())
        .filter(|t| filter.as_ref().is_none_or(|f| f.matches(t, &NoRefs)))
        .take(limit)
        .cloned()
        .collect();
    grid_of(&rows)
}

/// `filetypes`: the filetype defs of the formats this server writes, with their MIME type.
fn filetypes(request: &Grid) -> Result<Grid, OpError> {
    let row = first_row(request);
    let filter = filter_of(&row)?;
    let limit = limit_of(&row)?.unwrap_or(usize::MAX);
    let mut rows = Vec::new();
    for format in [
        WireFormat::Zinc,
        WireFormat::Json,
        WireFormat::Trio,
        WireFormat::Csv,
    ] {
        let name = format!("filetype:{}", format.filetype());
        let mut tags = defs::standard()
            .def(&name)
            .map(|d| d.tags().clone())
            .unwrap_or_default();
        let _ = tags.insert("def", Value::Symbol(name));
        let _ = tags.insert("mime", Value::Str(format.mime().to_owned()));
        if filter.as_ref().is_none_or(|f| f.matches(&tags, &NoRefs)) {
            rows.push(tags);
        }
    }
    rows.truncate(limit);
    grid_of(&rows)
}

/// `formats` (Haystack 3): MIME types with `receive` (read in requests) and `send`.
fn formats() -> Result<Grid, OpError> {
    let rows: Vec<Dict> = WireFormat::ALL
        .into_iter()
        .map(|f| {
            let mut d = Dict::new();
            let _ = d.insert("mime", Value::Str(f.mime().to_owned()));
            if f.can_read() {
                let _ = d.insert_marker("receive");
            }
            let _ = d.insert_marker("send");
            d
        })
        .collect();
    grid_of(&rows)
}

/// A Ref cell. Also accepted: a Str holding `@id` or `id` — haystack-py's `nav(nav_id)`
/// sends `navId` as a Str, not a Ref (a deviation from the spec's Ref ids).
pub(super) fn ref_of(value: Option<&Value>) -> Option<Ref> {
    match value {
        Some(Value::Ref(r)) => Some(Ref::new(r.id.clone())),
        Some(Value::Str(s)) => {
            let id = s.strip_prefix('@').unwrap_or(s);
            crate::value::is_ref_id(id).then(|| Ref::new(id))
        }
        _ => None,
    }
}

/// A duration meta value (`lease`) in milliseconds.
pub(super) fn lease_ms(value: Option<&Value>) -> Result<Option<i64>, OpError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => super::point_write::duration_ms(n)
            .map(Some)
            .ok_or_else(|| OpError::new("`lease` must be a duration (s, min, h)")),
        Some(_) => Err(OpError::new("`lease` must be a Number")),
    }
}

/// A Number with unit `s` for a duration in milliseconds.
pub(super) fn seconds(ms: i64) -> Value {
    Value::Number(Number::with_unit(ms as f64 / 1000.0, "s"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::MemoryBackend;
    use crate::codec::zinc;
    use futures_util::FutureExt;

    fn engine() -> Engine {
        let info = ServerInfo {
            tz: "New_York".into(),
            boot_ms: 1_700_000_000_000,
            ..ServerInfo::default()
        };
        Engine::new(Arc::new(MemoryBackend::new()), info, Limits::default())
    }

    fn call(e: &Engine, role: Role, op: Op, zinc_req: &str) -> Grid {
        let req = zinc::decode_grid(zinc_req).unwrap();
        let ctx = CallContext::user("ann", role, 1_719_835_200_000);
        e.call(&ctx, op, &req).now_or_never().unwrap()
    }

    #[test]
    fn about_reports_every_required_tag_in_the_server_zone() {
        let e = engine();
        let g = call(&e, Role::Viewer, Op::About, "ver:\"3.0\"\nempty\n");
        for tag in [
            "haystackVersion",
            "tz",
            "serverName",
            "serverTime",
            "serverBootTime",
            "productName",
            "productUri",
            "productVersion",
            "vendorName",
            "vendorUri",
        ] {
            assert!(g.get(0, tag).is_some(), "{tag}");
        }
        match g.get(0, "serverTime") {
            Some(Value::DateTime(dt)) => {
                assert_eq!(dt.tz.as_deref(), Some("New_York"));
                assert_eq!(dt.time.hour(), 8);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(g.get(0, "userName"), Some(&Value::Str("ann".into())));
    }

    #[test]
    fn defs_ops_libs_filetypes_formats() {
        let e = engine();
        let ops = call(&e, Role::Viewer, Op::Ops, "ver:\"3.0\"\nempty\n");
        assert_eq!(ops.row_count(), 15);
        let libs = call(&e, Role::Viewer, Op::Libs, "ver:\"3.0\"\nempty\n");
        assert_eq!(libs.row_count(), 4);
        let some = call(
            &e,
            Role::Viewer,
            Op::Defs,
            "ver:\"3.0\"\nfilter,limit\n\"noSideEffects\",3\n",
        );
        assert_eq!(some.row_count(), 3);
        let bad = call(
            &e,
            Role::Viewer,
            Op::Defs,
            "ver:\"3.0\"\nfilter\n\"a and\"\n",
        );
        assert!(crate::ops::is_error_grid(&bad));
        let ft = call(&e, Role::Viewer, Op::Filetypes, "ver:\"3.0\"\nempty\n");
        assert_eq!(ft.row_count(), 4);
        assert_eq!(ft.get(0, "mime"), Some(&Value::Str("text/zinc".into())));
        let formats = call(&e, Role::Viewer, Op::Formats, "ver:\"3.0\"\nempty\n");
        assert_eq!(formats.row_count(), 5);
        assert_eq!(formats.get(4, "receive"), None);
    }

    #[test]
    fn cached_answers_follow_the_data() {
        let backend = Arc::new(MemoryBackend::new());
        backend
            .load_grid(&zinc::decode_grid("ver:\"3.0\"\nid,site,dis\n@s,M,\"A\"\n").unwrap())
            .unwrap();
        let e = Engine::new(backend, ServerInfo::default(), Limits::default());
        let ctx = CallContext::user("ann", Role::Admin, 0);
        let read = zinc::decode_grid("ver:\"3.0\"\nfilter\n\"site\"\n").unwrap();
        let first = e
            .call_encoded(&ctx, Op::Read, &read, WireFormat::Zinc)
            .now_or_never()
            .unwrap();
        let again = e
            .call_encoded(&ctx, Op::Read, &read, WireFormat::Zinc)
            .now_or_never()
            .unwrap();
        assert!(
            Arc::ptr_eq(&first.1, &again.1),
            "the second answer is the cached one"
        );
        let update =
            zinc::decode_grid("ver:\"3.0\" commit:\"update\"\nid,dis\n@s,\"B\"\n").unwrap();
        e.call(&ctx, Op::Commit, &update).now_or_never().unwrap();
        let after = e
            .call_encoded(&ctx, Op::Read, &read, WireFormat::Zinc)
            .now_or_never()
            .unwrap();
        assert!(after.1.contains("\"B\""), "{}", after.1);
        // A caller who may not run the op is never served from the cache.
        let viewer = CallContext::user("v", Role::Viewer, 0);
        let denied = e
            .call_encoded(&viewer, Op::Commit, &update, WireFormat::Zinc)
            .now_or_never()
            .unwrap();
        assert!(denied.0);
    }

    #[test]
    fn roles_are_enforced_and_actions_need_a_target() {
        let e = engine().with_actions(Arc::new(
            crate::ops::ActionTable::new().register("ping", |_, _| Ok(Grid::default())),
        ));
        let denied = call(
            &e,
            Role::Viewer,
            Op::HisWrite,
            "ver:\"3.0\" id:@p\nts,val\n",
        );
        assert!(crate::ops::is_error_grid(&denied));
        let unknown = call(
            &e,
            Role::Operator,
            Op::InvokeAction,
            "ver:\"3.0\" id:@nope action:\"ping\"\nempty\n",
        );
        assert!(crate::ops::is_error_grid(&unknown));
    }
}
