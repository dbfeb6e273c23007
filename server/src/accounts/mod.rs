//! Accounts: who a player is. Every account and token lives in memory (loaded
//! from the store at start) and every change is written to the store before
//! it is told or takes effect.
//!
//! - [`password`]: Argon2id hashes, checked in the `password_checks` pool;
//! - [`token`]: personal API tokens, kept as the hash of their secret;
//! - [`throttle`]: the lock after wrong passwords, the per-address counts.
//!
//! A connection proves an account with a token in `hello` and gets a
//! [`Session`]; what it may do is the token's scopes, checked again at each
//! use (a revoked or expired token stops working on open connections too).
//! A cluster's nodes share them through the store and the bus ([`cluster`]).

pub mod cluster;
pub mod password;
pub mod throttle;
pub mod token;

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use grundy_protocol::wire::{
    AccountInfo, AccountKind, ErrorCode, Limits, NewToken, PlayerKind, RequestId, Scope,
    ServerBody, ServerMsg, TokenInfo,
};

use crate::names;
use crate::outbox::{ConnId, Kick, Outbox};
use crate::player::{AccountId, Player};
use crate::store::{
    now_ms, AccountRow, AccountWrite, AccountsOf, MatchStore, StoreError, TokenRow, WriteOp,
};
use crate::work::Pool;
use cluster::{AccountChange, AnnouncerCell};
use throttle::{Lockout, PerAddress};

/// Longest token name, in characters.
pub const MAX_TOKEN_NAME: usize = 40;
/// Addresses the per-address counts remember at once.
const ADDRESSES: usize = 100_000;

/// A refused account request, as the `error` message carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: ErrorCode,
    pub message: String,
    pub retry_after_ms: Option<u64>,
    pub limit: Option<&'static str>,
}

impl Refused {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refused {
        Refused {
            code,
            message: message.into(),
            retry_after_ms: None,
            limit: None,
        }
    }

    pub fn bad(message: impl Into<String>) -> Refused {
        Refused::new(ErrorCode::BadRequest, message)
    }

    fn rate(limit: &'static str, wait: Duration, message: impl Into<String>) -> Refused {
        Refused {
            code: ErrorCode::RateLimited,
            message: message.into(),
            // At least a millisecond: a client told 0 would ask again at once.
            retry_after_ms: Some((wait.as_millis() as u64).max(1)),
            limit: Some(limit),
        }
    }

    pub fn answer(self, id: Option<RequestId>) -> ServerMsg {
        ServerMsg {
            id,
            body: ServerBody::Error {
                code: self.code,
                message: self.message,
                retry_after_ms: self.retry_after_ms,
                limit: self.limit.map(str::to_string),
            },
        }
    }
}

impl From<crate::work::Refused> for Refused {
    fn from(r: crate::work::Refused) -> Refused {
        match r.answer(None) {
            ServerMsg {
                body:
                    ServerBody::Error {
                        code,
                        message,
                        retry_after_ms,
                        ..
                    },
                ..
            } => Refused {
                code,
                message,
                retry_after_ms,
                limit: Some("password_checks"),
            },
            _ => Refused::new(ErrorCode::Internal, "the server failed at it"),
        }
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> Refused {
    tracing::error!("accounts: {what}: {e}");
    Refused::new(ErrorCode::Internal, format!("the server could not {what}"))
}

/// What a connection proved with its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub account: AccountId,
    pub token: String,
    pub scopes: Vec<Scope>,
}

/// A new token: its secret (shown once) and what its owner sees of it.
#[derive(Debug, Clone)]
pub struct Issued {
    pub secret: String,
    pub info: TokenInfo,
    pub account: AccountInfo,
}

struct Account {
    row: AccountRow,
}

impl Account {
    fn info(&self) -> AccountInfo {
        AccountInfo {
            username: self.row.username.clone(),
            kind: self.row.kind,
            created_at_ms: self.row.created_at_ms,
        }
    }
}

fn token_info(row: &TokenRow) -> TokenInfo {
    TokenInfo {
        id: row.id.clone(),
        name: row.name.clone(),
        scopes: row.scopes.clone(),
        created_at_ms: row.created_at_ms,
        expires_at_ms: row.expires_at_ms,
    }
}

/// Why a token does not work now, if it does not.
fn dead(row: &TokenRow, now_ms: u64) -> Option<&'static str> {
    if row.revoked_at_ms.is_some() {
        Some("this token was revoked")
    } else if row.expires_at_ms.is_some_and(|e| e <= now_ms) {
        Some("this token has expired")
    } else {
        None
    }
}

