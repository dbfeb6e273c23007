//! Closing a socket so the peer reads why: after the server's close frame,
//! its side of the TCP stream ends and what the peer still sends is read
//! and dropped, so the close is not destroyed by a reset.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How long a connection the server closed waits for the peer to close too.
const LINGER: Duration = Duration::from_secs(1);

/// After a close frame the server sent because of the peer: ends our side of
/// the TCP stream, then reads and discards whatever the peer still sends until
/// it closes its side (or [`LINGER`] passes). A socket closed with unread input
/// sends a reset, and a reset can destroy the close frame and the last answers
/// before the peer has read them (a flooding or oversized sender would never
/// learn why it was cut off).
pub async fn drain(tcp: &mut (impl AsyncRead + AsyncWrite + Unpin)) {
    let _ = tcp.shutdown().await;
    let mut buf = vec![0u8; 8192];
    let _ = tokio::time::timeout(LINGER, async {
        while let Ok(1..) = tcp.read(&mut buf).await {}
    })
    .await;
}
