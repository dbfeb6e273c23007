//! Opening a WebSocket to a server address, `ws://` or `wss://`: the one
//! connector every client uses (the protocol [`Client`](crate::client::Client),
//! the load generator), with the process's [`Trust`], and failures said so
//! that a person knows what to change.

use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{Error as WsError, TlsError, UrlError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::tls::{explain, Trust};

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
    tokio_tungstenite::connect_async_tls_with_config(url, config, false, Some(connector))
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| explain_failure(e, url))
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
    tokio_tungstenite::client_async_tls_with_config(url, tcp, config, Some(connector))
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| explain_failure(e, url))
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
