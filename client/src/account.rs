//! Accounts from the client's side: open one, log in for a token, list and
//! revoke tokens (docs/protocol.md, "Accounts and tokens").

use grundy_protocol::wire::{
    AccountInfo, AccountKind, ClientBody, ClientMsg, NewToken, ServerBody, ServerMsg, TokenInfo,
};

use crate::client::{Client, ClientError};

fn unexpected(msg: ServerMsg) -> ClientError {
    ClientError::Unexpected(format!("{msg:?}"))
}

/// Opens an account (on a guest connection).
pub async fn create_account(
    client: &mut Client,
    username: &str,
    password: &str,
    kind: AccountKind,
) -> Result<AccountInfo, ClientError> {
    let (username, password) = (username.to_string(), password.to_string());
    match client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::CreateAccount {
                username,
                password,
                kind,
            },
        })
        .await?
    {
        ServerMsg {
            body: ServerBody::AccountCreated { account, .. },
            ..
        } => Ok(account),
        other => Err(unexpected(other)),
    }
}

/// A new token: its secret (shown this once), what it is, whose it is.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub info: TokenInfo,
    pub account: AccountInfo,
}

fn issued(msg: ServerMsg) -> Result<Issued, ClientError> {
    match msg {
        ServerMsg {
            body:
                ServerBody::Token {
                    token,
                    info,
                    account,
                    ..
                },
            ..
        } => Ok(Issued {
            token,
            info,
            account,
        }),
        other => Err(unexpected(other)),
    }
}

/// Trades a username and password for a new token.
pub async fn login(
    client: &mut Client,
    username: &str,
    password: &str,
    token: NewToken,
) -> Result<Issued, ClientError> {
    let (username, password) = (username.to_string(), password.to_string());
    issued(
        client
            .request(|id| ClientMsg {
                id,
                body: ClientBody::Login {
                    username,
                    password,
                    token,
                },
            })
            .await?,
    )
}

/// A new token of the connection's account (its token needs scope `account`).
pub async fn create_token(client: &mut Client, token: NewToken) -> Result<Issued, ClientError> {
    issued(
        client
            .request(|id| ClientMsg {
                id,
                body: ClientBody::CreateToken { token },
            })
            .await?,
    )
}

/// Changes the account's password (the connection's token needs scope
/// `account`): every token of the account is revoked, this connection's
/// too; the new token it carries on with.
pub async fn change_password(
    client: &mut Client,
    password: &str,
    new_password: &str,
) -> Result<Issued, ClientError> {
    let (password, new_password) = (password.to_string(), new_password.to_string());
    issued(
        client
            .request(|id| ClientMsg {
                id,
                body: ClientBody::ChangePassword {
                    password,
                    new_password,
                },
            })
            .await?,
    )
}

/// The account's live tokens.
pub async fn list_tokens(client: &mut Client) -> Result<Vec<TokenInfo>, ClientError> {
    match client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::ListTokens,
        })
        .await?
    {
        ServerMsg {
            body: ServerBody::Tokens { tokens, .. },
            ..
        } => Ok(tokens),
        other => Err(unexpected(other)),
    }
}

/// Revokes a token of the account (None: the one this connection said hello
/// with); its id.
pub async fn revoke_token(
    client: &mut Client,
    token_id: Option<&str>,
) -> Result<String, ClientError> {
    let token_id = token_id.map(str::to_string);
    match client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::RevokeToken { token_id },
        })
        .await?
    {
        ServerMsg {
            body: ServerBody::TokenRevoked { token_id, .. },
            ..
        } => Ok(token_id),
        other => Err(unexpected(other)),
    }
}
