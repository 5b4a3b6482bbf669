//! WebSockets for BACnet/SC (Annex AB.7) on tokio: TCP, optional TLS (tokio-rustls), the
//! HTTP upgrade with the BACnet/SC subprotocols (tokio-tungstenite), and a link that moves
//! binary messages in both directions: a writer task fed by a bounded queue (batching what
//! is ready into one flush) and a reader the owner polls.
//!
//! Frame rules (Annex AB.7.5): only binary messages carry BVLC-SC; a text message closes
//! the WebSocket with status 1003, a message longer than the limit with status 1009.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::link::sc::Subprotocol;

/// Binary messages waiting for one link's writer; more are dropped (a slow peer loses
/// messages instead of growing the sender's memory).
pub(crate) const LINK_QUEUE: usize = 1024;

/// A TCP stream, with or without TLS.
pub(crate) enum ScStream {
    Plain(TcpStream),
    Server(Box<tokio_rustls::server::TlsStream<TcpStream>>),
    Client(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for ScStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Server(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Self::Client(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ScStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Server(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Self::Client(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Server(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Self::Client(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Server(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Self::Client(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

pub(crate) type Ws = WebSocketStream<ScStream>;

/// WebSocket limits: messages and frames no longer than `max_message`.
pub(crate) fn ws_config(max_message: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
        .write_buffer_size(0)
}

/// Why an inbound connection was not accepted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AcceptError {
    #[error("TLS handshake failed: {}", super::tls::describe_tls_error(.0))]
    Tls(io::Error),
    #[error("WebSocket upgrade failed: {0}")]
    WebSocket(WsError),
    #[error("no handshake within {0:?}")]
    Timeout(Duration),
}

/// Accepts one TCP connection: TLS (when configured), then a WebSocket upgrade that must ask
/// for one of `allowed` subprotocols (others get HTTP 400).
// The upgrade callback's error type (an HTTP response) is tungstenite's, not ours.
#[allow(clippy::result_large_err)]
pub(crate) async fn accept(
    tcp: TcpStream,
    tls: Option<&tokio_rustls::TlsAcceptor>,
    allowed: &[Subprotocol],
    max_message: usize,
    timeout: Duration,
) -> Result<(Ws, Subprotocol), AcceptError> {
    let _ = tcp.set_nodelay(true);
    let handshake = async {
        let stream = match tls {
            Some(acceptor) => ScStream::Server(Box::new(
                acceptor.accept(tcp).await.map_err(AcceptError::Tls)?,
            )),
            None => ScStream::Plain(tcp),
        };
        let mut chosen = None;
        let callback = |request: &Request, mut response: Response| {
            let offered = request
                .headers()
                .get_all("Sec-WebSocket-Protocol")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .find_map(|name| allowed.iter().find(|p| p.name() == name).copied());
            match offered {
                Some(protocol) => {
                    response.headers_mut().insert(
                        "Sec-WebSocket-Protocol",
                        HeaderValue::from_static(protocol.name()),
                    );
                    chosen = Some(protocol);
                    Ok(response)
                }
                None => {
                    let wanted: Vec<&str> = allowed.iter().map(|p| p.name()).collect();
                    let mut refusal = ErrorResponse::new(Some(format!(
                        "BACnet/SC: ask for subprotocol {}",
                        wanted.join(" or ")
                    )));
                    *refusal.status_mut() = StatusCode::BAD_REQUEST;
                    Err(refusal)
                }
            }
        };
        let ws = tokio_tungstenite::accept_hdr_async_with_config(
            stream,
            callback,
            Some(ws_config(max_message)),
        )
        .await
        .map_err(AcceptError::WebSocket)?;
        let protocol = chosen.unwrap_or(Subprotocol::Hub);
        Ok((ws, protocol))
    };
    tokio::time::timeout(timeout, handshake)
        .await
        .map_err(|_| AcceptError::Timeout(timeout))?
}

/// Why an outbound WebSocket connection failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("`{uri}` is not a WebSocket URI: {source}")]
    NotAUri { uri: String, source: WsError },
    #[error("`{0}`: use wss:// (or ws:// with --no-tls)")]
    Scheme(String),
    #[error("`{0}` has no host")]
    NoHost(String),
    #[error("cannot connect to {host}:{port}: {source}")]
    Tcp {
        host: String,
        port: u16,
        source: io::Error,
    },
    #[error("`{host}` is not a TLS server name: {source}")]
    ServerName {
        host: String,
        source: rustls_pki_types::InvalidDnsNameError,
    },
    #[error("TLS handshake with {host}:{port} failed: {}", super::tls::describe_tls_error(.source))]
    Tls {
        host: String,
        port: u16,
        source: io::Error,
    },
    #[error("`{0}` needs TLS: give the certificate, key and issuer files")]
    NeedsTls(String),
    #[error("`{0}` is plaintext: use wss://, or ask for plaintext (--no-tls)")]
    Plaintext(String),
    #[error("WebSocket upgrade with {host}:{port} failed: {source}")]
    Upgrade {
        host: String,
        port: u16,
        source: WsError,
    },
    #[error("no connection to {uri} within {timeout:?}")]
    Timeout { uri: String, timeout: Duration },
}

/// Connects to `uri` (`wss://host:port/path`, or `ws://` without TLS) asking for
/// `subprotocol`. `wss://` needs `tls`; `ws://` is refused when `tls` is given, so that
/// plaintext is only ever used when it was asked for.
pub(crate) async fn connect(
    uri: &str,
    tls: Option<&Arc<rustls::ClientConfig>>,
    subprotocol: Subprotocol,
    max_message: usize,
    timeout: Duration,
) -> Result<Ws, ConnectError> {
    let mut request = uri
        .into_client_request()
        .map_err(|source| ConnectError::NotAUri {
            uri: uri.to_owned(),
            source,
        })?;
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static(subprotocol.name()),
    );
    let secure = match request.uri().scheme_str() {
        Some("wss") => true,
        Some("ws") => false,
        _ => return Err(ConnectError::Scheme(uri.to_owned())),
    };
    let host = request
        .uri()
        .host()
        .ok_or_else(|| ConnectError::NoHost(uri.to_owned()))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = request
        .uri()
        .port_u16()
        .unwrap_or(if secure { 443 } else { 80 });
    let attempt =
        async {
            let tcp = TcpStream::connect((host.as_str(), port))
                .await
                .map_err(|source| ConnectError::Tcp {
                    host: host.clone(),
                    port,
                    source,
                })?;
            let _ = tcp.set_nodelay(true);
            let stream =
                match (secure, tls) {
                    (true, Some(config)) => {
                        let name = rustls_pki_types::ServerName::try_from(host.clone()).map_err(
                            |source| ConnectError::ServerName {
                                host: host.clone(),
                                source,
                            },
                        )?;
                        let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
                        let tls = connector.connect(name, tcp).await.map_err(|source| {
                            ConnectError::Tls {
                                host: host.clone(),
                                port,
                                source,
                            }
                        })?;
                        ScStream::Client(Box::new(tls))
                    }
                    (false, None) => ScStream::Plain(tcp),
                    (true, None) => return Err(ConnectError::NeedsTls(uri.to_owned())),
                    (false, Some(_)) => return Err(ConnectError::Plaintext(uri.to_owned())),
                };
            let (ws, _) = tokio_tungstenite::client_async_with_config(
                request,
                stream,
                Some(ws_config(max_message)),
            )
            .await
            .map_err(|source| ConnectError::Upgrade {
                host: host.clone(),
                port,
                source,
            })?;
            Ok(ws)
        };
    tokio::time::timeout(timeout, attempt)
        .await
        .map_err(|_| ConnectError::Timeout {
            uri: uri.to_owned(),
            timeout,
        })?
}

/// What a link's writer does next.
#[derive(Debug)]
pub(crate) enum LinkOut {
    Frame(Bytes),
    Close(CloseCode, &'static str),
}

/// The sending side of a link, kept by the owner.
#[derive(Debug, Clone)]
pub(crate) struct LinkHandle {
    tx: mpsc::Sender<LinkOut>,
    kill: Arc<Notify>,
}

impl LinkHandle {
    /// Queues a binary message; false when the queue is full or the link is gone.
    pub(crate) fn send(&self, frame: Bytes) -> bool {
        self.tx.try_send(LinkOut::Frame(frame)).is_ok()
    }

    /// Sends what is queued, a Close frame, and ends the link (the reader stops too).
    pub(crate) fn close(&self) {
        let _ = self.tx.try_send(LinkOut::Close(
            CloseCode::Normal,
            "BACnet/SC connection closed",
        ));
        self.kill.notify_one();
    }
}

/// The receiving side of a link.
pub(crate) struct LinkReader {
    stream: SplitStream<Ws>,
    tx: mpsc::Sender<LinkOut>,
    kill: Arc<Notify>,
    peer: Option<SocketAddr>,
}

impl LinkReader {
    /// The next binary message; `None` when the link closed, failed, broke a frame rule
    /// (a close with the status the annex gives is sent) or was closed by its owner.
    pub(crate) async fn next(&mut self) -> Option<Bytes> {
        loop {
            let message = tokio::select! {
                () = self.kill.notified() => return None,
                message = self.stream.next() => message?,
            };
            match message {
                Ok(Message::Binary(bytes)) => return Some(bytes),
                Ok(Message::Text(_)) => {
                    if let Some(suppressed) = crate::driver::peer_log::admit_connection() {
                        let peer = self.peer_text();
                        let reason = "a text WebSocket message; closing with 1003";
                        tracing::warn!(peer, reason, suppressed, "BACnet/SC: connection closed");
                    }
                    let _ = self.tx.try_send(LinkOut::Close(
                        CloseCode::Unsupported,
                        "BACnet/SC accepts binary messages only",
                    ));
                    return None;
                }
                Ok(Message::Close(_)) => return None,
                Ok(_) => {}
                Err(WsError::Capacity(e)) => {
                    if let Some(suppressed) = crate::driver::peer_log::admit_connection() {
                        let peer = self.peer_text();
                        let reason = format!("a message over the limit ({e}); closing with 1009");
                        tracing::warn!(peer, reason, suppressed, "BACnet/SC: connection closed");
                    }
                    let _ = self.tx.try_send(LinkOut::Close(
                        CloseCode::Size,
                        "message longer than the maximum BVLC length",
                    ));
                    return None;
                }
                Err(_) => return None,
            }
        }
    }

    fn peer_text(&self) -> String {
        self.peer
            .map_or_else(|| "the peer".to_owned(), |p| p.to_string())
    }
}

/// Splits a WebSocket into a handle (with its writer task running) and a reader.
pub(crate) fn start_link(ws: Ws, peer: Option<SocketAddr>) -> (LinkHandle, LinkReader) {
    let (sink, stream) = ws.split();
    let (tx, rx) = mpsc::channel(LINK_QUEUE);
    let kill = Arc::new(Notify::new());
    tokio::spawn(write_frames(sink, rx));
    (
        LinkHandle {
            tx: tx.clone(),
            kill: Arc::clone(&kill),
        },
        LinkReader {
            stream,
            tx,
            kill,
            peer,
        },
    )
}

/// Writes queued messages, batching whatever is ready into one flush.
async fn write_frames(mut sink: SplitSink<Ws, Message>, mut rx: mpsc::Receiver<LinkOut>) {
    let mut next = rx.recv().await;
    while let Some(out) = next.take() {
        let frame = match out {
            LinkOut::Frame(frame) => frame,
            LinkOut::Close(code, reason) => {
                let _ = sink
                    .send(Message::Close(Some(CloseFrame {
                        code,
                        reason: reason.into(),
                    })))
                    .await;
                let _ = sink.close().await;
                return;
            }
        };
        if sink.feed(Message::Binary(frame)).await.is_err() {
            return;
        }
        loop {
            match rx.try_recv() {
                Ok(LinkOut::Frame(frame)) => {
                    if sink.feed(Message::Binary(frame)).await.is_err() {
                        return;
                    }
                }
                Ok(close @ LinkOut::Close(..)) => {
                    next = Some(close);
                    break;
                }
                Err(_) => break,
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
        if next.is_none() {
            next = rx.recv().await;
        }
    }
    // Every handle is gone: close the WebSocket.
    let _ = sink.close().await;
}