#[derive(Default)]
struct State {
    accounts: HashMap<AccountId, Account>,
    by_key: HashMap<String, AccountId>,
    /// What each account's name reads as ([`names::reads_as`]).
    by_look: HashMap<String, AccountId>,
    /// Names (keys and looks) of accounts being created.
    pending: HashSet<String>,
    tokens: HashMap<String, TokenRow>,
    next_id: AccountId,
    lockouts: HashMap<AccountId, Lockout>,
}

impl State {
    fn insert(&mut self, row: AccountRow) {
        self.next_id = self.next_id.max(row.id + 1);
        self.by_key.insert(row.username_key.clone(), row.id);
        self.by_look.insert(names::reads_as(&row.username), row.id);
        self.accounts.insert(row.id, Account { row });
    }

    /// The account a name is taken by (same name whatever the case, or one
    /// that reads the same), or one being created under it.
    fn taken(&self, name: &str) -> Option<String> {
        let (key, look) = (names::key(name), names::reads_as(name));
        let by = self
            .by_key
            .get(&key)
            .or_else(|| self.by_look.get(&look))
            .and_then(|id| self.accounts.get(id));
        match by {
            Some(a) => Some(a.row.username.clone()),
            None if self.pending.contains(&key) || self.pending.contains(&look) => {
                Some(name.to_string())
            }
            None => None,
        }
    }

    fn live_tokens(&self, account: AccountId, now_ms: u64) -> impl Iterator<Item = &TokenRow> {
        self.tokens
            .values()
            .filter(move |t| t.account == account && dead(t, now_ms).is_none())
    }
}

/// Every account, its tokens, and the limits on asking for them.
pub struct Accounts {
    state: Mutex<State>,
    store: Arc<dyn MatchStore>,
    limits: Limits,
    /// Password hashes and checks: off the reactor, bounded.
    checks: Pool,
    /// A cluster node's reads of accounts other nodes changed.
    reads: Pool,
    /// Where this node's changes go for the others (a cluster's bus).
    announcer: AnnouncerCell,
    logins: Mutex<PerAddress>,
    creations: Mutex<PerAddress>,
    /// The server leaves rooms that ask for a bot to external `grundy-bot
    /// house` processes (its own house bots are off): guests may then say
    /// hello as exactly `grundy-bot (LEVEL)` (`crate::names::reserved`).
    external_house: AtomicBool,
    /// This node's connections that said hello with a token: a password
    /// change ends those of its account.
    signed_in: Mutex<HashMap<ConnId, SignedIn>>,
}

/// A connection of this node acting as an account.
struct SignedIn {
    account: AccountId,
    token: String,
    outbox: Outbox,
}

/// Removes the names of an account being created, however its creation ends.
struct Pending<'a> {
    accounts: &'a Accounts,
    names: [String; 2],
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let mut state = self.accounts.state();
        for n in &self.names {
            state.pending.remove(n);
        }
    }
}

/// Marks a password check under way for an account, however it ends.
struct Checking<'a> {
    accounts: &'a Accounts,
    account: Option<AccountId>,
    settled: bool,
}

impl Checking<'_> {
    fn settle(&mut self, right: bool) {
        let Some(id) = self.account else { return };
        self.settled = true;
        let (free, max) = self.accounts.lockout_limits();
        {
            let mut state = self.accounts.state();
            let lockout = state.lockouts.entry(id).or_default();
            if right {
                lockout.succeeded();
            } else {
                lockout.failed(Instant::now(), free, max);
            }
            if lockout.idle() {
                state.lockouts.remove(&id);
            }
        }
        // The other nodes of a cluster count it too.
        self.accounts.announce(if right {
            AccountChange::LoginSucceeded { account: id }
        } else {
            AccountChange::LoginFailed { account: id }
        });
    }
}

