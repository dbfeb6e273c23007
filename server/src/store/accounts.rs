//! Accounts and their API tokens in the store (version 6). A password is kept
//! only as its Argon2id hash (a PHC string), a token only as the SHA-256 of its
//! secret: the file holds nothing a client could present.
//!
//! ```sql
//! accounts        (id INT PK, username TEXT, username_key TEXT UNIQUE, kind TEXT,
//!                  password_hash TEXT, created_at_ms INT)
//! api_tokens      (id TEXT PK, account -> accounts.id, name TEXT, scopes TEXT json,
//!                  secret_sha256 BLOB, created_at_ms INT, expires_at_ms INT NULL,
//!                  revoked_at_ms INT NULL)
//! account_ratings (game TEXT (`family` before version 7), account -> accounts.id,
//!                  rating REAL, deviation REAL, volatility REAL, games INT,
//!                  PK (game, account))
//! ```
//!
//! `username_key` is the name as it is compared ([`crate::accounts::names`]):
//! the unique index is what finally keeps two accounts from sharing a name.
//! The ratings of version 5 and before (`ratings`, keyed by a plain name) are
//! left as they were: read back as unclaimed history, never written again.

use grundy_protocol::wire::{AccountKind, Scope};
use rusqlite::{ffi, params, Connection};

use super::{constraint, StoreError};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS accounts (
    id            INTEGER NOT NULL PRIMARY KEY,
    username      TEXT    NOT NULL,
    username_key  TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_tokens (
    id            TEXT    NOT NULL PRIMARY KEY,
    account       INTEGER NOT NULL REFERENCES accounts (id),
    name          TEXT    NOT NULL,
    scopes        TEXT    NOT NULL,
    secret_sha256 BLOB    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER,
    revoked_at_ms INTEGER
);
CREATE TABLE IF NOT EXISTS account_ratings (
    game       TEXT    NOT NULL,
    account    INTEGER NOT NULL REFERENCES accounts (id),
    rating     REAL    NOT NULL,
    deviation  REAL    NOT NULL,
    volatility REAL    NOT NULL,
    games      INTEGER NOT NULL,
    PRIMARY KEY (game, account)
);
";

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

/// An account write.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountWrite {
    /// A new account: its id and its name's key must both be new.
    Create(AccountRow),
    /// A new token of an existing account.
    Token(TokenRow),
    /// The token stops working (a second revocation keeps the first time).
    Revoke { token: String, at_ms: u64 },
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

pub(super) fn write(conn: &Connection, op: &AccountWrite) -> Result<(), StoreError> {
    match op {
        AccountWrite::Create(a) => {
            conn.prepare_cached(
                "INSERT INTO accounts (id, username, username_key, kind, password_hash,
                                       created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                signed("account id", a.id)?,
                a.username,
                a.username_key,
                kind_text(a.kind),
                a.password_hash,
                signed("created_at_ms", a.created_at_ms)?,
            ])
            .map_err(|e| match constraint(&e) {
                Some(ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                    fail(format!("the name {:?} is taken", a.username))
                }
                _ => e.into(),
            })?;
        }
        AccountWrite::Token(t) => {
            let scopes = serde_json::to_string(&t.scopes).map_err(|e| fail(e.to_string()))?;
            conn.prepare_cached(
                "INSERT INTO api_tokens (id, account, name, scopes, secret_sha256, created_at_ms,
                                         expires_at_ms, revoked_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                t.id,
                signed("account id", t.account)?,
                t.name,
                scopes,
                &t.secret_sha256[..],
                signed("created_at_ms", t.created_at_ms)?,
                t.expires_at_ms
                    .map(|v| signed("expires_at_ms", v))
                    .transpose()?,
                t.revoked_at_ms
                    .map(|v| signed("revoked_at_ms", v))
                    .transpose()?,
            ])
            .map_err(|e| match constraint(&e) {
                Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => {
                    fail(format!("token {}: no account {}", t.id, t.account))
                }
                Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                    fail(format!("a token {} exists already", t.id))
                }
                _ => e.into(),
            })?;
        }
        AccountWrite::Revoke { token, at_ms } => {
            let changed = conn
                .prepare_cached(
                    "UPDATE api_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, ?2)
                     WHERE id = ?1",
                )?
                .execute(params![token, signed("revoked_at_ms", *at_ms)?])?;
            if changed == 0 {
                return Err(fail(format!("no token {token}")));
            }
        }
    }
    Ok(())
}

/// Every account and every token (revoked ones included: a revocation is
/// kept, so that the token stays refused).
pub(super) fn load(conn: &Connection) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
    let corrupt = |what: String| fail(format!("corrupt account data: {what}"));
    let mut accounts = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, username, username_key, kind, password_hash, created_at_ms FROM accounts",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let kind: String = row.get(3)?;
        let kind = match kind.as_str() {
            "person" => AccountKind::Person,
            "bot" => AccountKind::Bot,
            other => return Err(corrupt(format!("account {id} has kind {other:?}"))),
        };
        accounts.push(AccountRow {
            id: u64::try_from(id).map_err(|_| corrupt(format!("account id {id}")))?,
            username: row.get(1)?,
            username_key: row.get(2)?,
            kind,
            password_hash: row.get(4)?,
            created_at_ms: row.get::<_, i64>(5)?.max(0) as u64,
        });
    }
    let mut tokens = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, account, name, scopes, secret_sha256, created_at_ms, expires_at_ms,
                revoked_at_ms
         FROM api_tokens",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        let scopes: String = row.get(3)?;
        let scopes: Vec<Scope> = serde_json::from_str(&scopes)
            .map_err(|e| corrupt(format!("token {id}: scopes: {e}")))?;
        let hash: Vec<u8> = row.get(4)?;
        let secret_sha256: [u8; 32] = hash
            .try_into()
            .map_err(|_| corrupt(format!("token {id}: hash is not 32 bytes")))?;
        let time = |i: usize| -> rusqlite::Result<Option<u64>> {
            Ok(row.get::<_, Option<i64>>(i)?.map(|v| v.max(0) as u64))
        };
        tokens.push(TokenRow {
            account: row.get::<_, i64>(1)?.max(0) as u64,
            name: row.get(2)?,
            scopes,
            secret_sha256,
            created_at_ms: time(5)?.unwrap_or(0),
            expires_at_ms: time(6)?,
            revoked_at_ms: time(7)?,
            id,
        });
    }
    Ok((accounts, tokens))
}
