//! The account part of protocol v1 (docs/protocol.md, "Accounts and tokens"):
//! who a player is, and the personal API tokens a connection proves it with.
//!
//! A connection without a token plays as a guest; one whose `hello` carries a
//! token acts as that token's account, within the token's scopes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What kind of player a name belongs to: shown beside the name wherever a
/// name appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    /// An account of a person.
    Person,
    /// An account of a bot (the server's house bots are bots too).
    Bot,
    /// A connection without an account: its name proves nothing.
    Guest,
}

impl PlayerKind {
    /// A name as people read it, its kind beside it: `alice`, `bot-7 (bot)`,
    /// `guest-4f2a (guest)`; a name of unknown kind (recorded before
    /// accounts) as it is.
    pub fn show(name: &str, kind: Option<PlayerKind>) -> String {
        match kind {
            Some(PlayerKind::Bot) => format!("{name} (bot)"),
            Some(PlayerKind::Guest) => format!("{name} (guest)"),
            Some(PlayerKind::Person) | None => name.to_string(),
        }
    }
}

/// What kind of account one creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    #[default]
    Person,
    Bot,
}

impl From<AccountKind> for PlayerKind {
    fn from(kind: AccountKind) -> PlayerKind {
        match kind {
            AccountKind::Person => PlayerKind::Person,
            AccountKind::Bot => PlayerKind::Bot,
        }
    }
}

/// What a token lets a connection do as its account.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Take seats as the account: create, join and resume rooms.
    Play,
    /// Create tournaments and play in them as the account (rated ones included).
    Tournaments,
    /// Manage the account: create, list and revoke its tokens.
    Account,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Play, Scope::Tournaments, Scope::Account];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Play => "play",
            Scope::Tournaments => "tournaments",
            Scope::Account => "account",
        }
    }
}

/// An account as others see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AccountInfo {
    /// As the owner spelled it; unique whatever the case.
    pub username: String,
    pub kind: AccountKind,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
}

/// A personal API token, as its owner sees it (never the secret itself, which
/// is shown once, when the token is created).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenInfo {
    /// The token's public id (the secret begins with it).
    pub id: String,
    /// The owner's label for it ("laptop", "my bot").
    pub name: String,
    pub scopes: Vec<Scope>,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it stops working, if ever.
    pub expires_at_ms: Option<u64>,
}

/// What a new token should be: in `login` and `create_token`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewToken {
    /// A label for the token (default: "login" for `login`, "token" for
    /// `create_token`).
    #[serde(default)]
    pub name: Option<String>,
    /// Default: every scope (`login`), the creating token's
    /// (`create_token`, which may give no scope that token lacks).
    #[serde(default)]
    pub scopes: Option<Vec<Scope>>,
    /// The token stops working after this many days (1 to the limit
    /// `token_max_days`; default `token_default_days`). A token that
    /// `create_token` makes expires no later than the creating token.
    #[serde(default)]
    pub expires_in_days: Option<u32>,
}
