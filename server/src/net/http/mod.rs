//! HTTP beside the WebSocket, on one port. hyper reads each connection's
//! requests: a WebSocket upgrade (on any path) hands the TCP
//! stream itself to the protocol connection (`connection.rs`), with the same
//! limits as ever; any other request goes to the axum router: the web page
//! (`page.rs`), the read-only JSON API (`api.rs`, with a match's review in
//! `review.rs`), `/healthz` and `/metrics`.
//!
//! Plain HTTP connections are bounded like WebSocket ones: the request head
//! must come within `hello_timeout_ms`, and a keep-alive connection is closed
//! after `idle_timeout_ms` (browsers open a new one when they need it).
//!
//! Each request's client is known before it is served: the peer, or behind
//! a trusted proxy whom its forwarding header names (`net/forwarded.rs`,
//! read once per request, and so once per WebSocket at its upgrade; a header
//! that cannot be read is answered 400, named, and logged). An API request
//! carries it as a [`Client`] extension; a WebSocket's place under the caps
//! is claimed for it ([`Place::claim`]).

pub mod api;
mod error;
pub mod page;
mod refuse;
pub mod review;

pub use refuse::refuse;

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use axum::Router;
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::connection;
use crate::flag::Flag;
use crate::metrics::METRICS;
use crate::net::caps::Place;
use crate::net::forwarded::BadForwarded;
use crate::node::Node;
use crate::stream::{Accepted, Stream};

/// The longest request head (request line and headers) read; hyper answers
/// a longer one with 431. (Its own limit on the request target, 65,534
/// bytes, answers a longer path and query with 414.) Both the parser's
/// limit and the read buffer's are set: the buffer alone may take in a read
/// that runs past it.
const MAX_HEAD_BYTES: usize = 256 * 1024;

/// The client of an HTTP request (a request extension): the peer, or whom a
/// trusted proxy forwarded it for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client(pub IpAddr);

/// Finds the client of each request on a connection.
pub type WhoIs = Arc<dyn Fn(&HeaderMap) -> Result<IpAddr, BadForwarded> + Send + Sync>;

/// How a connection's HTTP phase is bounded.
#[derive(Clone, Copy)]
pub struct Timing {
    /// For the request head (and so for the WebSocket handshake).
    pub head: Duration,
    /// The longest a plain HTTP connection stays open.
    pub keep_alive: Duration,
}

/// A new connection (TCP, or TLS once its handshake is done): its HTTP
/// requests served with `router` until one
/// asks for a WebSocket, then the protocol connection
/// ([`connection::serve`]). `place`, its count against the connection caps,
/// is held throughout.
pub async fn accept<S: Accepted>(
    stream: S,
    shared: Arc<Node>,
    shutdown: CancellationToken,
    stopping: Flag,
    mut place: Place,
    router: Router,
) {
    let _ = stream.tcp().set_nodelay(true);
    let peer = place.peer();
    let who: WhoIs = {
        let forwarding = place.forwarding();
        Arc::new(move |headers: &HeaderMap| {
            forwarding.client(headers).inspect_err(|bad| {
                tracing::warn!(%peer, "refused a request from a trusted proxy: {bad}");
            })
        })
    };
    let limits = &shared.config.limits;
    let timing = Timing {
        head: Duration::from_millis(limits.hello_timeout_ms),
        keep_alive: Duration::from_millis(limits.idle_timeout_ms),
    };
    let ws_config = connection::ws_config(&shared.config);
    // Boxed: once the connection is a WebSocket, its task no longer holds
    // the HTTP phase's state.
    let Some((ws, client)) =
        Box::pin(serve(stream, router, timing, ws_config, &shutdown, who)).await
    else {
        return;
    };
    if let Err(refusal) = place.claim(client) {
        tracing::debug!(%client, %peer, "connection refused: {}", refusal.reason());
        refuse::close(ws, refusal).await;
        return;
    }
    tracing::debug!(%client, %peer, "websocket connection");
    connection::serve(ws, shared, shutdown, stopping, place.address()).await;
    drop(place);
}

