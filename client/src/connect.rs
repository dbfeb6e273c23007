//! Opening a WebSocket to a server address, `ws://` or `wss://`: the one
//! connector every client uses (the protocol [`Client`](crate::client::Client),
//! the load generator), with the process's [`Trust`], and failures said so
//! that a person knows what to change.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{Error as WsError, TlsError, UrlError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::tls::{explain, Trust};

/// How long opening a WebSocket (connection, TLS and the upgrade) may take:
/// past it a server that accepts and then says nothing fails like one that
/// does not answer, instead of holding the client forever.
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(20);

/// A WebSocket to a server, over TLS for a `wss://` address.
pub type WebSocket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why a WebSocket could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpenError {
    pub message: String,
    /// Whether trying again may work (nothing answered, or the server was
    /// busy). A certificate that is not trusted, or TLS spoken to a port
    /// without it (or the other way round), fails the same way every time.
    pub retry_may_help: bool,
}

impl OpenError {
    fn passing(message: String) -> OpenError {
        OpenError {
            message,
            retry_may_help: true,
        }
    }

    fn lasting(message: String) -> OpenError {
        OpenError {
            message,
            retry_may_help: false,
        }
    }
}

/// Connects to `url` (`ws://` or `wss://`) and opens a WebSocket, verifying
/// a `wss://` server against `trust`.
pub async fn open(
    url: &str,
    config: Option<WebSocketConfig>,
    trust: &Trust,
) -> Result<WebSocket, OpenError> {
    let connector = Connector::Rustls(trust.config());
    let opening =
        tokio_tungstenite::connect_async_tls_with_config(url, config, false, Some(connector));
    within_timeout(url, opening).await
}

/// Opens a WebSocket to `url` over `tcp`, a connection made already (to
/// `url`'s server): TLS first for a `wss://` address.
pub async fn handshake(
    url: &str,
    tcp: TcpStream,
    config: Option<WebSocketConfig>,
    trust: &Trust,
) -> Result<WebSocket, OpenError> {
    let connector = Connector::Rustls(trust.config());
    let opening =
        tokio_tungstenite::client_async_tls_with_config(url, tcp, config, Some(connector));
    within_timeout(url, opening).await
}

/// The WebSocket `opening` gives, or why not; a failure once
/// [`OPEN_TIMEOUT`] has passed.
async fn within_timeout<R>(
    url: &str,
    opening: impl Future<Output = Result<(WebSocket, R), WsError>>,
) -> Result<WebSocket, OpenError> {
    match tokio::time::timeout(OPEN_TIMEOUT, opening).await {
        Ok(opened) => opened
            .map(|(ws, _)| ws)
            .map_err(|e| explain_failure(e, url)),
        Err(_) => Err(OpenError::passing(format!(
            "{} did not answer within {} s",
            host_of(url),
            OPEN_TIMEOUT.as_secs()
        ))),
    }
}

/// The host and port of `url`, as a certificate names the host.
fn host_of(url: &str) -> String {
    url.into_client_request()
        .ok()
        .and_then(|r| {
            let uri = r.uri();
            let host = uri.host()?.to_string();
            Some(match uri.port_u16() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| url.to_string())
}

/// What went wrong, for a person (never a bare "handshake error").
fn explain_failure(error: WsError, url: &str) -> OpenError {
    let host = host_of(url);
    let tls = url.starts_with("wss://");
    match error {
        WsError::Io(io) => {
            if let Some(rustls) = io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
                return OpenError::lasting(explain(rustls, &host));
            }
            if tls && io.kind() == std::io::ErrorKind::UnexpectedEof {
                return OpenError::passing(format!(
                    "{host} closed the connection during the TLS handshake (a server \
                     without TLS does; for one, use ws://)"
                ));
            }
            OpenError::passing(WsError::Io(io).to_string())
        }
        WsError::Tls(TlsError::InvalidDnsName) => {
            OpenError::lasting(format!("{host} is not a name a TLS certificate can be for"))
        }
        WsError::Tls(TlsError::Rustls(e)) => OpenError::lasting(explain(&e, &host)),
        WsError::Tls(e) => OpenError::lasting(format!("TLS with {host} failed: {e}")),
        WsError::Url(UrlError::TlsFeatureNotEnabled) => {
            OpenError::lasting("this client was built without TLS".into())
        }
        WsError::Http(response) => {
            let status = response.status();
            let mut message = format!("the server answered HTTP {status}");
            if let Some(to) = response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
            {
                message.push_str(&format!(", sending to {to}"));
                if to.starts_with("https://") && !tls {
                    message.push_str(" (it takes wss://)");
                }
            }
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            let body = body.trim();
            if !body.is_empty() {
                let shown: String = body.chars().take(200).collect();
                message.push_str(&format!(": {shown}"));
            }
            // A redirect or a refusal of the request itself comes again;
            // a server that is busy or timed out may not.
            let again = status.is_server_error() || matches!(status.as_u16(), 408 | 429);
            OpenError {
                message,
                retry_may_help: again,
            }
        }
        other => OpenError::passing(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that accepts and then says nothing fails the open after
    /// OPEN_TIMEOUT (on a paused clock, which runs ahead while all wait).
    #[tokio::test(start_paused = true)]
    async fn a_silent_server_fails_the_open_in_time() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("ws://{}", listener.local_addr().expect("addr"));
        let silent = tokio::spawn(async move {
            let (socket, _) = listener.accept().await.expect("accept");
            tokio::time::sleep(OPEN_TIMEOUT * 2).await;
            drop(socket);
        });
        let started = tokio::time::Instant::now();
        let error = open(&url, None, &Trust::public())
            .await
            .expect_err("no answer");
        assert!(
            error.message.contains("did not answer within 20 s"),
            "{error}"
        );
        assert!(error.retry_may_help);
        assert_eq!(started.elapsed(), OPEN_TIMEOUT);
        silent.abort();
    }

    #[test]
    fn the_host_is_named_with_its_port() {
        assert_eq!(
            host_of("wss://grundy.example:8443/ws"),
            "grundy.example:8443"
        );
        assert_eq!(host_of("wss://grundy.example"), "grundy.example");
    }

    #[test]
    fn a_redirect_to_https_says_to_use_wss() {
        let response = tokio_tungstenite::tungstenite::http::Response::builder()
            .status(308)
            .header("location", "https://grundy.example/")
            .body(None)
            .unwrap();
        let err = explain_failure(WsError::Http(Box::new(response)), "ws://grundy.example");
        assert!(err.message.contains("wss://"), "{err}");
        assert!(!err.retry_may_help);
    }
}