impl Drop for Checking<'_> {
    fn drop(&mut self) {
        if !self.settled {
            // The check never finished (refused as busy, or the request
            // went away): nothing was learnt, so nothing counts.
            if let Some(id) = self.account {
                let mut state = self.accounts.state();
                if let Some(l) = state.lockouts.get_mut(&id) {
                    l.abandoned();
                    if l.idle() {
                        state.lockouts.remove(&id);
                    }
                }
            }
        }
    }
}

impl Accounts {
    /// The wrong passwords allowed before a lock, and the longest lock.
    fn lockout_limits(&self) -> (u32, Duration) {
        (
            self.limits.login_failures_before_lockout,
            Duration::from_millis(self.limits.login_lockout_max_ms),
        )
    }

    /// The registry over what the store holds. `checks` and `reads`:
    /// password checks and (in a cluster) reads of an account again, each
    /// as (at once, how many may wait).
    pub fn new(
        store: Arc<dyn MatchStore>,
        limits: Limits,
        accounts: Vec<AccountRow>,
        tokens: Vec<TokenRow>,
        checks: (usize, usize),
        reads: (usize, usize),
    ) -> Accounts {
        let mut state = State {
            next_id: 1,
            ..State::default()
        };
        for row in accounts {
            state.insert(row);
        }
        for t in tokens {
            state.tokens.insert(t.id.clone(), t);
        }
        let minute = Duration::from_secs(60);
        Accounts {
            state: Mutex::new(state),
            store,
            logins: Mutex::new(PerAddress::new(
                limits.logins_per_ip_per_minute,
                minute,
                ADDRESSES,
            )),
            creations: Mutex::new(PerAddress::new(
                limits.accounts_per_ip_per_hour,
                60 * minute,
                ADDRESSES,
            )),
            limits,
            checks: Pool::new("password_checks", checks.0, checks.1),
            reads: Pool::new("account_reads", reads.0, reads.1),
            announcer: AnnouncerCell::new(),
            external_house: AtomicBool::new(false),
            signed_in: Mutex::new(HashMap::new()),
        }
    }

    /// Notes that the connection of `outbox` acts as `session`'s account
    /// (None: as nobody, a guest, or it is gone).
    pub fn signed_in(&self, outbox: &Outbox, session: Option<&Session>) {
        let mut signed_in = self.signed_in.lock().unwrap_or_else(|p| p.into_inner());
        match session {
            Some(s) => {
                signed_in.insert(
                    outbox.conn,
                    SignedIn {
                        account: s.account,
                        token: s.token.clone(),
                        outbox: outbox.clone(),
                    },
                );
            }
            None => {
                signed_in.remove(&outbox.conn);
            }
        }
    }

    /// Ends this node's connections of `account` but those that said hello
    /// with `keep`: its password changed, their tokens are revoked.
    fn end_sessions(&self, account: AccountId, keep: &str) {
        let signed_in = self.signed_in.lock().unwrap_or_else(|p| p.into_inner());
        for s in signed_in.values() {
            if s.account == account && s.token != keep {
                s.outbox.drop_for(Kick::PasswordChanged);
            }
        }
    }

    /// Revokes in memory every token of `account` but `keep`, at `at_ms`.
    fn revoke_all(&self, account: AccountId, keep: &str, at_ms: u64) {
        let mut state = self.state();
        for row in state.tokens.values_mut() {
            if row.account == account && row.id != keep {
                row.revoked_at_ms.get_or_insert(at_ms);
            }
        }
    }

