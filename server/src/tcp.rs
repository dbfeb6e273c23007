//! The TCP stream under a connection's WebSocket, which a room may write to
//! directly.
//!
//! When a connection's task has nothing of its own in flight and its queue
//! is empty, the room writes a move's frames to the socket itself
//! ([`Wire::write_frames`], called by the outbox): one `send` per player and
//! no wake-up, as a plain relay does. The connection's WebSocket (tungstenite)
//! reads and writes through [`Tcp`], over the same [`Wire`]; one lock keeps
//! the two writers from splitting each other's frames, and whatever the
//! room could only write in part ([`Out::spill`]) goes out before anything
//! else.
//!
//! [`drain`] closes such a stream so that its peer reads the close frame:
//! after the server's close frame, its side of the TCP stream ends and what
//! the peer still sends is read and dropped, so the close is not destroyed
//! by a reset.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, Interest, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// The most frames one write takes (one `sendmsg` of a direct write).
pub const MAX_FRAMES: usize = 4;

/// What a direct write came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Direct {
    /// All of it went out.
    Written,
    /// Part went out; the rest waits in the wire for the connection's task
    /// (which must be woken) to write before anything else.
    Spilled,
    /// Nothing was written: the socket is full, or the WebSocket's own
    /// writer is inside a frame or has spilled bytes. Queue it instead.
    Refused,
}

/// The socket's sending side and what its writers share.
#[derive(Debug)]
pub struct Wire {
    write: OwnedWriteHalf,
    out: Mutex<Out>,
}

#[derive(Debug, Default)]
struct Out {
    /// The tail of frames a direct write left unwritten (from `spilled`
    /// on); its memory is let go once it is out.
    spill: Vec<u8>,
    spilled: usize,
    /// The WebSocket's writer wrote part of its buffer: it stopped inside a
    /// frame, and nobody else may write until it has finished.
    torn: bool,
}

impl Wire {
    fn tcp(&self) -> &TcpStream {
        self.write.as_ref()
    }

