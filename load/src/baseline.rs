//! The baselines every load figure is compared with: what this stack
//! (tokio-tungstenite, with the Grundy server's WebSocket settings) does at best.
//!
//! - **Echo:** every text frame goes back to its sender — one frame in, one out.
//! - **Relay:** a connection whose first frame is `{"type":"pair","pair":N}`
//!   joins pair `N` (that frame is echoed as the answer); from then on each frame
//!   it sends goes back to it *and* to the other connection of its pair — one
//!   frame in, two out on two sockets, the shape of a move (the mover hears its
//!   move, the opponent hears it too) with none of the server's work: no rules,
//!   no store, no rooms.
//!
//! Both run in one server (`grundy-echo`), chosen per connection by its first
//! frame.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::load::ws_config;

type Sink = Arc<tokio::sync::Mutex<SplitSink<WebSocketStream<TcpStream>, Message>>>;

/// The sinks of the connections of each relay pair (at most two).
#[derive(Default)]
struct Pairs(Mutex<HashMap<u64, Vec<Sink>>>);

impl Pairs {
    /// Adds a connection to `pair`; false when the pair is full.
    fn join(&self, pair: u64, sink: &Sink) -> bool {
        let mut pairs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let members = pairs.entry(pair).or_default();
        if members.len() >= 2 {
            return false;
        }
        members.push(sink.clone());
        true
    }

    /// The other connection of `pair`, once both have joined.
    fn partner(&self, pair: u64, me: &Sink) -> Option<Sink> {
        let pairs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        pairs
            .get(&pair)?
            .iter()
            .find(|s| !Arc::ptr_eq(s, me))
            .cloned()
    }

    fn leave(&self, pair: u64, me: &Sink) {
        let mut pairs = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(members) = pairs.get_mut(&pair) {
            members.retain(|s| !Arc::ptr_eq(s, me));
            if members.is_empty() {
                pairs.remove(&pair);
            }
        }
    }
}

/// The pair a first frame asks to join, if it is a `pair` frame.
fn pair_of(first: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct PairFrame {
        #[serde(rename = "type")]
        kind: String,
        pair: u64,
    }
    let frame: PairFrame = serde_json::from_str(first).ok()?;
    (frame.kind == "pair").then_some(frame.pair)
}

/// Serves echo and relay connections until the process ends.
pub async fn serve(listener: TcpListener) {
    let pairs = Arc::new(Pairs::default());
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let pairs = pairs.clone();
        tokio::spawn(async move {
            let _ = tcp.set_nodelay(true);
            let Ok(mut ws) =
                tokio_tungstenite::accept_async_with_config(tcp, Some(ws_config())).await
            else {
                return;
            };
            let Some(Ok(first)) = ws.next().await else {
                return;
            };
            match first.to_text().ok().and_then(pair_of) {
                Some(pair) => relay(ws, first, pair, &pairs).await,
                None => echo(ws, first).await,
            }
        });
    }
}

async fn echo(mut ws: WebSocketStream<TcpStream>, first: Message) {
    let mut next = Some(first);
    while let Some(msg) = next {
        if msg.is_close() {
            break;
        }
        if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
            break;
        }
        next = match ws.next().await {
            Some(Ok(msg)) => Some(msg),
            _ => None,
        };
    }
}

async fn relay(ws: WebSocketStream<TcpStream>, first: Message, pair: u64, pairs: &Pairs) {
    let (sink, mut stream) = ws.split();
    let me: Sink = Arc::new(tokio::sync::Mutex::new(sink));
    if !pairs.join(pair, &me) {
        let _ = me.lock().await.send(Message::Close(None)).await;
        return;
    }
    if me.lock().await.send(first).await.is_ok() {
        // Looked up until the other one has joined, then kept.
        let mut partner = None;
        while let Some(Ok(msg)) = stream.next().await {
            if msg.is_close() {
                break;
            }
            if !(msg.is_text() || msg.is_binary()) {
                continue;
            }
            // The sender first (the mover hears its move), then the partner.
            if me.lock().await.send(msg.clone()).await.is_err() {
                break;
            }
            if partner.is_none() {
                partner = pairs.partner(pair, &me);
            }
            if let Some(partner) = &partner {
                let _ = partner.lock().await.send(msg).await;
            }
        }
    }
    pairs.leave(pair, &me);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pair_frame_starts_a_relay() {
        assert_eq!(pair_of(r#"{"type":"pair","pair":7}"#), Some(7));
        assert_eq!(pair_of(r#"{"type":"echo","pair":7}"#), None);
        assert_eq!(pair_of(r#"{"type":"pair"}"#), None);
        assert_eq!(pair_of("not json"), None);
    }
}