    /// Tells whether the server's own house bots are off, so that external
    /// house bots serve its rooms that ask for a bot (and may then take the
    /// names they play under, `crate::names::reserved`). Before this, they
    /// are taken to be on.
    pub fn set_house_bots(&self, on: bool) {
        self.external_house.store(!on, Ordering::Relaxed);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every change is a whole insert or removal: a poisoned state is whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn write(&self, op: AccountWrite, what: &str) -> Result<(), Refused> {
        self.try_write(op).await.map_err(|e| internal(what, e))
    }

    async fn try_write(&self, op: AccountWrite) -> Result<(), StoreError> {
        match self.store.write(WriteOp::Account(op)).await {
            Ok(done) => done,
            Err(_) => Err(StoreError::Closed),
        }
    }

    /// The account with this id, as others see it.
    pub fn info(&self, account: AccountId) -> Option<AccountInfo> {
        self.state().accounts.get(&account).map(Account::info)
    }

    /// The account named `username` (whatever its case), as others see it;
    /// in a cluster, read again first (another node may have made it).
    pub async fn named(
        &self,
        username: &str,
    ) -> Result<Option<(AccountId, AccountInfo)>, crate::work::Refused> {
        self.recall(AccountsOf::Name(names::key(username))).await?;
        let state = self.state();
        let found = state
            .by_key
            .get(&names::key(username))
            .and_then(|id| state.accounts.get(id))
            .map(|a| (a.row.id, a.info()));
        Ok(found)
    }

    /// The account and token of a session, as `welcome` shows them.
    pub fn session_info(&self, session: &Session) -> Option<(AccountInfo, TokenInfo)> {
        let state = self.state();
        let account = state.accounts.get(&session.account)?.info();
        let token = state.tokens.get(&session.token).map(token_info)?;
        Some((account, token))
    }

    /// The player an account plays as.
    pub fn player(&self, account: AccountId) -> Option<Player> {
        let state = self.state();
        let a = state.accounts.get(&account)?;
        Some(Player {
            name: Some(a.row.username.clone()),
            kind: Some(PlayerKind::from(a.row.kind)),
            account: Some(account),
        })
    }

    /// Whether a guest may play as `name` (trimmed already): a name fit for
    /// a guest, and none an account's (whatever its case or look-alikes).
    pub fn guest_may_use(&self, name: &str) -> Result<(), Refused> {
        let external_house = self.external_house.load(Ordering::Relaxed);
        names::check_guest_name(name, external_house).map_err(Refused::bad)?;
        match self.state().taken(name) {
            Some(owner) => Err(Refused::new(
                ErrorCode::NameTaken,
                format!(
                    "name {name:?} is an account's ({owner:?}): log in to play as it, or choose another"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Opens an account. `from`: the client's address (None: exempt from
    /// the per-address count).
    pub async fn create(
        &self,
        from: Option<IpAddr>,
        username: &str,
        password: String,
        kind: AccountKind,
    ) -> Result<AccountInfo, Refused> {
        names::check_username(username).map_err(|m| Refused::new(ErrorCode::BadRequest, m))?;
        password::check(&password).map_err(|m| Refused::new(ErrorCode::BadRequest, m))?;
        let (key, look) = (names::key(username), names::reads_as(username));
        let _pending = {
            let mut state = self.state();
            if let Some(owner) = state.taken(username) {
                let message = if names::key(&owner) == key {
                    format!("the name {owner:?} is taken")
                } else {
                    format!("{username:?} reads as {owner:?}, which is taken")
                };
                return Err(Refused::new(ErrorCode::NameTaken, message));
            }
            if let Err(wait) = lock(&self.creations).take(from, Instant::now()) {
                return Err(Refused::rate(
                    "accounts_per_ip_per_hour",
                    wait,
                    format!(
                        "more than {} new accounts from this address in an hour (accounts_per_ip_per_hour)",
                        self.limits.accounts_per_ip_per_hour
                    ),
                ));
            }
            state.pending.insert(key.clone());
            state.pending.insert(look.clone());
            Pending {
                accounts: self,
                names: [key.clone(), look],
            }
        };
        let hash = self
            .checks
            .run(move || password::hash(&password))
            .await?
            .map_err(|e| internal("hash the password", e))?;
        let mut row = AccountRow {
            id: 0,
            username: username.to_string(),
            username_key: key.clone(),
            kind,
            password_hash: hash,
            created_at_ms: now_ms(),
        };
        // In a cluster another node may give the same id at the same time:
        // the store refuses the second, which takes the next.
        let mut attempts = 0;
        loop {
            row.id = {
                let mut state = self.state();
                let id = state.next_id;
                state.next_id += 1;
                id
            };
            match self.try_write(AccountWrite::Create(row.clone())).await {
                Ok(()) => break,
                Err(StoreError::AccountIdTaken(_)) if attempts < 5 => {
                    attempts += 1;
                    if let Some(next) = self.next_free_id().await {
                        let mut state = self.state();
                        state.next_id = state.next_id.max(next);
                    }
                }
                // Taken on another node meanwhile.
                Err(StoreError::NameTaken(_)) => {
                    let _ = self.recall(AccountsOf::Name(key)).await;
                    return Err(Refused::new(
                        ErrorCode::NameTaken,
                        format!("the name {username:?} is taken"),
                    ));
                }
                Err(e) => return Err(internal("record the account", e)),
            }
        }
        let account = Account { row };
        let info = account.info();
        self.state().insert(account.row);
        self.announce(AccountChange::Created { username_key: key });
        tracing::info!(username, ?kind, "account created");
        Ok(info)
    }

    /// Trades a username and password for a new token.
    pub async fn login(
        &self,
        from: Option<IpAddr>,
        username: &str,
        password: String,
        new: NewToken,
    ) -> Result<Issued, Refused> {
        // The password is the account's whole authority: any scopes.
        let request = check_new_token(new, "login", &self.limits)?;
        match self.check_password(from, username, password).await? {
            Some(id) => self.issue(id, request).await,
            None => Err(Refused::new(
                ErrorCode::Unauthorized,
                "wrong username or password",
            )),
        }
    }

    /// Whether `password` is the account `username`'s: its id if so. The
    /// one check of a password `login` and `change_password` share: the
    /// per-address count of logins, the account's lock after wrong ones,
    /// and the bounded pool the hash is checked in.
    async fn check_password(
        &self,
        from: Option<IpAddr>,
        username: &str,
        password: String,
    ) -> Result<Option<AccountId>, Refused> {
        if password.chars().count() > password::MAX_PASSWORD {
            return Err(Refused::new(
                ErrorCode::BadRequest,
                format!(
                    "password: must be at most {} characters",
                    password::MAX_PASSWORD
                ),
            ));
        }
        if let Err(wait) = lock(&self.logins).take(from, Instant::now()) {
            return Err(Refused::rate(
                "logins_per_ip_per_minute",
                wait,
                format!(
                    "more than {} logins from this address in a minute (logins_per_ip_per_minute)",
                    self.limits.logins_per_ip_per_minute
                ),
            ));
        }
        // In a cluster, the account may be another node's since this one
        // started (or have new tokens, or a new password, there).
        if let Err(refused) = self.recall(AccountsOf::Name(names::key(username))).await {
            // Not an unknown account for the load: asked again shortly.
            return Err(refused.into());
        }
        let (account, hash) = {
            let mut state = self.state();
            let account = state.by_key.get(&names::key(username)).copied();
            let hash = account
                .and_then(|id| state.accounts.get(&id))
                .map(|a| a.row.password_hash.clone());
            if let Some(id) = account {
                let free = self.limits.login_failures_before_lockout;
                let lockout = state.lockouts.entry(id).or_default();
                if let Some(wait) = lockout.locked(Instant::now(), free) {
                    return Err(Refused::rate(
                        "login_failures_before_lockout",
                        wait,
                        format!(
                            "too many wrong passwords for this account in a row (login_failures_before_lockout: {free}); try again in {} ms",
                            wait.as_millis().max(1)
                        ),
                    ));
                }
                lockout.begin();
            }
            (account, hash)
        };
        let mut checking = Checking {
            accounts: self,
            account,
            settled: false,
        };
        let right = self
            .checks
            .run(move || password::verify(&password, hash.as_deref()))
            .await?;
        checking.settle(right);
        Ok(account.filter(|_| right))
    }

    /// Changes the session's account's password (scope `account`), given
    /// its current one: every token of the account is revoked and the
    /// account's other connections ended, on every node the bus reaches;
    /// the session (its connection's `outbox`) carries on with the new
    /// token this gives (the name, scopes and expiry of its own).
    pub async fn change_password(
        &self,
        from: Option<IpAddr>,
        outbox: &Outbox,
        session: &Session,
        current: String,
        new: String,
    ) -> Result<Issued, Refused> {
        self.allow(session, Scope::Account, "change_password")?;
        password::check(&new).map_err(|m| Refused::bad(format!("new_password: {m}")))?;
        let (username, own) = {
            let state = self.state();
            let username = state
                .accounts
                .get(&session.account)
                .map(|a| a.row.username.clone());
            (username, state.tokens.get(&session.token).cloned())
        };
        let (Some(username), Some(own)) = (username, own) else {
            return Err(Refused::new(ErrorCode::Unauthorized, "this token is gone"));
        };
        match self.check_password(from, &username, current).await? {
            Some(id) if id == session.account => {}
            _ => {
                return Err(Refused::new(
                    ErrorCode::Unauthorized,
                    "password: not the account's current password",
                ))
            }
        }
        let password_hash = self
            .checks
            .run(move || password::hash(&new))
            .await?
            .map_err(|e| internal("hash the password", e))?;
        let minted = token::mint().map_err(|e| internal("make a token", e))?;
        let at_ms = now_ms();
        let row = TokenRow {
            id: minted.id,
            account: session.account,
            name: own.name.clone(),
            scopes: own.scopes.clone(),
            secret_sha256: minted.secret_sha256,
            created_at_ms: at_ms,
            expires_at_ms: own.expires_at_ms,
            revoked_at_ms: None,
        };
        self.write(
            AccountWrite::Password {
                account: session.account,
                password_hash: password_hash.clone(),
                at_ms,
                token: row.clone(),
            },
            "record the new password",
        )
        .await?;
        let info = {
            let mut state = self.state();
            let Some(account) = state.accounts.get_mut(&session.account) else {
                return Err(Refused::new(ErrorCode::Unauthorized, "no such account"));
            };
            account.row.password_hash = password_hash;
            let info = account.info();
            state.tokens.insert(row.id.clone(), row.clone());
            info
        };
        self.revoke_all(session.account, &row.id, at_ms);
        let carries_on = Session {
            token: row.id.clone(),
            ..session.clone()
        };
        self.signed_in(outbox, Some(&carries_on));
        self.end_sessions(session.account, &row.id);
        self.announce(AccountChange::PasswordChanged {
            account: session.account,
            keep: row.id.clone(),
            at_ms,
        });
        tracing::info!(account = session.account, "password changed");
        Ok(Issued {
            secret: minted.text,
            info: token_info(&row),
            account: info,
        })
    }

    /// Mints, records and returns a new token of `account`.
    async fn issue(&self, account: AccountId, request: TokenRequest) -> Result<Issued, Refused> {
        let now = now_ms();
        let info = {
            let state = self.state();
            let live = state.live_tokens(account, now).count();
            if live >= self.limits.tokens_per_account as usize {
                return Err(Refused {
                    code: ErrorCode::LimitReached,
                    message: format!(
                        "an account may hold {} live tokens (tokens_per_account): revoke one first",
                        self.limits.tokens_per_account
                    ),
                    retry_after_ms: None,
                    limit: Some("tokens_per_account"),
                });
            }
            state.accounts.get(&account).map(Account::info)
        };
        let Some(info) = info else {
            return Err(Refused::new(ErrorCode::Unauthorized, "no such account"));
        };
        let minted = token::mint().map_err(|e| internal("make a token", e))?;
        let expires_at_ms = Some(request.expires_at_ms(now));
        let row = TokenRow {
            id: minted.id,
            account,
            name: request.name,
            scopes: request.scopes,
            secret_sha256: minted.secret_sha256,
            created_at_ms: now,
            expires_at_ms,
            revoked_at_ms: None,
        };
        self.write(AccountWrite::Token(row.clone()), "record the token")
            .await?;
        let token = token_info(&row);
        self.state().tokens.insert(row.id.clone(), row);
        Ok(Issued {
            secret: minted.text,
            info: token,
            account: info,
        })
    }

    /// The session a token proves, or why it proves none. Every refusal is
    /// `unauthorized`; an unknown and a wrong secret read the same.
    pub fn authenticate(&self, text: &str) -> Result<(Session, AccountInfo, TokenInfo), Refused> {
        let unknown = || Refused::new(ErrorCode::Unauthorized, "not a valid API token");
        let (id, secret) = token::parse(text).ok_or_else(unknown)?;
        let state = self.state();
        let row = state.tokens.get(id).ok_or_else(unknown)?;
        if !token::matches(secret, &row.secret_sha256) {
            return Err(unknown());
        }
        if let Some(why) = dead(row, now_ms()) {
            return Err(Refused::new(ErrorCode::Unauthorized, why));
        }
        let account = state.accounts.get(&row.account).ok_or_else(unknown)?;
        Ok((
            Session {
                account: row.account,
                token: row.id.clone(),
                scopes: row.scopes.clone(),
            },
            account.info(),
            token_info(row),
        ))
    }

    /// Why the account token `id` no longer acts (revoked, expired, or
    /// unknown), if it does not: a seat taken with it then refuses its seat
    /// token. A token this node never heard of (another node's, in a
    /// cluster) is read from the store first, and stays refused if it is
    /// not there: never taken as live for want of knowing. A token it holds
    /// costs one lookup.
    pub async fn token_dead(&self, id: &str) -> Option<&'static str> {
        if let Some(why) = self.dead_here(id) {
            return why;
        }
        // Unknown here: a failed or busy read leaves it unknown, refused.
        let _ = self.recall(AccountsOf::Token(id.to_owned())).await;
        self.dead_here(id)
            .unwrap_or(Some("is not known to this server"))
    }

    /// Some(why the token `id` does not act, or None if it does) when this
    /// node holds it; None when it does not.
    fn dead_here(&self, id: &str) -> Option<Option<&'static str>> {
        let state = self.state();
        let row = state.tokens.get(id)?;
        Some(if row.revoked_at_ms.is_some() {
            Some("was revoked")
        } else if row.expires_at_ms.is_some_and(|e| e <= now_ms()) {
            Some("has expired")
        } else {
            None
        })
    }

    /// Whether the session's token still works and carries `scope`, for
    /// `what` (named in the refusal).
    pub fn allow(&self, session: &Session, scope: Scope, what: &str) -> Result<(), Refused> {
        let state = self.state();
        let Some(row) = state.tokens.get(&session.token) else {
            return Err(Refused::new(ErrorCode::Unauthorized, "this token is gone"));
        };
        if let Some(why) = dead(row, now_ms()) {
            return Err(Refused::new(ErrorCode::Unauthorized, why));
        }
        if !row.scopes.contains(&scope) {
            let has: Vec<&str> = row.scopes.iter().map(|s| s.as_str()).collect();
            return Err(Refused::new(
                ErrorCode::Forbidden,
                format!(
                    "{what} needs a token with scope {:?}; this one has [{}]",
                    scope.as_str(),
                    has.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// A new token for the session's account (scope `account`), no broader
    /// than the session's own: no scope it lacks, no later expiry. Without
    /// scopes, its scopes; without a life, the default one, cut to its
    /// expiry.
    pub async fn create_token(&self, session: &Session, new: NewToken) -> Result<Issued, Refused> {
        self.allow(session, Scope::Account, "create_token")?;
        let Some(own) = self.state().tokens.get(&session.token).cloned() else {
            return Err(Refused::new(ErrorCode::Unauthorized, "this token is gone"));
        };
        let scopes_given = new.scopes.is_some();
        let days_given = new.expires_in_days.is_some();
        let mut request = check_new_token(new, "token", &self.limits)?;
        if !scopes_given {
            request.scopes = own.scopes.clone();
        }
        let broader: Vec<&str> = (request.scopes.iter())
            .filter(|s| !own.scopes.contains(s))
            .map(|s| s.as_str())
            .collect();
        if !broader.is_empty() {
            let has: Vec<&str> = own.scopes.iter().map(|s| s.as_str()).collect();
            return Err(Refused::new(
                ErrorCode::Forbidden,
                format!(
                    "scopes: a token creates none broader than itself: this one has [{}], not [{}]",
                    has.join(", "),
                    broader.join(", ")
                ),
            ));
        }
        if let Some(limit) = own.expires_at_ms {
            if request.expires_at_ms(now_ms()) > limit {
                if days_given {
                    return Err(Refused::new(
                        ErrorCode::Forbidden,
                        format!(
                            "expires_in_days: a token creates none that outlives itself: this one expires at {limit} ms, {} days from now at most",
                            limit.saturating_sub(now_ms()) / 86_400_000
                        ),
                    ));
                }
                request.until = Some(limit);
            }
        }
        self.issue(session.account, request).await
    }

    /// The account's live tokens, oldest first (scope `account`).
    pub fn tokens(&self, session: &Session) -> Result<Vec<TokenInfo>, Refused> {
        self.allow(session, Scope::Account, "list_tokens")?;
        let state = self.state();
        let mut tokens: Vec<TokenInfo> = state
            .live_tokens(session.account, now_ms())
            .map(token_info)
            .collect();
        tokens.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Ok(tokens)
    }

    /// Revokes one of the account's tokens (scope `account`), or with None
    /// the session's own (any scope). Revoking a revoked token is no error.
    pub async fn revoke(&self, session: &Session, token: Option<&str>) -> Result<String, Refused> {
        let id = match token {
            None => session.token.clone(),
            Some(id) => {
                if id != session.token {
                    self.allow(session, Scope::Account, "revoke_token of another token")?;
                }
                let state = self.state();
                match state.tokens.get(id) {
                    Some(row) if row.account == session.account => id.to_string(),
                    _ => {
                        return Err(Refused::new(
                            ErrorCode::BadRequest,
                            format!("token_id: your account has no token {id:?}"),
                        ))
                    }
                }
            }
        };
        if self
            .state()
            .tokens
            .get(&id)
            .is_some_and(|t| t.revoked_at_ms.is_some())
        {
            return Ok(id);
        }
        let at_ms = now_ms();
        self.write(
            AccountWrite::Revoke {
                token: id.clone(),
                at_ms,
            },
            "record the revocation",
        )
        .await?;
        if let Some(row) = self.state().tokens.get_mut(&id) {
            row.revoked_at_ms.get_or_insert(at_ms);
        }
        self.announce(AccountChange::Revoked {
            token: id.clone(),
            at_ms,
        });
        Ok(id)
    }
}

fn lock(m: &Mutex<PerAddress>) -> MutexGuard<'_, PerAddress> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A token request with its defaults filled in and checked.
struct TokenRequest {
    name: String,
    scopes: Vec<Scope>,
    days: u32,
    /// An expiry earlier than `days` gives (the creating token's).
    until: Option<u64>,
}

impl TokenRequest {
    fn expires_at_ms(&self, now_ms: u64) -> u64 {
        let end = now_ms.saturating_add(u64::from(self.days) * 86_400_000);
        self.until.map_or(end, |until| end.min(until))
    }
}

fn check_new_token(
    new: NewToken,
    default_name: &str,
    limits: &Limits,
) -> Result<TokenRequest, Refused> {
    let bad = |m: String| Refused::new(ErrorCode::BadRequest, m);
    let name = new
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| default_name.to_string());
    if name.chars().count() > MAX_TOKEN_NAME || name.chars().any(char::is_control) {
        return Err(bad(format!(
            "name: a token's name is at most {MAX_TOKEN_NAME} printable characters"
        )));
    }
    let mut scopes = new.scopes.unwrap_or_else(|| Scope::ALL.to_vec());
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(bad(
            "scopes: give at least one (play, tournaments, account)".into(),
        ));
    }
    let max = limits.token_max_days;
    let days = new
        .expires_in_days
        .unwrap_or(limits.token_default_days.min(max));
    if !(1..=max).contains(&days) {
        return Err(bad(format!(
            "expires_in_days: must be 1 to {max} (token_max_days), got {days}"
        )));
    }
    Ok(TokenRequest {
        name,
        scopes,
        days,
        until: None,
    })
}
