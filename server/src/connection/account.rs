//! Who a connection is: `hello` (a guest's name, or an account's token), the
//! scope checks of the commands that act as the account, and the account
//! messages (`create_account`, `login`, tokens, `change_password`), carried out by
//! [`crate::accounts`].

use grundy_protocol::wire::{
    AccountInfo, ClientBody, ClientMsg, ErrorCode, Scope, ServerBody, ServerMsg, TokenInfo,
};

use super::{names, Conn};
use crate::accounts::{token, Issued, Refused};
use crate::player::{AccountId, Player};

/// The `token` answer: the secret, shown this once.
fn token_answer(issued: Issued) -> ServerBody {
    ServerBody::Token {
        token: issued.secret,
        info: issued.info,
        account: issued.account,
    }
}

/// An account plays under its username: a `name` given beside it must be
/// that (in any case).
pub(super) fn under_username(name: Option<&str>, username: &str) -> Result<(), Refused> {
    match name {
        Some(n) if names::key(n) != names::key(username) => Err(Refused::bad(format!(
            "name: an account plays under its username ({username:?}); leave name out"
        ))),
        _ => Ok(()),
    }
}

impl Conn {
    /// Sets who the connection is from `hello`'s name and token, and gives
    /// what `welcome` shows of the account and its token (None for a guest);
    /// on a refusal the connection stays as it was.
    pub(super) fn hello(
        &mut self,
        name: Option<String>,
        token: Option<String>,
    ) -> Result<Option<(AccountInfo, TokenInfo)>, Refused> {
        let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        let accounts = &self.shared.accounts;
        if let Some(token) = token {
            let (session, account, info) = accounts.authenticate(&token)?;
            under_username(name.as_deref(), &account.username)?;
            *self.player = accounts
                .player(session.account)
                .ok_or_else(|| Refused::bad("the token's account is gone"))?;
            accounts.signed_in(&self.outbox, Some(&session));
            self.session = Some(Box::new(session));
            return Ok(Some((account, info)));
        }
        let name = match name {
            Some(n) => {
                accounts.guest_may_use(&n)?;
                n
            }
            // A guest keeps the name it was given, across hellos.
            None => match (&self.session, &self.player.name) {
                (None, Some(given)) => given.clone(),
                _ => names::guest_name(),
            },
        };
        *self.player = Player::guest(name);
        if self.session.take().is_some() {
            accounts.signed_in(&self.outbox, None);
        }
        Ok(None)
    }

    /// Whether the connection may do `what`, which acts as its account with
    /// `scope`: a guest may (as a guest); an account's token must still work
    /// and carry the scope.
    pub(super) fn may(&self, scope: Scope, what: &str) -> Result<(), Refused> {
        match &self.session {
            Some(session) => self.shared.accounts.allow(session, scope, what),
            None => Ok(()),
        }
    }

    /// The seat token a `resume` presents, or (an empty token) the account
    /// it resumes as, with the id of the account token it resumes with (the
    /// seat is tied to it): the connection's own, or the one an API token in
    /// place of the seat token proves.
    pub(super) fn resume_as(
        &self,
        token: String,
    ) -> Result<(String, Option<(AccountId, String)>), Refused> {
        if token::looks_like(&token) {
            let accounts = &self.shared.accounts;
            let (session, _, _) = accounts.authenticate(&token)?;
            accounts.allow(&session, Scope::Play, "resume")?;
            return Ok((String::new(), Some((session.account, session.token))));
        }
        if token.is_empty() {
            if let Some(session) = &self.session {
                self.may(Scope::Play, "resume")?;
                return Ok((token, Some((session.account, session.token.clone()))));
            }
        }
        Ok((token, None))
    }

    /// The account messages.
    pub(super) async fn dispatch_account(&mut self, msg: ClientMsg) {
        let accounts = self.shared.accounts.clone();
        let ClientMsg { id, body } = msg;
        let answer = match body {
            ClientBody::CreateAccount {
                username,
                password,
                kind,
            } => accounts
                .create(self.address, &username, password, kind)
                .await
                .map(|account| ServerBody::AccountCreated { account }),
            ClientBody::Login {
                username,
                password,
                token,
            } => accounts
                .login(self.address, &username, password, token)
                .await
                .map(token_answer),
            ClientBody::CreateToken { token } => match self.account_session("create_token") {
                Ok(session) => accounts
                    .create_token(&session, token)
                    .await
                    .map(token_answer),
                Err(refused) => Err(refused),
            },
            ClientBody::ChangePassword {
                password,
                new_password,
            } => match self.account_session("change_password") {
                Ok(session) => {
                    let changed = accounts
                        .change_password(
                            self.address,
                            &self.outbox,
                            &session,
                            password,
                            new_password,
                        )
                        .await;
                    if let Ok(issued) = &changed {
                        // This connection carries on with the new token.
                        let session = crate::accounts::Session {
                            token: issued.info.id.clone(),
                            ..session
                        };
                        self.session = Some(Box::new(session));
                    }
                    changed.map(token_answer)
                }
                Err(refused) => Err(refused),
            },
            ClientBody::ListTokens => self
                .account_session("list_tokens")
                .and_then(|session| accounts.tokens(&session))
                .map(|tokens| ServerBody::Tokens { tokens }),
            ClientBody::RevokeToken { token_id } => match self.account_session("revoke_token") {
                Ok(session) => accounts
                    .revoke(&session, token_id.as_deref())
                    .await
                    .map(|token_id| ServerBody::TokenRevoked { token_id }),
                Err(refused) => Err(refused),
            },
            _ => return,
        };
        match answer {
            Ok(body) => self.reply(ServerMsg::answer(id, body)),
            Err(refused) => self.reply(refused.answer(id)),
        }
    }

    /// The connection's session, for a command only an account may send.
    fn account_session(&self, what: &str) -> Result<crate::accounts::Session, Refused> {
        self.session.as_deref().cloned().ok_or_else(|| {
            Refused::new(
                ErrorCode::AccountRequired,
                format!("{what} needs an account: say hello with a token (login gives one)"),
            )
        })
    }
}
