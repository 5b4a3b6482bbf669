//! The HTTP request path without sockets (HTTP API chapter): URL `{prefix}/{op}`, GET with
//! Zinc-encoded query parameters for ops tagged `noSideEffects`, POST bodies by
//! `Content-Type`, the response format by `Accept`, and the HTTP statuses for requests that
//! cannot be read. Once the request grid is read, every answer is 200 with a grid (an
//! error grid when the op fails), except 403 when the caller's role may not run the op.
//!
//! Decisions where the spec leaves room: a POST without `Content-Type` is read as Zinc (the
//! default encoding); an empty POST body is the empty grid; HEAD is read as GET (the driver
//! sends no body); another method is 405; CSV is written but not read (415).

use std::sync::Arc;

use crate::codec::zinc;
use crate::value::{Dict, Grid, Value, is_tag_name};

use super::Op;
use super::engine::{CallContext, Engine};
use super::format::{WireFormat, negotiate_accept};

/// Most query parameters read from one GET.
pub const MAX_QUERY_PARAMS: usize = 64;
/// Longest query string read.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// One HTTP request, as the driver read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpRequest<'a> {
    /// `GET`, `POST`, ...
    pub method: &'a str,
    /// The URL path, e.g. `/api/read`.
    pub path: &'a str,
    /// The query string without `?`.
    pub query: Option<&'a str>,
    /// The `Content-Type` header.
    pub content_type: Option<&'a str>,
    /// The `Accept` header.
    pub accept: Option<&'a str>,
    /// The body.
    pub body: &'a [u8],
}

/// A request that cannot be read: an HTTP status and a plain-text reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HTTP {status}: {message}")]
pub struct HttpError {
    /// 400, 404, 405, 406, 413 or 415.
    pub status: u16,
    /// Why.
    pub message: String,
}

impl HttpError {
    fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

/// The answer to an HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Arc<str>,
    /// The op the request named, when it named a known one.
    pub op: Option<Op>,
    /// Whether the body is an error grid.
    pub is_error: bool,
}

impl HttpResponse {
    fn from_error(e: HttpError, op: Option<Op>) -> Self {
        Self {
            status: e.status,
            content_type: "text/plain; charset=utf-8",
            body: Arc::from(e.message),
            op,
            is_error: true,
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Why a GET's query string is not a request grid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    /// A `%` not followed by two hex digits.
    #[error("bad percent escape in `{0}`")]
    BadEscape(String),
    /// Decoded bytes that are not UTF-8.
    #[error("query parameter is not UTF-8")]
    NotUtf8,
    /// The query string is too long.
    #[error("query string longer than {MAX_QUERY_BYTES} bytes")]
    TooLong,
    /// Too many parameters.
    #[error("more than {MAX_QUERY_PARAMS} query parameters")]
    TooMany,
    /// A parameter name that is not a tag name.
    #[error("query parameter `{0}` is not a tag name")]
    BadName(String),
    /// A parameter given twice.
    #[error("query parameter `{0}` given twice")]
    Twice(String),
    /// A parameter name the dict refused.
    #[error(transparent)]
    Tag(#[from] crate::value::InvalidTagName),
    /// The grid could not be built.
    #[error(transparent)]
    Grid(#[from] crate::value::GridError),
}

/// Decodes `%XX` escapes and `+` (a space, as in HTML form encoding).
fn percent_decode(text: &str) -> Result<String, QueryError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hi = bytes.get(i + 1).copied().and_then(hex);
                let lo = bytes.get(i + 2).copied().and_then(hex);
                match (hi, lo) {
                    (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                    _ => return Err(QueryError::BadEscape(text.to_owned())),
                }
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| QueryError::NotUtf8)
}

/// The request grid of a GET: one row, a column per query parameter, each value read as
/// Zinc or else taken as a Str (HTTP API chapter, "GET Requests"). No parameters give the
/// empty grid.
pub fn query_to_grid(query: Option<&str>) -> Result<Grid, QueryError> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Ok(Grid::default());
    };
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong);
    }
    let mut row = Dict::new();
    for (n, pair) in query.split('&').filter(|p| !p.is_empty()).enumerate() {
        if n == MAX_QUERY_PARAMS {
            return Err(QueryError::TooMany);
        }
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = percent_decode(name)?;
        let value = percent_decode(value)?;
        if !is_tag_name(&name) {
            return Err(QueryError::BadName(name));
        }
        if row.contains(&name) {
            return Err(QueryError::Twice(name));
        }
        let value = zinc::decode_value(&value).unwrap_or(Value::Str(value));
        row.insert(name, value)?;
    }
    if row.is_empty() {
        return Ok(Grid::default());
    }
    let mut grid = Grid::with_column_names(row.iter().map(|(k, _)| k.to_owned()))?;
    grid.push_row(row.iter().map(|(_, v)| Some(v.clone())).collect())?;
    Ok(grid)
}

