//! A connection over a cap ([`crate::net::caps`]), turned away in a way a client
//! can read.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::Router;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::error::error_response;
use crate::net::caps::TurnedAway;
use crate::stream::{Accepted, Stream};
use crate::tcp::drain;

/// Answers the connection's first request within `handshake` and ends it
/// without reading a message: a WebSocket gets its handshake and the close
/// frame, any other request a JSON refusal (503 when the server is full, 429
/// for the address's share).
pub async fn refuse<S: Accepted>(
    stream: S,
    peer: IpAddr,
    refusal: TurnedAway,
    handshake: Duration,
) {
    // Nothing is read after the handshake: the smallest buffers will do.
    let config = WebSocketConfig::default()
        .read_buffer_size(1024)
        .write_buffer_size(0)
        .max_message_size(Some(1024))
        .max_frame_size(Some(1024));
    let (status, code) = match refusal {
        TurnedAway::Full { .. } => (StatusCode::SERVICE_UNAVAILABLE, "server_full"),
        TurnedAway::PerAddress { .. } => (StatusCode::TOO_MANY_REQUESTS, "too_many_connections"),
    };
    let refused = Router::new().fallback(move || async move {
        let mut response = error_response(status, code, refusal.reason());
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    });
    let timing = super::Timing {
        head: handshake,
        keep_alive: handshake,
    };
    let never = CancellationToken::new();
    // Refused before anything was read: the peer is all there is to know.
    let who: super::WhoIs = Arc::new(move |_: &HeaderMap| Ok(peer));
    let Some((ws, _)) = super::serve(stream, refused, timing, config, &never, who).await else {
        return;
    };
    tracing::debug!(%peer, "connection refused: {}", refusal.reason());
    close(ws, refusal).await;
}

/// Closes a WebSocket at once with `refusal`'s close frame, reading nothing
/// it sent as a message.
pub async fn close(mut ws: WebSocketStream<Stream>, refusal: TurnedAway) {
    let frame = CloseFrame {
        code: refusal.close_code(),
        reason: Utf8Bytes::from(refusal.reason()),
    };
    // The socket's send buffer is empty: this only waits on a peer that
    // stopped reading in the middle of its own handshake.
    if let Ok(Ok(())) = tokio::time::timeout(Duration::from_secs(1), ws.close(Some(frame))).await {
        // Whatever the peer sent after its handshake is discarded, not read
        // as messages; closing with it unread would reset the connection and
        // could destroy the close frame before the peer reads it.
        drain(ws.get_mut()).await;
    }
}
