//! Accounts and their API tokens in the store (version 6). A password is kept
//! only as its Argon2id hash (a PHC string), a token only as the SHA-256 of its
//! secret: the file holds nothing a client could present.
//!
//! ```sql
//! accounts        (id INT PK, username TEXT, username_key TEXT UNIQUE, kind TEXT,
//!                  password_hash TEXT, created_at_ms INT, username_look TEXT UNIQUE)
//! api_tokens      (id TEXT PK, account -> accounts.id, name TEXT, scopes TEXT json,
//!                  secret_sha256 BLOB, created_at_ms INT, expires_at_ms INT NULL,
//!                  revoked_at_ms INT NULL)
//! account_ratings (game TEXT (`family` before version 7), account -> accounts.id,
//!                  rating REAL, deviation REAL, volatility REAL, games INT,
//!                  PK (game, account))
//! ```
//!
//! `username_key` is the name as it is compared ([`crate::names`]),
//! and `username_look` (version 8) what it reads as: their unique indexes are
//! what finally keep two accounts from sharing a name, or names that read
//! the same (made on two nodes of a cluster at once, say). A look is filled
//! in for accounts made before ([`fill_looks`]); one that reads as an older
//! account's stays empty.
//! The ratings of version 5 and before (`ratings`, keyed by a plain name) are
//! left as they were: read back as unclaimed history, never written again.

use super::sql::{args, Fault, Sql};
use super::StoreError;
use crate::names::reads_as;
use grundy_protocol::wire::{AccountKind, Scope};

/// An account as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRow {
    pub id: u64,
    pub username: String,
    pub username_key: String,
    pub kind: AccountKind,
    /// The Argon2id PHC string.
    pub password_hash: String,
    pub created_at_ms: u64,
}

/// An API token as stored: never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: String,
    pub account: u64,
    pub name: String,
    pub scopes: Vec<Scope>,
    pub secret_sha256: [u8; 32],
    pub created_at_ms: u64,
    pub expires_at_ms: Option<u64>,
    pub revoked_at_ms: Option<u64>,
}

/// The accounts a cluster's node reads again (what another node may have
/// changed): by name, or by one of its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountsOf {
    /// The account whose name reads as this `username_key`.
    Name(String),
    /// The account this token id is of.
    Token(String),
}

/// An account write.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountWrite {
    /// A new account: its id and its name's key must both be new.
    Create(AccountRow),
    /// A new token of an existing account.
    Token(TokenRow),
    /// The token stops working (a second revocation keeps the first time).
    Revoke { token: String, at_ms: u64 },
    /// A new password: every token of the account revoked at `at_ms` and
    /// `token` (the changing connection's new one) recorded, in one
    /// transaction, so that no old token outlives the old password.
    Password {
        account: u64,
        password_hash: String,
        at_ms: u64,
        token: TokenRow,
    },
}

fn kind_text(kind: AccountKind) -> &'static str {
    match kind {
        AccountKind::Person => "person",
        AccountKind::Bot => "bot",
    }
}

fn fail(what: impl Into<String>) -> StoreError {
    StoreError::Account(what.into())
}

fn signed(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| fail(format!("{what} {value} is too large to store")))
}

