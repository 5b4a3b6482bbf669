//! [`HaystackApi`]: every standard op as a method, over any transport that can send one
//! request grid to an op and give back the response grid (HTTP, WebSocket).

use crate::value::{DateTime, Dict, Grid, Number, Ref, Value};

use super::error::ClientError;
use super::request;

/// The standard Haystack ops on top of [`HaystackApi::call`]; implemented by
/// [`super::HaystackClient`] (HTTP) and [`super::WsClient`] (WebSocket).
#[allow(async_fn_in_trait)] // used with concrete types; no Send bound is promised
pub trait HaystackApi {
    /// Sends `request` to `op` and returns the response grid; error grids become
    /// [`ClientError::Server`].
    async fn call(&self, op: &str, request: &Grid) -> Result<Grid, ClientError>;

    /// `about`: the server's name, product, version, time and time zone.
    async fn about(&self) -> Result<Dict, ClientError> {
        first_row(self.call("about", &request::empty()).await?)
    }

    /// `ops`: the operations the server supports.
    async fn ops(&self) -> Result<Grid, ClientError> {
        self.call("ops", &request::empty()).await
    }

    /// `filetypes`: the formats the server reads and writes (Haystack 3 called it
    /// `formats`; see [`HaystackClient::formats`]).
    async fn filetypes(&self) -> Result<Grid, ClientError> {
        self.call("filetypes", &request::empty()).await
    }

    /// `formats`, the Haystack 3 name of `filetypes`.
    async fn formats(&self) -> Result<Grid, ClientError> {
        self.call("formats", &request::empty()).await
    }

    /// `defs`: the server's defs, optionally filtered.
    async fn defs(&self, filter: Option<&str>, limit: Option<usize>) -> Result<Grid, ClientError> {
        self.call("defs", &request::filtered(filter, limit)?).await
    }

    /// `libs`: the server's def libraries, optionally filtered.
    async fn libs(&self, filter: Option<&str>, limit: Option<usize>) -> Result<Grid, ClientError> {
        self.call("libs", &request::filtered(filter, limit)?).await
    }

    /// `read` by filter (`site`, `point and his`, `equipRef->siteRef == @s`).
    async fn read(&self, filter: &str, limit: Option<usize>) -> Result<Grid, ClientError> {
        self.call("read", &request::read_filter(filter, limit)?)
            .await
    }

    /// `read` by ids; unknown ids give rows of nulls, in the order asked.
    async fn read_ids(&self, ids: &[Ref]) -> Result<Grid, ClientError> {
        self.call("read", &request::read_ids(ids)?).await
    }

    /// `nav`: the navigation tree's roots, or the children of `nav_id`.
    async fn nav(&self, nav_id: Option<&Ref>) -> Result<Grid, ClientError> {
        self.call("nav", &request::nav(nav_id)?).await
    }

    /// `watchSub` opening a new watch on `ids`: the current values, with the watch id in
    /// the meta (`watchId`) and the lease the server granted (`lease`).
    async fn watch_open(
        &self,
        dis: &str,
        ids: &[Ref],
        lease_seconds: Option<f64>,
    ) -> Result<Grid, ClientError> {
        self.call(
            "watchSub",
            &request::watch_sub(None, Some(dis), lease_seconds, ids)?,
        )
        .await
    }

    /// `watchSub` adding ids to watch `watch_id`.
    async fn watch_add(&self, watch_id: &str, ids: &[Ref]) -> Result<Grid, ClientError> {
        self.call(
            "watchSub",
            &request::watch_sub(Some(watch_id), None, None, ids)?,
        )
        .await
    }

    /// `watchUnsub` of some ids, or of the whole watch when `close`.
    async fn watch_unsub(
        &self,
        watch_id: &str,
        ids: &[Ref],
        close: bool,
    ) -> Result<Grid, ClientError> {
        self.call("watchUnsub", &request::watch_unsub(watch_id, ids, close)?)
            .await
    }

    /// `watchPoll`: the entities changed since the last poll (all with `refresh`).
    async fn watch_poll(&self, watch_id: &str, refresh: bool) -> Result<Grid, ClientError> {
        self.call("watchPoll", &request::watch_poll(watch_id, refresh)?)
            .await
    }

    /// `pointWrite` of `value` at `level` (1..=17; null releases the level).
    async fn point_write(
        &self,
        id: &Ref,
        level: u8,
        value: Value,
        who: Option<&str>,
        duration: Option<Number>,
    ) -> Result<Grid, ClientError> {
        self.call(
            "pointWrite",
            &request::point_write(id, level, value, who, duration)?,
        )
        .await
    }

    /// `pointWrite` with only the id: the point's 17-level priority array.
    async fn point_write_array(&self, id: &Ref) -> Result<Grid, ClientError> {
        self.call("pointWrite", &request::point_write_array(id)?)
            .await
    }

    /// `hisRead` of one point over `range` (`today`, `yesterday`, `2024-01-01`,
    /// `2024-01-01,2024-01-31`, or datetimes).
    async fn his_read(&self, id: &Ref, range: &str) -> Result<Grid, ClientError> {
        self.call("hisRead", &request::his_read(id, range)?).await
    }

    /// `hisRead` folded into buckets: `interval` a duration Number such as `15min`, `fold`
    /// one of `avg`, `min`, `max`, `sum`, `count`, `first`, `last`. buildwire servers fold
    /// (the answer's meta has `hisRollup`); when a server answers raw samples instead, they
    /// are folded here the same way and the grid's meta gets `hisRollupByClient` (see
    /// [`super::rollup`]).
    async fn his_rollup(
        &self,
        id: &Ref,
        range: &str,
        interval: Value,
        fold: &str,
    ) -> Result<Grid, ClientError> {
        let rollup = super::rollup::parse_rollup(&interval, fold)?;
        let answer = self
            .call(
                "hisRead",
                &request::his_rollup(id, range, interval.clone(), fold)?,
            )
            .await?;
        if super::rollup::is_rolled_up(&answer) {
            Ok(answer)
        } else {
            super::rollup::fold_answer(&answer, range, &interval, &rollup)
        }
    }

    /// `hisWrite` of timestamped values to one point.
    async fn his_write(
        &self,
        id: &Ref,
        samples: &[(DateTime, Value)],
    ) -> Result<Grid, ClientError> {
        self.call("hisWrite", &request::his_write(id, samples)?)
            .await
    }

    /// `invokeAction` of `action` on entity `id` with `args`.
    async fn invoke_action(
        &self,
        id: &Ref,
        action: &str,
        args: &Dict,
    ) -> Result<Grid, ClientError> {
        self.call("invokeAction", &request::invoke_action(id, action, args)?)
            .await
    }

    /// `close`: ends the session on the server (the token stops working).
    async fn close(&self) -> Result<(), ClientError> {
        self.call("close", &request::empty()).await.map(|_| ())
    }
}

fn first_row(grid: Grid) -> Result<Dict, ClientError> {
    grid.row_dict(0).ok_or_else(|| ClientError::Server {
        dis: "the answer has no rows".into(),
        trace: None,
    })
}
