//! What a cluster's nodes share of accounts. Each node keeps accounts and
//! tokens in memory, loaded at its start; the others' changes reach it two
//! ways: over the bus as they happen ([`AccountChange`]: a new account's
//! name, a revocation, a password change, a wrong or right password for the login lockout;
//! never a password hash or a token's), and by reading
//! the database again where a stale copy would be wrong (`hello` with a
//! token reads that token and its account; `login` reads the account).

use std::sync::OnceLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{token, Accounts};
use crate::player::AccountId;
use crate::store::AccountsOf;
use crate::work::Refused;

/// An account change one node made, for the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum AccountChange {
    /// A new account: its name is taken (read it from the store).
    Created { username_key: String },
    /// The token stops working, on open connections too.
    Revoked { token: String, at_ms: u64 },
    /// A wrong password for the account: the lockout counts it on every
    /// node.
    LoginFailed { account: AccountId },
    /// The right password: the account's count of wrong ones starts again.
    LoginSucceeded { account: AccountId },
    /// A new password: every token of the account but `keep` (the changing
    /// connection's new one) is revoked, and the account's connections
    /// that said hello with one of them end. The hash is read from the
    /// store when a `login` here needs it.
    PasswordChanged {
        account: AccountId,
        keep: String,
        at_ms: u64,
    },
}

/// Where a node sends its own changes (the bus).
pub type Announcer = Box<dyn Fn(AccountChange) + Send + Sync>;

impl Accounts {
    /// Whether these accounts are a cluster node's (shared with others).
    pub fn clustered(&self) -> bool {
        self.store.cluster().is_some()
    }

    /// Sends every change this node makes to `announce` (once).
    pub fn announce_with(&self, announce: Announcer) {
        let _ = self.announcer.set(announce);
    }

    pub(super) fn announce(&self, change: AccountChange) {
        if let Some(announce) = self.announcer.get() {
            announce(change);
        }
    }

    /// Another node's change.
    pub async fn changed_elsewhere(&self, change: AccountChange) {
        match change {
            AccountChange::Created { username_key } => {
                if let Err(refused) = self.recall(AccountsOf::Name(username_key)).await {
                    tracing::warn!("accounts: another node's new account not read: {refused:?}");
                }
            }
            AccountChange::Revoked { token, at_ms } => {
                if let Some(row) = self.state().tokens.get_mut(&token) {
                    row.revoked_at_ms.get_or_insert(at_ms);
                }
            }
            AccountChange::PasswordChanged {
                account,
                keep,
                at_ms,
            } => {
                self.revoke_all(account, &keep, at_ms);
                self.end_sessions(account, &keep);
                // The new hash and token now, so that a stale copy never
                // lets the old password in should a later read fail.
                if let Err(refused) = self.recall(AccountsOf::Token(keep)).await {
                    tracing::warn!("accounts: a new password not read: {refused:?}");
                }
            }
            AccountChange::LoginFailed { account } => {
                let (free, max) = self.lockout_limits();
                let mut state = self.state();
                let lockout = state.lockouts.entry(account).or_default();
                lockout.failed_elsewhere(Instant::now(), free, max);
            }
            AccountChange::LoginSucceeded { account } => {
                let mut state = self.state();
                if let Some(lockout) = state.lockouts.get_mut(&account) {
                    lockout.succeeded_elsewhere();
                    if lockout.idle() {
                        state.lockouts.remove(&account);
                    }
                }
            }
        }
    }

    /// In a cluster, reads the token `text` presents and its account again
    /// (made, or revoked, on another node); then `authenticate` decides.
    /// Refused (`busy`) only when the reads are full and this node has never
    /// heard of the token: it may be another node's, and must not be
    /// refused as unknown for the load on the pool.
    pub async fn recall_token(&self, text: &str) -> Result<(), Refused> {
        let Some((id, _)) = token::parse(text) else {
            return Ok(());
        };
        match self.recall(AccountsOf::Token(id.to_owned())).await {
            Err(refused) if !self.state().tokens.contains_key(id) => Err(refused),
            _ => Ok(()),
        }
    }

    /// In a cluster, the next account id no node has given (after the store
    /// refused one another node gave first); None when it cannot be read.
    pub(super) async fn next_free_id(&self) -> Option<u64> {
        let store = self.store.clone();
        let read = self.reads.run(move || match store.cluster() {
            Some(cluster) => cluster.next_account_id().map(Some),
            None => Ok(None),
        });
        match read.await {
            Ok(Ok(next)) => next,
            Ok(Err(e)) => {
                tracing::warn!("accounts: cannot read the next account id: {e}");
                None
            }
            Err(_) => None,
        }
    }

    /// In a cluster, reads what `of` names from the database into memory. A
    /// failed read leaves memory as it was (and is logged): what it holds
    /// decides.
    pub(super) async fn recall(&self, of: AccountsOf) -> Result<(), Refused> {
        if !self.clustered() {
            return Ok(());
        }
        let store = self.store.clone();
        let read = self.reads.run(move || match store.cluster() {
            Some(cluster) => cluster.find_accounts(of),
            None => Ok((Vec::new(), Vec::new())),
        });
        // A store that cannot be read leaves memory to decide; a full pool
        // is the caller's to answer.
        let (accounts, tokens) = match read.await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::warn!("accounts: cannot read an account again: {e}");
                return Ok(());
            }
            Err(refused) => return Err(refused),
        };
        let mut state = self.state();
        for row in accounts {
            state.insert(row);
        }
        for mut row in tokens {
            // A revocation heard while this read was under way stands.
            if let Some(held) = state.tokens.get(&row.id) {
                row.revoked_at_ms = row.revoked_at_ms.or(held.revoked_at_ms);
            }
            state.tokens.insert(row.id.clone(), row);
        }
        Ok(())
    }
}

/// The hook type's home, so that `Accounts` can hold it.
pub(super) type AnnouncerCell = OnceLock<Announcer>;