/// Fills in what the names of accounts made before version 8 read as,
/// each in its own statement: one that reads as an account's already there
/// is left empty (two such names were possible before), and so is one
/// another node fills at the same moment.
pub(super) fn fill_looks<C: Sql>(conn: &mut C) -> Result<(), StoreError> {
    let unfilled = conn.query(
        "SELECT id, username FROM accounts WHERE username_look IS NULL",
        args![],
    )?;
    for mut row in unfilled {
        let id = row.int(0).map_err(fail)?;
        let look = reads_as(&row.text(1).map_err(fail)?);
        let filled = conn.exec(
            "UPDATE accounts SET username_look = ?1
             WHERE id = ?2 AND NOT EXISTS (SELECT 1 FROM accounts WHERE username_look = ?1)",
            args![&look, id],
        );
        match filled {
            Ok(_) => {}
            Err(e) if e.fault == Fault::Unique => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

pub(super) fn write<C: Sql>(conn: &mut C, op: &AccountWrite) -> Result<(), StoreError> {
    match op {
        AccountWrite::Create(a) => {
            // An id another node gave first is its own error: tried again
            // with the next (a taken name is the unique key's).
            let written = conn
                .exec(
                    "INSERT INTO accounts (id, username, username_key, kind, password_hash,
                                       created_at_ms, username_look)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (id) DO NOTHING",
                    args![
                        signed("account id", a.id)?,
                        &a.username,
                        &a.username_key,
                        kind_text(a.kind),
                        &a.password_hash,
                        signed("created_at_ms", a.created_at_ms)?,
                        &reads_as(&a.username),
                    ],
                )
                .map_err(|e| match e.fault {
                    Fault::Unique => StoreError::NameTaken(a.username.clone()),
                    _ => e.into(),
                })?;
            if written == 0 {
                return Err(StoreError::AccountIdTaken(a.id));
            }
        }
        AccountWrite::Password {
            account,
            password_hash,
            at_ms,
            token,
        } => {
            let id = signed("account id", *account)?;
            let changed = conn.exec(
                "UPDATE accounts SET password_hash = ?2 WHERE id = ?1",
                args![id, password_hash],
            )?;
            if changed == 0 {
                return Err(fail(format!("no account {account}")));
            }
            conn.exec(
                "UPDATE api_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, ?2)
                 WHERE account = ?1",
                args![id, signed("revoked_at_ms", *at_ms)?],
            )?;
            write(conn, &AccountWrite::Token(token.clone()))?;
        }
        AccountWrite::Token(t) => {
            let scopes = serde_json::to_string(&t.scopes).map_err(|e| fail(e.to_string()))?;
            conn.exec(
                "INSERT INTO api_tokens (id, account, name, scopes, secret_sha256, created_at_ms,
                                         expires_at_ms, revoked_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                args![
                    &t.id,
                    signed("account id", t.account)?,
                    &t.name,
                    &scopes,
                    &t.secret_sha256[..],
                    signed("created_at_ms", t.created_at_ms)?,
                    t.expires_at_ms
                        .map(|v| signed("expires_at_ms", v))
                        .transpose()?,
                    t.revoked_at_ms
                        .map(|v| signed("revoked_at_ms", v))
                        .transpose()?,
                ],
            )
            .map_err(|e| match e.fault {
                Fault::ForeignKey => fail(format!("token {}: no account {}", t.id, t.account)),
                Fault::Unique => fail(format!("a token {} exists already", t.id)),
                Fault::Fenced | Fault::Other => e.into(),
            })?;
        }
        AccountWrite::Revoke { token, at_ms } => {
            let changed = conn.exec(
                "UPDATE api_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, ?2)
                 WHERE id = ?1",
                args![token, signed("revoked_at_ms", *at_ms)?],
            )?;
            if changed == 0 {
                return Err(fail(format!("no token {token}")));
            }
        }
    }
    Ok(())
}

/// Every account and every token (revoked ones included: a revocation is
/// kept, so that the token stays refused).
pub(super) fn load<C: Sql>(conn: &mut C) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
    select(conn, "", "", args![])
}

/// The first account id not given yet.
pub(super) fn next_id<C: Sql>(conn: &mut C) -> Result<u64, StoreError> {
    let row = conn.query_one("SELECT COALESCE(MAX(id), 0) + 1 FROM accounts", args![])?;
    let next = match row {
        Some(mut row) => row.int(0).map_err(fail)?,
        None => 1,
    };
    Ok(next.max(1) as u64)
}

/// The account `of` names and its tokens: the live ones, and the one it
/// names (revoked or not). Nothing when there is no such account.
pub(super) fn find<C: Sql>(
    conn: &mut C,
    of: &AccountsOf,
) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
    match of {
        AccountsOf::Name(key) => select(
            conn,
            "WHERE username_key = ?1",
            "WHERE revoked_at_ms IS NULL
               AND account IN (SELECT id FROM accounts WHERE username_key = ?1)",
            args![key],
        ),
        AccountsOf::Token(id) => select(
            conn,
            "WHERE id IN (SELECT account FROM api_tokens WHERE id = ?1)",
            "WHERE (revoked_at_ms IS NULL OR id = ?1)
               AND account IN (SELECT account FROM api_tokens WHERE id = ?1)",
            args![id],
        ),
    }
}

/// The accounts and tokens the two conditions (`WHERE ...`, or empty: all)
/// keep, both over `args`.
fn select<C: Sql>(
    conn: &mut C,
    accounts_where: &str,
    tokens_where: &str,
    args: &[super::sql::Arg<'_>],
) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
    let corrupt = |what: String| fail(format!("corrupt account data: {what}"));
    let mut accounts = Vec::new();
    let rows = conn.query(
        &format!(
            "SELECT id, username, username_key, kind, password_hash, created_at_ms FROM accounts
             {accounts_where}"
        ),
        args,
    )?;
    for mut row in rows {
        let id = row.int(0).map_err(corrupt)?;
        let bad = |e: String| corrupt(format!("account {id}: {e}"));
        let kind = match row.text(3).map_err(bad)?.as_str() {
            "person" => AccountKind::Person,
            "bot" => AccountKind::Bot,
            other => return Err(corrupt(format!("account {id} has kind {other:?}"))),
        };
        accounts.push(AccountRow {
            id: u64::try_from(id).map_err(|_| corrupt(format!("account id {id}")))?,
            username: row.text(1).map_err(bad)?,
            username_key: row.text(2).map_err(bad)?,
            kind,
            password_hash: row.text(4).map_err(bad)?,
            created_at_ms: row.int(5).map_err(bad)?.max(0) as u64,
        });
    }
    let mut tokens = Vec::new();
    let rows = conn.query(
        &format!(
            "SELECT id, account, name, scopes, secret_sha256, created_at_ms, expires_at_ms,
                    revoked_at_ms
             FROM api_tokens {tokens_where}"
        ),
        args,
    )?;
    for mut row in rows {
        let id = row.text(0).map_err(corrupt)?;
        let bad = |e: String| corrupt(format!("token {id}: {e}"));
        let scopes = row.text(3).map_err(bad)?;
        let scopes: Vec<Scope> = serde_json::from_str(&scopes)
            .map_err(|e| corrupt(format!("token {id}: scopes: {e}")))?;
        let hash = row.blob(4).map_err(bad)?;
        let secret_sha256: [u8; 32] = hash
            .try_into()
            .map_err(|_| corrupt(format!("token {id}: hash is not 32 bytes")))?;
        let mut time = |i: usize| -> Result<Option<u64>, StoreError> {
            Ok(row.opt_int(i).map_err(bad)?.map(|v| v.max(0) as u64))
        };
        let created_at_ms = time(5)?.unwrap_or(0);
        let expires_at_ms = time(6)?;
        let revoked_at_ms = time(7)?;
        tokens.push(TokenRow {
            account: row.int(1).map_err(bad)?.max(0) as u64,
            name: row.text(2).map_err(bad)?,
            scopes,
            secret_sha256,
            created_at_ms,
            expires_at_ms,
            revoked_at_ms,
            id,
        });
    }
    Ok((accounts, tokens))
}
