//! A protocol v1 client over WebSocket: hello, requests answered by id, and the
//! stream of events. Messages it does not understand are logged and skipped.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, ServerMsg, PROTOCOL_VERSION};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    #[error("the connection closed")]
    Closed,
    #[error("the server refused: {code:?}: {message}")]
    Refused { code: ErrorCode, message: String },
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// How long a request waits for its answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Messages that arrived while a request waited for its answer.
    backlog: VecDeque<ServerMsg>,
}

impl Client {
    /// Connects and says hello.
    pub async fn connect(url: &str, name: &str) -> Result<Client, ClientError> {
        let (ws, _) =
            tokio_tungstenite::connect_async(url)
                .await
                .map_err(|e| ClientError::Connect {
                    url: url.to_string(),
                    message: e.to_string(),
                })?;
        let mut client = Client {
            ws,
            next_id: 1,
            backlog: VecDeque::new(),
        };
        let name = Some(name.to_string());
        match client
            .request(|id| ClientMsg::Hello {
                id,
                version: PROTOCOL_VERSION,
                name,
            })
            .await?
        {
            ServerMsg::Welcome { .. } => Ok(client),
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    pub async fn send(&mut self, msg: &ClientMsg) -> Result<(), ClientError> {
        let text =
            serde_json::to_string(msg).map_err(|e| ClientError::Unexpected(e.to_string()))?;
        self.ws
            .send(Message::text(text))
            .await
            .map_err(|_| ClientError::Closed)
    }

    /// Sends a command with a fresh id and waits for its answer; an `error`
    /// answer becomes `ClientError::Refused`.
    pub async fn request(
        &mut self,
        build: impl FnOnce(Option<RequestId>) -> ClientMsg,
    ) -> Result<ServerMsg, ClientError> {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.send(&build(Some(id.clone()))).await?;
        let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.read())
                .await
                .map_err(|_| ClientError::Timeout(ANSWER_WITHIN))??;
            if msg.answer_id() == Some(&id) {
                return match msg {
                    ServerMsg::Error { code, message, .. } => {
                        Err(ClientError::Refused { code, message })
                    }
                    other => Ok(other),
                };
            }
            self.backlog.push_back(msg);
        }
    }

    /// True if messages arrived while a request waited (not yet taken by `next`).
    pub fn has_backlog(&self) -> bool {
        !self.backlog.is_empty()
    }

    /// The next message: held-back ones first.
    pub async fn next(&mut self) -> Result<ServerMsg, ClientError> {
        if let Some(m) = self.backlog.pop_front() {
            return Ok(m);
        }
        self.read().await
    }

    async fn read(&mut self) -> Result<ServerMsg, ClientError> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(text))) => match serde_json::from_str::<ServerMsg>(&text) {
                    Ok(m) => return Ok(m),
                    Err(e) => tracing::warn!(
                        "ignoring a message this bot does not understand ({e}): {text}"
                    ),
                },
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    return Err(ClientError::Closed)
                }
                Some(Ok(_)) => {}
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}
