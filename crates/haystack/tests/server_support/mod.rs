//! Shared by the `server_*` tests: the Alpha/Bravo sample data, a few writable and
//! historized points, a server on 127.0.0.1 port 0, and a small HTTP client that logs in
//! with SCRAM (the crate's `ScramClient` over reqwest).
#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;

use buildwire_haystack::Grid;
use buildwire_haystack::auth::{Role, ScramClient};
use buildwire_haystack::codec::zinc;
use buildwire_haystack::server::{HaystackServer, HaystackServerConfig};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack")
}

/// Points added to the sample data: writable and historized, in Alpha's site.
pub const EXTRA: &str = "ver:\"3.0\"\n\
id,dis,point,writable,his,kind,unit,tz,siteRef,equipRef,sp,temp\n\
@bw-sp,\"Test Setpoint\",M,M,M,\"Number\",\"°F\",\"Denver\",@a-0000,@a-0001,M,M\n\
@bw-cmd,\"Test Command\",M,M,M,\"Bool\",,\"Denver\",@a-0000,@a-0001,,\n";

pub fn extra() -> Grid {
    zinc::decode_grid(EXTRA).unwrap()
}

pub const PASSWORD: &str = "pencil-42";

#[path = "../storage_support/mod.rs"]
mod storage_support;

/// A server with Alpha, the extra points, and users `admin`, `op`, `viewer`.
///
/// With `BUILDWIRE_TEST_BACKEND=redis` or `=postgres` the server stores everything in a
/// fresh Redis key space or PostgreSQL database (on a throw-away server started by the
/// test binary): `make test` runs the HTTP and WebSocket suites that way on every backend.
pub fn server_config() -> HaystackServerConfig {
    let config = match std::env::var("BUILDWIRE_TEST_BACKEND") {
        Ok(kind) if kind != "memory" && !kind.is_empty() => {
            HaystackServerConfig::new().backend_url(storage_support::fresh_store(&kind))
        }
        _ => HaystackServerConfig::new(),
    };
    config
        .bind("127.0.0.1:0".parse().unwrap())
        .load_file(data_dir().join("alpha.zinc"))
        .load(extra())
        .iterations(4096)
        .user("admin", PASSWORD, Role::Admin)
        .unwrap()
        .user("op", PASSWORD, Role::Operator)
        .unwrap()
        .user("viewer", PASSWORD, Role::Viewer)
        .unwrap()
}

pub async fn start() -> HaystackServer {
    HaystackServer::start(server_config()).await.unwrap()
}

/// The result of one HTTP exchange.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    /// The body as a Zinc grid.
    pub fn zinc(&self) -> Grid {
        assert_eq!(self.status, 200, "{}", self.body);
        zinc::decode_grid(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A client of one server, optionally logged in.
#[derive(Clone)]
pub struct Http {
    pub client: reqwest::Client,
    pub base: String,
    pub token: Option<String>,
}

impl Http {
    pub fn new(base: &str) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: base.to_owned(),
            token: None,
        }
    }

    pub fn with_client(client: reqwest::Client, base: &str) -> Self {
        Self {
            client,
            base: base.to_owned(),
            token: None,
        }
    }

    /// Logs in; on failure returns the status of the failing step.
    pub async fn login(&mut self, user: &str, password: &str) -> Result<String, u16> {
        let url = format!("{}/about", self.base);
        let mut scram = ScramClient::new(user, password).unwrap();
        let mut authorization = scram.hello_header();
        for _ in 0..3 {
            let r = self
                .client
                .get(&url)
                .header(AUTHORIZATION, &authorization)
                .send()
                .await
                .unwrap();
            match r.status().as_u16() {
                401 => {
                    let www = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
                    authorization = scram.on_challenge(&www).unwrap();
                }
                200 => {
                    let info = r.headers()["authentication-info"]
                        .to_str()
                        .unwrap()
                        .to_owned();
                    let token = scram.on_success(&info).unwrap();
                    self.token = Some(token.clone());
                    return Ok(token);
                }
                other => return Err(other),
            }
        }
        panic!("login did not finish in three round trips");
    }

    fn auth(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.header(AUTHORIZATION, format!("BEARER authToken={token}")),
            None => request,
        }
    }

    async fn answer(request: reqwest::RequestBuilder) -> Answer {
        let r = request.send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = r.text().await.unwrap();
        Answer {
            status,
            content_type,
            headers,
            body,
        }
    }

    /// GET `{base}/{op}?{query}` with an optional Accept.
    pub async fn get(&self, op: &str, query: &str, accept: Option<&str>) -> Answer {
        let url = if query.is_empty() {
            format!("{}/{op}", self.base)
        } else {
            format!("{}/{op}?{query}", self.base)
        };
        let mut request = self.auth(self.client.get(url));
        if let Some(accept) = accept {
            request = request.header(ACCEPT, accept);
        }
        Self::answer(request).await
    }

    /// POST a body to `{base}/{op}`.
    pub async fn post(
        &self,
        op: &str,
        body: &str,
        content_type: Option<&str>,
        accept: Option<&str>,
    ) -> Answer {
        let mut request = self
            .auth(self.client.post(format!("{}/{op}", self.base)))
            .body(body.to_owned());
        if let Some(ct) = content_type {
            request = request.header(CONTENT_TYPE, ct);
        }
        if let Some(accept) = accept {
            request = request.header(ACCEPT, accept);
        }
        Self::answer(request).await
    }

    /// POST a Zinc grid and read the Zinc answer.
    pub async fn zinc(&self, op: &str, body: &str) -> Grid {
        self.post(op, body, Some("text/zinc"), None).await.zinc()
    }
}

/// A client logged in as `user`.
pub async fn logged_in(server: &HaystackServer, user: &str) -> Http {
    let mut http = Http::new(&server.url());
    http.login(user, PASSWORD).await.unwrap();
    http
}

pub fn is_error(grid: &Grid) -> bool {
    grid.meta.contains("err")
}