/// Serves `stream`'s HTTP requests with `router` until it closes, or until a
/// request upgrades it to a WebSocket: then the stream is returned as one,
/// with `ws_config` (and any bytes the client sent after its handshake),
/// and its client as `who` found it from the upgrade request.
pub async fn serve<S: Accepted>(
    stream: S,
    router: Router,
    timing: Timing,
    ws_config: WebSocketConfig,
    shutdown: &CancellationToken,
    who: WhoIs,
) -> Option<(WebSocketStream<Stream>, IpAddr)> {
    let upgrade: Arc<Mutex<Option<(OnUpgrade, IpAddr)>>> = Arc::default();
    let serving = Arc::new(AtomicBool::new(false));
    let service = {
        let upgrade = upgrade.clone();
        let serving = serving.clone();
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let router = router.clone();
            let upgrade = upgrade.clone();
            let busy = Serving::start(&serving);
            let client = who(request.headers());
            async move {
                let client = match client {
                    Ok(client) => client,
                    Err(bad) => {
                        let response =
                            error::error_response(StatusCode::BAD_REQUEST, "bad_forwarded", bad.0);
                        count(response.status());
                        return Ok(response);
                    }
                };
                if !wants_websocket(request.headers()) {
                    request.extensions_mut().insert(Client(client));
                    let response = router.oneshot(request.map(Body::new)).await;
                    return response.map(|response| {
                        count(response.status());
                        // Served until its body is out, not only made.
                        response.map(|body| Body::new(Sending { body, _busy: busy }))
                    });
                }
                let _busy = busy;
                Ok::<_, Infallible>(match accept_key(&request) {
                    Ok(accept) => {
                        *upgrade.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some((hyper::upgrade::on(&mut request), client));
                        switching_protocols(&accept)
                    }
                    Err(why) => error::error_response(StatusCode::BAD_REQUEST, "bad_request", why),
                })
            }
        })
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(timing.head)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_header_size(MAX_HEAD_BYTES)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    let stop = async {
        tokio::select! {
            _ = tokio::time::sleep(timing.keep_alive) => {}
            _ = shutdown.cancelled() => {}
        }
    };
    let served = tokio::select! {
        served = connection.as_mut() => served,
        _ = stop => {
            // A request being answered may finish (bounded); then it
            // closes. With none, only an answer already made may still be
            // going out: a head still arriving (or never coming) is owed
            // nothing and does not hold up a shutdown.
            let grace = if serving.load(Ordering::Relaxed) {
                Duration::from_secs(5)
            } else {
                Duration::from_millis(200)
            };
            connection.as_mut().graceful_shutdown();
            tokio::time::timeout(grace, connection.as_mut())
                .await
                .unwrap_or(Ok(()))
        }
    };
    if let Err(e) = served {
        if e.is_parse() {
            // What a TLS client meets on a port without TLS (hyper answers
            // it a 400, which the client reads as "no TLS here").
            tracing::debug!(
                "http connection: not an HTTP request ({e}); a client speaking TLS \
                 (https://, wss://) to this plain port sends this"
            );
        } else {
            tracing::debug!("http connection: {e}");
        }
    }
    let (upgrade, client) = upgrade
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()?;
    let upgraded = upgrade.await.ok()?;
    // The very TCP (or TLS) stream, so the protocol connection costs what
    // it did before HTTP came beside it; what hyper read past the handshake
    // (a client's first frames) is handed over with it.
    let parts = upgraded.downcast::<TokioIo<S>>().ok()?;
    let stream = parts.io.into_inner().into_stream();
    let ws = WebSocketStream::from_partially_read(
        stream,
        parts.read_buf.to_vec(),
        Role::Server,
        Some(ws_config),
    )
    .await;
    Some((ws, client))
}

/// Marks a request as being answered, from its head's arrival until its
/// answer's body is sent (one at a time: HTTP/1.1 answers in order).
struct Serving(Arc<AtomicBool>);

impl Serving {
    fn start(flag: &Arc<AtomicBool>) -> Serving {
        flag.store(true, Ordering::Relaxed);
        Serving(flag.clone())
    }
}

/// An answer's body, holding the connection's [`Serving`] mark until hyper
/// has sent it (or dropped it).
struct Sending {
    body: Body,
    _busy: Serving,
}

impl axum::body::HttpBody for Sending {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

fn count(status: StatusCode) {
    METRICS
        .http_requests
        .get_or_create(&crate::metrics::CodeLabel {
            code: status.as_str().to_string(),
        })
        .inc();
}

/// A request that asks for a WebSocket (RFC 6455: `Upgrade: websocket`).
fn wants_websocket(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim().eq_ignore_ascii_case("websocket"))
}

/// The `Sec-WebSocket-Accept` for a valid opening handshake, or what is wrong.
fn accept_key<B>(request: &Request<B>) -> Result<String, String> {
    if request.method() != Method::GET {
        return Err(format!(
            "a WebSocket handshake must be a GET, not {}",
            request.method()
        ));
    }
    let headers = request.headers();
    let connection_upgrade = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim().eq_ignore_ascii_case("upgrade"));
    if !connection_upgrade {
        return Err("a WebSocket handshake needs `Connection: Upgrade`".into());
    }
    if headers.get(header::SEC_WEBSOCKET_VERSION) != Some(&HeaderValue::from_static("13")) {
        return Err("a WebSocket handshake needs `Sec-WebSocket-Version: 13`".into());
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or("a WebSocket handshake needs `Sec-WebSocket-Key`")?;
    Ok(derive_accept_key(key.as_bytes()))
}

fn switching_protocols(accept: &str) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::from_str(accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake(version: &str) -> Request<()> {
        Request::get("/")
            .header(header::UPGRADE, "websocket")
            .header(header::CONNECTION, "keep-alive, Upgrade")
            .header(header::SEC_WEBSOCKET_VERSION, version)
            .header(header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==")
            .body(())
            .expect("request")
    }

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // The example of RFC 6455, section 1.3.
        assert_eq!(
            accept_key(&handshake("13")).as_deref(),
            Ok("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        );
        assert!(wants_websocket(handshake("13").headers()));
    }

    #[test]
    fn a_bad_handshake_is_named() {
        let err = accept_key(&handshake("8")).expect_err("version 8");
        assert!(err.contains("Sec-WebSocket-Version: 13"), "{err}");
        let mut no_connection = handshake("13");
        no_connection.headers_mut().remove(header::CONNECTION);
        let err = accept_key(&no_connection).expect_err("no Connection");
        assert!(err.contains("Connection: Upgrade"), "{err}");
        let post = Request::post("/").body(()).expect("request");
        assert!(accept_key(&post).expect_err("post").contains("GET"));
    }
}