    fn out(&self) -> MutexGuard<'_, Out> {
        // Every update leaves `Out` whole: a poisoned lock is still usable.
        self.out.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `texts` as WebSocket text frames (server to client: not
    /// masked), now and without waiting.
    pub fn write_frames(&self, texts: &[&[u8]]) -> Direct {
        let mut out = self.out();
        // More than one write takes go through the connection's task.
        if out.torn || !out.spill.is_empty() || texts.len() > MAX_FRAMES {
            return Direct::Refused;
        }
        let mut headers = [[0u8; MAX_HEADER]; MAX_FRAMES];
        let mut slices: [IoSlice<'_>; 2 * MAX_FRAMES] = [IoSlice::new(&[]); 2 * MAX_FRAMES];
        let mut count = 0;
        for (text, header) in texts.iter().zip(headers.iter_mut()) {
            let len = header_into(text.len(), header);
            slices[count] = IoSlice::new(&header[..len]);
            slices[count + 1] = IoSlice::new(text);
            count += 2;
        }
        let slices = &slices[..count];
        let total: usize = slices.iter().map(|s| s.len()).sum();
        // sendmsg, not the writev of `TcpStream::try_write_vectored`: a
        // socket's writev takes the longer way through the VFS. No SIGPIPE
        // from a reset peer, as with std's own writes.
        let sent = self.tcp().try_io(Interest::WRITABLE, || {
            socket2::SockRef::from(self.tcp()).send_vectored_with_flags(slices, libc::MSG_NOSIGNAL)
        });
        match sent {
            Ok(n) if n == total => Direct::Written,
            Ok(n) => {
                // Rare: the socket's buffer filled up inside these frames.
                let mut skip = n;
                for slice in slices {
                    let taken = skip.min(slice.len());
                    out.spill.extend_from_slice(&slice[taken..]);
                    skip -= taken;
                }
                Direct::Spilled
            }
            // Full, or broken: the connection's task finds out which.
            Err(_) => Direct::Refused,
        }
    }

    /// Writes what a direct write spilled; Ready once none is left.
    fn poll_spill(&self, out: &mut Out, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !out.spill.is_empty() {
            match self.tcp().try_write(&out.spill[out.spilled..]) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    out.spilled += n;
                    if out.spilled == out.spill.len() {
                        out.spill = Vec::new();
                        out.spilled = 0;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp().poll_write_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// A direct write left bytes for the connection's task to write.
    pub fn has_spill(&self) -> bool {
        !self.out().spill.is_empty()
    }
}

/// The longest header of an unmasked frame: 2 bytes, and 8 of length.
const MAX_HEADER: usize = 10;

/// Writes the header of a final, unmasked text frame of `len` bytes into
/// `buf`; returns its length.
fn header_into(len: usize, buf: &mut [u8; MAX_HEADER]) -> usize {
    buf[0] = 0x81; // FIN, text
    if len < 126 {
        buf[1] = len as u8;
        2
    } else if let Ok(short) = u16::try_from(len) {
        buf[1] = 126;
        buf[2..4].copy_from_slice(&short.to_be_bytes());
        4
    } else {
        buf[1] = 127;
        buf[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        10
    }
}

/// The stream the connection's WebSocket reads and writes.
#[derive(Debug)]
pub struct Tcp {
    /// Read by the connection's task alone, through tokio's own read (which
    /// knows a short read drained the socket, and saves a `recv`).
    read: OwnedReadHalf,
    wire: Arc<Wire>,
}

impl Tcp {
    pub fn new(tcp: TcpStream) -> Tcp {
        let (read, write) = tcp.into_split();
        Tcp {
            read,
            wire: Arc::new(Wire {
                write,
                out: Mutex::default(),
            }),
        }
    }

    /// The wire, for the connection's outbox.
    pub fn wire(&self) -> Arc<Wire> {
        self.wire.clone()
    }
}

impl AsyncRead for Tcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let wire = &self.wire;
        loop {
            {
                let mut out = wire.out();
                ready!(wire.poll_spill(&mut out, cx))?;
                match wire.tcp().try_write(buf) {
                    Ok(n) => {
                        out.torn = n < buf.len();
                        return Poll::Ready(Ok(n));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            ready!(wire.tcp().poll_write_ready(cx))?;
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let wire = &self.wire;
        let mut out = wire.out();
        wire.poll_spill(&mut out, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        // Through the socket, the write half being shared: it shuts the
        // socket down again when dropped, which does nothing more.
        Poll::Ready(socket2::SockRef::from(self.wire.tcp()).shutdown(std::net::Shutdown::Write))
    }
}

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::Role;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::WebSocketStream;

    /// The header tungstenite writes for the same frame.
    fn tungstenite_header(len: usize) -> Vec<u8> {
        let frame = Frame::message(vec![b'x'; len], OpCode::Data(Data::Text), true);
        let mut out = Vec::new();
        frame.format(&mut out).unwrap();
        out.truncate(out.len() - len);
        out
    }

    /// A connected pair over loopback with a small send buffer: the
    /// server's end as a connection holds it, the client's as a WebSocket.
    pub(crate) async fn pair() -> (Tcp, WebSocketStream<TcpStream>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let (client, (server, _)) = (client.unwrap(), accepted.unwrap());
        socket2::SockRef::from(&server)
            .set_send_buffer_size(4096)
            .unwrap();
        let client = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        let tcp = Tcp::new(server);
        // A direct write needs the runtime to have seen the socket writable
        // (as it has by the time a connection's handshake is done).
        tcp.wire.tcp().writable().await.unwrap();
        (tcp, client)
    }

    #[tokio::test]
    async fn a_direct_write_cut_short_goes_out_whole_before_the_websockets_next_frame() {
        let (tcp, mut client) = pair().await;
        let wire = tcp.wire();
        let mut ws = WebSocketStream::from_raw_socket(tcp, Role::Server, None).await;
        // Frames until the socket's buffers fill up inside one.
        // Each larger than what the socket's and the peer's buffers hold.
        let texts: Vec<String> = (0..16).map(|i| format!("{i:03}").repeat(100_000)).collect();
        let mut sent = 0;
        let last = loop {
            let (a, b) = (texts[sent].as_bytes(), texts[sent + 1].as_bytes());
            match wire.write_frames(&[a, b]) {
                Direct::Written => sent += 2,
                other => break other,
            }
        };
        assert_eq!(last, Direct::Spilled, "the buffers never filled up");
        sent += 2;
        assert!(wire.has_spill());
        // Until the spill is out, nobody writes past it.
        assert_eq!(wire.write_frames(&[b"late"]), Direct::Refused);
        // The WebSocket's own frame goes after the spill, and whole.
        let reading = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(Ok(msg)) = client.next().await {
                got.push(msg.into_text().unwrap().to_string());
                if got.last().is_some_and(|t| t == "after") {
                    break;
                }
            }
            got
        });
        ws.send(Message::text("after")).await.unwrap();
        assert!(!wire.has_spill());
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), reading)
            .await
            .expect("the client read everything")
            .unwrap();
        let mut expected: Vec<String> = texts[..sent].to_vec();
        expected.push("after".into());
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "frames out of order or torn");
        // The spill is out: direct writes go on.
        assert_eq!(wire.write_frames(&[b"again"]), Direct::Written);
    }

    #[test]
    fn headers_match_tungstenite_at_every_length_boundary() {
        for len in [0, 1, 125, 126, 127, 65_535, 65_536, 1 << 20] {
            let mut buf = [0u8; MAX_HEADER];
            let n = header_into(len, &mut buf);
            assert_eq!(buf[..n], tungstenite_header(len)[..], "length {len}");
        }
    }
}