impl Engine {
    /// Reads an HTTP request: the op, its request grid and the response format, or the
    /// HTTP error that says why the request cannot be read. `prefix` is the base path
    /// (`/api`).
    pub fn read_http(
        &self,
        prefix: &str,
        req: &HttpRequest<'_>,
    ) -> Result<(Op, Grid, WireFormat), (HttpError, Option<Op>)> {
        let name = req
            .path
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|name| !name.contains('/'))
            .ok_or_else(|| (HttpError::new(404, format!("no op at {}", req.path)), None))?;
        let op = Op::from_name(name)
            .ok_or_else(|| (HttpError::new(404, format!("unknown op `{name}`")), None))?;
        let fail = |status: u16, message: String| (HttpError::new(status, message), Some(op));
        let get = match req.method {
            "GET" | "HEAD" => true,
            "POST" => false,
            other => {
                return Err(fail(
                    405,
                    format!("method {other} is not GET, HEAD or POST"),
                ));
            }
        };
        let format = negotiate_accept(req.accept).ok_or_else(|| {
            fail(
                406,
                format!(
                    "no supported type in Accept `{}`: use text/zinc, application/json, \
                     application/vnd.haystack+json;version=3, text/trio or text/csv",
                    req.accept.unwrap_or("")
                ),
            )
        })?;
        if get {
            if !op.allows_get() {
                return Err(fail(405, format!("{op} has side effects: use POST")));
            }
            let grid = query_to_grid(req.query).map_err(|e| fail(400, e.to_string()))?;
            return Ok((op, grid, format));
        }
        if req.body.len() > self.limits.max_body_bytes {
            return Err(fail(
                413,
                format!(
                    "request body of {} bytes exceeds {} bytes",
                    req.body.len(),
                    self.limits.max_body_bytes
                ),
            ));
        }
        let body_format = match req.content_type.map(str::trim).filter(|c| !c.is_empty()) {
            None => WireFormat::Zinc,
            Some(ct) => WireFormat::from_mime(ct)
                .filter(|f| f.can_read())
                .ok_or_else(|| {
                    fail(
                        415,
                        format!(
                            "cannot read Content-Type `{ct}`: use text/zinc, application/json, \
                             application/vnd.haystack+json;version=3 or text/trio"
                        ),
                    )
                })?,
        };
        let text = std::str::from_utf8(req.body)
            .map_err(|_| fail(400, "request body is not UTF-8".into()))?;
        let grid = if text.trim().is_empty() {
            Grid::default()
        } else {
            body_format
                .decode(text)
                .map_err(|e| fail(400, format!("cannot read the request grid: {e}")))?
        };
        Ok((op, grid, format))
    }

    /// Answers an HTTP request: an HTTP error when it cannot be read, 403 with an error
    /// grid when the caller's role may not run the op, else 200 with the op's grid.
    pub async fn handle_http(
        &self,
        prefix: &str,
        req: &HttpRequest<'_>,
        ctx: &CallContext,
    ) -> HttpResponse {
        let (op, grid, format) = match self.read_http(prefix, req) {
            Ok(parts) => parts,
            Err((e, op)) => return HttpResponse::from_error(e, op),
        };
        if let Some(refused) = super::engine::refusal(ctx, op, &grid) {
            return HttpResponse {
                status: 403,
                content_type: format.content_type(),
                body: Arc::from(format.encode(&refused)),
                op: Some(op),
                is_error: true,
            };
        }
        let (is_error, body) = self.answer_encoded(ctx, op, &grid, format).await;
        HttpResponse {
            status: 200,
            content_type: format.content_type(),
            body,
            op: Some(op),
            is_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;
    use crate::backends::MemoryBackend;
    use crate::ops::{Limits, ServerInfo};
    use futures_util::FutureExt;

    #[test]
    fn query_parameters_are_zinc_or_str() {
        let g = query_to_grid(Some(
            "id=%40hisId&range=yesterday&limit=10&filter=point+and+his",
        ))
        .unwrap();
        assert_eq!(
            zinc::encode_grid(&g),
            "ver:\"3.0\"\nid,range,limit,filter\n@hisId,\"yesterday\",10,\"point and his\"\n"
        );
        let g = query_to_grid(Some("range=%222024-01-01%22")).unwrap();
        assert_eq!(g.get(0, "range"), Some(&Value::Str("2024-01-01".into())));
        assert_eq!(query_to_grid(None).unwrap().row_count(), 0);
        assert!(query_to_grid(Some("Bad=1")).is_err());
        assert!(query_to_grid(Some("a=1&a=2")).is_err());
        assert!(query_to_grid(Some("a=%zz")).is_err());
        assert!(query_to_grid(Some("a=%ff")).is_err());
        let many: Vec<String> = (0..=MAX_QUERY_PARAMS).map(|i| format!("p{i}=1")).collect();
        assert!(query_to_grid(Some(&many.join("&"))).is_err());
    }

    fn engine() -> Engine {
        let limits = Limits {
            max_body_bytes: 1000,
            ..Limits::default()
        };
        Engine::new(
            Arc::new(MemoryBackend::new()),
            ServerInfo::default(),
            limits,
        )
    }

    fn status(e: &Engine, role: Role, req: HttpRequest<'_>) -> (u16, String) {
        let ctx = CallContext::user("ann", role, 0);
        let r = e.handle_http("/api", &req, &ctx).now_or_never().unwrap();
        (r.status, r.body.to_string())
    }

    fn req<'a>(method: &'a str, path: &'a str) -> HttpRequest<'a> {
        HttpRequest {
            method,
            path,
            query: None,
            content_type: None,
            accept: None,
            body: b"",
        }
    }

    #[test]
    fn http_statuses_for_unreadable_requests() {
        let e = engine();
        let admin = Role::Admin;
        assert_eq!(status(&e, admin, req("GET", "/api/about")).0, 200);
        assert_eq!(status(&e, admin, req("GET", "/api/nope")).0, 404);
        assert_eq!(status(&e, admin, req("GET", "/other/about")).0, 404);
        assert_eq!(status(&e, admin, req("GET", "/api/about/x")).0, 404);
        assert_eq!(status(&e, admin, req("GET", "/api/hisWrite")).0, 405);
        assert_eq!(status(&e, admin, req("GET", "/api/close")).0, 405);
        assert_eq!(status(&e, admin, req("POST", "/api/close")).0, 200);
        assert_eq!(status(&e, admin, req("HEAD", "/api/about")).0, 200);
        assert_eq!(status(&e, admin, req("HEAD", "/api/hisWrite")).0, 405);
        assert_eq!(status(&e, admin, req("PUT", "/api/about")).0, 405);
        assert_eq!(status(&e, admin, req("DELETE", "/api/hisWrite")).0, 405);
        let html = HttpRequest {
            accept: Some("text/html"),
            ..req("GET", "/api/about")
        };
        assert_eq!(status(&e, admin, html).0, 406);
        let xml = HttpRequest {
            content_type: Some("application/xml"),
            body: b"<a/>",
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, admin, xml).0, 415);
        let csv = HttpRequest {
            content_type: Some("text/csv"),
            body: b"a\n1\n",
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, admin, csv).0, 415);
        let big = vec![b' '; 1001];
        let big = HttpRequest {
            body: &big,
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, admin, big).0, 413);
        let garbage = HttpRequest {
            body: b"ver:\"3.0\"\n\"unterminated\n",
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, admin, garbage).0, 400);
        let binary = HttpRequest {
            body: &[0xff, 0xfe],
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, admin, binary).0, 400);
    }

    #[test]
    fn read_requests_answer_200_with_grids_or_error_grids() {
        let e = engine();
        let get = HttpRequest {
            query: Some("filter=site"),
            accept: Some("application/json"),
            ..req("GET", "/api/read")
        };
        let (code, body) = status(&e, Role::Viewer, get);
        assert_eq!(code, 200);
        assert!(body.starts_with("{\"_kind\":\"grid\""), "{body}");
        let bad_filter = HttpRequest {
            query: Some("filter=(((("),
            ..req("GET", "/api/read")
        };
        let (code, body) = status(&e, Role::Viewer, bad_filter);
        assert_eq!(code, 200);
        assert!(body.contains(" err "), "{body}");
        let json = HttpRequest {
            content_type: Some("application/json"),
            body: br#"{"_kind":"grid","meta":{"ver":"3.0"},"cols":[{"name":"filter"}],"rows":[{"filter":"site"}]}"#,
            accept: Some("text/csv"),
            ..req("POST", "/api/read")
        };
        assert_eq!(status(&e, Role::Viewer, json).0, 200);
        let write = HttpRequest {
            body: b"ver:\"3.0\" id:@p\nts,val\n",
            ..req("POST", "/api/hisWrite")
        };
        let (code, body) = status(&e, Role::Viewer, write);
        assert_eq!(code, 403);
        assert!(body.contains("PermissionErr"), "{body}");
        let empty = HttpRequest {
            ..req("POST", "/api/about")
        };
        assert_eq!(status(&e, Role::Viewer, empty).0, 200);
    }
}
