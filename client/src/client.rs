//! A protocol v1 client over WebSocket: hello, requests answered by id, and the
//! stream of events. Messages it does not understand are logged and skipped.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_protocol::wire::{
    AccountInfo, ClientBody, ClientMsg, ErrorCode, RequestId, ServerBody, ServerMsg, TokenInfo,
    PROTOCOL_VERSION,
};
use tokio_tungstenite::tungstenite::Message;

use crate::connect::{self, WebSocket};
use crate::tls;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// The connection could not be made in a way no retry mends: a
    /// certificate not trusted or for another name, TLS spoken to a port
    /// without it (or the other way round).
    #[error("cannot connect to {url}: {message}")]
    Unusable { url: String, message: String },
    #[error("the connection closed")]
    Closed,
    #[error("the server refused ({code}): {message}")]
    Refused { code: ErrorCode, message: String },
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

impl ClientError {
    /// Whether the connection is gone, or could not be made: no answer came.
    /// (A server whose TLS this client refuses, or that speaks TLS where
    /// the address says it does not, did answer: `Unusable`.)
    pub fn connection_lost(&self) -> bool {
        matches!(
            self,
            ClientError::Connect { .. } | ClientError::Closed | ClientError::Timeout(_)
        )
    }

    /// Whether coming back on a fresh connection may help: the connection
    /// was lost, or the refusal is one that passes
    /// ([`ErrorCode::is_transient`]). An answer this client did not expect
    /// would come again.
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Refused { code, .. } => code.is_transient(),
            ClientError::Unexpected(_) | ClientError::Unusable { .. } => false,
            _ => self.connection_lost(),
        }
    }
}

/// How long a request waits for its answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

pub struct Client {
    ws: WebSocket,
    next_id: u64,
    /// Messages that arrived while a request waited for its answer.
    backlog: VecDeque<ServerMsg>,
    identity: Identity,
}

/// Who a connection says it is in `hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hello {
    /// A guest under this name (None: the server gives one, `guest-4f2a`).
    Guest(Option<String>),
    /// The account this personal API token proves.
    Token(String),
}

impl Hello {
    pub fn guest(name: &str) -> Hello {
        Hello::Guest(Some(name.to_string()))
    }

    /// With a token (if any), as its account; else as a guest named `name`.
    pub fn from_token(token: Option<String>, name: &str) -> Hello {
        match token {
            Some(t) => Hello::Token(t),
            None => Hello::guest(name),
        }
    }
}

/// Who the server says this connection is (its `welcome`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    /// The name seats and registrations take.
    pub name: String,
    /// The account a token proved; None for a guest.
    pub account: Option<AccountInfo>,
    /// The token said hello with.
    pub token: Option<TokenInfo>,
}

impl Client {
    /// Connects and says hello as a guest named `name`.
    pub async fn connect(url: &str, name: &str) -> Result<Client, ClientError> {
        Client::connect_as(url, &Hello::guest(name)).await
    }

    /// Connects and says hello as `hello` says. `url` may list a cluster's
    /// nodes, separated by commas: the first that accepts the connection is
    /// taken. A `wss://` server is verified against the process's trust
    /// ([`tls::trust`]).
    pub async fn connect_as(url: &str, hello: &Hello) -> Result<Client, ClientError> {
        Client::connect_trusting(url, hello, &tls::trust()).await
    }

    /// [`Client::connect_as`], verifying a `wss://` server against `trust`.
    pub async fn connect_trusting(
        url: &str,
        hello: &Hello,
        trust: &tls::Trust,
    ) -> Result<Client, ClientError> {
        let mut addresses = url.split(',').map(str::trim);
        let mut refused = None;
        let ws = loop {
            let Some(address) = addresses.next() else {
                return Err(refused.expect("at least one address"));
            };
            match connect::open(address, None, trust).await {
                Ok(ws) => break ws,
                Err(e) if e.retry_may_help => {
                    refused = Some(ClientError::Connect {
                        url: address.to_string(),
                        message: e.message,
                    })
                }
                Err(e) => {
                    refused = Some(ClientError::Unusable {
                        url: address.to_string(),
                        message: e.message,
                    })
                }
            }
        };
        let mut client = Client {
            ws,
            next_id: 1,
            backlog: VecDeque::new(),
            identity: Identity::default(),
        };
        let (name, token) = match hello.clone() {
            Hello::Token(t) => (None, Some(t)),
            Hello::Guest(name) => (name, None),
        };
        match client
            .request(|id| ClientMsg {
                id,
                body: ClientBody::Hello {
                    version: PROTOCOL_VERSION,
                    name,
                    token,
                },
            })
            .await?
        {
            ServerMsg {
                body:
                    ServerBody::Welcome {
                        name,
                        account,
                        token,
                        ..
                    },
                ..
            } => {
                client.identity = Identity {
                    name,
                    account,
                    token,
                };
                Ok(client)
            }
            other => Err(ClientError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Who the server says this connection is.
    pub fn identity(&self) -> &Identity {
        &self.identity
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
            if msg.id.as_ref() == Some(&id) {
                return match msg {
                    ServerMsg {
                        body: ServerBody::Error { code, message, .. },
                        ..
                    } => Err(ClientError::Refused { code, message }),
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
                    // Not the text: it may hold a seat's or an account's
                    // token (this client runs inside the server too, as
                    // its house bots).
                    Err(e) => tracing::warn!(
                        "ignoring a message of {} bytes this bot does not understand ({e})",
                        text.len()
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
