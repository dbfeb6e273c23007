//! The byte stream under a connection's WebSocket: plain TCP, which rooms
//! may write to directly (`tcp.rs`), or TLS, whose frames the connection's
//! task alone writes (a direct write would have to encrypt under the TLS
//! session's lock; TLS connections are not the move path's fast case).
//!
//! The TLS side is boxed: a plain connection holds a stream no larger than
//! its [`Tcp`], and pays one branch per read and write for the choice.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use crate::tcp::{Tcp, Wire};

/// A connection's stream once it is a WebSocket.
#[derive(Debug)]
pub enum Stream {
    Plain(Tcp),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    /// The wire rooms may write to directly; None over TLS.
    pub fn wire(&self) -> Option<Arc<Wire>> {
        match self {
            Stream::Plain(tcp) => Some(tcp.wire()),
            Stream::Tls(_) => None,
        }
    }
}

/// What a connection's HTTP phase runs over, and becomes a [`Stream`] once
/// it asks for a WebSocket.
pub trait Accepted: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The TCP connection underneath.
    fn tcp(&self) -> &TcpStream;
    fn into_stream(self) -> Stream;
}

impl Accepted for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }

    fn into_stream(self) -> Stream {
        Stream::Plain(Tcp::new(self))
    }
}

impl Accepted for TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }

    fn into_stream(self) -> Stream {
        Stream::Tls(Box::new(self))
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
